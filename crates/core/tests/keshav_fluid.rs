//! Keshav's FQ and WFQ against the exact fluid GPS of `linkshare_analysis::gps`
//! (spec `keshav-fq.md` §4.1, R2–R6): round and finish numbers, active sets, departures
//! within one maximum packet time of GPS, monotone bids, and the offset `δ` changing
//! delays but not long-run shares.

use linkshare_analysis::gps::{FluidArrival, gps};
use linkshare_core::ds::bids::trace::{Recorder, TraceOp};
use linkshare_core::ds::bids::{FastPerc, PerConversation, Structure};
use linkshare_core::hierarchy::{ClassId, ClassSpec, ClassTree, Limit};
use linkshare_core::sched::keshav::round::UNITS_PER_BYTE;
use linkshare_core::sched::keshav::{ConversationDelta, Keshav, KeshavConfig};
use linkshare_core::sched::{Scheduler, SchedulerConfig};
use linkshare_core::testing::TestPacket;
use linkshare_core::units::{Bytes, Instant, Rate};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{Signed, ToPrimitive};
use proptest::prelude::*;

const RATES: [Rate; 4] = [
    Rate(1_500),
    Rate(1_000_000),
    Rate(10_000_000),
    Rate(1_000_000_000),
];

/// A random case: link, weights, arrivals sorted by time (gaps of 0 make simultaneous
/// arrivals).
#[derive(Clone, Debug)]
struct Case {
    link: Rate,
    weights: Vec<u64>,
    arrivals: Vec<FluidArrival>,
}

fn case(weighted: bool, max_arrivals: usize) -> impl Strategy<Value = Case> {
    (0..RATES.len(), 1usize..=8).prop_flat_map(move |(r, n)| {
        let link = RATES[r];
        // Mean gap around one 700-byte packet time, so that the fluid system both
        // builds up and empties.
        let gap = (link.tx_time(Bytes(700)).as_nanos()).max(2);
        let weight = if weighted { 1u64..=4 } else { 1u64..=1 };
        (
            prop::collection::vec(weight, n),
            prop::collection::vec(
                (
                    0..n,
                    40u64..=1500,
                    prop_oneof![1 => Just(0u64), 4 => 0..2 * gap],
                ),
                1..max_arrivals,
            ),
        )
            .prop_map(move |(weights, raw)| {
                let mut t = 0u64;
                let arrivals = raw
                    .into_iter()
                    .map(|(flow, bytes, dt)| {
                        t += dt;
                        FluidArrival {
                            time: Instant(t),
                            flow,
                            bytes,
                        }
                    })
                    .collect();
                Case {
                    link,
                    weights,
                    arrivals,
                }
            })
    })
}

fn tree(c: &Case) -> ClassTree {
    let specs = c
        .weights
        .iter()
        .enumerate()
        .map(|(i, &w)| {
            let mut s = ClassSpec::new(&format!("c{i}"), None);
            s.weight = Some(w as u32);
            s
        })
        .collect();
    linkshare_core::testing::tree(c.link, specs)
}

fn class(flow: usize) -> ClassId {
    ClassId(flow as u32 + 1)
}

fn units(x: &BigRational) -> BigRational {
    x * BigRational::from_integer(BigInt::from(UNITS_PER_BYTE))
}

fn big(x: u128) -> BigRational {
    BigRational::from_integer(BigInt::from(x))
}

/// The error bound of `round.rs`: `(A + P) · W_max / w_min` units, `A` activations and
/// `P` packets so far (an over-count: every arrival), plus one unit.
fn bound(c: &Case, arrivals: usize) -> BigRational {
    let total: u64 = c.weights.iter().sum();
    let min = *c.weights.iter().min().expect("at least one flow");
    big((2 * arrivals as u128 + 1) * u128::from(total) / u128::from(min) + 1)
}

/// Keshav FQ as it runs by default: uncounted PERC (R4 below runs the counted one).
fn keshav_for(c: &Case) -> Keshav<TestPacket, FastPerc<TestPacket>> {
    let config = KeshavConfig {
        limit: Limit::Packets(1 << 20),
        ..KeshavConfig::default()
    };
    Keshav::new(&tree(c), &config).expect("valid")
}

