//! The engine: rates, delays computed by hand, conservation, determinism, independence
//! of random streams, schedulers sharing a link.

mod common;

use std::sync::Arc;

use common::*;
use linkshare_core::buffer::{BufferConfig, Overflow};
use linkshare_core::hierarchy::{ClassId, Limit};
use linkshare_core::sched::SchedulerKind;
use linkshare_core::units::{Bytes, Duration, Instant, Rate};
use linkshare_sim::Simulator;
use linkshare_sim::config::{
    FlowConfig, Hop, LinkId, MeasureConfig, NodeConfig, Schedule, SimConfig, SourceConfig,
    TraceRecord, Transport,
};
use linkshare_sim::result::{DelayLog, RunResult};

fn run(cfg: &SimConfig) -> RunResult {
    Simulator::new(cfg).expect("valid configuration").run()
}

#[test]
fn fifo_delivers_the_offered_cbr_rates() {
    let cfg = single_link(
        Rate::from_mbit(10),
        SchedulerKind::Fifo,
        10,
        1,
        vec![
            flow(
                "three",
                0,
                SourceConfig::Cbr {
                    rate: Rate::from_mbit(3),
                    size: 1000,
                },
            ),
            flow(
                "four",
                1,
                SourceConfig::Cbr {
                    rate: Rate::from_mbit(4),
                    size: 1000,
                },
            ),
        ],
    );
    let r = run(&cfg);
    // Within one packet (8000 bit) over 10 s of the offered rate, plus one still in the
    // network at the end.
    for (f, want) in r.flows.iter().zip([3e6, 4e6]) {
        assert!(
            (f.mean_rate_bps - want).abs() <= 2.0 * 8000.0 / 10.0,
            "{}: {}",
            f.name,
            f.mean_rate_bps
        );
        assert_eq!(f.dropped.packets, 0);
    }
    let classes = &r.links[0].classes;
    assert!((classes[1].mean_rate_bps - 3e6).abs() <= 1600.0);
    assert!((classes[2].mean_rate_bps - 4e6).abs() <= 1600.0);
    // The root sums its leaves.
    assert_eq!(
        classes[0].delivered.bytes,
        classes[1].delivered.bytes + classes[2].delivered.bytes
    );
    // Per-flow windows (0.2 s): they add up to what was delivered, and a 3 Mbit/s CBR
    // flow of 1000 B packets delivers 75 000 B per window, within one packet either way.
    for (f, per_window) in r.flows.iter().zip([75_000u64, 100_000]) {
        assert_eq!(f.throughput.len(), 50);
        assert_eq!(f.throughput.iter().sum::<u64>(), f.delivered.bytes);
        for (k, &bytes) in f.throughput.iter().enumerate().skip(1) {
            assert!(
                bytes.abs_diff(per_window) <= 1000,
                "{} window {k}: {bytes}",
                f.name
            );
        }
    }
    assert_eq!(r.window_bounds(49), (secs(9.8), secs(10.0)));
}

#[test]
fn one_greedy_flow_saturates_the_link() {
    // 10 Mbit/s, 1000 B: 0.8 ms per packet, 250 packets per 200 ms window.
    let cfg = single_link(
        Rate::from_mbit(10),
        SchedulerKind::Fifo,
        10,
        1,
        vec![flow(
            "bulk",
            0,
            SourceConfig::Greedy {
                size: 1000,
                backlog: 2,
            },
        )],
    );
    let r = run(&cfg);
    let link = &r.links[0];
    assert_eq!(link.throughput.len(), 50);
    for w in &link.throughput {
        // The first window ends before the 250th packet's last bit (at exactly 200 ms).
        assert!(w.value.abs_diff(250_000) <= 1000, "{w:?}");
        assert!((w.rate_bps() - 10e6).abs() <= 8000.0 / 0.2, "{w:?}");
    }
    assert_eq!(link.throughput[0].value, 249_000);
    // Never idle: (10 s / 0.8 ms) packets complete, the last one at exactly 10 s is not
    // counted (the run covers [0, 10 s)).
    assert_eq!(link.classes[1].delivered.packets, 12_499);
    // Always backlogged: at least one packet waits in every window.
    assert!(
        link.backlog.iter().all(|w| w.value >= 1000),
        "{:?}",
        &link.backlog[..3]
    );
}

