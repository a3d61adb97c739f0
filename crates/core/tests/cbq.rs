//! CBQ against hand-derived expectations: the estimator's fixed-point arithmetic, the
//! top-level cutoff (moved by arrivals the buffer policy refuses too), strict priority
//! among unregulated classes, rates of bounded and borrowing classes on a link driven
//! through `EgressPort`, and the HLS paper's §VIII-C observation that CBQ's split follows
//! the leaves' guarantees rather than their parents'. A property test runs shaping-heavy
//! trees through the conformance harness.

use linkshare_core::buffer::BufferConfig;
use linkshare_core::hierarchy::{ClassId, ClassSpec, ClassTree, Limit};
use linkshare_core::port::{EgressPort, Transmit};
use linkshare_core::sched::cbq::{Cbq, CbqParams, CbqSharing};
use linkshare_core::sched::{DropReason, Enqueue, PollAt, Scheduler};
use linkshare_core::stats::Qdisc;
use linkshare_core::testing::tree;
use linkshare_core::testing::{Op, TestPacket, check};
use linkshare_core::units::{Bytes, Duration, Instant, Rate};
use proptest::prelude::*;

const T0: Instant = Instant::ZERO;
const MS: u64 = 1_000_000;

/// A class with an allotted rate in Mbit/s and 1000-byte average packets.
fn class(name: &str, parent: Option<&str>, mbit: u64) -> ClassSpec {
    let mut s = ClassSpec::new(name, parent);
    s.rate = Some(Rate::from_mbit(mbit));
    s.max_packet = Some(Bytes(1000));
    s
}

fn bounded(mut s: ClassSpec) -> ClassSpec {
    s.ceil = s.rate;
    s
}

fn prio(mut s: ClassSpec, p: u8) -> ClassSpec {
    s.priority = Some(p);
    s
}

fn put(s: &mut Cbq<TestPacket>, now: Instant, class: ClassId, id: u64) {
    let r = s.enqueue(now, class, TestPacket { id, len: 1000 }, &mut Vec::new());
    assert!(matches!(r, Enqueue::Queued), "packet {id} refused: {r:?}");
}

/// Runs `greedy` leaves through an `EgressPort` at the tree's link rate. Each greedy
/// leaf is offered one packet of `len` bytes per transmission time at line rate (every
/// source alone could fill the link; queues are unbounded, so every arrival reaches the
/// scheduler, as arrivals do in Linux whether or not they are then dropped). Events at
/// the same instant: arrivals first. Returns the bytes each class started sending in
/// `[warm_up, warm_up + measure)`.
fn run_greedy(
    tree: &ClassTree,
    greedy: &[&str],
    len: u32,
    warm_up: Duration,
    measure: Duration,
) -> Vec<u64> {
    run_greedy_with(CbqSharing::TopLevel, tree, greedy, len, warm_up, measure)
}

/// [`run_greedy`] under the link-sharing guideline `sharing`.
fn run_greedy_with(
    sharing: CbqSharing,
    tree: &ClassTree,
    greedy: &[&str],
    len: u32,
    warm_up: Duration,
    measure: Duration,
) -> Vec<u64> {
    let ids: Vec<ClassId> = greedy.iter().map(|n| tree.id_of(n).unwrap()).collect();
    let period = tree.link_rate().tx_time(Bytes(u64::from(len)));
    let cbq = Cbq::<TestPacket>::with_params(tree, CbqParams { sharing });
    let mut port = EgressPort::simple(tree, cbq);
    let from = T0 + warm_up;
    let until = from + measure;
    let mut bytes = vec![0u64; tree.len()];
    let (mut next_arrival, mut next_tx, mut id) = (T0, T0, 0);
    loop {
        if next_arrival <= next_tx {
            let now = next_arrival;
            for &c in &ids {
                id += 1;
                let pkt = TestPacket { id, len };
                assert!(port.enqueue(now, c, pkt, |d| panic!("drop {d:?}")));
            }
            next_arrival = now + period;
            next_tx = next_tx.min(now);
            continue;
        }
        let now = next_tx;
        if now >= until {
            return bytes;
        }
        next_tx = match port.transmit(now) {
            Transmit::Started { pkt, done_at } => {
                if now >= from {
                    bytes[pkt.class.index()] += u64::from(pkt.pkt.len);
                }
                done_at
            }
            Transmit::Busy(t) | Transmit::Wait(t) => t,
            Transmit::Idle => next_arrival,
        };
    }
}

