//! From the read definitions to a [`SimConfig`]: class trees, node and link names,
//! routes, schedules and traces, checking every cross-reference.

mod flow;
mod jobs;
pub(crate) mod shaper;

use std::collections::BTreeMap;
use std::sync::Arc;

use linkshare_core::echo::echo;
use linkshare_core::hierarchy::{
    ClassId, ClassSpec, ClassTree, ConfigError, DEFAULT_LEAF_LIMIT, LinkSpec,
};
use linkshare_core::sched::jobs::Constraints;
use linkshare_core::sched::{SchedulerConfig, SchedulerKind};
use linkshare_core::units::Duration;
use linkshare_sim::config::{
    FlowConfig, Hop, LinkConfig, LinkId, MeasureConfig, NodeConfig, NodeId, Objective, SimConfig,
};

use super::best_effort::{self, BestEffort};
use super::format::{ClassDef, Document, Form, Header, LinkDef, ShaperDocument, TransportDef};
use super::problem::{Problem, did_you_mean, name_list};
use super::reader::{Ctx, Sp, Span};
use super::{Layout, LinkNotes, Scenario, ShaperConfig, SingleLink, Source};
use crate::shaper::{Interfaces, ReverseConfig};
use flow::{Env, TraceCache, build_flow};

/// At most this many measurement windows per run (`duration / window`).
const MAX_WINDOWS: u64 = 1_000_000;

/// Names of the nodes and link of the single-link form.
const SINGLE_NODES: [&str; 2] = ["src", "dst"];
pub use linkshare_sim::config::{SINGLE_LINK, SINGLE_REVERSE_LINK};
/// The only class of [`SINGLE_REVERSE_LINK`].
pub const ACK_CLASS: &str = "ack";

/// A link whose class tree was built.
struct BuiltLink<'d> {
    def: &'d LinkDef,
    name: String,
    tree: Arc<ClassTree>,
    scheduler: SchedulerKind,
    from: Option<NodeId>,
    to: Option<NodeId>,
    notes: LinkNotes,
    /// The classes' JoBS constraints, measured as objectives whatever the scheduler.
    objectives: Vec<(ClassId, Constraints)>,
}

/// Builds the scenario; `None` when problems were reported to `ctx`.
pub(crate) fn build(ctx: &mut Ctx<'_>, doc: &Document, source: &Arc<Source>) -> Option<Scenario> {
    let base_dir = source.base_dir.as_path();
    let header = doc.header.as_ref();
    let default_scheduler = header.and_then(|h| h.scheduler.as_ref());
    if let Some(h) = header {
        check_windows(ctx, h);
    }
    let tcp_flows = doc.flows.iter().any(|f| {
        f.transport
            .as_ref()
            .is_some_and(|t| t.value == TransportDef::Tcp)
    });
    let reverse_def = match &doc.form {
        Form::Single(link) => reverse_link_def(ctx, link, tcp_flows),
        _ => None,
    };
    let Network {
        nodes,
        links,
        layout,
        ack_hop,
    } = match &doc.form {
        Form::Single(link) => single_link(ctx, link, reverse_def.as_ref(), default_scheduler),
        Form::Topology { nodes, links } => topology(ctx, nodes, links, default_scheduler),
        Form::Broken => Network {
            nodes: Vec::new(),
            links: Vec::new(),
            layout: Layout::SingleLink,
            ack_hop: None,
        },
    };
    let flow_names: Vec<Sp<String>> = doc.flows.iter().filter_map(|f| f.name.clone()).collect();
    unique(ctx, &flow_names, "flow", "flow");
    let mut traces = TraceCache::default();
    let env = Env {
        links: &links,
        nodes: &nodes,
        layout,
        header,
        base_dir,
        tcp: &doc.tcp,
        ack_hop,
    };
    let flows: Vec<FlowConfig> = doc
        .flows
        .iter()
        .filter_map(|f| build_flow(ctx, f, &env, &mut traces))
        .collect();
    if doc.shaper.is_some() || !doc.filters.is_empty() {
        match (&doc.form, links.first()) {
            (Form::Single(_), Some(link)) => {
                let _ = shaper::resolve(ctx, doc.shaper.as_ref(), &doc.filters, &link.tree);
            }
            (Form::Single(_), None) | (Form::Broken, _) => {}
            (Form::Topology { .. }, _) => ctx.report(
                &(0..0),
                "shaper",
                "[shaper] and [[filter]] configure the shaper of one link, and this file \
                 describes a topology",
                "remove them, or use the single-link form",
            ),
        }
    }
    if !ctx.problems.is_empty() {
        return None;
    }
    let header = header?;
    let link_notes = links.iter().map(|b| b.notes.clone()).collect();
    Some(Scenario {
        name: header.name.as_ref()?.value.clone(),
        description: header.description.clone(),
        file: source.file.clone(),
        layout,
        config: sim_config(header, nodes, links, flows)?,
        link_notes,
        source: Arc::clone(source),
    })
}

