//! A scenario's link → [`TcConfig`] ([`from_link`]) → tc commands ([`script`]).
//!
//! What is exported is what linkshare runs: HTB's rates, ceilings, bursts and quanta
//! as the core resolves them (defaults included, so the kernel gets the same values),
//! HFSC's curves, DRR's quanta, PRIO's bands; each leaf gets the FIFO its `limit`
//! says; `[[filter]]` rules become u32 filters (the classifier every kernel with HTB
//! has; `match u32 0 0` when they match on nothing but the ether type), tried in the
//! scenario's order.

use std::fmt::Write as _;

use linkshare_classify::frame::{ETHERTYPE_ARP, ETHERTYPE_IPV4, ETHERTYPE_IPV6};
use linkshare_classify::{DscpSet, Match};
use linkshare_core::curve::ServiceCurve;
use linkshare_core::hierarchy::{ClassId, Limit};
use linkshare_core::sched::hfsc::VtRestart;
use linkshare_core::sched::htb;
use linkshare_core::sched::{SchedulerConfig, SchedulerKind};
use linkshare_core::units::{Bytes, Duration, Rate};
use linkshare_scenario::SingleLink;

use crate::model::{Discipline, Handle, TcClass, TcConfig, TcFilter};

/// Why a scenario cannot be exported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// What the kernel lacks.
    pub problem: String,
    /// The closest thing it has.
    pub fix: String,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}; {}", self.problem, self.fix)
    }
}

/// The qdisc handle major of exported trees whose class names are not handles.
const MAJOR: u16 = 1;

