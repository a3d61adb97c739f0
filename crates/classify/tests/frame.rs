//! The frame parser against frames built from their fields, and against anything.

use linkshare_classify::build::{FrameSpec, IpSpec, build, v4};
use linkshare_classify::frame::{self, Malformed, proto};
use proptest::prelude::*;

fn ip_spec() -> impl Strategy<Value = IpSpec> {
    (
        prop_oneof![Just(4u8), Just(6u8)],
        any::<[u8; 16]>(),
        any::<[u8; 16]>(),
        prop_oneof![
            Just(proto::TCP),
            Just(proto::UDP),
            Just(proto::SCTP),
            Just(proto::ICMP),
            Just(proto::ICMPV6)
        ],
        0u8..64,
        any::<(u16, u16)>(),
        prop::collection::vec(
            prop_oneof![
                Just(proto::HOPOPTS),
                Just(proto::ROUTING),
                Just(proto::DSTOPTS)
            ],
            0..4,
        ),
        0usize..40,
    )
        .prop_map(|(version, src, dst, protocol, dscp, ports, ext, payload)| {
            let has_ports = matches!(protocol, proto::TCP | proto::UDP | proto::SCTP);
            IpSpec {
                version,
                src: if version == 4 {
                    v4([src[0], src[1], src[2], src[3]])
                } else {
                    src
                },
                dst: if version == 4 {
                    v4([dst[0], dst[1], dst[2], dst[3]])
                } else {
                    dst
                },
                protocol,
                dscp,
                ports: has_ports.then_some(ports),
                extensions: if version == 6 { ext } else { Vec::new() },
                payload,
            }
        })
}

