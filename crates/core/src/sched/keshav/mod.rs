//! Keshav's fair queueing (S. Keshav, "On the Efficient Implementation of Fair
//! Queueing", 1991): the bit-by-bit round robin emulated packet by packet, with the
//! round number computed exactly, bids with a per-conversation offset `δ`, service in
//! bid order, and a shared buffer that drops the largest bid.
//!
//! # The algorithm, as in the paper
//!
//! Each leaf class is a *conversation* `α`. On the arrival at `t` of a packet of `P`
//! bytes ([`round`], [`bid`]):
//!
//! 1. the round number `R(t)` is brought up to date by iterated deletion (Fig. 1);
//! 2. its finish number `F_i = F^α + P` if `α` is active (`R(t) < F^α`), else
//!    `R(t) + P`; its bid `B_i = P + max(F^α, R(t) − δ^α)` (with `F^α` before this
//!    packet); then `F^α := F_i`;
//! 3. it is inserted into the bounded heap ([`crate::ds::bids::Bounded`]), which then
//!    drops the largest bids while the buffer exceeds `B` — possibly the arrival itself.
//!
//! When the line asks for a packet, the one with the smallest bid leaves. Activity is a
//! property of the fluid system, not of the buffer: a conversation stays active while
//! `R < F^α` even with no packet buffered, and may be inactive while one of its packets
//! is still buffered (the packet system lags the fluid one).
//!
//! **Weights.** Conversation `α` of weight `w_α` (the class's `weight`, default 1) is
//! served `w_α / W` of the line in the fluid system: `dR/dt = L / W` with `W` the total
//! weight of the active conversations, and a packet advances its conversation's finish
//! number by `P / w_α`. With every weight 1 this is the paper exactly; in general it is
//! weighted fair queueing (PGPS) with Keshav's bids and buffer.
//!
//! **Ties.** Equal bids leave in arrival order: the buffer orders by `(bid, arrival
//! sequence)`, which also makes every buffer structure give the same schedule.
//!
//! # Settings ([`KeshavConfig`])
//!
//! * `limit`: the shared buffer `B`, in packets (the paper) or bytes.
//! * `structure`: LINK, TREE, HEAP or PERC ([`crate::ds::bids`]); PERC by default.
//! * `count_operations`: whether the buffer counts the paper's elementary operations;
//!   `false` by default.
//! * `delta` / `deltas`: the offsets, in bytes of round number; 0 by default.
//!
//! Scenario files write them as `[link.keshav]` (`limit`, `structure`, `delta`,
//! `count_operations`) and a class's `delta` (`scenarios/README.md`).
//!
//! **What runs on the packet path.** PERC without `count_operations` (the default) is
//! [`crate::ds::bids::FastPerc`]: PERC's layout — per-conversation FIFOs, the
//! conversations by head tag and by tail tag — in 4-ary heaps without counters (the
//! heads as 16-byte compact keys over the exact tags, [`crate::ds::bids::heads`]), the
//! max-heap kept only while drops happen. It gives the same schedule and drops as the
//! paper's structures and is what a shaper or a long simulation wants. With
//! `count_operations`, PERC is the paper's counted structure
//! ([`crate::ds::bids::PerConversation`], binary heaps whose exchanges are counted), as
//! the cost study (`repro keshav-cost`) runs it. LINK, TREE and HEAP exist to be studied
//! and always count.
//!
//! The discipline keeps its own buffer ([`Scheduler::owns_buffer`]): class limits and
//! the qdisc's shared buffer do not apply; its drops are [`DropReason::LargestBid`].
//! When the buffer counts, [`Scheduler::discipline_counters`] reports its operations
//! with their elementary costs (the paper's metric for the structure in use);
//! uncounted PERC reports nothing for the buffer (its drops are in the link's drop
//! counters as every discipline's). The round number's active conversations are in
//! the paper's binary heap when the buffer counts, its exchanges reported
//! (`round_heap_exchanges`); with uncounted PERC they are in uncounted buckets of
//! round number (`buckets.rs`; the same round number, see [`round`]) and nothing is
//! reported.
//!
//! # Deviations
//!
//! * **The packet that finds the line idle.** The paper sends it without buffering it;
//!   a scheduler cannot see the line, so it is inserted and leaves at the next dequeue,
//!   at once on an idle line. Same schedule; the cost study's trace drops such
//!   packets (see [`crate::ds::bids::trace`]).
//! * **Empty fluid system**: the paper does not say; `R` is frozen while no conversation
//!   is active (spec §1.2), which keeps `R` monotone and gives the next arrival
//!   `F = R + P` as a reset would.
//! * **Dropped packets keep their finish numbers** (the paper updates `F^α` on arrival
//!   and never undoes it): a conversation pays in the fluid system for the bits it lost.
//!   The same holds for [`Scheduler::remove_newest`].
//! * **Arithmetic**: fixed point with the error bound stated in [`round`].
//! * **Uncounted PERC is not the paper's data structure** (the default; see Settings):
//!   same FIFOs and same order, but 4-ary heaps (the heads keyed by compact keys, the
//!   exact tags compared where keys are equal), and the max-heap of tails is rebuilt
//!   at the first drop after a quiet period instead of being kept on every insertion.
//!   Same schedule and drops; the drop that rebuilds costs O(k log k) for the `k`
//!   conversations with packets (amortised O(log k) per insertion, where the paper's
//!   PERC is O(log k) on every operation). `count_operations` runs the paper's.
//!
//! # Cost
//!
//! Per packet: O(log n) for the round number (amortised, [`round`]) plus the buffer
//! structure's insert and `get_min` (PERC: O(log n) in the conversations with buffered
//! packets; uncounted PERC: O(log n) in all the conversations, its heads' winner tree
//! walking its whole depth, and amortised for its drops, see
//! [`crate::ds::bids::fast_perc`]). No allocation once the buffer has reached its
//! largest size. Measured per enqueue + dequeue pair in `BENCHMARKS.md` (`cargo bench
//! -p linkshare-core --bench sched -- backlogged::keshav boxed::keshav`).
//!
//! # Verification
//!
//! * Unit tests: the paper's worked example ([`round`]), bids ([`bid`]).
//! * `tests/keshav.rs`: the largest bids are dropped, possibly the arrival (spec R7),
//!   against a model of the buffer built from the recorded bids; every structure gives
//!   the same schedule and drops; validation lists every problem with its fix.
//! * `tests/keshav_fluid.rs` (proptest, against the exact-rational fluid GPS of
//!   `linkshare_analysis::gps`): active sets, round and finish numbers (R2), departures
//!   within one maximum packet time of GPS (R3), monotonicity (R4), the idle freeze
//!   (R5), `δ` changes delays but not long-run shares (R6).
//! * The conformance harness (conservation, FIFO per conversation, `poll_at`) and the
//!   no-allocation test, with every structure, PERC counted and uncounted.
//! * `tests/keshav.rs` and `tests/bid_queues.rs` run uncounted PERC beside the paper's
//!   four structures: same schedule, same drops, the same as the ordered-set model;
//!   `tests/service_order.rs` pins the default (uncounted) schedule by hash.

