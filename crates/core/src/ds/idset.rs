//! An ordered set of small integers with successor queries: a hierarchical bitmap (one
//! bit per member, one summary bit per 64-bit word, and so on up to a single word).
//! Insert, remove and "smallest member at or after `i`" cost O(log₆₄ capacity) word
//! operations and never allocate.
//!
//! HTB keeps its rows and feeds in these (where Linux keeps red-black trees sorted by
//! class id): the members are positions numbered in class-id order, so the set's order
//! is Linux's.

/// An ordered set of positions `0..capacity`. See the [module docs](self).
#[derive(Clone, Debug)]
pub struct IdSet {
    /// `levels[0]` has one bit per position; `levels[k + 1]` one bit per non-zero word of
    /// `levels[k]`. The last level is a single word.
    levels: Vec<Vec<u64>>,
}

impl IdSet {
    /// An empty set for positions `0..capacity`.
    pub fn new(capacity: usize) -> IdSet {
        let mut levels = Vec::new();
        let mut bits = capacity.max(1);
        loop {
            let words = bits.div_ceil(64);
            levels.push(vec![0; words]);
            if words == 1 {
                return IdSet { levels };
            }
            bits = words;
        }
    }

    /// Whether the set has no member.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.levels.last().is_none_or(|top| top[0] == 0)
    }

    /// Adds `i` (a no-op if present).
    pub fn insert(&mut self, i: u32) {
        let mut i = i as usize;
        for level in &mut self.levels {
            let word = &mut level[i / 64];
            let was_empty = *word == 0;
            *word |= 1 << (i % 64);
            if !was_empty {
                return;
            }
            i /= 64;
        }
    }

    /// Removes `i` (a no-op if absent).
    pub fn remove(&mut self, i: u32) {
        let mut i = i as usize;
        for level in &mut self.levels {
            let word = &mut level[i / 64];
            *word &= !(1 << (i % 64));
            if *word != 0 {
                return;
            }
            i /= 64;
        }
    }

    /// The smallest member.
    #[inline]
    pub fn first(&self) -> Option<u32> {
        self.next_from(0)
    }

    /// The smallest member greater than `i`.
    #[inline]
    pub fn next_after(&self, i: u32) -> Option<u32> {
        self.next_from(i + 1)
    }

    /// The smallest member at or after `i`.
    pub fn next_from(&self, i: u32) -> Option<u32> {
        let mut pos = i as usize;
        let mut k = 0;
        // Climb until some word holds a member at or after `pos`...
        loop {
            let w = pos / 64;
            let word = *self.levels[k].get(w)?;
            let bits = word & (!0u64 << (pos % 64));
            if bits != 0 {
                pos = w * 64 + bits.trailing_zeros() as usize;
                break;
            }
            if k + 1 == self.levels.len() {
                return None;
            }
            k += 1;
            pos = w + 1;
        }
        // ...then descend along the smallest members.
        while k > 0 {
            k -= 1;
            pos = pos * 64 + self.levels[k][pos].trailing_zeros() as usize;
        }
        Some(pos as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Against a sorted model: membership, emptiness and successors.
        #[test]
        fn matches_a_sorted_model(
            cap in 1usize..5000,
            ops in proptest::collection::vec((any::<u32>(), any::<bool>()), 0..300),
            probes in proptest::collection::vec(any::<u32>(), 1..40),
        ) {
            let mut set = IdSet::new(cap);
            let mut model = std::collections::BTreeSet::new();
            for (x, add) in ops {
                let x = x % cap as u32;
                if add {
                    set.insert(x);
                    model.insert(x);
                } else {
                    set.remove(x);
                    model.remove(&x);
                }
                prop_assert_eq!(set.is_empty(), model.is_empty());
            }
            prop_assert_eq!(set.first(), model.iter().next().copied());
            for p in probes {
                let p = p % (cap as u32 + 70);
                prop_assert_eq!(set.next_from(p), model.range(p..).next().copied());
            }
        }
    }

    #[test]
    fn successors_cross_words_and_levels() {
        let mut set = IdSet::new(64 * 64 * 3);
        for i in [5, 64, 4095, 4096, 12_000] {
            set.insert(i);
        }
        assert_eq!(set.first(), Some(5));
        assert_eq!(set.next_after(5), Some(64));
        assert_eq!(set.next_after(64), Some(4095));
        assert_eq!(set.next_after(4095), Some(4096));
        assert_eq!(set.next_after(4096), Some(12_000));
        assert_eq!(set.next_after(12_000), None);
        set.remove(4096);
        assert_eq!(set.next_after(4095), Some(12_000));
        for i in [5, 64, 4095, 12_000] {
            set.remove(i);
        }
        assert!(set.is_empty());
        assert_eq!(set.first(), None);
    }
}