/// Runs `leaves` through an `EgressPort` at the tree's link rate with sources that
/// keep `backlog` packets of `len` bytes queued and offer a new one whenever one of
/// theirs starts transmission (the simulator's greedy source): arrivals only follow
/// the leaf's own departures. Returns the bytes each class started sending in
/// `[warm_up, warm_up + measure)`.
fn run_refilling(
    tree: &ClassTree,
    leaves: &[&str],
    backlog: u32,
    len: u32,
    warm_up: Duration,
    measure: Duration,
) -> Vec<u64> {
    let mut port = EgressPort::simple(tree, Cbq::<TestPacket>::new(tree));
    let from = T0 + warm_up;
    let until = from + measure;
    let mut bytes = vec![0u64; tree.len()];
    let mut id = 0;
    let mut offer = |port: &mut EgressPort<TestPacket, Cbq<TestPacket>>, now, class| {
        id += 1;
        let pkt = TestPacket { id, len };
        assert!(port.enqueue(now, class, pkt, |d| panic!("drop {d:?}")));
    };
    for name in leaves {
        for _ in 0..backlog {
            offer(&mut port, T0, tree.id_of(name).unwrap());
        }
    }
    let mut now = T0;
    while now < until {
        now = match port.transmit(now) {
            Transmit::Started { pkt, done_at } => {
                if now >= from {
                    bytes[pkt.class.index()] += u64::from(pkt.pkt.len);
                }
                offer(&mut port, now, pkt.class);
                done_at
            }
            Transmit::Busy(t) | Transmit::Wait(t) => t,
            Transmit::Idle => unreachable!("the sources keep every leaf backlogged"),
        };
    }
    bytes
}

/// Rate in Mbit/s of `bytes` sent in `d`.
fn mbit(bytes: u64, d: Duration) -> f64 {
    bytes as f64 * 8.0 / d.as_secs_f64() / 1e6
}

fn assert_near(what: &str, got: f64, want: f64, rel: f64) {
    assert!(
        (got - want).abs() <= rel * want,
        "{what}: {got:.3}, expected {want:.3} within {:.0}%",
        rel * 100.0
    );
}

/// Link 8 Mbit/s (1000 B in 1 ms), leaf allotted 2 Mbit/s (1000 B in 4 ms), bounded,
/// avpkt 1000 B, no burst: maxidle = one avpkt at line rate = 1 ms, scaled 1 000 000.
/// The root (link rate, avpkt 1500 B) has maxidle 1 500 000. By hand, W = 1/32:
///
/// * t = 0: first packet, rested: avgidle = maxidle = 1 000 000, underlimit.
/// * t = 1 ms (link free): idle = (2 - 1) - 4 = -3 ms;
///   avgidle = 1 000 000 - 3 000 000 - (1 000 000 >> 5 = 31 250) = -2 031 250;
///   undertime = start 1 ms + 4 ms + (2 031 250 - (2 031 250 >> 5 = 63 476))
///   = 6 967 774 ns. Root: idle = (2 - 1) - 1 = 0, avgidle = 1 500 000 - 46 875.
/// * t = 2 ms: the leaf is overlimit and bounded: the overlimit action forgives the
///   (1 - W)(-avgidle) term, undertime = 5 ms, and `poll_at` says so.
/// * t = 5 ms: idle = (6 - 2) - 4 = 0; avgidle = -2 031 250 - (-2 031 250 >> 5 =
///   -63 477) = -1 967 773; undertime = 5 + 4 ms + (1 967 773 - 61 492) = 10 906 281.
#[test]
fn estimator_follows_the_fixed_point_arithmetic() {
    let t = tree(Rate::from_mbit(8), vec![bounded(class("a", None, 2))]);
    let a = t.id_of("a").unwrap();
    let mut s = Cbq::new(&t);
    assert!(!s.is_work_conserving());
    for id in 0..4 {
        put(&mut s, T0, a, id);
    }
    let state = |s: &Cbq<TestPacket>, c: ClassId| s.class_state(c).unwrap();
    assert_eq!(state(&s, a).maxidle, 1_000_000);
    assert_eq!(state(&s, ClassId::ROOT).maxidle, 1_500_000);

    assert_eq!(s.dequeue(T0).map(|d| d.pkt.id), Some(0));
    assert_eq!(state(&s, a).avgidle, 1_000_000);
    assert_eq!(state(&s, a).undertime, None);

    assert_eq!(s.dequeue(Instant(MS)).map(|d| d.pkt.id), Some(1));
    assert_eq!(state(&s, a).avgidle, -2_031_250);
    assert_eq!(state(&s, a).undertime, Some(Instant(6_967_774)));
    assert_eq!(state(&s, ClassId::ROOT).avgidle, 1_500_000 - 46_875);
    assert_eq!(state(&s, ClassId::ROOT).undertime, None);

    assert_eq!(s.poll_at(Instant(2 * MS)), PollAt::At(Instant(5 * MS)));
    assert!(s.dequeue(Instant(2 * MS)).is_none());
    assert_eq!(state(&s, a).undertime, Some(Instant(5 * MS)));
    assert_eq!(s.poll_at(Instant(5 * MS - 1)), PollAt::At(Instant(5 * MS)));
    assert_eq!(s.poll_at(Instant(5 * MS)), PollAt::Now);

    assert_eq!(s.dequeue(Instant(5 * MS)).map(|d| d.pkt.id), Some(2));
    assert_eq!(state(&s, a).avgidle, -1_967_773);
    assert_eq!(state(&s, a).undertime, Some(Instant(10_906_281)));
}

