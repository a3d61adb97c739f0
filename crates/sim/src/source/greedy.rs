//! Greedy: always backlogged at the first hop.
//!
//! The source keeps `backlog` of its packets queued at the first hop's port. It counts
//! its *outstanding* packets — emitted, and neither taken from the first port's queue
//! for transmission nor dropped there. When an ON interval starts, and whenever one of
//! its packets starts transmission on the first link during an ON interval, it emits
//! enough packets to bring the outstanding count back to `backlog`. A packet dropped at
//! the first hop is not replaced at once (replacing it at the same instant could loop
//! forever against a full buffer) but at the next departure; if every outstanding packet
//! is dropped, the source waits for its next ON interval. Outside ON intervals it emits
//! nothing; packets already queued still drain. No randomness.
//!
//! Restart: at each ON interval the backlog is topped up to `backlog`.

use linkshare_core::sched::DropReason;

use crate::agent::{Agent, Ctx};
use crate::packet::SimPacket;

/// A greedy source. See the [module docs](self).
#[derive(Debug)]
pub struct Greedy {
    size: u32,
    backlog: u32,
    on: bool,
    outstanding: u32,
}

impl Greedy {
    /// Keeps `backlog` (at least 1) packets of `size` bytes queued at the first hop.
    pub fn new(size: u32, backlog: u32) -> Greedy {
        Greedy {
            size,
            backlog,
            on: false,
            outstanding: 0,
        }
    }

    fn top_up(&mut self, ctx: &mut Ctx<'_>) {
        while self.outstanding < self.backlog {
            ctx.emit(self.size);
            self.outstanding += 1;
        }
    }
}

impl Agent for Greedy {
    fn on_start(&mut self, ctx: &mut Ctx<'_>) {
        self.on = true;
        self.top_up(ctx);
    }

    fn on_stop(&mut self, _ctx: &mut Ctx<'_>) {
        self.on = false;
    }

    fn on_timer(&mut self, _ctx: &mut Ctx<'_>, _token: u64) {}

    fn on_departure(&mut self, ctx: &mut Ctx<'_>, _pkt: &SimPacket) {
        self.outstanding -= 1;
        if self.on {
            self.top_up(ctx);
        }
    }

    fn on_dropped(&mut self, _ctx: &mut Ctx<'_>, pkt: &SimPacket, _reason: DropReason) {
        if pkt.hop == 0 {
            self.outstanding -= 1;
        }
    }
}
