//! HTB: the Hierarchical Token Bucket of Linux (`net/sched/sch_htb.c`, "feed tree
//! version"), reproduced decision for decision on integer time.
//!
//! HTB is the baseline of the HLS paper (§VIII, appendix): a shaper (every class has a
//! ceiling) and a link-sharing scheduler (every class has an assured rate and may borrow
//! unused rate from its ancestors).
//!
//! # Classes and buckets
//!
//! Every class has two token buckets (module `bucket` has the arithmetic): the
//! *assured* bucket fills at `rate` up to `burst`, the *ceiling* bucket at `ceil` up to
//! `cburst`. As in Linux, tokens are kept in nanoseconds of transmission time at the
//! bucket's rate, checkpointed at the class's last update `t_c`; a class accrues
//! `diff = min(now − t_c, mbuffer)` (`mbuffer` = 60 s) of credit, and a debt never
//! reaches `mbuffer`. The buckets give the class's [`Mode`] (Linux `htb_class_mode`, with
//! the kernel's default of **no hysteresis**):
//!
//! * red ([`Mode::CantSend`]) if `ctokens + diff < 0`;
//! * else green ([`Mode::CanSend`]) if `tokens + diff >= 0`;
//! * else yellow ([`Mode::MayBorrow`]).
//!
//! The link, the root of the [`ClassTree`], plays the part of the single top class
//! (`classid 1:1`, `rate` = `ceil` = link rate) that HTB configurations put under the
//! qdisc so that their children can borrow from one another; see *Deviations*.
//!
//! # Levels
//!
//! As in Linux, leaves are at level 0 and interior classes are numbered *top-down*: the
//! link (the top class) is at level 7 (`TC_HTB_MAXDEPTH − 1`), its interior children at
//! 6, theirs at 5, and so on, whatever the height of their subtrees. (The HLS paper's
//! appendix describes a bottom-up numbering, `level = 1 + max level of the children`;
//! the two differ when leaves sit at different depths.) So at most 8 levels of classes
//! fit, the link included: a deeper tree is refused with a [`BuildError`].
//!
//! # Which packet goes next (`dequeue`)
//!
//! A green class is linked into the *row* of its level and of each priority at which it
//! has a backlogged leaf to serve; a yellow class is linked into its parent's *feed* of
//! those priorities instead, so a yellow class reaches the row of its nearest non-yellow
//! ancestor, if that one is green; a red class is linked nowhere (see module
//! `levels`). Then, at `now`, for each level from 0 up, and each priority from 0
//! (highest) to 7:
//!
//! 1. apply the mode changes of that level that are due by `now` (Linux's wait queue and
//!    `htb_do_events`);
//! 2. if the row `(level, prio)` is not empty, pick the leaf whose turn it is: from the
//!    row's round-robin position down through the feeds' positions (Linux
//!    `htb_lookup_leaf`; rows and feeds are ordered by class id);
//! 3. send its head packet. Deficit round robin, Linux style: the leaf's deficit *for
//!    this level* drops by the packet's length; if it goes negative, it gains the
//!    leaf's quantum and the turn passes to the next member (of row 0, or of the leaf's
//!    parent's feed when borrowing). A leaf at the round-robin position always sends at
//!    least one packet;
//! 4. charge the leaf and every ancestor (Linux `htb_charge_class`): every class pays
//!    ctokens; only the classes at or above the level the packet was found at — the
//!    lender and its ancestors — pay tokens; the borrowers below only move their
//!    checkpoint. A class whose mode changed is re-linked and, unless green, put in the
//!    wait queue of its level at the instant its mode will change.
//!
//! Lower levels are thus served first: a class sends within its own rate before anyone
//! borrows, and borrowing from a closer ancestor comes before borrowing from a farther
//! one. A green leaf sends even if an ancestor is red: an ancestor's ceil binds only
//! what is borrowed through it. Among leaves borrowing from the same row, the excess is
//! shared in proportion to the **leaves' quanta** (`rate / r2q`), whatever the rates of
//! the interior classes they borrow through: the behaviour the HLS paper observes in
//! §VIII-C. That proportion is exact when each feed is walked from one level only. A
//! feed has one round-robin position, though, shared by every level whose lookups pass
//! through it (those of its owner lending, and those of its owner's ancestors lending
//! through it); a lookup at one level may rewind the feed without passing the turn at
//! the other, so the split then also depends on how the bucket timings interleave
//! (`tests/htb.rs` shows both cases). Leaves keep their deficits while idle, as in
//! Linux, so the same competition resumed after a pause can interleave differently:
//! with exact timing and equal packets each run of it locks into its own periodic
//! pattern of turns. In the HLS paper's Experiment 3 (`linkshare repro hls-exp3`) the
//! five ON periods give A between 425 and 467 Mbit/s (`NOTES.md` records what makes
//! them equal).
//!
//! # When (`poll_at`)
//!
//! HTB is not work-conserving: when every backlogged leaf is cut off by a red class, or
//! yellow with no green ancestor before a red one, `dequeue` returns `None` and
//! [`Scheduler::poll_at`] returns the exact instant at which a packet can next be sent
//! (kept incrementally, see module `ready`), not merely the next mode change.
//!
//! # Parameters
//!
//! From each [`ClassSpec`](crate::hierarchy::ClassSpec):
//!
//! | field | unit | default |
//! |---|---|---|
//! | `rate` | bit/s | what the parent's rate leaves after the siblings' given rates, split by `weight` among the siblings without a rate (Linux requires a rate) |
//! | `ceil` | bit/s | `rate` if `rate` was given (tc); the parent's `ceil` if neither was |
//! | `burst` | bytes | `rate / hz + mtu` with rate in bytes/s (tc's formula; [`HtbParams`]) |
//! | `cburst` | bytes | `ceil / hz + mtu` |
//! | `quantum` | bytes | leaves: `rate / r2q` (rate in bytes/s), clamped to [1000, 200000] with a [`QuantumClamp`] warning, as Linux; a given quantum is used as is |
//! | `priority` | 0..=7 | 0; only leaves' priorities matter, as in Linux |
//!
//! and qdisc-wide [`HtbParams`]: `r2q` = 10, `hz` = 1000, `mtu` = 1600 B. With `hz`
//! = 1000 a default burst is one millisecond of the rate plus 1600 B (e.g. 2850 B at
//! 10 Mbit/s). tc takes `hz` from `/proc/net/psched`, which says 10⁹ on any kernel with
//! high-resolution timers; set `hz` to 10⁹ to get the bursts of a modern tc (about
//! 1600 B at any rate below 1.6 Gbit/s). `weight`, `limit` and `max_packet` are not
//! HTB's: buffer limits and maximum sizes are the [`Qdisc`](crate::Qdisc)'s.
//!
//! # Deviations from Linux
//!
//! * **The link is the top class and is never out of tokens.** It lends to its children
//!   like a `1:1` class with `rate` = `ceil` = link rate, but is never charged. Under an
//!   [`EgressPort`](crate::port::EgressPort) at the link rate such a Linux class never
//!   leaves green anyway (each packet's transmission time refills what it costs); a
//!   slower shaped aggregate is a class below the link with that `ceil`.
//! * **No direct queue, no default class, no filters**: the classifier always names a
//!   leaf; the [`crate::Qdisc`] drops a packet for an interior class ([`crate::DropReason::NotALeaf`]).
//! * **Exact integer time**: token costs are `rate.tx_time(len)` in nanoseconds, rounded
//!   up, where Linux uses a multiply-and-shift approximation and stores bucket depths in
//!   64 ns ticks. No rate tables, `overhead`, `mpu` or link-layer options (per-packet
//!   overhead belongs to the port).
//! * **Events**: all mode changes due by `now` are applied, where Linux stops after two
//!   jiffies ("too many events"). Changes of one level due at the same nanosecond are
//!   applied in class-id order (Linux: in the order they were scheduled); the modes
//!   reached are the same either way, and the order matters only in the rare case where
//!   one change empties a feed that another refills, which can move a row's round-robin
//!   position.
//! * **`poll_at`** is exact (above); Linux's watchdog wakes at every mode change. The
//!   packets and instants of transmission are the same.
//! * **Buckets start full at [`Instant::ZERO`]** (Linux: when the class is created).
//! * **Leaf queues are FIFOs** (Linux's default `pfifo`); limits are the qdisc's.
//! * [`Scheduler::remove_newest`] (for push-out buffer policies, which Linux lacks)
//!   unlinks a leaf it empties, as a dequeue would.
//!
//! # Complexity
//!
//! With `n` classes and depth `d <= 8`: enqueue and `remove_newest` cost O(d log n);
//! dequeue costs O(d log n) plus O(log n) per mode change applied (rows and feeds are
//! hierarchical bitmaps, [`crate::ds::IdSet`]; the readiness minima are
//! [`IndexedHeap`](crate::ds::IndexedHeap)s). Each level's wait queue is a calendar
//! (module `wait`) whose slots are sized from the link's and the level's rates, with a
//! heap for what it does not cover: entering, leaving and coming due cost O(1) when
//! the calendar covers a class's delay, O(log n) otherwise. Leaves without backlog
//! are kept out of it (their mode is worked out when they are backlogged again). The
//! readiness behind `poll_at` is recomputed only when no row
//! holds a class (module `ready`): then O(d log n) per leaf charged or changed since
//! the last recomputation, and nothing while HTB keeps sending. Token costs are exact
//! multiplications by a precomputed reciprocal ([`crate::units::TxTime`]). What a
//! packet reads of a class (its place in the tree, mode and activity, wait-queue node,
//! buckets, level-0 deficit and quantum) is one 128-byte record (module `class`), in
//! two cache lines, of which a mode change reads the first only. Nothing allocates
//! after construction except the leaves' queues growing to their peak length.

