//! The four buffer structures of Keshav's cost study (`linkshare_core::ds::bids`), and
//! PERC's uncounted form that Keshav FQ runs on its packet path, against an ordered-set
//! model and against each other (spec tests P7, P8, P9).

use std::collections::BTreeSet;

use linkshare_core::ds::bids::trace::{Outcome, Trace, TraceOp, replay_all};
use linkshare_core::ds::bids::{
    BidQueue, Bounded, DoubleHeap, Entry, FastPerc, LinkedList, PerConversation, SearchTree, Tag,
};
use linkshare_core::hierarchy::Limit;
use linkshare_core::units::{Bytes, Duration, Instant};
use proptest::prelude::*;

const CONVS: u32 = 6;

/// One operation: insert into a conversation (with a key step), or get_min.
#[derive(Clone, Copy, Debug)]
enum Op {
    Insert { conv: u32, size: u32, key: u128 },
    GetMin,
}

/// Operations whose keys grow within each conversation (as fair queueing's bids do):
/// `key` is the step added to the conversation's last key, or to a global floor.
fn monotone_ops() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(
        prop_oneof![
            3 => (0..CONVS, 40u32..1500, 0u128..3000).prop_map(|(conv, size, key)| Op::Insert { conv, size, key }),
            2 => Just(Op::GetMin),
        ],
        0..400,
    )
    .prop_map(|ops| {
        let mut last = [0u128; CONVS as usize];
        let mut floor = 0u128;
        ops.into_iter()
            .map(|op| match op {
                Op::Insert { conv, size, key } => {
                    floor += key / 4;
                    let k = last[conv as usize].max(floor) + 1 + key;
                    last[conv as usize] = k;
                    Op::Insert { conv, size, key: k }
                }
                g => g,
            })
            .collect()
    })
}

/// Operations with arbitrary keys (few distinct values: many equal bids).
fn arbitrary_ops() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(
        prop_oneof![
            3 => (0..CONVS, 40u32..1500, 0u128..20).prop_map(|(conv, size, key)| Op::Insert { conv, size, key }),
            2 => Just(Op::GetMin),
        ],
        0..400,
    )
}

fn limit() -> impl Strategy<Value = Limit> {
    prop_oneof![
        (1u64..40).prop_map(Limit::Packets),
        (1500u64..30_000).prop_map(|b| Limit::Bytes(Bytes(b))),
    ]
}

fn trace_of(ops: &[Op]) -> Trace {
    let ops = ops
        .iter()
        .enumerate()
        .map(|(t, op)| match *op {
            Op::Insert { conv, size, key } => TraceOp::Insert {
                time: Instant(t as u64),
                conv,
                size,
                bid: key,
            },
            Op::GetMin => TraceOp::GetMin {
                time: Instant(t as u64),
            },
        })
        .collect();
    Trace { ops, bypassed: 0 }
}

/// The model: an ordered set of `(tag, conv, size)`; the outcomes any structure must
/// produce.
fn model(ops: &[Op], limit: Limit) -> Vec<Outcome> {
    let mut set: BTreeSet<(Tag, u32)> = BTreeSet::new();
    let mut bytes = 0u64;
    let mut out = Vec::new();
    for (seq, op) in ops.iter().enumerate() {
        match *op {
            Op::Insert { size, key, .. } => {
                set.insert((Tag::new(key, seq as u64), size));
                bytes += u64::from(size);
                while match limit {
                    Limit::Packets(n) => set.len() as u64 > n,
                    Limit::Bytes(b) => bytes > b.0,
                } {
                    let (t, s) = set.pop_last().expect("over the limit means not empty");
                    bytes -= u64::from(s);
                    out.push(Outcome::Dropped(t.seq()));
                }
            }
            Op::GetMin => out.push(match set.pop_first() {
                Some((t, s)) => {
                    bytes -= u64::from(s);
                    Outcome::Served(t.seq())
                }
                None => Outcome::Empty,
            }),
        }
    }
    out
}

/// What structure `S` in a buffer of `limit` does with `ops`, as a replay reports it
/// (for [`FastPerc`], which the replay of the cost study does not run).
fn outcomes<S: BidQueue<()>>(ops: &[Op], limit: Limit) -> Vec<Outcome> {
    let mut b: Bounded<(), S> = Bounded::new(CONVS as usize, limit);
    let mut out = Vec::new();
    for (seq, op) in ops.iter().enumerate() {
        match *op {
            Op::Insert { conv, size, key } => {
                let e = Entry {
                    tag: Tag::new(key, seq as u64),
                    conv,
                    size,
                    value: (),
                };
                b.insert(e, |v| out.push(Outcome::Dropped(v.tag.seq())));
            }
            Op::GetMin => out.push(
                b.get_min()
                    .map_or(Outcome::Empty, |e| Outcome::Served(e.tag.seq())),
            ),
        }
    }
    out
}

