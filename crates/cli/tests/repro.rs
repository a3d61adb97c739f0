//! `linkshare repro`: the analytic reproductions print the paper's numbers and ours, and
//! a shortened Experiment 2 under HLS tracks the reference allocation.

mod common;

use common::{TempDir, linkshare, stderr, stdout};

fn assert_contains(text: &str, needles: &[&str]) {
    for n in needles {
        assert!(text.contains(n), "missing {n:?} in\n{text}");
    }
}

#[test]
fn unknown_or_missing_name_lists_the_reproductions() {
    let names = [
        "hls-bounds",
        "hls-table2",
        "hls-exp1",
        "hls-exp2",
        "hls-exp3",
    ];
    let dir = TempDir::new("repro-list");
    let o = linkshare(&["repro"], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_contains(&stdout(&o), &names);
    let o = linkshare(&["repro", "hls-exp9"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert_contains(&stderr(&o), &names);
    assert_contains(&stderr(&o), &["unknown reproduction `hls-exp9`"]);
}

#[test]
fn hls_bounds_prints_the_papers_numbers_and_ours() {
    let dir = TempDir::new("repro-bounds");
    let o = linkshare(&["repro", "hls-bounds", "--out", "b"], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    // Paper: 103.5, 1522.5, 0.146, 3600; ours: 103.5, 1522.5, 0.1456, 3600.048.
    let row = |name: &str| -> Vec<String> {
        let line = text
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no row {name} in\n{text}"));
        line.split_whitespace().map(str::to_owned).collect()
    };
    assert_eq!(row("alpha(HLS)")[4..6], ["103.5", "103.5"]);
    assert_eq!(row("alpha(HDRR)")[4..6], ["1522.5", "1522.5"]);
    assert_eq!(row("gamma(HLS)")[4..6], ["0.146", "0.1456"]);
    assert_eq!(row("gamma(HDRR)")[4..6], ["3600", "3600.048"]);
    let csv = std::fs::read_to_string(dir.path().join("b/bounds.csv")).unwrap();
    assert!(csv.starts_with("bound,theorem,unit,paper,ours\n"), "{csv}");
    assert_eq!(csv.lines().count(), 5);
}

#[test]
fn hls_table2_prints_both_gamma_columns_and_the_discrepancy() {
    let dir = TempDir::new("repro-table2");
    let o = linkshare(&["repro", "hls-table2", "--out", "t"], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert_contains(&text, &["Thm. 5", "Thm. 5 / 2", "Thm. 6"]);
    // The discrepancy is a computed verdict: the column is Theorem 5 without its factor 2.
    let verdict = text
        .lines()
        .find(|l| l.starts_with("Table II gamma(HLS) column = Thm. 5"))
        .unwrap_or_else(|| panic!("no discrepancy check in\n{text}"));
    assert!(verdict.contains("0 of 8 rows match Thm. 5; 8 of 8 match Thm. 5 / 2"));
    assert!(verdict.trim_end().ends_with("DIFFERS"), "{verdict}");
    // l = 4: 8 leaves, paper 0.096 ms; 14 classes of weights 3 and 7 (7 of each: 70 B)
    // and 8 leaves of 1500 B make 12 070 B: 0.09656 ms at 1 Gbit/s, twice that is
    // Theorem 5's 0.19312 ms. HDRR: paper 12, Theorem 6 12.08 ms.
    let l4: Vec<&str> = text
        .lines()
        .find(|l| l.starts_with("4 "))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(l4[..5], ["4", "8", "0.096", "0.1931", "0.0966"]);
    assert_eq!(l4[6..8], ["12", "12.08"]);
    let l11: Vec<&str> = text
        .lines()
        .find(|l| l.starts_with("11 "))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(l11[..3], ["11", "1024", "12.37"]);
    assert_eq!(l11[6], "120000012");
    let csv = std::fs::read_to_string(dir.path().join("t/table2.csv")).unwrap();
    assert_eq!(csv.lines().count(), 9);
}

/// Experiment 2 with every time divided by 5 (5 s; C pauses during [2, 4) s; windows of
/// 40 ms), HLS only: in every interval, after the first window, each class is within 2%
/// of its reference: 300 : 300 : 400 Mbit/s for A1 : B2 : C while all send, 500 : 500
/// while C pauses, whatever the variant's leaf guarantees. (Shortened less, C's full
/// queue of 1000 packets, which drains in 20 ms at 400 Mbit/s after C stops sending,
/// would still be sending during the first measured window of the pause.)
#[test]
fn shortened_exp2_under_hls_tracks_the_reference() {
    let dir = TempDir::new("repro-exp2");
    let o = linkshare(
        &[
            "repro",
            "hls-exp2",
            "--schedulers",
            "hls",
            "--shorten",
            "5",
            "--out",
            "e",
        ],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_contains(&stdout(&o), &["variant L", "variant M", "variant H"]);
    for variant in ["L", "M", "H"] {
        let base = dir.path().join("e").join(variant);
        for f in [
            "hls/throughput.csv",
            "hls/summary.json",
            "throughput.svg",
            "throughput-hls.svg",
            "reference.svg",
        ] {
            assert!(base.join(f).exists(), "{variant}/{f}");
        }
        // The panel and the reference are drawn as the paper's Fig. 7: the interior
        // classes and the link's total labelled on the plot.
        for f in ["throughput-hls.svg", "reference.svg"] {
            let svg = std::fs::read_to_string(base.join(f)).unwrap();
            for label in [">A<", ">B<", ">Total<"] {
                assert!(svg.contains(label), "{variant}/{f}: {label}");
            }
        }
        let csv = std::fs::read_to_string(base.join("rates.csv")).unwrap();
        let mut checked = 0;
        for line in csv.lines().skip(1) {
            let cells: Vec<&str> = line.split(',').collect();
            let (start, class) = (cells[0].parse::<f64>().unwrap(), cells[3]);
            let reference: f64 = cells[5].parse().unwrap();
            assert_eq!(cells[6], "hls");
            let measured: f64 = cells[7].parse().unwrap();
            let expected = match (class, start > 1.5 && start < 2.5) {
                ("A1" | "B2", false) => 300e6,
                ("C", false) => 400e6,
                ("A1" | "B2", true) => 500e6,
                ("C", true) => 0.0,
                _ => continue,
            };
            assert!((reference - expected).abs() < 1.0, "{line}");
            assert!(
                (measured - expected).abs() <= 0.02 * expected.max(1e6),
                "{variant}: {line}"
            );
            checked += 1;
        }
        assert_eq!(checked, 9, "{variant}: three classes in three intervals");
    }
}

/// `hls-exp3` draws Fig. 10's hierarchy (reconstructed): every class of the scenario
/// named with its guarantee, the three sending leaves A, B1 and C1 — and only they —
/// shaded.
#[test]
fn hls_exp3_draws_fig10_with_the_active_classes_shaded() {
    let (_, dir) = common::repro_shortened("hls-exp3", "20");
    let svg =
        std::fs::read_to_string(dir.path().join("o").join("hierarchy.svg")).expect("hierarchy.svg");
    for (name, guarantee) in [
        ("link", "1gbit"),
        ("A", "200mbit"),
        ("B", "250mbit"),
        ("C", "250mbit"),
        ("B1", "50mbit"),
        ("B2", "200mbit"),
        ("C1", "50mbit"),
        ("C2", "200mbit"),
    ] {
        assert_eq!(svg.matches(&format!(">{name}</text>")).count(), 1, "{name}");
        assert!(svg.contains(&format!(">{guarantee}</text>")), "{guarantee}");
    }
    let shaded: Vec<&str> = svg
        .split(r#"<g class="class active">"#)
        .skip(1)
        .map(|g| {
            let name = g.split("</text>").next().unwrap();
            &name[name.rfind('>').unwrap() + 1..]
        })
        .collect();
    assert_eq!(shaded, ["A", "B1", "C1"]);
}
