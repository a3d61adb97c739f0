//! The proportional delay loop (paper §4, Eqs. 12–33; spec §2.2–2.5 and §2.8): within
//! each delay group, move rate from classes whose weighted delay is below the group's
//! mean to those above it, `Δr_i = K(n) · e_i(n)`.
//!
//! With the group's integer weights `W_i` (module `groups`) and `D_i` the head-of-line
//! wait, the weighted delay is `W_i · D_i` (Eq. 15 up to one constant factor), the set
//! point their mean over the group's backlogged members (Eq. 17), and the error
//! `ê_i = mean − W_i · D_i` (Eq. 18), in ns·W. Errors add up to zero, so the rate
//! changes `Δr_i = −g · ê_i` do too (Eq. 20): the group keeps the rate it holds. In
//! integers: `E_i = n · ê_i = Σ_j W_j D_j − n · W_i D_i` is exact; each change is
//! rounded toward zero, and the last member's is minus the sum of the others', so the
//! group's total is conserved exactly.
//!
//! The gain `g = −K` is kept per unit of `E`, `G = g / n` (bit/s per ns·W, fixed point
//! with 32 fractional bits), so that `Δr_i = −G · E_i`:
//!
//! * **reference mode** (ALTQ `adjust_rates_rdc`): `K = −2 U² s / (P_max L̄)` in bytes
//!   and seconds (spec §2.8), `U` the rate the group holds, `s` the smallest share of
//!   the admitted bytes of the busy period that a backlogged class has among the
//!   group's (at most 1), `P_max` the largest weight among the backlogged members and
//!   `L̄` the largest mean admitted packet size among them. In our units
//!   `g = U² · s / (4 · 10⁹ · W_max · L̄)`. After the step, the reference's clipping
//!   (spec §2.8 step 4): a member taken below its floor is raised to it, the rate this
//!   costs is taken back from the members above their floors, highest index first, and
//!   a member that would exceed the group's rate gets what the others' floors leave.
//! * **paper mode**: first, members held at their floor whose delay is below target
//!   leave the loop for this update (they cannot give rate; their ratio gives way to
//!   their bound), and the others' errors are taken about their own mean. Then
//!   `K = γ · K_lo` with Eq. 32's stability limit `K_lo = −2 min_i B_i / (P_i D_i²)`
//!   over the members that have waited (`g = 16·10⁹ · γ · min_i B_i / (W_i D_i²)`;
//!   `γ = ½` puts the binding class's pole at 0), or the reference gain if none has.
//!   A step that would take a member below its floor stops there, and what this costs
//!   is taken from the members whose rate rises, in proportion to their rise (Eq. 33
//!   class by class; module docs of `jobs` on why not one common `K`, and why not the
//!   reference's highest-index-first recovery, which biases the last class).
//!
//! A member's floor is its minimum rate, or its rate now if that is less: when the
//! bounds cannot all be met the min-rate stage has already given each class what it
//! could, and the proportional loop cannot create rate.

use super::config::Mode;
use super::config::Setup;
use super::{Class, Jobs, bits};
use crate::sched::Packet;
use crate::units::{Fraction, Instant, NANOS_PER_SEC};

/// Fractional bits of the gains.
const GAIN_SHIFT: u32 = 32;

/// The group's errors `E_i = Σ_j W_j D_j − n · W_i D_i` (`n` members).
pub(super) fn errors(weights: &[u64], delays: &[u64], out: &mut [i128]) {
    let weighted = |i: usize| i128::from(weights[i]) * i128::from(delays[i]);
    let sum: i128 = (0..weights.len()).map(weighted).sum();
    let n = weights.len() as i128;
    for (i, e) in out.iter_mut().enumerate() {
        *e = sum - n * weighted(i);
    }
}

/// The reference gain per unit of `E` for `n` members, `U² · s / (4 · 10⁹ · W_max · L̄
/// · n)` with 32 fractional bits, where `share` is `s` with 32 fractional bits;
/// saturates.
pub(super) fn reference_gain(
    held: u64,
    share: u64,
    max_weight: u64,
    mean_packet: u64,
    n: usize,
) -> u128 {
    let den = 4
        * u128::from(NANOS_PER_SEC)
        * u128::from(max_weight)
        * u128::from(mean_packet)
        * n as u128;
    if den == 0 {
        return 0;
    }
    let u2 = u128::from(held) * u128::from(held);
    match u2.checked_mul(u128::from(share)) {
        Some(num) => num / den,
        // Above 2⁹⁶ (bit/s)² only: divide first, losing fractional bits of a huge gain.
        None => (u2 / den).saturating_mul(u128::from(share)),
    }
}

