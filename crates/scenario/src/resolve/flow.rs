//! Flows: their routes (leaf classes on connected links), transports and reverse
//! routes, schedules, packet sizes and traces.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use linkshare_core::echo::echo;
use linkshare_core::hierarchy::{ClassId, Origin};
use linkshare_core::units::{Bytes, Duration, Instant};
use linkshare_sim::config::{
    FlowConfig, Hop, LinkId, Schedule, SourceConfig, TcpConfig, TraceRecord, Transport,
};

use super::BuiltLink;
use crate::format::{
    FlowDef, Header, HopDef, ScheduleDef, SourceDef, TcpDef, TransportDef, WindowDef,
};
use crate::problem::{Problem, did_you_mean, name_list};
use crate::reader::{Ctx, Sp, Span};
use crate::trace;
use crate::{Layout, apps};

/// Trace files already read, by resolved path.
#[derive(Default)]
pub(super) struct TraceCache {
    files: BTreeMap<PathBuf, Option<Arc<[trace::Row]>>>,
}

/// What every flow of a scenario is built against.
pub(super) struct Env<'e, 'd> {
    /// The links, in scenario order (the single-link form's `link-reverse` last).
    pub(super) links: &'e [BuiltLink<'d>],
    /// Node names by id.
    pub(super) nodes: &'e [String],
    pub(super) layout: Layout,
    pub(super) header: Option<&'e Header>,
    /// Where relative trace paths start.
    pub(super) base_dir: &'e Path,
    /// `[tcp]`: defaults of every TCP flow.
    pub(super) tcp: &'e TcpDef,
    /// The single-link form's acknowledgement path, when it has one.
    pub(super) ack_hop: Option<Hop>,
}

pub(super) fn build_flow(
    ctx: &mut Ctx<'_>,
    f: &FlowDef,
    env: &Env<'_, '_>,
    traces: &mut TraceCache,
) -> Option<FlowConfig> {
    // Each part is checked even when another failed, to report every problem at once.
    let links = env.links;
    let route = flow_route(ctx, f, links, env.layout);
    let duration = env
        .header
        .and_then(|h| h.duration.as_ref())
        .map(|d| d.value);
    let schedule = match (&f.schedule, duration) {
        (Some(s), Some(d)) => schedule(ctx, s, d),
        (None, Some(d)) => Some(Schedule::always(d)),
        (_, None) => None,
    };
    let hops = route.as_deref().unwrap_or(&[]);
    let reverse = match &f.transport {
        Some(Sp {
            value: TransportDef::Tcp,
            ..
        }) => reverse_route(ctx, f, env, hops),
        _ => Some(Vec::new()),
    };
    let tcp = match &f.transport {
        Some(Sp {
            value: TransportDef::Tcp,
            span,
        }) => {
            let paths = Paths {
                route: hops,
                reverse: reverse.as_deref().unwrap_or(&[]),
            };
            Some(tcp_config(ctx, f, span, env.tcp, paths, links))
        }
        _ => None,
    };
    // Over TCP sizes are application writes: segments are checked against max_packet.
    let checked: &[Hop] = if tcp.is_some() { &[] } else { hops };
    let source = match (f.source.as_ref(), &f.name) {
        (Some(SourceDef::Ready { config, size }), _) => {
            if let Some(size) = size {
                check_size(ctx, f, size, checked, links);
            }
            Some(config.clone())
        }
        (Some(SourceDef::Trace { file }), Some(name)) => trace_records(
            ctx,
            f,
            &name.value,
            file,
            env.base_dir,
            checked,
            links,
            traces,
        )
        .map(|records| SourceConfig::Trace { records }),
        (
            Some(SourceDef::Video {
                file,
                interval,
                size,
            }),
            _,
        ) => {
            if let Some(size) = size {
                check_size(ctx, f, size, checked, links);
            }
            video_frames(ctx, f, file, env.base_dir).map(|frames| SourceConfig::Video {
                frames,
                interval: *interval,
                size: size.as_ref().map_or(0, |s| s.value),
            })
        }
        _ => None,
    };
    let transport = match tcp {
        Some(tcp) => Transport::Tcp(tcp?),
        None => Transport::Udp,
    };
    let source = match &transport {
        Transport::Tcp(tcp) => unsized_to_segment(source?, tcp),
        Transport::Udp => source?,
    };
    Some(FlowConfig {
        name: f.name.as_ref()?.value.clone(),
        route: route?,
        reverse: reverse?,
        transport,
        source,
        schedule: schedule?,
    })
}

