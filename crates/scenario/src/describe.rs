//! A short human description of a loaded scenario: links with their class trees drawn
//! as trees, and flows with their sources and schedules.

use std::fmt::Write as _;

use linkshare_core::curve::ServiceCurve;
use linkshare_core::ds::bids::Structure;
use linkshare_core::hierarchy::{Class, ClassId, ClassTree, DEFAULT_LEAF_LIMIT, Limit};
use linkshare_core::units::{Bytes, Duration, Instant};
use linkshare_sim::config::{Hop, Schedule, SourceConfig, TcpConfig, TcpVariant, Transport};

use linkshare_core::sched::SchedulerConfig;
use linkshare_core::sched::jobs::{Buffer, Constraints, Mode};

use crate::{JobsSettings, Scenario};

/// The description, several lines, ending with a newline.
pub fn describe(s: &Scenario) -> String {
    let c = &s.config;
    let mut out = String::new();
    let _ = writeln!(out, "scenario `{}` ({})", s.name, s.file);
    if let Some(d) = &s.description {
        for line in d.lines() {
            let _ = writeln!(out, "  {line}");
        }
    }
    let _ = writeln!(
        out,
        "  duration {}, seed {}, window {}",
        c.duration, c.seed, c.measure.window
    );
    let mut qdisc_limits = false;
    for (i, link) in c.links.iter().enumerate() {
        let node = |i: u32| c.nodes.get(i as usize).map_or("?", |n| n.name.as_str());
        let own = own_buffer(&link.scheduler);
        // The acknowledgement link of a single-link file is FIFO with a default limit:
        // the note below is about the links the user wrote.
        let ack_path = s.link_notes.get(i).is_some_and(|n| n.ack_path);
        qdisc_limits |= own.is_none() && !ack_path;
        let buffer = match (&own, link.buffer.shared) {
            (Some(own), _) => own.clone(),
            (None, None) => "no shared limit".to_owned(),
            (None, Some(l)) => {
                format!("shared limit {}, {}", limit(l), link.buffer.overflow.name())
            }
        };
        let _ = writeln!(
            out,
            "\nlink `{}` {} -> {}: {}, delay {}, overhead {}, scheduler {}, buffer: {buffer}",
            link.name,
            node(link.from.0),
            node(link.to.0),
            link.rate,
            link.delay,
            link.overhead,
            link.scheduler.kind()
        );
        out.push_str(&tree_lines(&link.classes, own.is_none()));
        if let Some(notes) = s.link_notes.get(i) {
            out.push_str(&jobs_lines(
                &notes.settings.jobs,
                &link.classes,
                &link.scheduler,
            ));
            let kind = link.scheduler.kind();
            for unused in notes.settings.unused_under(kind) {
                let _ = writeln!(
                    out,
                    "  its {unused} settings are not used: the link runs {kind} (they apply \
                     with --scheduler {unused})"
                );
            }
        }
    }
    if qdisc_limits {
        let _ = writeln!(
            out,
            "\nA leaf without `limit` queues at most {} (tc's default); `limit = \"none\"` \
             makes its queue unbounded.",
            limit(DEFAULT_LEAF_LIMIT)
        );
    }
    let _ = writeln!(out, "\nflows:");
    // The single-link form's acknowledgement link does not make it a topology.
    let multi = s.link_notes.iter().filter(|n| !n.ack_path).count() > 1;
    let hops = |hops: &[Hop]| -> String {
        let names: Vec<String> = hops
            .iter()
            .map(|h| {
                let link = &c.links[h.link.0 as usize];
                let class = link.classes.get(h.class).name();
                if multi || h.link.0 > 0 {
                    format!("{}/{class}", link.name)
                } else {
                    class.to_owned()
                }
            })
            .collect();
        names.join(" -> ")
    };
    for f in &c.flows {
        let _ = writeln!(
            out,
            "  {} -> {}: {}; {}",
            f.name,
            hops(&f.route),
            source(&f.source),
            schedule(&f.schedule, c.duration)
        );
        if let Transport::Tcp(t) = &f.transport {
            let _ = writeln!(
                out,
                "    {}; acknowledgements via {}",
                tcp(t),
                hops(&f.reverse)
            );
        }
    }
    out
}

/// A class tree drawn as a tree, one class per line with its parameters, indented by
/// two spaces.
pub fn class_tree(t: &ClassTree) -> String {
    tree_lines(t, true)
}

