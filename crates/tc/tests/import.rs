//! The importer against hand-derived values: the corpus under `scenarios/tc/`, tc's
//! defaults, located errors and what is refused.

use std::path::Path;

use linkshare_classify::frame::{ETHERTYPE_IPV4, ETHERTYPE_IPV6, proto};
use linkshare_classify::{DscpSet, PortRange};
use linkshare_core::curve::ServiceCurve;
use linkshare_core::hierarchy::Limit;
use linkshare_core::units::{Bytes, Duration, Rate};
use linkshare_tc::import::{Imported, import};
use linkshare_tc::model::{Handle, TcClass};
use linkshare_tc::{Machine, Target, import_scenario};

fn corpus(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/tc")
        .join(name);
    std::fs::read_to_string(path).expect("corpus script")
}

fn h(minor: u16) -> Handle {
    Handle { major: 1, minor }
}

fn class(im: &Imported, minor: u16) -> &TcClass {
    im.config
        .classes
        .iter()
        .find(|c| c.handle == h(minor))
        .expect("class")
}

/// Every script of the corpus imports, and its scenario loads.
#[test]
fn every_corpus_script_imports_and_loads() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/tc");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).expect("scenarios/tc") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "sh") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("read");
        let target = Target {
            name: "s",
            file: "s.toml",
            interfaces: Some(("si", "so")),
        };
        let out = import_scenario(&text, "s.sh", &target, &Machine::default())
            .unwrap_or_else(|p| panic!("{}: {p}", path.display()));
        linkshare_scenario::load_str(&out.scenario, "s.toml", &dir)
            .unwrap_or_else(|p| panic!("{}: {p}", path.display()));
        linkshare_scenario::load_shaper_str(&out.scenario, "s.toml", "s")
            .unwrap_or_else(|p| panic!("{}: {p}", path.display()));
        n += 1;
    }
    assert!(n >= 3, "the corpus has {n} scripts");
}

#[test]
fn wondershaper_defaults_are_tcs() {
    let im = import(&corpus("wondershaper.sh"), "w.sh", &Machine::default()).unwrap();
    assert!(im.untranslated.is_empty(), "{:?}", im.untranslated);
    let c = &im.config;
    assert_eq!(c.dev, "eth0");
    // One top class of ceil 1000 kbit: the link.
    assert_eq!(c.rate, Rate::from_kbit(1000));
    assert_eq!(c.default, Some(h(0x20)));
    let root = class(&im, 1);
    assert_eq!(
        root.ceil,
        Some(Rate::from_kbit(1000)),
        "ceil defaults to rate"
    );
    assert_eq!(root.burst, Some(Bytes(6 * 1024)), "burst 6k");
    // cburst = ceil in bytes/s / hz + mtu = 125000 / 10^9 + 1600.
    assert_eq!(root.cburst, Some(Bytes(1600)));
    assert_eq!(root.quantum, None, "interior classes have no quantum");
    let leaf = class(&im, 0x10);
    // quantum = rate in bytes/s / r2q = 125000 / 10.
    assert_eq!(leaf.quantum, Some(Bytes(12_500)));
    assert_eq!(leaf.priority, Some(1));
    assert_eq!(leaf.limit, Some(Limit::Packets(100)));
    assert_eq!(class(&im, 0x30).ceil, Some(Rate::from_kbit(900)));
    // Filters in prio order: tos 0x10 (DSCP 4), icmp, udp 53, dst, sport 4096/0xf000.
    let f = &c.filters;
    assert_eq!(f.len(), 5);
    assert_eq!(f[0].matches.dscp, Some(DscpSet(1 << 4)));
    assert_eq!(f[0].matches.ether_type, Some(ETHERTYPE_IPV4));
    assert_eq!(f[1].matches.protocol, Some(proto::ICMP));
    assert_eq!(f[2].matches.protocol, Some(proto::UDP));
    assert_eq!(f[2].matches.dport, Some(PortRange { lo: 53, hi: 53 }));
    assert_eq!(f[3].class, h(0x30));
    assert_eq!(f[4].matches.sport, Some(PortRange { lo: 4096, hi: 8191 }));
}

