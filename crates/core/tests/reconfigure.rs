//! `Qdisc::refuse`, `Qdisc::take_over` and `EgressPort::reconfigure`: the counters and
//! queued packets a reconfiguration keeps, moves and drops, checked against
//! hand-computed values.

use linkshare_core::buffer::BufferConfig;
use linkshare_core::hierarchy::{ClassId, ClassSpec, ClassTree, Limit, LinkSpec};
use linkshare_core::port::{EgressPort, Transmit};
use linkshare_core::sched::fifo::Fifo;
use linkshare_core::stats::{Count, Counters};
use linkshare_core::testing::TestPacket;
use linkshare_core::units::{Bytes, Instant, Rate};
use linkshare_core::{DropReason, Qdisc};

const T0: Instant = Instant::ZERO;

type Q = Qdisc<TestPacket, Fifo<TestPacket>>;

fn tree(specs: Vec<ClassSpec>) -> ClassTree {
    let link = LinkSpec {
        name: "link".into(),
        rate: Rate::from_mbit(8),
        origin: None,
    };
    ClassTree::build(link, specs).expect("valid tree")
}

fn leaf(name: &str, parent: Option<&str>, limit: Option<Limit>) -> ClassSpec {
    let mut s = ClassSpec::new(name, parent);
    s.limit = limit;
    s
}

fn c(packets: u64, bytes: u64) -> Count {
    Count { packets, bytes }
}

fn offer(q: &mut Q, class: u32, id: u64) {
    let queued = q.enqueue(T0, ClassId(class), TestPacket { id, len: 100 }, |d| {
        panic!("unexpected drop of {}: {:?}", d.pkt.id, d.reason)
    });
    assert!(queued);
}

#[test]
fn refuse_counts_an_unbuffered_arrival_and_nothing_else() {
    let t = tree(vec![leaf("a", None, None)]);
    let mut q: Q = Qdisc::new(&t, Fifo::new(), BufferConfig::default());
    q.refuse(ClassId(1), Bytes(64), DropReason::NoBuffer);
    q.refuse(ClassId(9), Bytes(64), DropReason::NoBuffer);
    let a = q.counters(ClassId(1));
    assert_eq!(a.arrived, c(1, 64));
    assert_eq!(a.dropped(DropReason::NoBuffer), c(1, 64));
    assert_eq!(a.enqueued, c(0, 0));
    assert_eq!(
        q.total().arrived,
        c(2, 128),
        "an unknown class counts in the total"
    );
    assert!(q.is_empty());
    assert!(q.dequeue(T0).is_none());
    q.check_conservation().unwrap();
}

/// Old tree: a, b, c (leaves). a gets packets 1, 2, 3 (packet 1 leaves), b packet 4,
/// c packet 5. New tree: a with a limit of 1 packet, c, and a new d; b is gone.
#[test]
fn take_over_keeps_moves_and_drops_as_configured() {
    let old_tree = tree(vec![
        leaf("a", None, None),
        leaf("b", None, None),
        leaf("c", None, None),
    ]);
    let mut old: Q = Qdisc::new(&old_tree, Fifo::new(), BufferConfig::default());
    for (class, id) in [(1, 1), (1, 2), (1, 3), (2, 4), (3, 5)] {
        offer(&mut old, class, id);
    }
    assert_eq!(old.dequeue(T0).map(|d| d.pkt.id), Some(1));

    let new_tree = tree(vec![
        leaf("d", None, None),
        leaf("a", None, Some(Limit::Packets(1))),
        leaf("c", None, None),
    ]);
    let mut new: Q = Qdisc::new(&new_tree, Fifo::new(), BufferConfig::default());
    let mut drops = Vec::new();
    let removed = new.take_over(
        T0,
        old,
        |id| new_tree.id_of(old_tree.get(id).name()),
        |d| drops.push((d.pkt.id, d.class.0, d.reason)),
    );
    // Packet 3 no longer fits a's new limit; b's packet 4 goes with b.
    assert_eq!(
        drops,
        vec![
            (3, 2, DropReason::ClassLimit),
            (4, 2, DropReason::Reconfigured)
        ]
    );
    let mut a = Counters {
        arrived: c(3, 300),
        enqueued: c(2, 200),
        dequeued: c(1, 100),
        queued: c(1, 100),
        ..Counters::default()
    };
    a.dropped_on_arrival[DropReason::ClassLimit.index()] = c(1, 100);
    assert_eq!(new.counters(ClassId(2)), &a, "a keeps its counters");
    let cc = Counters {
        arrived: c(1, 100),
        enqueued: c(1, 100),
        queued: c(1, 100),
        ..Counters::default()
    };
    assert_eq!(new.counters(ClassId(3)), &cc, "c keeps its packet");
    assert_eq!(new.counters(ClassId(1)), &Counters::default(), "d is new");
    let mut b = Counters {
        arrived: c(1, 100),
        enqueued: c(1, 100),
        ..Counters::default()
    };
    b.evicted[DropReason::Reconfigured.index()] = c(1, 100);
    assert_eq!(removed, vec![(ClassId(2), b.clone())]);
    new.check_conservation().unwrap();
    b.check_identities("b").unwrap();
    // The total is the carried classes' sum.
    let mut sum = a.clone();
    sum.add_all(&cc);
    assert_eq!(new.total(), &sum);
    // Queued packets leave in their order: a's 2, then c's 5.
    let order: Vec<u64> = std::iter::from_fn(|| new.dequeue(T0).map(|d| d.pkt.id)).collect();
    assert_eq!(order, vec![2, 5]);
}

