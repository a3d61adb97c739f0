//! H-FSC's cost on the workloads of the H-FSC paper's Fig. 13 (§VI-C): nanoseconds per
//! enqueue, per dequeue and per packet forwarded.
//!
//! # Workloads
//!
//! A 1 Gbit/s link shared equally by `n` sessions (leaves), each with
//! `rt = ls = linear(C / n)` as in the paper (one curve per class), under hierarchies of
//! one to three levels; an interior class's `ls` is the sum of its leaves' rates. Each
//! session is a two-state Markov source (ON/OFF, same mean number of steps in each
//! state: each step the source stays with probability `1 - 1/BURST`). An ON step
//! sends one packet of 64–1500 bytes (uniform) at the peak rate `2 · 0.95 · C / n`, so
//! it lasts the packet's transmission time at that rate; an OFF step lasts the mean
//! packet's. The long-run rate of every session is thus 0.95 of its reserved rate. All
//! arrivals come from a small deterministic PRNG and are generated before measuring.
//!
//! The scheduler is driven directly, as behind a busy link: the link sends the packet
//! H-FSC hands it, is busy for its transmission time, and arrivals up to the instant it
//! becomes free are enqueued at their own arrival instants before the next dequeue
//! (an idle link waits for the next arrival). Time never goes backwards.
//!
//! # Benchmarks
//!
//! * `packet`: one packet forwarded — the arrivals due before the next dequeue, then the
//!   dequeue. In the long run there is one arrival per departure, so this is the
//!   paper's "average per packet queueing overhead" (total work divided by packets).
//!   Median over samples of [`PACKETS_PER_SAMPLE`] packets.
//! * `enqueue`, `dequeue`: one operation of that kind per sample (the other operations
//!   of the run are done between samples, untimed), so the median is the median
//!   *operation*; divan's mean column is the mean per operation. Precise only with the
//!   TSC timer (`--timer tsc`).
//!
//! Run: `cargo bench -p linkshare-core --bench hfsc_fig13 -- --timer tsc`.

use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

use divan::Bencher;
use linkshare_core::curve::ServiceCurve;
use linkshare_core::hierarchy::{ClassId, ClassSpec, ClassTree, LinkSpec};
use linkshare_core::sched::hfsc::Hfsc;
use linkshare_core::sched::{Dropped, Enqueue, Scheduler};
use linkshare_core::testing::TestPacket;
use linkshare_core::units::{Bytes, Instant, Rate};

fn main() {
    divan::main();
}

/// The hierarchies, by name: `flat-N` is one level of `N` sessions; `AxB...` is a
/// balanced tree with `A` children of the root, each with `B` children, and so on.
const WORKLOADS: &[&str] = &[
    "flat-1",
    "flat-10",
    "flat-100",
    "flat-1000",
    "10x100",
    "10x10x10",
    "10x10x100",
    "22x22x21",
];

/// The link's rate.
const LINK: Rate = Rate::from_gbit(1);

/// Mean number of steps a source stays ON (and OFF).
const BURST: u64 = 8;

/// Shortest and longest packet, bytes.
const MIN_LEN: u32 = 64;
const MAX_LEN: u32 = 1500;

/// Packets per sample of the `packet` benchmark, and samples.
const PACKETS_PER_SAMPLE: u32 = 1_000;
const PACKET_SAMPLES: u32 = 200;

/// Samples (one operation each) of the `enqueue` and `dequeue` benchmarks.
const OP_SAMPLES: u32 = 50_000;

/// Packets forwarded before measuring: at least [`MIN_WARM_UP`], and
/// [`WARM_UP_PER_SESSION`] per session, so that every session has been through several
/// ON and OFF periods and the caches hold the working set.
const MIN_WARM_UP: usize = 200_000;
const WARM_UP_PER_SESSION: usize = 40;

/// SplitMix64: a small, fast, deterministic PRNG.
struct Prng(u64);

impl Prng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (multiply-shift).
    fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }

    /// True with probability `1 / n`.
    fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }
}

