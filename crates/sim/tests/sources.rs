//! Each source family: exact timing where the pattern is deterministic, long-run rate
//! against the mean computed independently from the configuration where it is random.

mod common;

use std::sync::Arc;

use common::*;
use linkshare_core::sched::SchedulerKind;
use linkshare_core::units::{Duration, Instant, Rate};
use linkshare_sim::Simulator;
use linkshare_sim::config::{Schedule, SourceConfig, Swing, TraceRecord};
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
        SourceConfig::Pareto {
            rate: Rate::from_mbit(1),
            shape: 1.9,
            size: 1000,
        },
        SourceConfig::Population {
            each: Arc::new(SourceConfig::Poisson {
                rate: Rate::from_kbit(100),
                size: 1000,
            }),
            swing: Swing {
                min: 2,
                max: 10,
                period: Duration::from_secs(7),
            },
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

#[test]
fn pareto_gaps_follow_the_pareto_law() {
    // 1000 B at 8 Mbit/s: mean gap 1 ms; shape 1.9: scale x_m = 1 ms * 0.9 / 1.9.
    let shape = 1.9;
    let r = run_one(
        SourceConfig::Pareto {
            rate: Rate::from_mbit(8),
            shape,
            size: 1000,
        },
        100,
        5,
    );
    let t = arrivals(&r, 0, "f");
    let scale = 1e6 * (shape - 1.0) / shape;
    let gaps: Vec<f64> = t.windows(2).map(|w| (w[1].0 - w[0].0) as f64).collect();
    // No gap is shorter than the scale (each rounded to the nanosecond).
    let shortest = gaps.iter().copied().fold(f64::INFINITY, f64::min);
    assert!(shortest >= scale.floor(), "{shortest} < {scale}");
    // P(gap > c x_m) = c^-shape at c = 1.5, 2, 4, 10; about 100 000 gaps, so the
    // standard error of each fraction is at most 0.0016.
    for c in [1.5f64, 2.0, 4.0, 10.0] {
        let above = gaps.iter().filter(|&&g| g > c * scale).count() as f64 / gaps.len() as f64;
        let want = c.powf(-shape);
        assert!(
            (above - want).abs() < 0.008,
            "c = {c}: {above} against {want}"
        );
    }
}

#[test]
fn pareto_mean_rate() {
    // A finite-variance shape for a tight check of the mean.
    let source = SourceConfig::Pareto {
        rate: Rate::from_mbit(10),
        shape: 2.5,
        size: 1000,
    };
    assert_close(mean_sent_rate(&source, 100, 1..6), 10e6, 0.02);
}

/// `round(mid + amp sin(2 pi t / period))`, computed directly.
fn sine_level(min: u32, max: u32, period: f64, t: f64) -> u32 {
    let mid = f64::from(min + max) / 2.0;
    let amp = f64::from(max - min) / 2.0;
    (mid + amp * (2.0 * std::f64::consts::PI * t / period).sin()).round() as u32
}

#[test]
fn swing_levels_follow_the_sine() {
    let swing = Swing {
        min: 300,
        max: 550,
        period: Duration::from_secs(10),
    };
    let steps = swing.steps();
    assert_eq!(steps[0], (0, 425));
    // 250 level changes up, 250 down (plus the start).
    assert_eq!(steps.len(), 501, "{:?}", &steps[..5]);
    // Away from the changes (1 us on either side), the level is the sine's.
    for &(from, _) in &steps[1..] {
        for t in [from - 1_000, from + 1_000] {
            let want = sine_level(300, 550, 1e10, t as f64);
            assert_eq!(swing.level(Instant(t)), want, "at {t} ns");
        }
    }
    for k in 0..10_000u64 {
        let t = k * 2_345_678 + 1;
        let got = swing.level(Instant(t));
        let want = sine_level(300, 550, 1e10, (t % 10_000_000_000) as f64);
        // Within 1 ns of a change the direct evaluation may round the other way.
        assert!(got.abs_diff(want) <= 1, "at {t} ns: {got} against {want}");
    }
    // The mean level of a symmetric swing is its middle.
    assert!(
        (swing.mean_level() - 425.0).abs() < 0.01,
        "{}",
        swing.mean_level()
    );
    let constant = Swing {
        min: 7,
        max: 7,
        period: Duration::ZERO,
    };
    assert_eq!(constant.steps(), vec![(0, 7)]);
    assert_eq!(constant.level(Instant(123)), 7);
}

#[test]
fn population_sends_as_many_members_as_are_on() {
    // Members send one 125 B packet per millisecond (CBR at 1 Mbit/s); 0 to 40 of them on
    // over a 4 s sine. Per 100 ms window, the packets sent are the members' time on,
    // integrated from the sine directly, within one packet per member start.
    let swing = Swing {
        min: 0,
        max: 40,
        period: Duration::from_secs(4),
    };
    let source = SourceConfig::Population {
        each: Arc::new(SourceConfig::Cbr {
            rate: Rate::from_mbit(1),
            size: 125,
        }),
        swing,
    };
    let r = run_one(source, 8, 1);
    let t = arrivals(&r, 0, "f");
    for w in 0..80u64 {
        let (a, b) = (w * 100_000_000, (w + 1) * 100_000_000);
        let sent = t.iter().filter(|x| x.0 >= a && x.0 < b).count() as i64;
        let on_ms: f64 = (a / 1000..b / 1000)
            .map(|us| f64::from(sine_level(0, 40, 4e9, us as f64 * 1e3 + 500.0)))
            .sum::<f64>()
            / 1000.0;
        assert!(
            (sent as f64 - on_ms).abs() <= 41.0,
            "window {w}: {sent} packets, {on_ms} member-ms on"
        );
    }
    // A population of Poisson members: the mean rate is the mean level times a member's.
    let poisson = SourceConfig::Population {
        each: Arc::new(SourceConfig::Poisson {
            rate: Rate::from_mbit(1),
            size: 500,
        }),
        swing: Swing {
            min: 10,
            max: 30,
            period: Duration::from_secs(5),
        },
    };
    assert_close(poisson.mean_rate_bps(), 20e6, 0.001);
    assert_close(mean_sent_rate(&poisson, 20, 1..3), 20e6, 0.02);
}

#[test]
fn population_members_must_run_on_their_own_timers() {
    let swing = Swing {
        min: 1,
        max: 2,
        period: Duration::from_secs(1),
    };
    for each in [
        SourceConfig::Greedy {
            size: 1000,
            backlog: 2,
        },
        SourceConfig::Ftp {
            bytes: None,
            size: 1000,
        },
    ] {
        let e = linkshare_sim::source::check(&SourceConfig::Population {
            each: Arc::new(each),
            swing,
        })
        .unwrap_err();
        assert!(e.contains("own timers"), "{e}");
    }
    let cbr = Arc::new(SourceConfig::Cbr {
        rate: Rate::from_mbit(1),
        size: 100,
    });
    let e = linkshare_sim::source::check(&SourceConfig::Population {
        each: Arc::clone(&cbr),
        swing: Swing {
            min: 3,
            max: 2,
            period: Duration::from_secs(1),
        },
    })
    .unwrap_err();
    assert!(e.contains("1 <= min <= max"), "{e}");
    let e = linkshare_sim::source::check(&SourceConfig::Population {
        each: cbr,
        swing: Swing {
            min: 1,
            max: 2,
            period: Duration::ZERO,
        },
    })
    .unwrap_err();
    assert!(e.contains("positive period"), "{e}");
}
