//! The packet path allocates nothing in steady state: after warm-up (every queue has
//! reached its peak length once), enqueue + dequeue pairs through `Qdisc` and
//! `EgressPort` perform zero heap allocations, for every discipline of the registry.
//! JoBS, which serves at most 64 classes and keeps its own buffer, runs with 64 classes,
//! constraints of every kind and a buffer of its own; a test of its own drives its
//! controller through overload (drops of every kind) in both modes.
//!
//! Allocations are counted by a global allocator that wraps the system allocator and
//! counts, on the measuring thread only (other test threads may allocate freely), every
//! `alloc`, `alloc_zeroed` and `realloc`.

// A `GlobalAlloc` implementation is `unsafe` by definition: it forwards raw pointers to
// the system allocator. This test file is the only place in the core that needs it.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

use linkshare_core::Qdisc;
use linkshare_core::buffer::{BufferConfig, Overflow};
use linkshare_core::ds::bids::Structure;
use linkshare_core::hierarchy::{ClassId, ClassTree, Limit};
use linkshare_core::port::{EgressPort, Transmit};
use linkshare_core::sched::cbq::{CbqParams, CbqSharing};
use linkshare_core::sched::hfsc::{HfscParams, VtRestart};
use linkshare_core::sched::jobs::{self, Buffer, Constraints, JobsConfig, Mode};
use linkshare_core::sched::keshav::KeshavConfig;
use linkshare_core::sched::{Scheduler, SchedulerConfig, SchedulerKind};
use linkshare_core::testing::TestPacket;
use linkshare_core::units::{Bytes, Duration, Fraction, Instant, Rate, Ratio};

/// Allocations made by armed threads.
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// Whether allocations on this thread are counted. Const-initialised without a
    /// destructor, so reading it never allocates.
    static ARMED: Cell<bool> = const { Cell::new(false) };
}

struct Counting;

impl Counting {
    fn count() {
        if ARMED.with(Cell::get) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
    }
}

// SAFETY: every method forwards its arguments unchanged to `System`, which upholds the
// `GlobalAlloc` contract; counting has no effect on the memory handed out.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        Self::count();
        // SAFETY: forwarded from our caller, who upholds `alloc`'s contract.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        Self::count();
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        Self::count();
        // SAFETY: as above; `ptr` was allocated by `System` through this allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations `f` performs on this thread.
fn allocations_in(f: impl FnOnce()) -> u64 {
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    ARMED.with(|a| a.set(true));
    f();
    ARMED.with(|a| a.set(false));
    ALLOCATIONS.load(Ordering::Relaxed) - before
}

const CLASSES: usize = 1000;
const PAIRS: u32 = 100_000;
/// Largest backlog of one class during a run; the warm-up grows every queue to it.
const PEAK: u32 = 8;

/// The steady-state traffic: a deterministic class sequence (64-bit LCG) over
/// `classes` leaves that never lets a class hold more than [`PEAK`] packets, packet
/// lengths 64..=1500 B.
struct Traffic {
    state: u64,
    classes: usize,
    backlog: Vec<u32>,
    next_id: u64,
}

impl Traffic {
    fn new(classes: usize) -> Traffic {
        Traffic {
            state: 1,
            classes,
            backlog: vec![0; classes + 1],
            next_id: 0,
        }
    }

    fn next(&mut self) -> u64 {
        self.state = self
            .state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.state >> 33
    }

    /// The next arrival: a leaf (ids `1..=CLASSES`) below its peak, and a packet.
    fn arrival(&mut self) -> (ClassId, TestPacket) {
        let mut c = 1 + (self.next() % self.classes as u64) as usize;
        while self.backlog[c] >= PEAK {
            c = c % self.classes + 1;
        }
        self.backlog[c] += 1;
        let len = 64 + (self.next() % 1437) as u32;
        self.next_id += 1;
        (
            ClassId(c as u32),
            TestPacket {
                id: self.next_id,
                len,
            },
        )
    }

    fn departed(&mut self, class: ClassId) {
        self.backlog[class.index()] -= 1;
    }
}

type Boxed = Box<dyn Scheduler<TestPacket>>;

