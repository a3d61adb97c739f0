//! Each source family: exact timing where the pattern is deterministic, long-run rate
//! against the mean computed independently from the configuration where it is random.

mod common;

use std::sync::Arc;

use common::*;
use linkshare_core::sched::SchedulerKind;
use linkshare_core::units::{Duration, Instant, Rate};
use linkshare_sim::Simulator;
use linkshare_sim::config::{Schedule, SourceConfig, TraceRecord};
use linkshare_sim::result::RunResult;

fn run_one(source: SourceConfig, secs: u64, seed: u64) -> RunResult {
    let cfg = single_link(
        Rate::from_gbit(10),
        SchedulerKind::Fifo,
        secs,
        seed,
        vec![flow("f", 0, source)],
    );
    Simulator::new(&cfg).expect("valid").run()
}

/// Mean sent rate in bit/s over `seeds` runs of `secs` seconds.
fn mean_sent_rate(source: &SourceConfig, secs: u64, seeds: std::ops::Range<u64>) -> f64 {
    let n = seeds.end - seeds.start;
    let bits: f64 = seeds
        .map(|s| run_one(source.clone(), secs, s).flows[0].sent.bytes as f64 * 8.0)
        .sum();
    bits / (n * secs) as f64
}

fn assert_close(got: f64, want: f64, tolerance: f64) {
    let err = (got - want).abs() / want;
    assert!(
        err <= tolerance,
        "got {got}, want {want} (relative error {err:.4} > {tolerance})"
    );
}

#[test]
fn cbr_times_are_exact() {
    // 1000 B at 3 Mbit/s: packet k at ceil(k * 8000 / 3e6 s) = ceil(k * 2 666 666.67 ns).
    let r = run_one(
        SourceConfig::Cbr {
            rate: Rate::from_mbit(3),
            size: 1000,
        },
        10,
        1,
    );
    let t = arrivals(&r, 0, "f");
    assert_eq!(
        &t[..4],
        &[
            Instant(0),
            Instant(2_666_667),
            Instant(5_333_334),
            Instant(8_000_000)
        ]
    );
    // Packets with k * 8/3 ms < 10 s: k = 0..3749.
    assert_eq!(r.flows[0].sent.packets, 3750);
    assert_eq!(t.len(), 3750);
    assert_eq!(
        t[3749],
        Instant((3749u64 * 8_000 * 1_000_000_000).div_ceil(3_000_000))
    );
}

#[test]
fn poisson_mean_rate_within_two_percent() {
    let source = SourceConfig::Poisson {
        rate: Rate::from_mbit(10),
        size: 1000,
    };
    // 1250 packets/s for 100 s per seed: relative standard error 0.28 % per seed.
    for seed in 1..=5 {
        assert_close(mean_sent_rate(&source, 100, seed..seed + 1), 10e6, 0.02);
    }
}

#[test]
fn poisson_gaps_are_exponential() {
    // Memorylessness check: the fraction of gaps above the mean is e^-1.
    let r = run_one(
        SourceConfig::Poisson {
            rate: Rate::from_mbit(8),
            size: 1000,
        },
        100,
        11,
    );
    let t = arrivals(&r, 0, "f");
    let mean = 1e6; // 1000 B at 8 Mbit/s: 1 ms.
    let gaps: Vec<f64> = t.windows(2).map(|w| (w[1].0 - w[0].0) as f64).collect();
    let above = gaps.iter().filter(|&&g| g > mean).count() as f64 / gaps.len() as f64;
    // 100 000 gaps: SE of the fraction sqrt(p (1 - p) / n) ~ 0.0015.
    assert!((above - (-1f64).exp()).abs() < 0.008, "{above}");
}

#[test]
fn periodic_on_off_times_are_exact() {
    // 125 B at 1 Mbit/s = 1 ms per packet; 3 packets every 10 ms.
    let source = SourceConfig::PeriodicOnOff {
        burst: 3,
        peak: Rate::from_mbit(1),
        period: Duration::from_millis(10),
        size: 125,
        variations: Default::default(),
    };
    let r = run_one(source, 10, 1);
    let t = arrivals(&r, 0, "f");
    let ms = Instant::from_millis;
    assert_eq!(
        &t[..7],
        &[ms(0), ms(1), ms(2), ms(10), ms(11), ms(12), ms(20)]
    );
    assert_eq!(r.flows[0].sent.packets, 3 * 1000);
    assert!(t.iter().all(|x| x.0 % 10_000_000 < 3_000_000));
}

