//! The scenario file format: reading each table of the TOML document into plain
//! definitions with positions. Cross-references (parents, classes of flows, routes) are
//! checked afterwards, in [`super::build`]. The format is documented in
//! `scenarios/README.md`.

mod class;
mod flow;
mod settings;
mod shaper;
mod tcp;

use linkshare_core::buffer::{BufferConfig, Overflow};
use linkshare_core::echo::echo;
use linkshare_core::hierarchy::{ClassSpec, Limit};
use linkshare_core::sched::SchedulerKind;
use linkshare_core::units::{Bytes, Duration, Rate};
use linkshare_sim::config::SourceConfig;
use toml::de::DeValue;

use super::best_effort::{self, BestEffort};
use super::problem::did_you_mean;
use super::reader::{Ctx, Sp, Span, Table, Value};
use class::read_class;
use flow::read_flow;
pub(crate) use settings::JOBS_CLASS_KEYS;
pub use shaper::PacingMode;
pub(crate) use shaper::{DEFAULT_POOL, FilterDef, ShaperDef};
pub(crate) use tcp::{TcpDef, WindowDef};

/// Top-level keys.
const TOP_KEYS: &[&str] = &[
    "scenario", "link", "class", "flow", "node", "links", "tcp", "shaper", "filter",
];

/// Keys of `[scenario]`.
const SCENARIO_KEYS: &[&str] = &[
    "name",
    "description",
    "duration",
    "seed",
    "window",
    "scheduler",
];

/// Keys of the single-link form's `[link]`.
const LINK_KEYS: &[&str] = &[
    "rate",
    "delay",
    "overhead",
    "scheduler",
    "buffer",
    "best_effort",
    "reverse",
    "htb",
    "jobs",
    "keshav",
    "hfsc",
    "cbq",
];

/// Keys of the single-link form's `[link] reverse`.
const REVERSE_KEYS: &[&str] = &["rate", "delay", "overhead", "buffer"];

/// Keys of the topology form's `[[links]]`.
const LINKS_KEYS: &[&str] = &[
    "name",
    "from",
    "to",
    "rate",
    "delay",
    "overhead",
    "scheduler",
    "buffer",
    "best_effort",
    "class",
    "htb",
    "jobs",
    "keshav",
    "hfsc",
    "cbq",
];

/// Keys of a buffer table.
const BUFFER_KEYS: &[&str] = &["limit", "overflow"];

/// Default `[scenario] window`.
const DEFAULT_WINDOW: Duration = Duration::from_millis(200);

/// Default `[scenario] seed`.
const DEFAULT_SEED: u64 = 1;

/// The whole document, read.
#[derive(Debug)]
pub(crate) struct Document {
    pub(crate) header: Option<Header>,
    pub(crate) form: Form,
    pub(crate) flows: Vec<FlowDef>,
    /// `[tcp]`: defaults for every TCP flow (empty when not written).
    pub(crate) tcp: TcpDef,
    /// `[shaper]`, if written (checked, then left to `linkshare shape`).
    pub(crate) shaper: Option<ShaperDef>,
    /// `[[filter]]`s (checked, then left to `linkshare shape`).
    pub(crate) filters: Vec<FilterDef>,
}

/// What `linkshare shape` reads of a document.
#[derive(Debug)]
pub(crate) struct ShaperDocument {
    /// `[scenario] name`, if written.
    pub(crate) name: Option<Sp<String>>,
    /// `[scenario] scheduler`, if written.
    pub(crate) scheduler: Option<Sp<SchedulerKind>>,
    pub(crate) form: Form,
    pub(crate) shaper: Option<ShaperDef>,
    pub(crate) filters: Vec<FilterDef>,
}

/// `[scenario]`.
#[derive(Debug)]
pub(crate) struct Header {
    pub(crate) name: Option<Sp<String>>,
    pub(crate) description: Option<String>,
    pub(crate) duration: Option<Sp<Duration>>,
    pub(crate) seed: u64,
    pub(crate) window: Sp<Duration>,
    pub(crate) scheduler: Option<Sp<SchedulerKind>>,
}

