//! JoBS / QoSbox: per-class absolute and proportional guarantees on delay, loss and
//! throughput by adaptive rate allocation and dropping (Christin, Liebeherr,
//! Abdelzaher, "Enhancing Class-Based Service Architectures with Adaptive Rate
//! Allocation and Dropping Mechanisms", UVA CS-2004-09, §3–6; `shared/specs/
//! jobs-qosbox.md` restates it equation by equation, with the ALTQ and ns-2 code).
//!
//! # The service
//!
//! JoBS serves the **leaves** of the link's tree as its classes, in declaration order
//! (`ClassId` order, interior classes ignored, as [`super::prio`] does): the first leaf
//! is the paper's class 1, the best served. Each class has a FIFO queue. Each may have
//! any of (paper Eqs. 4–8, [`Constraints`]):
//!
//! * a **delay bound** `d_i` on the time a packet waits in the queue;
//! * a **loss-rate bound** `L_i` on the bytes of the class dropped in a busy period;
//! * a **throughput bound** `μ_i`, a least rate allocated while the class is backlogged;
//! * a **delay ratio** `k_i = D_{i+1} / D_i` and a **loss ratio** `k'_i = p_{i+1} / p_i`
//!   with the next class; consecutive classes tied by ratios form a group.
//!
//! The bounds are *best-effort bounds*: without admission control they cannot always
//! hold; when they cannot all hold, loss bounds come first, then delay and throughput
//! bounds, then the ratios (§6; module `relax` says how each stage applies the order
//! and what is counted). Everything is measured over the current **busy period**
//! (§3.1): it starts when a packet arrives to an empty JoBS, and then every class's
//! arrival, input and output curves, loss rate and rate start from zero.
//!
//! # At each arrival
//!
//! Events are arrivals (§3.1); departures only consume service. At an arrival of class
//! `c` at `t(n)`:
//!
//! 1. **Curves** (module `curves`): `A_c += len`; every class's promised output advances
//!    by its rate over the time since the last arrival, `R_i^out += r_i · Δt` (Eq. 1).
//! 2. **Admission, loss loop pass 1** (module `loss`, Eqs. 34–37): with the shared
//!    buffer full (Eq. 35), one packet must go — the arrival or another class's newest,
//!    chosen by the loss ratios within the loss bounds.
//! 3. **Work conservation** (spec §2.6): when the backlogged classes are not those
//!    holding rate, the link is split equally among the backlogged classes (`Σ r_i = C`,
//!    exactly: the remainder of the division goes to the first classes, a bit/s each).
//! 4. **Bounds** (module `min_rates`, Eqs. 10–11, 36): each backlogged class with a bound
//!    needs `r_i^min = max(B_i / (d_i − D_i), μ_i)`; when a class has less, rate moves to
//!    it greedily from classes above their own minimum, and a class still short drops
//!    from its own tail (within its loss bound) until its backlog can meet its delay
//!    bound at its rate — the loss loop's pass 2.
//! 5. **Ratios** (module `proportional`, Eqs. 12–33), every `sampling` arrivals and
//!    whenever step 4 had to act: in each delay group, `Δr_i = K(n) · e_i(n)` on the
//!    weighted head-of-line delays, never below a class's minimum rate.
//!
//! The delay `D_i` the controller sees is the **head-of-line wait**, now minus the
//! arrival of the class's oldest queued packet (spec errata 9, as both reference
//! implementations; Eq. 2's fluid delay is a measurement, not a control input).
//!
//! # Dequeue
//!
//! The backlogged class furthest behind its promised output, `argmax R_i^out − X_i` with
//! `X_i` the bytes it sent in the busy period (§6.2, module `dequeue`), ties to the better
//! class. JoBS is work-conserving.
//!
//! # Settings ([`JobsConfig`])
//!
//! | setting | unit | default |
//! |---|---|---|
//! | `classes[name].delay_bound` | [`Duration`](crate::units::Duration) (ns) | none |
//! | `classes[name].loss_bound` | [`Fraction`](crate::units::Fraction) (parts per 10⁹) | none |
//! | `classes[name].min_rate` | [`Rate`](crate::units::Rate) (bit/s) | none |
//! | `classes[name].delay_ratio`, `loss_ratio` | [`Ratio`](crate::units::Ratio) (exact `a/b` > 1), to the next class | none |
//! | `mode` | [`Mode::Paper`] (Eqs. 32–33, 37) or [`Mode::Reference`] (ALTQ, bugs fixed) | paper, `γ = ½` |
//! | `buffer` | [`Buffer::Shared`] or [`Buffer::Separate`], packets | shared, 200 |
//! | `sampling` | arrivals between runs of the ratio loop | 1 |
//!
//! JoBS keeps its own buffer ([`Scheduler::owns_buffer`]): the qdisc's class and shared
//! limits do not apply. It drops the arrival or a class's newest packet, with
//! [`DropReason::SharedLimit`] (shared buffer full), [`DropReason::ClassLimit`]
//! (separate buffer full) or [`DropReason::DelayBound`] (delay-driven drop). Validation
//! ([`validate`]) refuses, one [`ConfigError`](crate::hierarchy::ConfigError) each with
//! its fix: more than [`MAX_CLASSES`] leaves, constraints for a class that is not a
//! leaf, a zero delay bound or one shorter than the largest packet's transmission, a
//! loss bound above 100 %, a throughput bound of 0 or above the link, throughput bounds
//! adding up to more than the link, a ratio not above 1 or on the last class, a loss
//! bound or ratio with separate buffers, a buffer of 0 packets, a gain factor outside
//! (0, 1], and a group whose ratios multiply beyond 2⁴⁸.
//!
//! # Modes
//!
//! Both modes share the state, the dequeue, the bounds' stage and the loss bounds; they
//! differ where the paper and its implementation do (spec §0.3):
//!
//! * [`Mode::Paper`] (the default) follows the paper's equations: in each delay group,
//!   `K = γ · K_lo` inside Eq. 32's stability interval (`γ = ½`: dead-beat for the
//!   binding class), no class taken below its minimum (Eq. 33, see *Deviations*), the
//!   drop order of Eq. 37 (classes outside the loss ratios first, by slack below their
//!   loss bound, then by loss error), and the equal split only when the set of
//!   backlogged classes changes — so a class outside the groups keeps what the bounds'
//!   stage left it, possibly nothing, until then.
//! * [`Mode::Reference`] takes the decisions of the ALTQ code of the paper's Experiment
//!   2: its gain `K = −2 U² s / (P_max L̄)` (module `proportional`), its clipping of the
//!   proportional step, its overflow victim rule, and its work-conservation trigger (a
//!   backlogged class without rate, or an empty class with rate: so a class the clipping
//!   drained to rate 0 triggers an equal split at the next arrival). That gain is far
//!   above Eq. 32's stability limit (it takes one mean packet for the backlog), so the
//!   reference loop acts as bang-bang control corrected by the clipping and the equal
//!   splits; the long-run ratios still come near their targets in overload. Its
//!   frequent equal splits also make the bounds' stage run at most arrivals when a
//!   throughput bound is above an equal share, so sampling saves little there
//!   (`BENCHMARKS.md`).
//!
//! # Arithmetic
//!
//! No floats: time in ns, bytes and packets in `u64`, rates in bit/s (`u64`), the
//! promised output exactly in nanobits (`u128`, saturating), loss bounds tested exactly
//! by cross-multiplication in `u128`, loss rates compared in fixed point (2⁻⁴⁰), weighted
//! delays and errors exact in `i128` with integer group weights (module `groups`), gains
//! in fixed point (2⁻³² bit/s per ns) computed in `u128`; products that could overflow
//! saturate, which the clipping then bounds. The spec's overflow hazards of the
//! reference (§5.2) are impossible by construction: the gain of ALTQ overflowed 64 bits
//! above 16.8 Mbit/s (here `u128` with saturation at any link rate); its scaled
//! accumulators wrapped after 2 GiB per class and busy period (here exact `u128`); its
//! loss-rate shift after 4 GiB dropped (here a cross-multiplication); its weight
//! products grew like `k^{M²/2}` (here `W_i ≤ 2⁴⁸`, validated); its mean packet size
//! truncated counters to 32 bits (here 64). A busy period whose arrival counter would
//! pass 2⁶⁴ bytes starts a new one, as ALTQ's does when it wraps. `tests/jobs.rs` drives
//! a class across the old limits.
//!
//! # Deviations
//!
//! From the paper (its intent kept; the spec's reading where the paper is silent):
//!
//! * Groups are runs of consecutive classes with ratios, each with its own loop (§4.1);
//!   the last class of a group needs no ratio (ALTQ and ns-2 need a dummy one and form
//!   one group of all flagged classes, skipping unflagged ones between them). Ratios are
//!   exact rationals, not ALTQ's integers. Proportional **throughput** (Eq. 9) is not
//!   offered: the paper itself reduces it to a time-varying delay ratio and neither
//!   implementation has it.
//! * The group's rate for the ratio loop is the rate its backlogged members hold (ALTQ:
//!   the link minus the other backlogged classes' rates; the same whenever no empty class
//!   still holds rate, which can only follow a delay-driven drop that empties a class).
//! * In both modes the ratio loop's floor for a class is its minimum rate, or its rate
//!   now if that is less: when the bounds cannot all be met, step 4 has given each class
//!   what it could and the ratio loop cannot create rate, so the rates keep adding up to
//!   the link (ALTQ raises the class to its full minimum and over-allocates).
//! * Paper mode meets Eq. 33 (no class below its minimum rate) class by class, not with
//!   one common `K`: a class held at its minimum whose delay is below target leaves its
//!   group's loop for that update (its ratio gives way to its bound, counted), the others
//!   are steered about their own mean, and a step that would take a class below its
//!   minimum (or below 0) stops there, its cost taken from the rising classes in
//!   proportion. The group's total is conserved (Eq. 20), which is why the paper wants
//!   one `K` (§4.5). Read literally, the common `K` of Eq. 33 is 0 whenever one member is
//!   held at its minimum with a delay below target: every ratio of the group stops being
//!   controlled. In a Table-1-like overload (class 2 held at its 35 Mbit/s) that left
//!   `D4/D3` at 0.87 instead of 2, and in ns-2's `jobs-lossdel` (a class at rate 0) at
//!   2.5 instead of 4; class by class, 1.98 and 4.0. Taking the cost of a clipped step
//!   from the highest index first (the reference's way) biased the last ratio of a
//!   group (2.25 instead of 2 in sustained overload).
//! * Paper mode: `γ = ½` by default (dead-beat for the binding class; the paper only
//!   bounds `K`); when no member has waited, the reference gain.
//! * Pass 2 of the loss loop drops from each class still short of its minimum, in class
//!   order, each from its own tail (the only drops that lower its need, Eq. 36); the
//!   order among them matters only under ALTQ's global stop, so both modes use ALTQ's.
//!   A class whose head is already late is short whatever its rate and drops its whole
//!   queue, tail first, within its loss bound (Eq. 36; ns-2 gives it an infinite need);
//!   a need above the link rate is kept as it is, so that a class holding the whole link
//!   can still be short. ns-2's "shared pain" alternative is not offered.
//! * The relaxation order is fixed (loss, then delay and throughput, then ratios: §6);
//!   the spec's alternative order is not offered.
//! * Tail drop only (ns-2's head drop is not offered): drops then never change the
//!   delays of what stays queued, which keeps the loss and delay loops independent (§5).
//! * The promised output is advanced at arrivals only (Eq. 1), as both references do;
//!   a class that empties keeps its rate until the next arrival, so its promise grows
//!   meanwhile and it is favoured if it returns in the same busy period (spec §2.11).
//!
//! From ALTQ (each reproducible by [`ReferenceBugs`] where it is a bug of its
//! decisions): the global stop of the delay-driven drops and the first class forgotten
//! when no class can give it rate are fixed by default; its arithmetic overflows (above),
//! its clipping's comparison of the group's rate in bit/s with rates in its internal
//! unit, and its late class's need of exactly the link rate (a late class that already
//! holds the whole link then keeps its late backlog) are not reproduced. From ns-2: the victim fallback that picks the last class
//! whatever its slack, the minimum share over classes that never sent (zero gain), the
//! buffer that admits one packet too many and the fixed four classes are not reproduced.
//!
//! # Cost
//!
//! Per arrival O(N) for N classes (at most 64): the promised curves, the
//! work-conservation check, the minimum rates of the bounded classes, the greedy
//! reallocation and the ratio loop are each a pass over the classes or a group; a drop
//! on overflow sorts the candidates in paper mode (O(N log N)). Delay-driven drops cost
//! O(1) per packet dropped. Per dequeue O(N) (the backlogged classes' promise minus
//! service). Nothing allocates after construction but the queues growing to their peak:
//! the controller's working space is sized once, and the first arrival reserves room in
//! the caller's eviction list for a buffer's worth of packets. Measured: `BENCHMARKS.md`
//! (`benches/jobs.rs`, the paper's Table 3 sets).
//!
//! # Verification
//!
//! * Hand-computed cases of the spec's §7.1, in the modules' tests: the group weights
//!   against the paper's `P_i` (1), zero errors at the target ratios (2), errors and
//!   steps adding up to zero (3), minimum rates (4), the loss recursion of Eq. 13 against
//!   Eq. 3 in exact rationals (5), the loss bound's boundary (6), a table of greedy
//!   reallocations (7), both clippings (8), the work-conservation reset (9), the
//!   dequeue's choice and ties (10), the victim choice and its fallback (11), every
//!   overflow path of the reference on a 3-packet buffer (12), busy periods (13), the
//!   paper gain's pole checked in the paper's units (14); also Eq. 37's order, a class
//!   held at its bound leaving the loop, the arrival dropped by its own delay-driven
//!   drops, and a busy period restarted when its arrival counter would overflow.
//! * Properties of §7.2 over random settings (delay, loss and throughput bounds, delay
//!   and loss ratios, both modes, both buffers, sampling) and random traffic, against an
//!   independent model of the queues, busy periods and loss budgets (`tests/jobs.rs`):
//!   the rates add up to the link exactly and empty classes hold none (P1); the loss
//!   rates reported are the model's exact ones and the buffer is never overfull (P3);
//!   every drop has its cause (P4); a loss bound is exceeded only on a full buffer and
//!   then counted, a delay bound relaxed only when the loss bound forbade the next drop
//!   (P5, P8); throughput bounds that fit are held (P6); runs are deterministic (P9);
//!   the cases must exercise every drop reason and every relaxation. The conformance
//!   harness runs on the same random settings.
//! * A class driven across the counter sizes at which ALTQ's arithmetic wrapped (2³¹
//!   and 2³² bytes per busy period, a gain at 100 Gbit/s) keeps exact loss rates and
//!   rates that add up to the link (`tests/jobs.rs`); no allocation on the packet path
//!   with 64 classes, nor in overload in both modes (`tests/no_alloc.rs`).
//! * In the simulator (`linkshare-sim`'s `tests/jobs.rs`), both modes: the authors'
//!   ns-2 validation scenarios `jobs-rate` (rates within 5 % of their bounds) and
//!   `jobs-lossdel` (class-1 bounds, delay and loss ratios within 20 %); in sustained
//!   overload the delay ratios of head-of-line waits within 15 % of 2 in 90 % of 0.5 s
//!   windows and 10 % over the run, and the link never idle (P10, P2); loss ratios
//!   within 10 % (P11); no drop in underload (P12); a delay bound without loss bound held
//!   by dropping for 99.9 % of packets (P7); Table 1's constraints in overload.

