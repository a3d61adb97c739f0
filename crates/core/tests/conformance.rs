//! Every discipline of `SchedulerKind::ALL` through the conformance harness
//! (`linkshare_core::testing::check`) on random trees, buffers and operation sequences,
//! with its default settings and with every setting that changes how it schedules
//! ([`variants`]).
//!
//! A discipline added to the registry is covered here automatically.

use std::cell::Cell;

use linkshare_core::buffer::{BufferConfig, Overflow};
use linkshare_core::curve::ServiceCurve;
use linkshare_core::ds::bids::Structure;
use linkshare_core::hierarchy::{ClassSpec, ClassTree, Limit, LinkSpec};
use linkshare_core::sched::cbq::{CbqParams, CbqSharing};
use linkshare_core::sched::hfsc::{HfscParams, VtRestart};
use linkshare_core::sched::keshav::{DEFAULT_LIMIT, KeshavConfig};
use linkshare_core::sched::{SchedulerConfig, SchedulerKind};
use linkshare_core::testing::{Op, Report, TestPacket, check};
use linkshare_core::units::{Bytes, Duration, Rate};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, FileFailurePersistence, TestCaseError, TestRunner};

/// Cases per discipline. The whole file runs in a few seconds in a debug build.
const CASES: u32 = 512;

/// Line rate of every generated tree.
const LINK: Rate = Rate::from_mbit(10);

/// Random parameters of one class; turned into a valid [`ClassSpec`] by [`specs`].
#[derive(Clone, Debug)]
struct ClassGen {
    /// Parent among the earlier classes of depth <= 2 (ignored in flat trees).
    parent: Option<Index>,
    weight: Option<u32>,
    priority: Option<u8>,
    quantum: Option<u64>,
    max_packet: Option<u64>,
    limit: Option<Limit>,
    /// `ceil = rate + (link − rate) · pct / 100`.
    ceil_pct: Option<u8>,
    burst: Option<u64>,
    /// Bit 0: `ls = rate`; bit 1: `rt = rate` (leaves only); bit 2: `ul = ceil`.
    curves: u8,
}

fn limit() -> impl Strategy<Value = Limit> {
    prop_oneof![
        (1u64..30).prop_map(Limit::Packets),
        (1500u64..40_000).prop_map(|b| Limit::Bytes(Bytes(b))),
    ]
}

fn class_gen() -> impl Strategy<Value = ClassGen> {
    (
        prop::option::of(any::<Index>()),
        prop::option::of(1u32..5),
        prop::option::of(0u8..=7),
        prop::option::of(64u64..3000),
        prop::option::of(200u64..=1500),
        prop::option::weighted(0.3, limit()),
        prop::option::of(0u8..=100),
        prop::option::of(1500u64..20_000),
        0u8..8,
    )
        .prop_map(
            |(parent, weight, priority, quantum, max_packet, limit, ceil_pct, burst, curves)| {
                ClassGen {
                    parent,
                    weight,
                    priority,
                    quantum,
                    max_packet,
                    limit,
                    ceil_pct,
                    burst,
                    curves,
                }
            },
        )
}