/// Which of the two forms the file uses.
#[derive(Debug)]
pub(crate) enum Form {
    /// `[link]` and `[[class]]`.
    Single(Box<LinkDef>),
    /// `[[node]]` and `[[links]]`.
    Topology {
        nodes: Vec<Sp<String>>,
        links: Vec<LinkDef>,
    },
    /// Neither (reported), or a mix of both (reported).
    Broken,
}

/// A link, from either form.
#[derive(Debug)]
pub(crate) struct LinkDef {
    /// `link` or `links[i]`.
    pub(crate) path: String,
    pub(crate) span: Span,
    pub(crate) name: Option<Sp<String>>,
    pub(crate) from: Option<Sp<String>>,
    pub(crate) to: Option<Sp<String>>,
    pub(crate) rate: Option<Sp<Rate>>,
    pub(crate) delay: Duration,
    pub(crate) overhead: Bytes,
    pub(crate) scheduler: Option<Sp<SchedulerKind>>,
    pub(crate) buffer: BufferConfig,
    /// `best_effort`: FSC's best-effort curves for every leaf.
    pub(crate) best_effort: Option<Sp<BestEffort>>,
    pub(crate) classes: Vec<ClassDef>,
    /// `[link] reverse`: the path of TCP acknowledgements in the single-link form.
    pub(crate) reverse: Option<ReverseDef>,
    /// The settings of the disciplines that have their own (`[link.htb]`, ...).
    pub(crate) settings: crate::DisciplineSettings,
}

/// `[link] reverse = { ... }`: the link `link-reverse` the loader adds for TCP flows
/// of a single-link file; what is not given is taken from `[link]`.
#[derive(Debug)]
pub(crate) struct ReverseDef {
    pub(crate) span: Span,
    pub(crate) rate: Option<Sp<Rate>>,
    pub(crate) delay: Option<Duration>,
    pub(crate) overhead: Option<Bytes>,
    pub(crate) buffer: BufferConfig,
}

/// A class, with its path (`class[i]` or `links[i].class[j]`).
#[derive(Debug)]
pub(crate) struct ClassDef {
    pub(crate) path: String,
    pub(crate) spec: ClassSpec,
    /// The `umax` of an `rt` curve written as `{ umax, dmax, rate }`.
    pub(crate) rt_burst: Option<Bytes>,
    /// `limit = "none"`: an unbounded queue, spelled out (a leaf without `limit` gets
    /// [`linkshare_core::hierarchy::DEFAULT_LEAF_LIMIT`]).
    pub(crate) unlimited: bool,
    /// The JoBS constraints written in the class (kept in the link's JoBS settings).
    pub(crate) jobs: linkshare_core::sched::jobs::Constraints,
    /// `delta`: Keshav FQ's offset for this conversation (kept in the link's
    /// [`crate::DisciplineSettings`], not in the class's spec).
    pub(crate) delta: Option<Sp<Bytes>>,
}

/// A flow.
#[derive(Debug)]
pub(crate) struct FlowDef {
    pub(crate) path: String,
    pub(crate) span: Span,
    pub(crate) name: Option<Sp<String>>,
    pub(crate) class: Option<Sp<String>>,
    pub(crate) route: Option<Sp<Vec<HopDef>>>,
    /// `reverse`: the acknowledgements' route (topology form, TCP flows).
    pub(crate) reverse: Option<Sp<Vec<HopDef>>>,
    /// `transport`, with where it was written (`None`: not written, UDP).
    pub(crate) transport: Option<Sp<TransportDef>>,
    /// `tcp = { ... }`, if written.
    pub(crate) tcp: Option<Sp<TcpDef>>,
    pub(crate) source: Option<SourceDef>,
    pub(crate) schedule: Option<ScheduleDef>,
}

