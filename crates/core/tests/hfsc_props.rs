//! The H-FSC paper's theorems as property tests (issue 4, item 6), on random admissible
//! hierarchies and random arrivals driven through an `EgressPort` at line rate:
//!
//! * **Thm. 1 + 2**: every packet of a leaf with an `rt` curve leaves (last bit) no
//!   later than its deadline plus `t_max = L_max / C`, and every leaf receives its
//!   curve in the sense of Eq. 1 within `t_max`, checked on the departure log alone.
//! * **Thm. 3**: simultaneously active siblings keep their virtual times within a bound
//!   derived below, in two settings.
//! * With linear curves and no `ul`, long-run rates equal the hierarchical max-min fair
//!   allocation (`linkshare_analysis::maxmin::hmm_fair`).
//!
//! Every property is checked under both restart rules of a re-activated class
//! (`VtRestart`: the paper's midpoint, and `min`) on the same cases.
//!
//! Case counts: 1024 / 1024 / 512 / 256 by default (the file runs in about 6 s in a
//! debug build); set `LINKSHARE_PROPTEST_CASES` to run that many of each instead.

mod hfsc_common;

use hfsc_common::{Arrival, Greedy, Log, run_with};
use linkshare_analysis::maxmin::hmm_fair;
use linkshare_core::curve::ServiceCurve;
use linkshare_core::hierarchy::{ClassId, ClassSpec, ClassTree, LinkSpec};
use linkshare_core::sched::hfsc::{Hfsc, HfscParams, VtRestart};
use linkshare_core::testing::TestPacket;
use linkshare_core::units::{Bytes, Duration, Instant, Rate};
use proptest::prelude::*;
use proptest::sample::Index;

