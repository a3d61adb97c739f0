//! What offloads leave undone in captured frames, done in software: transport
//! checksums left partial by a local sender (`CHECKSUM_PARTIAL`, as on veth), and TCP
//! super-frames (TSO/GSO from a local sender, or GRO on a NIC) cut into segments that
//! fit the outgoing interface, as the kernel's GSO would cut them.
//!
//! Segmenting works without the sender's segment size (a packet socket does not report
//! it): each segment carries as much payload as fits `max_frame`, which is the
//! sender's own size when both interfaces have the same MTU. Per segment: IPv4 total
//! length, identification (+1 per segment) and header checksum, or the IPv6 payload
//! length; TCP sequence number (+ payload sent before it); FIN and PSH only on the last
//! segment, CWR only on the first; the TCP checksum over the pseudo-header. Other
//! super-frames (UDP GSO) are not segmented: they are dropped as too large, counted.

use linkshare_classify::IpHeaders;
use linkshare_classify::build::checksum;
use linkshare_classify::frame::proto;

/// What a frame needs before it can be sent on an interface taking frames of at most
/// `max_frame` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Plan {
    /// Send it as it is (completing its checksum if it is partial).
    Whole,
    /// Cut it into `count` TCP segments of at most `mss` payload bytes.
    Segment { mss: usize, count: usize },
    /// Too large, and not TCP: drop it.
    TooLarge,
}

/// The plan for `frame` (`ip`: its parsed IP headers, if it parsed).
pub(crate) fn plan(frame: &[u8], ip: Option<&IpHeaders>, max_frame: usize) -> Plan {
    if frame.len() <= max_frame {
        return Plan::Whole;
    }
    let Some(ip) = ip.filter(|ip| ip.protocol == proto::TCP && !ip.later_fragment) else {
        return Plan::TooLarge;
    };
    let Some(th) = tcp_header_len(frame, ip) else {
        return Plan::TooLarge;
    };
    let headers = ip.l4_offset + th;
    let payload = ip.end.saturating_sub(headers);
    if headers >= max_frame || payload == 0 {
        return Plan::TooLarge;
    }
    let mss = max_frame - headers;
    Plan::Segment {
        mss,
        count: payload.div_ceil(mss),
    }
}

/// The TCP header's length, if it is whole in the frame.
fn tcp_header_len(frame: &[u8], ip: &IpHeaders) -> Option<usize> {
    let off = usize::from(*frame.get(ip.l4_offset + 12)? >> 4) * 4;
    (off >= 20 && ip.l4_offset + off <= ip.end).then_some(off)
}

/// The length of segment `k` of `frame` (planned as `Segment { mss, .. }`).
pub(crate) fn segment_len(frame: &[u8], ip: &IpHeaders, mss: usize, k: usize) -> usize {
    let headers = ip.l4_offset + tcp_header_len(frame, ip).unwrap_or(20);
    let payload = ip.end.saturating_sub(headers);
    headers + payload.saturating_sub(k * mss).min(mss)
}

