//! tc script → [`TcConfig`]: the commands that build one interface's HTB, HFSC, DRR or
//! PRIO tree, with every default tc and the kernel apply filled in and noted.
//!
//! Semantics follow iproute2 (`tc/q_htb.c`, `tc/q_hfsc.c`, `tc/f_u32.c`,
//! `tc/f_flower.c`) and Linux (`net/sched/sch_htb.c`, `sch_hfsc.c`, `sch_drr.c`,
//! `sch_prio.c`); the defaults are listed in the crate docs. A command that asks for
//! something linkshare cannot run is not an error but an [`Untranslated`] entry with
//! the reason; a command tc itself would reject (an unknown keyword, a bad unit, a
//! class of an unknown parent) is a located [`Problem`].

use std::collections::BTreeMap;
use std::num::NonZeroU32;
use std::sync::Arc;

use linkshare_classify::Match;
use linkshare_core::hierarchy::{Limit, Origin};
use linkshare_core::sched::htb::HtbParams;
use linkshare_core::units::{Bytes, Rate};
use linkshare_scenario::{Problem, Problems};

mod class;
mod filter;

use crate::model::{Discipline, Handle, TcClass, TcConfig, TcFilter};
use crate::shell::{self, Command, Word};
use crate::show;

/// What the importer assumes about the machine the script was written for: the values
/// tc and the kernel read from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Machine {
    /// tc's clock rate for default bursts (`get_hz()`, from `/proc/net/psched`):
    /// 10⁹ on every kernel with high-resolution timers (since 2.6.31), which makes
    /// HTB's default burst `rate / 10⁹ + mtu`, about one `mtu`.
    pub hz: NonZeroU32,
    /// The interface's `txqueuelen`: the `limit` of the pfifo the kernel gives a leaf
    /// with no qdisc of its own (1000 on Ethernet and veth).
    pub txqueuelen: u64,
    /// The interface's MTU plus its link-layer header (`psched_mtu`): DRR's default
    /// quantum (1514 on Ethernet).
    pub dev_mtu: Bytes,
    /// The link rate, when the script does not imply one (the interface's speed).
    pub rate: Option<Rate>,
}

impl Default for Machine {
    fn default() -> Self {
        Machine {
            hz: NonZeroU32::new(1_000_000_000).expect("not zero"),
            txqueuelen: 1000,
            dev_mtu: Bytes(1514),
            rate: None,
        }
    }
}

/// A command the importer could not translate, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Untranslated {
    /// Where it was written.
    pub origin: Origin,
    /// The command as written.
    pub command: String,
    /// Why it is not translated, and what to do about it.
    pub reason: String,
}

/// An imported script.
#[derive(Clone, Debug)]
pub struct Imported {
    /// The configuration.
    pub config: TcConfig,
    /// What was not translated, in script order.
    pub untranslated: Vec<Untranslated>,
    /// What tc itself prints while building it (clamped quanta), located in the script.
    pub warnings: Vec<Problem>,
}

/// Imports `script` (named `file` in messages).
pub fn import(script: &str, file: &str, machine: &Machine) -> Result<Imported, Problems> {
    let file: Arc<str> = Arc::from(file);
    let commands = shell::commands(script).map_err(|errors| {
        Problems(
            errors
                .into_iter()
                .map(|e| Problem {
                    origin: Some(Origin {
                        file: file.clone(),
                        line: e.line,
                        column: e.column,
                    }),
                    field: None,
                    problem: e.problem,
                    fix: e.fix,
                })
                .collect(),
        )
    })?;
    let mut im = Importer {
        file,
        machine: *machine,
        dev: None,
        root: None,
        classes: Vec::new(),
        filters: Vec::new(),
        leaf_qdiscs: BTreeMap::new(),
        untranslated: Vec::new(),
        problems: Vec::new(),
        warnings: Vec::new(),
    };
    if show::is_show_output(&commands) {
        let shown = commands.iter().filter_map(show::as_command).collect();
        for cmd in &show::in_build_order(shown) {
            im.command(cmd);
        }
    } else {
        for cmd in &commands {
            im.command(cmd);
        }
    }
    im.finish()
}

/// Programs whose commands do not change the configuration.
const HARMLESS: &[&str] = &["set", "echo", "true", ":", "exit", "sleep", "printf"];

