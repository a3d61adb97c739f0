//! `linkshare run SCENARIO.toml`: one run, its outputs and its table.

use std::io::Write as _;
use std::path::PathBuf;

use super::{default_out, parse_scheduler, print_files, simulate};
use crate::error::Failure;
use crate::output::{self, quality, summary::Summary, table};
use crate::scenario;

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
    let mut scenario = scenario::load_file(&args.scenario)?;
    if let Some(seed) = args.seed {
        scenario.config.seed = seed;
    }
    if let Some(name) = &args.scheduler {
        let kind = parse_scheduler(name, "--scheduler")?;
        scenario.set_scheduler(kind, "--scheduler")?;
    }
    for warning in super::check::warnings(&scenario) {
        eprintln!("warning: {warning}");
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| default_out(&scenario.name));
    let result = simulate(&scenario, &scenario.name)?;
    let summary = Summary::new(&scenario.name, &scenario.config, &result);
    let written = output::write_run_with_summary(&out, &result, &summary)?;
    let stdout = std::io::stdout();
    let mut so = stdout.lock();
    let printed = if args.json {
        let json = summary.to_json()?;
        so.write_all(json.as_bytes()).and_then(|()| {
            let mut se = std::io::stderr().lock();
            writeln!(se, "files written:")?;
            print_files(&mut se, &written.files)
        })
    } else {
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
        .and_then(|()| write!(so, "\n{}", quality_section(&summary)))
        .and_then(|()| writeln!(so, "\nfiles written:"))
        .and_then(|()| print_files(&mut so, &written.files))
    };
    printed.map_err(|e| Failure::io("cannot write to stdout".to_owned(), e))
}

/// The link-sharing section of the terminal output.
fn quality_section(summary: &Summary) -> String {
    let links: Vec<_> = summary
        .links
        .iter()
        .map(|l| (l.name.as_str(), l.scheduler.as_str(), &l.link_sharing))
        .collect();
    quality::terminal_section(&links)
}
