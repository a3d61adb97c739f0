//! The JoBS authors' two ns-2 validation scenarios as scenario files
//! (`scenarios/jobs-rate.toml`, `scenarios/jobs-lossdel.toml`, JoBS specification §6.4),
//! loaded, run and measured by the report's service measurements against the
//! specification's §7.3 criteria (the engine's own tests of the same scenarios, in both
//! modes, are in `crates/sim/tests/jobs.rs`).

use std::path::Path;

use linkshare_report::service;
use linkshare_scenario::{NoProgress, load_str};
use linkshare_sim::RunResult;

fn run(text: &str) -> RunResult {
    let s = load_str(text, "scenario", Path::new(".")).expect("a valid scenario");
    let r = s.simulate(&s.name, &NoProgress).expect("runs");
    r.check_conservation().expect("every packet accounted for");
    r
}

/// Each class gets its throughput bound, 4, 3, 2, 1 Mbit/s, within ±5 %.
#[test]
fn jobs_rate_gives_each_class_its_bound() {
    let r = run(include_str!("../../../scenarios/jobs-rate.toml"));
    let link = &r.links[0];
    for (&leaf, want) in link.service.leaves.iter().zip([4e6, 3e6, 2e6, 1e6]) {
        let got = link.classes[leaf.index()].mean_rate_bps;
        assert!(
            (got - want).abs() <= 0.05 * want,
            "{got} bit/s, want {want}"
        );
        // The objectives are measured too: the class was sent at its bound in (almost)
        // every window.
        let c = &link.classes[leaf.index()];
        let o = service::objective(link, leaf).expect("a min_rate objective");
        let m = service::compliance(&r, link, c, o);
        assert!(m.windows_at_min_rate.unwrap() >= 0.9, "{m:?}");
    }
}

/// Class-1 loss at most 1 %, class-1 waits within 5 ms for at least 98 % of its packets,
/// delay and loss ratios within ±20 % of 4 and 2.
#[test]
fn jobs_lossdel_meets_bounds_and_ratios() {
    let r = run(include_str!("../../../scenarios/jobs-lossdel.toml"));
    let link = &r.links[0];
    let leaves = &link.service.leaves;
    let c1 = &link.classes[leaves[0].index()];
    let loss = c1.counters.dropped_total().bytes as f64 / c1.counters.arrived.bytes as f64;
    assert!(loss <= 0.01, "class-1 loss {loss}");
    let o = service::objective(link, leaves[0]).expect("class 1's bounds");
    let m = service::compliance(&r, link, c1, o);
    assert!(m.within_delay_bound.unwrap() >= 0.98, "{m:?}");
    let pairs = service::pairs(&r);
    assert_eq!(pairs.len(), 2);
    for p in &pairs {
        let s = service::pair_summary(&r, p);
        let (d, l) = (s.delay.unwrap(), s.loss.unwrap());
        assert!((d - 4.0).abs() <= 0.8, "delay ratio {d}");
        assert!((l - 2.0).abs() <= 0.4, "loss ratio {l}");
    }
}
