//! The per-window service series (arrivals, drops by arrival window, waits) and the
//! wait distributions, against what the per-packet records and the sources' exact
//! timing say independently; the objectives to measure.

mod common;

use std::sync::Arc;

use common::*;
use linkshare_core::hierarchy::{ClassSpec, ClassTree, Limit, LinkSpec};
use linkshare_core::sched::jobs::{Buffer, Constraints, JobsConfig};
use linkshare_core::sched::{SchedulerConfig, SchedulerKind};
use linkshare_core::units::{Bytes, Duration, Rate};
use linkshare_sim::config::{LinkId, Objective, SourceConfig};
use linkshare_sim::result::{DelayHistogram, RunResult};
use linkshare_sim::{SimError, Simulator};

const WINDOW: u64 = 100_000_000;

/// Arrivals in `[k WINDOW, (k + 1) WINDOW)` of a CBR source of 1000 B at `mbit` from 0:
/// packet `j` at `ceil(j 8000 / (mbit 1e6) s)`.
fn cbr_arrivals(mbit: u64, end: u64) -> Vec<u64> {
    (0..)
        .map(|j: u64| (j * 8_000 * 1_000_000_000).div_ceil(mbit * 1_000_000))
        .take_while(|&t| t < end)
        .collect()
}

/// The waits of link 0's records of leaf `leaf` (departure minus transmission minus
/// arrival), with the instant each started.
fn record_waits(r: &RunResult, rate: Rate, leaf: usize) -> Vec<(u64, u64)> {
    let class = leaves(r, 0)[leaf];
    records(r, 0)
        .iter()
        .filter(|x| x.class == class)
        .map(|x| {
            let start = x.departure.0 - rate.tx_time(Bytes(u64::from(x.len))).0;
            (start, start - x.arrival.0)
        })
        .collect()
}

#[test]
fn fifo_overload_windows_match_the_records() {
    // 1000 B every 4 ms into a 1 Mbit/s link (8 ms each), a 3-packet queue: half the
    // packets are dropped on arrival.
    let rate = Rate::from_mbit(1);
    let mut cfg = single_link(
        rate,
        SchedulerKind::Fifo,
        2,
        1,
        vec![flow(
            "f",
            0,
            SourceConfig::Cbr {
                rate: Rate::from_mbit(2),
                size: 1000,
            },
        )],
    );
    cfg.measure.window = Duration(WINDOW);
    let spec = ClassSpec {
        limit: Some(Limit::Packets(3)),
        ..ClassSpec::new("c", None)
    };
    cfg.links[0].classes = Arc::new(
        ClassTree::build(
            LinkSpec {
                name: "link".into(),
                rate,
                origin: None,
            },
            vec![spec],
        )
        .unwrap(),
    );
    cfg.flows[0].route[0].class = cfg.links[0].classes.leaves()[0];
    let r = Simulator::new(&cfg).unwrap().run();
    let s = &r.links[0].service;
    assert_eq!(s.windows(), 20);
    let arrivals = cbr_arrivals(2, 2_000_000_000);
    let waits = record_waits(&r, rate, 0);
    let recorded: Vec<u64> = records(&r, 0).iter().map(|x| x.arrival.0).collect();
    for k in 0..20u64 {
        let c = s.cell(k as usize, 0);
        let (a, b) = (k * WINDOW, (k + 1) * WINDOW);
        let arrived = arrivals.iter().filter(|&&t| t >= a && t < b).count() as u64;
        assert_eq!(c.arrived.packets, arrived, "window {k}");
        assert_eq!(c.arrived.bytes, 1000 * arrived);
        // Every packet of an early window left within 32 ms: what is not recorded was
        // dropped.
        if k < 19 {
            let sent = recorded.iter().filter(|&&t| t >= a && t < b).count() as u64;
            assert_eq!(c.dropped.packets, arrived - sent, "window {k}");
        }
        let started: Vec<u64> = waits
            .iter()
            .filter(|(st, _)| *st >= a && *st < b)
            .map(|(_, w)| *w)
            .collect();
        if k < 19 {
            assert_eq!(c.started, started.len() as u64, "window {k}");
            assert_eq!(c.wait_sum, started.iter().sum::<u64>());
            assert_eq!(c.wait_max, started.iter().copied().max().unwrap_or(0));
        }
    }
    let total = &r.links[0].classes[1].counters;
    let dropped: u64 = (0..20).map(|k| s.cell(k, 0).dropped.packets).sum();
    assert_eq!(dropped, total.dropped_total().packets);
    let arrived: u64 = (0..20).map(|k| s.cell(k, 0).arrived.packets).sum();
    assert_eq!(arrived, total.arrived.packets);
    let started: u64 = (0..20).map(|k| s.cell(k, 0).started).sum();
    assert_eq!(started, total.dequeued.packets);
    // The wait distribution is the records' (plus the packet on the wire at the end).
    let leaf = &r.links[0].classes[1];
    let mut w: Vec<u64> = waits.iter().map(|(_, w)| *w).collect();
    let on_wire = leaf.waits.count() - w.len() as u64;
    assert!(on_wire <= 1);
    if on_wire == 0 {
        assert_eq!(leaf.waits, DelayHistogram::from_values(&mut w));
    }
    // A queue of 3 behind a packet being sent: the longest wait is 3 transmissions.
    assert!(leaf.wait.max <= Duration::from_millis(24) + Duration(3));
    assert_eq!(leaf.wait.count, total.dequeued.packets);
}