/// The nodes and links of a scenario, built.
struct Network<'d> {
    nodes: Vec<String>,
    links: Vec<BuiltLink<'d>>,
    layout: Layout,
    /// The hop of the acknowledgements of a single-link file's TCP flows.
    ack_hop: Option<Hop>,
}

/// The single-link form: nodes `src` and `dst`, the link between them, and the link
/// back for acknowledgements when `reverse_def` is given.
fn single_link<'d>(
    ctx: &mut Ctx<'_>,
    link: &'d LinkDef,
    reverse_def: Option<&'d LinkDef>,
    default_scheduler: Option<&Sp<SchedulerKind>>,
) -> Network<'d> {
    let nodes = SINGLE_NODES.iter().map(|&n| n.to_owned()).collect();
    let built = build_link(ctx, link, SINGLE_LINK.to_owned(), default_scheduler);
    let mut links: Vec<BuiltLink<'_>> = built
        .map(|mut b| {
            b.from = Some(NodeId(0));
            b.to = Some(NodeId(1));
            b
        })
        .into_iter()
        .collect();
    let mut ack_hop = None;
    if let Some(def) = reverse_def
        && let Some(mut b) = build_link(ctx, def, SINGLE_REVERSE_LINK.to_owned(), None)
    {
        b.from = Some(NodeId(1));
        b.to = Some(NodeId(0));
        b.notes.ack_path = true;
        ack_hop = b.tree.id_of(ACK_CLASS).map(|class| Hop {
            link: LinkId(links.len() as u32),
            class,
        });
        links.push(b);
    }
    Network {
        nodes,
        links,
        layout: Layout::SingleLink,
        ack_hop,
    }
}

/// The topology form: `[[node]]` and `[[links]]`, names unique, each link between two
/// distinct declared nodes.
fn topology<'d>(
    ctx: &mut Ctx<'_>,
    nodes: &[Sp<String>],
    links: &'d [LinkDef],
    default_scheduler: Option<&Sp<SchedulerKind>>,
) -> Network<'d> {
    let names = unique(ctx, nodes, "node", "node");
    let link_names: Vec<Sp<String>> = links.iter().filter_map(|l| l.name.clone()).collect();
    unique(ctx, &link_names, "links", "link");
    let built = links
        .iter()
        .filter_map(|l| {
            let name = l.name.as_ref()?.value.clone();
            let mut b = build_link(ctx, l, name, default_scheduler)?;
            b.from = endpoint(ctx, &names, l, l.from.as_ref(), "from");
            b.to = endpoint(ctx, &names, l, l.to.as_ref(), "to");
            if let (Some(f), Some(t)) = (b.from, b.to)
                && f == t
            {
                let span = l.to.as_ref().map_or(l.span.clone(), |t| t.span.clone());
                ctx.report(
                    &span,
                    &format!("{}.to", l.path),
                    format!(
                        "the link goes from node `{}` to itself",
                        names[f.0 as usize]
                    ),
                    "give `to` another node",
                );
            }
            Some(b)
        })
        .collect();
    Network {
        nodes: names,
        links: built,
        layout: Layout::Topology,
        ack_hop: None,
    }
}

