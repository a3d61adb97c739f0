//! HTB's wait queue of one level (Linux `wait_pq`): the classes that are not green, each
//! keyed by the instant (ns) its mode next changes, and the change due first.
//!
//! A calendar. Time is cut into slots of `2^shift` ns; the *current* slot starts at
//! `start`, and the `slots − 1` slots after it form a ring of intrusive lists, one per
//! slot. A class is kept
//!
//! * in `due`, a small binary heap, if its key falls in the current slot or before it
//!   (a change already due);
//! * in the list of its key's slot if that lies within the ring;
//! * in `later`, a binary heap, if beyond.
//!
//! Where an item is (its [`Node`]: key, list or heap, neighbours or index in the heap)
//! is kept by the caller beside the item's other data and handed to every call
//! ([`Nodes`]); HTB keeps it in the class's record, in the line a mode change reads
//! anyway, so the queue has no per-item array of its own.
//!
//! Every key in `due` is below every key in the lists, and those below every key in
//! `later`, so the change due first is the top of `due`. When `due` runs empty and
//! the first occupied slot (found with an [`IdSet`]) has begun by `now`, that slot
//! becomes the current one: its list moves into `due`, and the classes of `later` that
//! the ring now covers move into it. Each class thus costs O(1) on entering the ring, a
//! move into `due` (a heap holding about one class when slots are as narrow as the
//! changes are frequent), and at most one move out of `later`: O(log n) at worst, as a
//! heap, and close to O(1) when the ring covers the usual delays.
//!
//! The slots are sized at build time ([`WaitQueue::for_level`]): one slot about the
//! link's transmission time of an MTU (mode changes come about once a packet), and
//! enough of them to cover the delay an MTU-sized packet costs the slowest class of the
//! level, up to four per class (more would cost memory for classes that rarely wait
//! that long; those wait in `later`).
//!
//! The order is exact: the smallest key first, and among equal keys the smallest item
//! (HTB's items are class ids, and among the classes of one level the id order is
//! Linux's class-id order; Linux orders equal keys by insertion, see the HTB module's
//! *Deviations*).

use crate::ds::IdSet;
use crate::units::{Bytes, Rate};

/// No item (the end of a list).
const NIL: u32 = u32::MAX;

/// Where an item is (the value of [`Node::slot`] when not in a list's slot).
const ABSENT: u32 = u32::MAX;
/// In [`WaitQueue::due`].
const DUE: u32 = u32::MAX - 1;
/// In [`WaitQueue::later`].
const LATER: u32 = u32::MAX - 2;

/// Fewest slots of a level's ring.
const MIN_SLOTS: usize = 64;

/// Where one item of a [`WaitQueue`] is (24 bytes), kept by the caller ([`Nodes`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct Node {
    /// The key, if in a list.
    key: u64,
    /// The slot of its list, or [`DUE`], [`LATER`], [`ABSENT`].
    slot: u32,
    /// Next item in the same list, or [`NIL`]; in a heap, the item's index there.
    next: u32,
    /// Previous item in the same list, or [`NIL`].
    prev: u32,
}

impl Node {
    /// The node of an item in no queue.
    pub(super) const ABSENT: Node = Node {
        key: 0,
        slot: ABSENT,
        next: NIL,
        prev: NIL,
    };
}

/// The nodes of a queue's items, by item.
pub(super) trait Nodes {
    /// The node of `item`.
    fn node(&mut self, item: u32) -> &mut Node;
}

impl Nodes for [Node] {
    #[inline]
    fn node(&mut self, item: u32) -> &mut Node {
        &mut self[item as usize]
    }
}

/// A binary min-heap of `(key, item)` whose entries' indices are kept in the items'
/// nodes ([`Node::next`]), so that any item can be removed or re-keyed.
#[derive(Clone, Debug)]
struct Heap {
    entries: Vec<(u64, u32)>,
}

impl Heap {
    /// An empty heap for up to `capacity` items (no allocation below that).
    fn new(capacity: usize) -> Heap {
        Heap {
            entries: Vec::with_capacity(capacity),
        }
    }

