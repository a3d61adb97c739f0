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

/// `hls-fig12`: every scheduler, classification and leaf count timed (7 flat, 4 binary
/// up to HTB's 128), its checks timing results, Fig. 12(a) and (b) drawn.
#[test]
fn hls_fig12_times_every_point_and_marks_its_checks_as_timing() {
    let (text, dir) = repro_shortened("hls-fig12", "20");
    assert_all_timing(&text, "hls-fig12: the paper's claims against ours");
    let out = dir.path().join("o");
    let csv = std::fs::read_to_string(out.join("fig12.csv")).expect("fig12.csv");
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    // (7 flat + 4 binary leaf counts) x 4 schedulers x 3 classifications.
    assert_eq!(rows.len(), 11 * 4 * 3, "{csv}");
    for r in &rows {
        let ns: f64 = r[4].parse().expect("ns per packet");
        assert!(ns > 0.0 && ns.is_finite(), "{r:?}");
    }
    let binary_max = rows
        .iter()
        .filter(|r| r[0] == "binary")
        .map(|r| r[1].parse::<usize>().unwrap())
        .max();
    assert_eq!(binary_max, Some(128));
    for svg in ["fig12a.svg", "fig12b.svg"] {
        let s = std::fs::read_to_string(out.join(svg)).expect(svg);
        for name in ["hls", "htb", "cbq", "fifo"] {
            assert!(s.contains(name), "{svg} has no {name}");
        }
    }
}
