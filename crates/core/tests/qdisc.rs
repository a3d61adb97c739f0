//! Buffer policies and counters of `Qdisc`, checked against hand-computed values.

use linkshare_core::buffer::{BufferConfig, Overflow};
use linkshare_core::hierarchy::{ClassId, ClassSpec, ClassTree, Limit, LinkSpec};
use linkshare_core::sched::fifo::Fifo;
use linkshare_core::stats::{Count, Counters};
use linkshare_core::testing::TestPacket;
use linkshare_core::units::{Bytes, Instant, Rate};
use linkshare_core::{DropReason, Qdisc};
use proptest::prelude::*;

const T0: Instant = Instant::ZERO;

type Q = Qdisc<TestPacket, Fifo<TestPacket>>;

fn qdisc(specs: Vec<ClassSpec>, buffer: BufferConfig) -> (ClassTree, Q) {
    let link = LinkSpec {
        name: "link".into(),
        rate: Rate::from_mbit(10),
        origin: None,
    };
    let tree = ClassTree::build(link, specs).expect("valid tree");
    let q = Qdisc::new(&tree, Fifo::new(), buffer);
    (tree, q)
}

fn class(name: &str, limit: Option<Limit>) -> ClassSpec {
    let mut s = ClassSpec::new(name, None);
    s.limit = limit;
    s
}

/// Offers a packet; returns whether it was queued and every drop it caused as
/// (id, class, reason), in the order the qdisc reported them.
fn offer(q: &mut Q, class: u32, id: u64, len: u32) -> (bool, Vec<(u64, u32, DropReason)>) {
    let mut drops = Vec::new();
    let queued = q.enqueue(T0, ClassId(class), TestPacket { id, len }, |d| {
        drops.push((d.pkt.id, d.class.0, d.reason));
    });
    (queued, drops)
}

fn c(packets: u64, bytes: u64) -> Count {
    Count { packets, bytes }
}

fn by_reason(entries: &[(DropReason, Count)]) -> [Count; DropReason::COUNT] {
    let mut out = [Count::default(); DropReason::COUNT];
    for &(r, n) in entries {
        out[r.index()] = n;
    }
    out
}

#[test]
fn class_packet_limit_tail_drops() {
    let (_, mut q) = qdisc(
        vec![class("a", Some(Limit::Packets(2))), class("b", None)],
        BufferConfig::default(),
    );
    assert_eq!(offer(&mut q, 1, 0, 100), (true, vec![]));
    assert_eq!(offer(&mut q, 1, 1, 200), (true, vec![]));
    assert_eq!(
        offer(&mut q, 1, 2, 300),
        (false, vec![(2, 1, DropReason::ClassLimit)])
    );
    assert_eq!(offer(&mut q, 2, 3, 400), (true, vec![]), "b has no limit");
    let a = Counters {
        arrived: c(3, 600),
        enqueued: c(2, 300),
        queued: c(2, 300),
        dropped_on_arrival: by_reason(&[(DropReason::ClassLimit, c(1, 300))]),
        ..Counters::default()
    };
    assert_eq!(q.counters(ClassId(1)), &a);
    assert_eq!(q.total().queued, c(3, 700));
    // Once a packet leaves, the class takes one again.
    assert_eq!(q.dequeue(T0).map(|d| d.pkt.id), Some(0));
    assert_eq!(offer(&mut q, 1, 4, 500), (true, vec![]));
    assert_eq!(q.backlog(ClassId(1)), c(2, 700));
    q.check_conservation().unwrap();
}

#[test]
fn class_byte_limit_tail_drops() {
    let (_, mut q) = qdisc(
        vec![class("a", Some(Limit::Bytes(Bytes(3000))))],
        BufferConfig::default(),
    );
    let offers = [
        (1500, true),
        (1000, true),
        (600, false),
        (500, true),
        (1, false),
    ];
    for (id, &(len, fits)) in offers.iter().enumerate() {
        let (queued, _) = offer(&mut q, 1, id as u64, len);
        assert_eq!(queued, fits, "packet {id} of {len} B");
    }
    let a = q.counters(ClassId(1));
    assert_eq!(a.queued, c(3, 3000));
    assert_eq!(a.dropped(DropReason::ClassLimit), c(2, 601));
    assert_eq!(a.arrived, c(5, 3601));
    q.check_conservation().unwrap();
}

