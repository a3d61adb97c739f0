//! Disciplines by name ([`SchedulerKind`]), with their typed settings
//! ([`SchedulerConfig`]), validated and built for a class tree.

use std::fmt;
use std::str::FromStr;

use super::cbq::{Cbq, CbqParams};
use super::drr::Drr;
use super::fifo::Fifo;
use super::fsc::Fsc;
use super::hdrr::Hdrr;
use super::hfsc::{Hfsc, HfscParams};
use super::hls::Hls;
use super::htb::Htb;
use super::htb::HtbParams;
use super::jobs::{Jobs, JobsConfig};
use super::keshav::KeshavConfig;
use super::pfq::{Flavor, Pfq};
use super::prio::Prio;
use super::sced::Sced;
use super::wf2q::Wf2q;
use super::{Packet, Scheduler};
use crate::echo::echo;
use crate::hierarchy::{ClassId, ClassTree, ConfigError, guarantee_problems};

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
    /// [`super::wf2q::Wf2q::hierarchical`] (H-WF2Q+, see [`super::wf2q`]).
    Hwf2q,
    /// [`super::sced::Sced`].
    Sced,
    /// [`super::sced::Sced::virtual_clock`].
    VirtualClock,
    /// [`super::keshav::Keshav`].
    Keshav,
    /// [`super::pfq::Pfq`]: WFQ / PGPS with the exact GPS virtual time.
    Wfq,
    /// [`super::pfq::Pfq`]: self-clocked fair queueing.
    Scfq,
    /// [`super::pfq::Pfq`]: start-time fair queueing.
    Stfq,
    /// [`super::jobs::Jobs`].
    Jobs,
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
        SchedulerKind::Keshav,
        SchedulerKind::Wfq,
        SchedulerKind::Scfq,
        SchedulerKind::Stfq,
        SchedulerKind::Jobs,
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
            SchedulerKind::Keshav => "keshav",
            SchedulerKind::Wfq => "wfq",
            SchedulerKind::Scfq => "scfq",
            SchedulerKind::Stfq => "stfq",
            SchedulerKind::Jobs => "jobs",
        }
    }

    /// Whether the discipline can reset a class ([`super::Scheduler::reset_class`]), and
    /// so run trees with per-flow templates ([`crate::perflow`]): those that keep no
    /// history of an empty class (FIFO, strict priority, DRR, HLS) and those that forget
    /// it on demand (H-FSC, FSC). The others keep history a new flow must not inherit
    /// (WF2Q+'s finish tags, SCED's deadline curves, HTB's and CBQ's token buckets and
    /// estimators, HDRR's deficits) and do not implement the reset yet.
    pub const fn resets_classes(self) -> bool {
        matches!(
            self,
            SchedulerKind::Fifo
                | SchedulerKind::Prio
                | SchedulerKind::Drr
                | SchedulerKind::Hls
                | SchedulerKind::Hfsc
                | SchedulerKind::Fsc
        )
    }

    /// Whether the discipline keeps its own buffer and decides its own drops
    /// ([`super::Scheduler::owns_buffer`]: Keshav FQ, JoBS), so that the class limits and
    /// the qdisc's shared buffer do not apply to it. Known without building it.
    pub const fn owns_buffer(self) -> bool {
        matches!(self, SchedulerKind::Keshav | SchedulerKind::Jobs)
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
            echo(&self.0),
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

/// Why a discipline cannot be built for a tree: every problem found, each naming the
/// class, the field, where it was written (when known), what is wrong and how to fix it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildError {
    /// The discipline.
    pub kind: SchedulerKind,
    /// The problems, in the order they were found (at least one).
    pub problems: Vec<ConfigError>,
}

impl BuildError {
    /// One problem of `kind` with class `class` of `tree`, field `field`; the origin is
    /// where the class wrote `field` (or the class itself), when known.
    pub fn class(
        kind: SchedulerKind,
        tree: &ClassTree,
        class: ClassId,
        field: &'static str,
        problem: String,
        fix: String,
    ) -> BuildError {
        BuildError {
            kind,
            problems: vec![class_problem(tree, class, field, problem, fix)],
        }
    }
}

