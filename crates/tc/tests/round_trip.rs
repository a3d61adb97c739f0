//! Round trips over generated trees (proptest):
//!
//! * script → scenario → tc commands: importing a tc script, writing the scenario,
//!   loading it and exporting it gives back the configuration imported (import ∘
//!   export is the identity on what the kernel can express);
//! * and importing those commands gives it once more (export ∘ import is the
//!   identity on tc scripts, modulo spelling: defaults written out, units, filter
//!   priorities renumbered).

use std::fmt::Write as _;

use linkshare_tc::Machine;
use linkshare_tc::export::{from_link, script};
use linkshare_tc::import::import;
use linkshare_tc::model::TcConfig;
use linkshare_tc::scenario::{Provenance, write};
use proptest::prelude::*;

/// One generated class: its parent (an index of an earlier class, or the qdisc) and
/// its options.
#[derive(Clone, Debug)]
struct Gen {
    parent: Option<usize>,
    rate_kbit: u64,
    ceil_kbit: Option<u64>,
    burst: Option<u64>,
    quantum: Option<u64>,
    prio: Option<u8>,
    leaf: u8,
    curve: (u64, u64, u64),
}

fn gen_class() -> impl Strategy<Value = Gen> {
    (
        any::<prop::sample::Index>(),
        8u64..200_000,
        prop::option::of(8u64..200_000),
        prop::option::of(1600u64..70_000),
        prop::option::of(1000u64..30_000),
        prop::option::of(0u8..8),
        0u8..3,
        (0u64..20_000, 0u64..50, 8u64..100_000),
    )
        .prop_map(
            |(p, rate_kbit, ceil_kbit, burst, quantum, prio, leaf, curve)| Gen {
                parent: Some(p.index(usize::MAX)),
                rate_kbit,
                ceil_kbit,
                burst,
                quantum,
                prio,
                leaf,
                curve,
            },
        )
}

/// A generated filter: prefix, protocol, port block, DSCP, target.
type GenFilter = (
    Option<(u32, u8)>,
    Option<u8>,
    Option<(u16, u16)>,
    Option<u8>,
    prop::sample::Index,
);

fn gen_filter() -> impl Strategy<Value = GenFilter> {
    (
        prop::option::of((any::<u32>(), 8u8..=32)),
        prop::option::of(prop::sample::select(vec![1u8, 6, 17])),
        prop::option::of((
            any::<u16>(),
            prop::sample::select(vec![0xffffu16, 0xfff0, 0xff00]),
        )),
        prop::option::of(0u8..64),
        any::<prop::sample::Index>(),
    )
}

