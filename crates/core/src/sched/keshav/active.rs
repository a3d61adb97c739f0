//! The round number's active conversations by key, smallest first ([`super::round`]):
//! each key a lower bound of the conversation's finish number `F^α`, re-keyed when the
//! round number reaches it. Two forms of the same set:
//!
//! * **counted**: the paper's binary heap ([`MinHeap`]), whose exchanges the cost study
//!   reports (`round_heap_exchanges`); Keshav FQ runs it when its buffer counts;
//! * **uncounted** ([`ActiveTree`]): a [`WinnerTree`] with one slot per conversation,
//!   for the packet path (Keshav FQ's uncounted PERC, WFQ). In fair queueing with every
//!   conversation backlogged, the conversation re-keyed is the smallest and its new key
//!   among the largest: the heap sifts it to the bottom choosing a child at every level
//!   (a branch that goes either way), the tree replays the conversation's own path
//!   without a branch on the keys.
//!
//! # Cost
//!
//! Heap: O(log k) per operation, `k` the active conversations. Tree: O(log n), `n` the
//! conversations: a re-key or a departure walks the whole depth of the tree (three
//! comparisons a level) however few conversations are active, an activation climbs
//! until its key loses ([`WinnerTree::lower`]). So the tree is the cheaper one when
//! most conversations are active (fair queueing under load), the heap when few are
//! (`BENCHMARKS.md`, Keshav's fifth pass: `round::arrival`, where arrivals are spread
//! over idle conversations). Rebases: O(k log n) each, rare (below).
//!
//! Both give the round number the same smallest key at every step (ties between equal
//! keys may be broken differently, which changes no result: conversations leaving at the
//! same round number leave at the same instant).
//!
//! # The uncounted tree's keys
//!
//! An entry is `rel << 32 | conversation`, `rel = key − base` on 96 bits. A key more than
//! `2^96 − 2` units above `base` (3.8·10^16 bytes of round at weight 1, which a finish
//! number reaches only far ahead of the round number) is stored as `base + 2^96 − 2`:
//! still a lower bound of `F^α`, which is all the round number needs (it re-keys the
//! conversation when it reaches it). Before storing such a key, `base` moves up to the
//! caller's floor — a lower bound of every key present and to come — if that is above
//! it (a **rebase**: every entry lowered by the same amount, O(k log n) for `k` entries;
//! the order does not change). A clamped key is at least `2^96 − 2` units above the
//! floor of its rebase, so the round number must advance that far before a clamped key
//! is reached again: rebases are rare, and re-keying always makes progress.
//!
//! # Verification
//!
//! A property test below runs the uncounted tree beside the counted heap (and an ordered
//! set) on random insertions, re-keys and removals, keys far apart included (clamps and
//! rebases): the same smallest key after every operation. `round.rs`'s tests and
//! `tests/keshav_fluid.rs` run the round number with both against each other and the
//! exact fluid GPS.

use crate::ds::MinHeap;
use crate::ds::winner_tree::{EMPTY, WinnerTree};

/// Largest `rel` stored: keys further above `base` are clamped to it.
const REL_MAX: u128 = (1 << 96) - 2;

/// The active conversations: counted heap or uncounted tree. See the [module docs](self).
#[derive(Clone, Debug)]
pub(super) enum Active {
    Counted(MinHeap<u128>),
    Uncounted(ActiveTree),
}

impl Active {
    /// The conversation with the smallest key, and that key.
    #[inline]
    pub(super) fn peek(&self) -> Option<(u32, u128)> {
        match self {
            Active::Counted(h) => h.peek(),
            Active::Uncounted(t) => t.peek(),
        }
    }

    /// Adds conversation `c`, absent, with `key`; `floor` is at most every key present
    /// and every key to come.
    #[inline]
    pub(super) fn insert(&mut self, c: u32, key: u128, floor: u128) {
        match self {
            Active::Counted(h) => h.insert(c, key),
            Active::Uncounted(t) => t.insert(c, key, floor),
        }
    }

