//! [`LeafHeap`]: a 4-ary min-heap of leaves keyed by `u64` (ties to the smaller leaf)
//! whose positions are kept by the caller, in a record it reads anyway: the real-time
//! criterion's `pending` and `ready` heaps (module `realtime`), each leaf's position in
//! its record, so that an operation on a leaf reads no array of positions beside it.
//!
//! With thousands of leaves an array of positions per heap (4 bytes a leaf) is a cache
//! line apart from the leaf's record on every activation, service and removal, and two
//! of them take 80 KiB at 10 000 leaves. A leaf is in at most one of the two heaps, so
//! one 32-bit field per leaf holds its position in either ([`Positions`]): the heap it
//! is in (the top bit: each heap has its own [`LeafHeap::new`] tag) and its slot there,
//! or [`ABSENT`].
//!
//! The heap itself is [`crate::ds::IndexedHeap`]'s layout: entries `(key, item)` side
//! by side, sifts that move a hole, four children per node, the smallest child chosen
//! with selects. Its order is the same: the least key, ties to the smaller item.

/// Children per node.
const ARITY: usize = 4;

/// Heaps of at most this many entries choose the smallest child of a node with selects
/// (which child is smallest is random); larger ones with branches, along which the
/// processor speculates down the heap (as [`crate::ds::IndexedHeap`]).
const SELECT_BELOW: usize = 1024;

/// The position of a leaf in neither heap.
pub(super) const ABSENT: u32 = u32::MAX;

/// The top bit of a position: which heap.
const TAG: u32 = 1 << 31;

/// Where the leaves' positions are kept, by leaf index.
pub(super) trait Positions {
    /// The position of `item` ([`ABSENT`] if in no heap).
    fn at(&self, item: u32) -> u32;
    /// Sets the position of `item`.
    fn set_at(&mut self, item: u32, at: u32);
}

/// One slot of the heap array.
#[derive(Clone, Copy, Debug)]
struct Entry {
    key: u64,
    item: u32,
}

impl Entry {
    /// The heap order: by key, ties to the smaller item, with flags rather than
    /// branches.
    #[inline(always)]
    fn before(self, other: Entry) -> bool {
        (self.key < other.key) | ((self.key == other.key) & (self.item < other.item))
    }
}

/// Position and value of the smallest of `kids` (not empty), chosen with selects.
#[inline(always)]
fn least_by_selects(kids: &[Entry]) -> (usize, Entry) {
    let (mut child, mut least) = (0, kids[0]);
    for (i, &k) in kids.iter().enumerate().skip(1) {
        let smaller = k.before(least);
        child = if smaller { i } else { child };
        least = if smaller { k } else { least };
    }
    (child, least)
}

/// Position and value of the smallest of `kids` (not empty), chosen with branches.
#[inline(always)]
fn least_by_branches(kids: &[Entry]) -> (usize, Entry) {
    let (mut child, mut least) = (0, kids[0]);
    for (i, &k) in kids.iter().enumerate().skip(1) {
        if k.before(least) {
            (child, least) = (i, k);
        }
    }
    (child, least)
}

/// A min-heap of leaves whose positions are kept in a [`Positions`]. See the
/// [module docs](self).
#[derive(Clone, Debug)]
pub(super) struct LeafHeap {
    /// Heap-ordered entries.
    heap: Vec<Entry>,
    /// This heap's tag in the positions (0 or [`TAG`]).
    tag: u32,
}

impl LeafHeap {
    /// An empty heap for up to `capacity` leaves; `second` says which of the two heaps
    /// sharing the positions it is.
    pub(super) fn new(capacity: usize, second: bool) -> LeafHeap {
        assert!(capacity < TAG as usize, "fewer than 2^31 leaves");
        LeafHeap {
            heap: Vec::with_capacity(capacity),
            tag: if second { TAG } else { 0 },
        }
    }

