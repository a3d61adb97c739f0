//! CBQ: Class-Based Queueing with top-level link sharing (Floyd & Jacobson, "Link-sharing
//! and resource management models for packet networks", ToN 1995), as implemented by
//! Linux `sch_cbq` (removed in Linux 6.3) and described in the appendix of the HLS paper,
//! and, as settings ([`CbqParams`]), with the formal link-sharing guideline of the same
//! paper and with ns-2's top-level cutoff rules, as ns-2's CBQ offers them.
//!
//! # The algorithm
//!
//! CBQ has three parts: an *estimator* per class that says whether the class has been
//! sending below its allotted rate (*underlimit*) or not (*overlimit*), a *regulator*
//! that decides which leaves may send now (*unregulated*), and a weighted round robin
//! over the unregulated leaves.
//!
//! * **Estimator** ([`estimator`] has the formulas). Whenever a packet
//!   leaves, every class from its leaf up to the root updates an exponentially weighted
//!   average of its idle time, `idle = (eos - last) - len/rate` (time between the ends of
//!   service of its consecutive packets, minus the packet's transmission time at the
//!   class's allotted rate), with weight `W = 2^-EWMA_LOG = 1/32`, in Linux's scaled
//!   integer form, capped at `maxidle`. Average `> 0`: underlimit. Average `<= 0`:
//!   overlimit until its *undertime* `start + len/rate + (1 - W)(-avgidle_scaled)`.
//! * **Regulator: top-level link sharing.** A backlogged leaf may send if it is
//!   underlimit (its undertime has passed), or if it can *borrow*: walking up its borrow
//!   chain (parent, grandparent, ...; a *bounded* class ends the chain above itself), the
//!   first underlimit ancestor is the lender, provided every class visited is at a level
//!   `<=` the *top-level cutoff* `toplevel` (leaves are at level 0, every other class one
//!   above its highest child). `toplevel` moves as in Linux:
//!   * on every arrival to leaf `c`, queued or refused by the buffer policy (see
//!     [`Scheduler::arrival_refused`]): if `toplevel > level(c)`, it drops to the level
//!     of the first underlimit class among `c` and its borrow chain that is below
//!     `toplevel` (`cbq_mark_toplevel`);
//!   * at the dequeue that follows a transmission from leaf `c` that borrowed from `b`
//!     (`b = c` if it did not borrow): if `toplevel >= level(b)` and `c` then has more
//!     than one packet queued, it becomes the level of the first class that is
//!     underlimit among `b` and its borrow chain (`cbq_update_toplevel`, which Linux
//!     runs from `cbq_update` at the start of the next `cbq_dequeue`). Arrivals in
//!     between count: a source that refills its queue as its packets leave keeps the
//!     rule alive with as few as two packets queued. This is the only rule that
//!     *raises* the cutoff short of lifting it (when `b` is overlimit after the
//!     transmission, to the level of its first underlimit ancestor);
//!   * when no leaf can send: `toplevel` is lifted (no cutoff), the root is declared
//!     underlimit (its undertime is cleared until its next update), and the selection
//!     is repeated once (`cbq_dequeue`). A leaf whose borrow chain reaches the root can
//!     therefore always send: with no bounded class CBQ is work-conserving.
//! * **Regulator: top-level link sharing with ns-2's rules** ([`CbqSharing::Ns2TopLevel`],
//!   ns-2's `toplevel_arrival` and `toplevel_departure`). The borrowing test is the
//!   same; the cutoff moves differently:
//!   * on every arrival to leaf `c` (queued or refused): if `toplevel > 0`, it becomes
//!     0 when `c` is underlimit, else 1 when `toplevel > 1`, `c` may borrow and its
//!     parent is underlimit. ns-2 numbers leaves 1 and writes "2" for the parent, a
//!     fixed level whatever the parent's: a leaf under the root of a deeper tree (the
//!     HLS paper's C) then cuts the cutoff below the root it would borrow from;
//!   * right after each transmission by leaf `c` lent by `b` (estimators updated), if
//!     `toplevel >= level(b)`: lifted when `c` has at most one packet left or `b` is
//!     overlimit, `level(b)` otherwise;
//!   * when no leaf can send, the cutoff is lifted and the selection repeated, as
//!     above (ns-2 instead lets the first leaf able to borrow send, unaccounted; see
//!     below).
//! * **Regulator: formal link sharing** ([`CbqSharing::Formal`]). A class is
//!   *unsatisfied* when it is underlimit and some backlogged leaf's borrow chain passes
//!   through it (a leaf: it is backlogged itself). A backlogged leaf may send if it is
//!   underlimit, or if the first underlimit class of its borrow chain is at a level `i`
//!   such that no class below level `i` is unsatisfied (Floyd & Jacobson's guideline,
//!   ns-2's `eligible_formal`, with its `desc_with_demand` that follows the borrow
//!   links). There is no cutoff: arrivals and transmissions do not move anything, the
//!   rule is evaluated afresh from the estimators at every visit. When no leaf can send,
//!   the root is declared underlimit and the selection repeated, as above: the lowest
//!   unsatisfied class then always has a backlogged leaf that may send through it, so
//!   without bounded classes CBQ stays work-conserving.
//! * **Overlimit action** (`cbq_overlimit`, the only one left in recent Linux). When a
//!   leaf is overlimit and its borrow chain ends without a lender, its undertime is
//!   reduced once by `(1 - W)(-avgidle_scaled)` (the "forgiveness": it becomes
//!   `start + len/rate` of its last packet), and the leaf is marked *delayed* so that this
//!   happens once per episode; the mark is cleared when the leaf is next found able to
//!   send. A bounded leaf that stays busy therefore sends one packet per `len/rate`: its
//!   allotted rate.
//! * **Weighted round robin** (`cbq_dequeue_prio`). Each priority band (0 highest .. 7)
//!   has a ring of its backlogged leaves; bands are served in strict order (the first
//!   band with a leaf that may send wins). Within a band, starting at the ring's head,
//!   each leaf is visited in turn; one that may not send is skipped and keeps its place;
//!   one whose deficit is `<= 0` gets its quantum added and is passed over; the first
//!   that may send and has a positive deficit sends its head packet (the deficit may go
//!   negative). If its deficit is then `<= 0` the turn passes to the next leaf, which
//!   receives its quantum at once; otherwise it keeps the turn. A full visit that only
//!   added quanta is repeated.
//! * **Non-work-conserving** when bounded classes hold every backlog: `dequeue` returns
//!   nothing and [`Scheduler::poll_at`] returns `At(t)`, `t` the earliest instant at
//!   which some backlogged leaf, or a class of its borrow chain, becomes underlimit
//!   (the instant Linux's watchdog would fire).
//!
//! # Parameters
//!
//! | CBQ parameter | from [`ClassSpec`](crate::hierarchy::ClassSpec) | default |
//! |---|---|---|
//! | allotted rate (bit/s) | `rate` | the parent's rate minus its children's explicit rates, split by `weight` among the children without a rate (at least 1 bit/s); the root's is the link rate |
//! | `bounded` (may not borrow) | `ceil` given and `<=` the allotted rate | borrowing allowed |
//! | `isolated` (does not lend) | not expressible | sharing: every class charges its ancestors' estimators, up to the root (what `tc` sets whenever link-sharing options are given) |
//! | priority band | `priority` (0..=7) | 0 |
//! | `avpkt` and WRR `allot` (bytes) | `max_packet` | 1500 B |
//! | `maxburst` (packets) | `burst` / `avpkt`, rounded up | 0 |
//! | `maxidle` (scaled ns) | `max(avpkt/link, (avpkt/rate - avpkt/link)(g^-maxburst - 1) / W)`, `g = 1 - W` (`tc_cbq_calc_maxidle`; `bandwidth` = link rate) | with `maxburst` 0: one `avpkt` at line rate, which is also what Linux gives a class configured without `maxburst` (it copies the root's) |
//! | WRR quantum (bytes) | `quantum` | `allot * rate * n / sum of rates` over the `n` leaves of the band (Linux `cbq_normalize_quanta` with `weight = rate`, `tc`'s default); at least 1 |
//! | `ewma_log` | fixed | [`EWMA_LOG`] = 5 (`W = 1/32`, Linux's default) |
//! | `minidle` | fixed | none: the average is not bounded below (Linux's default bound, `-0x7FFFFFFF` scaled ticks, only binds classes allotted a few bit/s) |
//! | `offtime` (`minburst`) | fixed | 0 (Linux's default); `cburst` is not used, see the deviations |
//!
//! `ceil` above the allotted rate leaves borrowing allowed but is not enforced: CBQ has
//! no upper rate limit other than `bounded`. `weight` only shapes default rates; the WRR
//! weight is the allotted rate. Interior classes' `priority` and `quantum` are unused.
//!
//! # Time
//!
//! The scheduler does not see the link; it estimates when each packet's service ends
//! (*eos*) from the link rate of the tree: a packet dequeued at `now` starts at
//! `start = max(now, previous eos)` and ends at `eos = start + len/link`, as on a FIFO
//! device sending at line rate. When the driver dequeues whenever the link becomes free
//! (as [`crate::port::EgressPort`] does), `start = now` and this is Linux's estimate.
//!
//! # Deviations from Linux
//!
//! * Time is in nanoseconds, arithmetic is exact integer arithmetic (no rate tables, no
//!   64 ns ticks).
//! * The estimators are updated right after each dequeue; Linux updates them at the
//!   start of the next one. The values are the same; only arrivals in between see the
//!   newer state (in the cutoff's arrival rule). The cutoff rule that follows a
//!   transmission, though, is applied at the next dequeue, as in Linux, because the
//!   queue it counts matters: evaluated right after the dequeue, it would never fire
//!   for a source that keeps two packets queued and refills as they leave, and the
//!   cutoff would then only ever drop to 0 or be lifted (with every leaf of the HLS
//!   paper's Fig. 1 hierarchy greedy in that way, A1 got 77 instead of its 100 Mbit/s).
//! * Linux's guard that resets the average to `maxidle` after more than 2^27 ticks of
//!   idleness (which also fires when the estimated end of service goes backwards) is
//!   replaced by the end-of-service clock above, which never goes backwards; a long
//!   idle period reaches `maxidle` by the cap anyway.
//! * The overlimit action makes the leaf's undertime `start + len/rate`; if that has
//!   passed, the leaf may send in the same dequeue. Linux makes it wait at least one tick
//!   and re-arms the watchdog. Keeping the action independent of *when* a dequeue visits
//!   the leaf is what lets [`Scheduler::poll_at`] predict `dequeue` exactly.
//! * `offtime`/`minburst` are not supported: Linux adds `offtime` to the undertime of a
//!   blocked leaf at the instant a dequeue happens to find it blocked, and only if that
//!   is before its undertime, so the release time would depend on how often the driver
//!   polls, which the `poll_at` contract forbids.
//! * A leaf whose queue empties leaves its band's ring at once (Linux unlinks it lazily
//!   at its next visit); a leaf that becomes backlogged joins at the back of the ring, as
//!   in Linux. Deficits are kept across idle periods, as in Linux.
//! * The comparisons of undertimes with `now` are all "reached or passed" (`<=`); Linux's
//!   arrival rule uses a strict `<`.
//! * Quanta are normalised over the leaves of a band; Linux also counts interior classes
//!   (never scheduled), which rescales every quantum of the band by the same factor, and
//!   it replaces quanta above 32 MTU by MTU/2 + 1.
//! * Buffer limits are applied by [`crate::Qdisc`] before the scheduler sees a packet,
//!   not by a queue inside the class as in Linux; an arrival refused there still moves
//!   the cutoff, through [`Scheduler::arrival_refused`], as Linux's `cbq_enqueue` does
//!   for a packet its class's queue drops. This matters: the arrival rule is what keeps
//!   a leaf from borrowing from far up while another backlogged leaf has an underlimit
//!   ancestor lower down, and it acts as often as that other leaf's arrivals come,
//!   refused or not. Sources flooding full queues, as the HLS paper's testbed
//!   generator did, therefore keep the cutoff down; with sources that only refill as
//!   their packets leave, a leaf that borrows from the root keeps doing so for its
//!   whole round-robin turn and the excess is shared by the quanta (in the HLS paper's
//!   Experiment 2, variant M, with A1, B2 and C greedy that way, A1 gets 1/7 of the
//!   link, its quantum's share, instead of A's 3/10; `tests/cbq.rs`).
//! * No `split`/`defmap` classification, no `isolated` classes (see the table), no
//!   packets queued at interior classes.
//!
//! Formal link sharing and ns-2's top-level rules are ns-2's guidelines put into this
//! (Linux's) CBQ: the estimators,
//! the weighted round robin, the overlimit action and the fallback when no leaf may send
//! stay Linux's (ns-2 lets the first class able to borrow send, unaccounted). A leaf
//! whose first underlimit ancestor is barred by the guideline is not given the overlimit
//! action, as under Linux's cutoff. These choices follow from keeping one CBQ and
//! changing only its regulator; the HLS paper's Fig. 8(b) ran ns-2's whole CBQ.
//!
//! ns-2's CBQ differs from Linux in its WRR (allotments refilled from the band's share
//! of the link, and a last pass in which a class may send without allotment), in its
//! top-level rules (available as [`CbqSharing::Ns2TopLevel`]), in its overlimit action,
//! and in letting the first class able to borrow send, unaccounted, when no class may;
//! apart from the guideline, we follow Linux. So `formal` and `top-level-ns2` model the
//! regulators of the HLS paper's ns-2 runs (Fig. 8b, c), not the rest of ns-2's CBQ.
//! §VIII-D of the HLS paper reports that the Linux qdisc settles on different
//! allocations after identical pauses while ns-2 does not; this implementation, like
//! every discipline here, gives the same result for the same sequence of calls.
//!
//! # Complexity
//!
//! Enqueue is O(depth). A dequeue visits leaves of the band ring until one may send;
//! each visit costs O(depth) for the borrow chain, and sending costs O(depth) for the
//! estimators of the leaf's ancestors. With no blocked leaf at the head of the ring this
//! is O(depth); a dequeue that skips `k` blocked leaves of a band of `n` costs
//! O(k * depth + n) (the ring is rotated back to its head when the sender keeps its
//! turn), twice when the cutoff has to be lifted, plus a full revisit per round that
//! only added quanta (at most `L_max / quantum` rounds). `poll_at` is O(1) while a
//! backlogged leaf can borrow from the root, otherwise O(backlogged leaves * depth).
//! [`Scheduler::remove_newest`] is O(1). No operation allocates once every queue has
//! reached its peak length.
//!
//! ns-2's top-level rules cost O(1) per arrival and per transmission.
//!
//! Formal link sharing adds O(depth) per leaf becoming backlogged or empty (the counts
//! of backlogged leaves along its borrow chain), and finding the lowest unsatisfied
//! class is a pass over every class, O(classes), each time a leaf that is overlimit
//! finds an underlimit ancestor: the guideline compares the whole hierarchy, which is
//! why Floyd & Jacobson proposed the top-level approximation.
//!
//! # Verification
//!
//! `tests/cbq.rs` checks the estimator against Linux's fixed-point arithmetic, the
//! cutoff rules, bounded classes and priorities on hand-derived cases, and the HLS
//! paper's Fig. 1 allocations under top-level and formal (derived by hand from each rule),
//! and ns-2's cutoff rules step by step against Linux's on a hand-derived sequence;
//! every guideline passes the conformance harness (`tests/conformance.rs`) and the
//! no-allocation test.

