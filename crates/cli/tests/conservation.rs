//! Every packet is counted in `summary.json`: the identities of `scenarios/README.md`
//! ("Every packet is counted") hold exactly, in packets and bytes, per class, per link
//! and per flow (and its acknowledgements), for every shipped scenario and under every
//! scheduler. Runs are cut short at an instant chosen not to fall on a round number, so
//! that packets are caught in every state.

mod common;

use std::path::PathBuf;

use common::{TempDir, scenarios_dir};
use linkshare_core::sched::SchedulerKind;
use linkshare_core::units::Duration;
use linkshare_report::write_run;
use linkshare_scenario::{Scenario, load_file, load_str};
use linkshare_sim::Simulator;
use serde_json::Value;

/// Where the runs are cut: 0.5234567 s (or the scenario's own end, if earlier).
const CUT: Duration = Duration(523_456_700);

/// How many packets were caught in each state at the end, over all runs checked.
#[derive(Debug, Default)]
struct Seen {
    queued: u64,
    in_transmission: u64,
    propagating: u64,
    dropped: u64,
    acks_propagating: u64,
}

fn shipped() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(scenarios_dir())
        .expect("scenarios/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    assert!(files.len() >= 20, "{files:?}");
    files
}

/// Runs `scenario` cut at [`CUT`], writes its outputs and returns its `summary.json`.
fn summary_of(mut scenario: Scenario, tag: &str) -> Value {
    scenario.config.duration = scenario.config.duration.min(CUT);
    let result = Simulator::new(&scenario.config)
        .unwrap_or_else(|e| panic!("{tag}: {e}"))
        .run();
    let dir = TempDir::new(tag);
    write_run(dir.path(), &scenario.name, &scenario.config, &result).expect("write outputs");
    let text = std::fs::read_to_string(dir.path().join("summary.json")).expect("summary.json");
    serde_json::from_str(&text).expect("summary.json is JSON")
}

fn n(v: &Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("`{key}` is not a count in {v}"))
}

/// `v[sent] == sum of v[parts]`, for `packets_` and `bytes_` (or only `prefix` when
/// given one without a unit, as the acknowledgements' counts).
fn closes(v: &Value, prefixes: &[&str], sent: &str, parts: &[&str], what: &str) {
    for p in prefixes {
        let total = n(v, &format!("{p}{sent}"));
        let sum: u64 = parts.iter().map(|k| n(v, &format!("{p}{k}"))).sum();
        assert_eq!(
            total, sum,
            "{what}: {p}{sent} != sum of {p}{parts:?} in {v:#}"
        );
    }
}

const PORT: &[&str] = &[
    "delivered",
    "dropped",
    "queued_at_end",
    "in_transmission_at_end",
];
const PATH: &[&str] = &[
    "delivered",
    "dropped",
    "queued_at_end",
    "in_transmission_at_end",
    "propagating_at_end",
];

fn check(summary: &Value, tag: &str, seen: &mut Seen) {
    let units = ["packets_", "bytes_"];
    let classes = summary["classes"].as_array().expect("classes");
    for link in summary["links"].as_array().expect("links") {
        let name = link["name"].as_str().expect("name");
        let what = format!("{tag}: link `{name}`");
        closes(link, &units, "sent", PORT, &what);
        // The port's totals are its root class's counts.
        let root = classes
            .iter()
            .find(|c| c["link"] == name && c["parent"].is_null())
            .expect("root class");
        for p in units {
            for k in ["sent", "delivered", "dropped", "queued_at_end"] {
                let key = format!("{p}{k}");
                assert_eq!(link[&key], root[&key], "{what}: {key}");
            }
        }
        assert!(n(link, "packets_propagating_at_end") <= n(link, "packets_delivered"));
        seen.in_transmission += n(link, "packets_in_transmission_at_end");
        seen.propagating += n(link, "packets_propagating_at_end");
        seen.queued += n(link, "packets_queued_at_end");
        seen.dropped += n(link, "packets_dropped");
    }
    for class in classes {
        let what = format!("{tag}: class `{}/{}`", class["link"], class["name"]);
        closes(class, &units, "sent", PORT, &what);
        let by_reason: u64 = class["drops_by_reason"]
            .as_object()
            .expect("drops_by_reason")
            .values()
            .map(|v| v.as_u64().expect("count"))
            .sum();
        assert_eq!(by_reason, n(class, "packets_dropped"), "{what}");
    }
    for flow in summary["flows"].as_array().expect("flows") {
        let what = format!("{tag}: flow `{}`", flow["name"]);
        closes(flow, &units, "sent", PATH, &what);
        closes(&flow["transport"], &["acks_"], "sent", PATH, &what);
        seen.acks_propagating += n(&flow["transport"], "acks_propagating_at_end");
    }
}

