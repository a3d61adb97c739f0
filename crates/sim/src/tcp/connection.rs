//! One TCP connection: its sender and receiver, their timers, the optional handshake,
//! and the bookkeeping of the application bursts written into it.
//!
//! Both ends live here, but they only communicate through packets: the sender's state
//! changes on acknowledgements that reached the source's node, the receiver's on
//! segments that reached the sink's node.
//!
//! # Handshake
//!
//! With [`TcpConfig::handshake`], the connection opens with a SYN (forward, `header`
//! bytes) answered by a SYN-ACK (reverse, `header` bytes); data flows when the SYN-ACK
//! arrives. The third segment of the handshake is not sent on its own: its
//! acknowledgement carries nothing the receiver needs, and the first data segment
//! follows at once. The SYN is retransmitted when the retransmission timer expires, with
//! backoff (each expiry counts as a timeout and a retransmission). A SYN-ACK answering a
//! SYN sent once gives the first RTT sample; if the SYN was retransmitted, no sample is
//! taken (Karn) and the RTO is re-initialised to `max(3 s, initial RTO)` when data
//! transmission begins (RFC 6298 (5.7)). Sequence numbers start at 0 either way (the
//! SYN consumes none).

use std::collections::VecDeque;

use linkshare_core::units::{Duration, Instant};

use super::receiver::{AckPolicy, Receiver};
use super::sender::{Seg, Sender, TimerCmd};
use super::timer::{Fired, LazyTimer, TimerId, TimerKind};
use crate::agent::{Ctx, Segment};
use crate::config::TcpConfig;
use crate::packet::{NO_BURST, PacketKind};
use crate::result::{TcpSample, TransportReport};

/// RFC 6298 (5.7): the RTO after a lost SYN or SYN-ACK.
const RTO_AFTER_SYN_LOSS: Duration = Duration::from_secs(3);

/// What a connection needs from its agent during one callback: the engine handle and
/// the flow's report (counters, bursts, trace).
#[derive(Debug)]
pub(crate) struct Io<'a, 'b> {
    /// The engine.
    pub(crate) ctx: &'a mut Ctx<'b>,
    /// The flow's measurements.
    pub(crate) report: &'a mut TransportReport,
    /// Whether to record [`TcpSample`]s.
    pub(crate) trace: bool,
}

/// Where the connection is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// The SYN was sent at `sent_at` (the last transmission), no SYN-ACK came back yet.
    SynSent {
        /// When the SYN was last sent.
        sent_at: Instant,
        /// Whether it was sent more than once.
        retransmitted: bool,
    },
    /// Data may flow.
    Established,
}

/// An application burst written into this connection: bytes `[start, end)` of its
/// sequence space.
#[derive(Clone, Copy, Debug)]
struct PendingBurst {
    /// Index in the flow's [`TransportReport::bursts`].
    index: u32,
    start: u64,
    end: u64,
    /// Whether any of its bytes has been sent.
    sent: bool,
}

/// The congestion state last traced.
type Snapshot = (u64, u64, Option<Duration>, Option<Duration>, Duration);

/// One connection. See the [module docs](self).
#[derive(Debug)]
pub(crate) struct Connection {
    id: u32,
    header: u32,
    state: State,
    sender: Sender,
    receiver: Receiver,
    /// Bytes the application wrote (exclusive end of the send buffer).
    written: u64,
    /// The application writes without end (a greedy source): `written` is unbounded.
    endless: bool,
    rtx: LazyTimer,
    delack: LazyTimer,
    /// Bursts not yet fully delivered, and always the latest one, in sequence order.
    bursts: VecDeque<PendingBurst>,
    syn_rto: Duration,
    traced: Option<Snapshot>,
}

impl Connection {
    /// Opens connection `id` now: sends the SYN if the configuration asks for a
    /// handshake.
    pub(crate) fn open(id: u32, config: &TcpConfig, io: &mut Io<'_, '_>) -> Connection {
        let now = io.ctx.now();
        let mut c = Connection {
            id,
            header: config.header,
            state: State::Established,
            sender: Sender::new(config),
            receiver: Receiver::new(config.mss, config.delayed_ack),
            written: 0,
            endless: false,
            rtx: LazyTimer::default(),
            delack: LazyTimer::default(),
            bursts: VecDeque::new(),
            syn_rto: config.initial_rto.max(RTO_AFTER_SYN_LOSS),
            traced: None,
        };
        if config.handshake {
            c.state = State::SynSent {
                sent_at: now,
                retransmitted: false,
            };
            c.send_syn(io);
            c.restart_rtx(io);
        }
        c.trace(io);
        c
    }