pub mod estimator;
mod params;

use std::collections::VecDeque;

pub use self::estimator::EWMA_LOG;
use self::estimator::Estimator;
use self::params::{BANDS, Params};
use super::{Dequeued, Dropped, Enqueue, Packet, PollAt, Scheduler, len_of};
use crate::ds::{Link, Linked, Ring};
use crate::hierarchy::{ClassId, ClassTree};
use crate::units::{Bytes, Instant, Rate};

/// Which link-sharing guideline decides when a class may borrow (Floyd & Jacobson
/// 1995, §4; the HLS paper's appendix). See the [module docs](self#the-algorithm).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CbqSharing {
    /// Top-level link sharing with Linux's cutoff rules (`top-level`), the only one
    /// Linux implements.
    #[default]
    TopLevel,
    /// Formal link sharing (`formal`), as ns-2's CBQ offers it: a class may borrow from
    /// an underlimit ancestor at level `i` only when no class below level `i` is
    /// unsatisfied.
    Formal,
    /// Top-level link sharing with ns-2's cutoff rules (`top-level-ns2`): an arrival
    /// looks only at its leaf and the leaf's lender, and after each transmission the
    /// cutoff is lifted unless the lender is still underlimit and the leaf still has
    /// more than one packet queued.
    Ns2TopLevel,
}

