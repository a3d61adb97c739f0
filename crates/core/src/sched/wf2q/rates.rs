//! Guaranteed rates of the WF2Q+ family, SCED and Virtual Clock.
//!
//! A class's rate is its [`rate`](crate::hierarchy::ClassSpec::rate) if it gives one.
//! Otherwise it is its share by weight of what its siblings with a rate leave free
//! ([`crate::share::remainder_shares`]): among siblings sharing a capacity `C_p`, with
//! `R` the sum of the explicit rates and `W` the sum of the weights of the siblings
//! without one, a sibling of weight `w` gets `floor((C_p − R) · w / W)` bit/s. Which
//! classes are siblings, and what they share, depends on the discipline:
//! [`hierarchical`] (children of one parent share the parent's rate) or [`flat`] (all
//! leaves share the link).
//!
//! A class whose share comes out as zero (its siblings' rates use the whole capacity, or
//! its weight is too small a fraction of a tiny remainder) cannot be scheduled by rate:
//! building fails with a [`ConfigError`] naming it (every such class whose parent has a
//! rate; the classes below it have none either).

use crate::hierarchy::{ClassId, ClassTree, ConfigError};
use crate::sched::class_problem;
use crate::share::{remainder_rates, remainder_shares, unfunded};
use crate::units::Rate;

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
pub(crate) fn hierarchical(tree: &ClassTree) -> Result<Vec<Rate>, Vec<ConfigError>> {
    let rate = remainder_rates(tree, |_, share| share);
    let problems: Vec<ConfigError> = unfunded(tree, &rate)
        .into_iter()
        .map(|c| {
            let p = tree.get(c).parent.unwrap_or(ClassId::ROOT);
            let within = format!("under `{}`", tree.get(p).name());
            zero_share(tree, c, &within, rate[p.index()])
        })
        .collect();
    if problems.is_empty() {
        Ok(rate)
    } else {
        Err(problems)
    }
}

/// Rates for a flat discipline, indexed by [`ClassId::index`]: the leaves share the link,
/// each leaf's explicit rate being `explicit(leaf)`; other classes get zero.
pub(crate) fn flat(
    tree: &ClassTree,
    explicit: impl Fn(ClassId) -> Option<Rate>,
) -> Result<Vec<Rate>, Vec<ConfigError>> {
    let mut rate = vec![Rate::ZERO; tree.len()];
    let members: Vec<(Option<Rate>, u32)> = tree
        .leaves()
        .iter()
        .map(|&l| (explicit(l), tree.get(l).weight()))
        .collect();
    let link = tree.link_rate();
    let mut problems = Vec::new();
    let shares = remainder_shares(link, &members);
    for ((&l, r), (given, _)) in tree.leaves().iter().zip(shares).zip(&members) {
        if given.is_none() && r == Rate::ZERO {
            problems.push(zero_share(tree, l, "on the link", link));
        }
        rate[l.index()] = r;
    }
    if problems.is_empty() {
        Ok(rate)
    } else {
        Err(problems)
    }
}