mod bucket;
mod class;
mod config;
mod levels;
mod ready;
mod topology;
mod wait;
mod warnings;

pub use bucket::Mode;
pub use config::{
    ClassParams, HtbParams, MAX_DEPTH, MAX_QUANTUM, MIN_QUANTUM, PRIORITIES, QuantumClamp,
    default_burst, derived_quantum, resolve,
};
pub use warnings::warnings;

use super::len_of;
use super::{BuildError, Dequeued, Dropped, Enqueue, Packet, PollAt, Scheduler};
use crate::ds::{ClassQueues, DequeQueues};
use crate::hierarchy::{ClassId, ClassTree};
use crate::units::{Bytes, Duration, Instant};
use bucket::Bucket;
use class::Class;
use levels::Levels;
use ready::Readiness;
use topology::{ROOT, Topology};
use wait::{Node, WaitQueue};

/// HTB over a class tree. See the [module docs](self).
#[derive(Debug)]
pub struct Htb<P> {
    params: HtbParams,
    class_params: Vec<ClassParams>,
    clamps: Vec<QuantumClamp>,
    /// Each leaf's FIFO (empty for other classes).
    queues: DequeQueues<P>,
    /// Each leaf's DRR deficit when borrowing, per level it is served at above 0, bytes
    /// (Linux `deficit[level]`): `deficit[level - 1][leaf]`. Level 0's is in the leaf's
    /// record.
    deficit: [Vec<i64>; MAX_DEPTH - 1],
    /// Rows and feeds, and the class records (buckets, places, level 0's deficits).
    levels: Levels,
    /// Per level, the classes not green, keyed by the instant (ns) their mode changes;
    /// items are class ids, nodes in the class records. Leaves without backlog are left
    /// out (see [`Htb::idle_leaf_mode`]).
    wait: [WaitQueue; MAX_DEPTH],
    /// The `now` of the last application of level 0's mode changes (every `dequeue`
    /// with a backlog applies them).
    leaf_events_at: Instant,
    ready: Readiness,
}

