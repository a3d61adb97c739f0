//! CBQ's per-class parameters, derived once from a validated [`ClassTree`]. The rules
//! (and how they relate to `tc ... cbq` and the Linux kernel) are listed in the
//! [parent module's docs](super#parameters).

use super::estimator::EWMA_LOG;
use crate::hierarchy::{Class, ClassTree, MAX_PRIORITY};
use crate::units::{Bytes, Rate};

/// Number of priority bands (`0..=MAX_PRIORITY`).
pub(super) const BANDS: usize = MAX_PRIORITY as usize + 1;

/// Fraction bits of the fixed-point gain in [`burst_gain`].
const FRAC: u32 = 32;

/// Largest value of `g^-n` kept by [`burst_gain`], as a power of two (beyond it the burst
/// term saturates: a burst of ~870 average packets at the default `EWMA_LOG`).
const GAIN_CAP_LOG: u32 = 40;

/// Largest scaled `maxidle` (ns / W): about 4 days of true idle time; keeps every later
/// sum far from `i64` overflow.
const MAXIDLE_CAP: i64 = 1 << 53;

/// The derived parameters of one class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Params {
    /// Allotted rate (the root: the link rate). At least 1 bit/s.
    pub rate: Rate,
    /// Leaves 0; any other class one more than its highest child.
    pub level: u32,
    /// Whether the class may not borrow from its parent.
    pub bounded: bool,
    /// Cap on the scaled average idle time, ns / W.
    pub maxidle: i64,
    /// WRR quantum, bytes, at least 1 (meaningful for leaves).
    pub quantum: i64,
    /// Priority band `0..BANDS`.
    pub band: u8,
}

/// The parameters of every class of `tree`, indexed by [`crate::ClassId::index`].
pub(super) fn derive(tree: &ClassTree) -> Vec<Params> {
    let link = tree.link_rate();
    let rates = allotted_rates(tree);
    let levels = levels(tree);
    let quanta = quanta(tree, &rates);
    tree.classes()
        .iter()
        .enumerate()
        .map(|(i, c)| Params {
            rate: rates[i],
            level: levels[i],
            bounded: c.parent.is_some() && c.spec.ceil.is_some_and(|ceil| ceil <= rates[i]),
            maxidle: maxidle(link, rates[i], c.max_packet(), maxburst(c)),
            quantum: quanta[i],
            band: c.spec.priority.unwrap_or(0),
        })
        .collect()
}

/// Allotted rates: `rate` when given; otherwise what the parent's rate leaves after its
/// children's explicit rates, split among the children without one by weight.
fn allotted_rates(tree: &ClassTree) -> Vec<Rate> {
    let classes = tree.classes();
    let mut rates = vec![Rate::ZERO; classes.len()];
    rates[0] = tree.link_rate().max(Rate(1));
    for p in by_depth(tree) {
        let kids = &classes[p].children;
        let explicit: u64 = kids
            .iter()
            .filter_map(|k| classes[k.index()].spec.rate)
            .map(|r| r.0)
            .fold(0, u64::saturating_add);
        let free = u128::from(rates[p].0.saturating_sub(explicit));
        let weights: u128 = kids
            .iter()
            .map(|k| &classes[k.index()])
            .filter(|c| c.spec.rate.is_none())
            .map(|c| u128::from(c.weight()))
            .sum();
        for k in kids {
            let c = &classes[k.index()];
            let share = || free * u128::from(c.weight()) / weights;
            let rate = c.spec.rate.unwrap_or_else(|| Rate(share() as u64));
            rates[k.index()] = rate.max(Rate(1));
        }
    }
    rates
}

/// Class indices ordered by depth, root first.
fn by_depth(tree: &ClassTree) -> Vec<usize> {
    let mut order: Vec<usize> = (0..tree.len()).collect();
    order.sort_by_key(|&i| tree.classes()[i].depth);
    order
}

/// Linux's levels: a leaf is at level 0, any other class one above its highest child.
fn levels(tree: &ClassTree) -> Vec<u32> {
    let classes = tree.classes();
    let mut levels = vec![0; classes.len()];
    for &i in by_depth(tree).iter().rev() {
        levels[i] = classes[i]
            .children
            .iter()
            .map(|k| levels[k.index()] + 1)
            .max()
            .unwrap_or(0);
    }
    levels
}

/// `maxburst` in average packets: `burst / avpkt` rounded up; 0 without a burst.
fn maxburst(c: &Class) -> u64 {
    c.spec
        .burst
        .map_or(0, |b| b.0.div_ceil(c.max_packet().0.max(1)))
}