#[test]
fn every_shipped_scenario_counts_every_packet() {
    let mut seen = Seen::default();
    for file in shipped() {
        let tag = file.file_stem().unwrap().to_string_lossy().into_owned();
        let scenario = load_file(&file).unwrap_or_else(|p| panic!("{tag}: {p}"));
        check(&summary_of(scenario, &tag), &tag, &mut seen);
    }
    // The cut caught packets in every state somewhere.
    assert!(seen.queued > 0, "{seen:?}");
    assert!(seen.in_transmission > 0, "{seen:?}");
    assert!(seen.propagating > 0, "{seen:?}");
    assert!(seen.dropped > 0, "{seen:?}");
    assert!(seen.acks_propagating > 0, "{seen:?}");
}

/// Every scheduler, on the shipped scenarios it can run (each runs on at least one).
#[test]
fn every_scheduler_counts_every_packet() {
    let files = ["two-classes-drr", "onoff-mix", "hls-fig1", "tcp-mix"];
    for &kind in SchedulerKind::ALL {
        let mut ran = 0;
        for name in files {
            let file = scenarios_dir().join(format!("{name}.toml"));
            let mut scenario = load_file(&file).unwrap_or_else(|p| panic!("{name}: {p}"));
            if scenario.set_scheduler(kind, "--scheduler").is_err() {
                continue;
            }
            let tag = format!("{name}-{kind}");
            check(&summary_of(scenario, &tag), &tag, &mut Seen::default());
            ran += 1;
        }
        assert!(ran > 0, "{kind} ran on none of {files:?}");
    }
}

/// Per-flow classes: two instances of a template for five flows that come and go (each
/// on for 60 ms, one starting every 50 ms), so instances are retired, handed to new
/// flows and shared when both are busy. The counts
/// still close per class, link and flow.
#[test]
fn per_flow_classes_count_every_packet() {
    let mut text = String::from(
        r#"[scenario]
name = "per-flow"
duration = "2s"

[link]
rate = "2mbit"
scheduler = "fsc"

[[class]]
name = "pf"
per_flow = { max_flows = 2, idle = "20ms" }

[[class]]
name = "bulk"
"#,
    );
    for i in 0..5 {
        text.push_str(&format!(
            "\n[[flow]]\nname = \"f{i}\"\nclass = \"pf\"\non = [[\"{}ms\", \"{}ms\"]]\n\
             source = {{ type = \"cbr\", rate = \"200kbit\", size = \"500b\" }}\n",
            i * 50,
            i * 50 + 60
        ));
    }
    text.push_str(
        "\n[[flow]]\nname = \"bulk\"\nclass = \"bulk\"\nsource = { type = \"greedy\", size = \"1500b\" }\n",
    );
    let scenario =
        load_str(&text, "per-flow.toml", &scenarios_dir()).unwrap_or_else(|p| panic!("{p}"));
    let mut seen = Seen::default();
    let summary = summary_of(scenario, "per-flow");
    check(&summary, "per-flow", &mut seen);
    assert!(seen.queued + seen.in_transmission > 0, "{seen:?}");
    let pool = &summary["links"][0]["per_flow"][0];
    assert!(
        n(pool, "flows_created") >= 4 && n(pool, "flows_retired") >= 2,
        "{pool}"
    );
}