/// The buffer of a discipline that keeps its own ([`Scheduler::owns_buffer`]: the
/// qdisc's limits do not apply), described; `None` for the others.
///
/// [`Scheduler::owns_buffer`]: linkshare_core::sched::Scheduler::owns_buffer
fn own_buffer(config: &SchedulerConfig) -> Option<String> {
    let (name, what) = match config {
        SchedulerConfig::Jobs(j) => (
            "jobs",
            match j.buffer {
                Buffer::Shared { packets } => format!(
                    "{packets} packets shared by the classes, the victim of a full buffer \
                     chosen by the loss bounds and ratios"
                ),
                Buffer::Separate { packets } => {
                    format!("{packets} packets per class, the arrival dropped when full")
                }
            },
        ),
        SchedulerConfig::Keshav(k) => {
            let mut offsets = format!("offset {}", k.delta);
            for d in &k.deltas {
                let _ = write!(offsets, ", {} for `{}`", d.delta, d.class);
            }
            let counted = if k.structure == Structure::Perc && !k.count_operations {
                "uncounted"
            } else {
                "counting the paper's operations"
            };
            (
                "keshav",
                format!(
                    "{} shared by the classes, the largest bid dropped when full, \
                     structure {} ({counted}), {offsets}",
                    limit(k.limit),
                    k.structure.name().to_ascii_uppercase()
                ),
            )
        }
        _ => return None,
    };
    Some(format!(
        "{name}'s own, {what} (the classes' limits and the link's buffer do not apply)"
    ))
}

/// JoBS's settings of a link, one line each, when the file gives any: the controller
/// and the constraints when JoBS runs the link; else the constraints, said to be unused
/// by the scheduler and measured as objectives.
fn jobs_lines(jobs: &JobsSettings, t: &ClassTree, scheduler: &SchedulerConfig) -> String {
    let mut out = String::new();
    let classes: Vec<String> = t
        .leaves()
        .iter()
        .filter_map(|&id| {
            let name = t.get(id).name();
            let c = jobs.config.classes.get(name)?;
            Some(format!("`{name}` {}", constraints(c)))
        })
        .collect();
    match scheduler {
        SchedulerConfig::Jobs(j) => {
            let mode = match j.mode {
                Mode::Paper { gain } => format!("paper mode (gain factor {gain})"),
                Mode::Reference(bugs) => {
                    let mut kept = Vec::new();
                    if bugs.global_drop_stop {
                        kept.push("global_drop_stop");
                    }
                    if bugs.first_class_without_donor {
                        kept.push("first_class_without_donor");
                    }
                    if kept.is_empty() {
                        "reference mode (ALTQ's decisions, its bugs fixed)".to_owned()
                    } else {
                        format!(
                            "reference mode (ALTQ's decisions, keeping {})",
                            kept.join(", ")
                        )
                    }
                }
            };
            let sampling = match j.sampling.get() {
                1 => "at every arrival".to_owned(),
                n => format!("every {n} arrivals"),
            };
            let _ = writeln!(out, "  jobs: {mode}, ratio loop {sampling}");
            for c in classes {
                let _ = writeln!(out, "    {c}");
            }
        }
        _ if jobs.is_given() => {
            let _ = writeln!(
                out,
                "  jobs settings are not used by scheduler `{}`; the classes' bounds and \
                 ratios below are measured as objectives",
                scheduler.kind()
            );
            for c in classes {
                let _ = writeln!(out, "    {c}");
            }
        }
        _ => {}
    }
    out
}

/// A class's JoBS constraints in one line.
fn constraints(c: &Constraints) -> String {
    let mut p: Vec<String> = Vec::new();
    if let Some(d) = c.delay_bound {
        p.push(format!("delay bound {d}"));
    }
    if let Some(l) = c.loss_bound {
        p.push(format!("loss bound {l}"));
    }
    if let Some(r) = c.min_rate {
        p.push(format!("throughput bound {r}"));
    }
    if let Some(k) = c.delay_ratio {
        p.push(format!("delay ratio {k} to the next"));
    }
    if let Some(k) = c.loss_ratio {
        p.push(format!("loss ratio {k} to the next"));
    }
    p.join(", ")
}

