//! Service curves.
//!
//! A two-piece linear service curve `(m1, d, m2)`: slope `m1` (bit/s) for the first `d`,
//! then slope `m2`. The same curve can be written `(umax, dmax, rate)` (H-FSC paper,
//! Fig. 8): a burst of `umax` bytes must be served within `dmax`, and the long-term rate
//! is `rate`. See `papers/NOTES.md` for the conversion rules.

use crate::units::{Bytes, Duration, NANOS_PER_SEC, Rate};

/// A two-piece linear service curve through the origin.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ServiceCurve {
    /// Slope of the first segment.
    pub m1: Rate,
    /// Length of the first segment.
    pub d: Duration,
    /// Slope after `d`.
    pub m2: Rate,
}

/// Why `(umax, dmax, rate)` does not describe a service curve.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CurveError {
    /// `dmax` is zero while `umax` is not: no finite rate serves a burst in no time.
    ZeroDelay,
    /// Every slope is zero: the curve guarantees nothing.
    Zero,
}

impl core::fmt::Display for CurveError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            CurveError::ZeroDelay => {
                f.write_str("dmax is zero but umax is not; give dmax > 0 or umax = 0")
            }
            CurveError::Zero => f.write_str("all slopes are zero; give m2 (or rate) above zero"),
        }
    }
}

impl ServiceCurve {
    /// A linear curve of slope `r`.
    pub const fn linear(r: Rate) -> ServiceCurve {
        ServiceCurve {
            m1: r,
            d: Duration::ZERO,
            m2: r,
        }
    }

    /// The curve that serves a burst of `umax` bytes within `dmax` and then `rate`.
    ///
    /// If `umax / dmax > rate` the curve is concave: `m1 = umax / dmax` (rounded up, so
    /// the burst is never served late), `d = dmax`, `m2 = rate`. Otherwise it is convex:
    /// `m1 = 0`, `d = dmax - umax / rate`, `m2 = rate`.
    pub fn from_umax_dmax_rate(
        umax: Bytes,
        dmax: Duration,
        rate: Rate,
    ) -> Result<ServiceCurve, CurveError> {
        if rate.0 == 0 && umax.0 == 0 {
            return Err(CurveError::Zero);
        }
        if umax.0 == 0 {
            return Ok(ServiceCurve::linear(rate));
        }
        if dmax.0 == 0 {
            return Err(CurveError::ZeroDelay);
        }
        let burst_rate = (umax.bits() * NANOS_PER_SEC as u128).div_ceil(dmax.0 as u128);
        let burst_rate = u64::try_from(burst_rate).unwrap_or(u64::MAX);
        if burst_rate > rate.0 {
            Ok(ServiceCurve {
                m1: Rate(burst_rate),
                d: dmax,
                m2: rate,
            })
        } else {
            let at_rate = rate.tx_time(umax);
            Ok(ServiceCurve {
                m1: Rate::ZERO,
                d: dmax - at_rate,
                m2: rate,
            })
        }
    }

    /// Whether the curve guarantees nothing at all.
    pub fn is_zero(&self) -> bool {
        self.m2.0 == 0 && (self.m1.0 == 0 || self.d.0 == 0)
    }

    /// The curve's long-term rate.
    pub fn rate(&self) -> Rate {
        self.m2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn umax_dmax_rate_concave_and_convex() {
        // Audio of the H-FSC paper: 160 B in 5 ms at 64 kbit/s -> m1 = 256 kbit/s.
        let c =
            ServiceCurve::from_umax_dmax_rate(Bytes(160), Duration::from_millis(5), Rate(64_000))
                .unwrap();
        assert_eq!(
            c,
            ServiceCurve {
                m1: Rate(256_000),
                d: Duration::from_millis(5),
                m2: Rate(64_000)
            }
        );
        // 1000 B in 1 s at 1 Mbit/s: 8 ms at the rate suffices, so convex with a 992 ms delay.
        let c =
            ServiceCurve::from_umax_dmax_rate(Bytes(1000), Duration::from_secs(1), Rate(1_000_000))
                .unwrap();
        assert_eq!(
            c,
            ServiceCurve {
                m1: Rate(0),
                d: Duration::from_millis(992),
                m2: Rate(1_000_000)
            }
        );
    }
}
