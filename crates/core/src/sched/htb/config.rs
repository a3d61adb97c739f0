//! HTB's parameters: the qdisc-wide ones ([`HtbParams`]) and each class's, with tc's and
//! Linux's defaults resolved once at construction ([`ClassParams`]).

use std::num::NonZeroU32;

use crate::hierarchy::{ClassId, ClassTree, ConfigError};
use crate::sched::{BuildError, SchedulerKind, class_problem};
use crate::share::{remainder_rates, top_down, unfunded};
use crate::units::{Bytes, Rate};

/// Linux `TC_HTB_MAXDEPTH`: levels of classes, the top class (here the link) included.
pub const MAX_DEPTH: usize = 8;

/// Linux `TC_HTB_NUMPRIO`: priorities 0 (served first) to 7.
pub const PRIORITIES: usize = 8;

/// Smallest quantum Linux derives from `rate / r2q` (an explicit quantum is not clamped).
pub const MIN_QUANTUM: Bytes = Bytes(1000);

/// Largest quantum Linux derives from `rate / r2q` (an explicit quantum is not clamped).
pub const MAX_QUANTUM: Bytes = Bytes(200_000);

/// Qdisc-wide parameters: tc's `r2q`, and the `HZ` and `mtu` tc uses for default bursts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HtbParams {
    /// `r2q`: a leaf without an explicit quantum gets `rate / r2q` bytes (rate in bytes
    /// per second), clamped between [`MIN_QUANTUM`] and [`MAX_QUANTUM`]. Default 10
    /// (tc's).
    pub r2q: NonZeroU32,
    /// The clock rate tc divides by for default bursts:
    /// `burst = rate / hz + mtu` (rate in bytes per second), likewise `cburst` from
    /// `ceil`. Default 1000: one millisecond of the rate. tc reads it from
    /// `/proc/net/psched`, which reports 10⁹ on kernels with high-resolution timers;
    /// with that value default bursts shrink to about `mtu`.
    pub hz: NonZeroU32,
    /// tc's `mtu`, added to default bursts. Default 1600 B.
    pub mtu: Bytes,
}

impl Default for HtbParams {
    fn default() -> Self {
        HtbParams {
            r2q: NonZeroU32::new(10).expect("10 is not zero"),
            hz: NonZeroU32::new(1000).expect("1000 is not zero"),
            mtu: Bytes(1600),
        }
    }
}

/// The parameters HTB uses for one class, defaults resolved (see the
/// [module docs](super) for each default). For the link: `rate` = `ceil` = the link
/// rate, level 7; its buckets are never drawn on, as the link is never out of tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClassParams {
    /// Assured rate: the assured bucket fills at this rate.
    pub rate: Rate,
    /// Ceiling rate: the ceiling bucket fills at this rate.
    pub ceil: Rate,
    /// Depth of the assured bucket, in bytes at `rate`.
    pub burst: Bytes,
    /// Depth of the ceiling bucket, in bytes at `ceil`.
    pub cburst: Bytes,
    /// DRR quantum in bytes; `None` for interior classes and the link (Linux gives only
    /// leaves a quantum).
    pub quantum: Option<Bytes>,
    /// Priority 0 (served first) to 7; only leaves' priorities matter.
    pub priority: u8,
    /// Linux level: 0 for leaves, `MAX_DEPTH − 1 − depth` for the link and interior
    /// classes (the link is 7, its interior children 6, ...).
    pub level: u8,
}

/// A quantum derived from `rate / r2q` that Linux (and this implementation) clamped,
/// with the warning tc prints ("quantum of class X is small/big. Consider r2q change.").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QuantumClamp {
    /// The leaf.
    pub class: ClassId,
    /// `rate / r2q`, bytes.
    pub computed: Bytes,
    /// The quantum used: [`MIN_QUANTUM`] or [`MAX_QUANTUM`].
    pub used: Bytes,
}

/// The burst tc gives a bucket filling at `rate` when none is given:
/// `rate / hz + mtu`, the rate in whole bytes per second (tc's `rate / get_hz() + mtu`
/// in `q_htb.c`).
pub fn default_burst(rate: Rate, params: &HtbParams) -> Bytes {
    Bytes(rate.bps() / 8 / u64::from(params.hz.get())) + params.mtu
}