/// A bounded class on a faster link gets its allotted rate: once overlimit, the
/// overlimit action releases it one packet per `len / rate` (here 1000 B at 3 Mbit/s =
/// 2.667 ms), and the link idles in between.
#[test]
fn bounded_class_gets_its_rate() {
    let t = tree(
        Rate::from_mbit(10),
        vec![bounded(class("a", None, 3)), class("b", None, 7)],
    );
    let measure = Duration::from_secs(4);
    let bytes = run_greedy(&t, &["a"], 1000, Duration::from_secs(1), measure);
    assert_near("a (Mbit/s)", mbit(bytes[1], measure), 3.0, 0.01);
    assert_eq!(bytes[2], 0);
}

/// Two greedy leaves allotted 3 and 7 Mbit/s on 10 Mbit/s, free to borrow: each is
/// served at its allotted rate (the WRR quanta are 600 and 1400 bytes, in the same
/// ratio), 3:7.
#[test]
fn greedy_leaves_share_by_their_rates() {
    let t = tree(
        Rate::from_mbit(10),
        vec![class("a", None, 3), class("b", None, 7)],
    );
    let measure = Duration::from_secs(4);
    let bytes = run_greedy(&t, &["a", "b"], 1000, Duration::from_secs(1), measure);
    assert_near("a (Mbit/s)", mbit(bytes[1], measure), 3.0, 0.01);
    assert_near("b (Mbit/s)", mbit(bytes[2], measure), 7.0, 0.01);
}

/// With the 7 Mbit/s leaf idle, the 3 Mbit/s leaf borrows the rest of the link from
/// the root.
#[test]
fn an_idle_class_leaves_the_link_to_the_other() {
    let t = tree(
        Rate::from_mbit(10),
        vec![class("a", None, 3), class("b", None, 7)],
    );
    let measure = Duration::from_secs(4);
    let bytes = run_greedy(&t, &["a"], 1000, Duration::from_secs(1), measure);
    assert_near("a (Mbit/s)", mbit(bytes[1], measure), 10.0, 0.01);
}

/// The top-level cutoff: `a` has been borrowing from the root and is overlimit; an
/// arrival to the rested leaf `b` lowers the cutoff to level 0, so `b` sends before
/// `a` although `a` has the round-robin turn. With nothing else able to send, the cutoff
/// is lifted and `a` borrows again.
#[test]
fn an_underlimit_arrival_cuts_off_borrowing() {
    let t = tree(
        Rate::from_mbit(10),
        vec![class("a", None, 5), class("b", None, 5)],
    );
    let (a, b) = (t.id_of("a").unwrap(), t.id_of("b").unwrap());
    let mut s = Cbq::new(&t);
    assert!(s.is_work_conserving());
    assert_eq!(s.toplevel(), None);
    // a alone, back to back at 10 Mbit/s (0.8 ms per packet): overlimit from its second
    // packet on (idle = 0.8 - 1.6 ms < 0 from maxidle = 0.8 ms scaled).
    for id in 0..10 {
        put(&mut s, T0, a, id);
    }
    let mut now = T0;
    for id in 0..4 {
        assert_eq!(s.dequeue(now).map(|d| d.pkt.id), Some(id));
        now += Duration(800_000);
    }
    assert!(s.class_state(a).unwrap().undertime.is_some_and(|u| u > now));
    assert_eq!(s.toplevel(), Some(1), "a borrows from the root, at level 1");
    put(&mut s, now, b, 100);
    assert_eq!(s.toplevel(), Some(0));
    assert_eq!(s.dequeue(now).map(|d| (d.class, d.pkt.id)), Some((b, 100)));
    now += Duration(800_000);
    assert_eq!(s.dequeue(now).map(|d| (d.class, d.pkt.id)), Some((a, 4)));
    assert_eq!(
        s.toplevel(),
        None,
        "lifted; a's rule is due at the next dequeue"
    );
    now += Duration(800_000);
    assert_eq!(s.dequeue(now).map(|d| (d.class, d.pkt.id)), Some((a, 5)));
    assert_eq!(
        s.toplevel(),
        Some(1),
        "a borrowed from the root, 5 packets queued"
    );
}