/// The wait-queue key of a mode change `delay` ns after `now` (Linux `pq_key`).
#[inline]
fn at_delay(now: Instant, delay: i64) -> u64 {
    now.saturating_add(Duration(delay.unsigned_abs())).0
}

/// Checks that HTB can be built for `tree` with `params` (see [`Htb::with_params`]).
pub fn validate(tree: &ClassTree, params: &HtbParams) -> Result<(), BuildError> {
    config::resolve(tree, params).map(drop)
}

impl<P> Htb<P> {
    /// HTB for `tree` with tc's defaults ([`HtbParams::default`]).
    pub fn new(tree: &ClassTree) -> Result<Htb<P>, BuildError> {
        Htb::with_params(tree, HtbParams::default())
    }

    /// HTB for `tree` with the given qdisc-wide parameters. Fails if the tree is deeper
    /// than [`MAX_DEPTH`] levels (the link included) or a class without a rate would get
    /// none.
    pub fn with_params(tree: &ClassTree, params: HtbParams) -> Result<Htb<P>, BuildError> {
        let (class_params, clamps) = config::resolve(tree, &params)?;
        let (topo, places) = Topology::new(tree, &class_params);
        let records = class_params
            .iter()
            .zip(places)
            .map(|(c, place)| Class {
                place,
                wait: Node::ABSENT,
                bucket: Bucket::new(c.rate, c.ceil, c.burst, c.cburst),
                deficit: 0,
                quantum: c.quantum.map_or(0, |q| q.0 as i64),
            })
            .collect();
        Ok(Htb {
            params,
            queues: DequeQueues::new(tree.len()),
            deficit: core::array::from_fn(|_| vec![0; tree.len()]),
            wait: core::array::from_fn(|level| {
                let rates: Vec<_> = topo.by_level[level]
                    .iter()
                    .map(|&c| class_params[c as usize].rate)
                    .collect();
                WaitQueue::for_level(&rates, tree.link_rate(), params.mtu)
            }),
            leaf_events_at: Instant::ZERO,
            ready: Readiness::new(&topo),
            levels: Levels::new(topo, records),
            class_params,
            clamps,
        })
    }

