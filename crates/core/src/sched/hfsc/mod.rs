//! H-FSC: the Hierarchical Fair Service Curve scheduler (H-FSC paper, §III–V; the
//! curves and equations are restated in `papers/NOTES.md`), with the separate real-time,
//! link-sharing and upper-limit curves of deployed H-FSC (Linux `sch_hfsc.c`, ALTQ).
//!
//! # The algorithm
//!
//! H-FSC guarantees each leaf its real-time service curve — decoupling delay from
//! bandwidth, since curves may be concave — and shares the rest of the link among the
//! hierarchy by the classes' link-sharing curves. Two criteria (Fig. 5):
//!
//! * **Real-time** (module `realtime`): every backlogged leaf with an `rt` curve has an
//!   eligible time `e_i` and a deadline `d_i`. If some leaf has `e_i <= now`, the one with
//!   the smallest `d_i` sends its head packet; then `c_i += len` and `e_i`, `d_i` are
//!   recomputed from the new head: `e_i = E_i^{-1}(c_i)`, `d_i = D_i^{-1}(c_i + l)`.
//!   `c_i` counts only real-time service. The deadline curve is updated when the leaf
//!   becomes backlogged at `a`: `D_i(t) <- min(D_i(t), S_i(t - a) + c_i(a))` (Eq. 7,
//!   Fig. 9); the eligible curve `E_i` is `D_i` for a concave `S_i` and the line of slope
//!   `m2` from `D_i`'s anchor otherwise (Eq. 11).
//! * **Link-sharing** (module `linkshare`), used only when no leaf is eligible: from the
//!   root, repeatedly take the active child with the smallest virtual time that fits its
//!   upper limit, down to a leaf, and send its head. Only `d_i` is recomputed (Fig. 6b):
//!   link-sharing service does not change `c_i`, so it never delays the leaf's later
//!   deadlines (non-punishment).
//!
//! Either way `w` (bytes served by both criteria) grows for the leaf and every ancestor,
//! and the virtual times of the active ones follow: `v_i = V_i^{-1}(w_i)` (Fig. 7). The
//! virtual curve is updated when the class becomes active:
//! `V_i(v) <- min(V_i(v), S_i(v - vs_p) + w_i)` (Eq. 12), anchored at the parent's system
//! virtual time `vs_p = (v_min + v_max) / 2`; module `linkshare` documents `vs_p` exactly,
//! including what it is when the parent has no other active child (the largest virtual
//! time any child had when it last left: every child starts the parent's new active
//! period afresh).
//!
//! The upper limit: a class with a `ul` curve `U_i` anchored at `(a, w_i(a))` when it
//! becomes active is not chosen by link-sharing before its fit time `U_i^{-1}(w_i)`; an
//! interior class fits when it and one of its active children fit. With an upper limit
//! H-FSC is not work-conserving: `dequeue` may return `None` while packets wait, and
//! [`Scheduler::poll_at`] says `At(t)` with `t` the earliest of the next eligible time and
//! the next fit time at the root, the first instant at which either criterion can send.
//! A leaf with only an `rt` curve also makes H-FSC non-work-conserving: it is served only
//! by the real-time criterion, at its eligible times.
//!
//! Ties are broken by the smaller class id, at every level and in the real-time
//! criterion, so runs are deterministic.
//!
//! # Parameters
//!
//! From each [`ClassSpec`](crate::hierarchy::ClassSpec) (curves are two-piece
//! `(m1, d, m2)`: slopes in bit/s, `d` in ns; see [`crate::curve`]):
//!
//! | field | meaning | default |
//! |---|---|---|
//! | `rt` | real-time curve `S_i` (Eq. 7, 11); **leaves only** | none |
//! | `ls` | link-sharing curve, the virtual curve's shape (Eq. 12) | see below |
//! | `ul` | upper-limit curve; only limits link-sharing | none |
//! | `rate` | gives the default `ls = linear(rate)` | |
//! | `weight` | gives the default `ls` when `rate` is absent | 1 |
//!
//! A class may have only `rt`, only `ls`, or both, as in Linux and the BSDs. A class with
//! neither gets `ls = linear(rate)` if it has a `rate`, else `ls = linear(share)`, its
//! weighted share of its parent's long-term link-sharing rate (the `m2` of the parent's
//! `ls`, the link rate for children of the link): `parent rate · weight / sum of the
//! weights of it and its siblings`, rounded down, at least 1 bit/s, computed top-down.
//! So a scenario written for HLS, HTB or DRR runs under H-FSC unchanged. A class with `rt`
//! and no `ls` takes no part in link-sharing: it is never chosen by the link-sharing
//! criterion, it is not counted among its parent's active children (for `vs_p`), and a
//! `ul` on it has no effect. Its service still counts in its ancestors' `w`.
//!
//! Two `rt` curves are refused ([`BuildError`], naming the class and the fix): one on a
//! class with children (real-time guarantees are per leaf), and a convex one whose first
//! segment is not flat (`0 < m1 < m2`): its deadline curve does not stay two-piece
//! (paper, §IV), so its guarantee could not be kept exactly. `(umax, dmax, rate)` writes
//! convex curves with `m1 = 0`, which are exact. Packets longer than the class's `max_packet` never reach
//! H-FSC ([`crate::Qdisc`] drops them); Thm. 2's `t_max` is the transmission time of the
//! longest packet any class may send.
//!
//! # Deviations from the paper and from Linux
//!
//! * Separate `rt`, `ls`, `ul` curves (the paper has one curve per class; with `rt = ls`
//!   this is the paper's algorithm). Thms. 1–2 hold whatever the `ls` and `ul` curves.
//!   Thm. 3 is the paper's for one curve per leaf; with different `rt` and `ls` curves
//!   the real-time criterion can serve a leaf faster than its link-sharing share (say
//!   `rt` 9 Mbit/s, `ls` 1 Mbit/s beside an `ls`-only sibling of 1 Mbit/s on 10 Mbit/s),
//!   and sibling virtual times then drift apart without bound.
//! * **The deadline curve of a linear or convex `rt` curve follows Eq. 7 exactly**, where
//!   Fig. 9 (and Linux, ALTQ) keeps the old curve whenever it lies below the new anchor.
//!   A class served ahead of its deadline curve (by its eligible curve, Eq. 11) that idles
//!   and returns between the two curves would keep earlier deadlines than Eq. 7 gives,
//!   which admission control does not count, and other classes could then miss theirs by
//!   more than `t_max` (Thm. 2): the property tests found such a case. See module
//!   `realtime`. The virtual and upper-limit curves keep Fig. 9's update: no guarantee
//!   rests on their exactness (the Thm. 3 bounds of `tests/hfsc_props.rs` hold with it).
//! * `vs_p` guards `v_min` with Linux's `cvtmin` when upper limits hold children back,
//!   and a parent's new active period starts at Linux's `cvtoff` (module `linkshare`).
//!   Linux also lifts the virtual time of a class that lags behind `cvtmin` (`cl_vtadj`);
//!   we do not: without `ul` no class ever lags behind it, and with `ul` the lag of a
//!   limited class is what makes it first in line whenever its limit allows.
//! * A class with only a `ul` curve gets the default `ls` (Linux refuses a class with
//!   neither `rt` nor `ls`, and such a class could never send).
//! * The first activation anchors each curve at the activation point (the paper's
//!   "initialised to `S_i`"); Linux anchors at `(0, 0)` at creation and min-updates.
//! * Exact integer curves ([`crate::curve`]): no fixed-point slopes, no clock ticks.
//! * O(log n) selection in both criteria (below); Linux scans its eligible tree for the
//!   smallest deadline and its virtual-time trees for the first class that fits.
//!
//! # The restart rule
//!
//! A class that becomes active while its parent has other active children anchors its
//! virtual curve at `vs_p` (Eq. 12) and so restarts at virtual time
//! `max(its own, vs_p)`. The paper (§III-C), ALTQ and Linux take
//! `vs_p = (v_min + v_max) / 2` ([`VtRestart::Midpoint`], the default): it bounds the
//! discrepancy between the virtual times of any two active siblings (§V), whereas
//! `v_min` or `v_max` gives a discrepancy proportional to the number of siblings.
//!
//! This is a property of the algorithm, not of our code, and it can cost a class much
//! of its share: a sibling of tiny weight moves its own virtual time far ahead with each
//! packet (1000 B at 15 kbit/s is 0.53 s of virtual time), so `v_max` is far above
//! `v_min`; a class that empties between its packets then restarts halfway up, ahead of
//! its greedy siblings, and waits until they catch up while its buffer fills. On 100
//! Mbit/s with `ls`-only leaves G (27 393 kbit/s, greedy), C (15 300 kbit/s, CBR at
//! 19.458 Mbit/s, below its share of 35.8) and T (15 kbit/s, greedy), 1000 B packets and
//! 100 packets of buffer, C gets 15.83 Mbit/s (−18.7 %, drops at its limit) and G
//! +4.5 %; the Linux kernel's H-FSC run in userspace on the same traffic gives C
//! 15.87 Mbit/s (−18.45 %), HLS 19.459. `linkshare repro hfsc-vt-restart` shows it,
//! with a search over T's weight (15 to 1500), C's buffer (100, 1000 packets) and C's
//! source (CBR, Poisson): beyond 5 % only when the tiny-weight sibling is very light
//! (T's weight 15, G : T = 1826; from 30 on C loses at most 0.6 %) *and* C's buffer is
//! short (100 packets; with 1000 the stalls become queueing delay and C loses 0.2 %),
//! for CBR and Poisson sources alike.
//!
//! [`VtRestart::Min`] (`[link.hfsc] restart = "min"`) restarts at `v_min`: C then gets
//! its full rate (so does the kernel's code changed the same way). The cost is the
//! paper's: the sibling discrepancy bound grows with the number of siblings. The
//! property tests (`tests/hfsc_props.rs`: Thms. 1–3 and HMM-fair long-run rates) pass
//! under both rules, and the H-FSC paper's reproductions (`hfsc-delay`,
//! `hfsc-linkshare`, and `hfsc` in `sced-vs-fsc`, where the two rules coincide with one
//! other active sibling) give byte-identical per-packet records under both: their
//! classes are either continuously backlogged or served by their real-time curves. The
//! default stays the paper's, and the service order of the default is unchanged
//! (`tests/service_order.rs`).
//!
//! # Cost
//!
//! Per packet, O(log n) for the real-time criterion (two heaps over the leaves: one by
//! eligible time for leaves not yet eligible, one by deadline for eligible ones, each
//! leaf moving from the first to the second once per real-time service) and
//! O(depth · log k) for link-sharing (three indexed heaps per interior class over its `k`
//! children: fitting children by virtual time, children held back by fit time, and
//! active children by largest virtual time, for `v_max`, consulted only when the cached
//! `v_max` is lost and re-keyed only then), and O(depth) curve lookups. Moves between
//! the two real-time heaps, from "held back" to "fitting" and the deferred `v_max`
//! updates are paid once per change of an eligible time, a fit time or a virtual time,
//! so these bounds are amortised per packet. The leaves' queues share one pool of packet
//! slots ([`SlotPool`]). No allocation after construction except when more packets
//! are queued at once than ever before. Measured costs: `BENCHMARKS.md`
//! (`benches/hfsc_fig13.rs`, the H-FSC paper's Fig. 13 workloads).
//!
//! What the packet path is built around (the Fig. 13 workloads, where almost every
//! packet finds its leaf idle, activates it and 1.5 ancestors on average, and empties
//! it again): in a tree without upper limits, activation and service each walk the
//! leaf's path once, looking each class's record and its parent's set up once per level
//! and updating, re-placing or removing the class as they go; the cached `v_max` spares
//! almost every activation the `v_max` heap, and a parent with few active children
//! keeps neither that heap nor its stale list; the leaf's two records, which a packet
//! reads first and which are rarely cached with thousands of classes, are one cache line
//! each (the curves' slopes and shapes are kept once per distinct curve, module
//! `anchored`) and are loaded at the start of an enqueue so that their cache misses
//! overlap; the real-time record also holds the ends of the leaf's queue and its
//! position in the real-time heaps (module `leaf_heap`), so that a packet reads no
//! per-leaf array besides the two records; the heaps compare entries without
//! data-dependent branches and skip the sift when inserting into an empty heap;
//! selection descends from a chosen position by an addition when siblings are numbered
//! consecutively, rather than by a load that waits for it.
//!
//! # Verification
//!
//! `tests/hfsc.rs` traces small cases by hand (deadlines of a concave curve,
//! non-punishment against SCED, upper limits and `poll_at`, `vs_p`, defaults) and checks
//! [`Hfsc::check_invariants`] after every operation of random runs; `tests/hfsc_props.rs`
//! checks Thms. 1–3 and the HMM-fair long-run rates on random admissible hierarchies.

