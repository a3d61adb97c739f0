//! The class hierarchy: a validated tree of named classes whose root is the link.
//!
//! A [`ClassTree`] is built once from a [`LinkSpec`] and a list of [`ClassSpec`]s by
//! [`ClassTree::build`], which checks everything at once and reports every problem as a
//! [`ConfigError`] naming the class, the field, where it was written ([`Origin`]), what
//! is wrong and how to fix it. A tree that exists is valid: schedulers built from it
//! never re-check.
//!
//! Classes are addressed by dense [`ClassId`]s; the root (the link) is [`ClassId::ROOT`],
//! and the other classes follow in the order they were given, so ids are deterministic.

use std::fmt;
use std::sync::Arc;

use crate::curve::ServiceCurve;
use crate::echo::echo;
use crate::units::{Bytes, Duration, Rate};

/// Dense index of a class in its [`ClassTree`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ClassId(pub u32);

impl ClassId {
    /// The root class: the link itself.
    pub const ROOT: ClassId = ClassId(0);

    /// The id as an index into per-class arrays.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

/// Where something was written: `file:line:column` (1-based).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Origin {
    /// The file, as the user named it.
    pub file: Arc<str>,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// The limit faces give a leaf whose configuration names none: 1 000 packets, the
/// queue `tc` gives a class by default (the interface's `txqueuelen`), so that no queue
/// grows without bound unless a user asks for it.
///
/// The core applies no default itself: a [`ClassSpec`] says exactly what runs, and
/// `limit: None` there is an unbounded queue (the papers' models and the property tests
/// use it). Scenario files — and through them every face: the command line, the shaper,
/// the Python module — give this limit to every leaf without `limit`, and an unbounded
/// queue only for `limit = "none"` spelled out.
pub const DEFAULT_LEAF_LIMIT: Limit = Limit::Packets(1000);

/// A buffer limit, in packets or in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Limit {
    /// At most this many packets.
    Packets(u64),
    /// At most this many bytes.
    Bytes(Bytes),
}

impl Limit {
    /// Whether a queue holding `packets` and `bytes` can take one more packet of `len`.
    #[inline]
    pub fn admits(self, packets: u64, bytes: Bytes, len: Bytes) -> bool {
        match self {
            Limit::Packets(n) => packets < n,
            Limit::Bytes(b) => bytes.0 + len.0 <= b.0,
        }
    }

    /// Whether a queue holding `packets` and `bytes` is within the limit.
    #[inline]
    pub fn holds(self, packets: u64, bytes: Bytes) -> bool {
        match self {
            Limit::Packets(n) => packets <= n,
            Limit::Bytes(b) => bytes.0 <= b.0,
        }
    }
}

/// The link at the root of the tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkSpec {
    /// Name of the root class (for example `"link"`).
    pub name: String,
    /// Line rate.
    pub rate: Rate,
    /// Where the link was declared.
    pub origin: Option<Origin>,
}

