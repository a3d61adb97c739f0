//! Application sources (FTP, Telnet, WWW, video) and the bursts of the ON-OFF sources,
//! run through the engine over UDP on an uncongested link unless a test says otherwise.
//! Expected packet counts, sizes, instants and burst delays are computed here from the
//! configuration (serialization `size * 8 / rate` per packet, back to back, plus the
//! link's propagation delay); random sources are checked against their laws' means
//! with tolerances derived from the standard error.

mod common;

use std::sync::Arc;

use common::*;
use linkshare_core::buffer::BufferConfig;
use linkshare_core::hierarchy::Limit;
use linkshare_core::sched::SchedulerKind;
use linkshare_core::units::{Duration, Instant, Rate};
use linkshare_sim::config::{Schedule, SimConfig, SourceConfig};
use linkshare_sim::result::{BurstRecord, FlowResult, RunResult};
use linkshare_sim::source::video::mpeg1::{self, FRAME_INTERVAL, TRACE_FRAMES, TRACE_SEED};
use linkshare_sim::source::video::{parse_frames, synthetic_mpeg1};
use linkshare_sim::source::www::FSC_PAPER_GROUPS;
use linkshare_sim::{SimError, Simulator};

const MS: u64 = 1_000_000;

/// One flow `f` alone on a FIFO link of `mbit` Mbit/s with propagation delay `delay`.
fn one_flow(
    source: SourceConfig,
    mbit: u64,
    delay: Duration,
    secs: u64,
    seed: u64,
    schedule: Option<Schedule>,
) -> SimConfig {
    let mut f = flow("f", 0, source);
    f.schedule = schedule;
    let mut cfg = single_link(
        Rate::from_mbit(mbit),
        SchedulerKind::Fifo,
        secs,
        seed,
        vec![f],
    );
    cfg.links[0].delay = delay;
    cfg
}

/// Runs `cfg`, checking every flow's conservation and that its bursts account for
/// every byte it sent.
fn run(cfg: &SimConfig) -> RunResult {
    let r = Simulator::new(cfg).expect("valid").run();
    for f in &r.flows {
        f.check_conservation().expect("conservation");
    }
    r
}

/// ON intervals `[start, end)`, given in milliseconds.
fn on_ms(intervals: &[(u64, u64)]) -> Schedule {
    Schedule {
        on: intervals
            .iter()
            .map(|&(start, end)| (Instant::from_millis(start), Instant::from_millis(end)))
            .collect(),
    }
}

/// Runs `source` alone on a 10 Mbit/s link with 10 ms of propagation delay for `secs`
/// seconds (seed 1), ON during `on` (`[start, end)` in milliseconds), as [`run`] does.
fn run_on(source: SourceConfig, secs: u64, on: &[(u64, u64)]) -> RunResult {
    run(&one_flow(
        source,
        10,
        Duration::from_millis(10),
        secs,
        1,
        Some(on_ms(on)),
    ))
}

/// Checks that the bursts of `f` hold every byte it sent and delivered, and that a
/// burst is completed exactly when all its bytes arrived.
fn check_bursts_account_for_everything(f: &FlowResult) {
    let b = &f.transport.bursts;
    assert_eq!(b.iter().map(|x| x.bytes).sum::<u64>(), f.sent.bytes);
    assert_eq!(
        b.iter().map(|x| x.delivered).sum::<u64>(),
        f.delivered.bytes
    );
    for (i, x) in b.iter().enumerate() {
        assert_eq!(x.index as usize, i);
        // Open loop, a burst begun on a new connection (a web transfer) after the first
        // takes the next number: the flow key of per-flow classes.
        let before = if i == 0 { 0 } else { b[i - 1].conn };
        assert!(x.conn == before || x.conn == before + 1, "{x:?}");
        assert_eq!(x.completed.is_some(), x.delivered == x.bytes, "{x:?}");
        // The last delivered byte's arrival: the completion when complete, and known for
        // a burst that lost packets too.
        assert_eq!(x.last_delivered.is_some(), x.delivered > 0, "{x:?}");
        if x.completed.is_some() {
            assert_eq!(x.last_delivered, x.completed, "{x:?}");
        }
    }
}

