//! `linkshare run SCENARIO.toml`: one run, its outputs and its table.

use std::io::Write as _;
use std::path::PathBuf;

use linkshare_report::summary::Summary;
use linkshare_report::{check, files_listing, quality, table, write_run_with_summary};

use super::{TerminalProgress, default_out, parse_scheduler};
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
}

/// Runs the command.
pub fn run(args: &RunArgs) -> Result<(), Failure> {
    let mut scenario = linkshare_scenario::load_file(&args.scenario)?;
    if let Some(seed) = args.seed {
        scenario.config.seed = seed;
    }
    if let Some(name) = &args.scheduler {
        let kind = parse_scheduler(name, "--scheduler")?;
        scenario.set_scheduler(kind, "--scheduler")?;
    }
    for warning in scenario.warnings() {
        eprintln!("warning: {warning}");
    }
    let checks = check::admissions(&scenario.config, |i| scenario.admission_options(i));
    for warning in check::warnings(&checks) {
        eprintln!("warning: {warning}");
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| default_out(&scenario.name));
    let result = scenario.simulate(&scenario.name, &TerminalProgress::new())?;
    let summary = Summary::new(&scenario.name, &scenario.config, &result);
    let written = write_run_with_summary(&out, &result, &summary)?;
    let files = files_listing(&written.files);
    let mut so = std::io::stdout().lock();
    let printed = if args.json {
        let json = summary.to_json()?;
        so.write_all(json.as_bytes())
            .and_then(|()| write!(std::io::stderr().lock(), "files written:\n{files}"))
    } else {
        let links: Vec<_> = summary
            .links
            .iter()
            .map(|l| (l.name.as_str(), l.scheduler.as_str(), &l.link_sharing))
            .collect();
        writeln!(
            so,
            "{}: {} simulated, seed {}, {} packet transmissions\n",
            scenario.name, scenario.config.duration, result.seed, result.packet_hops
        )
        .and_then(|()| write!(so, "{}", table::run_table(&result).render()))
        .and_then(|()| match table::flow_table(&result) {
            Some(t) => write!(so, "\n{}", t.render()),
            None => Ok(()),
        })
        .and_then(|()| write!(so, "\n{}", quality::terminal_section(&links)))
        .and_then(|()| write!(so, "\nfiles written:\n{files}"))
    };
    printed.map_err(stdout_failure)
}
