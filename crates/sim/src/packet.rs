//! The packet the simulator moves through ports: a small metadata record.

use linkshare_core::sched::Packet;
use linkshare_core::units::Instant;

use crate::config::FlowId;

/// What a packet carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PacketKind {
    /// Payload from a flow's source to its sink.
    Data,
}

/// A simulated packet: no payload, only what the engine and the measurements need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimPacket {
    /// The flow it belongs to.
    pub flow: FlowId,
    /// Its number within the flow, from 0 in emission order; `(flow, kind, seq)` is
    /// unique in a run.
    pub seq: u64,
    /// Length on the wire in bytes (without the link's per-packet overhead).
    pub len: u32,
    /// When the source created it.
    pub sent_at: Instant,
    /// Index in the flow's route of the link it is queued at, on the wire of, or
    /// propagating towards; equal to the route's length once past the last link.
    pub hop: u16,
    /// When it arrived at the port it is (or was last) queued at.
    pub port_arrival: Instant,
    /// What it carries.
    pub kind: PacketKind,
}

impl Packet for SimPacket {
    #[inline]
    fn wire_len(&self) -> u32 {
        self.len
    }
}
