//! Periodic ON-OFF: a burst of `burst` packets sent at `peak` every `period`.
//!
//! Within an ON interval starting at `s`, packet `i` (from 0) of burst `j` (from 0) is
//! emitted at `s + j * period + peak.tx_time(i * size)`. The configuration check
//! ensures a burst fits in a period (`peak.tx_time(burst * size) <= period`), so bursts
//! never overlap. Each period's packets are one burst ([`Ctx::begin_burst`]`(false)`
//! before its first packet). Restart: `j` and `i` start again from 0 at each ON
//! interval, so the first burst starts with the interval. No randomness.

use linkshare_core::units::{Bytes, Duration, Instant, Rate};

use super::Gate;
use crate::agent::{Agent, Ctx};

/// A periodic ON-OFF source. See the [module docs](self).
#[derive(Debug)]
pub struct PeriodicOnOff {
    burst: u32,
    peak: Rate,
    period: Duration,
    size: u32,
    gate: Gate,
    start: Instant,
    /// Index of the current burst.
    j: u64,
    /// Index of the next packet in the current burst.
    i: u32,
}

impl PeriodicOnOff {
    /// Bursts of `burst` packets of `size` bytes at `peak`, one every `period`.
    pub fn new(burst: u32, peak: Rate, period: Duration, size: u32) -> PeriodicOnOff {
        PeriodicOnOff {
            burst,
            peak,
            period,
            size,
            gate: Gate::default(),
            start: Instant::ZERO,
            j: 0,
            i: 0,
        }
    }

    fn emit_and_arm(&mut self, ctx: &mut Ctx<'_>) {
        if self.i == 0 {
            ctx.begin_burst(false);
        }
        ctx.emit(self.size);
        self.i += 1;
        if self.i == self.burst {
            self.i = 0;
            self.j += 1;
        }
        let burst_start = Duration(self.period.0.saturating_mul(self.j));
        let in_burst = self
            .peak
            .tx_time(Bytes(u64::from(self.i) * u64::from(self.size)));
        let at = self
            .start
            .saturating_add(burst_start)
            .saturating_add(in_burst);
        ctx.set_timer(at, self.gate.token());
    }
}

impl Agent for PeriodicOnOff {
    fn on_start(&mut self, ctx: &mut Ctx<'_>) {
        self.gate.open();
        self.start = ctx.now();
        self.j = 0;
        self.i = 0;
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
