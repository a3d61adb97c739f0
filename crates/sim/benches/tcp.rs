//! Closed-loop simulator speed: 100 greedy TCP NewReno flows through one 1 Gbit/s
//! bottleneck for 60 simulated seconds.
//!
//! Dumbbell: node `src` to node `dst` over a 1 Gbit/s link with 24 ms propagation delay
//! and a FIFO buffer of one bandwidth-delay product (6 010 packets of 1 040 B, for the
//! 50 ms round trip), acknowledgements back over a 1 Gbit/s link with 24 ms delay. One
//! leaf class per flow on each link (the FIFO ignores them). TCP: NewReno, MSS 1000 B,
//! 40 B headers, W = 1 MB (never the limit: the fair share of the window is ~125 kB),
//! every segment acknowledged, RFC 6298 timers with a 200 ms minimum RTO. About 7
//! million data segments and as many acknowledgements, every one measured.
//!
//! Run with `cargo bench -p linkshare-sim --bench tcp`. Prints one line per repetition
//! (wall time, events/s, packet-hops/s, utilisation, retransmissions) and the medians.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant as WallClock;

use linkshare_core::buffer::BufferConfig;
use linkshare_core::hierarchy::{ClassTree, Limit};
use linkshare_core::sched::SchedulerKind;
use linkshare_core::units::{Bytes, Duration, Rate};
use linkshare_sim::Simulator;
use linkshare_sim::config::{
    FlowConfig, Hop, LinkConfig, LinkId, MeasureConfig, NodeConfig, NodeId, Schedule, SimConfig,
    SourceConfig, TcpConfig, TcpVariant, Transport,
};

const FLOWS: usize = 100;
const SECONDS: u64 = 60;
const REPETITIONS: usize = 3;
const DELAY_MS: u64 = 24;

fn dumbbell() -> SimConfig {
    let rate = Rate::from_gbit(1);
    let duration = Duration::from_secs(SECONDS);
    let fwd = Arc::new(ClassTree::flat(rate, FLOWS));
    let rev = Arc::new(ClassTree::flat(rate, FLOWS));
    // Round trip: 2 × 24 ms propagation + 1040 B and 40 B at 1 Gbit/s, ~48 ms; one BDP of
    // buffer, rounded up to 50 ms worth of 1040-byte packets.
    let bdp_packets = (rate.0 / 8 / 20).div_ceil(1040);
    let link = |name: &str, from, to, tree: &Arc<ClassTree>, buffer| LinkConfig {
        name: name.into(),
        from: NodeId(from),
        to: NodeId(to),
        rate,
        delay: Duration::from_millis(DELAY_MS),
        overhead: Bytes::ZERO,
        classes: Arc::clone(tree),
        scheduler: SchedulerKind::Fifo,
        buffer,
    };
    let tcp = TcpConfig {
        variant: TcpVariant::NewReno,
        window: 1_000_000,
        min_rto: Duration::from_millis(200),
        ..TcpConfig::default()
    };
    SimConfig {
        seed: 1,
        duration,
        nodes: vec![
            NodeConfig { name: "src".into() },
            NodeConfig { name: "dst".into() },
        ],
        links: vec![
            link(
                "bottleneck",
                0,
                1,
                &fwd,
                BufferConfig {
                    shared: Some(Limit::Packets(bdp_packets)),
                    ..BufferConfig::default()
                },
            ),
            link("acks", 1, 0, &rev, BufferConfig::default()),
        ],
        flows: (0..FLOWS)
            .map(|i| FlowConfig {
                name: format!("tcp{i}"),
                route: vec![Hop {
                    link: LinkId(0),
                    class: fwd.leaves()[i],
                }],
                reverse: vec![Hop {
                    link: LinkId(1),
                    class: rev.leaves()[i],
                }],
                source: SourceConfig::Greedy {
                    size: 1000,
                    backlog: 2,
                },
                transport: Transport::Tcp(tcp.clone()),
                schedule: Schedule::always(duration),
            })
            .collect(),
        measure: MeasureConfig::default(),
    }
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() {
    let config = dumbbell();
    let (mut walls, mut events, mut hops) = (Vec::new(), Vec::new(), Vec::new());
    for rep in 0..REPETITIONS {
        let start = WallClock::now();
        let result = Simulator::new(&config).expect("valid benchmark").run();
        let wall = start.elapsed().as_secs_f64();
        let bottleneck = &result.links[0];
        let utilisation = bottleneck.classes[0].delivered.bytes as f64 * 8.0
            / (bottleneck.rate.0 as f64 * SECONDS as f64);
        let retransmits: u64 = result.flows.iter().map(|f| f.transport.retransmits).sum();
        let timeouts: u64 = result.flows.iter().map(|f| f.transport.timeouts).sum();
        println!(
            "run {rep}: {wall:.3} s wall, {} events ({:.2} M/s), {} packet-hops ({:.2} M/s), \
             utilisation {utilisation:.4}, {retransmits} retransmissions, {timeouts} timeouts",
            result.events,
            result.events as f64 / wall / 1e6,
            result.packet_hops,
            result.packet_hops as f64 / wall / 1e6,
        );
        walls.push(wall);
        events.push(result.events as f64 / wall);
        hops.push(result.packet_hops as f64 / wall);
        black_box(result);
    }
    println!(
        "median: {:.3} s wall, {:.2} M events/s, {:.2} M packet-hops/s ({FLOWS} NewReno flows, \
         FIFO, {SECONDS} s at 1 Gbit/s; target: under 30 s)",
        median(walls),
        median(events) / 1e6,
        median(hops) / 1e6
    );
}
