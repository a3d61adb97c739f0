//! `linkshare repro hls-exp1 --shorten 20`: every idle order runs under every scheduler,
//! the sweep's measurement agrees with the per-packet one of the representative runs,
//! and the verdicts are computed.

mod common;

use common::{assert_verdicts, repro_shortened};

const LEAVES: [&str; 5] = ["A1", "A2", "B1", "B2", "C"];

/// The orders in which three of the five leaves go idle, written `X, Y, Z`.
fn orders() -> Vec<String> {
    let mut out = Vec::new();
    for a in LEAVES {
        for b in LEAVES.iter().filter(|&&b| b != a) {
            for c in LEAVES.iter().filter(|&&c| c != a && c != *b) {
                out.push(format!("{a}, {b}, {c}"));
            }
        }
    }
    out
}

/// The cells of the orders table's row for `order`, after the order itself.
fn order_row<'t>(text: &'t str, order: &str) -> Vec<&'t str> {
    let line = text
        .lines()
        .find(|l| l.starts_with(order) && l[order.len()..].starts_with("  "))
        .unwrap_or_else(|| panic!("no row for order {order} in\n{text}"));
    line[order.len()..]
        .split_whitespace()
        .filter(|c| *c != "*")
        .collect()
}

#[test]
fn shortened_exp1_runs_every_idle_order() {
    let (text, dir) = repro_shortened("hls-exp1", "20");
    let orders = orders();
    assert_eq!(orders.len(), 60);
    assert!(
        text.contains("running 60 orders x 5 schedulers = 300 runs"),
        "{text}"
    );
    assert!(
        text.contains(
            "idle order     hls      htb  cbq (top-level)  cbq (formal)  cbq (top-level-ns2)"
        ),
        "{text}"
    );
    let mut guidelines_differ = false;
    for order in &orders {
        let row = order_row(&text, order);
        assert_eq!(row.len(), 5, "{order}: {row:?}");
        guidelines_differ |= row[2] != row[3] || row[2] != row[4];
    }
    assert!(
        guidelines_differ,
        "CBQ's three guidelines gave the same deviation in every order"
    );

    // The representative run of each scheduler measures, per packet, the same largest
    // deviation as the sweep measured from throughput windows in that order.
    for (name, column) in [
        ("hls", 0),
        ("htb", 1),
        ("cbq (top-level)", 2),
        ("cbq (formal)", 3),
        ("cbq (top-level-ns2)", 4),
    ] {
        let head = format!("{name}: the order at the median of its largest deviations, ");
        let line = text
            .lines()
            .find(|l| l.starts_with(&head))
            .unwrap_or_else(|| panic!("no representative run of {name} in\n{text}"));
        let order = line[head.len()..].split(" (in ").next().unwrap();
        let sweep = order_row(&text, order)[column];
        let per_packet = text
            .lines()
            .skip_while(|l| *l != line)
            .find(|l| l.starts_with("largest deviation from the reference: "))
            .and_then(|l| l.split(" (").nth(1))
            .and_then(|l| l.split('%').next())
            .unwrap_or_else(|| panic!("no deviation after {line}"));
        assert_eq!(sweep, per_packet, "{name}, order {order}");
    }

    let hls = text
        .lines()
        .find(|l| l.starts_with("hls follows the HMM-fair allocation"))
        .unwrap_or_else(|| panic!("no HLS verdict in\n{text}"));
    assert!(hls.contains("60 of 60 orders"), "{hls}");
    assert!(hls.trim_end().ends_with("reproduced"), "{hls}");
    assert!(assert_verdicts(&text, "hls-exp1: paper against ours") >= 11);
    assert!(text.contains("Idle sequence: none is chosen."), "{text}");

    let csv = std::fs::read_to_string(dir.path().join("o/orders.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 60 * 5);
    for f in [
        "deviation.svg",
        "hls/throughput.svg",
        "htb/reference.svg",
        "cbq-top-level/cbq/throughput.csv",
        "cbq-formal/cbq/summary.json",
        "cbq-top-level-ns2/cbq/throughput.svg",
    ] {
        assert!(dir.path().join("o").join(f).is_file(), "{f}");
    }
}
