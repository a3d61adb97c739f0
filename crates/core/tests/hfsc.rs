//! H-FSC on small cases computed by hand: a concave real-time curve beside a greedy
//! link-sharing class (every departure and deadline traced from Eq. 7 and Fig. 5),
//! non-punishment against SCED (the paper's Fig. 3), upper limits and `poll_at`, the
//! default curves, the system virtual time of a class that returns, the build error for
//! an `rt` curve on an interior class; and the internal invariants after every operation
//! of random runs.

mod hfsc_common;

use hfsc_common::{Arrival, Greedy, run};
use linkshare_core::curve::ServiceCurve;
use linkshare_core::hierarchy::{ClassId, ClassSpec, ClassTree};
use linkshare_core::sched::hfsc::Hfsc;
use linkshare_core::sched::{Enqueue, PollAt, Scheduler};
use linkshare_core::testing::TestPacket;
use linkshare_core::testing::tree;
use linkshare_core::units::{Bytes, Duration, Instant, Rate};
use proptest::prelude::*;

const MS: u64 = 1_000_000;

fn ms(x: u64) -> Instant {
    Instant(x * MS)
}

fn class(name: &str, parent: Option<&str>) -> ClassSpec {
    ClassSpec::new(name, parent)
}

fn with_rt(mut s: ClassSpec, rt: ServiceCurve) -> ClassSpec {
    s.rt = Some(rt);
    s
}

fn with_ls(mut s: ClassSpec, ls: ServiceCurve) -> ClassSpec {
    s.ls = Some(ls);
    s
}

fn with_ul(mut s: ClassSpec, ul: ServiceCurve) -> ClassSpec {
    s.ul = Some(ul);
    s
}

fn linear(mbit: u64) -> ServiceCurve {
    ServiceCurve::linear(Rate::from_mbit(mbit))
}

/// 2 Mbit/s for 10 ms, then 1 Mbit/s: 2500 B at the knee.
fn concave() -> ServiceCurve {
    ServiceCurve {
        m1: Rate::from_mbit(2),
        d: Duration::from_millis(10),
        m2: Rate::from_mbit(1),
    }
}

/// A leaf `voice` with only the concave `rt` curve above, seven 500 B packets at t = 0,
/// beside a greedy `bulk` class with only `ls` (1500 B packets) on 10 Mbit/s.
///
/// `D(t)` is 250 B/ms up to 10 ms (2500 B), then 125 B/ms. With `c` the real-time bytes
/// served so far, the head has `d = D^{-1}(c + 500)`: 2, 4, 6, 8, 10, 14, 18 ms, and,
/// the curve being concave, `e = D^{-1}(c)` (Eq. 11): the previous packet's deadline.
/// `voice` is sent when the link is free at or after `e` (real-time first); otherwise
/// `bulk` sends (0.4 ms per voice packet, 1.2 ms per bulk packet):
///
/// | start | packet | why |
/// |---|---|---|
/// | 0 | voice 1 | e = 0 |
/// | 0.4, 1.6 | bulk | e = 2 |
/// | 2.8 | voice 2 | e = 2 |
/// | 3.2 | bulk | e = 4 |
/// | 4.4 | voice 3 | e = 4 |
/// | 4.8 | bulk | e = 6 |
/// | 6.0 | voice 4 | e = 6 |
/// | 6.4, 7.6 | bulk | e = 8 |
/// | 8.8 | voice 5 | e = 8 |
/// | 9.2 | bulk | e = 10 |
/// | 10.4 | voice 6 | e = 10 |
/// | 10.8, 12.0, 13.2 | bulk | e = 14 |
/// | 14.4 | voice 7 | e = 14 |
#[test]
fn concave_rt_burst_leaves_by_hand_computed_deadlines() {
    let t = tree(
        Rate::from_mbit(10),
        vec![
            with_rt(class("voice", None), concave()),
            with_ls(class("bulk", None), linear(10)),
        ],
    );
    let (voice, bulk) = (t.id_of("voice").unwrap(), t.id_of("bulk").unwrap());
    let arrivals: Vec<Arrival> = (0..7)
        .map(|_| Arrival {
            at: Instant::ZERO,
            class: voice,
            len: 500,
        })
        .collect();
    let greedy = [Greedy::from(bulk, Instant::ZERO, 1500)];
    let log = run(&t, &arrivals, &greedy, ms(20), |_, _| {});
    let us = |x: u64| Instant(x * 1000);
    let starts: Vec<Instant> = log.of(voice).map(|d| d.start).collect();
    assert_eq!(
        starts,
        [0, 2800, 4400, 6000, 8800, 10_400, 14_400].map(us),
        "voice transmissions"
    );
    let deadlines: Vec<Option<Instant>> = log.of(voice).map(|d| d.deadline).collect();
    assert_eq!(deadlines, [2, 4, 6, 8, 10, 14, 18].map(|x| Some(ms(x))));
    for d in log.of(voice) {
        assert!(d.done <= d.deadline.unwrap(), "{d:?} misses its deadline");
    }
    let bulk_starts: Vec<Instant> = log.of(bulk).take(10).map(|d| d.start).collect();
    assert_eq!(
        bulk_starts,
        [
            400, 1600, 3200, 4800, 6400, 7600, 9200, 10_800, 12_000, 13_200
        ]
        .map(us)
    );
}