/// Time to serialize a message of `bytes` cut into packets of `size` at `mbit` Mbit/s,
/// each packet's time rounded up to the nanosecond (computed here, not by the engine).
fn serialize_ns(bytes: u64, size: u64, mbit: u64) -> u64 {
    let per = |b: u64| (b * 8 * 1000).div_ceil(mbit);
    (bytes / size) * per(size)
        + if bytes % size > 0 {
            per(bytes % size)
        } else {
            0
        }
}

/// The delay of burst `b`: completion minus first packet sent.
fn burst_delay(b: &BurstRecord) -> u64 {
    b.completed.expect("completed").0 - b.first_sent.expect("sent").0
}

/// The bursts of `f` that completed, having checked that every burst begun more than
/// `tail` before the end of the run (`end`) did.
fn completed_bursts(f: &FlowResult, end: Instant, tail: Duration) -> Vec<BurstRecord> {
    let b = &f.transport.bursts;
    for x in b {
        assert!(
            x.completed.is_some() || x.begun.saturating_add(tail) >= end,
            "{x:?} did not complete"
        );
    }
    b.iter()
        .filter(|x| x.completed.is_some())
        .copied()
        .collect()
}

/// Checks that every burst of `done` (completed, in order) was sent as it began and
/// took at least `alone(burst)` ns, exactly that when it found the link idle: the
/// previous burst's last bit had left (`delay`, the propagation delay, before it
/// completed) when this one began. Returns how many found the link idle.
fn check_delays_alone(
    done: &[BurstRecord],
    delay: Duration,
    alone: impl Fn(&BurstRecord) -> u64,
) -> usize {
    let mut isolated = 0;
    for (i, x) in done.iter().enumerate() {
        assert_eq!(x.first_sent, Some(x.begun));
        assert!(burst_delay(x) >= alone(x));
        if i == 0 || x.begun.saturating_add(delay) >= done[i - 1].completed.expect("completed") {
            assert_eq!(burst_delay(x), alone(x), "{x:?}");
            isolated += 1;
        }
    }
    isolated
}

/// Lengths of the packets of flow 0 that crossed link 0, in arrival order.
fn packet_lens(r: &RunResult) -> Vec<u32> {
    let mut v: Vec<(Instant, u32)> = records(r, 0).iter().map(|x| (x.arrival, x.len)).collect();
    v.sort_by_key(|&(t, _)| t);
    v.into_iter().map(|(_, len)| len).collect()
}

// ---------------------------------------------------------------------------- FTP

#[test]
fn ftp_sends_its_bytes_at_once_as_one_burst() {
    // 10 000 B in 1000 B packets: 10 packets at 0; at 10 Mbit/s each takes 800 us.
    let src = SourceConfig::Ftp {
        bytes: Some(10_000),
        size: 1000,
    };
    let r = run(&one_flow(src, 10, Duration::from_millis(10), 1, 1, None));
    let f = &r.flows[0];
    assert_eq!((f.sent.packets, f.sent.bytes), (10, 10_000));
    assert_eq!((f.delivered.packets, f.delivered.bytes), (10, 10_000));
    assert_eq!(packet_lens(&r), vec![1000; 10]);
    assert!(records(&r, 0).iter().all(|x| x.arrival == Instant::ZERO));
    let b = &f.transport.bursts;
    assert_eq!(b.len(), 1);
    assert_eq!(b[0].begun, Instant::ZERO);
    assert_eq!(b[0].bytes, 10_000);
    assert_eq!(b[0].first_sent, Some(Instant::ZERO));
    assert_eq!(b[0].completed, Some(Instant(10 * 800_000 + 10 * MS)));
    check_bursts_account_for_everything(f);
}

#[test]
fn ftp_last_packet_is_shorter_and_each_on_interval_restarts_the_transfer() {
    // 10 500 B: ten packets of 1000 B and one of 500 B, at the start of each interval.
    let src = SourceConfig::Ftp {
        bytes: Some(10_500),
        size: 1000,
    };
    let r = run_on(src, 1, &[(0, 100), (500, 600)]);
    let f = &r.flows[0];
    assert_eq!((f.sent.packets, f.sent.bytes), (22, 21_000));
    let mut one = vec![1000; 10];
    one.push(500);
    assert_eq!(packet_lens(&r), [one.clone(), one].concat());
    let b = &f.transport.bursts;
    assert_eq!(b.len(), 2);
    // 10 * 800 us + 400 us of serialization, 10 ms of propagation.
    let delay = 10 * 800_000 + 400_000 + 10 * MS;
    assert_eq!(serialize_ns(10_500, 1000, 10) + 10 * MS, delay);
    for (x, start) in b.iter().zip([0, 500 * MS]) {
        assert_eq!(x.begun, Instant(start));
        assert_eq!(x.bytes, 10_500);
        assert_eq!(burst_delay(x), delay);
    }
    check_bursts_account_for_everything(f);
}

