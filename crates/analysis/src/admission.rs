//! Admission control for service curves (H-FSC paper §II and Thm. 2; `linkshare check`).
//!
//! For one link's class tree, with the curves H-FSC uses (its defaults applied, see
//! [`linkshare_core::sched::hfsc`]), [`check`] verifies, **exactly** (no sampling, no
//! floats; see below):
//!
//! 1. [`Check::RealTime`]: the sum of the leaves' `rt` curves stays at or below the link's
//!    line `C · t` for every `t >= 0`. This is the condition under which H-FSC (and SCED)
//!    meets every deadline within `t_max` (Thm. 2).
//! 2. [`Check::LinkSharing`]: at every class with children, the sum of the children's `ls`
//!    curves stays at or below the class's own `ls` curve (the link's line for the
//!    link's children). Children whose curves overbook their parent cannot all get them.
//!    Skipped when [`Options::relative_link_sharing`] says the `ls` curves are only
//!    relative (FSC's best-effort mode, where they overbook on purpose).
//! 3. [`Check::UpperLimitBelowRealTime`]: a class's `ul` curve is nowhere below the sum
//!    of the `rt` curves of the leaves under it (the leaf itself for a leaf): the
//!    real-time criterion ignores upper limits, so such a limit cannot be kept.
//! 4. [`Check::UpperLimitAboveLink`]: a `ul` curve is nowhere above the link's line:
//!    such a limit is not one the link can reach.
//!
//! Each failed check is a [`Violation`] naming the classes involved and the first
//! interval in which the sum is above its limit: when it starts (the exact crossing time
//! rounded down to the ns) and when it ends (`None`: never, because the long-term rates
//! add up to more than the limit's).
//!
//! Then, for every leaf with an `rt` curve, its [`DelayBound`]: the time the curve takes
//! to serve the leaf's burst, plus `t_max = L_max / C` (Thm. 2, `L_max` the largest
//! `max_packet` of the link's leaves): a burst of that size arriving at an idle leaf
//! leaves completely within the bound, if the link is admissible. The burst is, in this
//! order: the `umax` the curve was written with (then the curve's delay is its `dmax`,
//! up to the rounding of `m1`), given in [`Options::declared_bursts`]; else, for a
//! concave curve, the bytes of its first segment (`m1 · d`, served within `d`); else
//! the leaf's `max_packet` (one packet).
//!
//! # Exactness
//!
//! A sum of two-piece linear curves is piecewise linear with breakpoints at the curves'
//! `d`s: the comparison is made at every breakpoint and on the final slopes, in integer
//! bit·ns/s with 256-bit sums, so it is exact for any mix of concave, convex and linear
//! curves (module `piecewise`).

mod piecewise;

use linkshare_core::curve::{RuntimeCurve, ServiceCurve};
use linkshare_core::hierarchy::{ClassId, ClassTree};
use linkshare_core::sched::hfsc::{Curves, resolve_curves};
use linkshare_core::units::{Bytes, Duration, Rate};

use piecewise::first_excess;

/// Which condition a [`Violation`] breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Check {
    /// The leaves' `rt` curves add up to more than the link's line.
    RealTime,
    /// A class's children's `ls` curves add up to more than its own `ls` curve (the
    /// link's line at the root).
    LinkSharing,
    /// A `ul` curve is below the `rt` curves of the leaves under its class.
    UpperLimitBelowRealTime,
    /// A `ul` curve is above the link's line.
    UpperLimitAboveLink,
}

impl Check {
    /// Stable snake_case name, as `--json` prints it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Check::RealTime => "rt_above_link",
            Check::LinkSharing => "ls_above_parent",
            Check::UpperLimitBelowRealTime => "ul_below_rt",
            Check::UpperLimitAboveLink => "ul_above_link",
        }
    }
}

