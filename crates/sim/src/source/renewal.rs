//! Renewal sources: packets after independent random gaps, exponential (Poisson
//! arrivals) or Pareto.
//!
//! Gaps between packets are independent samples of mean `size * 8 / rate` seconds,
//! each rounded to the nearest nanosecond ([`crate::rng::nanos`]): exponential for a
//! Poisson source, Pareto of the configured shape for a Pareto source (scale
//! `mean (shape - 1) / shape`, the shortest gap; see [`crate::rng`]). A shape below 2
//! gives gaps of infinite variance, and a superposition of such sources is
//! self-similar (the JoBS paper's Experiment 1 uses shape 1.9). Restart: the first
//! packet of an ON interval comes one gap after its start (for exponential gaps, by
//! memorylessness, the same process as continuing). One draw per packet, in emission
//! order.

use linkshare_core::units::Rate;

use super::onoff::Law;
use super::{RandomGaps, mean_gap_ns};
use crate::agent::{Agent, Ctx};
use crate::rng::Rng;

/// A Poisson or Pareto renewal source. See the [module docs](self).
#[derive(Debug)]
pub struct Renewal {
    size: u32,
    rng: Rng,
    gaps: RandomGaps,
}

impl Renewal {
    /// Packets of `size` bytes at mean rate `rate` (positive), gaps following `law`,
    /// drawing from `rng`.
    pub fn new(rate: Rate, size: u32, law: Law, rng: Rng) -> Renewal {
        Renewal {
            size,
            rng,
            gaps: RandomGaps::new(mean_gap_ns(size, rate), law),
        }
    }
}

impl Agent for Renewal {
    fn on_start(&mut self, ctx: &mut Ctx<'_>) {
        self.gaps.start(ctx, &mut self.rng);
    }

    fn on_stop(&mut self, _ctx: &mut Ctx<'_>) {
        self.gaps.stop();
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_>, token: u64) {
        self.gaps
            .fire(ctx, token, &mut self.rng, |ctx, _| ctx.emit(self.size));
    }
}