/// R2: after every arrival, each packet's finish number equals the fluid one within the
/// bound; the round number at every arrival and halfway between arrivals equals the
/// fluid one within the bound; a conversation is active exactly when the fluid one is,
/// except when its finish number is within the bound of `R` (a departure instant).
fn round_and_finish_numbers(c: &Case) -> Result<(), TestCaseError> {
    let fluid = gps(c.link, &c.weights, &c.arrivals);
    let mut k = keshav_for(c);
    let mut evicted = Vec::new();
    let mut prev = Instant::ZERO;
    for (p, a) in c.arrivals.iter().enumerate() {
        let tol = bound(c, p + 1);
        if a.time > prev {
            let mid = Instant(prev.0 + (a.time.0 - prev.0) / 2);
            let want = units(&fluid.round_at(&big(u128::from(mid.0))));
            let got = big(k.round_at(mid));
            prop_assert!(
                (&got - &want).abs() <= tol,
                "R({}) = {} units, fluid {}",
                mid.0,
                got,
                want
            );
        }
        let pkt = TestPacket {
            id: p as u64,
            len: a.bytes as u32,
        };
        let _ = k.enqueue(a.time, class(a.flow), pkt, &mut evicted);
        let f = big(k.finish_of(class(a.flow)).expect("a leaf"));
        let want = units(&fluid.finish_round[p]);
        prop_assert!(
            (&f - &want).abs() <= tol,
            "packet {}: F = {} units, fluid {}",
            p,
            f,
            want
        );
        let t = big(u128::from(a.time.0));
        let r = big(k.round_at(a.time));
        let want_r = units(&fluid.round_at(&t));
        prop_assert!(
            (&r - &want_r).abs() <= tol,
            "R({}) = {}, fluid {}",
            a.time.0,
            r,
            want_r
        );
        let last_at_this_instant = c.arrivals.get(p + 1).is_none_or(|n| n.time > a.time);
        for (flow, &fluid_active) in fluid.active_at(&t).iter().enumerate() {
            if !last_at_this_instant {
                break;
            }
            let ours = k.is_active(class(flow));
            let at_edge = (big(k.finish_of(class(flow)).expect("a leaf")) - &r).abs() <= tol;
            prop_assert!(
                ours == fluid_active || at_edge,
                "flow {} at {}: active {} vs fluid {}",
                flow,
                a.time.0,
                ours,
                fluid_active
            );
        }
        prev = a.time;
    }
    Ok(())
}

/// Drives `sched` behind a link of `c.link`: arrivals at their times, the link sending
/// one packet at a time, back to back while anything is queued. Returns every
/// packet's departure (end of transmission), by arrival index.
fn departures(c: &Case, mut sched: impl Scheduler<TestPacket>) -> Vec<Option<Instant>> {
    let mut out = vec![None; c.arrivals.len()];
    let mut evicted = Vec::new();
    let (mut next, mut free, mut queued) = (0, Instant::ZERO, 0usize);
    while next < c.arrivals.len() || queued > 0 {
        let now = if queued == 0 {
            free.max(c.arrivals[next].time)
        } else {
            free
        };
        while next < c.arrivals.len() && c.arrivals[next].time <= now {
            let a = c.arrivals[next];
            let pkt = TestPacket {
                id: next as u64,
                len: a.bytes as u32,
            };
            let _ = sched.enqueue(a.time, class(a.flow), pkt, &mut evicted);
            queued += 1;
            next += 1;
        }
        let d = sched
            .dequeue(now)
            .expect("work-conserving with packets queued");
        queued -= 1;
        free = now + c.link.tx_time(Bytes(u64::from(d.pkt.len)));
        out[d.pkt.id as usize] = Some(free);
    }
    out
}