mod anchored;
mod config;
mod leaf_heap;
mod linkshare;
mod realtime;

pub use config::{Curves, HfscParams, VtRestart, resolve as resolve_curves};

use super::{BuildError, Dequeued, Dropped, Enqueue, Packet, PollAt, Scheduler};
use crate::ds::SlotPool;
use crate::hierarchy::{ClassId, ClassTree};
use crate::units::{Bytes, Instant};
use linkshare::LinkSharing;
use realtime::RealTime;

/// The H-FSC scheduler. See the [module docs](self).
#[derive(Debug)]
pub struct Hfsc<P> {
    curves: Vec<Curves>,
    rt: RealTime,
    ls: LinkSharing,
    /// The packets of every leaf's FIFO, whose ends are in the leaf's real-time record
    /// (read first on every packet).
    pool: SlotPool<P>,
    /// The latest instant seen (for `remove_newest`, which is not given one).
    last_now: u64,
    work_conserving: bool,
}

/// Checks that H-FSC can be built for `tree` (see [`Hfsc::new`]).
pub fn validate(tree: &ClassTree) -> Result<(), BuildError> {
    config::resolve(tree).map(drop)
}

impl<P: Packet> Hfsc<P> {
    /// H-FSC for `tree` with the paper's settings. Fails if a class with children has an
    /// `rt` curve; the message names every such class and says how to fix it.
    pub fn new(tree: &ClassTree) -> Result<Hfsc<P>, BuildError> {
        Hfsc::with_params(tree, HfscParams::default())
    }

