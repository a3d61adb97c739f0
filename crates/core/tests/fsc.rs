//! FSC (paper 002; H-FSC's link-sharing criterion on a flat tree): the curve each leaf
//! gets, an even split between equal curves, and non-punishment traced by hand against
//! SCED's starvation (the H-FSC paper's Fig. 3).

use linkshare_core::curve::ServiceCurve;
use linkshare_core::hierarchy::{ClassId, ClassSpec};
use linkshare_core::sched::fsc::Fsc;
use linkshare_core::sched::sced::Sced;
use linkshare_core::sched::{Enqueue, Scheduler, SchedulerKind, build};
use linkshare_core::testing::TestPacket;
use linkshare_core::testing::tree;
use linkshare_core::units::{Bytes, Duration, Instant, Rate};

const MS: u64 = 1_000_000;

/// A class kept backlogged from `from` on, with 1000 B packets.
struct Greedy {
    class: ClassId,
    from: Instant,
}

/// Runs `s` on a link of rate `link` until `until`: each greedy class gets two packets
/// when it starts and one more each time one of its packets is sent, so it never runs
/// dry. Returns `(start of transmission, class)` of every packet sent.
fn run<S: Scheduler<TestPacket>>(
    s: &mut S,
    link: Rate,
    greedy: &[Greedy],
    until: Instant,
) -> Vec<(Instant, ClassId)> {
    let tx = link.tx_time(Bytes(1000));
    let mut started = vec![false; greedy.len()];
    let mut log = Vec::new();
    let mut now = Instant::ZERO;
    let mut id = 0;
    let mut offer = |s: &mut S, now: Instant, class: ClassId| {
        id += 1;
        let pkt = TestPacket { id, len: 1000 };
        assert!(matches!(
            s.enqueue(now, class, pkt, &mut Vec::new()),
            Enqueue::Queued
        ));
    };
    while now < until {
        for (g, st) in greedy.iter().zip(started.iter_mut()) {
            if !*st && g.from <= now {
                *st = true;
                offer(s, now, g.class);
                offer(s, now, g.class);
            }
        }
        match s.dequeue(now) {
            Some(d) => {
                log.push((now, d.class));
                offer(s, now, d.class);
                now += tx;
            }
            None => {
                now = greedy
                    .iter()
                    .zip(&started)
                    .filter(|(_, st)| !**st)
                    .map(|(g, _)| g.from)
                    .min()
                    .unwrap_or(until);
            }
        }
    }
    log
}

fn sent(log: &[(Instant, ClassId)], class: ClassId, from: Instant, to: Instant) -> usize {
    log.iter()
        .filter(|(t, c)| *c == class && *t >= from && *t < to)
        .count()
}

/// The curve of a leaf: `ls`, else `rt`, else `linear(rate)`, else its share by weight of
/// the link among all leaves; interior classes have none.
#[test]
fn each_leaf_gets_ls_then_rt_then_rate_then_its_share() {
    let concave = ServiceCurve {
        m1: Rate::from_mbit(4),
        d: Duration::from_millis(5),
        m2: Rate::from_mbit(1),
    };
    let mut with_ls = ClassSpec::new("ls", Some("group"));
    with_ls.ls = Some(concave);
    with_ls.rt = Some(ServiceCurve::linear(Rate::from_mbit(3)));
    let mut with_rt = ClassSpec::new("rt", Some("group"));
    with_rt.rt = Some(concave);
    let mut with_rate = ClassSpec::new("rate", None);
    with_rate.rate = Some(Rate::from_mbit(2));
    let mut heavy = ClassSpec::new("heavy", Some("group"));
    heavy.weight = Some(3);
    let mut group = ClassSpec::new("group", None);
    group.rate = Some(Rate::from_mbit(5));
    let t = tree(
        Rate::from_mbit(12),
        vec![
            group,
            with_ls,
            with_rt,
            with_rate,
            heavy,
            ClassSpec::new("light", None),
        ],
    );
    let s = Fsc::<TestPacket>::new(&t);
    let curve = |n: &str| s.curve(t.id_of(n).unwrap());
    assert_eq!(curve("ls"), Some(concave));
    assert_eq!(curve("rt"), Some(concave));
    assert_eq!(
        curve("rate"),
        Some(ServiceCurve::linear(Rate::from_mbit(2)))
    );
    // Leaf weights 1 + 1 + 1 + 3 + 1 = 7, interior `group` not counted, its rate ignored:
    // 12 Mbit/s · 3/7 and · 1/7, rounded down.
    assert_eq!(curve("heavy"), Some(ServiceCurve::linear(Rate(5_142_857))));
    assert_eq!(curve("light"), Some(ServiceCurve::linear(Rate(1_714_285))));
    assert_eq!(curve("group"), None);
    assert_eq!(s.name(), "fsc");
    assert!(s.is_work_conserving());
    assert!(build::<TestPacket>(SchedulerKind::Fsc, &t).is_ok());
    assert_eq!("fsc".parse::<SchedulerKind>(), Ok(SchedulerKind::Fsc));
}