struct Root {
    major: u16,
    discipline: Discipline,
    default: Option<(u16, Word)>,
    bands: u16,
    origin: Origin,
}

struct ClassAt {
    class: TcClass,
    /// Per-class `mtu` for HTB default bursts.
    mtu: Option<Bytes>,
    origin: Origin,
}

struct FilterAt {
    prio: u32,
    filter: TcFilter,
    class_word: Word,
}

struct Importer {
    file: Arc<str>,
    machine: Machine,
    dev: Option<String>,
    root: Option<Root>,
    classes: Vec<ClassAt>,
    filters: Vec<FilterAt>,
    leaf_qdiscs: BTreeMap<Handle, Limit>,
    untranslated: Vec<Untranslated>,
    problems: Vec<Problem>,
    warnings: Vec<Problem>,
}

/// tc's abbreviations: `word` is a non-empty prefix of `full` (`matches()` in tc).
fn abbrev(word: &str, full: &str) -> bool {
    !word.is_empty() && full.starts_with(word)
}

/// The arguments of one command, consumed front to back.
struct Args<'c> {
    words: &'c [Word],
    next: usize,
    end: &'c Word,
}

impl<'c> Args<'c> {
    fn peek(&self) -> Option<&'c Word> {
        self.words.get(self.next)
    }
    fn take(&mut self) -> Option<&'c Word> {
        let w = self.words.get(self.next)?;
        self.next += 1;
        Some(w)
    }
}

impl Importer {
    fn origin(&self, w: &Word) -> Origin {
        Origin {
            file: self.file.clone(),
            line: w.line,
            column: w.column,
        }
    }

    fn problem(&mut self, w: &Word, field: &str, problem: String, fix: &str) {
        self.problems.push(Problem {
            origin: Some(self.origin(w)),
            field: Some(field.to_owned()),
            problem,
            fix: fix.to_owned(),
        });
    }

    fn refuse(&mut self, cmd: &Command, at: &Word, reason: String) {
        self.untranslated.push(Untranslated {
            origin: self.origin(at),
            command: cmd.text.clone(),
            reason,
        });
    }

    fn command(&mut self, cmd: &Command) {
        let program = cmd.words[0].text.rsplit('/').next().unwrap_or_default();
        if program != "tc" {
            if !HARMLESS.contains(&program) {
                self.refuse(
                    cmd,
                    &cmd.words[0],
                    format!(
                        "`{program}` is not a tc command; the importer reads tc qdisc, class \
                         and filter commands only"
                    ),
                );
            }
            return;
        }
        let mut args = Args {
            words: &cmd.words[1..],
            next: 0,
            end: &cmd.words[cmd.words.len() - 1],
        };
        while args.peek().is_some_and(|w| w.text.starts_with('-')) {
            args.take();
        }
        let Some(object) = args.take() else {
            return;
        };
        let verb = args.take();
        let verb_text = verb.map_or("", |v| v.text.as_str());
        let adds = ["add", "replace", "change"]
            .iter()
            .any(|v| abbrev(verb_text, v));
        let shows = ["show", "list", "ls"].iter().any(|v| abbrev(verb_text, v));
        let deletes = ["delete", "del"].iter().any(|v| abbrev(verb_text, v));
        if shows || (deletes && abbrev(&object.text, "qdisc")) {
            // Showing, and the customary `tc qdisc del dev X root` that clears the
            // interface first, change nothing of what is built.
            return;
        }
        if !adds {
            let at = verb.unwrap_or(object);
            self.refuse(
                cmd,
                at,
                format!(
                    "`tc {} {verb_text}` is not read: the importer builds the configuration \
                     from add, replace and change commands",
                    object.text
                ),
            );
            return;
        }
        if abbrev(&object.text, "qdisc") {
            self.qdisc(cmd, &mut args);
        } else if abbrev(&object.text, "class") {
            self.class(cmd, &mut args);
        } else if abbrev(&object.text, "filter") {
            self.filter(cmd, &mut args);
        } else {
            self.refuse(
                cmd,
                object,
                format!(
                    "`tc {}` is not read (only qdisc, class and filter)",
                    object.text
                ),
            );
        }
    }