#[test]
fn greedy_keeps_the_link_busy_through_a_one_packet_buffer() {
    // The class holds one packet: of the 3 the source wants queued, the extra ones are
    // dropped, yet one packet always waits while another is on the wire.
    let mut cfg = single_link(
        Rate::from_mbit(10),
        SchedulerKind::Fifo,
        2,
        1,
        vec![flow(
            "bulk",
            0,
            SourceConfig::Greedy {
                size: 1000,
                backlog: 3,
            },
        )],
    );
    let mut tree = linkshare_core::hierarchy::ClassSpec::new("only", None);
    tree.limit = Some(Limit::Packets(1));
    let link = linkshare_core::hierarchy::LinkSpec {
        name: "link".into(),
        rate: Rate::from_mbit(10),
        origin: None,
    };
    cfg.links[0].classes =
        Arc::new(linkshare_core::ClassTree::build(link, vec![tree]).expect("valid tree"));
    let r = run(&cfg);
    // 2 s / 0.8 ms = 2500 transmissions, the last ending at exactly 2 s (not counted).
    assert_eq!(r.links[0].classes[1].delivered.packets, 2499);
    let f = &r.flows[0];
    assert!(f.dropped.packets > 2000, "{:?}", f.dropped);
    assert_eq!(f.dropped_by_reason.len(), 1);
    assert_eq!(
        f.dropped_by_reason[0].0,
        linkshare_core::DropReason::ClassLimit
    );
    r.check_conservation().expect("conservation");
}

#[test]
fn drr_splits_between_two_greedy_classes() {
    let cfg = single_link(
        Rate::from_mbit(10),
        SchedulerKind::Drr,
        10,
        1,
        vec![
            flow(
                "a",
                0,
                SourceConfig::Greedy {
                    size: 1000,
                    backlog: 2,
                },
            ),
            flow(
                "b",
                1,
                SourceConfig::Greedy {
                    size: 1000,
                    backlog: 2,
                },
            ),
        ],
    );
    let r = run(&cfg);
    let link = &r.links[0];
    let (a, b) = (&link.classes[1], &link.classes[2]);
    // Equal quanta Q = 1500 B (the largest max packet): over any interval in which both
    // are backlogged, byte counts differ by at most Q + L_max = 3000 B (DRR paper,
    // Lemma 2 with equal quanta).
    assert!(
        a.delivered.bytes.abs_diff(b.delivered.bytes) <= 3000,
        "{:?} {:?}",
        a.delivered,
        b.delivered
    );
    assert!((a.mean_rate_bps - 5e6).abs() < 5e6 * 0.01);
    // Per window, both cuts of the interval can add the bound once more.
    let per_window: Vec<_> = link.throughput.chunks(2).collect();
    for w in per_window {
        assert_eq!((w[0].class, w[1].class), (ClassId(1), ClassId(2)));
        assert!(w[0].value.abs_diff(w[1].value) <= 6000, "{w:?}");
    }
}

/// Nodes a -> b -> c: `l1` 10 Mbit/s with 1 ms propagation, `l2` 5 Mbit/s with 2 ms and
/// 25 B of overhead per packet.
fn two_hops(flows: Vec<(&str, SourceConfig)>, secs: u64) -> SimConfig {
    let mut l1 = link("l1", 0, 1, Rate::from_mbit(10), 1, SchedulerKind::Fifo);
    l1.delay = Duration::from_millis(1);
    let mut l2 = link("l2", 1, 2, Rate::from_mbit(5), 1, SchedulerKind::Fifo);
    l2.delay = Duration::from_millis(2);
    l2.overhead = Bytes(25);
    let duration = Duration::from_secs(secs);
    SimConfig {
        seed: 1,
        duration,
        nodes: ["a", "b", "c"]
            .iter()
            .map(|n| NodeConfig { name: (*n).into() })
            .collect(),
        links: vec![l1, l2],
        flows: flows
            .into_iter()
            .map(|(name, source)| FlowConfig {
                name: name.into(),
                route: vec![
                    Hop {
                        link: LinkId(0),
                        class: ClassId(1),
                    },
                    Hop {
                        link: LinkId(1),
                        class: ClassId(1),
                    },
                ],
                reverse: Vec::new(),
                transport: Transport::Udp,
                source,
                schedule: Schedule::always(duration),
            })
            .collect(),
        measure: MeasureConfig::default(),
    }
}

