//! `linkshare alloc SCENARIO.toml [--json]`: the reference allocation of a scenario
//! ([`linkshare_report::alloc`]).

use std::io::Write as _;
use std::path::PathBuf;

use linkshare_report::alloc::{json, render};
use linkshare_report::reference;
use linkshare_report::summary::to_json;

use crate::error::{Failure, stdout_failure};
/// Options of `alloc`.
#[derive(Debug, clap::Args)]
pub struct AllocArgs {
    /// The scenario file (TOML; see scenarios/README.md).
    pub scenario: PathBuf,
    /// Print JSON instead of tables (rates in bit/s; an unbounded demand is `null`).
    #[arg(long)]
    pub json: bool,
}

/// Runs the command.
pub fn run(args: &AllocArgs) -> Result<(), Failure> {
    let scenario = linkshare_scenario::load_file(&args.scenario)?;
    let refs = reference::reference(&scenario.config);
    let text = if args.json {
        to_json(&json(&scenario.name, &scenario.config, &refs))?
    } else {
        render(&scenario.name, &scenario.config, &refs)
    };
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(stdout_failure)
}
