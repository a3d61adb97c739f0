//! FTP: a bulk transfer, finite or endless.
//!
//! A finite transfer of `bytes` is written whole at the start of each ON interval: one
//! burst ([`Ctx::begin_burst`]`(false)`), then the bytes as packets of `size` at that
//! instant, the last one shorter (see the [`source`](super#messages-larger-than-a-packet)
//! docs). Over UDP that is `ceil(bytes / size)` packets entering the first hop at once;
//! over TCP the connection receives the `bytes` in one go and paces them itself. Nothing
//! more is sent until the next ON interval, which starts the same transfer again (on
//! the same connection).
//!
//! An endless transfer is the [greedy](super::greedy) source with a backlog of
//! [`ENDLESS_BACKLOG`] packets: it is built as one (see [`super::build`]), so the two
//! configurations behave identically.
//!
//! Restart: each ON interval begins a new transfer of `bytes`. No randomness.

use crate::agent::{Agent, Ctx};

/// Packets an endless transfer keeps queued at its first hop (the greedy source's
/// backlog): 2 keeps the flow's class backlogged at the instant of each dequeue.
pub const ENDLESS_BACKLOG: u32 = 2;

/// A finite FTP transfer. See the [module docs](self).
#[derive(Debug)]
pub struct Ftp {
    bytes: u64,
    size: u32,
}

impl Ftp {
    /// A transfer of `bytes` (positive) in packets of at most `size` (positive) bytes at
    /// the start of each ON interval.
    pub fn new(bytes: u64, size: u32) -> Ftp {
        Ftp { bytes, size }
    }
}

impl Agent for Ftp {
    fn on_start(&mut self, ctx: &mut Ctx<'_>) {
        ctx.begin_burst(false);
        super::emit_message(ctx, self.bytes, self.size);
    }

    fn on_stop(&mut self, _ctx: &mut Ctx<'_>) {}

    fn on_timer(&mut self, _ctx: &mut Ctx<'_>, _token: u64) {}
}
