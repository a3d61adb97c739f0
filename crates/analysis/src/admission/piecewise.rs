//! Exact comparison of sums of two-piece linear curves.
//!
//! A sum of curves `(m1, d, m2)` is piecewise linear with breakpoints at the curves'
//! `d`s, so `Σ lower <= Σ upper` holds for all `t >= 0` if and only if it holds at every
//! breakpoint and the final slope of the lower sum is at most the upper sum's. Values are
//! kept in bit·ns/s (rate in bit/s times time in ns), exactly, in a 256-bit integer
//! ([`Wide`]): one product of a `u64` rate and a `u64` time fits 128 bits, their sums do
//! not always. Crossing times are exact rationals rounded to the nanosecond.

use std::cmp::Ordering;

use linkshare_core::curve::ServiceCurve;

/// An unsigned 256-bit integer: `hi · 2^128 + lo`. Field order makes the derived
/// ordering numeric.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
struct Wide {
    hi: u128,
    lo: u128,
}

impl Wide {
    fn from_u128(v: u128) -> Wide {
        Wide { hi: 0, lo: v }
    }

    fn add(self, o: Wide) -> Wide {
        let (lo, carry) = self.lo.overflowing_add(o.lo);
        Wide {
            hi: self.hi + o.hi + u128::from(carry),
            lo,
        }
    }

    /// `self - o`; `o` must not be larger.
    fn sub(self, o: Wide) -> Wide {
        debug_assert!(o <= self);
        let (lo, borrow) = self.lo.overflowing_sub(o.lo);
        Wide {
            hi: self.hi - o.hi - u128::from(borrow),
            lo,
        }
    }

    /// `x · y`, exactly.
    fn mul(x: u128, y: u64) -> Wide {
        let y = u128::from(y);
        let high = (x >> 64) * y;
        let low = (x & u128::from(u64::MAX)) * y;
        Wide {
            hi: high >> 64,
            lo: high << 64,
        }
        .add(Wide::from_u128(low))
    }
}

