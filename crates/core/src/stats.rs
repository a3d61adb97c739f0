//! Statistics and buffer management kept once, around every scheduler.
//!
//! [`Qdisc`] wraps a [`Scheduler`], applies the buffer policy ([`crate::buffer`]) and
//! counts every packet of every class. The counters obey, at every moment:
//!
//! * `arrived = enqueued + dropped_on_arrival` — an arrival is queued or refused;
//! * `enqueued = dequeued + queued + evicted` — a queued packet leaves, stays, or is
//!   pushed out later.
//!
//! [`Qdisc::check_conservation`] verifies both, per class and in total, in packets and
//! in bytes; the conformance harness calls it after every operation.
//!
//! The buffer policy decides before the discipline sees an arrival. An arrival to a leaf
//! that the class's limit or the shared limit refuses ([`DropReason::ClassLimit`],
//! [`DropReason::SharedLimit`]) is still reported to the discipline, through
//! [`Scheduler::arrival_refused`] at the arrival's instant, because some disciplines
//! react to every arrival, admitted or not (CBQ's top-level cutoff, as in Linux, where
//! the class's queue drops the packet inside the qdisc's enqueue). Arrivals refused as
//! [`DropReason::NotALeaf`] or [`DropReason::TooLarge`] are not: they are not arrivals
//! to a class that can hold packets, or not packets the class accepts at all.

use crate::buffer::{BufferConfig, Overflow};
use crate::ds::IndexedHeap;
use crate::hierarchy::{ClassId, ClassTree, Limit};
use crate::sched::{Dequeued, DropReason, Dropped, Enqueue, Packet, PollAt, Scheduler, len_of};
use crate::units::{Bytes, Instant};

/// A packet and byte count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Count {
    /// Packets.
    pub packets: u64,
    /// Bytes.
    pub bytes: u64,
}

impl Count {
    #[inline]
    fn add(&mut self, len: Bytes) {
        self.packets += 1;
        self.bytes += len.0;
    }
    #[inline]
    fn sub(&mut self, len: Bytes) {
        self.packets -= 1;
        self.bytes -= len.0;
    }
}

/// Counters of one class (or of the whole qdisc).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Packets offered.
    pub arrived: Count,
    /// Packets accepted into the queue.
    pub enqueued: Count,
    /// Packets handed to the link.
    pub dequeued: Count,
    /// Packets in the queue now.
    pub queued: Count,
    /// Arrivals refused, by [`DropReason::index`].
    pub dropped_on_arrival: [Count; DropReason::COUNT],
    /// Queued packets dropped later (push-out, discipline's own drop rule), by reason.
    pub evicted: [Count; DropReason::COUNT],
}

impl Counters {
    /// All drops (on arrival and evictions) of `reason`.
    pub fn dropped(&self, reason: DropReason) -> Count {
        let (a, e) = (
            self.dropped_on_arrival[reason.index()],
            self.evicted[reason.index()],
        );
        Count {
            packets: a.packets + e.packets,
            bytes: a.bytes + e.bytes,
        }
    }

    /// All drops, whatever the reason.
    pub fn dropped_total(&self) -> Count {
        DropReason::ALL.iter().fold(Count::default(), |acc, &r| {
            let d = self.dropped(r);
            Count {
                packets: acc.packets + d.packets,
                bytes: acc.bytes + d.bytes,
            }
        })
    }

    fn check(&self, what: &str) -> Result<(), String> {
        let sum = |cs: &[Count; DropReason::COUNT]| {
            cs.iter()
                .fold((0, 0), |(p, b), c| (p + c.packets, b + c.bytes))
        };
        let (ap, ab) = sum(&self.dropped_on_arrival);
        let (ep, eb) = sum(&self.evicted);
        let lhs = (self.arrived.packets, self.arrived.bytes);
        let rhs = (self.enqueued.packets + ap, self.enqueued.bytes + ab);
        if lhs != rhs {
            return Err(format!(
                "{what}: arrived {lhs:?} != enqueued + dropped on arrival {rhs:?}"
            ));
        }
        let lhs = (self.enqueued.packets, self.enqueued.bytes);
        let rhs = (
            self.dequeued.packets + self.queued.packets + ep,
            self.dequeued.bytes + self.queued.bytes + eb,
        );
        if lhs != rhs {
            return Err(format!(
                "{what}: enqueued {lhs:?} != dequeued + queued + evicted {rhs:?}"
            ));
        }
        Ok(())
    }
}