mod config;
mod curves;
mod dequeue;
mod groups;
mod loss;
mod min_rates;
mod proportional;
mod relax;
#[cfg(test)]
mod tests;

use std::collections::VecDeque;

pub use config::{Buffer, Constraints, JobsConfig, MAX_CLASSES, Mode, ReferenceBugs};

use super::{
    BuildError, Dequeued, DisciplineCounter, DropReason, Dropped, Enqueue, Packet, PollAt,
    Scheduler,
};
use crate::hierarchy::{ClassId, ClassTree};
use crate::units::Instant;
use config::Setup;
use curves::Curves;
use relax::Relaxations;

/// Checks that JoBS can be built for `tree` with `config` (see [`JobsConfig`]).
pub fn validate(tree: &ClassTree, config: &JobsConfig) -> Result<(), BuildError> {
    config::resolve(tree, config).map(|_| ())
}

/// The set bits of `mask` (JoBS indices), lowest first.
fn bits(mut mask: u64) -> impl Iterator<Item = usize> {
    core::iter::from_fn(move || {
        if mask == 0 {
            return None;
        }
        let i = mask.trailing_zeros() as usize;
        mask &= mask - 1;
        Some(i)
    })
}

/// A queued packet and its arrival instant.
#[derive(Debug)]
struct Queued<P> {
    pkt: P,
    arrival: Instant,
}