/// A [`ConfigError`] about `field` of `class` of `tree`.
pub fn class_problem(
    tree: &ClassTree,
    class: ClassId,
    field: &'static str,
    problem: String,
    fix: String,
) -> ConfigError {
    let spec = &tree.get(class).spec;
    ConfigError {
        class: spec.name.clone(),
        field,
        origin: spec.origin_of(field).cloned(),
        problem,
        fix,
    }
}

impl fmt::Display for BuildError {
    /// One line per problem: `FILE:LINE:COL: scheduler `K`: class `C`, field `F`:
    /// problem; fix`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.problems.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            if let Some(o) = &p.origin {
                write!(f, "{o}: ")?;
            }
            write!(
                f,
                "scheduler `{}`: class `{}`, field `{}`: {}; {}",
                self.kind,
                echo(&p.class),
                p.field,
                p.problem,
                p.fix
            )?;
        }
        Ok(())
    }
}

impl std::error::Error for BuildError {}

/// A discipline with its typed settings: what a link's egress port runs.
///
/// Settings that belong to one discipline live in its variant, not in
/// [`crate::hierarchy::ClassSpec`] (which holds what several disciplines share: weights,
/// rates, curves, priorities, limits). [`SchedulerConfig::validate`] checks the
/// settings against a tree without building anything; [`SchedulerConfig::build`]
/// builds the discipline, failing exactly when `validate` does.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SchedulerConfig {
    /// [`Fifo`].
    Fifo,
    /// [`Prio`].
    Prio,
    /// [`Drr`].
    Drr,
    /// [`Hls`].
    Hls,
    /// [`Hdrr`].
    Hdrr,
    /// [`Htb`] with its qdisc-wide parameters.
    Htb(HtbParams),
    /// [`Cbq`] with its link-sharing guideline.
    Cbq(CbqParams),
    /// [`Hfsc`] with its restart rule.
    Hfsc(HfscParams),
    /// [`Fsc`].
    Fsc,
    /// [`Wf2q`] (flat).
    Wf2q,
    /// [`Wf2q::hierarchical`] (H-WF2Q+).
    Hwf2q,
    /// [`Sced`].
    Sced,
    /// [`Sced::virtual_clock`].
    VirtualClock,
    /// [`super::keshav::Keshav`] with its buffer, structure and offsets.
    Keshav(KeshavConfig),
    /// [`Pfq`] as WFQ.
    Wfq,
    /// [`Pfq`] as SCFQ.
    Scfq,
    /// [`Pfq`] as STFQ.
    Stfq,
    /// [`Jobs`] with its constraints, mode, buffer and sampling.
    Jobs(JobsConfig),
}

impl From<SchedulerKind> for SchedulerConfig {
    /// The discipline with its default settings (tc's, where tc has the discipline).
    fn from(kind: SchedulerKind) -> SchedulerConfig {
        match kind {
            SchedulerKind::Fifo => SchedulerConfig::Fifo,
            SchedulerKind::Prio => SchedulerConfig::Prio,
            SchedulerKind::Drr => SchedulerConfig::Drr,
            SchedulerKind::Hls => SchedulerConfig::Hls,
            SchedulerKind::Hdrr => SchedulerConfig::Hdrr,
            SchedulerKind::Htb => SchedulerConfig::Htb(HtbParams::default()),
            SchedulerKind::Cbq => SchedulerConfig::Cbq(CbqParams::default()),
            SchedulerKind::Hfsc => SchedulerConfig::Hfsc(HfscParams::default()),
            SchedulerKind::Fsc => SchedulerConfig::Fsc,
            SchedulerKind::Wf2q => SchedulerConfig::Wf2q,
            SchedulerKind::Hwf2q => SchedulerConfig::Hwf2q,
            SchedulerKind::Sced => SchedulerConfig::Sced,
            SchedulerKind::VirtualClock => SchedulerConfig::VirtualClock,
            SchedulerKind::Keshav => SchedulerConfig::Keshav(KeshavConfig::default()),
            SchedulerKind::Wfq => SchedulerConfig::Wfq,
            SchedulerKind::Scfq => SchedulerConfig::Scfq,
            SchedulerKind::Stfq => SchedulerConfig::Stfq,
            SchedulerKind::Jobs => SchedulerConfig::Jobs(JobsConfig::default()),
        }
    }
}