/// The simulator's configuration of a scenario without problems.
fn sim_config(
    header: &Header,
    nodes: Vec<String>,
    links: Vec<BuiltLink<'_>>,
    flows: Vec<FlowConfig>,
) -> Option<SimConfig> {
    let objectives = links
        .iter()
        .enumerate()
        .flat_map(|(l, b)| {
            b.objectives
                .iter()
                .map(move |&(class, constraints)| Objective {
                    link: LinkId(l as u32),
                    class,
                    constraints,
                })
        })
        .collect();
    Some(SimConfig {
        seed: header.seed,
        duration: header.duration.as_ref()?.value,
        nodes: nodes.into_iter().map(|name| NodeConfig { name }).collect(),
        links: links
            .into_iter()
            .map(|b| {
                Some(LinkConfig {
                    name: b.name,
                    from: b.from?,
                    to: b.to?,
                    rate: b.def.rate.as_ref()?.value,
                    delay: b.def.delay,
                    overhead: b.def.overhead,
                    classes: b.tree,
                    scheduler: b.notes.settings.config(b.scheduler),
                    buffer: b.def.buffer,
                })
            })
            .collect::<Option<Vec<_>>>()?,
        flows,
        measure: MeasureConfig {
            window: header.window.value,
            objectives,
            ..MeasureConfig::default()
        },
    })
}

/// Builds the single link of a shaper configuration or of a file to export, with the
/// `[shaper]` it was read with; `None` when problems were reported to `ctx`.
pub(crate) fn build_single_link(
    ctx: &mut Ctx<'_>,
    doc: &ShaperDocument,
    file: &str,
    stem: &str,
) -> Option<SingleLink> {
    let Form::Single(def) = &doc.form else {
        return None;
    };
    if refuse_per_flow(ctx, def) {
        return None;
    }
    let link = build_link(ctx, def, SINGLE_LINK.to_owned(), doc.scheduler.as_ref())?;
    let filters = shaper::resolve(ctx, doc.shaper.as_ref(), &doc.filters, &link.tree);
    if !ctx.problems.is_empty() {
        return None;
    }
    let filters = filters?;
    let scheduler = link.notes.settings.config(link.scheduler);
    let warnings = discipline_warnings(&scheduler, &link.tree, &link.notes.class_paths);
    Some(SingleLink {
        name: doc
            .name
            .as_ref()
            .map_or_else(|| stem.to_owned(), |n| n.value.clone()),
        file: file.to_owned(),
        rate: def.rate.as_ref()?.value,
        overhead: def.overhead,
        classes: link.tree,
        scheduler,
        buffer: def.buffer,
        best_effort: link.notes.best_effort,
        rules: filters.rules,
        default: filters.default,
        output: doc
            .shaper
            .as_ref()
            .and_then(|s| s.output.as_ref())
            .map(|o| o.value.clone()),
        warnings,
    })
}

/// Refuses per-flow templates in a real link's configuration (the shaper and tc
/// export): the shaper keeps no flow table to hand instances to flows, and tc has no
/// equivalent. Returns whether some class was refused.
fn refuse_per_flow(ctx: &mut Ctx<'_>, def: &LinkDef) -> bool {
    let mut refused = false;
    for c in def.classes.iter().filter(|c| c.spec.per_flow.is_some()) {
        ctx.problems.push(Problem {
            origin: c.spec.origin_of("per_flow").cloned(),
            field: Some(format!("{}.per_flow", c.path)),
            problem: format!(
                "`{}` is a per-flow class, and a real link (`linkshare shape`, `tc export`) \
                 has no per-flow classes: only the simulator creates them",
                echo(&c.spec.name)
            ),
            fix: "remove `per_flow` (one class for all the flows), or simulate the file with \
                  `linkshare run`"
                .to_owned(),
        });
        refused = true;
    }
    refused
}

