//! Keshav's cost-study workload: record the gateway's buffer trace once, replay it
//! through the four structures (spec §3.4), on short runs of an underloaded and an
//! overloaded point.

use linkshare_core::DropReason;
use linkshare_core::ds::bids::Structure;
use linkshare_core::ds::bids::trace::{Trace, replay_all};
use linkshare_core::hierarchy::Limit;
use linkshare_core::units::Duration;
use linkshare_sim::workload::{KESHAV_TRUNK, KeshavCost, keshav_cost, record_buffer_trace};

fn short(n: u32, b: u64, secs: u64) -> KeshavCost {
    KeshavCost {
        duration: Duration::from_secs(secs),
        ..KeshavCost::point(n, b)
    }
}

/// Records `p` and replays it; returns the trace, the trunk's live drops, and the four
/// replays' average insertion costs.
fn record_and_replay(p: &KeshavCost) -> (Trace, u64, Vec<(Structure, f64, u64)>) {
    let config = keshav_cost(p);
    let (result, trace) =
        record_buffer_trace(&config, KESHAV_TRUNK, &mut |_, _, _| {}).expect("valid workload");
    result.check_conservation().expect("conservation");
    let trunk = &result.links[KESHAV_TRUNK.0 as usize];
    assert_eq!(trunk.scheduler, "keshav");
    let live_drops = trunk.total.dropped(DropReason::LargestBid).packets;
    let replays = replay_all(&trace, Limit::Packets(p.buffers), Duration::from_secs(10))
        .expect("every structure serves and drops the same packets");
    for r in &replays {
        assert_eq!(
            r.cost.drops, live_drops,
            "{:?} drops as the live run did",
            r.structure
        );
        assert!(
            r.running
                .last()
                .is_some_and(|c| c.insertions == r.cost.insertions)
        );
    }
    let costs = replays
        .iter()
        .map(|r| (r.structure, r.avg_insert(), r.cost.max_insert))
        .collect();
    (trace, live_drops, costs)
}

/// Underloaded (`W·N = 80 < B = 160`): no drop, windows sit in the buffer, arrivals
/// carry the largest bids, and LINK appends at its tail: the cheapest structure.
#[test]
fn underloaded_point_link_is_cheapest() {
    let (trace, drops, costs) = record_and_replay(&short(4, 160, 60));
    assert_eq!(drops, 0);
    assert!(trace.ops.len() > 1000, "{} operations", trace.ops.len());
    let link = costs[0].1;
    assert!(costs.iter().all(|&(_, c, _)| link <= c), "{costs:?}");
}

/// Overloaded (`W·N = 200 > B = 40`): drops happen, every structure drops the same
/// packets as the live run, and the trace survives a CSV round trip.
#[test]
fn overloaded_point_drops_identically_and_round_trips() {
    let (trace, drops, costs) = record_and_replay(&short(10, 40, 60));
    assert!(drops > 0, "an overloaded gateway drops");
    let perc = costs[3].1;
    let heap = costs[2].1;
    assert!(perc <= heap, "PERC below HEAP: {costs:?}");
    let back = Trace::from_csv(&trace.to_csv()).expect("its own format");
    assert_eq!(back.ops, trace.ops);
}

/// The same configuration and seed give the same trace.
#[test]
fn recording_is_deterministic() {
    let p = short(3, 30, 20);
    let a = record_buffer_trace(&keshav_cost(&p), KESHAV_TRUNK, &mut |_, _, _| {})
        .expect("valid")
        .1;
    let b = record_buffer_trace(&keshav_cost(&p), KESHAV_TRUNK, &mut |_, _, _| {})
        .expect("valid")
        .1;
    assert_eq!(a, b);
    assert!(
        a.bypassed > 0,
        "an idle line at the start lets packets bypass the buffer"
    );
}