    /// The qdisc-wide parameters.
    pub fn params(&self) -> HtbParams {
        self.params
    }

    /// The parameters used for `class`, defaults resolved, or `None` if it is not a
    /// class of the tree.
    pub fn class_params(&self, class: ClassId) -> Option<&ClassParams> {
        self.class_params.get(class.index())
    }

    /// The mode of `class` as of its last update (Linux `cmode`: updated when the class
    /// is charged and when a scheduled mode change is applied by `dequeue`), or `None`
    /// if it is not a class of the tree. The link is always [`Mode::CanSend`].
    pub fn mode_of(&self, class: ClassId) -> Option<Mode> {
        if class.index() >= self.class_params.len() {
            None
        } else if self.is_leaf(class) && self.queues.is_empty(class.index()) {
            Some(self.idle_leaf_mode(class.0).0)
        } else {
            Some(self.levels.mode(class.0))
        }
    }

    /// The quanta derived from `rate / r2q` that were clamped, in class order (tc warns
    /// about each).
    pub fn quantum_clamps(&self) -> &[QuantumClamp] {
        &self.clamps
    }

    #[inline]
    fn is_leaf(&self, class: ClassId) -> bool {
        self.class_params
            .get(class.index())
            .is_some_and(|c| c.quantum.is_some())
    }

