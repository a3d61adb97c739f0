//! JoBS: validation, the conformance harness on random constraint sets, and the spec's
//! property tests (§7.2) over random operation sequences in both modes, each checked
//! against an independent model of the queues, busy periods and loss budgets:
//!
//! * P1: after every arrival the rates add up to the link rate exactly, and a class with
//!   nothing queued holds no rate (unless a delay-driven drop emptied it just now);
//! * P3: every byte is accounted for: the loss rate JoBS reports for the busy period is
//!   the model's dropped / arrived; the shared buffer never holds more than its size;
//! * P4: no drop without cause: a shared-limit drop only when the buffer was full, a
//!   class-limit drop only when the class's buffer was, a delay-driven drop only from a
//!   class with a delay bound;
//! * P5, P8: a loss bound is exceeded only by a drop on a full buffer, and each time it
//!   is, the relaxation is counted; a delay-driven drop never exceeds a loss bound, and a
//!   relaxed delay bound is counted only when the class's loss bound forbade the next drop;
//! * P6: with throughput bounds that fit the link (and no delay bounds competing for
//!   rate), every backlogged class has at least its bound after every arrival;
//! * P9: the same operations give the same decisions.
//!
//! P2, P7 and P10–P12 need a link that serves at its rate: they are in the simulator's
//! tests (`crates/sim/tests/jobs.rs`). A last test drives a class across the counter
//! sizes at which the reference implementation's arithmetic wrapped.

use std::collections::VecDeque;
use std::num::NonZeroU32;

use linkshare_core::buffer::BufferConfig;
use linkshare_core::hierarchy::{ClassId, ClassTree};
use linkshare_core::sched::jobs::{Buffer, Constraints, Jobs, JobsConfig, Mode, ReferenceBugs};
use linkshare_core::sched::{
    DisciplineCounter, DropReason, Dropped, Enqueue, Scheduler, SchedulerConfig, SchedulerKind,
};
use linkshare_core::testing::{Op, TestPacket, check};
use linkshare_core::units::{Bytes, Duration, Fraction, Instant, Rate, Ratio};
use proptest::prelude::*;

const LINK: Rate = Rate::from_mbit(10);

// ---------------------------------------------------------------------------------------
// Validation

fn problems(tree: &ClassTree, config: &JobsConfig) -> Vec<(String, &'static str, String)> {
    match SchedulerConfig::Jobs(config.clone()).validate(tree) {
        Ok(()) => Vec::new(),
        Err(e) => {
            assert_eq!(e.kind, SchedulerKind::Jobs);
            e.problems
                .into_iter()
                .map(|p| (p.class, p.field, format!("{}; {}", p.problem, p.fix)))
                .collect()
        }
    }
}

fn one(name: &str, c: Constraints) -> JobsConfig {
    let mut config = JobsConfig::default();
    config.classes.insert(name.into(), c);
    config
}

