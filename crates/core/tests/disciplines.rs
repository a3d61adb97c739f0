//! Behaviour of the first disciplines (FIFO, strict priority, DRR) against expected
//! values derived by hand from each algorithm's definition.

use linkshare_core::hierarchy::{ClassId, ClassSpec, ClassTree, LinkSpec};
use linkshare_core::sched::drr::Drr;
use linkshare_core::sched::fifo::Fifo;
use linkshare_core::sched::prio::Prio;
use linkshare_core::sched::{Enqueue, Scheduler};
use linkshare_core::testing::TestPacket;
use linkshare_core::units::{Bytes, Instant, Rate};

const T0: Instant = Instant::ZERO;

fn tree(specs: Vec<ClassSpec>) -> ClassTree {
    let link = LinkSpec {
        name: "link".into(),
        rate: Rate::from_mbit(10),
        origin: None,
    };
    ClassTree::build(link, specs).expect("valid tree")
}

fn with(name: &str, f: impl FnOnce(&mut ClassSpec)) -> ClassSpec {
    let mut s = ClassSpec::new(name, None);
    f(&mut s);
    s
}

fn put<S: Scheduler<TestPacket>>(s: &mut S, class: ClassId, id: u64, len: u32) {
    let r = s.enqueue(T0, class, TestPacket { id, len }, &mut Vec::new());
    assert!(matches!(r, Enqueue::Queued), "packet {id} refused: {r:?}");
}

/// Dequeues until empty; returns (class, id) in service order.
fn drain<S: Scheduler<TestPacket>>(s: &mut S) -> Vec<(u32, u64)> {
    std::iter::from_fn(|| s.dequeue(T0))
        .map(|d| (d.class.0, d.pkt.id))
        .collect()
}

/// A small deterministic sequence (64-bit LCG, Knuth's MMIX constants).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

#[test]
fn fifo_serves_in_arrival_order_across_classes() {
    let mut s = Fifo::new();
    let classes = [1, 3, 2, 2, 1, 3, 3, 1];
    for (id, &c) in classes.iter().enumerate() {
        put(&mut s, ClassId(c), id as u64, 100);
    }
    let expected: Vec<(u32, u64)> = classes
        .iter()
        .enumerate()
        .map(|(i, &c)| (c, i as u64))
        .collect();
    assert_eq!(drain(&mut s), expected);
}

#[test]
fn prio_prefers_lower_numbers_and_round_robins_within_a_level() {
    let t = tree(vec![
        with("lo", |s| s.priority = Some(1)),
        with("hi1", |s| s.priority = Some(0)),
        with("hi2", |s| s.priority = Some(0)),
        ClassSpec::new("default", None),
        with("bottom", |s| s.priority = Some(7)),
    ]);
    let (lo, hi1, hi2, def, bottom) = (ClassId(1), ClassId(2), ClassId(3), ClassId(4), ClassId(5));
    let mut s = Prio::new(&t);
    assert_eq!(
        s.level_of(def),
        Some(0),
        "a leaf without a priority is at level 0"
    );
    assert_eq!(s.level_of(ClassId::ROOT), None);
    put(&mut s, bottom, 0, 100);
    put(&mut s, lo, 1, 100);
    put(&mut s, hi1, 2, 100);
    put(&mut s, hi2, 3, 1500);
    put(&mut s, hi1, 4, 100);
    put(&mut s, lo, 5, 100);
    put(&mut s, hi2, 6, 100);
    put(&mut s, def, 7, 100);
    // Level 0 leaves take turns in the order they became backlogged (hi1, hi2, default),
    // one packet per turn whatever its size; then level 1, then level 7.
    let first: Vec<_> = (0..6).map(|_| s.dequeue(T0).map(|d| d.pkt.id)).collect();
    assert_eq!(
        first,
        [Some(2), Some(3), Some(7), Some(4), Some(6), Some(1)]
    );
    // A higher-priority arrival goes before the rest of level 1.
    put(&mut s, hi2, 8, 100);
    assert_eq!(drain(&mut s), [(3, 8), (1, 5), (5, 0)]);
}

#[test]
fn prio_newcomer_waits_for_the_leaves_already_at_its_level() {
    let t = ClassTree::flat(Rate::from_mbit(10), 3);
    let mut s = Prio::new(&t);
    for id in 0..3 {
        put(&mut s, ClassId(1), id, 100);
        put(&mut s, ClassId(2), 10 + id, 100);
    }
    assert_eq!(s.dequeue(T0).map(|d| d.pkt.id), Some(0));
    // c3 joins the back of the ring: after c2 (whose turn is next) and c1.
    put(&mut s, ClassId(3), 20, 100);
    assert_eq!(
        drain(&mut s),
        [(2, 10), (1, 1), (3, 20), (2, 11), (1, 2), (2, 12)]
    );
}

