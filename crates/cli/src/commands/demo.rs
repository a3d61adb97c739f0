//! `linkshare demo`: the built-in scenario compared under the basic schedulers
//! ([`linkshare_repro::demo`]), with what to look at.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use linkshare_report::table::ms;
use linkshare_report::{WriteOptions, files_listing};
use linkshare_repro::compare::{Comparison, compare, comparison_text};
use linkshare_repro::demo;

use super::{Global, TerminalProgress, default_out, stdout};
use crate::error::{Failure, stdout_failure};

/// Options of `demo`.
#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    /// Output directory [default: ./linkshare-out/demo/].
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Runs the command.
pub fn run(args: &DemoArgs, global: &Global) -> Result<(), Failure> {
    let scenario = demo::scenario()?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| default_out(&scenario.name));
    let names: Vec<&str> = demo::SCHEDULERS.iter().map(|k| k.name()).collect();
    let mut so = stdout(global);
    let intro = writeln!(
        so,
        "linkshare demo: a 10 Mbit/s link shared by voice (CBR), web (Poisson) and a bulk \
         transfer that floods the link from 2 s on.\nSame traffic, same seed, under: {}\n",
        names.join(", ")
    );
    intro.map_err(stdout_failure)?;
    let progress = TerminalProgress::new(global);
    let comparison = compare(
        &scenario,
        &demo::SCHEDULERS,
        "demo",
        &out,
        &progress,
        &WriteOptions::default(),
        Some(global.memory_budget()),
    )?;
    write!(
        so,
        "{}\nfiles written:\n{}",
        comparison_text(&scenario, &comparison),
        files_listing(&comparison.written.files)
    )
    .and_then(|()| story(&mut so, &comparison, &out))
    .map_err(stdout_failure)
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