impl SchedulerConfig {
    /// Which discipline this is.
    pub const fn kind(&self) -> SchedulerKind {
        match self {
            SchedulerConfig::Fifo => SchedulerKind::Fifo,
            SchedulerConfig::Prio => SchedulerKind::Prio,
            SchedulerConfig::Drr => SchedulerKind::Drr,
            SchedulerConfig::Hls => SchedulerKind::Hls,
            SchedulerConfig::Hdrr => SchedulerKind::Hdrr,
            SchedulerConfig::Htb(_) => SchedulerKind::Htb,
            SchedulerConfig::Cbq(_) => SchedulerKind::Cbq,
            SchedulerConfig::Hfsc(_) => SchedulerKind::Hfsc,
            SchedulerConfig::Fsc => SchedulerKind::Fsc,
            SchedulerConfig::Wf2q => SchedulerKind::Wf2q,
            SchedulerConfig::Hwf2q => SchedulerKind::Hwf2q,
            SchedulerConfig::Sced => SchedulerKind::Sced,
            SchedulerConfig::VirtualClock => SchedulerKind::VirtualClock,
            SchedulerConfig::Keshav(_) => SchedulerKind::Keshav,
            SchedulerConfig::Wfq => SchedulerKind::Wfq,
            SchedulerConfig::Scfq => SchedulerKind::Scfq,
            SchedulerConfig::Stfq => SchedulerKind::Stfq,
            SchedulerConfig::Jobs(_) => SchedulerKind::Jobs,
        }
    }

    /// Checks that the discipline can be built for `tree` with these settings, without
    /// building it: `build` fails exactly when this does, with the same error.
    pub fn validate(&self, tree: &ClassTree) -> Result<(), BuildError> {
        self.check_templates(tree)?;
        self.check_guarantees(tree)?;
        match self {
            SchedulerConfig::Fifo
            | SchedulerConfig::Prio
            | SchedulerConfig::Drr
            | SchedulerConfig::Hls
            | SchedulerConfig::Cbq(_)
            | SchedulerConfig::Fsc => Ok(()),
            SchedulerConfig::Hdrr => super::hdrr::validate(tree),
            SchedulerConfig::Htb(params) => super::htb::validate(tree, params),
            SchedulerConfig::Hfsc(_) => super::hfsc::validate(tree),
            SchedulerConfig::Wf2q => super::wf2q::validate(tree),
            SchedulerConfig::Hwf2q => super::wf2q::validate_hierarchical(tree),
            SchedulerConfig::Sced => super::sced::validate(tree),
            SchedulerConfig::VirtualClock => super::sced::validate_virtual_clock(tree),
            SchedulerConfig::Keshav(config) => super::keshav::validate(tree, config),
            SchedulerConfig::Wfq => super::pfq::validate(Flavor::Wfq, tree),
            SchedulerConfig::Scfq => super::pfq::validate(Flavor::Scfq, tree),
            SchedulerConfig::Stfq => super::pfq::validate(Flavor::Stfq, tree),
            SchedulerConfig::Jobs(config) => super::jobs::validate(tree, config),
        }
    }

    /// Advice about `tree` under this discipline: settings it accepts (as the kernel does)
    /// that probably do not do what was meant, each naming the class and the fix. HTB
    /// gives tc's warnings ([`super::htb::warnings`]); the other disciplines none yet.
    /// Empty when the discipline cannot be built for the tree (`validate` says why).
    pub fn warnings(&self, tree: &ClassTree) -> Vec<ConfigError> {
        match self {
            SchedulerConfig::Htb(params) => super::htb::warnings(tree, params),
            _ => Vec::new(),
        }
    }