/// Builds the shaper's configuration; `None` when problems were reported to `ctx`.
pub(crate) fn build_shaper(
    ctx: &mut Ctx<'_>,
    doc: &ShaperDocument,
    file: &str,
    stem: &str,
) -> Option<ShaperConfig> {
    let link = build_single_link(ctx, doc, file, stem)?;
    let filters = shaper::Filters {
        rules: link.rules.clone(),
        default: link.default,
    };
    let def = doc.shaper.as_ref()?;
    let mut settings = shaper::settings(ctx, def, filters)?;
    settings.reverse_file = def
        .reverse
        .as_ref()
        .map(|r| (r.value.clone(), ctx.origin(&r.span)));
    Some(ShaperConfig {
        name: link.name,
        file: link.file,
        rate: link.rate,
        overhead: link.overhead,
        classes: link.classes,
        scheduler: link.scheduler,
        buffer: link.buffer,
        shaper: settings,
        warnings: link.warnings,
        reverse: None,
    })
}

/// Builds a shaper's reverse tree (see [`ReverseConfig`]) for the forward file's
/// `interfaces`; `None` when problems were reported to `ctx`.
pub(crate) fn build_reverse(
    ctx: &mut Ctx<'_>,
    doc: &ShaperDocument,
    file: &str,
    stem: &str,
    interfaces: &Interfaces,
) -> Option<ReverseConfig> {
    let link = build_single_link(ctx, doc, file, stem)?;
    let Some(def) = &doc.shaper else {
        return match link.classes.leaves() {
            [only] => Some(ReverseConfig {
                default: *only,
                pool: crate::format::DEFAULT_POOL,
                link,
            }),
            leaves => {
                ctx.report(
                    &(0..0),
                    "shaper.default",
                    "the reverse tree has no default class for frames no filter matches",
                    format!(
                        "add [shaper] with `default = \"{}\"` (or another leaf)",
                        leaves
                            .last()
                            .map_or("bulk", |&l| link.classes.get(l).name())
                    ),
                );
                None
            }
        };
    };
    for (key, span) in &def.forward_only {
        ctx.report(
            span,
            &format!("shaper.{key}"),
            format!("the reverse tree cannot set `{key}`"),
            format!(
                "one loop runs both trees: set `{key}` in the forward file's [shaper], and \
                 here only `default`, `pool`, `in` and `out`"
            ),
        );
    }
    for (iface, key, want) in [
        (&def.input, "in", &interfaces.output),
        (&def.output, "out", &interfaces.input),
    ] {
        if let Some(i) = iface.as_ref().filter(|i| i.value != *want) {
            ctx.report(
                &i.span,
                &format!("shaper.{key}"),
                format!(
                    "the reverse tree's `{key}` is `{}`, and the forward file bridges `{}` -> `{}`",
                    i.value, interfaces.input, interfaces.output
                ),
                format!(
                    "write `{key} = \"{want}\"` (the reverse tree runs from the forward `out` \
                     to the forward `in`), or leave `{key}` out"
                ),
            );
        }
    }
    if !ctx.problems.is_empty() {
        return None;
    }
    Some(ReverseConfig {
        default: link.default?,
        pool: def.pool,
        link,
    })
}

/// The warnings of `scheduler` for `tree` ([`SchedulerConfig::warnings`]) as problems
/// located at the fields they are about; `paths` holds each class's path by id.
pub(crate) fn discipline_warnings(
    scheduler: &SchedulerConfig,
    tree: &ClassTree,
    paths: &[String],
) -> Vec<Problem> {
    scheduler
        .warnings(tree)
        .into_iter()
        .map(|e| {
            let id = if e.class == tree.root().name() {
                Some(ClassId::ROOT)
            } else {
                tree.id_of(&e.class)
            };
            let path = id
                .and_then(|id| paths.get(id.index()))
                .cloned()
                .unwrap_or_else(|| format!("class `{}`", e.class));
            Problem {
                origin: e.origin,
                field: Some(format!("{path}.{}", e.field)),
                problem: format!("under scheduler `{}`, {}", scheduler.kind(), e.problem),
                fix: e.fix,
            }
        })
        .collect()
}

