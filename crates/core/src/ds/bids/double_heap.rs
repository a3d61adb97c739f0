//! HEAP: the paper's double heap (Appendix I) over every buffered packet.
//!
//! Two binary heaps hold the same entries, one with the smallest tag at the root, one
//! with the largest. The paper links them with two arrays of cross pointers, `i_min[k]`
//! (the position in `max` of the `k`-th element of `min`) and `i_max`; here every entry
//! has a slot and each heap maps slots to positions, which is the same information:
//! `i_min[k] = max.slot_of(min[k])`. [`DoubleHeap::cross_pointers`] builds the paper's
//! arrays so that tests can check its invariant `i_min[i_max[a]] = a`.
//!
//! * Insertion places the entry last in both heaps and sifts it up in each; cost = the
//!   exchanges in both (at most `2⌊log2 n⌋`).
//! * `get_min` removes the root of `min` (the last element takes its place, one
//!   exchange, then sifts down) and the same entry from `max` (one exchange with the
//!   last, then sifts up or down: the paper's `adjust`). An overflow drop is the mirror.
//!   Every exchange counts 1; an element is not exchanged with itself.
//!
//! Theory (Table 1): O(log B) best, worst and average.

use super::{BidQueue, Entry, Ops, Tag};
use crate::ds::counted_heap::{MaxHeap, MinHeap};

/// HEAP. See the [module docs](self).
#[derive(Debug)]
pub struct DoubleHeap<V> {
    /// Entries by slot.
    slots: Vec<Option<Entry<V>>>,
    free: Vec<u32>,
    min: MinHeap<Tag>,
    max: MaxHeap<Tag>,
    ops: Ops,
}

impl<V> DoubleHeap<V> {
    fn exchanges(&self) -> u64 {
        self.min.exchanges() + self.max.exchanges()
    }

    /// Removes slot `s` from both heaps and returns its entry.
    fn remove(&mut self, s: u32) -> Entry<V> {
        self.min.remove(s);
        self.max.remove(s);
        self.free.push(s);
        self.slots[s as usize].take().expect("a live slot")
    }

    /// The paper's cross-pointer arrays `(i_min, i_max)`, 0-based: `i_min[k]` is the
    /// position in the max heap of the element at position `k` of the min heap.
    pub fn cross_pointers(&self) -> (Vec<usize>, Vec<usize>) {
        let i_min = self
            .min
            .entries()
            .map(|(s, _)| self.max.slot_of(s).unwrap_or(usize::MAX))
            .collect();
        let i_max = self
            .max
            .entries()
            .map(|(s, _)| self.min.slot_of(s).unwrap_or(usize::MAX))
            .collect();
        (i_min, i_max)
    }
}

impl<V> BidQueue<V> for DoubleHeap<V> {
    const NAME: &'static str = "HEAP";

    fn new(_conversations: usize, packets: usize) -> Self {
        DoubleHeap {
            slots: Vec::with_capacity(packets),
            free: Vec::with_capacity(packets),
            min: MinHeap::with_items(packets),
            max: MaxHeap::with_items(packets),
            ops: Ops::default(),
        }
    }

    fn insert(&mut self, e: Entry<V>) {
        let tag = e.tag;
        let s = match self.free.pop() {
            Some(s) => {
                self.slots[s as usize] = Some(e);
                s
            }
            None => {
                self.slots.push(Some(e));
                (self.slots.len() - 1) as u32
            }
        };
        let before = self.exchanges();
        self.min.insert(s, tag);
        self.max.insert(s, tag);
        self.ops.insert += self.exchanges() - before;
    }

    fn pop_min(&mut self) -> Option<Entry<V>> {
        let (s, _) = self.min.peek()?;
        let before = self.exchanges();
        let e = self.remove(s);
        self.ops.get_min += self.exchanges() - before;
        Some(e)
    }

    fn pop_max(&mut self) -> Option<Entry<V>> {
        let (s, _) = self.max.peek()?;
        let before = self.exchanges();
        let e = self.remove(s);
        self.ops.drop += self.exchanges() - before;
        Some(e)
    }

    fn pop_newest_of(&mut self, conv: u32) -> Option<Entry<V>> {
        let newest = self
            .slots
            .iter()
            .enumerate()
            .filter_map(|(s, e)| e.as_ref().filter(|e| e.conv == conv).map(|e| (e.tag, s)))
            .max()?;
        Some(self.remove(newest.1 as u32))
    }

    fn len(&self) -> usize {
        self.min.len()
    }

    fn ops(&self) -> Ops {
        self.ops
    }

    fn check(&self) -> Result<(), String> {
        self.min.check()?;
        self.max.check()?;
        if self.min.len() != self.max.len() {
            return Err("the heaps differ in size".into());
        }
        for (s, e) in self.slots.iter().enumerate() {
            let s = s as u32;
            let tag = e.as_ref().map(|e| e.tag);
            if self.min.key_of(s) != tag || self.max.key_of(s) != tag {
                return Err(format!("slot {s}: heap keys differ from its entry"));
            }
        }
        let (i_min, i_max) = self.cross_pointers();
        for (a, &b) in i_max.iter().enumerate() {
            if i_min.get(b) != Some(&a) {
                return Err(format!("i_min[i_max[{a}]] != {a}"));
            }
        }
        for (a, &b) in i_min.iter().enumerate() {
            if i_max.get(b) != Some(&a) {
                return Err(format!("i_max[i_min[{a}]] != {a}"));
            }
        }
        Ok(())
    }
}
