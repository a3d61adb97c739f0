//! ON-OFF sources with random period lengths: exponential or Pareto.
//!
//! The source alternates ON periods, during which it sends CBR at `peak`, and silent OFF
//! periods. An ON period starting at `t` has a length `L` drawn when it starts; packet
//! `k` (from 0) of the period is emitted at `t + peak.tx_time(k * size)` for every `k`
//! with that instant strictly before `t + L` — so a period carries `ceil(L / T)` packets
//! (`T = size * 8 / peak`; none if `L` rounds to 0 ns) and the source's long-run rate is
//! `size * 8 * E[ceil(L / T)] / (mean_on + mean_off)`, close to
//! `peak * mean_on / (mean_on + mean_off)` when `mean_on` is much longer than `T`. The
//! OFF period that follows, drawn when the ON period ends, starts at `t + L`. The
//! packets of one ON period are one burst ([`Ctx::begin_burst`]`(false)` before its
//! first packet; an ON period without packets makes no burst).
//!
//! Period lengths follow [`Law`]: exponential of the configured mean, or Pareto of the
//! configured shape and mean (see [`crate::rng`]), rounded to the nearest nanosecond.
//! Draws happen in the order the periods begin (ON, OFF, ON, ...).
//!
//! Restart: each ON interval of the schedule begins with a fresh ON period.

use linkshare_core::units::{Bytes, Duration, Instant, Rate};

use super::Gate;
use crate::agent::{Agent, Ctx};
use crate::rng::{Rng, nanos};

/// The distribution of ON and OFF period lengths.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Law {
    /// Exponential.
    Exponential,
    /// Pareto with this shape (> 1).
    Pareto {
        /// The shape (tail index).
        shape: f64,
    },
}

/// What the pending timer is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pending {
    /// The next packet of the current ON period.
    Packet,
    /// The end of the current OFF period.
    OffEnd,
}

/// An exponential or Pareto ON-OFF source. See the [module docs](self).
#[derive(Debug)]
pub struct OnOff {
    peak: Rate,
    size: u32,
    mean_on_ns: f64,
    mean_off_ns: f64,
    law: Law,
    rng: Rng,
    gate: Gate,
    on_start: Instant,
    on_end: Instant,
    /// Index of the next packet in the current ON period.
    k: u64,
    pending: Pending,
}

impl OnOff {
    /// CBR at `peak` in packets of `size` bytes during ON periods of mean `mean_on`,
    /// separated by OFF periods of mean `mean_off`, lengths following `law`.
    pub fn new(
        peak: Rate,
        size: u32,
        mean_on: Duration,
        mean_off: Duration,
        law: Law,
        rng: Rng,
    ) -> OnOff {
        OnOff {
            peak,
            size,
            mean_on_ns: mean_on.0 as f64,
            mean_off_ns: mean_off.0 as f64,
            law,
            rng,
            gate: Gate::default(),
            on_start: Instant::ZERO,
            on_end: Instant::ZERO,
            k: 0,
            pending: Pending::Packet,
        }
    }

    fn draw(&mut self, mean_ns: f64) -> Duration {
        nanos(match self.law {
            Law::Exponential => self.rng.exponential(mean_ns),
            Law::Pareto { shape } => self.rng.pareto(shape, mean_ns),
        })
    }

    fn begin_on(&mut self, ctx: &mut Ctx<'_>) {
        self.on_start = ctx.now();
        let len = self.draw(self.mean_on_ns);
        self.on_end = self.on_start.saturating_add(len);
        self.k = 0;
        self.arm(ctx);
    }

    /// Sets the timer for the next packet of the ON period, or for the end of the OFF
    /// period that follows it.
    fn arm(&mut self, ctx: &mut Ctx<'_>) {
        let offset = self.peak.tx_time(Bytes(self.k * u64::from(self.size)));
        let at = self.on_start.saturating_add(offset);
        if at < self.on_end {
            self.pending = Pending::Packet;
            ctx.set_timer(at, self.gate.token());
        } else {
            let off = self.draw(self.mean_off_ns);
            self.pending = Pending::OffEnd;
            ctx.set_timer(self.on_end.saturating_add(off), self.gate.token());
        }
    }
}

impl Agent for OnOff {
    fn on_start(&mut self, ctx: &mut Ctx<'_>) {
        self.gate.open();
        self.begin_on(ctx);
    }

    fn on_stop(&mut self, _ctx: &mut Ctx<'_>) {
        self.gate.close();
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_>, token: u64) {
        if !self.gate.accepts(token) {
            return;
        }
        match self.pending {
            Pending::Packet => {
                if self.k == 0 {
                    ctx.begin_burst(false);
                }
                ctx.emit(self.size);
                self.k += 1;
                self.arm(ctx);
            }
            Pending::OffEnd => self.begin_on(ctx),
        }
    }
}