#[test]
fn every_invalid_setting_is_reported_with_its_fix() {
    let tree = ClassTree::flat(LINK, 3);
    let c = Constraints::default;
    let cases: Vec<(JobsConfig, &str, &str, &str)> = vec![
        (
            one("nope", c()),
            "nope",
            "class",
            "has no class of that name",
        ),
        (
            one(
                "c0",
                Constraints {
                    delay_bound: Some(Duration::ZERO),
                    ..c()
                },
            ),
            "c0",
            "delay_bound",
            "a delay bound of 0 cannot be met",
        ),
        (
            // 1500 B at 10 Mbit/s take 1.2 ms.
            one(
                "c0",
                Constraints {
                    delay_bound: Some(Duration::from_millis(1)),
                    ..c()
                },
            ),
            "c0",
            "delay_bound",
            "give at least 1.2ms",
        ),
        (
            one(
                "c0",
                Constraints {
                    loss_bound: Some(Fraction(Fraction::PPB + 1)),
                    ..c()
                },
            ),
            "c0",
            "loss_bound",
            "more than 100%",
        ),
        (
            one(
                "c1",
                Constraints {
                    min_rate: Some(Rate::ZERO),
                    ..c()
                },
            ),
            "c1",
            "min_rate",
            "bounds nothing",
        ),
        (
            one(
                "c1",
                Constraints {
                    min_rate: Some(Rate::from_mbit(11)),
                    ..c()
                },
            ),
            "c1",
            "min_rate",
            "above the link rate 10mbit",
        ),
        (
            one(
                "c1",
                Constraints {
                    delay_ratio: Some(Ratio::integer(1)),
                    ..c()
                },
            ),
            "c1",
            "delay_ratio",
            "not above 1",
        ),
        (
            one(
                "c1",
                Constraints {
                    loss_ratio: Ratio::new(1, 2),
                    ..c()
                },
            ),
            "c1",
            "loss_ratio",
            "not above 1",
        ),
        (
            one(
                "c2",
                Constraints {
                    delay_ratio: Some(Ratio::integer(2)),
                    ..c()
                },
            ),
            "c2",
            "delay_ratio",
            "is the last leaf",
        ),
        (
            JobsConfig {
                buffer: Buffer::Shared { packets: 0 },
                ..JobsConfig::default()
            },
            "link",
            "buffer",
            "holds nothing",
        ),
        (
            JobsConfig {
                mode: Mode::Paper {
                    gain: Fraction::ZERO,
                },
                ..JobsConfig::default()
            },
            "link",
            "gain",
            "outside (0, 1]",
        ),
        (
            one(
                "c0",
                Constraints {
                    loss_ratio: Some(Ratio::integer(1 << 25)),
                    delay_ratio: None,
                    ..c()
                },
            )
            .with(
                "c1",
                Constraints {
                    loss_ratio: Some(Ratio::integer(1 << 25)),
                    ..c()
                },
            ),
            "c0",
            "loss_ratio",
            "multiply to more than",
        ),
    ];
    for (config, class, field, text) in cases {
        let ps = problems(&tree, &config);
        assert!(
            ps.iter()
                .any(|(c, f, p)| c == class && *f == field && p.contains(text)),
            "want `{class}`.{field}: {text}; got {ps:?}"
        );
    }
    // Separate buffers cannot give loss guarantees.
    let mut config = one(
        "c0",
        Constraints {
            loss_bound: Some(Fraction::from_percent(1)),
            loss_ratio: Some(Ratio::integer(2)),
            ..c()
        },
    );
    config.buffer = Buffer::Separate { packets: 10 };
    let ps = problems(&tree, &config);
    assert_eq!(ps.len(), 2, "{ps:?}");
    assert!(
        ps.iter().all(|(_, _, p)| p.contains("shared buffer")),
        "{ps:?}"
    );
    // Throughput bounds adding up to more than the link: reported at the class that
    // crosses it.
    let config = one(
        "c0",
        Constraints {
            min_rate: Some(Rate::from_mbit(6)),
            ..c()
        },
    )
    .with(
        "c1",
        Constraints {
            min_rate: Some(Rate::from_mbit(5)),
            ..c()
        },
    );
    let ps = problems(&tree, &config);
    assert_eq!(ps.len(), 1, "{ps:?}");
    assert_eq!((ps[0].0.as_str(), ps[0].1), ("c1", "min_rate"));
    assert!(
        ps[0].2.contains("add up to more than the link rate"),
        "{ps:?}"
    );
    // Every problem at once.
    let config = one(
        "c2",
        Constraints {
            delay_ratio: Some(Ratio::integer(2)),
            ..c()
        },
    )
    .with("zz", c());
    assert_eq!(problems(&tree, &config).len(), 2);
}