/// Grows every queue to [`PEAK`] (one class at a time, so that the total stays below any
/// shared limit), then leaves every class with `PEAK / 2` packets.
fn warm_up(q: &mut Qdisc<TestPacket, Boxed>, traffic: &mut Traffic) {
    let t = Instant::ZERO;
    let classes = traffic.classes as u32;
    for c in 1..=classes {
        for _ in 0..PEAK {
            traffic.next_id += 1;
            let pkt = TestPacket {
                id: traffic.next_id,
                len: 1500,
            };
            assert!(q.enqueue(t, ClassId(c), pkt, |d| panic!("warm-up drop {d:?}")));
        }
        for _ in 0..PEAK {
            assert_eq!(q.dequeue(t).map(|d| d.class), Some(ClassId(c)));
        }
    }
    for _ in 0..classes * PEAK / 2 {
        let (class, pkt) = traffic.arrival();
        assert!(q.enqueue(t, class, pkt, |d| panic!("warm-up drop {d:?}")));
    }
}

/// JoBS on `classes` leaves with a buffer of `packets` and constraints of every kind
/// that this traffic meets without drops (its waits stay far below a second).
fn jobs_config(classes: usize, packets: u32) -> JobsConfig {
    let mut config = JobsConfig {
        buffer: Buffer::Shared { packets },
        ..JobsConfig::default()
    };
    let two = Some(Ratio::integer(2));
    for i in 0..classes - 1 {
        let c = match i % 4 {
            0 => Constraints {
                delay_bound: Some(Duration::from_secs(1)),
                loss_bound: Some(Fraction::from_percent(1)),
                ..Constraints::default()
            },
            1 => Constraints {
                min_rate: Some(Rate::from_kbit(64)),
                delay_ratio: two,
                loss_ratio: two,
                ..Constraints::default()
            },
            _ => Constraints {
                delay_ratio: two,
                loss_ratio: two,
                ..Constraints::default()
            },
        };
        config.classes.insert(format!("c{i}"), c);
    }
    config
}

/// Every discipline with its default settings on a flat tree of [`CLASSES`] leaves, and
/// CBQ with formal link sharing and H-FSC with the `min` restart on the same tree;
/// Keshav FQ, which keeps its own buffer, once per structure (PERC counted and not), its buffer sized like
/// `buffer`'s shared limit (or to hold the warm-up's peak); JoBS, which serves at most
/// 64 classes and keeps its own buffer, on 64 leaves with constraints of every kind and
/// a buffer of the same size per class.
fn configs(buffer: BufferConfig) -> Vec<(SchedulerConfig, ClassTree)> {
    let tree = ClassTree::flat(Rate::from_gbit(1), CLASSES);
    let mut all: Vec<(SchedulerConfig, ClassTree)> = SchedulerKind::ALL
        .iter()
        .filter(|&&k| k != SchedulerKind::Keshav && k != SchedulerKind::Jobs)
        .map(|&k| (k.into(), tree.clone()))
        .collect();
    // The settings that change how a discipline schedules.
    all.push((
        SchedulerConfig::Cbq(CbqParams {
            sharing: CbqSharing::Formal,
        }),
        tree.clone(),
    ));
    all.push((
        SchedulerConfig::Cbq(CbqParams {
            sharing: CbqSharing::Ns2TopLevel,
        }),
        tree.clone(),
    ));
    all.push((
        SchedulerConfig::Hfsc(HfscParams {
            restart: VtRestart::Min,
        }),
        tree.clone(),
    ));
    let limit = buffer
        .shared
        .unwrap_or(Limit::Packets(u64::from(PEAK) * CLASSES as u64));
    for structure in Structure::ALL {
        for count_operations in [true, false] {
            if count_operations || structure == Structure::Perc {
                let keshav = SchedulerConfig::Keshav(KeshavConfig {
                    limit,
                    structure,
                    count_operations,
                    ..KeshavConfig::default()
                });
                all.push((keshav, tree.clone()));
            }
        }
    }
    let per_class = match limit {
        Limit::Packets(p) => p / CLASSES as u64,
        Limit::Bytes(_) => u64::from(PEAK),
    };
    let packets = (per_class * jobs::MAX_CLASSES as u64) as u32;
    all.push((
        SchedulerConfig::Jobs(jobs_config(jobs::MAX_CLASSES, packets)),
        ClassTree::flat(Rate::from_gbit(1), jobs::MAX_CLASSES),
    ));
    all
}

fn qdisc(
    config: &SchedulerConfig,
    tree: &ClassTree,
    buffer: BufferConfig,
) -> Qdisc<TestPacket, Boxed> {
    let sched = config
        .build::<TestPacket>(tree)
        .expect("every kind builds for a flat tree");
    Qdisc::new(tree, sched, buffer)
}

