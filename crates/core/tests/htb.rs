//! HTB against Linux's documented behaviour and against allocations derived by hand from
//! HTB's rules (levels, borrowing, DRR over the leaves' quanta). Time is driven by an
//! `EgressPort`, as a link would drive it: every expected value below is computed in a
//! comment from the configuration, never taken from the program's output.

use linkshare_core::buffer::BufferConfig;
use linkshare_core::hierarchy::{ClassId, ClassSpec, ClassTree};
use linkshare_core::port::{EgressPort, Transmit};
use linkshare_core::sched::htb::{Htb, HtbParams, MAX_QUANTUM, MIN_QUANTUM, Mode, QuantumClamp};
use linkshare_core::sched::{Enqueue, PollAt, Scheduler, SchedulerKind, build};
use linkshare_core::testing::tree;
use linkshare_core::testing::{Op, TestPacket, check};
use linkshare_core::units::{Bytes, Duration, Instant, Rate};
use proptest::prelude::*;
use proptest::sample::Index;

const T0: Instant = Instant::ZERO;

/// A class with `rate` and `ceil` in kbit/s (`ceil` 0: not given).
fn class(name: &str, parent: Option<&str>, rate_kbit: u64, ceil_kbit: u64) -> ClassSpec {
    let mut s = ClassSpec::new(name, parent);
    s.rate = Some(Rate::from_kbit(rate_kbit));
    s.ceil = (ceil_kbit > 0).then(|| Rate::from_kbit(ceil_kbit));
    s
}

fn id(t: &ClassTree, name: &str) -> ClassId {
    t.id_of(name).expect("class exists")
}

/// What a greedy run did.
struct Outcome {
    /// Bytes of the packets started before the end, per class id.
    bytes: Vec<u64>,
    /// Times the port had to wait for shaping with packets queued.
    waits: u64,
}

impl Outcome {
    /// Average rate of `class` over `secs` seconds, in Mbit/s.
    fn mbit(&self, class: ClassId, secs: u64) -> f64 {
        self.bytes[class.index()] as f64 * 8.0 / secs as f64 / 1e6
    }
}

/// Runs HTB behind an `EgressPort` at the link rate from `T0` for `secs` seconds; every
/// leaf in `greedy` always has a packet of `len` bytes waiting.
fn run_greedy(t: &ClassTree, greedy: &[&str], len: u32, secs: u64) -> Outcome {
    let htb: Htb<TestPacket> = Htb::new(t).expect("valid HTB tree");
    let mut port = EgressPort::simple(t, htb);
    let mut next_id = 0;
    let mut put = |port: &mut EgressPort<TestPacket, Htb<TestPacket>>, class, now| {
        let pkt = TestPacket { id: next_id, len };
        next_id += 1;
        assert!(port.enqueue(now, class, pkt, |d| panic!("unexpected drop {d:?}")));
    };
    for name in greedy {
        put(&mut port, id(t, name), T0);
    }
    let until = Instant::from_secs(secs);
    let mut out = Outcome {
        bytes: vec![0; t.len()],
        waits: 0,
    };
    let mut now = T0;
    while now < until {
        match port.transmit(now) {
            Transmit::Started { pkt, done_at } => {
                out.bytes[pkt.class.index()] += u64::from(pkt.pkt.len);
                put(&mut port, pkt.class, now);
                now = done_at;
            }
            Transmit::Busy(t) => now = t,
            Transmit::Wait(t) => {
                out.waits += 1;
                now = t;
            }
            Transmit::Idle => panic!("greedy leaves never leave the port idle"),
        }
    }
    out
}

fn assert_close(what: &str, got: f64, want: f64, tolerance: f64) {
    assert!(
        (got - want).abs() <= tolerance,
        "{what}: got {got:.4}, want {want:.4} ± {tolerance}"
    );
}

