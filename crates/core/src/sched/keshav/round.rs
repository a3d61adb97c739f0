//! The round number `R(t)` of the bit-by-bit round robin (weighted: the GPS virtual
//! time), computed exactly by **iterated deletion** (Keshav's Fig. 1), and each
//! conversation's finish number `F^α`.
//!
//! # The computation
//!
//! While conversations are active, `dR/dt = L / W` with `W` the total weight of the
//! active conversations (`N_ac` with weight 1: the paper); a conversation is active
//! while `R(t) < F^α` (Fig. 1's convention: inactive at equality). The active
//! conversations sit in a min-heap by `F^α`. To bring `R` up to `t`, the smallest `F^α`
//! is compared with what `R` would be at `t` if nobody left; if it is not above, that
//! conversation left the fluid system first: the checkpoint moves to the instant `R`
//! reached its `F^α`, `R := F^α`, it is removed, and the test repeats with the new (larger)
//! slope. An arrival to an inactive conversation moves the checkpoint to `t` and adds its
//! weight. With no conversation active, `R` is frozen (spec §1.2).
//!
//! # Units and exactness
//!
//! `R`, `F^α`, bids and offsets are `u128` counts of [`UNITS_PER_BYTE`]ths of a byte per
//! unit of weight: `8 · 10^9 · 256` units per byte, so that on a link of `L` bit/s the
//! fluid server does exactly `L · 256` units of work per nanosecond. Time is never
//! fractional: the checkpoint is kept as **work done** `K = L · 256 · t` (units), and the
//! instant a conversation leaves is the work `K_x = K_chk + (F^α − R_chk) · W`, an exact
//! integer. So deletions are exact, and comparisons are multiplications (no division on
//! an arrival to an active conversation).
//!
//! Two roundings remain, both documented bounds:
//!
//! * an arrival to an inactive conversation reads `R(t) = R_chk + ⌊(K(t) − K_chk) / W⌋`,
//!   rounded **down** by less than one unit (`1 / 2.048·10^12` byte);
//! * a packet of `P` bytes adds `⌈P · UNITS_PER_BYTE / w⌉` to its conversation's finish
//!   number: exact for weight 1 (the paper), rounded **up** by less than one unit
//!   otherwise.
//!
//! Each rounding costs the fluid system less than `W_max` units of work (`W_max` the
//! largest total active weight), so after `A` activations and `P` packets of weight
//! other than 1 the computed `R` and finish numbers are within
//! `(A + P) · W_max / w_min` units of the exact ones. With weight 1 (`P = 0`), 16
//! conversations and 10 000 activations that is 1.6·10^5 units, below 10^-7 byte.
//! `tests/keshav_fluid.rs` checks this bound (counting every arrival in `A` and in `P`)
//! against an exact-rational fluid GPS (`linkshare_analysis::gps`); the paper's worked
//! example, where nothing rounds, is checked for equality below.
//!
//! Range: `K` fits `u128` for links up to 2^56 bit/s over the whole `u64` time range
//! (validation refuses faster links); finish numbers saturate at `u128::MAX` instead of
//! wrapping.
//!
//! # Cost
//!
//! The paper adjusts the heap on every arrival (`F^α` only grows). Here an arrival to
//! an active conversation only writes its new `F^α`; the heap keeps the older, smaller
//! key — still a lower bound — until the conversation reaches the heap's top and the
//! deletion test passes on that key: then it is re-keyed to its true `F^α` (one
//! O(log n) sift in the paper's heap, O(1) into a bucket in the packet path's form) and
//! the test runs again. The round number and the deletions are
//! exactly the paper's; the work is O(1) per arrival to an active conversation, O(log n)
//! per activation, per re-keying (at most one per arrival) and per conversation leaving
//! (at most one per activation): amortised O(log n) per packet, and O(1) while the
//! round number is far from every finish number. The work done at which the heap's top
//! leaves (by its possibly stale key) is kept from the deletion test that stopped, so
//! that an arrival before it compares one number and neither reads the heap nor
//! multiplies (after an activation the next arrival runs the test, as the paper's
//! every arrival does).
//!
//! "The heap" is one of two forms of the active set (`active.rs`): the paper's
//! binary heap, whose exchanges are counted ([`RoundNumber::heap_exchanges`], the
//! spec's `round_heap_swaps`), built by [`RoundNumber::counted`] for the cost study;
//! or uncounted buckets of round number with the nearest conversations in a small
//! exact heap, built by [`RoundNumber::new`] for the packet path, where the re-keyed
//! conversation (the smallest, its new key usually among the largest) usually moves to
//! a later bucket in O(1). Both give the same round number and finish numbers (a unit
//! test below runs them side by side).

use super::active::Active;
use super::buckets::ActiveBuckets;
use crate::ds::MinHeap;
use crate::units::{Bytes, Instant, Rate};

