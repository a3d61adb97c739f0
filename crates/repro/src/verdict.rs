//! Verdicts computed from a measurement and a stated tolerance, never written by hand.
//!
//! Each [`Check`] holds what the paper says (or, where the paper gives no number, what
//! we derive from its description, labelled so), what we measured, the tolerance
//! (printed beside them) and whether the measurement is within it. Acceptance checks
//! come in two strengths, after the FSC experiments' specification: a *must* check
//! follows from the paper's claim whatever the details the paper left out; a *should*
//! check compares with a number that depends on reconstructed details (buffer size in
//! packets, phases, a lost list of guarantees), and is reported with that caveat.
//!
//! Every reproduction returns its checks; `linkshare repro --all` puts them in one
//! table and compares them with the results that reproduced when `expected.toml` was
//! recorded ([`crate::suite`]). A check's [`Check::result`] names it there, so it is
//! written without measured numbers and is unique within its reproduction.
//!
//! A check can be marked [`Check::timing`]: its measurement is a time taken with this
//! machine's clock (a cost study), so it depends on the machine and its load. Its verdict
//! is printed with the mark ` (timing)` and the legend [`TIMING_LEGEND`]; `repro --all`
//! neither records it in `expected.toml` nor compares it, so that CI never depends on
//! the load of the machine it runs on.
//!
//! A measurement that is missing or not a finite number (NaN, ±inf: an empty run, a
//! point the sweep did not reach, a ratio over zero) is *not measured*: its check never
//! passes, whatever the comparison would say (`-inf <= 10 %` is true, and `f64::max`
//! silently drops a NaN). Numeric constructors test the number; [`Check::claim`] tests
//! the numbers its caller says the claim rests on (never the printed text); [`Extremes`]
//! folds without losing a NaN.

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
    /// What is compared (no measured numbers in it: it names the check).
    pub result: String,
    /// The paper's number or claim, or `expected (derived): ...` where the paper gives
    /// none.
    pub paper: String,
    /// Our measurement.
    pub ours: String,
    /// The tolerance the verdict is computed with.
    pub tolerance: String,
    /// Whether our measurement is within the tolerance (never when not `measured`).
    pub pass: bool,
    /// Whether the measurement exists and is finite; a check without one is "not
    /// measured" and does not pass.
    pub measured: bool,
    /// Must or should.
    pub strength: Strength,
    /// Whether the measurement is a time taken with the machine's clock (see
    /// [`Check::timing`]).
    pub machine_dependent: bool,
}

/// The legend printed under a table with timing results.
pub const TIMING_LEGEND: &str = "(timing): measured with this machine's clock, so it \
     depends on the machine and its load; `repro --all` prints it but neither records it \
     in expected.toml nor compares it";

impl Check {
    /// `ours` within `rel` (a fraction) of the paper's `paper` (not measured when either
    /// is not finite).
    pub fn relative(result: &str, paper: f64, ours: f64, rel: f64, unit: &str) -> Check {
        Check {
            result: result.to_owned(),
            paper: format!("{paper} {unit}"),
            ours: format!("{ours:.3} {unit}"),
            tolerance: format!("±{} %", rel * 100.0),
            // A non-finite expected value is a derivation that could not be made.
            pass: ours.is_finite()
                && paper.is_finite()
                && (ours - paper).abs() <= rel * paper.abs(),
            measured: ours.is_finite() && paper.is_finite(),
            strength: Strength::Must,
            machine_dependent: false,
        }
    }

    /// `ours` within `rel` (a fraction) of `expected`, a number the paper does not print
    /// but its description gives (`how` says how it was derived).
    pub fn derived(
        result: &str,
        how: &str,
        expected: f64,
        ours: f64,
        rel: f64,
        unit: &str,
    ) -> Check {
        Check {
            paper: format!("expected (derived: {how}): {} {unit}", short(expected)),
            ..Check::relative(result, expected, ours, rel, unit)
        }
    }

