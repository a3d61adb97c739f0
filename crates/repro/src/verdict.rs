//! Verdicts computed from a measurement and a stated tolerance, never written by hand.
//!
//! Each [`Check`] holds what the paper says, what we measured, the tolerance (printed
//! beside them) and whether the measurement is within it. Acceptance checks come in two
//! strengths, after the FSC experiments' specification: a *must* check follows from the
//! paper's claim whatever the details the paper left out; a *should* check compares with
//! a number that depends on reconstructed details (buffer size in packets, phases), and
//! is reported with that caveat.

use std::io::Write;

use linkshare_report::table::TextTable;

use crate::{ReproError, stdout_failure};

/// How much a check says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strength {
    /// Follows from the paper's claim: a difference is a finding to explain.
    Must,
    /// Depends on details the paper left out (the reconstruction's choices).
    Should,
}

/// One result: the paper's value or claim, ours, the tolerance, and the verdict.
#[derive(Clone, Debug)]
pub struct Check {
    /// What is compared.
    pub result: String,
    /// The paper's number or claim.
    pub paper: String,
    /// Our measurement.
    pub ours: String,
    /// The tolerance the verdict is computed with.
    pub tolerance: String,
    /// Whether our measurement is within the tolerance.
    pub pass: bool,
    /// Must or should.
    pub strength: Strength,
}

impl Check {
    /// `ours` within `rel` (a fraction) of the paper's `paper`.
    pub fn relative(result: &str, paper: f64, ours: f64, rel: f64, unit: &str) -> Check {
        Check {
            result: result.to_owned(),
            paper: format!("{paper} {unit}"),
            ours: format!("{ours:.3} {unit}"),
            tolerance: format!("±{} %", rel * 100.0),
            pass: (ours - paper).abs() <= rel * paper.abs(),
            strength: Strength::Must,
        }
    }

    /// `ours` in `[lo, hi]`.
    pub fn range(result: &str, paper: &str, ours: f64, lo: f64, hi: f64, unit: &str) -> Check {
        Check {
            result: result.to_owned(),
            paper: paper.to_owned(),
            ours: format!("{ours:.3} {unit}"),
            tolerance: format!("[{lo}, {hi}] {unit}"),
            pass: (lo..=hi).contains(&ours),
            strength: Strength::Must,
        }
    }

    /// A claim checked by a computed condition, with the tolerance in words.
    pub fn claim(result: &str, paper: &str, ours: String, tolerance: &str, pass: bool) -> Check {
        Check {
            result: result.to_owned(),
            paper: paper.to_owned(),
            ours,
            tolerance: tolerance.to_owned(),
            pass,
            strength: Strength::Must,
        }
    }

    /// The same check, of strength *should*.
    pub fn should(mut self) -> Check {
        self.strength = Strength::Should;
        self
    }

    /// The verdict's word.
    pub fn verdict(&self) -> &'static str {
        match (self.pass, self.strength) {
            (true, _) => "reproduced",
            (false, Strength::Must) => "DIFFERS",
            (false, Strength::Should) => "differs (reconstruction-sensitive)",
        }
    }
}

/// Prints `checks` as one table: result | paper | ours | tolerance | verdict, and a count.
pub fn print(out: &mut dyn Write, title: &str, checks: &[Check]) -> Result<(), ReproError> {
    let mut t = TextTable {
        header: ["result", "paper", "ours", "tolerance", "verdict"]
            .map(str::to_owned)
            .to_vec(),
        ..TextTable::default()
    };
    for c in checks {
        t.rows.push(vec![
            c.result.clone(),
            c.paper.clone(),
            c.ours.clone(),
            c.tolerance.clone(),
            c.verdict().to_owned(),
        ]);
    }
    let passed = checks.iter().filter(|c| c.pass).count();
    write!(
        out,
        "\n{title}\n{}{passed} of {} reproduced\n",
        t.render(),
        checks.len()
    )
    .map_err(stdout_failure)
}
