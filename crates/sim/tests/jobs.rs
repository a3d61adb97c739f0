//! JoBS in the engine: the authors' two ns-2 validation scenarios (`jobs-rate`,
//! `jobs-lossdel` of ns-2's `tcl/test/test-suite-jobs.tcl`, spec §6.4 and §7.3), in
//! both controller modes.

mod common;

use common::*;
use linkshare_core::sched::jobs::{Buffer, Constraints, JobsConfig, Mode};
use linkshare_core::sched::{SchedulerConfig, SchedulerKind};
use linkshare_core::units::{Duration, Fraction, Instant, Rate, Ratio};
use linkshare_sim::Simulator;
use linkshare_sim::config::{Schedule, SimConfig, SourceConfig};
use linkshare_sim::result::RunResult;

const LINK: Rate = Rate::from_mbit(10);
const PACKET: u32 = 500;

/// The test suite's network: one 10 Mbit/s link, four CBR sources of 500-byte packets
/// at `rate` each (one per class, all starting at 0), 10 s, under JoBS with `config`.
fn scenario(rate: Rate, config: JobsConfig) -> SimConfig {
    let flows = (0..4)
        .map(|i| {
            flow(
                ["c1", "c2", "c3", "c4"][i],
                i,
                SourceConfig::Cbr { rate, size: PACKET },
            )
        })
        .collect();
    let mut cfg = single_link(LINK, SchedulerKind::Fifo, 10, 1, flows);
    cfg.links[0].scheduler = SchedulerConfig::Jobs(config);
    cfg
}

fn run(cfg: &SimConfig) -> RunResult {
    let r = Simulator::new(cfg).expect("valid configuration").run();
    r.check_conservation().expect("every packet accounted for");
    r
}

/// Waiting times (arrival to start of transmission) of class `leaf`'s packets that
/// arrived in `[from_s, ∞)`, in ns.
fn waits(r: &RunResult, leaf: usize, from_s: f64) -> Vec<u64> {
    let class = leaves(r, 0)[leaf];
    records(r, 0)
        .iter()
        .filter(|x| x.class == class && x.arrival >= secs(from_s))
        .map(|x| {
            x.delay().0
                - LINK
                    .tx_time(linkshare_core::units::Bytes(u64::from(x.len)))
                    .0
        })
        .collect()
}

fn mean(v: &[u64]) -> f64 {
    v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64
}

/// `jobs-rate`: separate buffers (the suite's queue limit of 800 packets, which ns-2
/// splits into 200 per class), throughput bounds of 4, 3, 2, 1 Mbit/s, each class
/// offered 5 Mbit/s (twice the link in total). Expected: each class gets its bound,
/// within ±5 %.
#[test]
fn jobs_rate() {
    for mode in [Mode::REFERENCE, Mode::PAPER] {
        let mut config = JobsConfig {
            mode,
            buffer: Buffer::Separate { packets: 200 },
            ..JobsConfig::default()
        };
        for (name, mbit) in [("c0", 4), ("c1", 3), ("c2", 2), ("c3", 1)] {
            config.classes.insert(
                name.into(),
                Constraints {
                    min_rate: Some(Rate::from_mbit(mbit)),
                    ..Constraints::default()
                },
            );
        }
        let r = run(&scenario(Rate::from_mbit(5), config));
        for (f, want) in r.flows.iter().zip([4e6, 3e6, 2e6, 1e6]) {
            let got = f.mean_rate_bps;
            assert!(
                (got - want).abs() <= 0.05 * want,
                "{mode:?} {}: {got} bit/s, want {want} ± 5 %",
                f.name
            );
        }
    }
}