#[test]
fn two_hop_delay_is_transmission_plus_propagation() {
    let one = Arc::from(vec![TraceRecord {
        at: Duration::from_millis(3),
        size: 1000,
    }]);
    let r = run(&two_hops(
        vec![("one", SourceConfig::Trace { records: one })],
        1,
    ));
    // l1: 8000 bit / 10 Mbit/s = 800 us; propagation 1 ms.
    // l2: (1000 + 25) * 8 bit / 5 Mbit/s = 1640 us; propagation 2 ms.
    let (tx1, tx2) = (800_000, 1_640_000);
    let e2e = Duration(tx1 + 1_000_000 + tx2 + 2_000_000);
    let f = &r.flows[0];
    assert_eq!(f.delivered.packets, 1);
    assert_eq!((f.delay.min, f.delay.max, f.delay.mean), (e2e, e2e, e2e));
    let sent = Instant::from_millis(3);
    let r1 = records(&r, 0)[0];
    assert_eq!((r1.arrival, r1.departure), (sent, Instant(sent.0 + tx1)));
    let r2 = records(&r, 1)[0];
    assert_eq!(r2.arrival, Instant(sent.0 + tx1 + 1_000_000));
    assert_eq!(r2.delay(), Duration(tx2));
    assert_eq!(r.links[1].classes[1].delay.max, Duration(tx2));
    assert_eq!(r.packet_hops, 2);
}

#[test]
fn queueing_delay_adds_up_for_a_burst() {
    // Three 1000 B packets at once on l1 (800 us each): they leave l1 at 0.8, 1.6,
    // 2.4 ms; l2 (1640 us each) is the bottleneck: they leave it at
    // 1.8 + 1.64 = 3.44, 5.08, 6.72 ms.
    let burst = Arc::from(vec![
        TraceRecord {
            at: Duration::ZERO,
            size: 1000
        };
        3
    ]);
    let r = run(&two_hops(
        vec![("burst", SourceConfig::Trace { records: burst })],
        1,
    ));
    let deps: Vec<u64> = records(&r, 1).iter().map(|x| x.departure.0).collect();
    assert_eq!(deps, vec![3_440_000, 5_080_000, 6_720_000]);
    let e2e: Vec<u64> = r.flows[0].delays.bins().iter().map(|b| b.0.0).collect();
    assert_eq!(e2e, vec![5_440_000, 7_080_000, 8_720_000]);
}

/// A scenario that drops (push-out and tail drop), queues at two hops and has packets on
/// the wire and propagating when it ends at an odd instant.
fn lossy() -> SimConfig {
    let mut cfg = two_hops(
        vec![
            (
                "poisson",
                SourceConfig::Poisson {
                    rate: Rate::from_mbit(6),
                    size: 1000,
                },
            ),
            (
                "cbr",
                SourceConfig::Cbr {
                    rate: Rate::from_mbit(4),
                    size: 700,
                },
            ),
            (
                "greedy",
                SourceConfig::Greedy {
                    size: 1200,
                    backlog: 6,
                },
            ),
            (
                "pareto",
                SourceConfig::ParetoOnOff {
                    peak: Rate::from_mbit(8),
                    mean_on: Duration::from_millis(30),
                    mean_off: Duration::from_millis(60),
                    shape: 1.3,
                    size: 500,
                },
            ),
        ],
        3,
    );
    cfg.duration = Duration(3_000_370_001);
    for l in &mut cfg.links {
        l.classes = Arc::new(linkshare_core::ClassTree::flat(l.rate, 4));
    }
    cfg.links[0].buffer = BufferConfig {
        shared: Some(Limit::Packets(20)),
        overflow: Overflow::PushOutLongest,
    };
    cfg.links[1].buffer = BufferConfig {
        shared: Some(Limit::Bytes(Bytes(15_000))),
        overflow: Overflow::TailDrop,
    };
    cfg.links[0].delay = Duration::from_millis(5);
    cfg.links[1].delay = Duration::from_millis(7);
    for (i, f) in cfg.flows.iter_mut().enumerate() {
        for hop in &mut f.route {
            hop.class = ClassId(i as u32 + 1);
        }
        f.schedule = Schedule::always(Duration::from_secs(3));
    }
    cfg
}