/// The cutoff rule that follows a transmission (`cbq_update_toplevel`) runs at the next
/// dequeue and counts the leaf's queue then, arrivals included, as in Linux (which runs
/// it from `cbq_update` at the start of `cbq_dequeue`). Leaf `a`, allotted 5 of
/// 10 Mbit/s (1000 B: 0.8 ms at line rate, 1.6 ms at its rate; maxidle 0.8 ms, scaled
/// 800 000), keeps two packets queued, one arriving as each leaves. By hand:
/// * t = 0: the first arrival drops the cutoff to 0 (`a` is underlimit); `a` sends,
///   rested (average = maxidle).
/// * t = 0.8 ms: the rule for the first packet: cutoff 0 >= level 0, two packets
///   queued, `a` underlimit: the cutoff stays 0. `a` sends: idle = 0.8 - 1.6 ms,
///   average = 800 000 - 800 000 - (800 000 >> 5) = -25 000: overlimit until
///   0.8 + 1.6 ms + (25 000 - (25 000 >> 5)) ns = 2 424 219 ns.
/// * t = 1.6 ms: the rule for the second packet: `a` is overlimit, the next class of
///   its chain, the root, is underlimit: the cutoff rises to the root's level, 1, and
///   `a` borrows from the root under it: idle = -0.8 ms again, so the average is
///   -25 000 - 800 000 - (-25 000 >> 5 = -782) = -824 218 and the undertime
///   1.6 + 1.6 ms + (824 218 - (824 218 >> 5)) ns = 3 998 462 ns.
///
/// Counted right after each dequeue (one packet left) the rule would never fire: the
/// cutoff would stay 0, then be lifted at 1.6 ms for want of any leaf able to send.
#[test]
fn the_cutoff_rule_counts_the_queue_at_the_next_dequeue() {
    let t = tree(Rate::from_mbit(10), vec![class("a", None, 5)]);
    let a = t.id_of("a").unwrap();
    let mut s = Cbq::new(&t);
    put(&mut s, T0, a, 0);
    put(&mut s, T0, a, 1);
    assert_eq!(s.toplevel(), Some(0));
    let mut now = T0;
    let expected = [
        (0, None),
        (0, Some(Instant(2_424_219))),
        (1, Some(Instant(3_998_462))),
    ];
    for (id, (cutoff, undertime)) in (0..).zip(expected) {
        assert_eq!(s.dequeue(now).map(|d| d.pkt.id), Some(id));
        assert_eq!(s.toplevel(), Some(cutoff), "after packet {id}");
        assert_eq!(s.class_state(a).unwrap().undertime, undertime, "{id}");
        put(&mut s, now, a, id + 2);
        now += Duration(800_000);
    }
}

/// What the buffer policy does with `b`'s arrival in
/// `a_refused_arrival_cuts_off_borrowing_like_an_admitted_one`.
#[derive(Clone, Copy, Debug)]
enum Fate {
    /// `b`'s queue has room (limit 2 packets).
    Admitted,
    /// `b`'s own limit (1 packet) is reached.
    ClassLimit,
    /// The shared buffer (8 packets) is full.
    SharedLimit,
    /// The arrival is longer than `b`'s 1000-byte maximum packet.
    TooLarge,
}

/// A refused arrival moves the cutoff as an admitted one does (Linux's `cbq_enqueue`
/// calls `cbq_mark_toplevel` for a packet its class's queue drops), and only refusals
/// by a buffer limit count: a packet too large for its class is no arrival to it.
/// Leaves `a` and `b` allotted 5 of 10 Mbit/s (1000 B: 0.8 ms at line rate), quanta
/// 20 000 B for `a` (it keeps the turn for 20 packets) and 1000 B for `b`. At t = 0, 7
/// packets to `a`, then 1 to `b`; `a` has the turn. By hand (the numbers of
/// `the_cutoff_rule_counts_the_queue_at_the_next_dequeue`):
/// * `a` sends at 0 (rested) and 0.8 ms (overlimit after it, until 2 424 219 ns); at
///   1.6 ms the rule for its second packet raises the cutoff to the root's level, 1, and
///   `a` borrows from the root (overlimit until 3 998 462 ns).
/// * At 2.4 ms 3 more packets to `a` (overlimit; the root is not below the cutoff:
///   nothing moves), which fills a shared buffer of 8 packets; then one to `b`, still
///   rested and underlimit at level 0. Admitted or refused by a limit, it drops the
///   cutoff to 0: at the next dequeue `a` may not borrow and `b` sends although `a` has
///   the turn. Refused as too large, it leaves the cutoff at 1 and `a` sends.
#[test]
fn a_refused_arrival_cuts_off_borrowing_like_an_admitted_one() {
    for fate in [
        Fate::Admitted,
        Fate::ClassLimit,
        Fate::SharedLimit,
        Fate::TooLarge,
    ] {
        let mut a = class("a", None, 5);
        a.quantum = Some(Bytes(20_000));
        let mut b = class("b", None, 5);
        b.quantum = Some(Bytes(1000));
        b.limit = Some(Limit::Packets(match fate {
            Fate::ClassLimit => 1,
            _ => 2,
        }));
        let t = tree(Rate::from_mbit(10), vec![a, b]);
        let (a, b) = (t.id_of("a").unwrap(), t.id_of("b").unwrap());
        let buffer = BufferConfig {
            shared: matches!(fate, Fate::SharedLimit).then_some(Limit::Packets(8)),
            ..BufferConfig::default()
        };
        let mut q = Qdisc::new(&t, Cbq::new(&t), buffer);
        let offer = |q: &mut Qdisc<TestPacket, Cbq<TestPacket>>, now, class, id, len| {
            let mut refused = None;
            let queued = q.enqueue(now, class, TestPacket { id, len }, |d| {
                refused = Some(d.reason);
            });
            assert_eq!(queued, refused.is_none(), "{fate:?}: packet {id}");
            refused
        };
        for id in 0..7 {
            assert_eq!(offer(&mut q, T0, a, id, 1000), None);
        }
        assert_eq!(offer(&mut q, T0, b, 100, 1000), None);
        let mut now = T0;
        for id in 0..3 {
            assert_eq!(q.dequeue(now).map(|d| d.pkt.id), Some(id), "{fate:?}");
            now += Duration(800_000);
        }
        let cbq = |q: &Qdisc<TestPacket, Cbq<TestPacket>>| q.scheduler().toplevel();
        assert_eq!(cbq(&q), Some(1), "{fate:?}: a borrows from the root");
        assert_eq!(
            q.scheduler().class_state(a).unwrap().undertime,
            Some(Instant(3_998_462))
        );
        for id in 7..10 {
            assert_eq!(offer(&mut q, now, a, id, 1000), None);
        }
        assert_eq!(cbq(&q), Some(1), "{fate:?}: a is overlimit");
        let (len, want) = match fate {
            Fate::Admitted => (1000, None),
            Fate::ClassLimit => (1000, Some(DropReason::ClassLimit)),
            Fate::SharedLimit => (1000, Some(DropReason::SharedLimit)),
            Fate::TooLarge => (1500, Some(DropReason::TooLarge)),
        };
        assert_eq!(offer(&mut q, now, b, 101, len), want, "{fate:?}");
        let (cutoff, next) = match fate {
            Fate::TooLarge => (Some(1), (a, 3)),
            _ => (Some(0), (b, 100)),
        };
        assert_eq!(cbq(&q), cutoff, "{fate:?}");
        let sent = q.dequeue(now).map(|d| (d.class, d.pkt.id));
        assert_eq!(sent, Some(next), "{fate:?}");
        assert_eq!(q.check_conservation(), Ok(()));
    }
}