/// `jobs-lossdel`: a shared 800-packet buffer; class 1 has a 5 ms delay bound and a 1 %
/// loss bound; classes 2–4 have delay ratios 4 and loss ratios 2; each class offered
/// 2.6 Mbit/s (4 % overload). Expected (spec §7.3): class-1 loss at most 1 %, class-1
/// waits at most 5 ms for at least 98 % of its packets, delay and loss ratios within
/// ±20 % of their targets.
#[test]
fn jobs_lossdel() {
    for mode in [Mode::REFERENCE, Mode::PAPER] {
        let mut config = JobsConfig {
            mode,
            buffer: Buffer::Shared { packets: 800 },
            ..JobsConfig::default()
        };
        config.classes.insert(
            "c0".into(),
            Constraints {
                delay_bound: Some(Duration::from_millis(5)),
                loss_bound: Some(Fraction::from_percent(1)),
                ..Constraints::default()
            },
        );
        for name in ["c1", "c2"] {
            config.classes.insert(
                name.into(),
                Constraints {
                    delay_ratio: Some(Ratio::integer(4)),
                    loss_ratio: Some(Ratio::integer(2)),
                    ..Constraints::default()
                },
            );
        }
        let r = run(&scenario(Rate::from_kbit(2600), config));
        let loss: Vec<f64> = r
            .flows
            .iter()
            .map(|f| f.dropped.packets as f64 / f.sent.packets as f64)
            .collect();
        let w: Vec<Vec<u64>> = (0..4).map(|i| waits(&r, i, 1.0)).collect();
        let d: Vec<f64> = w.iter().map(|v| mean(v)).collect();
        let late = w[0].iter().filter(|&&x| x > 5_000_000).count() as f64 / w[0].len() as f64;
        assert!(loss[0] <= 0.01, "{mode:?}: class-1 loss {}", loss[0]);
        assert!(late <= 0.02, "{mode:?}: {late} of class 1 waited over 5 ms");
        for i in 1..3 {
            let ratio = d[i + 1] / d[i];
            assert!(
                (ratio - 4.0).abs() <= 0.8,
                "{mode:?}: delay ratio {}/{}: {ratio}",
                i + 2,
                i + 1
            );
            let ratio = loss[i + 1] / loss[i];
            assert!(
                (ratio - 2.0).abs() <= 0.4,
                "{mode:?}: loss ratio {}/{}: {ratio}",
                i + 2,
                i + 1
            );
        }
    }
}

/// Four classes, each offered `share` of the 10 Mbit/s link in Poisson arrivals of
/// 500-byte packets, a shared buffer of 200 packets, `constraints` on every class but
/// the last (its ratio would have no partner), for 12 s.
fn poisson(share_of_link: f64, config: JobsConfig) -> SimConfig {
    let rate = Rate((LINK.0 as f64 * share_of_link / 4.0) as u64);
    let flows = (0..4)
        .map(|i| {
            flow(
                ["c1", "c2", "c3", "c4"][i],
                i,
                SourceConfig::Poisson { rate, size: PACKET },
            )
        })
        .collect();
    let mut cfg = single_link(LINK, SchedulerKind::Fifo, 12, 7, flows);
    cfg.links[0].scheduler = SchedulerConfig::Jobs(config);
    cfg
}

fn ratios(c: Constraints, mode: Mode) -> JobsConfig {
    let mut config = JobsConfig {
        mode,
        ..JobsConfig::default()
    };
    for name in ["c0", "c1", "c2"] {
        config.classes.insert(name.into(), c);
    }
    config
}

/// The spec's P10 metric: at every arrival from 2 s on, the head-of-line wait of each
/// backlogged class (now minus the arrival of its oldest queued packet), averaged per
/// class over 0.5 s windows (ns), and over the whole run (the last entry). Rebuilt from
/// the delay records: a class's head at `t` is its first packet (FIFO) whose
/// transmission starts after `t`, if it arrived by `t`.
fn hol_waits(r: &RunResult) -> Vec<[f64; 4]> {
    let ids = leaves(r, 0);
    let mut per_class: Vec<Vec<(u64, u64)>> = vec![Vec::new(); 4];
    let mut samples = Vec::new();
    for x in records(r, 0) {
        let k = ids.iter().position(|&c| c == x.class).unwrap();
        let tx = LINK
            .tx_time(linkshare_core::units::Bytes(u64::from(x.len)))
            .0;
        per_class[k].push((x.arrival.0, x.departure.0 - tx));
        samples.push(x.arrival.0);
    }
    for p in &mut per_class {
        p.sort_unstable();
    }
    samples.sort_unstable();
    let from = 2_000_000_000u64;
    let mut sums = vec![[(0.0, 0u32); 4]; 21];
    for &t in samples.iter().filter(|&&t| t >= from) {
        let w = ((t - from) / 500_000_000) as usize;
        for (k, p) in per_class.iter().enumerate() {
            let j = p.partition_point(|&(_, start)| start <= t);
            if let Some(&(arrival, _)) = p.get(j)
                && arrival <= t
                && w < 20
            {
                let wait = (t - arrival) as f64;
                sums[w][k].0 += wait;
                sums[w][k].1 += 1;
                sums[20][k].0 += wait;
                sums[20][k].1 += 1;
            }
        }
    }
    sums.iter()
        .map(|s| {
            let mut m = [0.0; 4];
            for k in 0..4 {
                m[k] = s[k].0 / f64::from(s[k].1.max(1));
            }
            m
        })
        .collect()
}