impl CbqSharing {
    /// Every guideline, in the order they are listed to users.
    pub const ALL: [CbqSharing; 3] = [
        CbqSharing::TopLevel,
        CbqSharing::Formal,
        CbqSharing::Ns2TopLevel,
    ];

    /// The name in scenarios (`[link.cbq] sharing`) and on the command line.
    pub const fn name(self) -> &'static str {
        match self {
            CbqSharing::TopLevel => "top-level",
            CbqSharing::Formal => "formal",
            CbqSharing::Ns2TopLevel => "top-level-ns2",
        }
    }
}

impl std::fmt::Display for CbqSharing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for CbqSharing {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        CbqSharing::ALL
            .into_iter()
            .find(|g| g.name() == s)
            .ok_or_else(|| {
                let known: Vec<&str> = CbqSharing::ALL.iter().map(|g| g.name()).collect();
                format!(
                    "unknown link-sharing guideline `{s}`; known: {}",
                    known.join(", ")
                )
            })
    }
}

/// CBQ's qdisc-wide settings (`SchedulerConfig::Cbq`); the default is Linux's CBQ.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CbqParams {
    /// The link-sharing guideline.
    pub sharing: CbqSharing,
}

/// Marks an absent class (no parent, nothing to borrow from).
const NONE: u32 = u32::MAX;

