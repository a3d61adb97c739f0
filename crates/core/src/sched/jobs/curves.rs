//! One class's curves over the current busy period (paper §3.1): the arrival curve
//! `A_i`, the input curve `R_i^in = A_i − dropped`, the bytes actually sent `X_i`
//! (`Xmit_i`, §6.2) and the output the rate allocation promised, `R_i^out` of Eq. 1.
//!
//! Byte counters are `u64`; the promised output is `Σ r_i(k) · Δt(k)` exactly, in
//! nanobits (rate in bit/s times nanoseconds) in a `u128`. Loss rates are exact
//! ratios of counters: the loss-bound test (Eq. 5) cross-multiplies in `u128`, and the
//! loss loop compares fixed-point rates of 2⁻⁴⁰ resolution ([`LOSS_ONE`]).

use crate::units::Fraction;

/// Nanobits (10⁻⁹ bit) in one byte.
pub(super) const NANOBITS_PER_BYTE: u128 = 8_000_000_000;

/// The loss rate 1 in the fixed point of [`Curves::loss`].
pub(super) const LOSS_ONE: u64 = 1 << 40;

/// One class's counters over the current busy period.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Curves {
    /// `A_i`: bytes arrived.
    pub arrived: u64,
    /// `A_i − R_i^in`: bytes dropped (arrivals refused and queued packets dropped).
    pub dropped: u64,
    /// `R_i^in` in packets: arrivals not dropped (for the mean packet size).
    pub admitted_packets: u64,
    /// `X_i`: bytes sent.
    pub sent: u64,
    /// `R_i^out` of Eq. 1: the service promised, in nanobits.
    pub promised: u128,
}

impl Curves {
    /// Counts an arrival of `len` bytes. `false`, counting nothing, if `A_i` would
    /// overflow: the caller starts a new busy period (as ALTQ does when its arrival
    /// counter wraps) and counts it again.
    #[inline]
    pub fn arrive(&mut self, len: u64) -> bool {
        match self.arrived.checked_add(len) {
            Some(a) => {
                self.arrived = a;
                self.admitted_packets += 1;
                true
            }
            None => false,
        }
    }

    /// Counts a drop of `len` bytes (the arrival or a queued packet).
    #[inline]
    pub fn drop(&mut self, len: u64) {
        self.dropped = self.dropped.saturating_add(len);
        self.admitted_packets = self.admitted_packets.saturating_sub(1);
    }

    /// Counts `len` bytes sent.
    #[inline]
    pub fn send(&mut self, len: u64) {
        self.sent = self.sent.saturating_add(len);
    }

    /// Adds `rate` (bit/s) held for `elapsed` ns to the promised output.
    #[inline]
    pub fn promise(&mut self, rate: u64, elapsed: u64) {
        self.promised = self
            .promised
            .saturating_add(u128::from(rate) * u128::from(elapsed));
    }

    /// `R_i^out − X_i` in nanobits: how far the class is behind the service promised.
    #[inline]
    pub fn behind(&self) -> i128 {
        let promised = i128::try_from(self.promised).unwrap_or(i128::MAX);
        promised - i128::from(self.sent) * NANOBITS_PER_BYTE as i128
    }

    /// `R_i^in` in bytes.
    #[inline]
    pub fn admitted(&self) -> u64 {
        self.arrived.saturating_sub(self.dropped)
    }

    /// The loss rate `p_i` of Eq. 3 times [`LOSS_ONE`], rounded down; 0 when nothing
    /// arrived, at most [`LOSS_ONE`].
    #[inline]
    pub fn loss(&self) -> u64 {
        if self.arrived == 0 {
            return if self.dropped == 0 { 0 } else { LOSS_ONE };
        }
        let p = u128::from(self.dropped) * u128::from(LOSS_ONE) / u128::from(self.arrived);
        p.min(u128::from(LOSS_ONE)) as u64
    }