    /// Refuses rates that cannot all be guaranteed ([`guarantee_problems`]), except under
    /// HTB, which runs them as Linux does and warns instead ([`SchedulerConfig::warnings`]).
    fn check_guarantees(&self, tree: &ClassTree) -> Result<(), BuildError> {
        if matches!(self, SchedulerConfig::Htb(_)) {
            return Ok(());
        }
        let problems = guarantee_problems(tree);
        if problems.is_empty() {
            Ok(())
        } else {
            Err(BuildError {
                kind: self.kind(),
                problems,
            })
        }
    }

    /// Refuses a tree with per-flow templates for a discipline that cannot reset classes.
    fn check_templates(&self, tree: &ClassTree) -> Result<(), BuildError> {
        let kind = self.kind();
        if tree.templates().is_empty() || kind.resets_classes() {
            return Ok(());
        }
        let supported: Vec<&str> = SchedulerKind::ALL
            .iter()
            .filter(|k| k.resets_classes())
            .map(|k| k.name())
            .collect();
        Err(BuildError {
            kind,
            problems: tree
                .templates()
                .iter()
                .map(|t| {
                    let mut p = class_problem(
                        tree,
                        t.first,
                        "per_flow",
                        format!(
                            "`{}` is a per-flow class, and {kind} cannot give a class to a new \
                             flow: it keeps per-class history it does not reset",
                            t.name
                        ),
                        format!("use one of {}, or remove `per_flow`", supported.join(", ")),
                    );
                    p.class.clone_from(&t.name);
                    p
                })
                .collect(),
        })
    }

    /// Builds the discipline for `tree`.
    pub fn build<P: Packet + Send + 'static>(
        &self,
        tree: &ClassTree,
    ) -> Result<Box<dyn Scheduler<P> + Send>, BuildError> {
        self.check_templates(tree)?;
        self.check_guarantees(tree)?;
        Ok(match self {
            SchedulerConfig::Fifo => Box::new(Fifo::new()),
            SchedulerConfig::Prio => Box::new(Prio::new(tree)),
            SchedulerConfig::Drr => Box::new(Drr::new(tree)),
            SchedulerConfig::Hls => Box::new(Hls::new(tree)),
            SchedulerConfig::Hdrr => Box::new(Hdrr::new(tree)?),
            SchedulerConfig::Htb(params) => Box::new(Htb::with_params(tree, *params)?),
            SchedulerConfig::Cbq(params) => Box::new(Cbq::with_params(tree, *params)),
            SchedulerConfig::Hfsc(params) => Box::new(Hfsc::with_params(tree, *params)?),
            SchedulerConfig::Fsc => Box::new(Fsc::new(tree)),
            SchedulerConfig::Wf2q => Box::new(Wf2q::new(tree)?),
            SchedulerConfig::Hwf2q => Box::new(Wf2q::hierarchical(tree)?),
            SchedulerConfig::Sced => Box::new(Sced::new(tree)?),
            SchedulerConfig::VirtualClock => Box::new(Sced::virtual_clock(tree)?),
            SchedulerConfig::Keshav(config) => super::keshav::build(tree, config, None)?,
            SchedulerConfig::Wfq => Box::new(Pfq::new(Flavor::Wfq, tree)?),
            SchedulerConfig::Scfq => Box::new(Pfq::new(Flavor::Scfq, tree)?),
            SchedulerConfig::Stfq => Box::new(Pfq::new(Flavor::Stfq, tree)?),
            SchedulerConfig::Jobs(config) => Box::new(Jobs::new(tree, config)?),
        })
    }
}

/// Builds the discipline `kind` with its default settings for `tree`
/// (`SchedulerConfig::from(kind).build(tree)`).
pub fn build<P: Packet + Send + 'static>(
    kind: SchedulerKind,
    tree: &ClassTree,
) -> Result<Box<dyn Scheduler<P> + Send>, BuildError> {
    SchedulerConfig::from(kind).build(tree)
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