/// The fan-out of each level of workload `name`.
fn fan_outs(name: &str) -> Vec<usize> {
    let levels = name.strip_prefix("flat-").unwrap_or(name);
    levels
        .split('x')
        .map(|n| n.parse().expect("workload names are numbers"))
        .collect()
}

/// The hierarchy of `fan_outs` on [`LINK`], every leaf with `rt = ls = linear(C / n)`,
/// every interior class with `ls` the sum of its leaves'. Returns the tree and the
/// sessions' reserved rate.
fn hierarchy(fan_outs: &[usize]) -> (ClassTree, Rate) {
    let sessions: usize = fan_outs.iter().product();
    let share = LINK.0 / sessions as u64;
    let mut specs = Vec::new();
    let mut level: Vec<(Option<String>, u64)> = vec![(None, share * sessions as u64)];
    for (depth, &k) in fan_outs.iter().enumerate() {
        let leaf = depth + 1 == fan_outs.len();
        let mut next = Vec::with_capacity(level.len() * k);
        for (parent, rate) in &level {
            for i in 0..k {
                let name = match parent {
                    Some(p) => format!("{p}.{i}"),
                    None => format!("c{i}"),
                };
                let r = rate / k as u64;
                let mut spec = ClassSpec::new(&name, parent.as_deref());
                spec.ls = Some(ServiceCurve::linear(Rate(r)));
                if leaf {
                    spec.rt = spec.ls;
                }
                specs.push(spec);
                next.push((Some(name), r));
            }
        }
        level = next;
    }
    let link = LinkSpec {
        name: "link".into(),
        rate: LINK,
        origin: None,
    };
    let tree = ClassTree::build(link, specs).expect("the Fig. 13 hierarchies are valid");
    (tree, Rate(share))
}

/// One packet arrival.
#[derive(Clone, Copy, Debug)]
struct Arrival {
    /// Instant, ns.
    at: u64,
    /// Leaf.
    class: ClassId,
    /// Bytes.
    len: u32,
}

/// `count` arrivals of the two-state Markov sources of `leaves` (reserved rate `share`
/// each), in time order (ties by leaf order).
fn arrivals(leaves: &[ClassId], share: Rate, count: usize) -> Vec<Arrival> {
    let peak = Rate(share.0 * 19 / 10);
    let slot = peak.tx_time(Bytes(u64::from(MIN_LEN + MAX_LEN) / 2)).0;
    let mut rng = Prng(0x6866_7363);
    // Each source: (next step's instant, source index, ON?). Sources start in a random
    // state at a random instant within one mean period, so that they are not in phase.
    let mut on: Vec<bool> = leaves.iter().map(|_| rng.one_in(2)).collect();
    let mut next: BinaryHeap<Reverse<(u64, usize)>> = (0..leaves.len())
        .map(|i| Reverse((rng.below(2 * BURST * slot), i)))
        .collect();
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let Reverse((at, i)) = next.pop().expect("every source stays in the queue");
        let step = if on[i] {
            let len = MIN_LEN + rng.below(u64::from(MAX_LEN - MIN_LEN + 1)) as u32;
            out.push(Arrival {
                at,
                class: leaves[i],
                len,
            });
            peak.tx_time(Bytes(u64::from(len))).0
        } else {
            slot
        };
        if rng.one_in(BURST) {
            on[i] = !on[i];
        }
        next.push(Reverse((at + step, i)));
    }
    out
}

/// What the link does next.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Enqueue,
    Dequeue,
}

/// H-FSC behind a link, fed from a precomputed arrival trace. When the trace runs out
/// it starts again, shifted in time past its end.
struct Run {
    hfsc: Hfsc<TestPacket>,
    trace: Vec<Arrival>,
    /// Index of the next arrival in `trace`.
    next: usize,
    /// Added to the trace's instants (grows at each restart).
    shift: u64,
    /// Length of one pass of the trace in time.
    span: u64,
    /// When the link is next free to send, ns.
    free: u64,
    /// Packets held by H-FSC.
    queued: usize,
    /// Transmission time at the link rate, by packet length.
    tx: Vec<u64>,
    evicted: Vec<Dropped<TestPacket>>,
}