/// Priority bands are strict among classes that may send: with both leaves underlimit
/// (the high-priority one with a burst allowance of 20 packets), the high band drains
/// first whatever the arrival order.
#[test]
fn priority_is_strict_among_unregulated_classes() {
    let mut h = prio(class("h", None, 5), 0);
    h.burst = Some(Bytes(20_000));
    let t = tree(Rate::from_mbit(10), vec![h, prio(class("l", None, 5), 1)]);
    let (h, l) = (t.id_of("h").unwrap(), t.id_of("l").unwrap());
    let mut s = Cbq::new(&t);
    for id in 0..3 {
        put(&mut s, T0, l, id);
    }
    for id in 10..13 {
        put(&mut s, T0, h, id);
    }
    let mut now = T0;
    let mut order = Vec::new();
    while let Some(d) = s.dequeue(now) {
        order.push((d.class, d.pkt.id));
        now += Duration(800_000);
    }
    assert_eq!(order, [(h, 10), (h, 11), (h, 12), (l, 0), (l, 1), (l, 2)]);
}

/// Priority only orders classes that may send: a regulated high-priority class does not
/// starve a lower one. Both greedy, allotted 2 Mbit/s each on 10 Mbit/s: the low class
/// is served whenever it is underlimit (its arrivals cut borrowing off), so it gets its
/// 2 Mbit/s; the excess, borrowed from the root, goes to the high band: 8 Mbit/s.
#[test]
fn the_excess_goes_to_the_higher_priority() {
    let t = tree(
        Rate::from_mbit(10),
        vec![prio(class("h", None, 2), 0), prio(class("l", None, 2), 1)],
    );
    let measure = Duration::from_secs(4);
    let bytes = run_greedy(&t, &["h", "l"], 1000, Duration::from_secs(1), measure);
    assert_near("h (Mbit/s)", mbit(bytes[1], measure), 8.0, 0.02);
    assert_near("l (Mbit/s)", mbit(bytes[2], measure), 2.0, 0.02);
}

/// The HLS paper's Fig. 1 hierarchy on 1 Gbit/s: A and B 300 Mbit/s, C 400 Mbit/s,
/// A1 and B2 given `a1` and `b2` Mbit/s, A2 and B1 the rest of their parents' rates
/// (Experiment 2, §VIII-C). Runs the `greedy` leaves; returns the rates of A1, B2 and C
/// in Mbit/s, and checks that the link is fully used.
fn fig1(a1: u64, b2: u64, greedy: &[&str]) -> [f64; 3] {
    fig1_with(CbqSharing::TopLevel, a1, b2, greedy)
}

