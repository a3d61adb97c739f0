//! The scheduler contract and one module per discipline.
//!
//! # Contract
//!
//! A scheduler owns its queues and never reads a clock; every call takes `now`, and
//! successive calls never go back in time.
//!
//! * [`Scheduler::enqueue`] offers a packet to a **leaf** class. [`crate::Qdisc`]
//!   guarantees every discipline that `class` is a leaf of the tree it was built for and
//!   that the packet is no longer than the class's maximum packet size (it drops other
//!   arrivals itself, as [`DropReason::NotALeaf`] and [`DropReason::TooLarge`]); a
//!   discipline driven without a `Qdisc` must be given the same guarantee, and may panic
//!   without it. The result is
//!   [`Enqueue::Queued`] or [`Enqueue::Dropped`] with the packet and a [`DropReason`]:
//!   a drop is a value, never an error or a silent loss. A discipline whose drop rule may
//!   pick a packet other than the arrival (Keshav's largest bid, push-out) hands such
//!   victims to `evicted`; the arrival's own fate is the return value.
//! * [`Scheduler::dequeue`] returns the packet to transmit at `now`, or `None`. A
//!   non-work-conserving discipline may return `None` while it holds packets.
//! * [`Scheduler::poll_at`] tells the driver when calling `dequeue` can next return a
//!   packet: [`PollAt::Now`], [`PollAt::At`] a future instant, or [`PollAt::Idle`] (empty).
//!   It must be honest: `Now` means `dequeue(now)` returns a packet; `At(t)` means
//!   `dequeue` returns nothing before `t` unless a packet arrives in between; `Idle`
//!   means no packet is queued. The conformance harness (`testing`) checks it.
//! * [`Scheduler::reset_class`] makes an empty leaf a class that has never been active:
//!   the instances of a per-flow template ([`crate::perflow`]) serve one flow after
//!   another, and each new flow must start afresh. A discipline that keeps per-class
//!   history (curves, virtual times, finish numbers, token buckets) forgets it there; one
//!   that cannot says so with [`Scheduler::resets_classes`] (the default: `false`) and
//!   [`SchedulerKind::resets_classes`], and trees with per-flow templates are refused for
//!   it at validation.
//! * [`Scheduler::remove_newest`] takes the most recently queued packet of a class out of
//!   the discipline, [`Scheduler::remove_behind_head`] the packet right behind its head
//!   (used by the push-out buffer policies, see [`crate::buffer`]).
//! * [`Scheduler::discipline_counters`] reports what only the discipline knows (JoBS's
//!   relaxed bounds and current rates); a driver asks once, at the end of a run.
//!
//! Statistics and buffer policies are *not* the scheduler's job: [`crate::Qdisc`] wraps
//! every scheduler and keeps them once, with the conservation identities.
//!
//! # Steady state
//!
//! After warm-up (queues have reached their peak length once) no call allocates.

pub mod cbq;
pub mod drr;
pub mod fifo;
pub mod fsc;
pub mod hdrr;
pub mod hfsc;
pub mod hls;
pub mod htb;
pub mod jobs;
pub mod keshav;
pub mod pfq;
pub mod prio;
mod registry;
pub mod sced;
pub mod wf2q;

pub use registry::{
    BuildError, SchedulerConfig, SchedulerKind, UnknownScheduler, build, class_problem,
};

use crate::hierarchy::ClassId;
use crate::units::{Bytes, Instant};

/// Anything a scheduler can queue: it only needs to know its length on the wire.
pub trait Packet {
    /// Length on the wire in bytes, as counted by the scheduler and the link.
    fn wire_len(&self) -> u32;
}

/// Why a packet was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum DropReason {
    /// The class's own buffer limit was reached (tail drop).
    ClassLimit,
    /// The buffer shared by all classes was full (tail drop).
    SharedLimit,
    /// Pushed out of the longest queue to make room for an arrival (FSC paper §2.4).
    PushedOut,
    /// The packet is longer than the class's maximum packet size.
    TooLarge,
    /// The packet was addressed to a class that cannot hold packets (not a leaf, or no
    /// such class).
    NotALeaf,
    /// The shared buffer overflowed and this packet had the largest bid (Keshav's fair
    /// queueing drops largest bids first, possibly the arrival itself).
    LargestBid,
    /// The driver had no buffer to hold the arrival (the shaper's frame pool was
    /// exhausted); counted with [`crate::Qdisc::refuse`], the discipline never saw it.
    NoBuffer,
    /// The packet was queued in a class that a new configuration removed (or changed
    /// from a leaf into an interior class); see [`crate::Qdisc::take_over`].
    Reconfigured,
    /// Dropped from the tail of its class by the discipline so that the rest of the
    /// class's backlog can still meet the class's delay bound (JoBS's delay-driven drops,
    /// paper Eq. 36): not a full buffer, an infeasible delay.
    DelayBound,
}