#[test]
fn shared_limit_tail_drops() {
    let buffer = BufferConfig {
        shared: Some(Limit::Packets(3)),
        overflow: Overflow::TailDrop,
    };
    let (_, mut q) = qdisc(vec![class("a", None), class("b", None)], buffer);
    for id in 0..3 {
        assert_eq!(offer(&mut q, 1, id, 100), (true, vec![]));
    }
    assert_eq!(
        offer(&mut q, 2, 3, 100),
        (false, vec![(3, 2, DropReason::SharedLimit)])
    );
    assert_eq!(q.dequeue(T0).map(|d| d.pkt.id), Some(0));
    assert_eq!(offer(&mut q, 2, 4, 100), (true, vec![]));
    assert_eq!(
        q.counters(ClassId(2)).dropped_on_arrival[DropReason::SharedLimit.index()],
        c(1, 100)
    );
    assert_eq!(q.total().dropped_total(), c(1, 100));
    q.check_conservation().unwrap();
}

/// Shared limit of 4 packets with push-out: the newest packet of the longest queue makes
/// room; an arrival to a class at least as long as every other is dropped instead; ties
/// go to the smaller class id.
#[test]
fn push_out_from_the_longest_queue_in_packets() {
    let buffer = BufferConfig {
        shared: Some(Limit::Packets(4)),
        overflow: Overflow::PushOutLongest,
    };
    let (_, mut q) = qdisc(
        vec![class("a", None), class("b", None), class("c", None)],
        buffer,
    );
    let (a, b, cc) = (1, 2, 3);
    assert!(offer(&mut q, a, 0, 100).0);
    assert!(offer(&mut q, a, 1, 200).0);
    assert!(offer(&mut q, a, 2, 300).0);
    assert!(offer(&mut q, b, 3, 400).0);
    // Full. b (1 packet) receives: a (3) is longest, its newest (2) goes.
    assert_eq!(
        offer(&mut q, b, 4, 500),
        (true, vec![(2, a, DropReason::PushedOut)])
    );
    // a and b hold 2 each. An arrival to a: the longest (a, by the tie rule) is a itself.
    assert_eq!(
        offer(&mut q, a, 5, 50),
        (false, vec![(5, a, DropReason::SharedLimit)])
    );
    // An arrival to b: the longest is a, no longer than b: dropped.
    assert_eq!(
        offer(&mut q, b, 6, 60),
        (false, vec![(6, b, DropReason::SharedLimit)])
    );
    // An arrival to c (empty): a (tie with b, smaller id) loses its newest, 1.
    assert_eq!(
        offer(&mut q, cc, 7, 700),
        (true, vec![(1, a, DropReason::PushedOut)])
    );
    let order: Vec<u64> = std::iter::from_fn(|| q.dequeue(T0))
        .map(|d| d.pkt.id)
        .collect();
    assert_eq!(order, [0, 3, 4, 7]);
    let counters_a = Counters {
        arrived: c(4, 650),
        enqueued: c(3, 600),
        dequeued: c(1, 100),
        dropped_on_arrival: by_reason(&[(DropReason::SharedLimit, c(1, 50))]),
        evicted: by_reason(&[(DropReason::PushedOut, c(2, 500))]),
        ..Counters::default()
    };
    assert_eq!(q.counters(ClassId(a)), &counters_a);
    assert_eq!(
        q.counters(ClassId(b)).dropped(DropReason::SharedLimit),
        c(1, 60)
    );
    assert_eq!(q.total().dropped(DropReason::PushedOut), c(2, 500));
    assert_eq!(q.total().dequeued, c(4, 1700));
    q.check_conservation().unwrap();
}