/// Non-punishment (the paper's Fig. 3). `a` (rt = ls = 2 Mbit/s) is alone and greedy on
/// 10 Mbit/s for one second and uses the whole link, 1000 packets of 1250 B, 1.25 MB.
/// The real-time criterion serves it one packet per 5 ms (its curve), the link-sharing
/// criterion the rest, so `c_a` = 200 packets = 250 kB. At t0 = 1 s `b` (rt = ls =
/// 8 Mbit/s) turns greedy. SCED computes deadlines from all the service `a` got: its
/// next deadline would be (1.25 MB + 1250 B) / 2 Mbit/s = 5.005 s, so `a` would get
/// nothing for four seconds. H-FSC's deadline for it is (250 kB + 1250 B) / 2 Mbit/s =
/// 1.005 s, and `a` keeps its 2 Mbit/s from t0 on: 20 packets in every 100 ms, `b` 80.
#[test]
fn excess_service_is_not_punished() {
    let t = tree(
        Rate::from_mbit(10),
        vec![
            with_ls(with_rt(class("a", None), linear(2)), linear(2)),
            with_ls(with_rt(class("b", None), linear(8)), linear(8)),
        ],
    );
    let (a, b) = (t.id_of("a").unwrap(), t.id_of("b").unwrap());
    let greedy = [
        Greedy::from(a, Instant::ZERO, 1250),
        Greedy::from(b, ms(1000), 1250),
    ];
    let mut at_t0 = None;
    let log = run(&t, &[], &greedy, ms(1300), |now, s| {
        if at_t0.is_none() && now >= ms(999) {
            at_t0 = Some((s.work(a), s.rt_work(a), s.deadline(a)));
        }
    });
    let (work, rt_work, deadline) = at_t0.unwrap();
    assert_eq!(work, Bytes(1000 * 1250), "a had the whole link before t0");
    assert_eq!(rt_work, Bytes(200 * 1250), "one real-time packet per 5 ms");
    let sced_deadline = Rate::from_mbit(2).tx_time(Bytes(1000 * 1250 + 1250));
    assert_eq!(sced_deadline, Duration::from_millis(5005));
    assert_eq!(
        deadline,
        Some(ms(1005)),
        "H-FSC's deadline ignores the excess"
    );
    for k in 0..3 {
        let from = ms(1000 + 100 * k);
        let to = ms(1100 + 100 * k);
        let (got_a, got_b) = (
            log.bytes_started(a, from, to),
            log.bytes_started(b, from, to),
        );
        assert!(
            (19 * 1250..=21 * 1250).contains(&got_a),
            "a got {got_a} B in [{from:?}, {to:?})"
        );
        assert!(
            (79 * 1250..=81 * 1250).contains(&got_b),
            "b got {got_b} B in [{from:?}, {to:?})"
        );
    }
    let first_after = log.of(a).find(|d| d.start >= ms(1000)).unwrap();
    assert!(first_after.done <= ms(1005), "{first_after:?}");
}

