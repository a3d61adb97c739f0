//! SCFQ and STFQ against their published fairness bound (Golestani 1994; Goyal, Vin and
//! Cheng 1996): two leaves backlogged over an interval receive `W_i`, `W_j` with
//! `|W_i/φ_i − W_j/φ_j| ≤ L_i^max/φ_i + L_j^max/φ_j`. WFQ is checked against the fluid
//! GPS in `keshav_fluid.rs`.

use linkshare_core::hierarchy::{ClassId, ClassSpec};
use linkshare_core::sched::keshav::round::units;
use linkshare_core::sched::pfq::{Flavor, Pfq};
use linkshare_core::sched::{Scheduler, SchedulerConfig};
use linkshare_core::testing::{TestPacket, tree};
use linkshare_core::units::{Bytes, Instant, Rate};
use proptest::prelude::*;

const LINK: Rate = Rate::from_mbit(10);

/// One leaf's burst: its weight, when it arrives, and its packet sizes.
#[derive(Clone, Debug)]
struct Burst {
    weight: u32,
    start: u64,
    sizes: Vec<u32>,
}

fn bursts() -> impl Strategy<Value = Vec<Burst>> {
    prop::collection::vec(
        (
            1u32..=4,
            0u64..20_000_000,
            prop::collection::vec(40u32..=1500, 1..80),
        )
            .prop_map(|(weight, start, sizes)| Burst {
                weight,
                start,
                sizes,
            }),
        2..6,
    )
}

/// A dequeue: when, which leaf, how many bytes.
struct Served {
    at: Instant,
    leaf: usize,
    bytes: u64,
}

/// Runs the bursts through `flavor` behind a link of [`LINK`]; returns the dequeues and
/// each leaf's rate `φ`.
fn run(flavor: Flavor, bursts: &[Burst]) -> (Vec<Served>, Vec<u64>) {
    let specs = bursts
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let mut s = ClassSpec::new(&format!("c{i}"), None);
            s.weight = Some(b.weight);
            s
        })
        .collect();
    let t = tree(LINK, specs);
    let mut s = Pfq::<TestPacket>::new(flavor, &t).expect("valid");
    let phi: Vec<u64> = (0..bursts.len())
        .map(|i| s.rate_of(ClassId(i as u32 + 1)).expect("a leaf").0)
        .collect();
    let mut arrivals: Vec<(u64, usize, u32)> = bursts
        .iter()
        .enumerate()
        .flat_map(|(i, b)| b.sizes.iter().map(move |&len| (b.start, i, len)))
        .collect();
    arrivals.sort_by_key(|a| (a.0, a.1));
    let mut out = Vec::new();
    let mut evicted = Vec::new();
    let (mut next, mut free, mut queued) = (0, Instant::ZERO, 0usize);
    while next < arrivals.len() || queued > 0 {
        let now = if queued == 0 {
            free.max(Instant(arrivals[next].0))
        } else {
            free
        };
        while next < arrivals.len() && Instant(arrivals[next].0) <= now {
            let (at, leaf, len) = arrivals[next];
            let pkt = TestPacket {
                id: next as u64,
                len,
            };
            let _ = s.enqueue(Instant(at), ClassId(leaf as u32 + 1), pkt, &mut evicted);
            queued += 1;
            next += 1;
        }
        let d = s.dequeue(now).expect("work-conserving with packets queued");
        queued -= 1;
        free = now + LINK.tx_time(Bytes(u64::from(d.pkt.len)));
        out.push(Served {
            at: now,
            leaf: d.class.index() - 1,
            bytes: u64::from(d.pkt.len),
        });
    }
    (out, phi)
}

/// The fairness bound over every interval in which two leaves are both backlogged
/// (from the later burst's arrival to the earlier last dequeue).
fn fair(flavor: Flavor, bursts: &[Burst]) -> Result<(), TestCaseError> {
    let (served, phi) = run(flavor, bursts);
    let last: Vec<Instant> = (0..bursts.len())
        .map(|i| {
            served
                .iter()
                .rev()
                .find(|s| s.leaf == i)
                .expect("served")
                .at
        })
        .collect();
    for i in 0..bursts.len() {
        for j in i + 1..bursts.len() {
            let from = Instant(bursts[i].start.max(bursts[j].start));
            let to = last[i].min(last[j]);
            if to <= from {
                continue;
            }
            let norm = |leaf: usize, bytes: u64| units(bytes, phi[leaf]) as i128;
            let (mut wi, mut wj) = (0u64, 0u64);
            let (mut lo, mut hi) = (0i128, 0i128);
            for s in served.iter().filter(|s| s.at >= from && s.at <= to) {
                if s.leaf == i {
                    wi += s.bytes;
                } else if s.leaf == j {
                    wj += s.bytes;
                } else {
                    continue;
                }
                let d = norm(i, wi) - norm(j, wj);
                lo = lo.min(d);
                hi = hi.max(d);
            }
            let lmax = |leaf: usize| *bursts[leaf].sizes.iter().max().expect("non-empty");
            let bound = norm(i, u64::from(lmax(i))) + norm(j, u64::from(lmax(j))) + 2;
            prop_assert!(
                hi - lo <= bound,
                "{:?}: leaves {} and {}: normalised service apart by {} units, bound {}",
                flavor,
                i,
                j,
                hi - lo,
                bound
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn scfq_is_within_its_fairness_bound(b in bursts()) {
        fair(Flavor::Scfq, &b)?;
    }

    #[test]
    fn stfq_is_within_its_fairness_bound(b in bursts()) {
        fair(Flavor::Stfq, &b)?;
    }
}

/// SCFQ and WFQ serve by finish tag, STFQ by start tag: of a 1500-byte packet of one
/// leaf and a 100-byte packet of another, arriving together to an idle system, SCFQ and
/// WFQ send the short one first; STFQ sees equal start tags and keeps arrival order.
#[test]
fn scfq_serves_finish_tags_and_stfq_start_tags() {
    let t = tree(
        LINK,
        vec![ClassSpec::new("a", None), ClassSpec::new("b", None)],
    );
    let order = |config: SchedulerConfig| {
        let mut s = config.build::<TestPacket>(&t).expect("valid");
        let mut ev = Vec::new();
        let _ = s.enqueue(
            Instant::ZERO,
            ClassId(1),
            TestPacket { id: 0, len: 1500 },
            &mut ev,
        );
        let _ = s.enqueue(
            Instant::ZERO,
            ClassId(2),
            TestPacket { id: 1, len: 100 },
            &mut ev,
        );
        let first = s.dequeue(Instant::ZERO).expect("queued").pkt.id;
        let second = s.dequeue(Instant(1)).expect("queued").pkt.id;
        (first, second)
    };
    assert_eq!(
        order(SchedulerConfig::Scfq),
        (1, 0),
        "smaller finish tag first"
    );
    assert_eq!(
        order(SchedulerConfig::Wfq),
        (1, 0),
        "smaller finish tag first"
    );
    assert_eq!(
        order(SchedulerConfig::Stfq),
        (0, 1),
        "equal start tags: arrival order"
    );
}
