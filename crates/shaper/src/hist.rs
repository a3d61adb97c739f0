//! A histogram of durations in fixed log-linear buckets (4 per power of two, from
//! 64 ns to about 20 hours; the last bucket also holds anything longer), in integer
//! nanoseconds: recording is one increment, no
//! allocation; quantiles are accurate to a quarter of a power of two (the bucket's
//! upper bound is reported).

use linkshare_core::units::Duration;
use linkshare_sim::result::DelayHistogram;

/// Sub-buckets per power of two.
const SUB: u32 = 4;
/// Powers of two covered above the first bucket (2^6 ns .. 2^46 ns).
const POWERS: u32 = 40;
/// The first bucket holds everything up to 2^FIRST ns.
const FIRST: u32 = 6;
/// Number of buckets.
pub const BUCKETS: usize = (POWERS * SUB + 1) as usize;

/// See the [module docs](self).
#[derive(Clone, Debug)]
pub struct Histogram {
    counts: Box<[u64; BUCKETS]>,
    count: u64,
    sum_ns: u128,
}

impl Default for Histogram {
    fn default() -> Histogram {
        Histogram {
            counts: Box::new([0; BUCKETS]),
            count: 0,
            sum_ns: 0,
        }
    }
}

/// The bucket of `ns`.
fn bucket(ns: u64) -> usize {
    if ns <= 1 << FIRST {
        return 0;
    }
    let v = ns - 1;
    let p = 63 - v.leading_zeros(); // floor(log2(v)), >= FIRST
    let sub = ((v >> (p - 2)) & 3) as u32; // the two bits after the leading one
    let i = (p - FIRST) * SUB + sub + 1;
    (i as usize).min(BUCKETS - 1)
}

/// The largest value in bucket `i` (its upper bound).
pub fn upper_bound(i: usize) -> u64 {
    if i == 0 {
        return 1 << FIRST;
    }
    let i = i as u32 - 1;
    let p = FIRST + i / SUB;
    let sub = u64::from(i % SUB);
    // Values v+1 with floor(log2(v)) = p and the next two bits = sub.
    (1u64 << p) + ((sub + 1) << (p - 2))
}

impl Histogram {
    /// Counts one value.
    #[inline]
    pub fn record(&mut self, d: Duration) {
        let ns = d.as_nanos();
        self.counts[bucket(ns)] += 1;
        self.count += 1;
        self.sum_ns += u128::from(ns);
    }

    /// Adds every value of `other`.
    pub fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(other.counts.iter()) {
            *a += b;
        }
        self.count += other.count;
        self.sum_ns += other.sum_ns;
    }

    /// Values counted.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Their sum, in nanoseconds.
    pub fn sum_ns(&self) -> u128 {
        self.sum_ns
    }

    /// `(upper bound in ns, count)` of every bucket, in order.
    pub fn buckets(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .map(|(i, &c)| (upper_bound(i), c))
    }

    /// The smallest bucket bound below which `permille`/1000 of the values lie.
    pub fn quantile_permille(&self, permille: u64) -> Duration {
        if self.count == 0 {
            return Duration::ZERO;
        }
        let rank = (self.count * permille).div_ceil(1000).max(1);
        let mut seen = 0;
        for (bound, c) in self.buckets() {
            seen += c;
            if seen >= rank {
                return Duration::from_nanos(bound);
            }
        }
        Duration::from_nanos(upper_bound(BUCKETS - 1))
    }

    /// As the simulator's histogram (each value at its bucket's upper bound), for the
    /// report's delay statistics.
    pub fn to_delay_histogram(&self) -> DelayHistogram {
        DelayHistogram::from_sorted_bins(
            self.buckets()
                .filter(|&(_, c)| c > 0)
                .map(|(b, c)| (Duration::from_nanos(b), c)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_is_at_most_its_bucket_bound_and_above_the_previous() {
        for ns in (0..5000).chain([1 << 20, (1 << 20) + 1, 123_456_789, u64::MAX / 2]) {
            let b = bucket(ns);
            // The last bucket also holds everything beyond it.
            assert!(
                ns <= upper_bound(b) || b == BUCKETS - 1,
                "{ns} in bucket {b} ({})",
                upper_bound(b)
            );
            if b > 0 && b < BUCKETS - 1 {
                assert!(ns > upper_bound(b - 1), "{ns} in bucket {b}");
            }
        }
        for i in 1..BUCKETS {
            assert!(upper_bound(i) > upper_bound(i - 1));
            // A quarter of a power of two at most.
            assert!(upper_bound(i) - upper_bound(i - 1) <= upper_bound(i - 1) / 4 + 16);
        }
    }

    #[test]
    fn quantiles() {
        let mut h = Histogram::default();
        for us in 1..=100 {
            h.record(Duration::from_micros(us));
        }
        assert_eq!(h.count(), 100);
        let p50 = h.quantile_permille(500).as_nanos();
        assert!((50_000..=62_500).contains(&p50), "{p50}");
        let p99 = h.quantile_permille(990).as_nanos();
        assert!((99_000..=124_000).contains(&p99), "{p99}");
    }
}
