//! H-FSC's cost on the workloads of the H-FSC paper's Fig. 13 (§VI-C): nanoseconds per
//! enqueue, per dequeue and per packet forwarded. The hierarchies, the traffic and the
//! link are [`linkshare_core::workload::fig13`]'s (shared with `linkshare repro
//! hfsc-fig13`, which times the same loop with the standard clock).
//!
//! # Benchmarks
//!
//! * `packet`: one packet forwarded ([`Run::packet`]) with Markov sources — the paper's
//!   "average per packet queueing overhead". Median over samples of
//!   [`PACKETS_PER_SAMPLE`] packets. `packet_backlogged`: the same with every session
//!   continuously backlogged.
//! * `enqueue`, `dequeue`: one operation of that kind per sample (the other operations
//!   of the run are done between samples, untimed), so the median is the median
//!   *operation*; divan's mean column is the mean per operation. Precise only with the
//!   TSC timer (`--timer tsc`).
//!
//! Run: `cargo bench -p linkshare-core --bench hfsc_fig13 -- --timer tsc`.

use std::cell::RefCell;

use divan::Bencher;
use linkshare_core::workload::fig13::{Op, Run, Traffic, fan_outs, warm_up};

fn main() {
    divan::main();
}

/// The hierarchies, by name (see [`fan_outs`]).
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

/// Packets per sample of the `packet` benchmark, and samples.
const PACKETS_PER_SAMPLE: u32 = 1_000;
const PACKET_SAMPLES: u32 = 200;

/// Samples (one operation each) of the `enqueue` and `dequeue` benchmarks.
const OP_SAMPLES: u32 = 50_000;

/// The warmed-up run of workload `name`.
fn run(name: &str, traffic: Traffic, measured: u32) -> Run {
    let levels = fan_outs(name).expect("workload names are hierarchies");
    let sessions = levels.iter().product();
    Run::new(&levels, traffic, warm_up(sessions), measured as usize)
}

#[divan::bench(args = WORKLOADS, sample_count = PACKET_SAMPLES, sample_size = PACKETS_PER_SAMPLE)]
fn packet(bencher: Bencher<'_, '_>, name: &str) {
    let mut run = run(name, Traffic::Markov, PACKET_SAMPLES * PACKETS_PER_SAMPLE);
    bencher.bench_local(move || run.packet());
}

#[divan::bench(args = WORKLOADS, sample_count = PACKET_SAMPLES, sample_size = PACKETS_PER_SAMPLE)]
fn packet_backlogged(bencher: Bencher<'_, '_>, name: &str) {
    let mut run = run(name, Traffic::Backlogged, 0);
    bencher.bench_local(move || run.packet());
}

/// Times one operation `op` per sample.
fn one_op(bencher: Bencher<'_, '_>, name: &str, op: Op) {
    let run = RefCell::new(run(name, Traffic::Markov, OP_SAMPLES));
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
