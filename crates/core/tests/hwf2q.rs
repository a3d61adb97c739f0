//! H-WF2Q+ (Bennett and Zhang's H-PFQ with WF2Q+ servers): hierarchical shares computed
//! by hand, no catch-up burst after idling, consistency with flat WF2Q+, and the
//! engine's bookkeeping under random operations.

use linkshare_core::hierarchy::{ClassId, ClassSpec, ClassTree};
use linkshare_core::sched::wf2q::Wf2q;
use linkshare_core::sched::{Enqueue, Scheduler, SchedulerKind, build};
use linkshare_core::testing::TestPacket;
use linkshare_core::testing::tree;
use linkshare_core::units::{Bytes, Instant, Rate};
use proptest::prelude::*;

fn class(name: &str, parent: Option<&str>, rate: Option<Rate>, weight: Option<u32>) -> ClassSpec {
    let mut s = ClassSpec::new(name, parent);
    s.rate = rate;
    s.weight = weight;
    s
}

fn put<S: Scheduler<TestPacket>>(s: &mut S, now: Instant, class: ClassId, len: u32) {
    let r = s.enqueue(now, class, TestPacket { id: 0, len }, &mut Vec::new());
    assert!(matches!(r, Enqueue::Queued));
}

/// Link 10 Mbit/s; `A` 6 Mbit/s with `a1`, `a2` of weights 1 and 2 (no rates: 2 and
/// 4 Mbit/s), `B` 4 Mbit/s with `b1` at 1 Mbit/s and `b2` at 3 Mbit/s.
fn two_levels() -> ClassTree {
    let mbit = |n| Some(Rate::from_mbit(n));
    tree(
        Rate::from_mbit(10),
        vec![
            class("A", None, mbit(6), None),
            class("B", None, mbit(4), None),
            class("a1", Some("A"), None, Some(1)),
            class("a2", Some("A"), None, Some(2)),
            class("b1", Some("B"), mbit(1), None),
            class("b2", Some("B"), mbit(3), None),
        ],
    )
}

/// Keeps every leaf of `greedy` backlogged (two packets of `len`) and dequeues `n`
/// packets on a link of rate `link`, time moving by each packet's transmission time.
/// Returns the leaves in departure order and the instant reached.
fn drive<S: Scheduler<TestPacket>>(
    s: &mut S,
    greedy: &[ClassId],
    start: Instant,
    link: Rate,
    len: u32,
    n: usize,
) -> (Vec<ClassId>, Instant) {
    let mut now = start;
    let mut backlog = vec![0u32; greedy.len()];
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        for (k, &c) in greedy.iter().enumerate() {
            while backlog[k] < 2 {
                put(s, now, c, len);
                backlog[k] += 1;
            }
        }
        let d = s.dequeue(now).expect("backlogged");
        if let Some(k) = greedy.iter().position(|&c| c == d.class) {
            backlog[k] -= 1;
        }
        out.push(d.class);
        now += link.tx_time(Bytes(u64::from(d.pkt.len)));
    }
    (out, now)
}

/// In every prefix of `order`, each leaf's count stays within `slack` packets of its
/// share (`num / den` of the prefix length).
fn within_shares(order: &[ClassId], shares: &[(ClassId, u64, u64)], slack: i64) {
    let mut count = vec![0i64; shares.len()];
    for (k, c) in order.iter().enumerate() {
        if let Some(i) = shares.iter().position(|s| s.0 == *c) {
            count[i] += 1;
        }
        for (i, &(leaf, num, den)) in shares.iter().enumerate() {
            let ideal = (k as i64 + 1) * num as i64;
            let dev = (count[i] * den as i64 - ideal).abs();
            assert!(
                dev <= slack * den as i64,
                "leaf {leaf:?}: {} packets of {} (share {num}/{den})",
                count[i],
                k + 1
            );
        }
    }
}

#[test]
fn rates_come_from_the_parent_by_weight() {
    let t = two_levels();
    let h = Wf2q::<TestPacket>::hierarchical(&t).unwrap();
    let rate = |n: &str| h.rate_of(t.id_of(n).unwrap()).unwrap();
    assert_eq!(rate("a1"), Rate::from_mbit(2));
    assert_eq!(rate("a2"), Rate::from_mbit(4));
    assert_eq!(rate("b2"), Rate::from_mbit(3));
    assert_eq!(h.rate_of(ClassId::ROOT), Some(Rate::from_mbit(10)));

    let full = tree(
        Rate::from_mbit(10),
        vec![
            class("A", None, Some(Rate::from_mbit(4)), None),
            class("a1", Some("A"), Some(Rate::from_mbit(4)), None),
            class("a2", Some("A"), None, None),
        ],
    );
    let err = build::<TestPacket>(SchedulerKind::Hwf2q, &full)
        .err()
        .expect("a2 has no share");
    assert!(
        err.to_string().contains("`a2`") && err.to_string().contains("`A`"),
        "{err}"
    );
}

