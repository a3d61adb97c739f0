//! SCED, Service Curve Earliest Deadline first (Cruz; Sariowan, Cruz and Polyzos), as the
//! H-FSC paper states it in §II (Eqs. 2–4), and Virtual Clock (Zhang), its special case
//! with linear curves.
//!
//! # The algorithm
//!
//! Every leaf `i` has a service curve `S_i` and keeps a *deadline curve* `D_i` (bytes as a
//! function of real time) and `w_i`, the total bytes it has been served.
//!
//! * **Eq. 2/3.** When the leaf turns backlogged at time `a` (start of a backlogged
//!   period), `D_i(t) <- min(D_i(t), S_i(t − a) + w_i(a))` for `t >= a`; at the first
//!   backlogged period `D_i` is `S_i(t − a)` (Eq. 2 with the only backlog start so far).
//!   The curve is updated at no other time.
//! * **Eq. 4.** The head packet, of length `l`, has deadline `D_i^{-1}(w_i + l)`, the
//!   first instant at which `D_i` reaches `w_i + l`.
//! * The link sends the head with the earliest deadline among all backlogged leaves
//!   (ties to the leaf declared first). SCED is work-conserving: it never waits for a
//!   deadline.
//!
//! All curves are met if `Σ_i S_i(t) <= C · t` for all `t` (admission is checked by
//! `linkshare check`, not here).
//!
//! **Punishment.** `w_i` counts *all* service, including what a leaf received from
//! capacity nobody else wanted. A leaf that ran alone far ahead of its curve has a
//! deadline curve far in the future; when a competitor turns backlogged, whose deadlines
//! start at its arrival, the first leaf is not served until the competitor's deadlines
//! catch up (the H-FSC paper's Fig. 3c). H-FSC avoids it by using real-time service
//! `c_i` instead of `w_i` in the same update (its Eq. 7).
//!
//! **Virtual Clock** ([`Sced::virtual_clock`], kind `vc`) is SCED with every curve linear
//! through the origin, `S_i(t) = r_i · t`: the deadline of the next `l` bytes is then
//! `max(a_k + (w_i + l − w_i(a_k)) / r_i)` over the backlog starts `a_k`. Zhang stamps
//! every arrival with `VC_i = max(a, VC_i) + l / r_i`; here the `max` with the arrival
//! time is taken only when a backlogged period starts. The two differ only for a packet
//! that arrives after the deadline of the packet queued before it, that is when a
//! deadline is already missed, which admission control excludes.
//!
//! # Parameters
//!
//! * SCED ([`Sced::new`]): a leaf's curve is its [`rt`](crate::hierarchy::ClassSpec::rt)
//!   curve; without one, the linear curve of its
//!   [`rate`](crate::hierarchy::ClassSpec::rate); without either, the linear curve of its
//!   share by weight of the link rate that the other leaves' long-term rates (`rt`'s `m2`,
//!   or `rate`) leave free.
//! * Virtual Clock ([`Sced::virtual_clock`]): the linear curve of the leaf's `rate`, or
//!   of its share by weight of what the leaves with a rate leave free; `rt` is ignored.
//! * A leaf whose share is zero is refused at construction. Interior classes are ignored
//!   (SCED is flat).
//!
//! # Arithmetic
//!
//! Time is integer ns and service integer bytes. Curves are
//! [`RuntimeCurve`]s evaluated from their anchors in `u128`,
//! so a deadline is exact to the ns (rounded up) however long a backlogged period lasts;
//! the min-update of a concave curve is the pointwise minimum within one byte per
//! segment (see [`crate::curve`]). With linear curves every deadline is exactly
//! `max_k ceil(a_k + (w_i + l − w_i(a_k)) · 8e9 / r_i)`.
//!
//! # Cost
//!
//! O(log n) per packet: one [`IndexedHeap`] of backlogged leaves keyed by their head's
//! deadline. No allocation after warm-up.

use std::collections::VecDeque;

use super::wf2q::rates;
use super::{BuildError, Dequeued, Dropped, Enqueue, Packet, PollAt, Scheduler, SchedulerKind};
use crate::curve::{RuntimeCurve, ServiceCurve};
use crate::ds::IndexedHeap;
use crate::hierarchy::{ClassId, ClassTree};
use crate::units::Instant;

/// One leaf's SCED state.
#[derive(Debug)]
struct Leaf<P> {
    queue: VecDeque<P>,
    /// `S_i`.
    curve: ServiceCurve,
    /// `D_i`, `None` before the first backlogged period.
    deadline: Option<RuntimeCurve>,
    /// `w_i`: bytes served in all.
    served: u64,
}

/// SCED or Virtual Clock over the leaves of a tree. See the [module docs](self).
#[derive(Debug)]
pub struct Sced<P> {
    name: &'static str,
    /// Indexed by [`ClassId::index`]; `None` for classes that are not leaves.
    leaves: Vec<Option<Leaf<P>>>,
    /// Backlogged leaves keyed by their head's deadline (ns).
    order: IndexedHeap,
}

/// Checks that SCED can be built for `tree` (every leaf gets a curve or a positive rate).
pub fn validate(tree: &ClassTree) -> Result<(), BuildError> {
    sced_rates(tree).map(drop)
}

/// Checks that Virtual Clock can be built for `tree` (every leaf gets a positive rate).
pub fn validate_virtual_clock(tree: &ClassTree) -> Result<(), BuildError> {
    virtual_clock_rates(tree).map(drop)
}