/// `E[ceil(L / T)] = sum over k >= 0 of P(L > k T)`.
fn expected_packets_per_on(survival: impl Fn(f64) -> f64, t: f64) -> f64 {
    (0..2_000_000).map(|k| survival(k as f64 * t)).sum()
}

#[test]
fn exp_on_off_long_run_rate() {
    // T = 0.8 ms (1000 B at 10 Mbit/s); ON 5 ms, OFF 15 ms on average.
    let source = SourceConfig::ExpOnOff {
        peak: Rate::from_mbit(10),
        mean_on: Duration::from_millis(5),
        mean_off: Duration::from_millis(15),
        size: 1000,
    };
    let (t, on, off): (f64, f64, f64) = (0.8e-3, 5e-3, 15e-3);
    // For exponential L: sum_k e^(-k T / on) = 1 / (1 - e^(-T / on)).
    let per_on = 1.0 / (1.0 - (-t / on).exp());
    let by_sum = expected_packets_per_on(|x: f64| (-x / on).exp(), t);
    assert!((per_on - by_sum).abs() < 1e-9);
    let want = 8000.0 * per_on / (on + off);
    // About 10 000 cycles per seed, 10 seeds.
    assert_close(mean_sent_rate(&source, 200, 1..11), want, 0.02);
}

#[test]
fn pareto_on_off_long_run_rate() {
    let shape = 2.5;
    let source = SourceConfig::ParetoOnOff {
        peak: Rate::from_mbit(10),
        mean_on: Duration::from_millis(5),
        mean_off: Duration::from_millis(15),
        shape,
        size: 1000,
    };
    let (t, on, off): (f64, f64, f64) = (0.8e-3, 5e-3, 15e-3);
    let scale = on * (shape - 1.0) / shape;
    let survival = |x: f64| {
        if x < scale {
            1.0
        } else {
            (scale / x).powf(shape)
        }
    };
    let want = 8000.0 * expected_packets_per_on(survival, t) / (on + off);
    assert_close(mean_sent_rate(&source, 200, 1..11), want, 0.03);
}

#[test]
fn markov2_long_run_rate() {
    let source = SourceConfig::Markov2 {
        rates: [Rate::from_mbit(1), Rate::from_mbit(9)],
        mean_sojourn: [Duration::from_millis(20), Duration::from_millis(10)],
        size: 1000,
    };
    let want = (1e6 * 20.0 + 9e6 * 10.0) / 30.0;
    assert_close(mean_sent_rate(&source, 200, 1..11), want, 0.02);
}

#[test]
fn markov2_with_a_silent_state() {
    // State 1 sends nothing: the rate is rates[0] * 10 / (10 + 30).
    let source = SourceConfig::Markov2 {
        rates: [Rate::from_mbit(8), Rate::ZERO],
        mean_sojourn: [Duration::from_millis(10), Duration::from_millis(30)],
        size: 1000,
    };
    assert_close(mean_sent_rate(&source, 200, 1..11), 2e6, 0.03);
}

/// One flow on a 100 Mbit/s link (a greedy source sends 12 500 packets per second).
fn with_schedule(source: SourceConfig, on: Vec<(Instant, Instant)>, secs: u64) -> RunResult {
    let mut f = flow("f", 0, source);
    f.schedule = Some(Schedule { on });
    let cfg = single_link(Rate::from_mbit(100), SchedulerKind::Fifo, secs, 3, vec![f]);
    Simulator::new(&cfg).expect("valid").run()
}

