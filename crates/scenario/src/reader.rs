//! Typed reading of a spanned TOML tree, reporting every problem with its position.
//!
//! The scenario is parsed with `toml`'s [`DeTable`], which keeps the byte range of every
//! key and value. The readers here check types, units and ranges, and turn each problem
//! into a [`Problem`] at the value's position; they never stop at the first one.

use std::ops::Range;
use std::str::FromStr;

use linkshare_core::echo::echo;
use linkshare_core::hierarchy::Origin;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::problem::{LineIndex, Problem, did_you_mean};

/// A byte range in the scenario text.
pub(crate) type Span = Range<usize>;

/// A TOML value with its byte range.
pub(crate) type Value<'i> = Spanned<DeValue<'i>>;

/// A value read from the file, with where it was written.
#[derive(Clone, Debug)]
pub(crate) struct Sp<T> {
    pub(crate) value: T,
    pub(crate) span: Span,
}

/// The reading context: positions and the problems found so far.
#[derive(Debug)]
pub(crate) struct Ctx<'a> {
    pub(crate) lines: LineIndex<'a>,
    pub(crate) problems: Vec<Problem>,
}

impl Ctx<'_> {
    /// The position of the start of `span`.
    pub(crate) fn origin(&self, span: &Span) -> Origin {
        self.lines.origin(span.start)
    }

    /// Records a problem with `field` written at `span`.
    pub(crate) fn report(
        &mut self,
        span: &Span,
        field: &str,
        problem: impl Into<String>,
        fix: impl Into<String>,
    ) {
        let origin = Some(self.origin(span));
        self.problems.push(Problem {
            origin,
            field: Some(field.to_owned()),
            problem: problem.into(),
            fix: fix.into(),
        });
    }

    /// Records `problems`, found by one check that works on values read earlier (a
    /// class tree built from the classes read, a default standing in for a value
    /// refused), except those about a field that already had a problem before this
    /// check: that earlier problem is the root cause, and one root cause gets one
    /// message. (Several problems of this check about one field are all kept.)
    pub(crate) fn push_derived(&mut self, problems: impl IntoIterator<Item = Problem>) {
        let before = self.problems.len();
        for problem in problems {
            let reported = problem.field.is_some()
                && self.problems[..before]
                    .iter()
                    .any(|p| p.field == problem.field);
            if !reported {
                self.problems.push(problem);
            }
        }
    }

    /// [`Ctx::report`] for a derived check (see [`Ctx::push_derived`]).
    pub(crate) fn report_derived(
        &mut self,
        span: &Span,
        field: &str,
        problem: impl Into<String>,
        fix: impl Into<String>,
    ) {
        let origin = Some(self.origin(span));
        self.push_derived([Problem {
            origin,
            field: Some(field.to_owned()),
            problem: problem.into(),
            fix: fix.into(),
        }]);
    }

    /// Reads `v` as a table whose keys must be among `allowed`; reports the other keys.
    pub(crate) fn table<'t, 'i>(
        &mut self,
        path: &str,
        v: &'t Value<'i>,
        allowed: &[&str],
    ) -> Option<Table<'t, 'i>> {
        let DeValue::Table(entries) = v.get_ref() else {
            self.wrong_type(path, v, "a table", "");
            return None;
        };
        let table = Table {
            path: path.to_owned(),
            span: v.span(),
            entries,
        };
        for (key, _) in entries.iter() {
            let name: &str = key.get_ref();
            if !allowed.contains(&name) {
                let hint = did_you_mean(name, allowed.iter().copied());
                self.report(
                    &key.span(),
                    &table.field(&echo(name).to_string()),
                    format!("unknown field `{}`", echo(name)),
                    format!("{hint}accepted fields here: {}", allowed.join(", ")),
                );
            }
        }
        Some(table)
    }

    /// Reports that `v` is not of the `expected` type. `example` (may be empty) shows a
    /// correct value.
    pub(crate) fn wrong_type(&mut self, path: &str, v: &Value<'_>, expected: &str, example: &str) {
        let found = describe(v.get_ref());
        let fix = if example.is_empty() {
            format!("write {expected}")
        } else {
            format!("write {expected}, for example {example}")
        };
        self.report(
            &v.span(),
            path,
            format!("expected {expected}, found {found}"),
            fix,
        );
    }

    /// A string.
    pub(crate) fn string<'t>(&mut self, path: &str, v: &'t Value<'_>) -> Option<Sp<&'t str>> {
        match v.get_ref() {
            DeValue::String(s) => Some(Sp {
                value: s.as_ref(),
                span: v.span(),
            }),
            _ => {
                self.wrong_type(path, v, "a quoted string", "");
                None
            }
        }
    }

    /// A name made of letters, digits, `_`, `-` and `.` (the scenario's name becomes a
    /// directory name, so nothing else is allowed).
    pub(crate) fn name(&mut self, path: &str, v: &Value<'_>) -> Option<Sp<String>> {
        self.checked_name(path, v, false)
    }

    /// The name of a class or a flow (or a reference to a class): as [`Ctx::name`], `:`
    /// allowed too, so that classes can keep tc's handles (`1:10`) as names. Class and
    /// flow names become CSV cells and JSON keys, never file names.
    pub(crate) fn class_name(&mut self, path: &str, v: &Value<'_>) -> Option<Sp<String>> {
        self.checked_name(path, v, true)
    }

    fn checked_name(&mut self, path: &str, v: &Value<'_>, colon: bool) -> Option<Sp<String>> {
        let s = self.string(path, v)?;
        let ok = if colon {
            valid_name(&s.value.replace(':', "_"))
        } else {
            valid_name(s.value)
        };
        if !ok {
            let chars = if colon {
                "letters, digits, `_`, `-`, `.` and `:`"
            } else {
                "letters, digits, `_`, `-` and `.`"
            };
            self.report(
                &s.span,
                path,
                format!("{:?} is not a valid name", echo(s.value)),
                format!("use only {chars} (at least one character, not `.` or `..`)"),
            );
            return None;
        }
        Some(Sp {
            value: s.value.to_owned(),
            span: s.span,
        })
    }

    /// An integer in `min..=max`.
    pub(crate) fn integer(
        &mut self,
        path: &str,
        v: &Value<'_>,
        min: u64,
        max: u64,
    ) -> Option<Sp<u64>> {
        let DeValue::Integer(i) = v.get_ref() else {
            self.wrong_type(path, v, "an integer", &min.max(1).to_string());
            return None;
        };
        let n = i128::from_str_radix(i.as_str(), i.radix()).ok();
        match n.and_then(|n| u64::try_from(n).ok()) {
            Some(n) if (min..=max).contains(&n) => Some(Sp {
                value: n,
                span: v.span(),
            }),
            _ => {
                let fix = if max == u64::MAX {
                    format!("give an integer of at least {min}")
                } else {
                    format!("give an integer from {min} to {max}")
                };
                self.report(
                    &v.span(),
                    path,
                    format!("{} is out of range", echo(i.as_str())),
                    fix,
                );
                None
            }
        }
    }

    /// A boolean (`true` or `false`).
    pub(crate) fn boolean(&mut self, path: &str, v: &Value<'_>) -> Option<Sp<bool>> {
        match v.get_ref() {
            DeValue::Boolean(b) => Some(Sp {
                value: *b,
                span: v.span(),
            }),
            _ => {
                self.wrong_type(path, v, "a boolean", "true");
                None
            }
        }
    }

    /// A number (integer or float), finite.
    pub(crate) fn number(&mut self, path: &str, v: &Value<'_>) -> Option<Sp<f64>> {
        let text = match v.get_ref() {
            DeValue::Integer(i) if i.radix() == 10 => i.as_str(),
            DeValue::Float(f) => f.as_str(),
            _ => {
                self.wrong_type(path, v, "a number", "1.5");
                return None;
            }
        };
        match text.parse::<f64>() {
            Ok(x) if x.is_finite() => Some(Sp {
                value: x,
                span: v.span(),
            }),
            _ => {
                self.report(
                    &v.span(),
                    path,
                    format!("{} is not a finite number", echo(text)),
                    "",
                );
                None
            }
        }
    }

    /// A quantity written as a string with a unit (`"10mbit"`, `"1500b"`, `"10ms"`),
    /// parsed by `linkshare_core::units`.
    pub(crate) fn quantity<T: FromStr>(
        &mut self,
        path: &str,
        v: &Value<'_>,
        what: &str,
        example: &str,
    ) -> Option<Sp<T>>
    where
        T::Err: std::fmt::Display,
    {
        let DeValue::String(s) = v.get_ref() else {
            self.wrong_type(
                path,
                v,
                &format!("{what} as a quoted string with a unit"),
                example,
            );
            return None;
        };
        match s.parse::<T>() {
            Ok(value) => Some(Sp {
                value,
                span: v.span(),
            }),
            Err(e) => {
                self.report(&v.span(), path, e.to_string(), "");
                None
            }
        }
    }

    /// An exact unitless value (a fraction, a ratio) written as a number (`0.01`, `2`)
    /// or a string (`"1%"`, `"1.5"`): the text as written is parsed by
    /// `linkshare_core::units`, so no float rounding happens.
    pub(crate) fn exact<T: FromStr>(
        &mut self,
        path: &str,
        v: &Value<'_>,
        what: &str,
        example: &str,
    ) -> Option<Sp<T>>
    where
        T::Err: std::fmt::Display,
    {
        let text: &str = match v.get_ref() {
            DeValue::String(s) => s,
            DeValue::Integer(i) if i.radix() == 10 => i.as_str(),
            DeValue::Float(f) => f.as_str(),
            _ => {
                self.wrong_type(path, v, what, example);
                return None;
            }
        };
        match text.parse::<T>() {
            Ok(value) => Some(Sp {
                value,
                span: v.span(),
            }),
            Err(e) => {
                self.report(
                    &v.span(),
                    path,
                    e.to_string(),
                    format!("write it as {example}"),
                );
                None
            }
        }
    }

    /// An array.
    pub(crate) fn array<'t, 'i>(
        &mut self,
        path: &str,
        v: &'t Value<'i>,
        example: &str,
    ) -> Option<&'t [Value<'i>]> {
        match v.get_ref() {
            DeValue::Array(a) => Some(a),
            _ => {
                self.wrong_type(path, v, "an array", example);
                None
            }
        }
    }
}