#[test]
fn every_packet_is_accounted_for() {
    let r = run(&lossy());
    r.check_conservation().expect("conservation");
    for f in &r.flows {
        let parts = f.delivered.packets
            + f.dropped.packets
            + f.queued.packets
            + f.in_transmission.packets
            + f.propagating.packets;
        assert_eq!(f.sent.packets, parts, "{}", f.name);
        let by_reason: u64 = f.dropped_by_reason.iter().map(|(_, c)| c.packets).sum();
        assert_eq!(by_reason, f.dropped.packets);
    }
    let total =
        |get: fn(&linkshare_sim::result::FlowResult) -> u64| r.flows.iter().map(get).sum::<u64>();
    // The scenario exercises every state.
    assert!(total(|f| f.dropped.packets) > 0);
    assert!(total(|f| f.queued.packets) > 0);
    assert!(total(|f| f.in_transmission.packets) > 0);
    assert!(total(|f| f.propagating.packets) > 0);
    assert!(r.links.iter().all(|l| l.propagating.packets > 0));
    // Every packet sent arrives at the first port.
    let sent: u64 = total(|f| f.sent.packets);
    assert_eq!(r.links[0].classes[0].counters.arrived.packets, sent);
    for l in &r.links {
        for c in &l.classes {
            let k = &c.counters;
            let dropped_on_arrival: u64 = k.dropped_on_arrival.iter().map(|x| x.packets).sum();
            let evicted: u64 = k.evicted.iter().map(|x| x.packets).sum();
            assert_eq!(k.arrived.packets, k.enqueued.packets + dropped_on_arrival);
            assert_eq!(
                k.enqueued.packets,
                k.dequeued.packets + k.queued.packets + evicted
            );
        }
        // Dequeued packets finished their transmission or are on the wire.
        let root = &l.classes[0];
        assert_eq!(
            root.counters.dequeued.packets,
            root.delivered.packets + l.in_transmission.packets
        );
        assert_eq!(root.counters, l.total);
    }
    // What left l1 and is no longer propagating arrived at l2.
    let l1 = &r.links[0];
    assert_eq!(
        l1.classes[0].delivered.packets - l1.propagating.packets,
        r.links[1].classes[0].counters.arrived.packets
    );
}

#[test]
fn same_config_same_result() {
    let a = run(&lossy());
    let b = run(&lossy());
    assert_eq!(a, b);
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
    let mut other_seed = lossy();
    other_seed.seed = 2;
    assert_ne!(run(&other_seed).flows[0].sent, a.flows[0].sent);
}

#[test]
fn adding_a_flow_changes_no_other_flows_packet_times() {
    let random_sources = || {
        vec![
            flow(
                "p",
                0,
                SourceConfig::Poisson {
                    rate: Rate::from_mbit(5),
                    size: 1000,
                },
            ),
            flow(
                "e",
                1,
                SourceConfig::ExpOnOff {
                    peak: Rate::from_mbit(10),
                    mean_on: Duration::from_millis(20),
                    mean_off: Duration::from_millis(20),
                    size: 500,
                },
            ),
            flow(
                "m",
                2,
                SourceConfig::Markov2 {
                    rates: [Rate::from_mbit(1), Rate::from_mbit(6)],
                    mean_sojourn: [Duration::from_millis(30); 2],
                    size: 800,
                },
            ),
            flow(
                "q",
                3,
                SourceConfig::ParetoOnOff {
                    peak: Rate::from_mbit(10),
                    mean_on: Duration::from_millis(20),
                    mean_off: Duration::from_millis(40),
                    shape: 1.5,
                    size: 300,
                },
            ),
        ]
    };
    let base = single_link(
        Rate::from_gbit(1),
        SchedulerKind::Fifo,
        5,
        42,
        random_sources(),
    );
    let mut flows = random_sources();
    // The extra flow comes first: every other flow's index shifts by one.
    flows.insert(
        0,
        flow(
            "extra",
            4,
            SourceConfig::Poisson {
                rate: Rate::from_mbit(50),
                size: 1500,
            },
        ),
    );
    let more = single_link(Rate::from_gbit(1), SchedulerKind::Fifo, 5, 42, flows);
    let (a, b) = (run(&base), run(&more));
    // Emission time = arrival time at the first port; ignore the last 10 ms, where a
    // packet may still be on the wire in one run and not the other.
    let cut = Instant::from_millis(4990);
    for name in ["p", "e", "m", "q"] {
        let ta: Vec<Instant> = arrivals(&a, 0, name)
            .into_iter()
            .filter(|t| *t < cut)
            .collect();
        let tb: Vec<Instant> = arrivals(&b, 0, name)
            .into_iter()
            .filter(|t| *t < cut)
            .collect();
        assert!(ta.len() > 100, "{name}: {} packets", ta.len());
        assert_eq!(ta, tb, "{name}");
    }
}

