//! The *bounded heap* of Keshav's fair queueing ("On the Efficient Implementation of
//! Fair Queueing", §"Packet buffering"): packets tagged by their bid, `get_min` the
//! smallest bid, and on overflow the largest bids dropped after the arrival is inserted.
//!
//! The four buffer structures the paper evaluates implement [`BidQueue`], each counting
//! its **elementary operations** as the paper defines them — "the traversal of a single
//! link or a single heap exchange" (exact rules in each module, from the project's
//! spec `keshav-fq.md` §2):
//!
//! | structure | module | insert | `get_min` / drop |
//! | --- | --- | --- | --- |
//! | LINK, ordered doubly linked list | [`link`] | links stepped over scanning back from the tail | 0 |
//! | TREE, unbalanced binary search tree | [`tree`] | depth of the new node | links walked to the new min / max |
//! | HEAP, double heap over all packets | [`double_heap`] | exchanges in both heaps | exchanges in both heaps |
//! | PERC, per-conversation FIFOs under a double heap of conversations | [`perc`] | exchanges | exchanges |
//!
//! [`FastPerc`] ([`fast_perc`]) is PERC's layout without the counting, in 4-ary heaps
//! (the heads in [`heads::HeadTree`], compact keys over the exact tags, which WFQ, SCFQ
//! and STFQ use too): not one of the paper's structures and not replayed in the cost
//! study, it is what Keshav FQ runs on its packet path unless asked to count.
//!
//! [`Bounded`] adds the buffer limit (packets or bytes) and the paper's `insert()`:
//! insert first, then drop the largest tag while the limit is exceeded — so the arrival
//! itself may go. All structures order by [`Tag`] `(bid, seq)`, a strict total order,
//! so they produce identical schedules and identical drops on the same input
//! (`tests/bid_queues.rs`). [`trace`] records the operations a scheduler performs and
//! replays them through every structure (the paper's trace-driven cost study).

mod arena;
pub mod double_heap;
pub mod fast_perc;
pub mod heads;
pub mod link;
pub mod perc;
pub mod trace;
pub mod tree;

use crate::hierarchy::Limit;

pub use double_heap::DoubleHeap;
pub use fast_perc::FastPerc;
pub use link::LinkedList;
pub use perc::PerConversation;
pub use tree::SearchTree;

/// The order of buffered packets: the bid, then a sequence number unique per packet
/// (the arrival order), so that equal bids are served first-come first-served and
/// every structure sees the same strict total order.
///
/// The 128-bit bid is held as two 64-bit halves (high first, so the derived order is
/// the bid's): 24 bytes aligned to 8, where a `u128` field would make it 32 aligned to
/// 16 and every heap entry half as large again.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Tag {
    bid_high: u64,
    bid_low: u64,
    seq: u64,
}

impl Tag {
    /// The tag of bid `bid` (the scheduler's fixed-point round units) and arrival
    /// sequence number `seq`.
    #[inline]
    pub const fn new(bid: u128, seq: u64) -> Tag {
        Tag {
            bid_high: (bid >> 64) as u64,
            bid_low: bid as u64,
            seq,
        }
    }

    /// The bid.
    #[inline]
    pub const fn bid(self) -> u128 {
        ((self.bid_high as u128) << 64) | self.bid_low as u128
    }

    /// The arrival sequence number.
    #[inline]
    pub const fn seq(self) -> u64 {
        self.seq
    }
}

/// Tags are [`crate::ds::IndexedHeap`] keys (PERC's uncounted layout, [`fast_perc`]).
impl crate::ds::HeapKey for Tag {
    #[inline(always)]
    fn before_flags(self, a: u32, other: Tag, b: u32) -> bool {
        let (x, y) = (self.bid(), other.bid());
        (x < y) | ((x == y) & ((self.seq < other.seq) | ((self.seq == other.seq) & (a < b))))
    }
}

/// One buffered packet: its tag, conversation, size and payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry<V> {
    /// The order key.
    pub tag: Tag,
    /// The conversation (a leaf class index).
    pub conv: u32,
    /// Bytes on the wire (for byte limits).
    pub size: u32,
    /// The payload: the packet, or nothing in a replay.
    pub value: V,
}