#[test]
fn ftp_smaller_than_a_packet_is_one_short_packet() {
    let src = SourceConfig::Ftp {
        bytes: Some(300),
        size: 1000,
    };
    let r = run(&one_flow(src, 10, Duration::ZERO, 1, 1, None));
    assert_eq!(packet_lens(&r), vec![300]);
    // 300 B at 10 Mbit/s: 240 us.
    assert_eq!(burst_delay(&r.flows[0].transport.bursts[0]), 240_000);
}

#[test]
fn endless_ftp_is_the_greedy_source_with_backlog_two() {
    // Against a CBR competitor on a congested link, with an OFF gap, so that the
    // backlog and the restart matter.
    let build = |bulk: SourceConfig| {
        let mut f = flow("bulk", 0, bulk);
        f.schedule = Some(on_ms(&[(0, 700), (900, 2000)]));
        let cbr = flow(
            "cbr",
            1,
            SourceConfig::Cbr {
                rate: Rate::from_mbit(6),
                size: 500,
            },
        );
        single_link(Rate::from_mbit(10), SchedulerKind::Drr, 2, 3, vec![f, cbr])
    };
    let ftp = run(&build(SourceConfig::Ftp {
        bytes: None,
        size: 1000,
    }));
    let greedy = run(&build(SourceConfig::Greedy {
        size: 1000,
        backlog: 2,
    }));
    assert_eq!(ftp, greedy);
    assert!(ftp.flows[0].sent.packets > 1000);
    assert!(ftp.flows[0].transport.bursts.is_empty());
}

// ------------------------------------------------------------------------- Telnet

#[test]
fn telnet_packets_are_bursts_with_exponential_gaps() {
    // 64 B packets, mean gap 50 ms, for 500 s: about 10 000 packets.
    let src = SourceConfig::Telnet {
        size: 64,
        mean_gap: Duration::from_millis(50),
    };
    let r = run(&one_flow(src, 10, Duration::from_millis(10), 500, 4, None));
    let f = &r.flows[0];
    let b = &f.transport.bursts;
    assert_eq!(b.len() as u64, f.sent.packets);
    assert!(b.iter().all(|x| x.bytes == 64));
    assert!(packet_lens(&r).iter().all(|&l| l == 64));
    check_bursts_account_for_everything(f);
    // Each burst is one packet, sent when it begins; finding the link idle (the previous
    // packet's last bit left, 10 ms before it arrived) its delay is 64 B at 10 Mbit/s
    // (51.2 us) plus 10 ms. A packet behind another waits longer; that happens to a
    // fraction 1 - e^(-51.2 us / 50 ms) = 0.1 % of them.
    let done = completed_bursts(f, Instant::from_secs(500), Duration::from_millis(11));
    let isolated = check_delays_alone(&done, Duration::from_millis(10), |_| 51_200 + 10 * MS);
    assert!(isolated as f64 > 0.99 * done.len() as f64);
    // Gaps (the first one counted from 0): n ~ 10 000 exponential samples of mean
    // 50 ms, standard error of their mean 50 ms / sqrt(n) = 1 %: allow 4 %.
    let times: Vec<u64> = std::iter::once(0)
        .chain(b.iter().map(|x| x.begun.0))
        .collect();
    let gaps: Vec<f64> = times.windows(2).map(|w| (w[1] - w[0]) as f64).collect();
    let n = gaps.len() as f64;
    assert!((9_000.0..11_000.0).contains(&n), "{n}");
    let mean = gaps.iter().sum::<f64>() / n;
    assert!((mean / (50.0 * MS as f64) - 1.0).abs() < 0.04, "{mean}");
    // Shape: P(gap > mean) = e^-1; binomial standard error sqrt(0.23 / n) ~ 0.005.
    let above = gaps.iter().filter(|&&g| g > 50.0 * MS as f64).count() as f64 / n;
    assert!((above - (-1f64).exp()).abs() < 0.02, "{above}");
}

