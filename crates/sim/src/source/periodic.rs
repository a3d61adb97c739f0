//! Periodic ON-OFF: a burst of `burst` packets sent at `peak` every `period`.
//!
//! Within an ON interval starting at `s`, packet `i` (from 0) of burst `j` (from 0) is
//! emitted at `s + o + j * period + peak.tx_time(i * size)`, where the offset `o` is 0
//! unless a start offset is configured. The configuration check ensures a burst fits in a
//! period (`peak.tx_time(burst * size) <= period`), so bursts never overlap. Each period's
//! packets are one burst ([`Ctx::begin_burst`] before its first packet). Restart: `j`
//! and `i` start again from 0 at each ON interval. Over TCP each packet is a write of
//! `size` bytes at its instant, so the application writes at the peak rate.
//!
//! # Variations (the FSC paper's sources, [`OnOffVariations`])
//!
//! * **Start offset** (§3.1: "the starting times of the flows are drawn from an
//!   exponential distribution"): at each ON interval's start, one exponential draw of
//!   the configured mean, rounded to the nanosecond ([`crate::rng::nanos`]), taken modulo
//!   the period, is the offset `o` of the interval's first burst.
//! * **Geometric burst sizes** (§3.3's "burst size exponentially distributed with a mean
//!   of 16 packets", in whole packets): each burst has
//!   `k = 1 + floor(ln u / ln(1 - 1/m))` packets (one uniform draw `u` in `(0, 1]` per
//!   burst, at its first packet), the geometric law on {1, 2, ...} of mean `m`, capped at
//!   `burst` (so the burst still fits the period). With `m = 1` every burst is one packet.
//! * **A new connection per burst**: [`Ctx::begin_burst`]`(true)`: over TCP each burst
//!   opens a connection of its own, over UDP each burst is a new flow for per-flow
//!   classes (the FSC paper's Table 1: a series of new flows of 10 packets).
//!
//! Draws, in order: the offset at each ON interval's start, then each burst's size at its
//! first packet. Without variations the source draws nothing.

use linkshare_core::units::{Bytes, Duration, Instant, Rate};

use super::Gate;
use crate::agent::{Agent, Ctx};
use crate::config::OnOffVariations;
use crate::rng::{Rng, nanos};

/// A periodic ON-OFF source. See the [module docs](self).
#[derive(Debug)]
pub struct PeriodicOnOff {
    /// Packets per burst (the most, with geometric sizes).
    burst: u32,
    peak: Rate,
    period: Duration,
    size: u32,
    variations: OnOffVariations,
    /// The flow's stream, drawn from only with variations.
    rng: Option<Rng>,
    gate: Gate,
    /// When burst 0 of the current ON interval starts.
    start: Instant,
    /// Index of the current burst.
    j: u64,
    /// Index of the next packet in the current burst.
    i: u32,
    /// Packets in the current burst.
    current: u32,
}

impl PeriodicOnOff {
    /// Bursts of `burst` packets of `size` bytes at `peak`, one every `period`.
    pub fn new(burst: u32, peak: Rate, period: Duration, size: u32) -> PeriodicOnOff {
        PeriodicOnOff {
            burst,
            peak,
            period,
            size,
            variations: OnOffVariations::default(),
            rng: None,
            gate: Gate::default(),
            start: Instant::ZERO,
            j: 0,
            i: 0,
            current: burst,
        }
    }

    /// The same source with `variations`, drawing from `rng`.
    pub fn with(mut self, variations: OnOffVariations, rng: Rng) -> PeriodicOnOff {
        self.variations = variations;
        self.rng = Some(rng);
        self
    }

    /// The size of the next burst: `burst`, or a geometric draw.
    fn next_burst_size(&mut self) -> u32 {
        match (self.variations.geometric_mean, self.rng.as_mut()) {
            (Some(m), Some(rng)) if m > 1 => {
                let q = 1.0 - 1.0 / f64::from(m);
                let k = 1.0 + (rng.uniform().ln() / q.ln()).floor();
                // `as` saturates; the cap keeps the burst inside its period.
                (k as u32).clamp(1, self.burst)
            }
            (Some(_), _) => 1,
            (None, _) => self.burst,
        }
    }

    fn emit_and_arm(&mut self, ctx: &mut Ctx<'_>) {
        if self.i == 0 {
            self.current = self.next_burst_size();
            ctx.begin_burst(self.variations.new_connection);
        }
        ctx.emit(self.size);
        self.i += 1;
        if self.i == self.current {
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
        let offset = match (self.variations.start_offset_mean, self.rng.as_mut()) {
            (Some(mean), Some(rng)) => {
                let draw = nanos(rng.exponential(mean.as_nanos() as f64));
                Duration(draw.0 % self.period.0.max(1))
            }
            _ => Duration::ZERO,
        };
        self.start = ctx.now().saturating_add(offset);
        self.j = 0;
        self.i = 0;
        if offset == Duration::ZERO {
            self.emit_and_arm(ctx);
        } else {
            ctx.set_timer(self.start, self.gate.token());
        }
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