    /// H-FSC for `tree` with `params`; fails as [`Hfsc::new`].
    pub fn with_params(tree: &ClassTree, params: HfscParams) -> Result<Hfsc<P>, BuildError> {
        let curves = config::resolve(tree)?;
        let rt = RealTime::new(curves.iter().map(|c| c.rt));
        let ls = LinkSharing::new(tree, &curves, params.restart);
        let rt_only_leaf = tree.leaves().iter().any(|l| curves[l.index()].ls.is_none());
        let work_conserving = !rt_only_leaf && !ls.any_limit();
        Ok(Hfsc {
            curves,
            rt,
            ls,
            pool: SlotPool::new(),
            last_now: 0,
            work_conserving,
        })
    }

    /// The curves used for `class`, defaults applied, or `None` if it is not a class of
    /// the tree.
    pub fn curves(&self, class: ClassId) -> Option<&Curves> {
        self.curves.get(class.index())
    }

    /// The deadline `d_i` of the head packet of `leaf` (the instant by which its last
    /// bit is due, Eq. 7), if the leaf has an `rt` curve and is backlogged. It does not
    /// change while the packet stays at the head.
    pub fn deadline(&self, leaf: ClassId) -> Option<Instant> {
        self.rt.times(leaf.index()).map(|(_, d)| Instant(d))
    }