/// Eq. 32's stability limit for one of `n` members, per unit of `E`:
/// `16 · 10⁹ · B / (W D² n)` with 32 fractional bits (`B` bytes, `D` ns, `W` its
/// weight); `None` if it has not waited (no limit).
pub(super) fn stability_gain(backlog: u64, weight: u64, delay: u64, n: usize) -> Option<u128> {
    if delay == 0 {
        return None;
    }
    let den = (u128::from(weight) * n as u128)
        .checked_mul(u128::from(delay))
        .and_then(|x| x.checked_mul(u128::from(delay)));
    let Some(den) = den else { return Some(0) };
    let num = ((16 * u128::from(NANOS_PER_SEC)) << GAIN_SHIFT).saturating_mul(u128::from(backlog));
    Some(num / den)
}

/// Paper mode's gain per unit of `E` for a loop of the `members` given as (backlog
/// bytes, weight, wait ns): `γ` times the smallest of their stability limits (Eq. 32),
/// or `None` if none has waited.
pub(super) fn paper_gain(
    members: impl ExactSizeIterator<Item = (u64, u64, u64)>,
    gamma: Fraction,
) -> Option<u128> {
    let n = members.len();
    members
        .filter_map(|(backlog, weight, wait)| stability_gain(backlog, weight, wait, n))
        .min()
        .map(|g| g.saturating_mul(u128::from(gamma.ppb())) / u128::from(Fraction::PPB))
}

/// The rate changes `Δ_i = −G · E_i` for a gain `G` per unit of error (32 fractional
/// bits), each rounded toward zero and at most `cap` in size, the last one minus the
/// sum of the others.
pub(super) fn steps(gain: u128, errors: &[i128], cap: u64, out: &mut [i128]) {
    let n = errors.len();
    let mut sum = 0i128;
    for (i, &e) in errors[..n - 1].iter().enumerate() {
        let size = gain
            .checked_mul(e.unsigned_abs())
            .map_or(u128::MAX, |x| x >> GAIN_SHIFT)
            .min(u128::from(cap)) as i128;
        out[i] = if e > 0 { -size } else { size };
        sum += out[i];
    }
    out[n - 1] = -sum;
}

/// The reference's clipping (module docs): applies `deltas` to `rates` so that every
/// rate stays within `[floor, held]` and the total stays `held` (the sum of `rates`,
/// at least the sum of `floors`). Returns the members whose step a positive floor (a
/// bound, not a rate of 0) cut short (bit `i`).
pub(super) fn clip(rates: &[u64], floors: &[u64], deltas: &mut [i128], held: u64) -> u64 {
    let n = rates.len();
    let (r, f) = (
        |i: usize| i128::from(rates[i]),
        |i: usize| i128::from(floors[i]),
    );
    let mut cut = 0u64;
    let mut credit = 0i128;
    for i in 0..n {
        if r(i) + deltas[i] > i128::from(held) {
            let others: i128 = (0..n).filter(|&j| j != i).map(f).sum();
            for (j, d) in deltas.iter_mut().enumerate() {
                *d = if j == i {
                    i128::from(held) - others - r(i)
                } else {
                    f(j) - r(j)
                };
            }
            return (0..n)
                .filter(|&j| j != i && floors[j] > 0)
                .fold(0, |m, j| m | 1 << j);
        }
        if r(i) + deltas[i] < f(i) {
            credit += f(i) - (r(i) + deltas[i]);
            deltas[i] = f(i) - r(i);
            if floors[i] > 0 {
                cut |= 1 << i;
            }
        }
    }
    for i in (0..n).rev() {
        if credit == 0 {
            break;
        }
        let take = (r(i) + deltas[i] - f(i)).clamp(0, credit);
        deltas[i] -= take;
        credit -= take;
    }
    cut
}