/// Valid class specs from random parameters: at most three levels below the link; each
/// class's guaranteed rate is an equal split of its parent's, so guarantees always fit.
fn specs(flat: bool, gens: &[ClassGen]) -> Vec<ClassSpec> {
    let n = gens.len();
    let mut parent: Vec<Option<usize>> = vec![None; n];
    let mut depth = vec![1u32; n];
    for i in 0..n {
        if flat {
            continue;
        }
        let candidates: Vec<usize> = (0..i).filter(|&j| depth[j] <= 2).collect();
        if let Some(pick) = gens[i].parent
            && !candidates.is_empty()
        {
            let j = candidates[pick.index(candidates.len())];
            parent[i] = Some(j);
            depth[i] = depth[j] + 1;
        }
    }
    let children = |p: Option<usize>| parent.iter().filter(|&&q| q == p).count() as u64;
    let mut rate = vec![Rate::ZERO; n];
    for i in 0..n {
        let parent_rate = parent[i].map_or(LINK, |p| rate[p]);
        rate[i] = Rate(parent_rate.0 / children(parent[i]));
    }
    (0..n)
        .map(|i| {
            let g = &gens[i];
            let parent_name = parent[i].map(|p| format!("c{p}"));
            let mut s = ClassSpec::new(&format!("c{i}"), parent_name.as_deref());
            let is_leaf = children(Some(i)) == 0;
            let ceil = g
                .ceil_pct
                .map(|pct| Rate(rate[i].0 + (LINK.0 - rate[i].0) * u64::from(pct) / 100));
            s.weight = g.weight;
            s.priority = g.priority;
            s.quantum = g.quantum.map(Bytes);
            s.max_packet = g.max_packet.map(Bytes);
            s.limit = g.limit;
            s.rate = Some(rate[i]);
            s.ceil = ceil;
            s.burst = g.burst.map(Bytes);
            s.ls = (g.curves & 1 != 0).then(|| ServiceCurve::linear(rate[i]));
            s.rt = (g.curves & 2 != 0 && is_leaf).then(|| ServiceCurve::linear(rate[i]));
            s.ul = (g.curves & 4 != 0).then(|| ServiceCurve::linear(ceil.unwrap_or(rate[i])));
            s
        })
        .collect()
}

fn buffer() -> impl Strategy<Value = BufferConfig> {
    let overflow = prop_oneof![
        Just(Overflow::TailDrop),
        Just(Overflow::PushOutLongest),
        Just(Overflow::PushOutSecond)
    ];
    let shared = prop::option::of(prop_oneof![
        (1u64..60).prop_map(Limit::Packets),
        (1500u64..80_000).prop_map(|b| Limit::Bytes(Bytes(b))),
    ]);
    (shared, overflow).prop_map(|(shared, overflow)| BufferConfig { shared, overflow })
}

/// One operation; `dequeues` in 10 are dequeues, so that some cases build long queues
/// and others keep them short.
fn op(dequeues: u32) -> impl Strategy<Value = Op> {
    prop_oneof![
        9 - dequeues => (any::<u32>(), 40u32..=1500)
            .prop_map(|(leaf, len)| Op::Enqueue { leaf, len }),
        dequeues => Just(Op::Dequeue),
        1 => (0u64..=5_000_000).prop_map(|ns| Op::Advance(Duration(ns))),
    ]
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    (1u32..=8).prop_flat_map(|dequeues| prop::collection::vec(op(dequeues), 0..300))
}

/// A random case: flat or hierarchical tree, buffer, operations.
fn case() -> impl Strategy<Value = (bool, Vec<ClassGen>, BufferConfig, Vec<Op>)> {
    (
        any::<bool>(),
        prop::collection::vec(class_gen(), 1..20),
        buffer(),
        ops(),
    )
}

fn tree_of(flat: bool, gens: &[ClassGen]) -> ClassTree {
    let link = LinkSpec {
        name: "link".into(),
        rate: LINK,
        origin: None,
    };
    ClassTree::build(link, specs(flat, gens)).expect("generated trees are valid")
}

/// What runs through the harness: every discipline with its defaults (`None`), and
/// the settings that change the scheduling of a discipline, each once.
fn variants() -> Vec<(SchedulerKind, Option<SchedulerConfig>)> {
    let mut all: Vec<_> = SchedulerKind::ALL.iter().map(|&k| (k, None)).collect();
    all.push((
        SchedulerKind::Cbq,
        Some(SchedulerConfig::Cbq(CbqParams {
            sharing: CbqSharing::Formal,
        })),
    ));
    all.push((
        SchedulerKind::Cbq,
        Some(SchedulerConfig::Cbq(CbqParams {
            sharing: CbqSharing::Ns2TopLevel,
        })),
    ));
    all.push((
        SchedulerKind::Hfsc,
        Some(SchedulerConfig::Hfsc(HfscParams {
            restart: VtRestart::Min,
        })),
    ));
    all
}

