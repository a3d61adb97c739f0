//! An ordered set of small integers with successor queries: a hierarchical bitmap (one
//! bit per member, one summary bit per 64-bit word, and so on up to a single word).
//! Insert, remove and "smallest member at or after `i`" cost O(log₆₄ capacity) word
//! operations and never allocate.
//!
//! The words of the levels below the top share one vector, and the top word is a field,
//! so that emptiness is one load and a set of up to 64 positions needs no vector. A set
//! of 65 to 4 096 positions (one level below the top) inserts and finds successors
//! without a loop over levels.
//!
//! HTB keeps its rows and feeds in these (where Linux keeps red-black trees sorted by
//! class id): the members are class ids (rows) or positions numbered in class-id order
//! (feeds), so the set's order is Linux's; and its wait queues' occupied slots.

/// Most levels below the top word: 64⁶ = 2³⁶ positions cover every `u32`.
const MAX_LOWER: usize = 5;

/// An ordered set of positions `0..capacity`. See the [module docs](self).
#[derive(Clone, Debug)]
pub struct IdSet {
    /// The top level: bit `k` set if word `k` of the level below (or position `k`, if
    /// there is no level below) is not empty.
    top: u64,
    /// Number of levels below the top.
    lower: usize,
    /// `words[starts[k] + j]` is word `j` of level `k` (level 0: one bit per position;
    /// level `k + 1`: one bit per non-zero word of level `k`), for `k < lower`, and
    /// `j < starts[k + 1] - starts[k]`.
    starts: [usize; MAX_LOWER + 1],
    words: Vec<u64>,
}

impl IdSet {
    /// An empty set for positions `0..capacity`.
    pub fn new(capacity: usize) -> IdSet {
        let mut starts = [0; MAX_LOWER + 1];
        let mut lower = 0;
        let mut bits = capacity.max(1);
        while bits > 64 {
            assert!(lower < MAX_LOWER, "at most 2^36 positions");
            let words = bits.div_ceil(64);
            starts[lower + 1] = starts[lower] + words;
            lower += 1;
            bits = words;
        }
        IdSet {
            top: 0,
            lower,
            starts,
            words: vec![0; starts[lower]],
        }
    }

    /// Whether the set has no member.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.top == 0
    }

    /// Adds `i` (a no-op if present). Every level's bit is set, whether or not it was
    /// already: no branch on the set's contents, and no loop for a set of one level
    /// below the top (65 to 4 096 positions).
    #[inline]
    pub fn insert(&mut self, i: u32) {
        let mut i = i as usize;
        if self.lower == 1 {
            self.words[i / 64] |= 1 << (i % 64);
            self.top |= 1 << (i / 64);
            return;
        }
        for k in 0..self.lower {
            self.words[self.starts[k] + i / 64] |= 1 << (i % 64);
            i /= 64;
        }
        self.top |= 1 << i;
    }

    /// Removes `i` (a no-op if absent).
    #[inline]
    pub fn remove(&mut self, i: u32) {
        let mut i = i as usize;
        for k in 0..self.lower {
            let word = &mut self.words[self.starts[k] + i / 64];
            *word &= !(1 << (i % 64));
            if *word != 0 {
                return;
            }
            i /= 64;
        }
        self.top &= !(1 << i);
    }

    /// The smallest member.
    #[inline]
    pub fn first(&self) -> Option<u32> {
        if self.top == 0 {
            return None;
        }
        Some(self.descend(self.lower, self.top.trailing_zeros() as usize))
    }

    /// The smallest member greater than `i`.
    #[inline]
    pub fn next_after(&self, i: u32) -> Option<u32> {
        self.next_from(i + 1)
    }

    /// The smallest member at or after `i`.
    #[inline]
    pub fn next_from(&self, i: u32) -> Option<u32> {
        let mut pos = i as usize;
        if self.lower == 1 {
            // In the word of `i`, or in the first non-empty word after it.
            let w = pos / 64;
            let bits = *self.words.get(w)? & (!0u64 << (pos % 64));
            if bits != 0 {
                return Some((w * 64) as u32 + bits.trailing_zeros());
            }
            let later = self.top & (!1u64).checked_shl(w as u32)?;
            if later == 0 {
                return None;
            }
            let w = later.trailing_zeros() as usize;
            return Some((w * 64) as u32 + self.words[w].trailing_zeros());
        }
        // Climb until some word holds a member at or after `pos`...
        for k in 0..self.lower {
            let w = pos / 64;
            let (start, end) = (self.starts[k], self.starts[k + 1]);
            if start + w >= end {
                return None;
            }
            let word = self.words[start + w];
            let bits = word & (!0u64 << (pos % 64));
            if bits != 0 {
                return Some(self.descend(k, w * 64 + bits.trailing_zeros() as usize));
            }
            pos = w + 1;
        }
        if pos >= 64 {
            return None;
        }
        let bits = self.top & (!0u64 << pos);
        if bits == 0 {
            return None;
        }
        Some(self.descend(self.lower, bits.trailing_zeros() as usize))
    }

    /// The smallest member under bit `pos` of level `k` (the top is level `lower`),
    /// which is set.
    #[inline]
    fn descend(&self, k: usize, pos: usize) -> u32 {
        let mut pos = pos;
        for k in (0..k).rev() {
            pos = pos * 64 + self.words[self.starts[k] + pos].trailing_zeros() as usize;
        }
        pos as u32
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
            cap in prop_oneof![1usize..=64, 65usize..=4096, 4097usize..10_000],
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

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        /// Four levels (three below the top): members spread over the whole range and
        /// clustered in a few words.
        #[test]
        fn matches_a_sorted_model_with_four_levels(
            cap in 262_145usize..300_000,
            ops in proptest::collection::vec((any::<u32>(), 0u32..200, any::<bool>()), 0..300),
            probes in proptest::collection::vec(any::<u32>(), 1..40),
        ) {
            let mut set = IdSet::new(cap);
            let mut model = std::collections::BTreeSet::new();
            for (x, near, add) in ops {
                // Half the positions in the first 200, half anywhere.
                let x = if x % 2 == 0 { near } else { x % cap as u32 };
                if add {
                    set.insert(x);
                    model.insert(x);
                } else {
                    set.remove(x);
                    model.remove(&x);
                }
                prop_assert_eq!(set.is_empty(), model.is_empty());
                prop_assert_eq!(set.first(), model.iter().next().copied());
            }
            for p in probes {
                let p = p % (cap as u32 + 70);
                prop_assert_eq!(set.next_from(p), model.range(p..).next().copied());
                let near = p % 300;
                prop_assert_eq!(set.next_from(near), model.range(near..).next().copied());
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