/// The path of every class of `tree` in the file (`class[2]`, `links[0].class[1]`), by
/// class id: the link's own path for the root, the template's for a per-flow instance.
fn class_paths(def: &LinkDef, tree: &ClassTree) -> Vec<String> {
    tree.classes()
        .iter()
        .map(|c| {
            if c.id == ClassId::ROOT {
                return def.path.clone();
            }
            let name = c.name().split_once('#').map_or(c.name(), |(base, _)| base);
            def.classes
                .iter()
                .find(|d| d.spec.name == name)
                .map_or_else(|| format!("class `{name}`"), |d| d.path.clone())
        })
        .collect()
}

/// The definition of the single-link form's [`SINGLE_REVERSE_LINK`], when a flow is
/// TCP: `[link] reverse`'s rate, delay, overhead and buffer, each defaulting to
/// `[link]`'s (the buffer to none), FIFO, one class [`ACK_CLASS`]. Reports a `reverse`
/// given without TCP flows.
fn reverse_link_def(ctx: &mut Ctx<'_>, link: &LinkDef, tcp_flows: bool) -> Option<LinkDef> {
    if !tcp_flows {
        if let Some(r) = &link.reverse {
            ctx.report(
                &r.span,
                "link.reverse",
                "`reverse` shapes the path of TCP acknowledgements, and no flow is TCP",
                "remove it, or make a flow TCP with transport = \"tcp\"",
            );
        }
        return None;
    }
    let r = link.reverse.as_ref();
    let span = r.map_or(link.span.clone(), |r| r.span.clone());
    let named = |name: &str| {
        Some(Sp {
            value: name.to_owned(),
            span: span.clone(),
        })
    };
    Some(LinkDef {
        path: "link.reverse".to_owned(),
        span: span.clone(),
        name: named(SINGLE_REVERSE_LINK),
        from: named(SINGLE_NODES[1]),
        to: named(SINGLE_NODES[0]),
        rate: r.and_then(|r| r.rate.clone()).or_else(|| link.rate.clone()),
        delay: r.and_then(|r| r.delay).unwrap_or(link.delay),
        overhead: r.and_then(|r| r.overhead).unwrap_or(link.overhead),
        scheduler: Some(Sp {
            value: SchedulerKind::Fifo,
            span: span.clone(),
        }),
        buffer: r.map(|r| r.buffer).unwrap_or_default(),
        best_effort: None,
        settings: Default::default(),
        classes: vec![ClassDef {
            path: "link.reverse.class[0]".to_owned(),
            spec: ClassSpec {
                limit: Some(DEFAULT_LEAF_LIMIT),
                ..ClassSpec::new(ACK_CLASS, None)
            },
            rt_burst: None,
            unlimited: false,
            jobs: Default::default(),
            delta: None,
        }],
        reverse: None,
    })
}

/// The number of windows must stay reasonable: every leaf keeps one sample per window.
fn check_windows(ctx: &mut Ctx<'_>, h: &Header) {
    let (Some(d), w) = (&h.duration, &h.window) else {
        return;
    };
    if w.value == Duration::ZERO {
        return;
    }
    let windows = d.value.as_nanos().div_ceil(w.value.as_nanos());
    if windows > MAX_WINDOWS {
        ctx.report_derived(
            &w.span,
            "scenario.window",
            format!(
                "a window of {} over a duration of {} makes {windows} windows, above the limit of {MAX_WINDOWS}",
                w.value, d.value
            ),
            format!(
                "lengthen the window to at least {}",
                Duration(d.value.as_nanos().div_ceil(MAX_WINDOWS))
            ),
        );
    }
}

/// Reports duplicate names; returns all names in order.
fn unique(ctx: &mut Ctx<'_>, names: &[Sp<String>], path: &str, what: &str) -> Vec<String> {
    let mut seen: BTreeMap<&str, &Span> = BTreeMap::new();
    for (i, n) in names.iter().enumerate() {
        if let Some(first) = seen.get(n.value.as_str()) {
            let at = ctx.origin(first);
            ctx.report(
                &n.span,
                &format!("{path}[{i}].name"),
                format!(
                    "another {what} is already named `{}` (at {at})",
                    echo(&n.value)
                ),
                format!("give every {what} a unique name"),
            );
        } else {
            seen.insert(&n.value, &n.span);
        }
    }
    names.iter().map(|n| n.value.clone()).collect()
}

