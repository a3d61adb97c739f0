//! An egress port: a [`Qdisc`] feeding a link of fixed rate.
//!
//! One state machine paces packets onto the wire for both the simulator and the shaper:
//! a packet of `len` bytes started at `t` occupies the link until
//! `t + rate.tx_time(len + overhead)` (rounded up to the nanosecond), and the next one
//! cannot start earlier.
//!
//! A driver that cannot always run on time (the shaper: a thread the operating system or
//! the hypervisor may stall) can give the port a **catch-up** allowance `c`
//! ([`EgressPort::with_catch_up`]): a packet that leaves at `now` is then counted as
//! started at `max(busy_until, now − c)`, so time the link lost while the driver was
//! late, up to `c`, is made up by sending the next packets back to back. The link is
//! then a token bucket of depth `c · rate` in front of the line rate: the bytes it starts
//! within any interval of length `T` are at most `rate · (T + c)` plus one packet, and
//! over long intervals the rate is exactly `rate`. The simulator, which calls at every
//! `busy_until`, keeps `c = 0`: a packet starts exactly when the link is free.
//!
//! Driving it: after every enqueue and whenever the link becomes free (`busy_until`
//! reached) or a shaping timer fires, call [`EgressPort::transmit`] and act on the
//! [`Transmit`] it returns.

use crate::hierarchy::{ClassId, ClassTree};
use crate::sched::{Dequeued, Dropped, Packet, PollAt, Scheduler, len_of};
use crate::stats::{Counters, Qdisc};
use crate::units::{Bytes, Duration, Instant, Rate};

/// What [`EgressPort::transmit`] did.
#[must_use = "a started packet must be delivered, and a wake-up time kept"]
#[derive(Debug)]
pub enum Transmit<P> {
    /// A packet went onto the wire at `now`; its last bit leaves at `done_at`.
    Started {
        /// The packet and its class.
        pkt: Dequeued<P>,
        /// When the link is free again.
        done_at: Instant,
    },
    /// The link is still sending; come back at this instant.
    Busy(Instant),
    /// Packets are held by shaping; come back at this instant.
    Wait(Instant),
    /// Nothing is queued.
    Idle,
}

/// A scheduler in front of a link of fixed rate. See the [module docs](self).
#[derive(Debug)]
pub struct EgressPort<P, S> {
    qdisc: Qdisc<P, S>,
    rate: Rate,
    overhead: Bytes,
    /// When the packet on the wire finishes (the link model's clock).
    busy_until: Instant,
    /// How far a start may be counted before `now` (the [module docs](self)).
    catch_up: Duration,
}

impl<P: Packet, S: Scheduler<P>> EgressPort<P, S> {
    /// A port sending at `rate`, counting `overhead` extra bytes per packet on the wire
    /// (framing, preamble, inter-frame gap; zero for the papers' experiments).
    pub fn new(qdisc: Qdisc<P, S>, rate: Rate, overhead: Bytes) -> EgressPort<P, S> {
        EgressPort {
            qdisc,
            rate,
            overhead,
            busy_until: Instant::ZERO,
            catch_up: Duration::ZERO,
        }
    }

    /// The same port, making up to `catch_up` of link time lost while its driver was
    /// late (the [module docs](self)); zero (the default) starts every packet at `now`.
    pub fn with_catch_up(mut self, catch_up: Duration) -> EgressPort<P, S> {
        self.catch_up = catch_up;
        self
    }

    /// A port over `sched` with no shared buffer limit and no overhead.
    pub fn simple(tree: &ClassTree, sched: S) -> EgressPort<P, S> {
        EgressPort::new(
            Qdisc::new(tree, sched, Default::default()),
            tree.link_rate(),
            Bytes::ZERO,
        )
    }

    /// Resets leaf `class`, which holds no packet ([`Qdisc::reset_class`]).
    pub fn reset_class(&mut self, now: Instant, class: ClassId) {
        self.qdisc.reset_class(now, class);
    }

    /// The qdisc (counters, backlog).
    pub fn qdisc(&self) -> &Qdisc<P, S> {
        &self.qdisc
    }

    /// Line rate.
    pub fn rate(&self) -> Rate {
        self.rate
    }

    /// When the packet on the wire (if any) finishes.
    pub fn busy_until(&self) -> Instant {
        self.busy_until
    }

    /// Offers a packet; see [`Qdisc::enqueue`].
    pub fn enqueue(
        &mut self,
        now: Instant,
        class: ClassId,
        pkt: P,
        on_drop: impl FnMut(Dropped<P>),
    ) -> bool {
        self.qdisc.enqueue(now, class, pkt, on_drop)
    }

    /// Counts an arrival the driver could not buffer; see [`Qdisc::refuse`].
    pub fn refuse(&mut self, class: ClassId, len: Bytes, reason: crate::sched::DropReason) {
        self.qdisc.refuse(class, len, reason);
    }

    /// Replaces the qdisc, line rate and overhead by a new configuration's at `now`,
    /// keeping the packet on the wire (`busy_until` is unchanged): `qdisc` takes over the
    /// old qdisc's classes, counters and queued packets as [`Qdisc::take_over`] says,
    /// with `map` from the old class ids to the new. Returns the final counters of the
    /// removed classes (ids of the old tree); their queued packets went to `on_drop`.
    pub fn reconfigure(
        &mut self,
        now: Instant,
        qdisc: Qdisc<P, S>,
        rate: Rate,
        overhead: Bytes,
        map: impl Fn(ClassId) -> Option<ClassId>,
        on_drop: impl FnMut(Dropped<P>),
    ) -> Vec<(ClassId, Counters)> {
        let old = core::mem::replace(&mut self.qdisc, qdisc);
        self.rate = rate;
        self.overhead = overhead;
        self.qdisc.take_over(now, old, map, on_drop)
    }

    /// Starts the next packet if the link is free and the scheduler releases one.
    pub fn transmit(&mut self, now: Instant) -> Transmit<P> {
        if now < self.busy_until {
            return Transmit::Busy(self.busy_until);
        }
        match self.qdisc.dequeue(now) {
            Some(pkt) => {
                let wire = len_of(&pkt.pkt) + self.overhead;
                let earliest = Instant(now.as_nanos().saturating_sub(self.catch_up.as_nanos()));
                let start = earliest.max(self.busy_until);
                let done_at = start.saturating_add(self.rate.tx_time(wire));
                self.busy_until = done_at;
                Transmit::Started { pkt, done_at }
            }
            None => match self.qdisc.poll_at(now) {
                PollAt::At(t) if t > now => Transmit::Wait(t),
                PollAt::Idle => Transmit::Idle,
                // A scheduler that says `Now` (or a past instant) but released nothing
                // breaks its contract; the conformance harness catches it. Treat it as
                // idle rather than spinning.
                PollAt::Now | PollAt::At(_) => Transmit::Idle,
            },
        }
    }
}
