//! Keshav's FQ: the largest bid is dropped (spec R7), every buffer structure gives the
//! same schedule and drops, and validation reports every problem with its fix.

use std::collections::BTreeSet;

use linkshare_core::ds::bids::Structure;
use linkshare_core::ds::bids::trace::{Recorder, TraceOp};
use linkshare_core::ds::bids::{DoubleHeap, FastPerc, LinkedList, PerConversation, SearchTree};
use linkshare_core::hierarchy::{ClassId, ClassSpec, Limit};
use linkshare_core::sched::keshav::{ConversationDelta, Keshav, KeshavConfig, validate};
use linkshare_core::sched::{DropReason, Enqueue, Scheduler};
use linkshare_core::testing::{TestPacket, tree};
use linkshare_core::units::{Bytes, Instant, Rate};
use proptest::prelude::*;

/// One step: an arrival (leaf, length, time step) or a dequeue.
#[derive(Clone, Copy, Debug)]
enum Step {
    Arrive { leaf: u32, len: u32, dt: u64 },
    Dequeue,
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    prop::collection::vec(
        prop_oneof![
            3 => (0u32..5, 40u32..=1500, 0u64..400_000).prop_map(|(leaf, len, dt)| Step::Arrive { leaf, len, dt }),
            1 => Just(Step::Dequeue),
        ],
        0..400,
    )
}

fn limit() -> impl Strategy<Value = Limit> {
    prop_oneof![
        (1u64..30).prop_map(Limit::Packets),
        (1500u64..20_000).prop_map(|b| Limit::Bytes(Bytes(b))),
    ]
}

fn five_leaves() -> linkshare_core::ClassTree {
    tree(
        Rate::from_mbit(10),
        (0..5)
            .map(|i| ClassSpec::new(&format!("c{i}"), None))
            .collect(),
    )
}

/// What happened to each packet, in order: `(dequeued?, id)`.
type Log = Vec<(bool, u64)>;

/// Runs `steps` through Keshav with structure `S`, checking every drop against a model
/// of the buffer built from the recorded bids (R7). Returns the log of dequeues and
/// drops.
fn run<S: linkshare_core::ds::bids::BidQueue<TestPacket>>(
    steps: &[Step],
    limit: Limit,
    delta: u64,
) -> Result<Log, TestCaseError> {
    let t = five_leaves();
    let config = KeshavConfig {
        limit,
        delta: Bytes(delta),
        ..KeshavConfig::default()
    };
    let recorder = Recorder::new();
    let mut k = Keshav::<TestPacket, S>::new(&t, &config)
        .expect("valid")
        .with_recorder(recorder.clone());
    // The model: buffered (bid, seq, id, leaf, len); seq = insert index in the trace.
    let mut model: BTreeSet<(u128, u64, u64, u32, u32)> = BTreeSet::new();
    let mut log = Log::new();
    let mut now = Instant::ZERO;
    let mut inserts = 0usize;
    let mut evicted = Vec::new();
    for (id, step) in steps.iter().enumerate() {
        match *step {
            Step::Arrive { leaf, len, dt } => {
                now += linkshare_core::units::Duration(dt);
                let class = ClassId(leaf + 1);
                let verdict =
                    k.enqueue(now, class, TestPacket { id: id as u64, len }, &mut evicted);
                let trace = recorder.trace();
                let inserted: Vec<(u32, u128)> = trace
                    .ops
                    .iter()
                    .filter_map(|op| match *op {
                        TraceOp::Insert { conv, bid, .. } => Some((conv, bid)),
                        TraceOp::GetMin { .. } => None,
                    })
                    .collect();
                prop_assert_eq!(inserted.len(), inserts + 1, "every arrival is recorded");
                let (_, bid) = inserted[inserts];
                model.insert((bid, inserts as u64, id as u64, leaf + 1, len));
                inserts += 1;
                let mut want = Vec::new();
                let over = |m: &BTreeSet<(u128, u64, u64, u32, u32)>| match limit {
                    Limit::Packets(n) => m.len() as u64 > n,
                    Limit::Bytes(b) => m.iter().map(|e| u64::from(e.4)).sum::<u64>() > b.0,
                };
                while over(&model) {
                    let largest = model.pop_last().expect("over the limit");
                    // The victim is the newest of its conversation still buffered.
                    prop_assert!(!model.iter().any(|e| e.3 == largest.3 && e.1 > largest.1));
                    want.push(largest.2);
                }
                let mut got: Vec<u64> = evicted
                    .drain(..)
                    .map(|d| {
                        assert_eq!(d.reason, DropReason::LargestBid);
                        d.pkt.id
                    })
                    .collect();
                match verdict {
                    Enqueue::Queued => prop_assert!(!want.contains(&(id as u64))),
                    Enqueue::Dropped(d) => {
                        prop_assert_eq!(d.reason, DropReason::LargestBid);
                        got.push(d.pkt.id);
                    }
                }
                got.sort_unstable();
                let mut want_sorted = want.clone();
                want_sorted.sort_unstable();
                prop_assert_eq!(&got, &want_sorted, "dropped packets");
                log.extend(want.into_iter().map(|id| (false, id)));
            }
            Step::Dequeue => {
                // One ns later, so that no insertion is a bypass (kept out of traces).
                now += linkshare_core::units::Duration(1);
                let d = k.dequeue(now).map(|d| d.pkt.id);
                let want = model.pop_first().map(|e| e.2);
                prop_assert_eq!(d, want, "dequeued packet");
                log.extend(d.map(|id| (true, id)));
            }
        }
        k.structure().check().map_err(TestCaseError::fail)?;
    }
    Ok(log)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// R7 and P7 at the scheduler level: drops are the largest bids (possibly the
    /// arrival), and LINK, TREE, HEAP and PERC, counted and uncounted, give the same log.
    #[test]
    fn largest_bids_are_dropped_identically_by_every_structure(
        s in steps(), limit in limit(), delta in prop_oneof![Just(0u64), 1u64..5000]
    ) {
        let link = run::<LinkedList<TestPacket>>(&s, limit, delta)?;
        prop_assert_eq!(&run::<SearchTree<TestPacket>>(&s, limit, delta)?, &link);
        prop_assert_eq!(&run::<DoubleHeap<TestPacket>>(&s, limit, delta)?, &link);
        prop_assert_eq!(&run::<PerConversation<TestPacket>>(&s, limit, delta)?, &link);
        prop_assert_eq!(&run::<FastPerc<TestPacket>>(&s, limit, delta)?, &link);
    }
}

