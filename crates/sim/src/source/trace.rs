//! Trace replay.
//!
//! The trace clock starts at the beginning of the flow's first ON interval, `s0`: record
//! `i` is emitted at `s0 + records[i].at` with its own size, if that instant lies inside
//! an ON interval; records falling outside every ON interval are skipped, not delayed.
//! Records due at the same instant are emitted in trace order. Restart: the trace clock
//! does not restart; a later ON interval resumes with the first record due at or after
//! its start. No randomness.

use std::sync::Arc;

use linkshare_core::units::Instant;

use super::Gate;
use crate::agent::{Agent, Ctx};
use crate::config::TraceRecord;

/// A trace replay source. See the [module docs](self).
#[derive(Debug)]
pub struct Trace {
    records: Arc<[TraceRecord]>,
    /// Start of the first ON interval, once it has begun.
    origin: Option<Instant>,
    /// Index of the next record to emit.
    next: usize,
    gate: Gate,
}

impl Trace {
    /// Replays `records` (sorted by time).
    pub fn new(records: Arc<[TraceRecord]>) -> Trace {
        Trace {
            records,
            origin: None,
            next: 0,
            gate: Gate::default(),
        }
    }

    fn due(&self, i: usize, origin: Instant) -> Instant {
        origin.saturating_add(self.records[i].at)
    }

    fn arm(&mut self, ctx: &mut Ctx<'_>, origin: Instant) {
        if self.next < self.records.len() {
            ctx.set_timer(self.due(self.next, origin), self.gate.token());
        }
    }
}

impl Agent for Trace {
    fn on_start(&mut self, ctx: &mut Ctx<'_>) {
        self.gate.open();
        let now = ctx.now();
        let origin = *self.origin.get_or_insert(now);
        while self.next < self.records.len() && self.due(self.next, origin) < now {
            self.next += 1;
        }
        self.arm(ctx, origin);
    }

    fn on_stop(&mut self, _ctx: &mut Ctx<'_>) {
        self.gate.close();
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_>, token: u64) {
        let Some(origin) = self.origin else { return };
        if !self.gate.accepts(token) {
            return;
        }
        let now = ctx.now();
        while self.next < self.records.len() && self.due(self.next, origin) <= now {
            ctx.emit(self.records[self.next].size);
            self.next += 1;
        }
        self.arm(ctx, origin);
    }
}
