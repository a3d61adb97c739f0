//! A binary heap of items `0..n`, each present at most once, keyed by any ordered key,
//! in min or max order, counting its **exchanges** — the elementary operation of
//! Keshav's cost study ("a single heap exchange").
//!
//! Why not [`super::IndexedHeap`]: that one is 4-ary, keyed by `u64`, and counts sift
//! steps; the fair-queueing structures need 128-bit bids and the paper's binary heap,
//! whose exchange counts (at most `⌊log2 n⌋` per sift) are what the cost study
//! reports. Sifts move a hole rather than swapping pairs, and count one exchange per
//! level the entry moves: the same count, and the same slots, as the paper's
//! `min_exchg` loop (the sift-down goes bottom-up, see [`CountedHeap::sift_down`];
//! a test checks both against a swap-by-swap heap).
//!
//! Removing an item (the paper's `min_delete` / `adjust`) moves the last entry into its
//! place — one exchange, unless the item was the last — and sifts it up or down.

/// No slot.
const ABSENT: u32 = u32::MAX;

/// Binary heap of items keyed by `K`: the root is the smallest `(key, item)` if `MAX` is
/// `false`, the largest if `true`. Items are small integers; the position table grows to
/// the largest item seen (allocation happens only while the heap reaches new sizes).
#[derive(Clone, Debug)]
pub struct CountedHeap<K, const MAX: bool> {
    /// Heap-ordered `(key, item)` entries.
    heap: Vec<(K, u32)>,
    /// Slot of each item in `heap`, or `ABSENT`.
    pos: Vec<u32>,
    /// Exchanges performed so far.
    exchanges: u64,
}

/// Smallest `(key, item)` at the root.
pub type MinHeap<K> = CountedHeap<K, false>;
/// Largest `(key, item)` at the root.
pub type MaxHeap<K> = CountedHeap<K, true>;

impl<K: Ord + Copy, const MAX: bool> CountedHeap<K, MAX> {
    /// An empty heap with room for items `0..items` without allocating.
    pub fn with_items(items: usize) -> Self {
        CountedHeap {
            heap: Vec::with_capacity(items),
            pos: vec![ABSENT; items],
            exchanges: 0,
        }
    }

    /// Whether `a` belongs above `b`.
    #[inline(always)]
    fn above(a: (K, u32), b: (K, u32)) -> bool {
        if MAX { a > b } else { a < b }
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

    /// Exchanges performed so far.
    #[inline]
    pub fn exchanges(&self) -> u64 {
        self.exchanges
    }

    /// Whether `item` is present.
    #[inline]
    pub fn contains(&self, item: u32) -> bool {
        self.pos.get(item as usize).is_some_and(|&p| p != ABSENT)
    }

    /// The key of `item`, if present.
    #[inline]
    pub fn key_of(&self, item: u32) -> Option<K> {
        let p = *self.pos.get(item as usize)?;
        (p != ABSENT).then(|| self.heap[p as usize].0)
    }

    /// The root's item and key.
    #[inline]
    pub fn peek(&self) -> Option<(u32, K)> {
        self.heap.first().map(|&(k, i)| (i, k))
    }

    /// The entries in heap order (slot 0 is the root), for invariant checks.
    pub fn entries(&self) -> impl Iterator<Item = (u32, K)> + '_ {
        self.heap.iter().map(|&(k, i)| (i, k))
    }

    /// The slot of `item`, if present.
    pub fn slot_of(&self, item: u32) -> Option<usize> {
        let p = *self.pos.get(item as usize)?;
        (p != ABSENT).then_some(p as usize)
    }

    /// Inserts `item`, which must be absent, with `key`: placed last, sifted up.
    #[inline]
    pub fn insert(&mut self, item: u32, key: K) {
        let i = item as usize;
        if i >= self.pos.len() {
            self.pos.resize(i + 1, ABSENT);
        }
        debug_assert_eq!(self.pos[i], ABSENT, "item {item} inserted twice");
        let at = self.heap.len();
        self.heap.push((key, item));
        self.sift_up(at, (key, item));
    }

    /// Changes the key of `item`, which must be present, and restores the order.
    #[inline]
    pub fn update(&mut self, item: u32, key: K) {
        let at = self.pos[item as usize] as usize;
        let old = self.heap[at];
        let e = (key, item);
        if Self::above(e, old) {
            self.sift_up(at, e);
        } else {
            self.sift_down(at, e);
        }
    }

