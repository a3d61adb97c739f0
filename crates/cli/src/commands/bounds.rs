//! `linkshare bounds SCENARIO.toml [--json]`: the fairness and transmission-gap bounds
//! of HLS and HDRR for every link ([`linkshare_report::bounds`]).

use std::io::Write as _;
use std::path::PathBuf;

use linkshare_report::bounds::{render, scenario_bounds};
use linkshare_report::summary::to_json;

use crate::error::{Failure, stdout_failure};
/// Options of `bounds`.
#[derive(Debug, clap::Args)]
pub struct BoundsArgs {
    /// The scenario file (TOML; see scenarios/README.md).
    pub scenario: PathBuf,
    /// Print JSON: `alpha_hls_bytes`, `alpha_hdrr_bytes`, `gap_hls_s`, `gap_hdrr_s`
    /// (per link name when the scenario has several links).
    #[arg(long)]
    pub json: bool,
}

/// Runs the command.
pub fn run(args: &BoundsArgs) -> Result<(), Failure> {
    let scenario = linkshare_scenario::load_file(&args.scenario)?;
    let all = scenario_bounds(&scenario.config);
    let text = if args.json {
        to_json(&all)?
    } else {
        render(&scenario.name, &scenario.config, &all)
    };
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(stdout_failure)
}