mod active;
pub mod bid;
mod buckets;
mod config;
pub mod round;

pub use config::{ConversationDelta, DEFAULT_LIMIT, KeshavConfig, validate};

use super::{Dequeued, DisciplineCounter, DropReason, Dropped, Enqueue, Packet, PollAt, Scheduler};
use crate::ds::bids::trace::Recorder;
use crate::ds::bids::{BidQueue, Bounded, Cost, Entry, Tag};
use crate::hierarchy::{ClassId, ClassTree};
use round::RoundNumber;

/// Keshav FQ over the leaves of a tree, buffering in structure `S`. See the
/// [module docs](self).
#[derive(Debug)]
pub struct Keshav<P, S> {
    round: RoundNumber,
    /// Whether each class, by index, is a conversation (a leaf): a byte per class, in
    /// the first cache level.
    leaves: Vec<bool>,
    /// `δ^α` of each class in round units, by index; empty when every offset is 0
    /// (plain fair queueing, the default), so that the packet path then reads no table.
    deltas: Vec<u128>,
    buffer: Bounded<P, S>,
    /// Arrival sequence number of the next packet.
    seq: u64,
    recorder: Option<Recorder>,
}

impl<P: Packet, S: BidQueue<P>> Keshav<P, S> {
    /// Keshav FQ for `tree` with `config` (its `structure` is `S`; the field is not
    /// read here). Fails as [`validate`] does.
    pub fn new(tree: &ClassTree, config: &KeshavConfig) -> Result<Self, super::BuildError> {
        validate(tree, config)?;
        let classes = tree.classes();
        let weights = classes.iter().map(|c| u64::from(c.weight())).collect();
        let deltas = config.deltas_of(tree);
        let deltas = if deltas.iter().all(|d| d.0 == 0) {
            Vec::new()
        } else {
            deltas.into_iter().map(round::bytes_to_units).collect()
        };
        Ok(Keshav {
            round: if S::COUNTED {
                RoundNumber::counted(tree.link_rate(), weights)
            } else {
                RoundNumber::new(tree.link_rate(), weights)
            },
            leaves: classes.iter().map(|c| c.is_leaf()).collect(),
            deltas,
            buffer: Bounded::new(classes.len(), config.limit),
            seq: 0,
            recorder: None,
        })
    }

