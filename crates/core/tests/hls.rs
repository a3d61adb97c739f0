//! HLS against the paper: the quota invariant (Eq. 12) after every operation, a service
//! order traced by hand from Eqs. 4–9, and the fairness bound of Theorem 3 on the
//! paper's Fig. 1 hierarchy (alpha = 103.5 bytes, §VI).

use linkshare_core::hierarchy::{ClassId, ClassSpec, ClassTree, LinkSpec};
use linkshare_core::sched::hls::Hls;
use linkshare_core::sched::{Enqueue, Scheduler};
use linkshare_core::testing::{TestPacket, hls_fig1};
use linkshare_core::units::{Bytes, Instant, Rate};
use proptest::prelude::*;

const T0: Instant = Instant::ZERO;

fn class(name: &str, parent: Option<&str>, weight: u32, l_max: u64) -> ClassSpec {
    let mut s = ClassSpec::new(name, parent);
    s.weight = Some(weight);
    s.max_packet = Some(Bytes(l_max));
    s
}

fn tree(specs: Vec<ClassSpec>) -> ClassTree {
    let link = LinkSpec {
        name: "root".into(),
        rate: Rate::from_gbit(1),
        origin: None,
    };
    ClassTree::build(link, specs).expect("valid tree")
}

fn put(h: &mut Hls<TestPacket>, class: ClassId, id: u64, len: u32) {
    let r = h.enqueue(T0, class, TestPacket { id, len }, &mut Vec::new());
    assert!(matches!(r, Enqueue::Queued));
}

/// Two leaves with weights 1 and 3, L_max = 1000 B, 1000 B packets, both backlogged.
/// Traced by hand: Q* = (1 + 1000) + (3 + 1000) = 2004.
/// Round 1: F_root = 2004/4 = 501, a: 501 (skip), b: 1503 -> sends (503 left).
/// Round 2: B_root = 1000, F = 250, a: 751 (skip), b: 1253 -> sends (253).
/// Round 3: F = 250, a: 1001 -> sends (1), b: 1003 -> sends (3).
/// Round 4: B_root = 2000, F = 500, a: 501 (skip), b: 1503 -> sends. Then as rounds 2-3.
#[test]
fn service_order_traced_by_hand() {
    let t = tree(vec![class("a", None, 1, 1000), class("b", None, 3, 1000)]);
    let (a, b) = (t.id_of("a").unwrap(), t.id_of("b").unwrap());
    let mut h = Hls::new(&t);
    for i in 0..20 {
        put(&mut h, a, i, 1000);
        put(&mut h, b, 100 + i, 1000);
    }
    let order: Vec<&str> = (0..8)
        .map(|_| {
            let d = h.dequeue(T0).unwrap();
            h.check_invariants().unwrap();
            if d.class == a { "a" } else { "b" }
        })
        .collect();
    assert_eq!(order, ["b", "b", "a", "b", "b", "b", "a", "b"]);
    assert_eq!(h.rounds(), (6, 0), "six main rounds, as traced");
    assert_eq!(h.q_star(), 2004);
}

/// An arrival to an idle leaf waits for the next round (§IV: "If a class becomes idle
/// during a round, it remains idle until the end of that round").
#[test]
fn arrival_mid_round_waits_for_next_round() {
    let t = tree(vec![
        class("a", None, 1, 1000),
        class("b", None, 1, 1000),
        class("c", None, 1, 1000),
    ]);
    let (a, b, c) = (
        t.id_of("a").unwrap(),
        t.id_of("b").unwrap(),
        t.id_of("c").unwrap(),
    );
    let mut h = Hls::new(&t);
    // a and b: Q* = 2 * 1001, F_root = 1001: each sends one 1000 B packet per round.
    for i in 0..3 {
        put(&mut h, a, i, 1000);
        put(&mut h, b, 10 + i, 1000);
    }
    assert_eq!(h.dequeue(T0).unwrap().class, a);
    put(&mut h, c, 20, 1000); // mid-round: c is not visited in this round
    assert_eq!(h.dequeue(T0).unwrap().class, b);
    let next: Vec<ClassId> = (0..3).map(|_| h.dequeue(T0).unwrap().class).collect();
    assert_eq!(next, [a, b, c]);
    h.check_invariants().unwrap();
}

/// A leaf that goes idle leaves balance in its parent's residual; a surplus round then
/// distributes it (the published Linux module has no surplus round).
#[test]
fn surplus_rounds_run_and_keep_the_invariant() {
    let t = hls_fig1();
    let id = |n: &str| t.id_of(n).unwrap();
    let mut h = Hls::new(&t);
    let mut next_id = 0;
    for round in 0..2000u64 {
        // A1 and C greedy; A2 sends a small packet now and then and goes idle again.
        for leaf in ["A1", "C"] {
            put(&mut h, id(leaf), next_id, 1500);
            next_id += 1;
        }
        if round % 7 == 0 {
            put(&mut h, id("A2"), next_id, 100);
            next_id += 1;
        }
        for _ in 0..2 {
            let _ = h.dequeue(T0);
            h.check_invariants().unwrap();
        }
    }
    let (main, surplus) = h.rounds();
    assert!(main > 0 && surplus > 0, "main {main}, surplus {surplus}");
}

