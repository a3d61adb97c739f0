//! The agent of a TCP flow: the application, its connections, and the flow's report.
//!
//! # Application
//!
//! * [`SourceConfig::Greedy`] and [`SourceConfig::Ftp`] without a size write without
//!   end: during an ON interval the send buffer is never empty. When the interval ends
//!   the application stops writing: what has been sent is all it wrote, and is still
//!   delivered. No bursts.
//! * [`SourceConfig::Ftp`] with `bytes = Some(n)`: at the start of every ON interval the
//!   application writes `n` bytes, one burst.
//! * Every other source runs unchanged, wrapped: each packet of `len` bytes it would
//!   emit is a write of `len` application bytes at that instant, its bursts are the
//!   flow's bursts, and a burst asking for a new connection (a web transfer) opens one.
//!   Its timers pass through (their tokens must leave bit 63 clear; see
//!   [`super::timer`]). When its ON interval ends it stops; what it wrote is still
//!   delivered.
//!
//! The application writes into its *current* connection (number 0 at first). A
//! connection the application has left (a finished web transfer) is dropped once
//! everything written into it is acknowledged; segments and timers arriving for it
//! afterwards are ignored.
//!
//! # Report
//!
//! `bytes_delivered` is goodput (in order, once); `completed` is the last instant at
//! which everything written had been delivered, given if the application's writes are
//! finite: an FTP transfer of `n` bytes, or a wrapped source that is off at the end of
//! the run (an endless writer never completes).

use linkshare_core::units::Instant;

use super::connection::{Connection, Io};
use super::timer::{MAX_CONNECTIONS, TimerId};
use crate::agent::{Action, Agent, Ctx};
use crate::config::{SourceConfig, TcpConfig};
use crate::packet::{PacketKind, SimPacket};
use crate::result::{BurstRecord, TransportReport};
use crate::rng::Rng;

/// What writes into the connections.
#[derive(Debug)]
enum App {
    /// An endless writer (greedy, FTP without a size).
    Endless,
    /// `n` bytes at the start of every ON interval.
    Bulk(u64),
    /// A wrapped open-loop source.
    Source(Box<dyn crate::agent::Agent>),
}

/// A TCP flow's agent. See the [module docs](self) and [`crate::tcp`].
#[derive(Debug)]
pub struct TcpAgent {
    config: TcpConfig,
    app: App,
    /// Connections by id; `None` once dropped.
    conns: Vec<Option<Box<Connection>>>,
    /// The connection the application writes into.
    current: Option<u32>,
    /// The burst the application's writes belong to, and its connection.
    current_burst: Option<(u32, u32)>,
    /// Whether the application is in an ON interval.
    app_on: bool,
    report: TransportReport,
    /// Application bytes written, over all connections.
    written: u64,
    /// The last instant at which everything written had been delivered.
    caught_up: Option<Instant>,
    /// Actions of the wrapped source, reused.
    scratch: Vec<Action>,
}

impl TcpAgent {
    /// The agent of a flow carrying `source` over TCP with `config` (both valid); `rng`
    /// is the flow's stream, handed to a wrapped source.
    pub fn new(config: &TcpConfig, source: &SourceConfig, rng: Rng) -> TcpAgent {
        let app = match source {
            SourceConfig::Greedy { .. } | SourceConfig::Ftp { bytes: None, .. } => App::Endless,
            SourceConfig::Ftp { bytes: Some(n), .. } => App::Bulk(*n),
            other => App::Source(crate::source::build(other, rng)),
        };
        TcpAgent {
            config: config.clone(),
            app,
            conns: Vec::new(),
            current: None,
            current_burst: None,
            app_on: false,
            report: TransportReport {
                protocol: "tcp",
                ..TransportReport::default()
            },
            written: 0,
            caught_up: None,
            scratch: Vec::new(),
        }
    }

    /// Opens a new connection and makes it the current one.
    fn open(&mut self, ctx: &mut Ctx<'_>) -> u32 {
        let id = self.conns.len() as u32;
        assert!(
            id < MAX_CONNECTIONS,
            "a TCP flow may open at most 2^30 connections"
        );
        let mut io = Io {
            ctx,
            report: &mut self.report,
            trace: self.config.trace,
        };
        let conn = Connection::open(id, &self.config, &mut io);
        self.conns.push(Some(Box::new(conn)));
        self.current = Some(id);
        id
    }

    /// The current connection, opened if there is none.
    fn current(&mut self, ctx: &mut Ctx<'_>) -> u32 {
        match self.current {
            Some(id) => id,
            None => self.open(ctx),
        }
    }

    /// Runs `f` on connection `id` if it still exists.
    fn with_conn<R>(
        &mut self,
        ctx: &mut Ctx<'_>,
        id: u32,
        f: impl FnOnce(&mut Connection, &mut Io<'_, '_>) -> R,
    ) -> Option<R> {
        let conn = self.conns.get_mut(id as usize)?.as_deref_mut()?;
        let mut io = Io {
            ctx,
            report: &mut self.report,
            trace: self.config.trace,
        };
        Some(f(conn, &mut io))
    }