/// One class: its FIFO, its curves and its rate.
#[derive(Debug)]
struct Class<P> {
    queue: VecDeque<Queued<P>>,
    /// `B_i`: bytes queued.
    bytes: u64,
    curves: Curves,
    /// `r_i`: the service rate allocated, bit/s.
    rate: u64,
    /// `r_i^min` (Eq. 11, updated by the min-rate stage), bit/s.
    min_rate: u64,
    relaxed: Relaxations,
}

/// Working space of the controller, one entry per class, allocated once: no update
/// allocates. Stages use the first entries they need (a group's members by position,
/// or every class by JoBS index).
#[derive(Debug, Default)]
struct Scratch {
    idx: Vec<usize>,
    rates: Vec<u64>,
    floors: Vec<u64>,
    weights: Vec<u64>,
    waits: Vec<u64>,
    errors: Vec<i128>,
    deltas: Vec<i128>,
    order: Vec<u8>,
}

impl Scratch {
    fn new(n: usize) -> Scratch {
        Scratch {
            idx: vec![0; n],
            rates: vec![0; n],
            floors: vec![0; n],
            weights: vec![0; n],
            waits: vec![0; n],
            errors: vec![0; n],
            deltas: vec![0; n],
            order: Vec::with_capacity(n),
        }
    }
}