/// Spec §7.2 P10 and P2: sustained overload (ρ = 1.2), delay ratio 2 between all four
/// classes. In 0.5 s windows after a 2 s warm-up the consecutive ratios of the mean
/// head-of-line waits sampled at arrivals are within ±15 % of 2 in at least 90 % of the
/// windows, and over the run within ±10 %; the link never idles while packets wait (it
/// sends at its rate from the first packet on).
#[test]
fn delay_ratios_converge_in_overload() {
    for mode in [Mode::REFERENCE, Mode::PAPER] {
        let c = Constraints {
            delay_ratio: Some(Ratio::integer(2)),
            ..Constraints::default()
        };
        let r = run(&poisson(1.2, ratios(c, mode)));
        let mut windows = hol_waits(&r);
        let long_run = windows.pop().expect("the run's means");
        for i in 0..3 {
            let all: Vec<f64> = windows.iter().map(|w| w[i + 1] / w[i]).collect();
            let good = all.iter().filter(|&&x| (x - 2.0).abs() <= 0.3).count();
            assert!(
                good * 10 >= windows.len() * 9,
                "{mode:?}: D{}/D{} in range in {good} of {} windows: {all:.2?}",
                i + 2,
                i + 1,
                windows.len()
            );
            let long = long_run[i + 1] / long_run[i];
            assert!(
                (long - 2.0).abs() <= 0.2,
                "{mode:?}: long-run D{}/D{} = {long}",
                i + 2,
                i + 1
            );
        }
        // P2: busy from the first arrival to the end, the link sends C · T.
        let sent: u64 = r.links[0].classes[0].delivered.bytes;
        let busy_bits = LINK.0 as f64 * 11.9;
        assert!(
            sent as f64 * 8.0 >= busy_bits,
            "{mode:?}: link idled: {sent} bytes"
        );
    }
}

/// Spec §7.2 P11: the same overload with loss ratio 2 between all four classes: the
/// loss rates over the run have consecutive ratios within ±10 % of 2.
#[test]
fn loss_ratios_converge_in_overload() {
    for mode in [Mode::REFERENCE, Mode::PAPER] {
        let c = Constraints {
            loss_ratio: Some(Ratio::integer(2)),
            ..Constraints::default()
        };
        let r = run(&poisson(1.2, ratios(c, mode)));
        let loss: Vec<f64> = r
            .flows
            .iter()
            .map(|f| f.dropped.packets as f64 / f.sent.packets as f64)
            .collect();
        for f in &r.flows {
            assert!(
                f.dropped.packets >= 100,
                "{mode:?}: {} drops only",
                f.dropped.packets
            );
        }
        for i in 0..3 {
            let ratio = loss[i + 1] / loss[i];
            assert!(
                (ratio - 2.0).abs() <= 0.2,
                "{mode:?}: p{}/p{} = {ratio} ({loss:?})",
                i + 2,
                i + 1
            );
        }
    }
}

/// Spec §7.2 P12: in underload (ρ = 0.6) nothing is dropped; the delay ratios are not
/// required to reach their target (JoBS does not delay packets to make them).
#[test]
fn underload_drops_nothing() {
    for mode in [Mode::REFERENCE, Mode::PAPER] {
        let c = Constraints {
            delay_ratio: Some(Ratio::integer(2)),
            loss_ratio: Some(Ratio::integer(2)),
            ..Constraints::default()
        };
        let r = run(&poisson(0.6, ratios(c, mode)));
        for f in &r.flows {
            assert_eq!(f.dropped.packets, 0, "{mode:?} {}", f.name);
        }
    }
}

/// Spec §7.2 P7: class 1 has a 5 ms delay bound and no loss bound (it may drop all it
/// needs), the others delay ratios of 2, in overload (ρ = 1.2): at least 99.9 % of
/// class 1's packets wait at most the bound plus one packet's transmission (the link is
/// not preemptive).
#[test]
fn delay_bound_held_by_dropping() {
    for mode in [Mode::REFERENCE, Mode::PAPER] {
        let mut config = ratios(
            Constraints {
                delay_ratio: Some(Ratio::integer(2)),
                ..Constraints::default()
            },
            mode,
        );
        config.classes.insert(
            "c0".into(),
            Constraints {
                delay_bound: Some(Duration::from_millis(5)),
                ..Constraints::default()
            },
        );
        let r = run(&poisson(1.2, config));
        let w = waits(&r, 0, 0.0);
        let slack = LINK
            .tx_time(linkshare_core::units::Bytes(u64::from(PACKET)))
            .0;
        let late = w.iter().filter(|&&x| x > 5_000_000 + slack).count();
        assert!(
            late * 1000 <= w.len(),
            "{mode:?}: {late} of {} late",
            w.len()
        );
    }
}