/// One class, rate = ceil = 1 Mbit/s (ceil defaults to rate, as in tc), on a 10 Mbit/s
/// link. Default bursts (tc: rate in bytes/s / HZ + mtu, HZ = 1000, mtu = 1600):
/// 125 000 / 1000 + 1600 = 1725 B for both buckets.
///
/// Greedy for T = 20 s: the bucket starts full and the class sends whenever its tokens
/// are not negative, so after the last send its debt is under one packet L, and while it
/// waits it holds less than L + what 0.8 ms of link time refills (100 B). Hence
/// R·T/8 + burst − L − 100 <= sent <= R·T/8 + burst + L: within one burst and a packet
/// of R·T/8 = 2 500 000 B.
#[test]
fn a_single_class_is_shaped_to_its_rate() {
    let t = tree(Rate::from_mbit(10), vec![class("a", None, 1000, 0)]);
    let a = id(&t, "a");
    let htb: Htb<TestPacket> = Htb::new(&t).unwrap();
    let p = htb.class_params(a).unwrap();
    assert_eq!(
        (p.ceil, p.burst, p.cburst),
        (p.rate, Bytes(1725), Bytes(1725))
    );
    let out = run_greedy(&t, &["a"], 1000, 20);
    let sent = out.bytes[a.index()];
    assert!((2_500_625..=2_503_725).contains(&sent), "sent {sent} B");
    assert!(out.waits > 0, "the link idles between the class's packets");
}

/// Rate = ceil = 1 Mbit/s, burst = cburst = 10 000 B, 1 Gbit/s link, 1000 B packets.
/// Idle until t0 = 1 s: both buckets are full (80 ms of tokens; a packet costs 8 ms;
/// 8 µs of link time refills 8 µs). The k-th packet of the burst (k = 0, 1, ...) leaves
/// at t0 + 8k µs and leaves 80 ms − 8(k+1) ms + 8k µs of tokens, which is still >= 0
/// after k = 9 (72 µs): the class is green for an 11th packet, as HTB sends while its
/// bucket is not in debt. After the 11th (k = 10, at t0 + 80 µs) the debt is
/// 8 ms − 80 µs, paid off at t0 + 80 µs + 7.92 ms = t0 + 8 ms: the 12th packet's time,
/// which `poll_at` names exactly.
#[test]
fn a_burst_goes_out_back_to_back_after_idling() {
    let mut a = class("a", None, 1000, 0);
    a.burst = Some(Bytes(10_000));
    a.cburst = Some(Bytes(10_000));
    let t = tree(Rate::from_gbit(1), vec![a]);
    let a = id(&t, "a");
    let mut port = EgressPort::simple(&t, Htb::<TestPacket>::new(&t).unwrap());
    let t0 = Instant::from_secs(1);
    for i in 0..20 {
        let pkt = TestPacket { id: i, len: 1000 };
        assert!(port.enqueue(t0, a, pkt, |d| panic!("{d:?}")));
    }
    let mut now = t0;
    for k in 0..11u64 {
        match port.transmit(now) {
            Transmit::Started { done_at, .. } => {
                assert_eq!(now, t0 + Duration::from_micros(8 * k), "packet {k}");
                now = done_at;
            }
            other => panic!("packet {k}: {other:?}"),
        }
    }
    let twelfth = t0 + Duration::from_millis(8);
    assert_eq!(port.qdisc().poll_at(now), PollAt::At(twelfth));
    assert!(matches!(port.transmit(now), Transmit::Wait(t) if t == twelfth));
    assert!(matches!(port.transmit(twelfth), Transmit::Started { .. }));
}

/// A parent of 10 Mbit/s on a 10 Mbit/s link, leaves a (3 Mbit/s, ceil `a_ceil_kbit`)
/// and b (7 Mbit/s, ceil 10 Mbit/s).
fn three_seven(a_ceil_kbit: u64) -> ClassTree {
    tree(
        Rate::from_mbit(10),
        vec![
            class("p", None, 10_000, 0),
            class("a", Some("p"), 3000, a_ceil_kbit),
            class("b", Some("p"), 7000, 10_000),
        ],
    )
}

/// Both greedy: the rates fill the link, so each leaf gets its rate at level 0 (a green
/// leaf is served before anyone borrows). What little is borrowed goes out at level 6
/// from p, which pays for everything at the link rate, its own rate, and so stays green;
/// only level-6 lookups go through p's feed, a pure DRR over the quanta
/// 3e6/8/10 = 37 500 and 87 500 B: also 3 : 7.
#[test]
fn two_greedy_leaves_share_in_proportion_to_their_rates() {
    let t = three_seven(10_000);
    let out = run_greedy(&t, &["a", "b"], 1000, 10);
    assert_close("a", out.mbit(id(&t, "a"), 10), 3.0, 0.03);
    assert_close("b", out.mbit(id(&t, "b"), 10), 7.0, 0.03);
}

