//! [`TcConfig`] → a commented scenario file (TOML) that `linkshare validate`, `run` and
//! `shape` read: the link, `[link.htb]`, one `[[class]]` per tc class (named by its
//! handle), `[shaper] default`, one `[[filter]]` per filter, and one greedy flow per
//! leaf so that `linkshare run` shows how the link is shared when every class is
//! backlogged.

use std::fmt::Write as _;

use linkshare_classify::frame::{ETHERTYPE_ARP, ETHERTYPE_IPV4, ETHERTYPE_IPV6, proto};
use linkshare_classify::{DscpSet, Match, PortRange};
use linkshare_core::curve::ServiceCurve;
use linkshare_core::hierarchy::Limit;
use linkshare_core::units::{Bytes, Duration};

use crate::import::{Machine, Untranslated};
use crate::model::{Discipline, TcConfig};

/// What the scenario says about where it came from.
#[derive(Clone, Debug)]
pub struct Provenance<'a> {
    /// The scenario's name (`[scenario] name`).
    pub name: &'a str,
    /// The script it was imported from.
    pub script: &'a str,
    /// What the importer assumed about the machine.
    pub machine: &'a Machine,
    /// What was not translated.
    pub untranslated: &'a [Untranslated],
    /// `[shaper] in` and `out`, for `linkshare shape`, when given.
    pub interfaces: Option<(&'a str, &'a str)>,
}

/// How long `linkshare run` simulates an imported scenario.
const DURATION: Duration = Duration::from_secs(10);

/// The size of the packets of the greedy flows written for each leaf.
const PACKET: Bytes = Bytes(1500);

/// Writes `config` as a scenario.
pub fn write(config: &TcConfig, from: &Provenance<'_>) -> String {
    let mut s = String::new();
    let w = &mut s;
    let _ = writeln!(
        w,
        "# Imported by `linkshare tc import` from {} (interface {}).",
        from.script, config.dev
    );
    w.push_str(
        "# Class names are tc's class handles. Every value tc or the kernel would fill in\n\
         # by default is written out, with a comment saying how it was derived.\n",
    );
    if !from.untranslated.is_empty() {
        w.push_str("#\n# Not translated (the scenario runs without them):\n");
        for u in from.untranslated {
            let _ = writeln!(w, "#   line {}: {}", u.origin.line, u.command);
            let _ = writeln!(w, "#     {}", u.reason);
        }
    }
    let _ = writeln!(
        w,
        "\n[scenario]\nname = {}\nduration = \"{DURATION}\"\nscheduler = \"{}\"",
        quote(from.name),
        config.discipline.name()
    );
    let _ = writeln!(w, "\n[link]");
    let why = match config.discipline {
        Discipline::Htb { .. } => "the sum of the ceilings of the classes under the qdisc",
        Discipline::Hfsc => "the sum of the upper limits of the classes under the qdisc",
        _ => "the interface's rate (--rate)",
    };
    let why = if from.machine.rate.is_some() {
        "the interface's rate (--rate)"
    } else {
        why
    };
    let _ = writeln!(w, "rate = \"{}\"  # {why}", config.rate);
    if let Discipline::Htb { r2q } = config.discipline {
        let _ = writeln!(w, "\n[link.htb]");
        let _ = writeln!(
            w,
            "r2q = {r2q}{}",
            if r2q == 10 { "  # tc's default" } else { "" }
        );
        let _ = writeln!(
            w,
            "hz = {}  # tc's clock rate for default bursts, from /proc/net/psched",
            from.machine.hz
        );
    }
    for c in &config.classes {
        let note = |field: &str| {
            c.defaults
                .iter()
                .find(|(f, _)| *f == field)
                .map_or(String::new(), |(_, why)| format!("  # {why}"))
        };
        let _ = writeln!(w, "\n[[class]]\nname = \"{}\"", c.handle);
        if let Some(p) = c.parent {
            let _ = writeln!(w, "parent = \"{p}\"");
        }
        if let Some(r) = c.rate {
            let _ = writeln!(w, "rate = \"{r}\"{}", note("rate"));
        }
        if let Some(r) = c.ceil {
            let _ = writeln!(w, "ceil = \"{r}\"{}", note("ceil"));
        }
        if let Some(b) = c.burst {
            let _ = writeln!(w, "burst = \"{b}\"{}", note("burst"));
        }
        if let Some(b) = c.cburst {
            let _ = writeln!(w, "cburst = \"{b}\"{}", note("cburst"));
        }
        if let Some(q) = c.quantum {
            let _ = writeln!(w, "quantum = \"{q}\"{}", note("quantum"));
        }
        if let Some(p) = c.priority {
            let _ = writeln!(w, "priority = {p}{}", note("priority"));
        }
        for (key, curve) in [("rt", c.rt), ("ls", c.ls), ("ul", c.ul)] {
            match curve {
                Some(curve) => {
                    let _ = writeln!(w, "{key} = {}", curve_value(&curve));
                }
                None => {
                    if let Some((_, why)) = c.defaults.iter().find(|(f, _)| *f == key) {
                        let _ = writeln!(w, "# no {key}: {why}");
                    }
                }
            }
        }
        match c.limit {
            Some(Limit::Packets(n)) => {
                let _ = writeln!(w, "limit = {n}{}", note("limit"));
            }
            Some(Limit::Bytes(b)) => {
                let _ = writeln!(w, "limit = \"{b}\"{}", note("limit"));
            }
            None => {}
        }
    }
    if config.default.is_some() || from.interfaces.is_some() {
        w.push_str("\n[shaper]\n");
    }
    if let Some((input, output)) = from.interfaces {
        let _ = writeln!(
            w,
            "in = {}  # frames arrive here\nout = {}  # and leave here, shaped",
            quote(input),
            quote(output)
        );
    }
    if let Some(d) = config.default {
        let why = match config.discipline {
            Discipline::Prio => "  # PRIO's default priomap sends priority 0 to band 1",
            _ => "  # the qdisc's `default`",
        };
        let _ = writeln!(w, "default = \"{d}\"{why}");
    }
    for f in &config.filters {
        let _ = writeln!(w, "\n[[filter]]\nclass = \"{}\"", f.class);
        write_match(w, &f.matches);
    }
    w.push_str(
        "\n# The traffic: one greedy flow per leaf, so that `linkshare run` shows how the\n\
         # link is shared when every class has packets waiting. Replace with your own.\n",
    );
    for c in config.classes.iter().filter(|c| config.is_leaf(c.handle)) {
        let _ = writeln!(
            w,
            "\n[[flow]]\nname = \"{h}\"\nclass = \"{h}\"\nsource = {{ type = \"greedy\", size = \"{PACKET}\" }}",
            h = c.handle
        );
    }
    s
}

