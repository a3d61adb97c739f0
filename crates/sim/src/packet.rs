//! The packet the simulator moves through ports: a small metadata record.

use linkshare_core::sched::Packet;
use linkshare_core::units::Instant;

use crate::config::FlowId;

/// What a packet carries, which also fixes its direction: forward kinds travel the
/// flow's `route` from source to sink, reverse kinds its `reverse` route back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PacketKind {
    /// Payload from a flow's source to its sink (forward). Over TCP a data segment;
    /// [`SimPacket::num`] is the sequence number of its first byte.
    Data,
    /// A TCP acknowledgement (reverse); [`SimPacket::num`] is the cumulative
    /// acknowledgement number (the next byte the receiver expects).
    Ack,
    /// A TCP connection request (forward), when the handshake is enabled.
    Syn,
    /// The answer to a [`PacketKind::Syn`] (reverse).
    SynAck,
}

impl PacketKind {
    /// Every kind, in declaration order.
    pub const ALL: [PacketKind; 4] = [
        PacketKind::Data,
        PacketKind::Ack,
        PacketKind::Syn,
        PacketKind::SynAck,
    ];

    /// Whether packets of this kind travel the flow's reverse route (sink to source).
    #[inline]
    pub fn is_reverse(self) -> bool {
        matches!(self, PacketKind::Ack | PacketKind::SynAck)
    }

    /// Lower-case name, as in outputs.
    pub fn name(self) -> &'static str {
        match self {
            PacketKind::Data => "data",
            PacketKind::Ack => "ack",
            PacketKind::Syn => "syn",
            PacketKind::SynAck => "syn-ack",
        }
    }
}

/// A simulated packet: no payload, only what the engine, the measurements and the
/// transport agents need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimPacket {
    /// The flow it belongs to.
    pub flow: FlowId,
    /// Its number within the flow and direction, from 0 in emission order;
    /// `(flow, kind.is_reverse(), seq)` is unique in a run.
    pub seq: u64,
    /// Length on the wire in bytes (without the link's per-packet overhead).
    pub len: u32,
    /// When the agent created it.
    pub sent_at: Instant,
    /// Index in the flow's route (its reverse route for reverse kinds) of the link it
    /// is queued at, on the wire of, or propagating towards; equal to that route's
    /// length once past the last link.
    pub hop: u16,
    /// When it arrived at the port it is (or was last) queued at.
    pub port_arrival: Instant,
    /// What it carries, and so which way it travels.
    pub kind: PacketKind,
    /// The transport connection within the flow (a flow of web transfers opens one per
    /// transfer); 0 for open-loop sources.
    pub conn: u32,
    /// Transport number: see [`PacketKind`]; 0 for open-loop sources.
    pub num: u64,
    /// The application burst (message) the packet belongs to, numbered from 0 per flow
    /// in the order bursts begin ([`crate::agent::Ctx::begin_burst`]); [`NO_BURST`]
    /// when the source marks no bursts or for reverse packets.
    pub burst: u32,
}

/// [`SimPacket::burst`] of packets that belong to no burst.
pub const NO_BURST: u32 = u32::MAX;

impl Packet for SimPacket {
    #[inline]
    fn wire_len(&self) -> u32 {
        self.len
    }
}