/// b idle: a borrows from p (green at level 6) up to its ceil. With ceil = 10 Mbit/s it
/// fills the link; with ceil = 5 Mbit/s it gets 5 Mbit/s (plus at most its cburst,
/// 5e6/8/1000 + 1600 = 2225 B, and a packet, over 10 s) and the link idles: the port
/// waits on `poll_at`'s `At(t)`.
#[test]
fn an_idle_sibling_lets_the_other_borrow_up_to_its_ceil() {
    let t = three_seven(10_000);
    let out = run_greedy(&t, &["a"], 1000, 10);
    assert_close("a, ceil 10", out.mbit(id(&t, "a"), 10), 10.0, 0.01);
    assert_eq!(out.waits, 0, "a never runs into its ceil");

    let t = three_seven(5000);
    let out = run_greedy(&t, &["a"], 1000, 10);
    let sent = out.bytes[id(&t, "a").index()];
    assert!(
        (6_250_000 - 1000..=6_250_000 + 2225 + 1000).contains(&sent),
        "a, ceil 5: sent {sent} B"
    );
    assert!(out.waits > 0, "the link idles while a is red");
}

/// The HLS paper's Fig. 1 hierarchy scaled to a 10 Mbit/s link (guarantees in kbit/s:
/// A 3000, B 3000, C 4000; A1, A2, B1, B2 as given), every ceil at the link rate as in
/// the paper's experiments.
fn fig1(a1: u64, a2: u64, b1: u64, b2: u64) -> ClassTree {
    let link = 10_000;
    tree(
        Rate::from_mbit(10),
        vec![
            class("A", None, 3000, link),
            class("B", None, 3000, link),
            class("C", None, 4000, link),
            class("A1", Some("A"), a1, link),
            class("A2", Some("A"), a2, link),
            class("B1", Some("B"), b1, link),
            class("B2", Some("B"), b2, link),
        ],
    )
}

/// The mechanism behind §VIII-C, isolated. Fig. 1 with the idle leaves A2 and B1 left
/// out and A, B given the guarantee of their one active leaf: A = A1 = 1 Mbit/s,
/// B = B2 = 2 Mbit/s, C = 4 Mbit/s idle, ceils at the link rate; A1 and B2 greedy.
///
/// A and A1 have identical buckets and are charged alike (both pay at level 0, both are
/// borrowers at level 7), so A is green exactly when A1 is: A never lends at level 6,
/// and likewise B. Hence A1 sends its 1 Mbit/s and B2 its 2 Mbit/s at level 0, and the
/// other 7 Mbit/s go out at level 7, borrowed from the link through A and B, which are
/// then both yellow in the link's feed. There DRR alternates between the *leaves* with
/// their quanta rate/r2q: 1e6/8/10 = 12 500 B and 25 000 B. So the excess splits 1 : 2:
/// A1 = 1 + 7/3 = 3.333 Mbit/s, B2 = 2 + 14/3 = 6.667 Mbit/s, although A and B, the
/// classes that borrow from the link, would share it by their own rates only if HTB
/// looked at them.
#[test]
fn borrowing_from_the_link_splits_the_excess_by_leaf_quanta() {
    let link = 10_000;
    let t = tree(
        Rate::from_mbit(10),
        vec![
            class("A", None, 1000, link),
            class("B", None, 2000, link),
            class("C", None, 4000, link),
            class("A1", Some("A"), 1000, link),
            class("B2", Some("B"), 2000, link),
        ],
    );
    let out = run_greedy(&t, &["A1", "B2"], 1000, 10);
    assert_close("A1", out.mbit(id(&t, "A1"), 10), 1.0 + 7.0 / 3.0, 0.03);
    assert_close("B2", out.mbit(id(&t, "B2"), 10), 2.0 + 14.0 / 3.0, 0.03);
}