/// Writes segment `k` of `frame` (planned as `Segment { mss, .. }`) into `out` and
/// returns its length. `out` must hold `max_frame` bytes.
pub(crate) fn write_segment(
    frame: &[u8],
    ip: &IpHeaders,
    mss: usize,
    k: usize,
    out: &mut [u8],
) -> usize {
    let th = tcp_header_len(frame, ip).unwrap_or(20);
    let headers = ip.l4_offset + th;
    let payload = &frame[headers..ip.end];
    let from = k * mss;
    let chunk = &payload[from.min(payload.len())..(from + mss).min(payload.len())];
    let last = from + chunk.len() >= payload.len();
    let len = headers + chunk.len();
    out[..headers].copy_from_slice(&frame[..headers]);
    out[headers..len].copy_from_slice(chunk);
    let l3 = ip.l3_offset;
    if ip.version == 4 {
        let total = (len - l3) as u16;
        out[l3 + 2..l3 + 4].copy_from_slice(&total.to_be_bytes());
        let id = u16::from_be_bytes([out[l3 + 4], out[l3 + 5]]).wrapping_add(k as u16);
        out[l3 + 4..l3 + 6].copy_from_slice(&id.to_be_bytes());
        out[l3 + 10..l3 + 12].copy_from_slice(&[0, 0]);
        let sum = checksum(&out[l3..ip.l4_offset]);
        out[l3 + 10..l3 + 12].copy_from_slice(&sum.to_be_bytes());
    } else {
        let payload_len = (len - l3 - 40) as u16;
        out[l3 + 4..l3 + 6].copy_from_slice(&payload_len.to_be_bytes());
    }
    let t = ip.l4_offset;
    let seq = u32::from_be_bytes([out[t + 4], out[t + 5], out[t + 6], out[t + 7]])
        .wrapping_add(from as u32);
    out[t + 4..t + 8].copy_from_slice(&seq.to_be_bytes());
    const FIN: u8 = 0x01;
    const PSH: u8 = 0x08;
    const CWR: u8 = 0x80;
    if !last {
        out[t + 13] &= !(FIN | PSH);
    }
    if k > 0 {
        out[t + 13] &= !CWR;
    }
    set_transport_checksum(&mut out[..len], ip, len);
    len
}

/// Completes the TCP or UDP checksum of a whole frame whose checksum was left partial.
/// Frames of other protocols are left as they are.
pub(crate) fn complete_checksum(frame: &mut [u8], ip: &IpHeaders) {
    if matches!(ip.protocol, proto::TCP | proto::UDP) && !ip.later_fragment {
        set_transport_checksum(frame, ip, ip.end);
    }
}

/// Computes and writes the transport checksum of the packet ending at `end`.
fn set_transport_checksum(frame: &mut [u8], ip: &IpHeaders, end: usize) {
    let t = ip.l4_offset;
    let field = match ip.protocol {
        proto::TCP => t + 16,
        proto::UDP => t + 6,
        _ => return,
    };
    if field + 2 > end || end > frame.len() {
        return;
    }
    frame[field..field + 2].copy_from_slice(&[0, 0]);
    let l4_len = (end - t) as u32;
    let mut sum: u64 = 0;
    let addr = if ip.version == 4 { 4 } else { 16 };
    for a in [&ip.src[..addr], &ip.dst[..addr]] {
        sum += ones_sum(a);
    }
    sum += u64::from(ip.protocol) + u64::from(l4_len);
    sum += ones_sum(&frame[t..end]);
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    let mut c = !(sum as u16);
    if ip.protocol == proto::UDP && c == 0 {
        c = 0xffff;
    }
    frame[field..field + 2].copy_from_slice(&c.to_be_bytes());
}

