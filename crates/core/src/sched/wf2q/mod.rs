//! WF2Q+ (Bennett and Zhang, "Hierarchical packet fair queueing algorithms", SIGCOMM 1996
//! / ToN 1997): worst-case fair weighted fair queueing with an O(log n) virtual time.
//!
//! # The algorithm
//!
//! Every leaf `i` has a guaranteed rate `r_i` and keeps the start and finish tags of its
//! head packet (length `L`):
//!
//! * `S_i = F_i` (the previous head's finish) if the leaf stays backlogged, and
//!   `S_i = max(F_i, V)` if it turns backlogged at system virtual time `V`;
//! * `F_i = S_i + L / r_i`.
//!
//! The system virtual time is WF2Q+'s
//! `V(t + τ) = max(V(t) + W(t, t + τ) / C, min_{i backlogged} S_i)`, with `W` the bytes
//! the link has sent in `(t, t + τ]` and `C` the link rate: it advances with the work
//! done, and jumps to the smallest start tag when every backlogged leaf's head starts
//! later. A leaf is *eligible* when `S_i <= V`; the scheduler sends the head of the
//! eligible leaf with the smallest `F_i` (Smallest Eligible virtual Finish time First).
//!
//! # Timing
//!
//! * The choice is made when the link asks for a packet ([`Scheduler::dequeue`]).
//! * A packet is *in service* from its dequeue until the link has sent it at rate `C`
//!   (the scheduler does not know a port's per-packet overhead) or until the next
//!   dequeue, whichever comes first. While it is, it is still its leaf's head, as in
//!   Bennett and Zhang: its start tag counts in `min S`, an arrival to its leaf
//!   continues the leaf's backlogged period (`S = F`), and `W` counts its bytes as the
//!   link sends them, so `V` advances continuously during a transmission.
//! * When every leaf is idle and nothing is in service, the next busy period starts
//!   afresh: `V` moves up to the largest finish tag given so far, so that every leaf
//!   turning backlogged starts at `V` (a fluid system's busy period ends only once every
//!   leaf has received its due; without this, a leaf that was served ahead of its rate
//!   just before an idle period would carry that lead into the next busy period).
//!
//! # Fairness
//!
//! A packet is sent only once it has started in the reference system that `V` defines,
//! so a leaf never runs ahead of that system by more than one packet, which makes WF2Q+
//! worst-case fair (WFQ may send a heavy leaf's packets in a row far ahead of its fluid
//! schedule). When the rates add up to at most `C`, every packet ends at most `L_max / C`
//! after it would at the leaf's own rate, `F_k = max(a_k, F_{k−1}) + L_k / r_i` (the
//! tests check this against an independent computation).
//!
//! `V` is not GPS's virtual time, though: it advances like real time, while GPS's runs
//! faster when the backlogged rates add up to less than `C`. A leaf that turns
//! backlogged while another runs alone may therefore lead its GPS service by more than a
//! packet (the test `lags_gps_after_a_lone_leaf` works a case out by hand), and packets
//! may end more than `L_max / C` after their GPS finish. With every leaf backlogged from
//! the start of a busy period, WF2Q+'s tags are GPS's, `V` never passes GPS's, and a
//! leaf stays within one packet of its GPS service (tested against a fluid GPS).
//!
//! # H-WF2Q+
//!
//! H-WF2Q+ (H-PFQ with WF2Q+ servers, Bennett and Zhang, as above), the baseline of the
//! H-FSC paper's Fig. 11, is built by [`Wf2q::hierarchical`]: the same engine
//! (`engine.rs`) given the class tree instead of the leaves under the root, flat WF2Q+
//! being its one-level case.
//!
//! Every class with children runs a WF2Q+ server among them, with its own system
//! virtual time `V_n`, which advances by `W_n / r_n` with the bytes `W_n` the class
//! sends (`r_n` its rate; the link rate `C` at the root) and jumps to the smallest start
//! tag of its backlogged children. Every backlogged class other than the root holds
//! a *logical queue* of one packet, its head: a leaf's first packet, or the head of the
//! child its server chose. The class is tagged in its parent's virtual time with its
//! head's length, exactly as a WF2Q+ leaf: `S = F_prev` while it stays backlogged,
//! `S = max(F_prev, V_parent)` when it turns backlogged, `F = S + L / r`.
//!
//! * An arrival to an idle leaf makes it, and every ancestor that was idle, hold the new
//!   packet as head; the first ancestor that was already backlogged keeps the head it
//!   has (a class's choice is not revised before its head leaves).
//! * When the link asks for a packet, the root's server picks the eligible child
//!   (`S <= V_root`) with the smallest finish tag and sends its head. The logical queues
//!   on that packet's path empty; when the next packet is asked for, they are refilled
//!   bottom-up, each class's server choosing a new head among its children (Bennett and
//!   Zhang's RESET-PATH and RESTART-NODE).
//!
//! Every server follows the timing rules of flat WF2Q+ above: a class whose packet is in
//! service keeps it as its head until the link has sent it (its parent's `V` advancing
//! as the bytes leave), and a class that goes idle starts its next busy period afresh.
//! Virtual times use the same integer representation (ns at each server's reference
//! rate, anchored curves, no drift, rebased past 2^62 ns); its precision and overflow
//! analysis applies to every server of the hierarchy, and so do its deviations.
//!
//! # Parameters
//!
//! * `r_i`: the leaf's [`rate`](crate::hierarchy::ClassSpec::rate) if given; otherwise its
//!   share by [`weight`](crate::hierarchy::Class::weight) of the link rate that the leaves
//!   with a rate leave free, `floor((C − Σ explicit) · w_i / Σ w_j)` over the leaves
//!   without a rate. A leaf whose share is zero is refused at construction. Interior
//!   classes are ignored (flat).
//! * H-WF2Q+'s `r_n`: the class's [`rate`](crate::hierarchy::ClassSpec::rate) if given;
//!   otherwise its share by weight of what its siblings with a rate leave free of their
//!   parent's rate: `floor((r_p − Σ explicit) · w_i / Σ w_j)` over the siblings without
//!   a rate; the root's rate is the link rate. A class whose share is zero is refused at
//!   construction. With rates that add up to their parent's, each class is guaranteed
//!   its rate and excess bandwidth is shared among backlogged siblings in proportion to
//!   their rates (the hierarchical weighted allocation).
//! * Curves, priorities, quanta and ceilings are ignored.
//! * Explicit rates may add up to more than `C` when they sit under interior classes
//!   without a rate of their own (the tree only checks children against a parent that
//!   has a rate): WF2Q+ then still shares in proportion to the rates, but no longer
//!   guarantees them.
//!
//! # Integer virtual time: units, precision, overflow
//!
//! Virtual time is a `u64` count of nanoseconds "at the reference rate": a head of `L`
//! bytes spans `L · 8e9 / r_i` ns of its parent's virtual time, and the server's own
//! virtual time advances by `W · 8e9 / C` ns when it sends `W` bytes. No float is involved.
//!
//! * **No drift.** Tags and `V` are never accumulated packet by packet. Each is a line
//!   anchored at a point (virtual ns, bytes) and evaluated from its anchor,
//!   `x + ceil((w − y) · 8e9 / r)` (in `u64` while the product fits, in `u128` beyond):
//!   `F_i` after a backlogged period of any length is within 1 ns of its exact rational
//!   value, and so is `V`. Anchors are placed only at integer points (a start tag set to
//!   `V`, `V` set to a start or finish tag), so nothing is lost there.
//! * **Precision.** Every comparison is between values within 1 ns of the exact ones:
//!   the schedule is WF2Q+'s for tags perturbed by less than 1 ns, ties going to the
//!   leaf declared first. In bytes, a leaf is credited within `r_i · 1 ns` of its exact
//!   tags: 12.5 B at 100 Gbit/s, 0.125 B at 1 Gbit/s.
//! * **Range.** Served bytes are `u64` (46 years at 100 Gbit/s). Virtual time is `u64`
//!   ns (584 years); it grows like real time when the backlogged rates add up to `C`, and
//!   faster when they add up to less (a 1 kbit/s leaf alone on a 10 Gbit/s link moves
//!   `V` 10^7 ns per ns). When `V` passes 2^62 ns the server moves its origin:
//!   `offset = min(V, min S)` over backlogged children is subtracted from `V` and every
//!   tag, which keeps every comparison. It costs O(k log k) for `k` children and leaves
//!   `V` equal to the lag of the backlogged child furthest behind it, which WF2Q+ keeps
//!   to a few packet times, so it happens about once per 2^62 ns of virtual time. A leaf
//!   idle since before the new origin restarts at `V`, as it would have anyway; a
//!   backlogged leaf's next finish tag may move by less than 1 ns. Between rebases every
//!   tag is below `V + L / r_i <= 2^62 + 2^49` ns for packets up to 64 KiB and rates of
//!   at least 1 bit/s, far from `u64::MAX`.
//!
//! # Deviations
//!
//! * The busy-period restart is not part of the formula for `V` above. It is what GPS
//!   does, and what deployed WF2Q+ does (dummynet resets `V` and every tag to zero when
//!   it empties; moving `V` up to the largest finish tag is the same in O(1)).
//! * [`Scheduler::remove_newest`] (push-out) of a head packet, which was never served,
//!   un-tags it: the leaf's next head gets the same start tag.
//!
//! # Cost
//!
//! O(log n) per packet: one heap of not-yet-eligible leaves by `S`, one of eligible
//! leaves by `F` ([`IndexedHeap`](crate::ds::IndexedHeap)); a packet moves between them
//! at most once. No allocation after warm-up.
//!
//! H-WF2Q+: O(depth · log k) per packet, `k` the largest number of children of one
//! class: an arrival tags at most one class per level; a departure withdraws and
//! re-selects one class per level. No allocation after warm-up.