/// `transport = "udp"` or `"tcp"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TransportDef {
    Udp,
    Tcp,
}

/// One `{ link = "...", class = "..." }` of a route.
#[derive(Debug)]
pub(crate) struct HopDef {
    pub(crate) path: String,
    pub(crate) link: Sp<String>,
    pub(crate) class: Sp<String>,
}

/// A source, ready except for traces (read later, relative to the scenario file).
#[derive(Debug)]
pub(crate) enum SourceDef {
    /// Every parameter known; `size` is where the packet size was written, `None` when
    /// a TCP flow's `ftp`, `www` or `video` source left it out (the build then puts the
    /// flow's full segment size there, which TCP does not use).
    Ready {
        config: SourceConfig,
        size: Option<Sp<u32>>,
    },
    /// A trace file to read.
    Trace { file: Sp<String> },
    /// A video source whose frame sizes are in `file`.
    Video {
        file: Sp<String>,
        interval: Duration,
        size: Option<Sp<u32>>,
    },
}

/// `on = [...]` or `off = [...]`.
#[derive(Debug)]
pub(crate) struct ScheduleDef {
    /// The field path (`flow[i].on` or `flow[i].off`).
    pub(crate) path: String,
    /// True for `on`, false for `off`.
    pub(crate) on: bool,
    pub(crate) span: Span,
    pub(crate) intervals: Vec<Sp<(Duration, Duration)>>,
}

/// Reads the document's tables.
pub(crate) fn read_document(ctx: &mut Ctx<'_>, doc: &Table<'_, '_>) -> Document {
    for (key, _) in doc.entries() {
        if !TOP_KEYS.contains(&key) {
            let span = doc.key_span(key).unwrap_or(0..0);
            let hint = did_you_mean(key, TOP_KEYS.iter().copied());
            ctx.report(
                &span,
                &echo(key).to_string(),
                format!("unknown table or field `{}`", echo(key)),
                format!(
                    "{hint}a scenario has [scenario], then either [link] and [[class]] (one link) \
                     or [[node]] and [[links]] (a topology), and [[flow]]"
                ),
            );
        }
    }
    let header = match doc.get("scenario") {
        Some(v) => read_header(ctx, v),
        None => {
            ctx.report(
                &(0..0),
                "scenario",
                "the file has no [scenario] table",
                "start the file with [scenario] and its name and duration, e.g. \
                 name = \"test\" and duration = \"10s\"",
            );
            None
        }
    };
    let form = read_form(ctx, doc);
    let tcp = doc
        .get("tcp")
        .and_then(|v| tcp::read_tcp(ctx, "tcp", v))
        .unwrap_or_default();
    let flows = tables_of(ctx, doc, "flow")
        .into_iter()
        .enumerate()
        .filter_map(|(i, v)| read_flow(ctx, &format!("flow[{i}]"), v))
        .collect::<Vec<_>>();
    if flows.is_empty() && doc.get("flow").is_none() {
        ctx.report(
            &(0..0),
            "flow",
            "the scenario has no flows",
            "add at least one [[flow]] with a name, a class and a source",
        );
    }
    let (shaper, filters) = read_shaper_tables(ctx, doc);
    Document {
        header,
        form,
        flows,
        tcp,
        shaper,
        filters,
    }
}

/// `[shaper]` and `[[filter]]`, where written.
fn read_shaper_tables(
    ctx: &mut Ctx<'_>,
    doc: &Table<'_, '_>,
) -> (Option<ShaperDef>, Vec<FilterDef>) {
    let shaper = doc.get("shaper").and_then(|v| shaper::read_shaper(ctx, v));
    let filters = tables_of(ctx, doc, "filter")
        .into_iter()
        .enumerate()
        .filter_map(|(i, v)| shaper::read_filter(ctx, i, v))
        .collect();
    (shaper, filters)
}

