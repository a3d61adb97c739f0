//! `linkshare repro --all --shorten 20 --seeds 1`: every reproduction runs, one table of
//! every result with a computed verdict, and no result recorded as reproducing in
//! `crates/repro/expected.toml` for this length has stopped reproducing (the regression
//! check CI runs). About a minute in a debug build.

mod common;

use common::{TempDir, linkshare, stderr, stdout};
use linkshare_repro::ALL;

#[test]
fn every_reproduction_runs_and_nothing_recorded_regressed() {
    let dir = TempDir::new("repro-all");
    let o = linkshare(
        &[
            "repro",
            "--all",
            "--shorten",
            "20",
            "--seeds",
            "1",
            "--out",
            "o",
        ],
        dir.path(),
    );
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{}\n{text}", stderr(&o));
    assert!(!text.contains("REGRESSION"), "{text}");
    assert!(!text.contains("could not run"), "{text}");
    assert!(!text.contains("not compared"), "{text}");
    let rows: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("result "))
        .skip(2)
        .take_while(|l| !l.contains(" results reproduced, in ") && !l.starts_with("(timing): "))
        .collect();
    for r in ALL {
        assert!(
            rows.iter().any(|l| l.starts_with(&format!("{}: ", r.name))),
            "no result of {} in\n{text}",
            r.name
        );
        assert!(
            dir.path()
                .join("o")
                .join(r.name)
                .join("report.txt")
                .is_file(),
            "{}",
            r.name
        );
    }
    // The cost studies' results are timing results: printed, never recorded or compared.
    assert!(
        rows.iter().any(|l| l.trim_end().ends_with(" (timing)")),
        "{text}"
    );
    assert!(
        text.contains("neither records it in expected.toml"),
        "{text}"
    );
    common::assert_rows_end_in_a_verdict(&rows);
    assert!(
        text.contains(&format!(
            "results reproduced, in {} reproductions",
            ALL.len()
        )),
        "{text}"
    );
}