    /// The eligible time `e_i` of `leaf` (Eq. 11), if it has an `rt` curve and is
    /// backlogged.
    pub fn eligible_time(&self, leaf: ClassId) -> Option<Instant> {
        self.rt.times(leaf.index()).map(|(e, _)| Instant(e))
    }

    /// The virtual time `v_i` of `class` (ns of its parent's virtual time, Eq. 12) while
    /// it is active for link-sharing.
    pub fn virtual_time(&self, class: ClassId) -> Option<u64> {
        self.ls.virtual_time(class.index())
    }

    /// `w_i`: bytes served to `class` (its leaves, for an interior class) by both
    /// criteria (Linux's `work`).
    pub fn work(&self, class: ClassId) -> Bytes {
        Bytes(self.ls.total(class.index()))
    }

    /// `c_i`: bytes served to `leaf` by the real-time criterion (Linux's `rtwork`).
    pub fn rt_work(&self, leaf: ClassId) -> Bytes {
        Bytes(self.rt.cumul(leaf.index()))
    }

    /// Checks the internal invariants (for tests; O(n)): both criteria's ordered sets
    /// hold exactly the backlogged classes with the keys their curves give, every
    /// class's `w` is the sum of its children's, and the fitting sets hold only classes
    /// that fit at the latest instant seen.
    pub fn check_invariants(&self) -> Result<(), String> {
        self.pool.check_all(self.rt.queues())?;
        let backlogged = |c: usize| !self.rt.queue(c).is_empty();
        let head = |c: usize| self.front_len(c).unwrap_or(0);
        self.rt.check(backlogged, head)?;
        self.ls.check(backlogged, self.last_now)?;
        Ok(())
    }

    /// The length of the head packet of class `c`'s queue, if it holds one.
    #[inline]
    fn front_len(&self, c: usize) -> Option<u64> {
        let head = self.pool.front(self.rt.queue(c))?;
        Some(u64::from(head.wire_len()))
    }
}

