//! Priority queues used by the schedulers, with operation counters.
//!
//! Every queue counts its elementary operations, so that costs can be reported
//! independently of the machine: [`IndexedHeap`] (4-ary, `u64` keys, the schedulers'
//! workhorse) counts sift steps; [`CountedHeap`] (binary, any key, min or max) counts
//! exchanges, the unit of Keshav's cost study; [`bids`] holds the four buffer
//! structures of that study behind one trait, with its record/replay harness.

pub mod bids;
mod counted_heap;
mod indexed_heap;

pub use counted_heap::{CountedHeap, MaxHeap, MinHeap};
pub use indexed_heap::IndexedHeap;