fn describe(config: &SchedulerConfig) -> String {
    match config {
        SchedulerConfig::Keshav(k) if !k.count_operations && k.structure == Structure::Perc => {
            "keshav/perc (uncounted)".to_owned()
        }
        SchedulerConfig::Keshav(k) => format!("keshav/{}", k.structure.name()),
        c => c.kind().to_string(),
    }
}

#[test]
fn qdisc_pairs_do_not_allocate() {
    for (config, tree) in configs(BufferConfig::default()) {
        let kind = describe(&config);
        let mut q = qdisc(&config, &tree, BufferConfig::default());
        let mut traffic = Traffic::new(tree.leaves().len());
        warm_up(&mut q, &mut traffic);
        let mut now = Instant::ZERO;
        let mut out = 0u32;
        let n = allocations_in(|| {
            for _ in 0..PAIRS {
                now.0 += 1000;
                let (class, pkt) = traffic.arrival();
                let queued = q.enqueue(now, class, pkt, |_| {});
                assert!(queued);
                if let Some(d) = q.dequeue(now) {
                    traffic.departed(d.class);
                    out += 1;
                }
            }
        });
        assert_eq!(
            n, 0,
            "{kind}: {n} allocations in {PAIRS} enqueue+dequeue pairs"
        );
        assert_eq!(
            out, PAIRS,
            "{kind}: a work-conserving discipline dequeues every time"
        );
    }
}

/// A full shared buffer with push-out: every arrival evicts a packet, through
/// `remove_newest` (or `remove_behind_head`) and the qdisc's longest-queue heap. For the
/// disciplines that keep their own buffer, their own buffer is full: every arrival costs
/// one packet chosen by their drop rule.
#[test]
fn push_out_does_not_allocate() {
    let shared = Limit::Packets(u64::from(PEAK / 2) * CLASSES as u64);
    for overflow in [Overflow::PushOutLongest, Overflow::PushOutSecond] {
        let buffer = BufferConfig {
            shared: Some(shared),
            overflow,
        };
        for (config, tree) in configs(buffer) {
            let kind = describe(&config);
            let mut q = qdisc(&config, &tree, buffer);
            let mut traffic = Traffic::new(tree.leaves().len());
            warm_up(&mut q, &mut traffic);
            let mut drops = 0u32;
            let n = allocations_in(|| {
                for _ in 0..PAIRS {
                    let (class, pkt) = traffic.arrival();
                    q.enqueue(Instant::ZERO, class, pkt, |d| {
                        traffic.departed(d.class);
                        drops += 1;
                    });
                }
            });
            assert_eq!(
                n, 0,
                "{kind}, {overflow:?}: {n} allocations in {PAIRS} arrivals to a full buffer"
            );
            assert_eq!(
                drops, PAIRS,
                "{kind}, {overflow:?}: every arrival to the full buffer costs one packet"
            );
        }
    }
}

#[test]
fn egress_port_does_not_allocate() {
    for (config, tree) in configs(BufferConfig::default()) {
        let kind = describe(&config);
        let mut q = qdisc(&config, &tree, BufferConfig::default());
        let mut traffic = Traffic::new(tree.leaves().len());
        warm_up(&mut q, &mut traffic);
        let mut port = EgressPort::new(q, tree.link_rate(), Bytes(24));
        let mut started = 0u32;
        let n = allocations_in(|| {
            for _ in 0..PAIRS {
                let now = port.busy_until();
                let (class, pkt) = traffic.arrival();
                assert!(port.enqueue(now, class, pkt, |_| {}));
                match port.transmit(now) {
                    Transmit::Started { pkt, .. } => {
                        traffic.departed(pkt.class);
                        started += 1;
                    }
                    other => panic!("{kind}: link free and backlogged, got {other:?}"),
                }
            }
        });
        assert_eq!(
            n, 0,
            "{kind}: {n} allocations in {PAIRS} arrivals and transmissions"
        );
        assert_eq!(started, PAIRS);
    }
}

