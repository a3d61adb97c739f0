//! The round number's active conversations on the packet path ([`super::active`]'s
//! uncounted form): the few nearest, exactly keyed, in a small binary heap; the others
//! in buckets of round number, each key only a lower bound of its conversation's
//! finish number.
//!
//! # Why
//!
//! The round number needs the smallest finish number `F^α` among the active
//! conversations only as a lower bound: when it reaches the smallest key, it reads that
//! conversation's true `F^α` and re-keys it if the key was stale ([`super::round`]).
//! With every conversation backlogged, that happens about once every four packets of a
//! conversation, and the re-keyed conversation, the smallest, takes a key among the
//! largest: in a tree or heap over all the conversations, a walk of its whole depth.
//! Here such a conversation usually moves to a bucket further on, in O(1).
//!
//! # Layout
//!
//! Round numbers are cut into buckets of `2^shift` units (16 bytes of round at the
//! largest weight: [`ActiveBuckets::new`]); bucket `a` holds the units `a · 2^shift` up to
//! the next bucket. `cur` is the number of the next bucket to empty:
//!
//! * **near**: the conversations whose key lies below bucket `cur`, by exact key, in a
//!   binary min-heap (reserved for every conversation: no allocation after
//!   construction);
//! * **far**: the others, in a ring of [`BUCKETS`] singly linked lists through a
//!   per-conversation `next` link, one per bucket number from `cur` to
//!   `cur + BUCKETS − 1`, with a bitmap of the lists that are not empty. A conversation
//!   whose key is beyond the ring goes into its last bucket (its key then rounded down,
//!   still a lower bound).
//!
//! So every near key is below every far bucket's start, and the heap's top is the
//! smallest key, a lower bound of every active conversation's finish number. When the
//! heap is empty, the next nonempty far bucket is emptied: each of its conversations,
//! keyed now by its true finish number (read through the caller's `finish`), enters the
//! heap if that lies in the emptied bucket, goes into its bucket further on, or, if
//! that lies beyond the ring, is held aside; when no far bucket comes before the
//! nearest held one, `cur` jumps to it (so that far conversations are not carried one
//! ring at a time), and the held ones go back into their buckets.
//!
//! # Cost
//!
//! An activation or a re-key: O(1) into a far bucket, or O(log k) into the heap of the
//! `k` near conversations; the smallest's removal O(log k). Emptying a bucket: O(1) per
//! conversation in it, plus a scan of the bitmap (16 words). Every conversation is
//! moved between buckets at most once per bucket emptied with it in it, and only when
//! the round number has reached the bucket. The worst case, every key in one bucket, is
//! a binary heap of them all. Measured in `BENCHMARKS.md` (Keshav's sixth and tenth
//! passes: `round::arrival` flat from 100 to 100 000 conversations).
//!
//! # Verification
//!
//! A property test below drives it as the round number does, against a model of the
//! conversations' finish numbers, keys spread across buckets and beyond the ring: the
//! key returned is a lower bound of every active finish number, and the smallest when
//! it is exact.
//! `round.rs`'s tests and `tests/keshav_fluid.rs` run the round number on it against
//! the counted heap and the exact fluid GPS.

use core::cmp::Reverse;
use std::collections::BinaryHeap;

/// Buckets in the ring (a multiple of 64).
pub(super) const BUCKETS: usize = 1024;

/// No conversation (an empty list's head, a list's end).
const NONE: u32 = u32::MAX;

/// Round units per byte at weight 1 ([`super::round::UNITS_PER_BYTE`]), times 16: a
/// bucket is 16 bytes of round at the largest weight.
const BUCKET_WORK: u128 = 16 * super::round::UNITS_PER_BYTE;

/// See the [module docs](self).
#[derive(Clone, Debug)]
pub(super) struct ActiveBuckets {
    near: BinaryHeap<Reverse<(u128, u32)>>,
    /// The first conversation of each bucket's list, by `number % BUCKETS`.
    first: Vec<u32>,
    /// The next conversation in the same list, by conversation.
    next: Vec<u32>,
    /// Bit `i % 64` of word `i / 64`: bucket list `i` is not empty.
    occupied: [u64; BUCKETS / 64],
    /// The number of the next bucket to empty: every near key's bucket is below it,
    /// every far conversation's list is that of a bucket from it to `cur + BUCKETS − 1`.
    cur: u128,
    /// Bucket width: `2^shift` units.
    shift: u32,
    len: usize,
}