#[test]
fn hfsc_curves_follow_tc() {
    let im = import(&corpus("hfsc-home-router.sh"), "h.sh", &Machine::default()).unwrap();
    assert!(im.untranslated.is_empty(), "{:?}", im.untranslated);
    assert_eq!(im.config.rate, Rate::from_mbit(10), "the top class's ul");
    // `sc` on an interior class: its rt is ignored by the kernel, and dropped.
    let top = class(&im, 1);
    assert_eq!(top.rt, None);
    assert_eq!(top.ls, Some(ServiceCurve::linear(Rate::from_mbit(10))));
    // umax 200 B within dmax 5 ms at 500 kbit/s: 200 B / 5 ms = 320 kbit/s < 500, so
    // the curve is convex: m1 = 0, d = 5 ms - 200 B / 500 kbit/s = 5 - 3.2 = 1.8 ms.
    assert_eq!(
        class(&im, 0x10).rt,
        Some(ServiceCurve {
            m1: Rate::ZERO,
            d: Duration::from_micros(1800),
            m2: Rate::from_kbit(500)
        })
    );
    let concave = ServiceCurve {
        m1: Rate::from_mbit(2),
        d: Duration::from_millis(10),
        m2: Rate::from_mbit(1),
    };
    assert_eq!(class(&im, 0x20).rt, Some(concave));
    assert_eq!(class(&im, 0x20).ls, Some(concave));
    assert_eq!(
        class(&im, 0x40).limit,
        Some(Limit::Bytes(Bytes(256 * 1024)))
    );
    assert_eq!(class(&im, 0x30).limit, Some(Limit::Packets(1000)));
    let f = &im.config.filters;
    assert_eq!(f[0].matches.dport, Some(PortRange { lo: 5060, hi: 5061 }));
    assert_eq!(f[1].matches.dscp, Some(DscpSet(1 << 46)), "0xb8 is EF, 46");
    // Same prio 4: script order (ipv6 first).
    assert_eq!(f[3].matches.ether_type, Some(ETHERTYPE_IPV6));
    assert_eq!(f[4].matches.ether_type, Some(ETHERTYPE_IPV4));
}

#[test]
fn sqm_leaves_are_listed_and_dscp_masks_become_sets() {
    let im = import(&corpus("sqm-simple.sh"), "q.sh", &Machine::default()).unwrap();
    let lines: Vec<u32> = im.untranslated.iter().map(|u| u.origin.line).collect();
    assert_eq!(lines, [18, 19, 20]);
    assert!(im.untranslated[0].reason.contains("fq_codel"));
    assert_eq!(class(&im, 0x11).quantum, Some(Bytes(1514)), "explicit");
    assert_eq!(
        class(&im, 0x11).limit,
        Some(Limit::Packets(1000)),
        "default pfifo"
    );
    assert_eq!(im.config.rate, Rate::from_kbit(20_000));
    // dsfield 0xc0/0xc0: every DSCP with its two high bits set, 48 to 63.
    let cs67: u64 = (48..64).map(|d| 1u64 << d).sum();
    assert_eq!(im.config.filters[1].matches.dscp, Some(DscpSet(cs67)));
}

#[test]
fn a_derived_quantum_is_clamped_with_tcs_warning() {
    let script = "tc qdisc add dev e root handle 1: htb default 10\n\
                  tc class add dev e parent 1: classid 1:10 htb rate 50kbit\n\
                  tc class add dev e parent 1: classid 1:20 htb rate 40mbit quantum 3000\n";
    let im = import(script, "q.sh", &Machine::default()).unwrap();
    // 50 kbit/s = 6250 B/s, / r2q 10 = 625 B, below 1000: clamped up.
    assert_eq!(class(&im, 0x10).quantum, Some(Bytes(1000)));
    assert_eq!(
        class(&im, 0x20).quantum,
        Some(Bytes(3000)),
        "explicit: kept"
    );
    assert_eq!(im.warnings.len(), 1);
    let w = im.warnings[0].to_string();
    assert!(
        w.starts_with("q.sh:2:38: field `quantum`: quantum of class 1:10 is small"),
        "{w}"
    );
    assert_eq!(
        im.config.rate,
        Rate::from_bps(40_050_000),
        "sum of the top ceilings"
    );
}

fn problems(script: &str) -> Vec<String> {
    match import(script, "bad.sh", &Machine::default()) {
        Ok(im) => panic!("imported: {:?}", im.config),
        Err(p) => p.0.iter().map(ToString::to_string).collect(),
    }
}