mod engine;
mod line;
pub(crate) mod rates;
mod server;

pub(crate) use engine::{Engine, Topology};

use super::{BuildError, Dequeued, Dropped, Enqueue, Packet, PollAt, Scheduler, SchedulerKind};
use crate::hierarchy::{ClassId, ClassTree};
use crate::units::{Instant, Rate};

/// WF2Q+ over the leaves of a tree ([`Wf2q::new`], this module's docs), or over the
/// whole hierarchy as H-WF2Q+ ([`Wf2q::hierarchical`], the module docs' H-WF2Q+): one
/// engine, two topologies.
#[derive(Debug)]
pub struct Wf2q<P> {
    engine: Engine<P>,
    name: &'static str,
}

/// Checks that WF2Q+ can be built for `tree` (every leaf gets a positive rate).
pub fn validate(tree: &ClassTree) -> Result<(), BuildError> {
    flat_rates(tree).map(drop)
}

/// Checks that H-WF2Q+ can be built for `tree` (every class gets a positive rate).
pub fn validate_hierarchical(tree: &ClassTree) -> Result<(), BuildError> {
    hierarchical_rates(tree).map(drop)
}

fn flat_rates(tree: &ClassTree) -> Result<Vec<Rate>, BuildError> {
    rates::flat(tree, |l| tree.get(l).spec.rate).map_err(|problems| BuildError {
        kind: SchedulerKind::Wf2q,
        problems,
    })
}

