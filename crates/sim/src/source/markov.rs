//! Two-state Markov-modulated Poisson process.
//!
//! In state `s` packets arrive as a Poisson process of rate `rates[s]` (none if the rate
//! is zero) and the source leaves `s` after an exponential sojourn of mean
//! `mean_sojourn[s]`. Sojourns and gaps are exponential samples rounded to the nearest
//! nanosecond. On entering a state at `t` the source draws the sojourn, then (if the
//! state's rate is positive) the first gap from `t`; after each packet it draws the next
//! gap. An arrival due at the very instant the state ends is emitted before the switch;
//! an arrival due later is discarded and a fresh gap is drawn in the new state (the
//! process is memoryless, so this is exact). The long-run rate is
//! `(rates[0] * mean_sojourn[0] + rates[1] * mean_sojourn[1]) / (mean_sojourn[0] +
//! mean_sojourn[1])`.
//!
//! Restart: each ON interval of the schedule begins in state 0.

use linkshare_core::units::{Duration, Instant, Rate};

use super::{Gate, mean_gap_ns};
use crate::agent::{Agent, Ctx};
use crate::rng::{Rng, nanos};

/// A two-state MMPP source. See the [module docs](self).
#[derive(Debug)]
pub struct Markov2 {
    /// Mean gap in each state, `None` for a zero rate.
    mean_gap_ns: [Option<f64>; 2],
    mean_sojourn_ns: [f64; 2],
    size: u32,
    rng: Rng,
    gate: Gate,
    state: usize,
    state_end: Instant,
    next_arrival: Option<Instant>,
}

impl Markov2 {
    /// Poisson at `rates[s]` in state `s`, sojourns of mean `mean_sojourn[s]` (positive),
    /// packets of `size` bytes.
    pub fn new(rates: [Rate; 2], mean_sojourn: [Duration; 2], size: u32, rng: Rng) -> Markov2 {
        let gap = |r: Rate| (r != Rate::ZERO).then(|| mean_gap_ns(size, r));
        Markov2 {
            mean_gap_ns: [gap(rates[0]), gap(rates[1])],
            mean_sojourn_ns: [mean_sojourn[0].0 as f64, mean_sojourn[1].0 as f64],
            size,
            rng,
            gate: Gate::default(),
            state: 0,
            state_end: Instant::ZERO,
            next_arrival: None,
        }
    }

    fn enter(&mut self, ctx: &mut Ctx<'_>, state: usize) {
        self.state = state;
        let now = ctx.now();
        let sojourn = nanos(self.rng.exponential(self.mean_sojourn_ns[state]));
        self.state_end = now.saturating_add(sojourn);
        self.next_arrival =
            self.mean_gap_ns[state].map(|m| now.saturating_add(nanos(self.rng.exponential(m))));
        self.arm(ctx);
    }

    fn arm(&mut self, ctx: &mut Ctx<'_>) {
        let at = match self.next_arrival {
            Some(a) if a <= self.state_end => a,
            _ => self.state_end,
        };
        ctx.set_timer(at, self.gate.token());
    }
}

impl Agent for Markov2 {
    fn on_start(&mut self, ctx: &mut Ctx<'_>) {
        self.gate.open();
        self.enter(ctx, 0);
    }

    fn on_stop(&mut self, _ctx: &mut Ctx<'_>) {
        self.gate.close();
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_>, token: u64) {
        if !self.gate.accepts(token) {
            return;
        }
        let now = ctx.now();
        match (self.next_arrival, self.mean_gap_ns[self.state]) {
            (Some(a), Some(mean)) if a == now && a <= self.state_end => {
                ctx.emit(self.size);
                self.next_arrival = Some(now.saturating_add(nanos(self.rng.exponential(mean))));
                self.arm(ctx);
            }
            _ => self.enter(ctx, 1 - self.state),
        }
    }
}
