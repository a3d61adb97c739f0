//! `linkshare compare SCENARIO.toml --schedulers a,b,...`: the same traffic (same seed)
//! under several schedulers, side by side ([`linkshare_repro::compare`]).

use std::io::Write as _;
use std::path::PathBuf;

use linkshare_core::sched::SchedulerKind;
use linkshare_report::files_listing;
use linkshare_report::summary::{self, Summary};
use linkshare_repro::compare::{compare, comparison_text};
use linkshare_scenario::Problems;

use super::{Global, OutputArgs, TerminalProgress, default_out, parse_scheduler, stdout};
use crate::error::{Failure, stdout_failure};

/// Options of `compare`.
#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// The scenario file (TOML; see scenarios/README.md).
    pub scenario: PathBuf,
    /// Schedulers to compare, comma-separated (each overrides every link's scheduler).
    #[arg(long, value_delimiter = ',', required = true)]
    pub schedulers: Vec<String>,
    /// Output directory [default: ./linkshare-out/NAME/, NAME being the scenario name].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Seed of every run, instead of the scenario's `seed`.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Print the summaries as JSON on stdout (the list of files goes to stderr).
    #[arg(long)]
    pub json: bool,
    /// How outputs are written.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// The JSON printed by `compare --json`.
#[derive(Debug, serde::Serialize)]
struct CompareJson<'a> {
    scenario: &'a str,
    runs: Vec<RunJson>,
}

#[derive(Debug, serde::Serialize)]
struct RunJson {
    scheduler: String,
    summary: Summary,
}

/// Runs the command.
pub fn run(args: &CompareArgs, global: &Global) -> Result<(), Failure> {
    let mut scenario = linkshare_scenario::load_file(&args.scenario)?;
    if let Some(seed) = args.seed {
        scenario.config.seed = seed;
    }
    let mut kinds: Vec<SchedulerKind> = Vec::with_capacity(args.schedulers.len());
    for name in &args.schedulers {
        let kind = parse_scheduler(name, "--schedulers")?;
        if kinds.contains(&kind) {
            return Err(Failure::Problems(Problems::option(
                "--schedulers",
                format!("`{kind}` is listed twice"),
                "list each scheduler once".to_owned(),
            )));
        }
        kinds.push(kind);
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| default_out(&scenario.name));
    let progress = TerminalProgress::new(global);
    let comparison = compare(
        &scenario,
        &kinds,
        "--schedulers",
        &out,
        &progress,
        &args.output.write_options(),
        Some(global.memory_budget()),
    )?;
    let files = files_listing(&comparison.written.files);
    let mut so = stdout(global);
    let printed = if args.json {
        let json = CompareJson {
            scenario: &scenario.name,
            runs: comparison
                .runs
                .iter()
                .map(|(name, r)| RunJson {
                    scheduler: name.clone(),
                    summary: Summary::with_outputs(
                        &scenario.name,
                        &scenario.config,
                        r,
                        &args.output.outputs,
                    ),
                })
                .collect(),
        };
        let text = summary::to_json(&json)?;
        so.write_all(text.as_bytes()).and_then(|()| {
            if global.quiet {
                Ok(())
            } else {
                write!(std::io::stderr().lock(), "files written:\n{files}")
            }
        })
    } else {
        write!(
            so,
            "{}\nfiles written:\n{files}",
            comparison_text(&scenario, &comparison)
        )
    };
    printed.map_err(stdout_failure)
}