/// JoBS over the leaves of a tree. See the [module docs](self).
#[derive(Debug)]
pub struct Jobs<P> {
    setup: Setup,
    classes: Vec<Class<P>>,
    /// Classes with a packet queued (bit `i` for JoBS index `i`).
    backlogged: u64,
    /// Packets queued in all classes.
    queued: u32,
    /// When the promised curves were last advanced (the last arrival).
    last_event: Instant,
    /// Arrivals since the proportional loop last ran.
    since_update: u32,
    /// The backlogged classes when the rates were last split equally (paper mode's
    /// trigger of the work-conservation reset).
    allocated: u64,
    busy_periods: u64,
    scratch: Scratch,
    /// The most packets one enqueue can drop: the buffer, and the overflow victim.
    eviction_room: usize,
}

impl<P: Packet> Jobs<P> {
    /// JoBS for the leaves of `tree` with `config`.
    pub fn new(tree: &ClassTree, config: &JobsConfig) -> Result<Jobs<P>, BuildError> {
        let setup = config::resolve(tree, config)?;
        let scratch = Scratch::new(setup.classes.len());
        let eviction_room = 1 + match setup.buffer {
            Buffer::Shared { packets } => packets as usize,
            Buffer::Separate { packets } => packets as usize * setup.classes.len(),
        };
        let classes = setup
            .classes
            .iter()
            .map(|_| Class {
                queue: VecDeque::new(),
                bytes: 0,
                curves: Curves::default(),
                rate: 0,
                min_rate: 0,
                relaxed: Relaxations::default(),
            })
            .collect();
        Ok(Jobs {
            setup,
            classes,
            backlogged: 0,
            queued: 0,
            last_event: Instant::ZERO,
            since_update: 0,
            allocated: 0,
            busy_periods: 0,
            scratch,
            eviction_room,
        })
    }