#[test]
fn histograms_replace_records_past_the_budget_and_stay_exact() {
    let full = run(&lossy());
    let mut small = lossy();
    small.measure.max_delay_records = 100;
    let hist = run(&small);
    assert!(full.per_packet_delays());
    assert!(!hist.per_packet_delays());
    for (a, b) in full.links.iter().zip(&hist.links) {
        let DelayLog::Histogram { packets } = b.delay_log else {
            panic!("not switched")
        };
        assert_eq!(packets, a.classes[0].delivered.packets);
        for (ca, cb) in a.classes.iter().zip(&b.classes) {
            assert_eq!(ca.delays, cb.delays);
            assert_eq!(ca.delay, cb.delay);
        }
    }
    for (a, b) in full.flows.iter().zip(&hist.flows) {
        assert_eq!(a.delays, b.delays);
        assert_eq!(a.delay, b.delay);
    }
}

#[test]
fn class_delays_match_the_records() {
    let r = run(&lossy());
    for (l, link) in r.links.iter().enumerate() {
        for class in link.classes.iter().filter(|c| c.is_leaf) {
            let mut delays: Vec<u64> = records(&r, l)
                .iter()
                .filter(|x| x.class == class.id)
                .map(|x| x.delay().0)
                .collect();
            delays.sort_unstable();
            assert_eq!(delays.len() as u64, class.delivered.packets);
            if let Some(&max) = delays.last() {
                let n = delays.len();
                assert_eq!(class.delay.max.0, max);
                assert_eq!(class.delay.min.0, delays[0]);
                // Nearest rank: the ceil(n / 2)-th value.
                assert_eq!(class.delay.p50.0, delays[n.div_ceil(2) - 1]);
                assert_eq!(class.delay.p99.0, delays[(n * 99).div_ceil(100) - 1]);
                let mean = delays.iter().map(|&d| u128::from(d)).sum::<u128>() / n as u128;
                assert_eq!(u128::from(class.delay.mean.0), mean);
            }
        }
    }
}

#[test]
fn cdf_ends_at_one_and_is_thinned() {
    let r = run(&lossy());
    let cdf = r.cdf(LinkId(0), ClassId(0));
    assert!(!cdf.is_empty() && cdf.len() <= linkshare_sim::result::CDF_POINTS);
    assert_eq!(cdf.last().map(|p| p.1), Some(1.0));
    assert!(cdf.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1));
    assert!(r.cdf(LinkId(9), ClassId(0)).is_empty());
    assert_eq!(
        r.flow_cdf(linkshare_sim::config::FlowId(1))
            .last()
            .map(|p| p.1),
        Some(1.0)
    );
}

#[test]
fn progress_is_reported_up_to_the_end() {
    let cfg = lossy();
    let mut calls = Vec::new();
    let r = Simulator::new(&cfg)
        .expect("valid")
        .run_with_progress(&mut |now, total, _| calls.push((now, total)));
    assert_eq!(
        calls.last(),
        Some(&(Instant::ZERO + cfg.duration, cfg.duration))
    );
    assert!(calls.windows(2).all(|w| w[0].0 <= w[1].0));
    assert_eq!(r, run(&cfg));
}

