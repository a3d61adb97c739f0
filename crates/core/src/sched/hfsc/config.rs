//! H-FSC's settings ([`HfscParams`]) and which curves each class gets: the user's `rt`,
//! `ls` and `ul`, the default link-sharing curve, and the configurations H-FSC refuses
//! (an `rt` curve on a class with children, a convex `rt` curve with a sloped start).

use std::fmt;
use std::str::FromStr;

use crate::curve::ServiceCurve;
use crate::hierarchy::ClassTree;
use crate::sched::{BuildError, SchedulerKind, class_problem};
use crate::share::parent_shares;

/// H-FSC's qdisc-wide settings (`SchedulerConfig::Hfsc`); the default is the paper's
/// algorithm.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HfscParams {
    /// Where a class restarts its virtual time when it becomes active while its
    /// parent has other active children.
    pub restart: VtRestart,
}

/// The system virtual time `vs_p` at which a class that becomes active under a parent
/// with other active children anchors its virtual curve (Eq. 12); see the H-FSC
/// module docs, "The restart rule", for what each costs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum VtRestart {
    /// `vs_p = (v_min + v_max) / 2` over the parent's active children: the paper's rule
    /// (§III-C), and ALTQ's and Linux's (`midpoint`).
    #[default]
    Midpoint,
    /// `vs_p = v_min`, the smallest virtual time of the parent's active children
    /// (`min`): a returning class is not placed ahead of a sibling that lags.
    Min,
}

impl VtRestart {
    /// Every rule, in the order they are listed to users.
    pub const ALL: [VtRestart; 2] = [VtRestart::Midpoint, VtRestart::Min];

    /// The name in scenarios (`[link.hfsc] restart`) and on the command line.
    pub const fn name(self) -> &'static str {
        match self {
            VtRestart::Midpoint => "midpoint",
            VtRestart::Min => "min",
        }
    }
}

impl fmt::Display for VtRestart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for VtRestart {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        VtRestart::ALL
            .into_iter()
            .find(|r| r.name() == s)
            .ok_or_else(|| format!("unknown restart rule `{s}`; known: midpoint, min"))
    }
}

/// The curves of one class, defaults applied. `None` means the class has no such curve.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Curves {
    /// Real-time curve (leaves only): deadlines and eligible times.
    pub rt: Option<ServiceCurve>,
    /// Link-sharing curve: the virtual curve. `None` only for a class that has `rt`
    /// and no `ls`; such a class takes no part in link-sharing.
    pub ls: Option<ServiceCurve>,
    /// Upper-limit curve: the fit time. Meaningful only with `ls`.
    pub ul: Option<ServiceCurve>,
}

/// The curves of every class of `tree`, by class index (the root's are all `None`), or
/// why the tree cannot be scheduled by H-FSC.
///
/// A class with neither `rt` nor `ls` gets `ls = linear(rate)` if it has a `rate`, else
/// `ls = linear(share)`, its share of its parent's long-term link-sharing rate (`m2` of
/// the parent's `ls`; the link rate for children of the link) by
/// [`crate::share::weight_share`]: `parent_rate · weight / (sum of the weights of the
/// class and its siblings)`, rounded down, at least 1 bit/s. Shares are computed
/// top-down ([`parent_shares`]), so a default class under a default class gets a share
/// of a share.
pub fn resolve(tree: &ClassTree) -> Result<Vec<Curves>, BuildError> {
    let mut problems = Vec::new();
    for c in &tree.classes()[1..] {
        let Some(rt) = c.spec.rt else {
            continue;
        };
        if !c.children.is_empty() {
            let children: Vec<&str> = c.children.iter().map(|k| tree.get(*k).name()).collect();
            problems.push(class_problem(
                tree,
                c.id,
                "rt",
                format!(
                    "the class has an `rt` curve but also children ({}): the real-time \
                     criterion guarantees service curves to leaves only, the classes that hold \
                     packets",
                    children.join(", ")
                ),
                "move the `rt` curve to one of its leaves, or make it an `ls` curve to give \
                 the class its share by link-sharing"
                    .to_owned(),
            ));
        }
        if rt.has_sloped_convex_start() {
            problems.push(class_problem(
                tree,
                c.id,
                "rt",
                format!(
                    "the `rt` curve is convex and its first segment is not flat (m1 {}, d {}, \
                     m2 {}): after the class idles and returns, its deadline curve (Eq. 7) is \
                     no longer two-piece (H-FSC paper, §IV) and its guarantee could not be \
                     kept exactly",
                    rt.m1, rt.d, rt.m2
                ),
                "give it m1 = 0 (as umax/dmax/rate writes a convex curve), or a concave or \
                 linear curve"
                    .to_owned(),
            ));
        }
    }
    if !problems.is_empty() {
        return Err(BuildError {
            kind: SchedulerKind::Hfsc,
            problems,
        });
    }
    // A default class's rate is its share of its parent's long-term link-sharing rate.
    let default_rate = parent_shares(tree, |class, own| {
        class.spec.ls.or(class.spec.rt).map_or(own, |c| c.m2)
    });
    let mut curves = vec![Curves::default(); tree.len()];
    for class in &tree.classes()[1..] {
        let spec = &class.spec;
        let ls = match (spec.ls, spec.rt) {
            (Some(ls), _) => Some(ls),
            (None, Some(_)) => None,
            (None, None) => Some(ServiceCurve::linear(default_rate[class.id.index()])),
        };
        curves[class.id.index()] = Curves {
            rt: spec.rt,
            ls,
            ul: spec.ul,
        };
    }
    Ok(curves)
}
