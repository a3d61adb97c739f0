//! `linkshare repro keshav-cost`, shortened: the reconstruction is printed as such, every
//! grid point gets a row with the four structures' costs, every claim a computed verdict,
//! and the figures and CSVs are written. Whether the paper reproduces is not asserted at
//! this length (the traces are 500 times shorter); the full run is in the report.

mod common;

use common::{TempDir, linkshare, stderr, stdout};

#[test]
fn shortened_cost_study_prints_every_claim_and_writes_every_figure() {
    let dir = TempDir::new("repro-keshav-cost");
    let o = linkshare(
        &["repro", "keshav-cost", "--shorten", "500", "--out", "o"],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    for needle in [
        "[reconstructed]",
        "(10,200)",
        "here 5s, shortened 500x",
        "keshav-cost: the paper's claims against ours",
        "M1 PERC below HEAP and TREE",
        "M6 running average",
        "S8 M1-M3 under a 10 Mbit/s trunk",
        "Fig. 3: running average insertion cost at (10, 200)",
        "Sensitivity runs",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
    // Every verdict row ends in a computed verdict.
    let rows: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("result "))
        .skip(2)
        .take_while(|l| !l.ends_with(" reproduced") || l.contains("  "))
        .collect();
    assert_eq!(rows.len(), 21, "{text}");
    for r in &rows {
        let r = r.trim_end();
        assert!(
            r.ends_with("reproduced")
                || r.ends_with("DIFFERS")
                || r.ends_with("(reconstruction-sensitive)"),
            "a row without a verdict: {r}"
        );
    }
    // The grid: 35 points, each once per structure and variant in cost.csv.
    let out = dir.path().join("o");
    let csv = std::fs::read_to_string(out.join("cost.csv")).unwrap();
    assert!(
        csv.starts_with("variant,axis,N,B,W,load_ratio,zone,structure,"),
        "{csv}"
    );
    assert_eq!(csv.lines().count(), 1 + 4 * 35 * 4);
    for variant in ["paper", "w8", "trunk10", "newreno"] {
        let rows = csv
            .lines()
            .filter(|l| l.starts_with(&format!("{variant},")))
            .count();
        assert_eq!(rows, 35 * 4, "{variant}");
    }
    let fig3 = std::fs::read_to_string(out.join("fig3.csv")).unwrap();
    assert!(fig3.starts_with("time_s,structure,insertions,avg_insert_ops\n"));
    let mut figures = vec!["fig3.svg".to_owned(), "fig4.svg".to_owned()];
    for a in ["A", "B", "C", "D", "E"] {
        figures.push(format!("fig5_{a}.svg"));
        figures.push(format!("fig6_{a}.svg"));
    }
    for v in ["", "_w8", "_trunk10", "_newreno"] {
        figures.push(format!("fig7{v}.svg"));
    }
    for f in &figures {
        let svg = std::fs::read_to_string(out.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert!(svg.starts_with("<svg") || svg.starts_with("<?xml"), "{f}");
    }
}

#[test]
fn shortened_cost_study_is_deterministic() {
    let run = || {
        let dir = TempDir::new("repro-keshav-det");
        let o = linkshare(
            &["repro", "keshav-cost", "--shorten", "1000", "--out", "o"],
            dir.path(),
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        std::fs::read_to_string(dir.path().join("o/cost.csv")).unwrap()
    };
    assert_eq!(run(), run());
}
