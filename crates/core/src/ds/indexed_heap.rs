//! A d-ary min-heap of items `0..capacity`, each present at most once, keyed by any
//! [`HeapKey`] (`u64` by default), with O(log n) insert, update and remove of any item
//! by its index.
//!
//! Layout: the heap array holds `(key, item)` entries, so a sift compares entries that
//! sit side by side instead of looking keys up by item; `pos` maps each item to its slot.
//! Sifts move a hole, not pairs: the moving entry is written once, at its final slot.
//! The heap is [`ARITY`]-ary: fewer levels than a binary heap, and the children of a
//! node are adjacent (one cache line of entries). A small heap picks the smallest child
//! of a node without branches, a large one with them ([`SELECT_BELOW`]); an insertion
//! into an empty heap (frequent for the small per-parent heaps of hierarchical
//! schedulers) skips the sift altogether.

/// Children per node.
const ARITY: usize = 4;

/// A key of an [`IndexedHeap`]: totally ordered, cheap to copy, with the heap's order
/// also computed without branches where the type allows it.
pub trait HeapKey: Copy + Ord {
    /// Whether `(self, a)` comes before `(other, b)`: the smaller key, ties to the
    /// smaller item. Implementations combine the comparisons' flags with `&` and `|`
    /// rather than `&&` and `||` where they can; the default uses [`Ord`].
    #[inline(always)]
    fn before_flags(self, a: u32, other: Self, b: u32) -> bool {
        (self, a) < (other, b)
    }
}

impl HeapKey for u64 {
    #[inline(always)]
    fn before_flags(self, a: u32, other: u64, b: u32) -> bool {
        (self < other) | ((self == other) & (a < b))
    }
}

/// The reverse order: an [`IndexedHeap`] keyed by `Reverse<K>` puts the largest key at
/// its root (ties still go to the smaller item).
impl<K: HeapKey> HeapKey for core::cmp::Reverse<K> {}

/// One slot of the heap array.
#[derive(Clone, Copy, Debug)]
struct Entry<K> {
    key: K,
    item: u32,
}

impl<K: HeapKey> Entry<K> {
    /// The heap order: by key, ties to the smaller item (a strict total order, since
    /// items are distinct).
    #[inline]
    fn before(self, other: Entry<K>) -> bool {
        self.key < other.key || (self.key == other.key && self.item < other.item)
    }

    /// [`Entry::before`] without branches ([`HeapKey::before_flags`]).
    #[inline]
    fn before_flags(self, other: Entry<K>) -> bool {
        self.key.before_flags(self.item, other.key, other.item)
    }
}

/// Heaps of at most this many entries (16 KiB, in the first cache levels) choose the
/// smallest child of a node with selects: which child is smallest is random, and a
/// mispredicted branch costs more than the comparisons. Larger heaps choose with
/// branches, along which the processor speculates down the heap and overlaps the cache
/// misses of successive levels (selects would make each level's loads wait for the
/// previous level's comparisons).
const SELECT_BELOW: usize = 1024;

/// Position and value of the smallest of `kids` (not empty), chosen with selects.
#[inline]
fn least_by_selects<K: HeapKey>(kids: &[Entry<K>]) -> (usize, Entry<K>) {
    let (mut child, mut least) = (0, kids[0]);
    for (i, &k) in kids.iter().enumerate().skip(1) {
        let smaller = k.before_flags(least);
        child = if smaller { i } else { child };
        least = if smaller { k } else { least };
    }
    (child, least)
}

/// Whether keys of type `K` are wider than a word: then a full node's smallest child is
/// found by [`least_of_four`].
const fn wide<K>() -> bool {
    core::mem::size_of::<K>() > 8
}

/// Position and value of the smallest of four entries, as a tournament without
/// branches that selects positions rather than entries: for keys wider than a word,
/// where moving entries through selects costs more than comparing them, and two
/// independent comparisons shorten the chain.
const _: () = assert!(ARITY == 4, "least_of_four serves 4-ary heaps");