    /// The service rate currently allocated to leaf `class`, bit/s (0 for a class JoBS
    /// does not serve).
    pub fn rate_of(&self, class: ClassId) -> u64 {
        self.setup
            .index_of(class)
            .map_or(0, |i| self.classes[i].rate)
    }

    /// Starts a busy period at `now`: every class's curves, loss rate and rate start
    /// from zero (§1.2 of the spec); relaxation counts are kept.
    fn start_busy_period(&mut self, now: Instant) {
        for c in &mut self.classes {
            c.curves = Curves::default();
            c.rate = 0;
            c.min_rate = 0;
        }
        self.last_event = now;
        self.allocated = 0;
        self.busy_periods += 1;
    }

    /// Advances every class's promised output to `now` at its current rate (Eq. 1).
    fn advance(&mut self, now: Instant) {
        let elapsed = now.0.saturating_sub(self.last_event.0);
        if elapsed > 0 {
            for c in &mut self.classes {
                c.curves.promise(c.rate, elapsed);
            }
        }
        self.last_event = now;
    }

    /// Appends `pkt` (already counted as arrived) to class `i`.
    fn push(&mut self, i: usize, pkt: P, now: Instant) {
        let c = &mut self.classes[i];
        c.bytes += u64::from(pkt.wire_len());
        c.queue.push_back(Queued { pkt, arrival: now });
        self.backlogged |= 1 << i;
        self.queued += 1;
    }

