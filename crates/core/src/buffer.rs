//! Buffer policies usable with any discipline.
//!
//! Every class may have its own limit ([`crate::hierarchy::ClassSpec::limit`]); an
//! arrival that does not fit its class's limit is tail-dropped
//! ([`crate::DropReason::ClassLimit`]). On top of that a [`BufferConfig`] may give a
//! limit shared by all classes, with one of three overflow rules:
//!
//! * [`Overflow::TailDrop`]: the arrival is dropped ([`crate::DropReason::SharedLimit`]).
//! * [`Overflow::PushOutLongest`]: the newest packet of the longest queue is pushed out
//!   ([`crate::DropReason::PushedOut`]) until the arrival fits. If the arrival's own
//!   class is the longest, the arrival is dropped instead
//!   ([`crate::DropReason::SharedLimit`]): pushing out its own queue's tail to admit it
//!   would only reorder that class.
//! * [`Overflow::PushOutSecond`]: the rule of the FSC paper's simulations (§3, after
//!   Suter, Lakshman, Stiliadis and Choudhury, INFOCOM '98): the arrival is queued, then,
//!   while the shared buffer holds more than its limit, the **second** packet of the
//!   longest queue — the one right behind its head — is pushed out
//!   ([`crate::DropReason::PushedOut`]); a longest queue holding a single packet loses
//!   that packet. The arrival's own class counts like any other, so the arrival itself
//!   is pushed out only when it is the single packet of the longest queue. Dropping
//!   behind the head rather than at the tail keeps the packets that have waited longest
//!   and tells a TCP sender of the loss sooner (its duplicate acknowledgements start at
//!   once), which is why Suter et al. proposed it. The head is never the packet on the
//!   wire: a port dequeues a packet when its transmission starts.
//!
//! In both push-out rules "longest" is measured in the unit of the shared limit
//! (packets or bytes), and ties go to the class with the smaller id.
//!
//! The policies are applied by [`crate::Qdisc`], which tracks backlogs; the discipline
//! only provides [`crate::Scheduler::remove_newest`] and
//! [`crate::Scheduler::remove_behind_head`].

use crate::hierarchy::Limit;

/// What to do when the shared buffer is full.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Overflow {
    /// Drop the arrival.
    #[default]
    TailDrop,
    /// Push out the newest packet of the longest queue (refusing the arrival when its own
    /// class is the longest).
    PushOutLongest,
    /// Queue the arrival, then push out the second packet of the longest queue (its only
    /// packet if it holds one) until the buffer is within its limit: the FSC paper's rule.
    PushOutSecond,
}

impl Overflow {
    /// Whether the rule pushes packets out of the longest queue (and so needs the
    /// queues ordered by length).
    pub const fn pushes_out(self) -> bool {
        matches!(self, Overflow::PushOutLongest | Overflow::PushOutSecond)
    }

    /// The rule's name in scenario files: `tail-drop`, `push-out`, `push-out-second`.
    pub const fn name(self) -> &'static str {
        match self {
            Overflow::TailDrop => "tail-drop",
            Overflow::PushOutLongest => "push-out",
            Overflow::PushOutSecond => "push-out-second",
        }
    }
}

/// The buffer shared by all classes of one scheduler.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BufferConfig {
    /// Limit on the total backlog; `None`: unlimited (only per-class limits apply).
    pub shared: Option<Limit>,
    /// What happens on overflow of `shared`.
    pub overflow: Overflow,
}