/// One class as the user wrote it. Every parameter is optional; which ones a discipline
/// uses is documented with the discipline.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClassSpec {
    /// Unique name: letters, digits, `_`, `-`, `.` and `:` (`:` for tc's handles, such
    /// as `1:10`).
    pub name: String,
    /// Name of the parent class; `None` for a child of the root.
    pub parent: Option<String>,
    /// Relative share among siblings (DRR, HLS, WFQ family). Must be positive.
    pub weight: Option<u32>,
    /// Guaranteed rate (HTB `rate`, CBQ allocation, HLS/HDRR guarantees).
    pub rate: Option<Rate>,
    /// Upper bound on the rate including borrowing (HTB `ceil`).
    pub ceil: Option<Rate>,
    /// Bytes that may be sent at once above `rate` (HTB `burst`).
    pub burst: Option<Bytes>,
    /// Bytes that may be sent at once above `ceil` (HTB `cburst`).
    pub cburst: Option<Bytes>,
    /// Real-time service curve (H-FSC, leaves only).
    pub rt: Option<ServiceCurve>,
    /// Link-sharing service curve (H-FSC).
    pub ls: Option<ServiceCurve>,
    /// Upper-limit service curve (H-FSC).
    pub ul: Option<ServiceCurve>,
    /// Priority 0 (highest) to 7.
    pub priority: Option<u8>,
    /// Buffer limit of the class's queue; `None`: unbounded (see [`DEFAULT_LEAF_LIMIT`]
    /// for what faces give a leaf by default).
    pub limit: Option<Limit>,
    /// Largest packet the class sends (`L_max`); longer packets are dropped.
    pub max_packet: Option<Bytes>,
    /// DRR/HTB quantum in bytes.
    pub quantum: Option<Bytes>,
    /// Makes the class a per-flow template ([`crate::perflow`]): the tree holds
    /// `max_flows` leaf instances of it instead, each with these parameters.
    pub per_flow: Option<PerFlow>,
    /// Where the class was declared.
    pub origin: Option<Origin>,
    /// Where individual fields were written, by field name; falls back to `origin`.
    pub field_origins: Vec<(&'static str, Origin)>,
}

/// A per-flow class template's settings ([`crate::perflow`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PerFlow {
    /// Instances preallocated: at most this many flows have a class of their own at once.
    pub max_flows: u32,
    /// How long an instance must have been empty before its flow is retired: the class
    /// then serves the next new flow, and the old flow, if it comes back, is a new flow.
    pub idle: Duration,
}

/// Most instances one per-flow template may have.
pub const MAX_FLOWS: u32 = 1 << 20;

/// A per-flow template of a validated tree: its instances are the consecutive leaf
/// classes `first .. first + count`, named `NAME#0`, `NAME#1`, ...
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    /// The name the configuration gave the template (flows name it).
    pub name: String,
    /// The first instance.
    pub first: ClassId,
    /// Number of instances (`max_flows`).
    pub count: u32,
    /// How long an instance must have been empty before its flow is retired.
    pub idle: Duration,
}

impl Template {
    /// Whether `class` is one of the template's instances.
    #[inline]
    pub fn contains(&self, class: ClassId) -> bool {
        class.0.wrapping_sub(self.first.0) < self.count
    }

    /// The instances, in id order.
    pub fn instances(&self) -> impl Iterator<Item = ClassId> + '_ {
        (self.first.0..self.first.0 + self.count).map(ClassId)
    }
}

impl ClassSpec {
    /// A class named `name` under `parent` (`None`: under the root), nothing else set.
    pub fn new(name: &str, parent: Option<&str>) -> ClassSpec {
        ClassSpec {
            name: name.to_owned(),
            parent: parent.map(str::to_owned),
            ..ClassSpec::default()
        }
    }

    /// Where `field` was written, or where the class was, if known.
    pub fn origin_of(&self, field: &str) -> Option<&Origin> {
        self.field_origins
            .iter()
            .find(|(f, _)| *f == field)
            .map(|(_, o)| o)
            .or(self.origin.as_ref())
    }
}

/// A class of a validated tree.
#[derive(Clone, Debug)]
pub struct Class {
    /// Its id.
    pub id: ClassId,
    /// Its parent; `None` only for the root.
    pub parent: Option<ClassId>,
    /// Its children, in declaration order.
    pub children: Vec<ClassId>,
    /// Distance from the root (the root is 0).
    pub depth: u32,
    /// The parameters as written (the root's spec holds the link's name and rate; an
    /// instance of a per-flow template has the template's, named `NAME#i`, without
    /// `per_flow`).
    pub spec: ClassSpec,
    /// The per-flow template it is an instance of (index in [`ClassTree::templates`]).
    pub template: Option<u32>,
}