/// Who reads the single link of a file: `linkshare shape` (which needs `[shaper]`), the
/// shaper's reverse tree or `linkshare tc export` (which do not).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LinkReader {
    Shaper,
    Reverse,
    Export,
}

/// Reads what `linkshare shape` or `linkshare tc export` needs: `[scenario]`'s name and
/// scheduler (the table is optional), the single-link form, `[shaper]` (required by the
/// shaper) and `[[filter]]`. Flows and `[tcp]` describe simulated traffic and are not
/// read.
pub(crate) fn read_shaper_document(
    ctx: &mut Ctx<'_>,
    doc: &Table<'_, '_>,
    reader: LinkReader,
) -> Option<ShaperDocument> {
    for (key, _) in doc.entries() {
        if !TOP_KEYS.contains(&key) {
            let span = doc.key_span(key).unwrap_or(0..0);
            let hint = did_you_mean(key, TOP_KEYS.iter().copied());
            ctx.report(
                &span,
                key,
                format!("unknown table or field `{key}`"),
                format!(
                    "{hint}a shaper configuration has [link], [[class]], [shaper] and [[filter]]"
                ),
            );
        }
    }
    let (name, scheduler) = match doc.get("scenario") {
        Some(v) => {
            let t = ctx.table("scenario", v, SCENARIO_KEYS)?;
            let name = t.name(ctx, "name");
            let kind = t
                .get("scheduler")
                .and_then(|v| scheduler(ctx, "scenario.scheduler", v));
            (name, kind)
        }
        None => (None, None),
    };
    let form = read_form(ctx, doc);
    if let Form::Topology { .. } = form {
        let problem = match reader {
            LinkReader::Shaper | LinkReader::Reverse => {
                "the shaper shapes one link, and this file describes a topology"
            }
            LinkReader::Export => {
                "tc configures the qdisc of one interface, and this file describes a topology"
            }
        };
        ctx.report(
            &doc.key_span("links")
                .or(doc.key_span("node"))
                .unwrap_or(0..0),
            "links",
            problem,
            "use the single-link form: [link] with its rate and scheduler, and [[class]] tables",
        );
    }
    let (shaper, filters) = read_shaper_tables(ctx, doc);
    if doc.get("shaper").is_none() && reader == LinkReader::Shaper {
        ctx.report(
            &(0..0),
            "shaper",
            "the file has no [shaper] table",
            "add [shaper] with the interfaces to bridge: in = \"eth0\" and out = \"eth1\"",
        );
    }
    Some(ShaperDocument {
        name,
        scheduler,
        form,
        shaper,
        filters,
    })
}

/// The values of an array of tables `[[key]]`; reports a single table `[key]`.
fn tables_of<'t, 'i>(ctx: &mut Ctx<'_>, parent: &Table<'t, 'i>, key: &str) -> Vec<&'t Value<'i>> {
    let Some(v) = parent.get(key) else {
        return Vec::new();
    };
    match v.get_ref() {
        DeValue::Array(items) => items.iter().collect(),
        _ => {
            let path = parent.field(key);
            ctx.wrong_type(&path, v, "an array of tables", &format!("[[{path}]]"));
            Vec::new()
        }
    }
}

