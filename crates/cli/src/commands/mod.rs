//! The subcommands, and what they share: progress on the terminal, the default output
//! directory, scheduler names given as options.

pub mod alloc;
pub mod bounds;
pub mod check;
pub mod compare;
pub mod demo;
pub mod repro;
pub mod run;
pub mod shape;
pub mod validate;

use std::io::{IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use linkshare_core::sched::SchedulerKind;
use linkshare_core::units::{Duration, Instant};
use linkshare_scenario::{Problems, Progress, did_you_mean};

use crate::error::Failure;

/// The directory outputs go to when `--out` is not given: `./linkshare-out/<name>/`.
pub fn default_out(name: &str) -> PathBuf {
    Path::new("linkshare-out").join(name)
}

/// Progress of long runs on stderr, one line rewritten in place, only when stderr is a
/// terminal; nothing else depends on the terminal.
#[derive(Debug)]
pub struct TerminalProgress {
    terminal: bool,
    shown: AtomicBool,
}

impl TerminalProgress {
    /// Progress on stderr if it is a terminal.
    pub fn new() -> TerminalProgress {
        TerminalProgress::default()
    }
}

impl Default for TerminalProgress {
    fn default() -> TerminalProgress {
        TerminalProgress {
            terminal: std::io::stderr().is_terminal(),
            shown: AtomicBool::new(false),
        }
    }
}

impl Progress for TerminalProgress {
    fn update(&self, label: &str, now: Instant, total: Duration) {
        if !self.terminal || now.as_nanos() >= total.as_nanos() {
            return;
        }
        self.shown.store(true, Ordering::Relaxed);
        let pct = now.as_nanos() as f64 / total.as_nanos().max(1) as f64 * 100.0;
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\r{label}: {:.1} s of {:.1} s simulated ({pct:.0}%)",
            now.as_secs_f64(),
            total.as_secs_f64()
        );
        let _ = err.flush();
    }

    fn finish(&self, _label: &str) {
        if self.shown.swap(false, Ordering::Relaxed) {
            eprint!("\r\x1b[K");
        }
    }
}

/// Parses a scheduler name given on the command line.
pub fn parse_scheduler(name: &str, option: &str) -> Result<SchedulerKind, Failure> {
    name.trim().parse::<SchedulerKind>().map_err(|_| {
        let known = SchedulerKind::ALL.iter().map(|k| k.name());
        let hint = did_you_mean(name, known);
        Failure::Problems(Problems::option(
            option,
            format!("unknown scheduler `{name}`"),
            format!("{hint}known schedulers: {}", SchedulerKind::all_names()),
        ))
    })
}
