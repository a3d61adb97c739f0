//! A winner (tournament) tree: slots `0..capacity`, each empty or holding a `u128`
//! entry, and the smallest entry of every subtree kept at the subtree's root, so that
//! the smallest of all is read in O(1) and a slot changes in O(log capacity), walking
//! from its leaf to the root. The tree is 4-ary: the four children of a node fill one
//! cache line, so a walk reads one line per level, and half as many levels as a binary
//! tree's.
//!
//! It is the shape of the packet path's priority queue of *conversations* (fair
//! queueing's conversations by head tag, [`super::bids::heads`]), where the
//! entry that changes is usually the smallest and its new value usually among the
//! largest. A heap sifts that entry down, each level's step depending on the previous
//! one's comparisons; here the path is the slot's own, known in advance, and a level
//! costs three comparisons of which only one waits for the level below (the smallest
//! of the three siblings against the winner so far). A slot never moves, so no position
//! table is kept.
//!
//! # Layout and order
//!
//! Nodes in heap order: the root is node 0, the children of node `j` are `4j + 1` to
//! `4j + 4`. With `C` slots, nodes `0..I` are internal (`I = ⌈(C − 1) / 3⌉`, the least
//! number such that every later node is a leaf) and slot `i` is leaf `I + i`. Node `j`
//! is stored at position `j + 3` of an array of 64-byte aligned lines of four entries, so
//! that the four children of node `j` are exactly line `j + 1`. An empty slot, a child
//! past the last node, and a subtree without entries hold [`EMPTY`] (`u128::MAX`).
//!
//! The caller gives the order as a strict "less than" `lt` on entries, under which no
//! entry follows [`EMPTY`], and which is the same order at every call (it may be
//! computed differently, as [`super::bids::heads`]'s compact keys are). Entries must be
//! distinct among the slots that hold one (a caller puts the slot number in the
//! entry's low bits). Each internal node holds the smallest of its children.
//!
//! [`WinnerTree::replay_min`] walks in the order of the entries as numbers, in
//! straight-line code (one copy of a level per possible level) rather than a loop: the
//! comparisons are as likely to go one way as the other, and LLVM's x86 backend turns
//! the conditional moves of a loop whose result feeds its next iteration into branches,
//! half of them mispredicted.
//!
//! # Cost
//!
//! [`WinnerTree::replay`] (the smallest entry changed or removed): `⌈log4 C⌉` levels of
//! three comparisons. [`WinnerTree::update`] (any slot): at most that, and it stops at
//! the first level whose winner does not change — a new entry that does not win among
//! its siblings costs one level. [`WinnerTree::lower`] (an entry lowered, or an empty
//! slot filled): one comparison a level, up to the first node that precedes it.
//! [`WinnerTree::present`]: O(k log C) for `k` entries.
//! Memory: `4C / 3` entries of 16 bytes. No allocation after construction.
//!
//! # Verification
//!
//! Property tests below against an ordered set of entries; [`WinnerTree::check`]
//! checks every internal node after each operation.

/// An empty slot or subtree: no entry follows it.
pub const EMPTY: u128 = u128::MAX;

/// Levels a walk may take: a tree of at most `2^32` slots has at most 16 below the root.
const MAX_DEPTH: usize = 16;

/// Four entries at positions `4l` to `4l + 3`: the children of node `l − 1`. Entry `k`
/// is words `2k` (low half) and `2k + 1` (high half): the words of a sibling `k ^ m`
/// are at `2k ^ 2m`, so that a walk addresses its three siblings from one index
/// (an entry's 16 bytes cannot be an address's scaled index).
#[derive(Clone, Copy, Debug)]
#[repr(align(64))]
struct Line([u64; 8]);

impl Line {
    const EMPTY: Line = Line([u64::MAX; 8]);