    /// The mode of `leaf`, which holds no packet, as Linux's `cmode` would have it, and
    /// unless green the instant at which that changes: the mode at the last application
    /// of level 0's mode changes, or at the leaf's last charge if that came later.
    ///
    /// A leaf without backlog is linked nowhere, so its mode changes move nothing and
    /// need not be applied when due: it stays out of the wait queue, and its mode is
    /// worked out here when it is backlogged again (or asked for by
    /// [`Htb::mode_of`]). The result is the mode the applied changes would have given:
    /// a mode changes only at the instants the wait queue would hold, and each
    /// application sets the mode at its own `now`.
    #[inline]
    fn idle_leaf_mode(&self, leaf: u32) -> (Mode, Instant) {
        self.levels.class(leaf).bucket.mode_at(self.leaf_events_at)
    }

    /// Leaf `leaf` has no packet left: it leaves its row or feed and the wait queue.
    #[inline]
    fn idle_leaf(&mut self, leaf: u32) {
        self.levels.deactivate_leaf(leaf);
        if self.levels.mode(leaf) != Mode::CanSend {
            self.wait[0].remove(&mut self.levels.wait_nodes(), leaf);
        }
    }

    /// Leaf `leaf` has just been given a packet, its first: it takes the mode its
    /// buckets give it, waits for its next mode change unless green, and is linked in
    /// (Linux `htb_activate`). Out of line, so that an arrival to a backlogged leaf is
    /// a short function.
    #[inline(never)]
    fn backlogged(&mut self, leaf: u32) {
        let (mode, change) = self.idle_leaf_mode(leaf);
        self.levels.set_idle_mode(leaf, mode);
        if mode != Mode::CanSend {
            self.wait[0].set(&mut self.levels.wait_nodes(), leaf, change.0);
        }
        self.levels.activate_leaf(leaf);
        self.ready.mark(leaf);
        self.settle();
    }

    /// Brings the readiness up to date if `poll_at` will need it: when no row holds a
    /// class (see module `ready`). Called at the end of every call that changes backlog
    /// or buckets.
    #[inline]
    fn settle(&mut self) {
        if !self.levels.any_row() {
            let queues = &self.queues;
            self.ready
                .flush(self.levels.classes(), |l| !queues.is_empty(l as usize));
        }
    }

    /// Applies the mode changes of `level` due by `now` (Linux `htb_do_events`).
    fn apply_events(&mut self, level: usize, now: Instant) {
        while let Some((c, _)) = self.wait[level].first_due(&mut self.levels.wait_nodes(), now.0) {
            let b = &self.levels.class(c).bucket;
            let (mode, delay) = b.mode(b.credit(now));
            if level == 0 {
                self.levels.set_leaf_mode(c, mode);
            } else {
                self.levels.set_mode(c, mode);
            }
            // Re-keyed in place when the class still waits: one sift instead of a
            // removal and an insertion (the heap's order does not depend on its layout).
            let nodes = &mut self.levels.wait_nodes();
            if mode == Mode::CanSend {
                self.wait[level].remove_first(nodes);
            } else {
                self.wait[level].set(nodes, c, at_delay(now, delay));
            }
        }
    }

    /// Charges `len` bytes sent by `leaf`, found at `level`, to the ancestors of the
    /// leaf below the link (the rest of Linux `htb_charge_class`, after the leaf's own
    /// charge in [`Htb::serve`]).
    fn charge_ancestors(&mut self, leaf: u32, level: u8, len: Bytes, now: Instant) {
        let mut c = self.levels.place(leaf).parent;
        while c != ROOT {
            let class_level = self.levels.place(c).level;
            (self.levels.class_mut(c).bucket).charge(now, len, class_level >= level);
            self.update_mode(c, class_level, now);
            c = self.levels.place(c).parent;
        }
    }