#[inline(always)]
fn least_of_four<K: HeapKey>(kids: &[Entry<K>]) -> (usize, Entry<K>) {
    let a = usize::from(kids[1].before_flags(kids[0]));
    let b = 2 + usize::from(kids[3].before_flags(kids[2]));
    let c = if kids[b].before_flags(kids[a]) { b } else { a };
    (c, kids[c])
}

/// Position and value of the smallest of `kids` (not empty), chosen with branches.
#[inline]
fn least_by_branches<K: HeapKey>(kids: &[Entry<K>]) -> (usize, Entry<K>) {
    let (mut child, mut least) = (0, kids[0]);
    for (i, &k) in kids.iter().enumerate().skip(1) {
        if k.before(least) {
            (child, least) = (i, k);
        }
    }
    (child, least)
}

/// Min-heap of small integer items keyed by `K`; ties go to the smaller item, so the
/// order is fully deterministic. Capacity is fixed at construction: no operation
/// allocates.
#[derive(Clone, Debug)]
pub struct IndexedHeap<K = u64> {
    /// Heap-ordered entries.
    heap: Vec<Entry<K>>,
    /// Slot of each item in `heap`, or `ABSENT`.
    pos: Vec<u32>,
    /// Elementary operations performed so far: sift steps, each the comparison of the
    /// moving entry with a parent or with the smallest of a node's children.
    pub ops: u64,
}

const ABSENT: u32 = u32::MAX;

impl<K: HeapKey> IndexedHeap<K> {
    /// An empty heap for items `0..capacity`.
    pub fn new(capacity: usize) -> IndexedHeap<K> {
        IndexedHeap {
            heap: Vec::with_capacity(capacity),
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
    pub fn key_of(&self, item: u32) -> Option<K> {
        let p = self.pos[item as usize];
        (p != ABSENT).then(|| self.heap[p as usize].key)
    }

    /// The item with the smallest key (smallest item on ties) and its key.
    #[inline]
    pub fn peek(&self) -> Option<(u32, K)> {
        self.heap.first().map(|e| (e.item, e.key))
    }

    /// The smallest key after the top's (the smallest key among the top's children, at
    /// most [`ARITY`] entries side by side), if at least two items are present.
    #[inline]
    pub fn second_key(&self) -> Option<K> {
        let kids = self.heap.get(1..self.heap.len().min(1 + ARITY))?;
        kids.iter().map(|e| e.key).min()
    }

    /// The keys present, in no particular order.
    #[inline]
    pub fn keys(&self) -> impl Iterator<Item = K> + '_ {
        self.heap.iter().map(|e| e.key)
    }

    /// The items present, in no particular order.
    #[inline]
    pub fn items(&self) -> impl Iterator<Item = u32> + '_ {
        self.heap.iter().map(|e| e.item)
    }

    /// Removes every item: O(number present).
    pub fn clear(&mut self) {
        for e in self.heap.drain(..) {
            self.pos[e.item as usize] = ABSENT;
        }
    }

    /// Inserts `item` with `key`, or changes its key if present.
    #[inline]
    pub fn set(&mut self, item: u32, key: K) {
        self.set_inlined(item, key);
    }

    /// [`IndexedHeap::set`], always inlined into the caller: for hot call sites that
    /// always insert, or always raise a key, whose own copies of the branches (insert or
    /// update, sift up or down) then predict well, where one shared body mixes them
    /// (H-FSC's packet path).
    #[inline(always)]
    pub fn set_inlined(&mut self, item: u32, key: K) {
        let e = Entry { key, item };
        let p = self.pos[item as usize];
        if p == ABSENT {
            let at = self.heap.len();
            self.heap.push(e);
            if at == 0 {
                self.pos[item as usize] = 0;
            } else {
                self.sift_up(at, e);
            }
            return;
        }
        let p = p as usize;
        if self.heap.len() == 1 {
            // Alone in the heap (H-FSC's one-child parents, one-class trees): no sift.
            self.heap[0].key = key;
            return;
        }
        let old = self.heap[p].key;
        if key < old {
            self.sift_up(p, e);
        } else if key > old {
            self.sift_down(p, e);
        }
    }