/// Fixed-point units of the round number per byte of service per unit of weight.
pub const UNITS_PER_BYTE: u128 = 8 * 1_000_000_000 * 256;

/// Fastest link the exact arithmetic supports: 2^56 bit/s.
pub const MAX_LINK_RATE: Rate = Rate(1 << 56);

/// `bytes` of service at weight `w` in round units, rounded up (exact when `w` divides
/// `bytes · UNITS_PER_BYTE`, in particular for weight 1).
#[inline]
pub fn units(bytes: u64, w: u64) -> u128 {
    let u = u128::from(bytes) * UNITS_PER_BYTE;
    if w == 1 {
        u
    } else {
        u.div_ceil(u128::from(w.max(1)))
    }
}

/// `bytes` as round units at weight 1 (offsets `δ` are given in bytes).
#[inline]
pub fn bytes_to_units(b: Bytes) -> u128 {
    units(b.0, 1)
}

/// What an arrival did to its conversation's finish number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    /// `F^α` before the arrival (0 for a conversation never seen).
    pub finish_before: u128,
    /// The packet's finish number `F_i`, now `F^α`.
    pub finish: u128,
    /// `R(t)` at the arrival if the conversation was inactive (then it was needed);
    /// `None` if it was active (then `F_i = F^α + P/w` without reading `R`).
    pub round: Option<u128>,
}

/// One conversation's state: 32 bytes, aligned so that a record never straddles two
/// cache lines.
#[derive(Clone, Copy, Debug)]
#[repr(align(32))]
struct Conv {
    /// `F^α`.
    finish: u128,
    /// `w_α`.
    weight: u64,
    /// Whether it is active, i.e. in the heap of active conversations: kept here too,
    /// so that an arrival reads one record (the flag fills the record's padding).
    active: bool,
}

/// The round number and the conversations' finish numbers. See the [module docs](self).
#[derive(Clone, Debug)]
pub struct RoundNumber {
    /// Work per nanosecond: `L · 256` units.
    work_per_ns: u128,
    /// Checkpoint: work done `K_chk` and round number `R_chk`.
    k_chk: u128,
    r_chk: u128,
    /// Total weight of the active conversations.
    weight: u128,
    /// Every conversation's `F^α` and weight, by index (one record: one cache miss).
    convs: Vec<Conv>,
    /// The active conversations by `F^α` (a lower bound of it, see the
    /// [module docs](self)).
    active: Active,
    /// The work at which the heap's top leaves by its key (possibly stale, so a lower
    /// bound): `K_chk + (key − R_chk) · W`, or `u128::MAX` if the heap is empty or that
    /// exceeds `u128`; 0 after an activation (the next advance finds it). No
    /// conversation leaves before it, so that an arrival before it only compares the
    /// work done with it.
    next_leave: u128,
}

impl RoundNumber {
    /// A round number on a link of `rate` for conversations `0..weights.len()` with the
    /// given weights (each at least 1; 0 is taken as 1), its active conversations in the
    /// uncounted buckets (the packet path's; `buckets.rs`). `rate` must not exceed
    /// [`MAX_LINK_RATE`] (it is clamped to it).
    pub fn new(rate: Rate, weights: Vec<u64>) -> RoundNumber {
        let n = weights.len();
        let w_max = weights.iter().copied().max().unwrap_or(1);
        Self::with_active(
            rate,
            weights,
            Active::Uncounted(ActiveBuckets::new(n, w_max)),
        )
    }

    /// [`RoundNumber::new`] with the active conversations in the paper's binary heap,
    /// whose exchanges are counted ([`RoundNumber::heap_exchanges`]): for the cost study.
    pub fn counted(rate: Rate, weights: Vec<u64>) -> RoundNumber {
        let n = weights.len();
        Self::with_active(rate, weights, Active::Counted(MinHeap::with_items(n)))
    }

    fn with_active(rate: Rate, weights: Vec<u64>, active: Active) -> RoundNumber {
        RoundNumber {
            work_per_ns: u128::from(rate.0.min(MAX_LINK_RATE.0)) * 256,
            k_chk: 0,
            r_chk: 0,
            weight: 0,
            convs: weights
                .into_iter()
                .map(|w| Conv {
                    finish: 0,
                    weight: w.max(1),
                    active: false,
                })
                .collect(),
            active,
            next_leave: u128::MAX,
        }
    }

    #[inline]
    fn work_at(&self, now: Instant) -> u128 {
        self.work_per_ns * u128::from(now.as_nanos())
    }

    /// Brings the checkpoint up to `now`: removes, in order, every conversation whose
    /// finish number the round number has reached by `now` (Fig. 1).
    #[inline]
    pub fn advance(&mut self, now: Instant) {
        let k = self.work_at(now);
        if k >= self.next_leave {
            self.leave(k);
        }
    }

