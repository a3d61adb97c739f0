//! The conversations with packets by the [`Tag`] at their head, smallest first, for
//! [`super::FastPerc`] (Keshav FQ's packet path) and for WFQ, SCFQ and STFQ
//! ([`crate::sched::pfq`]): a winner tree ([`WinnerTree`]) with one slot per
//! conversation, whose entries are 16 bytes — a 96-bit key that preserves the tags'
//! order, and the conversation — with the exact tags consulted only where two keys are
//! equal.
//!
//! # Keys
//!
//! A tag `(bid, seq)` with its conversation is 32 bytes; 1 000 of them fill a 32 KiB
//! first-level cache. The tree stores instead `key = (hi, lo)`, 64 + 32 bits, relative
//! to two bases kept by the structure:
//!
//! * `hi = bid − bid_base + 1`, or 0 if `bid < bid_base`, or `u64::MAX − 1` if
//!   `bid − bid_base` exceeds `u64::MAX − 3`;
//! * `lo = seq − seq_base + 1`, or 0 if `seq < seq_base`, or `u32::MAX` if
//!   `seq − seq_base` exceeds `u32::MAX − 2`; and `lo` is 0 (resp. `u32::MAX`) whenever
//!   `hi` is 0 (resp. `u64::MAX − 1`).
//!
//! This map is monotone (non-decreasing) in the tag order, so a smaller key means a
//! smaller tag, and it is one-to-one on the keys that are neither clamped nor saturated
//! (*exact* keys). Entries are ordered by `(key, conversation)`, falling back to
//! `(tag, conversation)` — the tags read through the caller's `exact` function, the
//! FIFO heads — when two keys are equal. That order is exactly `(tag, conversation)`,
//! whatever the bases, so correctness never depends on the compression.
//!
//! The structure counts its inexact keys: while there is none, two different entries
//! never have equal keys and every comparison is one 128-bit comparison of entries (the
//! *fast* order); otherwise the comparisons check for equal keys (the *careful* order).
//! When a new key comes out inexact and at least as many keys have been computed since
//! the last **rebase** as there are entries (plus a constant), the bases are moved —
//! `bid_base` to 2^62 units below the smallest bid present, `seq_base` to the smallest
//! sequence number present — and every key is recomputed: O(k log n) for `k` entries,
//! amortised O(log n) per key. The order of the entries does not change (both maps are
//! monotone), so the tree's winners stay where they are. In fair queueing the bids of
//! the heads lie within a few packets' worth of round number of each other, far inside
//! `hi`'s 2^64 units (9 MB of round at
//! [`crate::sched::keshav::round::UNITS_PER_BYTE`]), and `lo` covers 4·10^9 packets.
//!
//! # Why a winner tree
//!
//! When a conversation is served, its next head tag is in fair queueing usually among
//! the largest present (it was just served, so it waits for every other conversation's
//! turn). A heap sifts that entry down to the bottom comparing it with the children at
//! every level; the winner tree recomputes the conversation's path, one comparison per
//! level, and keeps no position table (a conversation's slot is its number).
//!
//! **The front slot.** An entry that precedes every entry of the tree when it is added
//! (a conversation that had no packet and now holds the smallest tag: in fair queueing,
//! a newly backlogged conversation with a small packet) is kept outside the tree, in
//! the front slot, from where it is taken in O(1); its slot in the tree is empty. The
//! front entry, if any, precedes every entry of the tree; a new smaller entry pushes it
//! into the tree.
//!
//! # Cost
//!
//! O(log n) per insertion, removal or change, `n` the conversations (the capacity, not
//! only those present; an insertion stops at the first node that precedes it, see
//! [`WinnerTree::lower`]); O(1) for the front slot; amortised O(log n) per key for the
//! rebases. No allocation after construction.
//!
//! # Verification
//!
//! Unit property tests against an ordered set of `(tag, conversation)`, with tags at
//! the ends of the `u128` range and sequence numbers spread beyond `u32` (inexact keys,
//! careful order, rebases), and small bases (the fast order); [`HeadTree::check`]
//! checks the tree, the keys and the order after every operation.
//! `tests/bid_queues.rs` and `tests/keshav.rs` run [`super::FastPerc`], which uses it,
//! against the ordered-set model and the paper's structures; `tests/pfq.rs`,
//! `tests/keshav_fluid.rs` and `tests/service_order.rs` run WFQ, SCFQ and STFQ on it.

