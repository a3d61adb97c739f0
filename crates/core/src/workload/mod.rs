//! Synthetic workloads that drive a scheduler directly, without the simulator: the
//! cost benchmarks (`benches/`) and the cost reproductions (`linkshare repro
//! hfsc-fig13`, `hls-fig12`) use the same code, so that the figures of one can be read
//! beside the other's.
//!
//! * [`fig13`]: the H-FSC paper's Fig. 13 (two-state Markov sessions behind a busy
//!   link, or every session continuously backlogged, under one to three levels).
//! * [`trees`]: class trees of a given shape (binary, capped in depth).
//! * [`Prng`]: the small deterministic generator they draw from.
//!
//! The packets are [`Frame`]s, a length and nothing else. Nothing here reads a clock:
//! timing the operations is the caller's business.

pub mod fig13;
pub mod trees;

use crate::sched::Packet;

/// A packet that is only its length on the wire, bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame(pub u32);

impl Packet for Frame {
    #[inline]
    fn wire_len(&self) -> u32 {
        self.0
    }
}

/// SplitMix64: a small, fast, deterministic PRNG (the workloads' only randomness).
#[derive(Clone, Debug)]
pub struct Prng(pub u64);

impl Prng {
    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (multiply-shift: no division).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// True with probability `1 / n`.
    #[inline]
    pub fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }
}