#[test]
fn leaves_interior_classes_and_the_class_limit() {
    // Interior classes are ignored; constraints on one are refused.
    let mut specs = vec![linkshare_core::hierarchy::ClassSpec::new("p", None)];
    for i in 0..3 {
        specs.push(linkshare_core::hierarchy::ClassSpec::new(
            &format!("l{i}"),
            Some("p"),
        ));
    }
    let tree = linkshare_core::testing::tree(LINK, specs);
    assert!(problems(&tree, &JobsConfig::default()).is_empty());
    let ps = problems(&tree, &one("p", Constraints::default()));
    assert_eq!(ps[0].1, "class");
    assert!(ps[0].2.contains("serves only leaves"), "{ps:?}");
    // At most 64 classes.
    assert!(problems(&ClassTree::flat(LINK, 64), &JobsConfig::default()).is_empty());
    let ps = problems(&ClassTree::flat(LINK, 65), &JobsConfig::default());
    assert_eq!((ps[0].0.as_str(), ps[0].1), ("c64", "name"));
    assert!(ps[0].2.contains("at most 64 classes"), "{ps:?}");
}

/// Builder sugar for the tests.
trait With {
    fn with(self, name: &str, c: Constraints) -> Self;
}

impl With for JobsConfig {
    fn with(mut self, name: &str, c: Constraints) -> JobsConfig {
        self.classes.insert(name.into(), c);
        self
    }
}

// ---------------------------------------------------------------------------------------
// Random settings and operations

/// Random constraints for `n` classes on [`LINK`] (throughput bounds of up to half the
/// link, scaled down to add up to at most the link; a ratio on the last class is left
/// out), a mode, a buffer and a sampling interval.
fn config(n: usize) -> impl Strategy<Value = JobsConfig> {
    let class = (
        prop::option::weighted(0.3, 2u64..50),
        prop::option::weighted(0.3, 0u32..=30),
        prop::option::weighted(0.3, 1u64..=100),
        prop::option::weighted(0.5, prop::sample::select(vec![(3, 2), (2, 1), (4, 1)])),
        prop::option::weighted(0.5, prop::sample::select(vec![(3, 2), (2, 1), (4, 1)])),
    );
    let mode = prop_oneof![
        (any::<bool>(), any::<bool>()).prop_map(|(global_drop_stop, first_class_without_donor)| {
            Mode::Reference(ReferenceBugs {
                global_drop_stop,
                first_class_without_donor,
            })
        }),
        prop::sample::select(vec![1, 2, 4]).prop_map(|q| Mode::Paper {
            gain: Fraction(Fraction::PPB / q)
        }),
    ];
    (
        prop::collection::vec(class, n),
        mode,
        any::<bool>(),
        1u32..40,
        1u32..5,
    )
        .prop_map(move |(classes, mode, separate, packets, sampling)| {
            let mut config = JobsConfig {
                mode,
                buffer: if separate {
                    Buffer::Separate {
                        packets: packets / 4 + 1,
                    }
                } else {
                    Buffer::Shared { packets }
                },
                sampling: NonZeroU32::new(sampling).expect("positive"),
                ..JobsConfig::default()
            };
            for (i, (delay, loss, share, dr, lr)) in classes.into_iter().enumerate() {
                let last = i + 1 == n;
                let ratio =
                    |r: Option<(u32, u32)>| r.filter(|_| !last).and_then(|(a, b)| Ratio::new(a, b));
                let c = Constraints {
                    delay_bound: delay.map(Duration::from_millis),
                    loss_bound: loss.filter(|_| !separate).map(Fraction::from_percent),
                    min_rate: share.map(|s| Rate(LINK.0 * s / 200)),
                    delay_ratio: ratio(dr),
                    loss_ratio: ratio(lr).filter(|_| !separate),
                };
                config.classes.insert(format!("c{i}"), c);
            }
            // Scale the throughput bounds down to fit the link if they do not.
            let sum: u64 = config
                .classes
                .values()
                .filter_map(|c| c.min_rate)
                .map(|r| r.0)
                .sum();
            if sum > LINK.0 {
                for c in config.classes.values_mut() {
                    c.min_rate = c.min_rate.map(|r| Rate(r.0 * LINK.0 / sum));
                }
            }
            config
        })
}