/// The settings `kind` runs a case with: `settings` if given, else its defaults, except
/// for a discipline that keeps its own buffer, which gets the case's shared limit (the
/// qdisc ignores it for such a discipline) and settings varied by the case.
fn config_for(
    kind: SchedulerKind,
    settings: Option<&SchedulerConfig>,
    buffer: &BufferConfig,
    gens: &[ClassGen],
) -> SchedulerConfig {
    if let Some(s) = settings {
        return s.clone();
    }
    match kind {
        // Every structure, counted, and PERC uncounted (the default).
        SchedulerKind::Keshav => SchedulerConfig::Keshav(KeshavConfig {
            limit: buffer.shared.unwrap_or(DEFAULT_LIMIT),
            structure: Structure::ALL
                .get(gens.len() % (Structure::ALL.len() + 1))
                .copied()
                .unwrap_or(Structure::Perc),
            count_operations: gens.len() % (Structure::ALL.len() + 1) < Structure::ALL.len(),
            delta: Bytes(gens.len() as u64 % 3 * 1500),
            deltas: Vec::new(),
            limit_origin: None,
        }),
        k => k.into(),
    }
}

/// The summed reports of one discipline's cases and how many cases it could be built
/// for, or the failure.
type Outcome = Result<(Report, u32), String>;