/// A tc script for a generated tree under `kind` (htb or hfsc).
fn script_of(kind: &str, classes: &[Gen], filters: &[GenFilter], default: usize) -> String {
    let mut s = String::from("DEV=veth0\ntc qdisc del dev $DEV root 2>/dev/null\n");
    let mut parents = Vec::new();
    for (i, c) in classes.iter().enumerate() {
        // Parents are earlier classes (or the qdisc): a tree of any shape.
        let parent = c.parent.map(|p| p % (i + 1)).filter(|p| *p < i);
        parents.push(parent);
    }
    let is_leaf = |i: usize| !parents.contains(&Some(i));
    let leaves: Vec<usize> = (0..classes.len()).filter(|i| is_leaf(*i)).collect();
    let minor = |i: usize| format!("1:{:x}", 0x10 + i);
    let _ = write!(s, "tc qdisc add dev $DEV root handle 1: {kind}");
    let _ = writeln!(s, " default {:x}", 0x10 + leaves[default % leaves.len()]);
    for (i, c) in classes.iter().enumerate() {
        let parent = parents[i].map_or("1:".to_owned(), minor);
        let _ = write!(
            s,
            "tc class add dev $DEV parent {parent} classid {} {kind}",
            minor(i)
        );
        if kind == "htb" {
            let _ = write!(s, " rate {}kbit", c.rate_kbit);
            if let Some(ceil) = c.ceil_kbit {
                let _ = write!(s, " ceil {ceil}kbit");
            }
            if let Some(b) = c.burst {
                let _ = write!(s, " burst {b} cburst {}", b + 100);
            }
            if let Some(q) = c.quantum {
                let _ = write!(s, " quantum {q}");
            }
            if let Some(p) = c.prio {
                let _ = write!(s, " prio {p}");
            }
        } else {
            let (m1, d, m2) = c.curve;
            let _ = write!(s, " ls m1 {m1}kbit d {d}ms m2 {m2}kbit");
            if is_leaf(i) && c.leaf != 0 {
                let _ = write!(s, " rt umax {}b dmax {}ms rate {}kbit", 100 + m1, 1 + d, m2);
            }
            if parents[i].is_none() {
                let _ = write!(s, " ul rate {}kbit", c.rate_kbit);
            }
        }
        s.push('\n');
        if is_leaf(i) {
            match c.leaf {
                1 => {
                    let _ = writeln!(
                        s,
                        "tc qdisc add dev $DEV parent {} pfifo limit {}",
                        minor(i),
                        10 + c.rate_kbit % 500
                    );
                }
                2 => {
                    let _ = writeln!(
                        s,
                        "tc qdisc add dev $DEV parent {} bfifo limit {}b",
                        minor(i),
                        3000 + c.rate_kbit
                    );
                }
                _ => {}
            }
        }
    }
    for (k, (prefix, protocol, ports, dscp, to)) in filters.iter().enumerate() {
        let _ = write!(
            s,
            "tc filter add dev $DEV parent 1:0 protocol ip prio {} u32",
            k + 1
        );
        if let Some((addr, len)) = prefix {
            let masked = if *len == 32 {
                *addr
            } else {
                addr & !(u32::MAX >> len)
            };
            let _ = write!(
                s,
                " match ip src {}/{len}",
                std::net::Ipv4Addr::from(masked)
            );
        }
        if let Some(p) = protocol {
            let _ = write!(s, " match ip protocol {p} 0xff");
        }
        if let Some((port, mask)) = ports {
            let _ = write!(s, " match ip dport {} {mask:#06x}", port & mask);
        }
        if let Some(d) = dscp {
            let _ = write!(s, " match ip dsfield {:#04x} 0xfc", d << 2);
        }
        let _ = writeln!(s, " flowid {}", minor(leaves[to.index(leaves.len())]));
    }
    s
}

/// Import → scenario → load → export → import: the same configuration throughout.
fn round_trip(text: &str) -> Result<(), TestCaseError> {
    let machine = Machine::default();
    let a = import(text, "gen.sh", &machine).map_err(|p| TestCaseError::fail(p.to_string()))?;
    prop_assert!(a.untranslated.is_empty(), "{:?}", a.untranslated);
    let toml = write(
        &a.config,
        &Provenance {
            name: "gen",
            script: "gen.sh",
            machine: &machine,
            untranslated: &[],
            interfaces: None,
        },
    );
    let link = linkshare_scenario::load_single_link_str(&toml, "gen.toml", "gen")
        .map_err(|p| TestCaseError::fail(format!("{p}\n{toml}")))?;
    let (b, names) = from_link(&link, "veth0").map_err(|r| TestCaseError::fail(r.to_string()))?;
    same(&a.config, &b, &toml)?;
    let commands = script(&b, &names);
    let c = import(&commands, "exported.sh", &machine)
        .map_err(|p| TestCaseError::fail(format!("{p}\n{commands}")))?;
    prop_assert!(c.untranslated.is_empty(), "{:?}", c.untranslated);
    same(&a.config, &c.config, &commands)
}

fn same(a: &TcConfig, b: &TcConfig, text: &str) -> Result<(), TestCaseError> {
    prop_assert!(a.same(b), "{a:#?}\n!=\n{b:#?}\nvia\n{text}");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn htb_trees_round_trip(
        classes in prop::collection::vec(gen_class(), 1..9),
        filters in prop::collection::vec(gen_filter(), 0..5),
        default in 0usize..8,
    ) {
        round_trip(&script_of("htb", &classes, &filters, default))?;
    }

    #[test]
    fn hfsc_trees_round_trip(
        classes in prop::collection::vec(gen_class(), 1..9),
        filters in prop::collection::vec(gen_filter(), 0..5),
        default in 0usize..8,
    ) {
        round_trip(&script_of("hfsc", &classes, &filters, default))?;
    }
}