/// Reads a scenario's link as a tc configuration for interface `dev`, with the
/// scenario's name of each class that has one (the wrapper class `MAJOR:ffff`, added
/// when the top classes could together exceed the link rate, has none).
pub fn from_link(
    link: &SingleLink,
    dev: &str,
) -> Result<(TcConfig, Vec<(Handle, String)>), Refusal> {
    let discipline = match &link.scheduler {
        SchedulerConfig::Htb(p) => Discipline::Htb { r2q: p.r2q.get() },
        SchedulerConfig::Hfsc(p) if p.restart == VtRestart::Midpoint => Discipline::Hfsc,
        SchedulerConfig::Hfsc(_) => {
            return Err(Refusal {
                problem: "the link's H-FSC restarts classes at the smallest virtual time \
                          ([link.hfsc] restart = \"min\"), and the kernel's H-FSC always \
                          restarts them at the midpoint"
                    .to_owned(),
                fix: "remove `restart` (the kernel's rule) to export the link".to_owned(),
            });
        }
        SchedulerConfig::Drr => Discipline::Drr,
        SchedulerConfig::Prio => Discipline::Prio,
        other => return Err(refusal(other.kind())),
    };
    if link.best_effort.is_some() {
        return Err(Refusal {
            problem: "the link's best-effort curves (FSC) have no kernel equivalent".to_owned(),
            fix: "export it under hfsc, giving each class an ls curve".to_owned(),
        });
    }
    let tree = &link.classes;
    let flat = matches!(discipline, Discipline::Drr | Discipline::Prio);
    if flat && tree.classes().iter().any(|c| c.depth > 1) {
        return Err(Refusal {
            problem: format!(
                "the kernel's {} is flat, and the scenario's classes are nested",
                discipline.name()
            ),
            fix: "export it under htb or hfsc, which the kernel runs as trees".to_owned(),
        });
    }
    if tree.classes().iter().any(|c| c.spec.per_flow.is_some()) {
        return Err(Refusal {
            problem: "per-flow classes (`per_flow`) have no tc equivalent".to_owned(),
            fix: "give each flow a class, or use an sfq or fq_codel leaf by hand".to_owned(),
        });
    }
    let handles = handles(link);
    let handle = |id: ClassId| handles[id.index()];
    let major = handles.get(1).map_or(MAJOR, |h| h.major);
    let mut classes = Vec::new();
    let resolved = match &link.scheduler {
        SchedulerConfig::Htb(p) => Some(htb::resolve(tree, p).map_err(|e| Refusal {
            problem: e.to_string(),
            fix: "fix the scenario first (`linkshare validate`)".to_owned(),
        })?),
        _ => None,
    };
    for c in &tree.classes()[1..] {
        let parent = c.parent.filter(|p| *p != ClassId::ROOT).map(handle);
        let mut t = TcClass::new(handle(c.id), parent);
        match discipline {
            Discipline::Htb { .. } => {
                let (params, _) = resolved.as_ref().expect("HTB resolved");
                let p = &params[c.id.index()];
                t.rate = Some(p.rate);
                t.ceil = Some(p.ceil);
                t.burst = Some(p.burst);
                t.cburst = Some(p.cburst);
                t.quantum = p.quantum;
                t.priority = c.is_leaf().then_some(p.priority);
            }
            Discipline::Hfsc => {
                t.rt = c.spec.rt;
                t.ls = c.spec.ls;
                t.ul = c.spec.ul;
            }
            Discipline::Drr => t.quantum = c.spec.quantum,
            Discipline::Prio => t.priority = c.spec.priority,
        }
        if c.is_leaf() {
            t.limit = c.spec.limit;
        }
        classes.push(t);
    }
    if discipline == Discipline::Prio {
        let bands: Vec<u8> = classes.iter().map(|c| c.priority.unwrap_or(0)).collect();
        let in_order = bands.iter().enumerate().all(|(i, b)| usize::from(*b) == i);
        if !in_order || !(2..=16).contains(&classes.len()) {
            return Err(Refusal {
                problem: "the kernel's PRIO has 2 to 16 bands, classes 1 to N with priorities \
                          0 to N-1"
                    .to_owned(),
                fix: "give the classes priorities 0, 1, ... in file order, or export under htb"
                    .to_owned(),
            });
        }
    }
    let names = tree.classes()[1..]
        .iter()
        .map(|c| (handle(c.id), c.name().to_owned()))
        .collect();
    let params = match &link.scheduler {
        SchedulerConfig::Htb(p) => *p,
        _ => htb::HtbParams::default(),
    };
    wrap(&mut classes, &discipline, link.rate, major, &params);
    let mut filters = Vec::new();
    for rule in &link.rules {
        if rule.matches.vlan.is_some() {
            return Err(Refusal {
                problem: "VLAN matches are not exported".to_owned(),
                fix: "write the filter by hand (`protocol 802.1q flower vlan_id N ...`)".to_owned(),
            });
        }
        filters.push(TcFilter {
            matches: rule.matches.clone(),
            class: handle(rule.class),
        });
    }
    let config = TcConfig {
        dev: dev.to_owned(),
        rate: link.rate,
        major,
        discipline,
        default: link.default.map(handle),
        classes,
        filters,
    };
    Ok((config, names))
}

/// The handle minor of the class that holds an exported tree to the link rate, added
/// when the classes under the qdisc could together send more.
pub const WRAPPER_MINOR: u16 = 0xffff;

/// The kernel limits an HTB or HFSC tree only by its classes' ceilings (and the
/// interface's speed): when the classes under the qdisc may together send more than the
/// link rate, they are put under one class `MAJOR:ffff` sending at most the link rate.
fn wrap(
    classes: &mut Vec<TcClass>,
    discipline: &Discipline,
    rate: Rate,
    major: u16,
    params: &htb::HtbParams,
) {
    let most = |c: &TcClass| match discipline {
        Discipline::Htb { .. } => c.ceil.map(Rate::bps),
        Discipline::Hfsc => c.ul.map(|u| u.m2.bps()),
        Discipline::Drr | Discipline::Prio => Some(0),
    };
    let together = classes
        .iter()
        .filter(|c| c.parent.is_none())
        .map(most)
        .try_fold(0u64, |acc, m| m.map(|m| acc.saturating_add(m)));
    if matches!(discipline, Discipline::Drr | Discipline::Prio) || together == Some(rate.bps()) {
        return;
    }
    let handle = Handle {
        major,
        minor: WRAPPER_MINOR,
    };
    for c in classes.iter_mut().filter(|c| c.parent.is_none()) {
        c.parent = Some(handle);
    }
    let mut w = TcClass::new(handle, None);
    match discipline {
        Discipline::Htb { .. } => {
            w.rate = Some(rate);
            w.ceil = Some(rate);
            w.burst = Some(htb::default_burst(rate, params));
            w.cburst = w.burst;
        }
        _ => {
            w.ls = Some(ServiceCurve::linear(rate));
            w.ul = Some(ServiceCurve::linear(rate));
        }
    }
    classes.insert(0, w);
}