fn hierarchical_rates(tree: &ClassTree) -> Result<Vec<Rate>, BuildError> {
    rates::hierarchical(tree).map_err(|problems| BuildError {
        kind: SchedulerKind::Hwf2q,
        problems,
    })
}

impl<P: Packet> Wf2q<P> {
    /// WF2Q+ over the leaves of `tree`, with the rates of the module docs; fails (with
    /// the class and how to fix it) if a leaf without a rate would get a zero share.
    pub fn new(tree: &ClassTree) -> Result<Wf2q<P>, BuildError> {
        let mut rate = flat_rates(tree)?;
        rate[ClassId::ROOT.index()] = tree.link_rate();
        let parent = tree
            .classes()
            .iter()
            .map(|c| c.is_leaf().then_some(ClassId::ROOT))
            .collect();
        Ok(Wf2q {
            engine: Engine::new(tree, Topology { parent, rate }),
            name: "wf2q",
        })
    }

    /// H-WF2Q+ over the class tree of `tree`, with the H-WF2Q+ rates of the module docs;
    /// fails (with the class and how to fix it) if a class without a rate would get a
    /// zero share.
    pub fn hierarchical(tree: &ClassTree) -> Result<Wf2q<P>, BuildError> {
        let rate = hierarchical_rates(tree)?;
        let parent = tree.classes().iter().map(|c| c.parent).collect();
        Ok(Wf2q {
            engine: Engine::new(tree, Topology { parent, rate }),
            name: "hwf2q",
        })
    }

    /// The rate guaranteed to `class` (the link rate for the root), or `None` for a
    /// class that is not scheduled (an interior class under flat WF2Q+, or not in the
    /// tree).
    pub fn rate_of(&self, class: ClassId) -> Option<Rate> {
        self.engine.rate_of(class)
    }

    /// Bytes dequeued from `class` (from its subtree, for an interior class under
    /// H-WF2Q+) so far.
    pub fn served(&self, class: ClassId) -> Option<u64> {
        self.engine.served(class)
    }

    /// How many times the virtual-time origin has been moved (see the module docs).
    pub fn rebases(&self) -> u64 {
        self.engine.rebases()
    }

    /// Checks the internal bookkeeping (see the module docs); for tests.
    pub fn check_invariants(&self) -> Result<(), String> {
        self.engine.check_invariants()
    }
}

impl<P: Packet> Scheduler<P> for Wf2q<P> {
    fn name(&self) -> &'static str {
        self.name
    }

    fn is_work_conserving(&self) -> bool {
        true
    }

    fn enqueue(
        &mut self,
        now: Instant,
        class: ClassId,
        pkt: P,
        _evicted: &mut Vec<Dropped<P>>,
    ) -> Enqueue<P> {
        self.engine.enqueue(now, class, pkt)
    }

    fn dequeue(&mut self, now: Instant) -> Option<Dequeued<P>> {
        self.engine.dequeue(now)
    }

    fn poll_at(&self, _now: Instant) -> PollAt {
        self.engine.poll_at()
    }

    fn remove_newest(&mut self, class: ClassId) -> Option<P> {
        self.engine.remove_newest(class)
    }

    fn remove_behind_head(&mut self, class: ClassId) -> Option<P> {
        self.engine.remove_behind_head(class)
    }
}