/// One failed check: `Σ curves of classes` is above the limit's curve from `starts` on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The condition broken.
    pub check: Check,
    /// The class whose curve is the limit: the root (the link's line) for
    /// [`Check::RealTime`] and [`Check::UpperLimitAboveLink`], the parent for
    /// [`Check::LinkSharing`] (the root: the link's line), the class with the `ul`
    /// curve for [`Check::UpperLimitBelowRealTime`].
    pub limit: ClassId,
    /// The classes whose curves add up to more than the limit: the leaves with an `rt`
    /// curve (under the `ul` class, for [`Check::UpperLimitBelowRealTime`]), the
    /// children with an `ls` curve, or the class with the `ul` curve.
    pub classes: Vec<ClassId>,
    /// Those of `classes` whose curves are rising where the excess starts (the ones to
    /// lower first).
    pub rising: Vec<ClassId>,
    /// The exact crossing time rounded down: the sum is within the limit at `starts`
    /// and above it from `starts + 1 ns` on.
    pub starts: Duration,
    /// When the sum is back within the limit (the first ns at which it is); `None`: never.
    pub until: Option<Duration>,
}

/// Where a leaf's burst size comes from (see the [module docs](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum BurstSource {
    /// The `umax` the `rt` curve was written with.
    Declared,
    /// The bytes of a concave curve's first segment.
    FirstSegment,
    /// The leaf's `max_packet`.
    MaxPacket,
}

impl BurstSource {
    /// Stable snake_case name, as `--json` prints it.
    pub const fn as_str(self) -> &'static str {
        match self {
            BurstSource::Declared => "umax",
            BurstSource::FirstSegment => "first_segment",
            BurstSource::MaxPacket => "max_packet",
        }
    }
}

/// The delay bound of a leaf with an `rt` curve.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DelayBound {
    /// The leaf.
    pub class: ClassId,
    /// The burst the bound is for.
    pub burst: Bytes,
    /// Where `burst` comes from.
    pub burst_from: BurstSource,
    /// The smallest time at which the `rt` curve reaches `burst` (ns, rounded up);
    /// `None` if it never does (a curve whose `m2` is zero and whose first segment is
    /// shorter than the burst).
    pub curve_delay: Option<Duration>,
    /// `curve_delay + t_max`; `None` with `curve_delay`.
    pub bound: Option<Duration>,
}

/// What [`check`] needs beyond the class tree.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// The `umax` each `rt` curve given as `(umax, dmax, rate)` was written with, by
    /// class.
    pub declared_bursts: Vec<(ClassId, Bytes)>,
    /// The `ls` curves are relative weights, not guarantees (FSC's best-effort mode):
    /// [`Check::LinkSharing`] is not made.
    pub relative_link_sharing: bool,
}

/// The admission decision for one link.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkAdmission {
    /// The link rate `C`.
    pub link_rate: Rate,
    /// `L_max`: the largest `max_packet` among the leaves.
    pub max_packet: Bytes,
    /// `t_max = L_max / C`, rounded up (Thm. 2).
    pub t_max: Duration,
    /// Why H-FSC refuses the tree (an `rt` curve on an interior class, or a convex `rt`
    /// curve with a sloped first segment), if it does; the checks then use the curves as
    /// written, without defaults.
    pub refused: Option<String>,
    /// Every failed check, in the order of the [module docs](self), classes in id order.
    pub violations: Vec<Violation>,
    /// Every leaf with an `rt` curve, in id order.
    pub delays: Vec<DelayBound>,
}

impl LinkAdmission {
    /// Whether H-FSC can schedule the tree and every check passed.
    pub fn is_admissible(&self) -> bool {
        self.refused.is_none() && self.violations.is_empty()
    }
}

/// The curves of every class by index, as H-FSC resolves them, or as written (and why
/// H-FSC refuses them).
fn resolve(tree: &ClassTree) -> (Vec<Curves>, Option<String>) {
    match resolve_curves(tree) {
        Ok(curves) => (curves, None),
        Err(e) => (
            tree.classes()
                .iter()
                .map(|c| Curves {
                    rt: c.spec.rt.filter(|_| c.is_leaf()),
                    ls: c.spec.ls,
                    ul: c.spec.ul,
                })
                .collect(),
            Some(e.to_string()),
        ),
    }
}

