//! Default rates: what a class that gives no `rate` of its own gets, as a share by
//! weight of a capacity. Every discipline that needs a rate, or a curve, for such a class
//! takes it from here, under one of two rules:
//!
//! * **Share of the parent** ([`weight_share`]; over a tree, [`parent_shares`]): the
//!   class gets `rate · w / W` of its parent's rate, `W` being the weight of the class
//!   and all its siblings, those with a rate of their own included. Where only the
//!   ratios between classes matter: H-FSC's default link-sharing curves, FSC's default
//!   curves (every leaf's share of the link), the best-effort curves of a scenario file.
//! * **Share of what explicit rates leave** ([`remainder_shares`]; over a tree,
//!   [`remainder_rates`]): among members sharing a capacity `C`, with `R` the sum of the
//!   explicit rates and `W` the weight of the members without one, a member without a
//!   rate gets `(C − R) · w / W` (nothing when `R ≥ C`). Where rates are guarantees:
//!   WF2Q+, H-WF2Q+, SCED and Virtual Clock (see [`crate::sched::wf2q`]), HTB.
//!
//! # Rounding
//!
//! Both rules compute in `u128` (no product overflows) and round down to the bit/s. A
//! share of the parent is at least 1 bit/s (a default curve must not be zero); a share
//! of what explicit rates leave may be zero, and the disciplines refuse a class whose
//! rate comes out zero ([`unfunded`] finds them).

use crate::hierarchy::{Class, ClassId, ClassTree};
use crate::units::Rate;

/// A class's share by weight of its parent's `rate`: `rate · weight / weights`
/// (`weights`: the sum of the weights of the class and its siblings), rounded down, at
/// least 1 bit/s.
pub fn weight_share(rate: Rate, weight: u32, weights: u64) -> Rate {
    let r = u128::from(rate.0) * u128::from(weight) / u128::from(weights.max(1));
    Rate(u64::try_from(r).unwrap_or(u64::MAX).max(1))
}

/// The sum of the weights of the children of `class`.
fn children_weights(tree: &ClassTree, class: ClassId) -> u64 {
    tree.get(class)
        .children
        .iter()
        .map(|&k| u64::from(tree.get(k).weight()))
        .sum()
}

/// Every class id, parents before children: the root, then level by level, each
/// class's children in declaration order.
pub fn top_down(tree: &ClassTree) -> Vec<ClassId> {
    let mut order = vec![ClassId::ROOT];
    let mut k = 0;
    while k < order.len() {
        order.extend_from_slice(&tree.get(order[k]).children);
        k += 1;
    }
    order
}

/// Every class's own or default rate by the share-of-the-parent rule, by class index:
/// the root has the link rate; a class has its `rate` if it gives one, else its
/// [`weight_share`] of its parent's reference rate. A class's reference rate, which its
/// children share, is `reference(class, its rate here)`: a discipline whose classes
/// carry curves returns the long-term rate of the class's curve, if it has one.
pub fn parent_shares(tree: &ClassTree, reference: impl Fn(&Class, Rate) -> Rate) -> Vec<Rate> {
    let mut rate = vec![Rate::ZERO; tree.len()];
    let mut shared = vec![Rate::ZERO; tree.len()];
    rate[ClassId::ROOT.index()] = tree.link_rate();
    shared[ClassId::ROOT.index()] = tree.link_rate();
    for p in top_down(tree) {
        let weights = children_weights(tree, p);
        for &k in &tree.get(p).children {
            let class = tree.get(k);
            let own = class
                .spec
                .rate
                .unwrap_or_else(|| weight_share(shared[p.index()], class.weight(), weights));
            rate[k.index()] = own;
            shared[k.index()] = reference(class, own);
        }
    }
    rate
}

/// The rates of `members` (explicit rate, weight) sharing `capacity`, in order, by the
/// share-of-what-explicit-rates-leave rule. A member's share may be zero.
pub fn remainder_shares(capacity: Rate, members: &[(Option<Rate>, u32)]) -> Vec<Rate> {
    let explicit: u128 = members
        .iter()
        .filter_map(|(r, _)| *r)
        .map(|r| u128::from(r.0))
        .sum();
    let free = u128::from(capacity.0).saturating_sub(explicit);
    let weights: u128 = members
        .iter()
        .filter(|(r, _)| r.is_none())
        .map(|(_, w)| u128::from(*w))
        .sum();
    members
        .iter()
        .map(|&(rate, w)| {
            rate.unwrap_or_else(|| Rate((free * u128::from(w) / weights.max(1)) as u64))
        })
        .collect()
}

/// Every class's rate by the share-of-what-explicit-rates-leave rule, by class index:
/// the root has the link rate, and the children of every class share its rate — a
/// child's `rate` if it gives one, else `cap(child, its share)` (HTB: at most its
/// `ceil`). A class whose share comes out zero has rate zero (see [`unfunded`]).
pub fn remainder_rates(tree: &ClassTree, cap: impl Fn(&Class, Rate) -> Rate) -> Vec<Rate> {
    let mut rate = vec![Rate::ZERO; tree.len()];
    rate[ClassId::ROOT.index()] = tree.link_rate();
    for p in top_down(tree) {
        let kids = &tree.get(p).children;
        let members: Vec<(Option<Rate>, u32)> = kids
            .iter()
            .map(|&k| (tree.get(k).spec.rate, tree.get(k).weight()))
            .collect();
        for (&k, share) in kids.iter().zip(remainder_shares(rate[p.index()], &members)) {
            let class = tree.get(k);
            rate[k.index()] = match class.spec.rate {
                Some(r) => r,
                None => cap(class, share),
            };
        }
    }
    rate
}

