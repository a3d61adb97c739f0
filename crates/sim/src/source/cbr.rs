//! Constant bit rate.
//!
//! Within an ON interval starting at `s`, packet `k` (from 0) is emitted at
//! `s + rate.tx_time(k * size)`: the exact times of a fluid CBR stream rounded up to the
//! nanosecond, without drift (the long-run rate is exactly `rate`). Restart: `k` starts
//! again from 0 at each ON interval. No randomness.

use linkshare_core::units::{Bytes, Instant, Rate};

use super::Gate;
use crate::agent::{Agent, Ctx};

/// A CBR source. See the [module docs](self).
#[derive(Debug)]
pub struct Cbr {
    rate: Rate,
    size: u32,
    gate: Gate,
    start: Instant,
    k: u64,
}

impl Cbr {
    /// Packets of `size` bytes at `rate` (positive).
    pub fn new(rate: Rate, size: u32) -> Cbr {
        Cbr {
            rate,
            size,
            gate: Gate::default(),
            start: Instant::ZERO,
            k: 0,
        }
    }

    fn emit_and_arm(&mut self, ctx: &mut Ctx<'_>) {
        ctx.emit(self.size);
        self.k += 1;
        let offset = self.rate.tx_time(Bytes(self.k * u64::from(self.size)));
        ctx.set_timer(self.start.saturating_add(offset), self.gate.token());
    }
}

impl Agent for Cbr {
    fn on_start(&mut self, ctx: &mut Ctx<'_>) {
        self.gate.open();
        self.start = ctx.now();
        self.k = 0;
        self.emit_and_arm(ctx);
    }

    fn on_stop(&mut self, _ctx: &mut Ctx<'_>) {
        self.gate.close();
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_>, token: u64) {
        if self.gate.accepts(token) {
            self.emit_and_arm(ctx);
        }
    }
}
