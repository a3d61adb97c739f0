//! SCED (H-FSC paper §II, Eqs. 2–4) and Virtual Clock: deadlines computed by hand, the
//! punishment of Fig. 3, and an independent model of Eq. 2 for linear curves.

use linkshare_core::curve::ServiceCurve;
use linkshare_core::hierarchy::{ClassId, ClassSpec};
use linkshare_core::sched::sced::Sced;
use linkshare_core::sched::wf2q::Wf2q;
use linkshare_core::sched::{Scheduler, SchedulerKind, build};
use linkshare_core::testing::TestPacket;
use linkshare_core::testing::{put, tree};
use linkshare_core::units::{Duration, Instant, Rate};
use proptest::prelude::*;

const MS: u64 = 1_000_000;

fn leaf(name: &str, rate: Option<Rate>, rt: Option<ServiceCurve>) -> ClassSpec {
    let mut s = ClassSpec::new(name, None);
    s.rate = rate;
    s.rt = rt;
    s
}

#[test]
fn curves_come_from_rt_then_rate_then_weight_share() {
    let rt = ServiceCurve {
        m1: Rate::from_mbit(4),
        d: Duration::from_millis(5),
        m2: Rate::from_mbit(2),
    };
    let mut w = leaf("w", None, None);
    w.weight = Some(3);
    let t = tree(
        Rate::from_mbit(10),
        vec![
            leaf("c", Some(Rate::from_mbit(1)), Some(rt)),
            leaf("r", Some(Rate::from_mbit(4)), None),
            leaf("u", None, None),
            w,
        ],
    );
    let id = |n: &str| t.id_of(n).unwrap();
    let s = Sced::<TestPacket>::new(&t).unwrap();
    assert_eq!(s.curve_of(id("c")), Some(rt));
    assert_eq!(
        s.curve_of(id("r")),
        Some(ServiceCurve::linear(Rate::from_mbit(4)))
    );
    // 10 − 2 (rt's m2) − 4 = 4 Mbit/s left, split 1 : 3.
    assert_eq!(
        s.curve_of(id("u")),
        Some(ServiceCurve::linear(Rate::from_mbit(1)))
    );
    assert_eq!(
        s.curve_of(id("w")),
        Some(ServiceCurve::linear(Rate::from_mbit(3)))
    );
    // Virtual Clock ignores rt: 10 − 1 − 4 = 5 Mbit/s left for u and w.
    let vc = Sced::<TestPacket>::virtual_clock(&t).unwrap();
    assert_eq!(vc.name(), "vc");
    assert_eq!(
        vc.curve_of(id("c")),
        Some(ServiceCurve::linear(Rate::from_mbit(1)))
    );
    assert_eq!(
        vc.curve_of(id("w")),
        Some(ServiceCurve::linear(Rate(3_750_000)))
    );
    assert!(build::<TestPacket>(SchedulerKind::VirtualClock, &t).is_ok());
}