/// The closest kernel qdisc to a discipline the kernel lacks.
fn refusal(kind: SchedulerKind) -> Refusal {
    let closest = match kind {
        SchedulerKind::Hls | SchedulerKind::Hdrr | SchedulerKind::Cbq => {
            "htb (rates and ceilings in a tree)"
        }
        SchedulerKind::Fsc | SchedulerKind::Sced | SchedulerKind::VirtualClock => {
            "hfsc (service curves)"
        }
        SchedulerKind::Jobs => "hfsc with rt curves for the delay-sensitive classes",
        SchedulerKind::Keshav
        | SchedulerKind::Wf2q
        | SchedulerKind::Wfq
        | SchedulerKind::Scfq
        | SchedulerKind::Stfq => "drr (flat fair queueing)",
        SchedulerKind::Hwf2q => "hfsc with ls curves (hierarchical fair sharing)",
        _ => "htb, hfsc, drr or prio",
    };
    Refusal {
        problem: format!("the kernel has no `{kind}` qdisc"),
        fix: format!("run the scenario with --scheduler set to the closest: {closest}"),
    }
}

/// A tc handle for every class (the link's is the qdisc's): the names when every class
/// is named by a handle of one major, else `1:1`, `1:2`, ... in file order.
fn handles(link: &SingleLink) -> Vec<Handle> {
    let tree = &link.classes;
    let parsed: Vec<Option<Handle>> = tree.classes()[1..]
        .iter()
        .map(|c| Handle::parse(c.name()).filter(|h| h.minor != 0 && h.major != 0))
        .collect();
    let major = parsed.first().copied().flatten().map(|h| h.major);
    let mut distinct: Vec<Handle> = parsed.iter().flatten().copied().collect();
    distinct.sort();
    distinct.dedup();
    let all_handles = parsed
        .iter()
        .all(|h| h.is_some_and(|h| Some(h.major) == major))
        && distinct.len() == parsed.len();
    let mut out = vec![Handle {
        major: major.filter(|_| all_handles).unwrap_or(MAJOR),
        minor: 0,
    }];
    for (i, h) in parsed.into_iter().enumerate() {
        out.push(if all_handles {
            h.expect("checked")
        } else {
            Handle {
                major: MAJOR,
                minor: (i + 1) as u16,
            }
        });
    }
    out
}

