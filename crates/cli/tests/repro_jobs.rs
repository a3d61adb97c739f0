//! The JoBS paper's reproductions, shortened: each prints its reconstructions and its
//! verdict table (paper, ours, tolerance, computed verdict) and writes the per-window
//! service and ratios. Whether the paper reproduces is not asserted at this length; the
//! full runs are in the report.

mod common;

use common::{assert_verdicts, repro_shortened as run};

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