    /// `ours` against a number the paper prints as `printed` (its decimal text): the
    /// tolerance is one unit in the printed number's last digit, so that a value the
    /// paper rounded or truncated to that digit matches.
    pub fn printed(result: &str, printed: &str, ours: f64, unit: &str) -> Check {
        let paper: f64 = printed.parse().unwrap_or(f64::NAN);
        let decimals = printed.split_once('.').map_or(0, |(_, d)| d.len());
        let unit_step = 10f64.powi(-(decimals as i32));
        Check {
            result: result.to_owned(),
            paper: format!("{printed} {unit}"),
            ours: format!("{} {unit}", short(ours)),
            tolerance: format!("±{} (last printed digit)", short(unit_step)),
            // A hair of slack for the binary representation of the decimals.
            pass: ours.is_finite() && (ours - paper).abs() <= unit_step * (1.0 + 1e-9),
            measured: ours.is_finite(),
            strength: Strength::Must,
            machine_dependent: false,
        }
    }

    /// `ours` in `[lo, hi]`.
    pub fn range(result: &str, paper: &str, ours: f64, lo: f64, hi: f64, unit: &str) -> Check {
        Check {
            result: result.to_owned(),
            paper: paper.to_owned(),
            ours: format!("{ours:.3} {unit}"),
            tolerance: format!("[{lo}, {hi}] {unit}"),
            pass: ours.is_finite() && (lo..=hi).contains(&ours),
            measured: ours.is_finite(),
            strength: Strength::Must,
            machine_dependent: false,
        }
    }

    /// `ours` at least `lo`.
    pub fn at_least(result: &str, paper: &str, ours: f64, lo: f64, unit: &str) -> Check {
        Check {
            tolerance: format!(">= {} {unit}", short(lo)),
            pass: ours.is_finite() && ours >= lo,
            ..Check::range(result, paper, ours, lo, f64::INFINITY, unit)
        }
    }

    /// `ours` at most `hi`.
    pub fn at_most(result: &str, paper: &str, ours: f64, hi: f64, unit: &str) -> Check {
        Check {
            tolerance: format!("<= {} {unit}", short(hi)),
            pass: ours.is_finite() && ours <= hi,
            ..Check::range(result, paper, ours, f64::NEG_INFINITY, hi, unit)
        }
    }

    /// A claim checked by a computed condition, with the tolerance in words. `on` holds
    /// the measurements the condition rests on (the numbers `ours` prints, before
    /// formatting): if any of them is NaN or ±inf, the claim is not measured and does
    /// not pass. A missing measurement is passed as NaN (as [`Extremes`] gives for
    /// none); a claim on exact facts (identical schedules, integer counts) may rest on
    /// no number at all (`&[]`).
    pub fn claim(
        result: &str,
        paper: &str,
        ours: String,
        on: &[f64],
        tolerance: &str,
        pass: bool,
    ) -> Check {
        let measured = on.iter().all(|x| x.is_finite());
        Check {
            result: result.to_owned(),
            paper: paper.to_owned(),
            ours,
            tolerance: tolerance.to_owned(),
            pass: measured && pass,
            measured,
            strength: Strength::Must,
            machine_dependent: false,
        }
    }

    /// The same check, of strength *should*.
    pub fn should(mut self) -> Check {
        self.strength = Strength::Should;
        self
    }

    /// The same check, marked as a timing result: printed with its verdict, never
    /// recorded or compared by `repro --all`.
    pub fn timing(mut self) -> Check {
        self.machine_dependent = true;
        self
    }

    /// The verdict as printed: its word, and ` (timing)` for a timing result.
    pub fn verdict_label(&self) -> String {
        if self.machine_dependent {
            format!("{} (timing)", self.verdict())
        } else {
            self.verdict().to_owned()
        }
    }

