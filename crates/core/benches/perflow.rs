//! Cost of one per-flow create + retire pair, in nanoseconds: a new flow's first packet
//! takes the instance that has been idle longest (retiring the flow it served), the
//! discipline resets the instance ([`Scheduler::reset_class`]), the packet is queued and
//! sent, and the instance empties again.
//!
//! One template of `n` instances with an idle time of 0 under FSC (a concave curve per
//! instance) and DRR, each instance already serving a flow, so every iteration retires
//! one flow and creates another. The `classify` group times the table alone (classify,
//! filled, emptied); `fsc` and `drr` add the reset and the packet's enqueue and dequeue.
//!
//! Run: `cargo bench -p linkshare-core --bench perflow`.

use divan::Bencher;
use linkshare_core::curve::ServiceCurve;
use linkshare_core::hierarchy::{ClassSpec, ClassTree, LinkSpec, PerFlow};
use linkshare_core::perflow::{Assigned, FlowTable};
use linkshare_core::sched::{Scheduler, SchedulerKind, build};
use linkshare_core::testing::TestPacket;
use linkshare_core::units::{Duration, Instant, Rate};

fn main() {
    divan::main();
}

/// Instances in the template.
const INSTANCES: &[u32] = &[64, 1_024, 65_536];

fn tree(n: u32) -> ClassTree {
    let mut web = ClassSpec::new("web", None);
    web.per_flow = Some(PerFlow {
        max_flows: n,
        idle: Duration::ZERO,
    });
    web.ls = Some(ServiceCurve {
        m1: Rate::from_mbit(4),
        d: Duration::from_millis(6),
        m2: Rate::from_mbit(1),
    });
    let link = LinkSpec {
        name: "link".into(),
        rate: Rate::from_gbit(1),
        origin: None,
    };
    ClassTree::build(link, vec![web]).expect("a valid tree")
}

/// A table whose every instance has served a flow and is empty.
fn warm(tree: &ClassTree) -> (FlowTable, u64) {
    let mut table = FlowTable::new(tree);
    let n = u64::from(tree.templates()[0].count);
    for key in 0..n {
        let c = table.classify(Instant::ZERO, 0, key).class();
        table.filled(c);
        table.emptied(Instant::ZERO, c);
    }
    (table, n)
}

#[divan::bench(args = INSTANCES)]
fn classify(bencher: Bencher<'_, '_>, n: u32) {
    let tree = tree(n);
    let (mut table, mut key) = warm(&tree);
    bencher.bench_local(|| {
        key += 1;
        let Assigned::New(c) = table.classify(Instant::ZERO, 0, key) else {
            unreachable!("an instance idle for 0 is always free");
        };
        table.filled(c);
        table.emptied(Instant::ZERO, c);
    });
}

fn with_discipline(bencher: Bencher<'_, '_>, n: u32, kind: SchedulerKind) {
    let tree = tree(n);
    let (mut table, mut key) = warm(&tree);
    let mut sched: Box<dyn Scheduler<TestPacket> + Send> =
        build(kind, &tree).expect("FSC and DRR run per-flow trees");
    let mut now = Instant::ZERO;
    bencher.bench_local(|| {
        key += 1;
        now += Duration(1000);
        let Assigned::New(c) = table.classify(now, 0, key) else {
            unreachable!("an instance idle for 0 is always free");
        };
        sched.reset_class(now, c);
        let pkt = TestPacket { id: key, len: 100 };
        let _ = sched.enqueue(now, c, pkt, &mut Vec::new());
        table.filled(c);
        let sent = sched.dequeue(now);
        divan::black_box(sent);
        table.emptied(now, c);
    });
}

#[divan::bench(args = INSTANCES)]
fn fsc(bencher: Bencher<'_, '_>, n: u32) {
    with_discipline(bencher, n, SchedulerKind::Fsc);
}

#[divan::bench(args = INSTANCES)]
fn drr(bencher: Bencher<'_, '_>, n: u32) {
    with_discipline(bencher, n, SchedulerKind::Drr);
}
