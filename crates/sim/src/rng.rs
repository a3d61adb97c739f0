//! Random numbers: independent, reproducible streams and inverse-CDF samplers.
//!
//! The generator is xoshiro256** (Blackman and Vigna, 2018): 256 bits of state, period
//! 2^256 - 1, passes BigCrush. It is seeded by SplitMix64.
//!
//! # Streams
//!
//! A run has one seed. Each component draws from its own stream, named by a 64-bit
//! stream id: [`Rng::stream`]`(seed, id)` seeds SplitMix64 with
//! `mix(seed ^ mix(id))`, where `mix` is SplitMix64's output function (a bijection on
//! `u64`), and takes the first four SplitMix64 outputs as the xoshiro256** state. For a
//! fixed seed, distinct ids give distinct initial states.
//!
//! A traffic source's stream id is the FNV-1a 64-bit hash of the flow's name
//! ([`fnv1a64`]): adding, removing or reordering flows changes no other flow's traffic.
//!
//! # Samplers
//!
//! All samplers are inverse-CDF transforms of one uniform draw `u` in `(0, 1]`
//! ([`Rng::uniform`]), so every sample consumes exactly one `u64`:
//!
//! * exponential of mean `m`: `-m ln u`;
//! * Pareto of shape `a > 1` and mean `m`: scale `x_m = m (a - 1) / a`, sample
//!   `x_m u^(-1/a)` (at least `x_m`).
//!
//! Samples are floats; they become integer nanoseconds through [`nanos`], which rounds
//! to the nearest nanosecond (ties away from zero) and saturates.

use linkshare_core::units::Duration;

/// FNV-1a, 64-bit: offset basis `0xcbf29ce484222325`, prime `0x100000001b3`.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// SplitMix64's output function: a bijective mix of a `u64`.
#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// SplitMix64 (Steele, Lea and Flood, 2014), used only to seed [`Rng`].
#[derive(Debug)]
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix(self.0)
    }
}

/// A xoshiro256** generator. See the [module docs](self).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// Stream `stream_id` of run seed `seed` (see the [module docs](self)).
    pub fn stream(seed: u64, stream_id: u64) -> Rng {
        let mut sm = SplitMix64(mix(seed ^ mix(stream_id)));
        let s = [sm.next(), sm.next(), sm.next(), sm.next()];
        // SplitMix64 outputs are a bijection of distinct counters: never all zero.
        Rng { s }
    }

    /// The stream of the flow named `name`: `stream(seed, fnv1a64(name))`.
    pub fn for_flow(seed: u64, name: &str) -> Rng {
        Rng::stream(seed, fnv1a64(name.as_bytes()))
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// A uniform draw in `(0, 1]`: `(k + 1) / 2^53` for the top 53 bits `k` of
    /// [`Rng::next_u64`]. Never zero, so `ln u` is finite.
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// An exponential sample of mean `mean`: `-mean ln u`.
    #[inline]
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * self.uniform().ln()
    }

    /// A Pareto sample of shape `shape > 1` and mean `mean`:
    /// `mean (shape - 1) / shape * u^(-1 / shape)`.
    #[inline]
    pub fn pareto(&mut self, shape: f64, mean: f64) -> f64 {
        let scale = mean * (shape - 1.0) / shape;
        scale * self.uniform().powf(-1.0 / shape)
    }
}

/// A non-negative float number of nanoseconds as a [`Duration`], rounded to the nearest
/// nanosecond (ties away from zero); negative and NaN give zero, too large saturates.
#[inline]
pub fn nanos(ns: f64) -> Duration {
    // `as` from float saturates and maps NaN to 0.
    Duration(ns.round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_reference_values() {
        // Published FNV-1a 64 test vectors.
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn xoshiro_reference_sequence() {
        // Reference implementation seeded with s = {1, 2, 3, 4}: first outputs.
        let mut r = Rng { s: [1, 2, 3, 4] };
        let got: Vec<u64> = (0..3).map(|_| r.next_u64()).collect();
        assert_eq!(got, vec![11520, 0, 1509978240]);
    }

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: Vec<u64> = {
            let mut r = Rng::stream(7, 1);
            (0..4).map(|_| r.next_u64()).collect()
        };
        let mut again = Rng::stream(7, 1);
        assert_eq!(a, (0..4).map(|_| again.next_u64()).collect::<Vec<_>>());
        let mut other = Rng::stream(7, 2);
        assert_ne!(a, (0..4).map(|_| other.next_u64()).collect::<Vec<_>>());
        let mut other_seed = Rng::stream(8, 1);
        assert_ne!(a, (0..4).map(|_| other_seed.next_u64()).collect::<Vec<_>>());
    }

    #[test]
    fn uniform_is_in_half_open_unit_interval() {
        let mut r = Rng::stream(1, 1);
        let n = 200_000;
        let mut sum = 0.0;
        for _ in 0..n {
            let u = r.uniform();
            assert!(u > 0.0 && u <= 1.0);
            sum += u;
        }
        // Mean 1/2, standard error sqrt(1/12 / n) ~ 0.00065: allow 5 standard errors.
        assert!((sum / n as f64 - 0.5).abs() < 0.0033, "{}", sum / n as f64);
    }

    #[test]
    fn exponential_and_pareto_means() {
        let mut r = Rng::stream(3, 9);
        let n = 400_000;
        let exp_mean = (0..n).map(|_| r.exponential(2.0)).sum::<f64>() / n as f64;
        // Standard deviation of an exponential is its mean: SE = 2 / sqrt(n) ~ 0.0032.
        assert!((exp_mean - 2.0).abs() < 0.016, "{exp_mean}");
        // Shape 3 has finite variance m^2 / (a (a - 2)) = m^2 / 3: SE ~ 0.0046 for m = 5.
        let samples: Vec<f64> = (0..n).map(|_| r.pareto(3.0, 5.0)).collect();
        let scale = 5.0 * 2.0 / 3.0;
        assert!(samples.iter().all(|&x| x >= scale));
        let par_mean = samples.iter().sum::<f64>() / n as f64;
        assert!((par_mean - 5.0).abs() < 0.03, "{par_mean}");
    }

    #[test]
    fn nanos_rounds_to_nearest() {
        assert_eq!(nanos(1.4), Duration(1));
        assert_eq!(nanos(1.5), Duration(2));
        assert_eq!(nanos(-3.0), Duration(0));
        assert_eq!(nanos(f64::NAN), Duration(0));
        assert_eq!(nanos(1e30), Duration(u64::MAX));
    }
}
