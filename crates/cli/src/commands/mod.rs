//! The subcommands, and what they share: progress on the terminal, the default output
//! directory, scheduler names given as options.

pub mod alloc;
pub mod bounds;
pub mod check;
pub mod compare;
pub mod demo;
pub mod report;
pub mod repro;
pub mod run;
pub mod shape;
pub mod sweep;
pub mod tc;
pub mod validate;

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use linkshare_core::sched::SchedulerKind;
use linkshare_core::units::parse::parse_size;
use linkshare_core::units::{Duration, Instant};
use linkshare_report::WriteOptions;
use linkshare_report::outputs::Outputs;
use linkshare_report::plots::PlotOptions;
use linkshare_scenario::{Problems, Progress, Scenario, did_you_mean};

use crate::error::Failure;

/// Options every command takes.
#[derive(Clone, Debug, clap::Args)]
pub struct Global {
    /// Print nothing but errors: no tables, no warnings, no progress.
    #[arg(long, short, global = true)]
    pub quiet: bool,
    /// The most memory a run's data may take, as a size (`"4gb"`, `"512mb"`; tc units):
    /// a scenario that must take more is refused before running, one that grows past it
    /// stops cleanly with its outputs so far [default: half the machine's memory].
    #[arg(long, global = true, value_name = "SIZE", value_parser = parse_memory)]
    pub max_memory: Option<u64>,
}

impl Global {
    /// The memory budget of a run, in bytes.
    pub fn memory_budget(&self) -> u64 {
        self.max_memory
            .unwrap_or_else(linkshare_scenario::default_memory_budget)
    }

    /// Prints a warning on stderr unless quiet.
    pub fn warn(&self, warning: &str) {
        if !self.quiet {
            eprintln!("warning: {warning}");
        }
    }

    /// Checks that `scenario` fits the memory budget before running it.
    pub fn check_memory(&self, scenario: &Scenario) -> Result<(), Failure> {
        scenario
            .check_memory(self.memory_budget())
            .map_err(Failure::Problems)
    }
}

fn parse_memory(text: &str) -> Result<u64, String> {
    match parse_size(text) {
        Ok(b) if b.0 > 0 => Ok(b.0),
        Ok(_) => Err("the memory budget must be positive".to_owned()),
        Err(e) => Err(format!("{e}; write a size such as \"4gb\" or \"512mb\"")),
    }
}

/// Stdout, or nowhere when quiet: where a command prints its tables.
pub fn stdout(global: &Global) -> Box<dyn std::io::Write> {
    if global.quiet {
        Box::new(std::io::sink())
    } else {
        Box::new(std::io::stdout().lock())
    }
}

/// How outputs are written: the options `run`, `compare` and `repro` share.
#[derive(Clone, Debug, clap::Args)]
pub struct OutputArgs {
    /// The files to write, comma-separated: output names add (summary, throughput,
    /// flow-throughput, delay, delay-histogram, backlog, drops, service, ratios, flows,
    /// bursts, tcp-trace, plots), `-name` removes, `default` is every output with delay.csv only up to 1
    /// million rows (delay_histogram.csv above), `all` both delay files. Example:
    /// `default,-delay` (no per-packet file).
    #[arg(long, value_name = "LIST", default_value = "default", value_parser = parse_outputs)]
    pub outputs: Outputs,
    /// Draw throughput and backlog on a logarithmic y axis (for classes far below the
    /// others; zero values are then not drawn).
    #[arg(long)]
    pub log_scale: bool,
}

impl OutputArgs {
    /// The write options these arguments ask for.
    pub fn write_options(&self) -> WriteOptions {
        WriteOptions {
            outputs: self.outputs,
            plots: PlotOptions {
                log_scale: self.log_scale,
            },
        }
    }
}

fn parse_outputs(list: &str) -> Result<Outputs, String> {
    Outputs::parse(list)
}

/// The directory outputs go to when `--out` is not given: `./linkshare-out/<name>/`.
pub fn default_out(name: &str) -> PathBuf {
    Path::new("linkshare-out").join(name)
}

/// Events a second the engine processes, about (see `BENCHMARKS.md`): to turn an
/// estimate of events into one of time.
const EVENTS_PER_SECOND: u64 = 10_000_000;

/// A run is long, and warned about before it starts, above this many events (about a
/// minute).
const LONG_RUN_EVENTS: u64 = 60 * EVENTS_PER_SECOND;

/// Progress of runs on stderr with `indicatif`: a bar of simulated time with the events
/// processed and the time left, only when stderr is a terminal and not `--quiet`; and,
/// before a run of more than about a minute, a warning with its estimated events
/// (unless `--quiet`).
#[derive(Debug)]
pub struct TerminalProgress {
    bar: Option<ProgressBar>,
    warn: bool,
}

impl TerminalProgress {
    /// Progress as `global` allows.
    pub fn new(global: &Global) -> TerminalProgress {
        let bar = (!global.quiet && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::hidden();
            bar.set_style(
                ProgressStyle::with_template(
                    "{prefix}: [{bar:20}] {percent:>3}% ETA {eta} {wide_msg}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            bar
        });
        TerminalProgress {
            bar,
            warn: !global.quiet,
        }
    }
}

impl Progress for TerminalProgress {
    fn starting(&self, label: &str, events: u64) {
        if self.warn && events > LONG_RUN_EVENTS {
            let minutes = events / EVENTS_PER_SECOND / 60;
            eprintln!(
                "warning: {label} will simulate about {:.1} million events, some {minutes} \
                 minute(s) at ten million events a second{}",
                events as f64 / 1e6,
                if self.bar.is_some() {
                    ""
                } else {
                    " (progress shows when stderr is a terminal)"
                }
            );
        }
    }

    fn update(&self, label: &str, now: Instant, total: Duration, events: u64) {
        let Some(bar) = &self.bar else {
            return;
        };
        if now.as_nanos() >= total.as_nanos() {
            return;
        }
        if bar.is_hidden() {
            bar.set_draw_target(ProgressDrawTarget::stderr());
            bar.reset();
        }
        bar.set_length(total.as_nanos());
        bar.set_prefix(label.to_owned());
        bar.set_position(now.as_nanos());
        bar.set_message(format!(
            "{:.1} of {:.1} s simulated, {:.1} M events",
            now.as_secs_f64(),
            total.as_secs_f64(),
            events as f64 / 1e6
        ));
    }

    fn finish(&self, _label: &str) {
        if let Some(bar) = &self.bar
            && !bar.is_hidden()
        {
            bar.finish_and_clear();
            bar.set_draw_target(ProgressDrawTarget::hidden());
        }
    }
}

/// Parses a scheduler name given on the command line.
pub fn parse_scheduler(name: &str, option: &str) -> Result<SchedulerKind, Failure> {
    name.trim().parse::<SchedulerKind>().map_err(|_| {
        let known = SchedulerKind::ALL.iter().map(|k| k.name());
        let hint = did_you_mean(name, known);
        Failure::Problems(Problems::option(
            option,
            format!("unknown scheduler `{name}`"),
            format!("{hint}known schedulers: {}", SchedulerKind::all_names()),
        ))
    })
}