    /// The smallest entry.
    #[inline]
    fn first(&self) -> Option<(u64, u32)> {
        self.entries.first().copied()
    }

    /// Adds `item`, absent, with `key`.
    #[inline]
    fn push<N: Nodes + ?Sized>(&mut self, nodes: &mut N, item: u32, key: u64) {
        let at = self.entries.len();
        self.entries.push((key, item));
        self.up(nodes, at, (key, item));
    }

    /// Removes the entry at index `at`.
    #[inline]
    fn remove<N: Nodes + ?Sized>(&mut self, nodes: &mut N, at: usize) {
        let last = self.entries.pop().expect("an item in the heap");
        if at < self.entries.len() {
            self.entries[at] = last;
            self.settle(nodes, at, last);
        }
    }

    /// Changes the key of the entry at index `at`.
    #[inline]
    fn rekey<N: Nodes + ?Sized>(&mut self, nodes: &mut N, at: usize, key: u64) {
        let entry = (key, self.entries[at].1);
        self.entries[at] = entry;
        self.settle(nodes, at, entry);
    }

    /// Moves `entry`, at index `at`, up or down to its place.
    #[inline]
    fn settle<N: Nodes + ?Sized>(&mut self, nodes: &mut N, at: usize, entry: (u64, u32)) {
        if at > 0 && entry < self.entries[(at - 1) / 2] {
            self.up(nodes, at, entry);
        } else {
            self.down(nodes, at, entry);
        }
    }

    /// Moves `entry`, at index `at`, up to its place.
    #[inline(always)]
    fn up<N: Nodes + ?Sized>(&mut self, nodes: &mut N, at: usize, entry: (u64, u32)) {
        let mut at = at;
        while at > 0 {
            let parent = (at - 1) / 2;
            let above = self.entries[parent];
            if above <= entry {
                break;
            }
            self.entries[at] = above;
            nodes.node(above.1).next = at as u32;
            at = parent;
        }
        self.entries[at] = entry;
        nodes.node(entry.1).next = at as u32;
    }

    /// Moves `entry`, at index `at`, down to its place.
    fn down<N: Nodes + ?Sized>(&mut self, nodes: &mut N, at: usize, entry: (u64, u32)) {
        let len = self.entries.len();
        let mut at = at;
        loop {
            let first = 2 * at + 1;
            if first >= len {
                break;
            }
            let child = if first + 1 < len && self.entries[first + 1] < self.entries[first] {
                first + 1
            } else {
                first
            };
            let below = self.entries[child];
            if entry <= below {
                break;
            }
            self.entries[at] = below;
            nodes.node(below.1).next = at as u32;
            at = child;
        }
        self.entries[at] = entry;
        nodes.node(entry.1).next = at as u32;
    }
}

/// The wait queue of one level: items (HTB: the ids of the level's classes), each
/// present at most once with a `u64` key, their [`Node`]s kept by the caller. See the
/// [module docs](self).
#[derive(Clone, Debug)]
pub(super) struct WaitQueue {
    /// `log2` of a slot's width in ns.
    shift: u32,
    /// Number of slots minus one (a power of two minus one).
    mask: usize,
    /// Width of a slot, ns: `2^shift`.
    width: u64,
    /// Width of the ring, ns: `(mask + 1) · width`, or `u64::MAX` if wider.
    span: u64,
    /// Start of the current slot (a multiple of the width), ns.
    start: u64,
    /// The current slot's index in the ring.
    cur: usize,
    /// Items whose keys lie before the next slot.
    due: Heap,
    /// Items whose keys lie at or past the ring's end, `start + (mask + 1) << shift`.
    later: Heap,
    /// First item of each slot's list, or [`NIL`].
    head: Vec<u32>,
    /// The slots whose lists are not empty.
    occupied: IdSet,
    /// No key in the lists or in `later` is below it, so nothing there is due before
    /// (spares the search for the next slot while waiting for it).
    horizon: u64,
}