#[test]
fn evictions_count_in_their_arrival_window() {
    // JoBS with a 10-packet shared buffer drops queued packets of class 2 when class 1's
    // arrivals find the buffer full (class 2 has the larger loss-rate slack): every
    // window's drops are at most its arrivals, and the sums are the counters'.
    let rate = Rate::from_mbit(1);
    let mut cfg = single_link(
        rate,
        SchedulerKind::Fifo,
        3,
        2,
        vec![
            flow(
                "a",
                0,
                SourceConfig::Poisson {
                    rate: Rate::from_kbit(900),
                    size: 500,
                },
            ),
            flow(
                "b",
                1,
                SourceConfig::Poisson {
                    rate: Rate::from_kbit(900),
                    size: 500,
                },
            ),
        ],
    );
    cfg.measure.window = Duration(WINDOW);
    let mut jobs = JobsConfig {
        buffer: Buffer::Shared { packets: 10 },
        ..JobsConfig::default()
    };
    jobs.classes.insert(
        "c0".into(),
        Constraints {
            loss_bound: Some(linkshare_core::units::Fraction::from_percent(1)),
            ..Constraints::default()
        },
    );
    cfg.links[0].scheduler = SchedulerConfig::Jobs(jobs);
    let r = Simulator::new(&cfg).unwrap().run();
    let s = &r.links[0].service;
    for (i, leaf) in leaves(&r, 0).iter().enumerate() {
        let mut dropped = 0;
        let mut arrived = 0;
        for k in 0..s.windows() {
            let c = s.cell(k, i);
            assert!(c.dropped.bytes <= c.arrived.bytes, "leaf {i} window {k}");
            dropped += c.dropped.bytes;
            arrived += c.arrived.bytes;
        }
        let counters = &r.links[0].classes[leaf.index()].counters;
        assert_eq!(dropped, counters.dropped_total().bytes);
        assert_eq!(arrived, counters.arrived.bytes);
    }
    let evicted: u64 = r.links[0].classes[2]
        .counters
        .evicted
        .iter()
        .map(|c| c.packets)
        .sum();
    assert!(evicted > 0, "class 2 lost queued packets");
}

#[test]
fn objectives_reach_the_result_and_are_checked() {
    let mut cfg = single_link(
        Rate::from_mbit(1),
        SchedulerKind::Fifo,
        1,
        1,
        vec![flow(
            "f",
            1,
            SourceConfig::Cbr {
                rate: Rate::from_kbit(100),
                size: 1000,
            },
        )],
    );
    let leaf = cfg.links[0].classes.leaves()[1];
    let constraints = Constraints {
        delay_bound: Some(Duration::from_millis(8)),
        ..Constraints::default()
    };
    cfg.measure.objectives.push(Objective {
        link: LinkId(0),
        class: leaf,
        constraints,
    });
    let r = Simulator::new(&cfg).unwrap().run();
    assert_eq!(r.links[0].objectives, vec![(leaf, constraints)]);
    // The root is not a leaf; link 1 does not exist.
    for (link, class) in [(0, cfg.links[0].classes.root().id), (1, leaf)] {
        let mut bad = cfg.clone();
        bad.measure.objectives[0].link = LinkId(link);
        bad.measure.objectives[0].class = class;
        match Simulator::new(&bad) {
            Err(e @ SimError::Objective { .. }) => {
                assert!(e.to_string().contains("not a leaf"), "{e}")
            }
            other => panic!("{other:?}"),
        }
    }
    // Waits of a lone packet on an idle link are zero.
    assert_eq!(r.links[0].classes[leaf.index()].wait.max, Duration::ZERO);
}