/// The paper's Table 1 constraints on a 100 Mbit/s link in heavy overload (open-loop
/// stand-ins for Experiment 2's traffic, which is the next step's reproduction: twelve
/// on-off class-1 flows sending 20-packet bursts at line rate every 150 ms with their
/// phases spread over the period, about 13 Mbit/s, and 40 Mbit/s of Poisson traffic in
/// each other class), 1024-byte packets,
/// a 200-packet buffer, 10 s. Both modes keep class 1's loss bound and class 2's
/// throughput bound, keep class 1 within its delay bound for more than 98.5 % of its
/// packets (the paper's figure), and hold the loss ratios. Class 2 is held at its
/// 35 Mbit/s, so its delay ratio gives way to its bound (counted); the paper mode keeps
/// `D4/D3` at 2 meanwhile (the reference mode's clipping only near it).
#[test]
fn table1_in_overload() {
    let link = Rate::from_mbit(100);
    for mode in [Mode::PAPER, Mode::REFERENCE] {
        let two = Some(Ratio::integer(2));
        let mut config = JobsConfig {
            mode,
            ..JobsConfig::default()
        };
        config.classes.insert(
            "c0".into(),
            Constraints {
                delay_bound: Some(Duration::from_millis(8)),
                loss_bound: Some(Fraction::from_percent(1)),
                ..Constraints::default()
            },
        );
        config.classes.insert(
            "c1".into(),
            Constraints {
                min_rate: Some(Rate::from_mbit(35)),
                delay_ratio: two,
                loss_ratio: two,
                ..Constraints::default()
            },
        );
        config.classes.insert(
            "c2".into(),
            Constraints {
                delay_ratio: two,
                loss_ratio: two,
                ..Constraints::default()
            },
        );
        const NAMES: [&str; 12] = [
            "u0", "u1", "u2", "u3", "u4", "u5", "u6", "u7", "u8", "u9", "u10", "u11",
        ];
        let mut flows: Vec<F> = NAMES
            .iter()
            .enumerate()
            .map(|(k, name)| {
                let burst = SourceConfig::PeriodicOnOff {
                    burst: 20,
                    peak: link,
                    period: Duration::from_millis(150 + k as u64),
                    size: 1024,
                    variations: Default::default(),
                };
                // Phases spread over the period (spec §6.2: jittered starts).
                let start = Instant::ZERO + Duration::from_micros(12_500 * k as u64);
                F {
                    schedule: Some(Schedule {
                        on: vec![(start, Instant::from_secs(10))],
                    }),
                    ..flow(name, 0, burst)
                }
            })
            .collect();
        for (i, name) in [(1, "t2"), (2, "t3"), (3, "t4")] {
            let rate = Rate::from_mbit(40);
            flows.push(flow(name, i, SourceConfig::Poisson { rate, size: 1024 }));
        }
        let mut cfg = single_link(link, SchedulerKind::Fifo, 10, 3, flows);
        cfg.links[0].scheduler = SchedulerConfig::Jobs(config);
        let r = run(&cfg);
        let ids = leaves(&r, 0);
        let mut w: Vec<Vec<u64>> = vec![Vec::new(); 4];
        for x in records(&r, 0) {
            let k = ids.iter().position(|&c| c == x.class).unwrap();
            let tx = link
                .tx_time(linkshare_core::units::Bytes(u64::from(x.len)))
                .0;
            w[k].push(x.delay().0 - tx);
        }
        let c = &r.links[0].classes;
        let loss = |i: usize| {
            let k = &c[i + 1].counters;
            k.dropped_total().bytes as f64 / k.arrived.bytes as f64
        };
        let on_time = w[0].iter().filter(|&&x| x <= 8_000_000).count() as f64 / w[0].len() as f64;
        assert!(loss(0) <= 0.01, "{mode:?}: class-1 loss {}", loss(0));
        assert!(on_time >= 0.985, "{mode:?}: class 1 on time {on_time}");
        assert!(
            c[2].mean_rate_bps >= 35e6,
            "{mode:?}: class 2 at {}",
            c[2].mean_rate_bps
        );
        for i in 1..3 {
            let ratio = loss(i + 1) / loss(i);
            assert!(
                (ratio - 2.0).abs() <= 0.2,
                "{mode:?}: p{}/p{} = {ratio}",
                i + 2,
                i + 1
            );
        }
        let d43 = mean(&w[3]) / mean(&w[2]);
        let counters = &r.links[0].discipline_counters;
        let relaxed = counters
            .iter()
            .find(|k| k.class == Some(ids[1]) && k.name == "relaxed_delay_ratio")
            .unwrap()
            .value;
        assert!(relaxed > 0, "{mode:?}: class 2's ratio never gave way");
        if mode == Mode::PAPER {
            assert!((d43 - 2.0).abs() <= 0.2, "{mode:?}: D4/D3 = {d43}");
        } else {
            assert!((d43 - 2.0).abs() <= 0.8, "{mode:?}: D4/D3 = {d43}");
        }
    }
}