    /// Removes class `i`'s newest packet, counted as dropped.
    fn pop_tail(&mut self, i: usize) -> Option<P> {
        let c = &mut self.classes[i];
        let q = c.queue.pop_back()?;
        let len = u64::from(q.pkt.wire_len());
        c.bytes -= len;
        c.curves.drop(len);
        if c.queue.is_empty() {
            self.backlogged &= !(1 << i);
        }
        self.queued -= 1;
        Some(q.pkt)
    }

    /// Drops class `i`'s newest packet for `reason` into `evicted`, counting a loss
    /// bound it takes the class over.
    fn evict_tail(&mut self, i: usize, reason: DropReason, evicted: &mut Vec<Dropped<P>>) {
        if let Some(pkt) = self.pop_tail(i) {
            self.count_loss_bound(i);
            evicted.push(Dropped {
                pkt,
                class: self.setup.classes[i].id,
                reason,
            });
        }
    }

    /// Counts a relaxed loss bound if class `i` is now above it.
    fn count_loss_bound(&mut self, i: usize) {
        if let Some(bound) = self.setup.classes[i].loss_bound
            && self.classes[i].curves.exceeds(bound)
        {
            self.classes[i].relaxed.loss_bound += 1;
        }
    }

    /// How long class `i`'s head packet has waited at `now` (its `D_i`); 0 if empty.
    #[inline]
    fn head_wait(&self, i: usize, now: Instant) -> u64 {
        self.classes[i]
            .queue
            .front()
            .map_or(0, |q| now.0.saturating_sub(q.arrival.0))
    }

    /// The work-conservation reset (§2.6 of the spec): when the backlogged classes are
    /// not those holding rate (reference mode: a backlogged class without rate or an
    /// empty class with rate; paper mode: the backlogged set changed since the last
    /// split), split the link equally among the backlogged classes and take every
    /// empty class's rate away. The remainder of the division goes to the first
    /// backlogged classes, one bit/s each, so the rates add up to the link rate exactly.
    fn enforce_work_conservation(&mut self) {
        let trigger = match self.setup.mode {
            Mode::Reference(_) => {
                let holding = self
                    .classes
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| c.rate > 0)
                    .fold(0u64, |m, (i, _)| m | 1 << i);
                holding != self.backlogged
            }
            Mode::Paper { .. } => self.allocated != self.backlogged,
        };
        if !trigger {
            return;
        }
        let n = u64::from(self.backlogged.count_ones());
        let share = self.setup.link.checked_div(n).unwrap_or(0);
        let mut extra = self.setup.link.checked_rem(n).unwrap_or(0);
        for (i, c) in self.classes.iter_mut().enumerate() {
            c.rate = if self.backlogged & 1 << i == 0 {
                0
            } else if extra > 0 {
                extra -= 1;
                share + 1
            } else {
                share
            };
        }
        self.allocated = self.backlogged;
    }

    /// The controller, after an arrival at `now` has been admitted or dropped (§2.9):
    /// work conservation, the minimum rates of the bounds (every arrival), the
    /// proportional loop (every `sampling` arrivals, and whenever the minimum rates had
    /// to be enforced).
    fn control(&mut self, now: Instant, evicted: &mut Vec<Dropped<P>>) {
        self.enforce_work_conservation();
        self.since_update += 1;
        let mut due = self.since_update >= self.setup.sampling;
        if self.setup.bounded != 0 && self.update_min_rates(now) {
            self.meet_bounds(now, evicted);
            due = true;
        }
        if due {
            self.since_update = 0;
            self.adjust_ratios(now);
        }
    }
}