/// [`class_tree`], with the classes' queue limits or without them (`limits`: whether
/// the qdisc applies them).
fn tree_lines(t: &ClassTree, limits: bool) -> String {
    let mut lines = Vec::new();
    tree(&mut lines, t, ClassId::ROOT, "  ", "", limits);
    let width = lines
        .iter()
        .map(|(l, _)| l.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for (label, params) in lines {
        let line = format!("{label:<width$}  {params}");
        let _ = writeln!(out, "{}", line.trim_end());
    }
    out
}

/// A TCP configuration in one line.
fn tcp(t: &TcpConfig) -> String {
    let variant = match t.variant {
        TcpVariant::NewReno => "NewReno",
        TcpVariant::Reno => "Reno",
    };
    let initial = t
        .initial_window
        .map_or_else(|| "RFC 5681".to_owned(), |n| format!("{n} segments"));
    let delayed = t
        .delayed_ack
        .map_or_else(|| "off".to_owned(), |d| d.to_string());
    format!(
        "TCP {variant}, mss {}, header {}, window {}, initial window {initial}, RTO {} to {} \
         (initial {}, clock {}), delayed ACKs {delayed}, handshake {}{}",
        Bytes(u64::from(t.mss)),
        Bytes(u64::from(t.header)),
        Bytes(t.window),
        t.min_rto,
        t.max_rto,
        t.initial_rto,
        t.granularity,
        if t.handshake { "on" } else { "off" },
        if t.trace { ", traced" } else { "" }
    )
}

/// The lines of the subtree of `id` as (tree drawing and name, parameters): `lead`
/// before every line, `branch` before this class; queue limits shown if `limits`.
fn tree(
    out: &mut Vec<(String, String)>,
    t: &ClassTree,
    id: ClassId,
    lead: &str,
    branch: &str,
    limits: bool,
) {
    let class = t.get(id);
    out.push((
        format!("{lead}{branch}{}", class.name()),
        params(class, limits),
    ));
    let child_lead = match branch {
        "" => lead.to_owned(),
        "├── " => format!("{lead}│   "),
        _ => format!("{lead}    "),
    };
    let n = class.children.len();
    for (i, &child) in class.children.iter().enumerate() {
        let b = if i + 1 == n {
            "└── "
        } else {
            "├── "
        };
        tree(out, t, child, &child_lead, b, limits);
    }
}

/// The parameters written for a class (the root shows none: the link line has them);
/// its queue limit if `limits`.
fn params(c: &Class, limits: bool) -> String {
    if c.parent.is_none() {
        return String::new();
    }
    let s = &c.spec;
    let mut p: Vec<String> = Vec::new();
    if let Some(w) = s.weight {
        p.push(format!("weight {w}"));
    }
    if let Some(x) = s.priority {
        p.push(format!("priority {x}"));
    }
    for (name, v) in [("rate", s.rate), ("ceil", s.ceil)] {
        if let Some(v) = v {
            p.push(format!("{name} {v}"));
        }
    }
    for (name, v) in [
        ("burst", s.burst),
        ("cburst", s.cburst),
        ("quantum", s.quantum),
        ("max_packet", s.max_packet),
    ] {
        if let Some(v) = v {
            p.push(format!("{name} {v}"));
        }
    }
    for (name, v) in [("rt", s.rt), ("ls", s.ls), ("ul", s.ul)] {
        if let Some(v) = v {
            p.push(format!("{name} {}", curve(&v)));
        }
    }
    match s.limit {
        _ if !limits => {}
        Some(l) => p.push(format!("limit {}", limit(l))),
        None if c.is_leaf() => p.push("limit none (unbounded)".to_owned()),
        None => {}
    }
    p.join(", ")
}

fn curve(c: &ServiceCurve) -> String {
    if c.m1 == c.m2 || c.d == Duration::ZERO {
        format!("{}", c.m2)
    } else {
        format!("(m1 {}, d {}, m2 {})", c.m1, c.d, c.m2)
    }
}

fn limit(l: Limit) -> String {
    match l {
        Limit::Packets(n) => format!("{n} packets"),
        Limit::Bytes(b) => format!("{b}"),
    }
}

fn size(n: u32) -> Bytes {
    Bytes(u64::from(n))
}

/// One line for a source.
pub fn source(s: &SourceConfig) -> String {
    match s {
        SourceConfig::Cbr { rate, size: n } => format!("CBR {rate}, {} packets", size(*n)),
        SourceConfig::Poisson { rate, size: n } => {
            format!("Poisson, mean {rate}, {} packets", size(*n))
        }
        SourceConfig::Pareto {
            rate,
            shape,
            size: n,
        } => format!(
            "Pareto gaps (shape {shape}), mean {rate}, {} packets",
            size(*n)
        ),
        SourceConfig::Population { each, swing } => {
            let count = if swing.min == swing.max {
                format!("{} members", swing.max)
            } else {
                format!(
                    "{} to {} members on (a sine of period {})",
                    swing.min, swing.max, swing.period
                )
            };
            format!("population of {count}, each: {}", source(each))
        }
        SourceConfig::PeriodicOnOff {
            burst,
            peak,
            period,
            size: n,
            variations: v,
        } => {
            let mut s = match v.geometric_mean {
                None => format!(
                    "periodic ON-OFF, {burst} packet{} of {} at {peak} every {period}",
                    if *burst == 1 { "" } else { "s" },
                    size(*n)
                ),
                Some(m) => format!(
                    "periodic ON-OFF, geometric bursts of mean {m} (at most {burst}) packets \
                     of {} at {peak} every {period}",
                    size(*n)
                ),
            };
            if let Some(mean) = v.start_offset_mean {
                s.push_str(&format!(", first burst after Exp({mean}) mod {period}"));
            }
            if v.new_connection {
                s.push_str(", a new connection per burst");
            }
            s
        }
        SourceConfig::ExpOnOff {
            peak,
            mean_on,
            mean_off,
            size: n,
        } => format!(
            "exponential ON-OFF, {peak} while on, mean on {mean_on}, mean off {mean_off}, {} packets",
            size(*n)
        ),
        SourceConfig::Markov2 {
            rates,
            mean_sojourn,
            size: n,
        } => format!(
            "two-state MMPP, {} / {} with mean sojourns {} / {}, {} packets",
            rates[0],
            rates[1],
            mean_sojourn[0],
            mean_sojourn[1],
            size(*n)
        ),
        SourceConfig::ParetoOnOff {
            peak,
            mean_on,
            mean_off,
            shape,
            size: n,
        } => format!(
            "Pareto ON-OFF (shape {shape}), {peak} while on, mean on {mean_on}, mean off {mean_off}, {} packets",
            size(*n)
        ),
        SourceConfig::Greedy { size: n, backlog } => {
            format!("greedy, {} packets, keeps {backlog} queued", size(*n))
        }
        SourceConfig::Trace { records } => {
            let bytes: u64 = records.iter().map(|r| u64::from(r.size)).sum();
            let span = records.last().map_or(Duration::ZERO, |r| r.at);
            format!(
                "trace of {} packets ({}) over {span}",
                records.len(),
                Bytes(bytes)
            )
        }
        SourceConfig::Ftp { bytes: None, .. } => "FTP, endless".to_owned(),
        SourceConfig::Ftp { bytes: Some(b), .. } => {
            format!("FTP, {} per ON interval", Bytes(*b))
        }
        SourceConfig::Telnet { size: n, mean_gap } => {
            format!("Telnet, {} packets, mean gap {mean_gap}", size(*n))
        }
        SourceConfig::Www { load, lengths, .. } => {
            let mean = lengths.iter().sum::<u64>() / lengths.len().max(1) as u64;
            format!(
                "web transfers at {load} offered, {} lengths, mean {}",
                lengths.len(),
                Bytes(mean)
            )
        }
        SourceConfig::Video {
            frames, interval, ..
        } => {
            let bytes: u64 = frames.iter().map(|&f| u64::from(f)).sum();
            format!(
                "video, {} frames ({}) every {interval}",
                frames.len(),
                Bytes(bytes)
            )
        }
    }
}

/// `always on`, or the ON intervals.
pub fn schedule(s: &Schedule, duration: Duration) -> String {
    let end = Instant::ZERO.saturating_add(duration);
    if s.on.len() == 1 && s.on[0] == (Instant::ZERO, end) {
        return "always on".to_owned();
    }
    let parts: Vec<String> =
        s.on.iter()
            .map(|(a, b)| format!("[{}, {})", Duration(a.as_nanos()), Duration(b.as_nanos())))
            .collect();
    format!("on {}", parts.join(" "))
}