#[test]
fn validation_reports_every_problem_with_a_fix() {
    let mut a = ClassSpec::new("a", None);
    a.max_packet = Some(Bytes(9000));
    let t = tree(
        Rate::from_mbit(10),
        vec![
            a,
            ClassSpec::new("p", None),
            ClassSpec::new("p1", Some("p")),
        ],
    );
    let delta = |class: &str| ConversationDelta {
        class: class.into(),
        delta: Bytes(1500),
        origin: None,
    };
    let config = KeshavConfig {
        limit: Limit::Bytes(Bytes(3000)),
        structure: Structure::Link,
        count_operations: true,
        delta: Bytes::ZERO,
        deltas: vec![delta("nope"), delta("p"), delta("a"), delta("a")],
        limit_origin: None,
    };
    let e = validate(&t, &config).expect_err("four problems");
    let text = e.to_string();
    assert_eq!(e.problems.len(), 4, "{text}");
    for needle in [
        "cannot hold one maximum-size packet of class `a` (9000 bytes)",
        "no class has that name",
        "`p` is not a leaf",
        "`a` is given an offset twice",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
    assert!(e.problems.iter().all(|p| !p.fix.is_empty()));
    let zero = KeshavConfig {
        limit: Limit::Packets(0),
        ..KeshavConfig::default()
    };
    let e = validate(&t, &zero).expect_err("zero buffer");
    assert!(e.to_string().contains("at least one packet"), "{e}");
    let fast = tree(Rate(1 << 57), vec![ClassSpec::new("x", None)]);
    let e = validate(&fast, &KeshavConfig::default()).expect_err("too fast");
    assert!(e.to_string().contains("exact round number"), "{e}");
}

/// The registry builds every structure, counted or not; the boxed discipline owns its
/// buffer; it reports the paper's operations and the round number's heap exchanges
/// unless it runs PERC uncounted (then the round number is uncounted too).
#[test]
fn builds_every_structure_from_its_config() {
    let t = five_leaves();
    for structure in Structure::ALL {
        for count_operations in [false, true] {
            let config = KeshavConfig {
                structure,
                count_operations,
                ..KeshavConfig::default()
            };
            let mut s = linkshare_core::sched::SchedulerConfig::Keshav(config)
                .build::<TestPacket>(&t)
                .expect("valid");
            assert_eq!(s.name(), "keshav");
            assert!(s.owns_buffer());
            let mut evicted = Vec::new();
            let verdict = s.enqueue(
                Instant::ZERO,
                ClassId(1),
                TestPacket { id: 0, len: 100 },
                &mut evicted,
            );
            assert!(matches!(verdict, Enqueue::Queued));
            let names: Vec<&str> = s.discipline_counters().iter().map(|c| c.name).collect();
            if structure == Structure::Perc && !count_operations {
                // Uncounted PERC: nothing is counted, the round number's tree included.
                assert!(names.is_empty(), "{names:?}");
            } else {
                assert!(
                    names.contains(&"insert_ops") && names.contains(&"round_heap_exchanges"),
                    "{structure:?}: {names:?}"
                );
            }
        }
    }
}