impl Class {
    /// The class's name.
    pub fn name(&self) -> &str {
        &self.spec.name
    }
    /// Whether packets can be queued here: a class without children (other than the
    /// root of a tree with no classes at all).
    pub fn is_leaf(&self) -> bool {
        self.children.is_empty() && self.parent.is_some()
    }
    /// The weight, 1 if not given.
    pub fn weight(&self) -> u32 {
        self.spec.weight.unwrap_or(1)
    }
    /// The maximum packet size `L_max`, 1500 B if not given.
    pub fn max_packet(&self) -> Bytes {
        self.spec.max_packet.unwrap_or(DEFAULT_MAX_PACKET)
    }
}

/// `L_max` of a class that does not declare one.
pub const DEFAULT_MAX_PACKET: Bytes = Bytes(1500);

/// Highest priority number accepted (HTB's 8 priorities, 0 highest).
pub const MAX_PRIORITY: u8 = 7;

/// One problem found while building a [`ClassTree`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// The class concerned.
    pub class: String,
    /// The field concerned (`"name"`, `"parent"`, `"ceil"`, ...).
    pub field: &'static str,
    /// Where it was written, when known.
    pub origin: Option<Origin>,
    /// What is wrong.
    pub problem: String,
    /// How to fix it.
    pub fix: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(o) = &self.origin {
            write!(f, "{o}: ")?;
        }
        write!(
            f,
            "class `{}`, field `{}`: {}; {}",
            echo(&self.class),
            self.field,
            self.problem,
            self.fix
        )
    }
}

impl std::error::Error for ConfigError {}

/// A validated class hierarchy.
#[derive(Clone, Debug)]
pub struct ClassTree {
    classes: Vec<Class>,
    /// Indices into `classes` sorted by name, for lookups by name.
    by_name: Vec<ClassId>,
    leaves: Vec<ClassId>,
    templates: Vec<Template>,
}

