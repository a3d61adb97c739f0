//! Per-flow classes: a template expanded into instances, the disciplines that can reset a
//! class (and the refusal of the others), and a reset instance behaving exactly as a
//! class that was never active.

use linkshare_core::curve::ServiceCurve;
use linkshare_core::hierarchy::{
    ClassId, ClassSpec, ClassTree, LinkSpec, PerFlow, guarantee_problems,
};
use linkshare_core::sched::{Enqueue, Packet, Scheduler, SchedulerConfig, SchedulerKind};
use linkshare_core::testing::TestPacket;
use linkshare_core::units::{Bytes, Duration, Instant, Rate};
use proptest::prelude::*;

fn link() -> LinkSpec {
    LinkSpec {
        name: "link".into(),
        rate: Rate::from_mbit(10),
        origin: None,
    }
}

fn per_flow(name: &str, max_flows: u32) -> ClassSpec {
    let mut s = ClassSpec::new(name, None);
    s.per_flow = Some(PerFlow {
        max_flows,
        idle: Duration::from_millis(100),
    });
    s
}

#[test]
fn a_template_becomes_consecutive_instances_in_its_place() {
    let mut web = per_flow("web", 3);
    web.weight = Some(2);
    let t = ClassTree::build(
        link(),
        vec![ClassSpec::new("a", None), web, ClassSpec::new("b", None)],
    )
    .unwrap();
    assert_eq!(t.len(), 1 + 1 + 3 + 1);
    assert_eq!(t.id_of("b"), Some(ClassId(5)));
    assert_eq!(t.id_of("web"), None, "a template is not a class");
    assert_eq!(t.template_named("web"), Some(0));
    let tpl = &t.templates()[0];
    assert_eq!((tpl.first, tpl.count), (ClassId(2), 3));
    for (i, c) in tpl.instances().enumerate() {
        let class = t.get(c);
        assert_eq!(class.name(), format!("web#{i}"));
        assert_eq!((class.weight(), class.template), (2, Some(0)));
        assert!(class.is_leaf() && class.spec.per_flow.is_none());
        assert!(tpl.contains(c));
    }
    assert!(!tpl.contains(ClassId(5)) && !tpl.contains(ClassId(1)));
    assert_eq!(t.leaves().len(), 5);
}

#[test]
fn templates_are_leaves_with_a_sane_pool_and_count_every_instances_rate() {
    let errs = ClassTree::build(
        link(),
        vec![per_flow("web", 4), ClassSpec::new("child", Some("web"))],
    )
    .unwrap_err();
    assert!(
        errs.iter()
            .any(|e| e.class == "web" && e.field == "per_flow" && e.problem.contains("children")),
        "{errs:?}"
    );
    let errs = ClassTree::build(link(), vec![per_flow("web", 0)]).unwrap_err();
    assert!(errs[0].problem.contains("max_flows is 0"), "{errs:?}");
    // 4 instances of 3 Mbit/s guarantee 12 Mbit/s on a 10 Mbit/s link: every instance
    // is counted (the disciplines that refuse such trees check this in `validate`).
    let mut web = per_flow("web", 4);
    web.rate = Some(Rate::from_mbit(3));
    let tree = ClassTree::build(link(), vec![web]).unwrap();
    let errs = guarantee_problems(&tree);
    assert!(errs[0].problem.contains("12mbit"), "{errs:?}");
}

#[test]
fn disciplines_that_cannot_reset_refuse_per_flow_trees() {
    let t = ClassTree::build(link(), vec![per_flow("web", 2), ClassSpec::new("x", None)]).unwrap();
    for &kind in SchedulerKind::ALL {
        let config = SchedulerConfig::from(kind);
        let validated = config.validate(&t);
        let built = config.build::<TestPacket>(&t);
        assert_eq!(validated.is_ok(), built.is_ok(), "{kind}");
        if kind.resets_classes() {
            assert!(built.unwrap().resets_classes(), "{kind}");
        } else {
            let e = validated.unwrap_err();
            assert_eq!(e.problems[0].class, "web", "{kind}");
            assert!(e.to_string().contains("per-flow"), "{e}");
        }
        // Without templates every built discipline says what its kind says.
        let plain = ClassTree::flat(Rate::from_mbit(10), 2);
        if let Ok(s) = config.build::<TestPacket>(&plain) {
            assert_eq!(s.resets_classes(), kind.resets_classes(), "{kind}");
        }
    }
}