impl DropReason {
    /// Every reason, in a fixed order (used for counters and reports).
    pub const ALL: [DropReason; 9] = [
        DropReason::ClassLimit,
        DropReason::SharedLimit,
        DropReason::PushedOut,
        DropReason::TooLarge,
        DropReason::NotALeaf,
        DropReason::LargestBid,
        DropReason::NoBuffer,
        DropReason::Reconfigured,
        DropReason::DelayBound,
    ];
    /// Number of reasons.
    pub const COUNT: usize = Self::ALL.len();

    /// Dense index in `0..COUNT`.
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// Stable snake_case name used in reports (`summary.json`, CSV).
    pub const fn as_str(self) -> &'static str {
        match self {
            DropReason::ClassLimit => "class_limit",
            DropReason::SharedLimit => "shared_limit",
            DropReason::PushedOut => "pushed_out",
            DropReason::TooLarge => "too_large",
            DropReason::NotALeaf => "not_a_leaf",
            DropReason::LargestBid => "largest_bid",
            DropReason::NoBuffer => "no_buffer",
            DropReason::Reconfigured => "reconfigured",
            DropReason::DelayBound => "delay_bound",
        }
    }
}

/// One of a discipline's own counters, as [`Scheduler::discipline_counters`] reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DisciplineCounter {
    /// The leaf it is about, or `None` for the discipline as a whole.
    pub class: Option<ClassId>,
    /// Stable snake_case name; a unit, where there is one, is its last word
    /// (`rate_bps`, `loss_ppb`).
    pub name: &'static str,
    /// The value.
    pub value: u64,
}

/// A dropped packet with the class it was queued in (or offered to) and the reason.
#[derive(Debug)]
pub struct Dropped<P> {
    /// The packet.
    pub pkt: P,
    /// The class it belonged to.
    pub class: ClassId,
    /// Why it was dropped.
    pub reason: DropReason,
}

/// The fate of an arriving packet.
#[must_use = "a dropped packet must be accounted for"]
#[derive(Debug)]
pub enum Enqueue<P> {
    /// The packet is queued.
    Queued,
    /// The packet was refused.
    Dropped(Dropped<P>),
}

/// A packet leaving the scheduler, with its class.
#[derive(Debug)]
pub struct Dequeued<P> {
    /// The packet.
    pub pkt: P,
    /// The leaf class it was queued in.
    pub class: ClassId,
}

/// When the driver should next call [`Scheduler::dequeue`].
///
/// Ordered by urgency: `Now` < `At(t)` (earlier `t` first) < `Idle`, so the earliest of
/// several answers is their minimum.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PollAt {
    /// A packet can be dequeued now.
    Now,
    /// Packets are queued but none may leave before this instant (shaping).
    At(Instant),
    /// Nothing is queued.
    Idle,
}

impl PollAt {
    /// What a work-conserving discipline answers: `Now` while it holds a packet, `Idle`
    /// when it holds none.
    #[inline]
    pub const fn work_conserving(holds_packets: bool) -> PollAt {
        if holds_packets {
            PollAt::Now
        } else {
            PollAt::Idle
        }
    }
}

/// A packet scheduling discipline. See the [module docs](self) for the timing contract.
pub trait Scheduler<P: Packet> {
    /// Short stable name (`"fifo"`, `"drr"`, ...), as used on the command line.
    fn name(&self) -> &'static str;

    /// Whether the discipline is work-conserving: it never idles while it holds packets,
    /// so `poll_at` is never `At(_)`. The conformance harness checks the claim.
    fn is_work_conserving(&self) -> bool;

    /// Offers `pkt` to leaf `class` at `now`. Packets other than `pkt` that the
    /// discipline decides to drop are pushed onto `evicted`.
    fn enqueue(
        &mut self,
        now: Instant,
        class: ClassId,
        pkt: P,
        evicted: &mut Vec<Dropped<P>>,
    ) -> Enqueue<P>;

    /// The next packet to send at `now`, if the discipline releases one.
    #[must_use = "a dequeued packet must be sent or accounted for"]
    fn dequeue(&mut self, now: Instant) -> Option<Dequeued<P>>;

    /// When `dequeue` can next return a packet (see the module docs).
    fn poll_at(&self, now: Instant) -> PollAt;

    /// Removes and returns the most recently queued packet of `class`, if it has one.
    #[must_use = "a removed packet must be accounted for as dropped"]
    fn remove_newest(&mut self, class: ClassId) -> Option<P>;

    /// Removes and returns the packet right behind the head of `class` (its second
    /// packet), or its only packet if it holds exactly one; `None` if it holds none. Used
    /// by the FSC paper's push-out rule ([`crate::buffer::Overflow::PushOutSecond`]).
    /// While a second packet exists the head stays, so nothing the discipline derives
    /// from the head (its length, deadlines, virtual times) changes; removing an only
    /// packet empties the class exactly as [`Scheduler::remove_newest`] does. Must not
    /// allocate. A discipline that keeps its own buffer ([`Scheduler::owns_buffer`]) is
    /// never asked (the qdisc applies no buffer policy to it) and may return `None`.
    #[must_use = "a removed packet must be accounted for as dropped"]
    fn remove_behind_head(&mut self, class: ClassId) -> Option<P>;