/// With a byte limit, "longest" is measured in bytes, and as many packets are pushed out
/// as the arrival needs.
#[test]
fn push_out_from_the_longest_queue_in_bytes() {
    let buffer = BufferConfig {
        shared: Some(Limit::Bytes(Bytes(3000))),
        overflow: Overflow::PushOutLongest,
    };
    let (_, mut q) = qdisc(vec![class("a", None), class("b", None)], buffer);
    assert!(offer(&mut q, 1, 0, 1000).0);
    assert!(offer(&mut q, 1, 1, 1000).0);
    assert!(offer(&mut q, 2, 2, 500).0);
    // 2500 + 1000 > 3000: a (2000 B) is longest; its newest (1000 B) makes room.
    assert_eq!(
        offer(&mut q, 2, 3, 1000),
        (true, vec![(1, 1, DropReason::PushedOut)])
    );
    // a 1000 B, b 1500 B; 2500 + 1500 > 3000: b is longest now; it loses 3 (1000 B).
    assert_eq!(
        offer(&mut q, 1, 4, 1500),
        (true, vec![(3, 2, DropReason::PushedOut)])
    );
    // a 2500 B, b 500 B; an arrival of 1400 B to b: a's newest (1500 B) is enough.
    assert_eq!(
        offer(&mut q, 2, 5, 1400),
        (true, vec![(4, 1, DropReason::PushedOut)])
    );
    assert_eq!(q.total().queued, c(3, 2900));
    // a 3000 B; an arrival of 1500 B to b needs two of a's packets out, newest first.
    let (_, mut q) = qdisc(vec![class("a", None), class("b", None)], buffer);
    for id in 0..3 {
        assert!(offer(&mut q, 1, id, 1000).0);
    }
    assert_eq!(
        offer(&mut q, 2, 3, 1500),
        (
            true,
            vec![(2, 1, DropReason::PushedOut), (1, 1, DropReason::PushedOut)]
        )
    );
    assert_eq!(
        q.counters(ClassId(1)).evicted[DropReason::PushedOut.index()],
        c(2, 2000)
    );
    assert_eq!(q.total().queued, c(2, 2500));
    q.check_conservation().unwrap();
}

/// The FSC paper's rule with a 3000 B shared limit: the arrival is queued, then the
/// packet behind the head of the longest queue (in bytes; ties to the smaller id) goes,
/// until the buffer fits; a longest queue of one packet loses it, even when it is the
/// arrival's own.
#[test]
fn push_out_second_drops_behind_the_head_of_the_longest_queue() {
    let buffer = BufferConfig {
        shared: Some(Limit::Bytes(Bytes(3000))),
        overflow: Overflow::PushOutSecond,
    };
    let (a, b) = (1, 2);
    let (_, mut q) = qdisc(vec![class("a", None), class("b", None)], buffer);
    assert!(offer(&mut q, a, 0, 1000).0);
    assert!(offer(&mut q, a, 1, 700).0);
    assert!(offer(&mut q, a, 2, 800).0);
    assert!(offer(&mut q, b, 3, 400).0);
    // 2900 B; b's 200 B arrival makes 3100: a (2500 B) is longest; its second packet (1,
    // 700 B) goes, not its newest.
    assert_eq!(
        offer(&mut q, b, 4, 200),
        (true, vec![(1, a, DropReason::PushedOut)])
    );
    // a: 0, 2 (1800 B); b: 3, 4 (600 B). An arrival of 1500 B to b makes 3900 B, b
    // 2100 B is longest now: its second packet (4, 200 B) goes, then b (1900 B) is
    // still longest: 5 itself is now second and goes.
    assert_eq!(
        offer(&mut q, b, 5, 1500),
        (
            true,
            vec![(4, b, DropReason::PushedOut), (5, b, DropReason::PushedOut)]
        )
    );
    // a 1800 B, b 400 B: an arrival of 1000 B to a makes 3200 B; a (2800 B) loses its
    // second packet (2, 800 B), keeping its head and the arrival.
    assert_eq!(
        offer(&mut q, a, 6, 1000),
        (true, vec![(2, a, DropReason::PushedOut)])
    );
    let order: Vec<u64> = std::iter::from_fn(|| q.dequeue(T0))
        .map(|d| d.pkt.id)
        .collect();
    assert_eq!(order, [0, 3, 6]);
    assert_eq!(
        q.counters(ClassId(b)).evicted[DropReason::PushedOut.index()],
        c(2, 1700)
    );
    assert_eq!(q.total().dropped(DropReason::SharedLimit), c(0, 0));
    q.check_conservation().unwrap();
    // Queues of one packet each: the longest single packet goes, the arrival's own.
    let buffer = BufferConfig {
        shared: Some(Limit::Packets(1)),
        overflow: Overflow::PushOutSecond,
    };
    let (_, mut q) = qdisc(vec![class("a", None), class("b", None)], buffer);
    assert!(offer(&mut q, a, 0, 100).0);
    assert_eq!(
        offer(&mut q, b, 1, 100),
        (true, vec![(0, a, DropReason::PushedOut)]),
        "a tie in packets goes to the smaller id"
    );
    q.check_conservation().unwrap();
}