/// The paper mode's saturation at the floors: a step that would take a member below
/// its floor stops at the floor, and what this costs is taken from the members whose
/// rate rises, in proportion to their rise (no member is favoured by its index). The
/// steps must add up to zero and start from rates at or above the floors; they still
/// do. Returns the members a positive floor (a bound) stopped.
pub(super) fn clip_proportionally(rates: &[u64], floors: &[u64], deltas: &mut [i128]) -> u64 {
    let mut cut = 0u64;
    let mut credit = 0i128;
    for (i, d) in deltas.iter_mut().enumerate() {
        let (r, f) = (i128::from(rates[i]), i128::from(floors[i]));
        if r + *d < f {
            credit += f - (r + *d);
            *d = f - r;
            if floors[i] > 0 {
                cut |= 1 << i;
            }
        }
    }
    if credit == 0 {
        return cut;
    }
    let rise: i128 = deltas.iter().filter(|&&d| d > 0).sum();
    let mut left = credit;
    for d in deltas.iter_mut().filter(|d| **d > 0) {
        let take = credit * *d / rise;
        *d -= take;
        left -= take;
    }
    // The remainder of the divisions, one bit/s at a time, from the largest rises.
    while left > 0 {
        let (_, d) = deltas
            .iter_mut()
            .enumerate()
            .max_by_key(|(i, d)| (**d, core::cmp::Reverse(*i)))
            .expect("a rise covers the credit");
        *d -= 1;
        left -= 1;
    }
    cut
}

impl<P: Packet> Jobs<P> {
    /// Runs the proportional loop of every delay group at `now`.
    pub(super) fn adjust_ratios(&mut self, now: Instant) {
        for g in 0..self.setup.delay.members.len() {
            self.adjust_group(g, now);
        }
    }

    fn adjust_group(&mut self, g: usize, now: Instant) {
        let Jobs {
            setup,
            classes,
            scratch: s,
            backlogged,
            ..
        } = self;
        let members = setup.delay.members[g] & *backlogged;
        let n = members.count_ones() as usize;
        if n < 2 {
            return;
        }
        let (idx, rates, floors) = (&mut s.idx[..n], &mut s.rates[..n], &mut s.floors[..n]);
        let (weights, waits) = (&mut s.weights[..n], &mut s.waits[..n]);
        let (errs, deltas) = (&mut s.errors[..n], &mut s.deltas[..n]);
        let mut held = 0u64;
        for (m, k) in bits(members).enumerate() {
            let c = &classes[k];
            idx[m] = k;
            rates[m] = c.rate;
            floors[m] = c.min_rate.min(c.rate);
            weights[m] = setup.delay.weight[k];
            waits[m] = c
                .queue
                .front()
                .map_or(0, |q| now.0.saturating_sub(q.arrival.0));
            held += c.rate;
        }
        if held == 0 {
            return;
        }
        errors(weights, waits, errs);
        let (n, bounded) = match setup.mode {
            Mode::Reference(_) => {
                let gain = reference_gain_of(classes, setup, *backlogged, members, held);
                steps(gain, errs, held, deltas);
                (n, clip(rates, floors, deltas, held))
            }
            Mode::Paper { gain: gamma } => {
                // Members held at their floor whose delay is below target leave the loop
                // for this update; the others are steered about their own mean.
                let mut held_back = 0u64;
                let mut a = 0;
                for m in 0..n {
                    if errs[m] > 0 && rates[m] <= floors[m] {
                        if floors[m] > 0 {
                            classes[idx[m]].relaxed.delay_ratio += 1;
                        }
                        held_back += rates[m];
                        continue;
                    }
                    (idx[a], rates[a], floors[a]) = (idx[m], rates[m], floors[m]);
                    (weights[a], waits[a]) = (weights[m], waits[m]);
                    a += 1;
                }
                if a < 2 {
                    return;
                }
                let held = held - held_back;
                errors(&weights[..a], &waits[..a], &mut errs[..a]);
                let gain = paper_gain(
                    (0..a).map(|m| (classes[idx[m]].bytes, weights[m], waits[m])),
                    gamma,
                )
                .unwrap_or_else(|| reference_gain_of(classes, setup, *backlogged, members, held));
                steps(gain, &errs[..a], held, &mut deltas[..a]);
                (
                    a,
                    clip_proportionally(&rates[..a], &floors[..a], &mut deltas[..a]),
                )
            }
        };
        for m in 0..n {
            let c = &mut classes[idx[m]];
            c.rate = (i128::from(rates[m]) + deltas[m]) as u64;
            if bounded & 1 << m != 0 {
                c.relaxed.delay_ratio += 1;
            }
        }
    }
}