    /// Re-keys conversation `c`, the one with the smallest key, to the larger `key`;
    /// `floor` as for [`Active::insert`].
    #[inline]
    pub(super) fn rekey_min(&mut self, c: u32, key: u128, floor: u128) {
        match self {
            Active::Counted(h) => h.update(c, key),
            Active::Uncounted(t) => t.rekey_min(c, key, floor),
        }
    }

    /// Removes the conversation with the smallest key.
    #[inline]
    pub(super) fn pop_min(&mut self) {
        match self {
            Active::Counted(h) => {
                h.pop();
            }
            Active::Uncounted(t) => t.pop_min(),
        }
    }

    /// Conversations present.
    pub(super) fn len(&self) -> usize {
        match self {
            Active::Counted(h) => h.len(),
            Active::Uncounted(t) => t.len(),
        }
    }

    /// The counted heap's exchanges so far; `None` for the uncounted tree.
    pub(super) fn exchanges(&self) -> Option<u64> {
        match self {
            Active::Counted(h) => Some(h.exchanges()),
            Active::Uncounted(_) => None,
        }
    }
}

/// Conversations `0..capacity` by key, uncounted. See the [module docs](self).
#[derive(Clone, Debug)]
pub(super) struct ActiveTree {
    /// Conversation `c`'s entry in slot `c`.
    tree: WinnerTree,
    /// What `rel` counts from: at most every key present.
    base: u128,
    len: usize,
}

#[inline(always)]
fn lt(a: u128, b: u128) -> bool {
    a < b
}

#[inline(always)]
fn slot_of(e: u128) -> usize {
    e as u32 as usize
}

