//! `tc qdisc show` and `tc -d class show` output read as the commands that built it:
//! `qdisc htb 1: root refcnt 2 r2q 10 default 0x20 ...` is `tc qdisc add dev IF root
//! handle 1: htb r2q 10 default 0x20`, `class htb 1:10 parent 1:1 leaf 10: prio 1 rate
//! 1Mbit ...` is `tc class add dev IF parent 1:1 classid 1:10 htb prio 1 rate 1Mbit
//! ...`. The output names no interface, so the commands use [`SHOWN_DEV`]. Statistics
//! (`tc -s`: the indented `Sent`, `rate`, `backlog`, `lended:`, `tokens:` lines) and
//! the counters and state the kernel adds (`refcnt`, `direct_packets_stat`, `level`,
//! ...) are dropped. `tc filter show` prints u32 keys as raw offsets, which are not
//! read: import the script's filter commands instead.

use crate::shell::{Command, Word};

/// The interface name given to configurations read from `tc ... show` output.
pub const SHOWN_DEV: &str = "shown";

/// What the kernel prints about a qdisc or class that is state, not configuration,
/// with the number of values each takes.
const STATE: &[(&str, usize)] = &[
    ("refcnt", 1),
    ("direct_packets_stat", 1),
    ("direct_qlen", 1),
    ("ver", 1),
    ("level", 1),
    ("leaf", 1),
    ("linklayer", 1),
    ("offload", 0),
];

/// Options whose zero value `-d` prints though nobody set them.
const ZERO_DEFAULTS: &[(&str, &str)] = &[("mpu", "0b"), ("overhead", "0")];

/// Whether `commands` are `tc ... show` output rather than a script: the first one is
/// a `qdisc` or `class` line.
pub fn is_show_output(commands: &[Command]) -> bool {
    commands
        .first()
        .is_some_and(|c| matches!(c.words[0].text.as_str(), "qdisc" | "class"))
}

/// The command a line of show output stands for; `None` for statistics lines.
pub fn as_command(line: &Command) -> Option<Command> {
    let words = &line.words;
    let object = words[0].text.as_str();
    if !matches!(object, "qdisc" | "class" | "filter") || words.len() < 3 {
        return None;
    }
    let at = &words[0];
    let word = |text: &str| Word {
        text: text.to_owned(),
        line: at.line,
        column: at.column,
    };
    let kind = words[1].clone();
    let handle = words[2].clone();
    let mut out = vec![
        word("tc"),
        word(object),
        word("add"),
        word("dev"),
        word(SHOWN_DEV),
    ];
    let mut rest = words[3..].iter().peekable();
    let mut options = Vec::new();
    while let Some(w) = rest.next() {
        match w.text.as_str() {
            "root" => match object {
                "qdisc" => out.push(w.clone()),
                _ => {
                    // A class at the top: its parent is the qdisc.
                    let major = handle.text.split(':').next().unwrap_or_default();
                    out.push(word("parent"));
                    out.push(word(&format!("{major}:")));
                }
            },
            "parent" => {
                out.push(w.clone());
                if let Some(p) = rest.next() {
                    out.push(p.clone());
                }
            }
            t if ZERO_DEFAULTS
                .iter()
                .any(|(name, zero)| *name == t && rest.peek().is_some_and(|v| v.text == *zero)) =>
            {
                rest.next();
            }
            t => match STATE.iter().find(|(name, _)| *name == t) {
                Some((_, values)) => {
                    for _ in 0..*values {
                        rest.next();
                    }
                }
                None => options.push(w.clone()),
            },
        }
    }
    match object {
        "qdisc" => {
            out.push(word("handle"));
            out.push(handle);
        }
        _ => {
            out.push(word("classid"));
            out.push(handle);
        }
    }
    out.push(kind);
    // pfifo prints its limit as `limit 1000p`, bfifo as `limit 256Kb`; HTB its bursts
    // with their rate table's cell size, `1600b/1`.
    for o in &mut options {
        if let Some((size, cell)) = o.text.split_once('/')
            && cell.bytes().all(|b| b.is_ascii_digit())
        {
            o.text = size.to_owned();
        }
        if let Some(n) = o.text.strip_suffix('p')
            && n.bytes().all(|b| b.is_ascii_digit())
            && !n.is_empty()
        {
            o.text = n.to_owned();
        }
    }
    out.extend(options);
    Some(Command {
        words: out,
        text: line.text.clone(),
    })
}

/// Show output in the order the commands must run: the root qdisc, then classes with
/// every parent before its children, then the leaves' qdiscs, then the rest (the
/// kernel lists classes in hash order and leaf qdiscs first).
pub fn in_build_order(mut commands: Vec<Command>) -> Vec<Command> {
    let is = |c: &Command, object: &str| c.words.get(1).is_some_and(|w| w.text == object);
    let is_root = |c: &Command| is(c, "qdisc") && c.words.iter().any(|w| w.text == "root");
    let value = |c: &Command, key: &str| {
        let i = c.words.iter().position(|w| w.text == key)?;
        c.words.get(i + 1).map(|w| w.text.clone())
    };
    let mut out: Vec<Command> = Vec::new();
    let (roots, rest): (Vec<_>, Vec<_>) = commands.drain(..).partition(is_root);
    out.extend(roots);
    let (mut classes, rest): (Vec<_>, Vec<_>) = rest.into_iter().partition(|c| is(c, "class"));
    let mut placed: Vec<String> = Vec::new();
    while !classes.is_empty() {
        let ready = classes.iter().position(|c| {
            let parent = value(c, "parent").unwrap_or_default();
            parent.ends_with(':') || placed.contains(&parent)
        });
        // A class whose parent never appears goes last: the importer reports it.
        let c = classes.remove(ready.unwrap_or(0));
        placed.extend(value(&c, "classid"));
        out.push(c);
    }
    let (qdiscs, rest): (Vec<_>, Vec<_>) = rest.into_iter().partition(|c| is(c, "qdisc"));
    out.extend(qdiscs);
    out.extend(rest);
    out
}
