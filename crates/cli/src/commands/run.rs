//! `linkshare run SCENARIO.toml`: one run, its outputs and its table.

use std::io::Write as _;
use std::path::PathBuf;

use linkshare_report::spill::records_in;
use linkshare_report::summary::Summary;
use linkshare_report::{check, files_listing, quality, table, write_run_with};
use linkshare_scenario::RunOptions;

use super::{Global, OutputArgs, TerminalProgress, default_out, parse_scheduler, stdout};
use crate::error::{Failure, stdout_failure};

/// Options of `run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The scenario file (TOML; see scenarios/README.md).
    pub scenario: PathBuf,
    /// Output directory [default: ./linkshare-out/NAME/, NAME being the scenario name].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Seed of the run, instead of the scenario's `seed`.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Run every link with this scheduler instead of the scenario's.
    #[arg(long)]
    pub scheduler: Option<String>,
    /// Print the summary as JSON on stdout (the list of files goes to stderr).
    #[arg(long)]
    pub json: bool,
    /// How outputs are written.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Runs the command.
pub fn run(args: &RunArgs, global: &Global) -> Result<(), Failure> {
    let mut scenario = linkshare_scenario::load_file(&args.scenario)?;
    if let Some(seed) = args.seed {
        scenario.config.seed = seed;
    }
    if let Some(name) = &args.scheduler {
        let kind = parse_scheduler(name, "--scheduler")?;
        scenario.set_scheduler(kind, "--scheduler")?;
    }
    for warning in scenario.warnings() {
        global.warn(&warning.to_string());
    }
    let checks = check::admissions(&scenario.config, |i| scenario.admission_options(i));
    for warning in check::warnings(&checks) {
        global.warn(&warning);
    }
    global.check_memory(&scenario)?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| default_out(&scenario.name));
    let write = args.output.write_options();
    let options = RunOptions {
        records: Some(records_in(&out, scenario.config.links.len())?),
        memory_budget: Some(global.memory_budget()),
    };
    let progress = TerminalProgress::new(global);
    let result = scenario.simulate_with(&scenario.name, &progress, options)?;
    let summary = Summary::with_outputs(&scenario.name, &scenario.config, &result, &write.outputs);
    let written = write_run_with(&out, &result, &summary, &write)?;
    let files = files_listing(&written.files);
    let mut so = stdout(global);
    let printed = if args.json {
        let json = summary.to_json()?;
        so.write_all(json.as_bytes()).and_then(|()| {
            if global.quiet {
                Ok(())
            } else {
                write!(std::io::stderr().lock(), "files written:\n{files}")
            }
        })
    } else {
        let links: Vec<_> = summary
            .links
            .iter()
            .map(|l| (l.name.as_str(), l.scheduler.as_str(), &l.link_sharing))
            .collect();
        let simulated = match &result.stopped {
            Some(s) => format!("stopped at {} of {}", s.at, scenario.config.duration),
            None => format!("{}", scenario.config.duration),
        };
        writeln!(
            so,
            "{}: {simulated} simulated, seed {}, {} packet transmissions\n",
            scenario.name, result.seed, result.packet_hops
        )
        .and_then(|()| write!(so, "{}", table::run_table(&result).render()))
        .and_then(|()| match table::flow_table(&result) {
            Some(t) => write!(so, "\n{}", t.render()),
            None => Ok(()),
        })
        .and_then(|()| write!(so, "\n{}", quality::terminal_section(&links)))
        .and_then(|()| write!(so, "\nfiles written:\n{files}"))
    };
    printed.map_err(stdout_failure)?;
    incomplete(&result)
}

/// Fails (status 1) when the run stopped early, its outputs written.
pub fn incomplete(result: &linkshare_sim::RunResult) -> Result<(), Failure> {
    match linkshare_report::summary::stop_reason(result) {
        Some(reason) => Err(Failure::Incomplete(reason)),
        None => Ok(()),
    }
}
