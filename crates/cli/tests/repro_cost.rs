//! `linkshare repro` for the cost studies (`hfsc-fig13`), shortened. Their checks are
//! timing results: the tests check that they are computed and marked as such, and that
//! the tables and figures hold every workload, not what the timings are.

mod common;

use common::{assert_verdicts, repro_shortened};

/// Every row of the verdict table titled `title` is a timing result, and the legend
/// says that `repro --all` does not record it.
fn assert_all_timing(text: &str, title: &str) {
    let rows = assert_verdicts(text, title);
    let marked = text
        .lines()
        .skip_while(|l| !l.contains(title))
        .filter(|l| l.trim_end().ends_with(" (timing)"))
        .count();
    assert_eq!(marked, rows, "{text}");
    assert!(
        text.contains("neither records it in expected.toml nor compares it"),
        "{text}"
    );
}

/// `hfsc-fig13`: twelve workloads (six hierarchies, Markov and backlogged), each timed;
/// the paper's three quoted values beside ours; Fig. 13(a) and (b) drawn.
#[test]
fn hfsc_fig13_times_every_workload_and_marks_its_checks_as_timing() {
    let (text, dir) = repro_shortened("hfsc-fig13", "20");
    assert_all_timing(&text, "hfsc-fig13: the paper's shapes against ours");
    let out = dir.path().join("o");
    let csv = std::fs::read_to_string(out.join("fig13.csv")).expect("fig13.csv");
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    assert_eq!(rows.len(), 12, "{csv}");
    for r in &rows {
        let per_packet: f64 = r[5].parse().expect("ns per packet");
        assert!(per_packet > 0.0 && per_packet.is_finite(), "{r:?}");
        // Enqueue and dequeue are timed apart only when every session is backlogged.
        assert_eq!(r[3] == "backlogged", !r[6].is_empty(), "{r:?}");
    }
    let quoted: Vec<&str> = rows
        .iter()
        .map(|r| r[4])
        .filter(|p| !p.is_empty())
        .collect();
    assert_eq!(quoted, ["9", "8.79", "11.54"], "{csv}");
    for svg in ["fig13a.svg", "fig13b.svg"] {
        let s = std::fs::read_to_string(out.join(svg)).expect(svg);
        assert!(s.contains("Markov") && s.contains("backlogged"), "{svg}");
    }
}