    /// Records every buffer operation into `recorder` from now on (the cost study's
    /// trace; see [`crate::ds::bids::trace`]).
    pub fn with_recorder(mut self, recorder: Recorder) -> Self {
        self.recorder = Some(recorder);
        self
    }

    /// The round number at `now` (not before the last call's instant), in round units
    /// ([`round::UNITS_PER_BYTE`] per byte).
    pub fn round_at(&mut self, now: crate::units::Instant) -> u128 {
        self.round.at(now)
    }

    /// `F^α` of `class`: the finish number of its latest packet, in round units.
    pub fn finish_of(&self, class: ClassId) -> Option<u128> {
        self.is_leaf(class).then(|| self.round.finish_of(class.0))
    }

    /// Whether `class` is active in the fluid system, as of the last arrival or
    /// [`Keshav::round_at`].
    pub fn is_active(&self, class: ClassId) -> bool {
        self.is_leaf(class) && self.round.is_active(class.0)
    }

    /// The buffer's operations and elementary costs so far.
    pub fn cost(&self) -> Cost {
        self.buffer.cost()
    }

    /// Exchanges in the round number's heap so far (the spec's `round_heap_swaps`), if
    /// the buffer counts (then the round number is the paper's counted heap); `None`
    /// for uncounted PERC.
    pub fn round_heap_exchanges(&self) -> Option<u64> {
        self.round.heap_exchanges()
    }

    /// The buffer structure (for invariant checks in tests).
    pub fn structure(&self) -> &S {
        self.buffer.structure()
    }

    #[inline]
    fn is_leaf(&self, class: ClassId) -> bool {
        self.leaves.get(class.index()).copied().unwrap_or(false)
    }

    /// `δ^α` of `class`, in round units.
    #[inline]
    fn delta(&self, class: ClassId) -> u128 {
        self.deltas.get(class.index()).copied().unwrap_or(0)
    }

    /// [`RoundNumber::arrive`] and the packet's bid, out of the packet path's code (see
    /// [`RoundNumber::arrive_if_active`]).
    #[inline(never)]
    fn arrive(&mut self, now: crate::units::Instant, class: ClassId, size: u32) -> u128 {
        let a = self.round.arrive(now, class.0, u64::from(size));
        bid::bid(&a, self.delta(class))
    }

    #[cold]
    fn record_insert(&self, now: crate::units::Instant, conv: u32, size: u32, bid: u128) {
        if let Some(r) = &self.recorder {
            r.insert(now, conv, size, bid, self.buffer.len());
        }
    }
}

