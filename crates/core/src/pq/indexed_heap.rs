//! A binary min-heap of items `0..capacity`, each present at most once, keyed by `u64`,
//! with O(log n) insert, update and remove of any item by its index.

/// Min-heap of small integer items keyed by `u64`; ties go to the smaller item, so the
/// order is fully deterministic. Capacity is fixed at construction: no operation
/// allocates.
#[derive(Clone, Debug)]
pub struct IndexedHeap {
    /// Heap-ordered items.
    heap: Vec<u32>,
    /// Key of each item (meaningful only while present).
    key: Vec<u64>,
    /// Position of each item in `heap`, or `ABSENT`.
    pos: Vec<u32>,
    /// Elementary operations performed so far (sift steps).
    pub ops: u64,
}

const ABSENT: u32 = u32::MAX;

impl IndexedHeap {
    /// An empty heap for items `0..capacity`.
    pub fn new(capacity: usize) -> IndexedHeap {
        IndexedHeap {
            heap: Vec::with_capacity(capacity),
            key: vec![0; capacity],
            pos: vec![ABSENT; capacity],
            ops: 0,
        }
    }

    /// Number of items present.
    #[inline]
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether no item is present.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Whether `item` is present.
    #[inline]
    pub fn contains(&self, item: u32) -> bool {
        self.pos[item as usize] != ABSENT
    }

    /// The key of `item`, if present.
    #[inline]
    pub fn key_of(&self, item: u32) -> Option<u64> {
        self.contains(item).then(|| self.key[item as usize])
    }

    /// The item with the smallest key (smallest item on ties) and its key.
    #[inline]
    pub fn peek(&self) -> Option<(u32, u64)> {
        self.heap.first().map(|&i| (i, self.key[i as usize]))
    }

    /// Inserts `item` with `key`, or changes its key if present.
    pub fn set(&mut self, item: u32, key: u64) {
        let p = self.pos[item as usize];
        self.key[item as usize] = key;
        if p == ABSENT {
            let at = self.heap.len();
            self.heap.push(item);
            self.pos[item as usize] = at as u32;
            self.sift_up(at);
        } else {
            let at = self.sift_up(p as usize);
            self.sift_down(at);
        }
    }

    /// Removes and returns the item with the smallest key.
    pub fn pop(&mut self) -> Option<(u32, u64)> {
        let top = self.peek()?;
        self.remove(top.0);
        Some(top)
    }

    /// Removes `item` if present; returns whether it was.
    pub fn remove(&mut self, item: u32) -> bool {
        let p = self.pos[item as usize];
        if p == ABSENT {
            return false;
        }
        let p = p as usize;
        self.pos[item as usize] = ABSENT;
        let last = self
            .heap
            .pop()
            .expect("present item implies non-empty heap");
        if p < self.heap.len() {
            self.heap[p] = last;
            self.pos[last as usize] = p as u32;
            let at = self.sift_up(p);
            self.sift_down(at);
        }
        true
    }

    #[inline]
    fn less(&self, a: u32, b: u32) -> bool {
        (self.key[a as usize], a) < (self.key[b as usize], b)
    }

    fn sift_up(&mut self, mut at: usize) -> usize {
        while at > 0 {
            let parent = (at - 1) / 2;
            self.ops += 1;
            if !self.less(self.heap[at], self.heap[parent]) {
                break;
            }
            self.swap(at, parent);
            at = parent;
        }
        at
    }

    fn sift_down(&mut self, mut at: usize) {
        loop {
            let l = 2 * at + 1;
            if l >= self.heap.len() {
                return;
            }
            let r = l + 1;
            let child = if r < self.heap.len() && self.less(self.heap[r], self.heap[l]) {
                r
            } else {
                l
            };
            self.ops += 1;
            if !self.less(self.heap[child], self.heap[at]) {
                return;
            }
            self.swap(at, child);
            at = child;
        }
    }

    #[inline]
    fn swap(&mut self, a: usize, b: usize) {
        self.heap.swap(a, b);
        self.pos[self.heap[a] as usize] = a as u32;
        self.pos[self.heap[b] as usize] = b as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Against a sorted model: every pop returns the (key, item) minimum.
        #[test]
        fn matches_sorted_model(ops in proptest::collection::vec((0u32..16, 0u64..50, 0u8..3), 0..200)) {
            let mut h = IndexedHeap::new(16);
            let mut model: Vec<Option<u64>> = vec![None; 16];
            for (item, key, op) in ops {
                match op {
                    0 => { h.set(item, key); model[item as usize] = Some(key); }
                    1 => { prop_assert_eq!(h.remove(item), model[item as usize].take().is_some()); }
                    _ => {
                        let want = model.iter().enumerate().filter_map(|(i, k)| k.map(|k| (k, i as u32))).min();
                        let got = h.pop();
                        prop_assert_eq!(got.map(|(i, k)| (k, i)), want);
                        if let Some((_, i)) = want { model[i as usize] = None; }
                    }
                }
                prop_assert_eq!(h.len(), model.iter().filter(|k| k.is_some()).count());
            }
        }
    }
}
