//! JoBS's overhead (paper §7.3, Table 3): one enqueue + dequeue pair, in nanoseconds,
//! for the paper's four constraint sets on four classes, with the controller run at
//! every arrival (`sampling` 1) and every tenth (10), in both controller modes.
//!
//! The sets (spec §6.3, errata 7):
//!
//! 1. Table 1: class 1 delay bound 8 ms and loss bound 1 %, class 2 throughput bound
//!    35 Mbit/s, delay and loss ratios 2 between classes 2, 3 and 4;
//! 2. Table 1's ratios only;
//! 3. Table 1's bounds only;
//! 4. no constraints.
//!
//! The link is the paper's 100 Mbit/s with ALTQ's 200-packet buffer, kept at 160
//! packets (40 per class): each iteration enqueues one packet to a class drawn from a
//! fixed pseudo-random sequence (64–1087 B) and dequeues one, and the clock advances by
//! the dequeued packet's transmission time, as behind a busy link. Class 1's waits stay
//! within its 8 ms bound by rate alone (no drop happens): what is measured is the
//! controller. In the reference mode, Set 1's throughput bound (35 Mbit/s, above an
//! equal share of 25) makes the bounds' stage run, and with it the ratio loop, at most
//! arrivals, whatever the sampling (module docs of `jobs`, *Modes*).
//!
//! Run: `cargo bench -p linkshare-core --bench jobs`.

use std::num::NonZeroU32;

use divan::Bencher;
use linkshare_core::hierarchy::{ClassId, ClassTree};
use linkshare_core::sched::Scheduler;
use linkshare_core::sched::jobs::{Buffer, Constraints, Jobs, JobsConfig, Mode};
use linkshare_core::testing::TestPacket;
use linkshare_core::units::{Bytes, Duration, Fraction, Instant, Rate, Ratio};

fn main() {
    // A fixed number of pairs per sample: divan otherwise sizes samples from its first
    // timings, and the first benchmark of a process, timed while the machine is still
    // settling, then gets samples of 100 pairs whose median is twice the others'.
    divan::Divan::from_args().sample_size(1000).main();
}

const LINK: Rate = Rate::from_mbit(100);

/// Sampling intervals of the controller.
const SAMPLING: &[u32] = &[1, 10];

/// Pairs run before measuring.
const WARM_UP: usize = 100_000;

/// The constraints of set `set` (1 to 4).
fn constraints(set: u32) -> JobsConfig {
    let bounds = set == 1 || set == 3;
    let ratios = set == 1 || set == 2;
    let two = ratios.then(|| Ratio::integer(2));
    let mut config = JobsConfig::default();
    let classes = [
        Constraints {
            delay_bound: bounds.then(|| Duration::from_millis(8)),
            loss_bound: bounds.then(|| Fraction::from_percent(1)),
            ..Constraints::default()
        },
        Constraints {
            min_rate: bounds.then(|| Rate::from_mbit(35)),
            delay_ratio: two,
            loss_ratio: two,
            ..Constraints::default()
        },
        Constraints {
            delay_ratio: two,
            loss_ratio: two,
            ..Constraints::default()
        },
    ];
    for (i, c) in classes.into_iter().enumerate() {
        if c != Constraints::default() {
            config.classes.insert(format!("c{i}"), c);
        }
    }
    config
}

/// A 64-bit LCG: the class (1..=4) and length (64..=1087 B) of each arrival.
struct Sequence(u64);

impl Sequence {
    #[inline]
    fn arrival(&mut self) -> (ClassId, u32) {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (
            ClassId(1 + (self.0 >> 62) as u32),
            64 + ((self.0 >> 20) & 1023) as u32,
        )
    }
}

/// Pairs on JoBS with set `set`, sampling `sampling` and `mode`, 40 packets queued per
/// class at the start.
fn pairs(bencher: Bencher<'_, '_>, set: u32, sampling: u32, mode: Mode) {
    let tree = ClassTree::flat(LINK, 4);
    let mut config = constraints(set);
    config.sampling = NonZeroU32::new(sampling).expect("positive");
    config.mode = mode;
    config.buffer = Buffer::Shared { packets: 200 };
    let mut s: Jobs<TestPacket> = Jobs::new(&tree, &config).expect("Table 1 builds");
    let tx: Vec<Duration> = (0..=1087).map(|len| LINK.tx_time(Bytes(len))).collect();
    let mut seq = Sequence(42);
    let mut now = Instant::ZERO;
    let mut evicted = Vec::new();
    for c in 1..=4 {
        for _ in 0..40 {
            let (_, len) = seq.arrival();
            let _ = s.enqueue(now, ClassId(c), TestPacket { id: 0, len }, &mut evicted);
        }
    }
    let mut pair = move || {
        let (class, len) = seq.arrival();
        let verdict = s.enqueue(now, class, TestPacket { id: 0, len }, &mut evicted);
        evicted.clear();
        let d = s.dequeue(now)?;
        now += tx[d.pkt.len as usize];
        let _ = divan::black_box(verdict);
        Some(d.pkt.len)
    };
    for _ in 0..WARM_UP {
        divan::black_box(pair());
    }
    bencher.bench_local(pair);
}

/// The paper's controller (the default), `γ = ½`: constraint set `SET` of Table 3.
#[divan::bench(consts = [1, 2, 3, 4], args = SAMPLING)]
fn paper<const SET: u32>(bencher: Bencher<'_, '_>, sampling: u32) {
    pairs(bencher, SET, sampling, Mode::PAPER);
}

/// ALTQ's controller: constraint set `SET` of Table 3.
#[divan::bench(consts = [1, 2, 3, 4], args = SAMPLING)]
fn reference<const SET: u32>(bencher: Bencher<'_, '_>, sampling: u32) {
    pairs(bencher, SET, sampling, Mode::REFERENCE);
}