/// Runs the property for one discipline (with `settings`, or its defaults); returns
/// the summed reports and how many cases the discipline could be built for.
fn conform(kind: SchedulerKind, settings: Option<&SchedulerConfig>) -> Outcome {
    let label = match settings {
        Some(c) => format!("{kind} {c:?}"),
        None => kind.to_string(),
    };
    let config = Config {
        cases: CASES,
        source_file: Some(file!()),
        failure_persistence: Some(Box::new(FileFailurePersistence::SourceParallel(
            "proptest-regressions",
        ))),
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let total = Cell::new(Report::default());
    let built = Cell::new(0u32);
    runner
        .run(&case(), |(flat, gens, buffer, ops)| {
            let tree = tree_of(flat, &gens);
            let Ok(sched) = config_for(kind, settings, &buffer, &gens).build::<TestPacket>(&tree)
            else {
                return Ok(());
            };
            built.set(built.get() + 1);
            prop_assert_eq!(
                sched.owns_buffer(),
                kind.owns_buffer(),
                "{}: SchedulerKind::owns_buffer disagrees with the built discipline",
                kind
            );
            let r = check(&tree, sched, buffer, &ops)
                .map_err(|v| TestCaseError::fail(format!("{label}: {v}")))?;
            let t = total.get();
            total.set(Report {
                arrived: t.arrived + r.arrived,
                enqueued: t.enqueued + r.enqueued,
                dropped: t.dropped + r.dropped,
                dequeued: t.dequeued + r.dequeued,
                drained: t.drained + r.drained,
            });
            Ok(())
        })
        .map_err(|e| format!("{label}: {e}"))?;
    Ok((total.get(), built.get()))
}

#[test]
fn every_discipline_conforms() {
    let variants = variants();
    let results: Vec<(String, Outcome)> = std::thread::scope(|s| {
        let handles: Vec<_> = variants
            .iter()
            .map(|(kind, settings)| {
                let label = match settings {
                    Some(c) => format!("{kind} {c:?}"),
                    None => kind.to_string(),
                };
                (label, s.spawn(move || conform(*kind, settings.as_ref())))
            })
            .collect();
        handles
            .into_iter()
            .map(|(label, h)| {
                let outcome = h
                    .join()
                    .unwrap_or_else(|_| Err(format!("{label}: panicked")));
                (label, outcome)
            })
            .collect()
    });
    let mut failures = Vec::new();
    for (kind, result) in results {
        match result {
            Err(e) => failures.push(e),
            // Most generated trees must be accepted, or the property says little.
            Ok((_, built)) if built < CASES / 2 => {
                failures.push(format!("{kind}: built for only {built} of {CASES} trees"));
            }
            // The operations must have exercised every path: queueing, drops, dequeues
            // during the run and in the drain.
            Ok((r, _)) => {
                if r.enqueued == 0 || r.dropped == 0 || r.dequeued == r.drained || r.drained == 0 {
                    failures.push(format!("{kind}: the cases exercised too little: {r:?}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The harness itself must catch a broken discipline: a scheduler that serves a class
/// in LIFO order, one that claims work conservation but holds packets back, one that
/// loses packets, and a shaper that breaks its `At(t)` promise.
mod harness_catches {
    use linkshare_core::hierarchy::ClassId;
    use linkshare_core::sched::{Dequeued, Dropped, Enqueue, PollAt, Scheduler};
    use linkshare_core::units::Instant;

    use super::*;

    #[derive(Debug, Clone, Copy)]
    enum Bug {
        Lifo,
        Lazy,
        Loses,
        MovingTarget,
    }

    #[derive(Debug)]
    struct Broken {
        bug: Bug,
        queue: Vec<(ClassId, TestPacket)>,
        dequeues: u32,
    }

    impl Scheduler<TestPacket> for Broken {
        fn name(&self) -> &'static str {
            "broken"
        }
        fn is_work_conserving(&self) -> bool {
            !matches!(self.bug, Bug::MovingTarget)
        }
        fn enqueue(
            &mut self,
            _now: Instant,
            class: ClassId,
            pkt: TestPacket,
            _evicted: &mut Vec<Dropped<TestPacket>>,
        ) -> Enqueue<TestPacket> {
            if !matches!(self.bug, Bug::Loses) || self.queue.is_empty() {
                self.queue.push((class, pkt));
            }
            Enqueue::Queued
        }
        fn dequeue(&mut self, _now: Instant) -> Option<Dequeued<TestPacket>> {
            self.dequeues += 1;
            let (class, pkt) = match self.bug {
                Bug::Lifo => self.queue.pop()?,
                Bug::Lazy if self.dequeues % 2 == 0 => return None,
                Bug::MovingTarget => return None,
                Bug::Lazy | Bug::Loses => (!self.queue.is_empty()).then(|| self.queue.remove(0))?,
            };
            Some(Dequeued { pkt, class })
        }
        fn poll_at(&self, now: Instant) -> PollAt {
            match (self.queue.is_empty(), self.bug) {
                (true, _) => PollAt::Idle,
                (false, Bug::MovingTarget) => PollAt::At(now + Duration(1000)),
                (false, _) => PollAt::Now,
            }
        }
        fn remove_newest(&mut self, class: ClassId) -> Option<TestPacket> {
            let at = self.queue.iter().rposition(|(c, _)| *c == class)?;
            Some(self.queue.remove(at).1)
        }
        fn remove_behind_head(&mut self, class: ClassId) -> Option<TestPacket> {
            self.remove_newest(class)
        }
    }

    fn run(bug: Bug) -> String {
        let tree = ClassTree::flat(LINK, 1);
        let ops = [
            Op::Enqueue { leaf: 0, len: 100 },
            Op::Enqueue { leaf: 0, len: 200 },
            Op::Dequeue,
            Op::Advance(Duration(2000)),
            Op::Dequeue,
            Op::Dequeue,
        ];
        let sched = Broken {
            bug,
            queue: Vec::new(),
            dequeues: 0,
        };
        check(&tree, sched, BufferConfig::default(), &ops)
            .expect_err("the harness must reject a broken discipline")
            .to_string()
    }

    #[test]
    fn lifo_order() {
        let e = run(Bug::Lifo);
        assert!(
            e.contains("at op 2") && e.contains("oldest queued packet is Some(0)"),
            "{e}"
        );
    }

    #[test]
    fn idling_while_claiming_work_conservation() {
        let e = run(Bug::Lazy);
        assert!(
            e.contains("at op 4") && e.contains("poll_at said Now"),
            "{e}"
        );
    }

    #[test]
    fn lost_packets() {
        let e = run(Bug::Loses);
        assert!(
            e.contains("at op 2") && e.contains("Idle with 1 packets queued"),
            "{e}"
        );
    }

    #[test]
    fn broken_promise() {
        let e = run(Bug::MovingTarget);
        assert!(
            e.contains("at op 3") && e.contains("promised At(1000 ns)"),
            "{e}"
        );
    }
}
