//! Cost of one enqueue + dequeue pair, in nanoseconds, with `n` backlogged classes.
//!
//! Every class starts with [`PER_CLASS`] packets; each iteration enqueues one packet to a
//! class drawn from a cheap deterministic sequence and dequeues one packet, so the total
//! backlog stays constant. Groups:
//!
//! * `bare`: the discipline's own type (static dispatch), no counters;
//! * `boxed`: `Box<dyn Scheduler>` from the registry, as the simulator holds it;
//! * `qdisc`: the boxed discipline inside `Qdisc` (buffer checks and counters), to show
//!   the wrapper's cost.
//!
//! Run: `cargo bench -p linkshare-core --bench sched`.

use divan::Bencher;
use linkshare_core::buffer::BufferConfig;
use linkshare_core::hierarchy::{ClassId, ClassTree};
use linkshare_core::sched::drr::Drr;
use linkshare_core::sched::fifo::Fifo;
use linkshare_core::sched::hdrr::Hdrr;
use linkshare_core::sched::hls::Hls;
use linkshare_core::sched::prio::Prio;
use linkshare_core::sched::{Scheduler, SchedulerKind, build};
use linkshare_core::testing::TestPacket;
use linkshare_core::units::{Instant, Rate};
use linkshare_core::{Enqueue, Qdisc};

fn main() {
    divan::main();
}

/// Numbers of backlogged classes.
const CLASSES: &[usize] = &[1, 100, 1_000, 10_000, 100_000];

/// Packets queued per class at the start.
const PER_CLASS: u32 = 4;

/// Pairs run before measuring, per class (at least [`MIN_WARM_UP`] in all), so that
/// queues have grown to their working size and caches hold the working set.
const WARM_UP_PER_CLASS: usize = 8;

/// Least number of warm-up pairs.
const MIN_WARM_UP: usize = 100_000;

/// The class and length sequence: a 64-bit LCG, reduced to a range by multiply-shift
/// (no division on the measured path).
struct Sequence(u64);

impl Sequence {
    #[inline]
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0
    }

    /// A leaf id in `1..=n` and a length in `64..=1087` bytes.
    #[inline]
    fn arrival(&mut self, n: usize) -> (ClassId, u32) {
        let x = self.next();
        let class = 1 + ((u128::from(x) * n as u128) >> 64) as u32;
        (ClassId(class), 64 + ((x >> 20) & 1023) as u32)
    }
}

fn tree(n: usize) -> ClassTree {
    ClassTree::flat(Rate::from_gbit(10), n)
}

/// Fills every class with [`PER_CLASS`] packets through `enqueue`.
fn fill(n: usize, mut enqueue: impl FnMut(ClassId, TestPacket)) {
    let mut seq = Sequence(42);
    let mut id = 0;
    for c in 1..=n as u32 {
        for _ in 0..PER_CLASS {
            let (_, len) = seq.arrival(n);
            id += 1;
            enqueue(ClassId(c), TestPacket { id, len });
        }
    }
}

/// Runs the pair `f` enough times to reach steady state.
fn warm_up<O>(n: usize, mut f: impl FnMut() -> O) {
    for _ in 0..(n * WARM_UP_PER_CLASS).max(MIN_WARM_UP) {
        divan::black_box(f());
    }
}

/// Benchmarks pairs on a bare scheduler.
fn pairs<S: Scheduler<TestPacket>>(bencher: Bencher<'_, '_>, n: usize, mut s: S) {
    let now = Instant::ZERO;
    let mut evicted = Vec::new();
    fill(n, |c, p| {
        assert!(matches!(
            s.enqueue(now, c, p, &mut evicted),
            Enqueue::Queued
        ))
    });
    let mut seq = Sequence(7);
    let mut pair = move || {
        let (class, len) = seq.arrival(n);
        let verdict = s.enqueue(now, class, TestPacket { id: 0, len }, &mut evicted);
        debug_assert!(matches!(verdict, Enqueue::Queued));
        s.dequeue(now).map(|d| d.pkt.len)
    };
    warm_up(n, &mut pair);
    bencher.bench_local(pair);
}

mod bare {
    use super::*;

    #[divan::bench(args = CLASSES)]
    fn fifo(bencher: Bencher<'_, '_>, n: usize) {
        pairs(bencher, n, Fifo::new());
    }

    #[divan::bench(args = CLASSES)]
    fn prio(bencher: Bencher<'_, '_>, n: usize) {
        pairs(bencher, n, Prio::new(&tree(n)));
    }

    #[divan::bench(args = CLASSES)]
    fn drr(bencher: Bencher<'_, '_>, n: usize) {
        pairs(bencher, n, Drr::new(&tree(n)));
    }

    #[divan::bench(args = CLASSES)]
    fn hls(bencher: Bencher<'_, '_>, n: usize) {
        pairs(bencher, n, Hls::new(&tree(n)));
    }

    #[divan::bench(args = CLASSES)]
    fn hdrr(bencher: Bencher<'_, '_>, n: usize) {
        pairs(bencher, n, Hdrr::new(&tree(n)).expect("flat trees build"));
    }
}

mod boxed {
    use super::*;

    fn boxed(bencher: Bencher<'_, '_>, kind: SchedulerKind, n: usize) {
        pairs(
            bencher,
            n,
            build::<TestPacket>(kind, &tree(n)).expect("flat trees build"),
        );
    }

    #[divan::bench(args = CLASSES)]
    fn fifo(bencher: Bencher<'_, '_>, n: usize) {
        boxed(bencher, SchedulerKind::Fifo, n);
    }

    #[divan::bench(args = CLASSES)]
    fn prio(bencher: Bencher<'_, '_>, n: usize) {
        boxed(bencher, SchedulerKind::Prio, n);
    }

    #[divan::bench(args = CLASSES)]
    fn drr(bencher: Bencher<'_, '_>, n: usize) {
        boxed(bencher, SchedulerKind::Drr, n);
    }
}

mod qdisc {
    use super::*;

    fn through_qdisc(bencher: Bencher<'_, '_>, kind: SchedulerKind, n: usize) {
        let tree = tree(n);
        let sched = build::<TestPacket>(kind, &tree).expect("flat trees build");
        let mut q = Qdisc::new(&tree, sched, BufferConfig::default());
        let now = Instant::ZERO;
        fill(n, |c, p| assert!(q.enqueue(now, c, p, |_| {})));
        let mut seq = Sequence(7);
        let mut pair = move || {
            let (class, len) = seq.arrival(n);
            let queued = q.enqueue(now, class, TestPacket { id: 0, len }, |_| {});
            debug_assert!(queued);
            q.dequeue(now).map(|d| d.pkt.len)
        };
        warm_up(n, &mut pair);
        bencher.bench_local(pair);
    }

    #[divan::bench(args = CLASSES)]
    fn fifo(bencher: Bencher<'_, '_>, n: usize) {
        through_qdisc(bencher, SchedulerKind::Fifo, n);
    }

    #[divan::bench(args = CLASSES)]
    fn prio(bencher: Bencher<'_, '_>, n: usize) {
        through_qdisc(bencher, SchedulerKind::Prio, n);
    }

    #[divan::bench(args = CLASSES)]
    fn drr(bencher: Bencher<'_, '_>, n: usize) {
        through_qdisc(bencher, SchedulerKind::Drr, n);
    }
}