#[test]
fn schedules_silence_every_source() {
    let s = Instant::from_secs;
    let on = vec![(s(0), s(10)), (s(20), s(30))];
    let sources = [
        SourceConfig::Cbr {
            rate: Rate::from_mbit(1),
            size: 1000,
        },
        SourceConfig::Poisson {
            rate: Rate::from_mbit(1),
            size: 1000,
        },
        SourceConfig::PeriodicOnOff {
            burst: 2,
            peak: Rate::from_mbit(1),
            period: Duration::from_millis(100),
            size: 1000,
            variations: Default::default(),
        },
        SourceConfig::ExpOnOff {
            peak: Rate::from_mbit(2),
            mean_on: Duration::from_millis(50),
            mean_off: Duration::from_millis(50),
            size: 1000,
        },
        SourceConfig::ParetoOnOff {
            peak: Rate::from_mbit(2),
            mean_on: Duration::from_millis(50),
            mean_off: Duration::from_millis(50),
            shape: 1.4,
            size: 1000,
        },
        SourceConfig::Markov2 {
            rates: [Rate::from_mbit(1), Rate::from_mbit(2)],
            mean_sojourn: [Duration::from_millis(50); 2],
            size: 1000,
        },
        SourceConfig::Greedy {
            size: 1000,
            backlog: 3,
        },
    ];
    for source in sources {
        let name = format!("{source:?}");
        let r = with_schedule(source, on.clone(), 30);
        let t = arrivals(&r, 0, "f");
        assert!(
            t.iter().any(|x| *x < s(10)),
            "{name}: nothing in the first interval"
        );
        assert!(
            t.iter().any(|x| *x >= s(20)),
            "{name}: nothing in the second interval"
        );
        assert!(
            !t.iter().any(|x| *x >= s(10) && *x < s(20)),
            "{name}: sent while off"
        );
    }
}

#[test]
fn cbr_restarts_at_each_interval() {
    let s = Instant::from_secs;
    let r = with_schedule(
        SourceConfig::Cbr {
            rate: Rate::from_mbit(1),
            size: 1000,
        },
        vec![(s(0), s(10)), (s(20), s(30))],
        30,
    );
    let t = arrivals(&r, 0, "f");
    // 8 ms per packet: 1250 packets in each 10 s interval, the second burst at 20 s.
    assert_eq!(t.len(), 2500);
    assert_eq!(t[1249], Instant::from_millis(9992));
    assert_eq!(t[1250], s(20));
}

#[test]
fn interval_end_is_exclusive() {
    // 1 packet per second; an interval [0, 3 s) sends at 0, 1, 2 s, not at 3 s.
    let size = 125; // 1000 bit
    let r = with_schedule(
        SourceConfig::Cbr {
            rate: Rate::from_kbit(1),
            size,
        },
        vec![(Instant::ZERO, Instant::from_secs(3))],
        10,
    );
    assert_eq!(
        arrivals(&r, 0, "f"),
        vec![
            Instant::from_secs(0),
            Instant::from_secs(1),
            Instant::from_secs(2)
        ]
    );
}

#[test]
fn trace_replay_is_exact() {
    let rec = |ms: u64, size: u32| TraceRecord {
        at: Duration::from_millis(ms),
        size,
    };
    let records: Arc<[TraceRecord]> = vec![
        rec(0, 100),
        rec(1, 200),
        rec(1, 300),
        rec(5, 400),
        rec(1500, 500),
        rec(2500, 600),
    ]
    .into();
    let s = Instant::from_secs;
    // Clock origin 1 s: records at 1, 1.001, 1.001, 1.005, 2.5 (off: skipped), 3.5 s.
    let r = with_schedule(
        SourceConfig::Trace { records },
        vec![(s(1), s(2)), (s(3), s(4))],
        5,
    );
    let ms = Instant::from_millis;
    assert_eq!(
        arrivals(&r, 0, "f"),
        vec![ms(1000), ms(1001), ms(1001), ms(1005), ms(3500)]
    );
    assert_eq!(r.flows[0].sent.packets, 5);
    assert_eq!(r.flows[0].sent.bytes, 100 + 200 + 300 + 400 + 600);
}

#[test]
fn periodic_bursts_and_greedy_top_up_are_deterministic_without_randomness() {
    // Deterministic sources ignore the seed entirely.
    for source in [
        SourceConfig::PeriodicOnOff {
            burst: 4,
            peak: Rate::from_mbit(5),
            period: Duration::from_millis(7),
            size: 700,
            variations: Default::default(),
        },
        SourceConfig::Cbr {
            rate: Rate::from_mbit(3),
            size: 900,
        },
    ] {
        let a = run_one(source.clone(), 2, 1);
        let b = run_one(source, 2, 99);
        assert_eq!(arrivals(&a, 0, "f"), arrivals(&b, 0, "f"));
    }
}