/// §VIII-C, experiment 2: A1 and B2 greedy, C idle, in the paper's three scenarios.
///
/// Derived by hand. Levels (Linux, top-down): link 7, A and B 6, leaves 0. A1 is served
/// at level 0 while its own bucket allows, and at level 6 from A while A is green. A's
/// assured bucket pays for A1's packets sent at levels 0 and 6 (A is at or above the
/// lending level) but not for those sent at level 7 (A is then a borrower), so levels 0
/// and 6 together give A1 exactly A's rate, 3 Mbit/s, and likewise B2 B's 3 Mbit/s.
/// The other 4 Mbit/s go out at level 7, borrowed from the link through A and B (both
/// yellow then), in DRR turns of the leaves A1 and B2. HMM fairness would give 5 : 5
/// in every scenario; HTB gives A1 = 3 + x, B2 = 7 − x, with x A1's share of level 7.
///
/// To first order x = 4·q1/(q1 + q2) with the leaves' quanta (rate/r2q), as in
/// `borrowing_from_the_link_splits_the_excess_by_leaf_quanta`. Here, however, A's feed
/// is walked both by level-6 lookups (A lending) and by level-7 lookups (the link
/// lending through A), and Linux keeps one round-robin position per feed: when A1's
/// level-7 quantum runs out, its turn at the link passes to B only if the next lookup
/// through A's feed is a level-7 one; a level-6 lookup rewinds A's feed without passing
/// the link's turn, and A1 starts another level-7 quantum. So x depends on how the
/// bucket timings interleave, and is not derived here beyond 0 <= x <= 4.
///
/// Asserted: each leaf gets its parent's 3 Mbit/s, the link is full, and the split is
/// lopsided in the direction the paper measured on Linux (Fig. 9, second row): B2
/// above A1, more so as B2's guarantee grows from L to M to H.
#[test]
fn fig1_excess_follows_the_leaves_guarantees() {
    let scenarios = [
        ("L", [1400, 1600, 1400, 1600]),
        ("M", [1000, 2000, 1000, 2000]),
        ("H", [600, 2400, 600, 2400]),
    ];
    let mut b2_rates = Vec::new();
    for (name, [a1, a2, b1, b2]) in scenarios {
        let t = fig1(a1, a2, b1, b2);
        let out = run_greedy(&t, &["A1", "B2"], 1000, 10);
        let (got_a1, got_b2) = (out.mbit(id(&t, "A1"), 10), out.mbit(id(&t, "B2"), 10));
        assert!(got_a1 >= 3.0 - 0.02, "{name}: A1 {got_a1} below A's rate");
        assert!(got_b2 >= 3.0 - 0.02, "{name}: B2 {got_b2} below B's rate");
        assert_close(&format!("{name}: A1 + B2"), got_a1 + got_b2, 10.0, 0.01);
        assert!(got_b2 > got_a1, "{name}: B2 {got_b2} not above A1 {got_a1}");
        b2_rates.push(got_b2);
    }
    assert!(b2_rates.windows(2).all(|w| w[0] < w[1]), "{b2_rates:?}");
}

/// §VIII-C with A1, B2 and C greedy: every class gets its guarantee (A1 and B2 through
/// levels 0 and 6, C at level 0), 3 : 3 : 4 of the link, and nothing is left to borrow
/// from the link.
#[test]
fn fig1_with_c_active_gives_the_guarantees() {
    let t = fig1(1000, 2000, 1000, 2000);
    let out = run_greedy(&t, &["A1", "B2", "C"], 1000, 10);
    for (name, want) in [("A1", 3.0), ("B2", 3.0), ("C", 4.0)] {
        assert_close(name, out.mbit(id(&t, name), 10), want, 0.05);
    }
}

/// x (priority 0) and y (priority 1), 1 Mbit/s each, ceil 10 Mbit/s, under a 10 Mbit/s
/// link. Each gets its rate at level 0; the other 8 Mbit/s are borrowed from the link
/// at level 7, where the row of priority 0 is served before that of priority 1 while x
/// is backlogged: x gets 9 Mbit/s, y 1.
#[test]
fn priority_zero_borrows_before_priority_one() {
    let mut x = class("x", None, 1000, 10_000);
    x.priority = Some(0);
    let mut y = class("y", None, 1000, 10_000);
    y.priority = Some(1);
    let t = tree(Rate::from_mbit(10), vec![y, x]);
    let out = run_greedy(&t, &["x", "y"], 1000, 10);
    assert_close("x", out.mbit(id(&t, "x"), 10), 9.0, 0.03);
    assert_close("y", out.mbit(id(&t, "y"), 10), 1.0, 0.03);
}