/// A class with `ul = 2 Mbit/s`, alone and greedy on 10 Mbit/s with 1000 B packets: it
/// fits again 4 ms after each packet starts (`U^{-1}(w)` with `w` grown by 1000 B), so
/// it sends at 0, 4, 8, ... ms, 250 packets per second, and between packets the link
/// idles with `poll_at = At(fit time)`.
#[test]
fn upper_limit_alone_gets_its_limit_and_the_link_idles() {
    let t = tree(
        Rate::from_mbit(10),
        vec![with_ul(with_ls(class("x", None), linear(10)), linear(2))],
    );
    let x = t.id_of("x").unwrap();
    let log = run(
        &t,
        &[],
        &[Greedy::from(x, Instant::ZERO, 1000)],
        ms(1000),
        |_, _| {},
    );
    let starts: Vec<Instant> = log.of(x).map(|d| d.start).collect();
    assert_eq!(starts.len(), 251, "0, 4, ..., 1000 ms");
    for (k, s) in starts.iter().enumerate() {
        assert_eq!(*s, ms(4 * k as u64));
    }
    let mut h: Hfsc<TestPacket> = Hfsc::new(&t).unwrap();
    assert!(!h.is_work_conserving());
    for id in 0..3 {
        let r = h.enqueue(
            Instant::ZERO,
            x,
            TestPacket { id, len: 1000 },
            &mut Vec::new(),
        );
        assert!(matches!(r, Enqueue::Queued));
    }
    assert!(h.dequeue(Instant::ZERO).is_some());
    assert_eq!(h.poll_at(Instant(800_000)), PollAt::At(ms(4)));
    assert!(h.dequeue(Instant(3_999_999)).is_none());
    assert_eq!(h.poll_at(ms(4)), PollAt::Now);
    assert!(h.dequeue(ms(4)).is_some());
    assert_eq!(h.poll_at(ms(5)), PollAt::At(ms(8)));
}

/// An upper limit on an interior class binds its whole subtree: `p` (ul 4 Mbit/s) with
/// two greedy leaves beside a greedy `c` on 10 Mbit/s. By default `p` and `c` would
/// share 5 / 5; the limit gives `p` 4 (2 per leaf) and `c` the other 6: the link never
/// idles, since `c` always fits.
#[test]
fn upper_limit_on_an_interior_class() {
    let t = tree(
        Rate::from_mbit(10),
        vec![
            with_ul(class("p", None), linear(4)),
            class("p1", Some("p")),
            class("p2", Some("p")),
            class("c", None),
        ],
    );
    let ids: Vec<ClassId> = ["p1", "p2", "c"]
        .iter()
        .map(|n| t.id_of(n).unwrap())
        .collect();
    let greedy: Vec<Greedy> = ids
        .iter()
        .map(|&class| Greedy::from(class, Instant::ZERO, 500))
        .collect();
    let log = run(&t, &[], &greedy, ms(2000), |_, _| {});
    let rate = |c: ClassId| log.bytes_started(c, ms(1000), ms(2000)) * 8;
    // 500 B packets: a rate is exact to within one or two packets (4000-8000 bit/s).
    for (c, want) in [
        (ids[0], 2_000_000),
        (ids[1], 2_000_000),
        (ids[2], 6_000_000),
    ] {
        let got = rate(c);
        assert!(got.abs_diff(want) <= 8000, "class {c:?}: {got} bit/s");
    }
}

/// A leaf with only an `rt` curve is served only by the real-time criterion: alone and
/// greedy it gets exactly its curve, and the link idles in between.
#[test]
fn rt_only_leaf_gets_exactly_its_curve() {
    let t = tree(
        Rate::from_mbit(10),
        vec![with_rt(class("x", None), linear(1))],
    );
    let x = t.id_of("x").unwrap();
    let log = run(
        &t,
        &[],
        &[Greedy::from(x, Instant::ZERO, 1000)],
        ms(100),
        |_, _| {},
    );
    // 1000 B at 1 Mbit/s: one packet every 8 ms.
    let starts: Vec<Instant> = log.of(x).map(|d| d.start).collect();
    assert_eq!(starts, (0..=12).map(|k| ms(8 * k)).collect::<Vec<_>>());
    let h: Hfsc<TestPacket> = Hfsc::new(&t).unwrap();
    assert!(!Scheduler::<TestPacket>::is_work_conserving(&h));
}

