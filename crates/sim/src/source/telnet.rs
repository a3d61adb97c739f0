//! Telnet: small packets (keystrokes) after exponential gaps.
//!
//! Gaps between packets are independent exponential samples of mean `mean_gap`, each
//! rounded to the nearest nanosecond ([`crate::rng::nanos`]). Every packet is `size`
//! bytes (64 in the FSC paper) and a burst of its own: [`Ctx::begin_burst`]`(false)`
//! precedes each emit, so the burst delay of a Telnet flow is its per-packet delay.
//!
//! Restart: the first packet of an ON interval comes one gap after its start. One draw
//! per packet, in emission order (the gap before it).

use linkshare_core::units::Duration;

use super::RandomGaps;
use crate::agent::{Agent, Ctx};
use crate::rng::Rng;

/// A Telnet source. See the [module docs](self).
#[derive(Debug)]
pub struct Telnet {
    size: u32,
    rng: Rng,
    gaps: RandomGaps,
}

impl Telnet {
    /// Packets of `size` bytes after exponential gaps of mean `mean_gap` (positive),
    /// drawing from `rng`.
    pub fn new(size: u32, mean_gap: Duration, rng: Rng) -> Telnet {
        Telnet {
            size,
            rng,
            gaps: RandomGaps::exponential(mean_gap.0 as f64),
        }
    }
}

impl Agent for Telnet {
    fn on_start(&mut self, ctx: &mut Ctx<'_>) {
        self.gaps.start(ctx, &mut self.rng);
    }

    fn on_stop(&mut self, _ctx: &mut Ctx<'_>) {
        self.gaps.stop();
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_>, token: u64) {
        self.gaps.fire(ctx, token, &mut self.rng, |ctx, _| {
            ctx.begin_burst(false);
            ctx.emit(self.size);
        });
    }
}