/// Resolves a node name of a link.
fn endpoint(
    ctx: &mut Ctx<'_>,
    nodes: &[String],
    link: &LinkDef,
    name: Option<&Sp<String>>,
    key: &str,
) -> Option<NodeId> {
    let name = name?;
    match nodes.iter().position(|n| *n == name.value) {
        Some(i) => Some(NodeId(i as u32)),
        None => {
            let hint = did_you_mean(&name.value, nodes.iter().map(String::as_str));
            ctx.report(
                &name.span,
                &format!("{}.{key}", link.path),
                format!("no node is named `{}`", echo(&name.value)),
                format!(
                    "{hint}declare it with [[node]] name = \"{}\", or use one of: {}",
                    echo(&name.value),
                    name_list(nodes)
                ),
            );
            None
        }
    }
}

/// A link whose class tree has errors (already reported), rebuilt from the classes'
/// names and parents alone, so that the flows pointing into it can still be checked in
/// the same pass. The scenario is refused anyway; `None` when even the names and parents
/// do not make a tree (duplicates, unknown parents, cycles).
fn skeleton<'d>(
    def: &'d LinkDef,
    name: String,
    link: LinkSpec,
    specs: &[ClassSpec],
) -> Option<BuiltLink<'d>> {
    let bare = specs
        .iter()
        .map(|s| ClassSpec::new(&s.name, s.parent.as_deref()))
        .collect();
    let tree = ClassTree::build(link, bare).ok()?;
    Some(BuiltLink {
        def,
        name,
        tree: Arc::new(tree),
        scheduler: SchedulerKind::Fifo,
        from: None,
        to: None,
        notes: LinkNotes::default(),
        objectives: Vec::new(),
    })
}

/// Builds the class tree of a link and checks that its scheduler can run it.
fn build_link<'d>(
    ctx: &mut Ctx<'_>,
    def: &'d LinkDef,
    name: String,
    default_scheduler: Option<&Sp<SchedulerKind>>,
) -> Option<BuiltLink<'d>> {
    let rate = def.rate.as_ref()?;
    let link = LinkSpec {
        name: name.clone(),
        rate: rate.value,
        origin: Some(ctx.origin(&def.span)),
    };
    let specs = with_default_limits(&def.classes);
    let tree = match ClassTree::build(link.clone(), specs.clone()) {
        Ok(tree) => tree,
        Err(errors) => {
            let problems: Vec<Problem> = errors
                .into_iter()
                .map(|e| class_problem(def, &name, e))
                .collect();
            ctx.push_derived(problems);
            return skeleton(def, name, link, &specs);
        }
    };
    let tree = match &def.best_effort {
        None => tree,
        Some(be) => with_best_effort(ctx, def, &name, link, specs, &tree, be)?,
    };
    let rt_bursts = def
        .classes
        .iter()
        .filter_map(|c| Some((tree.id_of(&c.spec.name)?, c.rt_burst?)))
        .collect();
    let (scheduler, span) = match (&def.scheduler, default_scheduler) {
        (Some(s), _) | (None, Some(s)) => (s.value, s.span.clone()),
        (None, None) => (SchedulerKind::Fifo, def.span.clone()),
    };
    if let Err(e) = def.settings.config(scheduler).validate(&tree) {
        let problems: Vec<Problem> = e
            .problems
            .into_iter()
            .map(|p| {
                let mut problem = jobs::locate(def, &name, p);
                problem.problem = format!("under scheduler `{scheduler}`, {}", problem.problem);
                if problem.origin.is_none() {
                    problem.origin = Some(ctx.origin(&span));
                }
                problem
            })
            .collect();
        ctx.push_derived(problems);
    }
    let objectives = jobs::objectives(ctx, def, &tree, scheduler);
    let class_paths = class_paths(def, &tree);
    Some(BuiltLink {
        def,
        name,
        tree: Arc::new(tree),
        scheduler,
        from: None,
        to: None,
        objectives,
        notes: LinkNotes {
            best_effort: def.best_effort.as_ref().map(|b| b.value),
            rt_bursts,
            settings: def.settings.clone(),
            ack_path: false,
            class_paths,
        },
    })
}

