//! Units: integer time, sizes and rates, with exact conversions.
//!
//! * [`Instant`] and [`Duration`] are integer nanoseconds in a `u64` (584 years).
//! * [`Bytes`] is an integer byte count.
//! * [`Rate`] is an integer number of bits per second.
//! * [`Fraction`] is a share between 0 and 1 in integer parts per billion (loss rates).
//! * [`Ratio`] is an exact positive rational `num / den` (ratios between classes).
//!
//! Conversions between them are exact, computed in `u128`: the time to transmit a number
//! of bytes rounds **up** (a packet is not sent before its last bit is), the bytes that fit
//! in a duration round **down** (no byte is sent that did not fully fit).
//!
//! Subtracting a later [`Instant`] from an earlier one is a bug: [`Instant::since`] panics
//! in debug builds and saturates to zero in release builds; use
//! [`Instant::checked_since`] when the order is not known.
//!
//! Parsing and printing follow `tc(8)`: see [`parse`].

pub mod parse;

use core::ops::{Add, AddAssign, Sub, SubAssign};

/// Nanoseconds per second.
pub const NANOS_PER_SEC: u64 = 1_000_000_000;

/// A point in time: integer nanoseconds since the start of the run (simulator) or since
/// an arbitrary monotonic origin (shaper).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(pub u64);

/// A span of time in integer nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration(pub u64);

/// A number of bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bytes(pub u64);

/// A rate in bits per second.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rate(pub u64);

/// A share between 0 and 1 (a loss rate, a gain factor) in integer **parts per billion**
/// (10⁻⁹): `Fraction(10_000_000)` is 1 %. Values above [`Fraction::ONE`] can be built
/// but mean nothing; settings that take a fraction refuse them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Fraction(pub u32);

/// An exact positive ratio `num / den`, kept reduced (`6/4` is stored as `3/2`): the
/// delay and loss ratios between classes. `den` is never zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ratio {
    num: u32,
    den: u32,
}

impl Instant {
    /// The origin of time.
    pub const ZERO: Instant = Instant(0);
    /// The largest representable instant; used as "never".
    pub const MAX: Instant = Instant(u64::MAX);

    /// Nanoseconds since the origin.
    #[inline]
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// Builds an instant from whole seconds after the origin.
    #[inline]
    pub const fn from_secs(s: u64) -> Instant {
        Instant(s * NANOS_PER_SEC)
    }

    /// Builds an instant from milliseconds after the origin.
    #[inline]
    pub const fn from_millis(ms: u64) -> Instant {
        Instant(ms * 1_000_000)
    }

    /// The time elapsed from `earlier` to `self`. `earlier` must not be later than
    /// `self`: that is a bug (debug assertion; saturates to zero in release builds).
    #[inline]
    pub fn since(self, earlier: Instant) -> Duration {
        debug_assert!(
            earlier <= self,
            "Instant::since: {earlier:?} is after {self:?}"
        );
        Duration(self.0.saturating_sub(earlier.0))
    }

    /// The time elapsed from `earlier` to `self`, or `None` if `earlier` is later.
    #[inline]
    pub const fn checked_since(self, earlier: Instant) -> Option<Duration> {
        match self.0.checked_sub(earlier.0) {
            Some(d) => Some(Duration(d)),
            None => None,
        }
    }

    /// `self + d`, saturating at [`Instant::MAX`].
    #[inline]
    pub const fn saturating_add(self, d: Duration) -> Instant {
        Instant(self.0.saturating_add(d.0))
    }

    /// Seconds since the origin as a float, for reports only (never scheduler state).
    #[inline]
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_SEC as f64
    }
}

impl Duration {
    /// Zero length.
    pub const ZERO: Duration = Duration(0);
    /// The largest representable duration.
    pub const MAX: Duration = Duration(u64::MAX);

