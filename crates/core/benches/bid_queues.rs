//! Cost in time of the four buffer structures of Keshav's cost study (the analogue of
//! the paper's Table 2), beside their cost in elementary operations.
//!
//! Each structure holds `B` packets; one iteration inserts one packet and takes the one
//! with the smallest bid (occupancy stays `B`, nothing is dropped). Two workloads:
//!
//! * `fq`: fair-queueing bids — `B / 8` conversations, each packet's bid its
//!   conversation's last bid or the last bid served, whichever is larger, plus its size;
//!   the conversation drawn pseudo-randomly;
//! * `uniform`: bids uniformly random above the last bid served (the paper's Table 1
//!   "average case"), all in one conversation: not a fair-queueing workload, so PERC,
//!   which relies on bids growing within a conversation, is not run on it.
//!
//! Before the timings, the bench prints the elementary operations per insertion and per
//! `get_min` of the same loop, so that nanoseconds and operation counts can be read
//! side by side.
//!
//! Run: `cargo bench -p linkshare-core --bench bid_queues`.

use divan::Bencher;
use linkshare_core::ds::bids::{
    BidQueue, DoubleHeap, Entry, LinkedList, PerConversation, SearchTree, Tag,
};

fn main() {
    print_op_counts();
    divan::main();
}

/// Buffer sizes `B`.
const SIZES: &[usize] = &[10, 100, 1_000, 10_000];

/// Pairs run to reach steady state before measuring or counting.
const WARM_UP: usize = 20_000;

/// Pairs counted for the operation table.
const COUNTED: usize = 100_000;

/// A 64-bit LCG.
struct Sequence(u64);

impl Sequence {
    #[inline]
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 11
    }
}

/// A workload's state: the next packet's bid.
struct Bids {
    uniform: bool,
    last: Vec<u128>,
    floor: u128,
    seq: u64,
    rng: Sequence,
}

impl Bids {
    fn new(uniform: bool, b: usize) -> Bids {
        Bids {
            uniform,
            last: vec![0; (b / 8).max(1)],
            floor: 0,
            seq: 0,
            rng: Sequence(42),
        }
    }

    #[inline]
    fn next(&mut self) -> Entry<()> {
        let x = self.rng.next();
        let size = 64 + (x & 1023) as u32;
        let conv = ((x >> 10) % self.last.len() as u64) as usize;
        let bid = if self.uniform {
            self.floor + u128::from(x >> 20) % 1_000_000
        } else {
            let b = self.last[conv].max(self.floor) + u128::from(size);
            self.last[conv] = b;
            b
        };
        self.seq += 1;
        Entry {
            tag: Tag::new(bid, self.seq),
            conv: if self.uniform { 0 } else { conv as u32 },
            size,
            value: (),
        }
    }

    #[inline]
    fn served(&mut self, e: &Entry<()>) {
        self.floor = self.floor.max(e.tag.bid());
    }
}

/// A structure filled with `b` packets of the workload, warmed up.
fn filled<S: BidQueue<()>>(uniform: bool, b: usize) -> (S, Bids) {
    let mut bids = Bids::new(uniform, b);
    let mut s = S::new((b / 8).max(1), b + 1);
    for _ in 0..b {
        s.insert(bids.next());
    }
    for _ in 0..WARM_UP {
        pair(&mut s, &mut bids);
    }
    (s, bids)
}

#[inline]
fn pair<S: BidQueue<()>>(s: &mut S, bids: &mut Bids) -> u32 {
    s.insert(bids.next());
    let e = s.pop_min().expect("the structure holds b packets");
    bids.served(&e);
    e.size
}

fn bench<S: BidQueue<()>>(bencher: Bencher<'_, '_>, uniform: bool, b: usize) {
    let (mut s, mut bids) = filled::<S>(uniform, b);
    bencher.bench_local(move || pair(&mut s, &mut bids));
}

fn count<S: BidQueue<()>>(uniform: bool, b: usize) -> (f64, f64) {
    let (mut s, mut bids) = filled::<S>(uniform, b);
    let before = s.ops();
    for _ in 0..COUNTED {
        pair(&mut s, &mut bids);
    }
    let after = s.ops();
    let per = |x: u64| x as f64 / COUNTED as f64;
    (
        per(after.insert - before.insert),
        per(after.get_min - before.get_min),
    )
}

fn print_op_counts() {
    println!("Elementary operations per insertion / per get_min ({COUNTED} pairs after warm-up):");
    println!("| workload | B | LINK | TREE | HEAP | PERC |");
    println!("| --- | --- | --- | --- | --- | --- |");
    for uniform in [false, true] {
        for &b in SIZES {
            let mut cells = vec![
                count::<LinkedList<()>>(uniform, b),
                count::<SearchTree<()>>(uniform, b),
                count::<DoubleHeap<()>>(uniform, b),
            ];
            if !uniform {
                cells.push(count::<PerConversation<()>>(uniform, b));
            }
            let mut cells: Vec<String> = cells
                .iter()
                .map(|(i, g)| format!("{i:.2} / {g:.2}"))
                .collect();
            if uniform {
                cells.push("n/a".into());
            }
            let name = if uniform { "uniform" } else { "fq" };
            println!("| {name} | {b} | {} |", cells.join(" | "));
        }
    }
    println!();
}

mod fq {
    use super::*;

    #[divan::bench(args = SIZES)]
    fn link(bencher: Bencher<'_, '_>, b: usize) {
        bench::<LinkedList<()>>(bencher, false, b);
    }

    #[divan::bench(args = SIZES)]
    fn tree(bencher: Bencher<'_, '_>, b: usize) {
        bench::<SearchTree<()>>(bencher, false, b);
    }

    #[divan::bench(args = SIZES)]
    fn heap(bencher: Bencher<'_, '_>, b: usize) {
        bench::<DoubleHeap<()>>(bencher, false, b);
    }

    #[divan::bench(args = SIZES)]
    fn perc(bencher: Bencher<'_, '_>, b: usize) {
        bench::<PerConversation<()>>(bencher, false, b);
    }
}

mod uniform {
    use super::*;

    #[divan::bench(args = SIZES)]
    fn link(bencher: Bencher<'_, '_>, b: usize) {
        bench::<LinkedList<()>>(bencher, true, b);
    }

    #[divan::bench(args = SIZES)]
    fn tree(bencher: Bencher<'_, '_>, b: usize) {
        bench::<SearchTree<()>>(bencher, true, b);
    }

    #[divan::bench(args = SIZES)]
    fn heap(bencher: Bencher<'_, '_>, b: usize) {
        bench::<DoubleHeap<()>>(bencher, true, b);
    }
}