    /// Entry `k` (below 4).
    #[inline(always)]
    fn get(&self, k: usize) -> u128 {
        let w = 2 * (k & 3);
        u128::from(self.0[w]) | (u128::from(self.0[w + 1]) << 64)
    }

    /// Sets entry `k` (below 4) to `e`.
    #[inline(always)]
    fn set(&mut self, k: usize, e: u128) {
        let w = 2 * (k & 3);
        self.0[w] = e as u64;
        self.0[w + 1] = (e >> 64) as u64;
    }
}

/// Slots `0..capacity` in a winner tree. See the [module docs](self).
#[derive(Clone, Debug)]
pub struct WinnerTree {
    /// Node `j` at position `j + 3`: entry `(j + 3) % 4` of line `(j + 3) / 4`.
    lines: Vec<Line>,
    /// Internal nodes `I`: slot `i` is node `I + i`.
    internal: usize,
    /// Nodes.
    nodes: usize,
}

/// The smaller of `a` and `b` as numbers (`b` if equal), without a branch.
#[inline(always)]
fn min(a: u128, b: u128) -> u128 {
    if a < b { a } else { b }
}

impl WinnerTree {
    /// A tree of `capacity` empty slots (below `2^32`).
    pub fn new(capacity: usize) -> WinnerTree {
        let capacity = capacity.max(1);
        assert!(capacity <= 1 << 32, "at most 2^32 slots");
        let internal = (capacity - 1).div_ceil(3);
        let nodes = internal + capacity;
        // Lines up to that of the last node and that of the last internal node's
        // children.
        let lines = ((nodes + 2) / 4).max(internal) + 1;
        WinnerTree {
            lines: vec![Line::EMPTY; lines],
            internal,
            nodes,
        }
    }

    /// The smallest entry, or [`EMPTY`] if no slot holds one.
    #[inline]
    pub fn min(&self) -> u128 {
        self.lines[0].get(3)
    }

    /// The entry of slot `i`, or [`EMPTY`].
    #[inline]
    pub fn slot(&self, i: usize) -> u128 {
        self.get(self.internal + i)
    }

    #[inline(always)]
    fn get(&self, j: usize) -> u128 {
        let p = j + 3;
        self.lines[p >> 2].get(p & 3)
    }

    #[inline(always)]
    fn put(&mut self, j: usize, e: u128) {
        let p = j + 3;
        self.lines[p >> 2].set(p & 3, e);
    }

    /// Sets slot `i` to `e` (an entry or [`EMPTY`]) and recomputes every node on its path
    /// to the root: for a slot whose entry is the smallest (every node on the path holds
    /// it, so every one changes).
    #[inline(always)]
    pub fn replay(&mut self, i: usize, e: u128, lt: impl Fn(u128, u128) -> bool) {
        let mut j = self.internal + i;
        let mut win = e;
        while j != 0 {
            win = self.set_and_challenge(j, win, &lt);
            j = (j - 1) >> 2;
        }
        self.put(0, win);
    }

    /// Stores `win` at node `j` (not the root) and returns the smallest under `lt` of it
    /// and its three siblings: what their parent holds.
    #[inline(always)]
    fn set_and_challenge(&mut self, j: usize, win: u128, lt: &impl Fn(u128, u128) -> bool) -> u128 {
        let p = j + 3;
        let line = &mut self.lines[p >> 2];
        let s = p & 3;
        line.set(s, win);
        let mut win = win;
        for k in 1..4 {
            let other = line.get(s ^ k);
            if lt(other, win) {
                win = other;
            }
        }
        win
    }