    /// The verdict's word.
    pub fn verdict(&self) -> &'static str {
        match (self.pass, self.strength) {
            _ if !self.measured => "not measured",
            (true, _) => "reproduced",
            (false, Strength::Must) => "DIFFERS",
            (false, Strength::Should) => "differs (reconstruction-sensitive)",
        }
    }
}

/// The largest and smallest of a run of measurements, NaN when there are none or any
/// is NaN (where `fold(f64::NEG_INFINITY, f64::max)` gives -inf for none and skips a
/// NaN, both of which a check would read as, say, "no step up").
pub trait Extremes: Iterator<Item = f64> + Sized {
    /// The largest value, or NaN.
    fn largest(self) -> f64 {
        let mut values = self;
        let Some(first) = values.next() else {
            return f64::NAN;
        };
        values.fold(first, |a, b| {
            if a.is_nan() || b.is_nan() {
                f64::NAN
            } else {
                a.max(b)
            }
        })
    }

    /// The smallest value, or NaN.
    fn smallest(self) -> f64 {
        -self.map(|x| -x).largest()
    }
}

impl<I: Iterator<Item = f64>> Extremes for I {}

/// A number with up to four significant decimals, trailing zeros removed.
pub fn short(x: f64) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    let s = format!("{x:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_owned()
    } else {
        s.to_owned()
    }
}

/// The table of `checks`: result | paper | ours | tolerance | verdict; each result
/// prefixed with `prefix(check)` (the reproduction's name in `repro --all`).
pub fn table(checks: &[(&str, &Check)]) -> TextTable {
    let mut t = TextTable {
        header: ["result", "paper", "ours", "tolerance", "verdict"]
            .map(str::to_owned)
            .to_vec(),
        ..TextTable::default()
    };
    for (prefix, c) in checks {
        t.rows.push(vec![
            if prefix.is_empty() {
                c.result.clone()
            } else {
                format!("{prefix}: {}", c.result)
            },
            c.paper.clone(),
            c.ours.clone(),
            c.tolerance.clone(),
            c.verdict_label(),
        ]);
    }
    t
}

/// The legend line for `checks`: [`TIMING_LEGEND`] when one is a timing result, else
/// nothing.
pub fn legend<'a>(mut checks: impl Iterator<Item = &'a Check>) -> String {
    if checks.any(|c| c.machine_dependent) {
        format!("{TIMING_LEGEND}\n")
    } else {
        String::new()
    }
}