#[test]
fn telnet_restarts_one_gap_after_each_on_interval() {
    // 1000 ON intervals [2i s, 2i + 1 s), mean gap 200 ms. The first packet of an
    // interval comes an exponential gap X after its start, if X < 1 s (P = 1 - e^-5):
    // E[X | X < 1 s] = 0.2 s - 1 s * e^-5 / (1 - e^-5) = 193.2 ms. Standard error over
    // ~990 intervals ~ 6 ms: allow 25 ms. A restart at the interval start would give 0.
    let on = Schedule {
        on: (0..1000)
            .map(|i| (Instant::from_secs(2 * i), Instant::from_secs(2 * i + 1)))
            .collect(),
    };
    let src = SourceConfig::Telnet {
        size: 64,
        mean_gap: Duration::from_millis(200),
    };
    let r = run(&one_flow(src, 10, Duration::ZERO, 2000, 8, Some(on)));
    let b = &r.flows[0].transport.bursts;
    let mut firsts = Vec::new();
    let mut last_interval = None;
    for x in b {
        let t = x.begun.0;
        let interval = t / (2000 * MS);
        assert!(t % (2000 * MS) < 1000 * MS, "packet at {t} ns outside ON");
        if last_interval != Some(interval) {
            firsts.push((t % (2000 * MS)) as f64);
            last_interval = Some(interval);
        }
    }
    assert!(firsts.len() > 950, "{}", firsts.len());
    let e5 = (-5f64).exp();
    let want = 200.0 * MS as f64 - 1000.0 * MS as f64 * e5 / (1.0 - e5);
    let mean = firsts.iter().sum::<f64>() / firsts.len() as f64;
    assert!((mean - want).abs() < 25.0 * MS as f64, "{mean} vs {want}");
}

// ---------------------------------------------------------------------------- WWW

fn fsc_www(load: Rate) -> SourceConfig {
    SourceConfig::Www {
        load,
        lengths: Arc::new(FSC_PAPER_GROUPS),
        size: 1000,
    }
}

#[test]
fn www_offers_its_load_in_poisson_transfers_of_the_given_lengths() {
    // 2 Mbit/s of the FSC groups (mean 13 666 B) on a 100 Mbit/s link for 1000 s.
    let secs = 1000;
    let r = run(&one_flow(
        fsc_www(Rate::from_mbit(2)),
        100,
        Duration::from_millis(2),
        secs,
        5,
        None,
    ));
    let f = &r.flows[0];
    let b = &f.transport.bursts;
    check_bursts_account_for_everything(f);
    let lengths: Vec<f64> = FSC_PAPER_GROUPS.iter().map(|&l| l as f64).collect();
    let mean_len = lengths.iter().sum::<f64>() / 10.0;
    assert_eq!(mean_len, 13_666.0);
    // Transfers: Poisson of mean lambda T = 2e6 / (8 * 13 666) * 1000 = 18 293;
    // standard deviation sqrt(18 293) = 135 (0.74 %): allow 4 standard deviations.
    let lambda_t = 2e6 / (8.0 * mean_len) * secs as f64;
    let n = b.len() as f64;
    assert!(
        (n - lambda_t).abs() < 4.0 * lambda_t.sqrt(),
        "{n} vs {lambda_t}"
    );
    // Offered bytes: compound Poisson of mean lambda T E[L] = load T / 8 and variance
    // lambda T E[L^2]; allow 4 standard deviations (about 6 %).
    let mean_sq = lengths.iter().map(|l| l * l).sum::<f64>() / 10.0;
    let want = 2e6 * secs as f64 / 8.0;
    let sd = (lambda_t * mean_sq).sqrt();
    let got = f.sent.bytes as f64;
    assert!((got - want).abs() < 4.0 * sd, "{got} vs {want} (sd {sd})");
    // Every transfer is one of the groups, as ceil(len / 1000) packets.
    let packets: u64 = b.iter().map(|x| x.bytes.div_ceil(1000)).sum();
    assert_eq!(packets, f.sent.packets);
    let mut counts = [0f64; 10];
    for x in b {
        let g = FSC_PAPER_GROUPS
            .iter()
            .position(|&l| l == x.bytes)
            .expect("a group's length");
        counts[g] += 1.0;
    }
    // Each group's count is binomial(n, 0.1): allow 5 standard deviations.
    let sd = (n * 0.1 * 0.9).sqrt();
    for c in counts {
        assert!((c - n / 10.0).abs() < 5.0 * sd, "{counts:?}");
    }
    // Exponential inter-arrivals: P(gap > 1 / lambda) = e^-1 (SE ~ 0.0036).
    let mean_gap = secs as f64 * 1e9 / lambda_t;
    let above = b
        .windows(2)
        .filter(|w| (w[1].begun.0 - w[0].begun.0) as f64 > mean_gap)
        .count() as f64
        / (n - 1.0);
    assert!((above - (-1f64).exp()).abs() < 0.015, "{above}");
    // A transfer finding the link idle (the previous transfer's last bit left, 2 ms
    // before it arrived): serialization of its packets plus 2 ms. A transfer arrives
    // during the previous one's mean 1.1 ms of serialization with probability ~2 %.
    // (90 189 B take 7.2 ms at 100 Mbit/s: a transfer begun 1 s before the end is done.)
    let done = completed_bursts(f, Instant::from_secs(secs), Duration::from_secs(1));
    let isolated = check_delays_alone(&done, Duration::from_millis(2), |x| {
        serialize_ns(x.bytes, 1000, 100) + 2 * MS
    });
    assert!(isolated as f64 > 0.95 * n, "{isolated}");
}