    /// Changes the key of `item`, which must be present, to one that belongs no further
    /// from the root (a smaller key in a min-heap, a larger one in a max-heap): one
    /// comparison less than [`CountedHeap::update`].
    #[inline]
    pub fn rise(&mut self, item: u32, key: K) {
        let at = self.pos[item as usize] as usize;
        debug_assert!(
            !Self::above(self.heap[at], (key, item)),
            "rise moves toward the root"
        );
        self.sift_up(at, (key, item));
    }

    /// Changes the key of `item`, which must be present, to one that belongs no closer
    /// to the root (a larger key in a min-heap, a smaller one in a max-heap).
    #[inline]
    pub fn sink(&mut self, item: u32, key: K) {
        let at = self.pos[item as usize] as usize;
        debug_assert!(
            !Self::above((key, item), self.heap[at]),
            "sink moves away from the root"
        );
        self.sift_down(at, (key, item));
    }

    /// Removes `item` if present and returns its key: the last entry takes its slot (one
    /// exchange if they differ) and is sifted up or down.
    #[inline]
    pub fn remove(&mut self, item: u32) -> Option<K> {
        let at = *self.pos.get(item as usize)?;
        if at == ABSENT {
            return None;
        }
        self.pos[item as usize] = ABSENT;
        let at = at as usize;
        let gone = self.heap[at].0;
        let last = self
            .heap
            .pop()
            .expect("a present item implies a non-empty heap");
        if at < self.heap.len() {
            self.exchanges += 1;
            if at > 0 && Self::above(last, self.heap[(at - 1) / 2]) {
                self.sift_up(at, last);
            } else {
                self.sift_down(at, last);
            }
        }
        Some(gone)
    }

    /// Removes and returns the root.
    #[inline]
    pub fn pop(&mut self) -> Option<(u32, K)> {
        let top = self.peek()?;
        self.remove(top.0);
        Some(top)
    }

    /// Puts `e` at slot `at` or above.
    #[inline]
    fn sift_up(&mut self, mut at: usize, e: (K, u32)) {
        while at > 0 {
            let parent = (at - 1) / 2;
            let up = self.heap[parent];
            if !Self::above(e, up) {
                break;
            }
            self.heap[at] = up;
            self.pos[up.1 as usize] = at as u32;
            self.exchanges += 1;
            at = parent;
        }
        self.heap[at] = e;
        self.pos[e.1 as usize] = at as u32;
    }

    /// Puts `e` at slot `at` or below, bottom-up (Floyd): the hole first descends to a
    /// leaf along the path of the children that belong higher (one comparison per
    /// level), then `e` climbs back to its place on that path. The entries on the path
    /// are ordered, so `e` ends in the slot the top-down sift gives it, and the heap is
    /// the same afterwards; the exchanges counted are the levels `e` went down, as
    /// top-down. It pays off because a sinking entry usually belongs near the leaves
    /// (PERC's served conversation, whose next head is behind most others): about one
    /// comparison per level instead of two.
    #[inline]
    fn sift_down(&mut self, start: usize, e: (K, u32)) {
        let len = self.heap.len();
        let mut at = start;
        let mut down = 0u64;
        loop {
            let left = 2 * at + 1;
            if left >= len {
                break;
            }
            let right = left + 1;
            let child = if right < len && Self::above(self.heap[right], self.heap[left]) {
                right
            } else {
                left
            };
            let moved = self.heap[child];
            self.heap[at] = moved;
            self.pos[moved.1 as usize] = at as u32;
            down += 1;
            at = child;
        }
        while at > start {
            let parent = (at - 1) / 2;
            let up = self.heap[parent];
            if !Self::above(e, up) {
                break;
            }
            self.heap[at] = up;
            self.pos[up.1 as usize] = at as u32;
            down -= 1;
            at = parent;
        }
        self.heap[at] = e;
        self.pos[e.1 as usize] = at as u32;
        self.exchanges += down;
    }

