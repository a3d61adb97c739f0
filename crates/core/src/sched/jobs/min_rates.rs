//! The absolute delay and throughput bounds (paper §3.2, Eqs. 10–11; the loss loop's
//! second pass, Eq. 36; spec §2.1 and §2.7): the minimum rate each backlogged class
//! needs, and when the rates fall short, the greedy reallocation and the drops that
//! make the bounds feasible again.
//!
//! A class with a delay bound `d_i` whose head packet has waited `D_i` clears its
//! backlog `B_i` in time at `B_i / (d_i − D_i)` (Eq. 10: the backlog is treated as one
//! burst behind the head); with a throughput bound `μ_i` it needs at least `μ_i`
//! (Eq. 11). Rates are in bit/s, rounded up. A need above the link rate is kept as it
//! is, so that a class holding the whole link can still be short and drop (Eq. 36); a
//! class whose head is already late is short whatever its rate (ns-2 gives it an
//! infinite need, as Eq. 36 implies; ALTQ gives it the link rate, so that a late class
//! that already holds the whole link keeps its late backlog).
//!
//! When some backlogged class is allocated less than its minimum, rate moves from
//! donors to needy classes: needs are met in increasing index order (the most
//! important class first), donors are drained from the highest index down, each only
//! down to its own minimum (an unconstrained class can give everything). If a class
//! still falls short, it drops packets from its own tail until what remains can leave
//! by its deadline at the rate it has, `B_i ≤ r_i · (d_i − D_i)` — but never beyond its
//! loss bound (loss bounds come first). A throughput bound cannot be helped by dropping.

use super::config::Mode;
use super::curves::NANOBITS_PER_BYTE;
use super::{Jobs, bits};
use crate::sched::{DropReason, Dropped, Packet};
use crate::units::Instant;

/// `r_i^min` of Eq. 11 in bit/s, rounded up: for `backlog` bytes whose oldest packet
/// has waited `wait` ns, with delay bound `delay_bound` ns and throughput bound
/// `min_rate` bit/s (0 for none). A class whose head is already late needs more than any
/// rate ([`u64::MAX`]): Eq. 36 cannot hold while it has a backlog.
pub(super) fn required_rate(
    backlog: u64,
    wait: u64,
    delay_bound: Option<u64>,
    min_rate: u64,
) -> u64 {
    let for_delay = match delay_bound {
        None => 0,
        Some(d) if wait >= d => u64::MAX,
        Some(d) => match backlog.checked_mul(NANOBITS_PER_BYTE as u64) {
            // Below 2.3 GB of backlog, all in 64 bits.
            Some(nanobits) => nanobits.div_ceil(d - wait),
            None => {
                let r = (u128::from(backlog) * NANOBITS_PER_BYTE).div_ceil(u128::from(d - wait));
                u64::try_from(r).unwrap_or(u64::MAX)
            }
        },
    };
    for_delay.max(min_rate)
}

/// The greedy reallocation (spec §2.7 steps 1–3, ALTQ `assign_rate_drops_adc`):
/// `surplus[i]` is what class `i` can give (`r_i − r_i^min`; negative: what it needs).
/// Moves rate from the highest-index donor to the lowest-index needy class until one
/// side runs out; `rates` and `surplus` are updated. Returns whether a class is still
/// short. With `forget_first` (a reference bug, [`super::ReferenceBugs`]), a first class
/// that is short when no other class can give anything has its need dropped.
pub(super) fn reallocate(surplus: &mut [i128], rates: &mut [u64], forget_first: bool) -> bool {
    let n = surplus.len();
    let needy = |s: &[i128], from: usize| (from..n).find(|&k| s[k] < 0);
    let donor = |s: &[i128], below: usize| (0..below).rev().find(|&k| s[k] > 0);
    let mut h = needy(surplus, 0);
    let mut l = donor(surplus, n);
    if forget_first && h == Some(0) && l.is_none_or(|l| l == 0) {
        surplus[0] = 0;
        h = needy(surplus, 1);
    }
    while let (Some(hi), Some(lo)) = (h, l) {
        let give = surplus[lo].min(-surplus[hi]);
        rates[lo] -= give as u64;
        rates[hi] += give as u64;
        surplus[lo] -= give;
        surplus[hi] += give;
        if surplus[hi] == 0 {
            h = needy(surplus, hi + 1);
        }
        if surplus[lo] == 0 {
            l = donor(surplus, lo);
        }
    }
    h.is_some()
}

