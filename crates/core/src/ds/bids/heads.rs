//! The conversations with packets by the [`Tag`] at their head, smallest first, for
//! [`super::FastPerc`] (Keshav FQ's packet path) and for WFQ, SCFQ and STFQ
//! ([`crate::sched::pfq`]): a 4-ary min-heap whose entries are 16 bytes — a 96-bit key
//! that preserves the tags' order, and the conversation — with the exact tags consulted
//! only where two keys are equal.
//!
//! # Keys
//!
//! A tag `(bid, seq)` with its conversation is a 32-byte heap entry; 1 000 of them fill
//! a 32 KiB first-level cache. The heap stores instead `key = (hi, lo)`, 64 + 32 bits, relative
//! to two bases kept by the heap:
//!
//! * `hi = bid − bid_base + 1`, or 0 if `bid < bid_base`, or `u64::MAX − 1` if
//!   `bid − bid_base` exceeds `u64::MAX − 3`;
//! * `lo = seq − seq_base + 1`, or 0 if `seq < seq_base`, or `u32::MAX` if
//!   `seq − seq_base` exceeds `u32::MAX − 2`; and `lo` is 0 (resp. `u32::MAX`) whenever
//!   `hi` is 0 (resp. `u64::MAX − 1`).
//!
//! This map is monotone (non-decreasing) in the tag order, so a smaller key means a
//! smaller tag, and it is one-to-one on the keys that are neither clamped nor saturated
//! (*exact* keys). The heap orders entries by `(key, conversation)`, falling back to
//! `(tag, conversation)` — the tags read through the caller's `exact` function, the
//! FIFO heads — when two keys are equal. That order is exactly `(tag, conversation)`,
//! whatever the bases, so correctness never depends on the compression.
//!
//! The heap counts its inexact keys: while there is none, two different entries never
//! have equal keys and every comparison is one 128-bit comparison of entries (the
//! *fast* order); otherwise the comparisons check for equal keys (the *careful* order).
//! When a new key comes out inexact and at least as many keys have been computed since
//! the last **rebase** as there are entries (plus a constant), the bases are moved —
//! `bid_base` to 2^62 units below the smallest bid present, `seq_base` to the smallest
//! sequence number present — and every key is recomputed: O(n), amortised O(1) per key.
//! The order of the entries does not change (both maps are monotone), so no sift is
//! needed. In fair queueing the bids of the heads lie within a few packets' worth of
//! round number of each other, far inside `hi`'s 2^64 units (9 MB of round at
//! [`crate::sched::keshav::round::UNITS_PER_BYTE`]), and `lo` covers 4·10^9 packets.
//!
//! # Layout
//!
//! The heap array is a vector of 64-byte aligned nodes of four entries, the root in
//! slot 3 of node 0, so that the four children of heap index `i` are exactly node
//! `i + 1`: one cache line per level of a sift-down. Slots past the last entry hold
//! `u128::MAX`, which no entry precedes (an entry's `hi` is below `u64::MAX`), so that
//! every node's four children are compared without counting them.
//!
//! **The front slot.** An entry that precedes every entry of the heap when it is added
//! (a conversation that had no packet and now holds the smallest tag: in fair queueing,
//! a newly backlogged conversation with a small packet) is kept outside the array, in
//! the front slot, from where it is taken in O(1). The front entry, if any, precedes
//! every entry of the array; a new smaller entry pushes it into the array.
//!
//! # Cost
//!
//! O(log n) per insertion, removal or key change (n entries), O(1) for the front slot;
//! amortised O(1) per key for the rebases. No allocation after construction.
//!
//! # Verification
//!
//! Unit property tests against an ordered set of `(tag, conversation)`, with tags at
//! the ends of the `u128` range and sequence numbers spread beyond `u32` (inexact keys,
//! careful order, rebases), and small bases (the fast order); [`HeadHeap::check`]
//! checks the layout, the keys and the order after every operation.
//! `tests/bid_queues.rs` and `tests/keshav.rs` run [`super::FastPerc`], which uses it,
//! against the ordered-set model and the paper's structures; `tests/pfq.rs`,
//! `tests/keshav_fluid.rs` and `tests/service_order.rs` run WFQ, SCFQ and STFQ on it.

use super::Tag;