/// The estimate of events made before a run (to warn about long ones) is within a
/// factor of two of the events the run processes, for open-loop and greedy traffic.
#[test]
fn the_event_estimate_is_close() {
    let greedy = single_link(
        Rate::from_mbit(10),
        SchedulerKind::Drr,
        5,
        1,
        vec![
            flow(
                "a",
                0,
                SourceConfig::Greedy {
                    size: 1000,
                    backlog: 2,
                },
            ),
            flow(
                "b",
                1,
                SourceConfig::Greedy {
                    size: 500,
                    backlog: 2,
                },
            ),
        ],
    );
    for cfg in [lossy(), greedy] {
        let estimate = linkshare_sim::event::estimate(&cfg) as f64;
        let events = run(&cfg).events as f64;
        assert!(
            estimate > events / 2.0 && estimate < events * 2.0,
            "estimate {estimate}, events {events}"
        );
    }
}

/// A budget the run's data grows past stops it cleanly: the result says where, with
/// what was counted, and every packet is still accounted for.
#[test]
fn a_run_past_its_memory_budget_stops_cleanly() {
    let mut cfg = lossy();
    for l in &mut cfg.links {
        l.buffer = BufferConfig::default();
        let mut specs: Vec<_> = l.classes.classes()[1..]
            .iter()
            .map(|c| c.spec.clone())
            .collect();
        for s in &mut specs {
            s.limit = None;
        }
        l.classes = Arc::new(
            linkshare_core::hierarchy::ClassTree::build(
                linkshare_core::hierarchy::LinkSpec {
                    name: l.name.clone(),
                    rate: l.rate,
                    origin: None,
                },
                specs,
            )
            .unwrap(),
        );
    }
    let full = run(&cfg);
    assert!(full.stopped.is_none());
    let budget = 64 << 10;
    let r = Simulator::new(&cfg).unwrap().memory_budget(budget).run();
    let stopped = r.stopped.clone().expect("stopped");
    assert!(stopped.used.total() > budget && stopped.at < Instant::ZERO + cfg.duration);
    assert!(r.packet_hops < full.packet_hops);
    r.check_conservation().unwrap();
}

#[test]
fn an_empty_run_reports_zeros() {
    let mut cfg = single_link(
        Rate::from_mbit(1),
        SchedulerKind::Fifo,
        1,
        1,
        vec![flow(
            "late",
            0,
            SourceConfig::Cbr {
                rate: Rate::from_mbit(1),
                size: 100,
            },
        )],
    );
    cfg.flows[0].schedule = Schedule {
        on: vec![(Instant::from_secs(5), Instant::from_secs(6))],
    };
    let r = run(&cfg);
    assert_eq!(r.flows[0].sent.packets, 0);
    assert_eq!(r.flows[0].delay, Default::default());
    assert!(r.links[0].throughput.iter().all(|w| w.value == 0));
    assert_eq!(r.links[0].throughput.len(), 5);
}

#[test]
fn an_interrupted_run_stops_and_an_uninterrupted_one_is_the_same_run() {
    // About 2 events per packet of 100 bytes at 1 Gbit/s: 2^20 events (one progress
    // call) in less than a second of simulated time.
    let cfg = single_link(
        Rate::from_gbit(1),
        SchedulerKind::Fifo,
        1,
        1,
        vec![flow(
            "greedy",
            0,
            SourceConfig::Greedy {
                size: 100,
                backlog: 2,
            },
        )],
    );
    let mut calls = 0;
    let stopped = Simulator::new(&cfg)
        .expect("valid")
        .run_interruptible(&mut |_, _, _| {
            calls += 1;
            std::ops::ControlFlow::Break(())
        });
    assert!(stopped.is_none());
    assert_eq!(calls, 1, "the run stops at the first progress call");
    let full = Simulator::new(&cfg)
        .expect("valid")
        .run_interruptible(&mut |_, _, _| std::ops::ControlFlow::Continue(()));
    assert_eq!(full, Some(run(&cfg)));
}