#[derive(Clone, Copy, Debug)]
enum Step {
    Arrive { class: u32, len: u32 },
    Dequeue,
    Advance(u64),
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    let step = prop_oneof![
        6 => (any::<u32>(), 40u32..=1500).prop_map(|(class, len)| Step::Arrive { class, len }),
        4 => Just(Step::Dequeue),
        2 => (0u64..3_000_000).prop_map(Step::Advance),
    ];
    prop::collection::vec(step, 1..400)
}

fn case() -> impl Strategy<Value = (usize, JobsConfig, Vec<Step>)> {
    (1usize..=6).prop_flat_map(|n| (Just(n), config(n), steps()))
}

// ---------------------------------------------------------------------------------------
// The model

/// What the model knows of one class: its queue (id, length) and the bytes arrived and
/// dropped in the current busy period.
#[derive(Clone, Debug, Default)]
struct ModelClass {
    queue: VecDeque<(u64, u32)>,
    arrived: u64,
    dropped: u64,
}

impl ModelClass {
    fn exceeds(&self, bound: Fraction) -> bool {
        u128::from(self.dropped) * u128::from(Fraction::PPB)
            > u128::from(bound.ppb()) * u128::from(self.arrived)
    }
}

/// The counter `name` of leaf `class` in `counters`.
fn counter(counters: &[DisciplineCounter], class: ClassId, name: &str) -> u64 {
    counters
        .iter()
        .find(|c| c.class == Some(class) && c.name == name)
        .map_or_else(|| panic!("no counter {name}"), |c| c.value)
}

/// Everything a run decided, for the determinism check.
type Trace = Vec<(u64, bool, Vec<(u32, u64)>, Vec<u64>)>;

/// What the runs exercised: drops by reason, and the relaxation counters' totals.
#[derive(Clone, Copy, Debug, Default)]
struct Exercised {
    shared: u64,
    class_limit: u64,
    delay: u64,
    relaxed: [u64; 5],
}

const RELAXATIONS: [&str; 5] = [
    "relaxed_loss_bound",
    "relaxed_delay_bound",
    "relaxed_min_rate",
    "relaxed_delay_ratio",
    "relaxed_loss_ratio",
];

