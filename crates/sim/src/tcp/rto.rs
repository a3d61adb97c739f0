//! The retransmission timeout estimator of RFC 6298, in integer nanoseconds.
//!
//! * Before the first sample the timeout is the configured initial RTO (RFC 6298 (2.1)),
//!   clamped to `[min_rto, max_rto]`.
//! * The first sample `R` sets `SRTT = R`, `RTTVAR = R / 2` (2.2); every later one
//!   `RTTVAR = (3·RTTVAR + |SRTT − R|) / 4`, then `SRTT = (7·SRTT + R) / 8` (2.3), each
//!   division rounded down to the nanosecond.
//! * `RTO = SRTT + max(G, 4·RTTVAR)`, clamped to `[min_rto, max_rto]` (2.4), (2.5).
//! * Every expiry doubles the timeout (5.5), never beyond `max_rto`; the next sample
//!   ends the backoff (Karn and Partridge: the backed-off value is kept until an
//!   acknowledgement for a segment that was never retransmitted gives a new sample).
//!
//! Which segments give samples (Karn's rule) is the sender's business
//! ([`super::sender`]); this type only does the arithmetic.

use linkshare_core::units::Duration;

/// RFC 6298's estimator. See the [module docs](self).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RtoEstimator {
    /// `(SRTT, RTTVAR)` in ns, once a sample was taken.
    smoothed: Option<(u64, u64)>,
    /// The timeout without backoff, clamped.
    base: Duration,
    /// Expiries since the last sample (or re-initialisation).
    backoffs: u32,
    min: Duration,
    max: Duration,
    granularity: Duration,
}

impl RtoEstimator {
    /// An estimator without samples: the timeout is `initial` (clamped to
    /// `[min, max]`); `granularity` is RFC 6298's clock granularity G. Requires
    /// `min <= max`.
    pub fn new(initial: Duration, min: Duration, max: Duration, granularity: Duration) -> Self {
        RtoEstimator {
            smoothed: None,
            base: initial.clamp(min, max),
            backoffs: 0,
            min,
            max,
            granularity,
        }
    }

    /// Takes the round-trip sample `r` and ends any backoff.
    pub fn sample(&mut self, r: Duration) {
        let r = r.0;
        let (srtt, rttvar) = match self.smoothed {
            None => (r, r / 2),
            Some((srtt, rttvar)) => {
                let rttvar = (3 * u128::from(rttvar) + u128::from(srtt.abs_diff(r))) / 4;
                let srtt = (7 * u128::from(srtt) + u128::from(r)) / 8;
                (srtt as u64, rttvar as u64)
            }
        };
        self.smoothed = Some((srtt, rttvar));
        let spread = self.granularity.0.max(rttvar.saturating_mul(4));
        self.base = Duration(srtt.saturating_add(spread)).clamp(self.min, self.max);
        self.backoffs = 0;
    }

    /// The timer expired: doubles the timeout (at most `max_rto`).
    pub fn back_off(&mut self) {
        self.backoffs = self.backoffs.saturating_add(1);
    }

    /// Sets the timeout to `rto` (clamped) and ends any backoff, keeping SRTT and
    /// RTTVAR: RFC 6298 (5.7)'s 3 s after a lost SYN or SYN-ACK.
    pub fn reinitialize(&mut self, rto: Duration) {
        self.base = rto.clamp(self.min, self.max);
        self.backoffs = 0;
    }

    /// The current timeout, backoff included.
    pub fn rto(&self) -> Duration {
        let factor = 1u64.checked_shl(self.backoffs).unwrap_or(u64::MAX);
        Duration(self.base.0.saturating_mul(factor)).min(self.max)
    }

    /// Smoothed round-trip time, once a sample was taken.
    pub fn srtt(&self) -> Option<Duration> {
        self.smoothed.map(|(s, _)| Duration(s))
    }

    /// Round-trip time variation, once a sample was taken.
    pub fn rttvar(&self) -> Option<Duration> {
        self.smoothed.map(|(_, v)| Duration(v))
    }

    /// Expiries since the last sample.
    pub fn backoffs(&self) -> u32 {
        self.backoffs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn est() -> RtoEstimator {
        RtoEstimator::new(
            Duration::from_secs(1),
            Duration::from_millis(200),
            Duration::from_secs(60),
            Duration::from_millis(1),
        )
    }

    #[test]
    fn first_sample() {
        let mut e = est();
        assert_eq!(e.rto(), Duration::from_secs(1));
        e.sample(Duration::from_millis(100));
        // SRTT = 100 ms, RTTVAR = 50 ms, RTO = 100 + 4 * 50 = 300 ms.
        assert_eq!(e.srtt(), Some(Duration::from_millis(100)));
        assert_eq!(e.rttvar(), Some(Duration::from_millis(50)));
        assert_eq!(e.rto(), Duration::from_millis(300));
    }

    #[test]
    fn second_sample_by_hand() {
        let mut e = est();
        e.sample(Duration::from_millis(100));
        e.sample(Duration::from_millis(200));
        // RTTVAR = (3 * 50 + |100 - 200|) / 4 = 62.5 ms; SRTT = (7 * 100 + 200) / 8 = 112.5 ms.
        assert_eq!(e.rttvar(), Some(Duration(62_500_000)));
        assert_eq!(e.srtt(), Some(Duration(112_500_000)));
        assert_eq!(e.rto(), Duration(112_500_000 + 250_000_000));
    }

    #[test]
    fn granularity_and_clamps() {
        let mut e = est();
        // Constant samples drive RTTVAR towards 0: RTO tends to SRTT + G, then min_rto.
        for _ in 0..100 {
            e.sample(Duration::from_millis(150));
        }
        assert_eq!(e.rttvar(), Some(Duration::ZERO));
        assert_eq!(e.rto(), Duration::from_millis(200));
        let mut e = RtoEstimator::new(
            Duration::from_secs(1),
            Duration::ZERO,
            Duration::from_secs(60),
            Duration::from_millis(10),
        );
        for _ in 0..100 {
            e.sample(Duration::from_millis(150));
        }
        assert_eq!(e.rto(), Duration::from_millis(160));
        e.sample(Duration::from_secs(100));
        assert_eq!(e.rto(), Duration::from_secs(60));
    }

    #[test]
    fn backoff_doubles_up_to_max_and_sample_resets() {
        let mut e = est();
        e.sample(Duration::from_millis(100));
        let mut expected = 300 * MS;
        for _ in 0..12 {
            e.back_off();
            expected = (expected * 2).min(60_000 * MS);
            assert_eq!(e.rto(), Duration(expected));
        }
        assert_eq!(e.backoffs(), 12);
        for _ in 0..100 {
            e.back_off();
        }
        assert_eq!(e.rto(), Duration::from_secs(60));
        e.sample(Duration::from_millis(100));
        assert_eq!(e.backoffs(), 0);
        assert!(e.rto() < Duration::from_secs(1));
    }

    #[test]
    fn reinitialize_keeps_estimates() {
        let mut e = est();
        e.back_off();
        e.reinitialize(Duration::from_secs(3));
        assert_eq!(e.rto(), Duration::from_secs(3));
        assert_eq!(e.srtt(), None);
    }
}