/// The root class (the link).
const ROOT: usize = 0;

/// `toplevel` when there is no cutoff (Linux `TC_CBQ_MAXLEVEL`).
const NO_CUTOFF: u32 = u32::MAX;

/// One class: parameters, estimator, WRR state, and (for leaves) queue and ring links.
#[derive(Debug)]
struct Slot<P> {
    queue: VecDeque<P>,
    /// Neighbours in its band's ring while backlogged.
    link: Link,
    est: Estimator,
    rate: Rate,
    /// Parent class, or `NONE` for the root.
    parent: u32,
    /// The class it may borrow from: its parent, or `NONE` (bounded, or the root).
    borrow: u32,
    level: u32,
    band: u8,
    /// WRR quantum and deficit, bytes.
    quantum: i64,
    deficit: i64,
    /// Whether the overlimit action has been applied in the current blocked episode.
    delayed: bool,
    is_leaf: bool,
    /// Whether the borrow chain reaches the root (no bounded class from here up).
    reaches_root: bool,
    /// Backlogged leaves whose borrow chain passes through the class, itself included
    /// (kept under formal link sharing only).
    backlogged_below: u32,
}

impl<P> Linked for Slot<P> {
    #[inline]
    fn link(&self) -> &Link {
        &self.link
    }
    #[inline]
    fn link_mut(&mut self) -> &mut Link {
        &mut self.link
    }
}

