//! `linkshare repro --all`: every reproduction in turn, one table of every result, and
//! the regression check against the results recorded in `expected.toml`.
//!
//! Each reproduction writes its files to `DIR/<name>/` and its printed report to
//! `DIR/<name>/report.txt`; [`run_all`] returns every reproduction's checks (or its
//! error). [`Expected`] is `crates/repro/expected.toml`: per combination of `--shorten`
//! and `--seeds`, the results that reproduced when it was recorded (on purpose, with
//! `--record-expected`). [`Expected::compare`] names every such result that no longer
//! reproduces (a *regression*: `repro --all` then exits non-zero) and every result that
//! reproduces but was not recorded. Runs with a combination that was never recorded
//! are not compared, and say so.
//!
//! A timing result ([`Check::timing`]: measured with the machine's clock) is printed
//! with its verdict but neither recorded nor compared: the check must not depend on the
//! load of the machine that runs it.
//!
//! A result is named `<reproduction>: <result>` ([`Outcome::keys`]); the names are
//! unique (a reproduction with two checks of the same name is a bug, reported as an
//! error of that reproduction).

use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;

use crate::verdict::{self, Check};
use crate::{ALL, Options, Repro, ReproError, stdout_failure};

/// `crates/repro/expected.toml`, embedded: what `repro --all` compares with.
pub const EXPECTED_TOML: &str = include_str!("../expected.toml");

/// What one reproduction gave.
#[derive(Debug)]
pub struct Outcome {
    /// Its name.
    pub name: &'static str,
    /// Its checks, or why it could not run.
    pub checks: Result<Vec<Check>, String>,
}

impl Outcome {
    /// The names of the checks that reproduced (`<name>: <result>`), timing results
    /// left out (they are never recorded or compared).
    pub fn reproduced(&self) -> impl Iterator<Item = String> + '_ {
        self.checks
            .iter()
            .flatten()
            .filter(|c| c.pass && !c.machine_dependent)
            .map(|c| format!("{}: {}", self.name, c.result))
    }
}

/// Runs `repro` as `linkshare repro NAME --out DIR/NAME` does, its report going to
/// `DIR/NAME/report.txt`.
fn run_one(repro: &Repro, opts: &Options<'_>) -> Outcome {
    let dir = opts.out.join(repro.name);
    let mut text = Vec::new();
    let one = Options { out: &dir, ..*opts };
    let checks = (repro.run)(&one, &mut text)
        .map_err(|e| e.to_string())
        .and_then(|checks| {
            let mut seen = BTreeSet::new();
            match checks.iter().find(|c| !seen.insert(c.result.as_str())) {
                Some(c) => Err(format!(
                    "internal error: two checks named `{}`; this is a bug in linkshare",
                    c.result
                )),
                None => Ok(checks),
            }
        });
    let written = linkshare_report::create_dir(&dir)
        .and_then(|()| {
            std::fs::write(dir.join("report.txt"), &text).map_err(|error| {
                linkshare_report::WriteError {
                    what: format!("cannot write {}", dir.join("report.txt").display()),
                    error,
                }
            })
        })
        .map_err(|e| e.to_string());
    Outcome {
        name: repro.name,
        checks: written.and(checks),
    }
}

/// Runs every reproduction of [`ALL`] with `opts` (each in `opts.out/<name>/`), calling
/// `started` before each; returns what each gave, in the order of [`ALL`].
pub fn run_all(opts: &Options<'_>, started: &mut dyn FnMut(&Repro)) -> Vec<Outcome> {
    ALL.iter()
        .map(|r| {
            started(r);
            run_one(r, opts)
        })
        .collect()
}

