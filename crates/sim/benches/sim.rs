//! End-to-end simulator throughput: simulated packet-hops per wall-clock second.
//!
//! One 1 Gbit/s bottleneck, 10 classes under DRR, one greedy flow of 1000-byte packets
//! per class, 60 simulated seconds: 7.5 million packets, every one measured (delay
//! record, throughput window, end-to-end delay). Run with `cargo bench -p linkshare-sim`.
//! Prints one line per repetition and the median.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant as WallClock;

use linkshare_core::hierarchy::ClassTree;
use linkshare_core::sched::SchedulerKind;
use linkshare_core::units::{Duration, Rate};
use linkshare_sim::Simulator;
use linkshare_sim::config::{LinkConfig, NodeId, SimConfig, SourceConfig};

const CLASSES: usize = 10;
const SECONDS: u64 = 60;
const REPETITIONS: usize = 3;

fn bottleneck() -> SimConfig {
    let rate = Rate::from_gbit(1);
    let duration = Duration::from_secs(SECONDS);
    let link = LinkConfig {
        delay: Duration::from_micros(100),
        ..LinkConfig::new(
            "bottleneck",
            NodeId(0),
            NodeId(1),
            Arc::new(ClassTree::flat(rate, CLASSES)),
            SchedulerKind::Drr,
        )
    };
    SimConfig::one_flow_per_leaf(link, duration, |_| SourceConfig::Greedy {
        size: 1000,
        backlog: 2,
    })
}

fn main() {
    let config = bottleneck();
    let mut rates = Vec::with_capacity(REPETITIONS);
    for rep in 0..REPETITIONS {
        let start = WallClock::now();
        let result = Simulator::new(&config).expect("valid benchmark").run();
        let wall = start.elapsed().as_secs_f64();
        let hops = result.packet_hops;
        let rate = hops as f64 / wall;
        println!(
            "run {rep}: {hops} packet-hops, {} events in {wall:.3} s: {:.2} M packet-hops/s",
            result.events,
            rate / 1e6
        );
        black_box(result);
        rates.push(rate);
    }
    rates.sort_by(f64::total_cmp);
    println!(
        "median: {:.2} M packet-hops/s ({CLASSES} DRR classes, greedy 1000 B, {SECONDS} s at 1 Gbit/s)",
        rates[REPETITIONS / 2] / 1e6
    );
}