impl WaitQueue {
    /// An empty queue for up to `capacity` items at once with `slots` slots (rounded up
    /// to a power of two) of `2^shift` ns each.
    pub(super) fn new(capacity: usize, slots: usize, shift: u32) -> WaitQueue {
        let slots = slots.max(2).next_power_of_two();
        WaitQueue {
            shift,
            mask: slots - 1,
            width: 1 << shift,
            span: u64::try_from((slots as u128) << shift).unwrap_or(u64::MAX),
            start: 0,
            cur: 0,
            due: Heap::new(capacity),
            later: Heap::new(capacity),
            head: vec![NIL; slots],
            occupied: IdSet::new(slots),
            horizon: u64::MAX,
        }
    }

    /// The queue of a level whose classes have the assured rates `rates`, under a link
    /// of `link` (see the [module docs](self) for the sizes).
    pub(super) fn for_level(rates: &[Rate], link: Rate, mtu: Bytes) -> WaitQueue {
        // One slot: the link's time for an MTU, rounded down to a power of two.
        let width = link.tx_time(mtu).0.max(1);
        let shift = width.ilog2();
        // The longest usual wait: an MTU at the slowest rate.
        let span = rates.iter().map(|r| r.tx_time(mtu).0).max().unwrap_or(0);
        let most = (4 * rates.len()).max(MIN_SLOTS);
        let wanted = usize::try_from(span >> shift).unwrap_or(usize::MAX);
        WaitQueue::new(rates.len(), wanted.clamp(MIN_SLOTS, most), shift)
    }

    /// Whether `key` lies before the next slot (it is due once the current slot has
    /// begun).
    #[inline]
    fn is_due(&self, key: u64) -> bool {
        key < self.start || key - self.start < self.width
    }

    /// Puts absent `item` where `key` belongs.
    #[inline]
    fn place<N: Nodes + ?Sized>(&mut self, nodes: &mut N, item: u32, key: u64) {
        if self.is_due(key) {
            nodes.node(item).slot = DUE;
            self.due.push(nodes, item, key);
        } else if key - self.start < self.span {
            self.horizon = self.horizon.min(key);
            let s = (key >> self.shift) as usize & self.mask;
            let first = self.head[s];
            *nodes.node(item) = Node {
                key,
                slot: s as u32,
                next: first,
                prev: NIL,
            };
            if first == NIL {
                self.occupied.insert(s as u32);
            } else {
                nodes.node(first).prev = item;
            }
            self.head[s] = item;
        } else {
            self.horizon = self.horizon.min(key);
            nodes.node(item).slot = LATER;
            self.later.push(nodes, item, key);
        }
    }

    /// Removes `item` if present.
    #[inline]
    pub(super) fn remove<N: Nodes + ?Sized>(&mut self, nodes: &mut N, item: u32) {
        let node = *nodes.node(item);
        match node.slot {
            ABSENT => return,
            DUE => self.due.remove(nodes, node.next as usize),
            LATER => self.later.remove(nodes, node.next as usize),
            s => {
                let (p, n) = (node.prev, node.next);
                if p == NIL {
                    self.head[s as usize] = n;
                    if n == NIL {
                        self.occupied.remove(s);
                    }
                } else {
                    nodes.node(p).next = n;
                }
                if n != NIL {
                    nodes.node(n).prev = p;
                }
            }
        }
        nodes.node(item).slot = ABSENT;
    }

    /// Inserts `item` with `key`, or changes its key if present.
    #[inline]
    pub(super) fn set<N: Nodes + ?Sized>(&mut self, nodes: &mut N, item: u32, key: u64) {
        let node = *nodes.node(item);
        match node.slot {
            DUE if self.is_due(key) => {
                self.due.rekey(nodes, node.next as usize, key);
                return;
            }
            ABSENT => {}
            _ => self.remove(nodes, item),
        }
        self.place(nodes, item, key);
    }

