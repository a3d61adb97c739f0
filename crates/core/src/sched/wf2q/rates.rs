//! Guaranteed rates of the WF2Q+ family, SCED and Virtual Clock.
//!
//! A class's rate is its [`rate`](crate::hierarchy::ClassSpec::rate) if it gives one.
//! Otherwise it is its share by weight of what its siblings with a rate leave free:
//! among siblings sharing a capacity `C_p`, with `R` the sum of the explicit rates and
//! `W` the sum of the weights of the siblings without one, a sibling of weight `w` gets
//! `floor((C_p − R) · w / W)` bit/s. Which classes are siblings, and what they share,
//! depends on the discipline: [`hierarchical`] (children of one parent share the parent's
//! rate) or [`flat`] (all leaves share the link).
//!
//! A class whose share comes out as zero (its siblings' rates use the whole capacity, or
//! its weight is too small a fraction of a tiny remainder) cannot be scheduled by rate:
//! building fails with a [`ConfigError`] naming it.

use crate::hierarchy::{ClassId, ClassTree, ConfigError};
use crate::sched::class_problem;
use crate::units::Rate;

/// The rates of `members` (explicit rate, weight) sharing `capacity`, in order, or the
/// index of the first member whose share is zero.
fn shares(capacity: Rate, members: &[(Option<Rate>, u32)]) -> Result<Vec<Rate>, usize> {
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
        .enumerate()
        .map(|(i, &(rate, w))| match rate {
            Some(r) => Ok(r),
            None => match free * u128::from(w) / weights {
                0 => Err(i),
                share => Ok(Rate(share as u64)),
            },
        })
        .collect()
}

fn zero_share(tree: &ClassTree, class: ClassId, within: &str, free_of: Rate) -> ConfigError {
    class_problem(
        tree,
        class,
        "rate",
        format!(
            "the class has no `rate`, and its share by weight of what its siblings with a \
             rate leave free {within} (of {free_of}) is zero"
        ),
        "give it a `rate`, or lower its siblings' rates".to_owned(),
    )
}

/// Rates for a hierarchical discipline, indexed by [`ClassId::index`]: the root gets the
/// link rate, and the children of every class share that class's rate.
pub(crate) fn hierarchical(tree: &ClassTree) -> Result<Vec<Rate>, ConfigError> {
    let mut rate = vec![Rate::ZERO; tree.len()];
    rate[ClassId::ROOT.index()] = tree.link_rate();
    let mut stack = vec![ClassId::ROOT];
    while let Some(p) = stack.pop() {
        let kids = &tree.get(p).children;
        let members: Vec<(Option<Rate>, u32)> = kids
            .iter()
            .map(|&k| (tree.get(k).spec.rate, tree.get(k).weight()))
            .collect();
        let capacity = rate[p.index()];
        let got = shares(capacity, &members).map_err(|i| {
            let within = format!("under `{}`", tree.get(p).name());
            zero_share(tree, kids[i], &within, capacity)
        })?;
        for (&k, r) in kids.iter().zip(got) {
            rate[k.index()] = r;
            stack.push(k);
        }
    }
    Ok(rate)
}

/// Rates for a flat discipline, indexed by [`ClassId::index`]: the leaves share the link,
/// each leaf's explicit rate being `explicit(leaf)`; other classes get zero.
pub(crate) fn flat(
    tree: &ClassTree,
    explicit: impl Fn(ClassId) -> Option<Rate>,
) -> Result<Vec<Rate>, ConfigError> {
    let mut rate = vec![Rate::ZERO; tree.len()];
    let members: Vec<(Option<Rate>, u32)> = tree
        .leaves()
        .iter()
        .map(|&l| (explicit(l), tree.get(l).weight()))
        .collect();
    let link = tree.link_rate();
    let got = shares(link, &members)
        .map_err(|i| zero_share(tree, tree.leaves()[i], "on the link", link))?;
    for (&l, r) in tree.leaves().iter().zip(got) {
        rate[l.index()] = r;
    }
    Ok(rate)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_rates_and_weight_shares() {
        let m = [(Some(Rate(4)), 9), (None, 1), (None, 3)];
        // 10 − 4 = 6 left for weights 1 : 3.
        assert_eq!(shares(Rate(10), &m), Ok(vec![Rate(4), Rate(1), Rate(4)]));
        assert_eq!(shares(Rate(10), &[(Some(Rate(10)), 1), (None, 1)]), Err(1));
        assert_eq!(shares(Rate(7), &[]), Ok(vec![]));
    }
}