/// `floor(n / d)` for `d > 0`, saturated at `u64::MAX` (a time beyond 584 years).
fn div_floor(n: Wide, d: u128) -> u64 {
    if Wide::mul(d, u64::MAX) <= n {
        return u64::MAX;
    }
    // The largest q with d · q <= n, by bisection over [lo, hi).
    let (mut lo, mut hi) = (0u64, u64::MAX);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if Wide::mul(d, mid) <= n {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// `ceil(n / d)` for `d > 0`, saturated at `u64::MAX`.
fn div_ceil(n: Wide, d: u128) -> u64 {
    let q = div_floor(n, d);
    if q < u64::MAX && Wide::mul(d, q) < n {
        q + 1
    } else {
        q
    }
}

/// The value of `c` at `t` ns, in bit·ns/s.
fn value(c: &ServiceCurve, t: u64) -> Wide {
    let d = c.d.as_nanos();
    let first = u128::from(c.m1.bps()) * u128::from(t.min(d));
    let rest = u128::from(c.m2.bps()) * u128::from(t.saturating_sub(d));
    Wide::from_u128(first).add(Wide::from_u128(rest))
}

/// The slope of `c` (bit/s) on the segment that starts at breakpoint `t`.
fn slope(c: &ServiceCurve, t: u64) -> u64 {
    if t < c.d.as_nanos() {
        c.m1.bps()
    } else {
        c.m2.bps()
    }
}

fn sum_value(cs: &[ServiceCurve], t: u64) -> Wide {
    cs.iter()
        .fold(Wide::default(), |acc, c| acc.add(value(c, t)))
}

fn sum_slope(cs: &[ServiceCurve], t: u64) -> u128 {
    cs.iter().map(|c| u128::from(slope(c, t))).sum()
}

/// The first interval in which `Σ lower` is above `Σ upper`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Excess {
    /// The exact crossing time rounded down (ns): the sum is within the limit at `starts`
    /// and above it from `starts + 1` ns on.
    pub(crate) starts: u64,
    /// The first ns at which the sum is back within the limit; `None`: never (the lower
    /// sum's final slope is larger).
    pub(crate) until: Option<u64>,
    /// Indices into `lower` of the curves rising on the segment where the excess starts.
    pub(crate) rising: Vec<usize>,
}

/// Where `Σ lower(t) > Σ upper(t)` first happens, if it ever does (see the module docs).
pub(crate) fn first_excess(lower: &[ServiceCurve], upper: &[ServiceCurve]) -> Option<Excess> {
    let mut breaks: Vec<u64> = lower
        .iter()
        .chain(upper)
        .map(|c| c.d.as_nanos())
        .chain([0])
        .collect();
    breaks.sort_unstable();
    breaks.dedup();
    let mut open: Option<Excess> = None;
    for (k, &a) in breaks.iter().enumerate() {
        let end = breaks.get(k + 1).map(|b| b - a);
        let (f, g) = (sum_value(lower, a), sum_value(upper, a));
        let (sf, sg) = (sum_slope(lower, a), sum_slope(upper, a));
        match open.take() {
            None => {
                // Continuity: the sum is within the limit at `a` (checked at the end of
                // the previous segment, or 0 = 0 at the origin).
                debug_assert!(f <= g);
                if sf <= sg {
                    continue;
                }
                let gap = g.sub(f);
                let rate = sf - sg;
                if end.is_some_and(|len| Wide::mul(rate, len) <= gap) {
                    continue;
                }
                let rising = lower
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| slope(c, a) > 0)
                    .map(|(i, _)| i)
                    .collect();
                open = Some(Excess {
                    starts: a.saturating_add(div_floor(gap, rate)),
                    until: None,
                    rising,
                });
            }
            Some(mut excess) => {
                debug_assert!(f.cmp(&g) == Ordering::Greater);
                if sf < sg {
                    let over = f.sub(g);
                    let rate = sg - sf;
                    if end.is_none_or(|len| over <= Wide::mul(rate, len)) {
                        excess.until = Some(a.saturating_add(div_ceil(over, rate)));
                        return Some(excess);
                    }
                }
                open = Some(excess);
            }
        }
    }
    open
}

#[cfg(test)]
mod tests {
    use super::*;
    use linkshare_core::units::{Duration, Rate};
    use proptest::prelude::*;

    const MS: u64 = 1_000_000;

    fn c(m1_mbit: u64, d_ms: u64, m2_mbit: u64) -> ServiceCurve {
        ServiceCurve {
            m1: Rate::from_mbit(m1_mbit),
            d: Duration::from_millis(d_ms),
            m2: Rate::from_mbit(m2_mbit),
        }
    }

    fn line(mbit: u64) -> ServiceCurve {
        ServiceCurve::linear(Rate::from_mbit(mbit))
    }

    #[test]
    fn wide_arithmetic() {
        let big = Wide::mul(u128::MAX, u64::MAX);
        // (2^128 − 1)(2^64 − 1) = 2^192 − 2^128 − 2^64 + 1.
        assert_eq!(
            big,
            Wide {
                hi: (1u128 << 64) - 2,
                lo: u128::MAX - (1u128 << 64) + 2,
            }
        );
        assert_eq!(big.sub(big), Wide::default());
        assert_eq!(div_floor(Wide::from_u128(10), 3), 3);
        assert_eq!(div_ceil(Wide::from_u128(10), 3), 4);
        assert_eq!(div_ceil(Wide::from_u128(9), 3), 3);
        assert_eq!(div_floor(big, 1), u64::MAX);
    }