/// WRR quanta: `quantum` when given; otherwise, per band, proportional to the allotted
/// rate and normalised so that a leaf of average rate gets its `L_max` (Linux:
/// `weight * allot * n / sum of weights` with `weight = rate`, `allot = L_max`).
fn quanta(tree: &ClassTree, rates: &[Rate]) -> Vec<i64> {
    let classes = tree.classes();
    let band_of = |c: &Class| usize::from(c.spec.priority.unwrap_or(0));
    let mut count = [0u128; BANDS];
    let mut sum = [0u128; BANDS];
    for &leaf in tree.leaves() {
        let b = band_of(&classes[leaf.index()]);
        count[b] += 1;
        sum[b] += u128::from(rates[leaf.index()].0);
    }
    classes
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let b = band_of(c);
            let q = match c.spec.quantum {
                Some(q) => u128::from(q.0),
                None if sum[b] == 0 => u128::from(c.max_packet().0),
                None => {
                    let allot = u128::from(c.max_packet().0);
                    allot
                        .saturating_mul(u128::from(rates[i].0))
                        .saturating_mul(count[b])
                        / sum[b]
                }
            };
            i64::try_from(q).unwrap_or(i64::MAX).max(1)
        })
        .collect()
}

/// The scaled `maxidle` (ns / W) of a class of allotted rate `rate` on a link of rate
/// `link`, with average packet `avpkt`, allowing `maxburst` back-to-back packets from a
/// rested state (`tc_cbq_calc_maxidle`):
///
/// ```text
/// maxidle / W = max( avpkt/link,  (avpkt/rate - avpkt/link) * (g^-maxburst - 1) / W )
/// ```
///
/// with `g = 1 - W`: starting at `maxidle`, each packet sent at line rate adds
/// `idle = avpkt/link - avpkt/rate` to the average, which reaches 0 after exactly
/// `maxburst` packets. The first term (one average packet at line rate) is the floor,
/// and the whole value when `maxburst` is 0 or the class is allotted the full link.
pub(super) fn maxidle(link: Rate, rate: Rate, avpkt: Bytes, maxburst: u64) -> i64 {
    let xmt = link.tx_time(avpkt);
    let vxmt = rate.tx_time(avpkt).0.saturating_sub(xmt.0);
    let burst = u128::from(vxmt)
        .saturating_mul(burst_gain(maxburst))
        .saturating_mul(1 << EWMA_LOG)
        >> FRAC;
    let scaled = u128::from(xmt.0).max(burst);
    i64::try_from(scaled).unwrap_or(i64::MAX).min(MAXIDLE_CAP)
}