/// The admission rules of one class.
#[derive(Clone, Copy, Debug)]
struct Admission {
    is_leaf: bool,
    max_packet: Bytes,
    limit: Option<Limit>,
}

/// A scheduler with its buffer policy and counters. See the [module docs](self).
#[derive(Debug)]
pub struct Qdisc<P, S> {
    sched: S,
    per_class: Vec<Counters>,
    total: Counters,
    /// What an arrival to each class must satisfy, kept together so that admission
    /// reads one small record.
    admission: Vec<Admission>,
    buffer: BufferConfig,
    /// Leaves by backlog, largest first (key = `u64::MAX - backlog`); only maintained
    /// for [`Overflow::PushOutLongest`] with a shared limit.
    longest: Option<IndexedHeap>,
    /// Scratch space for packets the discipline evicts during one enqueue.
    evicted: Vec<Dropped<P>>,
}

impl<P: Packet, S: Scheduler<P>> Qdisc<P, S> {
    /// Wraps `sched`, built for `tree`, with the buffer policy `buffer` and the classes'
    /// limits. A discipline that keeps its own buffer ([`Scheduler::owns_buffer`]) gets
    /// neither: its settings bound its backlog.
    pub fn new(tree: &ClassTree, sched: S, buffer: BufferConfig) -> Qdisc<P, S> {
        let n = tree.len();
        let classes = tree.classes();
        let owns_buffer = sched.owns_buffer();
        let buffer = if owns_buffer {
            BufferConfig::default()
        } else {
            buffer
        };
        let push_out = buffer.shared.is_some() && buffer.overflow == Overflow::PushOutLongest;
        Qdisc {
            sched,
            per_class: vec![Counters::default(); n],
            total: Counters::default(),
            admission: classes
                .iter()
                .map(|c| Admission {
                    is_leaf: c.is_leaf(),
                    max_packet: c.max_packet(),
                    limit: c.spec.limit.filter(|_| !owns_buffer),
                })
                .collect(),
            buffer,
            longest: push_out.then(|| IndexedHeap::new(n)),
            evicted: Vec::with_capacity(4),
        }
    }

    /// The wrapped scheduler.
    pub fn scheduler(&self) -> &S {
        &self.sched
    }

    /// Offers `pkt` to leaf `class` at `now`. Every packet dropped as a consequence (the
    /// arrival, or packets pushed out for it) is passed to `on_drop`. Returns whether
    /// `pkt` was queued.
    pub fn enqueue(
        &mut self,
        now: Instant,
        class: ClassId,
        pkt: P,
        mut on_drop: impl FnMut(Dropped<P>),
    ) -> bool {
        let len = len_of(&pkt);
        let c = class.index();
        self.total.arrived.add(len);
        let Some(counters) = self.per_class.get_mut(c) else {
            self.total.dropped_on_arrival[DropReason::NotALeaf.index()].add(len);
            on_drop(Dropped {
                pkt,
                class,
                reason: DropReason::NotALeaf,
            });
            return false;
        };
        counters.arrived.add(len);
        if let Some(reason) = self.refusal(class, len, &mut on_drop) {
            if matches!(reason, DropReason::ClassLimit | DropReason::SharedLimit) {
                self.sched.arrival_refused(now, class);
            }
            self.count_refusal(class, len, reason);
            on_drop(Dropped { pkt, class, reason });
            return false;
        }
        let verdict = self.sched.enqueue(now, class, pkt, &mut self.evicted);
        let queued = match verdict {
            Enqueue::Queued => {
                self.per_class[c].enqueued.add(len);
                self.per_class[c].queued.add(len);
                self.total.enqueued.add(len);
                self.total.queued.add(len);
                self.backlog_changed(class);
                true
            }
            Enqueue::Dropped(d) => {
                self.count_refusal(class, len, d.reason);
                on_drop(d);
                false
            }
        };
        if !self.evicted.is_empty() {
            let mut evicted = core::mem::take(&mut self.evicted);
            for d in evicted.drain(..) {
                self.count_eviction(d.class, len_of(&d.pkt), d.reason);
                on_drop(d);
            }
            self.evicted = evicted;
        }
        queued
    }