/// The classes' specifications, every leaf without `limit` given
/// [`DEFAULT_LEAF_LIMIT`] (as tc does) unless it says `limit = "none"`. A leaf is a
/// class no other class names as its parent.
fn with_default_limits(classes: &[ClassDef]) -> Vec<ClassSpec> {
    let parents: std::collections::HashSet<&str> = classes
        .iter()
        .filter_map(|c| c.spec.parent.as_deref())
        .collect();
    classes
        .iter()
        .map(|c| {
            let mut spec = c.spec.clone();
            let is_leaf = !parents.contains(spec.name.as_str());
            if is_leaf && spec.limit.is_none() && !c.unlimited {
                spec.limit = Some(DEFAULT_LEAF_LIMIT);
            }
            spec
        })
        .collect()
}

/// The tree again, every leaf with its best-effort `ls` curve
/// ([`best_effort`](super::best_effort)). A leaf that has its own `ls` is a problem: the
/// two cannot both apply.
fn with_best_effort(
    ctx: &mut Ctx<'_>,
    def: &LinkDef,
    name: &str,
    link: LinkSpec,
    mut specs: Vec<ClassSpec>,
    tree: &ClassTree,
    be: &Sp<BestEffort>,
) -> Option<ClassTree> {
    let rates = best_effort::leaf_rates(tree);
    let before = ctx.problems.len();
    for (spec, class) in specs.iter_mut().zip(&def.classes) {
        let id = tree.id_of(&spec.name).or_else(|| {
            tree.template_named(&spec.name)
                .map(|t| tree.templates()[t as usize].first)
        });
        let Some(rate) = id.and_then(|id| rates[id.index()]) else {
            continue;
        };
        if spec.ls.is_some() {
            let origin = spec.origin_of("ls").cloned();
            ctx.problems.push(Problem {
                origin,
                field: Some(format!("{}.ls", class.path)),
                problem: format!(
                    "the link has `best_effort`, which gives every leaf its `ls` curve, and \
                     leaf `{}` has its own",
                    spec.name
                ),
                fix: format!(
                    "remove `ls` from the class, or `best_effort` from `{}`",
                    def.path
                ),
            });
            continue;
        }
        match be.value.curve(rate) {
            Some(c) => spec.ls = Some(c),
            None => ctx.report(
                &be.span,
                &format!("{}.best_effort.bpr", def.path),
                format!(
                    "bpr {} times the rate {rate} of leaf `{}` is beyond 2^64 bit/s",
                    be.value.bpr, spec.name
                ),
                "lower bpr",
            ),
        }
    }
    if ctx.problems.len() > before {
        return None;
    }
    match ClassTree::build(link, specs) {
        Ok(t) => Some(t),
        Err(errors) => {
            let problems: Vec<Problem> = errors
                .into_iter()
                .map(|e| class_problem(def, name, e))
                .collect();
            ctx.push_derived(problems);
            None
        }
    }
}

/// A hierarchy error as a problem, with the path of the class it is about.
pub(super) fn class_problem(def: &LinkDef, link_name: &str, e: ConfigError) -> Problem {
    let by_origin = def
        .classes
        .iter()
        .find(|c| e.origin.is_some() && c.spec.origin_of(e.field) == e.origin.as_ref());
    let by_name = || def.classes.iter().find(|c| c.spec.name == e.class);
    let path = match by_origin.or_else(by_name) {
        Some(c) => c.path.clone(),
        None if e.class == link_name => def.path.clone(),
        None => format!("class `{}`", e.class),
    };
    Problem {
        origin: e.origin,
        field: Some(format!("{path}.{}", e.field)),
        problem: e.problem,
        fix: e.fix,
    }
}
