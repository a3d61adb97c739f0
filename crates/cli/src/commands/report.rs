//! `linkshare report [--out DIR]`: every reproduction, then one self-contained HTML page
//! of their tables, verdicts, figures, reconstructions and commands
//! ([`linkshare_repro::page`]).

use std::io::Write as _;
use std::path::PathBuf;

use linkshare_repro::{page, suite};

use super::{Global, OutputArgs, TerminalProgress, stdout};
use crate::error::{Failure, stdout_failure};

/// Options of `report`.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// Output directory: each reproduction's files in DIR/NAME/, the page in
    /// DIR/report.html [default: ./linkshare-out/report/].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Divide every time of the simulated reproductions by N, for a quick look.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub shorten: u32,
    /// Seeds per configuration where a reproduction's traffic is random.
    #[arg(long, value_name = "N", default_value_t = linkshare_repro::runner::DEFAULT_SEEDS, value_parser = clap::value_parser!(u32).range(1..))]
    pub seeds: u32,
    /// How outputs are written.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Runs the command.
pub fn run(args: &ReportArgs, global: &Global) -> Result<(), Failure> {
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| super::default_out("report"));
    let progress = TerminalProgress::new(global);
    let options = super::repro::options(
        &out,
        None,
        args.shorten,
        args.seeds,
        &args.output,
        &progress,
        global,
    );
    let outcomes = suite::run_all(&options, &mut |r| {
        if !global.quiet {
            eprintln!("report: running {} ...", r.name);
        }
    });
    let html = page::html(&outcomes, &out, args.shorten, args.seeds)?;
    let path = out.join("report.html");
    std::fs::write(&path, html)
        .map_err(|e| Failure::io(format!("cannot write {}", path.display()), e))?;
    let mut so = stdout(global);
    suite::print_table(&mut so, &outcomes)?;
    writeln!(so, "page written: {}", path.display()).map_err(stdout_failure)?;
    so.flush().map_err(stdout_failure)
}