    /// Checks the heap order and the position table.
    pub fn check(&self) -> Result<(), String> {
        for (at, &e) in self.heap.iter().enumerate() {
            if self.pos[e.1 as usize] as usize != at {
                return Err(format!(
                    "item {} at slot {at}, position table says otherwise",
                    e.1
                ));
            }
            if at > 0 && Self::above(e, self.heap[(at - 1) / 2]) {
                return Err(format!("slot {at} is above its parent"));
            }
        }
        let present = self.pos.iter().filter(|&&p| p != ABSENT).count();
        if present != self.heap.len() {
            return Err(format!(
                "{present} items marked present, {} in the heap",
                self.heap.len()
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Inserting in decreasing order into a min-heap moves every item to the root: one
    /// exchange per level, `Σ ⌊log2 (i + 1)⌋`.
    #[test]
    fn counts_one_exchange_per_level() {
        let n = 31u32;
        let mut h = MinHeap::<u64>::with_items(n as usize);
        for i in 0..n {
            h.insert(i, u64::from(n - i));
        }
        let want: u64 = (1..=u64::from(n)).map(|k| u64::from(k.ilog2())).sum();
        assert_eq!(h.exchanges(), want);
        h.check().unwrap();
        let order: Vec<u32> = std::iter::from_fn(|| h.pop().map(|(i, _)| i)).collect();
        assert_eq!(order, (0..n).rev().collect::<Vec<_>>());
    }

    /// The paper's heap, exchange by exchange: swap with the parent while above it;
    /// swap with the child that belongs higher while it is above. The reference for
    /// [`CountedHeap`]'s hole-moving and bottom-up sifts.
    struct SwapHeap {
        heap: Vec<(u64, u32)>,
        max: bool,
        exchanges: u64,
    }

    impl SwapHeap {
        fn above(&self, a: (u64, u32), b: (u64, u32)) -> bool {
            if self.max { a > b } else { a < b }
        }

        fn up(&mut self, mut at: usize) {
            while at > 0 && self.above(self.heap[at], self.heap[(at - 1) / 2]) {
                self.heap.swap(at, (at - 1) / 2);
                self.exchanges += 1;
                at = (at - 1) / 2;
            }
        }

        fn down(&mut self, mut at: usize) {
            loop {
                let (l, r) = (2 * at + 1, 2 * at + 2);
                let mut c = l;
                if r < self.heap.len() && self.above(self.heap[r], self.heap[l]) {
                    c = r;
                }
                if c >= self.heap.len() || !self.above(self.heap[c], self.heap[at]) {
                    return;
                }
                self.heap.swap(at, c);
                self.exchanges += 1;
                at = c;
            }
        }

        fn slot(&self, item: u32) -> Option<usize> {
            self.heap.iter().position(|e| e.1 == item)
        }

        fn set(&mut self, item: u32, key: u64) {
            match self.slot(item) {
                None => {
                    self.heap.push((key, item));
                    self.up(self.heap.len() - 1);
                }
                Some(at) => {
                    let old = self.heap[at];
                    self.heap[at].0 = key;
                    if self.above((key, item), old) {
                        self.up(at);
                    } else {
                        self.down(at);
                    }
                }
            }
        }

        fn remove(&mut self, item: u32) {
            let Some(at) = self.slot(item) else { return };
            let last = self.heap.len() - 1;
            if at != last {
                self.heap.swap(at, last);
                self.exchanges += 1;
            }
            self.heap.pop();
            if at < self.heap.len() {
                self.up(at);
                self.down(at);
            }
        }
    }

    fn same_as_swapping<const MAX: bool>() {
        let mut h = CountedHeap::<u64, MAX>::with_items(64);
        let mut r = SwapHeap {
            heap: Vec::new(),
            max: MAX,
            exchanges: 0,
        };
        let mut x = 12345u64;
        for _ in 0..20_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let item = (x >> 33) as u32 % 64;
            let key = (x >> 45) % 50;
            match (x >> 20) % 4 {
                0 => {
                    h.remove(item);
                    r.remove(item);
                }
                1 => {
                    let top = h.pop().map(|(i, _)| i);
                    assert_eq!(top, r.heap.first().map(|e| e.1));
                    if let Some(i) = top {
                        r.remove(i);
                    }
                }
                _ if h.contains(item) => {
                    h.update(item, key);
                    r.set(item, key);
                }
                _ => {
                    h.insert(item, key);
                    r.set(item, key);
                }
            }
            let slots: Vec<(u64, u32)> = h.entries().map(|(i, k)| (k, i)).collect();
            assert_eq!(slots, r.heap);
            assert_eq!(h.exchanges(), r.exchanges);
        }
        h.check().unwrap();
    }

    /// Same slots and the same exchange counts as the swap-by-swap heap, after every
    /// operation of a random sequence (small keys: many equal keys, ordered by item).
    #[test]
    fn sifts_match_the_swap_by_swap_heap() {
        same_as_swapping::<false>();
        same_as_swapping::<true>();
    }

    #[test]
    fn max_heap_pops_largest_first_and_removes_anywhere() {
        let mut h = MaxHeap::<u64>::with_items(0);
        for (i, k) in [5u64, 1, 9, 3, 7, 3].into_iter().enumerate() {
            h.insert(i as u32, k);
        }
        assert_eq!(h.remove(4), Some(7));
        assert_eq!(h.remove(4), None);
        h.update(1, 10);
        h.check().unwrap();
        let keys: Vec<u64> = std::iter::from_fn(|| h.pop().map(|(_, k)| k)).collect();
        assert_eq!(keys, vec![10, 9, 5, 3, 3]);
    }
}
