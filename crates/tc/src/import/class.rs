//! Classes: HTB, HFSC and DRR options, HFSC's curves, and HTB's defaults.

use linkshare_core::curve::ServiceCurve;
use linkshare_core::hierarchy::Origin;
use linkshare_core::sched::htb::{self, HtbParams};
use linkshare_core::units::{Bytes, Duration, Rate};
use linkshare_scenario::Problem;

use super::{Args, ClassAt, Head, Importer};
use crate::model::{Discipline, TcClass};
use crate::shell::{Command, Word};

impl Importer {
    pub(super) fn class(&mut self, cmd: &Command, args: &mut Args<'_>) {
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

    pub(super) fn rate(&mut self, w: Option<&Word>, key: &Word) -> Option<Rate> {
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

    pub(super) fn size(&mut self, w: Option<&Word>, key: &Word) -> Option<Bytes> {
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
}

/// HTB's defaults, as tc (`q_htb.c`) and Linux (`sch_htb.c`) apply them: ceil = rate;
/// burst = rate / hz + mtu and cburst = ceil / hz + mtu (tc); a leaf's quantum = rate /
/// r2q clamped to [1000, 200000] bytes (Linux, which warns when it clamps); prio 0.
pub(super) fn htb_defaults(
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