/// A TCP flow's `ftp`, `www` or `video` source written without `size` (0) gets the
/// size of a full segment, `mss + header`: TCP cuts the bytes into segments itself, so
/// the value only documents what goes on the wire.
fn unsized_to_segment(source: SourceConfig, tcp: &TcpConfig) -> SourceConfig {
    let segment = tcp.mss.saturating_add(tcp.header);
    match source {
        SourceConfig::Ftp { bytes, size: 0 } => SourceConfig::Ftp {
            bytes,
            size: segment,
        },
        SourceConfig::Www {
            load,
            lengths,
            size: 0,
        } => SourceConfig::Www {
            load,
            lengths,
            size: segment,
        },
        SourceConfig::Video {
            frames,
            interval,
            size: 0,
        } => SourceConfig::Video {
            frames,
            interval,
            size: segment,
        },
        other => other,
    }
}

/// A flow's resolved routes (empty when they could not be resolved).
#[derive(Clone, Copy)]
struct Paths<'h> {
    route: &'h [Hop],
    reverse: &'h [Hop],
}

/// The TCP parameters of a TCP flow: its `tcp` table over the file's `[tcp]` over
/// [`TcpConfig::default`], checked against each other and against the `max_packet` of
/// every class of the route (segments) and of the reverse route (acknowledgements).
/// `transport` is where `transport = "tcp"` was written.
fn tcp_config(
    ctx: &mut Ctx<'_>,
    f: &FlowDef,
    transport: &Span,
    defaults: &TcpDef,
    paths: Paths<'_>,
    links: &[BuiltLink<'_>],
) -> Option<TcpConfig> {
    let own = f.tcp.as_ref().map(|t| &t.value);
    let def = own.map_or_else(|| defaults.clone(), |t| t.over(defaults));
    let at = TcpPlaces {
        flow: f,
        own,
        transport,
    };
    let mut cfg = configured(&def);
    let window_ok = set_window(ctx, &def, &mut cfg, &at);
    let rtos_ok = check_rtos(ctx, &def, &cfg, &at);
    let segments_ok = check_segments(ctx, &def, &cfg, &at, paths.route, links);
    let acks_ok = check_acks(ctx, &def, &cfg, &at, paths.reverse, links);
    (window_ok && rtos_ok && segments_ok && acks_ok).then_some(cfg)
}

/// Where a TCP flow's parameters were written, to point problems at them.
struct TcpPlaces<'a> {
    flow: &'a FlowDef,
    /// The flow's own `tcp` table, if it has one.
    own: Option<&'a TcpDef>,
    /// Where `transport = "tcp"` was written.
    transport: &'a Span,
}

impl TcpPlaces<'_> {
    /// The path of field `key`: in the flow's own `tcp` table if it wrote it
    /// (`written` tells), else in the file's `[tcp]`.
    fn field(&self, key: &str, written: fn(&TcpDef) -> bool) -> String {
        if self.own.is_some_and(written) {
            format!("{}.tcp.{key}", self.flow.path)
        } else {
            format!("tcp.{key}")
        }
    }

    /// Where a problem about `value` (field `key`) points: where it was written, or the
    /// flow's `transport` when it is the default.
    fn of<T>(
        &self,
        key: &str,
        value: &Option<Sp<T>>,
        written: fn(&TcpDef) -> bool,
    ) -> (Span, String) {
        match value {
            Some(v) => (v.span.clone(), self.field(key, written)),
            None => (
                self.transport.clone(),
                format!("{}.transport", self.flow.path),
            ),
        }
    }
}