/// The tc commands that build `config` on its interface, with `# comments` naming the
/// scenario's classes when they are not handles.
pub fn script(config: &TcConfig, names: &[(Handle, String)]) -> String {
    let mut s = String::from("#!/bin/sh\n# Written by `linkshare tc export`.\nset -e\n");
    let dev = &config.dev;
    let major = config.major;
    let _ = writeln!(s, "tc qdisc del dev {dev} root 2>/dev/null || true");
    let mut qdisc = format!(
        "tc qdisc add dev {dev} root handle {major:x}: {}",
        config.discipline.name()
    );
    match config.discipline {
        Discipline::Htb { r2q } => {
            if let Some(d) = config.default {
                let _ = write!(qdisc, " default {:x}", d.minor);
            }
            let _ = write!(qdisc, " r2q {r2q}");
        }
        Discipline::Hfsc => {
            if let Some(d) = config.default {
                let _ = write!(qdisc, " default {:x}", d.minor);
            }
        }
        Discipline::Prio => {
            let _ = write!(qdisc, " bands {}", config.classes.len());
        }
        Discipline::Drr => {}
    }
    let _ = writeln!(s, "# link rate {}", config.rate);
    s.push_str(&qdisc);
    s.push('\n');
    for c in &config.classes {
        match names.iter().find(|(h, _)| *h == c.handle) {
            Some((h, name)) if *name != h.to_string() => {
                let _ = writeln!(s, "# class {name}");
            }
            None if c.handle.minor == WRAPPER_MINOR => {
                let _ = writeln!(
                    s,
                    "# the link: holds the classes to the link rate, {}",
                    config.rate
                );
            }
            _ => {}
        }
        if config.discipline != Discipline::Prio {
            let parent = c.parent.unwrap_or(Handle { major, minor: 0 });
            let _ = write!(
                s,
                "tc class add dev {dev} parent {parent} classid {} {}",
                c.handle,
                config.discipline.name()
            );
            let put = |s: &mut String, key: &str, v: Option<String>| {
                if let Some(v) = v {
                    let _ = write!(s, " {key} {v}");
                }
            };
            put(&mut s, "rate", c.rate.map(|r| r.to_string()));
            put(&mut s, "ceil", c.ceil.map(|r| r.to_string()));
            put(&mut s, "burst", c.burst.map(size));
            put(&mut s, "cburst", c.cburst.map(size));
            // HTB reads its quantum as a plain number of bytes (`get_u32`).
            put(&mut s, "quantum", c.quantum.map(|q| q.get().to_string()));
            if matches!(config.discipline, Discipline::Htb { .. }) {
                put(&mut s, "prio", c.priority.map(|p| p.to_string()));
            }
            for (key, curve) in [("rt", c.rt), ("ls", c.ls), ("ul", c.ul)] {
                if let Some(k) = curve {
                    if k.d == Duration::ZERO || k.m1 == k.m2 {
                        let _ = write!(s, " {key} rate {}", k.m2);
                    } else {
                        let _ = write!(s, " {key} m1 {} d {} m2 {}", k.m1, k.d, k.m2);
                    }
                }
            }
            s.push('\n');
        }
        match c.limit {
            Some(Limit::Packets(n)) => {
                let _ = writeln!(
                    s,
                    "tc qdisc add dev {dev} parent {} pfifo limit {n}",
                    c.handle
                );
            }
            Some(Limit::Bytes(b)) => {
                let _ = writeln!(
                    s,
                    "tc qdisc add dev {dev} parent {} bfifo limit {}",
                    c.handle,
                    size(b)
                );
            }
            None if config.is_leaf(c.handle) => {
                let _ = writeln!(
                    s,
                    "# an unlimited queue: pfifo's largest limit\ntc qdisc add dev {dev} parent {} pfifo limit {}",
                    c.handle,
                    u32::MAX
                );
            }
            None => {}
        }
    }
    let mut prio = 0;
    for f in &config.filters {
        for line in filter_lines(&f.matches) {
            prio += 1;
            let _ = writeln!(
                s,
                "tc filter add dev {dev} parent {major:x}: {line_prio} classid {}",
                f.class,
                line_prio = line.replace("PRIO", &prio.to_string())
            );
        }
    }
    if let (Some(d), Discipline::Drr | Discipline::Prio) = (config.default, &config.discipline) {
        if config.discipline == Discipline::Drr || d.minor != 2 {
            let _ = writeln!(
                s,
                "# the default class: a last filter that matches every packet\n\
                 tc filter add dev {dev} parent {major:x}: protocol all prio {} u32 match u32 0 0 classid {d}",
                prio + 1
            );
        }
    }
    s
}

/// tc prints sizes in bytes (`1600b` is read as 1600 bytes, `2kb` as 2048).
fn size(b: Bytes) -> String {
    b.to_string()
}