    /// [`WinnerTree::replay`] in the order of the entries as numbers, in straight-line
    /// code (see the [module docs](self)). Inlined into its callers, the heads' dequeues:
    /// a call would cost them the saving and restoring of the registers that hold the
    /// packet served, about 8 instructions a dequeue.
    #[inline(always)]
    pub fn replay_min(&mut self, i: usize, e: u128) {
        // Position `p = j + 3` of node `j`: its line `p / 4`, its parent's position
        // `p / 4 + 2`; the root at position 3.
        let mut p = self.internal + i + 3;
        let mut win = e;
        macro_rules! level {
            () => {
                let line = &mut self.lines[p >> 2];
                let s = p & 3;
                line.set(s, win);
                if p == 3 {
                    return;
                }
                // The siblings' smallest first, then the one comparison that waits for
                // the level below.
                let others = min(min(line.get(s ^ 1), line.get(s ^ 2)), line.get(s ^ 3));
                win = min(others, win);
                p = (p >> 2) + 2;
            };
        }
        macro_rules! levels4 {
            () => {
                level!();
                level!();
                level!();
                level!();
            };
        }
        levels4!();
        levels4!();
        levels4!();
        levels4!();
        // A leaf is at most `MAX_DEPTH` levels below the root.
        debug_assert_eq!(p, 3, "at the root after {MAX_DEPTH} levels");
        self.lines[0].set(3, win);
    }

    /// Lowers slot `i` to the entry `e`, which precedes the slot's entry under `lt` (any
    /// entry precedes [`EMPTY`]: an empty slot may be filled so). Each node on the path
    /// then holds the smaller of its winner and `e`, so the walk compares `e` with one
    /// node a level and stops at the first node that precedes it: a new entry that does
    /// not win costs one comparison.
    #[inline(always)]
    pub fn lower(&mut self, i: usize, e: u128, lt: impl Fn(u128, u128) -> bool) {
        let mut j = self.internal + i;
        debug_assert!(e != EMPTY && lt(e, self.get(j)), "lowers the slot's entry");
        self.put(j, e);
        while j != 0 {
            j = (j - 1) >> 2;
            if !lt(e, self.get(j)) {
                return;
            }
            self.put(j, e);
        }
    }

    /// Sets slot `i` to `e` (an entry or [`EMPTY`]) and recomputes the nodes on its path
    /// up to the first whose winner is unchanged, another slot's entry it held already
    /// (the nodes above it then depend on nothing that changed; slot `i`'s own entry
    /// may look unchanged while the order behind it changed, so the walk goes on past
    /// it). `item` gives the slot of an entry.
    #[inline(always)]
    pub fn update(
        &mut self,
        i: usize,
        e: u128,
        lt: impl Fn(u128, u128) -> bool,
        item: impl Fn(u128) -> usize,
    ) {
        let mut j = self.internal + i;
        let mut win = e;
        while j != 0 {
            win = self.set_and_challenge(j, win, &lt);
            j = (j - 1) >> 2;
            if self.get(j) == win && (win == EMPTY || item(win) != i) {
                return;
            }
        }
        self.put(0, win);
    }

    /// Calls `f` with whether the node is a leaf and its entry, for every node that
    /// holds an entry, parents before children: O(k log C) for `k` slots holding an
    /// entry. `f` returns the entry to store in its place.
    pub fn rewrite(&mut self, mut f: impl FnMut(bool, u128) -> u128) {
        let mut j = Some(0);
        while let Some(n) = j {
            let e = self.get(n);
            if e != EMPTY {
                let leaf = n >= self.internal;
                self.put(n, f(leaf, e));
                if !leaf {
                    j = Some(4 * n + 1);
                    continue;
                }
            }
            j = self.next_subtree(n);
        }
    }

