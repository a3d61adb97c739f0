//! The frame parser: Ethernet, stacked VLAN tags, IPv4 and IPv6 (with its extension
//! headers) and the ports of TCP, UDP, UDP-Lite and SCTP.
//!
//! It never trusts a length field: every read is bounds-checked against the bytes
//! actually present, a header length that points outside them makes the frame
//! [`Malformed`], and the walk over VLAN tags and IPv6 extension headers is bounded
//! ([`MAX_VLAN_TAGS`], [`MAX_IPV6_EXTENSIONS`]), so that any input, of any length,
//! parses in bounded time without a panic. The parser is fuzzed (`fuzz/`) and property
//! tested (`tests/frame.rs`).
//!
//! What counts as malformed: a frame shorter than its Ethernet header; a VLAN tag cut
//! short or more than [`MAX_VLAN_TAGS`] of them; an IPv4 header whose version is not 4,
//! whose IHL is below 5, or whose header or total length runs past the frame; an IPv6
//! header cut short, whose payload length runs past the frame, or whose extension
//! headers are cut short or more than [`MAX_IPV6_EXTENSIONS`]; a TCP, UDP, UDP-Lite or
//! SCTP header too short to hold the ports (in a first fragment). Frames that are not
//! IP (ARP, LLDP, ...) are not malformed: they have no IP fields. Bytes after the IP
//! packet (Ethernet padding) are allowed.

/// Ethernet header length (destination, source, EtherType).
pub const ETH_HLEN: usize = 14;
/// The most VLAN tags (802.1Q, 802.1ad, and the old 0x9100 Q-in-Q) read before the
/// frame is called malformed.
pub const MAX_VLAN_TAGS: usize = 4;
/// The most IPv6 extension headers walked before the frame is called malformed.
pub const MAX_IPV6_EXTENSIONS: usize = 8;

/// EtherType of IPv4.
pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// EtherType of IPv6.
pub const ETHERTYPE_IPV6: u16 = 0x86dd;
/// EtherType of ARP.
pub const ETHERTYPE_ARP: u16 = 0x0806;
const ETHERTYPE_VLAN: u16 = 0x8100;
const ETHERTYPE_QINQ: u16 = 0x88a8;
const ETHERTYPE_QINQ_OLD: u16 = 0x9100;

/// IP protocol numbers the parser reads ports of, or walks over.
pub mod proto {
    /// ICMP.
    pub const ICMP: u8 = 1;
    /// TCP.
    pub const TCP: u8 = 6;
    /// UDP.
    pub const UDP: u8 = 17;
    /// IPv6 hop-by-hop options.
    pub const HOPOPTS: u8 = 0;
    /// IPv6 routing header.
    pub const ROUTING: u8 = 43;
    /// IPv6 fragment header.
    pub const FRAGMENT: u8 = 44;
    /// ESP: nothing after it is readable.
    pub const ESP: u8 = 50;
    /// AH.
    pub const AH: u8 = 51;
    /// ICMPv6.
    pub const ICMPV6: u8 = 58;
    /// No next header.
    pub const NONE: u8 = 59;
    /// IPv6 destination options.
    pub const DSTOPTS: u8 = 60;
    /// Mobility header.
    pub const MOBILITY: u8 = 135;
    /// SCTP.
    pub const SCTP: u8 = 132;
    /// UDP-Lite.
    pub const UDPLITE: u8 = 136;
}

/// Why a frame could not be parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Malformed {
    /// Shorter than an Ethernet header.
    ShortEthernet,
    /// A VLAN tag cut short, or more than [`MAX_VLAN_TAGS`].
    BadVlan,
    /// An IPv4 header with a wrong version, IHL or length.
    BadIpv4,
    /// An IPv6 header cut short or with a payload length past the frame.
    BadIpv6,
    /// IPv6 extension headers cut short or more than [`MAX_IPV6_EXTENSIONS`].
    BadExtensions,
    /// A transport header too short to hold its ports.
    ShortTransport,
}

/// The IP part of a parsed frame. Addresses of IPv4 packets are in the first four bytes
/// of `src` and `dst` (the rest zero).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IpHeaders {
    /// 4 or 6.
    pub version: u8,
    /// Source address.
    pub src: [u8; 16],
    /// Destination address.
    pub dst: [u8; 16],
    /// The transport protocol (IPv6: after the extension headers).
    pub protocol: u8,
    /// Differentiated Services code point (the top six bits of TOS / traffic class).
    pub dscp: u8,
    /// Source and destination ports: TCP, UDP, UDP-Lite and SCTP, first fragments only.
    pub ports: Option<(u16, u16)>,
    /// Byte offset of the IP header in the frame.
    pub l3_offset: usize,
    /// Byte offset of the transport header (after IPv4 options / IPv6 extensions).
    pub l4_offset: usize,
    /// Byte offset one past the IP packet (its total length; padding excluded).
    pub end: usize,
    /// Whether this is a fragment other than the first (no transport header).
    pub later_fragment: bool,
}

/// A parsed frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Headers {
    /// The EtherType after any VLAN tags.
    pub ether_type: u16,
    /// The VLAN id of the outermost tag, if tagged.
    pub vlan: Option<u16>,
    /// The IP headers, for IPv4 and IPv6 frames.
    pub ip: Option<IpHeaders>,
}