    /// The loss rate in parts per billion, rounded down (for reports).
    pub fn loss_ppb(&self) -> u64 {
        if self.arrived == 0 {
            return 0;
        }
        let p = u128::from(self.dropped) * u128::from(Fraction::PPB) / u128::from(self.arrived);
        p.min(u128::from(Fraction::PPB)) as u64
    }

    /// Whether dropping `len` more bytes keeps the loss rate within `bound` (Eq. 5,
    /// through Eq. 13's budget `l*_i = A_i · L_i − dropped`): exact.
    #[inline]
    pub fn may_drop(&self, len: u64, bound: Fraction) -> bool {
        let dropped = u128::from(self.dropped) + u128::from(len);
        dropped * u128::from(Fraction::PPB) <= u128::from(bound.ppb()) * u128::from(self.arrived)
    }

    /// Whether the loss rate is above `bound`.
    #[inline]
    pub fn exceeds(&self, bound: Fraction) -> bool {
        !self.may_drop(0, bound)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Spec §7.1 test 6: `A = 100 000` B and `L = 1 %` allow a 1000-byte drop (the loss
    /// rate is then exactly 1 %), and not one byte more.
    #[test]
    fn loss_bound_boundary() {
        let mut c = Curves {
            arrived: 100_000,
            ..Curves::default()
        };
        let one_percent = Fraction::from_percent(1);
        assert!(c.may_drop(1000, one_percent));
        assert!(!c.may_drop(1001, one_percent));
        c.drop(1000);
        assert!(!c.exceeds(one_percent));
        assert!(!c.may_drop(1, one_percent));
        assert_eq!(c.loss_ppb(), 10_000_000);
        assert_eq!(c.loss(), LOSS_ONE / 100);
    }

    /// Spec §7.1 test 5: the recursion of Eq. 13, `p(n) = p(n−1) A(n−1)/A(n) + l(n)/A(n)`,
    /// run in exact rationals, gives the loss rate of Eq. 3 that the counters give.
    #[test]
    fn loss_recursion_matches_the_counters() {
        let mut state: u64 = 12345;
        let mut next = |m: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % m
        };
        let mut c = Curves::default();
        // p as an exact fraction (num, den) reduced by the recursion only.
        let (mut num, mut den) = (0u128, 1u128);
        for _ in 0..500 {
            let a = 1 + next(1500);
            let prev = u128::from(c.arrived);
            assert!(c.arrive(a));
            let l = if next(4) == 0 {
                a.min(1 + next(1500))
            } else {
                0
            };
            if l > 0 {
                c.drop(l);
            }
            let now = u128::from(c.arrived);
            // p(n) = (num/den) · prev/now + l/now = (num · prev + l · den) / (den · now)
            let (n2, d2) = (num * prev + u128::from(l) * den, den * now);
            let g = gcd(n2, d2);
            (num, den) = (n2 / g, d2 / g);
            assert_eq!(num * now, u128::from(c.dropped) * den, "Eq. 13 vs Eq. 3");
            assert_eq!(c.loss(), (num * u128::from(LOSS_ONE) / den) as u64);
        }
    }

    fn gcd(mut a: u128, mut b: u128) -> u128 {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    }

    #[test]
    fn arrival_counter_overflow_asks_for_a_new_busy_period() {
        let mut c = Curves {
            arrived: u64::MAX - 10,
            ..Curves::default()
        };
        assert!(c.arrive(10));
        assert!(!c.arrive(1));
        assert_eq!(c.arrived, u64::MAX);
    }

    #[test]
    fn promised_output_is_exact_and_saturates() {
        let mut c = Curves::default();
        // 1 Gbit/s for 12 µs: 1500 bytes.
        c.promise(1_000_000_000, 12_000);
        c.send(1500);
        assert_eq!(c.behind(), 0);
        c.promise(u64::MAX, u64::MAX);
        c.promise(u64::MAX, u64::MAX);
        assert_eq!(c.promised, u128::MAX);
        assert_eq!(c.behind(), i128::MAX - 1500 * NANOBITS_PER_BYTE as i128);
    }
}