/// A snapshot of one class's CBQ state, for tests, reports and debugging (the
/// counterpart of Linux's `tc -s class show` extended statistics).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClassState {
    /// Allotted rate.
    pub rate: Rate,
    /// Level in the link-sharing tree: 0 for leaves, one above the highest child
    /// otherwise.
    pub level: u32,
    /// Whether the class may not borrow from its parent.
    pub bounded: bool,
    /// Scaled average idle time `avgidle / W`, in nanoseconds (divide by
    /// `2^`[`EWMA_LOG`] for the average itself). Positive: underlimit.
    pub avgidle: i64,
    /// Cap on `avgidle`, scaled the same way.
    pub maxidle: i64,
    /// While overlimit, when the class becomes underlimit again; `None` while
    /// underlimit.
    pub undertime: Option<Instant>,
    /// WRR quantum, bytes (meaningful for leaves).
    pub quantum: Bytes,
    /// WRR deficit, bytes; may be negative.
    pub deficit: i64,
}

/// Class-Based Queueing with top-level link sharing. See the [module docs](self).
#[derive(Debug)]
pub struct Cbq<P> {
    /// Indexed by [`ClassId::index`].
    slots: Vec<Slot<P>>,
    /// Per band, a ring of its backlogged leaves; the head has the turn.
    bands: [Ring; BANDS],
    /// Number of leaves in each band's ring.
    band_len: [u32; BANDS],
    /// Bit `b` is set when band `b` has a backlogged leaf.
    nonempty: u8,
    /// The top-level cutoff, or `NO_CUTOFF`.
    toplevel: u32,
    /// Link rate, for the end-of-service estimate.
    link_rate: Rate,
    /// Estimated end of service of the last packet dequeued.
    link_free: Instant,
    /// Backlogged leaves.
    backlogged: usize,
    /// Backlogged leaves whose borrow chain reaches the root.
    rooted_backlogged: usize,
    /// Whether some class is bounded.
    any_bounded: bool,
    /// The leaf and lender of the last packet dequeued, whose cutoff rule
    /// (`cbq_update_toplevel`) is due at the next dequeue (Linux `tx_class`,
    /// `tx_borrowed`).
    last_sent: Option<(u32, u32)>,
    /// The link-sharing guideline.
    sharing: CbqSharing,
}

impl<P: Packet> Cbq<P> {
    /// CBQ for `tree` with Linux's top-level link sharing and the parameters of the
    /// [module docs](self#parameters).
    pub fn new(tree: &ClassTree) -> Cbq<P> {
        Cbq::with_params(tree, CbqParams::default())
    }

    /// CBQ for `tree` with the link-sharing guideline of `settings`.
    pub fn with_params(tree: &ClassTree, settings: CbqParams) -> Cbq<P> {
        let params = params::derive(tree);
        let classes = tree.classes();
        let mut slots: Vec<Slot<P>> = classes
            .iter()
            .zip(&params)
            .map(|(c, p): (_, &Params)| {
                let parent = c.parent.map_or(NONE, |p| p.0);
                Slot {
                    queue: VecDeque::new(),
                    link: Link::UNLINKED,
                    est: Estimator::new(p.maxidle),
                    rate: p.rate,
                    parent,
                    borrow: if p.bounded { NONE } else { parent },
                    level: p.level,
                    band: p.band,
                    quantum: p.quantum,
                    deficit: p.quantum,
                    delayed: false,
                    is_leaf: c.is_leaf(),
                    reaches_root: false,
                    backlogged_below: 0,
                }
            })
            .collect();
        for i in 0..slots.len() {
            let mut c = i as u32;
            while slots[c as usize].borrow != NONE {
                c = slots[c as usize].borrow;
            }
            slots[i].reaches_root = c as usize == ROOT;
        }
        Cbq {
            slots,
            bands: [Ring::EMPTY; BANDS],
            band_len: [0; BANDS],
            nonempty: 0,
            toplevel: NO_CUTOFF,
            link_rate: tree.link_rate(),
            link_free: Instant::ZERO,
            backlogged: 0,
            rooted_backlogged: 0,
            any_bounded: params.iter().any(|p| p.bounded),
            last_sent: None,
            sharing: settings.sharing,
        }
    }