    /// The slots that hold an entry, with their entries, in no particular order:
    /// O(k log C).
    pub fn present(&self) -> Present<'_> {
        Present {
            tree: self,
            j: Some(0),
        }
    }

    /// The root of the next subtree in pre-order after the subtree of node `j`, if any.
    #[inline]
    fn next_subtree(&self, mut j: usize) -> Option<usize> {
        loop {
            if j == 0 {
                return None;
            }
            // Node `j` is the last of its siblings if it is the fourth or the last node.
            if j % 4 != 0 && j + 1 < self.nodes {
                return Some(j + 1);
            }
            j = (j - 1) / 4;
        }
    }

    /// Checks that every internal node holds the smallest of its children under `lt`,
    /// and that every position past the last node is empty.
    pub fn check(&self, lt: impl Fn(u128, u128) -> bool) -> Result<(), String> {
        for j in 0..self.internal {
            let mut want = EMPTY;
            for c in 4 * j + 1..4 * j + 5 {
                let e = self.get(c);
                if c >= self.nodes && e != EMPTY {
                    return Err(format!("position of node {c}, past the last, not empty"));
                }
                if lt(e, want) {
                    want = e;
                }
            }
            if self.get(j) != want {
                return Err(format!("node {j} does not hold its children's winner"));
            }
        }
        Ok(())
    }
}

/// The slots that hold an entry ([`WinnerTree::present`]).
#[derive(Debug)]
pub struct Present<'a> {
    tree: &'a WinnerTree,
    /// The next node to visit, if any.
    j: Option<usize>,
}