    /// Removes and returns the item with the smallest key.
    pub fn pop(&mut self) -> Option<(u32, K)> {
        let top = self.peek()?;
        self.remove(top.0);
        Some(top)
    }

    /// Removes `item` if present; returns whether it was.
    #[inline]
    pub fn remove(&mut self, item: u32) -> bool {
        let p = self.pos[item as usize];
        if p == ABSENT {
            return false;
        }
        self.pos[item as usize] = ABSENT;
        let p = p as usize;
        let last = self
            .heap
            .pop()
            .expect("present item implies non-empty heap");
        if p < self.heap.len() {
            if last.before(self.heap[p]) {
                self.sift_up(p, last);
            } else {
                self.sift_down(p, last);
            }
        }
        true
    }

    /// Puts `e` at slot `at` or above, moving the larger ancestors down.
    fn sift_up(&mut self, mut at: usize, e: Entry<K>) {
        while at > 0 {
            let parent = (at - 1) / ARITY;
            self.ops += 1;
            let up = self.heap[parent];
            if !e.before(up) {
                break;
            }
            self.heap[at] = up;
            self.pos[up.item as usize] = at as u32;
            at = parent;
        }
        self.heap[at] = e;
        self.pos[e.item as usize] = at as u32;
    }

    /// Position and value of the smallest of `kids`, in a heap of `len` entries.
    #[inline(always)]
    fn least(kids: &[Entry<K>], len: usize) -> (usize, Entry<K>) {
        if len <= SELECT_BELOW {
            least_by_selects(kids)
        } else {
            least_by_branches(kids)
        }
    }