#[test]
fn errors_are_located_with_a_fix() {
    let p = problems(
        "tc qdisc add dev e root handle 1: htb\n\
         tc class add dev e parent 1: classid 1:10 htb rate 10mibt\n",
    );
    assert_eq!(p.len(), 1);
    assert!(p[0].starts_with("bad.sh:2:52: field `rate`: "), "{}", p[0]);
    let p = problems(
        "tc qdisc add dev e root handle 1: htb\n\
         tc class add dev e parent 1:5 classid 1:10 htb rate 1mbit\n",
    );
    assert!(
        p[0].starts_with("bad.sh:2:27: field `parent`: no class 1:5 was added"),
        "{}",
        p[0]
    );
    let p = problems(
        "tc qdisc add dev e root handle 1: htb\n\
         tc class add dev e parent 1: classid 1:10 htb rate 1mbit bogus 3\n",
    );
    assert!(
        p[0].starts_with("bad.sh:2:58: field `htb`: `bogus` is not an option"),
        "{}",
        p[0]
    );
    let p = problems("tc qdisc add dev $WAN root handle 1: htb\n");
    assert!(
        p[0].starts_with("bad.sh:1:18: the variable `WAN` is not set"),
        "{}",
        p[0]
    );
    let p = problems("echo hello\n");
    assert!(
        p[0].contains("adds no HTB, HFSC, DRR or PRIO root qdisc"),
        "{}",
        p[0]
    );
}

#[test]
fn what_cannot_be_translated_is_listed_with_the_reason() {
    let script = "tc qdisc add dev e root handle 1: htb default 10\n\
                  tc class add dev e parent 1: classid 1:10 htb rate 1mbit\n\
                  tc filter add dev e parent 1: protocol ip handle 6 fw flowid 1:10\n\
                  tc filter add dev e parent 1: protocol ip u32 match ip dport 22 0xffff action drop\n\
                  tc qdisc add dev e ingress\n\
                  tc qdisc add dev other root handle 1: htb\n\
                  iptables -t mangle -A POSTROUTING -j MARK --set-mark 6\n";
    let im = import(script, "x.sh", &Machine::default()).unwrap();
    let reasons: Vec<(u32, &str)> = im
        .untranslated
        .iter()
        .map(|u| (u.origin.line, u.reason.as_str()))
        .collect();
    assert_eq!(reasons.len(), 5, "{reasons:?}");
    assert!(reasons[0].1.contains("firewall mark"));
    assert!(reasons[1].1.contains("actions"));
    assert!(reasons[2].1.contains("arriving traffic"));
    assert!(reasons[3].1.contains("one interface is imported at a time"));
    assert!(reasons[4].1.contains("not a tc command"));
    assert_eq!(im.config.filters.len(), 0);
}

/// `tc qdisc show` / `tc -s -d class show` output of `htb-tenants.sh` built by the
/// kernel reads back as the script: same tree, rates, quanta, priorities and leaves;
/// bursts within a few bytes (the kernel keeps them as times, 1600 B at 30 Mbit/s
/// prints as 1593 B).
#[test]
fn show_output_reads_back_as_the_script() {
    let shown = include_str!("data/htb-tenants.show");
    let from_show = import(shown, "show", &Machine::default()).unwrap();
    assert!(
        from_show.untranslated.is_empty(),
        "{:?}",
        from_show.untranslated
    );
    let from_script = import(&corpus("htb-tenants.sh"), "s.sh", &Machine::default()).unwrap();
    let (a, b) = (&from_show.config, &from_script.config);
    assert_eq!(a.rate, b.rate);
    assert_eq!(a.default, b.default);
    assert_eq!(a.classes.len(), b.classes.len());
    for want in &b.classes {
        let got = a
            .classes
            .iter()
            .find(|c| c.handle == want.handle)
            .expect("every class");
        assert_eq!(
            (
                got.parent,
                got.rate,
                got.ceil,
                got.quantum,
                got.priority,
                got.limit
            ),
            (
                want.parent,
                want.rate,
                want.ceil,
                want.quantum,
                want.priority,
                want.limit
            ),
            "class {}",
            want.handle
        );
        for (g, w) in [(got.burst, want.burst), (got.cburst, want.cburst)] {
            let (g, w) = (g.unwrap().get(), w.unwrap().get());
            assert!(
                g <= w && w - g <= 8,
                "class {}: burst {g} vs {w}",
                want.handle
            );
        }
    }
}