/// [`fig1`] under the link-sharing guideline `sharing`.
fn fig1_with(sharing: CbqSharing, a1: u64, b2: u64, greedy: &[&str]) -> [f64; 3] {
    let t = tree(
        Rate::from_gbit(1),
        vec![
            class("A", None, 300),
            class("B", None, 300),
            class("C", None, 400),
            class("A1", Some("A"), a1),
            class("A2", Some("A"), 300 - a1),
            class("B1", Some("B"), 300 - b2),
            class("B2", Some("B"), b2),
        ],
    );
    let measure = Duration::from_secs(1);
    let bytes = run_greedy_with(
        sharing,
        &t,
        greedy,
        1000,
        Duration::from_millis(200),
        measure,
    );
    let rate = |n: &str| mbit(bytes[t.id_of(n).unwrap().index()], measure);
    let rates = [rate("A1"), rate("B2"), rate("C")];
    assert_near("total", rates.iter().sum(), 1000.0, 0.01);
    rates
}

/// §VIII-C, C idle: HMM fairness would give A1 and B2 500 Mbit/s each (A and B have
/// equal guarantees); under CBQ "the allocation appears to be determined by the
/// guarantees of the leaf classes", B2 > A1 when B2's guarantee is larger.
///
/// Derived by hand. The five leaves share band 0, so the quanta are
/// `1500 * r * 5 / 1000` bytes. When A and B are both overlimit, the cutoff stays at the
/// root's level, both leaves borrow from the root and the WRR decides:
/// * 'L' (A1 140, B2 160): quanta 1050 : 1200, 466.7 and 533.3 Mbit/s;
/// * 'M' (A1 100, B2 200): quanta 750 : 1500, 333.3 and 666.7 Mbit/s;
///
/// both above A's and B's 300 Mbit/s (overlimit), as assumed.
/// * 'H' (A1 60, B2 240): the quanta would give A1 only 200 Mbit/s, below A's
///   guarantee: A turns underlimit, arrivals to A1 then lower the cutoff to A's level,
///   and A1 is held at A's 300 Mbit/s; B2 gets the other 700.
#[test]
fn fig1_split_follows_leaf_guarantees() {
    for (a1, b2, want) in [
        (140, 160, 1400.0 / 3.0),
        (100, 200, 1000.0 / 3.0),
        (60, 240, 300.0),
    ] {
        let [got_a1, got_b2, _] = fig1(a1, b2, &["A1", "B2"]);
        assert!(
            got_b2 > got_a1,
            "{a1}/{b2}: A1 {got_a1:.1}, B2 {got_b2:.1} Mbit/s"
        );
        assert_near(&format!("{a1}/{b2}: A1"), got_a1, want, 0.02);
        assert_near(&format!("{a1}/{b2}: B2"), got_b2, 1000.0 - want, 0.02);
    }
}

/// §VIII-C, all three active: the same 3:3:4 split as HLS. By hand ('M'): the quanta
/// (750 : 1500 : 3000) alone would give A1 and B2 less than A's and B's 300 Mbit/s, so A
/// and B turn underlimit and their leaves' arrivals cut C (allotted 400, overlimit when
/// it gets more) off from the root: 300, 300 and 400 Mbit/s.
#[test]
fn fig1_all_active_get_the_guarantees() {
    let [a1, b2, c] = fig1(100, 200, &["A1", "B2", "C"]);
    assert_near("A1", a1, 300.0, 0.02);
    assert_near("B2", b2, 300.0, 0.02);
    assert_near("C", c, 400.0, 0.02);
}

/// Formal link sharing on the same cases, derived by hand from its rule alone (a class
/// may borrow from an underlimit ancestor at level `i` only while no class below level
/// `i` is underlimit with a backlog):
/// * all three active ('M'): while A (or B, or C) is below its allotment it is
///   unsatisfied, so nothing borrows from the root past it; every class with demand
///   gets its allotment, and the allotments fill the link: 300, 300, 400 Mbit/s;
/// * C idle: A and B are held at their allotments until both are overlimit; only then
///   may their leaves borrow from the root, by the quanta, as in the top-level case
///   ('L' 466.7 / 533.3, 'M' 333.3 / 666.7); in 'H' the quanta would leave A1 below
///   A's 300, so A stays unsatisfied and B2 cannot borrow from the root past it:
///   300 / 700.
#[test]
fn formal_sharing_gives_every_class_with_demand_its_allotment() {
    let [a1, b2, c] = fig1_with(CbqSharing::Formal, 100, 200, &["A1", "B2", "C"]);
    assert_near("A1", a1, 300.0, 0.02);
    assert_near("B2", b2, 300.0, 0.02);
    assert_near("C", c, 400.0, 0.02);
    for (a1, b2, want) in [
        (140, 160, 1400.0 / 3.0),
        (100, 200, 1000.0 / 3.0),
        (60, 240, 300.0),
    ] {
        let [got_a1, got_b2, _] = fig1_with(CbqSharing::Formal, a1, b2, &["A1", "B2"]);
        assert_near(&format!("formal {a1}/{b2}: A1"), got_a1, want, 0.02);
        assert_near(
            &format!("formal {a1}/{b2}: B2"),
            got_b2,
            1000.0 - want,
            0.02,
        );
    }
}