/// Prints the table of every result of `outcomes` (result | paper | ours | tolerance |
/// verdict, each result prefixed with its reproduction), a line per reproduction that
/// could not run, and the counts.
pub fn print_table(out: &mut dyn Write, outcomes: &[Outcome]) -> Result<(), ReproError> {
    let rows: Vec<(&str, &Check)> = outcomes
        .iter()
        .flat_map(|o| o.checks.iter().flatten().map(move |c| (o.name, c)))
        .collect();
    let passed = rows.iter().filter(|(_, c)| c.pass).count();
    write!(
        out,
        "{}{}",
        verdict::table(&rows).render(),
        verdict::legend(rows.iter().map(|(_, c)| *c))
    )
    .map_err(stdout_failure)?;
    for o in outcomes {
        if let Err(e) = &o.checks {
            writeln!(out, "{}: could not run: {e}", o.name).map_err(stdout_failure)?;
        }
    }
    writeln!(
        out,
        "{passed} of {} results reproduced, in {} reproductions",
        rows.len(),
        outcomes.len()
    )
    .map_err(stdout_failure)
}

/// The results recorded as reproducing, per combination of `--shorten` and `--seeds`.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Expected {
    /// One entry per recorded combination.
    #[serde(default)]
    pub run: Vec<Recorded>,
}

/// The results that reproduced in runs with one `--shorten` and `--seeds`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Recorded {
    /// `--shorten`.
    pub shorten: u32,
    /// `--seeds`.
    pub seeds: u32,
    /// `<reproduction>: <result>` of every result that reproduced, sorted.
    pub reproduced: Vec<String>,
}

/// What a run of every reproduction says against [`Expected`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Comparison {
    /// Whether the run's `--shorten` and `--seeds` were recorded (if not, nothing was
    /// compared).
    pub recorded: bool,
    /// Results recorded as reproducing that no longer do (or whose reproduction failed
    /// or no longer has them).
    pub regressions: Vec<String>,
    /// Results that reproduce and were not recorded.
    pub new: Vec<String>,
}

impl Expected {
    /// Parses `expected.toml`'s text.
    pub fn parse(text: &str) -> Result<Expected, String> {
        toml::from_str(text).map_err(|e| format!("expected.toml is not valid: {e}"))
    }

    /// The entry of `shorten` and `seeds`, if recorded.
    pub fn get(&self, shorten: u32, seeds: u32) -> Option<&Recorded> {
        self.run
            .iter()
            .find(|r| r.shorten == shorten && r.seeds == seeds)
    }

    /// `outcomes` (of runs with `shorten` and `seeds`) against the recorded results.
    pub fn compare(&self, outcomes: &[Outcome], shorten: u32, seeds: u32) -> Comparison {
        let Some(recorded) = self.get(shorten, seeds) else {
            return Comparison::default();
        };
        let now: BTreeSet<String> = outcomes.iter().flat_map(Outcome::reproduced).collect();
        let before: BTreeSet<&String> = recorded.reproduced.iter().collect();
        Comparison {
            recorded: true,
            regressions: recorded
                .reproduced
                .iter()
                .filter(|r| !now.contains(*r))
                .cloned()
                .collect(),
            new: now
                .iter()
                .filter(|r| !before.contains(r))
                .cloned()
                .collect(),
        }
    }

    /// These results with the entry of `shorten` and `seeds` replaced by what
    /// `outcomes` reproduced (entries sorted by `shorten`, then `seeds`).
    pub fn record(&self, outcomes: &[Outcome], shorten: u32, seeds: u32) -> Expected {
        let mut run: Vec<Recorded> = self
            .run
            .iter()
            .filter(|r| !(r.shorten == shorten && r.seeds == seeds))
            .cloned()
            .collect();
        let reproduced: BTreeSet<String> = outcomes.iter().flat_map(Outcome::reproduced).collect();
        run.push(Recorded {
            shorten,
            seeds,
            reproduced: reproduced.into_iter().collect(),
        });
        run.sort_by_key(|r| (r.shorten, r.seeds));
        Expected { run }
    }