    /// Reads `dev D`, `parent P`, `root`, `handle H`, `classid C`, `protocol P`,
    /// `prio N`/`pref N` up to the kind; returns the kind's word.
    fn head<'c>(&mut self, cmd: &Command, args: &mut Args<'c>, head: &mut Head<'c>) -> bool {
        while let Some(w) = args.take() {
            let value = |args: &mut Args<'c>| args.take();
            match w.text.as_str() {
                "dev" => head.dev = value(args),
                "root" => head.root = true,
                "parent" => head.parent = value(args),
                "handle" => head.handle = value(args),
                "classid" => head.classid = value(args),
                "protocol" => head.protocol = value(args),
                // A filter's priority; for a qdisc, `prio` is the kind.
                "prio" | "pref" | "priority" if head.filter => head.prio = value(args),
                "estimator" | "stab" | "chain" | "block" | "ingress_block" | "egress_block" => {
                    self.refuse(
                        cmd,
                        w,
                        format!("`{}` is not translated (no linkshare equivalent)", w.text),
                    );
                    return false;
                }
                _ => {
                    head.kind = Some(w);
                    return true;
                }
            }
        }
        self.problem(
            args.end,
            "kind",
            "the command names no qdisc, class or filter kind".to_owned(),
            "add the kind (htb, hfsc, drr, prio, pfifo, bfifo, u32, flower, matchall) after \
             the handles",
        );
        false
    }

    /// Checks `dev`: the first interface with a root qdisc is the one imported; commands
    /// for others are not translated. Returns whether the command is for it.
    fn on_dev(&mut self, cmd: &Command, dev: Option<&Word>, at: &Word) -> bool {
        let Some(dev) = dev else {
            self.problem(
                at,
                "dev",
                "the command names no interface".to_owned(),
                "add `dev IF` (for example `dev eth0`)",
            );
            return false;
        };
        match &self.dev {
            Some(d) if *d != dev.text => {
                let reason = format!(
                    "this is for interface `{}`, the script's first root qdisc is on `{d}`; \
                     one interface is imported at a time (a scenario is one link)",
                    dev.text
                );
                self.refuse(cmd, dev, reason);
                false
            }
            _ => true,
        }
    }

    fn handle(&mut self, w: &Word, field: &str) -> Option<Handle> {
        let h = Handle::parse(&w.text);
        if h.is_none() {
            self.problem(
                w,
                field,
                format!("`{}` is not a tc handle", w.text),
                "write MAJOR:MINOR in hexadecimal, such as `1:10` (or `1:` for the qdisc)",
            );
        }
        h
    }

    fn qdisc(&mut self, cmd: &Command, args: &mut Args<'_>) {
        let mut head = Head::default();
        if !self.head(cmd, args, &mut head) {
            return;
        }
        let kind = head.kind.expect("head returned a kind");
        if head.root && self.root.is_none() && self.dev.is_none() {
            if let Some(d) = head.dev {
                self.dev = Some(d.text.clone());
            }
        }
        if !self.on_dev(cmd, head.dev, kind) {
            return;
        }
        let k = kind.text.as_str();
        if k == "ingress" || k == "clsact" {
            self.refuse(
                cmd,
                kind,
                format!(
                    "`{k}` polices or redirects arriving traffic; linkshare shapes a link's \
                     departures (shape ingress by redirecting it to an ifb interface and \
                     importing that interface's script)"
                ),
            );
            return;
        }
        if head.root {
            self.root_qdisc(cmd, args, &head, kind);
            return;
        }
        let Some(parent_w) = head.parent else {
            self.problem(
                kind,
                "parent",
                "the qdisc is neither `root` nor has a `parent`".to_owned(),
                "write `root`, or `parent CLASSID` for a leaf's qdisc",
            );
            return;
        };
        let Some(parent) = self.handle(parent_w, "parent") else {
            return;
        };
        if !self.classes.iter().any(|c| c.class.handle == parent) {
            self.problem(
                parent_w,
                "parent",
                format!("no class {parent} was added before this qdisc"),
                "add the class first, or correct the parent's handle",
            );
            return;
        }
        let limit = match k {
            "pfifo" | "bfifo" => {
                let mut limit = None;
                while let Some(w) = args.take() {
                    if w.text == "limit" {
                        limit = args.take();
                    } else {
                        self.problem(
                            w,
                            k,
                            format!("`{}` is not an option of {k}", w.text),
                            "write `limit N`",
                        );
                        return;
                    }
                }
                match (k, limit) {
                    (_, None) => None,
                    ("pfifo", Some(w)) => match w.text.parse::<u64>() {
                        Ok(n) => Some(Limit::Packets(n)),
                        Err(_) => {
                            self.problem(
                                w,
                                "limit",
                                format!("`{}` is not a number of packets", w.text),
                                "write a whole number such as `limit 100`",
                            );
                            return;
                        }
                    },
                    (_, Some(w)) => match w.text.parse::<Bytes>() {
                        Ok(b) => Some(Limit::Bytes(b)),
                        Err(e) => {
                            self.problem(w, "limit", e.to_string(), "");
                            return;
                        }
                    },
                }
                .or(Some(if k == "pfifo" {
                    Limit::Packets(self.machine.txqueuelen)
                } else {
                    Limit::Bytes(Bytes(self.machine.txqueuelen * self.machine.dev_mtu.get()))
                }))
            }
            _ => {
                self.refuse(
                    cmd,
                    kind,
                    format!(
                        "the qdisc of class {parent} is `{k}`; linkshare's leaves are FIFO \
                         queues, so the class keeps the kernel's default pfifo (limit {}) \
                         — replace `{k}` by `pfifo limit N` to say so explicitly",
                        self.machine.txqueuelen
                    ),
                );
                return;
            }
        };
        if let Some(l) = limit {
            self.leaf_qdiscs.insert(parent, l);
        }
    }

    fn root_qdisc(&mut self, cmd: &Command, args: &mut Args<'_>, head: &Head<'_>, kind: &Word) {
        let k = kind.text.as_str();
        let major = match head.handle {
            Some(w) => match self.handle(w, "handle") {
                Some(h) if h.minor == 0 && h.major != 0 => h.major,
                Some(_) => {
                    self.problem(
                        w,
                        "handle",
                        format!("`{}` is not a qdisc handle", w.text),
                        "write MAJOR: such as `1:`",
                    );
                    return;
                }
                None => return,
            },
            None => {
                self.problem(
                    kind,
                    "handle",
                    "the root qdisc has no handle, so its classes cannot name it".to_owned(),
                    "add `handle 1:` before the kind",
                );
                return;
            }
        };
        let discipline = match k {
            "htb" => Discipline::Htb { r2q: 10 },
            "hfsc" => Discipline::Hfsc,
            "drr" => Discipline::Drr,
            "prio" => Discipline::Prio,
            _ => {
                let closest = match k {
                    "tbf" => "an HTB class with rate = ceil",
                    "cbq" => "HTB (or linkshare's cbq scheduler in the simulator)",
                    "sfq" | "fq" | "fq_codel" | "cake" | "pfifo_fast" | "pfifo" | "bfifo" => {
                        "an HTB tree with one class per kind of traffic"
                    }
                    _ => "an HTB or HFSC tree",
                };
                self.refuse(
                    cmd,
                    kind,
                    format!(
                        "the root qdisc is `{k}`; the importer reads HTB, HFSC, DRR and PRIO \
                         trees (closest: {closest})"
                    ),
                );
                return;
            }
        };
        if self.root.is_some() {
            self.problem(
                kind,
                "root",
                "a second root qdisc on the same interface replaces the first".to_owned(),
                "keep one `tc qdisc add ... root` per interface",
            );
            return;
        }
        let mut root = Root {
            major,
            discipline,
            default: None,
            bands: 3,
            origin: self.origin(kind),
        };
        while let Some(w) = args.take() {
            let value = args.take();
            let Some(v) = value else {
                self.problem(
                    w,
                    k,
                    format!("`{}` needs a value", w.text),
                    "write the option and its value",
                );
                return;
            };
            match (&mut root.discipline, w.text.as_str()) {
                (Discipline::Htb { .. } | Discipline::Hfsc, "default") => {
                    match u16::from_str_radix(v.text.trim_start_matches("0x"), 16) {
                        Ok(m) => root.default = Some((m, v.clone())),
                        Err(_) => self.problem(
                            v,
                            "default",
                            format!("`{}` is not a class minor number", v.text),
                            "write the minor in hexadecimal, such as `default 30` for 1:30",
                        ),
                    }
                }
                (Discipline::Htb { r2q }, "r2q") => match v.text.parse::<u32>() {
                    Ok(n) if n > 0 => *r2q = n,
                    _ => self.problem(
                        v,
                        "r2q",
                        format!("`{}` is not a positive whole number", v.text),
                        "write for example `r2q 10` (tc's default)",
                    ),
                },
                (Discipline::Htb { .. }, "direct_qlen") => {}
                (Discipline::Prio, "bands") => match v.text.parse::<u16>() {
                    Ok(n) if (2..=16).contains(&n) => root.bands = n,
                    _ => self.problem(
                        v,
                        "bands",
                        format!("`{}` is not a number of bands from 2 to 16", v.text),
                        "write for example `bands 3` (tc's default)",
                    ),
                },
                _ => {
                    self.refuse(
                        cmd,
                        w,
                        format!(
                            "the {k} option `{}` has no linkshare equivalent and is not \
                             translated",
                            w.text
                        ),
                    );
                    // Skip the rest: its values cannot be told from options.
                    while args.take().is_some() {}
                }
            }
        }
        if root.discipline == Discipline::Prio {
            for band in 1..=root.bands {
                let mut c = TcClass::new(Handle { major, minor: band }, None);
                c.priority = Some((band - 1) as u8);
                self.classes.push(ClassAt {
                    class: c,
                    mtu: None,
                    origin: root.origin.clone(),
                });
            }
        }
        self.root = Some(root);
    }

    /// Applies the defaults, checks filter targets, and returns the result.
    fn finish(mut self) -> Result<Imported, Problems> {
        let Some(root) = self.root.take() else {
            if self.problems.is_empty() {
                self.problems.push(Problem {
                    origin: Some(Origin {
                        file: self.file.clone(),
                        line: 1,
                        column: 1,
                    }),
                    field: None,
                    problem: "the script adds no HTB, HFSC, DRR or PRIO root qdisc".to_owned(),
                    fix: "add `tc qdisc add dev IF root handle 1: htb default N` and its classes"
                        .to_owned(),
                });
            }
            self.untranslated.clear();
            return Err(Problems(self.problems));
        };
        let mut config = TcConfig {
            dev: self.dev.clone().unwrap_or_default(),
            rate: Rate::ZERO,
            major: root.major,
            discipline: root.discipline.clone(),
            default: None,
            classes: Vec::new(),
            filters: Vec::new(),
        };
        let handles: Vec<Handle> = self.classes.iter().map(|c| c.class.handle).collect();
        let is_leaf = |h: Handle| !self.classes.iter().any(|c| c.class.parent == Some(h));
        let leaves: Vec<bool> = handles.iter().map(|h| is_leaf(*h)).collect();
        for (at, leaf) in std::mem::take(&mut self.classes).into_iter().zip(leaves) {
            let mut c = at.class;
            if leaf {
                match self.leaf_qdiscs.get(&c.handle) {
                    Some(l) => c.limit = Some(*l),
                    None => {
                        c.limit = Some(Limit::Packets(self.machine.txqueuelen));
                        c.defaults.push((
                            "limit",
                            format!(
                                "the kernel's default leaf qdisc: pfifo of the interface's \
                                 txqueuelen ({})",
                                self.machine.txqueuelen
                            ),
                        ));
                    }
                }
            }
            match &config.discipline {
                Discipline::Htb { r2q } => {
                    let params = HtbParams {
                        r2q: NonZeroU32::new(*r2q).expect("r2q checked positive"),
                        hz: self.machine.hz,
                        mtu: at.mtu.unwrap_or(HtbParams::default().mtu),
                    };
                    class::htb_defaults(&mut c, leaf, &params, &at.origin, &mut self.warnings);
                }
                Discipline::Drr if leaf && c.quantum.is_none() => {
                    c.quantum = Some(self.machine.dev_mtu);
                    c.defaults.push((
                        "quantum",
                        format!(
                            "DRR's default: the interface's MTU with its link-layer header \
                             ({})",
                            self.machine.dev_mtu
                        ),
                    ));
                }
                Discipline::Hfsc if !leaf && c.rt.is_some() => {
                    c.rt = None;
                    c.defaults.push((
                        "rt",
                        "the script gives this interior class a real-time curve (`sc` or \
                         `rt`), which the kernel ignores: real-time service is for leaves"
                            .to_owned(),
                    ));
                }
                _ => {}
            }
            if !leaf {
                c.quantum = c.quantum.filter(|_| config.discipline == Discipline::Drr);
            }
            config.classes.push(c);
        }
        config.default = match (&config.discipline, &root.default) {
            (Discipline::Prio, _) => Some(Handle {
                major: root.major,
                minor: 2,
            }),
            (_, Some((minor, w))) => {
                let h = Handle {
                    major: root.major,
                    minor: *minor,
                };
                if handles.contains(&h) && config.is_leaf(h) {
                    Some(h)
                } else {
                    let w = w.clone();
                    let origin = self.origin(&w);
                    self.untranslated.push(Untranslated {
                        origin,
                        command: format!("default {}", w.text),
                        reason: format!(
                            "the default class {h} is not a leaf of the tree: the kernel then \
                             sends unclassified packets unshaped (HTB's direct queue) or drops \
                             them (HFSC); the scenario gets no [shaper] default — name a leaf"
                        ),
                    });
                    None
                }
            }
            (_, None) => None,
        };
        self.filters.sort_by_key(|f| f.prio);
        // DRR and PRIO have no `default`: a last filter matching every packet is one.
        if matches!(config.discipline, Discipline::Drr | Discipline::Prio)
            && let Some(last) = self.filters.last()
            && last.filter.matches == Match::default()
            && config.is_leaf(last.filter.class)
        {
            config.default = Some(last.filter.class);
            self.filters.pop();
        }
        for f in std::mem::take(&mut self.filters) {
            let h = f.filter.class;
            if !handles.contains(&h) {
                self.problem(
                    &f.class_word,
                    "flowid",
                    format!("no class {h} in the tree"),
                    "name one of the classes added by the script",
                );
            } else if !config.is_leaf(h) {
                let origin = self.origin(&f.class_word);
                self.untranslated.push(Untranslated {
                    origin,
                    command: format!("flowid {h}"),
                    reason: format!(
                        "the filter sends packets to interior class {h}; the shaper's filters \
                         name leaves"
                    ),
                });
            } else {
                config.filters.push(f.filter);
            }
        }
        config.rate = match self.machine.rate {
            Some(r) => r,
            None => match link_rate(&config) {
                Some(r) => r,
                // A class the script failed to add leaves the rate unknown; say so only
                // when nothing else is wrong.
                None if !self.problems.is_empty() => Rate::ZERO,
                None => {
                    self.problems.push(Problem {
                        origin: Some(root.origin.clone()),
                        field: Some("rate".to_owned()),
                        problem: "the script does not say the link's rate (its top classes \
                                  have no ceil or upper-limit curve)"
                            .to_owned(),
                        fix: "give the interface's rate with --rate (for example --rate \
                              100mbit)"
                            .to_owned(),
                    });
                    Rate::ZERO
                }
            },
        };
        if !self.problems.is_empty() {
            let mut p = Problems(self.problems);
            p.0.sort_by_key(|p| p.origin.as_ref().map(|o| (o.line, o.column)));
            return Err(p);
        }
        self.untranslated
            .sort_by_key(|u| (u.origin.line, u.origin.column));
        Ok(Imported {
            config,
            untranslated: self.untranslated,
            warnings: self.warnings,
        })
    }
}

/// `head` of a command.
#[derive(Default)]
struct Head<'c> {
    dev: Option<&'c Word>,
    root: bool,
    parent: Option<&'c Word>,
    handle: Option<&'c Word>,
    classid: Option<&'c Word>,
    protocol: Option<&'c Word>,
    prio: Option<&'c Word>,
    kind: Option<&'c Word>,
    /// Whether this is a filter's head.
    filter: bool,
}

/// The link rate a script implies: the sum, over the classes directly under the
/// qdisc, of the most each may send (HTB ceil, HFSC upper-limit curve).
fn link_rate(config: &TcConfig) -> Option<Rate> {
    let mut total: u64 = 0;
    for c in config.classes.iter().filter(|c| c.parent.is_none()) {
        let most = match config.discipline {
            Discipline::Htb { .. } => c.ceil,
            Discipline::Hfsc => c.ul.map(|u| u.m2),
            Discipline::Drr | Discipline::Prio => None,
        }?;
        total = total.saturating_add(most.bps());
    }
    (total > 0).then_some(Rate::from_bps(total))
}