#[test]
fn www_under_congestion_conserves_and_reports_incomplete_transfers() {
    // 15 Mbit/s offered to a 10 Mbit/s link with a 20-packet buffer: many drops.
    let mut cfg = one_flow(
        fsc_www(Rate::from_mbit(15)),
        10,
        Duration::from_millis(2),
        20,
        6,
        None,
    );
    cfg.links[0].buffer = BufferConfig {
        shared: Some(Limit::Packets(20)),
        ..BufferConfig::default()
    };
    let r = run(&cfg);
    let f = &r.flows[0];
    assert!(f.dropped.packets > 0);
    check_bursts_account_for_everything(f);
    let incomplete = f
        .transport
        .bursts
        .iter()
        .filter(|x| x.completed.is_none())
        .count();
    assert!(incomplete > 0);
}

// -------------------------------------------------------------------------- Video

#[test]
fn video_sends_one_burst_per_frame_and_loops_the_trace() {
    // Frames 2500, 1000, 11 000 B every 40 ms in 1000 B packets on 10 Mbit/s + 10 ms.
    // ON [0, 1 s): frames k = 0..24 at 40k ms; ON [1.5 s, 2 s): frames 0..12 again from
    // the start of the trace, at 1.5 s + 40k ms.
    let frames = [2500u32, 1000, 11_000];
    let src = SourceConfig::Video {
        frames: Arc::new(frames),
        interval: Duration::from_millis(40),
        size: 1000,
    };
    let r = run_on(src, 3, &[(0, 1000), (1500, 2000)]);
    let f = &r.flows[0];
    let want: Vec<(u64, u64)> = (0..25)
        .map(|k| (40 * k * MS, u64::from(frames[k as usize % 3])))
        .chain((0..13).map(|k| (1500 * MS + 40 * k * MS, u64::from(frames[k as usize % 3]))))
        .collect();
    let b = &f.transport.bursts;
    let got: Vec<(u64, u64)> = b.iter().map(|x| (x.begun.0, x.bytes)).collect();
    assert_eq!(got, want);
    for x in b {
        // 2500 B: 2 ms, 1000 B: 0.8 ms, 11 000 B: 8.8 ms of serialization.
        let ser = match x.bytes {
            2500 => 2 * MS,
            1000 => 800_000,
            _ => 8_800_000,
        };
        assert_eq!(burst_delay(x), ser + 10 * MS, "{x:?}");
    }
    let pkts_per_frame = |s: u64| s.div_ceil(1000);
    let packets: u64 = want.iter().map(|&(_, s)| pkts_per_frame(s)).sum();
    assert_eq!(f.sent.packets, packets);
    assert_eq!(&packet_lens(&r)[..4], &[1000, 1000, 500, 1000]);
    check_bursts_account_for_everything(f);
}