fn sced_rates(tree: &ClassTree) -> Result<Vec<crate::units::Rate>, BuildError> {
    let spec = |l: ClassId| &tree.get(l).spec;
    rates::flat(tree, |l| spec(l).rt.map(|c| c.rate()).or(spec(l).rate)).map_err(|problems| {
        BuildError {
            kind: SchedulerKind::Sced,
            problems,
        }
    })
}

fn virtual_clock_rates(tree: &ClassTree) -> Result<Vec<crate::units::Rate>, BuildError> {
    rates::flat(tree, |l| tree.get(l).spec.rate).map_err(|problems| BuildError {
        kind: SchedulerKind::VirtualClock,
        problems,
    })
}

impl<P: Packet> Sced<P> {
    /// SCED with the curves of the module docs; fails (with the class and how to fix it)
    /// if a leaf without a curve or rate would get a zero share.
    pub fn new(tree: &ClassTree) -> Result<Sced<P>, BuildError> {
        let rate = sced_rates(tree)?;
        Ok(Sced::with_curves(tree, "sced", |l| {
            tree.get(l)
                .spec
                .rt
                .unwrap_or(ServiceCurve::linear(rate[l.index()]))
        }))
    }

    /// Virtual Clock: SCED with the linear curve of every leaf's rate (module docs);
    /// fails as [`Sced::new`] does.
    pub fn virtual_clock(tree: &ClassTree) -> Result<Sced<P>, BuildError> {
        let rate = virtual_clock_rates(tree)?;
        Ok(Sced::with_curves(tree, "vc", |l| {
            ServiceCurve::linear(rate[l.index()])
        }))
    }

    fn with_curves(
        tree: &ClassTree,
        name: &'static str,
        curve: impl Fn(ClassId) -> ServiceCurve,
    ) -> Sced<P> {
        let leaves = tree
            .classes()
            .iter()
            .map(|c| {
                c.is_leaf().then(|| Leaf {
                    queue: VecDeque::new(),
                    curve: curve(c.id),
                    deadline: None,
                    served: 0,
                })
            })
            .collect();
        Sced {
            name,
            leaves,
            order: IndexedHeap::new(tree.len()),
        }
    }

    /// The service curve `S_i` of leaf `class`, or `None` if it is not a leaf.
    pub fn curve_of(&self, class: ClassId) -> Option<ServiceCurve> {
        self.leaf(class).map(|l| l.curve)
    }

    /// The deadline `D_i^{-1}(w_i + l)` of the head packet of `class`, if it has one.
    pub fn deadline_of(&self, class: ClassId) -> Option<Instant> {
        self.leaf(class)?;
        self.order.key_of(class.0).map(Instant)
    }

    /// Bytes served to leaf `class` so far (`w_i`), or `None` if it is not a leaf.
    pub fn served(&self, class: ClassId) -> Option<u64> {
        self.leaf(class).map(|l| l.served)
    }

    fn leaf(&self, class: ClassId) -> Option<&Leaf<P>> {
        self.leaves.get(class.index()).and_then(Option::as_ref)
    }

    /// Keys leaf `c` by its head's deadline, or takes it out of the order if it is empty.
    fn schedule(&mut self, c: u32) {
        let leaf = self.leaves[c as usize]
            .as_ref()
            .expect("only leaves are scheduled");
        match (leaf.queue.front(), &leaf.deadline) {
            (Some(head), Some(d)) => {
                let at = d.y2x(leaf.served + u64::from(head.wire_len()));
                self.order.set(c, at);
            }
            _ => {
                self.order.remove(c);
            }
        }
    }
}

impl<P: Packet> Scheduler<P> for Sced<P> {
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
        let leaf = self.leaves[class.index()]
            .as_mut()
            .expect("the qdisc offers leaves only");
        leaf.queue.push_back(pkt);
        if leaf.queue.len() == 1 {
            let (a, w) = (now.as_nanos(), leaf.served);
            match &mut leaf.deadline {
                Some(d) => d.min_with(&leaf.curve, a, w),
                None => leaf.deadline = Some(RuntimeCurve::new(&leaf.curve, a, w)),
            }
            self.schedule(class.0);
        }
        Enqueue::Queued
    }

    fn dequeue(&mut self, _now: Instant) -> Option<Dequeued<P>> {
        let (c, _) = self.order.peek()?;
        let leaf = self.leaves[c as usize]
            .as_mut()
            .expect("only leaves are scheduled");
        let pkt = leaf
            .queue
            .pop_front()
            .expect("scheduled leaves are backlogged");
        leaf.served += u64::from(pkt.wire_len());
        self.schedule(c);
        Some(Dequeued {
            pkt,
            class: ClassId(c),
        })
    }

    fn poll_at(&self, _now: Instant) -> PollAt {
        PollAt::work_conserving(!self.order.is_empty())
    }

    fn remove_behind_head(&mut self, class: ClassId) -> Option<P> {
        match self.leaves.get_mut(class.index()) {
            Some(Some(leaf)) if leaf.queue.len() >= 2 => leaf.queue.remove(1),
            _ => self.remove_newest(class),
        }
    }

    fn remove_newest(&mut self, class: ClassId) -> Option<P> {
        let leaf = self.leaves.get_mut(class.index())?.as_mut()?;
        let pkt = leaf.queue.pop_back()?;
        if leaf.queue.is_empty() {
            self.order.remove(class.0);
        }
        Some(pkt)
    }
}