/// Not present.
const ABSENT: u32 = u32::MAX;
/// Present in the front slot.
const FRONT: u32 = u32::MAX - 1;
/// An empty slot (past the last entry, or the front slot when free): after every entry.
const EMPTY: u128 = u128::MAX;
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

/// Four entries: the children of one heap index, in one cache line.
#[derive(Clone, Copy, Debug)]
#[repr(align(64))]
struct Node([u128; 4]);

/// Conversations `0..capacity` by head tag. See the [module docs](self).
#[derive(Clone, Debug)]
pub struct HeadHeap {
    /// The heap array, four entries a node; heap index `i` in slot `(i + 3) % 4` of
    /// node `(i + 3) / 4`. An entry is `hi << 64 | lo << 32 | conversation`.
    nodes: Vec<Node>,
    /// Entries in the array.
    len: usize,
    /// Heap index of each conversation, or [`FRONT`], or [`ABSENT`].
    pos: Vec<u32>,
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

/// The careful order: by key, and by `(tag, conversation)` when the keys are equal.
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

/// Node and slot of heap index `i`.
#[inline(always)]
fn slot(i: usize) -> (usize, usize) {
    let p = i + 3;
    (p >> 2, p & 3)
}

impl HeadHeap {
    /// An empty heap for conversations `0..capacity`.
    pub fn new(capacity: usize) -> HeadHeap {
        HeadHeap {
            nodes: vec![Node([EMPTY; 4]); (capacity + 3).div_ceil(4) + 1],
            len: 0,
            pos: vec![ABSENT; capacity],
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
        self.pos[c as usize] != ABSENT
    }

    /// The conversation with the smallest head tag (smallest conversation on ties).
    #[inline]
    pub fn peek(&self) -> Option<u32> {
        if self.front_item != ABSENT {
            Some(self.front_item)
        } else if self.len > 0 {
            Some(item(self.get(0)))
        } else {
            None
        }
    }

    /// The conversations present, in no particular order.
    pub fn items(&self) -> impl Iterator<Item = u32> + '_ {
        let front = (self.front != EMPTY).then_some(item(self.front));
        front
            .into_iter()
            .chain((0..self.len).map(|i| item(self.get(i))))
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

    /// The smallest conversation's head tag is now `tag` (`exact` already gives it).
    #[inline]
    pub fn replace_min(&mut self, tag: Tag, exact: &impl Fn(u32) -> Tag) {
        let Some(c) = self.peek() else { return };
        let (e, inexact) = self.entry(c, tag, exact);
        if self.inexact != 0 {
            // The old entry is read after `entry`, which may have rebased it.
            let old = if self.front_item != ABSENT {
                self.front
            } else {
                self.get(0)
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
            self.remove_at(0, exact);
        }
    }

    /// Removes conversation `c` if present; returns whether it was.
    pub fn remove(&mut self, c: u32, exact: &impl Fn(u32) -> Tag) -> bool {
        match self.pos[c as usize] {
            ABSENT => false,
            FRONT => {
                self.pop_min(exact);
                true
            }
            p => {
                self.remove_at(p as usize, exact);
                true
            }
        }
    }

    /// Adds conversation `c` with head tag `tag`, or changes its head tag to `tag` if
    /// present (`exact` already gives it).
    pub fn set(&mut self, c: u32, tag: Tag, exact: &impl Fn(u32) -> Tag) {
        if self.peek() == Some(c) {
            self.replace_min(tag, exact);
        } else {
            self.remove(c, exact);
            self.push(c, tag, exact);
        }
    }

    /// Checks the layout, every key against `exact` and the current bases, the count of
    /// inexact keys, and the heap order by `(tag, conversation)`.
    pub fn check(&self, exact: &impl Fn(u32) -> Tag) -> Result<(), String> {
        let key_ok = |e: u128| e == self.key_bits(exact(item(e))) | u128::from(item(e));
        let order = |a: u128, b: u128| (exact(item(a)), item(a)) < (exact(item(b)), item(b));
        let mut inexact = 0;
        for i in 0..self.len {
            let e = self.get(i);
            if self.pos[item(e) as usize] as usize != i {
                return Err(format!("conversation {} not at its position {i}", item(e)));
            }
            if !key_ok(e) {
                return Err(format!(
                    "conversation {}: key differs from its tag",
                    item(e)
                ));
            }
            inexact += usize::from(is_inexact(e));
            if i > 0 && order(e, self.get((i - 1) / 4)) {
                return Err(format!("index {i} precedes its parent"));
            }
        }
        if (self.front == EMPTY) != (self.front_item == ABSENT)
            || (self.front != EMPTY && self.front_item != item(self.front))
        {
            return Err("front slot and its conversation disagree".into());
        }
        if self.front != EMPTY {
            let f = self.front;
            if self.pos[item(f) as usize] != FRONT || !key_ok(f) {
                return Err("front entry misplaced or mis-keyed".into());
            }
            inexact += usize::from(is_inexact(f));
            if self.len > 0 && !order(f, self.get(0)) {
                return Err("front entry after the root".into());
            }
        }
        if inexact != self.inexact {
            return Err(format!("{inexact} inexact keys, counted {}", self.inexact));
        }
        let present = self.pos.iter().filter(|&&p| p != ABSENT).count();
        if present != self.len() {
            return Err(format!(
                "{present} conversations placed, {} present",
                self.len()
            ));
        }
        let slots = 4 * self.nodes.len() - 3;
        if (self.len..slots).any(|i| self.get(i) != EMPTY) {
            return Err("a slot past the last entry is not empty".into());
        }
        Ok(())
    }

    /// `hi << 64 | lo << 32` of `tag` under the current bases.
    #[inline]
    fn key_bits(&self, tag: Tag) -> u128 {
        let hi = match tag.bid().checked_sub(self.bid_base) {
            None => return 0,
            Some(r) if r > u128::from(u64::MAX - 3) => {
                return (u128::from(SAT_HI) << 64) | (u128::from(SAT_LO) << 32);
            }
            Some(r) => r as u64 + 1,
        };
        let lo = match tag.seq().checked_sub(self.seq_base) {
            None => 0,
            Some(r) if r > u64::from(u32::MAX - 2) => SAT_LO,
            Some(r) => r as u32 + 1,
        };
        (u128::from(hi) << 64) | (u128::from(lo) << 32)
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

    /// [`HeadHeap::entry`] for a key that is inexact under the current bases.
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
        let rekey = |h: &Self, e: u128| h.key_bits(exact(item(e))) | u128::from(item(e));
        self.inexact = 0;
        if self.front != EMPTY {
            self.front = rekey(self, self.front);
            self.inexact += usize::from(is_inexact(self.front));
        }
        for i in 0..self.len {
            let e = rekey(self, self.get(i));
            self.inexact += usize::from(is_inexact(e));
            let (n, s) = slot(i);
            self.nodes[n].0[s] = e;
        }
    }

    /// Puts entry `e` in the (free) front slot.
    #[inline(always)]
    fn put_front(&mut self, e: u128) {
        self.front = e;
        self.front_item = item(e);
        self.pos[item(e) as usize] = FRONT;
    }

    /// Empties the (occupied) front slot; returns its entry.
    #[inline(always)]
    fn take_front(&mut self) -> u128 {
        self.front_item = ABSENT;
        core::mem::replace(&mut self.front, EMPTY)
    }

    /// Forgets entry `e`, taken out of the heap.
    #[inline]
    fn forget(&mut self, e: u128) {
        self.pos[item(e) as usize] = ABSENT;
        if self.inexact != 0 {
            self.inexact -= usize::from(is_inexact(e));
        }
    }

    #[inline(always)]
    fn get(&self, i: usize) -> u128 {
        let (n, s) = slot(i);
        self.nodes[n].0[s]
    }

    /// Puts entry `e` at heap index `i`.
    #[inline(always)]
    fn place(&mut self, i: usize, e: u128) {
        let (n, s) = slot(i);
        self.nodes[n].0[s] = e;
        self.pos[item(e) as usize] = i as u32;
    }

    /// Adds entry `e` (its conversation absent, its inexactness counted): in the front
    /// slot if it precedes every entry of the array, else in the array.
    #[inline(always)]
    fn push_entry(&mut self, e: u128, lt: impl Fn(u128, u128) -> bool) {
        if self.front_item == ABSENT {
            if self.len == 0 || lt(e, self.get(0)) {
                self.put_front(e);
                return;
            }
        } else if lt(e, self.front) {
            let old = self.take_front();
            self.put_front(e);
            self.len += 1;
            self.sift_up(self.len - 1, old, &lt);
            return;
        }
        self.len += 1;
        self.sift_up(self.len - 1, e, &lt);
    }

    /// Replaces the smallest entry by `e`, of the same conversation (inexactness
    /// counted).
    #[inline(always)]
    fn replace_min_entry(&mut self, e: u128, lt: impl Fn(u128, u128) -> bool) {
        if self.front_item == ABSENT {
            self.sift_down(0, e, &lt);
        } else if self.len == 0 || lt(e, self.get(0)) {
            self.front = e;
        } else {
            self.take_front();
            self.len += 1;
            self.sift_up(self.len - 1, e, &lt);
        }
    }

    /// Removes the entry at heap index `i`.
    #[inline]
    fn remove_at(&mut self, i: usize, exact: &impl Fn(u32) -> Tag) {
        let gone = self.get(i);
        self.forget(gone);
        self.len -= 1;
        let last = self.get(self.len);
        let (n, s) = slot(self.len);
        self.nodes[n].0[s] = EMPTY;
        if i < self.len {
            if self.inexact == 0 {
                self.refill(i, last, fast);
            } else {
                self.refill(i, last, careful(exact));
            }
        }
    }

    /// Puts `last` into the hole at `i` (the removed entry's conversation is not
    /// compared: `exact` may no longer know it).
    #[inline(always)]
    fn refill(&mut self, i: usize, last: u128, lt: impl Fn(u128, u128) -> bool) {
        if i > 0 && lt(last, self.get((i - 1) / 4)) {
            self.sift_up(i, last, &lt);
        } else {
            self.sift_down(i, last, &lt);
        }
    }

    /// Puts `e` at heap index `i` or above, moving the entries it precedes down.
    #[inline(always)]
    fn sift_up(&mut self, mut i: usize, e: u128, lt: &impl Fn(u128, u128) -> bool) {
        while i > 0 {
            let parent = (i - 1) / 4;
            let up = self.get(parent);
            if !lt(e, up) {
                break;
            }
            self.place(i, up);
            i = parent;
        }
        self.place(i, e);
    }

    /// Puts `e` at heap index `i` or below, moving the smallest children up.
    #[inline(always)]
    fn sift_down(&mut self, mut i: usize, e: u128, lt: &impl Fn(u128, u128) -> bool) {
        let len = self.len;
        loop {
            let first = 4 * i + 1;
            if first >= len {
                break;
            }
            // Node i + 1 holds the four children (the empty slots after the last entry
            // precede nothing).
            let kids = &self.nodes[i + 1].0;
            let a = usize::from(lt(kids[1], kids[0]));
            let b = 2 + usize::from(lt(kids[3], kids[2]));
            let k = if lt(kids[b], kids[a]) { b } else { a };
            let m = kids[k];
            if !lt(m, e) {
                break;
            }
            self.place(i, m);
            i = first + k;
        }
        self.place(i, e);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    const CONVS: u32 = 12;

    /// One operation on the heap and on the model.
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

    /// Runs `ops` on a heap and on an ordered set of `(tag, conversation)` — the
    /// specification — with `exact` reading the model's head tags; compares the
    /// smallest conversation and the length after every operation and checks the heap.
    fn against_ordered_set(ops: &[Op]) -> Result<HeadHeap, TestCaseError> {
        let mut h = HeadHeap::new(CONVS as usize);
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
                    if let Some((old, c)) = model.pop_first() {
                        model.insert((t, c));
                        heads[c as usize] = Some(t);
                        let _ = old;
                    }
                    let exact = |c: u32| heads[c as usize].expect("present");
                    h.replace_min(t, &exact);
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
    /// sequence numbers by 2^27 per step): keys saturate, rebases bring them back, and
    /// at the end every key is exact again.
    #[test]
    fn rebases_follow_drifting_tags() {
        let mut ops = Vec::new();
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let (mut bid, mut seq) = (0u128, 0u64);
        for step in 0..20_000u64 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            bid += 1 << 60;
            seq += 1 << 27;
            let t = Tag::new(bid + u128::from(state % 1000), seq + step);
            ops.push(match state % 4 {
                0 => Op::Set((state >> 8) as u32 % CONVS, t),
                1 | 2 => Op::ReplaceMin(t),
                _ => Op::PopMin,
            });
        }
        let h = against_ordered_set(&ops).expect("matches the model");
        assert!(h.bid_base > 0 && h.seq_base > 0, "rebased");
        assert_eq!(h.inexact, 0, "every key exact after the last rebase");
    }
}