    /// The link-sharing guideline.
    pub fn sharing(&self) -> CbqSharing {
        self.sharing
    }

    /// The state of `class` now, or `None` if it is not a class of the tree.
    pub fn class_state(&self, class: ClassId) -> Option<ClassState> {
        let s = self.slots.get(class.index())?;
        Some(ClassState {
            rate: s.rate,
            level: s.level,
            bounded: class.index() != ROOT && s.borrow == NONE,
            avgidle: s.est.avgidle(),
            maxidle: s.est.maxidle(),
            undertime: s.est.undertime(),
            quantum: Bytes(s.quantum as u64),
            deficit: s.deficit,
        })
    }

    /// The top-level cutoff: borrowing is allowed only from classes at this level or
    /// below; `None` when there is no cutoff. The rule that follows a transmission
    /// moves it at the next dequeue (see the [module docs](self#the-algorithm)).
    pub fn toplevel(&self) -> Option<u32> {
        (self.toplevel != NO_CUTOFF).then_some(self.toplevel)
    }

    /// Leaf `c` has just become backlogged: it joins the back of its band's ring.
    fn activate(&mut self, c: u32) {
        let s = &self.slots[c as usize];
        let band = usize::from(s.band);
        if s.reaches_root {
            self.rooted_backlogged += 1;
        }
        self.backlogged += 1;
        self.bands[band].push_back(&mut self.slots, c);
        self.band_len[band] += 1;
        self.nonempty |= 1 << band;
        if self.sharing == CbqSharing::Formal {
            self.count_backlog(c, true);
        }
    }

    /// Formal link sharing: leaf `c` became backlogged (`up`) or empty; it and every
    /// class of its borrow chain count it.
    fn count_backlog(&mut self, c: u32, up: bool) {
        let mut k = c;
        while k != NONE {
            let s = &mut self.slots[k as usize];
            if up {
                s.backlogged_below += 1;
            } else {
                s.backlogged_below -= 1;
            }
            k = s.borrow;
        }
    }

    /// Formal link sharing: the lowest level of an *unsatisfied* class at `now` (one
    /// that is underlimit and has a backlogged leaf whose borrow chain passes through
    /// it, itself for a leaf), [`NO_CUTOFF`] if none. A class may borrow from an
    /// ancestor at level `i` only if this is `>= i`. O(classes).
    fn lowest_unsatisfied(&self, now: Instant) -> u32 {
        self.slots
            .iter()
            .filter(|s| s.backlogged_below > 0 && s.est.is_under(now))
            .map(|s| s.level)
            .min()
            .unwrap_or(NO_CUTOFF)
    }

    /// Leaf `c`'s queue has just emptied: it leaves its band's ring.
    fn deactivate(&mut self, c: u32) {
        let s = &self.slots[c as usize];
        let band = usize::from(s.band);
        if s.reaches_root {
            self.rooted_backlogged -= 1;
        }
        self.backlogged -= 1;
        self.bands[band].remove(&mut self.slots, c);
        self.band_len[band] -= 1;
        if self.band_len[band] == 0 {
            self.nonempty &= !(1 << band);
        }
        if self.sharing == CbqSharing::Formal {
            self.count_backlog(c, false);
        }
    }

    /// `cbq_mark_toplevel`: an arrival to leaf `c` at `now` lowers the cutoff to the
    /// level of the first underlimit class among `c` and its borrow chain below it.
    /// (Under formal link sharing there is no cutoff.)
    fn mark_toplevel(&mut self, c: u32, now: Instant) {
        match self.sharing {
            CbqSharing::Formal => return,
            CbqSharing::Ns2TopLevel => return self.ns2_arrival(c, now),
            CbqSharing::TopLevel => {}
        }
        let top = self.toplevel;
        let mut c = c;
        while c != NONE && top > self.slots[c as usize].level {
            let s = &self.slots[c as usize];
            if s.est.is_under(now) {
                self.toplevel = s.level;
                return;
            }
            c = s.borrow;
        }
    }

    /// ns-2's `toplevel_arrival` for an arrival to leaf `c` at `now`: if the cutoff is
    /// above the leaves, it drops to 0 when `c` is underlimit, else to 1 when the cutoff
    /// is above 1 and `c`'s lender (its parent, unless `c` is bounded) is underlimit,
    /// whatever that lender's level.
    fn ns2_arrival(&mut self, c: u32, now: Instant) {
        let s = &self.slots[c as usize];
        if self.toplevel == 0 {
            return;
        }
        if s.est.is_under(now) {
            self.toplevel = 0;
        } else if self.toplevel > 1
            && s.borrow != NONE
            && self.slots[s.borrow as usize].est.is_under(now)
        {
            self.toplevel = 1;
        }
    }

