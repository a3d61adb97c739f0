//! Sweeps: the table does not depend on threads, a bad combination is a row with its
//! error, and each run's rows are those of the same run made by hand.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use linkshare_core::sched::SchedulerKind;
use linkshare_report::frame::{Frame, Values};
use linkshare_report::summary::Summary;
use linkshare_repro::sweep::{Axis, MAX_RUNS, Plan, RunRows, run_all, table};
use linkshare_scenario::{NoProgress, Scenario, load_str};

const TEXT: &str = r#"[scenario]
name = "sweep"
duration = "500ms"

[link]
rate = "10mbit"
scheduler = "drr"

[[class]]
name = "A"
weight = 2

[[class]]
name = "B"

[[flow]]
name = "a"
class = "A"
source = { type = "poisson", rate = "8mbit", size = "1000b" }

[[flow]]
name = "b"
class = "B"
source = { type = "greedy", size = "1500b" }
"#;

fn base() -> Scenario {
    load_str(TEXT, "t.toml", Path::new(".")).expect("valid")
}

fn plan() -> Plan {
    Plan {
        // weight 0 is refused by DRR's build: a failed run among good ones.
        axes: vec![
            Axis::from_args("class.A.weight", &["1", "3"]),
            Axis::from_args("link.rate", &["5mbit", "10 parsecs"]),
        ],
        schedulers: vec![Some(SchedulerKind::Drr), Some(SchedulerKind::Fifo)],
        seeds: vec![Some(1), Some(2)],
    }
}

fn sweep(jobs: usize) -> (Vec<RunRows>, Frame) {
    let plan = plan();
    let rows = run_all(
        &base(),
        &plan,
        jobs,
        &NoProgress,
        &AtomicBool::new(false),
        &|spec, outcome| RunRows::new(spec, &outcome),
    )
    .expect("not stopped");
    let t = table(&plan, &rows);
    (rows, t)
}

fn csv(f: &Frame) -> String {
    let mut out = Vec::new();
    f.write_csv(&mut out).expect("in memory");
    String::from_utf8(out).expect("utf-8")
}

fn column<'f>(f: &'f Frame, name: &str) -> &'f Values {
    &f.columns
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no column {name}"))
        .values
}

#[test]
fn threads_do_not_change_the_table() {
    let (rows1, t1) = sweep(1);
    let (rows2, t2) = sweep(2);
    assert_eq!(rows1, rows2);
    // Frames hold NaN for missing floats, so they are compared as CSV (NaN: empty).
    assert_eq!(csv(&t1), csv(&t2));
    // Rows from any order, through JSON (how they come back from other processes).
    let mut shuffled: Vec<RunRows> = rows1
        .iter()
        .rev()
        .map(|r| RunRows::from_json(&r.to_json()).expect("round trip"))
        .collect();
    shuffled.rotate_left(3);
    assert_eq!(shuffled.len(), rows1.len());
    assert_eq!(csv(&table(&plan(), &shuffled)), csv(&t1));
}

#[test]
fn a_bad_combination_is_a_row_with_its_error() {
    let (rows, t) = sweep(2);
    assert_eq!(rows.len(), 16);
    for r in &rows {
        let bad_rate = (r.index / 4) % 2 == 1;
        assert_eq!(
            r.error.is_some(),
            bad_rate,
            "run {}: {:?}",
            r.index,
            r.error
        );
        if let Some(e) = &r.error {
            assert!(e.starts_with("edit:2:"), "{e}");
            assert!(r.classes.is_empty());
        } else {
            // root, A, B
            assert_eq!(r.classes.len(), 3);
        }
    }
    // 8 good runs × 3 classes + 8 error rows.
    assert_eq!(t.rows(), 8 * 3 + 8);
    let Values::Text { codes, labels } = column(&t, "link.rate") else {
        panic!("text column")
    };
    assert_eq!(labels, &["5mbit", "10 parsecs"]);
    assert_eq!(codes[0], Some(0));
}

#[test]
fn a_runs_rows_are_the_summary_of_the_same_run_made_by_hand() {
    let (rows, _) = sweep(2);
    // Choice (0, 0) is runs 0..4, (0, 1) runs 4..8, (1, 0) runs 8..12; within each,
    // drr then fifo, seeds 1 then 2: run 9 is weight 3, 5mbit, drr, seed 2.
    let text = TEXT.replacen("weight = 2", "weight = 3", 1).replacen(
        "rate = \"10mbit\"",
        "rate = \"5mbit\"",
        1,
    );
    let mut s = load_str(&text, "t.toml", Path::new(".")).expect("valid");
    s.config.seed = 2;
    let result = s.simulate("by hand", &NoProgress).expect("runs");
    let summary = Summary::new(&s.name, &s.config, &result);
    let r = &rows[9];
    assert_eq!(r.seed, Some(2));
    for (row, c) in r.classes.iter().zip(&summary.classes) {
        assert_eq!(row.class, c.name);
        assert_eq!(row.scheduler, "drr");
        assert_eq!(row.bytes_delivered, c.bytes_delivered);
        assert_eq!(row.packets_dropped, c.packets_dropped);
        assert_eq!(row.delay_p99_s, c.delay_s.p99);
    }
}

#[test]
fn a_stopped_sweep_returns_nothing() {
    let stop = AtomicBool::new(true);
    let got = run_all(&base(), &plan(), 2, &NoProgress, &stop, &|_, _| ());
    assert!(got.is_none());
}

/// A plan counts its runs as the product of its axes, schedulers and seeds (an empty list
/// of schedulers or seeds counting once), up to `MAX_RUNS` included; above it, or where
/// the product overflows, it has no count.
#[test]
fn a_plan_counts_its_runs_up_to_the_limit() {
    assert_eq!(plan().count(), Some(2 * 2 * 2 * 2));
    let axis = |n: usize| {
        let values: Vec<String> = (1..=n).map(|v| v.to_string()).collect();
        let values: Vec<&str> = values.iter().map(String::as_str).collect();
        Axis::from_args("class.A.weight", &values)
    };
    let grid = |sizes: &[usize]| Plan {
        axes: sizes.iter().map(|&n| axis(n)).collect(),
        schedulers: Vec::new(),
        seeds: Vec::new(),
    };
    assert_eq!(MAX_RUNS, 1_000_000);
    assert_eq!(grid(&[1000, 1000]).count(), Some(1_000_000));
    assert_eq!(grid(&[1001, 1000]).count(), None);
    // 1 000^7 runs: more than a usize holds.
    assert_eq!(grid(&[1000; 7]).count(), None);
    assert_eq!(grid(&[]).count(), Some(1));
    assert_eq!(grid(&[3, 0]).count(), Some(0));
    let seeds = Plan {
        seeds: (0..=1_000_000).map(Some).collect(),
        ..grid(&[])
    };
    assert_eq!(seeds.count(), None);
}