/// The reference gain for the backlogged `members` of a delay group holding `held`
/// bit/s, `backlogged` the backlogged classes.
fn reference_gain_of<P>(
    classes: &[Class<P>],
    setup: &Setup,
    backlogged: u64,
    members: u64,
    held: u64,
) -> u128 {
    let (mut admitted, mut max_weight) = (0u64, 0u64);
    // The largest mean packet size, as the fraction bytes / packets.
    let (mut bytes, mut packets) = (0u64, 1u64);
    for k in bits(members) {
        let c = &classes[k].curves;
        let a = c.admitted();
        admitted += a;
        max_weight = max_weight.max(setup.delay.weight[k]);
        if c.admitted_packets > 0
            && u128::from(a) * u128::from(packets)
                > u128::from(bytes) * u128::from(c.admitted_packets)
        {
            (bytes, packets) = (a, c.admitted_packets);
        }
    }
    if admitted == 0 {
        return 0;
    }
    // s: the smallest admitted bytes of a backlogged class over the group's, at most 1.
    let least = bits(backlogged)
        .map(|k| classes[k].curves.admitted())
        .min()
        .unwrap_or(admitted)
        .min(admitted);
    let share = match least
        .checked_shl(GAIN_SHIFT)
        .filter(|_| least < 1 << GAIN_SHIFT)
    {
        Some(scaled) => scaled / admitted,
        None => ((u128::from(least) << GAIN_SHIFT) / u128::from(admitted)) as u64,
    };
    let n = members.count_ones() as usize;
    reference_gain(held, share, max_weight, bytes / packets, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Spec §7.1 test 2: delays 1, 2, 4 ms in group {2, 3, 4} with ratios 2 are on
    /// target: every error is exactly 0, and no rate changes.
    #[test]
    fn equilibrium_has_zero_errors() {
        let ms = 1_000_000;
        let mut e = [1i128; 3];
        errors(&[4, 2, 1], &[ms, 2 * ms, 4 * ms], &mut e);
        assert_eq!(e, [0, 0, 0]);
        let mut d = [7i128; 3];
        steps(u128::MAX, &e, 100, &mut d);
        assert_eq!(d, [0, 0, 0]);
    }

    /// Spec §7.1 test 3: errors and steps add up to exactly 0 for any delays.
    #[test]
    fn errors_and_steps_sum_to_zero() {
        let mut state: u64 = 99;
        let mut next = |m: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % m
        };
        for _ in 0..1000 {
            let n = 2 + next(7) as usize;
            let weights: Vec<u64> = (0..n).map(|_| 1 + next(64)).collect();
            let delays: Vec<u64> = (0..n).map(|_| next(50_000_000)).collect();
            let mut e = vec![0i128; n];
            errors(&weights, &delays, &mut e);
            assert_eq!(e.iter().sum::<i128>(), 0);
            let mut d = vec![0i128; n];
            steps(u128::from(next(1 << 40)), &e, 1_000_000_000, &mut d);
            assert_eq!(d.iter().sum::<i128>(), 0);
            // Higher weighted delay, more rate: signs oppose the errors (but the last).
            for i in 0..n - 1 {
                assert!(d[i] == 0 || (d[i] < 0) == (e[i] > 0), "{e:?} {d:?}");
            }
        }
    }

    /// Spec §7.1 test 14: the paper mode's gain lies in every member's stability
    /// interval and is dead-beat for the binding member with `γ = ½`. Checked on the
    /// linearised loop's pole (Eq. 28), computed here in the paper's units from the raw
    /// backlogs, weights and waits: with `Δr_i = −G · E_i` (bit/s, `E = n · ê`, ns·W),
    /// `ẑ_i = 1 + P_i B_i K / r̄_i² = 1 − W_i G n D_i² / (8·10⁹ B_i)`.
    #[test]
    fn paper_gain_is_stable() {
        let ms = 1_000_000u64;
        let members = [
            (50_000u64, 4u64, 2 * ms),
            (80_000, 2, 5 * ms),
            (20_000, 1, 9 * ms),
        ];
        let half = Fraction(Fraction::PPB / 2);
        let g = paper_gain(members.iter().copied(), half).expect("they have waited");
        let g = g as f64 / (1u64 << GAIN_SHIFT) as f64;
        let poles: Vec<f64> = members
            .iter()
            .map(|&(b, w, d)| 1.0 - w as f64 * g * 3.0 * (d as f64).powi(2) / (8e9 * b as f64))
            .collect();
        assert!(poles.iter().all(|z| z.abs() <= 1.0), "{poles:?}");
        let binding = poles.iter().fold(f64::INFINITY, |m, &z| m.min(z.abs()));
        assert!(binding < 1e-6, "{poles:?}");
        // γ = 1 puts the binding pole at −1, the edge of the interval.
        let g1 = paper_gain(members.iter().copied(), Fraction::ONE).unwrap() as f64;
        let g1 = g1 / (1u64 << GAIN_SHIFT) as f64;
        let (b, w, d) = members[2];
        let z = 1.0 - w as f64 * g1 * 3.0 * (d as f64).powi(2) / (8e9 * b as f64);
        assert!((z + 1.0).abs() < 1e-6, "{z}");
        // Nobody has waited: no limit (the reference gain is used).
        assert_eq!(
            paper_gain([(1000u64, 1u64, 0u64); 3].into_iter(), half),
            None
        );
    }

    /// Spec §7.1 test 8: a step that would take class 2 below its minimum is clipped at
    /// the minimum, and the rate this costs comes from class 4, then class 3; the total
    /// is conserved.
    #[test]
    fn clipping_redistributes_from_the_highest_index() {
        // Classes 2, 3, 4 hold 40, 30, 30; class 2's floor is 35; the step is −20, +5, +15.
        let rates = [40, 30, 30];
        let floors = [35, 0, 0];
        let mut d = [-20i128, 5, 15];
        let cut = clip(&rates, &floors, &mut d, 100);
        assert_eq!(cut, 0b001, "class 2's bound cut its step");
        // Class 2 gets −5 instead of −20; the 15 it keeps come from class 4 (its +15
        // step is undone) and nothing from class 3.
        assert_eq!(d, [-5, 5, 0]);
        // Class 4's step does not cover the credit: class 3 gives the rest.
        let mut d = [-20i128, 15, 5];
        clip(&rates, &[35, 20, 30], &mut d, 100);
        assert_eq!(d, [-5, 5, 0]);
        assert_eq!(d.iter().sum::<i128>(), 0);
        // A member pushed past the group's rate gets what the others' floors leave.
        let mut d = [70i128, -35, -35];
        assert_eq!(clip(&rates, &[0, 10, 20], &mut d, 100), 0b110);
        assert_eq!(d, [30, -20, -10]);
        // A floor of 0 is no bound: cutting at it relaxes nothing.
        let mut d = [-50i128, 25, 25];
        assert_eq!(clip(&rates, &[0, 0, 0], &mut d, 100), 0);
        assert_eq!(d, [-40, 25, 15]);
    }

    /// The paper mode's clipping: class 1 stops at 0; the 20 it cannot give come from
    /// the rises of classes 3 and 4 in proportion (30 and 10: 15 and 5).
    #[test]
    fn proportional_clipping() {
        let mut d = [-30i128, -10, 30, 10];
        assert_eq!(
            clip_proportionally(&[10, 20, 30, 40], &[0, 0, 0, 0], &mut d),
            0
        );
        assert_eq!(d, [-10, -10, 15, 5]);
        // A bound stops class 2 at 15: counted; remainders go to the largest rise.
        let mut d = [-30i128, -10, 31, 9];
        assert_eq!(
            clip_proportionally(&[10, 20, 30, 40], &[0, 15, 0, 0], &mut d),
            0b10
        );
        assert_eq!(d, [-10, -5, 11, 4]);
        assert_eq!(d.iter().sum::<i128>(), 0);
    }

    #[test]
    fn gains() {
        // U = 100 Mbit/s, s = 1, W = 1, L̄ = 1000 B: U² / (4e9 · 1000) = 2500 bit/s per
        // ns of error (ALTQ's −2 U² / L̄ = −3.1e11 B/s² in bytes and seconds).
        let g = reference_gain(100_000_000, 1 << 32, 1, 1000, 1);
        assert_eq!(g, 2500 << 32);
        // Per unit of E = n · ê: a quarter for four members.
        assert_eq!(reference_gain(100_000_000, 1 << 32, 1, 1000, 4), 625 << 32);
        assert_eq!(reference_gain(1, 1 << 32, 1, 0, 1), 0);
        // Saturation instead of overflow at the largest rates.
        assert!(reference_gain(u64::MAX, 1 << 32, 1, 1, 1) > 0);
        // 50 000 B waited 10 ms: 16e9 · 5e4 / 1e14 = 8 bit/s per ns.
        assert_eq!(stability_gain(50_000, 1, 10_000_000, 1), Some(8 << 32));
        assert_eq!(stability_gain(50_000, 1, 10_000_000, 2), Some(4 << 32));
        assert_eq!(stability_gain(50_000, 1, 0, 1), None);
        assert_eq!(stability_gain(1, u64::MAX, u64::MAX, 1), Some(0));
    }
}
