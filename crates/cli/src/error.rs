//! Why a command failed, and its exit status.
//!
//! | status | meaning |
//! | --- | --- |
//! | 0 | success |
//! | 1 | internal error: a bug in linkshare (please report it); for `check`: the scenario is not admissible; a run stopped early, its data past the memory budget (`--max-memory`) |
//! | 2 | the input is wrong (scenario problems, bad options) or the environment refused (I/O) |
//!
//! Command-line usage errors are reported by `clap`, also with status 2.

use std::fmt;
use std::io;

use linkshare_report::WriteError;
use linkshare_repro::ReproError;
use linkshare_scenario::Problems;
use linkshare_sim::SimError;

/// A failed command. Its `Display` is the message printed on stderr: one line per
/// problem, no backtrace.
#[derive(Debug)]
pub enum Failure {
    /// Problems in the scenario or the options (status 2).
    Problems(Problems),
    /// An I/O operation failed (status 2).
    Io {
        /// What was being done, naming the path.
        what: String,
        /// The operating system's error.
        error: io::Error,
    },
    /// The simulator refused a scenario the loader accepted (status 2): its message names
    /// the flow, link or hop concerned.
    Simulator(String),
    /// `check` found the scenario not admissible (status 1); the message is the verdict,
    /// the findings were printed on stdout.
    Inadmissible(String),
    /// `shape` could not start or run: missing capabilities, an interface, the metrics
    /// address (status 2); the message says how to fix it.
    Shape(String),
    /// A run stopped before its end because its data grew past the memory budget
    /// (status 1); its outputs so far were written and `summary.json` says
    /// `"complete": false`.
    Incomplete(String),
    /// `repro --all`: results that reproduced when `expected.toml` was recorded no
    /// longer do (status 1); the table and the list were printed on stdout.
    Regressed(String),
    /// A bug (status 1).
    Internal(String),
}

impl Failure {
    /// An I/O failure while doing `what`.
    pub fn io(what: String, error: io::Error) -> Failure {
        Failure::Io { what, error }
    }

    /// The process exit status for this failure.
    pub fn exit_code(&self) -> u8 {
        match self {
            Failure::Internal(_)
            | Failure::Inadmissible(_)
            | Failure::Incomplete(_)
            | Failure::Regressed(_) => 1,
            Failure::Problems(_)
            | Failure::Io { .. }
            | Failure::Simulator(_)
            | Failure::Shape(_) => 2,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Problems(p) => write!(f, "{p}"),
            Failure::Io { what, error } => write!(f, "error: {what}: {error}"),
            Failure::Simulator(msg) => {
                write!(f, "error: the simulator cannot run this scenario: {msg}")
            }
            Failure::Inadmissible(msg) | Failure::Shape(msg) | Failure::Regressed(msg) => {
                write!(f, "{msg}")
            }
            Failure::Incomplete(msg) => write!(
                f,
                "error: the run stopped early, its outputs so far written and marked \
                 incomplete in summary.json: {msg}"
            ),
            Failure::Internal(msg) => write!(
                f,
                "internal error: {msg}; this is a bug in linkshare, please report it"
            ),
        }
    }
}

impl From<Problems> for Failure {
    fn from(p: Problems) -> Failure {
        Failure::Problems(p)
    }
}

impl From<WriteError> for Failure {
    fn from(e: WriteError) -> Failure {
        Failure::Io {
            what: e.what,
            error: e.error,
        }
    }
}

impl From<SimError> for Failure {
    fn from(e: SimError) -> Failure {
        Failure::Simulator(e.to_string())
    }
}

impl From<ReproError> for Failure {
    fn from(e: ReproError) -> Failure {
        match e {
            ReproError::Problems(p) => Failure::Problems(p),
            ReproError::Write(e) => e.into(),
            ReproError::Simulator(m) => Failure::Simulator(m),
            ReproError::Internal(m) => Failure::Internal(m),
            ReproError::Incomplete(m) => Failure::Incomplete(m),
        }
    }
}

/// A failure writing to the terminal.
pub fn stdout_failure(e: io::Error) -> Failure {
    Failure::io("cannot write to stdout".to_owned(), e)
}
