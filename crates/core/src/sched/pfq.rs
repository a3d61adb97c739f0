//! The packet-fair-queueing baselines: WFQ / PGPS with the exact GPS virtual time
//! (`wfq`), self-clocked fair queueing (`scfq`) and start-time fair queueing (`stfq`).
//!
//! # The algorithms
//!
//! Every leaf `i` has a FIFO and a rate `φ_i`. A packet of `L` bytes arriving at `a` to
//! leaf `i` gets the tags
//!
//! `S = max(F_i, v(a))`, `F = S + L / φ_i`
//!
//! with `F_i` the finish tag of the leaf's previous packet. The three differ in the
//! system virtual time `v` and in the tag they serve by (smallest first, ties in arrival
//! order):
//!
//! | name | paper | `v(t)` | served by |
//! | --- | --- | --- | --- |
//! | `wfq` | Parekh and Gallager 1993 (PGPS); Demers, Keshav and Shenker 1989 | the GPS virtual time, exact ([`super::keshav::round`]) | `F` |
//! | `scfq` | Golestani 1994 | `F` of the packet in service | `F` |
//! | `stfq` | Goyal, Vin and Cheng 1996 | `S` of the packet in service | `S` |
//!
//! `wfq` is Keshav's FQ with weights `φ_i`, no offsets and the qdisc's ordinary buffer
//! policies; it shares Keshav's round-number code. For `scfq` and `stfq` a packet is in
//! service from its dequeue until the link has sent it at its rate (the scheduler does
//! not know a port's per-packet overhead); when nothing is queued or in service the busy
//! period has ended and the next one starts afresh: `v` moves up to the largest finish
//! tag given so far (Golestani resets every tag to 0; this is the same in O(1)).
//!
//! # Guarantees (with `Σ φ_i ≤ C`)
//!
//! * `wfq`: every packet leaves by its GPS finish time plus `L_max / C`, and each leaf's
//!   service trails GPS by at most `L_max` (Parekh–Gallager); not worst-case fair (a
//!   leaf may run ahead of GPS by many packets).
//! * `scfq`, `stfq`: two leaves backlogged over an interval receive service `W_i`, `W_j`
//!   with `|W_i/φ_i − W_j/φ_j| ≤ L_i^max/φ_i + L_j^max/φ_j`; their delay bounds grow with
//!   the number of leaves (`Σ_{j≠i} L_j^max / C` above WFQ's).
//!
//! `tests/pfq.rs` checks `wfq` against the exact fluid GPS of
//! `linkshare_analysis::gps` and the fairness bound of `scfq` and `stfq`.
//!
//! # Parameters
//!
//! `φ_i` is the rate of WF2Q+ ([`super::wf2q`]): the leaf's `rate`, else its share by
//! weight of what the leaves with a rate leave free. Interior classes are ignored.
//!
//! # Units
//!
//! Tags and `v` are `u128` round units: `L / φ` is `⌈L · UNITS_PER_BYTE / φ⌉`
//! ([`super::keshav::round::units`]), so tags never wrap, and `wfq`'s virtual time has
//! the exactness and error bound documented in [`super::keshav::round`].
//!
//! # Deviations
//!
//! * [`Scheduler::remove_newest`] (push-out) does not roll back the leaf's tags or the
//!   GPS state: the leaf pays for the bits it lost, as Keshav's FQ does for its drops.
//!
//! # Cost
//!
//! O(log n) per packet: a [`HeadTree`] of backlogged leaves by head tag (Keshav FQ's,
//! compact keys over the exact tags), plus for `wfq` the round number (amortised
//! O(log n), its active leaves in buckets of round number, `keshav/buckets.rs`). No allocation after warm-up.

use std::collections::VecDeque;

use super::keshav::round::{MAX_LINK_RATE, RoundNumber, units};
use super::wf2q::rates;
use super::{
    BuildError, Dequeued, DropReason, Dropped, Enqueue, Packet, PollAt, Scheduler, SchedulerKind,
    class_problem,
};
use crate::ds::bids::Tag;
use crate::ds::bids::heads::HeadTree;
use crate::hierarchy::{ClassId, ClassTree};
use crate::units::{Bytes, Instant, Rate};

/// Which of the three.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    /// WFQ / PGPS with the exact GPS virtual time.
    Wfq,
    /// Self-clocked fair queueing.
    Scfq,
    /// Start-time fair queueing.
    Stfq,
}

impl Flavor {
    const fn kind(self) -> SchedulerKind {
        match self {
            Flavor::Wfq => SchedulerKind::Wfq,
            Flavor::Scfq => SchedulerKind::Scfq,
            Flavor::Stfq => SchedulerKind::Stfq,
        }
    }
}

