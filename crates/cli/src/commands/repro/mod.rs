//! `linkshare repro NAME [--out DIR]`: the results of the papers, reproduced.
//!
//! Every reproduction prints the paper's expectation (or the reference allocation)
//! beside our measurement with the error, and says what had to be reconstructed because
//! the paper does not give it. Simulated ones embed their scenarios (from `scenarios/`)
//! in the binary, run every scheduler the paper compares (a scheduler this build does
//! not have yet is reported as not available), and write to `DIR` (default
//! `./linkshare-out/repro/NAME/`):
//!
//! * `DIR/<variant>/<scheduler>/`: the outputs of `linkshare run` (`DIR/<scheduler>/`
//!   for a reproduction without variants);
//! * `DIR/<variant>/`: `compare.csv`, the overlaid `throughput.svg` and `delay_cdf.svg`
//!   of every scheduler, `reference.svg` (the reference allocation over time), and
//!   `rates.csv`, the table the terminal shows (see [`experiment`]).
//!
//! Analytic ones write their table as CSV to `DIR`.

mod analytic;
pub mod experiment;
mod fsc;
mod hfsc;
mod hls;
pub mod tcp;

use std::io::Write as _;
use std::path::PathBuf;

use linkshare_core::sched::SchedulerKind;

use super::parse_scheduler;
use crate::error::Failure;
use crate::scenario::{Problem, Problems, did_you_mean};

/// Options of `repro`.
#[derive(Debug, clap::Args)]
pub struct ReproArgs {
    /// The reproduction; without it, the list of reproductions.
    pub name: Option<String>,
    /// Output directory [default: ./linkshare-out/repro/NAME/].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Run only these of the reproduction's schedulers, comma-separated (simulated
    /// reproductions).
    #[arg(long, value_delimiter = ',')]
    pub schedulers: Vec<String>,
    /// Divide every time of the reproduction (duration, on and off times, measurement
    /// window) by N, for a quick look: rates stay the same, intervals get shorter
    /// (simulated reproductions).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub shorten: u32,
}

/// How a reproduction runs.
#[derive(Clone, Debug)]
pub struct Options {
    /// Where its files go.
    pub out: PathBuf,
    /// Only these schedulers (all of the reproduction's when `None`).
    pub only: Option<Vec<SchedulerKind>>,
    /// Every time is divided by this (at least 1).
    pub shorten: u32,
}

/// One reproduction.
#[derive(Clone, Copy, Debug)]
pub struct Repro {
    /// Its name on the command line.
    pub name: &'static str,
    /// What it reproduces, one line.
    pub about: &'static str,
    /// Runs it, printing to `out`.
    pub run: fn(&Options, &mut dyn std::io::Write) -> Result<(), Failure>,
}

/// Every reproduction, in the order they are listed.
pub const ALL: &[Repro] = &[
    Repro {
        name: "hls-bounds",
        about: "HLS paper §VI-VII: alpha and gamma of HLS and HDRR for Fig. 1 (analytic)",
        run: analytic::hls_bounds,
    },
    Repro {
        name: "hls-table2",
        about: "HLS paper Table II: transmission gaps of binary trees, l = 4..11 (analytic)",
        run: analytic::hls_table2,
    },
    Repro {
        name: "hls-exp1",
        about: "HLS paper §VIII-B: leaves of Fig. 1 going idle one after another",
        run: hls::exp1,
    },
    Repro {
        name: "hls-exp2",
        about: "HLS paper §VIII-C: isolation of guarantees, variants L, M, H",
        run: hls::exp2,
    },
    Repro {
        name: "hls-exp3",
        about: "HLS paper §VIII-D: on-off classes; is the allocation unique?",
        run: hls::exp3,
    },
    Repro {
        name: "hfsc-delay",
        about: "H-FSC paper Figs. 10, 11: audio and video delays under H-FSC and H-WF2Q+",
        run: hfsc::delay,
    },
    Repro {
        name: "hfsc-linkshare",
        about: "H-FSC paper Fig. 12: an ON-OFF session's share goes to its siblings",
        run: hfsc::linkshare,
    },
    Repro {
        name: "sced-vs-fsc",
        about: "H-FSC paper Fig. 3, FSC paper Figs. 3, 4: SCED starves, FSC shares",
        run: fsc::sced_vs_fsc,
    },
    Repro {
        name: "fsc-burst",
        about: "FSC paper Fig. 5: burst delay against the preferred burst size (PBS)",
        run: fsc::burst,
    },
    Repro {
        name: "tcp-fairness",
        about: "8 greedy NewReno flows through 100 Mbit/s: utilisation, Jain's index (fifo, drr)",
        run: tcp::fairness,
    },
];

/// The reproduction named `name`.
pub fn find(name: &str) -> Option<&'static Repro> {
    ALL.iter().find(|r| r.name == name)
}

/// The list printed when no or an unknown name is given.
pub fn listing() -> String {
    let width = ALL.iter().map(|r| r.name.len()).max().unwrap_or(0);
    let mut s = String::new();
    for r in ALL {
        s.push_str(&format!("  {:<width$}  {}\n", r.name, r.about));
    }
    s
}

/// Runs the command.
pub fn run(args: &ReproArgs) -> Result<(), Failure> {
    let unknown = |problem: String, hint: String| {
        Failure::Problems(Problems(vec![Problem {
            origin: None,
            field: None,
            problem,
            fix: format!("{hint}run one of these:\n{}", listing().trim_end()),
        }]))
    };
    let Some(name) = &args.name else {
        return Err(unknown(
            "name the reproduction to run".to_owned(),
            String::new(),
        ));
    };
    let Some(repro) = find(name.trim()) else {
        let hint = did_you_mean(name, ALL.iter().map(|r| r.name));
        return Err(unknown(format!("unknown reproduction `{name}`"), hint));
    };
    let only = if args.schedulers.is_empty() {
        None
    } else {
        let mut kinds = Vec::new();
        for s in &args.schedulers {
            kinds.push(parse_scheduler(s, "--schedulers")?);
        }
        Some(kinds)
    };
    let options = Options {
        out: args
            .out
            .clone()
            .unwrap_or_else(|| super::default_out("repro").join(repro.name)),
        only,
        shorten: args.shorten,
    };
    let mut so = std::io::stdout().lock();
    (repro.run)(&options, &mut so)?;
    so.flush().map_err(stdout_failure)
}

/// An I/O failure writing to the terminal.
fn stdout_failure(e: std::io::Error) -> Failure {
    Failure::io("cannot write to stdout".to_owned(), e)
}