impl ActiveBuckets {
    /// An empty set for conversations `0..capacity`, whose largest weight is `w_max`.
    pub(super) fn new(capacity: usize, w_max: u64) -> ActiveBuckets {
        // At least 2 units, so that a bucket number (at most `2^127 − 1`) plus the
        // ring's length never overflows `u128`, even for saturated finish numbers.
        let width = (BUCKET_WORK / u128::from(w_max.max(1))).max(2);
        ActiveBuckets {
            near: BinaryHeap::with_capacity(capacity),
            first: vec![NONE; BUCKETS],
            next: vec![NONE; capacity],
            occupied: [0; BUCKETS / 64],
            cur: 0,
            shift: width.ilog2(),
            len: 0,
        }
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// The conversation with the smallest key and that key, a lower bound of every
    /// active conversation's finish number (`finish` gives each one's).
    #[inline]
    pub(super) fn peek(&mut self, finish: impl Fn(u32) -> u128) -> Option<(u32, u128)> {
        if self.near.is_empty() {
            self.refill(finish);
        }
        self.near.peek().map(|&Reverse((key, c))| (c, key))
    }

    /// Adds conversation `c`, absent, with `key`.
    #[inline]
    pub(super) fn insert(&mut self, c: u32, key: u128) {
        self.len += 1;
        self.place(c, key);
    }

    /// Re-keys conversation `c`, the one with the smallest key, to the larger `key`.
    #[inline]
    pub(super) fn rekey_min(&mut self, c: u32, key: u128) {
        let top = self.near.pop();
        debug_assert_eq!(
            top.map(|Reverse((_, m))| m),
            Some(c),
            "re-keys the smallest"
        );
        self.place(c, key);
    }

    /// Removes the conversation with the smallest key (after [`ActiveBuckets::peek`]).
    #[inline]
    pub(super) fn pop_min(&mut self) {
        if self.near.pop().is_some() {
            self.len -= 1;
        }
    }

    /// Puts `c` (counted in `len`, in neither part) with `key` near, or into its far
    /// bucket; near at once if it is the only conversation (no far bucket to stay
    /// below).
    #[inline]
    fn place(&mut self, c: u32, key: u128) {
        let bucket = key >> self.shift;
        if self.len == 1 {
            self.cur = self.cur.max(bucket + 1);
        }
        if bucket < self.cur {
            self.near.push(Reverse((key, c)));
        } else {
            self.push_far(c, bucket);
        }
    }

    /// Links `c` into the list of bucket `bucket` (at least `cur`), or of the ring's
    /// last bucket if it lies beyond.
    #[inline]
    fn push_far(&mut self, c: u32, bucket: u128) {
        let bucket = bucket.min(self.cur + (BUCKETS as u128 - 1));
        let i = bucket as usize % BUCKETS;
        self.next[c as usize] = self.first[i];
        self.first[i] = c;
        self.occupied[i / 64] |= 1 << (i % 64);
    }

    /// The list number of the first nonempty far bucket from `cur` on, and its bucket
    /// number, if any.
    fn first_far(&self) -> Option<(usize, u128)> {
        let start = self.cur as usize % BUCKETS;
        let words = BUCKETS / 64;
        // The words from `start`'s on, wrapping round to it again (its bits below
        // `start` last).
        for k in 0..=words {
            let w = (start / 64 + k) % words;
            let mut bits = self.occupied[w];
            if k == 0 {
                bits &= u64::MAX << (start % 64);
            } else if k == words {
                bits &= !(u64::MAX << (start % 64));
            }
            if bits != 0 {
                let i = w * 64 + bits.trailing_zeros() as usize;
                let ahead = (i + BUCKETS - start) % BUCKETS;
                return Some((i, self.cur + ahead as u128));
            }
        }
        None
    }

    /// Empties far buckets, nearest first, until the heap holds a conversation or no
    /// far conversation is left. A conversation whose finish number has moved past the
    /// bucket emptied goes into its bucket, or, if that lies beyond the ring, is held
    /// aside, the nearest such bucket noted; while no far bucket comes before that one,
    /// `cur` jumps to it and the held conversations are placed again. So a far
    /// conversation is not carried one ring at a time, and each is taken out of a
    /// bucket at most twice per call.
    #[cold]
    #[inline(never)]
    fn refill(&mut self, finish: impl Fn(u32) -> u128) {
        let mut held = NONE;
        let mut nearest = u128::MAX;
        while self.near.is_empty() {
            let (i, bucket) = match self.first_far() {
                Some((i, bucket)) if bucket <= nearest => (i, bucket),
                _ if held == NONE => return,
                _ => {
                    // No far bucket before the nearest held one: go to it.
                    self.cur = self.cur.max(nearest);
                    held = self.place_all(held, &finish);
                    nearest = u128::MAX;
                    continue;
                }
            };
            let mut c = self.first[i];
            self.first[i] = NONE;
            self.occupied[i / 64] &= !(1 << (i % 64));
            self.cur = bucket + 1;
            let ring_end = self.cur + (BUCKETS as u128 - 1);
            while c != NONE {
                let after = self.next[c as usize];
                let f = finish(c);
                let b = f >> self.shift;
                if b < self.cur {
                    self.near.push(Reverse((f, c)));
                } else if b < ring_end {
                    self.push_far(c, b);
                } else {
                    nearest = nearest.min(b);
                    self.next[c as usize] = held;
                    held = c;
                }
                c = after;
            }
        }
        self.place_all(held, &finish);
    }

    /// Places every conversation of the chain from `c` by its finish number; returns
    /// the empty chain.
    fn place_all(&mut self, mut c: u32, finish: &impl Fn(u32) -> u128) -> u32 {
        while c != NONE {
            let after = self.next[c as usize];
            self.place(c, finish(c));
            c = after;
        }
        NONE
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

    /// Steps of a bucket's width or so, with now and then one far beyond the ring.
    fn step() -> impl Strategy<Value = u128> {
        let width = BUCKET_WORK;
        prop_oneof![
            4 => 0u128..3 * width,
            2 => (0u128..4).prop_map(move |k| k * width),
            1 => (0u128..3).prop_map(move |k| (BUCKETS as u128 + k) * width),
            1 => Just(1u128 << 100),
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

    /// Keys at the top of the `u128` range with the narrowest buckets (the largest
    /// weight): every conversation still comes out, smallest first, without overflow.
    #[test]
    fn saturated_keys_come_out_in_order() {
        let mut t = ActiveBuckets::new(4, u64::MAX);
        let keys = [5, u128::MAX, u128::MAX - 3, u128::MAX - (1 << 70)];
        for (c, &k) in keys.iter().enumerate() {
            t.insert(c as u32, k);
        }
        let mut out = Vec::new();
        while let Some((c, k)) = t.peek(|c| keys[c as usize]) {
            assert_eq!(k, keys[c as usize], "the exact finish number");
            out.push(k);
            t.pop_min();
        }
        let mut want = keys.to_vec();
        want.sort();
        assert_eq!(out, want);
        assert_eq!(t.len(), 0);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        /// Driven as the round number drives it (the floor is the round number), against
        /// the conversations' finish numbers: the key returned is a lower bound of every
        /// active finish number and not below the floor; when it equals its
        /// conversation's finish number, that is the smallest finish number; the count
        /// is right. Weights 1 and 3 (bucket widths), steps across buckets and beyond the
        /// ring.
        #[test]
        fn a_lower_bound_that_the_round_number_can_use(
            ops in prop::collection::vec(op(), 0..300),
            w_max in prop_oneof![Just(1u64), Just(3u64)],
        ) {
            let mut t = ActiveBuckets::new(CONVS as usize, w_max);
            let mut finish: Vec<Option<u128>> = vec![None; CONVS as usize];
            let mut floor = 0u128;
            for op in ops {
                match op {
                    Op::Insert(c, s) => {
                        if finish[c as usize].is_some() {
                            continue;
                        }
                        let key = floor + s;
                        t.insert(c, key);
                        finish[c as usize] = Some(key);
                    }
                    Op::Grow(c, s) => {
                        if let Some(f) = finish[c as usize].as_mut() {
                            *f += s;
                        }
                    }
                    Op::Reach => {
                        let fin = finish.clone();
                        let Some((c, key)) = t.peek(|d| fin[d as usize].expect("active")) else {
                            continue;
                        };
                        floor = key;
                        let f = finish[c as usize].expect("active");
                        if f == key {
                            t.pop_min();
                            finish[c as usize] = None;
                        } else {
                            t.rekey_min(c, f);
                        }
                    }
                    Op::Advance(k) => {
                        let fin = finish.clone();
                        if let Some((_, key)) = t.peek(|d| fin[d as usize].expect("active")) {
                            floor += (key - floor) / 4 * u128::from(k);
                        }
                    }
                }
                let active: Vec<(u128, u32)> = (0..CONVS)
                    .filter_map(|c| finish[c as usize].map(|f| (f, c)))
                    .collect();
                prop_assert_eq!(t.len(), active.len());
                let fin = finish.clone();
                let Some((c, key)) = t.peek(|d| fin[d as usize].expect("active")) else {
                    prop_assert!(active.is_empty());
                    continue;
                };
                prop_assert!(key >= floor);
                prop_assert!(active.iter().all(|&(f, _)| key <= f));
                if finish[c as usize] == Some(key) {
                    prop_assert_eq!(Some(key), active.iter().map(|&(f, _)| f).min());
                }
            }
        }
    }
}