impl<P: Packet, S: BidQueue<P>> Scheduler<P> for Keshav<P, S> {
    fn name(&self) -> &'static str {
        "keshav"
    }

    fn is_work_conserving(&self) -> bool {
        true
    }

    #[inline]
    fn enqueue(
        &mut self,
        now: crate::units::Instant,
        class: ClassId,
        pkt: P,
        evicted: &mut Vec<Dropped<P>>,
    ) -> Enqueue<P> {
        if !self.is_leaf(class) {
            return Enqueue::Dropped(Dropped {
                pkt,
                class,
                reason: DropReason::NotALeaf,
            });
        }
        let size = pkt.wire_len();
        let bid = match self.round.arrive_if_active(now, class.0, u64::from(size)) {
            Some(a) => bid::bid(&a, self.delta(class)),
            None => self.arrive(now, class, size),
        };
        let seq = self.seq;
        let tag = Tag::new(bid, seq);
        self.seq += 1;
        let e = Entry {
            tag,
            conv: class.0,
            size,
            value: pkt,
        };
        if self.recorder.is_some() {
            self.record_insert(now, e.conv, e.size, e.tag.bid());
        }
        let mut arrival = None;
        let arrived = &mut arrival;
        // The arrival is known by its sequence number (unique per packet). Its tag is
        // the largest of its conversation's so far ([`bid`]).
        self.buffer.insert_newest(e, move |v| {
            if v.tag.seq() == seq {
                *arrived = Some(v.value);
            } else {
                evicted.push(Dropped {
                    pkt: v.value,
                    class: ClassId(v.conv),
                    reason: DropReason::LargestBid,
                });
            }
        });
        match arrival {
            None => Enqueue::Queued,
            Some(pkt) => Enqueue::Dropped(Dropped {
                pkt,
                class,
                reason: DropReason::LargestBid,
            }),
        }
    }

    #[inline]
    fn dequeue(&mut self, now: crate::units::Instant) -> Option<Dequeued<P>> {
        let e = self.buffer.get_min()?;
        if let Some(r) = &self.recorder {
            r.get_min(now);
        }
        Some(Dequeued {
            pkt: e.value,
            class: ClassId(e.conv),
        })
    }

    fn poll_at(&self, _now: crate::units::Instant) -> PollAt {
        PollAt::work_conserving(!self.buffer.is_empty())
    }

    /// Never asked: Keshav FQ keeps its own buffer, so no qdisc push-out rule applies
    /// to it (the contract's provision for [`Scheduler::owns_buffer`]).
    fn remove_behind_head(&mut self, _class: ClassId) -> Option<P> {
        None
    }

    fn remove_newest(&mut self, class: ClassId) -> Option<P> {
        self.buffer.remove_newest(class.0).map(|e| e.value)
    }

    fn owns_buffer(&self) -> bool {
        true
    }

    /// The buffer's operations and their elementary costs (the paper's metric, for the
    /// structure this instance runs; nothing for uncounted PERC), and the exchanges of
    /// the round number's heap.
    fn discipline_counters(&self) -> Vec<DisciplineCounter> {
        let c = self.buffer.cost();
        let buffer = [
            ("insertions", c.insertions),
            ("get_mins", c.get_mins),
            ("largest_bid_drops", c.drops),
            ("insert_ops", c.ops.insert),
            ("drop_ops", c.ops.drop),
            ("get_min_ops", c.ops.get_min),
            ("max_insert_ops", c.max_insert),
        ];
        let buffer = if S::COUNTED { &buffer[..] } else { &[] };
        let round = self
            .round
            .heap_exchanges()
            .map(|x| ("round_heap_exchanges", x));
        buffer
            .iter()
            .copied()
            .chain(round)
            .map(|(name, value)| DisciplineCounter {
                class: None,
                name,
                value,
            })
            .collect()
    }
}

/// Keshav FQ for `tree` with `config`, with the structure `config` names, boxed;
/// recording its buffer operations into `recorder` if given (the cost study's trace).
pub fn build<P: Packet + Send + 'static>(
    tree: &ClassTree,
    config: &KeshavConfig,
    recorder: Option<Recorder>,
) -> Result<Box<dyn Scheduler<P> + Send>, super::BuildError> {
    use crate::ds::bids::{
        DoubleHeap, FastPerc, LinkedList, PerConversation, SearchTree, Structure,
    };
    fn boxed<P: Packet, S: BidQueue<P>>(
        mut k: Keshav<P, S>,
        recorder: Option<Recorder>,
    ) -> Box<dyn Scheduler<P> + Send>
    where
        Keshav<P, S>: Send + 'static,
    {
        k.recorder = recorder;
        Box::new(k)
    }
    Ok(match config.structure {
        Structure::Link => boxed(Keshav::<P, LinkedList<P>>::new(tree, config)?, recorder),
        Structure::Tree => boxed(Keshav::<P, SearchTree<P>>::new(tree, config)?, recorder),
        Structure::Heap => boxed(Keshav::<P, DoubleHeap<P>>::new(tree, config)?, recorder),
        Structure::Perc if config.count_operations => boxed(
            Keshav::<P, PerConversation<P>>::new(tree, config)?,
            recorder,
        ),
        Structure::Perc => boxed(Keshav::<P, FastPerc<P>>::new(tree, config)?, recorder),
    })
}