use super::Tag;
use crate::ds::winner_tree::{EMPTY, WinnerTree};

/// No conversation in the front slot.
const ABSENT: u32 = u32::MAX;
/// `hi` of a bid too far above `bid_base`.
const SAT_HI: u64 = u64::MAX - 1;
/// `lo` of a sequence number too far above `seq_base`.
const SAT_LO: u32 = u32::MAX;
/// How far below the smallest bid present a rebase puts `bid_base`, in bid units: room
/// for later bids below it (a newly backlogged conversation bids `R + P`, possibly
/// below the heads present).
const MARGIN: u128 = 1 << 62;
/// Keys computed since the last rebase, beyond the number of entries, before a rebase
/// is allowed.
const REBASE_SLACK: usize = 64;

/// Conversations `0..capacity` by head tag. See the [module docs](self).
#[derive(Clone, Debug)]
pub struct HeadTree {
    /// Conversation `c`'s entry in slot `c` (empty while it is absent or in front). An
    /// entry is `hi << 64 | lo << 32 | conversation`.
    tree: WinnerTree,
    /// Entries in the tree.
    len: usize,
    /// The front entry, or `EMPTY`.
    front: u128,
    /// The front entry's conversation, or [`ABSENT`]: what the hot paths test, a
    /// 4-byte field (a 16-byte load of `front` just after its two 8-byte stores would
    /// wait for them instead of being forwarded).
    front_item: u32,
    bid_base: u128,
    seq_base: u64,
    /// Entries (front included) whose key is inexact.
    inexact: usize,
    /// Keys computed since the last rebase.
    since_rebase: usize,
}

/// Whether entry `e`'s key is clamped or saturated: `hi` outside `1..SAT_HI` or `lo`
/// outside `1..SAT_LO`.
#[inline(always)]
fn is_inexact(e: u128) -> bool {
    let hi = (e >> 64) as u64;
    let lo = (e >> 32) as u32;
    (hi.wrapping_sub(1) >= SAT_HI - 1) | (lo.wrapping_sub(1) >= SAT_LO - 1)
}

/// The conversation of entry `e`.
#[inline(always)]
fn item(e: u128) -> u32 {
    e as u32
}

/// The fast order: valid while no key is inexact (distinct entries then have distinct
/// keys, and the key order is the tag order).
#[inline(always)]
fn fast(a: u128, b: u128) -> bool {
    a < b
}

/// The careful order: by key, and by `(tag, conversation)` when the keys are equal
/// (never for [`EMPTY`], whose `hi` no entry has).
#[inline(always)]
fn careful(exact: &impl Fn(u32) -> Tag) -> impl Fn(u128, u128) -> bool + '_ {
    move |a, b| {
        if (a ^ b) >> 32 != 0 || a == b {
            a < b
        } else {
            (exact(item(a)), item(a)) < (exact(item(b)), item(b))
        }
    }
}

/// The slot of an entry.
#[inline(always)]
fn slot_of(e: u128) -> usize {
    item(e) as usize
}

/// `hi << 64 | lo << 32` of `tag` under the bases `bid_base` and `seq_base`.
#[inline]
fn key_bits(bid_base: u128, seq_base: u64, tag: Tag) -> u128 {
    let hi = match tag.bid().checked_sub(bid_base) {
        None => return 0,
        Some(r) if r > u128::from(u64::MAX - 3) => {
            return (u128::from(SAT_HI) << 64) | (u128::from(SAT_LO) << 32);
        }
        Some(r) => r as u64 + 1,
    };
    let lo = match tag.seq().checked_sub(seq_base) {
        None => 0,
        Some(r) if r > u64::from(u32::MAX - 2) => SAT_LO,
        Some(r) => r as u32 + 1,
    };
    (u128::from(hi) << 64) | (u128::from(lo) << 32)
}

impl HeadTree {
    /// An empty structure for conversations `0..capacity` (below `u32::MAX`).
    pub fn new(capacity: usize) -> HeadTree {
        HeadTree {
            tree: WinnerTree::new(capacity),
            len: 0,
            front: EMPTY,
            front_item: ABSENT,
            bid_base: 0,
            seq_base: 0,
            inexact: 0,
            since_rebase: 0,
        }
    }

