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
//! to a class that can hold packets, or not packets the class accepts at all. The one
//! exception to "decides before" is [`Overflow::PushOutSecond`]: the shared limit never
//! refuses an arrival there; the arrival is queued, and packets behind the heads of the
//! longest queues are pushed out (counted as evicted) until the buffer is within its
//! limit again.

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
    fn add_count(&mut self, other: Count) {
        self.packets += other.packets;
        self.bytes += other.bytes;
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
    /// Adds every counter of `other` to these.
    pub fn add_all(&mut self, other: &Counters) {
        self.arrived.add_count(other.arrived);
        self.enqueued.add_count(other.enqueued);
        self.dequeued.add_count(other.dequeued);
        self.queued.add_count(other.queued);
        for (a, b) in self
            .dropped_on_arrival
            .iter_mut()
            .zip(&other.dropped_on_arrival)
        {
            a.add_count(*b);
        }
        for (a, b) in self.evicted.iter_mut().zip(&other.evicted) {
            a.add_count(*b);
        }
    }

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

    /// Checks the two conservation identities of these counters (see the
    /// [module docs](self)); `what` names them in the message.
    pub fn check_identities(&self, what: &str) -> Result<(), String> {
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
    /// for the push-out rules ([`Overflow::pushes_out`]) with a shared limit.
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
        let push_out = buffer.shared.is_some() && buffer.overflow.pushes_out();
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
        if queued && self.buffer.overflow == Overflow::PushOutSecond {
            self.push_out_behind_heads(&mut on_drop);
        }
        queued
    }

    /// Counts an arrival of `len` bytes to `class` that the driver refused before it
    /// could offer it: it had no buffer to hold the packet ([`DropReason::NoBuffer`], the
    /// shaper's frame pool exhausted). The arrival is counted as arrived and dropped on
    /// arrival with `reason`, exactly as if [`Qdisc::enqueue`] had refused it, so the
    /// conservation identities keep holding; the discipline is not told (as in Linux,
    /// where a packet that could not be buffered never reaches the qdisc). A class that
    /// is not in the tree is counted in the total only, as in `enqueue`.
    pub fn refuse(&mut self, class: ClassId, len: Bytes, reason: DropReason) {
        self.total.arrived.add(len);
        self.total.dropped_on_arrival[reason.index()].add(len);
        if let Some(c) = self.per_class.get_mut(class.index()) {
            c.arrived.add(len);
            c.dropped_on_arrival[reason.index()].add(len);
        }
    }

    /// Takes over everything `old` holds, at a reconfiguration: this qdisc is the new
    /// configuration's and must not have seen any packet yet.
    ///
    /// Every class `c` of `old` that `map(c)` names in this qdisc, where both are leaves
    /// or both are interior classes, keeps its counters and its queued packets: its
    /// counters become the new class's, and its queued packets (taken out of the old
    /// discipline with [`Scheduler::remove_newest`]) are offered again, oldest first, to
    /// the new class at `now` through [`Qdisc::enqueue`] — so a packet the new
    /// configuration's limits refuse is dropped with the usual reason, handed to
    /// `on_drop`, and the counters never count a moved packet twice (the moved packets
    /// are taken out of the carried `arrived` and `enqueued` before they are offered
    /// again). The new discipline starts from its initial state: the moved packets are
    /// new arrivals to it (their virtual times, tokens or deadlines are not carried).
    ///
    /// Every other class of `old` is removed: its queued packets are dropped with
    /// [`DropReason::Reconfigured`] (evicted, handed to `on_drop`), and its final
    /// counters are returned with its id in `old`, in id order, for every such class
    /// that ever saw a packet. `old`'s total is not carried: this qdisc's total is the
    /// sum of the carried classes' counters (plus the moved packets' new fates), and the
    /// returned counters hold the rest, so the two together still obey the identities.
    ///
    /// Allocates (a reconfiguration is not on the packet path).
    pub fn take_over<S2: Scheduler<P>>(
        &mut self,
        now: Instant,
        mut old: Qdisc<P, S2>,
        map: impl Fn(ClassId) -> Option<ClassId>,
        mut on_drop: impl FnMut(Dropped<P>),
    ) -> Vec<(ClassId, Counters)> {
        let mut removed = Vec::new();
        for i in 0..old.per_class.len() {
            let class = ClassId(i as u32);
            let mut queued = Vec::new();
            while let Some(pkt) = old.sched.remove_newest(class) {
                queued.push(pkt);
            }
            queued.reverse();
            let mut counters = core::mem::take(&mut old.per_class[i]);
            let target = map(class).filter(|&n| {
                self.admission
                    .get(n.index())
                    .is_some_and(|a| a.is_leaf == old.admission[i].is_leaf)
            });
            match target {
                Some(new) => {
                    for pkt in &queued {
                        let len = len_of(pkt);
                        counters.queued.sub(len);
                        counters.enqueued.sub(len);
                        counters.arrived.sub(len);
                    }
                    self.total.add_all(&counters);
                    self.per_class[new.index()] = counters;
                    for pkt in queued {
                        self.enqueue(now, new, pkt, &mut on_drop);
                    }
                }
                None => {
                    for pkt in queued {
                        let len = len_of(&pkt);
                        counters.queued.sub(len);
                        counters.evicted[DropReason::Reconfigured.index()].add(len);
                        on_drop(Dropped {
                            pkt,
                            class,
                            reason: DropReason::Reconfigured,
                        });
                    }
                    if counters.arrived.packets > 0 {
                        removed.push((class, counters));
                    }
                }
            }
        }
        removed
    }

    /// [`Overflow::PushOutSecond`] after an arrival was queued: while the shared buffer
    /// holds more than its limit, pushes out the packet behind the head of the longest
    /// queue (its only packet if it has one), handing each to `on_drop`.
    fn push_out_behind_heads(&mut self, on_drop: &mut impl FnMut(Dropped<P>)) {
        let Some(shared) = self.buffer.shared else {
            return;
        };
        loop {
            let t = self.total.queued;
            if shared.holds(t.packets, Bytes(t.bytes)) {
                return;
            }
            let Some((victim, _)) = self.longest.as_ref().and_then(IndexedHeap::peek) else {
                return;
            };
            let victim = ClassId(victim);
            let Some(pkt) = self.sched.remove_behind_head(victim) else {
                return;
            };
            self.count_eviction(victim, len_of(&pkt), DropReason::PushedOut);
            on_drop(Dropped {
                pkt,
                class: victim,
                reason: DropReason::PushedOut,
            });
        }
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

    /// Resets leaf `class`, which must hold no packet, in the discipline
    /// ([`Scheduler::reset_class`]): a per-flow instance starting to serve a new flow
    /// ([`crate::perflow`]). The counters are kept: they count the class, not its flows.
    pub fn reset_class(&mut self, now: Instant, class: ClassId) {
        debug_assert_eq!(
            self.backlog(class).packets,
            0,
            "reset_class: the class holds packets"
        );
        self.sched.reset_class(now, class);
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
        self.total.check_identities("total")?;
        for (i, c) in self.per_class.iter().enumerate() {
            c.check_identities(&format!("class {i}"))?;
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
        if self.buffer.overflow == Overflow::PushOutSecond {
            // The arrival is queued first; `push_out_behind_heads` makes room after.
            return None;
        }
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
