//! HDRR against the HLS paper's description (§VII, Lemmas 8–9, Theorem 4), with
//! expected values computed by hand.

use linkshare_core::hierarchy::{ClassId, ClassSpec, ClassTree, LinkSpec};
use linkshare_core::sched::hdrr::Hdrr;
use linkshare_core::sched::{Enqueue, Scheduler, SchedulerKind, build};
use linkshare_core::testing::{TestPacket, hls_fig1};
use linkshare_core::units::{Bytes, Instant, Rate};

const T0: Instant = Instant::ZERO;
const LEAVES: [&str; 5] = ["A1", "A2", "B1", "B2", "C"];

fn class(name: &str, parent: Option<&str>, weight: u32) -> ClassSpec {
    let mut s = ClassSpec::new(name, parent);
    s.weight = Some(weight);
    s.max_packet = Some(Bytes(1500));
    s
}

fn put(h: &mut Hdrr<TestPacket>, class: ClassId, id: u64, len: u32) {
    let r = h.enqueue(T0, class, TestPacket { id, len }, &mut Vec::new());
    assert!(matches!(r, Enqueue::Queued));
}

/// Smooth weighted round robin of 3:3:4 (300:300:400 reduced) at the root is, by hand,
/// C A B C A B C A B C; of A's 1:2 it is A2 A1 A2 (and B2 B1 B2 for B). With Q = 1500 and
/// 1500 B packets each visit sends one packet, so the first ten packets are
/// C A2 B2 C A1 B1 C A2 B2 C, and 30 visits hold 9 of A (three 1:2 cycles), 9 of B and
/// 12 of C.
#[test]
fn visiting_order_interleaves_by_weight() {
    let t = hls_fig1();
    let mut h = Hdrr::new(&t).unwrap();
    let mut id = 0;
    for leaf in LEAVES {
        for _ in 0..50 {
            put(&mut h, t.id_of(leaf).unwrap(), id, 1500);
            id += 1;
        }
    }
    let order: Vec<String> = (0..30)
        .map(|_| t.get(h.dequeue(T0).unwrap().class).name().to_owned())
        .collect();
    assert_eq!(
        order[..10],
        ["C", "A2", "B2", "C", "A1", "B1", "C", "A2", "B2", "C"]
    );
    let count: Vec<usize> = LEAVES
        .iter()
        .map(|l| order.iter().filter(|n| n == l).count())
        .collect();
    assert_eq!(count, [3, 6, 3, 6, 12]);
}

/// Theorem 4 on Fig. 1 with Q = L_max = 1500 B: sibling leaves A1, A2 satisfy
/// |D_i/w_i - D_j/w_j| <= 1500/100 + 1500/200 + 1500 = 1522.5 bytes (the paper's
/// alpha(HDRR)) over every interval, with random packet sizes.
#[test]
fn fig1_sibling_fairness_within_theorem_4() {
    let t = hls_fig1();
    let mut h = Hdrr::new(&t).unwrap();
    let (a1, a2) = (t.id_of("A1").unwrap(), t.id_of("A2").unwrap());
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut len = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        40 + (seed % 1461) as u32
    };
    let mut id = 0;
    for leaf in t.leaves().to_vec() {
        for _ in 0..8 {
            put(&mut h, leaf, id, len());
            id += 1;
        }
    }
    let (mut d1, mut d2) = (0u64, 0u64);
    let (mut lo, mut hi) = (0f64, 0f64);
    for _ in 0..300_000 {
        let d = h.dequeue(T0).unwrap();
        if d.class == a1 {
            d1 += u64::from(d.pkt.len);
        } else if d.class == a2 {
            d2 += u64::from(d.pkt.len);
        }
        put(&mut h, d.class, id, len());
        id += 1;
        let x = d1 as f64 / 100.0 - d2 as f64 / 200.0;
        lo = lo.min(x);
        hi = hi.max(x);
    }
    assert!(hi - lo <= 1522.5, "max |D1/w1 - D2/w2| = {}", hi - lo);
    assert!(d1 > 0 && d2 > 0);
}

/// Two leaves of equal weight, slots x y. x sends 100 B and empties: its deficit
/// (1400 left) must be reset to 0. Then x holds 1500 B + 1 B and y two 1500 B packets.
/// With the reset: y, x(1500) [x's deficit is 0, the 1 B waits], y, x(1). A deficit
/// kept from before would let x send both packets in one visit: y, x, x, y.
#[test]
fn a_leaf_that_empties_loses_its_deficit() {
    let link = LinkSpec {
        name: "root".into(),
        rate: Rate::from_gbit(1),
        origin: None,
    };
    let t = ClassTree::build(link, vec![class("x", None, 1), class("y", None, 1)]).unwrap();
    let (x, y) = (t.id_of("x").unwrap(), t.id_of("y").unwrap());
    let mut h = Hdrr::new(&t).unwrap();
    put(&mut h, x, 0, 100);
    assert_eq!(h.dequeue(T0).unwrap().pkt.id, 0);
    put(&mut h, x, 1, 1500);
    put(&mut h, x, 2, 1);
    put(&mut h, y, 3, 1500);
    put(&mut h, y, 4, 1500);
    let ids: Vec<u64> = std::iter::from_fn(|| h.dequeue(T0))
        .map(|d| d.pkt.id)
        .collect();
    assert_eq!(ids, [3, 1, 4, 2]);
}

#[test]
fn too_many_slots_is_a_build_error() {
    let link = LinkSpec {
        name: "root".into(),
        rate: Rate::from_gbit(1),
        origin: None,
    };
    let t = ClassTree::build(
        link,
        vec![class("a", None, 3_000_001), class("b", None, 3_000_000)],
    )
    .unwrap();
    let err = build::<TestPacket>(SchedulerKind::Hdrr, &t)
        .err()
        .expect("refused");
    assert!(err.to_string().contains("use smaller weights"), "{err}");
}