#[test]
fn shipped_mpeg1_trace_is_the_documented_model() {
    let text = include_str!("../../../scenarios/traces/mpeg1-synthetic.csv");
    assert!(
        text == mpeg1::synthetic_mpeg1_csv(TRACE_SEED, TRACE_FRAMES),
        "scenarios/traces/mpeg1-synthetic.csv differs from the model; if the model \
         changed on purpose, run `cargo test -p linkshare-sim --test apps -- --ignored \
         write_mpeg1_trace`"
    );
    let frames = parse_frames(text).expect("parses");
    assert_eq!(frames, synthetic_mpeg1(TRACE_SEED, TRACE_FRAMES));
    assert_eq!(frames.len(), 600);
    // The type column follows the group of pictures IBBPBBPBBPBB.
    let types: String = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .skip(1)
        .map(|l| l.split(',').nth(1).expect("type column"))
        .collect();
    assert_eq!(types, "IBBPBBPBBPBB".repeat(50));
    // Largest frame: 11 packets of 1000 B, as in paper 002 §3.4.
    let max = *frames.iter().max().expect("frames");
    assert_eq!(max.div_ceil(1000), 11, "{max}");
    // Mean rate at 30 frames/s near the model's 482 kbit/s (standard deviation of the
    // 600-frame mean ~1.7 %): allow 7 %.
    let kbit = frames.iter().map(|&s| f64::from(s)).sum::<f64>() * 8.0 * 30.0 / 600.0 / 1e3;
    assert!((kbit / 482.0 - 1.0).abs() < 0.07, "{kbit}");
}

#[test]
fn shipped_trace_replays_one_burst_per_frame() {
    let text = include_str!("../../../scenarios/traces/mpeg1-synthetic.csv");
    let frames: Arc<[u32]> = parse_frames(text).expect("parses").into();
    let src = SourceConfig::Video {
        frames: frames.clone(),
        interval: FRAME_INTERVAL,
        size: 1000,
    };
    // ON for [0, 19.99 s): frames at k * 33 333 333 ns for k = 0..=599, the whole trace
    // once; the run lasts 21 s so that every frame arrives.
    let r = run_on(src, 21, &[(0, 19_990)]);
    let b = &r.flows[0].transport.bursts;
    assert_eq!(b.len(), 600);
    for (k, x) in b.iter().enumerate() {
        assert_eq!(x.begun, Instant(k as u64 * 33_333_333));
        assert_eq!(x.bytes, u64::from(frames[k]));
        assert_eq!(
            burst_delay(x),
            serialize_ns(x.bytes, 1000, 10) + 10 * MS,
            "{x:?}"
        );
    }
    check_bursts_account_for_everything(&r.flows[0]);
}

/// Rewrites the shipped trace from the model (run deliberately, see the module docs of
/// `source::video::mpeg1`).
#[test]
#[ignore = "writes scenarios/traces/mpeg1-synthetic.csv"]
fn write_mpeg1_trace() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/traces/mpeg1-synthetic.csv"
    );
    std::fs::write(path, mpeg1::synthetic_mpeg1_csv(TRACE_SEED, TRACE_FRAMES)).expect("write");
}

// ------------------------------------------------------------------ ON-OFF bursts

#[test]
fn periodic_on_off_bursts_are_recorded_and_restart() {
    // 3 packets of 125 B at 1 Mbit/s (1 ms apart) every 10 ms, on 10 Mbit/s + 5 ms.
    // ON [0, 55 ms): bursts at 0, 10, ..., 50 ms; ON [100, 130 ms): 100, 110, 120 ms.
    let src = SourceConfig::PeriodicOnOff {
        burst: 3,
        peak: Rate::from_mbit(1),
        period: Duration::from_millis(10),
        size: 125,
        variations: Default::default(),
    };
    let on = on_ms(&[(0, 55), (100, 130)]);
    let r = run(&one_flow(src, 10, Duration::from_millis(5), 1, 1, Some(on)));
    let b = &r.flows[0].transport.bursts;
    let begun: Vec<u64> = b.iter().map(|x| x.begun.0 / MS).collect();
    assert_eq!(begun, vec![0, 10, 20, 30, 40, 50, 100, 110, 120]);
    for x in b {
        assert_eq!(x.bytes, 375);
        assert_eq!(x.first_sent, Some(x.begun));
        // Last packet sent 2 ms after the first, 100 us on the wire, 5 ms propagation.
        assert_eq!(burst_delay(x), 2 * MS + 100_000 + 5 * MS);
    }
    check_bursts_account_for_everything(&r.flows[0]);
}

