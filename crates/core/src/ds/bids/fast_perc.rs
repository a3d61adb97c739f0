//! PERC's layout for the scheduler's packet path, uncounted: one FIFO per
//! conversation, the conversations with packets in a min-heap by the tag at their
//! **head** and in a max-heap by the tag at their **tail** — as [`super::perc`], whose
//! binary heaps and counted exchanges the cost study measures, but in the layout that
//! runs fastest.
//!
//! * The min-heap's role is played by a [`HeadTree`]: a 4-ary winner tree with one slot
//!   per conversation, 16-byte entries (a compact key that keeps the tags' order, the
//!   exact tags read from the FIFO heads only where keys are equal), the four children
//!   of a node in one cache line, and a front slot that takes a newly backlogged
//!   conversation holding the smallest tag in O(1). The max-heap is an
//!   [`IndexedHeap`] of tags (4-ary). Half the levels of a binary heap, and no counter.
//! * The max-heap is kept only while drops are recent. Most insertions raise their
//!   conversation's tail, and keeping the max-heap ordered costs as much as the
//!   min-heap's work, yet only an overflow drop reads it. So after more insertions
//!   without a drop than there are conversations with packets, the max-heap is
//!   emptied and no longer kept; the next drop rebuilds it from the FIFOs' tails
//!   (`k` insertions, `k` those conversations) and it is kept again. Each rebuild
//!   follows at least `k` insertions since the previous one (a conversation gains
//!   packets only by an insertion), so its O(k log k) is amortised O(log k) per
//!   insertion; a single drop after a quiet period pays the whole rebuild.
//! * [`BidQueue::ops`] is always zero: this structure is not one of the paper's four
//!   and is never replayed in the cost study; Keshav FQ runs it on the packet path
//!   unless told to count (`count_operations`).
//!
//! Same order, same results: the smallest tag is some conversation's head, the largest
//! some conversation's tail, so `pop_min` and `pop_max` return exactly what the other
//! structures return (`tests/bid_queues.rs`, `tests/keshav.rs`). A tag smaller than its
//! conversation's tail (which fair queueing never produces) is placed in order by
//! scanning the FIFO back from its tail, so that the structure stays correct on any
//! input. Keshav FQ, whose bids grow within a conversation, inserts with
//! [`BidQueue::insert_newest`], which appends without comparing with the tail: an
//! arrival then does not read the item of its conversation's previous packet, most
//! often out of the first cache level by then (`BENCHMARKS.md`, Keshav's sixth pass).
//!
//! Cost: O(log N) per operation, N the conversations (the heads' tree walks the
//! depth of its capacity; the max-heap's operations are in the conversations with
//! packets), amortised for the drops, see above, and for the heads' rebases, see
//! [`HeadTree`].

use core::cmp::Reverse;
use std::collections::VecDeque;

use super::heads::HeadTree;
use super::perc::Item;
use super::{BidQueue, Entry, Ops, Tag};
use crate::ds::IndexedHeap;

/// PERC, uncounted. See the [module docs](self).
#[derive(Debug)]
pub struct FastPerc<V> {
    queues: Vec<VecDeque<Item<V>>>,
    /// Conversations with packets by head tag, smallest first.
    heads: HeadTree,
    /// Conversations with packets by tail tag, largest first, while `tails_kept`;
    /// empty otherwise.
    tails: IndexedHeap<Reverse<Tag>>,
    /// Whether `tails` is kept (drops were recent).
    tails_kept: bool,
    /// Insertions since the last drop, while `tails_kept`.
    quiet: usize,
    len: usize,
}

/// The head tag of each conversation with packets (the exact tags behind `heads`).
#[inline(always)]
fn head_tag<V>(queues: &[VecDeque<Item<V>>]) -> impl Fn(u32) -> Tag + '_ {
    |c| {
        queues[c as usize]
            .front()
            .expect("a conversation in the heaps has packets")
            .tag
    }
}