impl ClassTree {
    /// Builds and validates a tree. Returns every problem found, not just the first.
    ///
    /// A class with `per_flow` is a template: it is checked as one leaf of the tree as
    /// written (it may not have children), then replaced by `max_flows` instances at its
    /// place in the declaration order, so the classes declared after it get ids after
    /// its instances.
    ///
    /// Rates are not checked against each other here: whether a ceil below the rate or
    /// children's rates above their parent's are errors depends on the discipline (see
    /// [`guarantee_problems`]).
    pub fn build(link: LinkSpec, specs: Vec<ClassSpec>) -> Result<ClassTree, Vec<ConfigError>> {
        if specs.iter().all(|s| s.per_flow.is_none()) {
            return ClassTree::assemble(link, specs, Vec::new(), true);
        }
        let as_written = ClassTree::assemble(link.clone(), specs.clone(), Vec::new(), true)?;
        let mut errors = Vec::new();
        let mut expanded = Vec::new();
        let mut templates = Vec::new();
        for spec in specs {
            let Some(pf) = spec.per_flow else {
                expanded.push(spec);
                continue;
            };
            let has_children = as_written
                .id_of(&spec.name)
                .is_some_and(|id| !as_written.get(id).children.is_empty());
            if has_children {
                errors.push(err(
                    &spec,
                    "per_flow",
                    "a per-flow class has children",
                    "per-flow classes are leaves (each flow gets one); put the children \
                     under another class, or remove `per_flow`",
                ));
            }
            if pf.max_flows == 0 || pf.max_flows > MAX_FLOWS {
                errors.push(err(
                    &spec,
                    "per_flow",
                    &format!("max_flows is {}", pf.max_flows),
                    &format!("give between 1 and {MAX_FLOWS} flows"),
                ));
                continue;
            }
            templates.push(Template {
                name: spec.name.clone(),
                first: ClassId(expanded.len() as u32 + 1),
                count: pf.max_flows,
                idle: pf.idle,
            });
            for i in 0..pf.max_flows {
                let mut instance = spec.clone();
                instance.name = format!("{}#{i}", spec.name);
                instance.per_flow = None;
                expanded.push(instance);
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        ClassTree::assemble(link, expanded, templates, false)
    }

    /// Builds and validates a tree of `specs`, whose per-flow templates have been
    /// replaced by their instances (`templates`); `check_fields` checks each class's own
    /// fields (instances were checked as their template).
    fn assemble(
        link: LinkSpec,
        specs: Vec<ClassSpec>,
        templates: Vec<Template>,
        check_each: bool,
    ) -> Result<ClassTree, Vec<ConfigError>> {
        let mut errors = Vec::new();
        let root = ClassSpec {
            name: link.name,
            rate: Some(link.rate),
            origin: link.origin,
            ..ClassSpec::default()
        };
        if link.rate.0 == 0 {
            errors.push(err(
                &root,
                "rate",
                "the link rate is zero",
                "give the link a positive rate such as \"100mbit\"",
            ));
        }
        let mut all = Vec::with_capacity(specs.len() + 1);
        all.push(root);
        all.extend(specs);
        if check_each {
            for spec in &all[1..] {
                check_fields(spec, &mut errors);
            }
        }
        let by_name = sorted_names(&all, &mut errors);
        let lookup = |name: &str| -> Option<ClassId> {
            by_name
                .binary_search_by(|id| all[id.index()].name.as_str().cmp(name))
                .ok()
                .map(|i| by_name[i])
        };
        let mut parents = vec![None; all.len()];
        for (i, spec) in all.iter().enumerate().skip(1) {
            parents[i] = match &spec.parent {
                None => Some(ClassId::ROOT),
                Some(p) => {
                    let found = lookup(p);
                    if found.is_none() {
                        errors.push(err(
                            spec,
                            "parent",
                            &format!("no class is named `{}`", echo(p)),
                            &format!("name an existing class, or leave `parent` out to put the class under the link `{}`", all[0].name),
                        ));
                    }
                    found
                }
            };
        }
        let depths = depths(&all, &parents, &mut errors);
        if !errors.is_empty() {
            return Err(errors);
        }
        let mut classes: Vec<Class> = all
            .into_iter()
            .enumerate()
            .map(|(i, spec)| Class {
                id: ClassId(i as u32),
                parent: parents[i],
                children: Vec::new(),
                depth: depths[i],
                spec,
                template: templates
                    .iter()
                    .position(|t| t.contains(ClassId(i as u32)))
                    .map(|t| t as u32),
            })
            .collect();
        for (i, parent) in parents.iter().enumerate().skip(1) {
            let p = parent
                .expect("every class but the root has a parent here")
                .index();
            classes[p].children.push(ClassId(i as u32));
        }
        let leaves = classes
            .iter()
            .filter(|c| c.is_leaf())
            .map(|c| c.id)
            .collect();
        Ok(ClassTree {
            classes,
            by_name,
            leaves,
            templates,
        })
    }

    /// The per-flow templates, in declaration order.
    pub fn templates(&self) -> &[Template] {
        &self.templates
    }

    /// The index of the per-flow template named `name`.
    pub fn template_named(&self, name: &str) -> Option<u32> {
        self.templates
            .iter()
            .position(|t| t.name == name)
            .map(|t| t as u32)
    }

    /// The root (the link).
    pub fn root(&self) -> &Class {
        &self.classes[0]
    }
    /// The link rate.
    pub fn link_rate(&self) -> Rate {
        self.classes[0].spec.rate.unwrap_or(Rate::ZERO)
    }
    /// A class by id. Panics if the id is not from this tree.
    pub fn get(&self, id: ClassId) -> &Class {
        &self.classes[id.index()]
    }
    /// A class by name.
    pub fn id_of(&self, name: &str) -> Option<ClassId> {
        self.by_name
            .binary_search_by(|id| self.classes[id.index()].spec.name.as_str().cmp(name))
            .ok()
            .map(|i| self.by_name[i])
    }
    /// Number of classes including the root; ids are `0..len()`.
    pub fn len(&self) -> usize {
        self.classes.len()
    }
    /// Whether the tree holds only the root.
    pub fn is_empty(&self) -> bool {
        self.classes.len() == 1
    }
    /// All classes, root first, in id order.
    pub fn classes(&self) -> &[Class] {
        &self.classes
    }
    /// The leaves (classes that hold packets), in id order.
    pub fn leaves(&self) -> &[ClassId] {
        &self.leaves
    }
    /// Whether `id` is a leaf of this tree.
    pub fn is_leaf(&self, id: ClassId) -> bool {
        self.classes.get(id.index()).is_some_and(Class::is_leaf)
    }
    /// The ancestors of `id` from its parent up to the root.
    pub fn ancestors(&self, id: ClassId) -> impl Iterator<Item = ClassId> + '_ {
        let mut cur = self.classes[id.index()].parent;
        core::iter::from_fn(move || {
            let c = cur?;
            cur = self.classes[c.index()].parent;
            Some(c)
        })
    }
    /// A tree of `n` leaves directly under a link of rate `rate`, named `c0`, `c1`, ...
    /// with weight 1 (a convenience for tests and benchmarks).
    pub fn flat(rate: Rate, n: usize) -> ClassTree {
        let specs = (0..n)
            .map(|i| ClassSpec::new(&format!("c{i}"), None))
            .collect();
        let link = LinkSpec {
            name: "link".into(),
            rate,
            origin: None,
        };
        ClassTree::build(link, specs).expect("a flat tree is always valid")
    }
}

fn err(spec: &ClassSpec, field: &'static str, problem: &str, fix: &str) -> ConfigError {
    ConfigError {
        class: spec.name.clone(),
        field,
        origin: spec.origin_of(field).cloned(),
        problem: problem.to_owned(),
        fix: fix.to_owned(),
    }
}

/// Letters, digits, `_`, `-`, `.`, `:`; or an instance's name, `NAME#N` with `N` decimal
/// (the names [`ClassTree::build`] gives a per-flow template's instances, which a tree
/// rebuilt from them, such as FSC's flattened copy, must accept).
fn valid_name(name: &str) -> bool {
    let plain = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':'))
    };
    match name.split_once('#') {
        None => plain(name),
        Some((base, n)) => plain(base) && !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()),
    }
}