/// Defaults: a class with neither `rt` nor `ls` gets `ls = linear(rate)`, or its weighted
/// share of its parent's link-sharing rate.
#[test]
fn default_link_sharing_curves() {
    let mut a = class("a", None);
    a.weight = Some(1);
    let mut b = class("b", None);
    b.weight = Some(3);
    let mut b1 = class("b1", Some("b"));
    b1.weight = Some(2);
    let b2 = class("b2", Some("b"));
    let mut r = class("r", Some("b"));
    r.rate = Some(Rate::from_kbit(100));
    let rt_only = with_rt(class("rt", Some("a")), linear(1));
    let t = tree(Rate::from_mbit(10), vec![a, b, b1, b2, r, rt_only]);
    let h: Hfsc<TestPacket> = Hfsc::new(&t).unwrap();
    let ls = |n: &str| h.curves(t.id_of(n).unwrap()).unwrap().ls;
    assert_eq!(ls("a"), Some(ServiceCurve::linear(Rate(2_500_000))));
    assert_eq!(ls("b"), Some(ServiceCurve::linear(Rate(7_500_000))));
    // Weights 2, 1, 1 under b's 7.5 Mbit/s (r's weight counts though it has a rate).
    assert_eq!(ls("b1"), Some(ServiceCurve::linear(Rate(3_750_000))));
    assert_eq!(ls("b2"), Some(ServiceCurve::linear(Rate(1_875_000))));
    assert_eq!(ls("r"), Some(ServiceCurve::linear(Rate::from_kbit(100))));
    assert_eq!(
        ls("rt"),
        None,
        "a class with rt and no ls takes no part in link-sharing"
    );
}

/// Greedy classes with default curves share like weighted fair queueing: weights 1 and 3
/// on 10 Mbit/s give 2.5 and 7.5 Mbit/s.
#[test]
fn default_curves_share_by_weight() {
    let mut a = class("a", None);
    a.weight = Some(1);
    let mut b = class("b", None);
    b.weight = Some(3);
    let t = tree(Rate::from_mbit(10), vec![a, b]);
    let ids = [t.id_of("a").unwrap(), t.id_of("b").unwrap()];
    let greedy = ids.map(|class| Greedy::from(class, Instant::ZERO, 1000));
    let log = run(&t, &[], &greedy, ms(1000), |_, _| {});
    let got = ids.map(|c| log.bytes_started(c, Instant::ZERO, ms(1000)) * 8);
    assert!(got[0].abs_diff(2_500_000) <= 8000, "{got:?}");
    assert!(got[1].abs_diff(7_500_000) <= 8000, "{got:?}");
}

/// The system virtual time of a class that returns. `a` and `b` (equal curves) are
/// greedy; `b` pauses from 100 ms to 500 ms. On its return `b` joins at
/// `(v_min + v_max) / 2`, which is `a`'s virtual time: it neither catches up on the
/// 400 ms it missed nor waits, and the two alternate at once. `b` stops again at 600 ms,
/// `a` at 800 ms, so `a` leaves with a virtual time 400 ms (of virtual time) ahead of
/// `b`'s. At 2 s `b` returns first: it anchors at the largest virtual time any child had
/// when it left (`a`'s), `a` joins at the same point, and the new period starts level:
/// they alternate from the first packet. (Were `b` anchored lower, at its own old
/// virtual time, `a` would keep its lead and wait while `b` took the link for 0.2 s.)
#[test]
fn returning_classes_start_level() {
    let t = tree(
        Rate::from_mbit(10),
        vec![
            with_ls(class("a", None), linear(5)),
            with_ls(class("b", None), linear(5)),
        ],
    );
    let (a, b) = (t.id_of("a").unwrap(), t.id_of("b").unwrap());
    let during = |class, from: u64, until: u64| Greedy {
        class,
        from: ms(from),
        until: ms(until),
        len: 1000,
    };
    let greedy = [
        during(a, 0, 800),
        during(b, 0, 100),
        during(b, 500, 600),
        during(b, 2000, 2100),
        during(a, 2000, 2100),
    ];
    let log = run(&t, &[], &greedy, ms(3000), |_, _| {});
    assert_eq!(
        log.bytes_started(a, ms(900), ms(2000)) + log.bytes_started(b, ms(900), ms(2000)),
        0,
        "both idle before 2 s"
    );
    for from in [ms(500), ms(2000)] {
        let order: Vec<ClassId> = log
            .departures
            .iter()
            .filter(|d| d.start >= from)
            .take(20)
            .map(|d| d.class)
            .collect();
        assert!(
            order[..2].contains(&a) && order[..2].contains(&b),
            "{order:?}"
        );
        let a_count = order.iter().filter(|&&c| c == a).count();
        assert!((9..=11).contains(&a_count), "from {from:?}: {order:?}");
    }
}