    /// The file's text: a header saying what it is and how to regenerate it, then the
    /// entries, one result a line (so that a change reads as a diff).
    pub fn to_toml(&self) -> String {
        let mut text = String::from(
            "# The results of `linkshare repro --all` that reproduced when this file was\n\
             # recorded, per `--shorten` and `--seeds`: `repro --all` exits with status 1 when\n\
             # one of them no longer reproduces. Regenerate an entry only on purpose, after\n\
             # reading what changed:\n\
             #   linkshare repro --all [--shorten N] [--seeds N] --record-expected crates/repro/expected.toml\n",
        );
        for r in &self.run {
            text.push_str(&format!(
                "\n[[run]]\nshorten = {}\nseeds = {}\nreproduced = [\n",
                r.shorten, r.seeds
            ));
            for name in &r.reproduced {
                text.push_str(&format!("  {},\n", toml::Value::String(name.clone())));
            }
            text.push_str("]\n");
        }
        text
    }
}

/// Writes `expected`'s text to `path`.
pub fn write_expected(path: &Path, expected: &Expected) -> Result<(), ReproError> {
    std::fs::write(path, expected.to_toml()).map_err(|error| {
        ReproError::Write(linkshare_report::WriteError {
            what: format!("cannot write {}", path.display()),
            error,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(name: &'static str, results: &[(&str, bool)]) -> Outcome {
        Outcome {
            name,
            checks: Ok(results
                .iter()
                .map(|&(r, pass)| Check::claim(r, "p", "o".to_owned(), &[], "t", pass))
                .collect()),
        }
    }

    #[test]
    fn a_result_that_stops_reproducing_is_a_regression() {
        let first = [outcome("a", &[("x", true), ("y", false)])];
        let e = Expected::default().record(&first, 20, 2);
        assert_eq!(e.get(20, 2).unwrap().reproduced, ["a: x"]);
        assert_eq!(
            e.compare(&first, 20, 2),
            Comparison {
                recorded: true,
                ..Comparison::default()
            }
        );
        let later = [outcome("a", &[("x", false), ("y", true)])];
        let c = e.compare(&later, 20, 2);
        assert_eq!(c.regressions, ["a: x"]);
        assert_eq!(c.new, ["a: y"]);
        // A failed reproduction loses every result it had.
        let failed = [Outcome {
            name: "a",
            checks: Err("boom".to_owned()),
        }];
        assert_eq!(e.compare(&failed, 20, 2).regressions, ["a: x"]);
        // Another combination was not recorded: nothing to compare.
        assert!(!e.compare(&later, 1, 5).recorded);
        // The text round-trips.
        assert_eq!(Expected::parse(&e.to_toml()).unwrap(), e);
    }

    /// A timing result is neither recorded nor compared, whether it passes or not.
    #[test]
    fn timing_results_are_never_recorded_or_compared() {
        let with = |pass: bool| Outcome {
            name: "a",
            checks: Ok(vec![
                Check::claim("x", "p", "o".to_owned(), &[1.0], "t", true),
                Check::claim("speed", "p", "o".to_owned(), &[1.0], "t", pass).timing(),
            ]),
        };
        let e = Expected::default().record(&[with(true)], 20, 1);
        assert_eq!(e.get(20, 1).unwrap().reproduced, ["a: x"]);
        for pass in [true, false] {
            let c = e.compare(&[with(pass)], 20, 1);
            assert!(c.regressions.is_empty() && c.new.is_empty(), "{c:?}");
        }
        let mut text = Vec::new();
        print_table(&mut text, &[with(false)]).unwrap();
        let text = String::from_utf8(text).unwrap();
        assert!(text.contains("DIFFERS (timing)"), "{text}");
        assert!(text.contains(verdict::TIMING_LEGEND), "{text}");
    }

    #[test]
    fn the_embedded_file_parses() {
        Expected::parse(EXPECTED_TOML).expect("expected.toml");
    }
}
