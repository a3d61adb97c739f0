//! The JoBS paper's reproductions, shortened: each prints its reconstructions and its
//! verdict table (paper, ours, tolerance, computed verdict) and writes the per-window
//! service and ratios. Whether the paper reproduces is not asserted at this length; the
//! full runs are in the report.

mod common;

use common::{TempDir, linkshare, stderr, stdout};

/// Runs `linkshare repro NAME --shorten N --seeds 1 --out o`; returns its output and dir.
fn run(name: &str, shorten: &str) -> (String, TempDir) {
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

/// Every row of the verdict table titled `title` ends in a computed verdict.
fn assert_verdicts(text: &str, title: &str) -> usize {
    let table: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.contains(title))
        .skip_while(|l| !l.starts_with("result "))
        .skip(2)
        .take_while(|l| !l.ends_with(" reproduced") || l.contains("  "))
        .collect();
    assert!(!table.is_empty(), "no verdict rows in\n{text}");
    for r in &table {
        let r = r.trim_end();
        assert!(
            r.ends_with("reproduced")
                || r.ends_with("DIFFERS")
                || r.ends_with("sensitive)")
                || r.ends_with("not measured"),
            "a row without a verdict: {r}"
        );
    }
    table.len()
}

#[test]
fn exp1_prints_reconstructions_and_verdicts() {
    let (text, dir) = run("jobs-exp1", "100");
    for needle in [
        "Reconstructed",
        "Not checked: E1.d",
        "E1.a D2/D1",
        "E1.e D4/D3",
    ] {
        assert!(text.contains(needle), "missing {needle} in\n{text}");
    }
    assert!(assert_verdicts(&text, "jobs-exp1: paper") >= 13);
    for n in [1, 10, 20] {
        let d = dir.path().join(format!("o/sampling-{n}"));
        for f in ["summary.json", "service.csv", "ratios.csv"] {
            assert!(d.join(f).is_file(), "sampling-{n}/{f}");
        }
    }
}

#[test]
fn exp2_compares_four_schedulers_and_judges_jobs() {
    let (text, dir) = run("jobs-exp2", "60");
    for needle in [
        "Reconstructed",
        "jobs",
        "fifo",
        "prio",
        "drr",
        "E2.a R1",
        "E2.f",
    ] {
        assert!(text.contains(needle), "missing {needle} in\n{text}");
    }
    assert_eq!(assert_verdicts(&text, "jobs-exp2 under jobs"), 23);
    for s in ["jobs", "fifo", "prio", "drr"] {
        assert!(
            dir.path().join(format!("o/{s}/service.csv")).is_file(),
            "{s}"
        );
    }
}