fn read_header(ctx: &mut Ctx<'_>, v: &Value<'_>) -> Option<Header> {
    let t = ctx.table("scenario", v, SCENARIO_KEYS)?;
    let name = t
        .require(ctx, "name", "name = \"my-experiment\"")
        .and_then(|v| ctx.name("scenario.name", v));
    let description = t
        .get("description")
        .and_then(|v| ctx.string("scenario.description", v))
        .map(|s| s.value.to_owned());
    let duration = t
        .require(ctx, "duration", "duration = \"10s\"")
        .and_then(|v| ctx.quantity::<Duration>("scenario.duration", v, "a time", "\"10s\""));
    if let Some(d) = &duration
        && d.value == Duration::ZERO
    {
        ctx.report(
            &d.span,
            "scenario.duration",
            "the duration is zero",
            "give a positive duration such as \"10s\"",
        );
    }
    let seed = t
        .integer(ctx, "seed", 0, i64::MAX as u64)
        .map_or(DEFAULT_SEED, |s| s.value);
    let window = match t.get("window") {
        Some(w) => ctx.quantity::<Duration>("scenario.window", w, "a time", "\"200ms\""),
        None => Some(Sp {
            value: DEFAULT_WINDOW,
            span: t.span.clone(),
        }),
    };
    if let Some(w) = &window
        && w.value == Duration::ZERO
    {
        ctx.report(
            &w.span,
            "scenario.window",
            "the measurement window is zero",
            "give a positive window such as \"200ms\", or leave it out",
        );
    }
    let scheduler = t
        .get("scheduler")
        .and_then(|v| scheduler(ctx, "scenario.scheduler", v));
    Some(Header {
        name,
        description,
        duration,
        seed,
        window: window.unwrap_or(Sp {
            value: DEFAULT_WINDOW,
            span: t.span.clone(),
        }),
        scheduler,
    })
}

/// A scheduler name.
fn scheduler(ctx: &mut Ctx<'_>, path: &str, v: &Value<'_>) -> Option<Sp<SchedulerKind>> {
    let s = ctx.string(path, v)?;
    match s.value.parse::<SchedulerKind>() {
        Ok(kind) => Some(Sp {
            value: kind,
            span: s.span,
        }),
        Err(_) => {
            let hint = did_you_mean(s.value, SchedulerKind::ALL.iter().map(|k| k.name()));
            ctx.report(
                &s.span,
                path,
                format!("unknown scheduler `{}`", echo(s.value)),
                format!("{hint}known schedulers: {}", SchedulerKind::all_names()),
            );
            None
        }
    }
}

fn read_form(ctx: &mut Ctx<'_>, doc: &Table<'_, '_>) -> Form {
    let single: Vec<&str> = ["link", "class"]
        .into_iter()
        .filter(|k| doc.get(k).is_some())
        .collect();
    let topology: Vec<&str> = ["node", "links"]
        .into_iter()
        .filter(|k| doc.get(k).is_some())
        .collect();
    match (single.is_empty(), topology.is_empty()) {
        (false, false) => {
            let span = doc.key_span(topology[0]).unwrap_or(0..0);
            ctx.report(
                &span,
                topology[0],
                format!(
                    "the file mixes the single-link form ({}) with the topology form ({})",
                    single.join(", "),
                    topology.join(", ")
                ),
                "use either [link] with [[class]] (one link from `src` to `dst`), or [[node]] \
                 and [[links]] with [[links.class]] and flows with `route`, not both",
            );
            Form::Broken
        }
        (true, true) => {
            ctx.report(
                &(0..0),
                "link",
                "the scenario has no link",
                "add a [link] table with a rate (e.g. rate = \"10mbit\") and [[class]] tables, \
                 or [[node]] and [[links]] tables for a topology",
            );
            Form::Broken
        }
        (false, true) => {
            let classes = tables_of(ctx, doc, "class");
            let Some(v) = doc.get("link") else {
                let span = doc.key_span("class").unwrap_or(0..0);
                ctx.report(
                    &span,
                    "class",
                    "classes are given but no [link]",
                    "add a [link] table with its rate, e.g. rate = \"10mbit\"",
                );
                return Form::Broken;
            };
            match read_link(ctx, "link", v, false, &classes, "class") {
                Some(link) => Form::Single(Box::new(link)),
                None => Form::Broken,
            }
        }
        (true, false) => {
            let nodes = tables_of(ctx, doc, "node")
                .into_iter()
                .enumerate()
                .filter_map(|(i, v)| {
                    let path = format!("node[{i}]");
                    let t = ctx.table(&path, v, &["name"])?;
                    t.require(ctx, "name", "name = \"router1\"")?;
                    t.name(ctx, "name")
                })
                .collect();
            let links = tables_of(ctx, doc, "links")
                .into_iter()
                .enumerate()
                .filter_map(|(i, v)| {
                    let path = format!("links[{i}]");
                    let classes = match v.get_ref() {
                        DeValue::Table(_) => {
                            let t = Table::of(&path, v)?;
                            tables_of(ctx, &t, "class")
                        }
                        _ => Vec::new(),
                    };
                    read_link(ctx, &path, v, true, &classes, &format!("{path}.class"))
                })
                .collect();
            Form::Topology { nodes, links }
        }
    }
}

