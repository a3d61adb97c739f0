//! Link-sharing quality in `summary.json` and after `linkshare run`, on a run small
//! enough to check by hand.

mod common;

use std::path::Path;
use std::process::Command;

use common::TempDir;
use linkshare_report::write_run;
use linkshare_scenario::load_str;
use linkshare_sim::Simulator;

/// Two greedy classes of equal weight under FIFO on an 8 Mbit/s link: 1000-byte packets
/// take exactly 1 ms each. At t = 0 flow `fa` emits its 2 packets, the first starts at
/// once and `fa` tops up with a third, all before `fb` emits its 2 (same instant, flow
/// order). The queue is then a a b b, and every start tops up the same flow, so the
/// link sends a, then a a b b a a b b ...
///
/// * Definition 1: both classes are backlogged from t = 0 (arrivals count before
///   releases at an instant); with weights 1, `D_a - D_b` in packets goes 1, 2, 3, 2,
///   1, 2, 3, ... so the empirical alpha is 3000 B, reached by (a, b).
/// * Definition 2: each class waits for two packets of the other: 2 ms, first by `a`
///   from 3 ms.
/// * One interval [0, 100 ms) of constant demand; the reference is 4 Mbit/s each. The
///   run ends at 100 ms, so the packets completing at 1, 2, ..., 99 ms count (the one
///   completing at 100 ms is not processed): a, then 24 rounds of a a b b, then a a:
///   51 of `a` and 48 of `b`, i.e. 4.08 and 3.84 Mbit/s, and 7.92 Mbit/s for the link.
const ALTERNATING: &str = r#"[scenario]
name = "alternating"
duration = "100ms"
window = "50ms"
scheduler = "fifo"

[link]
rate = "8mbit"

[[class]]
name = "a"

[[class]]
name = "b"

[[flow]]
name = "fa"
class = "a"
source = { type = "greedy", size = "1000b" }

[[flow]]
name = "fb"
class = "b"
source = { type = "greedy", size = "1000b" }
"#;

fn summary_of(text: &str, max_records: Option<u64>) -> serde_json::Value {
    let mut scenario = load_str(text, "t.toml", Path::new(".")).unwrap();
    if let Some(m) = max_records {
        scenario.config.measure.max_delay_records = m;
    }
    let result = Simulator::new(&scenario.config).unwrap().run();
    let dir = TempDir::new("quality");
    write_run(dir.path(), &scenario.name, &scenario.config, &result).unwrap();
    serde_json::from_str(&std::fs::read_to_string(dir.path().join("summary.json")).unwrap())
        .unwrap()
}

#[test]
fn alternating_classes_by_hand() {
    let s = summary_of(ALTERNATING, None);
    let q = &s["links"][0]["link_sharing"];
    assert_eq!(q["status"], "measured");
    assert!(q["unavailable_reason"].is_null());
    assert_eq!(q["empirical_alpha_bytes"], 3000.0);
    assert_eq!(q["empirical_alpha_pair"], serde_json::json!(["a", "b"]));
    assert_eq!(q["max_gap_s"], 0.002);
    assert_eq!(q["max_gap_class"], "a");
    assert_eq!(q["max_gap_from_s"], 0.003);

    let intervals = q["intervals"].as_array().unwrap();
    assert_eq!(intervals.len(), 1);
    assert_eq!(intervals[0]["start_s"], 0.0);
    assert_eq!(intervals[0]["end_s"], 0.1);
    let classes = intervals[0]["classes"].as_array().unwrap();
    let names: Vec<&str> = classes
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["link", "a", "b"]);
    let f = |c: &serde_json::Value, k: &str| c[k].as_f64().unwrap();
    assert_eq!(f(&classes[0], "reference_bps"), 8e6);
    assert!((f(&classes[0], "measured_bps") - 7.92e6).abs() < 1e-3);
    assert!((f(&classes[1], "measured_bps") - 4.08e6).abs() < 1e-3);
    assert!((f(&classes[2], "measured_bps") - 3.84e6).abs() < 1e-3);
    for c in &classes[1..] {
        assert_eq!(f(c, "reference_bps"), 4e6);
        assert!(c["demand_bps"].is_null(), "greedy demand is unbounded");
        let err = f(c, "error_bps");
        assert!((err - (f(c, "measured_bps") - 4e6)).abs() < 1e-6);
        assert!((f(c, "relative_error") - err / 4e6).abs() < 1e-12);
    }
}

#[test]
fn histogram_runs_say_why_quality_is_unavailable() {
    let s = summary_of(ALTERNATING, Some(10));
    let q = &s["links"][0]["link_sharing"];
    assert_eq!(q["status"], "unavailable");
    // The reason names the limit the run went past, not a setting users cannot reach.
    let reason = q["unavailable_reason"].as_str().unwrap();
    assert!(
        reason.starts_with("the run measured more than 10 packet delays")
            && reason.contains("histograms"),
        "{q}"
    );
    assert!(!reason.contains("max_delay_records"), "{reason}");
    assert!(q["empirical_alpha_bytes"].is_null());
    assert!(q["max_gap_s"].is_null());
    let c = &q["intervals"][0]["classes"][1];
    assert_eq!(c["reference_bps"], 4e6);
    assert!(c["measured_bps"].is_null());
}

#[test]
fn run_prints_the_link_sharing_section() {
    let dir = TempDir::new("quality-run");
    let path = dir.file("s.toml", ALTERNATING);
    let o = Command::new(env!("CARGO_BIN_EXE_linkshare"))
        .args(["run", path.to_str().unwrap(), "--out", "o"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8_lossy(&o.stdout);
    for needle in [
        "link sharing on `link` [fifo]:",
        "empirical alpha (Def. 1): 3000.0 B per unit of weight (a vs b)",
        "largest gap of a backlogged leaf (Def. 2): 2.000 ms (a, from 0.003000 s)",
        "[0, 0.1) s",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
}