/// Checks each field of one class on its own.
fn check_fields(s: &ClassSpec, errors: &mut Vec<ConfigError>) {
    if !valid_name(&s.name) {
        errors.push(err(
            s,
            "name",
            &format!("`{}` is not a valid class name", echo(&s.name)),
            "use letters, digits, `_`, `-`, `.` and `:` only",
        ));
    }
    if s.weight == Some(0) {
        errors.push(err(
            s,
            "weight",
            "the weight is zero",
            "give a positive integer weight, or leave it out for 1",
        ));
    }
    if s.rate == Some(Rate::ZERO) {
        errors.push(err(
            s,
            "rate",
            "the rate is zero",
            "give a positive rate such as \"1mbit\", or leave it out",
        ));
    }
    for (field, v) in [
        ("burst", s.burst),
        ("cburst", s.cburst),
        ("quantum", s.quantum),
        ("max_packet", s.max_packet),
    ] {
        if v == Some(Bytes::ZERO) {
            errors.push(err(
                s,
                field,
                &format!("{field} is zero"),
                &format!("give a positive size such as \"1500b\", or leave {field} out"),
            ));
        }
    }
    if let Some(Limit::Packets(0) | Limit::Bytes(Bytes(0))) = s.limit {
        errors.push(err(
            s,
            "limit",
            "the buffer limit is zero",
            "give a positive limit, or leave it out for an unlimited queue",
        ));
    }
    if let Some(p) = s.priority
        && p > MAX_PRIORITY
    {
        errors.push(err(
            s,
            "priority",
            &format!("priority {p} is out of range"),
            &format!("use 0 (highest) to {MAX_PRIORITY}"),
        ));
    }
    for (field, c) in [("rt", s.rt), ("ls", s.ls), ("ul", s.ul)] {
        if c.is_some_and(|c| c.is_zero()) {
            errors.push(err(
                s,
                field,
                "the service curve is zero everywhere",
                "give the curve a positive rate, or leave it out",
            ));
        }
    }
}

