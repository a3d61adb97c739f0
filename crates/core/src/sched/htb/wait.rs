//! HTB's wait queue of one level (Linux `wait_pq`): the classes that are not green, each
//! keyed by the instant (ns) its mode next changes, and the change due first.
//!
//! A calendar. Time is cut into slots of `2^shift` ns; the *current* slot starts at
//! `start`, and the `slots − 1` slots after it form a ring of intrusive lists, one per
//! slot. A class is kept
//!
//! * in `due`, a small binary heap whose entries' positions are kept in the classes'
//!   own records (no separate index to read), if its key falls in the current slot or
//!   before it (a change already due);
//! * in the list of its key's slot if that lies within the ring;
//! * in `later`, an [`IndexedHeap`], if beyond.
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
//! (Linux orders equal keys by insertion; see the HTB module's *Deviations*).

use crate::ds::{IdSet, IndexedHeap};
use crate::units::{Bytes, Rate};

/// No item (the end of a list).
const NIL: u32 = u32::MAX;

/// Where an item is (the value of [`WaitQueue::slot`] when not in a list's slot).
const ABSENT: u32 = u32::MAX;
/// In [`WaitQueue::due`].
const DUE: u32 = u32::MAX - 1;
/// In [`WaitQueue::later`].
const LATER: u32 = u32::MAX - 2;

/// Fewest slots of a level's ring.
const MIN_SLOTS: usize = 64;

/// Where one item of a [`WaitQueue`] is.
#[derive(Clone, Copy, Debug)]
struct Node {
    /// The key, if in a list.
    key: u64,
    /// The slot of its list, or [`DUE`], [`LATER`], [`ABSENT`].
    slot: u32,
    /// Next item in the same list, or [`NIL`]; in `due`, the item's index there.
    next: u32,
    /// Previous item in the same list, or [`NIL`].
    prev: u32,
}

/// The wait queue of one level: items `0..capacity` (positions within the level), each
/// present at most once with a `u64` key. See the [module docs](self).
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
    /// Items whose keys lie before the next slot: a binary min-heap of `(key, item)`
    /// (the order of the queue), each entry's index kept in its item's [`Node::next`].
    due: Vec<(u64, u32)>,
    /// Items whose keys lie at or past the ring's end, `start + (mask + 1) << shift`.
    later: IndexedHeap,
    /// Where each item is, side by side (one cache line to touch per item).
    nodes: Vec<Node>,
    /// First item of each slot's list, or [`NIL`].
    head: Vec<u32>,
    /// The slots whose lists are not empty.
    occupied: IdSet,
    /// No key in the lists or in `later` is below it, so nothing there is due before
    /// (spares the search for the next slot while waiting for it).
    horizon: u64,
}

