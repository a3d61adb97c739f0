//! Poisson arrivals.
//!
//! Gaps between packets are independent exponential samples of mean `size * 8 / rate`
//! seconds, each rounded to the nearest nanosecond ([`crate::rng::nanos`]). Restart: the
//! first packet of an ON interval comes one gap after its start (by memorylessness this
//! is the same process as continuing). One draw per packet, in emission order.

use linkshare_core::units::Rate;

use super::{ExponentialGaps, mean_gap_ns};
use crate::agent::{Agent, Ctx};
use crate::rng::Rng;

/// A Poisson source. See the [module docs](self).
#[derive(Debug)]
pub struct Poisson {
    size: u32,
    rng: Rng,
    gaps: ExponentialGaps,
}

impl Poisson {
    /// Packets of `size` bytes at mean rate `rate` (positive), drawing from `rng`.
    pub fn new(rate: Rate, size: u32, rng: Rng) -> Poisson {
        Poisson {
            size,
            rng,
            gaps: ExponentialGaps::new(mean_gap_ns(size, rate)),
        }
    }
}

impl Agent for Poisson {
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
