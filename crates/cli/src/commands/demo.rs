//! `linkshare demo`: a built-in scenario compared under the basic schedulers.
//!
//! The scenario (`scenarios/demo.toml`, embedded in the binary) is a 10 Mbit/s link
//! shared by a voice-like CBR class, a web-like Poisson class and a bulk transfer that
//! keeps a deep queue from 2 s on. Under FIFO the voice packets wait behind the bulk
//! queue; a priority or fair-queueing discipline isolates them.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use linkshare_core::sched::SchedulerKind;

use super::compare::{Comparison, compare, print_comparison};
use super::default_out;
use crate::error::Failure;
use crate::output::table::ms;
use crate::scenario::{self, Scenario};

/// The demo scenario, as shipped in `scenarios/demo.toml`.
pub const DEMO_TOML: &str = include_str!("../../../../scenarios/demo.toml");

/// The schedulers the demo compares, in this order, when the build has them.
const DEMO_SCHEDULERS: [&str; 3] = ["fifo", "prio", "drr"];

/// Options of `demo`.
#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    /// Output directory [default: ./linkshare-out/demo/].
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// The built-in demo scenario.
pub fn scenario() -> Result<Scenario, Failure> {
    scenario::load_str(DEMO_TOML, "demo.toml (built in)", Path::new("."))
        .map_err(|p| Failure::Internal(format!("the built-in demo scenario is invalid:\n{p}")))
}

/// The schedulers the demo compares (fifo, prio, drr) that this build provides.
pub fn schedulers() -> Vec<SchedulerKind> {
    DEMO_SCHEDULERS
        .iter()
        .filter_map(|name| name.parse::<SchedulerKind>().ok())
        .collect()
}

/// Runs the command.
pub fn run(args: &DemoArgs) -> Result<(), Failure> {
    let scenario = scenario()?;
    let kinds = schedulers();
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| default_out(&scenario.name));
    let names: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
    let mut so = std::io::stdout().lock();
    let intro = writeln!(
        so,
        "linkshare demo: a 10 Mbit/s link shared by voice (CBR), web (Poisson) and a bulk \
         transfer that floods the link from 2 s on.\nSame traffic, same seed, under: {}\n",
        names.join(", ")
    );
    intro.map_err(|e| Failure::io("cannot write to stdout".to_owned(), e))?;
    let comparison = compare(&scenario, &kinds, &out)?;
    print_comparison(&mut so, &scenario, &comparison)
        .and_then(|()| story(&mut so, &comparison, &out))
        .map_err(|e| Failure::io("cannot write to stdout".to_owned(), e))
}

/// What to look at, with the numbers of this run.
fn story(out: &mut dyn std::io::Write, c: &Comparison, dir: &Path) -> std::io::Result<()> {
    writeln!(out, "\nWhat to look at:")?;
    let p99: Vec<String> = c
        .runs
        .iter()
        .filter_map(|(name, r)| {
            let link = r.links.first()?;
            let voice = link.classes.iter().find(|k| k.name == "voice")?;
            Some(format!("{} under {name}", ms(voice.delay.p99)))
        })
        .collect();
    if !p99.is_empty() {
        writeln!(
            out,
            "  * voice's 99th-percentile delay at the port (ms): {}.\n    \
             FIFO makes voice wait behind the bulk queue; a scheduler that isolates classes does not.",
            p99.join(", ")
        )?;
    }
    writeln!(
        out,
        "  * {}: delay CDF of every class under every scheduler (log scale).",
        dir.join("delay_cdf.svg").display()
    )?;
    writeln!(
        out,
        "  * {}: who gets the link over time under each scheduler.",
        dir.join("throughput.svg").display()
    )?;
    writeln!(
        out,
        "  * {}: each run's summary.json, CSVs and plots.",
        dir.join("<scheduler>").display()
    )?;
    writeln!(
        out,
        "  * Edit a copy of scenarios/two-classes-drr.toml and run it with `linkshare run`."
    )
}