    /// Puts `e` at slot `at` or below, moving the smallest children up.
    fn sift_down(&mut self, mut at: usize, e: Entry<K>) {
        let len = self.heap.len();
        loop {
            let first = ARITY * at + 1;
            if first >= len {
                break;
            }
            // A full node's children are a slice of constant length, whose search the
            // compiler unrolls; only the last node may have fewer.
            let (child, least) = if first + ARITY <= len {
                if wide::<K>() {
                    least_of_four(&self.heap[first..first + ARITY])
                } else {
                    Self::least(&self.heap[first..first + ARITY], len)
                }
            } else {
                Self::least(&self.heap[first..len], len)
            };
            self.ops += 1;
            if !least.before(e) {
                break;
            }
            let child = first + child;
            self.heap[at] = least;
            self.pos[least.item as usize] = at as u32;
            at = child;
        }
        self.heap[at] = e;
        self.pos[e.item as usize] = at as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Checks the heap property and that `pos` maps every item to its slot.
    fn check_layout(h: &IndexedHeap<u64>) -> Result<(), TestCaseError> {
        for (at, e) in h.heap.iter().enumerate() {
            prop_assert_eq!(h.pos[e.item as usize] as usize, at);
            if at > 0 {
                prop_assert!(
                    !e.before(h.heap[(at - 1) / ARITY]),
                    "slot {} above its parent",
                    at
                );
            }
        }
        let present = h.pos.iter().filter(|&&p| p != ABSENT).count();
        prop_assert_eq!(present, h.len());
        Ok(())
    }

    /// One operation on the heap and on the model.
    #[derive(Clone, Copy, Debug)]
    enum Op {
        Set(u32, u64),
        Remove(u32),
        Pop,
    }

    fn op(items: u32, keys: u64) -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (0..items, 0..keys).prop_map(|(i, k)| Op::Set(i, k)),
            1 => (0..items).prop_map(Op::Remove),
            2 => Just(Op::Pop),
        ]
    }

    /// Operations with keys at the ends of the `u64` range: 0, the largest keys, the top
    /// bit alone, and any key; many ties among them.
    fn op_wide(items: u32) -> impl Strategy<Value = Op> {
        let key = prop_oneof![
            Just(0),
            Just(u64::MAX),
            Just(u64::MAX - 1),
            Just(1 << 63),
            Just((1 << 63) - 1),
            any::<u64>(),
        ];
        prop_oneof![
            4 => (0..items, key).prop_map(|(i, k)| Op::Set(i, k)),
            1 => (0..items).prop_map(Op::Remove),
            2 => Just(Op::Pop),
        ]
    }

    /// Runs `ops` on a heap and on a sorted vector of `(key, item)` (the specification:
    /// the minimum is the smallest key, ties to the smaller item) and compares every
    /// answer and, after every operation, the minimum, every item's key, the keys
    /// present and the length.
    fn against_sorted_vector(items: u32, ops: Vec<Op>) -> Result<(), TestCaseError> {
        let mut h = IndexedHeap::new(items as usize);
        let mut model: Vec<(u64, u32)> = Vec::new();
        for op in ops {
            match op {
                Op::Set(item, key) => {
                    h.set(item, key);
                    model.retain(|&(_, i)| i != item);
                    model.push((key, item));
                    model.sort_unstable();
                }
                Op::Remove(item) => {
                    let was = model.iter().position(|&(_, i)| i == item);
                    prop_assert_eq!(h.remove(item), was.is_some());
                    if let Some(at) = was {
                        model.remove(at);
                    }
                }
                Op::Pop => {
                    let want = (!model.is_empty()).then(|| model.remove(0));
                    prop_assert_eq!(h.pop().map(|(i, k)| (k, i)), want);
                }
            }
            prop_assert_eq!(h.len(), model.len());
            prop_assert_eq!(h.peek().map(|(i, k)| (k, i)), model.first().copied());
            prop_assert_eq!(h.second_key(), model.get(1).map(|&(k, _)| k));
            for item in 0..items {
                let want = model.iter().find(|&&(_, i)| i == item).map(|&(k, _)| k);
                prop_assert_eq!(h.key_of(item), want);
                prop_assert_eq!(h.contains(item), want.is_some());
            }
            let mut keys: Vec<u64> = h.keys().collect();
            keys.sort_unstable();
            prop_assert_eq!(keys, model.iter().map(|&(k, _)| k).collect::<Vec<_>>());
            check_layout(&h)?;
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        /// Few items, many ties.
        #[test]
        fn matches_sorted_vector_small(ops in proptest::collection::vec(op(16, 8), 0..300)) {
            against_sorted_vector(16, ops)?;
        }

        /// Enough items for several levels, keys spread out.
        #[test]
        fn matches_sorted_vector_deep(ops in proptest::collection::vec(op(200, 1_000), 0..1_000)) {
            against_sorted_vector(200, ops)?;
        }

        /// Keys at the ends of the range.
        #[test]
        fn matches_sorted_vector_wide_keys(ops in proptest::collection::vec(op_wide(40), 0..400)) {
            against_sorted_vector(40, ops)?;
        }
    }

    /// A heap above [`SELECT_BELOW`] entries, which chooses children with branches,
    /// against an ordered set of `(key, item)`: a pseudo-random mix of inserts, key
    /// changes both ways, removals and pops, with the minimum compared after every
    /// operation and the layout checked at the end.
    #[test]
    fn large_heap_matches_an_ordered_set() {
        use std::collections::BTreeSet;
        let items = 3 * SELECT_BELOW as u32;
        let mut h = IndexedHeap::new(items as usize);
        let mut model: BTreeSet<(u64, u32)> = BTreeSet::new();
        let mut keys = vec![None; items as usize];
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for step in 0..40_000u32 {
            let r = next();
            let item = (r % u64::from(items)) as u32;
            // Mostly inserts and key changes at first, so that the heap grows past the
            // threshold; then as many removals as insertions.
            let grow = step < 6_000;
            match (r >> 32) % 8 {
                0..=4 => {
                    let key = (r >> 40) % 5_000;
                    if let Some(old) = keys[item as usize].replace(key) {
                        model.remove(&(old, item));
                    }
                    model.insert((key, item));
                    h.set(item, key);
                }
                5 | 6 if !grow => {
                    if let Some(old) = keys[item as usize].take() {
                        model.remove(&(old, item));
                    }
                    h.remove(item);
                }
                7 if !grow => {
                    let want = model.pop_first();
                    if let Some((_, i)) = want {
                        keys[i as usize] = None;
                    }
                    assert_eq!(h.pop().map(|(i, k)| (k, i)), want);
                }
                _ => {}
            }
            assert_eq!(h.peek().map(|(i, k)| (k, i)), model.first().copied());
            assert_eq!(h.len(), model.len());
            if step == 6_000 {
                assert!(h.len() > SELECT_BELOW, "the heap grew past the threshold");
            }
        }
        check_layout(&h).expect("heap layout");
    }

    /// Keys wider than a word (whose full nodes are searched by [`least_of_four`]), in
    /// both orders, against an ordered set: Keshav's tags with bids beyond `u64` and
    /// many equal bids, a mix of inserts, key changes both ways, removals, pops and a
    /// clear.
    #[test]
    fn wide_keys_match_an_ordered_set() {
        use std::cmp::Reverse;
        use std::collections::BTreeSet;
        fn run<K: HeapKey + core::fmt::Debug>(key: impl Fn(u64) -> K) {
            let items = 300u32;
            let mut h = IndexedHeap::<K>::new(items as usize);
            let mut model: BTreeSet<(K, u32)> = BTreeSet::new();
            let mut keys: Vec<Option<K>> = vec![None; items as usize];
            let mut state = 0x9e37_79b9_7f4a_7c15_u64;
            for step in 0..20_000u32 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let item = (state % u64::from(items)) as u32;
                match (state >> 32) % 8 {
                    0..=3 => {
                        let k = key((state >> 40) % 500);
                        if let Some(old) = keys[item as usize].replace(k) {
                            model.remove(&(old, item));
                        }
                        model.insert((k, item));
                        h.set(item, k);
                    }
                    4 | 5 => {
                        if let Some(old) = keys[item as usize].take() {
                            model.remove(&(old, item));
                        }
                        h.remove(item);
                    }
                    _ => {
                        let want = model.pop_first();
                        if let Some((_, i)) = want {
                            keys[i as usize] = None;
                        }
                        assert_eq!(h.pop().map(|(i, k)| (k, i)), want);
                    }
                }
                if step == 10_000 {
                    h.clear();
                    model.clear();
                    keys.iter_mut().for_each(|k| *k = None);
                }
                assert_eq!(h.peek().map(|(i, k)| (k, i)), model.first().copied());
                assert_eq!(h.len(), model.len());
            }
            let mut present: Vec<u32> = h.items().collect();
            let mut want: Vec<u32> = model.iter().map(|e| e.1).collect();
            present.sort_unstable();
            want.sort_unstable();
            assert_eq!(present, want);
        }
        use crate::ds::bids::Tag;
        let tag = |k: u64| Tag::new((u128::from(k / 7) << 70) | u128::from(k % 3), k % 11);
        run(tag);
        run(|k| Reverse(tag(k)));
    }

    /// Sift steps are counted: inserting in decreasing key order moves every new item
    /// to the root, one step per level.
    #[test]
    fn ops_counts_sift_steps() {
        let n = 1 + ARITY + ARITY * ARITY;
        let mut h = IndexedHeap::new(n);
        for i in 0..n as u32 {
            h.set(i, u64::from(n as u32 - i));
        }
        let depth = |at: usize| {
            let (mut d, mut at) = (0, at);
            while at > 0 {
                at = (at - 1) / ARITY;
                d += 1;
            }
            d
        };
        let want: u64 = (0..n).map(depth).sum();
        assert_eq!(h.ops, want);
        assert_eq!(h.peek(), Some((n as u32 - 1, 1)));
    }
}