/// Two greedy leaves with the same linear curve on 10 Mbit/s, 1000 B packets (0.8 ms
/// each): both start with virtual time 0, ties go to the leaf declared first, and each
/// packet moves a leaf's virtual time by the same 1000 B / 5 Mbit/s = 1.6 ms, so they
/// strictly alternate: 625 packets each in a second, 5 Mbit/s each.
#[test]
fn equal_linear_curves_split_one_to_one() {
    let curve = ServiceCurve::linear(Rate::from_mbit(5));
    let mut a = ClassSpec::new("a", None);
    a.ls = Some(curve);
    let mut b = ClassSpec::new("b", None);
    b.ls = Some(curve);
    let t = tree(Rate::from_mbit(10), vec![a, b]);
    let (a, b) = (t.id_of("a").unwrap(), t.id_of("b").unwrap());
    let mut s = Fsc::new(&t);
    let greedy = [a, b].map(|class| Greedy {
        class,
        from: Instant::ZERO,
    });
    let log = run(&mut s, Rate::from_mbit(10), &greedy, Instant(1000 * MS));
    let order: Vec<ClassId> = log.iter().map(|(_, c)| *c).collect();
    for (i, c) in order.iter().enumerate() {
        assert_eq!(*c, if i % 2 == 0 { a } else { b }, "packet {i}");
    }
    assert_eq!(sent(&log, a, Instant::ZERO, Instant(1000 * MS)), 625);
    assert_eq!(sent(&log, b, Instant::ZERO, Instant(1000 * MS)), 625);
}

/// Non-punishment. Both leaves have the concave curve m1 = 8 Mbit/s = 4 · m2 with its
/// knee at 6000 B (d = 6 ms), on 10 Mbit/s with 1000 B packets (0.8 ms each). `a` is
/// greedy alone from 0 and takes the whole link: 1250 packets by t0 = 1 s, so its
/// virtual time is `V^{-1}(1.25 MB)` = 6 ms + 1 244 000 B / 2 Mbit/s = 4982 ms. `b`
/// turns greedy at t0 and anchors at the system virtual time, `a`'s: 4982 ms. From
/// there a packet adds 4 ms to `a`'s virtual time, and to `b`'s 1 ms during its first
/// 6000 B, then 4 ms. Smallest virtual time first, ties to `a` (declared first):
///
/// | packet | a | b | sends |
/// |---|---|---|---|
/// | 1 | 4982 | 4982 | a |
/// | 2–5 | 4986 | 4982..4985 | b ×4 |
/// | 6 | 4986 | 4986 | a |
/// | 7–9 | 4990 | 4986, 4987, 4988 | b ×3 (its 6000 B burst ends) |
/// | 10 | 4990 | 4992 | a |
/// | 11... | | | b, a, b, a, ... |
///
/// SCED, with the same curves, would not serve `a` again until its deadline curve,
/// charged with everything it sent alone, comes back in reach: about 4 s later.
#[test]
fn a_class_that_was_alone_is_not_starved() {
    let curve = ServiceCurve {
        m1: Rate::from_mbit(8),
        d: Duration::from_millis(6),
        m2: Rate::from_mbit(2),
    };
    let mut a = ClassSpec::new("a", None);
    a.ls = Some(curve);
    a.rt = Some(curve);
    let mut b = ClassSpec::new("b", None);
    b.ls = Some(curve);
    b.rt = Some(curve);
    let t = tree(Rate::from_mbit(10), vec![a, b]);
    let (a, b) = (t.id_of("a").unwrap(), t.id_of("b").unwrap());
    let t0 = Instant(1000 * MS);
    let greedy = [
        Greedy {
            class: a,
            from: Instant::ZERO,
        },
        Greedy { class: b, from: t0 },
    ];
    let until = Instant(1500 * MS);

    let mut fsc = Fsc::new(&t);
    let log = run(&mut fsc, Rate::from_mbit(10), &greedy, until);
    assert_eq!(sent(&log, a, Instant::ZERO, t0), 1250);
    let after: Vec<ClassId> = log
        .iter()
        .filter(|(at, _)| *at >= t0)
        .map(|(_, c)| *c)
        .collect();
    let want_start = [a, b, b, b, b, a, b, b, b, a];
    assert_eq!(&after[..10], &want_start);
    for (i, c) in after[10..].iter().enumerate() {
        assert_eq!(*c, if i % 2 == 0 { b } else { a }, "packet {}", i + 11);
    }

    let mut sced = Sced::new(&t).expect("SCED takes the rt curves");
    let log = run(&mut sced, Rate::from_mbit(10), &greedy, until);
    assert_eq!(
        sent(&log, a, t0, until),
        0,
        "SCED starves the class that was alone"
    );
}