/// Elementary operations performed by a structure so far, by the operation that did
/// them (the paper's cost metric).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ops {
    /// During insertions (excluding the drops that follow them).
    pub insert: u64,
    /// During `get_min`.
    pub get_min: u64,
    /// During overflow drops (removal of the largest tag).
    pub drop: u64,
}

/// A double-ended priority queue of [`Entry`]s ordered by [`Tag`], counting elementary
/// operations. Precondition, as in fair queueing: the tags of one conversation are
/// inserted in increasing order (PERC relies on it for speed; it stays correct, at a
/// counted cost, if they are not).
pub trait BidQueue<V> {
    /// The paper's name of the structure (`"LINK"`, ...).
    const NAME: &'static str;

    /// Whether [`BidQueue::ops`] counts the paper's elementary operations (`false`
    /// only for [`FastPerc`], which always reports zero).
    const COUNTED: bool = true;

    /// An empty structure for conversations `0..conversations`, with room for
    /// `packets` entries before it allocates.
    fn new(conversations: usize, packets: usize) -> Self;

    /// Adds `e`.
    fn insert(&mut self, e: Entry<V>);

    /// Adds `e`, whose tag the caller guarantees to be larger than the tag of every
    /// entry of its conversation inserted so far (as Keshav FQ's bids are, see
    /// [`crate::sched::keshav::bid`]): a structure may then append it without looking
    /// at the conversation's newest entry. The same result as [`BidQueue::insert`],
    /// which is what every structure but [`FastPerc`] does here.
    #[inline]
    fn insert_newest(&mut self, e: Entry<V>) {
        self.insert(e);
    }

    /// Removes and returns the entry with the smallest tag.
    fn pop_min(&mut self) -> Option<Entry<V>>;

    /// Removes and returns the entry with the largest tag (an overflow drop).
    fn pop_max(&mut self) -> Option<Entry<V>>;

    /// Removes and returns the entry of `conv` with the largest tag (its newest), if it
    /// has one. Not part of the paper's cost study: its work is not counted. O(1) to
    /// O(log) for PERC, HEAP and LINK scan or walk the buffer (O(size)).
    fn pop_newest_of(&mut self, conv: u32) -> Option<Entry<V>>;

    /// Number of entries.
    fn len(&self) -> usize;

    /// Whether the structure holds no entry.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Elementary operations so far.
    fn ops(&self) -> Ops;

    /// Checks the structure's invariants (for tests).
    fn check(&self) -> Result<(), String>;
}

/// Which structure: the four of the paper.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Structure {
    /// [`LinkedList`].
    Link,
    /// [`SearchTree`].
    Tree,
    /// [`DoubleHeap`].
    Heap,
    /// [`PerConversation`] (the paper's best; the default).
    #[default]
    Perc,
}

impl Structure {
    /// Every structure, in the paper's order.
    pub const ALL: [Structure; 4] = [
        Structure::Link,
        Structure::Tree,
        Structure::Heap,
        Structure::Perc,
    ];

    /// The lowercase name used in settings (`"link"`, `"tree"`, `"heap"`, `"perc"`).
    pub const fn name(self) -> &'static str {
        match self {
            Structure::Link => "link",
            Structure::Tree => "tree",
            Structure::Heap => "heap",
            Structure::Perc => "perc",
        }
    }

    /// The structure named `name` (as [`Structure::name`] spells it).
    pub fn from_name(name: &str) -> Option<Structure> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// What a [`Bounded`] buffer has done: counts of operations and the elementary
/// operations they cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cost {
    /// Insertions.
    pub insertions: u64,
    /// `get_min` calls that returned an entry.
    pub get_mins: u64,
    /// Entries dropped on overflow.
    pub drops: u64,
    /// Elementary operations, by operation.
    pub ops: Ops,
    /// The largest cost of one insertion, excluding its drops.
    pub max_insert: u64,
    /// The largest cost of one insertion including its drops.
    pub max_insert_with_drops: u64,
}