impl WaitQueue {
    /// An empty queue for items `0..capacity` with `slots` slots (rounded up to a
    /// power of two) of `2^shift` ns each.
    pub(super) fn new(capacity: usize, slots: usize, shift: u32) -> WaitQueue {
        let slots = slots.max(2).next_power_of_two();
        WaitQueue {
            shift,
            mask: slots - 1,
            width: 1 << shift,
            span: u64::try_from((slots as u128) << shift).unwrap_or(u64::MAX),
            start: 0,
            cur: 0,
            due: Vec::with_capacity(capacity),
            later: IndexedHeap::new(capacity),
            nodes: vec![
                Node {
                    key: 0,
                    slot: ABSENT,
                    next: NIL,
                    prev: NIL,
                };
                capacity
            ],
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
    fn place(&mut self, item: u32, key: u64) {
        let i = item as usize;
        if self.is_due(key) {
            self.due_push(item, key);
        } else if key - self.start < self.span {
            self.horizon = self.horizon.min(key);
            let s = (key >> self.shift) as usize & self.mask;
            let first = self.head[s];
            self.nodes[i] = Node {
                key,
                slot: s as u32,
                next: first,
                prev: NIL,
            };
            if first == NIL {
                self.occupied.insert(s as u32);
            } else {
                self.nodes[first as usize].prev = item;
            }
            self.head[s] = item;
        } else {
            self.horizon = self.horizon.min(key);
            self.nodes[i].slot = LATER;
            self.later.set(item, key);
        }
    }

    /// Adds absent `item` with `key` to `due`.
    #[inline]
    fn due_push(&mut self, item: u32, key: u64) {
        let at = self.due.len();
        self.due.push((key, item));
        self.nodes[item as usize].slot = DUE;
        self.due_up(at);
    }

    /// Removes the entry at index `at` of `due`.
    #[inline]
    fn due_remove(&mut self, at: usize) {
        let last = self.due.pop().expect("an item in due");
        if at < self.due.len() {
            self.due[at] = last;
            self.nodes[last.1 as usize].next = at as u32;
            if at > 0 && last < self.due[(at - 1) / 2] {
                self.due_up(at);
            } else {
                self.due_down(at);
            }
        }
    }

    /// Moves the entry at index `at` of `due` up to its place, keeping the entries'
    /// indices in their nodes.
    #[inline]
    fn due_up(&mut self, at: usize) {
        let entry = self.due[at];
        let mut at = at;
        while at > 0 {
            let parent = (at - 1) / 2;
            let above = self.due[parent];
            if above <= entry {
                break;
            }
            self.due[at] = above;
            self.nodes[above.1 as usize].next = at as u32;
            at = parent;
        }
        self.due[at] = entry;
        self.nodes[entry.1 as usize].next = at as u32;
    }

    /// Moves the entry at index `at` of `due` down to its place.
    fn due_down(&mut self, at: usize) {
        let entry = self.due[at];
        let len = self.due.len();
        let mut at = at;
        loop {
            let first = 2 * at + 1;
            if first >= len {
                break;
            }
            let child = if first + 1 < len && self.due[first + 1] < self.due[first] {
                first + 1
            } else {
                first
            };
            let below = self.due[child];
            if entry <= below {
                break;
            }
            self.due[at] = below;
            self.nodes[below.1 as usize].next = at as u32;
            at = child;
        }
        self.due[at] = entry;
        self.nodes[entry.1 as usize].next = at as u32;
    }

    /// Removes `item` if present.
    #[inline]
    pub(super) fn remove(&mut self, item: u32) {
        let i = item as usize;
        let node = self.nodes[i];
        match node.slot {
            ABSENT => return,
            DUE => self.due_remove(node.next as usize),
            LATER => {
                self.later.remove(item);
            }
            s => {
                let (p, n) = (node.prev, node.next);
                if p == NIL {
                    self.head[s as usize] = n;
                    if n == NIL {
                        self.occupied.remove(s);
                    }
                } else {
                    self.nodes[p as usize].next = n;
                }
                if n != NIL {
                    self.nodes[n as usize].prev = p;
                }
            }
        }
        self.nodes[i].slot = ABSENT;
    }

    /// Inserts `item` with `key`, or changes its key if present.
    #[inline]
    pub(super) fn set(&mut self, item: u32, key: u64) {
        match self.nodes[item as usize].slot {
            DUE if self.is_due(key) => {
                let at = self.nodes[item as usize].next as usize;
                let old = core::mem::replace(&mut self.due[at].0, key);
                if key < old {
                    self.due_up(at);
                } else {
                    self.due_down(at);
                }
                return;
            }
            ABSENT => {}
            _ => self.remove(item),
        }
        self.place(item, key);
    }

    /// The item with the smallest key (the smallest item among equal keys) and its key,
    /// if that key is at most `now`.
    #[inline]
    pub(super) fn first_due(&mut self, now: u64) -> Option<(u32, u64)> {
        loop {
            if let Some(&(key, item)) = self.due.first() {
                return (key <= now).then_some((item, key));
            }
            if now < self.horizon || !self.advance(now) {
                return None;
            }
        }
    }

    /// With `due` empty, makes the slot of the smallest key the current one if it has
    /// begun by `now`; returns whether it did (then `due` is not empty). Either way,
    /// `horizon` is brought up to date.
    fn advance(&mut self, now: u64) -> bool {
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
            None => match self.later.peek() {
                // The ring is empty: it moves to the first key beyond.
                Some((_, key)) => (
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
                let node = self.nodes[item as usize];
                self.due_push(item, node.key);
                item = node.next;
            }
        }
        // Keys in `later` are at or past `start`.
        while let Some((item, key)) = self.later.peek() {
            if key - self.start >= self.span {
                break;
            }
            self.later.remove(item);
            self.place(item, key);
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
        /// Advance the clock, ask what is due, and remove it if `take`.
        Due(u64, bool),
    }

    fn op(items: u32, span: u64) -> impl Strategy<Value = Op> {
        prop_oneof![
            6 => (0..items, 0..span, prop::bool::weighted(0.05))
                .prop_map(|(i, d, b)| Op::Set(i, d, b)),
            1 => (0..items).prop_map(Op::Remove),
            6 => (0..span / 4, any::<bool>()).prop_map(|(d, t)| Op::Due(d, t)),
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
                    q.set(item, key);
                }
                Op::Remove(item) => {
                    if let Some(old) = keys[item as usize].take() {
                        model.remove(&(old, item));
                    }
                    q.remove(item);
                }
                Op::Due(advance, take) => {
                    now = now.saturating_add(advance);
                    let want = model
                        .first()
                        .filter(|&&(k, _)| k <= now)
                        .map(|&(k, i)| (i, k));
                    prop_assert_eq!(q.first_due(now), want);
                    if let (Some((item, key)), true) = (want, take) {
                        model.remove(&(key, item));
                        keys[item as usize] = None;
                        q.remove(item);
                    }
                }
            }
        }
        // Drain: everything comes out in order, and the queue is left empty.
        while let Some(&(key, item)) = model.first() {
            prop_assert_eq!(q.first_due(u64::MAX), Some((item, key)));
            model.remove(&(key, item));
            q.remove(item);
        }
        prop_assert_eq!(q.first_due(u64::MAX), None);
        prop_assert!(q.due.is_empty() && q.later.is_empty() && q.occupied.is_empty());
        prop_assert!(q.head.iter().all(|&h| h == NIL));
        prop_assert!(q.nodes.iter().all(|n| n.slot == ABSENT));
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