/// `protocol P prio PRIO u32 MATCHES` for a match (u32: the classifier every kernel
/// with HTB has). One line, or several when u32 needs them: one per IP version when
/// the match names none, one per aligned block of a port range, one per DSCP
/// value/mask.
fn filter_lines(m: &Match) -> Vec<String> {
    let needs_ip = m.src.is_some()
        || m.dst.is_some()
        || m.protocol.is_some()
        || m.sport.is_some()
        || m.dport.is_some()
        || m.dscp.is_some();
    let version = m.src.or(m.dst).map(|p| p.version);
    let protocols: Vec<(&str, String)> = match m.ether_type {
        Some(ETHERTYPE_IPV4) => vec![("ip", "ip".into())],
        Some(ETHERTYPE_IPV6) => vec![("ip6", "ipv6".into())],
        Some(ETHERTYPE_ARP) => vec![("", "arp".into())],
        Some(n) => vec![("", format!("{n:#06x}"))],
        None if needs_ip => match version {
            Some(4) => vec![("ip", "ip".into())],
            Some(_) => vec![("ip6", "ipv6".into())],
            None => vec![("ip", "ip".into()), ("ip6", "ipv6".into())],
        },
        None => vec![("", "all".into())],
    };
    let opt = |v: Vec<(u32, u32)>| -> Vec<Option<(u32, u32)>> {
        if v.is_empty() {
            vec![None]
        } else {
            v.into_iter().map(Some).collect()
        }
    };
    let tos = opt(m.dscp.map(tos_masks).unwrap_or_default());
    let sports = opt(m.sport.map(|r| port_blocks(r.lo, r.hi)).unwrap_or_default());
    let dports = opt(m.dport.map(|r| port_blocks(r.lo, r.hi)).unwrap_or_default());
    let mut out = Vec::new();
    for (sel, p) in &protocols {
        if !needs_ip {
            out.push(format!("protocol {p} prio PRIO u32 match u32 0 0"));
            continue;
        }
        for t in &tos {
            for sp in &sports {
                for dp in &dports {
                    let mut keys = String::new();
                    if let Some(a) = &m.src {
                        let _ = write!(keys, " match {sel} src {a}");
                    }
                    if let Some(a) = &m.dst {
                        let _ = write!(keys, " match {sel} dst {a}");
                    }
                    if let Some(n) = m.protocol {
                        let _ = write!(keys, " match {sel} protocol {n} 0xff");
                    }
                    if let Some((v, mask)) = sp {
                        let _ = write!(keys, " match {sel} sport {v} {mask:#06x}");
                    }
                    if let Some((v, mask)) = dp {
                        let _ = write!(keys, " match {sel} dport {v} {mask:#06x}");
                    }
                    if let Some((v, mask)) = t {
                        let field = if *sel == "ip" { "dsfield" } else { "priority" };
                        let _ = write!(keys, " match {sel} {field} {v:#04x} {mask:#04x}");
                    }
                    out.push(format!("protocol {p} prio PRIO u32{keys}"));
                }
            }
        }
    }
    out
}

/// The fewest aligned blocks `value/mask` (mask of contiguous high bits) covering
/// exactly the ports `lo..=hi`.
fn port_blocks(lo: u16, hi: u16) -> Vec<(u32, u32)> {
    let (mut lo, hi) = (u32::from(lo), u32::from(hi));
    let mut out = Vec::new();
    while lo <= hi {
        let mut size = 1u32;
        while lo % (size * 2) == 0 && lo + size * 2 - 1 <= hi && size < 0x10000 {
            size *= 2;
        }
        out.push((lo, 0xffff & !(size - 1)));
        lo += size;
    }
    out
}

/// The fewest value/mask pairs on the TOS byte's DSCP bits matching exactly the DSCPs
/// of `set`: one when the set is all DSCPs agreeing on some bits, else one per DSCP.
fn tos_masks(set: DscpSet) -> Vec<(u32, u32)> {
    let members: Vec<u8> = (0u8..64).filter(|d| set.contains(*d)).collect();
    let Some(&first) = members.first() else {
        return Vec::new();
    };
    let agree = members
        .iter()
        .fold(0x3f, |acc, d| acc & !(d ^ first) & 0x3f);
    let covered = (0u8..64).filter(|d| (d ^ first) & agree == 0).count();
    if covered == members.len() {
        return vec![(u32::from(first & agree) << 2, u32::from(agree) << 2)];
    }
    members.iter().map(|d| (u32::from(*d) << 2, 0xfc)).collect()
}
