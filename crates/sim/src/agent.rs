//! Agents: the state machines at the ends of a flow.
//!
//! Every flow is driven by one [`Agent`]. The engine calls it when something happens to
//! the flow — an ON interval of its schedule starts or ends, one of its timers fires,
//! one of its packets leaves the first port, reaches the sink or is dropped — and the
//! agent reacts through a [`Ctx`]: it emits packets (queued at the first hop of the route
//! at the current instant) and sets timers. The agent never sees the engine, the clock or
//! other flows, so a run stays deterministic.
//!
//! The built-in traffic sources ([`crate::source`]) are agents that use only the
//! schedule, their timers and (the greedy source) departures.
//!
//! # Transport agents
//!
//! A TCP connection is one agent per flow ([`crate::tcp`]): it wraps the flow's
//! source, turning what the source emits into application bytes in its send buffer, and
//! sends segments with [`Ctx::send`]. Forward kinds ([`PacketKind::Data`],
//! [`PacketKind::Syn`]) travel the flow's route; reverse kinds (acknowledgements) its
//! reverse route. `on_delivered` reports both: a segment reaching the receiver, an
//! acknowledgement reaching the sender. An agent may keep sending outside its ON
//! intervals (acknowledgements, retransmissions); the engine does not forbid it.
//!
//! # Bursts
//!
//! A source that sends in bursts (an ON period, a frame, a web transfer, a keystroke)
//! calls [`Ctx::begin_burst`] before the burst's first emit: the packets emitted after it
//! belong to the new burst. Over UDP the engine measures each burst's delay (first
//! packet sent to last packet received); a transport agent intercepts the call and
//! measures bursts itself, reporting them with [`Agent::report`].
//!
//! # Timers
//!
//! A timer set for `at` fires `on_timer(token)` at `at` (never before the current
//! instant) unless the run ends first. Timers cannot be cancelled: an agent that no
//! longer wants one ignores it when it fires, typically by putting a generation number
//! in the token. Events due at the same instant run in the order they were scheduled, so
//! a timer set for the instant an ON interval ends fires after `on_stop` (the engine
//! schedules the end of an interval when the interval starts, before the agent runs).

use std::fmt;

use linkshare_core::sched::DropReason;
use linkshare_core::units::Instant;

use crate::config::FlowId;
use crate::packet::{PacketKind, SimPacket};
use crate::result::TransportReport;

/// What an agent asked the engine to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    /// Create a data packet of `len` bytes now and queue it at the first hop.
    Emit {
        /// The flow.
        flow: FlowId,
        /// Length on the wire.
        len: u32,
    },
    /// Create a packet now and queue it at the first hop of the route its kind takes.
    Send {
        /// The flow.
        flow: FlowId,
        /// What to send.
        segment: Segment,
    },
    /// The packets emitted after this belong to a new burst.
    BeginBurst {
        /// The flow.
        flow: FlowId,
        /// Whether the application opens a new connection for it (a web transfer).
        new_connection: bool,
    },
    /// Call `on_timer(token)` at `at`.
    Timer {
        /// The flow.
        flow: FlowId,
        /// When.
        at: Instant,
        /// Passed back.
        token: u64,
    },
}

/// The agent's handle on the engine during one callback.
#[derive(Debug)]
pub struct Ctx<'a> {
    now: Instant,
    flow: FlowId,
    actions: &'a mut Vec<Action>,
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(now: Instant, flow: FlowId, actions: &'a mut Vec<Action>) -> Ctx<'a> {
        Ctx { now, flow, actions }
    }

    /// The current simulated time.
    #[inline]
    pub fn now(&self) -> Instant {
        self.now
    }

    /// The flow this agent drives.
    #[inline]
    pub fn flow(&self) -> FlowId {
        self.flow
    }

    /// Emits a data packet of `len` bytes (on the wire) at the current instant. It is
    /// queued at the first hop of the flow's route after the current callback returns,
    /// in emission order.
    #[inline]
    pub fn emit(&mut self, len: u32) {
        self.actions.push(Action::Emit {
            flow: self.flow,
            len,
        });
    }

    /// Sends a packet described by `segment` at the current instant: it is queued at the
    /// first hop of the flow's route (forward kinds) or reverse route (reverse kinds)
    /// after the current callback returns, in request order.
    #[inline]
    pub fn send(&mut self, segment: Segment) {
        self.actions.push(Action::Send {
            flow: self.flow,
            segment,
        });
    }

    /// Marks the start of a burst: packets emitted after this call belong to it. See
    /// the [module docs](self#bursts). `new_connection` asks a transport for a fresh
    /// connection (a new web transfer); open-loop delivery ignores it.
    #[inline]
    pub fn begin_burst(&mut self, new_connection: bool) {
        self.actions.push(Action::BeginBurst {
            flow: self.flow,
            new_connection,
        });
    }

    /// Asks for `on_timer(token)` at `at`; an `at` in the past means now.
    #[inline]
    pub fn set_timer(&mut self, at: Instant, token: u64) {
        self.actions.push(Action::Timer {
            flow: self.flow,
            at: at.max(self.now),
            token,
        });
    }
}

/// A packet an agent sends with [`Ctx::send`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// What it carries; fixes the direction.
    pub kind: PacketKind,
    /// Length on the wire in bytes (headers included).
    pub len: u32,
    /// The transport connection within the flow ([`SimPacket::conn`]).
    pub conn: u32,
    /// The transport number ([`SimPacket::num`]).
    pub num: u64,
    /// The burst it belongs to ([`SimPacket::burst`]).
    pub burst: u32,
}

/// The state machine driving one flow. See the [module docs](self).
///
/// Every callback receives the current instant through `ctx`. The callbacks with
/// default (empty) bodies are the ones plain open-loop sources ignore.
pub trait Agent: fmt::Debug + Send {
    /// An ON interval of the flow's schedule starts now.
    fn on_start(&mut self, ctx: &mut Ctx<'_>);

    /// The current ON interval ends now; the agent must stop generating traffic until
    /// the next `on_start`.
    fn on_stop(&mut self, ctx: &mut Ctx<'_>);

    /// A timer set with [`Ctx::set_timer`] fired.
    fn on_timer(&mut self, ctx: &mut Ctx<'_>, token: u64);

    /// A packet of the flow was taken from the queue of the first hop's port and starts
    /// its transmission now.
    fn on_departure(&mut self, ctx: &mut Ctx<'_>, pkt: &SimPacket) {
        let _ = (ctx, pkt);
    }

    /// A packet of the flow reached the end of its route now (last bit arrived).
    fn on_delivered(&mut self, ctx: &mut Ctx<'_>, pkt: &SimPacket) {
        let _ = (ctx, pkt);
    }

    /// A packet of the flow was dropped now at the port of hop `pkt.hop`.
    fn on_dropped(&mut self, ctx: &mut Ctx<'_>, pkt: &SimPacket, reason: DropReason) {
        let _ = (ctx, pkt, reason);
    }

    /// What the agent measured about its transport, at the end of the run (`end`):
    /// `None` for open-loop sources, whose delivery the engine measures itself.
    fn report(&self, end: Instant) -> Option<TransportReport> {
        let _ = end;
        None
    }
}
