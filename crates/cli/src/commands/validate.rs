//! `linkshare validate SCENARIO.toml`: check a scenario and describe it.

use std::io::Write as _;
use std::path::PathBuf;

use linkshare_scenario::describe::describe;

use super::Global;
use crate::error::{Failure, stdout_failure};

/// Options of `validate`.
#[derive(Debug, clap::Args)]
pub struct ValidateArgs {
    /// The scenario file (TOML; see scenarios/README.md).
    pub scenario: PathBuf,
}

/// Runs the command: prints the description, the warnings (on stderr) and `OK`, or
/// fails with every problem.
pub fn run(args: &ValidateArgs, global: &Global) -> Result<(), Failure> {
    let scenario = linkshare_scenario::load_file(&args.scenario)?;
    for warning in scenario.warnings() {
        global.warn(&warning.to_string());
    }
    let mut so = std::io::stdout().lock();
    write!(so, "{}", describe(&scenario))
        .and_then(|()| writeln!(so, "\n{}: OK", args.scenario.display()))
        .map_err(stdout_failure)
}