/// The classes of [`remainder_rates`]' result `rate` that give no `rate`, got none, and
/// are the cause: their parent's rate is not zero (the classes below a class without a
/// rate get none either, and are not listed). Parents before children.
pub fn unfunded(tree: &ClassTree, rate: &[Rate]) -> Vec<ClassId> {
    top_down(tree)
        .into_iter()
        .skip(1)
        .filter(|&c| {
            let class = tree.get(c);
            let parent = class.parent.unwrap_or(ClassId::ROOT);
            class.spec.rate.is_none()
                && rate[c.index()] == Rate::ZERO
                && rate[parent.index()] != Rate::ZERO
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hierarchy::{ClassSpec, LinkSpec};

    fn tree(rate: u64, specs: Vec<ClassSpec>) -> ClassTree {
        let link = LinkSpec {
            name: "link".into(),
            rate: Rate(rate),
            origin: None,
        };
        ClassTree::build(link, specs).unwrap()
    }

    fn class(name: &str, parent: Option<&str>, rate: Option<u64>, weight: u32) -> ClassSpec {
        let mut c = ClassSpec::new(name, parent);
        c.rate = rate.map(Rate);
        c.weight = Some(weight);
        c
    }

    #[test]
    fn weight_share_rounds_down_and_is_never_zero() {
        assert_eq!(weight_share(Rate(10), 1, 3), Rate(3));
        assert_eq!(weight_share(Rate(10), 2, 3), Rate(6));
        assert_eq!(weight_share(Rate(1), 1, 1000), Rate(1));
        assert_eq!(weight_share(Rate(u64::MAX), u32::MAX, 1), Rate(u64::MAX));
    }

    #[test]
    fn remainder_shares_split_what_explicit_rates_leave() {
        let m = [(Some(Rate(4)), 9), (None, 1), (None, 3)];
        // 10 − 4 = 6 left for weights 1 : 3: 1.5 and 4.5, rounded down.
        assert_eq!(remainder_shares(Rate(10), &m), [Rate(4), Rate(1), Rate(4)]);
        assert_eq!(
            remainder_shares(Rate(10), &[(Some(Rate(10)), 1), (None, 1)]),
            [Rate(10), Rate(0)]
        );
        // Explicit rates above the capacity leave nothing.
        assert_eq!(
            remainder_shares(Rate(10), &[(Some(Rate(u64::MAX)), 1), (None, 1)])[1],
            Rate(0)
        );
        assert_eq!(remainder_shares(Rate(7), &[]), []);
    }

    /// 12 bit/s: `a` (rate 2), `g` (weight 3) with `g1` (weight 1) and `g2` (weight 2),
    /// `b` (weight 1).
    fn example() -> ClassTree {
        tree(
            12,
            vec![
                class("a", None, Some(2), 1),
                class("g", None, None, 3),
                class("g1", Some("g"), None, 1),
                class("g2", Some("g"), None, 2),
                class("b", None, None, 1),
            ],
        )
    }

    #[test]
    fn parent_shares_count_every_sibling() {
        let t = example();
        let r = parent_shares(&t, |_, own| own);
        let of = |n: &str| r[t.id_of(n).unwrap().index()];
        // Weights 1 + 3 + 1 = 5 at the top (a's counts though it has a rate): g gets
        // 12 · 3/5 = 7.2 → 7, b 12/5 = 2.4 → 2; under g, 7/3 → 2 and 14/3 → 4.
        assert_eq!(
            [of("link"), of("a"), of("g"), of("b"), of("g1"), of("g2")],
            [12, 2, 7, 2, 2, 4].map(Rate)
        );
        // A reference other than the class's own rate: g's children share 30.
        let r = parent_shares(&t, |c, own| if c.name() == "g" { Rate(30) } else { own });
        assert_eq!(r[t.id_of("g2").unwrap().index()], Rate(20));
    }

    #[test]
    fn remainder_rates_share_what_explicit_rates_leave() {
        let t = example();
        let r = remainder_rates(&t, |_, share| share);
        let of = |n: &str| r[t.id_of(n).unwrap().index()];
        // 12 − 2 = 10 for weights 3 : 1: g 7 (7.5), b 2 (2.5); under g, 7 for 1 : 2.
        assert_eq!(
            [of("a"), of("g"), of("b"), of("g1"), of("g2")],
            [2, 7, 2, 2, 4].map(Rate)
        );
        let capped = remainder_rates(&t, |c, share| if c.name() == "g" { Rate(3) } else { share });
        assert_eq!(capped[t.id_of("g2").unwrap().index()], Rate(2));
        assert!(unfunded(&t, &r).is_empty());
    }

    #[test]
    fn unfunded_names_the_cause_only() {
        // `a` takes the whole link: `g` gets nothing, and so do its children, but only
        // `g` and `b` are the cause.
        let t = tree(
            12,
            vec![
                class("a", None, Some(12), 1),
                class("g", None, None, 3),
                class("g1", Some("g"), None, 1),
                class("b", None, None, 1),
            ],
        );
        let r = remainder_rates(&t, |_, share| share);
        let names: Vec<&str> = unfunded(&t, &r).iter().map(|&c| t.get(c).name()).collect();
        assert_eq!(names, ["g", "b"]);
    }

    #[test]
    fn top_down_puts_parents_first() {
        let t = example();
        let order: Vec<&str> = top_down(&t).iter().map(|&c| t.get(c).name()).collect();
        assert_eq!(order, ["link", "a", "g", "b", "g1", "g2"]);
    }
}