/// Sorted index by name; reports duplicates.
fn sorted_names(all: &[ClassSpec], errors: &mut Vec<ConfigError>) -> Vec<ClassId> {
    let mut ids: Vec<ClassId> = (0..all.len() as u32).map(ClassId).collect();
    ids.sort_by(|a, b| all[a.index()].name.cmp(&all[b.index()].name).then(a.cmp(b)));
    for w in ids.windows(2) {
        let (first, dup) = (&all[w[0].index()], &all[w[1].index()]);
        if first.name == dup.name {
            let at = first
                .origin
                .as_ref()
                .map_or(String::new(), |o| format!(" at {o}"));
            let what = if w[0] == ClassId::ROOT {
                "the link"
            } else {
                "another class"
            };
            errors.push(err(
                dup,
                "name",
                &format!("{what} is already named `{}`{at}", echo(&dup.name)),
                "give every class a unique name",
            ));
        }
    }
    ids.dedup_by(|a, b| all[a.index()].name == all[b.index()].name);
    ids
}

/// Depth of every class; reports cycles (classes whose parent chain never reaches the root).
fn depths(
    all: &[ClassSpec],
    parents: &[Option<ClassId>],
    errors: &mut Vec<ConfigError>,
) -> Vec<u32> {
    let mut depth = vec![u32::MAX; all.len()];
    depth[0] = 0;
    for start in 1..all.len() {
        let mut chain = Vec::new();
        let mut cur = start;
        let mut cyclic = false;
        while depth[cur] == u32::MAX {
            if chain.contains(&cur) {
                cyclic = true;
                break;
            }
            chain.push(cur);
            match parents[cur] {
                Some(p) => cur = p.index(),
                None => break, // unknown parent, reported elsewhere
            }
        }
        if cyclic {
            // Classes are marked as they are visited, so each cycle is reported once.
            let from = chain.iter().position(|&i| i == cur).unwrap_or(0);
            let mut names: Vec<&str> = chain[from..]
                .iter()
                .map(|&i| all[i].name.as_str())
                .collect();
            names.push(&all[cur].name);
            errors.push(err(
                &all[cur],
                "parent",
                &format!("the parents form a cycle: {}", names.join(" -> ")),
                "make one class of the cycle a child of the link or of a class outside it",
            ));
            for &i in &chain {
                depth[i] = 0;
            }
            continue;
        }
        let base = depth[cur];
        if base == u32::MAX {
            continue;
        }
        for (k, &i) in chain.iter().rev().enumerate() {
            depth[i] = base + 1 + k as u32;
        }
    }
    depth
}