/// A queued packet with its tags.
#[derive(Debug)]
struct Queued<P> {
    pkt: P,
    start: u128,
    finish: u128,
    seq: u64,
}

#[derive(Debug)]
struct Leaf<P> {
    queue: VecDeque<Queued<P>>,
    phi: u64,
    /// Finish tag of the leaf's latest packet (`scfq`, `stfq`; `wfq` keeps it in the
    /// round number).
    last_finish: u128,
}

/// The self-clocked virtual time of `scfq` and `stfq`.
#[derive(Debug, Default)]
struct SelfClock {
    /// `v`: a tag of the packet in service (or of the last one).
    v: u128,
    /// When the packet in service ends at the link rate.
    busy_until: Instant,
    /// Largest finish tag given so far.
    max_finish: u128,
}

/// The virtual clock: WFQ's exact GPS round number, or the self-clocked one. One per
/// scheduler, built once and never moved on the packet path, so the variants' sizes
/// differing (the round number keeps its buckets' bitmap inline, read on every
/// re-key) costs nothing.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
enum Clock {
    Gps(RoundNumber),
    SelfClocked(SelfClock),
}

/// `wfq`, `scfq` or `stfq` over the leaves of a tree. See the [module docs](self).
#[derive(Debug)]
pub struct Pfq<P> {
    flavor: Flavor,
    leaves: Vec<Option<Leaf<P>>>,
    /// Backlogged leaves by head tag (`F`, or `S` for `stfq`).
    heads: HeadTree,
    clock: Clock,
    link: Rate,
    queued: usize,
    seq: u64,
}

fn rates_of(flavor: Flavor, tree: &ClassTree) -> Result<Vec<Rate>, BuildError> {
    let kind = flavor.kind();
    let rates = rates::flat(tree, |l| tree.get(l).spec.rate)
        .map_err(|problems| BuildError { kind, problems })?;
    if flavor == Flavor::Wfq && tree.link_rate() > MAX_LINK_RATE {
        return Err(BuildError {
            kind,
            problems: vec![class_problem(
                tree,
                ClassId::ROOT,
                "rate",
                format!(
                    "the link rate {} exceeds the {MAX_LINK_RATE} that wfq's exact virtual time supports",
                    tree.link_rate()
                ),
                format!("use a link rate of at most {MAX_LINK_RATE}"),
            )],
        });
    }
    Ok(rates)
}

/// Checks that `flavor` can be built for `tree` (every leaf gets a positive rate).
pub fn validate(flavor: Flavor, tree: &ClassTree) -> Result<(), BuildError> {
    rates_of(flavor, tree).map(drop)
}

impl<P: Packet> Pfq<P> {
    /// `flavor` over the leaves of `tree`; fails as [`validate`] does.
    pub fn new(flavor: Flavor, tree: &ClassTree) -> Result<Pfq<P>, BuildError> {
        let rates = rates_of(flavor, tree)?;
        let leaves = tree
            .classes()
            .iter()
            .map(|c| {
                c.is_leaf().then(|| Leaf {
                    queue: VecDeque::new(),
                    phi: rates[c.id.index()].0.max(1),
                    last_finish: 0,
                })
            })
            .collect();
        let clock = match flavor {
            Flavor::Wfq => Clock::Gps(RoundNumber::new(
                tree.link_rate(),
                rates.iter().map(|r| r.0.max(1)).collect(),
            )),
            Flavor::Scfq | Flavor::Stfq => Clock::SelfClocked(SelfClock::default()),
        };
        Ok(Pfq {
            flavor,
            leaves,
            heads: HeadTree::new(tree.len()),
            clock,
            link: tree.link_rate(),
            queued: 0,
            seq: 0,
        })
    }

    /// The rate `φ` of leaf `class`, or `None` if it is not a leaf.
    pub fn rate_of(&self, class: ClassId) -> Option<Rate> {
        self.leaf(class).map(|l| Rate(l.phi))
    }

    /// The start and finish tags of the packet at the head of `class`, in round units.
    pub fn head_tags(&self, class: ClassId) -> Option<(u128, u128)> {
        let q = self.leaf(class)?.queue.front()?;
        Some((q.start, q.finish))
    }

    fn leaf(&self, class: ClassId) -> Option<&Leaf<P>> {
        self.leaves.get(class.index()).and_then(Option::as_ref)
    }
}