    /// Whether the application can write no more into it and everything it wrote is
    /// acknowledged: only a connection that is not the application's current one
    /// qualifies (the caller's business).
    pub(crate) fn is_finished(&self) -> bool {
        self.state == State::Established && !self.endless && self.sender.snd_una() == self.written
    }

    /// Whether the application has not used it yet: nothing written, no burst.
    pub(crate) fn is_unused(&self) -> bool {
        self.written == 0 && !self.endless && self.bursts.is_empty()
    }

    /// The application writes without end (`true`), or stops doing so (`false`: what
    /// has been sent so far is all it wrote).
    pub(crate) fn set_endless(&mut self, io: &mut Io<'_, '_>, endless: bool) {
        if !endless && self.endless {
            self.written = self.sender.snd_max();
        }
        self.endless = endless;
        self.output(io);
    }

    /// A new burst, flow-wide number `index`, starts with the next byte written.
    pub(crate) fn begin_burst(&mut self, index: u32) {
        self.bursts.push_back(PendingBurst {
            index,
            start: self.written,
            end: self.written,
            sent: false,
        });
    }

    /// The application writes `len` bytes, part of the latest burst if `in_burst`.
    pub(crate) fn write(&mut self, io: &mut Io<'_, '_>, len: u64, in_burst: bool) {
        self.written += len;
        if in_burst && let Some(b) = self.bursts.back_mut() {
            b.end = self.written;
        }
        self.output(io);
    }

    /// The exclusive end of the bytes the sender may send.
    fn available(&self) -> u64 {
        if self.endless { u64::MAX } else { self.written }
    }

    /// Sends every segment the window allows.
    fn output(&mut self, io: &mut Io<'_, '_>) {
        if self.state != State::Established {
            return;
        }
        let now = io.ctx.now();
        while let Some(seg) = self.sender.next_segment(now, self.available()) {
            self.transmit(io, seg);
        }
    }

    /// Puts `seg` on the wire and does the accounting.
    fn transmit(&mut self, io: &mut Io<'_, '_>, seg: Seg) {
        let now = io.ctx.now();
        let end = seg.seq + u64::from(seg.len);
        let mut burst = NO_BURST;
        for b in &mut self.bursts {
            if b.start >= end {
                break;
            }
            if b.end > seg.seq && b.end > b.start {
                if burst == NO_BURST && b.start <= seg.seq {
                    burst = b.index;
                }
                if !b.sent {
                    b.sent = true;
                    io.report.bursts[b.index as usize].first_sent = Some(now);
                }
            }
        }
        io.ctx.send(Segment {
            kind: PacketKind::Data,
            len: seg.len + self.header,
            conn: self.id,
            num: seg.seq,
            burst,
        });
        io.report.first_sent.get_or_insert(now);
        if seg.retransmission {
            io.report.retransmits += 1;
        }
        if !self.rtx.is_running() {
            self.restart_rtx(io);
        }
    }

    fn send_syn(&mut self, io: &mut Io<'_, '_>) {
        io.report.first_sent.get_or_insert(io.ctx.now());
        io.ctx.send(Segment {
            kind: PacketKind::Syn,
            len: self.header,
            conn: self.id,
            num: 0,
            burst: NO_BURST,
        });
    }

    /// (Re)starts the retransmission timer for the current RTO.
    fn restart_rtx(&mut self, io: &mut Io<'_, '_>) {
        let at = io.ctx.now().saturating_add(self.sender.rto().rto());
        if let Some(generation) = self.rtx.start(at) {
            self.arm(io, TimerKind::Retransmit, at, generation);
        }
    }

    fn arm(&self, io: &mut Io<'_, '_>, kind: TimerKind, at: Instant, generation: u32) {
        let id = TimerId {
            conn: self.id,
            kind,
            generation,
        };
        io.ctx.set_timer(at, id.token());
    }

    /// One of this connection's engine timers fired.
    pub(crate) fn on_timer(&mut self, io: &mut Io<'_, '_>, kind: TimerKind, generation: u32) {
        let now = io.ctx.now();
        let timer = match kind {
            TimerKind::Retransmit => &mut self.rtx,
            TimerKind::DelayedAck => &mut self.delack,
        };
        match timer.fired(now, generation) {
            Fired::Stale => {}
            Fired::Rearm { at, generation } => self.arm(io, kind, at, generation),
            Fired::Expired => match kind {
                TimerKind::Retransmit => self.retransmission_timeout(io),
                TimerKind::DelayedAck => self.send_ack(io),
            },
        }
    }

    fn retransmission_timeout(&mut self, io: &mut Io<'_, '_>) {
        io.report.timeouts += 1;
        match self.state {
            State::SynSent { .. } => {
                io.report.retransmits += 1;
                self.sender.rto_mut().back_off();
                self.state = State::SynSent {
                    sent_at: io.ctx.now(),
                    retransmitted: true,
                };
                self.send_syn(io);
                self.restart_rtx(io);
            }
            State::Established => {
                self.sender.on_timeout();
                self.restart_rtx(io);
                self.output(io);
            }
        }
        self.trace(io);
    }