/// A concave curve, 2 Mbit/s for 10 ms then 1 Mbit/s (2500 B at the knee), deadlines by
/// hand (Eq. 4, `D^{-1}(w + l)`, 1 B = 4 µs at 2 Mbit/s, 8 µs at 1 Mbit/s):
///
/// * backlogged at 100 ms with `w = 0`: `D` is the curve from (100 ms, 0). A 1000 B head
///   is due at 104 ms; after it (`w = 1000`) a 2000 B head is due when `D` reaches
///   3000 B: 2500 B at 110 ms, 500 B more at 1 Mbit/s, 114 ms.
/// * backlogged again at 120 ms with `w = 3000` (Eq. 3): the old curve is at
///   2500 + 1250 = 3750 B there, above 3000, so the new curve starts at (120 ms, 3000)
///   with slope 2 Mbit/s and meets the old one where 3000 + 2·t = 3750 + 1·t (Mbit/s),
///   t = 6 ms, at 4500 B. A 1000 B head is due at 124 ms (4000 B on the new burst); the
///   next 1000 B head when `D` reaches 5000 B, 500 B past the meeting point on the old
///   curve's 1 Mbit/s part: 130 ms.
#[test]
fn concave_deadlines_by_hand() {
    let rt = ServiceCurve {
        m1: Rate::from_mbit(2),
        d: Duration::from_millis(10),
        m2: Rate::from_mbit(1),
    };
    let t = tree(Rate::from_mbit(10), vec![leaf("x", None, Some(rt))]);
    let x = t.id_of("x").unwrap();
    let mut s = Sced::new(&t).unwrap();
    put(&mut s, Instant(100 * MS), x, 0, 1000);
    put(&mut s, Instant(100 * MS), x, 1, 2000);
    assert_eq!(s.deadline_of(x), Some(Instant(104 * MS)));
    assert_eq!(s.dequeue(Instant(100 * MS)).unwrap().pkt.id, 0);
    assert_eq!(s.deadline_of(x), Some(Instant(114 * MS)));
    assert_eq!(s.dequeue(Instant(101 * MS)).unwrap().pkt.id, 1);
    assert_eq!(s.deadline_of(x), None);
    assert_eq!(s.served(x), Some(3000));
    put(&mut s, Instant(120 * MS), x, 2, 1000);
    put(&mut s, Instant(120 * MS), x, 3, 1000);
    assert_eq!(s.deadline_of(x), Some(Instant(124 * MS)));
    s.dequeue(Instant(120 * MS)).unwrap();
    assert_eq!(s.deadline_of(x), Some(Instant(130 * MS)));
}

/// The punishment of the H-FSC paper's Fig. 3, on a case small enough to do by hand.
/// Link 10 Mbit/s; `a` and `b` with the same linear curve of 5 Mbit/s; 1250 B packets
/// (1 ms at the link, 2 ms at 5 Mbit/s); the link asks for a packet every ms.
///
/// * `a` is backlogged from 0 and alone until 1 s: it sends 1000 packets, twice its
///   curve. Its next deadline is `D_a^{-1}(1001 · 1250 B)` = 2.002 s.
/// * `b` turns backlogged at 1 s; its k-th packet is due at 1 s + 2k ms. Packets
///   k = 1..500 are due by 2.000 s, before `a`'s 2.002 s: `b` alone is served from
///   1 s to 1.5 s, and `a`, which only used capacity nobody else wanted, gets nothing.
///   At 1.5 s `b`'s 501st packet ties with `a` at 2.002 s; ties go to `a` (declared
///   first); from then on they alternate.
///
/// WF2Q+, which does not punish, serves `a` within one packet of `b`'s arrival.
#[test]
fn a_class_that_used_idle_capacity_is_starved_later() {
    let five = Some(ServiceCurve::linear(Rate::from_mbit(5)));
    let t = tree(
        Rate::from_mbit(10),
        vec![leaf("a", None, five), leaf("b", None, five)],
    );
    let (a, b) = (t.id_of("a").unwrap(), t.id_of("b").unwrap());
    let mut s = Sced::new(&t).unwrap();
    let mut id = 0;
    for _ in 0..2000 {
        put(&mut s, Instant::ZERO, a, id, 1250);
        id += 1;
    }
    let mut order = Vec::new();
    for k in 0..1600u64 {
        if k == 1000 {
            for _ in 0..2000 {
                put(&mut s, Instant(1000 * MS), b, id, 1250);
                id += 1;
            }
        }
        order.push(s.dequeue(Instant(k * MS)).unwrap().class);
    }
    assert!(order[..1000].iter().all(|&c| c == a));
    assert!(
        order[1000..1500].iter().all(|&c| c == b),
        "a starved from 1 s to 1.5 s"
    );
    assert_eq!(order[1500], a);
    for (k, &c) in order.iter().enumerate().skip(1501) {
        assert_eq!(
            c,
            if k % 2 == 1 { b } else { a },
            "alternation at packet {k}"
        );
    }

    let rates = |r| Some(Rate::from_mbit(r));
    let t = tree(
        Rate::from_mbit(10),
        vec![leaf("a", rates(5), None), leaf("b", rates(5), None)],
    );
    let mut w = Wf2q::new(&t).unwrap();
    for id in 0..2000 {
        put(&mut w, Instant::ZERO, a, id, 1250);
    }
    for k in 0..1000u64 {
        assert_eq!(w.dequeue(Instant(k * MS)).unwrap().class, a);
    }
    for id in 0..2000 {
        put(&mut w, Instant(1000 * MS), b, id, 1250);
    }
    let next: Vec<ClassId> = (1000..1004u64)
        .map(|k| w.dequeue(Instant(k * MS)).unwrap().class)
        .collect();
    assert!(next[..2].contains(&a), "WF2Q+ serves a at once: {next:?}");
}

