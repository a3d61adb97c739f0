//! Groups of consecutive classes tied by ratios (paper Eq. 14, §4.1) and the integer
//! weight of each member.
//!
//! A class with a ratio `k_i = a_i / b_i` is tied to the next class; a run of tied
//! classes plus the class after the last ratio is a group (so no "dummy" ratio is
//! needed on the last member, unlike ALTQ and ns-2). The paper weights class `i`'s
//! delay by `P_i = Π_{j≠i} m_j` with `m_i = Π_{l<i} k_l` (Eq. 15); every `P_i` is the
//! same multiple of `1/m_i`, so any weights proportional to `1/m_i` give the same set
//! point and errors up to one constant factor. We use the smallest integer ones: for a
//! group `g_1 … g_M`,
//!
//! ```text
//! W_i = Π_{l<i} b_l · Π_{l≥i} a_l        (l over the group's M − 1 ratios)
//! ```
//!
//! so that `W_i / W_{i+1} = a_i / b_i = k_i` exactly and `W_i · D_i = W_{i+1} · D_{i+1}`
//! is Eq. 7's target, in integers: with ratios 2, 2 the weights are 4, 2, 1 (ALTQ's
//! `delay_prod_others` is 8, 4, 2). The first member has the largest weight.

use super::config::MAX_GROUP_WEIGHT;
use crate::units::Ratio;

/// [`Groups::group`] of a class in no group.
pub(super) const NO_GROUP: u8 = u8::MAX;

/// The groups of one kind of ratio (delay or loss).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Groups {
    /// The group of each class (by JoBS index), or [`NO_GROUP`].
    pub group: Vec<u8>,
    /// `W_i` of each class in its group; 0 outside any group.
    pub weight: Vec<u64>,
    /// The members of each group, as a mask of JoBS indices.
    pub members: Vec<u64>,
    /// The weight of each group's first member (the largest of the group).
    pub first: Vec<u64>,
    /// The classes in any group.
    pub all: u64,
}

/// The groups formed by `ratios` (class `i`'s ratio to class `i + 1`); `Err` with the
/// first class of a group whose weights would exceed [`MAX_GROUP_WEIGHT`]. A ratio on
/// the last class (refused by validation) is ignored.
pub(super) fn resolve(ratios: &[Option<Ratio>]) -> Result<Groups, usize> {
    let n = ratios.len();
    let mut g = Groups {
        group: vec![NO_GROUP; n],
        weight: vec![0; n],
        ..Groups::default()
    };
    let mut start = 0;
    while start + 1 < n {
        if ratios[start].is_none() {
            start += 1;
            continue;
        }
        // Members start..=end: end is the class after the last ratio of the run.
        let mut end = start + 1;
        while end + 1 < n && ratios[end].is_some() {
            end += 1;
        }
        let id = g.members.len() as u8;
        let mut mask = 0u64;
        for i in start..=end {
            let mut w: u64 = 1;
            for (l, k) in ratios[start..end].iter().enumerate() {
                let k = k.expect("every class of the run but the last has a ratio");
                let factor = if start + l < i { k.den() } else { k.num() };
                w = w
                    .checked_mul(u64::from(factor))
                    .filter(|&w| w <= MAX_GROUP_WEIGHT)
                    .ok_or(start)?;
            }
            g.group[i] = id;
            g.weight[i] = w;
            mask |= 1 << i;
        }
        g.members.push(mask);
        g.first.push(g.weight[start]);
        g.all |= mask;
        start = end + 1;
    }
    Ok(g)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(a: u32, b: u32) -> Option<Ratio> {
        Ratio::new(a, b)
    }

    /// The paper's `P_i = Π_{j≠i} m_j` with `m_i = Π_{l<i} k_l`, as exact rationals
    /// `(num, den)`, computed straight from Eq. 15.
    fn paper_weights(ratios: &[(u64, u64)]) -> Vec<(u128, u128)> {
        let m: Vec<(u128, u128)> = (0..=ratios.len())
            .map(|i| {
                ratios[..i].iter().fold((1u128, 1u128), |(n, d), &(a, b)| {
                    (n * u128::from(a), d * u128::from(b))
                })
            })
            .collect();
        (0..m.len())
            .map(|i| {
                (0..m.len())
                    .filter(|&j| j != i)
                    .fold((1, 1), |(n, d), j| (n * m[j].0, d * m[j].1))
            })
            .collect()
    }

    /// Spec §7.1 test 1: group {2, 3, 4} with ratios 2, 2 has `m = 1, 2, 4` and
    /// `P = 8, 4, 2`; our weights are proportional to `P` (4, 2, 1), and class 1, outside
    /// the group, has weight 0.
    #[test]
    fn weights_are_proportional_to_the_papers() {
        let g = resolve(&[None, k(2, 1), k(2, 1), None]).unwrap();
        assert_eq!(g.weight, vec![0, 4, 2, 1]);
        assert_eq!(g.group, vec![NO_GROUP, 0, 0, 0]);
        assert_eq!(
            (g.members.clone(), g.first.clone(), g.all),
            (vec![0b1110], vec![4], 0b1110)
        );
        let p = paper_weights(&[(2, 1), (2, 1)]);
        assert_eq!(p, vec![(8, 1), (4, 1), (2, 1)]);
        // All four classes with ratio 4: m = 1, 4, 16, 64 and P_1 = 4 · 16 · 64 = 4096.
        let g = resolve(&[k(4, 1), k(4, 1), k(4, 1), None]).unwrap();
        assert_eq!(g.weight, vec![64, 16, 4, 1]);
        let p = paper_weights(&[(4, 1), (4, 1), (4, 1)]);
        assert_eq!(p[0], (4096, 1));
        for (w, (num, den)) in g.weight.iter().zip(&p) {
            // P_i / W_i is the same for every member: 4096 / 64 = 64.
            assert_eq!(*num, 64 * u128::from(*w) * den);
        }
    }

    #[test]
    fn fractional_ratios_keep_exact_targets() {
        // Ratios 3/2 and 5/4: W = 3·5, 2·5, 2·4.
        let g = resolve(&[k(3, 2), k(5, 4), None]).unwrap();
        assert_eq!(g.weight, vec![15, 10, 8]);
        let p = paper_weights(&[(3, 2), (5, 4)]);
        // P_i · 8 / W_i is constant (P_3 = m_1 m_2 = 3/2 and W_3 = 8).
        let c: Vec<u128> = g
            .weight
            .iter()
            .zip(&p)
            .map(|(w, (n, d))| n * 1_000_000 / (d * u128::from(*w)))
            .collect();
        assert!(c.windows(2).all(|w| w[0] == w[1]), "{c:?}");
    }

    #[test]
    fn separate_runs_are_separate_groups() {
        let g = resolve(&[k(2, 1), None, None, k(3, 1), None]).unwrap();
        assert_eq!(g.members, vec![0b00011, 0b11000]);
        assert_eq!(g.group, vec![0, 0, NO_GROUP, 1, 1]);
        assert_eq!(g.weight, vec![2, 1, 0, 3, 1]);
        // Adjacent runs merge: a ratio on class 1 ties it to class 2.
        let g = resolve(&[k(2, 1), k(2, 1), None]).unwrap();
        assert_eq!(g.members, vec![0b111]);
        // A ratio on the last class has no partner.
        assert_eq!(resolve(&[None, k(2, 1)]).unwrap().all, 0);
    }

    #[test]
    fn oversized_weights_are_refused() {
        let big = k(1 << 25, 1);
        assert_eq!(resolve(&[None, big, big, None]), Err(1));
        assert!(resolve(&[big, None]).is_ok());
    }
}