impl Run {
    /// The run of workload `name`, warmed up.
    fn new(name: &str, measured: usize) -> Run {
        let (tree, share) = hierarchy(&fan_outs(name));
        let warm_up = (tree.leaves().len() * WARM_UP_PER_SESSION).max(MIN_WARM_UP);
        let trace = arrivals(tree.leaves(), share, warm_up + measured + measured / 4);
        let span = trace.last().map_or(0, |a| a.at) + 1;
        let mut run = Run {
            hfsc: Hfsc::new(&tree).expect("leaves only carry rt curves"),
            trace,
            next: 0,
            shift: 0,
            span,
            free: 0,
            queued: 0,
            tx: (0..=MAX_LEN)
                .map(|len| LINK.tx_time(Bytes(u64::from(len))).0)
                .collect(),
            evicted: Vec::new(),
        };
        for _ in 0..warm_up {
            run.packet();
        }
        run
    }

    /// The next arrival's instant.
    #[inline]
    fn next_arrival(&self) -> u64 {
        self.trace[self.next].at + self.shift
    }

    /// Whether the next operation is an arrival or the link taking a packet.
    #[inline]
    fn next_op(&self) -> Op {
        if self.queued == 0 || self.next_arrival() <= self.free {
            Op::Enqueue
        } else {
            Op::Dequeue
        }
    }

    /// Enqueues the next arrival at its instant.
    #[inline]
    fn enqueue(&mut self) {
        let a = self.trace[self.next];
        let at = a.at + self.shift;
        self.next += 1;
        if self.next == self.trace.len() {
            self.next = 0;
            self.shift += self.span;
        }
        self.free = self.free.max(at);
        let pkt = TestPacket { id: 0, len: a.len };
        let verdict = self
            .hfsc
            .enqueue(Instant(at), a.class, pkt, &mut self.evicted);
        debug_assert!(matches!(verdict, Enqueue::Queued));
        self.queued += 1;
    }

    /// The link takes a packet now and is busy for its transmission time.
    #[inline]
    fn dequeue(&mut self) {
        let d = self
            .hfsc
            .dequeue(Instant(self.free))
            .expect("H-FSC without upper limits is work-conserving");
        self.queued -= 1;
        self.free += self.tx[d.pkt.len as usize];
    }

    /// Arrivals up to the next dequeue, then the dequeue.
    #[inline]
    fn packet(&mut self) {
        while self.next_op() == Op::Enqueue {
            self.enqueue();
        }
        self.dequeue();
    }

    /// Does operations other than `op` until `op` is next.
    fn until(&mut self, op: Op) {
        while self.next_op() != op {
            match op {
                Op::Enqueue => self.dequeue(),
                Op::Dequeue => self.enqueue(),
            }
        }
    }
}

#[divan::bench(args = WORKLOADS, sample_count = PACKET_SAMPLES, sample_size = PACKETS_PER_SAMPLE)]
fn packet(bencher: Bencher<'_, '_>, name: &str) {
    let mut run = Run::new(name, (PACKET_SAMPLES * PACKETS_PER_SAMPLE) as usize);
    bencher.bench_local(move || run.packet());
}

/// Times one operation `op` per sample.
fn one_op(bencher: Bencher<'_, '_>, name: &str, op: Op) {
    let run = RefCell::new(Run::new(name, OP_SAMPLES as usize));
    bencher
        .with_inputs(|| run.borrow_mut().until(op))
        .bench_local_refs(|()| {
            let mut run = run.borrow_mut();
            match op {
                Op::Enqueue => run.enqueue(),
                Op::Dequeue => run.dequeue(),
            }
        });
}

#[divan::bench(args = WORKLOADS, sample_count = OP_SAMPLES, sample_size = 1)]
fn enqueue(bencher: Bencher<'_, '_>, name: &str) {
    one_op(bencher, name, Op::Enqueue);
}

#[divan::bench(args = WORKLOADS, sample_count = OP_SAMPLES, sample_size = 1)]
fn dequeue(bencher: Bencher<'_, '_>, name: &str) {
    one_op(bencher, name, Op::Dequeue);
}
