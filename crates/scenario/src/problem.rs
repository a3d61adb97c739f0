//! Problems found in a scenario, each with where it was written and how to fix it.

use linkshare_core::echo::echo;
use std::fmt;
use std::sync::Arc;

use linkshare_core::hierarchy::Origin;

use crate::edit::EDIT_FILE;

/// One problem in a scenario (or in a file it refers to, or in a command-line override).
///
/// Printed as `FILE:LINE:COL: field `PATH`: PROBLEM; FIX` — the position is left out
/// when the problem has none (a command-line option), the field when the problem is not
/// about one field (a TOML syntax error).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// Where it was written (1-based line and column, in characters).
    pub origin: Option<Origin>,
    /// The field concerned, as a path such as `class[2].ceil` or `flow[0].source.rate`
    /// (indices are 0-based positions in the file's arrays of tables).
    pub field: Option<String>,
    /// What is wrong.
    pub problem: String,
    /// How to fix it (may be empty when the problem says it all).
    pub fix: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(o) = &self.origin {
            write!(f, "{o}: ")?;
        }
        if let Some(field) = &self.field {
            write!(f, "field `{field}`: ")?;
        }
        f.write_str(&self.problem)?;
        if !self.fix.is_empty() {
            write!(f, "; {}", self.fix)?;
        }
        Ok(())
    }
}

/// Every problem found in a scenario, in file order (problems without a position first).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Problems(pub Vec<Problem>);

impl Problems {
    /// Sorts by file, line and column, keeping the order of problems at the same place,
    /// and removes exact duplicates.
    pub(crate) fn sort(&mut self) {
        self.0.sort_by(|a, b| {
            let key = |p: &Problem| {
                p.origin
                    .as_ref()
                    .map(|o| (o.file.clone(), o.line, o.column))
            };
            key(a).cmp(&key(b))
        });
        self.0.dedup();
    }

    /// A single problem without a position (command-line options).
    pub fn option(option: &str, problem: String, fix: String) -> Problems {
        Problems(vec![Problem {
            origin: None,
            field: Some(option.to_owned()),
            problem,
            fix,
        }])
    }
}

impl fmt::Display for Problems {
    /// One problem per line, without a trailing newline.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{p}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Problems {}

/// Converts byte offsets of one text into 1-based line and column [`Origin`]s.
///
/// The text may end with an appendix of [edits](crate::edit): offsets from the first
/// edit on are reported in the pseudo-file [`EDIT_FILE`], line N being the Nth edit.
#[derive(Debug)]
pub(crate) struct LineIndex<'a> {
    file: Arc<str>,
    text: &'a str,
    /// Byte offset of the start of every line.
    starts: Vec<usize>,
    /// Byte offset of the start of every edit, in order.
    edits: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    pub(crate) fn new(file: Arc<str>, text: &'a str) -> LineIndex<'a> {
        LineIndex::with_edits(file, text, Vec::new())
    }

    /// `text` whose edits start at the offsets `edits` (increasing).
    pub(crate) fn with_edits(file: Arc<str>, text: &'a str, edits: Vec<usize>) -> LineIndex<'a> {
        let starts = core::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        LineIndex {
            file,
            text,
            starts,
            edits,
        }
    }

    /// The position of byte `offset` (clamped to the text); the column counts characters.
    pub(crate) fn origin(&self, offset: usize) -> Origin {
        let offset = offset.min(self.text.len());
        let edit = self.edits.partition_point(|&s| s <= offset);
        let (file, line, start) = if edit > 0 {
            (EDIT_FILE.into(), edit, self.edits[edit - 1])
        } else {
            let line = self.starts.partition_point(|&s| s <= offset).max(1);
            (self.file.clone(), line, self.starts[line - 1])
        };
        let column = self
            .text
            .get(start..offset)
            .map_or(offset - start, |s| s.chars().count());
        Origin {
            file,
            line: u32::try_from(line).unwrap_or(u32::MAX),
            column: u32::try_from(column + 1).unwrap_or(u32::MAX),
        }
    }
}

/// The Levenshtein distance between two short strings (in characters).
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let subst = prev[j] + usize::from(ca != cb);
            cur[j + 1] = subst.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        core::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The candidate closest to `word` (compared in lower case), if it is close enough to
/// be a plausible typo: at most a third of the word's length in edits, clamped to 1..=3.
pub(crate) fn closest<'c>(
    word: &str,
    candidates: impl IntoIterator<Item = &'c str>,
) -> Option<&'c str> {
    let limit = (word.chars().count() / 3).clamp(1, 3);
    candidates
        .into_iter()
        .map(|c| (edit_distance(&word.to_ascii_lowercase(), c), c))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// "did you mean `x`? " (the candidate closest to `word` by edit distance, if close
/// enough) or nothing: the start of a fix for a misspelt name.
pub fn did_you_mean<'c>(word: &str, candidates: impl IntoIterator<Item = &'c str>) -> String {
    closest(word, candidates).map_or(String::new(), |c| format!("did you mean `{}`? ", echo(c)))
}

/// Most names a message lists.
const MAX_LISTED: usize = 20;

/// `a, b, c` for a message: each name echoed ([`echo`]), at most 20 of them and then
/// how many more; `(none)` for no name.
pub(crate) fn name_list<S: AsRef<str>>(names: &[S]) -> String {
    if names.is_empty() {
        return "(none)".to_owned();
    }
    let mut out: Vec<String> = names
        .iter()
        .take(MAX_LISTED)
        .map(|n| echo(n.as_ref()).to_string())
        .collect();
    if names.len() > MAX_LISTED {
        out.push(format!("and {} more", names.len() - MAX_LISTED));
    }
    out.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_count_characters() {
        let text = "ab\nçd = 1\n\nx";
        let idx = LineIndex::new("f.toml".into(), text);
        let at = |o: usize| {
            let o = idx.origin(o);
            (o.line, o.column)
        };
        assert_eq!(at(0), (1, 1));
        assert_eq!(at(2), (1, 3));
        assert_eq!(at(3), (2, 1));
        // `ç` is two bytes: `d` is the second character of line 2.
        assert_eq!(at(5), (2, 2));
        assert_eq!(at(text.len() - 1), (4, 1));
        assert_eq!(at(10_000), (4, 2));
    }

    #[test]
    fn suggestions() {
        assert_eq!(edit_distance("weigth", "weight"), 2);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(
            closest("weigth", ["rate", "weight", "ceil"]),
            Some("weight")
        );
        assert_eq!(closest("xyz", ["rate", "weight"]), None);
        assert_eq!(closest("Ceil", ["rate", "ceil"]), Some("ceil"));
    }
}
