//! Helpers shared by the command line's integration tests: those of the scenario
//! loader's tests, and running the binary.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

#[path = "../../../scenario/tests/common/mod.rs"]
mod loader;

pub use loader::*;

/// Runs the `linkshare` binary with `args` in `cwd`.
pub fn linkshare(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_linkshare"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run linkshare")
}

/// The standard output of a run, as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The standard error of a run, as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs `linkshare repro NAME --shorten N --seeds 1 --out o` in a fresh directory and
/// checks that it succeeded; returns its standard output and the directory.
pub fn repro_shortened(name: &str, shorten: &str) -> (String, TempDir) {
    let dir = TempDir::new(name);
    let o = linkshare(
        &[
            "repro",
            name,
            "--shorten",
            shorten,
            "--seeds",
            "1",
            "--out",
            "o",
        ],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    (stdout(&o), dir)
}

/// Checks that every row of a verdict table ends in a verdict, a timing result's after
/// its ` (timing)` mark.
pub fn assert_rows_end_in_a_verdict(rows: &[&str]) {
    for r in rows {
        let r = r.trim_end();
        let r = r.strip_suffix(" (timing)").unwrap_or(r);
        assert!(
            r.ends_with("reproduced")
                || r.ends_with("DIFFERS")
                || r.ends_with("not measured")
                || r.ends_with("(reconstruction-sensitive)"),
            "a row without a verdict: {r}"
        );
    }
}

/// Checks that the verdict table titled `title` in a reproduction's output has rows,
/// each ending in a computed verdict (marked ` (timing)` for a timing result), and its
/// count line (`N of M reproduced`);
/// returns the number of rows.
pub fn assert_verdicts(text: &str, title: &str) -> usize {
    assert!(text.contains(title), "no table {title:?} in\n{text}");
    let is_count = |l: &str| l.ends_with(" reproduced") && !l.contains("  ");
    let rows: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.contains(title))
        .skip_while(|l| !l.starts_with("result "))
        .skip(2)
        .take_while(|l| !is_count(l) && !l.starts_with("(timing): "))
        .collect();
    assert!(!rows.is_empty(), "no verdict rows in\n{text}");
    assert_rows_end_in_a_verdict(&rows);
    assert!(text.contains(" reproduced\n"), "no count line in\n{text}");
    rows.len()
}