    /// Concave 8 Mbit/s for 10 ms then 2, plus convex 0 for 5 ms then 6, on 10 Mbit/s.
    /// Up to 5 ms the sum rises at 8 (40 kbit at 5 ms, the line 50 kbit); then at 14:
    /// the 10 kbit gap closes at 4 Mbit/s in 2.5 ms, at 7.5 ms. At 10 ms the sum is
    /// 80 + 30 = 110 kbit against 100; then it rises at 8 against 10 and is back at
    /// 15 ms. Slope 6 + 2 = 8 at the end: no excess in the long run.
    #[test]
    fn excess_between_knees_by_hand() {
        let e = first_excess(&[c(8, 10, 2), c(0, 5, 6)], &[line(10)]).unwrap();
        assert_eq!(e.starts, 7 * MS + MS / 2);
        assert_eq!(e.until, Some(15 * MS));
        assert_eq!(e.rising, vec![0, 1]);
    }

    /// Long-term rates above the line: linear 6 Mbit/s plus convex (flat for 20 ms, then
    /// 5 Mbit/s) on 10 Mbit/s. At 20 ms the sum is 120 kbit against 200; from there it
    /// rises at 11 against 10, closes the 80 kbit gap in 80 ms, at 100 ms, and stays above.
    #[test]
    fn excess_in_the_long_run() {
        let e = first_excess(&[line(6), c(0, 20, 5)], &[line(10)]).unwrap();
        assert_eq!(e.starts, 100 * MS);
        assert_eq!(e.until, None);
        assert_eq!(e.rising, vec![0, 1]);
    }

    #[test]
    fn no_excess_when_everything_fits() {
        assert_eq!(first_excess(&[c(8, 10, 2), c(0, 10, 8)], &[line(10)]), None);
        assert_eq!(first_excess(&[line(4), line(6)], &[line(10)]), None);
        assert_eq!(first_excess(&[], &[line(10)]), None);
        // Lower equal to upper: never above.
        assert_eq!(first_excess(&[c(8, 10, 2)], &[c(8, 10, 2)]), None);
    }

    /// Starting at the origin: a burst rate above the line, back within it once the
    /// 6000 B burst (48 kbit) is over: 12 Mbit/s for 4 ms then 1, against 10:
    /// 48 kbit at 4 ms against 40, then slope 1 against 10: 8 kbit closes at 9 Mbit/s,
    /// ceil(8/9 ms) = 888 889 ns later.
    #[test]
    fn excess_from_the_origin() {
        let e = first_excess(&[c(12, 4, 1)], &[line(10)]).unwrap();
        assert_eq!(e.starts, 0);
        assert_eq!(e.until, Some(4 * MS + 888_889));
    }

    proptest! {
        /// Against a brute-force scan of every ns in a window, with exact u128 values.
        #[test]
        fn agrees_with_brute_force(
            lower in proptest::collection::vec((0u64..50, 0u64..300, 0u64..50), 1..4),
            upper in proptest::collection::vec((0u64..50, 0u64..300, 1u64..50), 1..3),
        ) {
            let mk = |v: &Vec<(u64, u64, u64)>| v.iter().map(|&(m1, d, m2)| ServiceCurve {
                m1: Rate(m1), d: Duration(d), m2: Rate(m2),
            }).collect::<Vec<_>>();
            let (lower, upper) = (mk(&lower), mk(&upper));
            let at = |cs: &[ServiceCurve], t: u64| -> u128 {
                cs.iter().map(|c| {
                    let d = c.d.0;
                    if t <= d { u128::from(c.m1.0 * t) } else { u128::from(c.m1.0 * d + c.m2.0 * (t - d)) }
                }).sum()
            };
            let horizon = 20_000u64;
            let first_bad = (0..horizon).find(|&t| at(&lower, t) > at(&upper, t));
            let got = first_excess(&lower, &upper);
            match (first_bad, &got) {
                (Some(t), Some(e)) => {
                    prop_assert_eq!(e.starts + 1, t);
                    if let Some(u) = e.until {
                        prop_assert!(at(&lower, u) <= at(&upper, u));
                        prop_assert!((t..u).all(|s| at(&lower, s) > at(&upper, s)));
                    }
                }
                (None, Some(e)) => prop_assert!(e.starts + 1 >= horizon, "{:?}", e),
                (Some(t), None) => prop_assert!(false, "brute force finds {} ns", t),
                (None, None) => {}
            }
        }
    }
}
