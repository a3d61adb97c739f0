//! The subcommands, and what they share: running a scenario with progress, and the
//! default output directory.

pub mod alloc;
pub mod bounds;
pub mod check;
pub mod compare;
pub mod demo;
pub mod describe;
pub mod repro;
pub mod run;
pub mod validate;

use std::io::{IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};

use linkshare_core::sched::SchedulerKind;
use linkshare_core::units::{Duration, Instant};
use linkshare_sim::{RunResult, Simulator};

use crate::error::Failure;
use crate::scenario::{Problems, Scenario};

/// The directory outputs go to when `--out` is not given: `./linkshare-out/<name>/`.
pub fn default_out(name: &str) -> PathBuf {
    Path::new("linkshare-out").join(name)
}

/// Runs `scenario`. When stderr is a terminal, long runs show their progress there
/// (`label` says which run it is); nothing else depends on the terminal.
pub fn simulate(scenario: &Scenario, label: &str) -> Result<RunResult, Failure> {
    let sim = Simulator::new(&scenario.config).map_err(|e| Failure::Simulator(e.to_string()))?;
    if !std::io::stderr().is_terminal() {
        return Ok(sim.run());
    }
    let mut shown = false;
    let mut progress = |now: Instant, total: Duration| {
        if now.as_nanos() >= total.as_nanos() {
            return;
        }
        shown = true;
        let pct = now.as_nanos() as f64 / total.as_nanos().max(1) as f64 * 100.0;
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\r{label}: {:.1} s of {:.1} s simulated ({pct:.0}%)",
            now.as_secs_f64(),
            total.as_secs_f64()
        );
        let _ = err.flush();
    };
    let result = sim.run_with_progress(&mut progress);
    if shown {
        eprint!("\r\x1b[K");
    }
    Ok(result)
}

/// Parses a scheduler name given on the command line.
pub fn parse_scheduler(name: &str, option: &str) -> Result<SchedulerKind, Failure> {
    name.trim().parse::<SchedulerKind>().map_err(|_| {
        let known = SchedulerKind::ALL.iter().map(|k| k.name());
        let hint = crate::scenario::did_you_mean(name, known);
        Failure::Problems(Problems::option(
            option,
            format!("unknown scheduler `{name}`"),
            format!("{hint}known schedulers: {}", SchedulerKind::all_names()),
        ))
    })
}

/// Prints the files written, one line per directory: `  DIR/: a.csv b.svg ...`.
pub fn print_files(out: &mut dyn std::io::Write, files: &[PathBuf]) -> std::io::Result<()> {
    let mut i = 0;
    while i < files.len() {
        let dir = files[i].parent().unwrap_or(Path::new(""));
        let mut names = Vec::new();
        while let Some(f) = files.get(i)
            && f.parent().unwrap_or(Path::new("")) == dir
        {
            names.push(
                f.file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
            );
            i += 1;
        }
        writeln!(
            out,
            "  {}{}: {}",
            dir.display(),
            std::path::MAIN_SEPARATOR,
            names.join(" ")
        )?;
    }
    Ok(())
}
