//! The real-time criterion (H-FSC paper §III-B, Figs. 5–6): deadline and eligible curves
//! of the leaves with an `rt` curve, and the ordered sets that find, at `now`, the
//! eligible leaf with the smallest deadline in O(log n).
//!
//! Every backlogged leaf with an `rt` curve is in exactly one of two heaps:
//!
//! * `pending`, keyed by its eligible time `e`, while `e` was later than the last
//!   instant it was looked at;
//! * `ready`, keyed by its deadline `d`, once `e <= now` for some `now` already seen.
//!
//! Time only moves forward, so a leaf never moves back from `ready` to `pending` unless
//! its `e` changes, which happens only when the real-time criterion serves it. At each
//! selection the leaves of `pending` whose `e` has come are moved to `ready`: each move
//! is paid for by the real-time service (or activation) that set `e`, so the cost is
//! O(log n) amortised per packet.
//!
//! All times are integer nanoseconds, all amounts bytes.

use crate::curve::{RuntimeCurve, ServiceCurve, Shape};
use crate::pq::IndexedHeap;
use crate::sched::PollAt;
use crate::units::Instant;

/// Real-time state of one leaf with an `rt` curve. Aligned to a cache line so that a
/// leaf, read on every packet of a random class, spans two lines rather than three.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct Leaf {
    /// Deadline curve `D_i` (Eq. 7), real time (ns) to bytes of real-time service.
    deadline: RuntimeCurve,
    /// `c_i`: bytes served by the real-time criterion.
    cumul: u64,
    /// `e_i = E_i^{-1}(c_i)`, ns.
    e: u64,
    /// `d_i = D_i^{-1}(c_i + l)` with `l` the head packet's length, ns.
    d: u64,
    /// The `rt` curve `S_i`.
    sc: ServiceCurve,
    /// `S_i`'s shape.
    shape: Shape,
    /// Whether `deadline` has been anchored by a first activation.
    anchored: bool,
}

const _: () = assert!(
    size_of::<Option<Leaf>>() == 128,
    "a leaf's real-time state spans two cache lines"
);

impl Leaf {
    /// Eq. 7 at an activation at `x`: `D <- min(D, S(t - x) + c)` for `t >= x`
    /// ([`RuntimeCurve::min_with`], exact for the deadlines looked up from now on; see
    /// its docs for why that differs from the paper's Fig. 9 for convex curves). On the
    /// first activation `D` is `S` anchored at `(x, c)`. Convex curves with
    /// `0 < m1 < m2` are refused when the scheduler is built: their minimum is not
    /// two-piece in general (paper, §IV).
    fn update_deadline(&mut self, x: u64) {
        let c = self.cumul;
        if self.anchored {
            self.deadline.min_with_shape(&self.sc, self.shape, x, c);
        } else {
            self.deadline = RuntimeCurve::new(&self.sc, x, c);
            self.anchored = true;
        }
    }

    /// `E_i^{-1}(c_i)`: the eligible time of the current head (Eq. 11). The eligible
    /// curve follows from the deadline curve and `S_i` ([`RuntimeCurve::eligible`]), so
    /// it is not stored.
    #[inline]
    fn eligible_time(&self) -> u64 {
        self.deadline.eligible_for(self.shape).y2x(self.cumul)
    }
}

/// The real-time criterion over the leaves. See the [module docs](self).
#[derive(Clone, Debug)]
pub(super) struct RealTime {
    /// By class index; `None` for classes without an `rt` curve.
    leaves: Vec<Option<Leaf>>,
    /// Backlogged leaves not yet seen eligible, keyed by `e`.
    pending: IndexedHeap,
    /// Backlogged leaves seen eligible, keyed by `d`.
    ready: IndexedHeap,
}

impl RealTime {
    /// The state for classes whose `rt` curves are given by class index.
    pub(super) fn new(rt: impl ExactSizeIterator<Item = Option<ServiceCurve>>) -> RealTime {
        let n = rt.len();
        RealTime {
            leaves: rt
                .map(|sc| {
                    sc.map(|sc| Leaf {
                        sc,
                        shape: sc.shape(),
                        deadline: RuntimeCurve::new(&sc, 0, 0),
                        cumul: 0,
                        e: 0,
                        d: 0,
                        anchored: false,
                    })
                })
                .collect(),
            pending: IndexedHeap::new(n),
            ready: IndexedHeap::new(n),
        }
    }

    /// Loads a word of each cache line of leaf `c`'s record, so that a later access
    /// finds them in the cache (an early load, kept by [`core::hint::black_box`]; no
    /// state changes).
    #[inline(always)]
    pub(super) fn touch(&self, c: usize) {
        if let Some(Some(l)) = self.leaves.get(c) {
            core::hint::black_box((l.cumul, l.sc.m2));
        }
    }

