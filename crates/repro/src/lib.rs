//! linkshare-repro: the results of the papers, reproduced (`linkshare repro NAME`), and
//! the multi-run workflows they are made of ([`compare`], the [`demo`]) and parameter
//! [`sweep`]s.
//!
//! It sits above the scenario loader (`linkshare-scenario`) and the report writers
//! (`linkshare-report`); the faces (the command line, later the Python module) parse
//! their arguments, call it and print what it returns.
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
//!   of every scheduler, one `throughput-<scheduler>.svg` panel per scheduler (the HLS
//!   paper's Fig. 7 style for a hierarchy), `reference.svg` (the reference allocation
//!   over time, drawn like the panels), and `rates.csv`, the table the terminal shows
//!   (see [`experiment`]).
//!
//! Analytic ones write their table as CSV to `DIR`.

mod analytic;
pub mod compare;
pub mod demo;
pub mod experiment;
mod fsc;
mod fsc_analytic;
mod fsc_apps;
mod fsc_onoff;
mod fsc_paper;
mod fsc_table1;
mod fsc_www;
mod hfsc;
mod hfsc_fig13;
mod hfsc_restart;
mod hfsc_sced;
mod hls;
mod hls_exp1;
mod hls_fig12;
mod jobs;
mod keshav_checks;
mod keshav_cost;
mod keshav_figures;
pub mod page;
pub mod runner;
pub mod suite;
pub mod sweep;
pub mod tcp;
mod timing;
pub mod verdict;

use std::path::Path;

use linkshare_core::sched::SchedulerKind;

use std::fmt;

use linkshare_report::{WriteError, WriteOptions};
use linkshare_scenario::{Problems, Progress};

/// Why a reproduction could not run.
#[derive(Debug)]
pub enum ReproError {
    /// The options ask for something the reproduction cannot do (for example none of
    /// its schedulers).
    Problems(Problems),
    /// A file or the report could not be written.
    Write(WriteError),
    /// The simulator refused a scenario (its message names the flow, link or hop).
    Simulator(String),
    /// A bug in linkshare: a built-in scenario is invalid, or a run lacks what the
    /// reproduction measures.
    Internal(String),
    /// A run stopped early, its data past the memory budget (the reason); the outputs
    /// so far were written.
    Incomplete(String),
}

impl fmt::Display for ReproError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReproError::Problems(p) => write!(f, "{p}"),
            ReproError::Write(e) => write!(f, "{e}"),
            ReproError::Simulator(m) => write!(f, "the simulator cannot run this scenario: {m}"),
            ReproError::Internal(m) | ReproError::Incomplete(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for ReproError {}

impl From<Problems> for ReproError {
    fn from(p: Problems) -> ReproError {
        ReproError::Problems(p)
    }
}

impl From<WriteError> for ReproError {
    fn from(e: WriteError) -> ReproError {
        ReproError::Write(e)
    }
}

/// How a reproduction runs.
#[derive(Clone, Copy, Debug)]
pub struct Options<'a> {
    /// Where its files go.
    pub out: &'a Path,
    /// Only these schedulers (all of the reproduction's when `None`).
    pub only: Option<&'a [SchedulerKind]>,
    /// Every time is divided by this (at least 1): rates stay the same, intervals get
    /// shorter (simulated reproductions), for a quick look.
    pub shorten: u32,
    /// Where the simulated runs report how far they got.
    pub progress: &'a dyn Progress,
    /// Seeds per configuration where the traffic is random ([`runner::DEFAULT_SEEDS`]
    /// by default); the results are means with 95 % confidence intervals.
    pub seeds: u32,
    /// How each run's outputs are written.
    pub write: WriteOptions,
    /// Each run stops cleanly past this many bytes of data (see
    /// [`linkshare_sim::memory`]); `None`: no limit.
    pub memory_budget: Option<u64>,
}

/// One reproduction.
#[derive(Clone, Copy, Debug)]
pub struct Repro {
    /// Its name on the command line.
    pub name: &'static str,
    /// What it reproduces, one line.
    pub about: &'static str,
    /// Runs it, printing to `out`; returns its results with their verdicts (also
    /// printed), for `repro --all` ([`suite`]).
    pub run: fn(&Options<'_>, &mut dyn std::io::Write) -> Result<Vec<verdict::Check>, ReproError>,
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
        about: "HLS paper §VIII-B: leaves of Fig. 1 going idle, every one of the 60 idle orders",
        run: hls_exp1::exp1,
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
        name: "hls-fig12",
        about: "HLS paper Fig. 12: cost per packet against leaf classes, binary and flat (timed)",
        run: hls_fig12::fig12,
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
        name: "hfsc-vt-restart",
        about: "H-FSC's restart rule: a CBR class beside a tiny-weight sibling (midpoint, min, hls)",
        run: hfsc_restart::vt_restart,
    },
    Repro {
        name: "hfsc-fig2",
        about: "H-FSC paper Fig. 2: a video's delay under SCED, linear against two-piece curves",
        run: hfsc_sced::fig2,
    },
    Repro {
        name: "hfsc-fig3",
        about: "H-FSC paper Fig. 3: SCED punishes a convex session; the fair variant breaks S2",
        run: hfsc_sced::fig3,
    },
    Repro {
        name: "hfsc-fig13",
        about: "H-FSC paper Fig. 13: overhead against sessions and levels, all backlogged (timed)",
        run: hfsc_fig13::fig13,
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
        name: "fsc-fig1-audio",
        about: "FSC paper Fig. 1 and the audio example: fair shares and curve delays (analytic)",
        run: fsc_analytic::fig1_audio,
    },
    Repro {
        name: "fsc-onoff",
        about: "FSC paper Figs. 6-10: ON-OFF burst delay against PBS and BPR (TCP, UDP)",
        run: fsc_onoff::onoff,
    },
    Repro {
        name: "fsc-exp",
        about: "FSC paper Fig. 11: TCP ON-OFF bursts of exponential size, delay by burst size",
        run: fsc_apps::exp,
    },
    Repro {
        name: "fsc-mix",
        about: "FSC paper Fig. 12: MPEG video, Telnet, FTP and UDP: frame and packet delays",
        run: fsc_apps::mix,
    },
    Repro {
        name: "fsc-table1",
        about: "FSC paper Table 1: back-to-back new bursts against a persistent TCP flow",
        run: fsc_table1::table1,
    },
    Repro {
        name: "fsc-www",
        about: "FSC paper Figs. 13, 14: web transfers per group against BPR and PBS",
        run: fsc_www::www,
    },
    Repro {
        name: "jobs-exp1",
        about: "JoBS paper Figs. 4, 5: delay ratio 4, loss ratio 2 under 300-550 Pareto sources",
        run: jobs::exp1,
    },
    Repro {
        name: "jobs-exp2",
        about: "JoBS paper Figs. 6-9, Tables 1, 2: two bottlenecks, TCP and UDP, jobs vs fifo, prio, drr",
        run: jobs::exp2,
    },
    Repro {
        name: "keshav-cost",
        about: "Keshav FQ paper Figs. 3-7: LINK, TREE, HEAP, PERC on recorded gateway traces",
        run: keshav_cost::keshav_cost,
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

/// A failure writing the printed report.
fn stdout_failure(error: std::io::Error) -> ReproError {
    ReproError::Write(WriteError {
        what: "cannot write the report".to_owned(),
        error,
    })
}