/// Cases per property: `LINKSHARE_PROPTEST_CASES` if set, else `default`.
fn cases(default: u32) -> ProptestConfig {
    let n = std::env::var("LINKSHARE_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default);
    ProptestConfig::with_cases(n)
}

const MS: u64 = 1_000_000;

/// `t_max = L_max / C`: the transmission time of the longest packet any class may send.
fn t_max(tree: &ClassTree) -> u64 {
    let longest = tree.classes()[1..]
        .iter()
        .map(|c| c.max_packet())
        .max()
        .unwrap_or(Bytes::ZERO);
    tree.link_rate().tx_time(longest).0
}

/// Bytes a curve guarantees in `t` ns (`t <= 0`: none), computed from its definition,
/// independently of `linkshare_core::curve`: `floor((m1 min(t, d) + m2 (t - d)^+) / 8e9)`.
fn curve_bytes(c: &ServiceCurve, t: i128) -> u64 {
    if t <= 0 {
        return 0;
    }
    let t = t as u128;
    let d = u128::from(c.d.0);
    let bits_ns = u128::from(c.m1.0) * t.min(d) + u128::from(c.m2.0) * t.saturating_sub(d);
    (bits_ns / 8_000_000_000) as u64
}

/// Whether `sum_i S_i(t) <= C t` for all `t >= 0`, exactly: both sides are piecewise
/// linear with breakpoints at the curves' `d`, so it suffices to compare them at every
/// breakpoint (in bit·ns, no rounding) and the slopes after the last one.
fn admissible(curves: &[ServiceCurve], link: Rate) -> bool {
    let sum_at = |t: u128| -> u128 {
        curves
            .iter()
            .map(|c| {
                let d = u128::from(c.d.0);
                u128::from(c.m1.0) * t.min(d) + u128::from(c.m2.0) * t.saturating_sub(d)
            })
            .sum()
    };
    let tail: u128 = curves.iter().map(|c| u128::from(c.m2.0)).sum();
    tail <= u128::from(link.0)
        && curves
            .iter()
            .all(|c| sum_at(u128::from(c.d.0)) <= u128::from(link.0) * u128::from(c.d.0))
}

/// A random two-piece curve relative to the link rate: slopes in per mille of `C`.
#[derive(Clone, Copy, Debug)]
struct CurveGen {
    /// 0 linear, 1 concave, 2 convex with a flat first segment, 3 convex.
    shape: u8,
    a: u64,
    b: u64,
    d_us: u64,
}

fn curve_gen() -> impl Strategy<Value = CurveGen> {
    (0u8..4, 16u64..=1000, 16u64..=1000, 100u64..40_000).prop_map(|(shape, a, b, d_us)| CurveGen {
        shape,
        a,
        b,
        d_us,
    })
}

impl CurveGen {
    /// As [`CurveGen::curve`], but convex curves get a flat first segment: H-FSC refuses
    /// `rt` curves with `0 < m1 < m2`.
    fn rt_curve(self, link: Rate) -> ServiceCurve {
        let shape = if self.shape == 3 { 2 } else { self.shape };
        CurveGen { shape, ..self }.curve(link)
    }

    fn curve(self, link: Rate) -> ServiceCurve {
        let slope = |pm: u64| Rate(link.0 / 1000 * pm);
        let (lo, hi) = (slope(self.a.min(self.b)), slope(self.a.max(self.b)));
        let d = Duration::from_micros(self.d_us);
        match self.shape {
            0 => ServiceCurve::linear(hi),
            1 if hi > lo => ServiceCurve { m1: hi, d, m2: lo },
            2 => ServiceCurve {
                m1: Rate::ZERO,
                d,
                m2: hi,
            },
            3 if hi > lo => ServiceCurve { m1: lo, d, m2: hi },
            _ => ServiceCurve::linear(hi),
        }
    }
}

/// Random parameters of one class.
#[derive(Clone, Debug)]
struct ClassGen {
    /// Parent among the earlier classes of depth < 3, or the link.
    parent: Index,
    /// Leaves: 0 rt only, 1 ls only, 2 both.
    kind: u8,
    rt: CurveGen,
    ls: CurveGen,
    /// An upper limit, as a curve.
    ul: Option<CurveGen>,
    max_packet: u32,
}

fn class_gen() -> impl Strategy<Value = ClassGen> {
    (
        any::<Index>(),
        0u8..3,
        curve_gen(),
        curve_gen(),
        prop::option::weighted(0.25, curve_gen()),
        64u32..=1500,
    )
        .prop_map(|(parent, kind, rt, ls, ul, max_packet)| ClassGen {
            parent,
            kind,
            rt,
            ls,
            ul,
            max_packet,
        })
}

/// The parent of each class (`None`: the link), at most three levels deep.
fn shape(gens: &[ClassGen]) -> Vec<Option<usize>> {
    let mut parent = vec![None; gens.len()];
    let mut depth = vec![1u32; gens.len()];
    for i in 1..gens.len() {
        let pick = gens[i].parent.index(i + 1);
        if pick < i && depth[pick] < 3 {
            parent[i] = Some(pick);
            depth[i] = depth[pick] + 1;
        }
    }
    parent
}

fn build(link: Rate, specs: Vec<ClassSpec>) -> ClassTree {
    let link = LinkSpec {
        name: "link".into(),
        rate: link,
        origin: None,
    };
    ClassTree::build(link, specs).expect("generated trees are valid")
}

/// Random traffic of one leaf: bursts of packets at random instants, and possibly a
/// greedy phase.
#[derive(Clone, Debug)]
struct TrafficGen {
    /// (gap before the burst in us, packets, length seed).
    bursts: Vec<(u64, u32, u32)>,
    greedy: Option<(u64, u64)>,
}

fn traffic_gen() -> impl Strategy<Value = TrafficGen> {
    (
        prop::collection::vec((0u64..40_000, 1u32..12, any::<u32>()), 0..12),
        prop::option::weighted(0.3, (0u64..150, 1u64..150)),
    )
        .prop_map(|(bursts, greedy)| TrafficGen { bursts, greedy })
}

/// The arrivals and greedy phases of `traffic[k]` for leaf `leaves[k]`, lengths up to
/// the leaf's `max_packet` and at least 40 B.
fn traffic(
    tree: &ClassTree,
    leaves: &[ClassId],
    gens: &[TrafficGen],
) -> (Vec<Arrival>, Vec<Greedy>) {
    let mut arrivals = Vec::new();
    let mut greedy = Vec::new();
    for (&leaf, g) in leaves.iter().zip(gens) {
        let l_max = tree.get(leaf).max_packet().0 as u32;
        let len = |seed: u32| 40.min(l_max) + seed % (l_max + 1 - 40.min(l_max));
        let mut at = 0;
        for &(gap, count, seed) in &g.bursts {
            at += gap * 1000;
            for k in 0..count {
                arrivals.push(Arrival {
                    at: Instant(at),
                    class: leaf,
                    len: len(seed.wrapping_add(k.wrapping_mul(2_654_435_761))),
                });
            }
        }
        if let Some((from, span)) = g.greedy {
            greedy.push(Greedy {
                class: leaf,
                from: Instant(from * MS),
                until: Instant((from + span) * MS),
                len: len(g.bursts.len() as u32 * 7919),
            });
        }
    }
    arrivals.sort_by_key(|a| a.at);
    (arrivals, greedy)
}

/// Link rates of the generated cases.
fn link_rate() -> impl Strategy<Value = Rate> {
    prop_oneof![
        Just(Rate::from_mbit(2)),
        Just(Rate::from_mbit(10)),
        Just(Rate::from_mbit(45))
    ]
}

/// A random hierarchy whose leaves have rt only, ls only or both (so that Thms. 1–2 are
/// checked beside link-sharing and upper limits), with the rt curves halved until the
/// set is admissible.
fn rt_tree(link: Rate, gens: &[ClassGen]) -> ClassTree {
    let parent = shape(gens);
    let is_leaf = |i: usize| !parent.contains(&Some(i));
    let mut rt: Vec<Option<ServiceCurve>> = (0..gens.len())
        .map(|i| (is_leaf(i) && gens[i].kind != 1).then(|| gens[i].rt.rt_curve(link)))
        .collect();
    while !admissible(&rt.iter().flatten().copied().collect::<Vec<_>>(), link) {
        for c in rt.iter_mut().flatten() {
            c.m1 = Rate(c.m1.0 / 2);
            c.m2 = Rate(c.m2.0 / 2);
        }
    }
    let specs = (0..gens.len())
        .map(|i| {
            let g = &gens[i];
            let mut s = ClassSpec::new(
                &format!("c{i}"),
                parent[i].map(|p| format!("c{p}")).as_deref(),
            );
            s.rt = rt[i];
            s.ls = (!is_leaf(i) || g.kind != 0).then(|| g.ls.curve(link));
            s.ul = g.ul.map(|u| u.curve(link));
            s.max_packet = Some(Bytes(u64::from(g.max_packet)));
            s
        })
        .collect();
    build(link, specs)
}

/// Thm. 2 on the log: every packet of a leaf with an `rt` curve is done by its deadline
/// plus `t_max`. Thm. 1 (Eq. 1 within `t_max`): at every departure `t2` of such a leaf
/// there is an instant `a <= t2` at which it became backlogged with
/// `S(t2 - t_max - a) <= ` the bytes it sent in `(a, t2]` (packets started at or after
/// `a` and done by `t2`). The deadline curve is a minimum over all past activations
/// (Eq. 7), so the guarantee is for *some* backlog start, as Eq. 1 states, not
/// necessarily the latest.
fn check_thm_1_2(tree: &ClassTree, log: &Log) -> Result<(), String> {
    let t_max = t_max(tree);
    for &leaf in tree.leaves() {
        let Some(sc) = tree.get(leaf).spec.rt else {
            continue;
        };
        let deps: Vec<_> = log.of(leaf).collect();
        let mut sent_before = vec![0u64; deps.len() + 1];
        for (k, d) in deps.iter().enumerate() {
            sent_before[k + 1] = sent_before[k] + u64::from(d.len);
        }
        for (k, d) in deps.iter().enumerate() {
            let deadline = d.deadline.ok_or("an rt packet without a deadline")?;
            if d.done.0 > deadline.0 + t_max {
                return Err(format!(
                    "Thm 2: leaf {leaf:?} packet done at {} ns, deadline {} + t_max {t_max}",
                    d.done.0, deadline.0
                ));
            }
            let t2 = d.done.0;
            let met = log.activations[leaf.index()]
                .iter()
                .filter(|a| a.0 <= d.start.0)
                .any(|a| {
                    let first = deps.partition_point(|x| x.start < *a);
                    let sent = sent_before[k + 1] - sent_before[first];
                    curve_bytes(&sc, i128::from(t2) - i128::from(t_max) - i128::from(a.0)) <= sent
                });
            if !met {
                return Err(format!(
                    "Thm 1: leaf {leaf:?} at {t2} ns is below its curve {sc:?} for every \
                     backlog start {:?}",
                    log.activations[leaf.index()]
                ));
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(cases(1024))]

    /// Thms. 1 and 2 on random admissible hierarchies with random traffic.
    #[test]
    fn deadlines_and_service_curves_are_met(
        link in link_rate(),
        gens in prop::collection::vec(class_gen(), 1..8),
        traffic_gens in prop::collection::vec(traffic_gen(), 8),
    ) {
        let tree = rt_tree(link, &gens);
        let leaves = tree.leaves().to_vec();
        let (arrivals, greedy) = traffic(&tree, &leaves, &traffic_gens);
        for restart in VtRestart::ALL {
            let log = run_with(HfscParams { restart }, &tree, &arrivals, &greedy, Instant(400 * MS), |_, _| {});
            check_thm_1_2(&tree, &log).map_err(|e| TestCaseError::fail(format!("restart {restart}: {e}")))?;
        }
    }
}

/// The largest increase of a class's virtual time (ns) when it is served `l` bytes,
/// whatever its virtual curve's anchor: `l / m` on a segment of slope `m`, plus the
/// whole flat first segment of a convex curve with `m1 = 0`, plus 1 ns for rounding up.
fn vt_step(c: &ServiceCurve, l: u64) -> u64 {
    let per = |m: Rate| (u128::from(l) * 8_000_000_000).div_ceil(u128::from(m.0)) as u64;
    if c.m1.0 == 0 {
        c.d.0 + per(c.m2) + 1
    } else {
        per(c.m1.min(c.m2)) + 1
    }
}

/// For every class with children, the largest gap between the virtual times of its
/// active children must be at most `bound(parent)`.
fn check_siblings(
    tree: &ClassTree,
    h: &Hfsc<TestPacket>,
    bound: impl Fn(ClassId) -> u64,
) -> Result<(), String> {
    for p in tree.classes().iter().filter(|c| !c.children.is_empty()) {
        let vts: Vec<u64> = p
            .children
            .iter()
            .filter_map(|&k| h.virtual_time(k))
            .collect();
        if let (Some(lo), Some(hi)) = (vts.iter().min(), vts.iter().max())
            && hi - lo > bound(p.id)
        {
            return Err(format!(
                "children of {}: virtual times {vts:?} spread {} > {}",
                p.name(),
                hi - lo,
                bound(p.id)
            ));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(cases(1024))]

    /// Thm. 3, link-sharing alone (no rt, no ul), any curve shapes, random traffic.
    ///
    /// Bound: within an active period of a parent, let `v_min`, `v_max` be the smallest
    /// and largest virtual times of its active children. Every service below the parent
    /// goes through the child with the smallest virtual time (link-sharing picks it),
    /// which then moves up by at most `step_k` = `vt_step(ls_k, L_max)`. A newcomer
    /// joins at `(v_min + v_max) / 2` (at `v_min` under the `min` restart rule: the
    /// same bound), or keeps its old virtual time if larger, and that
    /// was at most the `v_min` of its departure + `delta` (below); virtual times only
    /// grow, so `v_min` never decreases within the period. By induction
    /// `v_max - v_min <= delta = max_k step_k` over the parent's children at all times.
    #[test]
    fn link_sharing_siblings_stay_within_one_step(
        link in link_rate(),
        gens in prop::collection::vec(class_gen(), 2..8),
        traffic_gens in prop::collection::vec(traffic_gen(), 8),
    ) {
        let parent = shape(&gens);
        let specs = (0..gens.len())
            .map(|i| {
                let mut s = ClassSpec::new(&format!("c{i}"), parent[i].map(|p| format!("c{p}")).as_deref());
                s.ls = Some(gens[i].ls.curve(link));
                s.max_packet = Some(Bytes(u64::from(gens[i].max_packet)));
                s
            })
            .collect();
        let tree = build(link, specs);
        let l_max = tree.classes()[1..].iter().map(|c| c.max_packet().0).max().unwrap();
        let delta: Vec<u64> = tree
            .classes()
            .iter()
            .map(|p| {
                p.children
                    .iter()
                    .map(|&k| vt_step(&tree.get(k).spec.ls.unwrap(), l_max))
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let leaves = tree.leaves().to_vec();
        let (arrivals, greedy) = traffic(&tree, &leaves, &traffic_gens);
        for restart in VtRestart::ALL {
            let mut failure = None;
            run_with(HfscParams { restart }, &tree, &arrivals, &greedy, Instant(400 * MS), |_, h| {
                if failure.is_none() {
                    failure = check_siblings(&tree, h, |p| delta[p.index()]).err();
                }
            });
            prop_assert!(failure.is_none(), "restart {restart}: {}", failure.unwrap());
        }
    }
}

proptest! {
    #![proptest_config(cases(512))]

    /// Thm. 3 with the real-time criterion, in the paper's model: every leaf has one
    /// linear curve `r_i` used as both `rt` and `ls`, the set is admissible, interior
    /// `ls` curves are linear, all leaves are greedy from t = 0 (so every virtual time
    /// starts at 0 and every leaf has one backlogged period).
    ///
    /// Bound, for sibling leaves `i`, `j` at time `t`, with `L_k = max_packet`,
    /// `Λ_k = L_k / r_k`, `t_max` as in Thm. 2 (virtual times of linear curves are
    /// `w_k / r_k`, ns):
    ///
    /// * real-time service is bounded above: the criterion serves `k` only when
    ///   eligible, `c_k <= D_k(now) = r_k now`, so `c_k(t) <= r_k t + L_k`; and below:
    ///   a backlogged head's deadline `D_k^{-1}(c_k + l)` is met within `t_max` (Thm. 2),
    ///   so `c_k(τ) >= r_k (τ - t_max) - L_k`. Over `(τ, t]`:
    ///   `r_k (t - τ - t_max) - 2 L_k <= c_k(t) - c_k(τ) <= r_k (t - τ + t_max) + 2 L_k`.
    /// * if link-sharing last served `i` at `τ`, `i` had the smallest virtual time among
    ///   its siblings then: `v_i(τ+) <= v_j(τ) + Λ_i`; since then `i` got only real-time
    ///   service and `j` at least its real-time service, so
    ///   `v_i(t) <= v_j(τ) + Λ_i + (t - τ) + t_max + 2 Λ_i` and
    ///   `v_j(t) >= v_j(τ) + (t - τ) - t_max - 2 Λ_j`;
    /// * if link-sharing never served `i`, take `τ = 0` with `v_i(0) = v_j(0) = 0`.
    ///
    /// Hence `v_i - v_j <= 2 t_max + 3 Λ_i + 2 Λ_j` (plus a few ns of rounding).
    #[test]
    fn real_time_siblings_stay_within_the_derived_bound(
        link in link_rate(),
        gens in prop::collection::vec(class_gen(), 2..8),
        lens in prop::collection::vec(40u32..=1500, 8),
    ) {
        let parent = shape(&gens);
        let n = gens.len();
        let is_leaf = |i: usize| !parent.contains(&Some(i));
        let mut rate: Vec<Rate> = (0..n).map(|i| Rate(link.0 / 1000 * gens[i].rt.a)).collect();
        // Halve the leaves' rates until they fit the link.
        while (0..n).filter(|&i| is_leaf(i)).map(|i| rate[i].0).sum::<u64>() > link.0 {
            for r in &mut rate {
                r.0 /= 2;
            }
        }
        let specs = (0..n)
            .map(|i| {
                let mut s = ClassSpec::new(&format!("c{i}"), parent[i].map(|p| format!("c{p}")).as_deref());
                s.ls = Some(ServiceCurve::linear(rate[i]));
                s.rt = is_leaf(i).then(|| ServiceCurve::linear(rate[i]));
                s.max_packet = Some(Bytes(u64::from(gens[i].max_packet)));
                s
            })
            .collect();
        let tree = build(link, specs);
        let t_max = t_max(&tree);
        let leaves = tree.leaves().to_vec();
        let greedy: Vec<Greedy> = leaves
            .iter()
            .enumerate()
            .map(|(k, &leaf)| {
                let l_max = tree.get(leaf).max_packet().0 as u32;
                Greedy::from(leaf, Instant::ZERO, lens[k].min(l_max))
            })
            .collect();
        let lambda = |k: ClassId| {
            let c = tree.get(k);
            (u128::from(c.max_packet().0) * 8_000_000_000).div_ceil(u128::from(rate[k.index() - 1].0)) as u64
        };
        for restart in VtRestart::ALL {
        let mut failure = None;
        run_with(HfscParams { restart }, &tree, &[], &greedy, Instant(300 * MS), |_, h| {
            for p in tree.classes().iter().filter(|c| !c.children.is_empty()) {
                for &i in p.children.iter().filter(|&&k| tree.is_leaf(k)) {
                    for &j in p.children.iter().filter(|&&k| tree.is_leaf(k) && k != i) {
                        let (Some(vi), Some(vj)) = (h.virtual_time(i), h.virtual_time(j)) else {
                            continue;
                        };
                        let bound = 2 * t_max + 3 * lambda(i) + 2 * lambda(j) + 4;
                        if vi > vj + bound && failure.is_none() {
                            failure = Some(format!("v({i:?}) = {vi} > v({j:?}) = {vj} + {bound}"));
                        }
                    }
                }
            }
        });
        prop_assert!(failure.is_none(), "restart {restart}: {}", failure.unwrap());
        }
    }
}

/// Random parameters of one class for the long-run rate comparison.
#[derive(Clone, Debug)]
struct FairGen {
    parent: Index,
    weight: u32,
    /// Leaves: `None` greedy, else a CBR source at this per mille of the link rate.
    cbr: Option<u64>,
    len: u32,
    /// Whether the leaf also has `rt = ls`.
    rt: bool,
}

fn fair_gen() -> impl Strategy<Value = FairGen> {
    (
        any::<Index>(),
        1u32..10,
        prop::option::of(10u64..600),
        200u32..=1500,
        any::<bool>(),
    )
        .prop_map(|(parent, weight, cbr, len, rt)| FairGen {
            parent,
            weight,
            cbr,
            len,
            rt,
        })
}

proptest! {
    #![proptest_config(cases(256))]

    /// With linear curves and no `ul`, H-FSC's long-run rates equal the HMM-fair
    /// allocation. Each class's `ls` is its greedy HMM share, computed top-down from its
    /// weight (`C · w / sum of sibling weights`, then the same within its parent), so the
    /// curves' ratios are the weights' and children fit their parent; some leaves also
    /// have `rt = ls` (admissible, and at most their fair share). Leaves are greedy or
    /// CBR. Rates are measured over [0.5 s, 2 s) and must be within 1.5 % of the link
    /// rate of `hmm_fair(tree, requests)`.
    #[test]
    fn long_run_rates_are_hmm_fair(
        link in prop_oneof![Just(Rate::from_mbit(2)), Just(Rate::from_mbit(10))],
        gens in prop::collection::vec(fair_gen(), 2..8),
    ) {
        let n = gens.len();
        let parent: Vec<Option<usize>> = {
            let mut parent = vec![None; n];
            let mut depth = vec![1u32; n];
            for i in 1..n {
                let pick = gens[i].parent.index(i + 1);
                if pick < i && depth[pick] < 3 {
                    parent[i] = Some(pick);
                    depth[i] = depth[pick] + 1;
                }
            }
            parent
        };
        let is_leaf = |i: usize| !parent.contains(&Some(i));
        let mut rate = vec![0u64; n];
        for i in 0..n {
            let (base, siblings) = match parent[i] {
                None => (link.0, (0..n).filter(|&k| parent[k].is_none()).collect::<Vec<_>>()),
                Some(p) => (rate[p], (0..n).filter(|&k| parent[k] == Some(p)).collect()),
            };
            let weights: u64 = siblings.iter().map(|&k| u64::from(gens[k].weight)).sum();
            rate[i] = (base * u64::from(gens[i].weight) / weights).max(1);
        }
        let specs = (0..n)
            .map(|i| {
                let mut s = ClassSpec::new(&format!("c{i}"), parent[i].map(|p| format!("c{p}")).as_deref());
                s.weight = Some(gens[i].weight);
                s.ls = Some(ServiceCurve::linear(Rate(rate[i])));
                s.rt = (is_leaf(i) && gens[i].rt).then(|| ServiceCurve::linear(Rate(rate[i])));
                s
            })
            .collect();
        let tree = build(link, specs);
        let end = 2000 * MS;
        let mut arrivals = Vec::new();
        let mut greedy = Vec::new();
        let mut request = vec![0.0; tree.len()];
        for i in (0..n).filter(|&i| is_leaf(i)) {
            let id = tree.id_of(&format!("c{i}")).unwrap();
            let g = &gens[i];
            match g.cbr {
                None => {
                    greedy.push(Greedy::from(id, Instant::ZERO, g.len));
                    request[id.index()] = f64::INFINITY;
                }
                Some(pm) => {
                    let cbr = Rate(link.0 / 1000 * pm);
                    let gap = cbr.tx_time(Bytes(u64::from(g.len))).0;
                    let mut at = gap / 3;
                    while at < end {
                        arrivals.push(Arrival { at: Instant(at), class: id, len: g.len });
                        at += gap;
                    }
                    request[id.index()] = (u128::from(g.len) * 8 * 1_000_000_000) as f64 / gap as f64;
                }
            }
        }
        arrivals.sort_by_key(|a| a.at);
        let want = hmm_fair(&tree, &request);
        let (from, to) = (Instant(500 * MS), Instant(end));
        for restart in VtRestart::ALL {
            let log = run_with(HfscParams { restart }, &tree, &arrivals, &greedy, Instant(end), |_, _| {});
            for &leaf in tree.leaves() {
                let got = log.bytes_started(leaf, from, to) as f64 * 8.0 / 1.5;
                let expected = want.rate[leaf.index()];
                prop_assert!(
                    (got - expected).abs() <= 0.015 * link.0 as f64,
                    "restart {restart}: {}: {got:.0} bit/s, HMM-fair {expected:.0} bit/s (requests {request:?}, rates {:?})",
                    tree.get(leaf).name(), want.rate
                );
            }
        }
    }
}
