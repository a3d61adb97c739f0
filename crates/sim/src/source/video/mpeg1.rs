//! A synthetic MPEG-1-like frame-size model, and the trace shipped from it.
//!
//! Paper 002 §3.4 replays "an ns-2 packet trace generated from a MPEG-1 video stream"
//! whose largest frame is 11 packets of 1000 B, at the flow's fair rate (10 Mbit/s
//! shared by 20 flows: 500 kbit/s). That trace is not available, so linkshare ships a
//! **synthetic** one, `scenarios/traces/mpeg1-synthetic.csv`, produced by this model. It
//! is not a real video: it has MPEG-1's frame structure and plausible sizes, nothing
//! more (no scene changes, no correlation between successive frames of a type).
//!
//! # The model
//!
//! * 30 frames/s ([`FRAME_INTERVAL`]), groups of pictures of 12 frames in the display
//!   pattern `IBBPBBPBBPBB` ([`GOP`]); frame `k` has type `GOP[k mod 12]`.
//! * The size of each frame is an independent lognormal sample of its type's mean and
//!   coefficient of variation ([`I_FRAMES`], [`P_FRAMES`], [`B_FRAMES`]): I frames
//!   7000 B (CV 0.25), P frames 2500 B (CV 0.4), B frames 1200 B (CV 0.4) — ratios
//!   typical of MPEG-1 traces, not fitted to any one. The mean over a group of pictures
//!   is `(7000 + 3 · 2500 + 8 · 1200) / 12 = 2008.3` B per frame, 482 kbit/s at
//!   30 frames/s: close to the paper's fair rate of 500 kbit/s.
//! * Sizes are rounded to whole bytes and kept within `[1, MAX_FRAME_BYTES]`;
//!   [`MAX_FRAME_BYTES`] = 11 000 B, the paper's largest frame of 11 packets of 1000 B
//!   (about 2.5 % of I frames reach the cap, none of the others in practice).
//!
//! A lognormal of mean `M` and coefficient of variation `c` is `exp(m + s Z)`, `Z`
//! standard normal, with `s² = ln(1 + c²)` and `m = ln M − s² / 2`. `Z` comes from the
//! Box–Muller transform of two uniforms `u1, u2` in `(0, 1]`
//! ([`Rng::uniform`](crate::rng::Rng::uniform)): `Z = sqrt(−2 ln u1) cos(2π u2)`.
//!
//! Draws: stream `Rng::stream(seed, fnv1a64(b"mpeg1-synthetic"))`
//! ([`crate::rng`]); for each frame in order, `u1` then `u2` (two `u64`).
//!
//! # The shipped trace
//!
//! `scenarios/traces/mpeg1-synthetic.csv` is [`synthetic_mpeg1_csv`]`(`[`TRACE_SEED`]`,
//! `[`TRACE_FRAMES`]`)`: 600 frames (20 s, the paper's run length; the source loops
//! it), in the [`format`](super::format) of frame traces. A test checks the file is
//! exactly that text; after a deliberate change to the model, regenerate it with
//! `cargo test -p linkshare-sim --test apps -- --ignored write_mpeg1_trace`.
//! (Rounding to whole bytes makes the output independent of the last bit of `ln`, `exp`
//! and `cos` except in the vanishingly rare case of a size within that bit of a half
//! byte.)

use linkshare_core::units::Duration;

use super::format::{FrameType, write_frames};
use crate::rng::{Rng, fnv1a64};

/// The display order of a group of pictures: frame `k` has type `GOP[k mod 12]`.
pub const GOP: [FrameType; 12] = {
    use FrameType::{B, I, P};
    [I, B, B, P, B, B, P, B, B, P, B, B]
};

/// The time between frames at 30 frames/s: 1/30 s rounded to the nanosecond.
pub const FRAME_INTERVAL: Duration = Duration(33_333_333);

/// The largest frame in bytes: 11 packets of 1000 B (paper 002 §3.4).
pub const MAX_FRAME_BYTES: u32 = 11_000;

/// The seed of the shipped trace.
pub const TRACE_SEED: u64 = 1;

/// Frames in the shipped trace: 20 s at 30 frames/s.
pub const TRACE_FRAMES: usize = 600;

/// A lognormal frame-size law, before rounding and capping.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SizeLaw {
    /// Mean size in bytes.
    pub mean: f64,
    /// Coefficient of variation (standard deviation over mean).
    pub cv: f64,
}

impl SizeLaw {
    /// `(m, s)`: the mean and standard deviation of the size's logarithm.
    pub fn log_params(self) -> (f64, f64) {
        let s2 = (1.0 + self.cv * self.cv).ln();
        (self.mean.ln() - s2 / 2.0, s2.sqrt())
    }
}

/// Sizes of I frames.
pub const I_FRAMES: SizeLaw = SizeLaw {
    mean: 7000.0,
    cv: 0.25,
};

/// Sizes of P frames.
pub const P_FRAMES: SizeLaw = SizeLaw {
    mean: 2500.0,
    cv: 0.4,
};

/// Sizes of B frames.
pub const B_FRAMES: SizeLaw = SizeLaw {
    mean: 1200.0,
    cv: 0.4,
};

/// The type of frame `k` (from 0): `GOP[k mod 12]`.
pub fn frame_type(k: usize) -> FrameType {
    GOP[k % GOP.len()]
}

/// The size law of frames of type `kind` (D frames, absent from the model, get the B
/// frames' law).
pub fn law(kind: FrameType) -> SizeLaw {
    match kind {
        FrameType::I => I_FRAMES,
        FrameType::P => P_FRAMES,
        FrameType::B | FrameType::D => B_FRAMES,
    }
}