/// Runs `ops` on structure `S` directly, checking its invariants after every operation
/// and the per-insertion cost bounds (P9) when `monotone`.
fn run_checked<S: BidQueue<()>>(
    ops: &[Op],
    limit: Limit,
    monotone: bool,
) -> Result<(), TestCaseError> {
    let mut b: Bounded<(), S> = Bounded::new(CONVS as usize, limit);
    for (seq, op) in ops.iter().enumerate() {
        match *op {
            Op::Insert { conv, size, key } => {
                let tag = Tag::new(key, seq as u64);
                let before = b.cost();
                let n_before = b.len() as u64;
                b.insert(
                    Entry {
                        tag,
                        conv,
                        size,
                        value: (),
                    },
                    |_| {},
                );
                let cost = b.cost().ops.insert - before.ops.insert;
                let n = n_before + 1;
                let bound = match S::NAME {
                    "LINK" | "TREE" => n_before,
                    "HEAP" => 2 * u64::from(n.ilog2()),
                    // At most every conversation has packets after the insertion.
                    _ if monotone => 2 * u64::from(n.min(u64::from(CONVS)).ilog2()),
                    _ => u64::MAX,
                };
                prop_assert!(
                    cost <= bound,
                    "{} insert cost {} above {}",
                    S::NAME,
                    cost,
                    bound
                );
            }
            Op::GetMin => {
                b.get_min();
            }
        }
        b.structure()
            .check()
            .map_err(|e| TestCaseError::fail(format!("{}: {e}", S::NAME)))?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// P7 with fair-queueing keys: all four structures, and PERC uncounted, serve and
    /// drop exactly what the ordered-set model does.
    #[test]
    fn structures_agree_with_the_model_on_monotone_keys(ops in monotone_ops(), limit in limit()) {
        let all = replay_all(&trace_of(&ops), limit, Duration::from_secs(1))
            .map_err(|m| TestCaseError::fail(m.to_string()))?;
        let want = model(&ops, limit);
        prop_assert_eq!(&all[0].outcomes, &want);
        prop_assert_eq!(&outcomes::<FastPerc<()>>(&ops, limit), &want);
    }

    /// P7 with arbitrary keys and many ties.
    #[test]
    fn structures_agree_with_the_model_on_arbitrary_keys(ops in arbitrary_ops(), limit in limit()) {
        let all = replay_all(&trace_of(&ops), limit, Duration::from_secs(1))
            .map_err(|m| TestCaseError::fail(m.to_string()))?;
        let want = model(&ops, limit);
        prop_assert_eq!(&all[0].outcomes, &want);
        prop_assert_eq!(&outcomes::<FastPerc<()>>(&ops, limit), &want);
    }

    /// P8 and P9: invariants after every operation (the double heap's cross pointers
    /// included), and the per-insertion cost bounds.
    #[test]
    fn invariants_and_cost_bounds(ops in monotone_ops(), limit in limit()) {
        run_checked::<LinkedList<()>>(&ops, limit, true)?;
        run_checked::<SearchTree<()>>(&ops, limit, true)?;
        run_checked::<DoubleHeap<()>>(&ops, limit, true)?;
        run_checked::<PerConversation<()>>(&ops, limit, true)?;
        run_checked::<FastPerc<()>>(&ops, limit, true)?;
    }

    #[test]
    fn invariants_on_arbitrary_keys(ops in arbitrary_ops(), limit in limit()) {
        run_checked::<LinkedList<()>>(&ops, limit, false)?;
        run_checked::<SearchTree<()>>(&ops, limit, false)?;
        run_checked::<DoubleHeap<()>>(&ops, limit, false)?;
        run_checked::<PerConversation<()>>(&ops, limit, false)?;
        run_checked::<FastPerc<()>>(&ops, limit, false)?;
    }
}

/// LINK's insertion cost is exactly the number of buffered tags above the new one.
#[test]
fn link_cost_counts_the_larger_tags() {
    let mut l = LinkedList::<()>::new(1, 8);
    let tags = [10u128, 30, 20, 40, 5, 35];
    let mut held: Vec<u128> = Vec::new();
    for (seq, &bid) in tags.iter().enumerate() {
        let before = l.ops().insert;
        l.insert(Entry {
            tag: Tag::new(bid, seq as u64),
            conv: 0,
            size: 1,
            value: (),
        });
        let larger = held.iter().filter(|&&h| h > bid).count() as u64;
        assert_eq!(l.ops().insert - before, larger, "inserting {bid}");
        held.push(bid);
    }
}

/// TREE: monotone tags make a right spine, and insertion costs the depth.
#[test]
fn tree_skews_on_monotone_tags() {
    let mut t = SearchTree::<()>::new(1, 8);
    for seq in 0..10u64 {
        let before = t.ops().insert;
        t.insert(Entry {
            tag: Tag::new(u128::from(seq), seq),
            conv: 0,
            size: 1,
            value: (),
        });
        assert_eq!(t.ops().insert - before, seq, "the new node's depth");
    }
    t.check().unwrap();
}

/// The replay splits insertions by whether the conversation had a packet buffered:
/// hand-derived on LINK, whose cost is the number of larger buffered tags.
#[test]
fn replay_counts_insertions_into_idle_conversations_apart() {
    let ops = [
        // Conversation 0 first (fresh, empty buffer: 0 links).
        Op::Insert {
            conv: 0,
            size: 1,
            key: 10,
        },
        // Conversation 1 (fresh) below 10: 1 link.
        Op::Insert {
            conv: 1,
            size: 1,
            key: 5,
        },
        // Conversation 0 again (not fresh) above everything: 0 links.
        Op::Insert {
            conv: 0,
            size: 1,
            key: 20,
        },
        // Serves conversation 1's packet: conversation 1 is idle again.
        Op::GetMin,
        // Conversation 1 (fresh) below 10 and 20: 2 links.
        Op::Insert {
            conv: 1,
            size: 1,
            key: 7,
        },
    ];
    let all = replay_all(&trace_of(&ops), Limit::Packets(10), Duration::from_secs(1))
        .expect("the structures agree");
    let link = all
        .iter()
        .find(|r| r.structure == linkshare_core::ds::bids::Structure::Link)
        .expect("LINK replayed");
    assert_eq!(link.cost.insertions, 4);
    assert_eq!(link.cost.ops.insert, 3);
    assert_eq!(link.fresh.insertions, 3);
    assert_eq!(link.fresh.ops, 3);
    for r in &all {
        assert_eq!(r.fresh.insertions, 3, "{:?}", r.structure);
    }
}
