//! `linkshare repro NAME [--out DIR]`: a paper's result, ours beside theirs
//! ([`linkshare_repro`]); `linkshare repro --all`: every reproduction, one table of
//! every result and the regression check against `crates/repro/expected.toml`
//! ([`linkshare_repro::suite`]).

use std::io::Write as _;
use std::path::{Path, PathBuf};

use linkshare_core::sched::SchedulerKind;

use linkshare_repro::suite::{self, EXPECTED_TOML, Expected};
use linkshare_repro::{ALL, Options, find, listing};
use linkshare_scenario::{Problem, Problems, did_you_mean};

use super::{Global, OutputArgs, TerminalProgress, parse_scheduler, stdout};
use crate::error::{Failure, stdout_failure};

/// Options of `repro`.
#[derive(Debug, clap::Args)]
pub struct ReproArgs {
    /// The reproduction; without it (and without --all), the list of reproductions.
    #[arg(conflicts_with = "all")]
    pub name: Option<String>,
    /// Run every reproduction (each in DIR/NAME/, its report in DIR/NAME/report.txt),
    /// print one table of every result, and exit with status 1 when a result recorded
    /// as reproducing in crates/repro/expected.toml (for this --shorten and --seeds) no
    /// longer does.
    #[arg(long)]
    pub all: bool,
    /// With --all: record this run's reproduced results for its --shorten and --seeds in
    /// FILE (crates/repro/expected.toml; other entries kept), instead of comparing. Only
    /// on purpose, after reading what changed.
    #[arg(long, value_name = "FILE", requires = "all")]
    pub record_expected: Option<PathBuf>,
    /// Output directory [default: ./linkshare-out/repro/NAME/, or ./linkshare-out/repro/
    /// with --all].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Run only these of the reproduction's schedulers, comma-separated (simulated
    /// reproductions).
    #[arg(long, value_delimiter = ',')]
    pub schedulers: Vec<String>,
    /// Divide every time of the reproduction (duration, on and off times, measurement
    /// window) by N, for a quick look: rates stay the same, intervals get shorter
    /// (simulated reproductions).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub shorten: u32,
    /// Seeds per configuration where the reproduction's traffic is random (the
    /// results are means with 95 % confidence intervals).
    #[arg(long, value_name = "N", default_value_t = linkshare_repro::runner::DEFAULT_SEEDS, value_parser = clap::value_parser!(u32).range(1..))]
    pub seeds: u32,
    /// How outputs are written.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Runs the command.
pub fn run(args: &ReproArgs, global: &Global) -> Result<(), Failure> {
    let unknown = |problem: String, hint: String| {
        Failure::Problems(Problems(vec![Problem {
            origin: None,
            field: None,
            problem,
            fix: format!("{hint}run one of these:\n{}", listing().trim_end()),
        }]))
    };
    if args.all {
        return run_all(args, global);
    }
    let Some(name) = &args.name else {
        let mut so = std::io::stdout().lock();
        return write!(
            so,
            "reproductions (run one with `linkshare repro NAME`):\n{}",
            listing()
        )
        .map_err(stdout_failure);
    };
    let Some(repro) = find(name.trim()) else {
        let hint = did_you_mean(name, ALL.iter().map(|r| r.name));
        return Err(unknown(format!("unknown reproduction `{name}`"), hint));
    };
    let only = only(args)?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| super::default_out("repro").join(repro.name));
    let progress = TerminalProgress::new(global);
    let options = options(
        &out,
        only.as_deref(),
        args.shorten,
        args.seeds,
        &args.output,
        &progress,
        global,
    );
    let mut so = stdout(global);
    (repro.run)(&options, &mut so)?;
    so.flush().map_err(stdout_failure)
}

/// The options of reproductions run from the command line: where they write, which
/// schedulers, and the arguments `repro` and `report` share.
pub(super) fn options<'a>(
    out: &'a Path,
    only: Option<&'a [SchedulerKind]>,
    shorten: u32,
    seeds: u32,
    output: &OutputArgs,
    progress: &'a TerminalProgress,
    global: &Global,
) -> Options<'a> {
    Options {
        out,
        only,
        shorten,
        progress,
        seeds,
        write: output.write_options(),
        memory_budget: Some(global.memory_budget()),
    }
}

/// `--schedulers`, parsed.
fn only(args: &ReproArgs) -> Result<Option<Vec<SchedulerKind>>, Failure> {
    if args.schedulers.is_empty() {
        return Ok(None);
    }
    let mut kinds = Vec::new();
    for s in &args.schedulers {
        kinds.push(parse_scheduler(s, "--schedulers")?);
    }
    Ok(Some(kinds))
}

/// `repro --all`.
fn run_all(args: &ReproArgs, global: &Global) -> Result<(), Failure> {
    let only = only(args)?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| super::default_out("repro"));
    let progress = TerminalProgress::new(global);
    let options = options(
        &out,
        only.as_deref(),
        args.shorten,
        args.seeds,
        &args.output,
        &progress,
        global,
    );
    let outcomes = suite::run_all(&options, &mut |r| {
        if !global.quiet {
            eprintln!("repro --all: running {} ...", r.name);
        }
    });
    let mut so = stdout(global);
    suite::print_table(&mut so, &outcomes)?;
    let expected = Expected::parse(EXPECTED_TOML).map_err(Failure::Internal)?;
    if let Some(path) = &args.record_expected {
        let recorded = match std::fs::read_to_string(path) {
            Ok(text) => Expected::parse(&text).map_err(|e| {
                Failure::io(
                    format!("cannot record into {}", path.display()),
                    std::io::Error::new(std::io::ErrorKind::InvalidData, e),
                )
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Expected::default(),
            Err(e) => return Err(Failure::io(format!("cannot read {}", path.display()), e)),
        };
        suite::write_expected(path, &recorded.record(&outcomes, args.shorten, args.seeds))?;
        writeln!(
            so,
            "recorded the reproduced results for --shorten {} --seeds {} in {}",
            args.shorten,
            args.seeds,
            path.display()
        )
        .map_err(stdout_failure)?;
        return so.flush().map_err(stdout_failure);
    }
    let c = expected.compare(&outcomes, args.shorten, args.seeds);
    if !c.recorded {
        writeln!(
            so,
            "not compared: no results recorded for --shorten {} --seeds {} in \
             crates/repro/expected.toml",
            args.shorten, args.seeds
        )
        .map_err(stdout_failure)?;
    } else {
        for r in &c.new {
            writeln!(so, "newly reproduced (not recorded): {r}").map_err(stdout_failure)?;
        }
        for r in &c.regressions {
            writeln!(so, "REGRESSION (recorded as reproducing): {r}").map_err(stdout_failure)?;
        }
    }
    so.flush().map_err(stdout_failure)?;
    if c.regressions.is_empty() {
        Ok(())
    } else {
        Err(Failure::Regressed(format!(
            "error: {} result(s) recorded as reproducing in crates/repro/expected.toml no \
             longer reproduce (listed above)",
            c.regressions.len()
        )))
    }
}