#[test]
fn prio_remove_newest_unlinks_an_emptied_leaf() {
    let t = ClassTree::flat(Rate::from_mbit(10), 3);
    let mut s = Prio::new(&t);
    for c in 1..=3 {
        put(&mut s, ClassId(c), u64::from(c), 100);
    }
    put(&mut s, ClassId(2), 22, 100);
    assert_eq!(s.remove_newest(ClassId(2)).map(|p| p.id), Some(22));
    assert_eq!(s.remove_newest(ClassId(2)).map(|p| p.id), Some(2));
    assert_eq!(s.remove_newest(ClassId(2)), None);
    assert_eq!(drain(&mut s), [(1, 1), (3, 3)]);
}

/// Three always-backlogged leaves with quanta 500, 1000 and 1500 bytes and random packet
/// sizes (40..=1500 B) get bytes in the ratio 1:2:3.
///
/// Bound (module docs of `drr`, from the paper's argument): counting from the instant all
/// become backlogged, a leaf that has started `t` turns has sent at most `t·Q_i` and
/// more than `(t−1)·Q_i − L_max` bytes, and turn counts differ by at most one, so
/// `sent_j/Q_j − sent_i/Q_i < 2 + L_max/Q_i`, i.e.
/// `sent_j·Q_i − sent_i·Q_j < (2·Q_i + L_max)·Q_j`. Checked after every dequeue; a DRR
/// that ignored the quanta would break it within a few hundred packets.
#[test]
fn drr_shares_follow_quanta_within_the_fairness_bound() {
    let quanta = [500u64, 1000, 1500];
    let t = tree(
        quanta
            .iter()
            .enumerate()
            .map(|(i, &q)| with(&format!("c{i}"), |s| s.quantum = Some(Bytes(q))))
            .collect(),
    );
    let l_max = 1500u64;
    let mut s = Drr::new(&t);
    let mut rng = Lcg(7);
    let mut next_id = 0;
    let mut refill = |s: &mut Drr<TestPacket>, c: u32, rng: &mut Lcg| {
        put(s, ClassId(c), next_id, 40 + rng.below(1461) as u32);
        next_id += 1;
    };
    for c in 1..=3 {
        for _ in 0..4 {
            refill(&mut s, c, &mut rng);
        }
    }
    let mut sent = [0u64; 3];
    for n in 0..30_000 {
        let d = s.dequeue(T0).expect("always backlogged");
        sent[d.class.index() - 1] += u64::from(d.pkt.len);
        refill(&mut s, d.class.0, &mut rng);
        for i in 0..3 {
            for j in 0..3 {
                let (qi, qj) = (quanta[i], quanta[j]);
                let lead = i128::from(sent[j] * qi) - i128::from(sent[i] * qj);
                let bound = i128::from((2 * qi + l_max) * qj);
                assert!(
                    lead < bound,
                    "after {n} packets, sent {sent:?}: leaf {j} leads leaf {i} by {lead} > {bound}"
                );
            }
        }
    }
    // Over 30 000 packets (~22 MB) the bound pins the ratio to within a fraction of a
    // percent of 1:2:3.
    assert!(sent[1].abs_diff(2 * sent[0]) < sent[0] / 100, "{sent:?}");
    assert!(sent[2].abs_diff(3 * sent[0]) < sent[0] / 100, "{sent:?}");
}

/// Equal quanta, one leaf sending 1500-byte packets and one 100-byte packets: bytes are
/// shared equally (within the bound above, `|sent_a − sent_b| < 2·Q + L_max`), so the
/// small-packet leaf sends 15 times as many packets.
#[test]
fn drr_shares_bytes_not_packets() {
    let t = ClassTree::flat(Rate::from_mbit(10), 2);
    let mut s = Drr::new(&t);
    assert_eq!(s.quantum_of(ClassId(1)), Some(Bytes(1500)));
    let len = [1500u32, 100];
    let mut id = 0;
    for c in 1..=2u32 {
        for _ in 0..20 {
            put(&mut s, ClassId(c), id, len[c as usize - 1]);
            id += 1;
        }
    }
    let (mut bytes, mut packets) = ([0i64; 2], [0u64; 2]);
    for _ in 0..16_000 {
        let d = s.dequeue(T0).expect("always backlogged");
        let k = d.class.index() - 1;
        bytes[k] += i64::from(d.pkt.len);
        packets[k] += 1;
        put(&mut s, d.class, id, len[k]);
        id += 1;
        assert!((bytes[0] - bytes[1]).abs() < 2 * 1500 + 1500, "{bytes:?}");
    }
    // 16 000 packets = 1000 turns of (1 + 15) packets exactly.
    assert_eq!(packets, [1000, 15_000]);
}