proptest! {
    /// Against a model of the rule computed apart: per-class queues of (id, len), the
    /// arrival appended, then while over the limit the element behind the head (or the
    /// only one) of the longest queue in bytes, ties to the smaller class, removed. Every
    /// drop the qdisc reports, in order, is the model's, and the buffer never holds more
    /// than its limit after an arrival (spec check X3).
    #[test]
    fn push_out_second_matches_a_model(
        limit in 1500u64..12_000,
        ops in prop::collection::vec((0u32..4, 40u32..=1500, any::<bool>()), 1..300),
    ) {
        let buffer = BufferConfig {
            shared: Some(Limit::Bytes(Bytes(limit))),
            overflow: Overflow::PushOutSecond,
        };
        let (_, mut q) = qdisc((0..4).map(|i| class(&format!("c{i}"), None)).collect(), buffer);
        let mut model: Vec<std::collections::VecDeque<(u64, u32)>> = vec![Default::default(); 5];
        for (id, (leaf, len, dequeue)) in (0u64..).zip(ops) {
            if dequeue {
                let d = q.dequeue(T0);
                if let Some(d) = d {
                    let front = model[d.class.index()].pop_front();
                    prop_assert_eq!(front.map(|(i, _)| i), Some(d.pkt.id));
                }
                continue;
            }
            let class = leaf + 1;
            let (queued, drops) = offer(&mut q, class, id, len);
            prop_assert!(queued);
            model[class as usize].push_back((id, len));
            let bytes = |m: &std::collections::VecDeque<(u64, u32)>| -> u64 {
                m.iter().map(|&(_, l)| u64::from(l)).sum()
            };
            let mut expected = Vec::new();
            while model.iter().map(bytes).sum::<u64>() > limit {
                let longest = (1..5).max_by_key(|&k| (bytes(&model[k]), std::cmp::Reverse(k))).unwrap();
                let at = if model[longest].len() >= 2 { 1 } else { 0 };
                let (victim, _) = model[longest].remove(at).unwrap();
                expected.push((victim, longest as u32, DropReason::PushedOut));
            }
            prop_assert_eq!(drops, expected);
            prop_assert!(q.total().queued.bytes <= limit);
            prop_assert_eq!(q.check_conservation(), Ok(()));
        }
    }
}

#[test]
fn too_large_and_not_a_leaf() {
    let mut small = class("small", None);
    small.max_packet = Some(Bytes(1000));
    let (tree, mut q) = qdisc(
        vec![small, class("p", None), ClassSpec::new("p1", Some("p"))],
        BufferConfig::default(),
    );
    let p = tree.id_of("p").unwrap();
    assert_eq!(
        offer(&mut q, 1, 0, 1001),
        (false, vec![(0, 1, DropReason::TooLarge)])
    );
    assert_eq!(offer(&mut q, 1, 1, 1000), (true, vec![]));
    // A packet longer than the default L_max (1500 B) is too large for p1.
    assert_eq!(
        offer(&mut q, 3, 2, 1501),
        (false, vec![(2, 3, DropReason::TooLarge)])
    );
    assert_eq!(
        offer(&mut q, p.0, 3, 100),
        (false, vec![(3, p.0, DropReason::NotALeaf)])
    );
    assert_eq!(
        offer(&mut q, 0, 4, 100),
        (false, vec![(4, 0, DropReason::NotALeaf)])
    );
    // An id outside the tree: counted in the total only.
    assert_eq!(
        offer(&mut q, 99, 5, 100),
        (false, vec![(5, 99, DropReason::NotALeaf)])
    );
    assert_eq!(
        q.counters(ClassId(1)).dropped(DropReason::TooLarge),
        c(1, 1001)
    );
    assert_eq!(q.counters(p).dropped(DropReason::NotALeaf), c(1, 100));
    assert_eq!(q.total().dropped(DropReason::NotALeaf), c(3, 300));
    assert_eq!(q.total().dropped(DropReason::TooLarge), c(2, 2502));
    assert_eq!(q.total().arrived, c(6, 3802));
    assert_eq!(q.total().queued, c(1, 1000));
    q.check_conservation().unwrap();
}