/// Eq. 12's anchor within an active period: a class that becomes active for the first
/// time while siblings are active gets `v = vs_p = (v_min + v_max) / 2` of their virtual
/// times at that moment. `a` (1 Mbit/s) and `b` (4 Mbit/s) are served a few packets, so
/// their virtual times differ; then `c` arrives.
#[test]
fn a_newcomer_joins_at_the_midpoint_of_its_siblings() {
    let t = tree(
        Rate::from_mbit(10),
        vec![
            with_ls(class("a", None), linear(1)),
            with_ls(class("b", None), linear(4)),
            with_ls(class("c", None), linear(2)),
        ],
    );
    let (a, b, c) = (
        t.id_of("a").unwrap(),
        t.id_of("b").unwrap(),
        t.id_of("c").unwrap(),
    );
    let mut h: Hfsc<TestPacket> = Hfsc::new(&t).unwrap();
    for id in 0..10 {
        for class in [a, b] {
            let r = h.enqueue(
                Instant::ZERO,
                class,
                TestPacket { id, len: 1000 },
                &mut Vec::new(),
            );
            assert!(matches!(r, Enqueue::Queued));
        }
    }
    for k in 0..5 {
        assert!(h.dequeue(Instant(k * 800_000)).is_some());
    }
    // 1000 B is 8 ms of virtual time at 1 Mbit/s and 2 ms at 4 Mbit/s: five packets go
    // to the smallest virtual time, a: 0 -> 8, b: 0 -> 2 -> 4 -> 6 -> 8 (ties to a).
    let (va, vb) = (h.virtual_time(a).unwrap(), h.virtual_time(b).unwrap());
    assert_eq!((va, vb), (8 * MS, 8 * MS));
    assert!(h.dequeue(ms(4)).is_some());
    let (va, vb) = (h.virtual_time(a).unwrap(), h.virtual_time(b).unwrap());
    assert_eq!((va, vb), (16 * MS, 8 * MS), "a (smaller id) won the tie");
    let r = h.enqueue(ms(5), c, TestPacket { id: 99, len: 1000 }, &mut Vec::new());
    assert!(matches!(r, Enqueue::Queued));
    assert_eq!(h.virtual_time(c), Some(12 * MS));
    h.check_invariants().unwrap();
}

/// Eq. 7 for a convex curve, by hand. `x` has only `rt = (m1 0, d 20 ms, m2 1 Mbit/s)`
/// (125 B per ms after the first 20 ms) and two 125 B packets at t = 0. Its eligible
/// curve is the line of slope m2 from the anchor (Eq. 11), so it sends them at 0 and
/// 1 ms (`c = 250` B) and goes idle; its deadline curve is still flat then.
///
/// * Returning at 5 ms with one packet: `D = min(S(t), 250 + S(t - 5 ms))` reaches
///   375 B when both do: `S(t) >= 375` at 23 ms, `S(t - 5 ms) >= 125` at 26 ms, so the
///   deadline is 26 ms, and the new eligible line from (5 ms, 250 B) makes it eligible at
///   once. (Fig. 9 would keep the old curve, which is below 250 B at 5 ms, and give
///   23 ms: 3 ms of demand that admission control never counted.)
/// * Returning at 1.5 ms instead: the same two candidates give 23 ms and 22.5 ms, so the
///   old curve still decides (23 ms), and it is eligible when its old line reaches
///   250 B, at 2 ms.
#[test]
fn convex_deadline_curve_on_return_follows_eq_7() {
    let convex = ServiceCurve {
        m1: Rate::ZERO,
        d: Duration::from_millis(20),
        m2: Rate::from_mbit(1),
    };
    let t = tree(Rate::from_mbit(10), vec![with_rt(class("x", None), convex)]);
    let x = t.id_of("x").unwrap();
    let put = |h: &mut Hfsc<TestPacket>, at: Instant, id: u64| {
        let r = h.enqueue(at, x, TestPacket { id, len: 125 }, &mut Vec::new());
        assert!(matches!(r, Enqueue::Queued));
    };
    for (back_at, deadline, eligible) in [
        (Instant(5 * MS), ms(26), Instant(5 * MS)),
        (Instant(1_500_000), ms(23), ms(2)),
    ] {
        let mut h: Hfsc<TestPacket> = Hfsc::new(&t).unwrap();
        put(&mut h, Instant::ZERO, 0);
        put(&mut h, Instant::ZERO, 1);
        assert_eq!(h.deadline(x), Some(ms(21)));
        assert!(h.dequeue(Instant::ZERO).is_some());
        assert_eq!(h.poll_at(Instant::ZERO), PollAt::At(ms(1)));
        assert!(h.dequeue(ms(1)).is_some());
        assert_eq!(h.rt_work(x), Bytes(250));
        put(&mut h, back_at, 2);
        assert_eq!(h.deadline(x), Some(deadline), "back at {back_at:?}");
        assert_eq!(h.eligible_time(x), Some(eligible), "back at {back_at:?}");
    }
}

