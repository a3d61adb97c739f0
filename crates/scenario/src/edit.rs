//! Scenario edits: "the value at this dotted path is now that", applied to the parsed
//! TOML document before it is read, so that an edited scenario is checked by every
//! rule of the loader and its problems are the loader's messages.
//!
//! A path names a value the way the loader's messages do, or by name:
//!
//! | path | names |
//! | --- | --- |
//! | `link.rate` | `rate` of the single-link form's `[link]` |
//! | `scenario.seed` | `seed` of `[scenario]` |
//! | `class[1].weight` | `weight` of the second `[[class]]` (0-based, as in messages) |
//! | `class.A.weight` | `weight` of the `[[class]]` whose `name` is `"A"` |
//! | `links.l1.class.A.rt` | a class of the topology form's link `l1` |
//! | `flow.voice.source.rate` | a field of an inline table |
//! | `class."a.b".weight` | a name containing a dot, quoted |
//!
//! A missing last key is added (the loader then says whether it is a field of that
//! table); missing tables on the way are added empty. An element of an array of tables
//! is never added: naming one that does not exist is a problem that lists those that
//! do.
//!
//! **Positions.** The edits are numbered from 1 in the order they were made and shown
//! as lines `PATH = VALUE` of a pseudo-file named [`EDIT_FILE`]: a problem with an
//! edited value is reported at `edit:N:COLUMN` (N the edit's number), every other
//! problem at its place in the scenario file, which an edit never moves.

use std::ops::Range;

use toml::Spanned;
use toml::de::{DeString, DeTable, DeValue};

use crate::problem::{Problem, did_you_mean};
use crate::reader::Ctx;

/// The name of the pseudo-file whose line N is the Nth edit, in problems.
pub const EDIT_FILE: &str = "edit";

/// One edit: the TOML value `value` at the dotted path `path` (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Edit {
    /// Where, such as `class.A.weight` or `link.buffer.limit`.
    pub path: String,
    /// The new value as TOML text: `3`, `"10mbit"`, `{ limit = 100 }`.
    pub value: String,
}

impl Edit {
    /// The TOML value `value` at `path`.
    pub fn new(path: impl Into<String>, value: impl Into<String>) -> Edit {
        Edit {
            path: path.into(),
            value: value.into(),
        }
    }

    /// A value as a command line gives it: TOML when it is a TOML value (`3`, `true`,
    /// `"x"`, `[1, 2]`), otherwise the text itself as a string (`10mbit`, `drr`).
    pub fn from_arg(path: impl Into<String>, value: &str) -> Edit {
        let value = if DeValue::parse(value).is_ok() {
            value.to_owned()
        } else {
            toml::Value::String(value.to_owned()).to_string()
        };
        Edit::new(path, value)
    }

    /// The edit as the line of [`EDIT_FILE`] that problems point into.
    pub(crate) fn line(&self) -> String {
        format!("{} = {}", self.path, self.value)
    }
}