/// Rates that cannot all be guaranteed: a class whose `ceil` is below its `rate`, and a
/// class (the link included) whose children's given rates add up to more than its own
/// rate (per-flow instances each counted). Every discipline refuses these
/// ([`crate::sched::SchedulerConfig::validate`]) except HTB, which, like Linux, runs
/// them and warns ([`crate::sched::htb::warnings`]).
pub fn guarantee_problems(tree: &ClassTree) -> Vec<ConfigError> {
    let mut errors = Vec::new();
    for c in tree.classes() {
        let spec = &c.spec;
        if let (Some(rate), Some(ceil)) = (spec.rate, spec.ceil)
            && ceil < rate
        {
            errors.push(err(
                spec,
                "ceil",
                &format!("ceil {ceil} is below rate {rate}"),
                "raise ceil to at least rate, or leave it out to use rate",
            ));
        }
        let Some(parent_rate) = spec.rate else {
            continue;
        };
        let sum = c
            .children
            .iter()
            .filter_map(|k| tree.get(*k).spec.rate)
            .fold(0u64, |s, r| s.saturating_add(r.0));
        if sum > parent_rate.0 {
            let names: Vec<&str> = c.children.iter().map(|k| tree.get(*k).name()).collect();
            errors.push(ConfigError {
                class: spec.name.clone(),
                field: "rate",
                origin: spec.origin_of("rate").cloned(),
                problem: format!(
                    "its children's rates add up to {}, above its own rate {parent_rate} (children: {})",
                    Rate(sum),
                    names.join(", ")
                ),
                fix: format!(
                    "lower the children's rates (starting with `{}`) or raise this class's rate",
                    names[0]
                ),
            });
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link() -> LinkSpec {
        LinkSpec {
            name: "link".into(),
            rate: Rate::from_mbit(10),
            origin: None,
        }
    }

    #[test]
    fn builds_a_tree_in_declaration_order() {
        let t = ClassTree::build(
            link(),
            vec![
                ClassSpec::new("a", None),
                ClassSpec::new("a1", Some("a")),
                ClassSpec::new("b", None),
            ],
        )
        .unwrap();
        assert_eq!(t.len(), 4);
        assert_eq!(t.id_of("a1"), Some(ClassId(2)));
        assert_eq!(t.leaves(), &[ClassId(2), ClassId(3)]);
        assert_eq!(t.get(ClassId(2)).depth, 2);
        assert_eq!(
            t.ancestors(ClassId(2)).collect::<Vec<_>>(),
            vec![ClassId(1), ClassId::ROOT]
        );
    }

    #[test]
    fn reports_every_problem_at_once() {
        let mut over = ClassSpec::new("x", None);
        over.rate = Some(Rate::from_mbit(8));
        let mut over2 = ClassSpec::new("y", None);
        over2.rate = Some(Rate::from_mbit(8));
        over2.ceil = Some(Rate::from_mbit(4));
        let mut zero = ClassSpec::new("z", None);
        zero.weight = Some(0);
        let errs = ClassTree::build(
            link(),
            vec![
                ClassSpec::new("a", Some("nope")),
                ClassSpec::new("a", None),
                over,
                over2,
                zero,
            ],
        )
        .unwrap_err();
        let fields: Vec<(&str, &str)> = errs.iter().map(|e| (e.class.as_str(), e.field)).collect();
        assert!(fields.contains(&("a", "parent")), "{fields:?}");
        assert!(fields.contains(&("a", "name")), "{fields:?}");
        assert!(fields.contains(&("z", "weight")), "{fields:?}");
    }

    #[test]
    fn reports_cycles_once() {
        let errs = ClassTree::build(
            link(),
            vec![
                ClassSpec::new("a", Some("b")),
                ClassSpec::new("b", Some("a")),
                ClassSpec::new("c", Some("a")),
            ],
        )
        .unwrap_err();
        let cycles: Vec<_> = errs
            .iter()
            .filter(|e| e.problem.contains("cycle"))
            .collect();
        assert_eq!(cycles.len(), 1, "{errs:?}");
    }

    #[test]
    fn rates_that_cannot_all_be_guaranteed() {
        let mut a = ClassSpec::new("a", None);
        a.rate = Some(Rate::from_mbit(6));
        let mut b = ClassSpec::new("b", None);
        b.rate = Some(Rate::from_mbit(6));
        b.ceil = Some(Rate::from_mbit(4));
        // The tree is built (HTB runs it, as Linux does); the problems are listed for
        // the disciplines that refuse them.
        let t = ClassTree::build(link(), vec![a, b]).unwrap();
        let errs = guarantee_problems(&t);
        assert_eq!(errs.len(), 2, "{errs:?}");
        assert_eq!((errs[0].class.as_str(), errs[0].field), ("link", "rate"));
        assert!(errs[0].problem.contains("12mbit"), "{}", errs[0].problem);
        assert_eq!((errs[1].class.as_str(), errs[1].field), ("b", "ceil"));
        assert!(errs[1].problem.contains("ceil 4mbit is below rate 6mbit"));
    }
}
