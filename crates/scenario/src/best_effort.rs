//! FSC's best-effort mode (paper 002 §2.4): `best_effort = { bpr = 5, pbs = "4kb" }` on a
//! link gives every leaf of the link the same concave link-sharing curve shape: the
//! leaf's long-term rate `m2`, a first slope `m1 = BPR · m2`, and the knee at `PBS`
//! bytes, `d = PBS / m1`. `BPR = 1` or `PBS = 0` gives the straight line `m2` (PFQ).
//!
//! `m2` is the leaf's `rate`, or else its share by weight as H-FSC computes default
//! curves (`linkshare_core::share::parent_shares`): `parent rate · weight / sum of the
//! weights of it and its siblings`, top-down from the link rate, where a parent's rate
//! is the `m2` of its `ls` curve, else its `rate`, else its own share. Only the ratios between the
//! leaves' curves matter (FSC's virtual times do not change when every curve is scaled),
//! so the link-sharing curves may add up to more than the link: `linkshare check` does
//! not count that as a violation on such a link.

use linkshare_core::curve::ServiceCurve;
use linkshare_core::hierarchy::{ClassId, ClassTree};
use linkshare_core::share::parent_shares;
use linkshare_core::units::{Bytes, Duration, NANOS_PER_SEC, Rate};

use super::reader::{Ctx, Sp, Value};

/// Keys of a `best_effort` table.
const KEYS: &[&str] = &["bpr", "pbs"];

/// Largest BPR accepted: beyond it the first slope says "the burst goes first" anyway.
const MAX_BPR: u64 = 1_000_000;

/// A link's best-effort parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BestEffort {
    /// Burst preference ratio `m1 / m2`, at least 1.
    pub bpr: u64,
    /// Preferred burst size: the bytes served at the first slope.
    pub pbs: Bytes,
}

impl BestEffort {
    /// The curve of a leaf whose long-term rate is `m2`: `m1 = BPR · m2`, `d = PBS / m1`
    /// rounded up to the ns (so the knee is at PBS bytes or, by rounding, a byte more);
    /// the line `m2` if `BPR = 1` or `PBS = 0`. `None` if `BPR · m2` does not fit in
    /// 64 bits.
    pub fn curve(&self, m2: Rate) -> Option<ServiceCurve> {
        if self.bpr == 1 || self.pbs == Bytes::ZERO {
            return Some(ServiceCurve::linear(m2));
        }
        let m1 = m2.bps().checked_mul(self.bpr)?;
        let d = (self.pbs.bits() * u128::from(NANOS_PER_SEC)).div_ceil(u128::from(m1));
        Some(ServiceCurve {
            m1: Rate(m1),
            d: Duration(u64::try_from(d).ok()?),
            m2,
        })
    }
}

/// Reads `best_effort = { bpr = N, pbs = "SIZE" }` at `path`.
pub(crate) fn read(ctx: &mut Ctx<'_>, path: &str, v: &Value<'_>) -> Option<Sp<BestEffort>> {
    let t = ctx.table(path, v, KEYS)?;
    let bpr = t
        .require(ctx, "bpr", "bpr = 5")
        .and_then(|_| t.integer(ctx, "bpr", 1, MAX_BPR));
    let pbs = t
        .require(ctx, "pbs", "pbs = \"6000b\"")
        .and_then(|_| t.quantity::<Bytes>(ctx, "pbs", "a size", "\"6000b\""));
    Some(Sp {
        value: BestEffort {
            bpr: bpr?.value,
            pbs: pbs?.value,
        },
        span: t.span.clone(),
    })
}

/// The long-term rate `m2` of every leaf of `tree` in best-effort mode, by class index
/// (`None` for the root and interior classes). See the [module docs](self).
pub(crate) fn leaf_rates(tree: &ClassTree) -> Vec<Option<Rate>> {
    let rates = parent_shares(tree, |class, own| match (class.is_leaf(), class.spec.ls) {
        (false, Some(ls)) => ls.m2,
        _ => own,
    });
    tree.classes()
        .iter()
        .map(|c| (c.id != ClassId::ROOT && c.is_leaf()).then(|| rates[c.id.index()]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use linkshare_core::hierarchy::{ClassSpec, LinkSpec};

    /// BPR 4, PBS 6000 B on m2 = 1.25 Mbit/s: m1 = 5 Mbit/s, and 48 000 bit at 5 Mbit/s
    /// take 9.6 ms. On m2 = 3 Mbit/s: m1 = 12 Mbit/s, 4 ms.
    #[test]
    fn curves_by_hand() {
        let be = BestEffort {
            bpr: 4,
            pbs: Bytes(6000),
        };
        assert_eq!(
            be.curve(Rate(1_250_000)),
            Some(ServiceCurve {
                m1: Rate::from_mbit(5),
                d: Duration::from_micros(9_600),
                m2: Rate(1_250_000),
            })
        );
        assert_eq!(be.curve(Rate::from_mbit(3)).unwrap().d, Duration(4_000_000));
        // 1000 B at 3 bit/s: 8000/3 s, rounded up.
        let odd = BestEffort {
            bpr: 3,
            pbs: Bytes(1000),
        };
        assert_eq!(odd.curve(Rate(1)).unwrap().d, Duration(2_666_666_666_667));
        let pfq = ServiceCurve::linear(Rate(7));
        assert_eq!(BestEffort { bpr: 1, ..be }.curve(Rate(7)), Some(pfq));
        let no_burst = BestEffort {
            bpr: 5,
            pbs: Bytes::ZERO,
        };
        assert_eq!(no_burst.curve(Rate(7)), Some(pfq));
        assert_eq!(be.curve(Rate(u64::MAX / 2)), None);
    }

    /// 12 Mbit/s; `a` (rate 2 Mbit/s), `g` (weight 3) with `g1` (weight 1) and `g2`
    /// (weight 2), `b` (weight 1). At the top the weights are 1, 3, 1 (a's counts though
    /// it has a rate): g's share is 12 · 3/5 = 7.2 Mbit/s, b's 2.4; under g, 2.4 and 4.8.
    #[test]
    fn leaf_rates_are_rates_or_shares() {
        let mut a = ClassSpec::new("a", None);
        a.rate = Some(Rate::from_mbit(2));
        let mut g = ClassSpec::new("g", None);
        g.weight = Some(3);
        let g1 = ClassSpec::new("g1", Some("g"));
        let mut g2 = ClassSpec::new("g2", Some("g"));
        g2.weight = Some(2);
        let link = LinkSpec {
            name: "link".into(),
            rate: Rate::from_mbit(12),
            origin: None,
        };
        let t = ClassTree::build(link, vec![a, g, g1, g2, ClassSpec::new("b", None)]).unwrap();
        let rates = leaf_rates(&t);
        let of = |n: &str| rates[t.id_of(n).unwrap().index()];
        assert_eq!(of("a"), Some(Rate::from_mbit(2)));
        assert_eq!(of("g"), None);
        assert_eq!(of("g1"), Some(Rate(2_400_000)));
        assert_eq!(of("g2"), Some(Rate(4_800_000)));
        assert_eq!(of("b"), Some(Rate(2_400_000)));
    }
}