impl Iterator for Present<'_> {
    type Item = (usize, u128);

    fn next(&mut self) -> Option<(usize, u128)> {
        let t = self.tree;
        while let Some(j) = self.j {
            let e = t.get(j);
            if e != EMPTY && j < t.internal {
                self.j = Some(4 * j + 1);
                continue;
            }
            self.j = t.next_subtree(j);
            if e != EMPTY {
                return Some((j - t.internal, e));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    /// Entry of slot `i` with key `k`: the key above, the slot below.
    fn entry(k: u64, i: usize) -> u128 {
        (u128::from(k) << 32) | i as u128
    }

    fn lt(a: u128, b: u128) -> bool {
        a < b
    }

    fn item(e: u128) -> usize {
        e as u32 as usize
    }

    #[derive(Clone, Copy, Debug)]
    enum Op {
        /// `update` of slot `i` to key `k`, or to empty.
        Update(usize, Option<u64>),
        /// `replay` (or `replay_min` if the flag is set) of the smallest slot to key
        /// `k`, or to empty.
        ReplayMin(Option<u64>, bool),
        /// `lower` of slot `i` to key `k`, if that precedes its entry (or it is empty).
        Lower(usize, u64),
    }

    fn ops(capacity: usize) -> impl Strategy<Value = Vec<Op>> {
        let key = prop_oneof![1 => Just(None), 3 => (0u64..40).prop_map(Some)];
        let op = prop_oneof![
            3 => (0..capacity, key.clone()).prop_map(|(i, k)| Op::Update(i, k)),
            2 => (0..capacity, 0u64..40).prop_map(|(i, k)| Op::Lower(i, k)),
            2 => (key, any::<bool>()).prop_map(|(k, fast)| Op::ReplayMin(k, fast)),
        ];
        prop::collection::vec(op, 0..300)
    }

    /// Every operation against an ordered set of `(key, slot)`: the minimum, each
    /// slot's entry, the slots present, and the winners (`check`) after each.
    fn against_ordered_set(capacity: usize, ops: &[Op]) -> Result<(), TestCaseError> {
        let mut t = WinnerTree::new(capacity);
        let mut slots: Vec<Option<u64>> = vec![None; capacity];
        let mut model: BTreeSet<(u64, usize)> = BTreeSet::new();
        for &op in ops {
            let (i, k) = match op {
                Op::Update(i, k) => (i, k),
                Op::Lower(i, k) => match slots[i] {
                    Some(old) if (old, i) <= (k, i) => continue,
                    _ => (i, Some(k)),
                },
                Op::ReplayMin(k, _) => match model.first() {
                    Some(&(_, i)) => (i, k),
                    None => continue,
                },
            };
            if let Some(old) = slots[i].take() {
                model.remove(&(old, i));
            }
            if let Some(k) = k {
                model.insert((k, i));
                slots[i] = Some(k);
            }
            let e = k.map_or(EMPTY, |k| entry(k, i));
            match op {
                Op::Update(..) => t.update(i, e, lt, item),
                Op::Lower(..) => t.lower(i, e, lt),
                Op::ReplayMin(_, false) => t.replay(i, e, lt),
                Op::ReplayMin(_, true) => t.replay_min(i, e),
            }
            t.check(lt).map_err(TestCaseError::fail)?;
            prop_assert_eq!(t.min(), model.first().map_or(EMPTY, |&(k, i)| entry(k, i)));
            for (i, s) in slots.iter().enumerate() {
                prop_assert_eq!(t.slot(i), s.map_or(EMPTY, |k| entry(k, i)));
            }
            let mut present: Vec<(usize, u128)> = t.present().collect();
            present.sort_unstable();
            let want: Vec<(usize, u128)> = (0..capacity)
                .filter_map(|i| slots[i].map(|k| (i, entry(k, i))))
                .collect();
            prop_assert_eq!(present, want);
        }
        Ok(())
    }

    /// Capacities from one slot to trees of four levels, some of which have nodes at
    /// two depths.
    fn case() -> impl Strategy<Value = (usize, Vec<Op>)> {
        prop_oneof![1usize..40, 60usize..300]
            .prop_flat_map(|capacity| (Just(capacity), ops(capacity)))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn matches_an_ordered_set((capacity, ops) in case()) {
            against_ordered_set(capacity, &ops)?;
        }
    }

    /// A deep tree (100 003 slots, nine levels below the root): fair-queueing-like use,
    /// the smallest re-keyed above most others or emptied, new slots filled, against an
    /// ordered set.
    #[test]
    fn a_deep_tree_matches_an_ordered_set() {
        let capacity = 100_003;
        let mut t = WinnerTree::new(capacity);
        let mut model: BTreeSet<(u64, usize)> = BTreeSet::new();
        let mut present = vec![false; capacity];
        let mut rng = crate::workload::Prng(0x9e37_79b9_7f4a_7c15);
        for step in 0..60_000u64 {
            let x = rng.next_u64();
            let i = (x % capacity as u64) as usize;
            if x % 3 == 0 && !present[i] && model.len() < 3_000 {
                let k = step + (x >> 40) % 5_000;
                t.update(i, entry(k, i), lt, item);
                model.insert((k, i));
                present[i] = true;
            } else if let Some((k, i)) = model.pop_first() {
                if x % 5 == 0 {
                    t.replay_min(i, EMPTY);
                    present[i] = false;
                } else {
                    let k = k + 1 + (x >> 20) % 5_000;
                    t.replay_min(i, entry(k, i));
                    model.insert((k, i));
                }
            }
            assert_eq!(t.min(), model.first().map_or(EMPTY, |&(k, i)| entry(k, i)));
        }
        t.check(lt).unwrap();
        assert_eq!(t.present().count(), model.len());
    }

    /// `rewrite` visits every node holding an entry, parents first, and only those.
    #[test]
    fn rewrite_visits_the_nodes_with_entries() {
        let mut t = WinnerTree::new(10);
        for (i, k) in [(3usize, 5u64), (7, 2), (9, 8)] {
            t.update(i, entry(k, i), lt, item);
        }
        let mut seen = Vec::new();
        t.rewrite(|leaf, e| {
            seen.push((leaf, item(e)));
            e + (1 << 32)
        });
        // Ten slots: internal nodes 0, 1, 2; node 1's children 5..=8, node 2's 9..=12;
        // slots 3, 7, 9 are nodes 6, 10, 12. Node 0 holds slot 7's entry (key 2), node 1
        // slot 3's, node 2 slot 7's.
        let want = [
            (false, 7),
            (false, 3),
            (true, 3),
            (false, 7),
            (true, 7),
            (true, 9),
        ];
        assert_eq!(seen, want);
        assert_eq!(t.min(), entry(3, 7));
        t.check(lt).unwrap();
    }
}