/// A scenario written by hand (names that are not handles, defaults left to the core,
/// top ceilings above the link) exports with a wrapper class holding the tree to the
/// link rate, and imports back to the same configuration.
#[test]
fn a_hand_written_scenario_exports_and_imports_back() {
    let toml = "[link]\nrate = \"50mbit\"\nscheduler = \"htb\"\n\
                [[class]]\nname = \"voice\"\nrate = \"10mbit\"\nceil = \"50mbit\"\npriority = 0\n\
                [[class]]\nname = \"bulk\"\nrate = \"40mbit\"\nceil = \"50mbit\"\n\
                [shaper]\ndefault = \"bulk\"\n\
                [[filter]]\nclass = \"voice\"\nprotocol = \"udp\"\ndport = \"5060-5070\"\n";
    let link = linkshare_scenario::load_single_link_str(toml, "s.toml", "s").unwrap();
    let (config, names) = from_link(&link, "eth0").unwrap();
    let commands = script(&config, &names);
    assert!(commands.contains("# class voice\n"), "{commands}");
    assert!(
        commands.contains("classid 1:ffff htb rate 50mbit ceil 50mbit"),
        "{commands}"
    );
    // 5060-5070 in aligned blocks: 5060-5063 (0xfffc), 5064-5067 (0xfffc), 5068-5069
    // (0xfffe), 5070 (0xffff); under IPv4 and IPv6 (the rule names no version): 8 u32
    // filters.
    let u32_lines = commands.lines().filter(|l| l.contains(" u32 ")).count();
    assert_eq!(u32_lines, 8, "{commands}");
    let back = import(&commands, "e.sh", &Machine::default()).unwrap();
    assert!(back.untranslated.is_empty());
    let classes = |c: &TcConfig| {
        let mut c = c.clone();
        c.classes.iter_mut().for_each(|k| k.defaults.clear());
        (c.rate, c.default, c.classes)
    };
    assert_eq!(classes(&config), classes(&back.config));
    // The rule on both IP versions came back as one filter per u32 line; from there
    // on, the round trip is exact.
    assert_eq!(back.config.filters.len(), 8);
    let again = script(&back.config, &names);
    assert_eq!(again, commands);
}

/// DRR and PRIO (flat): a scenario exports and imports back to the same
/// configuration, its default class carried by a last catch-all filter (neither qdisc
/// has a `default`), the link rate given as the interface's (`--rate`).
#[test]
fn flat_drr_and_prio_scenarios_round_trip() {
    for (scheduler, extra) in [("drr", "quantum = \"3000b\"\n"), ("prio", "")] {
        let toml = format!(
            "[link]\nrate = \"20mbit\"\nscheduler = \"{scheduler}\"\n\
             [[class]]\nname = \"1:1\"\npriority = 0\n{extra}\
             [[class]]\nname = \"1:2\"\npriority = 1\nquantum = \"1514b\"\nlimit = \"64kb\"\n\
             [[class]]\nname = \"1:3\"\npriority = 2\nquantum = \"1514b\"\n\
             [shaper]\ndefault = \"1:3\"\n\
             [[filter]]\nclass = \"1:1\"\nether_type = \"ipv4\"\nprotocol = \"udp\"\ndport = 53\n"
        );
        let link = linkshare_scenario::load_single_link_str(&toml, "s.toml", "s").unwrap();
        let (config, names) = from_link(&link, "eth0").unwrap();
        let commands = script(&config, &names);
        assert!(
            commands.contains("u32 match u32 0 0 classid 1:3"),
            "{commands}"
        );
        let machine = Machine {
            rate: Some(link.rate),
            ..Machine::default()
        };
        let back = import(&commands, "e.sh", &machine).unwrap();
        assert!(back.untranslated.is_empty(), "{:?}", back.untranslated);
        assert!(
            config.same(&back.config),
            "{scheduler}: {config:#?}\n{:#?}\nvia\n{commands}",
            back.config
        );
    }
}