/// Linux's DRR, traced by hand. x and y under the link, rate 8 kbit/s (a 1000 B packet
/// costs 1 s of tokens), burst 1 B, ceil 10 Mbit/s with a deep cburst, explicit quantum
/// 3000 B; 1000 B packets, every dequeue at t = 0.
///
/// * Level 0: both green, row order x, y. x sends (deficit 0 − 1000 < 0: + 3000 = 2000,
///   turn passes to y) and turns yellow; y likewise.
/// * Level 7 (borrowing from the link), deficits start at 0 again (one per level):
///   x sends one packet (−1000 -> 2000, turn to y), y one, then x three (2000, 1000, 0,
///   −1000 -> 2000), y three, x three...
#[test]
fn drr_turns_follow_linux() {
    let spec = |name: &str| {
        let mut s = class(name, None, 8, 10_000);
        s.burst = Some(Bytes(1));
        s.cburst = Some(Bytes(1_000_000));
        s.quantum = Some(Bytes(3000));
        s
    };
    let t = tree(Rate::from_mbit(10), vec![spec("x"), spec("y")]);
    let (x, y) = (id(&t, "x"), id(&t, "y"));
    let mut htb: Htb<TestPacket> = Htb::new(&t).unwrap();
    for i in 0..20 {
        for c in [x, y] {
            let r = htb.enqueue(T0, c, TestPacket { id: i, len: 1000 }, &mut Vec::new());
            assert!(matches!(r, Enqueue::Queued));
        }
    }
    let order: String = (0..14)
        .map(|_| {
            if htb.dequeue(T0).unwrap().class == x {
                'x'
            } else {
                'y'
            }
        })
        .collect();
    assert_eq!(order, "xyxyxxxyyyxxxy");
    assert_eq!(htb.mode_of(x), Some(Mode::MayBorrow));
    assert_eq!(htb.mode_of(ClassId::ROOT), Some(Mode::CanSend));
}

/// A chain of classes c1 (under the link) ... cN: Linux numbers levels top-down (link 7,
/// c1 6, ...), so a leaf can be at most 7 levels below the link.
fn chain(n: usize) -> ClassTree {
    let specs = (1..=n)
        .map(|i| {
            let parent = (i > 1).then(|| format!("c{}", i - 1));
            ClassSpec::new(&format!("c{i}"), parent.as_deref())
        })
        .collect();
    tree(Rate::from_mbit(10), specs)
}

#[test]
fn levels_are_top_down_and_at_most_eight() {
    let t = chain(7);
    let htb: Htb<TestPacket> = Htb::new(&t).unwrap();
    let levels: Vec<u8> = (0..t.len())
        .map(|i| htb.class_params(ClassId(i as u32)).unwrap().level)
        .collect();
    assert_eq!(levels, [7, 6, 5, 4, 3, 2, 1, 0]);

    let err = Htb::<TestPacket>::new(&chain(8)).unwrap_err();
    assert_eq!(err.kind, SchedulerKind::Htb);
    assert!(
        err.to_string()
            .contains("class `c8`, field `parent`: the class is 8 levels below the link")
            && err.to_string().contains("8 levels"),
        "{err}"
    );
    assert!(build::<TestPacket>(SchedulerKind::Htb, &chain(9)).is_err());

    // Uneven depths: a leaf right under the link is at level 0 like every leaf, an
    // interior class two levels down at 5, whatever the height of its subtree.
    let t = tree(
        Rate::from_mbit(10),
        vec![
            ClassSpec::new("a", None),
            ClassSpec::new("b", None),
            ClassSpec::new("b1", Some("b")),
            ClassSpec::new("b1x", Some("b1")),
        ],
    );
    let htb: Htb<TestPacket> = Htb::new(&t).unwrap();
    let level = |n: &str| htb.class_params(id(&t, n)).unwrap().level;
    assert_eq!(
        [level("a"), level("b"), level("b1"), level("b1x")],
        [0, 6, 5, 0]
    );
}