/// Splits a command-line list `V1,V2,...` at the commas outside quotes, brackets and
/// braces (so that `[1, 2],[3, 4]` is two arrays); each value is trimmed.
pub fn split_values(list: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut quote, mut start) = (0i32, None::<char>, 0);
    for (i, c) in list.char_indices() {
        match (quote, c) {
            (Some(q), _) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[' | '{') => depth += 1,
            (None, ']' | '}') => depth -= 1,
            (None, ',') if depth <= 0 => {
                out.push(list[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(list[start..].trim());
    out
}

/// One segment of a path, with its byte range in the edit's line.
#[derive(Debug)]
struct Segment {
    key: String,
    /// `[i]` after the key.
    index: Option<usize>,
    span: Range<usize>,
}

/// Splits `path` (starting at byte `at` of the text) into segments, or says what is
/// wrong with it.
fn segments(path: &str, at: usize) -> Result<Vec<Segment>, (Range<usize>, String)> {
    let bad = |r: Range<usize>, what: &str| Err((r.start + at..r.end + at, what.to_owned()));
    let bytes = path.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        let start = i;
        let key = if bytes.get(i) == Some(&b'"') {
            let Some(len) = path[i + 1..].find('"') else {
                return bad(i..path.len(), "a quoted key has no closing `\"`");
            };
            i += len + 2;
            path[start + 1..i - 1].to_owned()
        } else {
            while i < bytes.len() && !matches!(bytes[i], b'.' | b'[') {
                i += 1;
            }
            path[start..i].trim().to_owned()
        };
        if key.is_empty() {
            return bad(start..i.max(start + 1), "a key of the path is empty");
        }
        let mut index = None;
        if bytes.get(i) == Some(&b'[') {
            let Some(len) = path[i..].find(']') else {
                return bad(i..path.len(), "`[` has no closing `]`");
            };
            let digits = &path[i + 1..i + len];
            match digits.trim().parse::<usize>() {
                Ok(n) => index = Some(n),
                Err(_) => return bad(i..i + len + 1, "an index is a number such as `[0]`"),
            }
            i += len + 1;
        }
        out.push(Segment {
            key,
            index,
            span: start + at..i + at,
        });
        match bytes.get(i) {
            None => return Ok(out),
            Some(b'.') => i += 1,
            Some(_) => return bad(i..i + 1, "expected `.` between the keys of the path"),
        }
    }
}

/// The TOML value of an edit, with spans moved to where its line is in the text.
fn shifted<'i>(v: Spanned<DeValue<'i>>, by: usize) -> Spanned<DeValue<'i>> {
    let span = v.span();
    let span = span.start + by..span.end + by;
    let value = match v.into_inner() {
        DeValue::Array(items) => {
            let mut out = toml::de::DeArray::new();
            for item in items.iter().cloned() {
                out.push(shifted(item, by));
            }
            DeValue::Array(out)
        }
        DeValue::Table(t) => {
            let mut out = DeTable::new();
            for (k, v) in t {
                let ks = k.span();
                let k = Spanned::new(ks.start + by..ks.end + by, k.into_inner());
                out.insert(k, shifted(v, by));
            }
            DeValue::Table(out)
        }
        other => other,
    };
    Spanned::new(span, value)
}

/// The `name` of an element of an array of tables.
fn element_name<'a>(v: &'a Spanned<DeValue<'_>>) -> Option<&'a str> {
    match v.get_ref() {
        DeValue::Table(t) => t.get("name").and_then(|n| n.get_ref().as_str()),
        _ => None,
    }
}

/// Applies the edit whose line `PATH = VALUE` starts at byte `at` of `text` to `doc`,
/// or reports why it cannot be applied.
pub(crate) fn apply<'i>(
    ctx: &mut Ctx<'_>,
    doc: &mut DeTable<'i>,
    edit: &Edit,
    text: &'i str,
    at: usize,
) {
    let value_at = at + edit.path.len() + " = ".len();
    let value_text = &text[value_at..value_at + edit.value.len()];
    let value = match DeValue::parse(value_text) {
        Ok(v) => shifted(v, value_at),
        Err(e) => {
            let fix = "write a TOML value: a number (3), a quoted string (\"10mbit\"), a boolean, \
                       an array or an inline table";
            report(
                ctx,
                value_at..value_at,
                &edit.path,
                e.message().trim_end(),
                fix,
            );
            return;
        }
    };
    let path = match segments(&edit.path, at) {
        Ok(s) => s,
        Err((span, what)) => {
            let fix = "write keys separated by dots, such as `class.A.weight` or `link.rate`";
            report(ctx, span, &edit.path, &format!("bad path: {what}"), fix);
            return;
        }
    };
    if let Err((span, problem, fix)) = set(doc, &path, value) {
        report(ctx, span, &edit.path, &problem, &fix);
    }
}

fn report(ctx: &mut Ctx<'_>, span: Range<usize>, path: &str, problem: &str, fix: &str) {
    ctx.problems.push(Problem {
        origin: Some(ctx.origin(&span)),
        field: Some(path.to_owned()),
        problem: problem.to_owned(),
        fix: fix.to_owned(),
    });
}

type SetError = (Range<usize>, String, String);

/// Puts `value` at `path` in `doc`.
fn set<'i>(
    doc: &mut DeTable<'i>,
    path: &[Segment],
    value: Spanned<DeValue<'i>>,
) -> Result<(), SetError> {
    let mut table = doc;
    let mut i = 0;
    let mut walked = String::new();
    while let Some(seg) = path.get(i) {
        let last = i + 1 == path.len();
        if !walked.is_empty() {
            walked.push('.');
        }
        walked.push_str(&seg.key);
        if last && seg.index.is_none() {
            let key: Spanned<DeString<'i>> = Spanned::new(seg.span.clone(), seg.key.clone().into());
            table.insert(key, value);
            return Ok(());
        }
        if table.get(seg.key.as_str()).is_none() {
            if seg.index.is_some() {
                return Err((
                    seg.span.clone(),
                    format!("there is no array of tables `{walked}`"),
                    "name an array of tables written in the file, such as `class[0]`".to_owned(),
                ));
            }
            let key: Spanned<DeString<'i>> = Spanned::new(seg.span.clone(), seg.key.clone().into());
            let empty = Spanned::new(seg.span.clone(), DeValue::Table(DeTable::new()));
            table.insert(key, empty);
        }
        let Some(entry) = table.get_mut(seg.key.as_str()) else {
            return Err((
                seg.span.clone(),
                format!("`{walked}` vanished"),
                String::new(),
            ));
        };
        match entry.get_mut() {
            DeValue::Table(t) => {
                if seg.index.is_some() {
                    return Err((
                        seg.span.clone(),
                        format!("`{}` is a table, not an array of tables", seg.key),
                        format!("leave out the index: `{}`", seg.key),
                    ));
                }
                table = t;
                i += 1;
            }
            DeValue::Array(items) => {
                let (n, span) = match seg.index {
                    Some(n) => (n, seg.span.clone()),
                    None => {
                        // Not the last segment (a last one without an index replaced the
                        // whole array above): the next one is a name.
                        let Some(name) = path.get(i + 1) else {
                            return Ok(());
                        };
                        let found = items
                            .iter()
                            .position(|v| element_name(v) == Some(name.key.as_str()));
                        let Some(n) = found else {
                            let names: Vec<&str> = items.iter().filter_map(element_name).collect();
                            let hint = did_you_mean(&name.key, names.iter().copied());
                            return Err((
                                name.span.clone(),
                                format!("no `{}` is named `{}`", seg.key, name.key),
                                format!(
                                    "{hint}the names are: {}; or give a position such as `{}[0]`",
                                    names.join(", "),
                                    seg.key
                                ),
                            ));
                        };
                        walked.push('.');
                        walked.push_str(&name.key);
                        i += 1;
                        (n, name.span.clone())
                    }
                };
                let count = items.len();
                let Some(item) = items.get_mut(n) else {
                    return Err((
                        span,
                        format!("`{}` has {count} tables, so there is no [{n}]", seg.key),
                        format!("give an index from 0 to {}", count.saturating_sub(1)),
                    ));
                };
                if i + 1 == path.len() {
                    *item = value;
                    return Ok(());
                }
                match item.get_mut() {
                    DeValue::Table(t) => table = t,
                    _ => {
                        return Err((
                            span,
                            format!("`{walked}` is not a table"),
                            "name a field of a table".to_owned(),
                        ));
                    }
                }
                i += 1;
            }
            other => {
                return Err((
                    seg.span.clone(),
                    format!("`{walked}` is {}, not a table", other.type_str()),
                    format!("end the path at `{walked}`, or name a table"),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_values() {
        assert_eq!(Edit::from_arg("a", "3").value, "3");
        assert_eq!(Edit::from_arg("a", "10mbit").value, "\"10mbit\"");
        assert_eq!(Edit::from_arg("a", "\"x\"").value, "\"x\"");
        assert_eq!(Edit::from_arg("a", "true").value, "true");
        assert_eq!(Edit::from_arg("a", "a\"b").value, "'a\"b'");
    }

    #[test]
    fn lists_split_outside_brackets_and_quotes() {
        assert_eq!(split_values("1, 2,3"), ["1", "2", "3"]);
        assert_eq!(split_values("[1, 2],[3]"), ["[1, 2]", "[3]"]);
        assert_eq!(
            split_values("\"a,b\",{ x = 1, y = 2 }"),
            ["\"a,b\"", "{ x = 1, y = 2 }"]
        );
        assert_eq!(split_values("5mbit"), ["5mbit"]);
    }

    #[test]
    fn paths() {
        let keys = |p: &str| {
            segments(p, 0)
                .map(|s| s.into_iter().map(|s| (s.key, s.index)).collect::<Vec<_>>())
                .map_err(|e| e.1)
        };
        assert_eq!(
            keys("class[1].weight"),
            Ok(vec![("class".into(), Some(1)), ("weight".into(), None)])
        );
        assert_eq!(
            keys("class.\"a.b\".rt"),
            Ok(vec![
                ("class".into(), None),
                ("a.b".into(), None),
                ("rt".into(), None)
            ])
        );
        assert!(keys("class..weight").is_err());
        assert!(keys("class[x].weight").is_err());
        assert!(keys("class[1]weight").is_err());
        assert!(keys("\"open").is_err());
    }
}
