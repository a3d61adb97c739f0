//! Priority queues used by the schedulers, with operation counters.
//!
//! The counters (`ops`) count elementary operations — a sift step (one comparison and
//! possibly one exchange) — so that trace-driven cost evaluations in the style of
//! Keshav's paper can report costs independent of the machine.

mod indexed_heap;

pub use indexed_heap::IndexedHeap;