    /// [`RoundNumber::advance`] to the work `k`, at or after `next_leave`; sets
    /// `next_leave` from the product that stopped the deletions.
    #[inline(never)]
    fn leave(&mut self, k: u128) {
        self.next_leave = loop {
            let convs = &self.convs;
            let Some((c, key)) = self.active.peek(|c| convs[c as usize].finish) else {
                break u128::MAX;
            };
            let to_go = key.saturating_sub(self.r_chk);
            let Some(w) = to_go.checked_mul(self.weight) else {
                break u128::MAX;
            };
            if w > k - self.k_chk {
                break self.k_chk.saturating_add(w);
            }
            let conv = self.convs[c as usize];
            let f = conv.finish;
            if f != key {
                // A stale key: the conversation has more to send; re-key it and look
                // at the smallest again.
                self.active.rekey_min(c, f);
                continue;
            }
            self.k_chk += w;
            self.r_chk = f;
            self.weight -= u128::from(conv.weight);
            self.convs[c as usize].active = false;
            self.active.pop_min();
        };
    }

    /// `R(now)` after [`RoundNumber::advance`] to `now`, rounded down.
    #[inline]
    fn current(&self, now: Instant) -> u128 {
        if self.weight == 0 {
            return self.r_chk;
        }
        self.r_chk + (self.work_at(now) - self.k_chk) / self.weight
    }

    /// The round number at `now` (not before any earlier call's instant), rounded down.
    pub fn at(&mut self, now: Instant) -> u128 {
        self.advance(now);
        self.current(now)
    }

    /// [`RoundNumber::arrive`] if no conversation leaves by `now` and `c` is active
    /// (then `F_i = F^α + len / w`, without reading `R`), else `None` and nothing is
    /// changed: for a caller whose arrivals mostly find their conversation active, which
    /// keeps the rest of [`RoundNumber::arrive`] out of its own code.
    #[inline]
    pub fn arrive_if_active(&mut self, now: Instant, c: u32, len: u64) -> Option<Arrival> {
        if self.work_at(now) >= self.next_leave {
            return None;
        }
        let conv = &mut self.convs[c as usize];
        if !conv.active {
            return None;
        }
        let before = conv.finish;
        let f = before.saturating_add(units(len, conv.weight));
        conv.finish = f;
        Some(Arrival {
            finish_before: before,
            finish: f,
            round: None,
        })
    }

    /// A packet of `len` bytes of conversation `c` arrives at `now`: brings `R` up to
    /// date and computes its finish number `F_i = max(F^α, R(now)) + len / w`.
    #[inline]
    pub fn arrive(&mut self, now: Instant, c: u32, len: u64) -> Arrival {
        self.advance(now);
        let i = c as usize;
        let Conv {
            finish: before,
            weight,
            active,
        } = self.convs[i];
        let inc = units(len, weight);
        if active {
            // The heap keeps the old, smaller key until the conversation reaches its top
            // (see `advance`): a key increase costs nothing here.
            let f = before.saturating_add(inc);
            self.convs[i].finish = f;
            return Arrival {
                finish_before: before,
                finish: f,
                round: None,
            };
        }
        let r = self.current(now);
        self.k_chk = self.work_at(now);
        self.r_chk = r;
        self.weight += u128::from(weight);
        let f = r.saturating_add(inc);
        self.convs[i] = Conv {
            finish: f,
            weight,
            active: true,
        };
        self.active.insert(c, f);
        // The slope changed: the next advance looks for the next departure.
        self.next_leave = 0;
        Arrival {
            finish_before: before,
            finish: f,
            round: Some(r),
        }
    }

    /// `F^α` of conversation `c`: the finish number of its latest packet.
    pub fn finish_of(&self, c: u32) -> u128 {
        self.convs[c as usize].finish
    }

    /// Whether `c` is active (has bits in the fluid system) as of the last advance.
    pub fn is_active(&self, c: u32) -> bool {
        self.convs.get(c as usize).is_some_and(|conv| conv.active)
    }

    /// Number of active conversations as of the last advance.
    pub fn active_count(&self) -> usize {
        self.active.len()
    }

