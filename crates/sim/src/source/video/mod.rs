//! Video: frames of a trace, one every `interval`, each sent as one burst.
//!
//! Within an ON interval starting at `s`, frame `k` (from 0) is sent at
//! `s + k · interval`; its size is `frames[k mod frames.len()]`, so the trace loops. A
//! frame is one burst ([`Ctx::begin_burst`]`(false)`) of packets of at most `size`
//! bytes, all emitted at the frame's instant, the last one shorter (see the
//! [`source`](super#messages-larger-than-a-packet) docs): the burst delay of a video
//! flow is its frame delay. Over TCP each frame is written into the connection whole.
//!
//! Restart: each ON interval starts again from frame 0 of the trace at its start. No
//! randomness.
//!
//! Frame sizes come from a trace file ([`parse_frames`], format in
//! [`format`](mod@format)) or a model ([`mpeg1::synthetic_mpeg1`], the model behind the
//! shipped `scenarios/traces/mpeg1-synthetic.csv`).

pub mod format;
pub mod mpeg1;

use std::sync::Arc;

pub use format::parse_frames;
pub use mpeg1::synthetic_mpeg1;

use linkshare_core::units::{Duration, Instant};

use super::Gate;
use crate::agent::{Agent, Ctx};

/// A video source. See the [module docs](self).
#[derive(Debug)]
pub struct Video {
    frames: Arc<[u32]>,
    interval: Duration,
    size: u32,
    gate: Gate,
    start: Instant,
    /// Index of the next frame since the start of the ON interval.
    k: u64,
}

impl Video {
    /// Sends `frames` (non-empty, sizes in bytes, positive), one every `interval`
    /// (positive), in packets of at most `size` (positive) bytes.
    pub fn new(frames: Arc<[u32]>, interval: Duration, size: u32) -> Video {
        Video {
            frames,
            interval,
            size,
            gate: Gate::default(),
            start: Instant::ZERO,
            k: 0,
        }
    }

    /// Sends frame `k` now and sets the timer for frame `k + 1`.
    fn send_frame(&mut self, ctx: &mut Ctx<'_>) {
        let i = (self.k % self.frames.len() as u64) as usize;
        ctx.begin_burst(false);
        super::emit_message(ctx, u64::from(self.frames[i]), self.size);
        self.k += 1;
        let offset = Duration(self.interval.0.saturating_mul(self.k));
        ctx.set_timer(self.start.saturating_add(offset), self.gate.token());
    }
}

impl Agent for Video {
    fn on_start(&mut self, ctx: &mut Ctx<'_>) {
        self.gate.open();
        self.start = ctx.now();
        self.k = 0;
        self.send_frame(ctx);
    }

    fn on_stop(&mut self, _ctx: &mut Ctx<'_>) {
        self.gate.close();
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_>, token: u64) {
        if self.gate.accepts(token) {
            self.send_frame(ctx);
        }
    }
}