impl Flavor {
    /// The tag a packet is served by: `F`, or `S` for `stfq`, and its arrival order.
    #[inline]
    fn tag<P>(self, q: &Queued<P>) -> Tag {
        let bid = match self {
            Flavor::Stfq => q.start,
            Flavor::Wfq | Flavor::Scfq => q.finish,
        };
        Tag::new(bid, q.seq)
    }
}

/// The tag of each backlogged leaf's head packet (the exact tags behind `heads`).
#[inline(always)]
fn head_tags<P>(flavor: Flavor, leaves: &[Option<Leaf<P>>]) -> impl Fn(u32) -> Tag + '_ {
    move |c| {
        let leaf = leaves[c as usize].as_ref().expect("only leaves queue");
        flavor.tag(
            leaf.queue
                .front()
                .expect("a leaf in the heads is backlogged"),
        )
    }
}

impl<P: Packet> Scheduler<P> for Pfq<P> {
    fn name(&self) -> &'static str {
        self.flavor.kind().name()
    }

    fn is_work_conserving(&self) -> bool {
        true
    }

    #[inline]
    fn enqueue(
        &mut self,
        now: Instant,
        class: ClassId,
        pkt: P,
        _evicted: &mut Vec<Dropped<P>>,
    ) -> Enqueue<P> {
        let queued = self.queued;
        let Some(leaf) = self.leaves.get_mut(class.index()).and_then(Option::as_mut) else {
            return Enqueue::Dropped(Dropped {
                pkt,
                class,
                reason: DropReason::NotALeaf,
            });
        };
        let len = u64::from(pkt.wire_len());
        let (start, finish) = match &mut self.clock {
            Clock::Gps(round) => {
                let a = round.arrive(now, class.0, len);
                (a.round.unwrap_or(a.finish_before), a.finish)
            }
            Clock::SelfClocked(clock) => {
                if queued == 0 && now >= clock.busy_until {
                    clock.v = clock.max_finish;
                }
                let start = leaf.last_finish.max(clock.v);
                let finish = start.saturating_add(units(len, leaf.phi));
                leaf.last_finish = finish;
                clock.max_finish = clock.max_finish.max(finish);
                (start, finish)
            }
        };
        let q = Queued {
            pkt,
            start,
            finish,
            seq: self.seq,
        };
        let tag = self.flavor.tag(&q);
        leaf.queue.push_back(q);
        let first = leaf.queue.len() == 1;
        self.seq += 1;
        self.queued += 1;
        if first {
            let exact = head_tags(self.flavor, &self.leaves);
            self.heads.push(class.0, tag, &exact);
        }
        Enqueue::Queued
    }

    #[inline]
    fn dequeue(&mut self, now: Instant) -> Option<Dequeued<P>> {
        let c = self.heads.peek()?;
        let leaf = self.leaves[c as usize].as_mut().expect("only leaves queue");
        let q = leaf
            .queue
            .pop_front()
            .expect("a leaf in the heads is backlogged");
        let next = leaf.queue.front().map(|n| self.flavor.tag(n));
        self.queued -= 1;
        if let Clock::SelfClocked(clock) = &mut self.clock {
            clock.v = match self.flavor {
                Flavor::Stfq => q.start,
                Flavor::Wfq | Flavor::Scfq => q.finish,
            };
            clock.busy_until =
                now.saturating_add(self.link.tx_time(Bytes(u64::from(q.pkt.wire_len()))));
        }
        let exact = head_tags(self.flavor, &self.leaves);
        match next {
            Some(tag) => self.heads.replace_min(c, tag, &exact),
            None => self.heads.pop_min(&exact),
        }
        Some(Dequeued {
            pkt: q.pkt,
            class: ClassId(c),
        })
    }

    fn poll_at(&self, _now: Instant) -> PollAt {
        PollAt::work_conserving(!self.heads.is_empty())
    }

    /// The second packet leaves; the packets behind it keep their tags (as a dropped
    /// packet keeps its finish number, see the module docs), and the head's, by which the
    /// leaf is ordered, does not change.
    fn remove_behind_head(&mut self, class: ClassId) -> Option<P> {
        let leaf = self.leaves.get_mut(class.index())?.as_mut()?;
        if leaf.queue.len() < 2 {
            return self.remove_newest(class);
        }
        let q = leaf.queue.remove(1)?;
        self.queued -= 1;
        Some(q.pkt)
    }

    fn remove_newest(&mut self, class: ClassId) -> Option<P> {
        let leaf = self.leaves.get_mut(class.index())?.as_mut()?;
        let q = leaf.queue.pop_back()?;
        self.queued -= 1;
        if leaf.queue.is_empty() {
            self.heads
                .remove(class.0, &head_tags(self.flavor, &self.leaves));
        }
        Some(q.pkt)
    }
}