/// A [`BidQueue`] with a buffer limit: the paper's bounded heap.
#[derive(Debug)]
pub struct Bounded<V, S> {
    inner: S,
    limit: Limit,
    bytes: u64,
    cost: Cost,
    _values: core::marker::PhantomData<fn() -> V>,
}

impl<V, S: BidQueue<V>> Bounded<V, S> {
    /// An empty buffer of `limit` for conversations `0..conversations`. With a packet
    /// limit, room for `limit + 1` entries (the paper's one spare buffer), up to 65 536,
    /// is reserved; beyond that, and with a byte limit, the structure grows to its
    /// largest size once and then allocates no more.
    pub fn new(conversations: usize, limit: Limit) -> Self {
        let room = match limit {
            Limit::Packets(n) => n.saturating_add(1).min(1 << 16) as usize,
            Limit::Bytes(_) => 64,
        };
        Bounded {
            inner: S::new(conversations, room),
            limit,
            bytes: 0,
            cost: Cost::default(),
            _values: core::marker::PhantomData,
        }
    }

    /// The paper's `insert()`: adds `e`, then while the buffer exceeds its limit removes
    /// the entry with the largest tag and hands it to `dropped` (possibly `e` itself).
    #[inline]
    pub fn insert(&mut self, e: Entry<V>, dropped: impl FnMut(Entry<V>)) {
        self.insert_by(e, S::insert, dropped);
    }

    /// [`Bounded::insert`] of an entry whose tag is larger than every tag of its
    /// conversation inserted so far ([`BidQueue::insert_newest`]).
    #[inline]
    pub fn insert_newest(&mut self, e: Entry<V>, dropped: impl FnMut(Entry<V>)) {
        self.insert_by(e, S::insert_newest, dropped);
    }

    /// [`Bounded::insert`], the entry added by `add`.
    #[inline(always)]
    fn insert_by(
        &mut self,
        e: Entry<V>,
        add: impl FnOnce(&mut S, Entry<V>),
        mut dropped: impl FnMut(Entry<V>),
    ) {
        self.bytes += u64::from(e.size);
        let before = self.inner.ops();
        add(&mut self.inner, e);
        let mid = self.inner.ops();
        while self.over() {
            let Some(victim) = self.inner.pop_max() else {
                break;
            };
            self.bytes -= u64::from(victim.size);
            self.cost.drops += 1;
            dropped(victim);
        }
        let after = self.inner.ops();
        let c = &mut self.cost;
        c.insertions += 1;
        let insert = mid.insert - before.insert;
        c.max_insert = c.max_insert.max(insert);
        c.max_insert_with_drops = c.max_insert_with_drops.max(insert + after.drop - mid.drop);
    }

    #[inline]
    fn over(&self) -> bool {
        match self.limit {
            Limit::Packets(n) => self.inner.len() as u64 > n,
            Limit::Bytes(b) => self.bytes > b.0,
        }
    }

    /// The paper's `get_min()`: removes and returns the entry with the smallest tag.
    #[inline]
    pub fn get_min(&mut self) -> Option<Entry<V>> {
        let e = self.inner.pop_min()?;
        self.bytes -= u64::from(e.size);
        self.cost.get_mins += 1;
        Some(e)
    }

    /// Removes and returns the newest entry of `conv` (see [`BidQueue::pop_newest_of`]).
    pub fn remove_newest(&mut self, conv: u32) -> Option<Entry<V>> {
        let e = self.inner.pop_newest_of(conv)?;
        self.bytes -= u64::from(e.size);
        Some(e)
    }

    /// Entries buffered.
    #[inline]
    pub fn len(&self) -> usize {
        self.inner.len()
    }

    /// Whether nothing is buffered.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    /// Bytes buffered.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The limit.
    pub fn limit(&self) -> Limit {
        self.limit
    }

    /// Operations and their elementary costs so far.
    pub fn cost(&self) -> Cost {
        Cost {
            ops: self.inner.ops(),
            ..self.cost
        }
    }

    /// The structure.
    pub fn structure(&self) -> &S {
        &self.inner
    }
}