/// [`TcpConfig::default`] with the fields `def` gives, all but `window` (see
/// [`set_window`]).
fn configured(def: &TcpDef) -> TcpConfig {
    let mut cfg = TcpConfig::default();
    if let Some(v) = &def.variant {
        cfg.variant = v.value;
    }
    if let Some(v) = &def.mss {
        cfg.mss = v.value;
    }
    if let Some(v) = &def.header {
        cfg.header = v.value;
    }
    if let Some(v) = &def.initial_window {
        cfg.initial_window = Some(v.value);
    }
    for (slot, value) in [
        (&mut cfg.min_rto, &def.min_rto),
        (&mut cfg.max_rto, &def.max_rto),
        (&mut cfg.initial_rto, &def.initial_rto),
        (&mut cfg.granularity, &def.granularity),
    ] {
        if let Some(v) = value {
            *slot = v.value;
        }
    }
    cfg.delayed_ack = def.delayed_ack.as_ref().map(|d| d.value);
    if let Some(v) = &def.handshake {
        cfg.handshake = v.value;
    }
    if let Some(v) = &def.dupack_threshold {
        cfg.dupack_threshold = v.value;
    }
    if let Some(v) = &def.trace {
        cfg.trace = v.value;
    }
    if let Some(v) = &def.idle_restart {
        cfg.idle_restart = v.value;
    }
    cfg
}

/// Sets the window `def` gives (in segments of `cfg.mss` or bytes), which must hold at
/// least one segment, as the default window must; reports and returns `false` if not.
fn set_window(ctx: &mut Ctx<'_>, def: &TcpDef, cfg: &mut TcpConfig, at: &TcpPlaces<'_>) -> bool {
    let mss = u64::from(cfg.mss);
    let Some(w) = &def.window else {
        if cfg.window >= mss {
            return true;
        }
        let (span, field) = at.of("mss", &def.mss, |t| t.mss.is_some());
        ctx.report(
            &span,
            &field,
            format!(
                "mss {} is larger than the default window of {}",
                Bytes(mss),
                Bytes(cfg.window)
            ),
            "lower mss, or give a window such as window = 64 (segments of mss)",
        );
        return false;
    };
    let bytes = match w.value {
        WindowDef::Segments(n) => n.checked_mul(mss),
        WindowDef::Bytes(b) => Some(b),
    };
    let field = at.field("window", |t| t.window.is_some());
    match bytes {
        Some(b) if b >= mss => {
            cfg.window = b;
            return true;
        }
        Some(b) => ctx.report(
            &w.span,
            &field,
            format!(
                "a window of {} is smaller than one segment (mss {})",
                Bytes(b),
                Bytes(mss)
            ),
            "give a window of at least one segment, e.g. window = 64 (segments)",
        ),
        None => ctx.report(
            &w.span,
            &field,
            "the window in bytes is beyond 2^64",
            "give fewer segments",
        ),
    }
    false
}

/// `min_rto <= max_rto`, and a given `initial_rto <= max_rto`.
fn check_rtos(ctx: &mut Ctx<'_>, def: &TcpDef, cfg: &TcpConfig, at: &TcpPlaces<'_>) -> bool {
    let mut ok = true;
    if cfg.min_rto > cfg.max_rto {
        let min_field = || at.field("min_rto", |t| t.min_rto.is_some());
        let (span, field) = match (&def.min_rto, &def.max_rto) {
            (Some(m), _) => (m.span.clone(), min_field()),
            (None, Some(m)) => (m.span.clone(), at.field("max_rto", |t| t.max_rto.is_some())),
            (None, None) => (at.transport.clone(), min_field()),
        };
        ctx.report(
            &span,
            &field,
            format!("min_rto {} is above max_rto {}", cfg.min_rto, cfg.max_rto),
            "give a min_rto at most max_rto (RFC 6298: 1s and at least 60s)",
        );
        ok = false;
    }
    if cfg.initial_rto > cfg.max_rto
        && let Some(i) = &def.initial_rto
    {
        ctx.report(
            &i.span,
            &at.field("initial_rto", |t| t.initial_rto.is_some()),
            format!(
                "initial_rto {} is above max_rto {}",
                cfg.initial_rto, cfg.max_rto
            ),
            "give an initial_rto at most max_rto (RFC 6298: 1s)",
        );
        ok = false;
    }
    ok
}