/// An `rt` curve on a class with children is refused with an explanation.
#[test]
fn rt_on_an_interior_class_is_refused() {
    let t = tree(
        Rate::from_mbit(10),
        vec![
            with_rt(class("p", None), linear(1)),
            class("p1", Some("p")),
            class("p2", Some("p")),
        ],
    );
    let err = Hfsc::<TestPacket>::new(&t).unwrap_err().to_string();
    assert!(err.starts_with("scheduler `hfsc`: "), "{err}");
    for needle in [
        "class `p`",
        "children (p1, p2)",
        "leaves only",
        "move the `rt` curve to one of its leaves",
        "`ls` curve",
    ] {
        assert!(err.contains(needle), "missing {needle:?} in: {err}");
    }
}

/// A convex `rt` curve with a sloped first segment is refused: its deadline curve would
/// not stay two-piece.
#[test]
fn sloped_convex_rt_curve_is_refused() {
    let sloped = ServiceCurve {
        m1: Rate::from_kbit(500),
        d: Duration::from_millis(20),
        m2: Rate::from_mbit(1),
    };
    let t = tree(Rate::from_mbit(10), vec![with_rt(class("x", None), sloped)]);
    let err = Hfsc::<TestPacket>::new(&t).unwrap_err().to_string();
    for needle in ["class `x`", "convex", "m1 = 0", "concave or linear"] {
        assert!(err.contains(needle), "missing {needle:?} in: {err}");
    }
    // The same curve is fine as a link-sharing or upper-limit curve.
    let t = tree(
        Rate::from_mbit(10),
        vec![with_ul(with_ls(class("x", None), sloped), sloped)],
    );
    assert!(Hfsc::<TestPacket>::new(&t).is_ok());
}

/// A parent keeps its children ordered by largest virtual time (for `v_max`) only while
/// it has more than a few active children (module `linkshare`): bursts over 40 leaves of
/// different rates under one parent take the number of active children above and below
/// that several times, with the child holding `v_max` leaving now and then; the
/// invariants, `v_max` included, hold after every operation.
#[test]
fn wide_sets_start_and_stop_ordering_children_by_virtual_time() {
    let specs = (0..40u64)
        .map(|i| with_ls(class(&format!("c{i}"), None), linear(1 + i % 7)))
        .collect();
    let t = tree(Rate::from_mbit(100), specs);
    let leaves = t.leaves().to_vec();
    let mut h: Hfsc<TestPacket> = Hfsc::new(&t).unwrap();
    let mut x = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move || {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        x >> 33
    };
    let (mut queued, mut id) = (0u32, 0u64);
    for round in 0..40 {
        // Fill: mostly arrivals; drain: mostly departures, down to a few packets.
        let (arrive, until) = if round % 2 == 0 { (75, 60) } else { (20, 3) };
        while if round % 2 == 0 {
            queued < until
        } else {
            queued > until
        } {
            if next() % 100 < arrive {
                let leaf = leaves[next() as usize % leaves.len()];
                let len = 40 + (next() % 1461) as u32;
                let r = h.enqueue(Instant::ZERO, leaf, TestPacket { id, len }, &mut Vec::new());
                assert!(matches!(r, Enqueue::Queued));
                (queued, id) = (queued + 1, id + 1);
            } else if h.dequeue(Instant::ZERO).is_some() {
                queued -= 1;
            }
            h.check_invariants()
                .unwrap_or_else(|e| panic!("round {round}, {id} arrivals: {e}"));
        }
    }
}