/// Reads a link table; `named`: the topology form's `[[links]]` (with name, from, to).
fn read_link(
    ctx: &mut Ctx<'_>,
    path: &str,
    v: &Value<'_>,
    named: bool,
    classes: &[&Value<'_>],
    class_path: &str,
) -> Option<LinkDef> {
    let t = ctx.table(path, v, if named { LINKS_KEYS } else { LINK_KEYS })?;
    let (name, from, to) = if named {
        let name = t
            .require(ctx, "name", "name = \"l1\"")
            .and(t.name(ctx, "name"));
        let from = t
            .require(ctx, "from", "from = \"a\"")
            .and(t.name(ctx, "from"));
        let to = t.require(ctx, "to", "to = \"b\"").and(t.name(ctx, "to"));
        (name, from, to)
    } else {
        (None, None, None)
    };
    let rate = t
        .require(ctx, "rate", "rate = \"10mbit\"")
        .and_then(|_| t.quantity::<Rate>(ctx, "rate", "a rate", "\"10mbit\""));
    if let Some(r) = &rate
        && r.value == Rate::ZERO
    {
        ctx.report(
            &r.span,
            &t.field("rate"),
            "the link rate is zero",
            "give a positive rate such as \"10mbit\"",
        );
    }
    let delay = t
        .quantity::<Duration>(ctx, "delay", "a time", "\"5ms\"")
        .map_or(Duration::ZERO, |d| d.value);
    let overhead = t
        .quantity::<Bytes>(ctx, "overhead", "a size", "\"24b\"")
        .map_or(Bytes::ZERO, |b| b.value);
    let scheduler = t
        .get("scheduler")
        .and_then(|v| scheduler(ctx, &t.field("scheduler"), v));
    let buffer = t
        .get("buffer")
        .and_then(|v| read_buffer(ctx, &t.field("buffer"), v))
        .unwrap_or_default();
    let best_effort = t
        .get("best_effort")
        .and_then(|v| best_effort::read(ctx, &t.field("best_effort"), v));
    let classes: Vec<ClassDef> = classes
        .iter()
        .enumerate()
        .filter_map(|(i, v)| read_class(ctx, &format!("{class_path}[{i}]"), v))
        .collect();
    let reverse = t
        .get("reverse")
        .filter(|_| !named)
        .and_then(|v| read_reverse(ctx, &t.field("reverse"), v));
    let mut settings = settings::read(ctx, |k| t.get(k), |k| t.field(k));
    settings::add_class_settings(ctx, &mut settings, &classes);
    Some(LinkDef {
        path: path.to_owned(),
        span: t.span.clone(),
        name,
        from,
        to,
        rate,
        delay,
        overhead,
        scheduler,
        buffer,
        best_effort,
        classes,
        reverse,
        settings,
    })
}

fn read_reverse(ctx: &mut Ctx<'_>, path: &str, v: &Value<'_>) -> Option<ReverseDef> {
    let t = ctx.table(path, v, REVERSE_KEYS)?;
    let rate = t.quantity::<Rate>(ctx, "rate", "a rate", "\"10mbit\"");
    if let Some(r) = &rate
        && r.value == Rate::ZERO
    {
        ctx.report(
            &r.span,
            &t.field("rate"),
            "the reverse link's rate is zero",
            "give a positive rate such as \"10mbit\", or leave it out to use the link's",
        );
    }
    let delay = t
        .quantity::<Duration>(ctx, "delay", "a time", "\"5ms\"")
        .map(|d| d.value);
    let overhead = t
        .quantity::<Bytes>(ctx, "overhead", "a size", "\"24b\"")
        .map(|b| b.value);
    let buffer = t
        .get("buffer")
        .and_then(|v| read_buffer(ctx, &t.field("buffer"), v))
        .unwrap_or_default();
    Some(ReverseDef {
        span: t.span.clone(),
        rate,
        delay,
        overhead,
        buffer,
    })
}

fn read_buffer(ctx: &mut Ctx<'_>, path: &str, v: &Value<'_>) -> Option<BufferConfig> {
    let t = ctx.table(path, v, BUFFER_KEYS)?;
    let limit = t
        .require(ctx, "limit", "limit = \"64kb\"")
        .and_then(|v| limit(ctx, &t.field("limit"), v));
    if let Some(l) = &limit
        && matches!(l.value, Limit::Packets(0) | Limit::Bytes(Bytes(0)))
    {
        ctx.report(
            &l.span,
            &t.field("limit"),
            "the buffer limit is zero",
            "give a positive limit, or leave `buffer` out for no shared limit",
        );
    }
    let overflow = match t.get("overflow") {
        None => Overflow::TailDrop,
        Some(v) => {
            let s = ctx.string(&t.field("overflow"), v)?;
            const RULES: [Overflow; 3] = [
                Overflow::TailDrop,
                Overflow::PushOutLongest,
                Overflow::PushOutSecond,
            ];
            match RULES.into_iter().find(|r| r.name() == s.value) {
                Some(rule) => rule,
                None => {
                    let hint = did_you_mean(s.value, RULES.map(Overflow::name));
                    ctx.report(
                        &s.span,
                        &t.field("overflow"),
                        format!("unknown overflow rule `{}`", echo(s.value)),
                        format!(
                            "{hint}use \"tail-drop\", \"push-out\" (newest packet of the \
                             longest queue) or \"push-out-second\" (the packet behind the \
                             head of the longest queue, the FSC paper's rule)"
                        ),
                    );
                    return None;
                }
            }
        }
    };
    Some(BufferConfig {
        shared: Some(limit?.value),
        overflow,
    })
}

/// `key` of `t` as a size of 1 to `u32::MAX` bytes (`example` shows one); a size out of
/// that range is reported as "a `what` of `size` is not possible", with `fix`.
fn size_u32(
    ctx: &mut Ctx<'_>,
    t: &Table<'_, '_>,
    key: &str,
    example: &str,
    what: &str,
    fix: &str,
) -> Option<Sp<u32>> {
    let b = t.quantity::<Bytes>(ctx, key, "a size", example)?;
    match u32::try_from(b.value.0) {
        Ok(n) if n > 0 => Some(Sp {
            value: n,
            span: b.span,
        }),
        _ => {
            ctx.report(
                &b.span,
                &t.field(key),
                format!("a {what} of {} is not possible", b.value),
                fix,
            );
            None
        }
    }
}

/// A limit: a size string (bytes) or an integer (packets).
fn limit(ctx: &mut Ctx<'_>, path: &str, v: &Value<'_>) -> Option<Sp<Limit>> {
    match v.get_ref() {
        DeValue::Integer(_) => ctx.integer(path, v, 1, u64::MAX).map(|n| Sp {
            value: Limit::Packets(n.value),
            span: n.span,
        }),
        DeValue::String(_) => ctx
            .quantity::<Bytes>(path, v, "a size", "\"64kb\"")
            .map(|b| Sp {
                value: Limit::Bytes(b.value),
                span: b.span,
            }),
        _ => {
            ctx.wrong_type(
                path,
                v,
                "a size string (bytes) or an integer (packets)",
                "\"64kb\" or 100",
            );
            None
        }
    }
}