    /// A SYN reached the receiver: answer it.
    pub(crate) fn on_syn(&mut self, io: &mut Io<'_, '_>) {
        io.ctx.send(Segment {
            kind: PacketKind::SynAck,
            len: self.header,
            conn: self.id,
            num: 0,
            burst: NO_BURST,
        });
    }

    /// A SYN-ACK reached the sender: the connection is open.
    pub(crate) fn on_syn_ack(&mut self, io: &mut Io<'_, '_>) {
        let State::SynSent {
            sent_at,
            retransmitted,
        } = self.state
        else {
            return;
        };
        if retransmitted {
            self.sender.rto_mut().reinitialize(self.syn_rto);
        } else {
            self.sender.rto_mut().sample(io.ctx.now().since(sent_at));
        }
        self.state = State::Established;
        self.rtx.stop();
        self.output(io);
        self.trace(io);
    }

    /// A data segment with payload `[seq, seq + len)` reached the receiver. Returns the
    /// bytes newly delivered in order.
    pub(crate) fn on_data(&mut self, io: &mut Io<'_, '_>, seq: u64, len: u64) -> u64 {
        if len == 0 {
            return 0;
        }
        let now = io.ctx.now();
        let arrival = self.receiver.on_segment(seq, len);
        if arrival.delivered > 0 {
            io.report.bytes_delivered += arrival.delivered;
            io.report.last_delivered = Some(now);
            self.bursts_delivered(io.report, now);
        }
        match arrival.ack {
            AckPolicy::Now => self.send_ack(io),
            AckPolicy::Delay(delay) => {
                if !self.delack.is_running() {
                    let at = now.saturating_add(delay);
                    if let Some(generation) = self.delack.start(at) {
                        self.arm(io, TimerKind::DelayedAck, at, generation);
                    }
                }
            }
        }
        arrival.delivered
    }

    /// Updates the bursts after the receiver's in-order point advanced.
    fn bursts_delivered(&mut self, report: &mut TransportReport, now: Instant) {
        let rcv_nxt = self.receiver.rcv_nxt();
        for b in &self.bursts {
            if b.start >= rcv_nxt {
                break;
            }
            let record = &mut report.bursts[b.index as usize];
            let delivered = rcv_nxt.min(b.end) - b.start;
            if delivered > record.delivered {
                record.last_delivered = Some(now);
            }
            record.delivered = delivered;
            if rcv_nxt >= b.end && record.completed.is_none() {
                record.completed = Some(now);
            }
        }
        while self.bursts.len() > 1 && self.bursts.front().is_some_and(|b| b.end <= rcv_nxt) {
            self.bursts.pop_front();
        }
    }

    fn send_ack(&mut self, io: &mut Io<'_, '_>) {
        self.receiver.acknowledged();
        self.delack.stop();
        io.ctx.send(Segment {
            kind: PacketKind::Ack,
            len: self.header,
            conn: self.id,
            num: self.receiver.rcv_nxt(),
            burst: NO_BURST,
        });
    }

    /// An acknowledgement of everything below `ack` reached the sender.
    pub(crate) fn on_ack(&mut self, io: &mut Io<'_, '_>, ack: u64) {
        if self.state != State::Established {
            return;
        }
        let outcome = self.sender.on_ack(io.ctx.now(), ack);
        match outcome.timer {
            TimerCmd::Keep => {}
            TimerCmd::Restart => self.restart_rtx(io),
            TimerCmd::Stop => self.rtx.stop(),
        }
        if outcome.fast_retransmit {
            io.report.fast_retransmits += 1;
        }
        if let Some(seg) = outcome.retransmit {
            self.transmit(io, seg);
        }
        self.output(io);
        self.trace(io);
    }

    /// Records a [`TcpSample`] if tracing and the congestion state changed.
    fn trace(&mut self, io: &mut Io<'_, '_>) {
        if !io.trace {
            return;
        }
        let rto = self.sender.rto();
        let now: Snapshot = (
            self.sender.cwnd(),
            self.sender.ssthresh(),
            rto.srtt(),
            rto.rttvar(),
            rto.rto(),
        );
        if self.traced == Some(now) {
            return;
        }
        self.traced = Some(now);
        io.report.trace.push(TcpSample {
            at: io.ctx.now(),
            conn: self.id,
            cwnd: now.0,
            ssthresh: now.1,
            srtt: now.2,
            rttvar: now.3,
            rto: now.4,
        });
    }
}
