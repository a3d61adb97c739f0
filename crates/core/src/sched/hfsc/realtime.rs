//! The real-time criterion (H-FSC paper §III-B, Figs. 5–6): deadline and eligible curves
//! of the leaves with an `rt` curve, and the ordered sets that find, at `now`, the
//! eligible leaf with the smallest deadline in O(log n).
//!
//! Every backlogged leaf with an `rt` curve is in exactly one of two heaps:
//!
//! * `pending`, keyed by its eligible time `e`, while `e` was later than the last
//!   instant it was looked at (or it was the only eligible leaf then, below);
//! * `ready`, keyed by its deadline `d`, once `e <= now` for some `now` already seen.
//!
//! Time only moves forward, so a leaf never moves back from `ready` to `pending` unless
//! its `e` changes, which happens only when the real-time criterion serves it. At each
//! selection the leaves of `pending` whose `e` has come are moved to `ready`: each move
//! is paid for by the real-time service (or activation) that set `e`, so the cost is
//! O(log n) amortised per packet. One exception saves the moves where they would be
//! made on every packet (a leaf served at its own rate with no other eligible leaf, as
//! a lone leaf always is): if `ready` is empty and a single leaf of `pending` is
//! eligible, it is chosen where it is, and its service re-keys it in `pending`.
//!
//! Both are [`LeafHeap`]s: each leaf's position in them is a field of its record (one
//! cache line, which also holds the ends of the leaf's queue), so that a packet of a
//! leaf that is rarely cached pays for one line, not for the record and two arrays of
//! positions.
//!
//! All times are integer nanoseconds, all amounts bytes.

use super::anchored::{Anchored, CurveTable, Entry};
use super::leaf_heap::{ABSENT, LeafHeap, Positions};
use crate::curve::ServiceCurve;
use crate::ds::QueueEnds;
use crate::sched::PollAt;
use crate::units::{Instant, Rate};

/// [`Leaf::curve`] of a class without an `rt` curve.
const NO_CURVE: u32 = u32::MAX;

/// The record of one class that a packet of a leaf reads first: the ends of the
/// class's queue (empty for interior classes) and its real-time state, all of it read
/// or written on every packet of a leaf with an `rt` curve: one cache line (the `rt`
/// curve's slopes are in the [`CurveTable`]; the eligible time `e_i`, needed only as
/// the key of `pending`, is not stored).
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct Leaf {
    /// Deadline curve `D_i` (Eq. 7), real time (ns) to bytes of real-time service; the
    /// curve at infinity until the first activation.
    deadline: Anchored,
    /// `c_i`: bytes served by the real-time criterion.
    cumul: u64,
    /// `d_i = D_i^{-1}(c_i + l)` with `l` the head packet's length, ns.
    d: u64,
    /// The class's queue of packets (in the scheduler's [`crate::ds::SlotPool`]).
    queue: QueueEnds,
    /// Index of the `rt` curve `S_i` in [`RealTime::curves`], [`NO_CURVE`] without one.
    curve: u32,
    /// The leaf's position in `pending` or `ready` ([`LeafHeap`]), [`ABSENT`] in neither.
    at: u32,
}

impl Positions for Vec<Leaf> {
    #[inline(always)]
    fn at(&self, item: u32) -> u32 {
        self[item as usize].at
    }

    #[inline(always)]
    fn set_at(&mut self, item: u32, at: u32) {
        self[item as usize].at = at;
    }
}

const _: () = assert!(
    size_of::<Leaf>() == 64,
    "a leaf's real-time state is one cache line"
);

impl Leaf {
    /// Whether the class has an `rt` curve.
    #[inline]
    fn has_curve(&self) -> bool {
        self.curve != NO_CURVE
    }

    /// `E_i^{-1}(c_i)`: the eligible time of the current head (Eq. 11), with `rt` the
    /// leaf's curve. The eligible curve follows from the deadline curve and `S_i`
    /// ([`crate::curve::RuntimeCurve::eligible`]), so it is not stored.
    #[inline]
    fn eligible_time(&self, rt: &Entry) -> u64 {
        self.deadline.eligible_y2x(&rt.sc, rt.shape, self.cumul)
    }

    /// `D_i^{-1}(c_i + head)`: the deadline of a head packet of `head` bytes, with `rt`
    /// the leaf's curve.
    #[inline]
    fn deadline(&self, rt: &Entry, head: u64) -> u64 {
        self.deadline.y2x(&rt.sc, self.cumul + head)
    }
}

/// The real-time criterion over the leaves. See the [module docs](self).
#[derive(Clone, Debug)]
pub(super) struct RealTime {
    /// By class index (a record without a curve for classes without an `rt` curve).
    leaves: Vec<Leaf>,
    /// The distinct `rt` curves, with their shapes.
    curves: CurveTable,
    /// Backlogged leaves not yet seen eligible, keyed by `e`.
    pending: LeafHeap,
    /// Backlogged leaves seen eligible, keyed by `d`.
    ready: LeafHeap,
}

