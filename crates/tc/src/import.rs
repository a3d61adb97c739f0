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

use linkshare_classify::frame::{ETHERTYPE_ARP, ETHERTYPE_IPV4, ETHERTYPE_IPV6, proto};
use linkshare_classify::{DscpSet, Match, PortRange, Prefix};
use linkshare_core::curve::ServiceCurve;
use linkshare_core::hierarchy::{Limit, Origin};
use linkshare_core::sched::htb::{self, HtbParams};
use linkshare_core::units::{Bytes, Duration, Rate};
use linkshare_scenario::{Problem, Problems};

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
        let Some(class) = self.classes.iter().position(|c| c.class.handle == parent) else {
            self.problem(
                parent_w,
                "parent",
                format!("no class {parent} was added before this qdisc"),
                "add the class first, or correct the parent's handle",
            );
            return;
        };
        let _ = class;
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

    fn class(&mut self, cmd: &Command, args: &mut Args<'_>) {
        let mut head = Head::default();
        if !self.head(cmd, args, &mut head) {
            return;
        }
        let kind = head.kind.expect("head returned a kind");
        if !self.on_dev(cmd, head.dev, kind) {
            return;
        }
        let Some(root) = &self.root else {
            self.problem(
                kind,
                "parent",
                "a class is added before the root qdisc".to_owned(),
                "add `tc qdisc add dev IF root handle 1: htb` (or hfsc, drr) first",
            );
            return;
        };
        let (major, discipline) = (root.major, root.discipline.clone());
        if kind.text != discipline.name() {
            self.problem(
                kind,
                "kind",
                format!(
                    "a `{}` class under the root qdisc `{}`",
                    kind.text,
                    discipline.name()
                ),
                "classes have the kind of their qdisc",
            );
            return;
        }
        if discipline == Discipline::Prio {
            self.problem(
                kind,
                "kind",
                "PRIO has no classes to add: its bands are classes 1 to `bands`".to_owned(),
                "remove the command; set the number of bands with `bands N` on the qdisc",
            );
            return;
        }
        let (Some(parent_w), Some(classid_w)) = (head.parent, head.classid) else {
            self.problem(
                kind,
                "classid",
                "the class needs `parent` and `classid`".to_owned(),
                "write `parent 1: classid 1:10` (or `parent 1:1 classid 1:10`)",
            );
            return;
        };
        let (Some(parent), Some(handle)) = (
            self.handle(parent_w, "parent"),
            self.handle(classid_w, "classid"),
        ) else {
            return;
        };
        if handle.major != major || handle.minor == 0 {
            self.problem(
                classid_w,
                "classid",
                format!("class {handle} is not a class of qdisc {major:x}:"),
                "write MAJOR:MINOR with the root qdisc's major and a minor above 0",
            );
            return;
        }
        let parent = if parent.minor == 0 && parent.major == major {
            None
        } else if self.classes.iter().any(|c| c.class.handle == parent) {
            Some(parent)
        } else {
            self.problem(
                parent_w,
                "parent",
                format!("no class {parent} was added before this one"),
                "add the parent first, or correct its handle",
            );
            return;
        };
        let existing = self.classes.iter().position(|c| c.class.handle == handle);
        let verb_change = existing.is_some();
        let mut at = match existing {
            Some(i) => self.classes.remove(i),
            None => ClassAt {
                class: TcClass::new(handle, parent),
                mtu: None,
                origin: self.origin(classid_w),
            },
        };
        if verb_change && at.class.parent != parent {
            self.problem(
                parent_w,
                "parent",
                format!("class {handle} is moved to another parent"),
                "tc cannot move a class: delete it and add it under its new parent",
            );
            return;
        }
        let ok = match discipline {
            Discipline::Htb { .. } => self.htb_options(cmd, args, &mut at),
            Discipline::Hfsc => self.hfsc_options(args, &mut at.class),
            Discipline::Drr => self.drr_options(args, &mut at.class),
            Discipline::Prio => false,
        };
        if ok {
            self.classes.push(at);
        }
    }

    fn rate(&mut self, w: Option<&Word>, key: &Word) -> Option<Rate> {
        let Some(w) = w else {
            self.problem(
                key,
                &key.text,
                format!("`{}` needs a rate", key.text),
                "write a rate such as `10mbit`",
            );
            return None;
        };
        match w.text.parse::<Rate>() {
            Ok(r) => Some(r),
            Err(e) => {
                self.problem(w, &key.text, e.to_string(), "");
                None
            }
        }
    }

    fn size(&mut self, w: Option<&Word>, key: &Word) -> Option<Bytes> {
        let Some(w) = w else {
            self.problem(
                key,
                &key.text,
                format!("`{}` needs a size", key.text),
                "write a size such as `1600b` or `15k`",
            );
            return None;
        };
        match w.text.parse::<Bytes>() {
            Ok(b) => Some(b),
            Err(e) => {
                self.problem(w, &key.text, e.to_string(), "");
                None
            }
        }
    }

    fn htb_options(&mut self, cmd: &Command, args: &mut Args<'_>, at: &mut ClassAt) -> bool {
        while let Some(key) = args.take() {
            if self.htb_option(cmd, args, at, key).is_none() {
                return false;
            }
        }
        if at.class.rate.is_none() {
            let w = args.end;
            self.problem(
                w,
                "rate",
                format!("HTB class {} has no rate", at.class.handle),
                "add `rate R` (tc requires it)",
            );
            return false;
        }
        true
    }

    fn htb_option(
        &mut self,
        cmd: &Command,
        args: &mut Args<'_>,
        at: &mut ClassAt,
        key: &Word,
    ) -> Option<()> {
        match key.text.as_str() {
            "rate" => at.class.rate = Some(self.rate(args.take(), key)?),
            "ceil" => at.class.ceil = Some(self.rate(args.take(), key)?),
            "burst" | "buffer" | "maxburst" => at.class.burst = Some(self.size(args.take(), key)?),
            "cburst" | "cbuffer" | "minburst" => {
                at.class.cburst = Some(self.size(args.take(), key)?)
            }
            "quantum" => at.class.quantum = Some(self.size(args.take(), key)?),
            "mtu" => at.mtu = Some(self.size(args.take(), key)?),
            "prio" => {
                let v = args.take();
                match v.map(|v| v.text.parse::<u8>()) {
                    Some(Ok(p)) if usize::from(p) < htb::PRIORITIES => at.class.priority = Some(p),
                    _ => {
                        self.problem(
                            v.unwrap_or(key),
                            "prio",
                            "HTB's `prio` is a whole number from 0 to 7".to_owned(),
                            "write for example `prio 1` (0 is served first)",
                        );
                        return None;
                    }
                }
            }
            "overhead" | "linklayer" | "mpu" => {
                self.refuse(
                    cmd,
                    key,
                    format!(
                        "`{}` is a per-class size table; linkshare counts a link-wide \
                         `[link] overhead` instead (set it in the scenario)",
                        key.text
                    ),
                );
                args.take();
            }
            _ => {
                self.problem(
                    key,
                    "htb",
                    format!("`{}` is not an option of an HTB class", key.text),
                    "HTB classes take rate, ceil, burst, cburst, quantum, prio and mtu",
                );
                return None;
            }
        }
        Some(())
    }

    fn hfsc_options(&mut self, args: &mut Args<'_>, c: &mut TcClass) -> bool {
        while let Some(key) = args.take() {
            let which = key.text.as_str();
            if !matches!(which, "sc" | "rt" | "ls" | "ul") {
                self.problem(
                    key,
                    "hfsc",
                    format!("`{which}` is not an option of an HFSC class"),
                    "HFSC classes take curves: sc, rt, ls, ul, each `m1 R d T m2 R` or \
                     `umax S dmax T rate R`",
                );
                return false;
            }
            let Some(curve) = self.curve(args, key) else {
                return false;
            };
            match which {
                "sc" => {
                    c.rt = Some(curve);
                    c.ls = Some(curve);
                }
                "rt" => c.rt = Some(curve),
                "ls" => c.ls = Some(curve),
                _ => c.ul = Some(curve),
            }
        }
        if c.rt.is_none() && c.ls.is_none() {
            self.problem(
                args.end,
                "sc",
                format!("HFSC class {} has no rt, ls or sc curve", c.handle),
                "add `sc rate R` (or rt and ls curves)",
            );
            return false;
        }
        true
    }

    /// `[m1 R] [d T] m2 R` or `[umax S] [dmax T] rate R`, as tc's `hfsc_get_sc`.
    fn curve(&mut self, args: &mut Args<'_>, key: &Word) -> Option<ServiceCurve> {
        let (mut m1, mut d, mut m2) = (None, None, None);
        let (mut umax, mut dmax, mut rate) = (None, None, None);
        while let Some(w) = args.peek() {
            match w.text.as_str() {
                "m1" => m1 = Some(self.rate(args.words.get(args.next + 1), w)?),
                "m2" => m2 = Some(self.rate(args.words.get(args.next + 1), w)?),
                "rate" => rate = Some(self.rate(args.words.get(args.next + 1), w)?),
                "umax" => umax = Some(self.size(args.words.get(args.next + 1), w)?),
                "d" | "dmax" => {
                    let v = args.words.get(args.next + 1);
                    let t = match v.map(|v| v.text.parse::<Duration>()) {
                        Some(Ok(t)) => t,
                        Some(Err(e)) => {
                            self.problem(v.expect("Some"), &w.text, e.to_string(), "");
                            return None;
                        }
                        None => {
                            self.problem(w, &w.text, "needs a time".to_owned(), "write `10ms`");
                            return None;
                        }
                    };
                    if w.text == "d" {
                        d = Some(t);
                    } else {
                        dmax = Some(t);
                    }
                }
                _ => break,
            }
            args.next += 2;
        }
        let m_form = m1.is_some() || d.is_some() || m2.is_some();
        let u_form = umax.is_some() || dmax.is_some() || rate.is_some();
        if m_form == u_form {
            self.problem(
                key,
                &key.text,
                "the curve is not `[m1 R d T] m2 R` nor `[umax S dmax T] rate R`".to_owned(),
                "write for example `sc m1 2mbit d 10ms m2 1mbit` or `sc rate 1mbit`",
            );
            return None;
        }
        if m_form {
            let Some(m2) = m2 else {
                self.problem(
                    key,
                    &key.text,
                    "the curve has no m2".to_owned(),
                    "add `m2 R`",
                );
                return None;
            };
            let d = d.unwrap_or(Duration::ZERO);
            // A first segment of length 0 is no segment: the curve is the line m2.
            let m1 = if d == Duration::ZERO {
                m2
            } else {
                m1.unwrap_or(Rate::ZERO)
            };
            return Some(ServiceCurve { m1, d, m2 });
        }
        let Some(rate) = rate else {
            self.problem(
                key,
                &key.text,
                "the curve has no rate".to_owned(),
                "add `rate R`",
            );
            return None;
        };
        match ServiceCurve::from_umax_dmax_rate(
            umax.unwrap_or(Bytes::ZERO),
            dmax.unwrap_or(Duration::ZERO),
            rate,
        ) {
            Ok(c) => Some(c),
            Err(e) => {
                self.problem(key, &key.text, e.to_string(), "");
                None
            }
        }
    }

    fn drr_options(&mut self, args: &mut Args<'_>, c: &mut TcClass) -> bool {
        while let Some(key) = args.take() {
            if key.text != "quantum" {
                self.problem(
                    key,
                    "drr",
                    format!("`{}` is not an option of a DRR class", key.text),
                    "DRR classes take `quantum SIZE`",
                );
                return false;
            }
            match self.size(args.take(), key) {
                Some(q) => c.quantum = Some(q),
                None => return false,
            }
        }
        true
    }

    fn filter(&mut self, cmd: &Command, args: &mut Args<'_>) {
        let mut head = Head {
            filter: true,
            ..Head::default()
        };
        if !self.head(cmd, args, &mut head) {
            return;
        }
        let kind = head.kind.expect("head returned a kind");
        if !self.on_dev(cmd, head.dev, kind) {
            return;
        }
        if head.dev.is_some_and(|d| d.text == show::SHOWN_DEV) {
            self.refuse(
                cmd,
                kind,
                "`tc filter show` prints u32 keys as raw offsets, which are not read; import \
                 the script's filter commands"
                    .to_owned(),
            );
            return;
        }
        let Some(root) = &self.root else {
            self.problem(
                kind,
                "parent",
                "a filter is added before the root qdisc".to_owned(),
                "add the root qdisc first",
            );
            return;
        };
        let major = root.major;
        match head.parent.map(|p| (p, Handle::parse(&p.text))) {
            Some((_, Some(h))) if h.major == major && h.minor == 0 => {}
            Some((p, Some(h))) => {
                let reason = if h.major == major {
                    format!(
                        "the filter is attached to class {h}; the shaper classifies once, at \
                         the root (attach it to `parent {major:x}:0` naming a leaf)"
                    )
                } else {
                    format!(
                        "the filter is attached to `{}`, not to the root qdisc {major:x}: \
                         (ingress filters police arriving traffic)",
                        p.text
                    )
                };
                self.refuse(cmd, p, reason);
                return;
            }
            Some((p, None)) => {
                self.handle(p, "parent");
                return;
            }
            None => {
                self.problem(
                    kind,
                    "parent",
                    "the filter names no parent".to_owned(),
                    &format!("add `parent {major:x}:0`"),
                );
                return;
            }
        }
        let ether_type = match head.protocol.map(|p| p.text.as_str()) {
            None | Some("all") => None,
            Some("ip") => Some(ETHERTYPE_IPV4),
            Some("ipv6") => Some(ETHERTYPE_IPV6),
            Some("arp") => Some(ETHERTYPE_ARP),
            Some(hex) if hex.starts_with("0x") && u16::from_str_radix(&hex[2..], 16).is_ok() => {
                u16::from_str_radix(&hex[2..], 16).ok()
            }
            Some(other) => {
                let p = head.protocol.expect("Some");
                self.refuse(
                    cmd,
                    p,
                    format!("filter protocol `{other}` is not translated (ip, ipv6, arp, all)"),
                );
                return;
            }
        };
        let prio = match head.prio {
            None => 0xC000,
            Some(w) => match w.text.parse::<u32>() {
                Ok(p) => p,
                Err(_) => {
                    self.problem(
                        w,
                        "prio",
                        format!("`{}` is not a filter priority", w.text),
                        "write a whole number such as `prio 1` (lower is tried first)",
                    );
                    return;
                }
            },
        };
        let mut m = Match {
            ether_type,
            ..Match::default()
        };
        let mut class = None;
        let parsed = match kind.text.as_str() {
            "u32" => self.u32_filter(cmd, args, &mut m, &mut class),
            "flower" => self.flower_filter(cmd, args, &mut m, &mut class),
            "matchall" => self.matchall_filter(cmd, args, &mut class),
            "fw" => {
                self.refuse(
                    cmd,
                    kind,
                    "`fw` matches the firewall mark set by iptables or nftables, which the \
                     shaper's classifier does not see; write a u32 or flower filter on the \
                     addresses and ports the firewall rule marks"
                        .to_owned(),
                );
                false
            }
            other => {
                self.refuse(
                    cmd,
                    kind,
                    format!("`{other}` filters are not translated (u32, flower and matchall are)"),
                );
                false
            }
        };
        if !parsed {
            return;
        }
        let Some(class_word) = class else {
            self.problem(
                args.end,
                "flowid",
                "the filter names no class".to_owned(),
                "end it with `flowid 1:10` (or `classid 1:10`)",
            );
            return;
        };
        let Some(h) = self.handle(class_word, "flowid") else {
            return;
        };
        self.filters.push(FilterAt {
            prio,
            filter: TcFilter {
                matches: m,
                class: h,
            },
            class_word: class_word.clone(),
        });
    }

    /// `flowid`/`classid`, `action`, `police`: common endings of a filter; returns
    /// `Some(true)` when `key` was one of them and consumed, `Some(false)` when the
    /// filter cannot be translated.
    fn filter_ending<'c>(
        &mut self,
        cmd: &Command,
        args: &mut Args<'c>,
        key: &'c Word,
        class: &mut Option<&'c Word>,
    ) -> Option<bool> {
        match key.text.as_str() {
            "flowid" | "classid" => {
                *class = args.take();
                Some(true)
            }
            "action" | "police" | "act" => {
                self.refuse(
                    cmd,
                    key,
                    format!(
                        "`{}` runs actions (policing, mirroring, marking) on matching packets; \
                         the shaper only classifies",
                        key.text
                    ),
                );
                Some(false)
            }
            "skip_hw" | "skip_sw" => Some(true),
            _ => None,
        }
    }

    fn u32_filter<'c>(
        &mut self,
        cmd: &Command,
        args: &mut Args<'c>,
        m: &mut Match,
        class: &mut Option<&'c Word>,
    ) -> bool {
        while let Some(key) = args.take() {
            if let Some(ok) = self.filter_ending(cmd, args, key, class) {
                if !ok {
                    return false;
                }
                continue;
            }
            if key.text != "match" {
                self.refuse(
                    cmd,
                    key,
                    format!(
                        "u32 `{}` (hash tables, links, offsets) is not translated; the \
                         classifier takes plain matches",
                        key.text
                    ),
                );
                return false;
            }
            let (Some(sel), Some(field)) = (args.take(), args.take()) else {
                self.problem(
                    key,
                    "match",
                    "`match` needs a selector and a field".to_owned(),
                    "write for example `match ip dport 22 0xffff`",
                );
                return false;
            };
            let refuse = |this: &mut Self, what: String| {
                this.refuse(
                    cmd,
                    sel,
                    format!(
                        "u32 `match {what}` is not translated: the shaper's classifier matches \
                         ether type, VLAN, addresses, protocol, ports and DSCP"
                    ),
                );
                false
            };
            let value = args.take();
            let ok = match (sel.text.as_str(), field.text.as_str()) {
                ("ip" | "ip6", "src" | "dst") => {
                    let Some(v) = value else {
                        return self.missing(field);
                    };
                    match v.text.parse::<Prefix>() {
                        Ok(p) => {
                            let slot = if field.text == "src" {
                                &mut m.src
                            } else {
                                &mut m.dst
                            };
                            *slot = Some(p);
                            true
                        }
                        Err(e) => {
                            self.problem(v, &field.text, e.to_string(), "");
                            false
                        }
                    }
                }
                ("ip" | "ip6" | "tcp" | "udp", "sport" | "dport" | "src" | "dst") => {
                    let Some((v, mask)) = self.value_mask(value, args.take(), field) else {
                        return false;
                    };
                    let Some(range) = port_range(v, mask) else {
                        return refuse(
                            self,
                            format!("{} {} {v:#x} {mask:#x}", sel.text, field.text),
                        );
                    };
                    if field.text.starts_with('s') {
                        m.sport = Some(range);
                    } else {
                        m.dport = Some(range);
                    }
                    if sel.text == "tcp" || sel.text == "udp" {
                        m.protocol = Some(if sel.text == "tcp" {
                            proto::TCP
                        } else {
                            proto::UDP
                        });
                    }
                    true
                }
                ("u32" | "u16" | "u8", _) => {
                    // `match u32 0 0 [at N]`: no condition, the customary catch-all.
                    let mask = value;
                    let zero = |w: Option<&Word>| {
                        w.is_some_and(|w| {
                            matches!(
                                w.text.as_str(),
                                "0" | "0x0" | "0x00" | "0x0000" | "0x00000000"
                            )
                        })
                    };
                    if zero(mask) {
                        if args.peek().is_some_and(|w| w.text == "at") {
                            args.take();
                            args.take();
                        }
                        true
                    } else {
                        return refuse(self, format!("{} {} (raw offsets)", sel.text, field.text));
                    }
                }
                ("ip" | "ip6", "protocol") => {
                    let Some((v, mask)) = self.value_mask(value, args.take(), field) else {
                        return false;
                    };
                    if mask != 0xff || v > 0xff {
                        return refuse(self, format!("ip protocol {v:#x} {mask:#x}"));
                    }
                    m.protocol = Some(v as u8);
                    true
                }
                ("ip", "tos" | "dsfield") | ("ip6", "priority") => {
                    let Some((v, mask)) = self.value_mask(value, args.take(), field) else {
                        return false;
                    };
                    if v > 0xff || mask > 0xff || mask & 0xfc == 0 {
                        return refuse(self, format!("ip tos {v:#x} {mask:#x}"));
                    }
                    m.dscp = Some(dscp_set(v as u8, mask as u8));
                    true
                }
                _ => refuse(self, format!("{} {}", sel.text, field.text)),
            };
            if !ok {
                return false;
            }
        }
        true
    }

    fn missing(&mut self, key: &Word) -> bool {
        self.problem(
            key,
            &key.text,
            format!("`{}` needs a value", key.text),
            "write the value after it",
        );
        false
    }

    /// `VALUE MASK` of a u32 match (decimal or 0x-hexadecimal).
    fn value_mask(
        &mut self,
        value: Option<&Word>,
        mask: Option<&Word>,
        field: &Word,
    ) -> Option<(u32, u32)> {
        let (Some(v), Some(mw)) = (value, mask) else {
            self.problem(
                field,
                &field.text,
                format!("`{}` needs a value and a mask", field.text),
                "write for example `dport 22 0xffff`",
            );
            return None;
        };
        let n = |w: &Word| {
            let t = w.text.as_str();
            match t.strip_prefix("0x") {
                Some(h) => u32::from_str_radix(h, 16).ok(),
                None => t.parse::<u32>().ok(),
            }
        };
        match (n(v), n(mw)) {
            (Some(a), Some(b)) => Some((a, b)),
            (None, _) => {
                self.problem(v, &field.text, format!("`{}` is not a number", v.text), "");
                None
            }
            (_, None) => {
                self.problem(mw, &field.text, format!("`{}` is not a mask", mw.text), "");
                None
            }
        }
    }

    fn flower_filter<'c>(
        &mut self,
        cmd: &Command,
        args: &mut Args<'c>,
        m: &mut Match,
        class: &mut Option<&'c Word>,
    ) -> bool {
        while let Some(key) = args.take() {
            if let Some(ok) = self.filter_ending(cmd, args, key, class) {
                if !ok {
                    return false;
                }
                continue;
            }
            let Some(v) = args.take() else {
                return self.missing(key);
            };
            let ok = match key.text.as_str() {
                "ip_proto" => {
                    let p = match v.text.as_str() {
                        "tcp" => Some(proto::TCP),
                        "udp" => Some(proto::UDP),
                        "icmp" => Some(proto::ICMP),
                        "icmpv6" => Some(proto::ICMPV6),
                        "sctp" => Some(proto::SCTP),
                        // flower reads a number as hexadecimal (`get_u8(.., 16)`).
                        t => u8::from_str_radix(t.trim_start_matches("0x"), 16).ok(),
                    };
                    m.protocol = p;
                    p.is_some() || {
                        self.problem(
                            v,
                            "ip_proto",
                            format!("`{}` is not a protocol", v.text),
                            "write tcp, udp, icmp, icmpv6, sctp or a number",
                        );
                        false
                    }
                }
                "src_ip" | "dst_ip" => match v.text.parse::<Prefix>() {
                    Ok(p) => {
                        if key.text == "src_ip" {
                            m.src = Some(p);
                        } else {
                            m.dst = Some(p);
                        }
                        true
                    }
                    Err(e) => {
                        self.problem(v, &key.text, e.to_string(), "");
                        false
                    }
                },
                "src_port" | "dst_port" => match v.text.parse::<PortRange>() {
                    Ok(r) => {
                        if key.text == "src_port" {
                            m.sport = Some(r);
                        } else {
                            m.dport = Some(r);
                        }
                        true
                    }
                    Err(e) => {
                        self.problem(v, &key.text, e.to_string(), "");
                        false
                    }
                },
                "vlan_id" => match v.text.parse::<u16>() {
                    Ok(id) if id < 4096 => {
                        m.vlan = Some(id);
                        true
                    }
                    _ => {
                        self.problem(
                            v,
                            "vlan_id",
                            format!("`{}` is not a VLAN id", v.text),
                            "write 0 to 4095",
                        );
                        false
                    }
                },
                "ip_tos" => {
                    let (val, mask) = v.text.split_once('/').unwrap_or((&v.text, "0xff"));
                    let n = |t: &str| match t.strip_prefix("0x") {
                        Some(h) => u8::from_str_radix(h, 16).ok(),
                        None => t.parse::<u8>().ok(),
                    };
                    match (n(val), n(mask)) {
                        (Some(val), Some(mask)) if mask & 0xfc != 0 => {
                            m.dscp = Some(dscp_set(val, mask));
                            true
                        }
                        _ => {
                            self.problem(
                                v,
                                "ip_tos",
                                format!("`{}` is not a TOS value/mask on the DSCP bits", v.text),
                                "write for example `ip_tos 0xb8/0xfc`",
                            );
                            false
                        }
                    }
                }
                other => {
                    self.refuse(
                        cmd,
                        key,
                        format!(
                            "flower key `{other}` is not translated: the shaper's classifier \
                             matches ip_proto, src_ip, dst_ip, src_port, dst_port, ip_tos and \
                             vlan_id"
                        ),
                    );
                    false
                }
            };
            if !ok {
                return false;
            }
        }
        true
    }

    fn matchall_filter<'c>(
        &mut self,
        cmd: &Command,
        args: &mut Args<'c>,
        class: &mut Option<&'c Word>,
    ) -> bool {
        while let Some(key) = args.take() {
            match self.filter_ending(cmd, args, key, class) {
                Some(true) => {}
                Some(false) => return false,
                None => {
                    self.problem(
                        key,
                        "matchall",
                        format!("`{}` is not an option of matchall", key.text),
                        "write `matchall classid 1:10`",
                    );
                    return false;
                }
            }
        }
        true
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
                    htb_defaults(&mut c, leaf, &params, &at.origin, &mut self.warnings);
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
                if handles.contains(&h) && is_leaf_in(&config, h) {
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
            && is_leaf_in(&config, last.filter.class)
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
            } else if !is_leaf_in(&config, h) {
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

fn is_leaf_in(config: &TcConfig, h: Handle) -> bool {
    config.is_leaf(h)
}

/// HTB's defaults, as tc (`q_htb.c`) and Linux (`sch_htb.c`) apply them: ceil = rate;
/// burst = rate / hz + mtu and cburst = ceil / hz + mtu (tc); a leaf's quantum = rate /
/// r2q clamped to [1000, 200000] bytes (Linux, which warns when it clamps); prio 0.
fn htb_defaults(
    c: &mut TcClass,
    leaf: bool,
    params: &HtbParams,
    origin: &Origin,
    warnings: &mut Vec<Problem>,
) {
    let rate = c.rate.expect("HTB classes have a rate");
    let hz = params.hz;
    let mtu = params.mtu;
    if c.ceil.is_none() {
        c.ceil = Some(rate);
        c.defaults
            .push(("ceil", "tc's default: the rate".to_owned()));
    }
    if c.burst.is_none() {
        c.burst = Some(htb::default_burst(rate, params));
        c.defaults.push((
            "burst",
            format!("tc's default: rate / hz + mtu, hz = {hz}, mtu = {mtu}"),
        ));
    }
    if c.cburst.is_none() {
        c.cburst = Some(htb::default_burst(c.ceil.expect("set"), params));
        c.defaults.push((
            "cburst",
            format!("tc's default: ceil / hz + mtu, hz = {hz}, mtu = {mtu}"),
        ));
    }
    if leaf && c.quantum.is_none() {
        let (used, computed) = htb::derived_quantum(rate, params);
        c.quantum = Some(used);
        if used == computed {
            c.defaults.push((
                "quantum",
                format!("the kernel's default: rate / r2q, r2q = {}", params.r2q),
            ));
        } else {
            let size = if used > computed { "small" } else { "big" };
            c.defaults.push((
                "quantum",
                format!(
                    "the kernel's default rate / r2q = {computed} (r2q = {}), clamped to {used}",
                    params.r2q
                ),
            ));
            warnings.push(Problem {
                origin: Some(origin.clone()),
                field: Some("quantum".to_owned()),
                problem: format!(
                    "quantum of class {} is {size}: rate / r2q = {computed}, the kernel uses \
                     {used}",
                    c.handle
                ),
                fix: "give the class an explicit `quantum`, or change the qdisc's r2q".to_owned(),
            });
        }
    }
    if !leaf {
        c.quantum = None;
    }
    if leaf && c.priority.is_none() {
        c.priority = Some(0);
        c.defaults.push(("priority", "tc's default".to_owned()));
    }
    if !leaf {
        c.priority = None;
    }
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

/// A u32 port `value mask` as a range: the mask must be contiguous high bits.
fn port_range(value: u32, mask: u32) -> Option<PortRange> {
    if value > 0xffff || mask > 0xffff || mask == 0 {
        return None;
    }
    let low = !mask & 0xffff;
    if low & (low + 1) != 0 {
        return None;
    }
    let lo = (value & mask) as u16;
    Some(PortRange {
        lo,
        hi: lo | low as u16,
    })
}

/// The DSCPs whose TOS byte matches `value` under `mask` (the ECN bits ignored).
fn dscp_set(value: u8, mask: u8) -> DscpSet {
    let mut set = 0u64;
    for d in 0u8..64 {
        if (d << 2) & mask & 0xfc == value & mask & 0xfc {
            set |= 1 << d;
        }
    }
    DscpSet(set)
}