impl ActiveTree {
    /// An empty set for conversations `0..capacity`.
    pub(super) fn new(capacity: usize) -> ActiveTree {
        ActiveTree {
            tree: WinnerTree::new(capacity),
            base: 0,
            len: 0,
        }
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub(super) fn peek(&self) -> Option<(u32, u128)> {
        let e = self.tree.min();
        (e != EMPTY).then(|| (e as u32, self.base + (e >> 32)))
    }

    #[inline]
    pub(super) fn insert(&mut self, c: u32, key: u128, floor: u128) {
        let e = self.entry(c, key, floor);
        self.len += 1;
        self.tree.lower(c as usize, e, lt);
    }

    #[inline]
    pub(super) fn rekey_min(&mut self, c: u32, key: u128, floor: u128) {
        debug_assert_eq!(self.peek().map(|(m, _)| m), Some(c), "re-keys the smallest");
        let e = self.entry(c, key, floor);
        self.tree.replay_min(c as usize, e);
    }

    #[inline]
    pub(super) fn pop_min(&mut self) {
        let e = self.tree.min();
        if e != EMPTY {
            self.len -= 1;
            self.tree.replay_min(slot_of(e), EMPTY);
        }
    }

    /// The entry of conversation `c` with `key` (see the [module docs](self)).
    #[inline]
    fn entry(&mut self, c: u32, key: u128, floor: u128) -> u128 {
        debug_assert!(floor <= key && self.base <= key, "keys stay above the base");
        let mut rel = key - self.base;
        if rel > REL_MAX {
            rel = self.far(key, floor);
        }
        (rel << 32) | u128::from(c)
    }

    /// `rel` of a key more than [`REL_MAX`] above `base`: rebases to `floor` if that
    /// moves the base, then clamps.
    #[cold]
    #[inline(never)]
    fn far(&mut self, key: u128, floor: u128) -> u128 {
        if floor > self.base {
            let shift = floor - self.base;
            self.tree.rewrite(|_, e| {
                let rel = (e >> 32) - shift;
                (rel << 32) | (e & u128::from(u32::MAX))
            });
            self.base = floor;
        }
        (key - self.base).min(REL_MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const CONVS: u32 = 10;

    /// What the round number does to the set.
    #[derive(Clone, Copy, Debug)]
    enum Op {
        /// Conversation `c`, if inactive, activates with the key `floor + step`.
        Insert(u32, u128),
        /// Conversation `c`'s finish number grows by `step` (the set is not told).
        Grow(u32, u128),
        /// The round number reaches the smallest key: the conversation is re-keyed to
        /// its finish number if that is larger, else it leaves.
        Reach,
        /// The round number moves `k / 4` of the way from the floor to the smallest key.
        Advance(u8),
    }

    fn step() -> impl Strategy<Value = u128> {
        prop_oneof![
            4 => 1u128..5,
            1 => (0u128..4).prop_map(|k| REL_MAX - 1 + k),
            1 => (0u128..3).prop_map(|k| (1 << 100) + k),
            1 => Just(1u128 << 125),
        ]
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (0..CONVS, step()).prop_map(|(c, s)| Op::Insert(c, s)),
            2 => (0..CONVS, step()).prop_map(|(c, s)| Op::Grow(c, s)),
            3 => Just(Op::Reach),
            1 => (0u8..=4).prop_map(Op::Advance),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        /// Against the conversations' finish numbers, driven as the round number drives
        /// it (the floor is the round number): the smallest stored key is a lower bound
        /// of every finish number and not below the floor; when it equals its
        /// conversation's finish number, that conversation is the smallest by
        /// `(finish number, conversation)`; a key stored within `REL_MAX` of the floor is
        /// stored exactly. Keys far apart make it clamp and rebase.
        #[test]
        fn a_lower_bound_that_the_round_number_can_use(ops in prop::collection::vec(op(), 0..300)) {
            let mut t = ActiveTree::new(CONVS as usize);
            // Each conversation's finish number while active, and the key stored for it
            // if it was stored within reach of the floor (then exactly).
            let mut finish: Vec<Option<u128>> = vec![None; CONVS as usize];
            let mut exact: Vec<Option<u128>> = vec![None; CONVS as usize];
            let mut floor = 0u128;
            for op in ops {
                match op {
                    Op::Insert(c, s) => {
                        let Some(key) = floor.checked_add(s) else { continue };
                        if finish[c as usize].is_some() {
                            continue;
                        }
                        t.insert(c, key, floor);
                        finish[c as usize] = Some(key);
                        exact[c as usize] = (key - floor <= REL_MAX).then_some(key);
                    }
                    Op::Grow(c, s) => {
                        if let Some(f) = finish[c as usize].as_mut() {
                            *f = f.saturating_add(s);
                        }
                    }
                    Op::Reach => {
                        let Some((c, stored)) = t.peek() else { continue };
                        floor = stored;
                        let f = finish[c as usize].expect("active");
                        if f == stored {
                            t.pop_min();
                            finish[c as usize] = None;
                        } else {
                            t.rekey_min(c, f, floor);
                            exact[c as usize] = (f - floor <= REL_MAX).then_some(f);
                        }
                    }
                    Op::Advance(k) => {
                        if let Some((_, stored)) = t.peek() {
                            floor += (stored - floor) / 4 * u128::from(k);
                        }
                    }
                }
                let active: Vec<(u128, u32)> = (0..CONVS)
                    .filter_map(|c| finish[c as usize].map(|f| (f, c)))
                    .collect();
                prop_assert_eq!(t.len(), active.len());
                let Some((c, stored)) = t.peek() else {
                    prop_assert!(active.is_empty());
                    continue;
                };
                prop_assert!(stored >= floor);
                prop_assert!(active.iter().all(|&(f, _)| stored <= f));
                if finish[c as usize] == Some(stored) {
                    prop_assert_eq!(Some(&(stored, c)), active.iter().min());
                }
                if let Some(k) = exact[c as usize] {
                    prop_assert_eq!(stored, k);
                }
            }
        }
    }
}