impl RealTime {
    /// The state for classes whose `rt` curves are given by class index.
    pub(super) fn new(rt: impl ExactSizeIterator<Item = Option<ServiceCurve>>) -> RealTime {
        let n = rt.len();
        let mut curves = CurveTable::default();
        let leaves = rt
            .map(|sc| Leaf {
                deadline: Anchored::infinite(&sc.unwrap_or(ServiceCurve::linear(Rate::ZERO))),
                cumul: 0,
                d: 0,
                queue: QueueEnds::EMPTY,
                at: ABSENT,
                curve: sc.map_or(NO_CURVE, |sc| curves.intern(sc, false)),
            })
            .collect();
        RealTime {
            leaves,
            curves,
            pending: LeafHeap::new(n, false),
            ready: LeafHeap::new(n, true),
        }
    }

    /// Leaf `c` (idle) forgets its deadline curve: the curve at infinity again, as before
    /// its first activation.
    pub(super) fn reset(&mut self, c: usize) {
        let leaf = &mut self.leaves[c];
        if leaf.has_curve() {
            leaf.deadline = Anchored::infinite(&self.curves.get(leaf.curve).sc);
        }
    }

    /// The ends of class `c`'s queue.
    #[inline]
    pub(super) fn queue(&self, c: usize) -> &QueueEnds {
        &self.leaves[c].queue
    }

    /// The ends of class `c`'s queue, to change them; `None` if `c` is not a class.
    #[inline]
    pub(super) fn queue_mut(&mut self, c: usize) -> Option<&mut QueueEnds> {
        self.leaves.get_mut(c).map(|l| &mut l.queue)
    }

    /// The ends of every class's queue, by class index.
    pub(super) fn queues(&self) -> impl Iterator<Item = &QueueEnds> {
        self.leaves.iter().map(|l| &l.queue)
    }

    /// Whether class `c` has an `rt` curve.
    #[inline]
    pub(super) fn has_curve(&self, c: usize) -> bool {
        self.leaves[c].has_curve()
    }

    /// Leaf `c` becomes backlogged at `now` with a head packet of `head` bytes (Fig. 6a,
    /// `update_ed` on activation): `D_i <- min(D_i, S_i(t - now) + c_i)` (Eq. 7, exact
    /// for the deadlines looked up from now on; see
    /// [`crate::curve::RuntimeCurve::min_with`] for why that differs from the paper's
    /// Fig. 9 for convex curves; on the first activation, `S_i` anchored at
    /// `(now, c_i)`), `E_i` from `D_i` (Eq. 11), then `e_i` and `d_i`. Convex curves with
    /// `0 < m1 < m2` are refused when the scheduler is built: their minimum is not
    /// two-piece in general (paper, §IV).
    pub(super) fn activate(&mut self, c: usize, now: u64, head: u64) {
        let RealTime {
            leaves,
            curves,
            pending,
            ready,
        } = self;
        let leaf = &mut leaves[c];
        debug_assert!(leaf.has_curve(), "activate: leaf has an rt curve");
        let rt = curves.get(leaf.curve);
        leaf.deadline.min_with(&rt.sc, rt.shape, now, leaf.cumul);
        let e = leaf.eligible_time(rt);
        let d = leaf.deadline(rt, head);
        leaf.d = d;
        // An idle leaf is in neither heap.
        let item = c as u32;
        if e <= now {
            ready.insert(item, d, leaves);
        } else {
            pending.insert(item, e, leaves);
        }
    }

    /// Leaf `c`, the choice of [`RealTime::select`], was served `len` bytes by the
    /// real-time criterion at `now`; `next` is the length of its new head packet, `None`
    /// if it is now empty (Fig. 5: `c_i += len`, then `e_i`, `d_i` from the new head).
    pub(super) fn served_by_rt(&mut self, c: usize, len: u64, now: u64, next: Option<u64>) {
        let RealTime {
            leaves,
            curves,
            pending,
            ready,
        } = self;
        // The leaf was selected, so it is in `ready`, or in `pending` if it was the only
        // eligible leaf and `ready` was empty (see `select`).
        let item = c as u32;
        let in_pending = pending.contains(item, leaves);
        let leaf = &mut leaves[c];
        debug_assert!(leaf.has_curve(), "served_by_rt: rt leaf");
        leaf.cumul += len;
        match next {
            Some(head) => {
                let rt = curves.get(leaf.curve);
                let e = leaf.eligible_time(rt);
                let d = leaf.deadline(rt, head);
                leaf.d = d;
                if in_pending {
                    // `e` only grows with `c_i`: a sift down, if any.
                    pending.update(item, e, leaves);
                } else if e <= now {
                    ready.update(item, d, leaves);
                } else {
                    ready.remove(item, leaves);
                    pending.insert(item, e, leaves);
                }
            }
            None if in_pending => {
                pending.remove(item, leaves);
            }
            None => {
                ready.remove(item, leaves);
            }
        }
    }