    /// Conversations present.
    #[inline]
    pub fn len(&self) -> usize {
        self.len + usize::from(self.front_item != ABSENT)
    }

    /// Whether no conversation is present.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether conversation `c` is present.
    #[inline]
    pub fn contains(&self, c: u32) -> bool {
        self.front_item == c || self.tree.slot(c as usize) != EMPTY
    }

    /// The conversation with the smallest head tag (smallest conversation on ties).
    #[inline]
    pub fn peek(&self) -> Option<u32> {
        if self.front_item != ABSENT {
            Some(self.front_item)
        } else if self.len > 0 {
            Some(item(self.tree.min()))
        } else {
            None
        }
    }

    /// The conversations present, in no particular order.
    pub fn items(&self) -> impl Iterator<Item = u32> + '_ {
        let front = (self.front_item != ABSENT).then_some(self.front_item);
        front
            .into_iter()
            .chain(self.tree.present().map(|(_, e)| item(e)))
    }

    /// Adds conversation `c`, absent, with head tag `tag`. `exact` gives the head tag of
    /// every conversation present, `c` included.
    #[inline]
    pub fn push(&mut self, c: u32, tag: Tag, exact: &impl Fn(u32) -> Tag) {
        let (e, inexact) = self.entry(c, tag, exact);
        self.inexact += usize::from(inexact);
        if self.inexact == 0 {
            self.push_entry(e, fast);
        } else {
            self.push_entry(e, careful(exact));
        }
    }

    /// The smallest conversation, `c` (as [`HeadTree::peek`] gave it), has head tag
    /// `tag` now (`exact` already gives it).
    #[inline]
    pub fn replace_min(&mut self, c: u32, tag: Tag, exact: &impl Fn(u32) -> Tag) {
        debug_assert_eq!(self.peek(), Some(c), "not the smallest conversation");
        let (e, inexact) = self.entry(c, tag, exact);
        if self.inexact != 0 {
            // The old entry is read after `entry`, which may have rebased it.
            let old = if self.front_item != ABSENT {
                self.front
            } else {
                self.tree.min()
            };
            self.inexact -= usize::from(is_inexact(old));
        }
        self.inexact += usize::from(inexact);
        if self.inexact == 0 {
            self.replace_min_entry(e, fast);
        } else {
            self.replace_min_entry(e, careful(exact));
        }
    }

    /// Removes the smallest conversation.
    #[inline]
    pub fn pop_min(&mut self, exact: &impl Fn(u32) -> Tag) {
        if self.front_item != ABSENT {
            let e = self.take_front();
            self.forget(e);
        } else if self.len > 0 {
            let e = self.tree.min();
            self.forget(e);
            self.len -= 1;
            if self.inexact == 0 {
                self.tree.replay_min(slot_of(e), EMPTY);
            } else {
                self.tree.replay(slot_of(e), EMPTY, careful(exact));
            }
        }
    }

    /// Removes conversation `c` if present; returns whether it was.
    pub fn remove(&mut self, c: u32, exact: &impl Fn(u32) -> Tag) -> bool {
        if self.front_item == c {
            self.pop_min(exact);
            return true;
        }
        let e = self.tree.slot(c as usize);
        if e == EMPTY {
            return false;
        }
        self.forget(e);
        self.len -= 1;
        if self.inexact == 0 {
            self.tree.update(c as usize, EMPTY, fast, slot_of);
        } else {
            self.tree.update(c as usize, EMPTY, careful(exact), slot_of);
        }
        true
    }

    /// Adds conversation `c` with head tag `tag`, or changes its head tag to `tag` if
    /// present (`exact` already gives it).
    pub fn set(&mut self, c: u32, tag: Tag, exact: &impl Fn(u32) -> Tag) {
        if self.peek() == Some(c) {
            self.replace_min(c, tag, exact);
        } else {
            self.remove(c, exact);
            self.push(c, tag, exact);
        }
    }

    /// Checks the tree, every key against `exact` and the current bases, the count of
    /// inexact keys, and the order by `(tag, conversation)`.
    pub fn check(&self, exact: &impl Fn(u32) -> Tag) -> Result<(), String> {
        let key_ok = |e: u128| e == self.key_bits(exact(item(e))) | u128::from(item(e));
        let order = |a: u128, b: u128| {
            b == EMPTY || (a != EMPTY && (exact(item(a)), item(a)) < (exact(item(b)), item(b)))
        };
        self.tree.check(order)?;
        let mut inexact = 0;
        let mut present = 0;
        for (c, e) in self.tree.present() {
            if slot_of(e) != c {
                return Err(format!("conversation {} in slot {c}", item(e)));
            }
            if !key_ok(e) {
                return Err(format!("conversation {c}: key differs from its tag"));
            }
            inexact += usize::from(is_inexact(e));
            present += 1;
        }
        if present != self.len {
            return Err(format!("{present} conversations in the tree, {}", self.len));
        }
        if (self.front == EMPTY) != (self.front_item == ABSENT)
            || (self.front != EMPTY && self.front_item != item(self.front))
        {
            return Err("front slot and its conversation disagree".into());
        }
        if self.front != EMPTY {
            let f = self.front;
            if self.tree.slot(slot_of(f)) != EMPTY || !key_ok(f) {
                return Err("front entry also in the tree, or mis-keyed".into());
            }
            inexact += usize::from(is_inexact(f));
            if !order(f, self.tree.min()) {
                return Err("front entry after the tree's smallest".into());
            }
        }
        if inexact != self.inexact {
            return Err(format!("{inexact} inexact keys, counted {}", self.inexact));
        }
        Ok(())
    }

    /// `hi << 64 | lo << 32` of `tag` under the current bases.
    #[inline]
    fn key_bits(&self, tag: Tag) -> u128 {
        key_bits(self.bid_base, self.seq_base, tag)
    }

    /// The entry of conversation `c` with head tag `tag`, rebasing first if its key would
    /// be inexact and a rebase is due; and whether its key is inexact.
    #[inline]
    fn entry(&mut self, c: u32, tag: Tag, exact: &impl Fn(u32) -> Tag) -> (u128, bool) {
        self.since_rebase += 1;
        let (hi, below) = tag.bid().overflowing_sub(self.bid_base);
        let (lo, before) = tag.seq().overflowing_sub(self.seq_base);
        if !below && !before && hi <= u128::from(u64::MAX - 3) && lo <= u64::from(u32::MAX - 2) {
            let k = ((hi + 1) << 64) | (u128::from(lo + 1) << 32);
            return (k | u128::from(c), false);
        }
        self.inexact_entry(c, tag, exact)
    }

    /// [`HeadTree::entry`] for a key that is inexact under the current bases.
    #[cold]
    #[inline(never)]
    fn inexact_entry(&mut self, c: u32, tag: Tag, exact: &impl Fn(u32) -> Tag) -> (u128, bool) {
        if self.since_rebase > self.len() + REBASE_SLACK {
            self.rebase(tag, exact);
        }
        let k = self.key_bits(tag);
        (k | u128::from(c), is_inexact(k))
    }

    /// Moves the bases to the smallest bid (less `MARGIN`) and sequence number among
    /// `tag` and the head tags present, and recomputes every key.
    #[cold]
    fn rebase(&mut self, tag: Tag, exact: &impl Fn(u32) -> Tag) {
        self.since_rebase = 0;
        let (mut bid, mut seq) = (tag.bid(), tag.seq());
        for c in self.items() {
            let t = exact(c);
            bid = bid.min(t.bid());
            seq = seq.min(t.seq());
        }
        self.bid_base = bid.saturating_sub(MARGIN);
        self.seq_base = seq;
        let (bid_base, seq_base) = (self.bid_base, self.seq_base);
        let rekey = |e: u128| key_bits(bid_base, seq_base, exact(item(e))) | u128::from(item(e));
        let mut inexact = 0;
        if self.front != EMPTY {
            self.front = rekey(self.front);
            inexact += usize::from(is_inexact(self.front));
        }
        // Every node holding an entry holds a copy of a conversation's; each is keyed
        // anew (the same function of the conversation), the leaves counted once.
        self.tree.rewrite(|leaf, e| {
            let n = rekey(e);
            if leaf {
                inexact += usize::from(is_inexact(n));
            }
            n
        });
        self.inexact = inexact;
    }

    /// Puts entry `e` in the (free) front slot.
    #[inline(always)]
    fn put_front(&mut self, e: u128) {
        self.front = e;
        self.front_item = item(e);
    }

    /// Empties the (occupied) front slot; returns its entry.
    #[inline(always)]
    fn take_front(&mut self) -> u128 {
        self.front_item = ABSENT;
        core::mem::replace(&mut self.front, EMPTY)
    }

    /// Forgets entry `e`, taken out of the structure.
    #[inline]
    fn forget(&mut self, e: u128) {
        if self.inexact != 0 {
            self.inexact -= usize::from(is_inexact(e));
        }
    }

    /// Adds entry `e` to the tree, its slot empty.
    #[inline(always)]
    fn tree_add(&mut self, e: u128, lt: impl Fn(u128, u128) -> bool) {
        self.len += 1;
        self.tree.lower(slot_of(e), e, lt);
    }

    /// Adds entry `e` (its conversation absent, its inexactness counted): in the front
    /// slot if it precedes every entry of the tree, else in the tree.
    #[inline(always)]
    fn push_entry(&mut self, e: u128, lt: impl Fn(u128, u128) -> bool) {
        if self.front_item == ABSENT {
            if self.len == 0 || lt(e, self.tree.min()) {
                self.put_front(e);
                return;
            }
        } else if lt(e, self.front) {
            let old = self.take_front();
            self.put_front(e);
            self.tree_add(old, lt);
            return;
        }
        self.tree_add(e, lt);
    }

    /// Replaces the smallest entry by `e`, of the same conversation (inexactness
    /// counted).
    #[inline(always)]
    fn replace_min_entry(&mut self, e: u128, lt: impl Fn(u128, u128) -> bool) {
        if self.front_item == ABSENT {
            if self.inexact == 0 {
                self.tree.replay_min(slot_of(e), e);
            } else {
                self.tree.replay(slot_of(e), e, lt);
            }
        } else if self.len == 0 || lt(e, self.tree.min()) {
            self.front = e;
        } else {
            self.take_front();
            self.tree_add(e, lt);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    const CONVS: u32 = 12;

    /// One operation on the structure and on the model.
    #[derive(Clone, Copy, Debug)]
    enum Op {
        /// Adds the conversation, or changes its head tag if present.
        Set(u32, Tag),
        /// The smallest conversation's head tag changes.
        ReplaceMin(Tag),
        PopMin,
        Remove(u32),
    }

    fn ops(tag: impl Strategy<Value = Tag> + Clone) -> impl Strategy<Value = Vec<Op>> {
        let op = prop_oneof![
            4 => (0..CONVS, tag.clone()).prop_map(|(c, t)| Op::Set(c, t)),
            3 => tag.prop_map(Op::ReplaceMin),
            3 => Just(Op::PopMin),
            1 => (0..CONVS).prop_map(Op::Remove),
        ];
        prop::collection::vec(op, 0..400)
    }

    /// Few bids and sequence numbers: many equal bids, every key exact (the fast order).
    fn small_tag() -> impl Strategy<Value = Tag> + Clone {
        (0u128..20, 0u64..60).prop_map(|(b, s)| Tag::new(b, s))
    }

    /// Bids and sequence numbers at the ends of their ranges and around the bases'
    /// reach: clamped and saturated keys (the careful order), and rebases.
    fn wide_tag() -> impl Strategy<Value = Tag> + Clone {
        let bid = prop_oneof![
            Just(0u128),
            Just(u128::MAX),
            Just(u128::MAX - 1),
            (0u128..4).prop_map(|k| (1 << 64) - 2 + k),
            (0u128..4).prop_map(|k| (1 << 62) - 2 + k),
            (0u128..3, 0u128..3).prop_map(|(a, b)| (a << 70) + b),
            any::<u128>(),
        ];
        let seq = prop_oneof![
            Just(0u64),
            Just(u64::MAX),
            (0u64..4).prop_map(|k| (1 << 32) - 3 + k),
            0u64..8,
            any::<u64>(),
        ];
        (bid, seq).prop_map(|(b, s)| Tag::new(b, s))
    }

    /// Runs `ops` on the structure and on an ordered set of `(tag, conversation)` — the
    /// specification — with `exact` reading the model's head tags; compares the
    /// smallest conversation and the length after every operation and checks the structure.
    fn against_ordered_set(ops: &[Op]) -> Result<HeadTree, TestCaseError> {
        let mut h = HeadTree::new(CONVS as usize);
        let mut heads: Vec<Option<Tag>> = vec![None; CONVS as usize];
        let mut model: BTreeSet<(Tag, u32)> = BTreeSet::new();
        for &op in ops {
            match op {
                Op::Set(c, t) => {
                    if let Some(old) = heads[c as usize].replace(t) {
                        model.remove(&(old, c));
                    }
                    model.insert((t, c));
                    let exact = |c: u32| heads[c as usize].expect("present");
                    h.set(c, t, &exact);
                }
                Op::ReplaceMin(t) => {
                    if let Some((_, c)) = model.pop_first() {
                        model.insert((t, c));
                        heads[c as usize] = Some(t);
                        let exact = |c: u32| heads[c as usize].expect("present");
                        h.replace_min(c, t, &exact);
                    }
                }
                Op::PopMin => {
                    let want = model.pop_first().map(|(_, c)| c);
                    prop_assert_eq!(h.peek(), want);
                    let exact = |c: u32| heads[c as usize].expect("present");
                    h.pop_min(&exact);
                    if let Some(c) = want {
                        heads[c as usize] = None;
                    }
                }
                Op::Remove(c) => {
                    let was = heads[c as usize].take();
                    if let Some(t) = was {
                        model.remove(&(t, c));
                    }
                    let exact = |c: u32| heads[c as usize].expect("present");
                    prop_assert_eq!(h.remove(c, &exact), was.is_some());
                }
            }
            let exact = |c: u32| heads[c as usize].expect("present");
            h.check(&exact).map_err(TestCaseError::fail)?;
            prop_assert_eq!(h.peek(), model.first().map(|&(_, c)| c));
            prop_assert_eq!(h.len(), model.len());
            let mut items: Vec<u32> = h.items().collect();
            items.sort_unstable();
            prop_assert_eq!(
                items,
                model
                    .iter()
                    .map(|&(_, c)| c)
                    .collect::<BTreeSet<_>>()
                    .into_iter()
                    .collect::<Vec<_>>()
            );
        }
        Ok(h)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        #[test]
        fn matches_an_ordered_set_with_small_tags(ops in ops(small_tag())) {
            against_ordered_set(&ops)?;
        }

        #[test]
        fn matches_an_ordered_set_with_wide_tags(ops in ops(wide_tag())) {
            against_ordered_set(&ops)?;
        }

        /// Mixed: mostly small tags, some at the ends (the fast and careful orders
        /// alternate as inexact keys come and go).
        #[test]
        fn matches_an_ordered_set_with_mixed_tags(
            ops in ops(prop_oneof![8 => small_tag(), 1 => wide_tag()])
        ) {
            against_ordered_set(&ops)?;
        }
    }

    /// Fair-queueing-like tags that drift far beyond both bases' reach (bids by 2^60 and
    /// sequence numbers by 2^27 per step): keys saturate and rebases bring them back,
    /// the order matching the model throughout. Rebases are lazy, so keys may still be
    /// inexact when the drift ends (one is, in this sequence); emptying the structure
    /// then brings the count of inexact keys back to zero.
    #[test]
    fn rebases_follow_drifting_tags() {
        let mut ops = Vec::new();
        let mut rng = crate::workload::Prng(0x2545_f491_4f6c_dd1d);
        let (mut bid, mut seq) = (0u128, 0u64);
        for step in 0..20_000u64 {
            let state = rng.next_u64();
            bid += 1 << 60;
            seq += 1 << 27;
            let t = Tag::new(bid + u128::from(state % 1000), seq + step);
            ops.push(match state % 4 {
                0 => Op::Set((state >> 8) as u32 % CONVS, t),
                1 | 2 => Op::ReplaceMin(t),
                _ => Op::PopMin,
            });
        }
        let drifted = against_ordered_set(&ops).expect("matches the model");
        assert!(drifted.bid_base > 0 && drifted.seq_base > 0, "rebased");
        assert!(drifted.inexact > 0, "inexact keys left by the drift");
        ops.extend((0..=CONVS).map(|_| Op::PopMin));
        let emptied = against_ordered_set(&ops).expect("matches the model");
        assert_eq!((emptied.len(), emptied.inexact), (0, 0));
    }
}