/// A leaf whose queue empties leaves the active list and its deficit is reset: when it
/// comes back it has only one quantum to spend, not its leftover.
#[test]
fn drr_emptied_leaf_loses_its_deficit() {
    let t = tree(vec![
        with("a", |s| s.quantum = Some(Bytes(1000))),
        with("b", |s| s.quantum = Some(Bytes(1000))),
    ]);
    let (a, b) = (ClassId(1), ClassId(2));
    let mut s = Drr::new(&t);
    put(&mut s, a, 0, 300);
    for id in 1..=5 {
        put(&mut s, b, id, 1000);
    }
    // a: deficit 1000 - 300 = 700 left when its queue empties; reset to 0.
    assert_eq!(s.dequeue(T0).map(|d| d.pkt.id), Some(0));
    assert_eq!(s.deficit_of(a), Some(Bytes(0)));
    assert_eq!(s.dequeue(T0).map(|d| d.pkt.id), Some(1));
    // a comes back behind b with a 1500-byte packet. Its first turn credits 1000 < 1500
    // (with the kept 700 it would have sent now), so b goes first; a sends on its
    // second turn, with 2000.
    put(&mut s, a, 10, 1500);
    let order: Vec<u64> = (0..3)
        .filter_map(|_| s.dequeue(T0))
        .map(|d| d.pkt.id)
        .collect();
    assert_eq!(order, [2, 10, 3]);
    assert_eq!(s.deficit_of(a), Some(Bytes(0)));
}

/// A quantum below the packet size: the leaf is skipped, accumulating its quantum, and
/// sends once every `L / Q` turns.
#[test]
fn drr_quantum_below_packet_size_accumulates_over_turns() {
    let t = tree(vec![
        with("a", |s| s.quantum = Some(Bytes(500))),
        with("b", |s| s.quantum = Some(Bytes(1500))),
    ]);
    let mut s = Drr::new(&t);
    for id in 0..4 {
        put(&mut s, ClassId(1), id, 1500);
    }
    for id in 10..20 {
        put(&mut s, ClassId(2), id, 1500);
    }
    // Round r credits a 500·r (it sends in rounds 3, 6, ...) and b 1500 (one packet).
    let classes: Vec<u32> = (0..12)
        .filter_map(|_| s.dequeue(T0))
        .map(|d| d.class.0)
        .collect();
    assert_eq!(classes, [2, 2, 1, 2, 2, 2, 1, 2, 2, 2, 1, 2]);
}

#[test]
fn drr_default_quantum_is_weight_times_largest_max_packet() {
    let t = tree(vec![
        with("a", |s| s.weight = Some(1)),
        with("b", |s| s.weight = Some(3)),
        with("c", |s| s.max_packet = Some(Bytes(9000))),
        with("d", |s| s.quantum = Some(Bytes(64))),
        ClassSpec::new("p", None),
        ClassSpec::new("p1", Some("p")),
    ]);
    let s: Drr<TestPacket> = Drr::new(&t);
    let q = |n: &str| s.quantum_of(t.id_of(n).unwrap());
    assert_eq!(q("a"), Some(Bytes(9000)));
    assert_eq!(q("b"), Some(Bytes(27_000)));
    assert_eq!(q("c"), Some(Bytes(9000)));
    assert_eq!(q("d"), Some(Bytes(64)));
    assert_eq!(q("p1"), Some(Bytes(9000)));
    assert_eq!(q("p"), None, "interior classes are ignored");
}

/// Removing packets from a leaf in the middle of the active list (push-out) keeps the
/// others' order; a leaf emptied that way leaves the list and loses its deficit,
/// including the head in the middle of its turn.
#[test]
fn drr_remove_newest_from_any_position() {
    let t = tree(
        (0..3)
            .map(|i| with(&format!("c{i}"), |s| s.quantum = Some(Bytes(300))))
            .collect(),
    );
    let mut s = Drr::new(&t);
    for c in 1..=3u32 {
        for k in 0..3 {
            put(&mut s, ClassId(c), u64::from(10 * c + k), 100);
        }
    }
    // c1's turn: it sends 10, then has 200 left.
    assert_eq!(s.dequeue(T0).map(|d| d.pkt.id), Some(10));
    // c2, in the middle of the list, is emptied from the tail.
    for id in [22, 21, 20] {
        assert_eq!(s.remove_newest(ClassId(2)).map(|p| p.id), Some(id));
    }
    assert_eq!(s.remove_newest(ClassId(2)), None);
    assert_eq!(s.deficit_of(ClassId(2)), Some(Bytes(0)));
    // c1, the head mid-turn, loses its two remaining packets and its deficit.
    assert_eq!(s.remove_newest(ClassId(1)).map(|p| p.id), Some(12));
    assert_eq!(s.remove_newest(ClassId(1)).map(|p| p.id), Some(11));
    assert_eq!(s.deficit_of(ClassId(1)), Some(Bytes(0)));
    put(&mut s, ClassId(1), 13, 100);
    // c3 is next, with a fresh quantum of 300: all three of its packets; then c1.
    assert_eq!(drain(&mut s), [(3, 30), (3, 31), (3, 32), (1, 13)]);
}
