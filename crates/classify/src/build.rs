//! Building frames from their fields: the independent side of the parser's tests, and
//! the frames of traffic generators and malformed-frame injection (the shaper's tests
//! and benchmarks). Not used on the packet path.

use crate::frame::{ETHERTYPE_IPV4, ETHERTYPE_IPV6, proto};

/// The fields of an IP packet to build.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IpSpec {
    /// 4 or 6.
    pub version: u8,
    /// Source address (IPv4 in the first four bytes).
    pub src: [u8; 16],
    /// Destination address.
    pub dst: [u8; 16],
    /// Transport protocol.
    pub protocol: u8,
    /// DSCP (0 to 63).
    pub dscp: u8,
    /// Ports, written as the first four bytes of the transport header when given.
    pub ports: Option<(u16, u16)>,
    /// IPv6 extension headers to put before the transport header (hop-by-hop,
    /// routing, destination options: 8 bytes each); ignored for IPv4.
    pub extensions: Vec<u8>,
    /// Transport header and payload bytes after the ports.
    pub payload: usize,
}

/// A frame to build.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameSpec {
    /// Destination MAC.
    pub dst_mac: [u8; 6],
    /// Source MAC.
    pub src_mac: [u8; 6],
    /// VLAN ids, outermost first (tagged with 0x8100).
    pub vlans: Vec<u16>,
    /// The IP packet, or `None` for a frame of `ether_type` with `payload` zero bytes.
    pub ip: Option<IpSpec>,
    /// EtherType of a frame without IP.
    pub ether_type: u16,
    /// Payload bytes of a frame without IP.
    pub payload: usize,
}

impl Default for FrameSpec {
    fn default() -> FrameSpec {
        FrameSpec {
            dst_mac: [0x02, 0, 0, 0, 0, 2],
            src_mac: [0x02, 0, 0, 0, 0, 1],
            vlans: Vec::new(),
            ip: None,
            ether_type: 0x88b5,
            payload: 46,
        }
    }
}

/// The IPv4 address `a.b.c.d` laid out as [`IpSpec::src`].
pub fn v4(a: [u8; 4]) -> [u8; 16] {
    let mut b = [0; 16];
    b[..4].copy_from_slice(&a);
    b
}

/// A UDP/IPv4 frame of `len` bytes in all (at least 42) from `src:sport` to
/// `dst:dport`, with a correct IPv4 header checksum and no UDP checksum.
pub fn udp4(src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16, len: usize) -> Vec<u8> {
    build(&FrameSpec {
        ip: Some(IpSpec {
            version: 4,
            src: v4(src),
            dst: v4(dst),
            protocol: proto::UDP,
            dscp: 0,
            ports: Some((sport, dport)),
            extensions: Vec::new(),
            payload: len.saturating_sub(14 + 20 + 4),
        }),
        ..FrameSpec::default()
    })
}

/// The bytes of `spec`. IPv4 headers get a correct checksum; a UDP header gets its
/// length field (and checksum zero).
pub fn build(spec: &FrameSpec) -> Vec<u8> {
    let mut f = Vec::with_capacity(64);
    f.extend_from_slice(&spec.dst_mac);
    f.extend_from_slice(&spec.src_mac);
    for &vid in &spec.vlans {
        f.extend_from_slice(&0x8100u16.to_be_bytes());
        f.extend_from_slice(&(vid & 0x0fff).to_be_bytes());
    }
    let Some(ip) = &spec.ip else {
        f.extend_from_slice(&spec.ether_type.to_be_bytes());
        f.resize(f.len() + spec.payload, 0);
        return f;
    };
    let mut l4 = Vec::new();
    if let Some((s, d)) = ip.ports {
        l4.extend_from_slice(&s.to_be_bytes());
        l4.extend_from_slice(&d.to_be_bytes());
    }
    l4.resize(l4.len() + ip.payload, 0);
    if ip.protocol == proto::UDP && l4.len() >= 8 {
        let len = u16::try_from(l4.len()).unwrap_or(u16::MAX);
        l4[4..6].copy_from_slice(&len.to_be_bytes());
    }
    if ip.version == 4 {
        f.extend_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
        let start = f.len();
        let total = u16::try_from(20 + l4.len()).unwrap_or(u16::MAX);
        f.extend_from_slice(&[0x45, ip.dscp << 2]);
        f.extend_from_slice(&total.to_be_bytes());
        f.extend_from_slice(&[0, 0, 0x40, 0, 64, ip.protocol, 0, 0]);
        f.extend_from_slice(&ip.src[..4]);
        f.extend_from_slice(&ip.dst[..4]);
        let sum = checksum(&f[start..start + 20]);
        f[start + 10..start + 12].copy_from_slice(&sum.to_be_bytes());
    } else {
        f.extend_from_slice(&ETHERTYPE_IPV6.to_be_bytes());
        let payload = u16::try_from(8 * ip.extensions.len() + l4.len()).unwrap_or(u16::MAX);
        let first = ip.extensions.first().copied().unwrap_or(ip.protocol);
        f.extend_from_slice(&[0x60 | (ip.dscp >> 2), (ip.dscp & 3) << 6, 0, 0]);
        f.extend_from_slice(&payload.to_be_bytes());
        f.extend_from_slice(&[first, 64]);
        f.extend_from_slice(&ip.src);
        f.extend_from_slice(&ip.dst);
        for (i, _) in ip.extensions.iter().enumerate() {
            let next = ip.extensions.get(i + 1).copied().unwrap_or(ip.protocol);
            f.extend_from_slice(&[next, 0, 0, 0, 0, 0, 0, 0]);
        }
    }
    f.extend_from_slice(&l4);
    f
}

/// The Internet checksum (RFC 1071) of `bytes`.
pub fn checksum(bytes: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    let mut chunks = bytes.chunks_exact(2);
    for c in &mut chunks {
        sum += u32::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [last] = chunks.remainder() {
        sum += u32::from(*last) << 8;
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}
