//! Poisson arrivals.
//!
//! Gaps between packets are independent exponential samples of mean `size * 8 / rate`
//! seconds, each rounded to the nearest nanosecond ([`crate::rng::nanos`]). Restart: the
//! first packet of an ON interval comes one gap after its start (by memorylessness this
//! is the same process as continuing). One draw per packet, in emission order.

use linkshare_core::units::Rate;

use super::{Gate, mean_gap_ns};
use crate::agent::{Agent, Ctx};
use crate::rng::{Rng, nanos};

/// A Poisson source. See the [module docs](self).
#[derive(Debug)]
pub struct Poisson {
    mean_gap: f64,
    size: u32,
    rng: Rng,
    gate: Gate,
}

impl Poisson {
    /// Packets of `size` bytes at mean rate `rate` (positive), drawing from `rng`.
    pub fn new(rate: Rate, size: u32, rng: Rng) -> Poisson {
        Poisson {
            mean_gap: mean_gap_ns(size, rate),
            size,
            rng,
            gate: Gate::default(),
        }
    }

    fn arm(&mut self, ctx: &mut Ctx<'_>) {
        let gap = nanos(self.rng.exponential(self.mean_gap));
        ctx.set_timer(ctx.now().saturating_add(gap), self.gate.token());
    }
}

impl Agent for Poisson {
    fn on_start(&mut self, ctx: &mut Ctx<'_>) {
        self.gate.open();
        self.arm(ctx);
    }

    fn on_stop(&mut self, _ctx: &mut Ctx<'_>) {
        self.gate.close();
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_>, token: u64) {
        if self.gate.accepts(token) {
            ctx.emit(self.size);
            self.arm(ctx);
        }
    }
}