fn frame_spec() -> impl Strategy<Value = FrameSpec> {
    (
        prop::collection::vec(0u16..4096, 0..3),
        prop::option::of(ip_spec()),
        0usize..60,
    )
        .prop_map(|(vlans, ip, payload)| FrameSpec {
            vlans,
            ip,
            payload,
            ..FrameSpec::default()
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Whatever the bytes, the parser returns (it never panics).
    #[test]
    fn any_bytes_parse_or_are_malformed(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let _ = frame::parse(&bytes);
    }

    /// Anything after an Ethernet header with an IP EtherType, and after VLAN tags.
    #[test]
    fn any_ip_payload(
        tags in 0usize..6,
        ipv6 in any::<bool>(),
        rest in prop::collection::vec(any::<u8>(), 0..200),
    ) {
        let mut f = vec![0u8; 12];
        for _ in 0..tags {
            f.extend_from_slice(&[0x81, 0x00, 0x00, 0x07]);
        }
        f.extend_from_slice(if ipv6 { &[0x86, 0xdd] } else { &[0x08, 0x00] });
        f.extend_from_slice(&rest);
        let parsed = frame::parse(&f);
        if tags > frame::MAX_VLAN_TAGS {
            prop_assert_eq!(parsed, Err(Malformed::BadVlan));
        }
        if let Ok(h) = parsed && let Some(ip) = h.ip {
            prop_assert!(ip.l3_offset <= ip.l4_offset);
            prop_assert!(ip.l4_offset <= ip.end && ip.end <= f.len());
        }
    }

    /// A frame built from its fields parses back to them.
    #[test]
    fn built_frames_parse_to_their_fields(spec in frame_spec()) {
        let f = build(&spec);
        let h = frame::parse(&f).expect("a well-formed frame parses");
        prop_assert_eq!(h.vlan, spec.vlans.first().copied());
        match &spec.ip {
            None => {
                prop_assert_eq!(h.ether_type, spec.ether_type);
                prop_assert!(h.ip.is_none());
            }
            Some(ip) => {
                let got = h.ip.expect("IP headers");
                prop_assert_eq!(h.ether_type, if ip.version == 4 { 0x0800 } else { 0x86dd });
                prop_assert_eq!(got.version, ip.version);
                prop_assert_eq!(got.src, ip.src);
                prop_assert_eq!(got.dst, ip.dst);
                prop_assert_eq!(got.protocol, ip.protocol);
                prop_assert_eq!(got.dscp, ip.dscp);
                prop_assert_eq!(got.ports, ip.ports);
                prop_assert_eq!(got.end, f.len());
            }
        }
    }

    /// Cut anywhere inside its IP packet, a frame is malformed (its lengths say more
    /// bytes follow); it never panics.
    #[test]
    fn truncated_frames_are_malformed(spec in frame_spec(), cut in any::<prop::sample::Index>()) {
        let f = build(&spec);
        let at = cut.index(f.len());
        let parsed = frame::parse(&f[..at]);
        if spec.ip.is_some() {
            prop_assert!(parsed.is_err(), "{:?} cut at {} of {}", parsed, at, f.len());
        }
    }
}

fn ipv4_udp() -> Vec<u8> {
    build(&FrameSpec {
        ip: Some(IpSpec {
            version: 4,
            src: v4([10, 0, 0, 1]),
            dst: v4([10, 0, 0, 2]),
            protocol: proto::UDP,
            dscp: 46,
            ports: Some((1000, 5001)),
            extensions: Vec::new(),
            payload: 20,
        }),
        ..FrameSpec::default()
    })
}

#[test]
fn bad_ihl_is_malformed() {
    let mut f = ipv4_udp();
    f[14] = 0x43; // IHL 3: shorter than the fixed header
    assert_eq!(frame::parse(&f), Err(Malformed::BadIpv4));
    f[14] = 0x4f; // IHL 15: 60 bytes, past the packet's total length
    assert_eq!(frame::parse(&f), Err(Malformed::BadIpv4));
    f[14] = 0x55; // version 5
    assert_eq!(frame::parse(&f), Err(Malformed::BadIpv4));
}

#[test]
fn total_length_past_the_frame_is_malformed_and_padding_is_not() {
    let mut f = ipv4_udp();
    f[16..18].copy_from_slice(&2000u16.to_be_bytes());
    assert_eq!(frame::parse(&f), Err(Malformed::BadIpv4));
    let mut padded = ipv4_udp();
    let len = padded.len();
    padded.resize(len + 10, 0);
    let ip = frame::parse(&padded).unwrap().ip.unwrap();
    assert_eq!(ip.end, len);
    assert_eq!(ip.ports, Some((1000, 5001)));
}

#[test]
fn later_ipv4_fragments_have_no_ports() {
    let mut f = ipv4_udp();
    f[20..22].copy_from_slice(&0x0010u16.to_be_bytes()); // fragment offset 16 × 8 bytes
    let ip = frame::parse(&f).unwrap().ip.unwrap();
    assert!(ip.later_fragment);
    assert_eq!(ip.ports, None);
}

#[test]
fn long_ipv6_extension_chains_are_malformed() {
    let chain = |n: usize| {
        build(&FrameSpec {
            ip: Some(IpSpec {
                version: 6,
                src: [1; 16],
                dst: [2; 16],
                protocol: proto::UDP,
                dscp: 0,
                ports: Some((1, 2)),
                extensions: vec![proto::DSTOPTS; n],
                payload: 4,
            }),
            ..FrameSpec::default()
        })
    };
    let ok = frame::parse(&chain(frame::MAX_IPV6_EXTENSIONS)).unwrap();
    assert_eq!(ok.ip.unwrap().ports, Some((1, 2)));
    assert_eq!(
        frame::parse(&chain(frame::MAX_IPV6_EXTENSIONS + 1)),
        Err(Malformed::BadExtensions)
    );
    // An extension header whose length runs past the packet.
    let mut f = chain(1);
    f[14 + 40 + 1] = 200;
    assert_eq!(frame::parse(&f), Err(Malformed::BadExtensions));
}

#[test]
fn stacked_vlans_take_the_outer_id() {
    let f = build(&FrameSpec {
        vlans: vec![100, 200],
        ..FrameSpec::default()
    });
    let h = frame::parse(&f).unwrap();
    assert_eq!(h.vlan, Some(100));
    assert_eq!(h.ether_type, FrameSpec::default().ether_type);
    let too_many = build(&FrameSpec {
        vlans: vec![1; frame::MAX_VLAN_TAGS + 1],
        ..FrameSpec::default()
    });
    assert_eq!(frame::parse(&too_many), Err(Malformed::BadVlan));
    assert_eq!(frame::parse(&f[..16]), Err(Malformed::BadVlan));
    assert_eq!(frame::parse(&f[..13]), Err(Malformed::ShortEthernet));
}