/// Theorem 3 on Fig. 1: with every leaf greedy, over every interval, sibling pairs
/// satisfy |D_i/w_i - D_j/w_j| <= alpha(HLS) = 103.5 bytes (the paper's value, §VI-A;
/// recomputed by hand from Lemmas 5-7: A~_A = 300 + 3000 = 3300, max (w + A~)/w = 12,
/// A-bar = 3300 + 300 * 12 = 6900, alpha(A1, A2) = 6900/100 + 6900/200 = 103.5).
#[test]
fn fig1_sibling_fairness_within_theorem_3() {
    let t = hls_fig1();
    let leaves = ["A1", "A2", "B1", "B2", "C"];
    let mut h = Hls::new(&t);
    let mut sent = vec![0u64; t.len()];
    // X(t) per sibling pair; the largest |X(t2) - X(t1)| over all t1 < t2 is max - min.
    let pairs = [
        ("A1", "A2"),
        ("B1", "B2"),
        ("A", "B"),
        ("A", "C"),
        ("B", "C"),
    ];
    let mut range = vec![(f64::MAX, f64::MIN); pairs.len()];
    let mut id = 0;
    for leaf in leaves {
        for _ in 0..4 {
            put(&mut h, t.id_of(leaf).unwrap(), id, 1000);
            id += 1;
        }
    }
    for _ in 0..200_000 {
        let d = h.dequeue(T0).unwrap();
        put(&mut h, d.class, id, 1000); // keep every leaf backlogged
        id += 1;
        sent[d.class.index()] += 1000;
        for a in t.ancestors(d.class) {
            sent[a.index()] += 1000;
        }
        for (k, (i, j)) in pairs.iter().enumerate() {
            let (i, j) = (t.id_of(i).unwrap(), t.id_of(j).unwrap());
            let x = sent[i.index()] as f64 / f64::from(t.get(i).weight())
                - sent[j.index()] as f64 / f64::from(t.get(j).weight());
            range[k] = (range[k].0.min(x), range[k].1.max(x));
        }
    }
    for (k, (lo, hi)) in range.iter().enumerate() {
        assert!(
            hi - lo <= 103.5,
            "{:?}: max |D_i/w_i - D_j/w_j| = {}",
            pairs[k],
            hi - lo
        );
    }
    // Long-run shares are the guarantees: 100:200:100:200:400 Mbit/s.
    let total: u64 = leaves
        .iter()
        .map(|l| sent[t.id_of(l).unwrap().index()])
        .sum();
    for (leaf, share) in leaves.iter().zip([0.1, 0.2, 0.1, 0.2, 0.4]) {
        let got = sent[t.id_of(leaf).unwrap().index()] as f64 / total as f64;
        assert!((got - share).abs() < 1e-3, "{leaf}: {got}");
    }
}

/// §VIII-C: A1, B2 and C greedy share 3:3:4; with C idle, A1 and B2 share 1:1.
#[test]
fn exp2_allocation_follows_hmm_fairness() {
    let t = hls_fig1();
    let id = |n: &str| t.id_of(n).unwrap();
    let share = |active: &[&str]| {
        let mut h = Hls::new(&t);
        let mut sent = vec![0u64; t.len()];
        for (k, leaf) in active.iter().enumerate() {
            for j in 0..4 {
                put(&mut h, id(leaf), (k * 10 + j) as u64, 1000);
            }
        }
        for n in 0..100_000u64 {
            let d = h.dequeue(T0).unwrap();
            sent[d.class.index()] += 1000;
            put(&mut h, d.class, 1000 + n, 1000);
        }
        let total: u64 = sent.iter().sum();
        active
            .iter()
            .map(|l| sent[id(l).index()] as f64 / total as f64)
            .collect::<Vec<_>>()
    };
    let three = share(&["A1", "B2", "C"]);
    for (got, want) in three.iter().zip([0.3, 0.3, 0.4]) {
        assert!((got - want).abs() < 1e-3, "{three:?}");
    }
    let two = share(&["A1", "B2"]);
    for got in &two {
        assert!((got - 0.5).abs() < 1e-3, "{two:?}");
    }
}

proptest! {
    /// Eq. 12 and the Theorem 2 round size hold after every enqueue and dequeue, for
    /// random trees, weights, packet sizes and operation sequences.
    #[test]
    fn quota_invariant_after_every_operation(
        shape in proptest::collection::vec(0usize..4, 1..5),
        weights in proptest::collection::vec(1u32..500, 20),
        ops in proptest::collection::vec((0u32..20, 1u32..1500, any::<bool>()), 1..400),
    ) {
        let mut specs = Vec::new();
        let mut w = weights.iter().cycle();
        for (i, &kids) in shape.iter().enumerate() {
            specs.push(class(&format!("p{i}"), None, *w.next().unwrap(), 1500));
            for k in 0..kids {
                specs.push(class(&format!("p{i}c{k}"), Some(&format!("p{i}")), *w.next().unwrap(), 1500));
            }
        }
        let t = tree(specs);
        let leaves = t.leaves().to_vec();
        let mut h = Hls::new(&t);
        let mut queued = 0usize;
        for (n, (leaf, len, enq)) in ops.into_iter().enumerate() {
            if enq {
                put(&mut h, leaves[leaf as usize % leaves.len()], n as u64, len);
                queued += 1;
            } else {
                let got = h.dequeue(T0);
                prop_assert_eq!(got.is_some(), queued > 0, "work conservation");
                queued -= usize::from(got.is_some());
            }
            if let Err(e) = h.check_invariants() {
                prop_assert!(false, "after op {}: {}", n, e);
            }
        }
    }
}