#[test]
fn a_leaf_that_became_a_parent_is_removed() {
    let old_tree = tree(vec![leaf("a", None, None)]);
    let mut old: Q = Qdisc::new(&old_tree, Fifo::new(), BufferConfig::default());
    offer(&mut old, 1, 7);
    let new_tree = tree(vec![leaf("a", None, None), leaf("a1", Some("a"), None)]);
    let mut new: Q = Qdisc::new(&new_tree, Fifo::new(), BufferConfig::default());
    let mut drops = Vec::new();
    let removed = new.take_over(
        T0,
        old,
        |id| new_tree.id_of(old_tree.get(id).name()),
        |d| drops.push((d.pkt.id, d.reason)),
    );
    assert_eq!(drops, vec![(7, DropReason::Reconfigured)]);
    assert_eq!(removed.len(), 1);
    assert!(new.is_empty());
    assert_eq!(new.total(), &Counters::default());
}

#[test]
fn reconfigure_keeps_the_packet_on_the_wire() {
    let t = tree(vec![leaf("a", None, None)]);
    let mut port = EgressPort::new(
        Qdisc::new(&t, Fifo::new(), BufferConfig::default()),
        t.link_rate(),
        Bytes::ZERO,
    );
    port.enqueue(T0, ClassId(1), TestPacket { id: 1, len: 1000 }, |_| {
        panic!("no drop")
    });
    port.enqueue(T0, ClassId(1), TestPacket { id: 2, len: 1000 }, |_| {
        panic!("no drop")
    });
    // 1000 B at 8 Mbit/s: 1 ms on the wire.
    let Transmit::Started { done_at, .. } = port.transmit(T0) else {
        panic!("the first packet starts")
    };
    assert_eq!(done_at, Instant::from_millis(1));
    let faster = Rate::from_mbit(16);
    let removed = port.reconfigure(
        Instant(10_000),
        Qdisc::new(&t, Fifo::<TestPacket>::new(), BufferConfig::default()),
        faster,
        Bytes::ZERO,
        Some,
        |_| panic!("no drop"),
    );
    assert!(removed.is_empty());
    assert_eq!(port.busy_until(), done_at);
    assert!(matches!(port.transmit(Instant(10_000)), Transmit::Busy(t) if t == done_at));
    // The second packet now goes at the new rate: 0.5 ms.
    let Transmit::Started { pkt, done_at: next } = port.transmit(done_at) else {
        panic!("the second packet starts")
    };
    assert_eq!(pkt.pkt.id, 2);
    assert_eq!(next, Instant(1_500_000));
    port.qdisc().check_conservation().unwrap();
}