/// One step of a random run.
#[derive(Clone, Copy, Debug)]
enum Step {
    Enqueue { leaf: usize, len: u32 },
    Dequeue,
    RemoveNewest { leaf: usize },
    Advance(u64),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        5 => (0usize..16, 40u32..=1500).prop_map(|(leaf, len)| Step::Enqueue { leaf, len }),
        4 => Just(Step::Dequeue),
        1 => (0usize..16).prop_map(|leaf| Step::RemoveNewest { leaf }),
        2 => (0u64..4_000_000).prop_map(Step::Advance),
    ]
}

/// A random tree: up to 8 classes at most 3 deep, each with some of rt (leaves), ls, ul
/// drawn from linear, concave and convex curves.
fn random_tree() -> impl Strategy<Value = ClassTree> {
    let curve = prop_oneof![
        (1u64..5000).prop_map(|k| ServiceCurve::linear(Rate::from_kbit(k))),
        (1u64..5000, 1u64..5000, 1u64..30).prop_map(|(a, b, d)| ServiceCurve {
            m1: Rate::from_kbit(a.max(b)),
            d: Duration::from_millis(d),
            m2: Rate::from_kbit(a.min(b)),
        }),
        (0u64..5000, 1u64..5000, 1u64..30).prop_map(|(a, b, d)| ServiceCurve {
            m1: Rate::from_kbit(a.min(b)),
            d: Duration::from_millis(d),
            m2: Rate::from_kbit(a.max(b)),
        }),
    ];
    let class = (
        any::<prop::sample::Index>(),
        prop::option::of(curve.clone()),
        prop::option::of(curve.clone()),
        prop::option::weighted(0.3, curve),
    );
    prop::collection::vec(class, 1..8).prop_map(|gens| {
        let n = gens.len();
        let mut parent: Vec<Option<usize>> = vec![None; n];
        let mut depth = vec![1u32; n];
        for i in 1..n {
            let pick = gens[i].0.index(i + 1);
            if pick < i && depth[pick] < 3 {
                parent[i] = Some(pick);
                depth[i] = depth[pick] + 1;
            }
        }
        let specs = (0..n)
            .map(|i| {
                let mut s = ClassSpec::new(
                    &format!("c{i}"),
                    parent[i].map(|p| format!("c{p}")).as_deref(),
                );
                let is_leaf = !parent.contains(&Some(i));
                s.rt = gens[i].1.filter(|_| is_leaf).map(|c| {
                    if c.m1 < c.m2 {
                        ServiceCurve {
                            m1: Rate::ZERO,
                            ..c
                        }
                    } else {
                        c
                    }
                });
                s.ls = gens[i].2;
                s.ul = gens[i].3;
                s
            })
            .collect();
        tree(Rate::from_mbit(10), specs)
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// After every operation of a random run the scheduler's internal invariants hold
    /// (`Hfsc::check_invariants`), and `poll_at` agrees with what `dequeue` does.
    #[test]
    fn invariants_hold_after_every_operation(t in random_tree(), steps in prop::collection::vec(step(), 0..200)) {
        let mut h: Hfsc<TestPacket> = Hfsc::new(&t).unwrap();
        let leaves = t.leaves().to_vec();
        let mut now = Instant::ZERO;
        for (i, s) in steps.into_iter().enumerate() {
            match s {
                Step::Enqueue { leaf, len } => {
                    let c = leaves[leaf % leaves.len()];
                    let r = h.enqueue(now, c, TestPacket { id: i as u64, len }, &mut Vec::new());
                    prop_assert!(matches!(r, Enqueue::Queued));
                }
                Step::Dequeue => {
                    let promised = h.poll_at(now);
                    let got = h.dequeue(now);
                    prop_assert_eq!(got.is_some(), promised == PollAt::Now, "poll_at said {:?}", promised);
                }
                Step::RemoveNewest { leaf } => {
                    let _dropped = h.remove_newest(leaves[leaf % leaves.len()]);
                }
                Step::Advance(ns) => now = now.saturating_add(Duration(ns)),
            }
            if let Err(e) = h.check_invariants() {
                return Err(TestCaseError::fail(format!("after step {i} ({s:?}): {e}")));
            }
        }
    }
}