    /// Whole nanoseconds.
    #[inline]
    pub const fn from_nanos(ns: u64) -> Duration {
        Duration(ns)
    }
    /// Whole microseconds.
    #[inline]
    pub const fn from_micros(us: u64) -> Duration {
        Duration(us * 1_000)
    }
    /// Whole milliseconds.
    #[inline]
    pub const fn from_millis(ms: u64) -> Duration {
        Duration(ms * 1_000_000)
    }
    /// Whole seconds.
    #[inline]
    pub const fn from_secs(s: u64) -> Duration {
        Duration(s * NANOS_PER_SEC)
    }
    /// Nanoseconds.
    #[inline]
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Seconds as a float, for reports only (never scheduler state).
    #[inline]
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_SEC as f64
    }
}

impl Bytes {
    /// Zero bytes.
    pub const ZERO: Bytes = Bytes(0);

    /// The byte count.
    #[inline]
    pub const fn get(self) -> u64 {
        self.0
    }
    /// The number of bits.
    #[inline]
    pub const fn bits(self) -> u128 {
        self.0 as u128 * 8
    }
}

impl Rate {
    /// Zero bits per second.
    pub const ZERO: Rate = Rate(0);

    /// Bits per second.
    #[inline]
    pub const fn bps(self) -> u64 {
        self.0
    }
    /// A rate of `n` bits per second.
    #[inline]
    pub const fn from_bps(n: u64) -> Rate {
        Rate(n)
    }
    /// A rate of `n` kilobits (1000 bit) per second.
    #[inline]
    pub const fn from_kbit(n: u64) -> Rate {
        Rate(n * 1_000)
    }
    /// A rate of `n` megabits (10^6 bit) per second.
    #[inline]
    pub const fn from_mbit(n: u64) -> Rate {
        Rate(n * 1_000_000)
    }
    /// A rate of `n` gigabits (10^9 bit) per second.
    #[inline]
    pub const fn from_gbit(n: u64) -> Rate {
        Rate(n * 1_000_000_000)
    }

    /// The time to transmit `b` bytes at this rate, rounded **up** to the nanosecond.
    /// A zero rate never finishes: returns [`Duration::MAX`] (for `b > 0`).
    #[inline]
    pub fn tx_time(self, b: Bytes) -> Duration {
        if b.0 == 0 {
            return Duration::ZERO;
        }
        if self.0 == 0 {
            return Duration::MAX;
        }
        let ns = (b.bits() * NANOS_PER_SEC as u128).div_ceil(self.0 as u128);
        Duration(u64::try_from(ns).unwrap_or(u64::MAX))
    }

    /// The whole bytes transmitted in `d` at this rate, rounded **down**.
    #[inline]
    pub fn bytes_in(self, d: Duration) -> Bytes {
        let bytes = self.0 as u128 * d.0 as u128 / (8 * NANOS_PER_SEC as u128);
        Bytes(u64::try_from(bytes).unwrap_or(u64::MAX))
    }

    /// The rate at which `b` bytes are sent in `d`, rounded down; zero for a zero `d`.
    #[inline]
    pub fn of(b: Bytes, d: Duration) -> Rate {
        if d.0 == 0 {
            return Rate::ZERO;
        }
        let r = b.bits() * NANOS_PER_SEC as u128 / d.0 as u128;
        Rate(u64::try_from(r).unwrap_or(u64::MAX))
    }
}

impl Fraction {
    /// Parts per billion in one.
    pub const PPB: u32 = 1_000_000_000;
    /// Nothing.
    pub const ZERO: Fraction = Fraction(0);
    /// All (100 %).
    pub const ONE: Fraction = Fraction(Self::PPB);

    /// Parts per billion.
    #[inline]
    pub const fn ppb(self) -> u32 {
        self.0
    }
    /// `p` percent (`p` at most 100 for a meaningful fraction).
    #[inline]
    pub const fn from_percent(p: u32) -> Fraction {
        Fraction(p * 10_000_000)
    }
    /// The fraction as a float, for reports only (never scheduler state).
    #[inline]
    pub fn as_f64(self) -> f64 {
        f64::from(self.0) / f64::from(Self::PPB)
    }
}