/// Runs `steps` through JoBS and the model, checking P1, P3–P6 and P8 after every step;
/// returns the decisions and adds what was exercised to `seen`.
fn run(
    n: usize,
    config: &JobsConfig,
    steps: &[Step],
    seen: &mut Exercised,
) -> Result<Trace, TestCaseError> {
    let tree = ClassTree::flat(LINK, n);
    let mut s: Jobs<TestPacket> = Jobs::new(&tree, config).expect("generated settings are valid");
    let cons: Vec<Constraints> = (0..n)
        .map(|i| {
            config
                .classes
                .get(&format!("c{i}"))
                .copied()
                .unwrap_or_default()
        })
        .collect();
    let rate_bounds_fit = cons.iter().all(|c| c.delay_bound.is_none());
    let mut model = vec![ModelClass::default(); n];
    let mut now = 0u64;
    let mut next_id = 0u64;
    let mut trace = Trace::new();
    let mut evicted: Vec<Dropped<TestPacket>> = Vec::new();
    let mut counters = s.discipline_counters();
    for step in steps {
        match *step {
            Step::Advance(d) => now += d,
            Step::Dequeue => {
                let out = s.dequeue(Instant(now));
                let queued = model.iter().any(|m| !m.queue.is_empty());
                prop_assert_eq!(out.is_some(), queued, "work-conserving");
                if let Some(d) = out {
                    let k = (d.class.0 - 1) as usize;
                    let head = model[k].queue.pop_front();
                    prop_assert_eq!(head.map(|h| h.0), Some(d.pkt.id), "FIFO per class");
                    trace.push((d.pkt.id, true, vec![], vec![]));
                }
            }
            Step::Arrive { class, len } => {
                let i = class as usize % n;
                let id = next_id;
                next_id += 1;
                if model.iter().all(|m| m.queue.is_empty()) {
                    for m in &mut model {
                        m.arrived = 0;
                        m.dropped = 0;
                    }
                }
                let total: usize = model.iter().map(|m| m.queue.len()).sum();
                let full = match config.buffer {
                    Buffer::Shared { packets } => total >= packets as usize,
                    Buffer::Separate { packets } => model[i].queue.len() >= packets as usize,
                };
                model[i].arrived += u64::from(len);
                model[i].queue.push_back((id, len));
                let before = counters;
                let verdict = s.enqueue(
                    Instant(now),
                    ClassId(i as u32 + 1),
                    TestPacket { id, len },
                    &mut evicted,
                );
                counters = s.discipline_counters();
                let mut drops: Vec<(usize, u64, u32, DropReason)> = Vec::new();
                let queued = match verdict {
                    Enqueue::Queued => true,
                    Enqueue::Dropped(d) => {
                        prop_assert_eq!(d.class, ClassId(i as u32 + 1));
                        drops.push((i, d.pkt.id, d.pkt.len, d.reason));
                        false
                    }
                };
                for d in evicted.drain(..) {
                    drops.push(((d.class.0 - 1) as usize, d.pkt.id, d.pkt.len, d.reason));
                }
                let mut emptied_by_delay = 0u64;
                let mut exceeded = vec![0u64; n];
                for &(k, id, len, reason) in &drops {
                    // Only tail drops: the victim is its class's newest packet.
                    let tail = model[k].queue.pop_back();
                    prop_assert_eq!(tail, Some((id, len)), "tail drop");
                    model[k].dropped += u64::from(len);
                    match reason {
                        DropReason::SharedLimit => seen.shared += 1,
                        DropReason::ClassLimit => seen.class_limit += 1,
                        _ => seen.delay += 1,
                    }
                    match reason {
                        DropReason::SharedLimit => {
                            prop_assert!(full, "P4: shared drop, buffer not full")
                        }
                        DropReason::ClassLimit => {
                            prop_assert!(full && k == i, "P4: class-limit drop")
                        }
                        DropReason::DelayBound => {
                            prop_assert!(cons[k].delay_bound.is_some(), "P4: delay drop, no bound");
                            if model[k].queue.is_empty() {
                                emptied_by_delay |= 1 << k;
                            }
                        }
                        r => prop_assert!(false, "unexpected reason {:?}", r),
                    }
                    if let Some(b) = cons[k].loss_bound
                        && model[k].exceeds(b)
                    {
                        prop_assert_eq!(
                            reason,
                            DropReason::SharedLimit,
                            "P5: only overflow exceeds"
                        );
                        exceeded[k] += 1;
                    }
                }
                let delay_drops = drops
                    .iter()
                    .filter(|d| d.3 == DropReason::DelayBound)
                    .count();
                prop_assert!(
                    drops.len() <= usize::from(full) + delay_drops,
                    "one packet per overflow"
                );
                // P3: the loss rate JoBS reports is the model's.
                for k in 0..n {
                    let leaf = ClassId(k as u32 + 1);
                    let m = &model[k];
                    let ppb = if m.arrived == 0 {
                        0
                    } else {
                        (u128::from(m.dropped) * u128::from(Fraction::PPB) / u128::from(m.arrived))
                            as u64
                    };
                    prop_assert_eq!(counter(&counters, leaf, "loss_ppb"), ppb, "P3 class {}", k);
                    // P5, P8: every drop beyond a loss bound counted, no other counted.
                    let counted = counter(&counters, leaf, "relaxed_loss_bound")
                        - counter(&before, leaf, "relaxed_loss_bound");
                    prop_assert_eq!(counted, exceeded[k], "P8 class {}", k);
                    // P8: a relaxed delay bound only when the loss bound forbade the next
                    // drop (with the reference's global stop: some class's did).
                    let relaxed = counter(&counters, leaf, "relaxed_delay_bound")
                        > counter(&before, leaf, "relaxed_delay_bound");
                    let global = matches!(config.mode, Mode::Reference(b) if b.global_drop_stop);
                    if relaxed && !global {
                        let bound = cons[k].loss_bound;
                        prop_assert!(
                            bound.is_some(),
                            "P8: delay bound relaxed without loss bound"
                        );
                        let tail = m.queue.back().map_or(0, |t| u64::from(t.1));
                        let next = ModelClass {
                            dropped: m.dropped + tail,
                            ..m.clone()
                        };
                        prop_assert!(next.exceeds(bound.unwrap()), "P8: budget left");
                    }
                }
                if let Buffer::Shared { packets } = config.buffer {
                    let total: usize = model.iter().map(|m| m.queue.len()).sum();
                    prop_assert!(total <= packets as usize, "P3: buffer overfull");
                }
                // P1: the rates add up to the link rate; empty classes hold none.
                let rates: Vec<u64> = (0..n).map(|k| s.rate_of(ClassId(k as u32 + 1))).collect();
                if model.iter().any(|m| !m.queue.is_empty()) || emptied_by_delay != 0 {
                    prop_assert_eq!(rates.iter().sum::<u64>(), LINK.0, "P1 {:?}", rates);
                }
                for k in 0..n {
                    if model[k].queue.is_empty() && emptied_by_delay & 1 << k == 0 {
                        prop_assert_eq!(rates[k], 0, "P1: empty class {} holds rate", k);
                    }
                }
                // P6: throughput bounds that fit are held.
                if rate_bounds_fit {
                    for k in 0..n {
                        if let Some(mu) = cons[k].min_rate
                            && !model[k].queue.is_empty()
                        {
                            prop_assert!(
                                rates[k] >= mu.0,
                                "P6 class {}: {} < {}",
                                k,
                                rates[k],
                                mu.0
                            );
                        }
                    }
                }
                let ids = drops.iter().map(|d| (d.0 as u32, d.1)).collect();
                trace.push((id, queued, ids, rates));
            }
        }
    }
    for (total, name) in seen.relaxed.iter_mut().zip(RELAXATIONS) {
        *total += counters
            .iter()
            .filter(|c| c.name == name)
            .map(|c| c.value)
            .sum::<u64>();
    }
    Ok(trace)
}

