//! Building a discipline by name, for scenario files and the command line.

use std::fmt;
use std::str::FromStr;

use super::cbq::Cbq;
use super::drr::Drr;
use super::fifo::Fifo;
use super::fsc::Fsc;
use super::hdrr::Hdrr;
use super::hfsc::Hfsc;
use super::hls::Hls;
use super::htb::Htb;
use super::prio::Prio;
use super::sced::Sced;
use super::wf2q::Wf2q;
use super::{Packet, Scheduler};
use crate::hierarchy::ClassTree;

/// Every discipline that can be named in a scenario or on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SchedulerKind {
    /// [`super::fifo::Fifo`].
    Fifo,
    /// [`super::prio::Prio`].
    Prio,
    /// [`super::drr::Drr`].
    Drr,
    /// [`super::hls::Hls`].
    Hls,
    /// [`super::hdrr::Hdrr`].
    Hdrr,
    /// [`super::htb::Htb`].
    Htb,
    /// [`super::cbq::Cbq`].
    Cbq,
    /// [`super::hfsc::Hfsc`].
    Hfsc,
    /// [`super::fsc::Fsc`].
    Fsc,
    /// [`super::wf2q::Wf2q`].
    Wf2q,
    /// [`super::wf2q::Wf2q::hierarchical`] (H-WF2Q+, [`super::hwf2q`]).
    Hwf2q,
    /// [`super::sced::Sced`].
    Sced,
    /// [`super::sced::Sced::virtual_clock`].
    VirtualClock,
}

impl SchedulerKind {
    /// Every kind, in the order they are listed to users.
    pub const ALL: &'static [SchedulerKind] = &[
        SchedulerKind::Fifo,
        SchedulerKind::Prio,
        SchedulerKind::Drr,
        SchedulerKind::Hls,
        SchedulerKind::Hdrr,
        SchedulerKind::Htb,
        SchedulerKind::Cbq,
        SchedulerKind::Hfsc,
        SchedulerKind::Fsc,
        SchedulerKind::Wf2q,
        SchedulerKind::Hwf2q,
        SchedulerKind::Sced,
        SchedulerKind::VirtualClock,
    ];

    /// The name used in scenarios and on the command line.
    pub const fn name(self) -> &'static str {
        match self {
            SchedulerKind::Fifo => "fifo",
            SchedulerKind::Prio => "prio",
            SchedulerKind::Drr => "drr",
            SchedulerKind::Hls => "hls",
            SchedulerKind::Hdrr => "hdrr",
            SchedulerKind::Htb => "htb",
            SchedulerKind::Cbq => "cbq",
            SchedulerKind::Hfsc => "hfsc",
            SchedulerKind::Fsc => "fsc",
            SchedulerKind::Wf2q => "wf2q",
            SchedulerKind::Hwf2q => "hwf2q",
            SchedulerKind::Sced => "sced",
            SchedulerKind::VirtualClock => "vc",
        }
    }

    /// The names of every kind, comma-separated, for error messages.
    pub fn all_names() -> String {
        Self::ALL
            .iter()
            .map(|k| k.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl fmt::Display for SchedulerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown scheduler name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownScheduler(pub String);

impl fmt::Display for UnknownScheduler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown scheduler `{}`; known schedulers: {}",
            self.0,
            SchedulerKind::all_names()
        )
    }
}

impl std::error::Error for UnknownScheduler {}

impl FromStr for SchedulerKind {
    type Err = UnknownScheduler;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .iter()
            .copied()
            .find(|k| k.name() == s)
            .ok_or_else(|| UnknownScheduler(s.to_owned()))
    }
}

/// Why a discipline cannot be built for a tree (for example a flat discipline given a
/// hierarchy it cannot honour).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildError {
    /// The discipline.
    pub kind: SchedulerKind,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "scheduler `{}`: {}", self.kind, self.message)
    }
}

impl std::error::Error for BuildError {}

/// Builds the discipline `kind` for `tree`.
pub fn build<P: Packet + 'static>(
    kind: SchedulerKind,
    tree: &ClassTree,
) -> Result<Box<dyn Scheduler<P>>, BuildError> {
    Ok(match kind {
        SchedulerKind::Fifo => Box::new(Fifo::new()),
        SchedulerKind::Prio => Box::new(Prio::new(tree)),
        SchedulerKind::Drr => Box::new(Drr::new(tree)),
        SchedulerKind::Hls => Box::new(Hls::new(tree)),
        SchedulerKind::Hdrr => {
            Box::new(Hdrr::new(tree).map_err(|message| BuildError { kind, message })?)
        }
        SchedulerKind::Htb => Box::new(Htb::new(tree)?),
        SchedulerKind::Cbq => Box::new(Cbq::new(tree)),
        SchedulerKind::Hfsc => Box::new(Hfsc::new(tree)?),
        SchedulerKind::Fsc => Box::new(Fsc::new(tree)),
        SchedulerKind::Wf2q => {
            Box::new(Wf2q::new(tree).map_err(|message| BuildError { kind, message })?)
        }
        SchedulerKind::Hwf2q => {
            Box::new(Wf2q::hierarchical(tree).map_err(|message| BuildError { kind, message })?)
        }
        SchedulerKind::Sced => {
            Box::new(Sced::new(tree).map_err(|message| BuildError { kind, message })?)
        }
        SchedulerKind::VirtualClock => {
            Box::new(Sced::virtual_clock(tree).map_err(|message| BuildError { kind, message })?)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        for &kind in SchedulerKind::ALL {
            assert_eq!(kind.name().parse::<SchedulerKind>(), Ok(kind));
            assert_eq!(kind.to_string(), kind.name());
        }
        let mut names: Vec<&str> = SchedulerKind::ALL.iter().map(|k| k.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), SchedulerKind::ALL.len());
    }

    #[test]
    fn unknown_name_lists_the_known_ones() {
        let err = "wfq2".parse::<SchedulerKind>().unwrap_err().to_string();
        assert!(
            err.starts_with("unknown scheduler `wfq2`; known schedulers: fifo, "),
            "{err}"
        );
        for &kind in SchedulerKind::ALL {
            assert!(err.contains(kind.name()), "{err}");
        }
    }
}