#[test]
fn exponential_on_off_bursts_are_the_on_periods() {
    // 125 B at 1 Mbit/s (1 ms per packet) during ON periods of mean 20 ms, OFF 80 ms.
    let src = SourceConfig::ExpOnOff {
        peak: Rate::from_mbit(1),
        mean_on: Duration::from_millis(20),
        mean_off: Duration::from_millis(80),
        size: 125,
    };
    let r = run(&one_flow(src, 100, Duration::ZERO, 100, 2, None));
    let f = &r.flows[0];
    let b = &f.transport.bursts;
    check_bursts_account_for_everything(f);
    // ~1000 cycles of mean 100 ms; count standard deviation ~ sqrt(1000 (20² + 80²) /
    // 100²) = 26: allow 10 %.
    let n = b.len() as f64;
    assert!((n / 1000.0 - 1.0).abs() < 0.1, "{n}");
    // Packets per ON period: ceil(L / 1 ms) for L exponential of mean 20 ms, mean
    // 1 / (1 - e^-0.05) = 20.5, standard deviation ~20: standard error 0.65, allow 12 %.
    let per = f.sent.packets as f64 / n;
    let want = 1.0 / (1.0 - (-0.05f64).exp());
    assert!((per / want - 1.0).abs() < 0.12, "{per} vs {want}");
    // A burst's packets are 1 ms apart at 100 Mbit/s (10 us each): its delay is
    // (packets - 1) ms + 10 us.
    // (An ON period lasts over 1 s with probability e^-50.)
    for x in completed_bursts(f, Instant::from_secs(100), Duration::from_secs(1)) {
        let packets = x.bytes / 125;
        assert_eq!(burst_delay(&x), (packets - 1) * MS + 10_000, "{x:?}");
    }
}

// ---------------------------------------------------------------- Determinism

#[test]
fn random_application_sources_are_reproducible_per_seed() {
    let sources = [
        SourceConfig::Telnet {
            size: 64,
            mean_gap: Duration::from_millis(20),
        },
        fsc_www(Rate::from_mbit(5)),
    ];
    for src in sources {
        let a = run(&one_flow(src.clone(), 10, Duration::ZERO, 10, 11, None));
        let again = run(&one_flow(src.clone(), 10, Duration::ZERO, 10, 11, None));
        let other = run(&one_flow(src, 10, Duration::ZERO, 10, 12, None));
        assert_eq!(a, again);
        assert_ne!(a.flows[0].transport.bursts, other.flows[0].transport.bursts);
    }
}

// ------------------------------------------------------------------------- Checks

#[test]
fn invalid_application_sources_are_refused_with_a_fix() {
    let cases = [
        (
            SourceConfig::Ftp {
                bytes: Some(0),
                size: 1000,
            },
            "FTP transfer is 0 bytes",
        ),
        (
            SourceConfig::Ftp {
                bytes: None,
                size: 0,
            },
            "packet size is 0",
        ),
        (
            SourceConfig::Telnet {
                size: 64,
                mean_gap: Duration::ZERO,
            },
            "mean gap between Telnet packets is 0",
        ),
        (
            SourceConfig::Www {
                load: Rate::ZERO,
                lengths: Arc::new([1000]),
                size: 1000,
            },
            "offered load is 0 bit/s",
        ),
        (
            SourceConfig::Www {
                load: Rate::from_mbit(1),
                lengths: Arc::new([]),
                size: 1000,
            },
            "list of transfer lengths is empty",
        ),
        (
            SourceConfig::Www {
                load: Rate::from_mbit(1),
                lengths: Arc::new([1000, 0]),
                size: 1000,
            },
            "transfer length 1 is 0 bytes",
        ),
        (
            SourceConfig::Video {
                frames: Arc::new([]),
                interval: FRAME_INTERVAL,
                size: 1000,
            },
            "no frames",
        ),
        (
            SourceConfig::Video {
                frames: Arc::new([5, 0]),
                interval: FRAME_INTERVAL,
                size: 1000,
            },
            "video frame 1 is 0 bytes",
        ),
        (
            SourceConfig::Video {
                frames: Arc::new([5]),
                interval: Duration::ZERO,
                size: 1000,
            },
            "interval between video frames is 0",
        ),
        (
            SourceConfig::Video {
                frames: Arc::new([5]),
                interval: FRAME_INTERVAL,
                size: 0,
            },
            "packet size is 0",
        ),
    ];
    for (src, want) in cases {
        let cfg = one_flow(src, 10, Duration::ZERO, 1, 1, None);
        let err = Simulator::new(&cfg).expect_err(want);
        assert!(matches!(err, SimError::Source { .. }), "{err}");
        let msg = err.to_string();
        assert!(msg.contains("flow `f`") && msg.contains(want), "{msg}");
    }
}