    /// The application starts a burst, on a new connection if asked.
    fn begin_burst(&mut self, ctx: &mut Ctx<'_>, new_connection: bool) {
        // A connection opened for nothing yet (by a first write) serves the new burst.
        let reusable = self
            .current
            .and_then(|id| self.conns[id as usize].as_deref())
            .is_some_and(Connection::is_unused);
        let conn = if new_connection && !reusable {
            let old = self.current;
            let id = self.open(ctx);
            if let Some(old) = old {
                self.drop_if_finished(old);
            }
            id
        } else {
            self.current(ctx)
        };
        let index = self.report.bursts.len() as u32;
        self.report.bursts.push(BurstRecord {
            index,
            conn,
            begun: ctx.now(),
            bytes: 0,
            first_sent: None,
            delivered: 0,
            last_delivered: None,
            completed: None,
        });
        self.current_burst = Some((index, conn));
        if let Some(c) = self.conns[conn as usize].as_deref_mut() {
            c.begin_burst(index);
        }
    }

    /// The application writes `len` bytes.
    fn write(&mut self, ctx: &mut Ctx<'_>, len: u64) {
        if len == 0 {
            return;
        }
        let conn = self.current(ctx);
        let in_burst = match self.current_burst {
            Some((index, burst_conn)) if burst_conn == conn => {
                let b = &mut self.report.bursts[index as usize];
                b.bytes += len;
                b.completed = None;
                true
            }
            _ => false,
        };
        self.written += len;
        self.caught_up = None;
        self.with_conn(ctx, conn, |c, io| c.write(io, len, in_burst));
    }

    /// Drops connection `id` if the application left it and it has nothing left to do.
    fn drop_if_finished(&mut self, id: u32) {
        if self.current == Some(id) {
            return;
        }
        let slot = &mut self.conns[id as usize];
        if slot.as_deref().is_some_and(Connection::is_finished) {
            *slot = None;
        }
    }

    /// Applies what the wrapped source asked for in `actions`.
    fn apply(&mut self, ctx: &mut Ctx<'_>, actions: &mut Vec<Action>) {
        for action in actions.drain(..) {
            match action {
                Action::Emit { len, .. } => self.write(ctx, u64::from(len)),
                Action::BeginBurst { new_connection, .. } => self.begin_burst(ctx, new_connection),
                Action::Timer { at, token, .. } => {
                    assert!(
                        TimerId::is_source_token(token),
                        "a source wrapped by TCP used a timer token with bit 63 set"
                    );
                    ctx.set_timer(at, token);
                }
                Action::Send { .. } => {
                    panic!("a source wrapped by TCP sent a segment; sources only emit packets")
                }
            }
        }
    }

    /// Runs `f` on the wrapped source (if any) and applies its actions.
    fn run_source(&mut self, ctx: &mut Ctx<'_>, f: impl FnOnce(&mut dyn Agent, &mut Ctx<'_>)) {
        let App::Source(source) = &mut self.app else {
            return;
        };
        let mut actions = core::mem::take(&mut self.scratch);
        let mut inner = Ctx::new(ctx.now(), ctx.flow(), &mut actions);
        f(source.as_mut(), &mut inner);
        self.apply(ctx, &mut actions);
        self.scratch = actions;
    }

    /// Whether the application has finished writing (see the module docs).
    fn writes_finite(&self) -> bool {
        match self.app {
            App::Endless => false,
            App::Bulk(_) => true,
            App::Source(_) => !self.app_on,
        }
    }
}

impl Agent for TcpAgent {
    fn on_start(&mut self, ctx: &mut Ctx<'_>) {
        self.app_on = true;
        match self.app {
            App::Endless => {
                let id = self.current(ctx);
                self.with_conn(ctx, id, |c, io| c.set_endless(io, true));
            }
            App::Bulk(n) => {
                self.begin_burst(ctx, false);
                self.write(ctx, n);
            }
            App::Source(_) => self.run_source(ctx, |s, ctx| s.on_start(ctx)),
        }
    }

    fn on_stop(&mut self, ctx: &mut Ctx<'_>) {
        self.app_on = false;
        match self.app {
            App::Endless => {
                if let Some(id) = self.current {
                    self.with_conn(ctx, id, |c, io| c.set_endless(io, false));
                }
            }
            App::Bulk(_) => {}
            App::Source(_) => self.run_source(ctx, |s, ctx| s.on_stop(ctx)),
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_>, token: u64) {
        match TimerId::decode(token) {
            Some(id) => {
                self.with_conn(ctx, id.conn, |c, io| c.on_timer(io, id.kind, id.generation));
            }
            None => self.run_source(ctx, |s, ctx| s.on_timer(ctx, token)),
        }
    }

    fn on_delivered(&mut self, ctx: &mut Ctx<'_>, pkt: &SimPacket) {
        let header = u64::from(self.config.header);
        match pkt.kind {
            PacketKind::Data => {
                let payload = u64::from(pkt.len).saturating_sub(header);
                let delivered = self
                    .with_conn(ctx, pkt.conn, |c, io| c.on_data(io, pkt.num, payload))
                    .unwrap_or(0);
                if delivered > 0 && self.report.bytes_delivered == self.written {
                    self.caught_up = Some(ctx.now());
                }
            }
            PacketKind::Ack => {
                self.with_conn(ctx, pkt.conn, |c, io| c.on_ack(io, pkt.num));
                self.drop_if_finished(pkt.conn);
            }
            PacketKind::Syn => {
                self.with_conn(ctx, pkt.conn, |c, io| c.on_syn(io));
            }
            PacketKind::SynAck => {
                self.with_conn(ctx, pkt.conn, |c, io| c.on_syn_ack(io));
            }
        }
    }

    fn report(&self, end: Instant) -> Option<TransportReport> {
        let _ = end;
        let mut report = self.report.clone();
        report.completed = if self.writes_finite() {
            self.caught_up
        } else {
            None
        };
        Some(report)
    }
}