/// A table being read.
#[derive(Debug)]
pub(crate) struct Table<'t, 'i> {
    /// Its path, such as `class[2]` (empty for the document).
    pub(crate) path: String,
    /// Where it was written (its header, or the inline table).
    pub(crate) span: Span,
    entries: &'t DeTable<'i>,
}

impl<'t, 'i> Table<'t, 'i> {
    /// The whole document as a table.
    pub(crate) fn document(doc: &'t Spanned<DeTable<'i>>) -> Table<'t, 'i> {
        Table {
            path: String::new(),
            span: 0..0,
            entries: doc.get_ref(),
        }
    }

    /// `v` as a table named `path`, if it is one, without checking its keys.
    pub(crate) fn of(path: &str, v: &'t Value<'i>) -> Option<Table<'t, 'i>> {
        match v.get_ref() {
            DeValue::Table(entries) => Some(Table {
                path: path.to_owned(),
                span: v.span(),
                entries,
            }),
            _ => None,
        }
    }

    /// The path of field `key` of this table.
    pub(crate) fn field(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_owned()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    /// The value of `key`, if written.
    pub(crate) fn get(&self, key: &str) -> Option<&'t Value<'i>> {
        self.entries
            .iter()
            .find(|(k, _)| {
                let k: &str = k.get_ref();
                k == key
            })
            .map(|(_, v)| v)
    }

    /// Where `key` was written, if it was.
    pub(crate) fn key_span(&self, key: &str) -> Option<Span> {
        self.entries
            .iter()
            .find(|(k, _)| {
                let k: &str = k.get_ref();
                k == key
            })
            .map(|(k, _)| k.span())
    }

    /// The value of `key`, reporting its absence (`example` shows a correct line).
    pub(crate) fn require(
        &self,
        ctx: &mut Ctx<'_>,
        key: &str,
        example: &str,
    ) -> Option<&'t Value<'i>> {
        let v = self.get(key);
        if v.is_none() {
            let table = if self.path.is_empty() {
                "the file".to_owned()
            } else {
                format!("`{}`", self.path)
            };
            ctx.report(
                &self.span,
                &self.field(key),
                format!("{table} has no `{key}`"),
                format!("add `{example}`"),
            );
        }
        v
    }

    /// `key` as a name (see [`Ctx::name`]).
    pub(crate) fn name(&self, ctx: &mut Ctx<'_>, key: &str) -> Option<Sp<String>> {
        ctx.name(&self.field(key), self.get(key)?)
    }

    /// `key` as a class or flow name (see [`Ctx::class_name`]).
    pub(crate) fn class_name(&self, ctx: &mut Ctx<'_>, key: &str) -> Option<Sp<String>> {
        ctx.class_name(&self.field(key), self.get(key)?)
    }

    /// `key` as a quantity with a unit (see [`Ctx::quantity`]).
    pub(crate) fn quantity<T: FromStr>(
        &self,
        ctx: &mut Ctx<'_>,
        key: &str,
        what: &str,
        example: &str,
    ) -> Option<Sp<T>>
    where
        T::Err: std::fmt::Display,
    {
        ctx.quantity(&self.field(key), self.get(key)?, what, example)
    }

    /// `key` as an exact unitless value (see [`Ctx::exact`]).
    pub(crate) fn exact<T: FromStr>(
        &self,
        ctx: &mut Ctx<'_>,
        key: &str,
        what: &str,
        example: &str,
    ) -> Option<Sp<T>>
    where
        T::Err: std::fmt::Display,
    {
        ctx.exact(&self.field(key), self.get(key)?, what, example)
    }

    /// `key` as an integer in `min..=max`.
    pub(crate) fn integer(
        &self,
        ctx: &mut Ctx<'_>,
        key: &str,
        min: u64,
        max: u64,
    ) -> Option<Sp<u64>> {
        ctx.integer(&self.field(key), self.get(key)?, min, max)
    }

    /// Every entry, in key order.
    pub(crate) fn entries(&self) -> impl Iterator<Item = (&'t str, &'t Value<'i>)> {
        self.entries.iter().map(|(k, v)| {
            let k: &str = k.get_ref();
            (k, v)
        })
    }
}

/// Whether `s` is a valid name of a scenario, node or link (a class or flow name may
/// also hold `:`, see [`Ctx::class_name`]).
pub(crate) fn valid_name(s: &str) -> bool {
    !s.is_empty()
        && s != "."
        && s != ".."
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// A short description of a value for "found ..." messages.
fn describe(v: &DeValue<'_>) -> String {
    match v {
        DeValue::String(s) => format!("the string {:?}", echo(s)),
        DeValue::Integer(i) => format!("the integer {i}"),
        DeValue::Float(f) => format!("the number {f}"),
        DeValue::Boolean(b) => format!("the boolean {b}"),
        DeValue::Datetime(d) => format!("the date {d}"),
        DeValue::Array(_) => "an array".to_owned(),
        DeValue::Table(_) => "a table".to_owned(),
    }
}
