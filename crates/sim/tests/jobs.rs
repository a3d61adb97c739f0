//! JoBS in the engine: the authors' two ns-2 validation scenarios (`jobs-rate`,
//! `jobs-lossdel` of ns-2's `tcl/test/test-suite-jobs.tcl`, spec §6.4 and §7.3), in
//! both controller modes.

mod common;

use common::*;
use linkshare_core::sched::jobs::{Buffer, Constraints, JobsConfig, Mode};
use linkshare_core::sched::{SchedulerConfig, SchedulerKind};
use linkshare_core::units::{Duration, Fraction, Rate, Ratio};
use linkshare_sim::Simulator;
use linkshare_sim::config::{SimConfig, SourceConfig};
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
    for mode in [Mode::default(), Mode::PAPER] {
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
            println!("{mode:?} {}: {got:.0} bit/s", f.name);
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
    for mode in [Mode::default(), Mode::PAPER] {
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
        println!(
            "{mode:?}: loss {loss:?}, mean waits {:?} ms, class 1 late {late}, {:?}",
            d.iter().map(|x| x / 1e6).collect::<Vec<_>>(),
            r.links[0].discipline_counters
        );
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