/// Quantum = rate in bytes/s / r2q (10), clamped to [1000, 200 000] unless given.
#[test]
fn quanta_are_clamped_like_linux() {
    let mut given = class("given", None, 40, 0);
    given.quantum = Some(Bytes(300));
    let t = tree(
        Rate::from_gbit(10),
        vec![
            class("slow", None, 40, 0),        // 5000 B/s / 10 = 500 -> 1000
            class("mid", None, 10_000, 0),     // 1 250 000 / 10 = 125 000
            class("fast", None, 5_000_000, 0), // 625 000 000 / 10 -> 200 000
            given,                             // explicit: kept
        ],
    );
    let htb: Htb<TestPacket> = Htb::new(&t).unwrap();
    let q = |n: &str| htb.class_params(id(&t, n)).unwrap().quantum;
    assert_eq!(q("slow"), Some(MIN_QUANTUM));
    assert_eq!(q("mid"), Some(Bytes(125_000)));
    assert_eq!(q("fast"), Some(MAX_QUANTUM));
    assert_eq!(q("given"), Some(Bytes(300)));
    assert_eq!(htb.class_params(ClassId::ROOT).unwrap().quantum, None);
    assert_eq!(
        htb.quantum_clamps(),
        [
            QuantumClamp {
                class: id(&t, "slow"),
                computed: Bytes(500),
                used: Bytes(1000)
            },
            QuantumClamp {
                class: id(&t, "fast"),
                computed: Bytes(62_500_000),
                used: Bytes(200_000)
            },
        ]
    );
}

/// The qdisc-wide parameters feed the defaults: with tc's HZ read from a modern kernel
/// (10⁹), a 10 Mbit/s class's default burst is 1 250 000 / 10⁹ = 0 B + mtu = 1600 B;
/// with r2q = 100 its quantum is 1 250 000 / 100 = 12 500 B.
#[test]
fn qdisc_parameters_set_the_defaults() {
    use std::num::NonZeroU32;
    let t = tree(Rate::from_mbit(100), vec![class("a", None, 10_000, 0)]);
    let params = HtbParams {
        r2q: NonZeroU32::new(100).unwrap(),
        hz: NonZeroU32::new(1_000_000_000).unwrap(),
        mtu: Bytes(1600),
    };
    let htb = Htb::<TestPacket>::with_params(&t, params).unwrap();
    assert_eq!(htb.params(), params);
    let p = htb.class_params(id(&t, "a")).unwrap();
    assert_eq!(
        (p.burst, p.cburst, p.quantum),
        (Bytes(1600), Bytes(1600), Some(Bytes(12_500)))
    );
    // tc's defaults: 1 250 000 / 1000 + 1600 = 2850 B, 1 250 000 / 10 = 125 000 B.
    let p = *Htb::<TestPacket>::new(&t)
        .unwrap()
        .class_params(id(&t, "a"))
        .unwrap();
    assert_eq!((p.burst, p.quantum), (Bytes(2850), Some(Bytes(125_000))));
}

/// Classes without a rate share what their parent's rate leaves, by weight; without a
/// ceil either, they may borrow up to their parent's ceil.
#[test]
fn unconfigured_classes_get_a_share_and_the_parents_ceil() {
    let mut heavy = ClassSpec::new("heavy", None);
    heavy.weight = Some(3);
    let t = tree(
        Rate::from_mbit(10),
        vec![
            class("fixed", None, 2000, 0),
            heavy,
            ClassSpec::new("light", None),
        ],
    );
    let htb: Htb<TestPacket> = Htb::new(&t).unwrap();
    let p = |n: &str| *htb.class_params(id(&t, n)).unwrap();
    // 10 - 2 = 8 Mbit/s left, split 3 : 1.
    assert_eq!(
        (p("heavy").rate, p("heavy").ceil),
        (Rate::from_mbit(6), Rate::from_mbit(10))
    );
    assert_eq!(
        (p("light").rate, p("light").ceil),
        (Rate::from_mbit(2), Rate::from_mbit(10))
    );
    assert_eq!(p("fixed").ceil, Rate::from_mbit(2));
    // Burst = 6e6/8/1000 + 1600 = 2350 B; cburst = 10e6/8/1000 + 1600 = 2850 B.
    assert_eq!(
        (p("heavy").burst, p("heavy").cburst),
        (Bytes(2350), Bytes(2850))
    );

    let err = Htb::<TestPacket>::new(&tree(
        Rate::from_mbit(10),
        vec![class("all", None, 10_000, 0), ClassSpec::new("none", None)],
    ))
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("class `none`, field `rate`: the class has no rate"),
        "{err}"
    );
}