#[inline]
fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    let s = b.get(at..at.checked_add(2)?)?;
    Some(u16::from_be_bytes([s[0], s[1]]))
}

/// Parses `frame` (starting with the Ethernet header).
pub fn parse(frame: &[u8]) -> Result<Headers, Malformed> {
    let mut ether_type = u16_at(frame, 12).ok_or(Malformed::ShortEthernet)?;
    let mut at = ETH_HLEN;
    let mut vlan = None;
    let mut tags = 0;
    while matches!(
        ether_type,
        ETHERTYPE_VLAN | ETHERTYPE_QINQ | ETHERTYPE_QINQ_OLD
    ) {
        tags += 1;
        if tags > MAX_VLAN_TAGS {
            return Err(Malformed::BadVlan);
        }
        let tci = u16_at(frame, at).ok_or(Malformed::BadVlan)?;
        ether_type = u16_at(frame, at + 2).ok_or(Malformed::BadVlan)?;
        vlan.get_or_insert(tci & 0x0fff);
        at += 4;
    }
    let ip = match ether_type {
        ETHERTYPE_IPV4 => Some(ipv4(frame, at)?),
        ETHERTYPE_IPV6 => Some(ipv6(frame, at)?),
        _ => None,
    };
    Ok(Headers {
        ether_type,
        vlan,
        ip,
    })
}

fn ipv4(frame: &[u8], at: usize) -> Result<IpHeaders, Malformed> {
    let h = frame.get(at..at + 20).ok_or(Malformed::BadIpv4)?;
    if h[0] >> 4 != 4 {
        return Err(Malformed::BadIpv4);
    }
    let ihl = usize::from(h[0] & 0x0f) * 4;
    let total = usize::from(u16::from_be_bytes([h[2], h[3]]));
    if ihl < 20 || total < ihl || frame.len() - at < total {
        return Err(Malformed::BadIpv4);
    }
    let fragment_offset = u16::from_be_bytes([h[6], h[7]]) & 0x1fff;
    let mut src = [0; 16];
    let mut dst = [0; 16];
    src[..4].copy_from_slice(&h[12..16]);
    dst[..4].copy_from_slice(&h[16..20]);
    let protocol = h[9];
    let l4_offset = at + ihl;
    let end = at + total;
    let later_fragment = fragment_offset != 0;
    let ports = if later_fragment {
        None
    } else {
        ports(&frame[..end], l4_offset, protocol)?
    };
    Ok(IpHeaders {
        version: 4,
        src,
        dst,
        protocol,
        dscp: h[1] >> 2,
        ports,
        l3_offset: at,
        l4_offset,
        end,
        later_fragment,
    })
}

fn ipv6(frame: &[u8], at: usize) -> Result<IpHeaders, Malformed> {
    let h = frame.get(at..at + 40).ok_or(Malformed::BadIpv6)?;
    if h[0] >> 4 != 6 {
        return Err(Malformed::BadIpv6);
    }
    let payload = usize::from(u16::from_be_bytes([h[4], h[5]]));
    let end = at + 40 + payload;
    if end > frame.len() {
        return Err(Malformed::BadIpv6);
    }
    let packet = &frame[..end];
    let traffic_class = (h[0] << 4) | (h[1] >> 4);
    let mut src = [0; 16];
    let mut dst = [0; 16];
    src.copy_from_slice(&h[8..24]);
    dst.copy_from_slice(&h[24..40]);
    let mut next = h[6];
    let mut l4 = at + 40;
    let mut later_fragment = false;
    let mut walked = 0;
    loop {
        let len = match next {
            proto::HOPOPTS | proto::ROUTING | proto::DSTOPTS | proto::MOBILITY => {
                let b = packet.get(l4 + 1).ok_or(Malformed::BadExtensions)?;
                (usize::from(*b) + 1) * 8
            }
            proto::FRAGMENT => {
                let off = u16_at(packet, l4 + 2).ok_or(Malformed::BadExtensions)?;
                later_fragment = off & 0xfff8 != 0;
                8
            }
            proto::AH => {
                let b = packet.get(l4 + 1).ok_or(Malformed::BadExtensions)?;
                (usize::from(*b) + 2) * 4
            }
            _ => break,
        };
        walked += 1;
        if walked > MAX_IPV6_EXTENSIONS || packet.len() < l4 + len {
            return Err(Malformed::BadExtensions);
        }
        next = packet[l4];
        l4 += len;
        if later_fragment {
            break;
        }
    }
    let ports = if later_fragment {
        None
    } else {
        ports(packet, l4, next)?
    };
    Ok(IpHeaders {
        version: 6,
        src,
        dst,
        protocol: next,
        dscp: traffic_class >> 2,
        ports,
        l3_offset: at,
        l4_offset: l4,
        end,
        later_fragment,
    })
}

/// The ports of a transport header at `at` of `packet` (bounded by the IP length).
fn ports(packet: &[u8], at: usize, protocol: u8) -> Result<Option<(u16, u16)>, Malformed> {
    match protocol {
        proto::TCP | proto::UDP | proto::UDPLITE | proto::SCTP => {
            let s = u16_at(packet, at).ok_or(Malformed::ShortTransport)?;
            let d = u16_at(packet, at + 2).ok_or(Malformed::ShortTransport)?;
            Ok(Some((s, d)))
        }
        _ => Ok(None),
    }
}
