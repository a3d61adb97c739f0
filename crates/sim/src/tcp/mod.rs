//! TCP Reno and NewReno, as one [`Agent`] per flow.
//!
//! The agent ([`TcpAgent`]) holds both ends of the flow's connections: the sender at the
//! source's node, the receiver at the sink's node. They talk only through packets:
//! data segments ([`PacketKind::Data`], `payload + header` bytes, [`SimPacket::num`] =
//! sequence number of the first payload byte) travel the flow's route, acknowledgements
//! ([`PacketKind::Ack`], `header` bytes, `num` = cumulative acknowledgement) its reverse
//! route, through the same ports as every other packet: they queue, wait, and can be
//! dropped.
//!
//! The modules' documentation states exactly what is implemented; the types behind
//! them are internal apart from [`TcpAgent`] and [`rto::RtoEstimator`].
//!
//! | module | job |
//! |---|---|
//! | [`rto`] | RFC 6298 retransmission timeout estimator (integer ns) |
//! | [`sender`] | congestion control and loss recovery (RFC 5681, RFC 6582), Karn's rule |
//! | [`receiver`] | reassembly, cumulative and delayed acknowledgements (RFC 5681 §4.2) |
//! | [`timer`] | restartable timers over the engine's one-shot ones; token layout |
//! | [`connection`] | one connection: both ends, timers, handshake, burst bookkeeping |
//! | [`agent`] | the application (wrapped source), the connections, the report |
//!
//! # Deviations from the RFCs and from real stacks
//!
//! Chosen to match the simulators of the papers (ns-2's one-way TCP agents) where the
//! RFCs leave room, and documented in the module doing it:
//!
//! * No SACK, no timestamps, no window scaling, no ECN; the receiver window is the
//!   constant W ([`TcpConfig::window`]) and acknowledgements never update it.
//! * Sequence numbers are byte offsets from 0 in each connection (no initial sequence
//!   number; the SYN consumes none) and never wrap (`u64`).
//! * Headers are a constant [`TcpConfig::header`] bytes (40 by default: IPv4 + TCP
//!   without options) on every segment; the link's per-packet overhead comes on top.
//! * No Nagle algorithm: a write leaves at once in a short segment if the window allows.
//!   No silly-window avoidance beyond sending only segments that fit the window whole.
//! * No limited transmit (RFC 3042) and no congestion-window validation (RFC 7661);
//!   `cwnd` does not grow past W. Restart after idle (RFC 5681 §4.1's restart window) is
//!   an option, [`TcpConfig::idle_restart`], off by default so that earlier scenarios run
//!   unchanged: ns-2's one-way TCP does restart by default (`slow_start_restart_ true`,
//!   `restart_bugfix_ true`), so a scenario reproducing an ns-2 simulation of bursty
//!   sources (the FSC paper's) turns it on; see [`sender`].
//! * By default every segment is acknowledged (ns-2's `TCPSink`); delayed
//!   acknowledgements are an option.
//! * The handshake is optional and off by default; its last ACK is folded into the
//!   first data segment; no FIN exchange (a connection simply stops sending).
//! * The receiving application reads at once: the advertised window is never reduced by
//!   unread data.
//! * Only one segment is timed at a time (BSD/ns-2 style Karn's rule); RTO arithmetic
//!   is exact to the nanosecond with the configured granularity G.

pub mod agent;
pub mod connection;
pub mod receiver;
pub mod rto;
pub mod sender;
pub mod timer;

pub use agent::TcpAgent;

use linkshare_core::units::Duration;

use crate::agent::Agent;
use crate::config::{SourceConfig, TcpConfig};
use crate::rng::Rng;

#[cfg(doc)]
use crate::packet::{PacketKind, SimPacket};

/// The agent of a TCP flow carrying `source`'s traffic (see [`TcpAgent`]). Both
/// configurations must have passed [`check`] and [`crate::source::check`].
pub fn build(config: &TcpConfig, source: &SourceConfig, rng: Rng) -> Box<dyn Agent> {
    Box::new(TcpAgent::new(config, source, rng))
}

/// Why `config` cannot be used; the error says what to change.
pub fn check(config: &TcpConfig) -> Result<(), String> {
    if config.mss == 0 {
        return Err("the MSS is 0 bytes; give a positive segment size (e.g. 1000)".into());
    }
    if config.header == 0 {
        return Err(
            "the header size is 0 bytes; acknowledgements would be empty packets; give a \
             positive size (40 for IPv4 + TCP)"
                .into(),
        );
    }
    if config.mss.checked_add(config.header).is_none() {
        return Err("MSS plus header overflows 32 bits; give a realistic MSS".into());
    }
    if config.window < u64::from(config.mss) {
        return Err(format!(
            "the window W is {} bytes, less than one MSS ({} bytes): nothing could be \
             sent; give at least one MSS",
            config.window, config.mss
        ));
    }
    if config.initial_window == Some(0) {
        return Err("the initial window is 0 segments; give at least 1".into());
    }
    if config.min_rto == Duration::ZERO {
        return Err(
            "the minimum RTO is 0; a zero timeout would expire at once, forever; give a \
             positive duration (RFC 6298: 1 s; ns-2 and Linux use 200 ms)"
                .into(),
        );
    }
    if config.min_rto > config.max_rto {
        return Err(format!(
            "the minimum RTO ({} ns) exceeds the maximum RTO ({} ns); lower the minimum \
             or raise the maximum",
            config.min_rto.0, config.max_rto.0
        ));
    }
    if config.delayed_ack == Some(Duration::ZERO) {
        return Err(
            "the delayed-acknowledgement delay is 0; give a positive delay (e.g. 200 ms) \
             or disable delayed acknowledgements"
                .into(),
        );
    }
    if config.dupack_threshold == 0 {
        return Err("the duplicate-acknowledgement threshold is 0; give at least 1 (3)".into());
    }
    Ok(())
}
