//! `linkshare check SCENARIO.toml [--json]`: admission control of every link's service
//! curves ([`linkshare_report::check`]).
//!
//! Exit status: 0 when every link is admissible, 1 when one is not (the findings are on
//! stdout, a one-line verdict on stderr), 2 when the scenario is invalid.

use std::io::Write as _;
use std::path::PathBuf;

use linkshare_report::check::{admissions, json, render};
use linkshare_report::summary::to_json;

use crate::error::{Failure, stdout_failure};
/// Options of `check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The scenario file (TOML; see scenarios/README.md).
    pub scenario: PathBuf,
    /// Print the findings as one JSON object (see `linkshare check --help`).
    #[arg(long)]
    pub json: bool,
}

/// Runs the command.
pub fn run(args: &CheckArgs) -> Result<(), Failure> {
    let scenario = linkshare_scenario::load_file(&args.scenario)?;
    let all = admissions(&scenario.config, |i| scenario.admission_options(i));
    let admissible = all.iter().all(|l| l.admission.is_admissible());
    let text = if args.json {
        to_json(&json(&all))?
    } else {
        render(&scenario.name, &all)
    };
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(stdout_failure)?;
    if admissible {
        Ok(())
    } else {
        Err(Failure::Inadmissible(format!(
            "{}: not admissible (see the findings above)",
            scenario.file
        )))
    }
}
