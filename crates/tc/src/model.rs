//! What a tc configuration of one interface holds, as this crate reads and writes it:
//! the root qdisc's discipline, its classes (by tc handle), their leaf queue limits and
//! the filters. Import fills it from a script ([`crate::import`]), export from a
//! scenario ([`crate::export`]); it is written out as a scenario ([`crate::scenario`])
//! or as tc commands ([`crate::export::script`]).

use std::fmt;

use linkshare_classify::Match;
use linkshare_core::curve::ServiceCurve;
use linkshare_core::hierarchy::Limit;
use linkshare_core::units::{Bytes, Rate};

/// A tc handle `major:minor` (both hexadecimal in tc's syntax, as here).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Handle {
    /// The qdisc's number.
    pub major: u16,
    /// The class's number within the qdisc (0 for the qdisc itself).
    pub minor: u16,
}

impl Handle {
    /// Parses `1:10`, `1:` (minor 0), `root` is not a handle. Hexadecimal, as tc.
    pub fn parse(s: &str) -> Option<Handle> {
        let (major, minor) = s.split_once(':')?;
        let hex = |t: &str| {
            if t.is_empty() {
                Some(0)
            } else if t.len() <= 4 && t.bytes().all(|b| b.is_ascii_hexdigit()) {
                u16::from_str_radix(t, 16).ok()
            } else {
                None
            }
        };
        Some(Handle {
            major: hex(major)?,
            minor: hex(minor)?,
        })
    }
}

impl fmt::Display for Handle {
    /// `1:10`, `1:` for minor 0 (as tc prints them).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.minor == 0 {
            write!(f, "{:x}:", self.major)
        } else {
            write!(f, "{:x}:{:x}", self.major, self.minor)
        }
    }
}

/// The root qdisc's discipline and its qdisc-wide settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Discipline {
    /// `htb [default MINOR] [r2q N]`.
    Htb {
        /// `r2q`.
        r2q: u32,
    },
    /// `hfsc [default MINOR]`.
    Hfsc,
    /// `drr`.
    Drr,
    /// `prio [bands N]`: classes `major:1` to `major:N`, band 0 served first.
    Prio,
}

impl Discipline {
    /// tc's name of the qdisc, which is also the scenario's scheduler name.
    pub fn name(&self) -> &'static str {
        match self {
            Discipline::Htb { .. } => "htb",
            Discipline::Hfsc => "hfsc",
            Discipline::Drr => "drr",
            Discipline::Prio => "prio",
        }
    }
}

/// One class. Every value the kernel uses is filled in (defaults applied); which of
/// them were defaults, and how they were derived, is in [`TcClass::defaults`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TcClass {
    /// Its handle, kept as the class's name in the scenario (`1:10`).
    pub handle: Handle,
    /// Its parent class; `None` for a class directly under the qdisc.
    pub parent: Option<Handle>,
    /// HTB `rate`.
    pub rate: Option<Rate>,
    /// HTB `ceil`.
    pub ceil: Option<Rate>,
    /// HTB `burst`, bytes at `rate`.
    pub burst: Option<Bytes>,
    /// HTB `cburst`, bytes at `ceil`.
    pub cburst: Option<Bytes>,
    /// HTB and DRR `quantum` (leaves only).
    pub quantum: Option<Bytes>,
    /// HTB `prio`, or the PRIO band.
    pub priority: Option<u8>,
    /// HFSC real-time curve.
    pub rt: Option<ServiceCurve>,
    /// HFSC link-sharing curve.
    pub ls: Option<ServiceCurve>,
    /// HFSC upper-limit curve.
    pub ul: Option<ServiceCurve>,
    /// The leaf's queue limit (pfifo: packets, bfifo: bytes); `None` for interior
    /// classes.
    pub limit: Option<Limit>,
    /// `(field, how the default was derived)` for every value tc or the kernel filled
    /// in; written as comments. Not compared by round trips (see [`TcConfig::same`]).
    pub defaults: Vec<(&'static str, String)>,
}

impl TcClass {
    /// A class with only its place in the tree.
    pub fn new(handle: Handle, parent: Option<Handle>) -> TcClass {
        TcClass {
            handle,
            parent,
            rate: None,
            ceil: None,
            burst: None,
            cburst: None,
            quantum: None,
            priority: None,
            rt: None,
            ls: None,
            ul: None,
            limit: None,
            defaults: Vec::new(),
        }
    }
}

/// A filter: what a packet must carry, and the class it goes to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TcFilter {
    /// The conditions (the shaper's classifier's).
    pub matches: Match,
    /// The class.
    pub class: Handle,
}

/// One interface's configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TcConfig {
    /// The interface (`dev`).
    pub dev: String,
    /// The link rate: what the classes directly under the qdisc may send together.
    pub rate: Rate,
    /// The root qdisc's handle major.
    pub major: u16,
    /// The discipline.
    pub discipline: Discipline,
    /// Where unclassified packets go (HTB and HFSC `default`, PRIO's band of priority 0).
    pub default: Option<Handle>,
    /// Classes, every parent before its children.
    pub classes: Vec<TcClass>,
    /// Filters, in the order tc tries them.
    pub filters: Vec<TcFilter>,
}

impl TcConfig {
    /// Whether `self` and `other` configure the same thing: equal but for the
    /// interface name and the notes on defaults.
    pub fn same(&self, other: &TcConfig) -> bool {
        let strip = |c: &TcConfig| {
            let mut c = c.clone();
            c.dev.clear();
            for class in &mut c.classes {
                class.defaults.clear();
            }
            c
        };
        strip(self) == strip(other)
    }

    /// Whether the class `h` has no children.
    pub fn is_leaf(&self, h: Handle) -> bool {
        !self.classes.iter().any(|c| c.parent == Some(h))
    }
}