impl<P: Packet> Scheduler<P> for Jobs<P> {
    fn name(&self) -> &'static str {
        "jobs"
    }

    fn is_work_conserving(&self) -> bool {
        true
    }

    fn enqueue(
        &mut self,
        now: Instant,
        class: ClassId,
        pkt: P,
        evicted: &mut Vec<Dropped<P>>,
    ) -> Enqueue<P> {
        let Some(i) = self.setup.index_of(class) else {
            return Enqueue::Dropped(Dropped {
                pkt,
                class,
                reason: DropReason::NotALeaf,
            });
        };
        let len = u64::from(pkt.wire_len());
        // One enqueue may drop up to everything queued: room for it once, so that the
        // caller's list never grows on the packet path.
        evicted.reserve(self.eviction_room);
        if self.backlogged == 0 {
            self.start_busy_period(now);
        }
        if !self.classes[i].curves.arrive(len) {
            self.start_busy_period(now);
            let counted = self.classes[i].curves.arrive(len);
            debug_assert!(counted, "a fresh busy period counts any packet");
        }
        self.advance(now);
        let verdict = self.admit(now, i, pkt, evicted);
        let with_arrival = self.classes[i].queue.len();
        let before = evicted.len();
        self.control(now, evicted);
        if matches!(verdict, Enqueue::Queued) && self.classes[i].queue.len() < with_arrival {
            // The delay-driven drops reached the arrival, the newest packet of its class:
            // it is the first of its class they took, and its fate is the return value.
            let at = evicted[before..]
                .iter()
                .position(|d| d.class == class)
                .expect("a class that lost its newest packet has an eviction");
            return Enqueue::Dropped(evicted.remove(before + at));
        }
        verdict
    }

    fn dequeue(&mut self, now: Instant) -> Option<Dequeued<P>> {
        let i = self.select()?;
        let c = &mut self.classes[i];
        let q = c
            .queue
            .pop_front()
            .expect("selected classes are backlogged");
        let len = u64::from(q.pkt.wire_len());
        c.bytes -= len;
        c.curves.send(len);
        if let Some(d) = self.setup.classes[i].delay_bound
            && now.0.saturating_sub(q.arrival.0) > d
        {
            c.relaxed.delay_misses += 1;
        }
        if c.queue.is_empty() {
            self.backlogged &= !(1 << i);
        }
        self.queued -= 1;
        Some(Dequeued {
            pkt: q.pkt,
            class: self.setup.classes[i].id,
        })
    }

    fn poll_at(&self, _now: Instant) -> PollAt {
        PollAt::work_conserving(self.queued > 0)
    }

    /// Never asked: JoBS keeps its own buffer, so no qdisc push-out rule applies to it
    /// (the contract's provision for [`Scheduler::owns_buffer`]).
    fn remove_behind_head(&mut self, _class: ClassId) -> Option<P> {
        None
    }

    fn remove_newest(&mut self, class: ClassId) -> Option<P> {
        let i = self.setup.index_of(class)?;
        let pkt = self.pop_tail(i)?;
        self.count_loss_bound(i);
        Some(pkt)
    }

    fn owns_buffer(&self) -> bool {
        true
    }

    fn discipline_counters(&self) -> Vec<DisciplineCounter> {
        let mut out = vec![DisciplineCounter {
            class: None,
            name: "busy_periods",
            value: self.busy_periods,
        }];
        for (setup, c) in self.setup.classes.iter().zip(&self.classes) {
            let class = Some(setup.id);
            out.push(DisciplineCounter {
                class,
                name: "rate_bps",
                value: c.rate,
            });
            out.push(DisciplineCounter {
                class,
                name: "loss_ppb",
                value: c.curves.loss_ppb(),
            });
            for (name, value) in c.relaxed.named() {
                out.push(DisciplineCounter { class, name, value });
            }
        }
        out
    }
}
