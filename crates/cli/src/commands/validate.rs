//! `linkshare validate SCENARIO.toml`: check a scenario and describe it.

use std::io::Write as _;
use std::path::PathBuf;

use linkshare_scenario::describe::describe;

use crate::error::{Failure, stdout_failure};

/// Options of `validate`.
#[derive(Debug, clap::Args)]
pub struct ValidateArgs {
    /// The scenario file (TOML; see scenarios/README.md).
    pub scenario: PathBuf,
}

/// Runs the command: prints the description and `OK` (and warnings on stderr), or fails
/// with every problem.
pub fn run(args: &ValidateArgs) -> Result<(), Failure> {
    let scenario = linkshare_scenario::load_file(&args.scenario)?;
    for warning in scenario.warnings() {
        eprintln!("warning: {warning}");
    }
    let mut so = std::io::stdout().lock();
    write!(so, "{}", describe(&scenario))
        .and_then(|()| writeln!(so, "\n{}: OK", args.scenario.display()))
        .map_err(stdout_failure)
}