    /// ns-2's `toplevel_departure`, right after `leaf` sent a packet lent by `lender`
    /// (the estimators updated): if the cutoff is at or above the lender's level, it is
    /// lifted when `leaf` has at most one packet left or the lender is now overlimit,
    /// and becomes the lender's level otherwise.
    fn ns2_departure(&mut self, leaf: u32, lender: u32, now: Instant) {
        let l = &self.slots[lender as usize];
        if self.toplevel >= l.level {
            self.toplevel = if self.slots[leaf as usize].queue.len() <= 1 || !l.est.is_under(now) {
                NO_CUTOFF
            } else {
                l.level
            };
        }
    }

    /// `cbq_under_limit`: the class leaf `leaf` may send through at `now` under the
    /// current cutoff, or under formal link sharing (itself if underlimit, else its
    /// lender), or `None`. Applies the overlimit action when the borrow chain ends
    /// without a lender.
    fn lender(&mut self, leaf: u32, now: Instant) -> Option<u32> {
        let l = leaf as usize;
        if self.slots[l].est.is_under(now) {
            self.slots[l].delayed = false;
            return Some(leaf);
        }
        let mut c = self.slots[l].borrow;
        while c != NONE {
            let s = &self.slots[c as usize];
            if s.level > self.toplevel {
                return None;
            }
            if s.est.is_under(now) {
                if self.sharing == CbqSharing::Formal && s.level > self.lowest_unsatisfied(now) {
                    return None;
                }
                self.slots[l].delayed = false;
                return Some(c);
            }
            c = s.borrow;
        }
        let s = &mut self.slots[l];
        if !s.delayed {
            s.est.forgive();
            if s.est.is_under(now) {
                return Some(leaf);
            }
            s.delayed = true;
        }
        None
    }

    /// `cbq_dequeue_prio`: the weighted round robin of one band. Returns the leaf that
    /// sends, its lender and its head packet (already taken off the queue, with the ring
    /// and deficits updated), or `None` if no leaf of the band may send.
    fn serve_band(&mut self, band: usize, now: Instant) -> Option<(u32, u32, P)> {
        let n = self.band_len[band];
        loop {
            let mut credited = false;
            for k in 0..n {
                let c = self.bands[band].head().expect("band_len counts the ring");
                if let Some(lender) = self.lender(c, now) {
                    let s = &mut self.slots[c as usize];
                    if s.deficit > 0 {
                        let pkt = s.queue.pop_front().expect("ring members are backlogged");
                        s.deficit -= i64::from(pkt.wire_len());
                        if s.deficit <= 0 {
                            self.bands[band].rotate(&self.slots);
                            let next = self.bands[band].head().expect("c is in the ring");
                            let s = &mut self.slots[next as usize];
                            s.deficit += s.quantum;
                        } else {
                            for _ in k..n {
                                self.bands[band].rotate(&self.slots);
                            }
                        }
                        if self.slots[c as usize].queue.is_empty() {
                            self.deactivate(c);
                        }
                        return Some((c, lender, pkt));
                    }
                    s.deficit += s.quantum;
                    credited = true;
                }
                self.bands[band].rotate(&self.slots);
            }
            if !credited {
                return None;
            }
        }
    }

    /// One pass over the bands in priority order under the current cutoff.
    fn select(&mut self, now: Instant) -> Option<(u32, u32, P)> {
        let mut bands = self.nonempty;
        while bands != 0 {
            let band = bands.trailing_zeros() as usize;
            bands &= bands - 1;
            if let Some(sent) = self.serve_band(band, now) {
                return Some(sent);
            }
        }
        None
    }

    /// `cbq_update` for a packet of `len` bytes from `leaf`, lent by `lender`, dequeued
    /// at `now`: the estimators now, the cutoff rule at the next dequeue.
    fn account(&mut self, leaf: u32, lender: u32, len: Bytes, now: Instant) {
        let start = now.max(self.link_free);
        let eos = start.saturating_add(self.link_rate.tx_time(len));
        self.link_free = eos;
        let mut c = leaf;
        while c != NONE {
            let s = &mut self.slots[c as usize];
            s.est.update(start, eos, s.rate.tx_time(len));
            c = s.parent;
        }
        self.last_sent = Some((leaf, lender));
    }