/// A leaf emptied by a push-out leaves no trace in HTB's structures.
#[test]
fn a_leaf_emptied_by_push_out_leaves_no_trace() {
    let t = three_seven(10_000);
    let mut htb: Htb<TestPacket> = Htb::new(&t).unwrap();
    let pkt = TestPacket { id: 0, len: 100 };
    let r = htb.enqueue(T0, id(&t, "a"), pkt, &mut Vec::new());
    assert!(matches!(r, Enqueue::Queued));
    assert_eq!(htb.poll_at(T0), PollAt::Now);
    assert_eq!(htb.remove_newest(id(&t, "a")), Some(pkt));
    assert_eq!(htb.poll_at(T0), PollAt::Idle);
    assert!(htb.dequeue(T0).is_none());
}

/// One generated class: parent choice, ceil above the rate (percent of the link), bucket
/// depths (bytes, often below a packet), priority.
type ClassGen = (Index, u8, u64, u64, u8);

/// A tree of up to 8 levels: class i hangs under the link or an earlier class less than
/// 7 levels down; rates split the parent's equally.
fn deep_tree(gens: &[ClassGen]) -> ClassTree {
    let link = Rate::from_mbit(10);
    let mut parent: Vec<Option<usize>> = Vec::new();
    let mut depth: Vec<u32> = Vec::new();
    for (i, g) in gens.iter().enumerate() {
        let candidates: Vec<Option<usize>> = std::iter::once(None)
            .chain((0..i).filter(|&j| depth[j] < 7).map(Some))
            .collect();
        let p = candidates[g.0.index(candidates.len())];
        depth.push(p.map_or(1, |p| depth[p] + 1));
        parent.push(p);
    }
    let mut rate = vec![Rate::ZERO; gens.len()];
    let specs = gens
        .iter()
        .enumerate()
        .map(|(i, &(_, ceil_pct, burst, cburst, prio))| {
            let siblings = parent.iter().filter(|&&q| q == parent[i]).count() as u64;
            rate[i] = Rate(parent[i].map_or(link, |p| rate[p]).0 / siblings);
            let name = parent[i].map(|p| format!("c{p}"));
            let mut s = class(&format!("c{i}"), name.as_deref(), 0, 0);
            s.rate = Some(rate[i]);
            s.ceil = Some(Rate(
                rate[i].0 + (link.0 - rate[i].0) * u64::from(ceil_pct) / 100,
            ));
            s.burst = Some(Bytes(burst));
            s.cburst = Some(Bytes(cburst));
            s.priority = Some(prio);
            s
        })
        .collect();
    tree(link, specs)
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (any::<u32>(), 40u32..=1500).prop_map(|(leaf, len)| Op::Enqueue { leaf, len }),
        4 => Just(Op::Dequeue),
        1 => (0u64..=3_000_000).prop_map(|ns| Op::Advance(Duration(ns))),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The conformance harness (FIFO per class, conservation, `poll_at` honesty: `At(t)`
    /// is exactly when a packet can next leave) on trees up to HTB's 8 levels deep, with
    /// buckets often shallower than a packet, so that classes change mode all the time.
    #[test]
    fn conforms_on_deep_shaped_trees(
        gens in prop::collection::vec(
            (any::<Index>(), 0u8..=100, 1u64..3000, 1u64..3000, 0u8..=7),
            1..16,
        ),
        ops in prop::collection::vec(op(), 0..400),
    ) {
        let t = deep_tree(&gens);
        let htb: Htb<TestPacket> = Htb::new(&t).expect("at most 8 levels");
        if let Err(v) = check(&t, htb, BufferConfig::default(), &ops) {
            prop_assert!(false, "{}", v);
        }
    }
}

/// tc's warnings, derived by hand on a 100 Mbit/s link with r2q 10, mtu 1600 B:
/// * the link's children A (60) and B (50 Mbit/s) add up to 110 > 100;
/// * A's children A1 (20), A2 (0.05) and A3 (45 Mbit/s) add up to 65.05 > 60;
/// * A1: 20 Mbit/s = 2 500 000 B/s / 10 = 250 000 B > 200 000: big, r2q ≥
///   ⌈2 500 000 / 200 000⌉ = 13;
/// * A2: 50 kbit/s = 6250 B/s / 10 = 625 B < 1000: small, r2q ≤ ⌊6250 / 1000⌋ = 6; its
///   burst 1000 B < 1600 B;
/// * A3: explicit quantum (no clamp); cburst 1500 B < 1600 B; ceil 40 Mbit/s below its
///   rate 45;
/// * B: 6 250 000 B/s / 10 = 625 000 B: big, r2q ≥ ⌈6 250 000 / 200 000⌉ = 32.
#[test]
fn warnings_name_the_class_and_the_fix() {
    let mut a2 = class("A2", Some("A"), 50, 0);
    a2.burst = Some(Bytes(1000));
    let mut a3 = class("A3", Some("A"), 45_000, 0);
    a3.quantum = Some(Bytes(3000));
    a3.cburst = Some(Bytes(1500));
    a3.ceil = Some(Rate::from_mbit(40));
    let t = tree(
        Rate::from_mbit(100),
        vec![
            class("A", None, 60_000, 0),
            class("A1", Some("A"), 20_000, 0),
            a2,
            a3,
            class("B", None, 50_000, 0),
        ],
    );
    let config = linkshare_core::sched::SchedulerConfig::Htb(HtbParams::default());
    let found: Vec<(String, &str, String, String)> = config
        .warnings(&t)
        .into_iter()
        .map(|w| (w.class, w.field, w.problem, w.fix))
        .collect();
    let summary: Vec<(&str, &str)> = found.iter().map(|(c, f, _, _)| (c.as_str(), *f)).collect();
    let link = t.root().name().to_owned();
    assert_eq!(
        summary,
        [
            (link.as_str(), "rate"),
            ("A", "rate"),
            ("A1", "quantum"),
            ("A2", "quantum"),
            ("A2", "burst"),
            ("A3", "cburst"),
            ("A3", "ceil"),
            ("B", "quantum"),
        ]
    );
    let text = |i: usize| format!("{}; {}", found[i].2, found[i].3);
    assert!(
        text(0).contains("add up to 110mbit, above its rate 100mbit"),
        "{}",
        text(0)
    );
    assert!(
        text(1).contains("(A1, A2, A3) add up to 65050kbit, above its rate 60mbit"),
        "{}",
        text(1)
    );
    assert!(
        text(2).contains("is big: rate / r2q = 20mbit / 10 = 250000b, so HTB uses 200000b"),
        "{}",
        text(2)
    );
    assert!(text(2).contains("r2q to at least 13"), "{}", text(2));
    assert!(
        text(3).contains("is small") && text(3).contains("r2q to at most 6"),
        "{}",
        text(3)
    );
    assert!(
        text(4).contains("(1000b) is smaller than one MTU (1600b"),
        "{}",
        text(4)
    );
    assert!(text(5).contains("may not reach its ceil"), "{}", text(5));
    assert!(
        text(6).contains("(40mbit) is below its rate (45mbit)"),
        "{}",
        text(6)
    );
    assert!(text(7).contains("r2q to at least 32"), "{}", text(7));
    // HTB runs the tree; the other disciplines refuse its rates (and warn about nothing).
    assert!(config.validate(&t).is_ok());
    let drr = linkshare_core::sched::SchedulerConfig::Drr;
    assert!(drr.warnings(&t).is_empty());
    let refused = drr.validate(&t).unwrap_err();
    let fields: Vec<(&str, &str)> = refused
        .problems
        .iter()
        .map(|p| (p.class.as_str(), p.field))
        .collect();
    assert_eq!(
        fields,
        [(link.as_str(), "rate"), ("A", "rate"), ("A3", "ceil")]
    );
}