/// Random traffic on three leaves.
#[derive(Clone, Debug)]
enum Op {
    Enqueue(usize, u32),
    Dequeue,
    Advance(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0usize..3, 40u32..=1500).prop_map(|(l, len)| Op::Enqueue(l, len)),
        3 => Just(Op::Dequeue),
        2 => (0u64..3_000_000).prop_map(Op::Advance),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// Eq. 2 computed directly: with linear curves of rate `r`, the head's deadline is
    /// `max_k ceil(a_k + (w + l − w(a_k)) · 8e9 / r)` over every backlog start `a_k` of
    /// the leaf so far, and the leaf with the earliest deadline (the first declared on a
    /// tie) is served. SCED with `rt = linear(rate)` and Virtual Clock with `rate` both
    /// follow it, packet for packet.
    #[test]
    fn linear_sced_and_virtual_clock_follow_eq_2(
        rates in proptest::collection::vec(100u64..3_000, 3),
        ops in proptest::collection::vec(op(), 0..300),
    ) {
        let classes: Vec<ClassSpec> = rates
            .iter()
            .enumerate()
            .map(|(i, &r)| {
                let r = Rate::from_kbit(r);
                leaf(&format!("l{i}"), Some(r), Some(ServiceCurve::linear(r)))
            })
            .collect();
        let t = tree(Rate::from_mbit(10), classes);
        let leaves = t.leaves().to_vec();
        let mut sced = Sced::new(&t).unwrap();
        let mut vc = Sced::virtual_clock(&t).unwrap();
        // The model: queues of lengths, bytes served, backlog starts (a_k, w(a_k)).
        let mut queue: Vec<std::collections::VecDeque<u32>> = vec![Default::default(); 3];
        let mut served = [0u64; 3];
        let mut starts: Vec<Vec<(u64, u64)>> = vec![Vec::new(); 3];
        let deadline = |i: usize, served: &[u64; 3], starts: &[Vec<(u64, u64)>], l: u32| {
            let r = u128::from(rates[i] * 1000);
            starts[i]
                .iter()
                .map(|&(a, w)| {
                    let bytes = u128::from(served[i] + u64::from(l) - w);
                    a + (bytes * 8_000_000_000).div_ceil(r) as u64
                })
                .max()
                .unwrap()
        };
        let mut now = 0u64;
        for op in ops {
            match op {
                Op::Enqueue(i, len) => {
                    if queue[i].is_empty() {
                        starts[i].push((now, served[i]));
                    }
                    queue[i].push_back(len);
                    put(&mut sced, Instant(now), leaves[i], 0, len);
                    put(&mut vc, Instant(now), leaves[i], 0, len);
                }
                Op::Dequeue => {
                    let want = (0..3)
                        .filter(|&i| !queue[i].is_empty())
                        .map(|i| (deadline(i, &served, &starts, queue[i][0]), i))
                        .min();
                    let got = sced.dequeue(Instant(now)).map(|d| d.class);
                    let got_vc = vc.dequeue(Instant(now)).map(|d| d.class);
                    prop_assert_eq!(got, want.map(|(_, i)| leaves[i]));
                    prop_assert_eq!(got_vc, got);
                    if let Some((_, i)) = want {
                        served[i] += u64::from(queue[i].pop_front().unwrap());
                    }
                }
                Op::Advance(ns) => now += ns,
            }
            for i in 0..3 {
                let want = queue[i].front().map(|&l| Instant(deadline(i, &served, &starts, l)));
                prop_assert_eq!(sced.deadline_of(leaves[i]), want);
                prop_assert_eq!(vc.deadline_of(leaves[i]), want);
            }
        }
    }
}