/// A full segment, `mss + header`, fits in 32 bits and in the `max_packet` of every
/// class of `route`.
fn check_segments(
    ctx: &mut Ctx<'_>,
    def: &TcpDef,
    cfg: &TcpConfig,
    at: &TcpPlaces<'_>,
    route: &[Hop],
    links: &[BuiltLink<'_>],
) -> bool {
    let (span, field) = at.of("mss", &def.mss, |t| t.mss.is_some());
    let (mss, header) = (Bytes(u64::from(cfg.mss)), Bytes(u64::from(cfg.header)));
    let mut ok = true;
    if cfg.mss.checked_add(cfg.header).is_none() {
        ctx.report(
            &span,
            &field,
            format!("mss {mss} plus header {header} is beyond 4 GiB"),
            "give a realistic mss, such as \"1000b\"",
        );
        ok = false;
    }
    let segment = mss + header;
    for hop in route {
        let link = &links[hop.link.0 as usize];
        let class = link.tree.get(hop.class);
        if segment > class.max_packet() {
            let room = class.max_packet().0.saturating_sub(header.0);
            ctx.report(
                &span,
                &field,
                format!(
                    "TCP segments of mss {mss} plus a {header} header make {segment}, larger \
                     than the max_packet {} of class `{}` (link `{}`): every full segment \
                     would be dropped",
                    class.max_packet(),
                    class.name(),
                    link.name
                ),
                format!(
                    "lower mss to at most {}, or raise max_packet of class `{}`",
                    Bytes(room),
                    class.name()
                ),
            );
            ok = false;
        }
    }
    ok
}

/// An acknowledgement, `header` bytes, fits in the `max_packet` of every class of the
/// reverse route.
fn check_acks(
    ctx: &mut Ctx<'_>,
    def: &TcpDef,
    cfg: &TcpConfig,
    at: &TcpPlaces<'_>,
    reverse: &[Hop],
    links: &[BuiltLink<'_>],
) -> bool {
    let ack = Bytes(u64::from(cfg.header));
    let (span, field) = at.of("header", &def.header, |t| t.header.is_some());
    let mut ok = true;
    for hop in reverse {
        let link = &links[hop.link.0 as usize];
        let class = link.tree.get(hop.class);
        if ack > class.max_packet() {
            ctx.report(
                &span,
                &field,
                format!(
                    "acknowledgements of {ack} (the header) are larger than the max_packet {} \
                     of class `{}` (link `{}`) on the reverse route: every one would be dropped",
                    class.max_packet(),
                    class.name(),
                    link.name
                ),
                format!(
                    "lower header, or raise max_packet of class `{}`",
                    class.name()
                ),
            );
            ok = false;
        }
    }
    ok
}

/// The reverse route of a TCP flow: the single-link form's `link-reverse`, or the
/// flow's `reverse`, which must lead from the sink's node back to the source's. Checks
/// that acknowledgements (`header` bytes) fit every class on it.
fn reverse_route(
    ctx: &mut Ctx<'_>,
    f: &FlowDef,
    env: &Env<'_, '_>,
    route: &[Hop],
) -> Option<Vec<Hop>> {
    let links = env.links;
    let hops = match env.layout {
        Layout::SingleLink => {
            if let Some(r) = &f.reverse {
                ctx.report(
                    &r.span,
                    &format!("{}.reverse", f.path),
                    "`reverse` is for the topology form ([[node]] and [[links]])",
                    format!(
                        "with a single [link] the acknowledgements take the link `{}` from \
                         `dst` back to `src`; shape it with [link] reverse = {{ rate = \
                         \"10mbit\", delay = \"5ms\" }}",
                        super::SINGLE_REVERSE_LINK
                    ),
                );
                return None;
            }
            vec![env.ack_hop?]
        }
        Layout::Topology => {
            let node = |id: Option<linkshare_sim::config::NodeId>| {
                id.and_then(|n| env.nodes.get(n.0 as usize))
                    .map_or("?", String::as_str)
            };
            let source = route.first().and_then(|h| links[h.link.0 as usize].from);
            let sink = route.last().and_then(|h| links[h.link.0 as usize].to);
            let Some(reverse) = &f.reverse else {
                ctx.report(
                    &f.span,
                    &format!("{}.reverse", f.path),
                    "a TCP flow needs a reverse route for its acknowledgements",
                    format!(
                        "add reverse = [{{ link = \"...\", class = \"...\" }}, ...] listing \
                         the links from the sink's node `{}` back to the source's node `{}`",
                        node(sink),
                        node(source)
                    ),
                );
                return None;
            };
            let hops = route_hops(ctx, &reverse.value, links)?;
            if route.is_empty() {
                return None;
            }
            let (first, last) = (hops.first()?, hops.last()?);
            let start = links[first.link.0 as usize].from;
            let end = links[last.link.0 as usize].to;
            let mut ok = true;
            if start != sink {
                ctx.report(
                    &reverse.value[0].link.span,
                    &format!("{}.link", reverse.value[0].path),
                    format!(
                        "the reverse route starts at node `{}`, not at the sink's node `{}` \
                         where the route ends",
                        node(start),
                        node(sink)
                    ),
                    format!("start it with a link from `{}`", node(sink)),
                );
                ok = false;
            }
            if end != source {
                let h = &reverse.value[reverse.value.len() - 1];
                ctx.report(
                    &h.link.span,
                    &format!("{}.link", h.path),
                    format!(
                        "the reverse route ends at node `{}`, not at the source's node `{}` \
                         where the route starts",
                        node(end),
                        node(source)
                    ),
                    format!("end it with a link into `{}`", node(source)),
                );
                ok = false;
            }
            if !ok {
                return None;
            }
            hops
        }
    };
    Some(hops)
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
    // A per-flow template: the hop names its first instance, and the simulator
    // classifies every packet into the instance of its flow.
    if let Some(t) = tree.template_named(&class.value) {
        return Some(tree.templates()[t as usize].first);
    }
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
                    name_list(&under)
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
                    name_list(&all)
                )
            };
            ctx.report(
                &class.span,
                path,
                format!(
                    "link `{}` has no class named `{}`",
                    link.name,
                    echo(&class.value)
                ),
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
                format!("no link is named `{}`", echo(&h.link.value)),
                format!("{hint}links: {}", name_list(&names)),
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
                name_list(&names)
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

/// The frame sizes of a video source, from its CSV file (relative to the scenario).
fn video_frames(
    ctx: &mut Ctx<'_>,
    f: &FlowDef,
    file: &Sp<String>,
    base_dir: &Path,
) -> Option<Arc<[u32]>> {
    let field = format!("{}.source.file", f.path);
    let path = base_dir.join(&file.value);
    let fix = "give a CSV file of frame sizes (see scenarios/README.md), relative to the \
               scenario file's directory";
    let text = match std::fs::read(&path).map(String::from_utf8) {
        Ok(Ok(text)) => text,
        Ok(Err(_)) => {
            ctx.report(
                &file.span,
                &field,
                format!("the video trace {} is not UTF-8 text", path.display()),
                fix,
            );
            return None;
        }
        Err(e) => {
            ctx.report(
                &file.span,
                &field,
                format!("cannot read the video trace {}: {e}", path.display()),
                fix,
            );
            return None;
        }
    };
    match apps::parse_frames(&text) {
        Ok(frames) if !frames.is_empty() => Some(frames.into()),
        Ok(_) => {
            ctx.report(
                &file.span,
                &field,
                format!("the video trace {} has no frames", path.display()),
                fix,
            );
            None
        }
        Err(e) => {
            ctx.report(
                &file.span,
                &field,
                format!("the video trace {}: {e}", path.display()),
                "",
            );
            None
        }
    }
}
