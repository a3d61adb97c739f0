//! HTB's wait queue of one level (Linux `wait_pq`): the classes that are not green, each
//! keyed by the instant (ns) its mode next changes, and the change due first.
//!
//! A calendar: [`SLOTS`] slots of [`SLOT_NS`] each cover the next `SLOTS × SLOT_NS` ns
//! (about a millisecond) from the start of the current slot; a class due in that window
//! is linked into the slot of its key (intrusive lists), one due later waits in an
//! [`IndexedHeap`] and is moved into the calendar when the window reaches it. Every key
//! of a slot is smaller than every key of a later slot (a key already past the window's
//! start goes to the current slot), so the change due first is the smallest of the first
//! occupied slot, which holds a few classes at most when delays spread over the window;
//! occupied slots are found with an [`IdSet`]. Insertion and removal within the window
//! are O(1), where a heap of `n` classes sifts about `log n` levels for each (the heap
//! this replaced took about 22 % of a packet's instructions with 1 000 leaves waiting,
//! see BENCHMARKS.md); classes waiting longer cost what the heap costs, plus one move.
//!
//! The order is exact: the smallest key first, and among equal keys the smallest item
//! (Linux orders equal keys by insertion; see the HTB module's *Deviations*).

use crate::ds::{IdSet, IndexedHeap};

/// Width of a slot, ns.
const SLOT_NS: u64 = 1 << SHIFT;

/// `log2(SLOT_NS)`.
const SHIFT: u32 = 10;

/// Slots in the calendar (a power of two).
const SLOTS: usize = 1024;

/// No item (the end of a list).
const NIL: u32 = u32::MAX;

/// Not in the queue (as a slot).
const ABSENT: u32 = u32::MAX;

/// Waiting beyond the window, in `later` (as a slot).
const LATER: u32 = u32::MAX - 1;

/// The wait queue of one level: items `0..capacity` (positions within the level), each
/// present at most once with a `u64` key. See the [module docs](self).
#[derive(Clone, Debug)]
pub(super) struct WaitQueue {
    /// Key of each item present.
    key: Vec<u64>,
    /// Slot of each item, [`LATER`] or [`ABSENT`].
    slot: Vec<u32>,
    /// Next item of the same slot, or [`NIL`].
    next: Vec<u32>,
    /// Previous item of the same slot, or [`NIL`].
    prev: Vec<u32>,
    /// First item of each slot, or [`NIL`] (empty for a level without classes).
    head: Vec<u32>,
    /// The slots that hold an item.
    occupied: IdSet,
    /// Start of the current slot's interval (a multiple of [`SLOT_NS`]); keys below it
    /// are in the current slot.
    start: u64,
    /// The current slot.
    cur: usize,
    /// The items whose keys are at or past the window's end.
    later: IndexedHeap,
    /// No key present is below it: nothing is due before then.
    floor: u64,
}

impl WaitQueue {
    /// An empty queue for items `0..capacity`.
    pub(super) fn new(capacity: usize) -> WaitQueue {
        let slots = if capacity == 0 { 0 } else { SLOTS };
        WaitQueue {
            key: vec![0; capacity],
            slot: vec![ABSENT; capacity],
            next: vec![NIL; capacity],
            prev: vec![NIL; capacity],
            head: vec![NIL; slots],
            occupied: IdSet::new(slots),
            start: 0,
            cur: 0,
            later: IndexedHeap::new(capacity),
            floor: u64::MAX,
        }
    }

    /// Whether `key` falls in the window (or before it): below `start + SLOTS ×
    /// SLOT_NS`, which may be past the end of time.
    #[inline]
    fn in_window(&self, key: u64) -> bool {
        key < self.start || key - self.start < SLOTS as u64 * SLOT_NS
    }

    /// Puts `item` (absent, its key set) where its key belongs.
    #[inline]
    fn place(&mut self, item: u32) {
        let key = self.key[item as usize];
        if !self.in_window(key) {
            self.slot[item as usize] = LATER;
            self.later.set(item, key);
            return;
        }
        let s = if key < self.start {
            self.cur
        } else {
            (key >> SHIFT) as usize % SLOTS
        };
        let first = self.head[s];
        self.next[item as usize] = first;
        self.prev[item as usize] = NIL;
        if first == NIL {
            self.occupied.insert(s as u32);
        } else {
            self.prev[first as usize] = item;
        }
        self.head[s] = item;
        self.slot[item as usize] = s as u32;
    }