/// `g^-n - 1` with `g = 1 - 2^-EWMA_LOG`, in units of `2^-FRAC`, rounded down at each
/// of the `n` multiplications by `2^EWMA_LOG / (2^EWMA_LOG - 1)`, saturating at
/// `2^GAIN_CAP_LOG`.
fn burst_gain(n: u64) -> u128 {
    let one = 1u128 << FRAC;
    let cap = one << GAIN_CAP_LOG;
    let mut f = one;
    for _ in 0..n {
        f = f * (1 << EWMA_LOG) / ((1 << EWMA_LOG) - 1);
        if f >= cap {
            return cap - one;
        }
    }
    f - one
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hierarchy::{ClassSpec, LinkSpec};
    use crate::units::Duration;

    /// A duration in the scaled estimator unit (ns / W).
    fn scaled(d: Duration) -> i64 {
        (d.0 << EWMA_LOG) as i64
    }

    fn tree(specs: Vec<ClassSpec>) -> ClassTree {
        let link = LinkSpec {
            name: "link".into(),
            rate: Rate::from_mbit(10),
            origin: None,
        };
        ClassTree::build(link, specs).unwrap()
    }

    fn spec(name: &str, parent: Option<&str>, f: impl FnOnce(&mut ClassSpec)) -> ClassSpec {
        let mut s = ClassSpec::new(name, parent);
        f(&mut s);
        s
    }

    #[test]
    fn default_rates_split_what_explicit_rates_leave_by_weight() {
        let t = tree(vec![
            spec("a", None, |s| s.rate = Some(Rate::from_mbit(4))),
            spec("b", None, |s| s.weight = Some(1)),
            spec("c", None, |s| s.weight = Some(2)),
            spec("c1", Some("c"), |_| {}),
            spec("c2", Some("c"), |s| s.weight = Some(3)),
        ]);
        let p = derive(&t);
        let rate = |n: &str| p[t.id_of(n).unwrap().index()].rate;
        // 10 - 4 = 6 Mbit/s split 1:2 between b and c; c's 4 Mbit/s split 1:3.
        assert_eq!(rate("a"), Rate::from_mbit(4));
        assert_eq!(rate("b"), Rate::from_mbit(2));
        assert_eq!(rate("c"), Rate::from_mbit(4));
        assert_eq!(rate("c1"), Rate::from_mbit(1));
        assert_eq!(rate("c2"), Rate::from_mbit(3));
        assert_eq!(rate("link"), Rate::from_mbit(10));
    }

    #[test]
    fn levels_count_from_the_leaves() {
        let t = tree(vec![
            spec("a", None, |_| {}),
            spec("a1", Some("a"), |_| {}),
            spec("a11", Some("a1"), |_| {}),
            spec("b", None, |_| {}),
        ]);
        let p = derive(&t);
        let level = |n: &str| p[t.id_of(n).unwrap().index()].level;
        assert_eq!(
            [
                level("a11"),
                level("a1"),
                level("a"),
                level("b"),
                level("link")
            ],
            [0, 1, 2, 0, 3]
        );
    }

    #[test]
    fn bounded_means_ceil_at_most_rate() {
        let t = tree(vec![
            spec("a", None, |s| {
                s.rate = Some(Rate::from_mbit(3));
                s.ceil = Some(Rate::from_mbit(3));
            }),
            spec("b", None, |s| {
                s.rate = Some(Rate::from_mbit(3));
                s.ceil = Some(Rate::from_mbit(5));
            }),
            spec("c", None, |_| {}),
        ]);
        let p = derive(&t);
        let bounded = |n: &str| p[t.id_of(n).unwrap().index()].bounded;
        assert_eq!(
            [bounded("a"), bounded("b"), bounded("c")],
            [true, false, false]
        );
    }

    /// Quanta in one band: rates 1, 3 and 6 Mbit/s, L_max 1500 B, three leaves:
    /// 1500 * r * 3 / 10 Mbit/s = 450, 1350, 2700 bytes; a given quantum wins; a leaf in
    /// another band alone gets its L_max.
    #[test]
    fn quanta_follow_rates_within_a_band() {
        let t = tree(vec![
            spec("a", None, |s| s.rate = Some(Rate::from_mbit(1))),
            spec("b", None, |s| s.rate = Some(Rate::from_mbit(3))),
            spec("c", None, |s| s.rate = Some(Rate::from_mbit(6))),
        ]);
        let p = derive(&t);
        let q: Vec<i64> = p[1..].iter().map(|p| p.quantum).collect();
        assert_eq!(q, [450, 1350, 2700]);

        let t = tree(vec![
            spec("a", None, |s| {
                s.rate = Some(Rate::from_mbit(1));
                s.quantum = Some(Bytes(77));
            }),
            spec("b", None, |s| {
                s.rate = Some(Rate::from_mbit(3));
                s.priority = Some(2);
            }),
        ]);
        let p = derive(&t);
        assert_eq!((p[1].quantum, p[2].quantum, p[2].band), (77, 1500, 2));
    }

    #[test]
    fn burst_gain_is_g_to_the_minus_n_minus_one() {
        let one = 1u128 << FRAC;
        assert_eq!(burst_gain(0), 0);
        // (32/31) - 1 = 1/31.
        assert_eq!(burst_gain(1), one / 31);
        // (32/31)^20 - 1 = 0.88746... (computed independently: 32^20 / 31^20 - 1).
        let exact = (32f64 / 31f64).powi(20) - 1.0;
        let got = burst_gain(20) as f64 / one as f64;
        assert!((got - exact).abs() < 1e-8, "{got} vs {exact}");
        assert_eq!(burst_gain(u64::MAX), (one << GAIN_CAP_LOG) - one);
    }

    /// Link 10 Mbit/s, rate 2 Mbit/s, avpkt 1000 B: 0.8 ms at line rate, 4 ms at the
    /// class rate. Without a burst maxidle is the line-rate time, 0.8 ms (scaled: as is,
    /// since (1 - g) / W = 1). With maxburst 1 it is 3.2 ms * (1/31) / W = 3.2 ms * 32/31.
    #[test]
    fn maxidle_matches_the_tc_formula() {
        let (link, rate, avpkt) = (Rate::from_mbit(10), Rate::from_mbit(2), Bytes(1000));
        assert_eq!(maxidle(link, rate, avpkt, 0), 800_000);
        let one_packet = maxidle(link, rate, avpkt, 1);
        assert!((one_packet - 3_303_225).abs() <= 1, "{one_packet}");
        // A burst of n packets at line rate from maxidle brings the average to ~0.
        for n in [1u64, 5, 20] {
            let mut avg = maxidle(link, rate, avpkt, n);
            let idle = 800_000 - 4_000_000;
            for _ in 0..n {
                avg += idle - (avg >> EWMA_LOG);
            }
            assert!(avg.abs() <= scaled(Duration(64)), "n = {n}: {avg}");
        }
        assert_eq!(maxidle(link, link, avpkt, 20), 800_000);
    }
}