/// Classes left without a rate are refused, each cause once: `B` and `c` get nothing of
/// the link that `A` takes whole, and `B`'s child `b1` (nothing of nothing) is not named
/// again. H-WF2Q+ and HTB share the rule and say the same.
#[test]
fn every_class_without_a_share_is_named_once() {
    let t = tree(
        Rate::from_mbit(10),
        vec![
            class("A", None, Some(Rate::from_mbit(10)), None),
            class("B", None, None, None),
            class("b1", Some("B"), None, None),
            class("c", None, None, None),
        ],
    );
    for kind in [SchedulerKind::Hwf2q, SchedulerKind::Htb] {
        let err = build::<TestPacket>(kind, &t)
            .err()
            .expect("no share for B, c");
        let named: Vec<&str> = err.problems.iter().map(|p| p.class.as_str()).collect();
        assert_eq!(named, ["B", "c"], "{kind}: {err}");
        assert!(err.problems.iter().all(|p| p.field == "rate"), "{err}");
    }
}

/// All leaves greedy with equal packets: the hierarchical allocation is each leaf's
/// rate, 2 : 4 : 1 : 3 of 10 Mbit/s. With `b2` idle, `B`'s 4 Mbit/s all go to `b1`
/// (`A` and `B` still split 6 : 4): 2 : 4 : 4. With equal packets a WF2Q+ server keeps
/// each child within one packet of its share at every instant; through two levels a
/// leaf may be off by one packet at each, so every prefix of the departures is checked
/// to within two packets.
#[test]
fn greedy_leaves_get_the_hierarchical_allocation() {
    let t = two_levels();
    let id = |n: &str| t.id_of(n).unwrap();
    let (a1, a2, b1, b2) = (id("a1"), id("a2"), id("b1"), id("b2"));
    let link = t.link_rate();

    let mut h = Wf2q::hierarchical(&t).unwrap();
    let (order, _) = drive(&mut h, &[a1, a2, b1, b2], Instant::ZERO, link, 1000, 10_000);
    within_shares(
        &order,
        &[(a1, 2, 10), (a2, 4, 10), (b1, 1, 10), (b2, 3, 10)],
        2,
    );

    let mut h = Wf2q::hierarchical(&t).unwrap();
    let (order, _) = drive(&mut h, &[a1, a2, b1], Instant::ZERO, link, 1000, 10_000);
    within_shares(&order, &[(a1, 2, 10), (a2, 4, 10), (b1, 4, 10)], 2);
    assert_eq!(h.served(id("B")), Some(4000 * 1000));
}

/// `A` and `B` at 5 Mbit/s each; `a1`, `a2` equal under `A`. While `a2` is idle, `a1`
/// has all of `A` (1/2 of the link); when `a2` comes back it gets its 1/4 at once and
/// no more: no catch-up burst for the time it was away (its start tag is `A`'s virtual
/// time, not its old finish tag).
#[test]
fn a_class_back_from_idle_gets_its_share_and_no_burst() {
    let mbit = |n| Some(Rate::from_mbit(n));
    let t = tree(
        Rate::from_mbit(10),
        vec![
            class("A", None, mbit(5), None),
            class("B", None, mbit(5), None),
            class("a1", Some("A"), None, None),
            class("a2", Some("A"), None, None),
            class("b1", Some("B"), None, None),
        ],
    );
    let id = |n: &str| t.id_of(n).unwrap();
    let (a1, a2, b1) = (id("a1"), id("a2"), id("b1"));
    let link = t.link_rate();
    let mut h = Wf2q::hierarchical(&t).unwrap();
    // a2 sends a little first, then idles while a1 and b1 are greedy.
    let (first, now) = drive(&mut h, &[a1, a2, b1], Instant::ZERO, link, 1000, 40);
    within_shares(&first, &[(a1, 1, 4), (a2, 1, 4), (b1, 1, 2)], 2);
    let drained: Vec<ClassId> = std::iter::from_fn(|| h.dequeue(now))
        .map(|d| d.class)
        .collect();
    assert!(drained.len() <= 6);
    let (alone, now) = drive(&mut h, &[a1, b1], now, link, 1000, 5_000);
    within_shares(&alone, &[(a1, 1, 2), (b1, 1, 2)], 2);
    let (back, _) = drive(&mut h, &[a1, a2, b1], now, link, 1000, 2_000);
    within_shares(&back, &[(a1, 1, 4), (a2, 1, 4), (b1, 1, 2)], 2);
}