    /// Sets the mode of class `c` (of `level`), just charged at `now`, from its buckets,
    /// relinking it and moving its wait-queue entry if the mode changed.
    #[inline(always)]
    fn update_mode(&mut self, c: u32, level: u8, now: Instant) {
        let (mode, delay) = self.levels.class(c).bucket.mode(0);
        let old = self.levels.mode(c);
        if mode != old {
            if level == 0 {
                self.levels.set_leaf_mode(c, mode);
            } else {
                self.levels.set_mode(c, mode);
            }
            let wait = &mut self.wait[usize::from(level)];
            let nodes = &mut self.levels.wait_nodes();
            if old != Mode::CanSend {
                wait.remove(nodes, c);
            }
            if mode != Mode::CanSend {
                wait.set(nodes, c, at_delay(now, delay));
            }
        }
    }

    /// Sends the head packet of the leaf whose turn it is in row `(level, prio)`
    /// (Linux `htb_dequeue_tree`).
    fn serve(&mut self, level: u8, prio: u32, now: Instant) -> Dequeued<P>
    where
        P: Packet,
    {
        let leaf = self.levels.lookup(level, prio);
        let pkt = self
            .queues
            .pop_front(leaf as usize)
            .expect("a leaf linked into a row or feed is backlogged");
        let len = len_of(&pkt);
        let record = self.levels.class_mut(leaf);
        let quantum = record.quantum;
        let deficit = if level == 0 {
            &mut record.deficit
        } else {
            &mut self.deficit[usize::from(level) - 1][leaf as usize]
        };
        *deficit -= len.0 as i64;
        if *deficit < 0 {
            *deficit += quantum;
            self.levels.pass_turn(leaf, level, prio);
        }
        // The leaf's own charge (Linux `htb_charge_class`, first step); a leaf left
        // without backlog keeps its mode unapplied (see [`Htb::idle_leaf_mode`]).
        (self.levels.class_mut(leaf).bucket).charge(now, len, level == 0);
        if self.queues.is_empty(leaf as usize) {
            self.idle_leaf(leaf);
        } else {
            self.update_mode(leaf, 0, now);
        }
        self.charge_ancestors(leaf, level, len, now);
        self.ready.mark(leaf);
        Dequeued {
            pkt,
            class: ClassId(leaf),
        }
    }
}

impl<P: Packet> Scheduler<P> for Htb<P> {
    fn name(&self) -> &'static str {
        "htb"
    }

    fn is_work_conserving(&self) -> bool {
        false
    }

    fn enqueue(
        &mut self,
        _now: Instant,
        class: ClassId,
        pkt: P,
        _evicted: &mut Vec<Dropped<P>>,
    ) -> Enqueue<P> {
        debug_assert!(self.is_leaf(class), "the qdisc offers leaves only");
        if self.queues.push_back(class.index(), pkt) {
            self.backlogged(class.0);
        }
        Enqueue::Queued
    }

    fn dequeue(&mut self, now: Instant) -> Option<Dequeued<P>> {
        if self.queues.queued() == 0 {
            return None;
        }
        self.leaf_events_at = now;
        for level in 0..MAX_DEPTH {
            self.apply_events(level, now);
            let mask = self.levels.row_mask(level);
            if mask != 0 {
                let d = self.serve(level as u8, mask.trailing_zeros(), now);
                self.settle();
                return Some(d);
            }
        }
        None
    }

    fn poll_at(&self, now: Instant) -> PollAt {
        if self.queues.queued() == 0 {
            return PollAt::Idle;
        }
        if self.levels.any_row() {
            return PollAt::Now;
        }
        let t = self
            .ready
            .earliest()
            .expect("a backlogged leaf can always send eventually");
        if t > now { PollAt::At(t) } else { PollAt::Now }
    }

    fn remove_behind_head(&mut self, class: ClassId) -> Option<P> {
        let second = self.queues.remove_second(class.index());
        second.or_else(|| self.remove_newest(class))
    }

    fn remove_newest(&mut self, class: ClassId) -> Option<P> {
        if !self.is_leaf(class) {
            return None;
        }
        let pkt = self.queues.pop_back(class.index())?;
        if self.queues.is_empty(class.index()) {
            self.idle_leaf(class.0);
            self.ready.mark(class.0);
            self.settle();
        }
        Some(pkt)
    }
}