/// R3: every packet leaves by its fluid finish time plus one maximum packet time
/// (Parekh–Gallager), rounded up, plus 1 ns.
fn within_one_packet_of_gps(c: &Case, out: &[Option<Instant>]) -> Result<(), TestCaseError> {
    let fluid = gps(c.link, &c.weights, &c.arrivals);
    let lmax = c.link.tx_time(Bytes(1500)).as_nanos() as f64;
    for (p, d) in out.iter().enumerate() {
        let d = d.expect("every packet leaves").0 as f64;
        let bound = fluid.finish_time_ns(p).ceil() + lmax + 1.0;
        prop_assert!(
            d <= bound,
            "packet {} leaves at {} ns, GPS + Lmax/C = {}",
            p,
            d,
            bound
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn keshav_round_and_finish_numbers_are_the_fluid_ones(c in case(false, 200)) {
        round_and_finish_numbers(&c)?;
    }

    #[test]
    fn weighted_round_and_finish_numbers_are_the_fluid_ones(c in case(true, 200)) {
        round_and_finish_numbers(&c)?;
    }

    #[test]
    fn keshav_departures_trail_gps_by_at_most_one_packet(c in case(true, 200)) {
        let out = departures(&c, keshav_for(&c));
        within_one_packet_of_gps(&c, &out)?;
    }

    #[test]
    fn wfq_departures_trail_gps_by_at_most_one_packet(c in case(true, 200)) {
        // wfq's weights are rates: the classes' weight shares of the link.
        let sched = SchedulerConfig::Wfq.build::<TestPacket>(&tree(&c)).expect("valid");
        let out = departures(&c, sched);
        within_one_packet_of_gps(&c, &out)?;
    }

    /// R4: finish numbers never decrease; bids strictly increase within a conversation
    /// and never exceed the packet's finish number; with δ = 0 they equal it.
    #[test]
    fn bids_are_monotone_and_below_finish_numbers(c in case(true, 150), delta in prop_oneof![Just(0u64), 1u64..20_000]) {
        let config = KeshavConfig {
            limit: Limit::Packets(1 << 20),
            delta: Bytes(delta),
            ..KeshavConfig::default()
        };
        let recorder = Recorder::new();
        let mut k = Keshav::<TestPacket, PerConversation<TestPacket>>::new(&tree(&c), &config)
            .expect("valid")
            .with_recorder(recorder.clone());
        let mut evicted = Vec::new();
        let mut finish = Vec::new();
        for (p, a) in c.arrivals.iter().enumerate() {
            let before = k.finish_of(class(a.flow)).expect("a leaf");
            let _ = k.enqueue(a.time, class(a.flow), TestPacket { id: p as u64, len: a.bytes as u32 }, &mut evicted);
            let f = k.finish_of(class(a.flow)).expect("a leaf");
            prop_assert!(f > before);
            finish.push(f);
        }
        let bids: Vec<(u32, u128)> = recorder.trace().ops.iter().filter_map(|op| match *op {
            TraceOp::Insert { conv, bid, .. } => Some((conv, bid)),
            TraceOp::GetMin { .. } => None,
        }).collect();
        prop_assert_eq!(bids.len(), c.arrivals.len());
        let mut last = vec![None; c.weights.len() + 1];
        for (p, &(conv, b)) in bids.iter().enumerate() {
            prop_assert!(b <= finish[p]);
            if delta == 0 {
                prop_assert_eq!(b, finish[p]);
            }
            if let Some(l) = last[conv as usize] {
                prop_assert!(b > l, "bids of conversation {} not increasing", conv);
            }
            last[conv as usize] = Some(b);
        }
    }
}

/// R6: two greedy conversations and a sparse one at about 10 % of its fair share
/// (pseudo-random gaps) on 1 Mbit/s, under offsets of 0, 10 and 100 maximum packets for
/// the sparse one. Returns the greedy ones' shares of the link and the sparse one's mean
/// delay (s), per offset.
fn greedy_and_sparse(sparse_size: u64, secs: u64) -> (Vec<[f64; 2]>, Vec<f64>) {
    let link = Rate::from_mbit(1);
    let mut arrivals = Vec::new();
    // Greedy: more than the link can send in the run, all at 0.
    let greedy_packets = link.0 / 8 / 1000 * secs;
    for _ in 0..greedy_packets {
        for flow in 0..2 {
            arrivals.push(FluidArrival {
                time: Instant::ZERO,
                flow,
                bytes: 1000,
            });
        }
    }
    // Sparse: 10 % of a third of the link on average, gaps uniform in [0.25, 1.75] of
    // the mean.
    let mean_gap = sparse_size * 8 * 1_000_000_000 * 30 / link.0;
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut t = 0u64;
    loop {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        t += mean_gap / 4 + state % (mean_gap * 3 / 2);
        if t >= secs * 1_000_000_000 {
            break;
        }
        arrivals.push(FluidArrival {
            time: Instant(t),
            flow: 2,
            bytes: sparse_size,
        });
    }
    arrivals.sort_by_key(|a| a.time);
    let c = Case {
        link,
        weights: vec![1, 1, 1],
        arrivals,
    };
    let horizon = Instant::from_secs(secs);
    let mut shares = Vec::new();
    let mut delays = Vec::new();
    for delta_packets in [0u64, 10, 100] {
        let config = KeshavConfig {
            limit: Limit::Packets(1 << 20),
            structure: Structure::Perc,
            count_operations: true,
            delta: Bytes::ZERO,
            deltas: vec![ConversationDelta {
                class: "c2".into(),
                delta: Bytes(delta_packets * 1500),
                origin: None,
            }],
            limit_origin: None,
        };
        let k = Keshav::<TestPacket, PerConversation<TestPacket>>::new(&tree(&c), &config)
            .expect("valid");
        let out = departures(&c, k);
        let mut bytes = [0u64; 3];
        let (mut delay, mut n) = (0f64, 0f64);
        for (p, a) in c.arrivals.iter().enumerate() {
            let d = out[p].expect("every packet leaves");
            if d <= horizon {
                bytes[a.flow] += a.bytes;
                if a.flow == 2 {
                    delay += d.since(a.time).as_secs_f64();
                    n += 1.0;
                }
            }
        }
        let capacity = (link.0 / 8 * secs) as f64;
        shares.push([bytes[0] as f64 / capacity, bytes[1] as f64 / capacity]);
        delays.push(delay / n);
    }
    (shares, delays)
}

/// R6 as the spec states it (64-byte sparse packets): shares move by less than 1 % of
/// the link across offsets, and the sparse mean delay never grows with the offset.
/// (Its packets already bid below the greedy ones' heads, so the offset has little to
/// give.)
#[test]
fn delta_never_raises_delay_nor_moves_shares() {
    let (shares, delays) = greedy_and_sparse(64, 20);
    for s in &shares[1..] {
        for flow in 0..2 {
            assert!((s[flow] - shares[0][flow]).abs() < 0.01, "{shares:?}");
        }
    }
    assert!(delays.windows(2).all(|w| w[1] <= w[0]), "{delays:?}");
}

/// R6 with 1500-byte sparse packets, whose plain bids (`R + 1500`) lose to the greedy
/// heads: the offset lowers the sparse mean delay, and still moves no share.
#[test]
fn delta_lowers_the_delay_of_a_sparse_conversation() {
    let (shares, delays) = greedy_and_sparse(1500, 40);
    for s in &shares[1..] {
        for flow in 0..2 {
            assert!((s[flow] - shares[0][flow]).abs() < 0.01, "{shares:?}");
        }
    }
    assert!(delays.windows(2).all(|w| w[1] <= w[0]), "{delays:?}");
    assert!(delays[2] < delays[0], "{delays:?}");
}

#[test]
fn units_convert_big_rationals() {
    let x = units(&BigRational::new(BigInt::from(1), BigInt::from(2)));
    assert_eq!(x.to_u128(), Some(UNITS_PER_BYTE / 2));
}

/// Spec R2(b)'s budget: at most 10^-6 byte of error in `R` and in finish numbers per
/// 10^4 events. 16 conversations of weight 1, 500 arrivals on each of the four link
/// rates (4 000 events, some simultaneous). (The same check over 40 runs of 2 000
/// arrivals, 80 000 events, found at most 4.7·10^-11 byte.)
#[test]
fn error_is_within_the_specs_budget() {
    let mut state = 12_345u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let (mut worst, mut events) = (0f64, 0u64);
    for link in RATES {
        let n = 16;
        let gap = link.tx_time(Bytes(700)).as_nanos().max(2);
        let mut t = 0u64;
        let arrivals: Vec<FluidArrival> = (0..500)
            .map(|_| {
                let r = next();
                t += if r % 5 == 0 { 0 } else { r % (2 * gap) };
                FluidArrival {
                    time: Instant(t),
                    flow: (r >> 20) as usize % n,
                    bytes: 40 + (r >> 30) % 1461,
                }
            })
            .collect();
        let c = Case {
            link,
            weights: vec![1; n],
            arrivals,
        };
        let fluid = gps(c.link, &c.weights, &c.arrivals);
        let mut k = keshav_for(&c);
        let mut evicted = Vec::new();
        let per_byte = big(UNITS_PER_BYTE);
        for (p, a) in c.arrivals.iter().enumerate() {
            let pkt = TestPacket {
                id: p as u64,
                len: a.bytes as u32,
            };
            let _ = k.enqueue(a.time, class(a.flow), pkt, &mut evicted);
            let f = big(k.finish_of(class(a.flow)).expect("a leaf"));
            let r = big(k.round_at(a.time));
            let want_r = units(&fluid.round_at(&big(u128::from(a.time.0))));
            for e in [f - units(&fluid.finish_round[p]), r - want_r] {
                let bytes = (e.abs() / &per_byte).to_f64().expect("finite");
                worst = worst.max(bytes);
            }
            events += 1;
        }
    }
    let budget = 1e-6 * events as f64 / 1e4;
    assert!(
        worst <= budget,
        "largest error {worst:e} B over {events} events, budget {budget:e} B"
    );
}