/// The HLS paper's Fig. 1 hierarchy on 1 Gbit/s with Fig. 1's guarantees (A 300:
/// A1 100, A2 200; B 300: B1 100, B2 200; C 400 Mbit/s), each leaf's quantum its rate
/// in bytes per second over 1000 (12 500 B for A1), as `scenarios/hls-exp*.toml` set
/// them, and the default 1500-byte packets.
fn fig1_with_rate_quanta() -> ClassTree {
    let mut specs = vec![
        class("A", None, 300),
        class("B", None, 300),
        class("C", None, 400),
        class("A1", Some("A"), 100),
        class("A2", Some("A"), 200),
        class("B1", Some("B"), 100),
        class("B2", Some("B"), 200),
    ];
    for s in &mut specs {
        s.max_packet = None;
        s.quantum = s.rate.map(|r| Bytes(r.bps() / 8 / 1000));
    }
    tree(Rate::from_gbit(1), specs)
}

/// [`fig1_with_rate_quanta`], every leaf greedy with two packets queued and refilled
/// as they leave (Experiment 1's first interval). The guarantees add up to the link,
/// so each leaf gets its own: whenever a leaf is underlimit its turn comes round and it
/// sends without borrowing, and the cutoff rule keeps overlimit leaves from borrowing
/// past a lower underlimit ancestor. (With the rule counting the queue right after the
/// dequeue, the cutoff only dropped to 0 or was lifted, and A1 got 77 Mbit/s.)
#[test]
fn refilling_leaves_get_their_guarantees() {
    let t = fig1_with_rate_quanta();
    let leaves = ["A1", "A2", "B1", "B2", "C"];
    let measure = Duration::from_secs(1);
    let bytes = run_refilling(&t, &leaves, 2, 1000, Duration::from_millis(200), measure);
    for (name, want) in leaves.iter().zip([100.0, 200.0, 100.0, 200.0, 400.0]) {
        let got = mbit(bytes[t.id_of(name).unwrap().index()], measure);
        assert_near(name, got, want, 0.02);
    }
}

/// §VIII-C ('M') on [`fig1_with_rate_quanta`] with A1, B2 and C greedy but refilling
/// only as their packets leave: quanta 12 500, 25 000 and 50 000 B. Arrivals to A1 then
/// come only right after A1's own transmissions, so while C borrows from the root
/// during its turn nothing pulls the cutoff down to A's level (compare
/// `fig1_all_active_get_the_guarantees`, where every leaf's arrivals keep coming): every
/// leaf sends its quantum per round, borrowing from its parent or the root, and the
/// link is shared 1 : 2 : 4 like the quanta, A1 getting 1000/7 Mbit/s although A is
/// guaranteed 300.
#[test]
fn refilling_leaves_share_by_the_quanta() {
    let t = fig1_with_rate_quanta();
    let leaves = ["A1", "B2", "C"];
    let measure = Duration::from_secs(1);
    let bytes = run_refilling(&t, &leaves, 2, 1000, Duration::from_millis(200), measure);
    for (name, sevenths) in leaves.iter().zip([1.0, 2.0, 4.0]) {
        let got = mbit(bytes[t.id_of(name).unwrap().index()], measure);
        assert_near(name, got, 1000.0 * sevenths / 7.0, 0.02);
    }
}

/// Shaping-heavy trees (half the classes bounded, small rates, bursts, several bands)
/// through the conformance harness: `poll_at` must predict `dequeue` exactly while the
/// overlimit action and the cutoff move.
mod conformance {
    use super::*;

    #[derive(Clone, Debug)]
    struct Gen {
        parent: prop::sample::Index,
        under_root: bool,
        bounded: bool,
        burst: Option<u64>,
        priority: u8,
        max_packet: u64,
    }

    fn gen_class() -> impl Strategy<Value = Gen> {
        (
            any::<prop::sample::Index>(),
            any::<bool>(),
            any::<bool>(),
            prop::option::of(1000u64..30_000),
            0u8..3,
            500u64..=1500,
        )
            .prop_map(
                |(parent, under_root, bounded, burst, priority, max_packet)| Gen {
                    parent,
                    under_root,
                    bounded,
                    burst,
                    priority,
                    max_packet,
                },
            )
    }