    /// The next packet the scheduler releases at `now`.
    #[must_use = "a dequeued packet must be sent or accounted for"]
    pub fn dequeue(&mut self, now: Instant) -> Option<Dequeued<P>> {
        let d = self.sched.dequeue(now)?;
        let len = len_of(&d.pkt);
        let c = &mut self.per_class[d.class.index()];
        c.dequeued.add(len);
        c.queued.sub(len);
        self.total.dequeued.add(len);
        self.total.queued.sub(len);
        self.backlog_changed(d.class);
        Some(d)
    }

    /// When the scheduler can next release a packet (see [`Scheduler::poll_at`]).
    pub fn poll_at(&self, now: Instant) -> PollAt {
        self.sched.poll_at(now)
    }

    /// Counters of one class.
    pub fn counters(&self, class: ClassId) -> &Counters {
        &self.per_class[class.index()]
    }

    /// Counters summed over all classes.
    pub fn total(&self) -> &Counters {
        &self.total
    }

    /// Packets and bytes queued now in `class`.
    pub fn backlog(&self, class: ClassId) -> Count {
        self.per_class[class.index()].queued
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.total.queued.packets == 0
    }

    /// Checks the conservation identities per class and in total.
    pub fn check_conservation(&self) -> Result<(), String> {
        self.total.check("total")?;
        for (i, c) in self.per_class.iter().enumerate() {
            c.check(&format!("class {i}"))?;
        }
        Ok(())
    }

    /// Why an arrival of `len` bytes to `class` must be refused before the discipline
    /// sees it, pushing out packets of the longest queue (handed to `on_drop`) if that
    /// makes room.
    fn refusal(
        &mut self,
        class: ClassId,
        len: Bytes,
        on_drop: &mut impl FnMut(Dropped<P>),
    ) -> Option<DropReason> {
        let c = class.index();
        let rule = self.admission[c];
        if !rule.is_leaf {
            return Some(DropReason::NotALeaf);
        }
        if len > rule.max_packet {
            return Some(DropReason::TooLarge);
        }
        let q = self.per_class[c].queued;
        if let Some(limit) = rule.limit
            && !limit.admits(q.packets, Bytes(q.bytes), len)
        {
            return Some(DropReason::ClassLimit);
        }
        let shared = self.buffer.shared?;
        loop {
            let t = self.total.queued;
            if shared.admits(t.packets, Bytes(t.bytes), len) {
                return None;
            }
            let victim = match &self.longest {
                Some(heap) => heap.peek().map(|(v, _)| ClassId(v))?,
                None => return Some(DropReason::SharedLimit),
            };
            if self.size_in(shared, victim) <= self.size_in(shared, class) {
                return Some(DropReason::SharedLimit);
            }
            let Some(pkt) = self.sched.remove_newest(victim) else {
                return Some(DropReason::SharedLimit);
            };
            self.count_eviction(victim, len_of(&pkt), DropReason::PushedOut);
            on_drop(Dropped {
                pkt,
                class: victim,
                reason: DropReason::PushedOut,
            });
        }
    }

    fn size_in(&self, unit: Limit, class: ClassId) -> u64 {
        let q = self.per_class[class.index()].queued;
        match unit {
            Limit::Packets(_) => q.packets,
            Limit::Bytes(_) => q.bytes,
        }
    }

    fn count_refusal(&mut self, class: ClassId, len: Bytes, reason: DropReason) {
        self.per_class[class.index()].dropped_on_arrival[reason.index()].add(len);
        self.total.dropped_on_arrival[reason.index()].add(len);
    }

    fn count_eviction(&mut self, class: ClassId, len: Bytes, reason: DropReason) {
        let c = &mut self.per_class[class.index()];
        c.queued.sub(len);
        c.evicted[reason.index()].add(len);
        self.total.queued.sub(len);
        self.total.evicted[reason.index()].add(len);
        self.backlog_changed(class);
    }

    #[inline]
    fn backlog_changed(&mut self, class: ClassId) {
        let Some(unit) = self.buffer.shared else {
            return;
        };
        let size = self.size_in(unit, class);
        if let Some(heap) = &mut self.longest {
            if size == 0 {
                heap.remove(class.0);
            } else {
                heap.set(class.0, u64::MAX - size);
            }
        }
    }
}
