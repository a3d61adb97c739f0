//! Buffer policies usable with any discipline.
//!
//! Every class may have its own limit ([`crate::hierarchy::ClassSpec::limit`]); an
//! arrival that does not fit its class's limit is tail-dropped
//! ([`crate::DropReason::ClassLimit`]). On top of that a [`BufferConfig`] may give a
//! limit shared by all classes, with one of two overflow rules:
//!
//! * [`Overflow::TailDrop`]: the arrival is dropped ([`crate::DropReason::SharedLimit`]).
//! * [`Overflow::PushOutLongest`]: the newest packet of the longest queue is pushed out
//!   ([`crate::DropReason::PushedOut`]) until the arrival fits — the policy of the FSC
//!   paper §2.4. "Longest" is measured in the unit of the shared limit (packets or
//!   bytes); ties go to the class with the smaller id. If the arrival's own class is the
//!   longest, the arrival is dropped instead ([`crate::DropReason::SharedLimit`]): pushing
//!   out its own queue's tail to admit it would only reorder that class.
//!
//! The policy is applied by [`crate::Qdisc`], which tracks backlogs; the discipline only
//! provides [`crate::Scheduler::remove_newest`].

use crate::hierarchy::Limit;

/// What to do when the shared buffer is full.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Overflow {
    /// Drop the arrival.
    #[default]
    TailDrop,
    /// Push out the newest packet of the longest queue.
    PushOutLongest,
}

/// The buffer shared by all classes of one scheduler.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BufferConfig {
    /// Limit on the total backlog; `None`: unlimited (only per-class limits apply).
    pub shared: Option<Limit>,
    /// What happens on overflow of `shared`.
    pub overflow: Overflow,
}
