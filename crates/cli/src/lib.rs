//! The `linkshare` command line: a thin face over the library crates.
//!
//! A face only parses its arguments, calls the libraries and prints what they return:
//! scenario files are loaded by `linkshare-scenario`, runs simulated by `linkshare-sim`,
//! outputs written and tables rendered by `linkshare-report`, reproductions and
//! comparisons run by `linkshare-repro`. Nothing here computes a result.
//!
//! * [`commands`]: `demo`, `run`, `compare`, `validate`, `alloc`, `bounds`, `check`,
//!   `repro`, `shape`, `sweep`, `tc` — each its options and the few lines that call the
//!   libraries and print.
//! * [`error`]: failures and exit statuses (0 success, 1 internal error or, for `check`,
//!   not admissible, 2 bad input).
#![warn(missing_docs)]

pub mod commands;
pub mod error;

use std::ffi::OsString;
use std::process::ExitCode;

use clap::Parser;

use crate::error::Failure;

/// Simulate and compare hierarchical link-sharing and QoS packet schedulers.
#[derive(Debug, Parser)]
#[command(name = "linkshare", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
    /// Options every command takes.
    #[command(flatten)]
    pub global: commands::Global,
}

/// The subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Run a built-in scenario under several schedulers and show the difference.
    Demo(commands::demo::DemoArgs),
    /// Run a scenario file and write its outputs.
    Run(commands::run::RunArgs),
    /// Run a scenario under several schedulers (same traffic, same seed) side by side.
    Compare(commands::compare::CompareArgs),
    /// Check a scenario file and describe it.
    Validate(commands::validate::ValidateArgs),
    /// Print the reference (hierarchical max-min fair) rate of every class in every
    /// interval of constant demand.
    Alloc(commands::alloc::AllocArgs),
    /// Print the fairness and transmission-gap bounds of HLS and HDRR for each link.
    Bounds(commands::bounds::BoundsArgs),
    /// Admission control: check every link's service curves (rt within the link, ls
    /// within parents, ul between rt and the link) and print each leaf's delay bound.
    /// Exit status 0 when admissible, 1 when not, 2 for an invalid scenario.
    Check(commands::check::CheckArgs),
    /// Reproduce a result of a paper (run without NAME to list them).
    Repro(commands::repro::ReproArgs),
    /// Run every reproduction and write one self-contained HTML page of their tables,
    /// verdicts, figures, reconstructions and commands.
    Report(commands::report::ReportArgs),
    /// Shape real traffic: a transparent bridge between two interfaces running a
    /// discipline on the configuration's classes (needs CAP_NET_RAW and CAP_NET_ADMIN;
    /// --check only validates).
    Shape(commands::shape::ShapeArgs),
    /// Run a scenario for every combination of edited values, schedulers and seeds, on
    /// every core, and write one tidy CSV (one row per run and class).
    Sweep(commands::sweep::SweepArgs),
    /// Speak tc: import a tc script as a scenario, export a scenario as tc commands.
    Tc(commands::tc::TcArgs),
}

/// Runs the command line `args` (program name first) and returns the exit status.
/// Problems are printed on stderr, one per line; clap prints usage errors itself (status
/// 2). A panic is reported as an internal error (status 1) without a backtrace.
pub fn main_with_args(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    std::panic::set_hook(Box::new(|info| {
        let place = info
            .location()
            .map_or(String::new(), |l| format!(" at {}:{}", l.file(), l.line()));
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panic".to_owned());
        eprintln!("{}", Failure::Internal(format!("{msg}{place}")));
    }));
    let outcome = std::panic::catch_unwind(|| dispatch(&cli.command, &cli.global));
    match outcome {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(failure)) => {
            eprintln!("{failure}");
            ExitCode::from(failure.exit_code())
        }
        Err(_) => ExitCode::from(1),
    }
}

fn dispatch(command: &Command, global: &commands::Global) -> Result<(), Failure> {
    match command {
        Command::Demo(a) => commands::demo::run(a, global),
        Command::Run(a) => commands::run::run(a, global),
        Command::Compare(a) => commands::compare::run(a, global),
        Command::Validate(a) => commands::validate::run(a, global),
        Command::Alloc(a) => commands::alloc::run(a),
        Command::Bounds(a) => commands::bounds::run(a),
        Command::Check(a) => commands::check::run(a),
        Command::Repro(a) => commands::repro::run(a, global),
        Command::Report(a) => commands::report::run(a, global),
        Command::Shape(a) => commands::shape::run(a, global),
        Command::Sweep(a) => commands::sweep::run(a),
        Command::Tc(a) => commands::tc::run(a, global),
    }
}