    /// Leaf `c` becomes backlogged at `now` with a head packet of `head` bytes (Fig. 6a,
    /// `update_ed` on activation): `D_i <- min(D_i, S_i(t - now) + c_i)` (Eq. 7, see
    /// [`Leaf::update_deadline`]), `E_i` from `D_i` (Eq. 11), then `e_i` and `d_i`.
    pub(super) fn activate(&mut self, c: usize, now: u64, head: u64) {
        let leaf = self.leaves[c]
            .as_mut()
            .expect("activate: leaf has an rt curve");
        leaf.update_deadline(now);
        leaf.e = leaf.eligible_time();
        leaf.d = leaf.deadline.y2x(leaf.cumul + head);
        // An idle leaf is in neither heap.
        let item = c as u32;
        if leaf.e <= now {
            self.ready.set(item, leaf.d);
        } else {
            self.pending.set(item, leaf.e);
        }
    }

    /// Leaf `c`, the choice of [`RealTime::select`], was served `len` bytes by the
    /// real-time criterion at `now`; `next` is the length of its new head packet, `None`
    /// if it is now empty (Fig. 5: `c_i += len`, then `e_i`, `d_i` from the new head).
    pub(super) fn served_by_rt(&mut self, c: usize, len: u64, now: u64, next: Option<u64>) {
        let leaf = self.leaves[c].as_mut().expect("served_by_rt: rt leaf");
        leaf.cumul += len;
        // The leaf was selected, so it is in `ready`.
        let item = c as u32;
        match next {
            Some(head) => {
                leaf.e = leaf.eligible_time();
                leaf.d = leaf.deadline.y2x(leaf.cumul + head);
                if leaf.e <= now {
                    self.ready.set(item, leaf.d);
                } else {
                    self.ready.remove(item);
                    self.pending.set(item, leaf.e);
                }
            }
            None => {
                self.ready.remove(item);
            }
        }
    }

    /// Leaf `c` was served by the link-sharing criterion; `next` is the length of its new
    /// head packet, `None` if it is now empty. Only `d_i` changes (Fig. 6b), since `c_i`
    /// did not: link-sharing service never delays later deadlines.
    pub(super) fn served_by_ls(&mut self, c: usize, next: Option<u64>) {
        let leaf = self.leaves[c].as_mut().expect("served_by_ls: rt leaf");
        match next {
            Some(head) => {
                leaf.d = leaf.deadline.y2x(leaf.cumul + head);
                if self.ready.contains(c as u32) {
                    self.ready.set(c as u32, leaf.d);
                }
            }
            None => self.remove(c),
        }
    }

    /// Leaf `c` is no longer backlogged.
    pub(super) fn remove(&mut self, c: usize) {
        self.pending.remove(c as u32);
        self.ready.remove(c as u32);
    }

    /// The eligible leaf with the smallest deadline at `now` (smaller class id on ties).
    pub(super) fn select(&mut self, now: u64) -> Option<usize> {
        while let Some((c, e)) = self.pending.peek()
            && e <= now
        {
            self.pending.remove(c);
            let d = self.leaves[c as usize].as_ref().map_or(0, |l| l.d);
            self.ready.set(c, d);
        }
        self.ready.peek().map(|(c, _)| c as usize)
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
        let backlogged = self.pending.contains(c as u32) || self.ready.contains(c as u32);
        let leaf = self.leaves.get(c)?.as_ref()?;
        backlogged.then_some((leaf.e, leaf.d))
    }

    /// `c_i`: bytes served to `c` by the real-time criterion (0 without an `rt` curve).
    pub(super) fn cumul(&self, c: usize) -> u64 {
        self.leaves
            .get(c)
            .and_then(Option::as_ref)
            .map_or(0, |l| l.cumul)
    }

    /// Checks that every backlogged leaf (`backlogged(c)`) with an `rt` curve is in
    /// exactly one heap with the right key, that `e_i` and `d_i` follow from the curves
    /// (`head(c)` is the head packet's length), and that idle leaves are in no heap.
    pub(super) fn check(
        &self,
        backlogged: impl Fn(usize) -> bool,
        head: impl Fn(usize) -> u64,
    ) -> Result<(), String> {
        for (c, leaf) in self.leaves.iter().enumerate() {
            let item = c as u32;
            let (p, r) = (self.pending.key_of(item), self.ready.key_of(item));
            let Some(leaf) = leaf else {
                if p.is_some() || r.is_some() {
                    return Err(format!("class {c} has no rt curve but is queued for it"));
                }
                continue;
            };
            if !backlogged(c) {
                if p.is_some() || r.is_some() {
                    return Err(format!("idle leaf {c} is in a real-time heap"));
                }
                continue;
            }
            if leaf.e != leaf.eligible_time() || leaf.d != leaf.deadline.y2x(leaf.cumul + head(c)) {
                return Err(format!("leaf {c}: e or d does not follow from its curves"));
            }
            match (p, r) {
                (Some(e), None) if e == leaf.e => {}
                (None, Some(d)) if d == leaf.d => {}
                _ => return Err(format!("leaf {c}: pending {p:?}, ready {r:?}")),
            }
        }
        Ok(())
    }
}
