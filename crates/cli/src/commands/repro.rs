//! `linkshare repro NAME [--out DIR]`: a paper's result, ours beside theirs
//! ([`linkshare_repro`]).

use std::io::Write as _;
use std::path::PathBuf;

use linkshare_repro::{ALL, Options, find, listing};
use linkshare_scenario::{Problem, Problems, did_you_mean};

use super::{TerminalProgress, parse_scheduler};
use crate::error::{Failure, stdout_failure};

/// Options of `repro`.
#[derive(Debug, clap::Args)]
pub struct ReproArgs {
    /// The reproduction; without it, the list of reproductions.
    pub name: Option<String>,
    /// Output directory [default: ./linkshare-out/repro/NAME/].
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
}

/// Runs the command.
pub fn run(args: &ReproArgs) -> Result<(), Failure> {
    let unknown = |problem: String, hint: String| {
        Failure::Problems(Problems(vec![Problem {
            origin: None,
            field: None,
            problem,
            fix: format!("{hint}run one of these:\n{}", listing().trim_end()),
        }]))
    };
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
    let only = if args.schedulers.is_empty() {
        None
    } else {
        let mut kinds = Vec::new();
        for s in &args.schedulers {
            kinds.push(parse_scheduler(s, "--schedulers")?);
        }
        Some(kinds)
    };
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| super::default_out("repro").join(repro.name));
    let progress = TerminalProgress::new();
    let options = Options {
        out: &out,
        only: only.as_deref(),
        shorten: args.shorten,
        progress: &progress,
        seeds: args.seeds,
    };
    let mut so = std::io::stdout().lock();
    (repro.run)(&options, &mut so)?;
    so.flush().map_err(stdout_failure)
}