impl Ratio {
    /// The whole number `k` (`k / 1`).
    #[inline]
    pub const fn integer(k: u32) -> Ratio {
        Ratio { num: k, den: 1 }
    }
    /// `num / den` reduced, or `None` if `den` is zero.
    pub const fn new(num: u32, den: u32) -> Option<Ratio> {
        if den == 0 {
            return None;
        }
        let g = gcd(num, den);
        Some(Ratio {
            num: num / g,
            den: den / g,
        })
    }
    /// The numerator (of the reduced form).
    #[inline]
    pub const fn num(self) -> u32 {
        self.num
    }
    /// The denominator (of the reduced form), at least 1.
    #[inline]
    pub const fn den(self) -> u32 {
        self.den
    }
    /// The ratio as a float, for reports only (never scheduler state).
    #[inline]
    pub fn as_f64(self) -> f64 {
        f64::from(self.num) / f64::from(self.den)
    }
}

/// Greatest common divisor (`gcd(0, d) = d`); `b` must not be zero.
const fn gcd(mut a: u32, mut b: u32) -> u32 {
    while a != 0 {
        let r = b % a;
        b = a;
        a = r;
    }
    b
}

impl Add<Duration> for Instant {
    type Output = Instant;
    #[inline]
    fn add(self, d: Duration) -> Instant {
        Instant(self.0 + d.0)
    }
}
impl AddAssign<Duration> for Instant {
    #[inline]
    fn add_assign(&mut self, d: Duration) {
        self.0 += d.0;
    }
}
impl Sub<Duration> for Instant {
    type Output = Instant;
    #[inline]
    fn sub(self, d: Duration) -> Instant {
        Instant(self.0 - d.0)
    }
}
impl Add for Duration {
    type Output = Duration;
    #[inline]
    fn add(self, d: Duration) -> Duration {
        Duration(self.0 + d.0)
    }
}
impl AddAssign for Duration {
    #[inline]
    fn add_assign(&mut self, d: Duration) {
        self.0 += d.0;
    }
}
impl Sub for Duration {
    type Output = Duration;
    #[inline]
    fn sub(self, d: Duration) -> Duration {
        Duration(self.0 - d.0)
    }
}
impl Add for Bytes {
    type Output = Bytes;
    #[inline]
    fn add(self, b: Bytes) -> Bytes {
        Bytes(self.0 + b.0)
    }
}
impl AddAssign for Bytes {
    #[inline]
    fn add_assign(&mut self, b: Bytes) {
        self.0 += b.0;
    }
}
impl Sub for Bytes {
    type Output = Bytes;
    #[inline]
    fn sub(self, b: Bytes) -> Bytes {
        Bytes(self.0 - b.0)
    }
}
impl SubAssign for Bytes {
    #[inline]
    fn sub_assign(&mut self, b: Bytes) {
        self.0 -= b.0;
    }
}
/// [`Rate::tx_time`] of one rate, prepared for many lengths: the same exact result
/// (rounded up to the nanosecond) by a multiplication with a precomputed reciprocal
/// instead of a 128-bit division, for shapers that cost every packet at a fixed rate
/// (HTB's buckets).
///
/// For `len < 2^31` bytes the numerator `n = 8e9 · len` fits in 64 bits; with
/// `m = floor((2^64 − 1) / r)`, `floor(n · m / 2^64)` is `floor(n / r)` or one less
/// (`n/r − 1 < n·m/2^64 <= n/r`), which one remainder check corrects; a second gives
/// the ceiling. Longer lengths (and the zero rate) take [`Rate::tx_time`] itself.
/// Written here rather than taken from a crate: the general strength-reduction crates
/// divide 64-bit numerators with a 128-bit multiplier, where these numerators need
/// only a 64-bit one and a correction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TxTime {
    rate: Rate,
    /// `floor((2^64 − 1) / rate)`; 0 for the zero rate.
    reciprocal: u64,
}

impl TxTime {
    /// Lengths below this take the multiplication (`8e9 · len < 2^64`).
    const FAST_BELOW: u64 = 1 << 31;

    /// The transmission times at `rate`.
    pub const fn new(rate: Rate) -> TxTime {
        TxTime {
            rate,
            reciprocal: match u64::MAX.checked_div(rate.0) {
                Some(m) => m,
                None => 0,
            },
        }
    }

    /// The rate.
    #[inline]
    pub const fn rate(self) -> Rate {
        self.rate
    }