    /// Leaf `c` was served by the link-sharing criterion; `next` is the length of its new
    /// head packet, `None` if it is now empty. Only `d_i` changes (Fig. 6b), since `c_i`
    /// did not: link-sharing service never delays later deadlines.
    pub(super) fn served_by_ls(&mut self, c: usize, next: Option<u64>) {
        match next {
            Some(head) => {
                let RealTime {
                    leaves,
                    curves,
                    ready,
                    ..
                } = self;
                let leaf = &mut leaves[c];
                debug_assert!(leaf.has_curve(), "served_by_ls: rt leaf");
                let d = leaf.deadline(curves.get(leaf.curve), head);
                leaf.d = d;
                if ready.contains(c as u32, leaves) {
                    ready.update(c as u32, d, leaves);
                }
            }
            None => self.remove(c),
        }
    }

    /// Leaf `c` is no longer backlogged.
    pub(super) fn remove(&mut self, c: usize) {
        // A leaf is in at most one of the heaps.
        if !self.pending.remove(c as u32, &mut self.leaves) {
            self.ready.remove(c as u32, &mut self.leaves);
        }
    }

    /// The eligible leaf with the smallest deadline at `now` (smaller class id on ties).
    ///
    /// When `ready` is empty and exactly one leaf of `pending` is eligible, that leaf is
    /// the answer and stays in `pending`: [`RealTime::served_by_rt`] re-keys it there,
    /// instead of a move to `ready` and, when its next eligible time has not come, back
    /// (a leaf served at its own rate, alone or nearly, goes through both on every
    /// packet).
    #[inline]
    pub(super) fn select(&mut self, now: u64) -> Option<usize> {
        if self.ready.is_empty() {
            let (c, e) = self.pending.peek()?;
            if e > now {
                return None;
            }
            if self.pending.second_key().is_none_or(|second| second > now) {
                return Some(c as usize);
            }
        }
        self.promote(now);
        self.ready.peek().map(|(c, _)| c as usize)
    }

    /// Moves the leaves of `pending` whose eligible time has come to `ready` (out of
    /// line: [`RealTime::select`]'s own path, inlined into the dequeue, stays short).
    #[inline(never)]
    fn promote(&mut self, now: u64) {
        while let Some((c, e)) = self.pending.peek()
            && e <= now
        {
            self.pending.remove(c, &mut self.leaves);
            let d = self.leaves[c as usize].d;
            self.ready.insert(c, d, &mut self.leaves);
        }
    }

    /// When the real-time criterion can next serve a packet.
    pub(super) fn poll_at(&self, now: u64) -> PollAt {
        if !self.ready.is_empty() {
            return PollAt::Now;
        }
        match self.pending.peek() {
            None => PollAt::Idle,
            Some((_, e)) if e <= now => PollAt::Now,
            Some((_, e)) => PollAt::At(Instant(e)),
        }
    }

    /// `(e_i, d_i)` of a backlogged leaf with an `rt` curve.
    pub(super) fn times(&self, c: usize) -> Option<(u64, u64)> {
        let leaf = self.leaves.get(c)?;
        let backlogged = leaf.at != ABSENT;
        (backlogged && leaf.has_curve())
            .then(|| (leaf.eligible_time(self.curves.get(leaf.curve)), leaf.d))
    }

    /// `c_i`: bytes served to `c` by the real-time criterion (0 without an `rt` curve).
    pub(super) fn cumul(&self, c: usize) -> u64 {
        self.leaves.get(c).map_or(0, |l| l.cumul)
    }

    /// Checks that both heaps are in heap order with every entry's position recorded,
    /// that no other leaf has a position, that every backlogged leaf (`backlogged(c)`)
    /// with an `rt` curve is in exactly one heap with the right key, that `e_i` and `d_i` follow from the curves
    /// (`head(c)` is the head packet's length), and that idle leaves are in no heap.
    pub(super) fn check(
        &self,
        backlogged: impl Fn(usize) -> bool,
        head: impl Fn(usize) -> u64,
    ) -> Result<(), String> {
        self.pending.check(&self.leaves)?;
        self.ready.check(&self.leaves)?;
        let placed = self.leaves.iter().filter(|l| l.at != ABSENT).count();
        if placed != self.pending.len() + self.ready.len() {
            return Err(format!(
                "{placed} leaves have a heap position, the heaps hold {}",
                self.pending.len() + self.ready.len()
            ));
        }
        for (c, leaf) in self.leaves.iter().enumerate() {
            let item = c as u32;
            let (p, r) = (
                self.pending.key_of(item, &self.leaves),
                self.ready.key_of(item, &self.leaves),
            );
            if !leaf.has_curve() {
                if p.is_some() || r.is_some() {
                    return Err(format!("class {c} has no rt curve but is queued for it"));
                }
                continue;
            }
            if !backlogged(c) {
                if p.is_some() || r.is_some() {
                    return Err(format!("idle leaf {c} is in a real-time heap"));
                }
                continue;
            }
            let rt = self.curves.get(leaf.curve);
            if leaf.d != leaf.deadline(rt, head(c)) {
                return Err(format!("leaf {c}: d does not follow from its curves"));
            }
            match (p, r) {
                (Some(e), None) if e == leaf.eligible_time(rt) => {}
                (None, Some(d)) if d == leaf.d => {}
                _ => return Err(format!("leaf {c}: pending {p:?}, ready {r:?}")),
            }
        }
        Ok(())
    }
}