    /// Removes `item` if present.
    #[inline]
    pub(super) fn remove(&mut self, item: u32) {
        let s = self.slot[item as usize];
        if s == ABSENT {
            return;
        }
        self.slot[item as usize] = ABSENT;
        if s == LATER {
            self.later.remove(item);
            return;
        }
        let s = s as usize;
        let (p, n) = (self.prev[item as usize], self.next[item as usize]);
        if p == NIL {
            self.head[s] = n;
            if n == NIL {
                self.occupied.remove(s as u32);
            }
        } else {
            self.next[p as usize] = n;
        }
        if n != NIL {
            self.prev[n as usize] = p;
        }
    }

    /// Inserts `item` with `key`, or changes its key if present.
    #[inline]
    pub(super) fn set(&mut self, item: u32, key: u64) {
        self.remove(item);
        self.key[item as usize] = key;
        self.floor = self.floor.min(key);
        self.place(item);
    }

    /// Makes slot `s` (holding the smallest keys, or `s`'s interval containing them) the
    /// current one, and moves into the window what it now covers.
    fn advance_to(&mut self, s: usize, start: u64) {
        self.cur = s;
        self.start = start;
        while let Some((item, key)) = self.later.peek() {
            if !self.in_window(key) {
                break;
            }
            self.later.remove(item);
            self.place(item);
        }
    }

    /// The item with the smallest key, the smallest item among equal keys, and its key,
    /// if that key is at most `now`.
    pub(super) fn first_due(&mut self, now: u64) -> Option<(u32, u64)> {
        if now < self.floor {
            return None;
        }
        let s = loop {
            let found =
                (self.occupied.next_from(self.cur as u32)).or_else(|| self.occupied.first());
            if let Some(s) = found {
                break s as usize;
            }
            // The window is empty: move it to the first key beyond.
            let Some((_, key)) = self.later.peek() else {
                self.floor = u64::MAX;
                return None;
            };
            if key > now {
                self.floor = key;
                return None;
            }
            self.advance_to((key >> SHIFT) as usize % SLOTS, key & !(SLOT_NS - 1));
        };
        if s != self.cur {
            // The slots between are empty: the window moves on to `s`.
            let ahead = (s + SLOTS - self.cur) % SLOTS;
            self.advance_to(s, self.start + ahead as u64 * SLOT_NS);
        }
        let mut it = self.head[s];
        let (mut key, mut item) = (self.key[it as usize], it);
        while it != NIL {
            let k = self.key[it as usize];
            if (k, it) < (key, item) {
                (key, item) = (k, it);
            }
            it = self.next[it as usize];
        }
        self.floor = key;
        (key <= now).then_some((item, key))
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
            6 => (0..items, 0..span, prop::bool::weighted(0.05)).prop_map(|(i, d, b)| Op::Set(i, d, b)),
            1 => (0..items).prop_map(Op::Remove),
            6 => (0..span / 4, any::<bool>()).prop_map(|(d, t)| Op::Due(d, t)),
        ]
    }

    /// Runs `ops` against an ordered set of `(key, item)`: what is due is its first
    /// entry if that key is at most `now`.
    fn against_ordered_set(items: u32, start: u64, ops: Vec<Op>) -> Result<(), TestCaseError> {
        let mut q = WaitQueue::new(items as usize);
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
        // Drain: everything comes out in order.
        while let Some(&(key, item)) = model.first() {
            prop_assert_eq!(q.first_due(u64::MAX), Some((item, key)));
            model.remove(&(key, item));
            q.remove(item);
        }
        prop_assert_eq!(q.first_due(u64::MAX), None);
        prop_assert!(q.occupied.is_empty() && q.later.is_empty());
        prop_assert!(q.head.iter().all(|&h| h == NIL));
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        /// Few items and a short span: many equal keys.
        #[test]
        fn matches_an_ordered_set_with_ties(ops in prop::collection::vec(op(12, 16), 0..300)) {
            against_ordered_set(12, 1_000, ops)?;
        }

        /// Many items, keys spread over about the calendar's span.
        #[test]
        fn matches_an_ordered_set(ops in prop::collection::vec(op(300, 1 << 20), 0..1_500)) {
            against_ordered_set(300, 5_000_000_000, ops)?;
        }

        /// Keys spread over sixteen times the calendar's span: many wait beyond it.
        #[test]
        fn matches_an_ordered_set_beyond_the_span(
            ops in prop::collection::vec(op(300, 1 << 24), 0..1_500),
        ) {
            against_ordered_set(300, 123_456_789, ops)?;
        }

        /// Keys and clock at the top of the range (bucket 64, saturation).
        #[test]
        fn matches_an_ordered_set_near_the_end_of_time(
            ops in prop::collection::vec(op(40, u64::MAX / 2), 0..300),
        ) {
            against_ordered_set(40, u64::MAX / 4, ops)?;
        }
    }
}