/// The quantum Linux gives a leaf of `rate` without an explicit one: `rate / r2q`
/// (rate in whole bytes per second), clamped to [`MIN_QUANTUM`, `MAX_QUANTUM`]. Returns
/// the quantum used and `rate / r2q` as computed (they differ when clamped).
pub fn derived_quantum(rate: Rate, params: &HtbParams) -> (Bytes, Bytes) {
    let computed = Bytes(rate.bps() / 8 / u64::from(params.r2q.get()));
    (computed.clamp(MIN_QUANTUM, MAX_QUANTUM), computed)
}

/// Resolves every class's parameters (by class index), with the quanta that were
/// clamped; on failure, every problem found.
pub fn resolve(
    tree: &ClassTree,
    params: &HtbParams,
) -> Result<(Vec<ClassParams>, Vec<QuantumClamp>), BuildError> {
    let mut problems = Vec::new();
    for c in tree.classes() {
        if c.depth as usize >= MAX_DEPTH {
            problems.push(class_problem(
                tree,
                c.id,
                "parent",
                format!(
                    "the class is {} levels below the link, but HTB allows at most \
                     {MAX_DEPTH} levels of classes, the link included (Linux \
                     TC_HTB_MAXDEPTH)",
                    c.depth
                ),
                "attach it higher up or flatten the hierarchy".to_owned(),
            ));
        }
    }
    let failed = |problems| BuildError {
        kind: SchedulerKind::Htb,
        problems,
    };
    if !problems.is_empty() {
        return Err(failed(problems));
    }
    let rates = rates(tree, &mut problems);
    let ceils = ceils(tree, &rates);
    if !problems.is_empty() {
        return Err(failed(problems));
    }
    let mut clamps = Vec::new();
    let resolved = tree
        .classes()
        .iter()
        .map(|c| {
            let (rate, ceil) = (rates[c.id.index()], ceils[c.id.index()]);
            let quantum = c.is_leaf().then(|| {
                c.spec.quantum.unwrap_or_else(|| {
                    let (used, computed) = derived_quantum(rate, params);
                    if used != computed {
                        clamps.push(QuantumClamp {
                            class: c.id,
                            computed,
                            used,
                        });
                    }
                    used
                })
            });
            let level = if c.is_leaf() {
                0
            } else {
                (MAX_DEPTH - 1 - c.depth as usize) as u8
            };
            ClassParams {
                rate,
                ceil,
                burst: c.spec.burst.unwrap_or_else(|| default_burst(rate, params)),
                cburst: c.spec.cburst.unwrap_or_else(|| default_burst(ceil, params)),
                quantum,
                priority: if c.is_leaf() {
                    c.spec.priority.unwrap_or(0)
                } else {
                    0
                },
                level,
            }
        })
        .collect();
    Ok((resolved, clamps))
}

/// Assured rates: the link's rate for the link; the given rate; or, for a class without
/// one, a share of what its parent's rate leaves after its siblings' given rates, in
/// proportion to weight among the siblings without a rate
/// ([`crate::share::remainder_rates`]), at most its ceil, if given. A class that gets
/// none is a problem (only the cause: not the classes below it).
fn rates(tree: &ClassTree, problems: &mut Vec<ConfigError>) -> Vec<Rate> {
    let rate = remainder_rates(tree, |c, share| {
        c.spec.ceil.map_or(share, |ceil| share.min(ceil))
    });
    for c in unfunded(tree, &rate) {
        let parent = tree.get(c).parent.unwrap_or(ClassId::ROOT);
        problems.push(class_problem(
            tree,
            c,
            "rate",
            format!(
                "the class has no rate, and the rates of its siblings leave none of `{}`'s \
                 rate ({}) for it",
                tree.get(parent).name(),
                rate[parent.index()]
            ),
            "give it a rate".to_owned(),
        ));
    }
    rate
}

/// Ceiling rates: the given ceil; else the rate if one was given (tc's default); else,
/// for a class given neither, its parent's ceil (the link's rate for the link).
fn ceils(tree: &ClassTree, rates: &[Rate]) -> Vec<Rate> {
    let mut ceil = vec![Rate::ZERO; tree.len()];
    ceil[0] = tree.link_rate();
    for id in top_down(tree).into_iter().skip(1) {
        let c = tree.get(id);
        let parent = c.parent.expect("only the link has no parent");
        ceil[id.index()] = match (c.spec.ceil, c.spec.rate) {
            (Some(ceil), _) => ceil,
            (None, Some(_)) => rates[id.index()],
            (None, None) => ceil[parent.index()].max(rates[id.index()]),
        };
    }
    ceil
}