/// One packet offered to class `class` at `at`.
#[derive(Clone, Copy, Debug)]
struct Arrival {
    at: Instant,
    class: ClassId,
    len: u32,
}

/// Runs `s` on a 10 Mbit/s link over `arrivals` (sorted by time), calling
/// `s.reset_class` for `reset` at its instant (when the class is empty, which the
/// arrivals ensure); returns `(departure start, class, id)` of every packet.
fn run(
    s: &mut dyn Scheduler<TestPacket>,
    arrivals: &[Arrival],
    reset: Option<(Instant, ClassId)>,
) -> Vec<(Instant, ClassId, u64)> {
    let rate = Rate::from_mbit(10);
    let mut out = Vec::new();
    let mut now = Instant::ZERO;
    let mut next = 0;
    let mut reset = reset;
    let mut busy_until = Instant::ZERO;
    loop {
        if let Some((t, c)) = reset
            && t <= now
        {
            s.reset_class(t.max(now), c);
            reset = None;
        }
        while next < arrivals.len() && arrivals[next].at <= now {
            let a = arrivals[next];
            let pkt = TestPacket {
                id: next as u64,
                len: a.len,
            };
            assert!(matches!(
                s.enqueue(now, a.class, pkt, &mut Vec::new()),
                Enqueue::Queued
            ));
            next += 1;
        }
        if busy_until <= now
            && let Some(d) = s.dequeue(now)
        {
            out.push((now, d.class, d.pkt.id));
            busy_until = now + rate.tx_time(Bytes(u64::from(d.pkt.wire_len())));
        }
        let upcoming = [
            arrivals.get(next).map(|a| a.at),
            reset.map(|(t, _)| t),
            (busy_until > now).then_some(busy_until),
        ];
        match upcoming.into_iter().flatten().min() {
            Some(t) => now = t.max(now + Duration(1)),
            None if s.dequeue(now).is_none() => return out,
            None => unreachable!("a dequeue after the last event found a packet"),
        }
    }
}

proptest! {
    /// Under FSC and H-FSC with one concave curve for every leaf: a flow-like leaf `b`
    /// that sends a burst, empties and is reset, then sends a second burst, is served
    /// exactly as a twin leaf `c` that was never active would be served for that second
    /// burst (the departure sequences agree, `c` renamed `b`), beside a greedy leaf `a`.
    #[test]
    fn a_reset_leaf_is_a_fresh_leaf(
        first in 1u32..12,
        second in 1u32..12,
        gap_ms in 0u64..40,
        kind in prop_oneof![Just(SchedulerKind::Fsc), Just(SchedulerKind::Hfsc)],
    ) {
        let curve = ServiceCurve {
            m1: Rate::from_mbit(5),
            d: Duration::from_millis(8),
            m2: Rate::from_mbit(1),
        };
        let leaf = |n: &str| {
            let mut s = ClassSpec::new(n, None);
            s.ls = Some(curve);
            s
        };
        let tree = ClassTree::build(link(), vec![leaf("a"), leaf("b"), leaf("c")]).unwrap();
        let (a, b, c) = (ClassId(1), ClassId(2), ClassId(3));
        let ms = Instant::from_millis;
        let mut arrivals: Vec<Arrival> = (0..400)
            .map(|i| Arrival { at: ms(i / 2), class: a, len: 1000 })
            .collect();
        arrivals.extend((0..first).map(|_| Arrival { at: ms(10), class: b, len: 1000 }));
        // The first burst is gone by 10 ms + 12 packets at the link rate, under 25 ms.
        let again = ms(60 + gap_ms);
        let second_burst = |class| (0..second).map(move |_| Arrival { at: again, class, len: 1000 });
        let mut with_reset = arrivals.clone();
        with_reset.extend(second_burst(b));
        with_reset.sort_by_key(|x| x.at);
        let mut with_twin = arrivals;
        with_twin.extend(second_burst(c));
        with_twin.sort_by_key(|x| x.at);
        let mut s1 = SchedulerConfig::from(kind).build::<TestPacket>(&tree).unwrap();
        let mut s2 = SchedulerConfig::from(kind).build::<TestPacket>(&tree).unwrap();
        let reset = run(s1.as_mut(), &with_reset, Some((ms(50), b)));
        let twin: Vec<_> = run(s2.as_mut(), &with_twin, None)
            .into_iter()
            .map(|(t, k, id)| (t, if k == c { b } else { k }, id))
            .collect();
        prop_assert_eq!(reset, twin);
    }
}