/// The admission decision for `tree` (see the [module docs](self)).
pub fn check(tree: &ClassTree, options: &Options) -> LinkAdmission {
    let (curves, refused) = resolve(tree);
    let rate = tree.link_rate();
    let link = ServiceCurve::linear(rate);
    let max_packet = Bytes(
        tree.leaves()
            .iter()
            .map(|&l| tree.get(l).max_packet().0)
            .max()
            .unwrap_or(0),
    );
    let t_max = rate.tx_time(max_packet);
    let mut violations = Vec::new();
    let mut compare =
        |check: Check, limit: ClassId, lower: Vec<(ClassId, ServiceCurve)>, upper: ServiceCurve| {
            let sc: Vec<ServiceCurve> = lower.iter().map(|(_, c)| *c).collect();
            if let Some(e) = first_excess(&sc, &[upper]) {
                violations.push(Violation {
                    check,
                    limit,
                    classes: lower.iter().map(|(id, _)| *id).collect(),
                    rising: e.rising.iter().map(|&i| lower[i].0).collect(),
                    starts: Duration(e.starts),
                    until: e.until.map(Duration),
                });
            }
        };
    let rt_leaves = |under: ClassId| -> Vec<(ClassId, ServiceCurve)> {
        tree.leaves()
            .iter()
            .filter(|&&l| l == under || tree.ancestors(l).any(|a| a == under))
            .filter_map(|&l| curves[l.index()].rt.map(|c| (l, c)))
            .collect()
    };
    compare(
        Check::RealTime,
        ClassId::ROOT,
        rt_leaves(ClassId::ROOT),
        link,
    );
    if !options.relative_link_sharing {
        for parent in tree.classes().iter().filter(|c| !c.children.is_empty()) {
            let upper = if parent.id == ClassId::ROOT {
                Some(link)
            } else {
                curves[parent.id.index()].ls
            };
            let kids: Vec<(ClassId, ServiceCurve)> = parent
                .children
                .iter()
                .filter_map(|&k| curves[k.index()].ls.map(|c| (k, c)))
                .collect();
            if let Some(upper) = upper
                && !kids.is_empty()
            {
                compare(Check::LinkSharing, parent.id, kids, upper);
            }
        }
    }
    for class in &tree.classes()[1..] {
        let Some(ul) = curves[class.id.index()].ul else {
            continue;
        };
        let below = rt_leaves(class.id);
        if !below.is_empty() {
            compare(Check::UpperLimitBelowRealTime, class.id, below, ul);
        }
        compare(
            Check::UpperLimitAboveLink,
            ClassId::ROOT,
            vec![(class.id, ul)],
            link,
        );
    }
    let delays = tree
        .leaves()
        .iter()
        .filter_map(|&l| {
            let rt = curves[l.index()].rt?;
            Some(delay_bound(tree, l, &rt, options, t_max))
        })
        .collect();
    LinkAdmission {
        link_rate: rate,
        max_packet,
        t_max,
        refused,
        violations,
        delays,
    }
}

/// The delay bound of leaf `l` with `rt` curve `rt`.
fn delay_bound(
    tree: &ClassTree,
    l: ClassId,
    rt: &ServiceCurve,
    options: &Options,
    t_max: Duration,
) -> DelayBound {
    let curve = RuntimeCurve::new(rt, 0, 0);
    let declared = options
        .declared_bursts
        .iter()
        .find(|(c, _)| *c == l)
        .map(|(_, b)| *b);
    let (burst, burst_from) = match declared {
        Some(b) => (b, BurstSource::Declared),
        None if rt.is_concave() => (Bytes(curve.dy), BurstSource::FirstSegment),
        None => (tree.get(l).max_packet(), BurstSource::MaxPacket),
    };
    let curve_delay = match curve.y2x(burst.0) {
        u64::MAX => None,
        ns => Some(Duration(ns)),
    };
    DelayBound {
        class: l,
        burst,
        burst_from,
        curve_delay,
        bound: curve_delay.map(|d| Duration(d.0.saturating_add(t_max.0))),
    }
}