/// The earlier of two answers of `poll_at`.
fn earlier(a: PollAt, b: PollAt) -> PollAt {
    match (a, b) {
        (PollAt::Now, _) | (_, PollAt::Now) => PollAt::Now,
        (PollAt::At(x), PollAt::At(y)) => PollAt::At(x.min(y)),
        (PollAt::At(t), PollAt::Idle) | (PollAt::Idle, PollAt::At(t)) => PollAt::At(t),
        (PollAt::Idle, PollAt::Idle) => PollAt::Idle,
    }
}

impl<P: Packet> Scheduler<P> for Hfsc<P> {
    fn name(&self) -> &'static str {
        "hfsc"
    }

    fn is_work_conserving(&self) -> bool {
        self.work_conserving
    }

    fn enqueue(
        &mut self,
        now: Instant,
        class: ClassId,
        pkt: P,
        _evicted: &mut Vec<Dropped<P>>,
    ) -> Enqueue<P> {
        let c = class.index();
        // With thousands of classes the leaf's real-time and link-sharing records are
        // rarely cached, and each criterion's work stalls on its own miss: loading the
        // link-sharing record now, while the queue is read from the real-time one,
        // overlaps the two misses (BENCHMARKS.md).
        self.ls.touch(c);
        self.last_now = now.0;
        let len = u64::from(pkt.wire_len());
        let queue = self.rt.queue_mut(c).expect("enqueue: a class of the tree");
        if self.pool.push_back(queue, pkt) {
            if self.rt.has_curve(c) {
                self.rt.activate(c, now.0, len);
            }
            if self.ls.has(c) {
                self.ls.activate(c, now.0);
            }
        }
        Enqueue::Queued
    }

    fn dequeue(&mut self, now: Instant) -> Option<Dequeued<P>> {
        self.last_now = now.0;
        if self.pool.queued() == 0 {
            return None;
        }
        let (c, realtime) = match self.rt.select(now.0) {
            Some(c) => (c, true),
            None => (self.ls.select(now.0)?, false),
        };
        let queue = self.rt.queue_mut(c).expect("a selected leaf is a class");
        let pkt = self
            .pool
            .pop_front(queue)
            .expect("a selected leaf is backlogged");
        let len = u64::from(pkt.wire_len());
        let next = self.front_len(c);
        if self.rt.has_curve(c) {
            if realtime {
                self.rt.served_by_rt(c, len, now.0, next);
            } else {
                self.rt.served_by_ls(c, next);
            }
        }
        self.ls.served(c, len, now.0, next.is_none());
        Some(Dequeued {
            pkt,
            class: ClassId(c as u32),
        })
    }

    fn poll_at(&self, now: Instant) -> PollAt {
        if self.pool.queued() == 0 {
            return PollAt::Idle;
        }
        earlier(self.rt.poll_at(now.0), self.ls.poll_at(now.0))
    }

    fn resets_classes(&self) -> bool {
        true
    }

    /// Puts the leaf's deadline, virtual and upper-limit curves back at infinity, as
    /// before its first activation: its next activation anchors each curve itself at
    /// that point (Eq. 7, Eq. 12: "initialised to `S_i`"). Its service counters `c_i` and
    /// `w_i` stay (and so do its ancestors'): curves are anchored at them, so only
    /// differences count.
    fn reset_class(&mut self, now: Instant, class: ClassId) {
        let c = class.index();
        debug_assert!(
            self.rt.queue(c).is_empty(),
            "reset_class: the class holds packets"
        );
        self.last_now = now.0;
        self.rt.reset(c);
        self.ls.reset(c);
    }

    fn remove_behind_head(&mut self, class: ClassId) -> Option<P> {
        // The head stays, so its deadline and every virtual time stay as they are.
        let queue = self.rt.queue_mut(class.index())?;
        self.pool
            .remove_second(queue)
            .or_else(|| self.remove_newest(class))
    }

    fn remove_newest(&mut self, class: ClassId) -> Option<P> {
        let c = class.index();
        let queue = self.rt.queue_mut(c)?;
        let pkt = self.pool.pop_back(queue)?;
        if self.rt.queue(c).is_empty() {
            if self.rt.has_curve(c) {
                self.rt.remove(c);
            }
            self.ls.deactivate(c, self.last_now);
        }
        Some(pkt)
    }
}