/// P1, P3–P6, P8 on random settings in both modes, and P9: a second run decides the
/// same. The cases must exercise every kind of drop and every relaxation.
#[test]
fn properties() {
    let config = ProptestConfig {
        cases: 400,
        ..ProptestConfig::default()
    };
    let mut runner = proptest::test_runner::TestRunner::new(config);
    let seen = std::cell::Cell::new(Exercised::default());
    runner
        .run(&case(), |(n, config, steps)| {
            let mut s = seen.get();
            let first = run(n, &config, &steps, &mut s)?;
            let second = run(n, &config, &steps, &mut Exercised::default())?;
            prop_assert_eq!(first, second, "P9: deterministic");
            seen.set(s);
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let seen = seen.get();
    assert!(
        seen.shared > 0
            && seen.class_limit > 0
            && seen.delay > 0
            && seen.relaxed.iter().all(|&r| r > 0),
        "the cases exercised too little: {seen:?}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// The conformance harness (FIFO per class, conservation of the qdisc's counters,
    /// honest `poll_at`, work conservation, nothing lost) on random constraint sets: the
    /// registry's run uses the default settings only.
    #[test]
    fn conforms((n, config, steps) in case()) {
        let tree = ClassTree::flat(LINK, n);
        let sched = SchedulerConfig::Jobs(config).build::<TestPacket>(&tree).expect("valid");
        let ops: Vec<Op> = steps
            .iter()
            .map(|s| match *s {
                Step::Arrive { class, len } => Op::Enqueue { leaf: class, len },
                Step::Dequeue => Op::Dequeue,
                Step::Advance(d) => Op::Advance(Duration(d)),
            })
            .collect();
        check(&tree, sched, BufferConfig::default(), &ops).map_err(|v| TestCaseError::fail(v.to_string()))?;
    }
}

// ---------------------------------------------------------------------------------------
// Overflow hazards

/// The reference implementation's arithmetic wrapped at 2³¹ bytes of a class's scaled
/// promised output, at 2³² bytes dropped in its loss shift and admitted in its mean
/// packet size, and in its gain above 16.8 Mbit/s. Drive one busy period of a 100
/// Gbit/s link far past all of them with 256 MiB packets (the largest a `u32` length
/// allows comfortably), overloaded twice over, and check every invariant on the way: the
/// rates add up to the link and stay in range, the loss rates match exact counts, and
/// the loss bound's budget is honoured.
#[test]
fn counters_cross_the_old_wrap_points() {
    let link = Rate::from_gbit(100);
    let len: u32 = 1 << 28;
    let two = Some(Ratio::integer(2));
    let config = JobsConfig {
        buffer: Buffer::Shared { packets: 8 },
        ..JobsConfig::default()
    }
    .with(
        "c0",
        Constraints {
            delay_bound: Some(Duration::from_secs(60)),
            loss_bound: Some(Fraction::from_percent(50)),
            ..Constraints::default()
        },
    )
    .with(
        "c1",
        Constraints {
            min_rate: Some(Rate::from_gbit(10)),
            delay_ratio: two,
            loss_ratio: two,
            ..Constraints::default()
        },
    )
    .with(
        "c2",
        Constraints {
            delay_ratio: two,
            loss_ratio: two,
            ..Constraints::default()
        },
    );
    for mode in [Mode::REFERENCE, Mode::PAPER] {
        let config = JobsConfig {
            mode,
            ..config.clone()
        };
        let tree = ClassTree::flat(link, 4);
        let mut s: Jobs<TestPacket> = Jobs::new(&tree, &config).unwrap();
        let tx = link.tx_time(Bytes(u64::from(len))).0;
        let (mut arrived, mut dropped) = ([0u64; 4], [0u64; 4]);
        let mut evicted = Vec::new();
        let mut now = 0u64;
        let mut served = 0u64;
        for k in 0..400u64 {
            // Two arrivals per transmission time: the buffer stays full.
            let class = (k * 7 % 4) as usize;
            arrived[class] += u64::from(len);
            let leaf = ClassId(class as u32 + 1);
            if let Enqueue::Dropped(d) =
                s.enqueue(Instant(now), leaf, TestPacket { id: k, len }, &mut evicted)
            {
                dropped[(d.class.0 - 1) as usize] += u64::from(d.pkt.len);
            }
            for d in evicted.drain(..) {
                dropped[(d.class.0 - 1) as usize] += u64::from(d.pkt.len);
            }
            let rates: Vec<u64> = (1..=4).map(|c| s.rate_of(ClassId(c))).collect();
            assert_eq!(rates.iter().sum::<u64>(), link.0, "{mode:?} {k}: {rates:?}");
            now += tx / 2;
            if k % 2 == 1 && s.dequeue(Instant(now)).is_some() {
                served += u64::from(len);
            }
            let counters = s.discipline_counters();
            let busy = counters.iter().find(|c| c.name == "busy_periods").unwrap();
            assert_eq!((busy.class, busy.value), (None, 1), "one busy period");
            for c in 0..4 {
                let want =
                    (u128::from(dropped[c]) * 1_000_000_000 / u128::from(arrived[c].max(1))) as u64;
                assert_eq!(counter(&counters, ClassId(c as u32 + 1), "loss_ppb"), want);
            }
            assert!(
                dropped[0] * 2 <= arrived[0]
                    || counter(&counters, ClassId(1), "relaxed_loss_bound") > 0,
                "{mode:?}: class 1 over its loss bound without a relaxation"
            );
        }
        assert!(arrived.iter().all(|&a| a > 1 << 34), "{arrived:?}");
        assert!(
            dropped.iter().filter(|&&d| d > 1 << 32).count() >= 2,
            "{dropped:?}"
        );
        assert!(served > 1 << 34);
    }
}
