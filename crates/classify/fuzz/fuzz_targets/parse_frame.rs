//! Any bytes through the frame parser and a classifier with rules on every field: no
//! panic, offsets inside the frame, malformed frames in the default class.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linkshare_classify::{Classifier, DscpSet, Match, PortRange, Rule, parse};
use linkshare_core::hierarchy::ClassId;

fuzz_target!(|data: &[u8]| {
    if let Ok(h) = parse(data)
        && let Some(ip) = h.ip
    {
        assert!(ip.l3_offset <= ip.l4_offset && ip.l4_offset <= ip.end && ip.end <= data.len());
    }
    let rule = Rule {
        matches: Match {
            ether_type: Some(0x0800),
            vlan: None,
            src: "10.0.0.0/8".parse().ok(),
            dst: None,
            protocol: Some(17),
            sport: None,
            dport: Some(PortRange { lo: 1, hi: 1000 }),
            dscp: Some(DscpSet(u64::MAX)),
        },
        class: ClassId(2),
    };
    let mut c = Classifier::new(vec![rule], ClassId(1));
    let v = c.classify(data);
    if v.malformed.is_some() {
        assert_eq!(v.class, ClassId(1));
    }
});
