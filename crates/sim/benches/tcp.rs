//! Closed-loop simulator speed: 100 greedy TCP NewReno flows through one 1 Gbit/s
//! bottleneck for 60 simulated seconds.
//!
//! The TCP tests' dumbbell (`tests/tcp_common`): node `src` to node `dst` over a 1 Gbit/s
//! link with 24 ms propagation delay and a FIFO buffer of one bandwidth-delay product
//! (6 010 packets of 1 040 B, for the 50 ms round trip), acknowledgements back over a
//! 1 Gbit/s link with 24 ms delay. One leaf class per flow on each link (the FIFO ignores
//! them). TCP: NewReno, MSS 1000 B, 40 B headers, W = 1 MB (never the limit: the fair
//! share of the window is ~125 kB), every segment acknowledged, RFC 6298 timers with a
//! 200 ms minimum RTO. About 7 million data segments and as many acknowledgements, every
//! one measured.
//!
//! Run with `cargo bench -p linkshare-sim --bench tcp`. Prints one line per repetition
//! (wall time, events/s, packet-hops/s, utilisation, retransmissions) and the medians.

use std::hint::black_box;
use std::time::Instant as WallClock;

use linkshare_core::buffer::Overflow;
use linkshare_core::sched::SchedulerKind;
use linkshare_core::units::{Duration, Rate};
use linkshare_sim::Simulator;
use linkshare_sim::config::{SimConfig, TcpConfig, TcpVariant};

#[path = "../tests/tcp_common/mod.rs"]
mod tcp_common;

use tcp_common::{Dumbbell, greedy};

const FLOWS: usize = 100;
const SECONDS: u64 = 60;
const REPETITIONS: usize = 3;
const DELAY_MS: u64 = 24;

/// The TCP tests' dumbbell ([`Dumbbell`]) at the sizes of the module docs.
fn dumbbell() -> SimConfig {
    let rate = Rate::from_gbit(1);
    // Round trip: 2 × 24 ms propagation + 1040 B and 40 B at 1 Gbit/s, ~48 ms; one BDP of
    // buffer, rounded up to 50 ms worth of 1040-byte packets.
    let bdp_packets = (rate.0 / 8 / 20).div_ceil(1040);
    let dumbbell = Dumbbell {
        rate,
        reverse_rate: rate,
        delay: Duration::from_millis(DELAY_MS),
        buffer: Some(bdp_packets),
        overflow: Overflow::TailDrop,
        scheduler: SchedulerKind::Fifo,
        secs: SECONDS,
        seed: 1,
    };
    let tcp = TcpConfig {
        variant: TcpVariant::NewReno,
        window: 1_000_000,
        min_rto: Duration::from_millis(200),
        ..TcpConfig::default()
    };
    dumbbell.config(vec![(greedy(), tcp); FLOWS])
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