/// Per-flow classes: a new flow taking the instance idle longest (retiring its flow),
/// the discipline's reset, the packet's passage and the instance emptying again, for
/// every discipline that runs per-flow templates.
#[test]
fn per_flow_create_and_retire_do_not_allocate() {
    use linkshare_core::hierarchy::{ClassSpec, LinkSpec, PerFlow};
    use linkshare_core::perflow::{Assigned, FlowTable};
    use linkshare_core::units::Duration;
    let mut web = ClassSpec::new("web", None);
    web.per_flow = Some(PerFlow {
        max_flows: 64,
        idle: Duration::ZERO,
    });
    let link = LinkSpec {
        name: "link".into(),
        rate: Rate::from_gbit(1),
        origin: None,
    };
    let tree = ClassTree::build(link, vec![web, ClassSpec::new("bulk", None)]).unwrap();
    for &kind in SchedulerKind::ALL.iter().filter(|k| k.resets_classes()) {
        let mut sched: Box<dyn Scheduler<TestPacket>> =
            linkshare_core::sched::build(kind, &tree).unwrap();
        let mut table = FlowTable::new(&tree);
        let mut evicted = Vec::with_capacity(4);
        let mut step = |key: u64| {
            let now = Instant(key);
            let Assigned::New(c) = table.classify(now, 0, key) else {
                panic!("{kind}: an instance idle for 0 is always free");
            };
            sched.reset_class(now, c);
            let _ = sched.enqueue(now, c, TestPacket { id: key, len: 100 }, &mut evicted);
            table.filled(c);
            let sent = sched.dequeue(now).expect("one packet queued");
            table.emptied(now, sent.class);
        };
        for key in 0..1000 {
            step(key);
        }
        let n = allocations_in(|| {
            for key in 1000..1000 + u64::from(PAIRS) {
                step(key);
            }
        });
        assert_eq!(
            n, 0,
            "{kind}: {n} allocations in {PAIRS} create + retire pairs"
        );
    }
}

/// JoBS's controller in overload, both modes: four classes with the paper's Table 1
/// constraints (a tight delay bound, so that delay-driven drops happen too) and a
/// 20-packet buffer, offered twice what the link serves. After every queue has held the
/// whole buffer once and a first run of the traffic, a second must not allocate.
#[test]
fn jobs_controller_in_overload_does_not_allocate() {
    let tree = ClassTree::flat(Rate::from_mbit(100), 4);
    let two = Some(Ratio::integer(2));
    let mut config = JobsConfig {
        buffer: Buffer::Shared { packets: 20 },
        ..JobsConfig::default()
    };
    config.classes.insert(
        "c0".into(),
        Constraints {
            delay_bound: Some(Duration::from_micros(300)),
            loss_bound: Some(Fraction::from_percent(10)),
            ..Constraints::default()
        },
    );
    for (name, min_rate) in [("c1", Some(Rate::from_mbit(35))), ("c2", None)] {
        config.classes.insert(
            name.into(),
            Constraints {
                min_rate,
                delay_ratio: two,
                loss_ratio: two,
                ..Constraints::default()
            },
        );
    }
    for mode in [Mode::REFERENCE, Mode::PAPER] {
        config.mode = mode;
        let sched: Boxed = SchedulerConfig::Jobs(config.clone())
            .build::<TestPacket>(&tree)
            .expect("Table 1 builds");
        let mut q = Qdisc::new(&tree, sched, BufferConfig::default());
        let mut now = Instant::ZERO;
        // Every class's queue at its peak (the whole buffer) once, then the traffic.
        for c in 1..=4 {
            for _ in 0..20 {
                assert!(q.enqueue(now, ClassId(c), TestPacket { id: 0, len: 64 }, |_| {}));
            }
            while q.dequeue(now).is_some() {}
        }
        let mut state = 7u64;
        let mut run = |q: &mut Qdisc<TestPacket, Boxed>, drops: &mut u64| {
            for _ in 0..PAIRS {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let class = ClassId(1 + (state >> 62) as u32);
                let len = 64 + ((state >> 20) % 1437) as u32;
                // Two arrivals per transmission of a mean packet (about 62 µs).
                now.0 += 31_000;
                q.enqueue(now, class, TestPacket { id: 0, len }, |_| *drops += 1);
                if (state >> 10) & 1 == 0 {
                    let _ = q.dequeue(now);
                }
            }
        };
        let mut drops = 0;
        run(&mut q, &mut drops);
        assert!(drops > 0, "{mode:?}: the warm-up must overflow");
        let mut drops = 0;
        let n = allocations_in(|| run(&mut q, &mut drops));
        assert_eq!(n, 0, "{mode:?}: {n} allocations in {PAIRS} arrivals");
        let delay_drops = q
            .counters(ClassId(1))
            .dropped(linkshare_core::DropReason::DelayBound);
        assert!(delay_drops.packets > 0, "{mode:?}: no delay-driven drop");
    }
}
