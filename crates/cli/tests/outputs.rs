//! Output files computed from runs whose numbers are known by hand.

mod common;

use std::path::Path;

use common::{TWO_HOPS, TempDir};
use linkshare_report::write_run;
use linkshare_scenario::load_str;
use linkshare_sim::Simulator;

#[test]
fn two_hops_delays_and_labels() {
    let scenario = load_str(TWO_HOPS, "t.toml", Path::new(".")).unwrap();
    let result = Simulator::new(&scenario.config).unwrap().run();
    let dir = TempDir::new("two-hops");
    write_run(dir.path(), &scenario.name, &scenario.config, &result).unwrap();
    let read = |n: &str| std::fs::read_to_string(dir.path().join(n)).unwrap();

    // One packet every 10 ms: 100 sent in 1 s. The last one, sent at 990 ms, reaches the
    // sink at 997.4 ms: every packet is delivered.
    let summary: serde_json::Value = serde_json::from_str(&read("summary.json")).unwrap();
    let flow = &summary["flows"][0];
    assert_eq!(flow["class"], "l1/x");
    assert_eq!(flow["packets_sent"], 100);
    assert_eq!(flow["packets_delivered"], 100);
    for q in ["min", "p50", "p999", "max"] {
        assert_eq!(flow["delay_s"][q], 0.0074, "{q}");
    }
    let classes: Vec<(&str, &str)> = summary["classes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["link"].as_str().unwrap(), c["name"].as_str().unwrap()))
        .collect();
    assert_eq!(
        classes,
        [("l1", "l1"), ("l1", "x"), ("l2", "l2"), ("l2", "y")]
    );

    // Per-port delays: 0.8 ms on l1, 1.6 ms on l2; l2 sees packet k arrive at
    // 10k + 5.8 ms.
    let delay = read("delay.csv");
    let l2: Vec<&str> = delay.lines().filter(|l| l.starts_with("l2/y,")).collect();
    assert_eq!(l2.len(), 100);
    assert_eq!(l2[3], "l2/y,f,0.035800000,0.037400000,0.001600000");
    assert!(
        delay
            .lines()
            .filter(|l| l.starts_with("l1/x,"))
            .all(|l| l.ends_with(",0.000800000"))
    );

    // Throughput windows of 250 ms, per link: l1 completes packets at 10k + 0.8 ms (25
    // per window); l2 at 10k + 7.4 ms (25 per window too).
    let throughput = read("throughput.csv");
    let rows: Vec<&str> = throughput.lines().skip(1).collect();
    assert_eq!(rows.len(), 8);
    assert_eq!(rows[0], "0.000000000,0.250000000,l1/x,25000,800000.000");
    assert_eq!(rows[4], "0.000000000,0.250000000,l2/y,25000,800000.000");

    // The flow's sink receives packet k at 10k + 7.4 ms: 25 packets in each window.
    let flows = read("flow_throughput.csv");
    let rows: Vec<&str> = flows.lines().collect();
    assert_eq!(rows[0], "window_start_s,window_end_s,flow,bytes,rate_bps");
    assert_eq!(rows.len(), 5);
    assert_eq!(rows[1], "0.000000000,0.250000000,f,25000,800000.000");
    assert_eq!(rows[4], "0.750000000,1.000000000,f,25000,800000.000");
}

#[test]
fn histogram_replaces_delay_records() {
    let text = TWO_HOPS.replace("name = \"two-hops\"", "name = \"hist\"");
    let mut scenario = load_str(&text, "t.toml", Path::new(".")).unwrap();
    scenario.config.measure.max_delay_records = 10;
    let result = Simulator::new(&scenario.config).unwrap().run();
    let dir = TempDir::new("hist");
    dir.file("delay.csv", "stale");
    write_run(dir.path(), &scenario.name, &scenario.config, &result).unwrap();
    assert!(
        !dir.path().join("delay.csv").exists(),
        "stale delay.csv removed"
    );
    let hist = std::fs::read_to_string(dir.path().join("delay_histogram.csv")).unwrap();
    assert_eq!(
        hist,
        "class,delay_s,count\nl1/x,0.000800000,100\nl2/y,0.001600000,100\n"
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary["delay_records"], "histogram");
}