    /// Number of leaves present.
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether no leaf is present.
    #[inline]
    pub(super) fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// The slot of `item` in this heap, if present.
    #[inline]
    fn slot(&self, item: u32, pos: &impl Positions) -> Option<usize> {
        let at = pos.at(item);
        (at != ABSENT && at & TAG == self.tag).then_some((at & !TAG) as usize)
    }

    /// Whether `item` is present.
    #[inline]
    pub(super) fn contains(&self, item: u32, pos: &impl Positions) -> bool {
        self.slot(item, pos).is_some()
    }

    /// The key of `item`, if present.
    #[inline]
    pub(super) fn key_of(&self, item: u32, pos: &impl Positions) -> Option<u64> {
        self.slot(item, pos).map(|at| self.heap[at].key)
    }

    /// The leaf with the smallest key (smallest leaf on ties) and its key.
    #[inline]
    pub(super) fn peek(&self) -> Option<(u32, u64)> {
        self.heap.first().map(|e| (e.item, e.key))
    }

    /// The smallest key after the top's (the smallest among the top's children), if at
    /// least two leaves are present.
    #[inline]
    pub(super) fn second_key(&self) -> Option<u64> {
        let kids = self.heap.get(1..self.heap.len().min(1 + ARITY))?;
        kids.iter().map(|e| e.key).min()
    }

    /// Puts `e` at slot `at`, recording its position.
    #[inline(always)]
    fn put(&mut self, at: usize, e: Entry, pos: &mut impl Positions) {
        self.heap[at] = e;
        pos.set_at(e.item, self.tag | at as u32);
    }

    /// Inserts `item`, which is in neither heap, with `key`.
    #[inline(always)]
    pub(super) fn insert(&mut self, item: u32, key: u64, pos: &mut impl Positions) {
        debug_assert_eq!(pos.at(item), ABSENT, "insert: the leaf is in a heap");
        let e = Entry { key, item };
        let at = self.heap.len();
        self.heap.push(e);
        if at == 0 {
            pos.set_at(item, self.tag);
        } else {
            self.sift_up(at, e, pos);
        }
    }

    /// Changes the key of `item`, which is present, to `key`.
    #[inline(always)]
    pub(super) fn update(&mut self, item: u32, key: u64, pos: &mut impl Positions) {
        if self.heap.len() == 1 {
            // Alone in the heap (a lone leaf): no sift.
            debug_assert_eq!(self.heap[0].item, item, "update: the leaf is present");
            self.heap[0].key = key;
            return;
        }
        let at = self.slot(item, pos).expect("update: the leaf is present");
        let e = Entry { key, item };
        let old = self.heap[at].key;
        if key < old {
            self.sift_up(at, e, pos);
        } else if key > old {
            self.sift_down(at, e, pos);
        }
    }

    /// Removes `item` if present; returns whether it was.
    #[inline]
    pub(super) fn remove(&mut self, item: u32, pos: &mut impl Positions) -> bool {
        let Some(at) = self.slot(item, pos) else {
            return false;
        };
        pos.set_at(item, ABSENT);
        let last = self.heap.pop().expect("a present leaf is in the array");
        if at < self.heap.len() {
            if last.before(self.heap[at]) {
                self.sift_up(at, last, pos);
            } else {
                self.sift_down(at, last, pos);
            }
        }
        true
    }

    /// Puts `e` at slot `at` or above, moving the larger ancestors down.
    fn sift_up(&mut self, mut at: usize, e: Entry, pos: &mut impl Positions) {
        while at > 0 {
            let parent = (at - 1) / ARITY;
            let up = self.heap[parent];
            if !e.before(up) {
                break;
            }
            self.put(at, up, pos);
            at = parent;
        }
        self.put(at, e, pos);
    }

    /// Puts `e` at slot `at` or below, moving the smallest children up.
    fn sift_down(&mut self, at: usize, e: Entry, pos: &mut impl Positions) {
        if self.heap.len() <= SELECT_BELOW {
            self.sift_down_by(at, e, pos, least_by_selects);
        } else {
            self.sift_down_by(at, e, pos, least_by_branches);
        }
    }