/// The sizes in bytes of the first `frames` frames of the model (see the
/// [module docs](self)) for `seed`.
pub fn synthetic_mpeg1(seed: u64, frames: usize) -> Vec<u32> {
    let mut rng = Rng::stream(seed, fnv1a64(b"mpeg1-synthetic"));
    (0..frames)
        .map(|k| {
            let (m, s) = law(frame_type(k)).log_params();
            let u1 = rng.uniform();
            let u2 = rng.uniform();
            let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
            // `as` saturates; the clamp keeps the size in [1, MAX_FRAME_BYTES].
            ((m + s * z).exp().round() as u32).clamp(1, MAX_FRAME_BYTES)
        })
        .collect()
}

/// The frame-trace file of [`synthetic_mpeg1`]`(seed, frames)`, with its frame types
/// and a comment saying how it was made.
pub fn synthetic_mpeg1_csv(seed: u64, frames: usize) -> String {
    let rows: Vec<(FrameType, u32)> = synthetic_mpeg1(seed, frames)
        .into_iter()
        .enumerate()
        .map(|(k, size)| (frame_type(k), size))
        .collect();
    let comment = format!(
        "Synthetic MPEG-1-like frame trace (not a real video), made by\n\
         linkshare_sim::source::video::mpeg1::synthetic_mpeg1(seed = {seed}, frames = {frames}):\n\
         30 frames/s (interval 33333333 ns), GOP IBBPBBPBBPBB, lognormal sizes per type\n\
         (I: mean 7000 B, CV 0.25; P: 2500 B, CV 0.4; B: 1200 B, CV 0.4), capped at 11000 B.\n\
         Columns: frame index from 0, MPEG frame type, frame size in bytes."
    );
    write_frames(&comment, &rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The frames of type `kind` among `sizes`.
    fn of_type(sizes: &[u32], kind: FrameType) -> Vec<f64> {
        sizes
            .iter()
            .enumerate()
            .filter(|&(k, _)| frame_type(k) == kind)
            .map(|(_, &s)| f64::from(s))
            .collect()
    }

    fn mean(v: &[f64]) -> f64 {
        v.iter().sum::<f64>() / v.len() as f64
    }

    #[test]
    fn gop_pattern() {
        let letters: String = (0..24).map(|k| frame_type(k).letter()).collect();
        assert_eq!(letters, "IBBPBBPBBPBBIBBPBBPBBPBB");
    }

    #[test]
    fn lognormal_parameters() {
        // s² = ln(1 + 0.0625) = 0.060625; m = ln 7000 - s²/2.
        let (m, s) = I_FRAMES.log_params();
        assert!((s - 0.246_221).abs() < 1e-6, "{s}");
        assert!((m - (7000f64.ln() - 0.030_312_5)).abs() < 1e-6, "{m}");
    }

    #[test]
    fn sizes_follow_the_documented_laws() {
        // 10 000 groups of pictures: 10 000 I, 30 000 P, 80 000 B frames.
        let sizes = synthetic_mpeg1(7, 120_000);
        assert!(sizes.iter().all(|&s| (1..=MAX_FRAME_BYTES).contains(&s)));
        // P and B frames essentially never reach the cap (P: 4 standard deviations of
        // the log away), so their means and CVs are the laws'. Standard error of the B
        // mean: 0.4 * 1200 / sqrt(80 000) = 1.7 B (0.14 %); allow 1 %.
        for (kind, law) in [(FrameType::P, P_FRAMES), (FrameType::B, B_FRAMES)] {
            let v = of_type(&sizes, kind);
            let m = mean(&v);
            assert!((m / law.mean - 1.0).abs() < 0.01, "{kind:?} mean {m}");
            let sd = (v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / v.len() as f64).sqrt();
            assert!(
                (sd / m / law.cv - 1.0).abs() < 0.03,
                "{kind:?} cv {}",
                sd / m
            );
        }
        // I frames are capped above, which leaves the median exp(m) alone: the sample
        // median's standard error in the log is 1.2533 s / sqrt(n) = 0.3 %; allow 1.5 %.
        let mut v = of_type(&sizes, FrameType::I);
        v.sort_by(f64::total_cmp);
        let median = v[v.len() / 2];
        let (m, s) = I_FRAMES.log_params();
        assert!((median / m.exp() - 1.0).abs() < 0.015, "I median {median}");
        // The capped fraction is P(X > 11 000) = 1 - Φ((ln 11 000 - m) / s) = 2.5 %,
        // here (ln 11 000 - m) / s = 1.958; binomial SE 0.16 %.
        assert!((((11_000f64.ln() - m) / s) - 1.958).abs() < 0.001);
        let capped = v
            .iter()
            .filter(|&&x| x == f64::from(MAX_FRAME_BYTES))
            .count() as f64;
        assert!((capped / v.len() as f64 - 0.0251).abs() < 0.008, "{capped}");
    }

    #[test]
    fn seeds_give_reproducible_and_distinct_traces() {
        assert_eq!(synthetic_mpeg1(3, 100), synthetic_mpeg1(3, 100));
        assert_ne!(synthetic_mpeg1(3, 100), synthetic_mpeg1(4, 100));
        // A prefix does not depend on the length asked for.
        assert_eq!(synthetic_mpeg1(3, 100)[..50], synthetic_mpeg1(3, 50)[..]);
    }
}
