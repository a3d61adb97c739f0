//! The data structures the disciplines are built from, each general (no discipline's
//! rules in it) and allocation-free once built:
//!
//! | structure | role | used by |
//! | --- | --- | --- |
//! | [`IndexedHeap`] | min-priority queue of small integer items keyed by any [`HeapKey`], any item re-keyed or removed in O(log n) | H-FSC, WF2Q+, SCED, HTB's readiness, the qdisc's push-out, the tails of Keshav FQ's uncounted PERC ([`bids::FastPerc`]) |
//! | [`IdSet`] | ordered set of small integers with successor queries (hierarchical bitmap) | HTB's rows and feeds, and its wait queues' occupied slots |
//! | [`Ring`] | intrusive round-robin ring, O(1) removal from any position | DRR, strict priority, CBQ |
//! | [`ClassQueues`]: [`DequeQueues`]; [`SlotPool`] with [`QueueEnds`] | per-class FIFO queues of packets: a deque per class; or one pool of slots, each queue's ends kept by the caller | HLS, HDRR, HTB (deques); H-FSC (the pool, the ends in its leaf records) |
//! | [`CountedHeap`] ([`MinHeap`], [`MaxHeap`]) | binary heap of any key that counts exchanges, the unit of Keshav's cost study | Keshav FQ's round number when its buffer counts; the double heap and PERC of [`bids`] |
//! | [`WinnerTree`] | winner (tournament) tree of `u128` entries in fixed slots, four children to a cache line: the smallest in O(1), re-keyed or removed in three branch-free comparisons a level, an entry added or lowered in one | the heads of [`bids::heads::HeadTree`] |
//! | [`bids`]: LINK, TREE, HEAP, PERC behind [`bids::BidQueue`] | the four buffer structures of Keshav's study, each counting its elementary operations, with its record/replay harness; PERC uncounted for the packet path, its heads in [`bids::heads::HeadTree`] (compact keys over exact tags, in a [`WinnerTree`]) | Keshav FQ; the heads also WFQ, SCFQ, STFQ |
//!
//! Where several structures fill one role, a trait names the role ([`ClassQueues`]), so
//! that a discipline can change structure without changing its code, and one property
//! test checks every implementation against the same model.
//!
//! The heap counts elementary operations (`ops`: sift steps, a comparison and possibly
//! an exchange each), so that trace-driven cost evaluations in the style of Keshav's
//! paper can report costs independent of the machine.

pub mod bids;
mod counted_heap;
pub mod idset;
mod indexed_heap;
pub mod queues;
pub mod ring;
pub mod winner_tree;

pub use counted_heap::{CountedHeap, MaxHeap, MinHeap};
pub use idset::IdSet;
pub use indexed_heap::{HeapKey, IndexedHeap};
pub use queues::{ClassQueues, DequeQueues, QueueEnds, SlotPool};
pub use ring::{Link, Linked, Ring};
pub use winner_tree::WinnerTree;
