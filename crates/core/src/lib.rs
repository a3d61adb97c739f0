//! linkshare-core: the sans-IO scheduling core of linkshare.
//!
//! Everything in this crate is integer-time and I/O-free: no clock reads, no threads,
//! no floating point in scheduler state. Every call that depends on time takes `now`.
//! The same code runs inside the deterministic simulator (`linkshare-sim`) and inside
//! the userspace shaper.
//!
//! * [`units`]: [`Instant`], [`Duration`], [`Bytes`], [`Rate`] and tc-style parsing.
//! * [`hierarchy`]: the validated class tree every scheduler is built from.
//! * [`sched`]: the [`Scheduler`] contract and one module per discipline.
//! * [`ds`]: the data structures the disciplines are built from (heaps, sets, rings,
//!   per-class queues).
//! * [`share`]: the default rate of a class that gives none, for every discipline.
//! * [`buffer`]: buffer policies usable with any discipline.
//! * [`stats`]: the statistics wrapper ([`Qdisc`]) kept once around every scheduler.
//! * [`port`]: an egress port (qdisc + line rate + per-packet overhead).
//! * [`perflow`]: per-flow classes, instances of a template handed to flows as they come.
//! * [`echo`]: user input quoted back in messages, cut to a readable length.
//! * [`workload`]: synthetic workloads that drive a scheduler directly, shared by the
//!   cost benchmarks and the cost reproductions.
//! * `testing` (feature `testing`): the conformance harness every scheduler is run
//!   through, and test fixtures.
#![warn(missing_docs)]

pub mod buffer;
pub mod curve;
pub mod ds;
pub mod echo;
pub mod hierarchy;
pub mod perflow;
pub mod port;
pub mod sched;
pub mod share;
pub mod stats;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod units;
pub mod workload;

pub use hierarchy::{ClassId, ClassTree};
pub use sched::{Dequeued, DropReason, Dropped, Enqueue, Packet, PollAt, Scheduler};
pub use stats::Qdisc;
pub use units::{Bytes, Duration, Instant, Rate};
