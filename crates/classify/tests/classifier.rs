//! The classifier against an independent reference: rules evaluated on the fields a
//! frame was built from (not on what the parser read), first match wins.

use linkshare_classify::build::{FrameSpec, IpSpec, build, v4};
use linkshare_classify::frame::proto;
use linkshare_classify::{Classifier, DscpSet, Match, PortRange, Prefix, Rule};
use linkshare_core::hierarchy::ClassId;
use proptest::prelude::*;

/// Small domains, so that rules match often.
fn addr(version: u8, i: u8) -> [u8; 16] {
    if version == 4 {
        v4([10, 0, i, 1])
    } else {
        [0x20, 0x01, 0x0d, 0xb8, 0, i, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]
    }
}

fn frame_spec() -> impl Strategy<Value = FrameSpec> {
    (
        prop::option::of(0u16..3),
        prop_oneof![Just(4u8), Just(6u8)],
        0u8..4,
        0u8..4,
        prop_oneof![Just(proto::TCP), Just(proto::UDP), Just(proto::ICMP)],
        0u8..4,
        0u16..6,
        0u16..6,
        any::<bool>(),
    )
        .prop_map(
            |(vlan, version, s, d, protocol, dscp, sport, dport, ip)| FrameSpec {
                vlans: vlan.into_iter().collect(),
                ip: ip.then(|| IpSpec {
                    version,
                    src: addr(version, s),
                    dst: addr(version, d),
                    protocol,
                    dscp,
                    ports: (protocol != proto::ICMP).then_some((sport, dport)),
                    extensions: Vec::new(),
                    payload: 10,
                }),
                ..FrameSpec::default()
            },
        )
}

/// A rule as plain optional conditions on the built fields.
#[derive(Clone, Debug)]
struct RefRule {
    vlan: Option<u16>,
    v4: Option<bool>,
    src: Option<(u8, u8)>, // (version, i): the /24 (or /48) holding addr(version, i)
    protocol: Option<u8>,
    dport: Option<(u16, u16)>,
    dscp: Option<u8>,
    class: u32,
}

fn ref_rule() -> impl Strategy<Value = RefRule> {
    (
        prop::option::weighted(0.2, 0u16..3),
        prop::option::weighted(0.2, any::<bool>()),
        prop::option::weighted(0.3, (prop_oneof![Just(4u8), Just(6u8)], 0u8..4)),
        prop::option::weighted(
            0.3,
            prop_oneof![Just(proto::TCP), Just(proto::UDP), Just(proto::ICMP)],
        ),
        prop::option::weighted(0.3, (0u16..6, 0u16..6)),
        prop::option::weighted(0.2, 0u8..4),
        1u32..20,
    )
        .prop_map(|(vlan, v4, src, protocol, dport, dscp, class)| RefRule {
            vlan,
            v4,
            src,
            protocol,
            dport: dport.map(|(a, b)| (a.min(b), a.max(b))),
            dscp,
            class,
        })
}

fn reference(rules: &[RefRule], f: &FrameSpec, default: u32) -> u32 {
    for r in rules {
        let vlan_ok = r.vlan.is_none_or(|v| f.vlans.first() == Some(&v));
        let et = match &f.ip {
            Some(ip) if ip.version == 4 => 0x0800,
            Some(_) => 0x86dd,
            None => f.ether_type,
        };
        let et_ok = r.v4.is_none_or(|v4| et == if v4 { 0x0800 } else { 0x86dd });
        let needs_ip =
            r.src.is_some() || r.protocol.is_some() || r.dport.is_some() || r.dscp.is_some();
        let ip_ok = match &f.ip {
            None => !needs_ip,
            Some(ip) => {
                r.src
                    .is_none_or(|(v, i)| v == ip.version && ip.src == addr(v, i))
                    && r.protocol.is_none_or(|p| p == ip.protocol)
                    && r.dscp.is_none_or(|d| d == ip.dscp)
                    && r.dport.is_none_or(|(lo, hi)| {
                        ip.ports.is_some_and(|(_, d)| (lo..=hi).contains(&d))
                    })
            }
        };
        if vlan_ok && et_ok && ip_ok {
            return r.class;
        }
    }
    default
}

fn to_rule(r: &RefRule) -> Rule {
    Rule {
        matches: Match {
            ether_type: r.v4.map(|v4| if v4 { 0x0800 } else { 0x86dd }),
            vlan: r.vlan,
            src: r.src.map(|(v, i)| {
                let a = addr(v, i);
                let s = if v == 4 {
                    format!("{}.{}.{}.0/24", a[0], a[1], a[2])
                } else {
                    format!("2001:db8:{i:x}::/48")
                };
                s.parse::<Prefix>().unwrap()
            }),
            dst: None,
            protocol: r.protocol,
            sport: None,
            dport: r.dport.map(|(lo, hi)| PortRange { lo, hi }),
            dscp: r.dscp.map(|d| DscpSet(1 << d)),
        },
        class: ClassId(r.class),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// First match wins, with and without the flow cache (few and many rules), and a
    /// second lookup (a cache hit) agrees with the first.
    #[test]
    fn first_match_as_the_reference(
        rules in prop::collection::vec(ref_rule(), 0..24),
        frames in prop::collection::vec(frame_spec(), 1..40),
    ) {
        let mut c = Classifier::new(rules.iter().map(to_rule).collect(), ClassId(99));
        for _ in 0..2 {
            for f in &frames {
                let v = c.classify(&build(f));
                prop_assert_eq!(v.malformed, None);
                prop_assert_eq!(v.class.0, reference(&rules, f, 99), "{:?}", f);
            }
        }
    }

    /// Anything at all is classified, into the default class when it does not parse.
    #[test]
    fn any_bytes_are_classified(bytes in prop::collection::vec(any::<u8>(), 0..120)) {
        let mut c = Classifier::new(vec![], ClassId(3));
        let v = c.classify(&bytes);
        prop_assert_eq!(v.class, ClassId(3));
    }
}

#[test]
fn prefixes_parse_and_refuse() {
    let p: Prefix = "10.1.0.0/16".parse().unwrap();
    assert!(p.contains(4, &v4([10, 1, 200, 3])));
    assert!(!p.contains(4, &v4([10, 2, 0, 1])));
    assert!(
        !p.contains(6, &v4([10, 1, 0, 1])),
        "IPv4 prefixes do not match IPv6"
    );
    assert_eq!(p.to_string(), "10.1.0.0/16");
    let any: Prefix = "0.0.0.0/0".parse().unwrap();
    assert!(any.contains(4, &v4([1, 2, 3, 4])));
    let e = "10.1.0.1/16".parse::<Prefix>().unwrap_err().to_string();
    assert!(e.contains("write `10.1.0.0/16`"), "{e}");
    assert!("10.0.0.0/33".parse::<Prefix>().is_err());
    assert!("fe80::1/129".parse::<Prefix>().is_err());
    assert!("host".parse::<Prefix>().is_err());
    let six: Prefix = "2001:db8::/32".parse().unwrap();
    assert_eq!(six.to_string(), "2001:db8::/32");
    assert!(six.contains(6, &addr(6, 3)));
    let r: PortRange = "1000-2000".parse().unwrap();
    assert!(r.contains(1000) && r.contains(2000) && !r.contains(2001));
    assert!("2000-1000".parse::<PortRange>().is_err());
    assert!("70000".parse::<PortRange>().is_err());
}