    /// [`LeafHeap::sift_down`], choosing the smallest child of a node with `least`.
    #[inline(always)]
    fn sift_down_by(
        &mut self,
        mut at: usize,
        e: Entry,
        pos: &mut impl Positions,
        least: impl Fn(&[Entry]) -> (usize, Entry),
    ) {
        let len = self.heap.len();
        loop {
            let first = ARITY * at + 1;
            if first >= len {
                break;
            }
            // A full node's children are a slice of constant length, whose search the
            // compiler unrolls; only the last node may have fewer.
            let (child, smallest) = if first + ARITY <= len {
                least(&self.heap[first..first + ARITY])
            } else {
                least(&self.heap[first..len])
            };
            if !smallest.before(e) {
                break;
            }
            self.put(at, smallest, pos);
            at = first + child;
        }
        self.put(at, e, pos);
    }

    /// Checks the heap order and that every entry's position is recorded (for tests;
    /// O(n)).
    pub(super) fn check(&self, pos: &impl Positions) -> Result<(), String> {
        for (at, e) in self.heap.iter().enumerate() {
            if pos.at(e.item) != self.tag | at as u32 {
                return Err(format!("leaf {} at slot {at}: wrong position", e.item));
            }
            if at > 0 && e.before(self.heap[(at - 1) / ARITY]) {
                return Err(format!("leaf {} at slot {at}: above its parent", e.item));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    impl Positions for Vec<u32> {
        fn at(&self, item: u32) -> u32 {
            self[item as usize]
        }
        fn set_at(&mut self, item: u32, at: u32) {
            self[item as usize] = at;
        }
    }

    /// One operation on the two heaps and on the models.
    #[derive(Clone, Copy, Debug)]
    enum Op {
        /// Insert into (or re-key in) heap `.0`, moving the leaf out of the other.
        Set(bool, u32, u64),
        Remove(u32),
    }

    fn op(items: u32, keys: u64) -> impl Strategy<Value = Op> {
        let key = prop_oneof![4 => 0..keys, 1 => Just(u64::MAX), 1 => any::<u64>()];
        prop_oneof![
            4 => (any::<bool>(), 0..items, key).prop_map(|(h, i, k)| Op::Set(h, i, k)),
            2 => (0..items).prop_map(Op::Remove),
        ]
    }

    /// Runs `ops` on two heaps sharing one array of positions and on two ordered sets
    /// of `(key, item)` (the specification: the least entry is the first), comparing
    /// after every operation each heap's least entry, second key, length, every item's
    /// key and membership, and the heap order and positions.
    fn against_ordered_sets(items: u32, ops: Vec<Op>) -> Result<(), TestCaseError> {
        let mut pos = vec![ABSENT; items as usize];
        let mut heaps = [
            LeafHeap::new(items as usize, false),
            LeafHeap::new(items as usize, true),
        ];
        let mut models: [BTreeSet<(u64, u32)>; 2] = [BTreeSet::new(), BTreeSet::new()];
        let key_in = |m: &BTreeSet<(u64, u32)>, item: u32| {
            m.iter().find(|&&(_, i)| i == item).map(|&(k, _)| k)
        };
        for op in ops {
            match op {
                Op::Set(second, item, key) => {
                    let (h, other) = (usize::from(second), usize::from(!second));
                    if let Some(k) = key_in(&models[other], item) {
                        models[other].remove(&(k, item));
                        prop_assert!(heaps[other].remove(item, &mut pos));
                    }
                    if let Some(k) = key_in(&models[h], item) {
                        models[h].remove(&(k, item));
                        heaps[h].update(item, key, &mut pos);
                    } else {
                        heaps[h].insert(item, key, &mut pos);
                    }
                    models[h].insert((key, item));
                }
                Op::Remove(item) => {
                    for h in 0..2 {
                        let was = key_in(&models[h], item);
                        if let Some(k) = was {
                            models[h].remove(&(k, item));
                        }
                        prop_assert_eq!(heaps[h].remove(item, &mut pos), was.is_some());
                    }
                }
            }
            for h in 0..2 {
                let (heap, model) = (&heaps[h], &models[h]);
                prop_assert_eq!(heap.peek(), model.first().map(|&(k, i)| (i, k)));
                prop_assert_eq!(heap.second_key(), model.iter().nth(1).map(|&(k, _)| k));
                prop_assert_eq!(heap.len(), model.len());
                prop_assert_eq!(heap.is_empty(), model.is_empty());
                for item in 0..items {
                    prop_assert_eq!(heap.key_of(item, &pos), key_in(model, item));
                    prop_assert_eq!(heap.contains(item, &pos), key_in(model, item).is_some());
                }
                for (at, e) in heap.heap.iter().enumerate() {
                    prop_assert_eq!(pos[e.item as usize], heap.tag | at as u32);
                    if at > 0 {
                        prop_assert!(!e.before(heap.heap[(at - 1) / ARITY]), "heap order");
                    }
                }
                let mut entries: Vec<(u64, u32)> =
                    heap.heap.iter().map(|e| (e.key, e.item)).collect();
                entries.sort_unstable();
                prop_assert_eq!(entries, model.iter().copied().collect::<Vec<_>>());
            }
            let listed = models[0].len() + models[1].len();
            prop_assert_eq!(pos.iter().filter(|&&p| p != ABSENT).count(), listed);
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// Few leaves, many ties.
        #[test]
        fn matches_ordered_sets_small(ops in prop::collection::vec(op(12, 6), 0..300)) {
            against_ordered_sets(12, ops)?;
        }

        /// Enough leaves for several levels.
        #[test]
        fn matches_ordered_sets_deep(ops in prop::collection::vec(op(120, 1_000), 0..800)) {
            against_ordered_sets(120, ops)?;
        }
    }

    /// Heaps above [`SELECT_BELOW`] entries, which choose children with branches.
    #[test]
    fn large_heaps_match_ordered_sets() {
        let items = 3 * SELECT_BELOW as u32;
        let mut rng = crate::workload::Prng(0x2545_f491_4f6c_dd1d);
        let mut next = move || rng.next_u64();
        let ops: Vec<Op> = (0..6 * items)
            .map(|_| {
                let (r, item) = (next(), (next() % u64::from(items)) as u32);
                match r % 8 {
                    0 => Op::Remove(item),
                    _ => Op::Set(r & 8 == 0, item, next() % 5_000),
                }
            })
            .collect();
        let mut pos = vec![ABSENT; items as usize];
        let mut heap = LeafHeap::new(items as usize, false);
        let mut model: BTreeSet<(u64, u32)> = BTreeSet::new();
        let mut keys = vec![None; items as usize];
        for op in ops {
            match op {
                Op::Set(_, item, key) => {
                    match keys[item as usize].replace(key) {
                        Some(old) => {
                            model.remove(&(old, item));
                            heap.update(item, key, &mut pos);
                        }
                        None => heap.insert(item, key, &mut pos),
                    }
                    model.insert((key, item));
                }
                Op::Remove(item) => {
                    let was = keys[item as usize].take();
                    if let Some(old) = was {
                        model.remove(&(old, item));
                    }
                    assert_eq!(heap.remove(item, &mut pos), was.is_some());
                }
            }
            assert_eq!(heap.peek(), model.first().map(|&(k, i)| (i, k)));
        }
        assert!(
            heap.len() > SELECT_BELOW,
            "the heap grew past the threshold"
        );
        for (at, e) in heap.heap.iter().enumerate() {
            assert_eq!(pos[e.item as usize], at as u32);
            assert!(at == 0 || !e.before(heap.heap[(at - 1) / ARITY]));
        }
    }
}