/// Prints `checks` as one table: result | paper | ours | tolerance | verdict, the
/// legend of timing results if there are any, and a count.
pub fn print(out: &mut dyn Write, title: &str, checks: &[Check]) -> Result<(), ReproError> {
    let rows: Vec<(&str, &Check)> = checks.iter().map(|c| ("", c)).collect();
    let passed = checks.iter().filter(|c| c.pass).count();
    write!(
        out,
        "\n{title}\n{}{}{passed} of {} reproduced\n",
        table(&rows).render(),
        legend(checks.iter()),
        checks.len()
    )
    .map_err(stdout_failure)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printed_tolerates_one_unit_of_the_last_digit() {
        // The HLS paper prints gamma(HLS) = 0.1456 ms as 0.146 and 0.0966 ms as 0.096.
        assert!(Check::printed("g", "0.146", 0.1456, "ms").pass);
        assert!(Check::printed("g", "0.096", 0.0966, "ms").pass);
        assert!(!Check::printed("g", "0.096", 0.1931, "ms").pass);
        assert!(Check::printed("g", "3600", 3600.048, "ms").pass);
        let c = Check::printed("a", "103.5", 103.5, "bytes");
        assert_eq!(c.tolerance, "±0.1 (last printed digit)");
        assert_eq!(c.verdict(), "reproduced");
    }

    #[test]
    fn verdicts_follow_the_measurement() {
        assert!(Check::at_least("x", "p", 5.0, 5.0, "s").pass);
        assert!(!Check::at_least("x", "p", 4.9, 5.0, "s").pass);
        assert!(Check::at_most("x", "p", 5.0, 5.0, "s").pass);
        let d = Check::derived("r", "80 : 480", 160e3, 161e3, 0.02, "bit/s");
        assert!(d.pass);
        assert!(d.paper.starts_with("expected (derived: 80 : 480): 160000"));
        let s = Check::relative("r", 10.0, 12.0, 0.1, "ms").should();
        assert_eq!(s.verdict(), "differs (reconstruction-sensitive)");
        assert_eq!(short(0.1000), "0.1");
        assert_eq!(short(3600.0), "3600");
    }

    #[test]
    fn a_timing_result_says_so() {
        let plain = Check::at_most("x", "p", 1.2, 1.5, "");
        assert!(!plain.machine_dependent);
        assert_eq!(plain.verdict_label(), "reproduced");
        assert_eq!(legend([&plain].into_iter()), "");
        let timed = plain.clone().timing();
        assert_eq!(timed.verdict(), "reproduced");
        assert_eq!(timed.verdict_label(), "reproduced (timing)");
        assert!(legend([&plain, &timed].into_iter()).starts_with("(timing): "));
        let mut text = Vec::new();
        print(&mut text, "t", &[plain, timed]).unwrap();
        let text = String::from_utf8(text).unwrap();
        assert!(text.contains("reproduced (timing)\n"), "{text}");
        assert!(text.contains(TIMING_LEGEND), "{text}");
    }

    #[test]
    fn a_missing_or_non_finite_measurement_never_passes() {
        for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            for c in [
                Check::relative("r", 1.0, x, 1e9, "ms"),
                Check::printed("p", "1.0", x, "ms"),
                Check::range("g", "p", x, f64::NEG_INFINITY, f64::INFINITY, "ms"),
                Check::at_least("l", "p", x, f64::NEG_INFINITY, "ms"),
                Check::at_most("m", "p", x, f64::INFINITY, "ms"),
                Check::claim(
                    "c",
                    "p",
                    format!("largest step up {:+.1} %", x * 100.0),
                    &[x],
                    "t",
                    true,
                ),
                // One number of several missing is enough.
                Check::claim("c", "p", format!("{x:.1}%, 3%"), &[x, 0.03], "t", true),
                Check::claim(
                    "c",
                    "p",
                    format!("{:.1} -> 2.0 ms", x),
                    &[x, 2.0],
                    "t",
                    true,
                )
                .should(),
                // Whatever the text says: the numbers decide.
                Check::claim("c", "p", "all fine".into(), &[1.0, x], "t", true),
            ] {
                assert!(!c.pass && !c.measured, "{c:?}");
                assert_eq!(c.verdict(), "not measured");
            }
        }
        // A missing measurement is NaN (the largest of no measurements): never measured,
        // never passing.
        let none: [f64; 0] = [];
        let c = Check::claim(
            "c",
            "p",
            "-".into(),
            &[none.into_iter().largest()],
            "t",
            true,
        );
        assert_eq!(c.verdict(), "not measured");
        let no_expectation = Check::derived("d", "fluid", f64::NAN, 1.0, 1e9, "ms");
        assert_eq!(no_expectation.verdict(), "not measured");
        // The printed text does not decide: "NaN" in a name, finite numbers behind it.
        let c = Check::claim("c", "p", "NaN inf, info".into(), &[1.0, 2.0], "t", true);
        assert!(c.pass && c.measured);
        // A claim on exact facts rests on no number and is measured.
        let c = Check::claim("c", "p", "identical".into(), &[], "t", false);
        assert_eq!(c.verdict(), "DIFFERS");
        assert!([1.0, f64::NAN, 3.0].into_iter().largest().is_nan());
        assert!(std::iter::empty().largest().is_nan());
        assert_eq!([1.0, -2.0, 3.0].into_iter().largest(), 3.0);
        assert_eq!([1.0, -2.0, 3.0].into_iter().smallest(), -2.0);
        assert!([1.0, f64::NAN].into_iter().smallest().is_nan());
    }
}