fn quote(s: &str) -> String {
    toml::Value::String(s.to_owned()).to_string()
}

fn curve_value(c: &ServiceCurve) -> String {
    if c.d == Duration::ZERO || c.m1 == c.m2 {
        format!("\"{}\"", c.m2)
    } else {
        format!(
            "{{ m1 = \"{}\", d = \"{}\", m2 = \"{}\" }}",
            c.m1, c.d, c.m2
        )
    }
}

/// The `[[filter]]` keys of `m`.
pub(crate) fn write_match(w: &mut String, m: &Match) {
    if let Some(et) = m.ether_type {
        let _ = match et {
            ETHERTYPE_IPV4 => writeln!(w, "ether_type = \"ipv4\""),
            ETHERTYPE_IPV6 => writeln!(w, "ether_type = \"ipv6\""),
            ETHERTYPE_ARP => writeln!(w, "ether_type = \"arp\""),
            n => writeln!(w, "ether_type = {n:#06x}"),
        };
    }
    if let Some(v) = m.vlan {
        let _ = writeln!(w, "vlan = {v}");
    }
    if let Some(p) = &m.src {
        let _ = writeln!(w, "src = \"{p}\"");
    }
    if let Some(p) = &m.dst {
        let _ = writeln!(w, "dst = \"{p}\"");
    }
    if let Some(p) = m.protocol {
        let _ = match protocol_name(p) {
            Some(n) => writeln!(w, "protocol = \"{n}\""),
            None => writeln!(w, "protocol = {p}"),
        };
    }
    for (key, r) in [("sport", m.sport), ("dport", m.dport)] {
        if let Some(r) = r {
            let _ = writeln!(w, "{key} = {}", ports(r));
        }
    }
    if let Some(d) = m.dscp {
        let _ = writeln!(w, "dscp = [{}]", dscps(d).join(", "));
    }
}

/// The names the scenario format gives protocols.
pub(crate) fn protocol_name(p: u8) -> Option<&'static str> {
    [
        ("tcp", proto::TCP),
        ("udp", proto::UDP),
        ("icmp", proto::ICMP),
        ("icmpv6", proto::ICMPV6),
        ("sctp", proto::SCTP),
        ("udplite", proto::UDPLITE),
    ]
    .iter()
    .find(|(_, n)| *n == p)
    .map(|(name, _)| *name)
}

fn ports(r: PortRange) -> String {
    if r.lo == r.hi {
        r.lo.to_string()
    } else {
        format!("\"{}-{}\"", r.lo, r.hi)
    }
}

/// The DSCPs of a set, lowest first.
pub(crate) fn dscps(d: DscpSet) -> Vec<String> {
    (0u8..64)
        .filter(|k| d.contains(*k))
        .map(|k| k.to_string())
        .collect()
}