    /// Exchanges in the heap of active conversations so far, if it is the counted heap
    /// ([`RoundNumber::counted`]); `None` otherwise.
    pub fn heap_exchanges(&self) -> Option<u64> {
        self.active.exchanges()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The paper's worked example (spec R1) with one byte per ns (L = 8 Gbit/s): A sends
    /// 100 B at 0, B 100 B at 50.
    #[test]
    fn paper_example() {
        let b = |x: u128| x * UNITS_PER_BYTE;
        let mut r = RoundNumber::new(Rate(8_000_000_000), vec![1, 1]);
        let a = r.arrive(Instant(0), 0, 100);
        assert_eq!((a.round, a.finish), (Some(0), b(100)));
        let bb = r.arrive(Instant(50), 1, 100);
        assert_eq!((bb.round, bb.finish), (Some(b(50)), b(150)));
        assert_eq!(r.at(Instant(100)), b(75));
        assert!(r.is_active(0));
        assert_eq!(r.at(Instant(149)), b(99) + b(1) / 2);
        assert_eq!(r.at(Instant(150)), b(100));
        assert!(!r.is_active(0), "A leaves when R reaches 100, at t = 150");
        assert_eq!(r.at(Instant(200)), b(150));
        assert!(!r.is_active(1), "B leaves at equality (Fig. 1)");
        assert_eq!(r.at(Instant(250)), b(150), "frozen while empty");
        let c = r.arrive(Instant(300), 0, 10);
        assert_eq!(c.finish, b(160), "F = R + P after an idle period");
    }

    /// The uncounted buckets and the counted heap give the same round number: a
    /// pseudo-random run of arrivals (clock steps from none to several packet times,
    /// some conversations sending far more than their share), the same arrival results,
    /// round numbers, active sets and finish numbers after each. Weights 1 to 3, then
    /// weights 1 to 1 000 (the light conversations' finish numbers far beyond the
    /// buckets' ring, whose width the heaviest sets).
    #[test]
    fn uncounted_buckets_and_counted_heap_agree() {
        agree(
            vec![1, 2, 3, 1, 1, 2, 1, 1, 1, 3, 1, 2],
            0x2545_f491_4f6c_dd1d,
        );
        agree(
            vec![1_000, 1, 7, 1_000, 1, 30, 1, 1_000, 2, 1],
            0x9e37_79b9_7f4a_7c15,
        );
    }

    fn agree(weights: Vec<u64>, seed: u64) {
        let n = weights.len() as u64;
        let rate = Rate(8_000_000_000);
        let mut fast = RoundNumber::new(rate, weights.clone());
        let mut counted = RoundNumber::counted(rate, weights);
        let mut rng = crate::workload::Prng(seed);
        let mut now = 0u64;
        for _ in 0..50_000 {
            let state = rng.next_u64();
            now += [0, 0, 0, 40, 700, 3_000, 20_000][(state % 7) as usize];
            // Conversations 0 and 1 send four times as often as the others.
            let c = (state >> 8) % (n + 6);
            let c = if c >= n { (c - n) % 2 } else { c } as u32;
            let len = 40 + (state >> 16) % 1_460;
            let at = Instant(now);
            assert_eq!(fast.arrive(at, c, len), counted.arrive(at, c, len));
            assert_eq!(fast.at(at), counted.at(at));
            assert_eq!(fast.active_count(), counted.active_count());
            for d in 0..n as u32 {
                assert_eq!(fast.is_active(d), counted.is_active(d));
                assert_eq!(fast.finish_of(d), counted.finish_of(d));
            }
        }
        assert!(counted.heap_exchanges().is_some_and(|x| x > 0));
        assert_eq!(fast.heap_exchanges(), None);
    }

    /// `arrive_if_active` answers exactly when `arrive` would not read `R` (an active
    /// conversation, no departure due), with `arrive`'s result, and otherwise changes
    /// nothing: a pseudo-random run of arrivals with clock steps from none to several
    /// packet times, weights 1 to 3, each arrival tried both ways on copies.
    #[test]
    fn arrive_if_active_is_arrive_where_it_answers() {
        let mut r = RoundNumber::new(Rate(8_000_000_000), vec![1, 2, 3, 1, 1, 2]);
        let mut rng = crate::workload::Prng(0x9e37_79b9_7f4a_7c15);
        let (mut now, mut answered) = (0u64, 0);
        for _ in 0..20_000 {
            let state = rng.next_u64();
            now += [0, 0, 0, 40, 700, 3_000][(state % 6) as usize];
            let (c, len) = ((state >> 8) as u32 % 6, 40 + (state >> 16) % 1_460);
            let before = r.clone();
            let want = r.arrive(Instant(now), c, len);
            let mut tried = before.clone();
            let same = |x: &RoundNumber, y: &RoundNumber| {
                (0..6).all(|d| x.finish_of(d) == y.finish_of(d) && x.is_active(d) == y.is_active(d))
                    && x.active_count() == y.active_count()
            };
            match tried.arrive_if_active(Instant(now), c, len) {
                Some(a) => {
                    assert_eq!((a, want.round), (want, None));
                    assert!(same(&tried, &r), "the same state as after arrive");
                    answered += 1;
                }
                None => assert!(same(&tried, &before), "nothing changed"),
            }
        }
        assert!(answered > 1_000, "the fast path ran ({answered} times)");
    }
}