/// On a flat tree H-WF2Q+ is flat WF2Q+: the same departures for random traffic.
#[test]
fn on_a_flat_tree_it_is_wf2q() {
    let classes = (0..6)
        .map(|i| class(&format!("l{i}"), None, None, Some(1 + i % 3)))
        .collect();
    let t = tree(Rate::from_mbit(10), classes);
    let leaves = t.leaves().to_vec();
    let mut h = Wf2q::hierarchical(&t).unwrap();
    let mut w = Wf2q::new(&t).unwrap();
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut now = Instant::ZERO;
    for _ in 0..20_000 {
        let r = next();
        if r % 3 == 0 {
            let (c, len) = (
                leaves[(r >> 8) as usize % leaves.len()],
                40 + (r >> 20) as u32 % 1461,
            );
            put(&mut h, now, c, len);
            put(&mut w, now, c, len);
        } else {
            let (x, y) = (h.dequeue(now), w.dequeue(now));
            assert_eq!(
                x.map(|d| (d.class, d.pkt.len)),
                y.map(|d| (d.class, d.pkt.len))
            );
        }
        now.0 += (r >> 40) % 600_000;
    }
}

/// Two leaves of 1 and 3 bit/s under a 4 bit/s class, alone on 10 Gbit/s with 64 KiB
/// packets: the root's and the class's virtual times both pass 2^62 ns; the 1 : 3 share
/// holds across their rebases.
#[test]
fn shares_hold_across_rebases_at_every_level() {
    let t = tree(
        Rate::from_gbit(10),
        vec![
            class("A", None, Some(Rate(4)), None),
            class("B", None, None, None),
            class("a1", Some("A"), Some(Rate(1)), None),
            class("a2", Some("A"), Some(Rate(3)), None),
        ],
    );
    let (a1, a2) = (t.id_of("a1").unwrap(), t.id_of("a2").unwrap());
    let mut h = Wf2q::hierarchical(&t).unwrap();
    let (order, _) = drive(
        &mut h,
        &[a1, a2],
        Instant::ZERO,
        t.link_rate(),
        65_535,
        80_000,
    );
    within_shares(&order, &[(a1, 1, 4), (a2, 3, 4)], 1);
    assert!(h.rebases() >= 2, "rebases: {}", h.rebases());
    h.check_invariants().unwrap();
}

/// Random operations on random trees, push-out included.
#[derive(Clone, Debug)]
enum Op {
    Enqueue(usize, u32),
    Dequeue,
    RemoveNewest(usize),
    Advance(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (any::<usize>(), 40u32..=1500).prop_map(|(l, len)| Op::Enqueue(l, len)),
        3 => Just(Op::Dequeue),
        1 => any::<usize>().prop_map(Op::RemoveNewest),
        2 => (0u64..2_000_000).prop_map(Op::Advance),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// The engine's bookkeeping (heads, logical queues, offers, the path in service,
    /// backlogs) holds after every operation, and every packet comes out.
    #[test]
    fn bookkeeping_holds_under_random_operations(
        parents in proptest::collection::vec(any::<prop::sample::Index>(), 1..14),
        weights in proptest::collection::vec(1u32..5, 14),
        ops in proptest::collection::vec(op(), 0..300),
    ) {
        let mut specs: Vec<ClassSpec> = Vec::new();
        for (i, p) in parents.iter().enumerate() {
            let parent = (i > 0 && p.index(3) > 0).then(|| format!("c{}", p.index(i)));
            specs.push(class(&format!("c{i}"), parent.as_deref(), None, Some(weights[i])));
        }
        let t = tree(Rate::from_mbit(10), specs);
        let leaves = t.leaves().to_vec();
        let mut h = Wf2q::hierarchical(&t).unwrap();
        let mut now = Instant::ZERO;
        let mut queued = 0usize;
        for op in ops {
            match op {
                Op::Enqueue(l, len) => {
                    put(&mut h, now, leaves[l % leaves.len()], len);
                    queued += 1;
                }
                Op::Dequeue => {
                    let got = h.dequeue(now);
                    prop_assert_eq!(got.is_some(), queued > 0);
                    queued -= usize::from(got.is_some());
                }
                Op::RemoveNewest(l) => {
                    if h.remove_newest(leaves[l % leaves.len()]).is_some() {
                        queued -= 1;
                    }
                }
                Op::Advance(ns) => now.0 += ns,
            }
            if let Err(e) = h.check_invariants() {
                return Err(TestCaseError::fail(e));
            }
        }
        while queued > 0 {
            prop_assert!(h.dequeue(now).is_some());
            queued -= 1;
            now.0 += 1_000;
        }
        prop_assert!(h.dequeue(now).is_none());
        h.check_invariants().map_err(TestCaseError::fail)?;
    }
}