    /// Tells the discipline that an arrival to leaf `class` at `now` was refused before
    /// it saw it: [`crate::Qdisc`] calls this, in place of [`Scheduler::enqueue`], when
    /// its buffer policy (the class's limit or the shared limit) turns the packet away
    /// ([`DropReason::ClassLimit`], [`DropReason::SharedLimit`]; not for
    /// [`DropReason::NotALeaf`] or [`DropReason::TooLarge`]). `now` is the arrival's
    /// instant, in the same non-decreasing sequence as every other call. The packet is
    /// gone and the discipline's queues are unchanged; only a discipline whose state
    /// reacts to every arrival, admitted or not, overrides this (CBQ lowers its top-level
    /// cutoff, as Linux's `cbq_enqueue` does for a packet its class queue drops). The
    /// default does nothing. Must not allocate.
    #[inline]
    fn arrival_refused(&mut self, now: Instant, class: ClassId) {
        let _ = (now, class);
    }

    /// Whether the discipline keeps its own buffer and decides every drop itself
    /// (JoBS's loss feedback, Keshav's largest-bid drop). [`crate::Qdisc`] asks once, when
    /// it wraps the discipline, and then applies neither class limits nor its shared
    /// limit: the discipline refuses arrivals through [`Enqueue::Dropped`] and drops
    /// queued packets through `evicted`, each with its reason, and must bound its own
    /// backlog (its settings say how; validation refuses an unbounded one). The default,
    /// `false`, leaves the buffer to the qdisc's policies ([`crate::buffer`]).
    fn owns_buffer(&self) -> bool {
        false
    }

    /// Whether the discipline implements [`Scheduler::reset_class`], which per-flow
    /// classes need ([`crate::perflow`]). Must equal [`SchedulerKind::resets_classes`] for
    /// a discipline of the registry (a test checks it). The default is `false`.
    fn resets_classes(&self) -> bool {
        false
    }

    /// Forgets everything the discipline remembers about leaf `class`, so that from now
    /// on it is served as a class that has never been active: a per-flow instance
    /// ([`crate::perflow`]) starting to serve a new flow. Called at `now` (in the same
    /// non-decreasing sequence as every other call), only for a leaf that holds no
    /// packet, and only if [`Scheduler::resets_classes`] is true. Must not allocate. The
    /// default does nothing: right for a discipline that keeps nothing of an empty class.
    fn reset_class(&mut self, now: Instant, class: ClassId) {
        let _ = (now, class);
    }

    /// The discipline's own counters and state worth reporting, in a fixed order (JoBS:
    /// its relaxed bounds by kind and its current rates). Drivers call it once, at the
    /// end of a run (the simulator puts the values in its result per link); it may
    /// allocate. The default, for disciplines with nothing of their own to report, is
    /// empty.
    fn discipline_counters(&self) -> Vec<DisciplineCounter> {
        Vec::new()
    }
}

impl<P: Packet, S: Scheduler<P> + ?Sized> Scheduler<P> for Box<S> {
    #[inline]
    fn name(&self) -> &'static str {
        (**self).name()
    }
    #[inline]
    fn is_work_conserving(&self) -> bool {
        (**self).is_work_conserving()
    }
    #[inline]
    fn enqueue(
        &mut self,
        now: Instant,
        class: ClassId,
        pkt: P,
        evicted: &mut Vec<Dropped<P>>,
    ) -> Enqueue<P> {
        (**self).enqueue(now, class, pkt, evicted)
    }
    #[inline]
    fn dequeue(&mut self, now: Instant) -> Option<Dequeued<P>> {
        (**self).dequeue(now)
    }
    #[inline]
    fn poll_at(&self, now: Instant) -> PollAt {
        (**self).poll_at(now)
    }
    #[inline]
    fn remove_newest(&mut self, class: ClassId) -> Option<P> {
        (**self).remove_newest(class)
    }
    #[inline]
    fn remove_behind_head(&mut self, class: ClassId) -> Option<P> {
        (**self).remove_behind_head(class)
    }
    #[inline]
    fn arrival_refused(&mut self, now: Instant, class: ClassId) {
        (**self).arrival_refused(now, class);
    }
    fn owns_buffer(&self) -> bool {
        (**self).owns_buffer()
    }
    fn resets_classes(&self) -> bool {
        (**self).resets_classes()
    }
    #[inline]
    fn reset_class(&mut self, now: Instant, class: ClassId) {
        (**self).reset_class(now, class);
    }
    fn discipline_counters(&self) -> Vec<DisciplineCounter> {
        (**self).discipline_counters()
    }
}

/// Length of a packet as [`Bytes`].
#[inline]
pub fn len_of<P: Packet>(p: &P) -> Bytes {
    Bytes(u64::from(p.wire_len()))
}