/// The one's-complement sum of `bytes` as 16-bit words (not folded).
fn ones_sum(bytes: &[u8]) -> u64 {
    let mut sum: u64 = 0;
    let mut chunks = bytes.chunks_exact(2);
    for c in &mut chunks {
        sum += u64::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [last] = chunks.remainder() {
        sum += u64::from(*last) << 8;
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;
    use linkshare_classify::build::{FrameSpec, IpSpec, build, v4};
    use linkshare_classify::parse;

    /// A TCP/IPv4 super-frame with `payload` bytes 0, 1, 2, ... and FIN|PSH|CWR set.
    fn tcp_frame(version: u8, payload: usize) -> Vec<u8> {
        let mut f = build(&FrameSpec {
            ip: Some(IpSpec {
                version,
                src: if version == 4 {
                    v4([10, 0, 0, 1])
                } else {
                    [1; 16]
                },
                dst: if version == 4 {
                    v4([10, 0, 0, 2])
                } else {
                    [2; 16]
                },
                protocol: proto::TCP,
                dscp: 0,
                ports: Some((4000, 5001)),
                extensions: Vec::new(),
                payload: 16 + payload, // the rest of a 20-byte TCP header, then data
            }),
            ..FrameSpec::default()
        });
        let t = if version == 4 { 14 + 20 } else { 14 + 40 };
        f[t + 4..t + 8].copy_from_slice(&1000u32.to_be_bytes());
        f[t + 12] = 5 << 4;
        f[t + 13] = 0x01 | 0x08 | 0x80 | 0x10;
        for (i, b) in f[t + 20..].iter_mut().enumerate() {
            *b = i as u8;
        }
        f
    }

    /// The checksum of a packet with a correct checksum sums to zero (RFC 1071),
    /// computed here independently over the pseudo-header.
    fn verify(frame: &[u8]) -> bool {
        let ip = parse(frame).unwrap().ip.unwrap();
        let addr = if ip.version == 4 { 4 } else { 16 };
        let mut pseudo = Vec::new();
        pseudo.extend_from_slice(&ip.src[..addr]);
        pseudo.extend_from_slice(&ip.dst[..addr]);
        pseudo.extend_from_slice(&[0, ip.protocol]);
        pseudo.extend_from_slice(&((ip.end - ip.l4_offset) as u16).to_be_bytes());
        pseudo.extend_from_slice(&frame[ip.l4_offset..ip.end]);
        checksum(&pseudo) == 0
    }

    #[test]
    fn super_frames_are_cut_as_gso_would() {
        for version in [4, 6] {
            let f = tcp_frame(version, 4000);
            let ip = parse(&f).unwrap().ip.unwrap();
            let max = 1514;
            let Plan::Segment { mss, count } = plan(&f, Some(&ip), max) else {
                panic!("a TCP super-frame is segmented")
            };
            let headers = ip.l4_offset + 20;
            assert_eq!(mss, max - headers);
            assert_eq!(count, 4000usize.div_ceil(mss));
            let mut data = Vec::new();
            for k in 0..count {
                let mut out = vec![0; max];
                let n = write_segment(&f, &ip, mss, k, &mut out);
                let seg = &out[..n];
                assert!(n <= max);
                let sip = parse(seg).unwrap().ip.unwrap();
                assert_eq!(sip.end, n, "lengths rewritten");
                let t = sip.l4_offset;
                let seq = u32::from_be_bytes(seg[t + 4..t + 8].try_into().unwrap());
                assert_eq!(seq as usize, 1000 + k * mss);
                let flags = seg[t + 13];
                assert_eq!(flags & 0x01 != 0, k == count - 1, "FIN on the last only");
                assert_eq!(flags & 0x08 != 0, k == count - 1, "PSH on the last only");
                assert_eq!(flags & 0x80 != 0, k == 0, "CWR on the first only");
                assert!(verify(seg), "TCP checksum of segment {k}");
                if version == 4 {
                    assert_eq!(checksum(&seg[14..34]), 0, "IPv4 header checksum");
                }
                data.extend_from_slice(&seg[t + 20..]);
            }
            assert_eq!(data, f[ip.l4_offset + 20..].to_vec(), "payload in order");
        }
    }

    #[test]
    fn partial_checksums_are_completed_and_udp_zero_is_never_sent() {
        let mut f = tcp_frame(4, 100);
        let ip = parse(&f).unwrap().ip.unwrap();
        complete_checksum(&mut f, &ip);
        assert!(verify(&f));
        let mut u = linkshare_classify::build::udp4([10, 0, 0, 1], [10, 0, 0, 2], 1, 2, 80);
        let ip = parse(&u).unwrap().ip.unwrap();
        complete_checksum(&mut u, &ip);
        assert!(verify(&u));
        assert_ne!(&u[40..42], &[0, 0]);
    }

    #[test]
    fn frames_that_fit_stay_whole_and_other_big_ones_are_too_large() {
        let small = tcp_frame(4, 100);
        let ip = parse(&small).unwrap().ip.unwrap();
        assert_eq!(plan(&small, Some(&ip), 1514), Plan::Whole);
        let big_udp = linkshare_classify::build::udp4([1, 1, 1, 1], [2, 2, 2, 2], 1, 2, 3000);
        let ip = parse(&big_udp).unwrap().ip.unwrap();
        assert_eq!(plan(&big_udp, Some(&ip), 1514), Plan::TooLarge);
        assert_eq!(plan(&big_udp, None, 1514), Plan::TooLarge);
    }
}