    /// `self.rate().tx_time(b)`, exactly.
    #[inline]
    pub fn of(self, b: Bytes) -> Duration {
        let r = self.rate.0;
        if b.0 >= Self::FAST_BELOW || r == 0 {
            return self.exactly(b);
        }
        let n = b.0 * 8 * NANOS_PER_SEC;
        let mut q = ((u128::from(n) * u128::from(self.reciprocal)) >> 64) as u64;
        let mut rem = n - q * r;
        if rem >= r {
            q += 1;
            rem -= r;
        }
        Duration(q + u64::from(rem != 0))
    }

    /// [`Rate::tx_time`] itself, out of line: the rare lengths and rate of
    /// [`TxTime::of`] that the multiplication does not cover.
    #[cold]
    #[inline(never)]
    fn exactly(self, b: Bytes) -> Duration {
        self.rate.tx_time(b)
    }
}

impl Add for Rate {
    type Output = Rate;
    #[inline]
    fn add(self, r: Rate) -> Rate {
        Rate(self.0 + r.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tx_time_rounds_up() {
        // 1500 B at 1 Gbit/s = 12 000 ns exactly.
        assert_eq!(Rate::from_gbit(1).tx_time(Bytes(1500)), Duration(12_000));
        // 1 B at 3 bit/s = 8/3 s = 2 666 666 666.67 ns -> 2 666 666 667.
        assert_eq!(Rate(3).tx_time(Bytes(1)), Duration(2_666_666_667));
        assert_eq!(Rate::ZERO.tx_time(Bytes(1)), Duration::MAX);
        assert_eq!(Rate::ZERO.tx_time(Bytes(0)), Duration::ZERO);
    }

    use proptest::prelude::*;

    proptest! {
        /// `TxTime::of` is `Rate::tx_time`: rates from 0 to `u64::MAX` (small ones, ones
        /// near powers of two, any), lengths around the fast path's bound and any.
        #[test]
        fn tx_time_by_reciprocal_is_exact(
            rate in prop_oneof![
                0u64..1000,
                (0u32..64, -3i64..=3).prop_map(|(k, d)| (1u64 << k).saturating_add_signed(d)),
                any::<u64>(),
            ],
            len in prop_oneof![
                0u64..70_000,
                (TxTime::FAST_BELOW - 5)..(TxTime::FAST_BELOW + 5),
                any::<u64>(),
            ],
        ) {
            let r = Rate(rate);
            prop_assert_eq!(TxTime::new(r).of(Bytes(len)), r.tx_time(Bytes(len)));
        }
    }

    #[test]
    fn tx_time_by_reciprocal_at_the_ends() {
        for r in [1, 2, 3, 7, 8_000_000_000, u64::MAX - 1, u64::MAX] {
            for len in [0, 1, 2, 1500, TxTime::FAST_BELOW - 1, TxTime::FAST_BELOW] {
                assert_eq!(
                    TxTime::new(Rate(r)).of(Bytes(len)),
                    Rate(r).tx_time(Bytes(len))
                );
            }
        }
    }

    #[test]
    fn bytes_in_rounds_down() {
        assert_eq!(Rate::from_gbit(1).bytes_in(Duration(12_000)), Bytes(1500));
        assert_eq!(Rate::from_gbit(1).bytes_in(Duration(11_999)), Bytes(1499));
        // 100 Gbit/s for a year does not overflow: 3.94e17 bytes.
        let year = Duration::from_secs(365 * 24 * 3600);
        assert_eq!(
            Rate::from_gbit(100).bytes_in(year),
            Bytes(100_000_000_000 / 8 * 365 * 24 * 3600)
        );
    }

    #[test]
    fn ratios_are_reduced() {
        let r = Ratio::new(6, 4).expect("positive denominator");
        assert_eq!((r.num(), r.den()), (3, 2));
        assert_eq!(Ratio::new(0, 5), Some(Ratio::integer(0)));
        assert_eq!(Ratio::new(5, 0), None);
        assert_eq!(Ratio::new(4, 1), Some(Ratio::integer(4)));
    }

    #[test]
    fn since_is_ordered() {
        assert_eq!(Instant(10).since(Instant(4)), Duration(6));
        assert_eq!(Instant(4).checked_since(Instant(10)), None);
    }
}