impl<V> FastPerc<V> {
    /// Removes the head (`front`; `c` must then be the conversation with the smallest
    /// head) or tail of conversation `c`, which has packets, and restores both heaps.
    #[inline]
    fn take(&mut self, c: u32, front: bool) -> Entry<V> {
        let q = &mut self.queues[c as usize];
        let item = if front { q.pop_front() } else { q.pop_back() };
        let item = item.expect("a conversation in the heaps has packets");
        // Read before the length changes: a store in between would make the compiler
        // load the FIFO's header again.
        let next = if front { q.front() } else { q.back() }.map(|i| i.tag);
        self.len -= 1;
        let exact = head_tag(&self.queues);
        match next {
            Some(next) if front => self.heads.replace_min(c, next, &exact),
            Some(next) => {
                if self.tails_kept {
                    self.tails.set(c, Reverse(next));
                }
            }
            None => {
                if front {
                    self.heads.pop_min(&exact);
                } else {
                    self.heads.remove(c, &exact);
                }
                if self.tails_kept {
                    self.tails.remove(c);
                }
            }
        }
        item.into_entry(c)
    }

    /// Inserts `e`, whose tag is not above its conversation's tail, in order inside the
    /// FIFO (never in fair queueing: see the [module docs](self)).
    #[cold]
    fn insert_inside(&mut self, e: Entry<V>) {
        let (c, tag) = (e.conv, e.tag);
        let q = &mut self.queues[c as usize];
        self.len += 1;
        let at = q.partition_point(|i| i.tag < tag);
        q.insert(at, Item::of(e));
        if at == 0 {
            self.heads.set(c, tag, &head_tag(&self.queues));
        }
    }

    /// After an insertion at the tail of conversation `c`'s FIFO: keeps the max-heap,
    /// or stops keeping it after a quiet period (see the [module docs](self)).
    #[inline(always)]
    fn tail_rose(&mut self, c: u32) {
        if self.tails_kept {
            self.keep_tail(c);
        }
    }

    /// [`FastPerc::tail_rose`] while the max-heap is kept. It reads the new tail's tag
    /// from the FIFO (just written, in the first cache level): a tag passed to this call
    /// would be written to the stack on every insertion, kept or not.
    #[inline(never)]
    fn keep_tail(&mut self, c: u32) {
        self.quiet += 1;
        if self.quiet > self.heads.len() {
            self.tails.clear();
            self.tails_kept = false;
        } else {
            let tail = self.queues[c as usize]
                .back()
                .expect("a conversation just appended to has packets");
            self.tails.set_inlined(c, Reverse(tail.tag));
        }
    }

    /// Makes the max-heap hold every conversation with packets by its tail again.
    #[cold]
    fn rebuild_tails(&mut self) {
        for c in self.heads.items() {
            let tail = self.queues[c as usize]
                .back()
                .expect("a conversation in the heaps has packets");
            self.tails.set(c, Reverse(tail.tag));
        }
        self.tails_kept = true;
    }
}

impl<V> BidQueue<V> for FastPerc<V> {
    const NAME: &'static str = "PERC (uncounted)";
    const COUNTED: bool = false;

    fn new(conversations: usize, _packets: usize) -> Self {
        FastPerc {
            queues: (0..conversations).map(|_| VecDeque::new()).collect(),
            heads: HeadTree::new(conversations),
            tails: IndexedHeap::new(conversations),
            tails_kept: false,
            quiet: 0,
            len: 0,
        }
    }

    /// Adds `e`; its conversation must be below the `conversations` of
    /// [`BidQueue::new`] (Keshav FQ's are its classes).
    #[inline]
    fn insert(&mut self, e: Entry<V>) {
        let q = &self.queues[e.conv as usize];
        match q.back() {
            Some(tail) if tail.tag >= e.tag => self.insert_inside(e),
            _ => self.insert_newest(e),
        }
    }

    /// Appends `e` to its conversation's FIFO without reading the FIFO's tail (the
    /// caller's guarantee, checked in debug builds).
    #[inline]
    fn insert_newest(&mut self, e: Entry<V>) {
        let (c, tag) = (e.conv, e.tag);
        let q = &mut self.queues[c as usize];
        debug_assert!(q.back().is_none_or(|t| t.tag < tag), "not the newest");
        self.len += 1;
        // Grow before building the item, so that the item is not kept across the
        // growth call inside `push_back` (on the stack, then copied).
        if q.len() == q.capacity() {
            q.reserve(1);
        }
        let was_empty = q.is_empty();
        q.push_back(Item::of(e));
        if was_empty {
            self.heads.push(c, tag, &head_tag(&self.queues));
        }
        self.tail_rose(c);
    }

    #[inline]
    fn pop_min(&mut self) -> Option<Entry<V>> {
        let c = self.heads.peek()?;
        Some(self.take(c, true))
    }