    /// `cbq_update_toplevel` for the last packet dequeued, from `leaf` and lent by
    /// `lender`, counting the packets `leaf` has queued now.
    fn update_toplevel(&mut self, leaf: u32, lender: u32) {
        if self.sharing == CbqSharing::TopLevel
            && self.toplevel >= self.slots[lender as usize].level
            && self.slots[leaf as usize].queue.len() > 1
        {
            let mut c = lender;
            while c != NONE {
                let s = &self.slots[c as usize];
                if s.est.undertime().is_none() {
                    self.toplevel = s.level;
                    return;
                }
                c = s.borrow;
            }
        }
    }

    /// The earliest instant at which backlogged leaf `leaf` may send if nothing else
    /// happens: its own undertime (after the overlimit action, if not yet applied) or
    /// that of a class of its borrow chain. For leaves that cannot reach the root.
    fn release_time(&self, leaf: u32) -> Instant {
        let s = &self.slots[leaf as usize];
        let own = if s.delayed {
            s.est.undertime()
        } else {
            s.est.forgiven_undertime()
        };
        let mut t = own.unwrap_or(Instant::ZERO);
        let mut c = s.borrow;
        while c != NONE {
            let a = &self.slots[c as usize];
            t = t.min(a.est.undertime().unwrap_or(Instant::ZERO));
            c = a.borrow;
        }
        t
    }
}

impl<P: Packet> Scheduler<P> for Cbq<P> {
    fn name(&self) -> &'static str {
        "cbq"
    }

    /// Work-conserving exactly when no class is bounded: every leaf can then borrow from
    /// the root.
    fn is_work_conserving(&self) -> bool {
        !self.any_bounded
    }

    fn enqueue(
        &mut self,
        now: Instant,
        class: ClassId,
        pkt: P,
        _evicted: &mut Vec<Dropped<P>>,
    ) -> Enqueue<P> {
        let s = &mut self.slots[class.index()];
        debug_assert!(s.is_leaf, "the qdisc offers leaves only");
        s.queue.push_back(pkt);
        if s.queue.len() == 1 {
            self.activate(class.0);
        }
        self.mark_toplevel(class.0, now);
        Enqueue::Queued
    }

    /// Applies the cutoff rule of the previous transmission first, as Linux does. That
    /// rule can only move the cutoff, which never decides *whether* a packet leaves
    /// (the cutoff is lifted when nothing else can send), so `poll_at` need not know it.
    fn dequeue(&mut self, now: Instant) -> Option<Dequeued<P>> {
        if let Some((leaf, lender)) = self.last_sent.take() {
            self.update_toplevel(leaf, lender);
        }
        loop {
            if let Some((leaf, lender, pkt)) = self.select(now) {
                self.account(leaf, lender, len_of(&pkt), now);
                if self.sharing == CbqSharing::Ns2TopLevel {
                    self.ns2_departure(leaf, lender, now);
                }
                return Some(Dequeued {
                    pkt,
                    class: ClassId(leaf),
                });
            }
            let root = &mut self.slots[ROOT].est;
            if self.toplevel == NO_CUTOFF && root.undertime().is_none() {
                return None;
            }
            self.toplevel = NO_CUTOFF;
            root.clear_undertime();
        }
    }

    fn poll_at(&self, now: Instant) -> PollAt {
        if self.backlogged == 0 {
            return PollAt::Idle;
        }
        if self.rooted_backlogged > 0 {
            return PollAt::Now;
        }
        let mut earliest = Instant::MAX;
        for band in 0..BANDS {
            let mut ring = self.bands[band];
            for _ in 0..self.band_len[band] {
                let leaf = ring.head().expect("band_len counts the ring");
                earliest = earliest.min(self.release_time(leaf));
                ring.rotate(&self.slots);
            }
        }
        if earliest <= now {
            PollAt::Now
        } else {
            PollAt::At(earliest)
        }
    }

    /// A refused arrival moves the cutoff exactly as an admitted one does
    /// (`cbq_mark_toplevel`, which Linux's `cbq_enqueue` also calls when the class's
    /// queue drops the packet). Arrivals to a class that is not a leaf are ignored.
    fn arrival_refused(&mut self, now: Instant, class: ClassId) {
        if self.slots.get(class.index()).is_some_and(|s| s.is_leaf) {
            self.mark_toplevel(class.0, now);
        }
    }

    fn remove_behind_head(&mut self, class: ClassId) -> Option<P> {
        match self.slots.get_mut(class.index()) {
            Some(s) if s.queue.len() >= 2 => s.queue.remove(1),
            _ => self.remove_newest(class),
        }
    }

    fn remove_newest(&mut self, class: ClassId) -> Option<P> {
        let s = self.slots.get_mut(class.index())?;
        let pkt = s.queue.pop_back()?;
        if s.queue.is_empty() {
            self.deactivate(class.0);
        }
        Some(pkt)
    }
}