    /// The item with the smallest key (the smallest item among equal keys) and its key,
    /// if that key is at most `now`.
    #[inline]
    pub(super) fn first_due<N: Nodes + ?Sized>(
        &mut self,
        nodes: &mut N,
        now: u64,
    ) -> Option<(u32, u64)> {
        loop {
            if let Some((key, item)) = self.due.first() {
                return (key <= now).then_some((item, key));
            }
            if now < self.horizon || !self.advance(nodes, now) {
                return None;
            }
        }
    }

    /// Removes the item [`WaitQueue::first_due`] just returned.
    #[inline]
    pub(super) fn remove_first<N: Nodes + ?Sized>(&mut self, nodes: &mut N) {
        let (_, item) = self.due.first().expect("an item was due");
        self.due.remove(nodes, 0);
        nodes.node(item).slot = ABSENT;
    }

    /// With `due` empty, makes the slot of the smallest key the current one if it has
    /// begun by `now`; returns whether it did (then `due` is not empty). Either way,
    /// `horizon` is brought up to date.
    fn advance<N: Nodes + ?Sized>(&mut self, nodes: &mut N, now: u64) -> bool {
        let next = self
            .occupied
            .next_from(self.cur as u32 + 1)
            .or_else(|| self.occupied.first());
        let (cur, start) = match next {
            Some(s) => {
                let s = s as usize;
                let ahead = (s.wrapping_sub(self.cur) & self.mask) as u64;
                (s, self.start + (ahead << self.shift))
            }
            None => match self.later.first() {
                // The ring is empty: it moves to the first key beyond.
                Some((key, _)) => (
                    (key >> self.shift) as usize & self.mask,
                    key >> self.shift << self.shift,
                ),
                None => {
                    self.horizon = u64::MAX;
                    return false;
                }
            },
        };
        if start > now {
            self.horizon = start;
            return false;
        }
        // Every key outside `due` will be past the new current slot.
        self.horizon = start.saturating_add(self.width);
        self.cur = cur;
        self.start = start;
        let mut item = self.head[cur];
        if item != NIL {
            self.head[cur] = NIL;
            self.occupied.remove(cur as u32);
            while item != NIL {
                let node = nodes.node(item);
                node.slot = DUE;
                let (key, next) = (node.key, node.next);
                self.due.push(nodes, item, key);
                item = next;
            }
        }
        // Keys in `later` are at or past `start`.
        while let Some((key, item)) = self.later.first() {
            if key - self.start >= self.span {
                break;
            }
            self.later.remove(nodes, 0);
            self.place(nodes, item, key);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    /// One operation on the queue and on the model.
    #[derive(Clone, Copy, Debug)]
    enum Op {
        /// Set an item's key to `now + delay`, or below `now` if `back`.
        Set(u32, u64, bool),
        Remove(u32),
        /// Advance the clock, ask what is due, and remove it if `take` is 1 (by
        /// `remove`) or 2 (by `remove_first`).
        Due(u64, u8),
    }

    fn op(items: u32, span: u64) -> impl Strategy<Value = Op> {
        prop_oneof![
            6 => (0..items, 0..span, prop::bool::weighted(0.05))
                .prop_map(|(i, d, b)| Op::Set(i, d, b)),
            1 => (0..items).prop_map(Op::Remove),
            6 => (0..span / 4, 0u8..3).prop_map(|(d, t)| Op::Due(d, t)),
        ]
    }

    /// Runs `ops` on a queue of `slots` slots of `2^shift` ns and on an ordered set of
    /// `(key, item)`: what is due is the set's first entry if its key is at most `now`.
    fn against_ordered_set(
        items: u32,
        slots: usize,
        shift: u32,
        start: u64,
        ops: Vec<Op>,
    ) -> Result<(), TestCaseError> {
        let mut q = WaitQueue::new(items as usize, slots, shift);
        let mut nodes = vec![Node::ABSENT; items as usize];
        let nodes = &mut nodes[..];
        let mut model: BTreeSet<(u64, u32)> = BTreeSet::new();
        let mut keys = vec![None; items as usize];
        let mut now = start;
        for op in ops {
            match op {
                Op::Set(item, delay, back) => {
                    let key = if back {
                        now.saturating_sub(delay)
                    } else {
                        now.saturating_add(delay)
                    };
                    if let Some(old) = keys[item as usize].replace(key) {
                        model.remove(&(old, item));
                    }
                    model.insert((key, item));
                    q.set(nodes, item, key);
                }
                Op::Remove(item) => {
                    if let Some(old) = keys[item as usize].take() {
                        model.remove(&(old, item));
                    }
                    q.remove(nodes, item);
                }
                Op::Due(advance, take) => {
                    now = now.saturating_add(advance);
                    let want = model
                        .first()
                        .filter(|&&(k, _)| k <= now)
                        .map(|&(k, i)| (i, k));
                    prop_assert_eq!(q.first_due(nodes, now), want);
                    if let (Some((item, key)), 1 | 2) = (want, take) {
                        model.remove(&(key, item));
                        keys[item as usize] = None;
                        if take == 1 {
                            q.remove(nodes, item);
                        } else {
                            q.remove_first(nodes);
                        }
                    }
                }
            }
        }
        // Drain: everything comes out in order, and the queue is left empty.
        while let Some(&(key, item)) = model.first() {
            prop_assert_eq!(q.first_due(nodes, u64::MAX), Some((item, key)));
            model.remove(&(key, item));
            q.remove(nodes, item);
        }
        prop_assert_eq!(q.first_due(nodes, u64::MAX), None);
        prop_assert!(q.due.first().is_none() && q.later.first().is_none() && q.occupied.is_empty());
        prop_assert!(q.head.iter().all(|&h| h == NIL));
        prop_assert!(nodes.iter().all(|n| n.slot == ABSENT));
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// Few items and a short span: many equal keys, several per slot.
        #[test]
        fn matches_an_ordered_set_with_ties(ops in prop::collection::vec(op(12, 16), 0..300)) {
            against_ordered_set(12, 4, 1, 1_000, ops)?;
        }

        /// Many items, keys spread over about the ring's span.
        #[test]
        fn matches_an_ordered_set(ops in prop::collection::vec(op(300, 1 << 20), 0..1_500)) {
            against_ordered_set(300, 1024, 10, 5_000_000_000, ops)?;
        }

        /// Keys spread over sixteen times the ring's span: many wait beyond it.
        #[test]
        fn matches_an_ordered_set_beyond_the_ring(
            ops in prop::collection::vec(op(300, 1 << 24), 0..1_500),
        ) {
            against_ordered_set(300, 1024, 10, 123_456_789, ops)?;
        }

        /// Keys near the end of time (saturated ends of the ring).
        #[test]
        fn matches_an_ordered_set_at_the_end_of_time(
            ops in prop::collection::vec(op(40, 1 << 12), 0..400),
        ) {
            against_ordered_set(40, 64, 6, u64::MAX - (1 << 13), ops)?;
        }
    }

    #[test]
    fn sizes_follow_the_rates() {
        // 1 000 leaves of 10 Mbit/s under 10 Gbit/s: an MTU of 1600 B is 1 280 ns on the
        // link (slots of 1 024 ns) and 1.28 ms at a leaf: 1 250 slots, 2 048 in all.
        let rates = vec![Rate::from_mbit(10); 1000];
        let q = WaitQueue::for_level(&rates, Rate::from_gbit(10), Bytes(1600));
        assert_eq!((q.shift, q.mask + 1), (10, 2048));
        // A slow class alone does not get more than the fewest slots.
        let q = WaitQueue::for_level(&[Rate(1000)], Rate::from_gbit(10), Bytes(1600));
        assert_eq!(q.mask + 1, MIN_SLOTS);
        // A level without classes.
        let q = WaitQueue::for_level(&[], Rate::from_gbit(10), Bytes(1600));
        assert_eq!(q.mask + 1, MIN_SLOTS);
    }
}