    fn pop_max(&mut self) -> Option<Entry<V>> {
        if !self.tails_kept {
            self.rebuild_tails();
        }
        self.quiet = 0;
        let (c, _) = self.tails.peek()?;
        Some(self.take(c, false))
    }

    fn pop_newest_of(&mut self, conv: u32) -> Option<Entry<V>> {
        self.heads.contains(conv).then(|| self.take(conv, false))
    }

    fn len(&self) -> usize {
        self.len
    }

    fn ops(&self) -> Ops {
        Ops::default()
    }

    fn check(&self) -> Result<(), String> {
        self.heads.check(&head_tag(&self.queues))?;
        let mut n = 0;
        for (c, q) in self.queues.iter().enumerate() {
            let c = c as u32;
            n += q.len();
            if q.iter().zip(q.iter().skip(1)).any(|(a, b)| a.tag >= b.tag) {
                return Err(format!("conversation {c}: FIFO out of order"));
            }
            let tail = q.back().map(|i| Reverse(i.tag)).filter(|_| self.tails_kept);
            if self.heads.contains(c) == q.is_empty() || self.tails.key_of(c) != tail {
                return Err(format!("conversation {c}: heap keys differ from its FIFO"));
            }
        }
        if n != self.len {
            return Err(format!("{n} packets in FIFOs, length {}", self.len));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    const CONVS: u32 = 8;

    #[derive(Clone, Copy, Debug)]
    enum Op {
        Insert(u32, Tag),
        PopMin,
        PopMax,
        PopNewest(u32),
    }

    /// Tags far apart (bids across the whole `u128` range, sequence numbers beyond
    /// `u32`), so that the heads tree's keys saturate and clamp and its careful order
    /// and rebases run, reading the exact tags from the FIFOs.
    fn wide_tag() -> impl Strategy<Value = Tag> {
        let bid = prop_oneof![
            (0u128..4, 0u128..3).prop_map(|(a, b)| (a << 100) + b),
            (0u128..3).prop_map(|b| u128::MAX - b),
            0u128..5,
            any::<u128>(),
        ];
        let seq = prop_oneof![0u64..6, (0u64..3).prop_map(|k| (1 << 33) + k), any::<u64>()];
        (bid, seq).prop_map(|(b, s)| Tag::new(b, s))
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (0..CONVS, wide_tag()).prop_map(|(c, t)| Op::Insert(c, t)),
            2 => Just(Op::PopMin),
            1 => Just(Op::PopMax),
            1 => (0..CONVS).prop_map(Op::PopNewest),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        /// Every operation against an ordered set of `(tag, conversation)`, the
        /// invariants checked after each (equal tags are skipped: the paper's order
        /// needs distinct sequence numbers).
        #[test]
        fn matches_an_ordered_set_with_wide_tags(ops in prop::collection::vec(op(), 0..300)) {
            let mut q: FastPerc<u64> = FastPerc::new(CONVS as usize, 0);
            let mut model: BTreeSet<(Tag, u32)> = BTreeSet::new();
            for (n, op) in ops.into_iter().enumerate() {
                match op {
                    Op::Insert(c, tag) => {
                        if model.iter().any(|&(t, _)| t == tag) {
                            continue;
                        }
                        // Above every tag of its conversation: either way in.
                        let newest = model.iter().all(|&(t, d)| d != c || t < tag);
                        model.insert((tag, c));
                        let e = Entry { tag, conv: c, size: 1, value: n as u64 };
                        if newest && n % 2 == 0 {
                            q.insert_newest(e);
                        } else {
                            q.insert(e);
                        }
                    }
                    Op::PopMin => {
                        let want = model.pop_first();
                        prop_assert_eq!(q.pop_min().map(|e| (e.tag, e.conv)), want);
                    }
                    Op::PopMax => {
                        let want = model.pop_last();
                        prop_assert_eq!(q.pop_max().map(|e| (e.tag, e.conv)), want);
                    }
                    Op::PopNewest(c) => {
                        let want = model.iter().rev().find(|&&(_, d)| d == c).copied();
                        if let Some(w) = want {
                            model.remove(&w);
                        }
                        prop_assert_eq!(q.pop_newest_of(c).map(|e| (e.tag, e.conv)), want);
                    }
                }
                prop_assert_eq!(q.len(), model.len());
                q.check().map_err(TestCaseError::fail)?;
            }
        }
    }
}
