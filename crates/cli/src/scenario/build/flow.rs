//! Flows: their routes (leaf classes on connected links), schedules, packet sizes and
//! traces.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use linkshare_core::hierarchy::{ClassId, Origin};
use linkshare_core::units::{Bytes, Duration, Instant};
use linkshare_sim::config::{FlowConfig, Hop, LinkId, Schedule, SourceConfig, TraceRecord};

use super::{BuiltLink, list};
use crate::scenario::Layout;
use crate::scenario::format::{FlowDef, Header, HopDef, ScheduleDef, SourceDef};
use crate::scenario::problem::{Problem, did_you_mean};
use crate::scenario::reader::{Ctx, Sp};
use crate::scenario::trace;

/// Trace files already read, by resolved path.
#[derive(Default)]
pub(super) struct TraceCache {
    files: BTreeMap<PathBuf, Option<Arc<[trace::Row]>>>,
}

pub(super) fn build_flow(
    ctx: &mut Ctx<'_>,
    f: &FlowDef,
    links: &[BuiltLink<'_>],
    layout: Layout,
    header: Option<&Header>,
    base_dir: &Path,
    traces: &mut TraceCache,
) -> Option<FlowConfig> {
    // Each part is checked even when another failed, to report every problem at once.
    let route = flow_route(ctx, f, links, layout);
    let duration = header.and_then(|h| h.duration.as_ref()).map(|d| d.value);
    let schedule = match (&f.schedule, duration) {
        (Some(s), Some(d)) => schedule(ctx, s, d),
        (None, Some(d)) => Some(Schedule::always(d)),
        (_, None) => None,
    };
    let hops = route.as_deref().unwrap_or(&[]);
    let source = match (f.source.as_ref(), &f.name) {
        (Some(SourceDef::Ready { config, size }), _) => {
            check_size(ctx, f, size, hops, links);
            Some(config.clone())
        }
        (Some(SourceDef::Trace { file }), Some(name)) => {
            trace_records(ctx, f, &name.value, file, base_dir, hops, links, traces)
                .map(|records| SourceConfig::Trace { records })
        }
        _ => None,
    };
    Some(FlowConfig {
        name: f.name.as_ref()?.value.clone(),
        route: route?,
        source: source?,
        schedule: schedule?,
    })
}

/// The hops of a flow, from `class` (one-link form) or `route` (topology form).
fn flow_route(
    ctx: &mut Ctx<'_>,
    f: &FlowDef,
    links: &[BuiltLink<'_>],
    layout: Layout,
) -> Option<Vec<Hop>> {
    match layout {
        Layout::SingleLink => {
            if let Some(r) = &f.route {
                ctx.report(
                    &r.span,
                    &format!("{}.route", f.path),
                    "`route` is for the topology form ([[node]] and [[links]])",
                    "with a single [link], name the flow's class with `class = \"...\"`",
                );
            }
            let Some(class) = &f.class else {
                ctx.report(
                    &f.span,
                    &format!("{}.class", f.path),
                    "the flow has no `class`",
                    "add `class = \"NAME\"` naming a leaf class of the [link]",
                );
                return None;
            };
            let link = links.first()?;
            Some(vec![Hop {
                link: LinkId(0),
                class: leaf(ctx, link, class, &format!("{}.class", f.path))?,
            }])
        }
        Layout::Topology => {
            if let Some(c) = &f.class {
                ctx.report(
                    &c.span,
                    &format!("{}.class", f.path),
                    "in the topology form a flow lists its hops with `route`, not `class`",
                    "write route = [{ link = \"l1\", class = \"a\" }, ...]",
                );
            }
            let Some(route) = &f.route else {
                ctx.report(
                    &f.span,
                    &format!("{}.route", f.path),
                    "the flow has no `route`",
                    "add route = [{ link = \"l1\", class = \"a\" }, ...] listing the links from source to sink",
                );
                return None;
            };
            route_hops(ctx, &route.value, links)
        }
    }
}

/// The leaf class `class` of `link`.
fn leaf(
    ctx: &mut Ctx<'_>,
    link: &BuiltLink<'_>,
    class: &Sp<String>,
    path: &str,
) -> Option<ClassId> {
    let tree = &link.tree;
    let leaves = |under: ClassId| -> Vec<&str> {
        tree.leaves()
            .iter()
            .filter(|&&l| l == under || tree.ancestors(l).any(|a| a == under))
            .map(|&l| tree.get(l).name())
            .collect()
    };
    match tree.id_of(&class.value) {
        Some(id) if tree.is_leaf(id) => Some(id),
        Some(id) => {
            let under = leaves(id);
            let fix = if under.is_empty() {
                format!(
                    "add a [[class]] under `{}` and send the flow there",
                    class.value
                )
            } else {
                format!(
                    "send the flow to one of the leaves under it: {}",
                    under.join(", ")
                )
            };
            let what = if id == ClassId::ROOT {
                format!("`{}` is the link itself, not a leaf class", class.value)
            } else {
                format!(
                    "class `{}` is not a leaf (it has child classes)",
                    class.value
                )
            };
            ctx.report(&class.span, path, what, fix);
            None
        }
        None => {
            let all = leaves(ClassId::ROOT);
            let hint = did_you_mean(&class.value, all.iter().copied());
            let fix = if all.is_empty() {
                format!("declare classes for link `{}` first", link.name)
            } else {
                format!(
                    "{hint}leaf classes of link `{}`: {}",
                    link.name,
                    all.join(", ")
                )
            };
            ctx.report(
                &class.span,
                path,
                format!("link `{}` has no class named `{}`", link.name, class.value),
                fix,
            );
            None
        }
    }
}

/// The hops of a topology route: existing links, leaf classes, consecutive links.
fn route_hops(ctx: &mut Ctx<'_>, hops: &[HopDef], links: &[BuiltLink<'_>]) -> Option<Vec<Hop>> {
    let mut out = Vec::with_capacity(hops.len());
    let mut ok = true;
    let mut prev: Option<&BuiltLink<'_>> = None;
    for h in hops {
        let Some(i) = links.iter().position(|l| l.name == h.link.value) else {
            let hint = did_you_mean(&h.link.value, links.iter().map(|l| l.name.as_str()));
            let names: Vec<String> = links.iter().map(|l| l.name.clone()).collect();
            ctx.report(
                &h.link.span,
                &format!("{}.link", h.path),
                format!("no link is named `{}`", h.link.value),
                format!("{hint}links: {}", list(&names)),
            );
            ok = false;
            prev = None;
            continue;
        };
        let link = &links[i];
        if let Some(p) = prev
            && let (Some(end), Some(start)) = (p.to, link.from)
            && end != start
        {
            ctx.report(
                &h.link.span,
                &format!("{}.link", h.path),
                format!(
                    "link `{}` does not start where the previous hop `{}` ends (node {} vs node {})",
                    link.name,
                    p.name,
                    link.def.from.as_ref().map_or("?", |n| n.value.as_str()),
                    p.def.to.as_ref().map_or("?", |n| n.value.as_str()),
                ),
                "list the links in order from the source to the sink; each must start at the node where the previous one ends",
            );
            ok = false;
        }
        match leaf(ctx, link, &h.class, &format!("{}.class", h.path)) {
            Some(class) => out.push(Hop {
                link: LinkId(i as u32),
                class,
            }),
            None => ok = false,
        }
        prev = Some(link);
    }
    ok.then_some(out)
}

/// A packet size must fit the `max_packet` of every class on the route.
fn check_size(
    ctx: &mut Ctx<'_>,
    f: &FlowDef,
    size: &Sp<u32>,
    route: &[Hop],
    links: &[BuiltLink<'_>],
) {
    for hop in route {
        let link = &links[hop.link.0 as usize];
        let class = link.tree.get(hop.class);
        if Bytes(u64::from(size.value)) > class.max_packet() {
            ctx.report(
                &size.span,
                &format!("{}.source.size", f.path),
                format!(
                    "packets of {} are larger than the max_packet {} of class `{}` (link `{}`): every one would be dropped",
                    Bytes(u64::from(size.value)),
                    class.max_packet(),
                    class.name(),
                    link.name
                ),
                format!("lower size, or raise max_packet of class `{}`", class.name()),
            );
        }
    }
}

/// The ON intervals of a flow as a [`Schedule`].
fn schedule(ctx: &mut Ctx<'_>, s: &ScheduleDef, duration: Duration) -> Option<Schedule> {
    let end = Instant::ZERO.saturating_add(duration);
    let mut ok = true;
    let mut prev: Option<Instant> = None;
    let mut intervals = Vec::with_capacity(s.intervals.len());
    for (i, iv) in s.intervals.iter().enumerate() {
        let path = format!("{}[{i}]", s.path);
        let (a, b) = (
            Instant::ZERO.saturating_add(iv.value.0),
            Instant::ZERO.saturating_add(iv.value.1),
        );
        if a >= b {
            ctx.report(
                &iv.span,
                &path,
                format!("the interval [{a}, {b}) is empty"),
                "give an end later than the start",
            );
            ok = false;
        } else if b > end {
            ctx.report(
                &iv.span,
                &path,
                format!("the interval ends at {b}, after the end of the scenario ({duration})"),
                format!("end it at {duration} at the latest, or lengthen scenario.duration"),
            );
            ok = false;
        } else if let Some(p) = prev
            && a < p
        {
            ctx.report(
                &iv.span,
                &path,
                format!("the interval starts at {a}, before the previous one ends ({p})"),
                "list the intervals in time order without overlaps",
            );
            ok = false;
        }
        prev = Some(b.max(prev.unwrap_or(Instant::ZERO)));
        intervals.push((a, b));
    }
    if !ok {
        return None;
    }
    let on = if s.on {
        intervals
    } else {
        let mut on = Vec::with_capacity(intervals.len() + 1);
        let mut t = Instant::ZERO;
        for (a, b) in intervals {
            if a > t {
                on.push((t, a));
            }
            t = b;
        }
        if t < end {
            on.push((t, end));
        }
        on
    };
    if on.is_empty() {
        ctx.report(
            &s.span,
            &s.path,
            "with these intervals the flow is never on",
            "give at least one ON interval, or remove the flow",
        );
        return None;
    }
    Some(Schedule { on })
}

/// The records of flow `flow` in its trace file.
#[allow(clippy::too_many_arguments)]
fn trace_records(
    ctx: &mut Ctx<'_>,
    f: &FlowDef,
    flow: &str,
    file: &Sp<String>,
    base_dir: &Path,
    route: &[Hop],
    links: &[BuiltLink<'_>],
    traces: &mut TraceCache,
) -> Option<Arc<[TraceRecord]>> {
    let field = format!("{}.source.file", f.path);
    let path = base_dir.join(&file.value);
    let rows = match traces.files.get(&path) {
        Some(rows) => rows.clone()?,
        None => {
            let rows = read_trace(ctx, &path, file, &field);
            traces.files.insert(path.clone(), rows.clone());
            rows?
        }
    };
    let display: Arc<str> = path.display().to_string().into();
    let mine: Vec<&trace::Row> = rows.iter().filter(|r| r.flow == flow).collect();
    if mine.is_empty() {
        let mut names: Vec<&str> = rows.iter().map(|r| r.flow.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        let fix = if names.is_empty() {
            "add rows for it".to_owned()
        } else {
            format!(
                "add rows whose flow is `{flow}`; the trace has rows for: {}",
                names.join(", ")
            )
        };
        ctx.report(
            &file.span,
            &field,
            format!("the trace {} has no rows for flow `{flow}`", display),
            fix,
        );
        return None;
    }
    let max_packet = route
        .iter()
        .map(|h| links[h.link.0 as usize].tree.get(h.class).max_packet())
        .min()
        .unwrap_or(Bytes(u64::MAX));
    let mut problems = 0;
    let mut report = |ctx: &mut Ctx<'_>, row: &trace::Row, problem: String, fix: &str| {
        problems += 1;
        if problems <= 5 {
            ctx.problems.push(Problem {
                origin: Some(Origin {
                    file: display.clone(),
                    line: row.line,
                    column: 1,
                }),
                field: Some(field.clone()),
                problem,
                fix: fix.to_owned(),
            });
        }
    };
    let mut prev: Option<&trace::Row> = None;
    for row in &mine {
        if let Some(p) = prev
            && row.at < p.at
        {
            report(
                ctx,
                row,
                format!(
                    "the packet at {} of flow `{flow}` is before the previous one at {} (line {})",
                    row.at, p.at, p.line
                ),
                "sort each flow's rows by time_s",
            );
        }
        if Bytes(u64::from(row.size)) > max_packet {
            report(
                ctx,
                row,
                format!(
                    "a packet of {} is larger than the max_packet {max_packet} of the flow's classes",
                    Bytes(u64::from(row.size))
                ),
                "shorten the packet, or raise max_packet of the class",
            );
        }
        prev = Some(row);
    }
    if problems > 0 {
        return None;
    }
    Some(
        mine.iter()
            .map(|r| TraceRecord {
                at: r.at,
                size: r.size,
            })
            .collect(),
    )
}

/// Reads and parses a trace file, reporting problems.
fn read_trace(
    ctx: &mut Ctx<'_>,
    path: &Path,
    file: &Sp<String>,
    field: &str,
) -> Option<Arc<[trace::Row]>> {
    let text = match std::fs::read(path) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(_) => {
                ctx.report(
                    &file.span,
                    field,
                    format!("the trace {} is not UTF-8 text", path.display()),
                    "give a CSV text file with the header time_s,flow,size_bytes",
                );
                return None;
            }
        },
        Err(e) => {
            ctx.report(
                &file.span,
                field,
                format!("cannot read the trace {}: {e}", path.display()),
                "give the path of a CSV file, relative to the scenario file's directory",
            );
            return None;
        }
    };
    let display: Arc<str> = path.display().to_string().into();
    match trace::parse(&text, &display, field) {
        Ok(rows) => Some(rows.into()),
        Err(problems) => {
            ctx.problems.extend(problems);
            None
        }
    }
}