impl<P: Packet> Jobs<P> {
    /// Computes every bounded class's minimum rate at `now` (0 if empty); whether some
    /// backlogged class has less than its minimum.
    pub(super) fn update_min_rates(&mut self, now: Instant) -> bool {
        let mut short = false;
        for k in bits(self.setup.bounded) {
            let min = if self.backlogged & 1 << k == 0 {
                0
            } else {
                let s = &self.setup.classes[k];
                required_rate(
                    self.classes[k].bytes,
                    self.head_wait(k, now),
                    s.delay_bound,
                    s.min_rate,
                )
            };
            self.classes[k].min_rate = min;
            short |= min > self.classes[k].rate;
        }
        short
    }

    /// The min-rate stage: greedy reallocation, then delay-driven drops from the classes
    /// still short, then the minimum rates the proportional loop must respect (spec
    /// §2.7 step 5).
    pub(super) fn meet_bounds(&mut self, now: Instant, evicted: &mut Vec<Dropped<P>>) {
        let bugs = match self.setup.mode {
            Mode::Reference(bugs) => bugs,
            Mode::Paper { .. } => Default::default(),
        };
        let Jobs {
            classes, scratch, ..
        } = self;
        let (surplus, rates) = (&mut scratch.errors, &mut scratch.rates);
        for (k, c) in classes.iter().enumerate() {
            surplus[k] = i128::from(c.rate) - i128::from(c.min_rate);
            rates[k] = c.rate;
        }
        reallocate(surplus, rates, bugs.first_class_without_donor);
        let mut needy = 0u64;
        for (k, (c, &r)) in classes.iter_mut().zip(rates.iter()).enumerate() {
            c.rate = r;
            if surplus[k] < 0 {
                needy |= 1 << k;
            }
        }
        let mut stopped = false;
        for k in bits(self.setup.bounded & self.backlogged & needy) {
            let s = self.setup.classes[k];
            if self.classes[k].rate < s.min_rate {
                self.classes[k].relaxed.min_rate += 1;
            }
            let Some(d) = s.delay_bound else { continue };
            let wait = self.head_wait(k, now);
            let allowance = if wait >= d {
                0
            } else {
                let bytes =
                    u128::from(self.classes[k].rate) * u128::from(d - wait) / NANOBITS_PER_BYTE;
                u64::try_from(bytes).unwrap_or(u64::MAX)
            };
            while !stopped && self.classes[k].bytes > allowance {
                let tail = self.classes[k].queue.back().map(|q| q.pkt.wire_len());
                let Some(tail) = tail else { break };
                if let Some(bound) = s.loss_bound
                    && !self.classes[k].curves.may_drop(u64::from(tail), bound)
                {
                    stopped = bugs.global_drop_stop;
                    break;
                }
                self.evict_tail(k, DropReason::DelayBound, evicted);
            }
            if self.classes[k].bytes > allowance {
                self.classes[k].relaxed.delay_bound += 1;
            }
        }
        for k in bits(self.setup.bounded) {
            let s = self.setup.classes[k];
            let c = &self.classes[k];
            let min = if self.backlogged & 1 << k == 0 {
                0
            } else {
                match s.delay_bound {
                    Some(_) if s.min_rate == 0 => {
                        required_rate(c.bytes, self.head_wait(k, now), s.delay_bound, 0)
                    }
                    Some(d) if self.head_wait(k, now) >= d => u64::MAX,
                    _ => c.rate,
                }
            };
            self.classes[k].min_rate = min;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Spec §7.1 test 4: 50 000 bytes, an 8 ms bound and 3 ms waited need 10⁷ B/s
    /// (80 Mbit/s); with a 100 Mbit/s throughput bound that is the larger; a late head
    /// needs more than any rate; an empty class (no backlog, no bound) needs nothing.
    #[test]
    fn minimum_rates() {
        let ms = 1_000_000;
        assert_eq!(required_rate(50_000, 3 * ms, Some(8 * ms), 0), 80_000_000);
        assert_eq!(
            required_rate(50_000, 3 * ms, Some(8 * ms), 100_000_000),
            100_000_000
        );
        assert_eq!(required_rate(50_000, 8 * ms, Some(8 * ms), 0), u64::MAX);
        assert_eq!(required_rate(1, 9 * ms, Some(8 * ms), 5), u64::MAX);
        assert_eq!(required_rate(0, 0, None, 0), 0);
        // Rounded up: 1 byte in 3 ns is 2.67 Gbit/s.
        assert_eq!(required_rate(1, 0, Some(3), 0), 2_666_666_667);
        // Beyond 2.3 GB, in 128 bits; beyond any rate, saturated.
        assert_eq!(required_rate(1 << 40, 0, Some(1 << 40), 0), 8_000_000_000);
        assert_eq!(required_rate(u64::MAX, 0, Some(1), 0), u64::MAX);
    }

    /// Spec §7.1 test 7 and its table: the greedy reallocation, rates and surpluses in
    /// the spec's units (C = 100).
    #[test]
    fn greedy_reallocation_table() {
        struct Case {
            rates: [u64; 4],
            surplus: [i128; 4],
            want: [u64; 4],
            short: bool,
        }
        let cases = [
            // The spec's example: class 4 gives all 25 (class 1 still short by 5), then
            // class 3 gives 5; class 2 untouched.
            Case {
                rates: [25, 25, 25, 25],
                surplus: [-30, 5, 10, 25],
                want: [55, 25, 20, 0],
                short: false,
            },
            // Infeasible: class 1 still short after every donor gave all it could.
            Case {
                rates: [25, 25, 25, 25],
                surplus: [-80, 5, 10, 25],
                want: [65, 20, 15, 0],
                short: true,
            },
            // Only class 1 backlogged and needy (its own rate is the whole link).
            Case {
                rates: [100, 0, 0, 0],
                surplus: [-20, 0, 0, 0],
                want: [100, 0, 0, 0],
                short: true,
            },
            // Two needy classes: the more important one is served first.
            Case {
                rates: [25, 25, 25, 25],
                surplus: [-10, -30, 5, 25],
                want: [35, 45, 20, 0],
                short: true,
            },
            // A donor below a needy class (lower index) gives too.
            Case {
                rates: [40, 20, 20, 20],
                surplus: [30, 0, -25, 0],
                want: [15, 20, 45, 20],
                short: false,
            },
            // Nobody short: nothing moves.
            Case {
                rates: [25, 25, 25, 25],
                surplus: [0, 5, 10, 25],
                want: [25, 25, 25, 25],
                short: false,
            },
        ];
        for (n, c) in cases.iter().enumerate() {
            let (mut rates, mut surplus) = (c.rates, c.surplus);
            let short = reallocate(&mut surplus, &mut rates, false);
            assert_eq!((rates, short), (c.want, c.short), "case {n}");
            assert_eq!(rates.iter().sum::<u64>(), 100, "case {n}: rate conserved");
        }
    }

    /// ALTQ's first-class edge case, reproduced on request: with no donor, class 1's
    /// need is forgotten (fixed: it stays short and will drop).
    #[test]
    fn first_class_without_donor() {
        let (mut rates, mut surplus) = ([100, 0], [-20i128, 0]);
        assert!(reallocate(&mut surplus, &mut rates, false));
        let (mut rates, mut surplus) = ([100, 0], [-20i128, 0]);
        assert!(!reallocate(&mut surplus, &mut rates, true));
        assert_eq!(surplus, [0, 0]);
    }
}