    fn specs(gens: &[Gen]) -> Vec<ClassSpec> {
        let n = gens.len();
        let parent: Vec<Option<usize>> = (0..n)
            .map(|i| (!gens[i].under_root && i > 0).then(|| gens[i].parent.index(i)))
            .collect();
        let kids = |p: Option<usize>| parent.iter().filter(|&&q| q == p).count() as u64;
        let mut rate = vec![Rate::ZERO; n];
        for i in 0..n {
            let parent_rate = parent[i].map_or(Rate::from_mbit(10), |p| rate[p]);
            rate[i] = Rate(parent_rate.0 / kids(parent[i]));
        }
        (0..n)
            .map(|i| {
                let name = format!("c{i}");
                let parent_name = parent[i].map(|p| format!("c{p}"));
                let mut s = ClassSpec::new(&name, parent_name.as_deref());
                s.rate = Some(rate[i]);
                s.ceil = gens[i].bounded.then_some(rate[i]);
                s.burst = gens[i].burst.map(Bytes);
                s.priority = Some(gens[i].priority);
                s.max_packet = Some(Bytes(gens[i].max_packet));
                s
            })
            .collect()
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (any::<u32>(), 40u32..=500).prop_map(|(leaf, len)| Op::Enqueue { leaf, len }),
            4 => Just(Op::Dequeue),
            2 => (0u64..=20 * MS).prop_map(|ns| Op::Advance(Duration(ns))),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 256,
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        #[test]
        fn shaping_trees_conform(
            gens in prop::collection::vec(gen_class(), 1..7),
            ops in prop::collection::vec(op(), 0..300),
        ) {
            let specs = specs(&gens);
            let t = tree(Rate::from_mbit(10), specs);
            let r = check(&t, Cbq::new(&t), BufferConfig::default(), &ops);
            prop_assert!(r.is_ok(), "{}", r.unwrap_err());
        }
    }
}

/// ns-2's cutoff rules (`top-level-ns2`) against Linux's, step by step, derived by hand.
/// Link 10 Mbit/s; A (5 Mbit/s) with a1 (2) and a2 (3), so the root is at level 2; c
/// (5 Mbit/s), a leaf under the root. Every estimator starts underlimit at `maxidle`;
/// c's first packet finds no previous one (idle counts as `maxidle`), its second, sent
/// back to back at 10 Mbit/s against its 5, makes it overlimit (idle = 0.8 - 1.6 ms < 0
/// from `maxidle` 0.8 ms); the root, sending at its own rate, stays underlimit.
///
/// 1. Three arrivals to c at 0: c is underlimit, the cutoff drops to 0 (both rules).
/// 2. c sends packet 0 at 0 (its own lender, level 0), still underlimit, two packets
///    left: ns-2 sets the cutoff to c's level, 0; Linux keeps 0.
/// 3. c sends packet 1 at 0.8 ms, now overlimit, one packet left: ns-2 lifts the cutoff
///    at once; Linux keeps 0 (its rule runs at the next dequeue, and needs two queued).
/// 4. An arrival to c at 0.8 ms: c is overlimit; ns-2 looks at c's lender only, the
///    root, underlimit, and sets the cutoff to 1, below the root's level 2. Linux's
///    cutoff, 0, is not above c's level: unchanged.
/// 5. ns-2, dequeue at 1.6 ms: c is still overlimit and the root, its only lender, is
///    above the cutoff; nothing else is backlogged, so the cutoff is lifted and c
///    borrows from the root (packet 2); one packet is left again: lifted.
#[test]
fn ns2_top_level_rules_step_by_step() {
    let t = tree(
        Rate::from_mbit(10),
        vec![
            class("A", None, 5),
            class("a1", Some("A"), 2),
            class("a2", Some("A"), 3),
            class("c", None, 5),
        ],
    );
    let c = t.id_of("c").unwrap();
    let at = |ms8: u64| T0 + Duration(800_000 * ms8);
    let mut cutoffs = Vec::new();
    for sharing in [CbqSharing::Ns2TopLevel, CbqSharing::TopLevel] {
        let mut s = Cbq::<TestPacket>::with_params(&t, CbqParams { sharing });
        assert_eq!(s.sharing(), sharing);
        let mut seen = Vec::new();
        for id in 0..3 {
            put(&mut s, T0, c, id);
        }
        seen.push(s.toplevel());
        assert_eq!(s.dequeue(at(0)).map(|d| d.pkt.id), Some(0));
        assert!(s.class_state(c).unwrap().undertime.is_none());
        seen.push(s.toplevel());
        assert_eq!(s.dequeue(at(1)).map(|d| d.pkt.id), Some(1));
        assert!(
            s.class_state(c)
                .unwrap()
                .undertime
                .is_some_and(|u| u > at(2))
        );
        seen.push(s.toplevel());
        put(&mut s, at(1), c, 3);
        seen.push(s.toplevel());
        if sharing == CbqSharing::Ns2TopLevel {
            assert_eq!(s.dequeue(at(2)).map(|d| d.pkt.id), Some(2));
            seen.push(s.toplevel());
        }
        cutoffs.push(seen);
    }
    assert_eq!(
        cutoffs,
        [
            vec![Some(0), Some(0), None, Some(1), None], // ns-2
            vec![Some(0), Some(0), Some(0), Some(0)],    // Linux
        ]
    );
    assert_eq!("top-level-ns2".parse(), Ok(CbqSharing::Ns2TopLevel));
    assert!(
        "ns2"
            .parse::<CbqSharing>()
            .is_err_and(|e| e.contains("top-level, formal, top-level-ns2"))
    );
}
