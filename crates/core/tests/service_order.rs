//! The service order of every registered discipline, pinned by hashes: a speed change
//! that passes this test changes nothing a user sees.
//!
//! Every discipline of [`SchedulerKind::ALL`], built through the registry with its
//! default settings and wrapped in a [`Qdisc`], runs a fixed set of pseudo-random
//! workloads ([`workloads`]): random trees (flat and up to three levels, up to 6 000
//! classes; weights, priorities, quanta, maximum packets, limits, rates, ceilings,
//! bursts, and `rt`/`ls`/`ul` curves that are linear, concave or convex), shared buffers
//! with tail drop or push-out, and two kinds of drive:
//!
//! * *link*: a link of the tree's rate serves the qdisc as a simulator would — arrivals
//!   at their own instants, a dequeue whenever the link is free and `poll_at` allows,
//!   the clock moving to the end of each transmission, to the instant `poll_at` names, or
//!   to the next arrival — so shaping disciplines run with time advancing;
//! * *interleaved*: a random sequence of enqueues, dequeues at any instant (answered or
//!   not) and clock moves.
//!
//! Everything a user of the qdisc observes goes into one hash per discipline: every
//! departure (instant, class, packet id, length) and every empty dequeue, the verdict of
//! every arrival, every drop (packet id, class, reason), and every answer of `poll_at`.
//! The build error, if the registry refuses a tree, is hashed as a marker too. The hash
//! is 64-bit FNV-1a over the little-endian bytes of those values (written out here,
//! so that it cannot change with the Rust version); the workloads come from a
//! SplitMix64 generator written out here for the same reason.
//!
//! # Regenerating the hashes
//!
//! Only when a change of service order is intended (and said in the commit message):
//!
//! ```sh
//! LINKSHARE_PRINT_ORDER_HASHES=1 cargo test -p linkshare-core --test service_order -- --nocapture
//! ```
//!
//! prints the table of [`EXPECTED`] for the current code; paste it over the old one. A
//! discipline added to the registry has no row yet: the test fails and prints the row
//! to add.

use linkshare_core::buffer::{BufferConfig, Overflow};
use linkshare_core::curve::ServiceCurve;
use linkshare_core::hierarchy::{ClassId, ClassSpec, ClassTree, Limit, LinkSpec};
use linkshare_core::sched::{PollAt, SchedulerConfig, SchedulerKind};
use linkshare_core::testing::TestPacket;
use linkshare_core::units::{Bytes, Duration, Instant, Rate};
use linkshare_core::{Dropped, Qdisc};

/// The hash of every discipline's run over [`workloads`], by name.
const EXPECTED: &[(&str, u64)] = &[
    // built for 83 of 83 workloads; 160960 departures, 19781 drops
    ("fifo", 0x71b41d24ed3bd1e9),
    // built for 83 of 83 workloads; 161230 departures, 19509 drops
    ("prio", 0x63fbda01132c86fb),
    // built for 83 of 83 workloads; 161341 departures, 19417 drops
    ("drr", 0x867340bc03b27c68),
    // built for 83 of 83 workloads; 160865 departures, 19873 drops
    ("hls", 0x08696826a8a08b97),
    // built for 83 of 83 workloads; 160845 departures, 19885 drops
    ("hdrr", 0xb7e9a24f3b5d006e),
    // built for 79 of 83 workloads; 145592 departures, 33571 drops
    ("htb", 0x90754ce6aed8da3d),
    // built for 83 of 83 workloads; 161008 departures, 19727 drops
    ("cbq", 0x072a633bc487e696),
    // built for 83 of 83 workloads; 151803 departures, 28952 drops
    ("hfsc", 0x683648e7f41c24c3),
    // built for 83 of 83 workloads; 160855 departures, 19885 drops
    ("fsc", 0xa4f4b4b0dd4f0af5),
    // built for 83 of 83 workloads; 160941 departures, 19796 drops
    ("wf2q", 0xef23aeb9125f3f84),
    // built for 79 of 83 workloads; 159309 departures, 19867 drops
    ("hwf2q", 0x41d352649fdb145a),
    // built for 83 of 83 workloads; 160807 departures, 19930 drops
    ("sced", 0xe063a5d70199203a),
    // built for 83 of 83 workloads; 160875 departures, 19872 drops
    ("vc", 0x38bc894c626329fc),
    // built for 83 of 83 workloads; 165300 departures, 15157 drops
    ("keshav", 0x1fc81a5d651aeb23),
    // built for 83 of 83 workloads; 160941 departures, 19799 drops
    ("wfq", 0x11e7855dcfe29d87),
    // built for 83 of 83 workloads; 160918 departures, 19826 drops
    ("scfq", 0x56067d5358771fab),
    // built for 83 of 83 workloads; 160936 departures, 19803 drops
    ("stfq", 0xbe1e47eb88863ebc),
];

/// 64-bit FNV-1a.
struct Fnv(u64);

impl Fnv {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;

    fn bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(Self::PRIME);
        }
    }

    fn u8(&mut self, x: u8) {
        self.bytes(&[x]);
    }

    fn u32(&mut self, x: u32) {
        self.bytes(&x.to_le_bytes());
    }

    fn u64(&mut self, x: u64) {
        self.bytes(&x.to_le_bytes());
    }
}

/// SplitMix64 (Steele, Lea and Flood), with the small helpers the generators need.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`), by multiply-shift.
    fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `percent / 100`.
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// How a workload drives the qdisc.
enum Drive {
    /// A link of the tree's rate serves arrivals `(instant, leaf index, length)`, sorted
    /// by instant.
    Link(Vec<(Instant, u32, u32)>),
    /// A sequence of operations at a clock that only the operations move.
    Interleaved(Vec<Step>),
}

/// One operation of an interleaved drive.
#[derive(Clone, Copy)]
enum Step {
    /// Offer a packet of this length to `leaves[leaf % leaves]`.
    Enqueue {
        leaf: u32,
        len: u32,
    },
    Dequeue,
    Advance(Duration),
}

/// A tree, its shared buffer and a drive.
struct Workload {
    tree: ClassTree,
    buffer: BufferConfig,
    drive: Drive,
}

/// A curve whose long-run slope is `rate`: linear, concave (twice the rate for up to
/// 20 ms) or convex (nothing, or if `sloped` may be, half the rate, for up to 20 ms;
/// H-FSC refuses `rt` curves with a sloped convex start).
fn curve(rng: &mut Rng, rate: Rate, sloped: bool) -> ServiceCurve {
    let d = Duration(rng.range(1, 20_000_000));
    match rng.below(4) {
        0 | 1 => ServiceCurve::linear(rate),
        2 => ServiceCurve {
            m1: Rate(rate.0.saturating_mul(2)),
            d,
            m2: rate,
        },
        _ => ServiceCurve {
            m1: if !sloped || rng.chance(50) {
                Rate::ZERO
            } else {
                Rate(rate.0 / 2)
            },
            d,
            m2: rate,
        },
    }
}

/// A random tree of at most `max_classes` classes below a link of 10 Mbit/s to
/// 1 Gbit/s, at most `max_depth` levels deep. Every class's rate is an equal split of
/// its parent's (given or not), so the guarantees always fit.
fn tree(rng: &mut Rng, max_classes: u64, max_depth: u32) -> ClassTree {
    let link = Rate::from_mbit([10, 100, 1000][rng.below(3) as usize]);
    let n = rng.range(1, max_classes) as usize;
    let mut parent: Vec<Option<usize>> = vec![None; n];
    let mut depth = vec![1u32; n];
    for i in 1..n {
        if rng.chance(70) {
            let j = rng.below(i as u64) as usize;
            if depth[j] < max_depth {
                parent[i] = Some(j);
                depth[i] = depth[j] + 1;
            }
        }
    }
    let mut children = vec![0u64; n + 1];
    for p in &parent {
        children[p.map_or(n, |p| p)] += 1;
    }
    let mut rate = vec![Rate::ZERO; n];
    for i in 0..n {
        let (above, siblings) = parent[i].map_or((link, children[n]), |p| (rate[p], children[p]));
        rate[i] = Rate((above.0 / siblings).max(1));
    }
    let specs = (0..n)
        .map(|i| {
            let mut s = ClassSpec::new(
                &format!("c{i}"),
                parent[i].map(|p| format!("c{p}")).as_deref(),
            );
            let leaf = children[i] == 0;
            let above = parent[i].map_or(link, |p| rate[p]);
            if rng.chance(50) {
                s.weight = Some(rng.range(1, 4) as u32);
            }
            if rng.chance(50) {
                s.priority = Some(rng.below(8) as u8);
            }
            if rng.chance(25) {
                s.quantum = Some(Bytes(rng.range(64, 3000)));
            }
            if rng.chance(20) {
                s.max_packet = Some(Bytes(rng.range(200, 1500)));
            }
            if rng.chance(30) {
                s.limit = Some(if rng.chance(50) {
                    Limit::Packets(rng.range(1, 60))
                } else {
                    Limit::Bytes(Bytes(rng.range(1500, 80_000)))
                });
            }
            if rng.chance(75) {
                s.rate = Some(rate[i]);
            }
            if rng.chance(40) {
                let pct = rng.below(101);
                s.ceil = Some(Rate(
                    rate[i].0 + (above.0 - rate[i].0.min(above.0)) * pct / 100,
                ));
            }
            if rng.chance(30) {
                s.burst = Some(Bytes(rng.range(1500, 20_000)));
            }
            if rng.chance(20) {
                s.cburst = Some(Bytes(rng.range(1500, 40_000)));
            }
            if rng.chance(40) {
                s.ls = Some(curve(rng, rate[i], true));
            }
            if leaf && rng.chance(40) {
                s.rt = Some(curve(rng, rate[i], false));
            }
            if rng.chance(15) {
                let ul = s.ceil.unwrap_or(Rate(rate[i].0.saturating_mul(2)));
                s.ul = Some(ServiceCurve::linear(ul));
            }
            s
        })
        .collect();
    let link = LinkSpec {
        name: "link".into(),
        rate: link,
        origin: None,
    };
    ClassTree::build(link, specs).expect("generated trees are valid")
}

fn buffer(rng: &mut Rng) -> BufferConfig {
    let shared = match rng.below(3) {
        0 => None,
        1 => Some(Limit::Packets(rng.range(1, 200))),
        _ => Some(Limit::Bytes(Bytes(rng.range(1500, 300_000)))),
    };
    let overflow = if rng.chance(50) {
        Overflow::TailDrop
    } else {
        Overflow::PushOutLongest
    };
    BufferConfig { shared, overflow }
}

/// `count` arrivals offering `load` percent of `link` on average: exponential-like gaps
/// (a geometric mix of short and long ones), lengths 40–1500 B, leaves drawn with a
/// skew (a few busy leaves and many quiet ones) and in bursts of the same leaf.
fn arrivals(
    rng: &mut Rng,
    leaves: usize,
    link: Rate,
    load: u64,
    count: usize,
) -> Vec<(Instant, u32, u32)> {
    let mut out = Vec::with_capacity(count);
    let mut now = 0u64;
    let mut leaf = 0u32;
    let mean_len = 770;
    let mean_gap = link.tx_time(Bytes(mean_len)).0 * 100 / load.max(1);
    for _ in 0..count {
        // Gaps: 0 (a burst) a quarter of the time, else uniform up to twice and a
        // half the mean.
        let gap = if rng.chance(25) {
            0
        } else {
            rng.below(mean_gap * 8 / 3 + 1)
        };
        now += gap;
        if !rng.chance(60) {
            // Skewed: the square of a uniform picks low leaves more often.
            let u = rng.below(leaves as u64);
            leaf = (u * u / leaves as u64) as u32;
            if rng.chance(50) {
                leaf = rng.below(leaves as u64) as u32;
            }
        }
        let len = rng.range(40, 1500) as u32;
        out.push((Instant(now), leaf, len));
    }
    out
}

fn steps(rng: &mut Rng, count: usize) -> Vec<Step> {
    let dequeues = rng.range(1, 8);
    (0..count)
        .map(|_| {
            let r = rng.below(10);
            if r < 9 - dequeues {
                Step::Enqueue {
                    leaf: rng.next() as u32,
                    len: rng.range(40, 1500) as u32,
                }
            } else if r < 9 {
                Step::Dequeue
            } else {
                Step::Advance(Duration(rng.below(5_000_001)))
            }
        })
        .collect()
}

/// The fixed workloads: 40 small interleaved cases, 40 linked cases of up to 40 classes
/// in up to three levels at loads from 50 to 150 %, and three large linked ones: up to
/// 300 classes in three levels, up to 6 000 flat under overload (large enough for the
/// multi-level paths of the heaps and sets), up to 200 in two levels under overload.
fn workloads() -> Vec<Workload> {
    let mut rng = Rng(0x6c69_6e6b_7368_6172); // "linkshar"
    let mut out = Vec::new();
    for _ in 0..40 {
        let depth = if rng.chance(30) { 1 } else { 3 };
        let tree = tree(&mut rng, 20, depth);
        let buffer = buffer(&mut rng);
        let len = rng.range(50, 600) as usize;
        let drive = Drive::Interleaved(steps(&mut rng, len));
        out.push(Workload {
            tree,
            buffer,
            drive,
        });
    }
    for _ in 0..40 {
        let depth = if rng.chance(30) { 1 } else { 3 };
        let tree = tree(&mut rng, 40, depth);
        let buffer = buffer(&mut rng);
        let load = rng.range(50, 150);
        let count = rng.range(500, 4000) as usize;
        let drive = Drive::Link(arrivals(
            &mut rng,
            tree.leaves().len(),
            tree.link_rate(),
            load,
            count,
        ));
        out.push(Workload {
            tree,
            buffer,
            drive,
        });
    }
    for (classes, depth, load, count) in [
        (300, 3, 95, 20_000),
        (6000, 1, 140, 40_000),
        (200, 2, 130, 20_000),
    ] {
        let mut t;
        // Large trees of the given size class, drawn until one has at least a third of
        // the classes (the size is random).
        loop {
            t = tree(&mut rng, classes, depth);
            if t.len() as u64 > classes / 3 {
                break;
            }
        }
        // A shared buffer large enough for long queues in many classes at once.
        let buffer = BufferConfig {
            shared: Some(Limit::Packets(count as u64 / 2)),
            overflow: Overflow::PushOutLongest,
        };
        let drive = Drive::Link(arrivals(
            &mut rng,
            t.leaves().len(),
            t.link_rate(),
            load,
            count,
        ));
        out.push(Workload {
            tree: t,
            buffer,
            drive,
        });
    }
    out
}

fn hash_poll(h: &mut Fnv, p: PollAt) {
    match p {
        PollAt::Now => h.u8(0),
        PollAt::At(t) => {
            h.u8(1);
            h.u64(t.0);
        }
        PollAt::Idle => h.u8(2),
    }
}

/// Counts of what a discipline's run did, to check that the workloads exercise it.
#[derive(Clone, Copy, Debug, Default)]
struct Tally {
    built: u32,
    departures: u64,
    drops: u64,
}

/// Offers one packet and hashes its verdict and every drop.
fn offer<S: linkshare_core::Scheduler<TestPacket>>(
    q: &mut Qdisc<TestPacket, S>,
    h: &mut Fnv,
    tally: &mut Tally,
    now: Instant,
    class: ClassId,
    pkt: TestPacket,
) {
    h.u8(3);
    let mut drops = 0;
    let queued = q.enqueue(now, class, pkt, |d: Dropped<TestPacket>| {
        h.u8(4);
        h.u64(d.pkt.id);
        h.u32(d.class.0);
        h.u8(d.reason.index() as u8);
        drops += 1;
    });
    tally.drops += drops;
    h.u8(u8::from(queued));
}

/// Dequeues once at `now` and hashes the answer; returns the length sent.
fn take<S: linkshare_core::Scheduler<TestPacket>>(
    q: &mut Qdisc<TestPacket, S>,
    h: &mut Fnv,
    tally: &mut Tally,
    now: Instant,
) -> Option<u32> {
    h.u8(5);
    h.u64(now.0);
    let d = q.dequeue(now);
    match &d {
        Some(d) => {
            h.u32(d.class.0);
            h.u64(d.pkt.id);
            h.u32(d.pkt.len);
            tally.departures += 1;
        }
        None => h.u8(6),
    }
    d.map(|d| d.pkt.len)
}

/// Runs `w` on `kind` and hashes what it observes into `h`.
fn run(kind: SchedulerKind, w: &Workload, h: &mut Fnv, tally: &mut Tally) {
    let sched = match SchedulerConfig::from(kind).build::<TestPacket>(&w.tree) {
        Ok(s) => s,
        Err(_) => {
            h.u8(7);
            return;
        }
    };
    tally.built += 1;
    let mut q = Qdisc::new(&w.tree, sched, w.buffer);
    let leaves = w.tree.leaves();
    let mut id = 0u64;
    match &w.drive {
        Drive::Interleaved(steps) => {
            let mut now = Instant::ZERO;
            for step in steps {
                match *step {
                    Step::Enqueue { leaf, len } => {
                        let class = leaves[leaf as usize % leaves.len()];
                        offer(&mut q, h, tally, now, class, TestPacket { id, len });
                        id += 1;
                    }
                    Step::Dequeue => {
                        take(&mut q, h, tally, now);
                    }
                    Step::Advance(d) => now = now.saturating_add(d),
                }
                hash_poll(h, q.poll_at(now));
            }
        }
        Drive::Link(arrivals) => {
            let rate = w.tree.link_rate();
            let mut next = 0;
            let mut now = Instant::ZERO;
            // The link is free from `free` on.
            let mut free = Instant::ZERO;
            // Bounded: every arrival, every departure, and a few empty polls each.
            let mut budget = 8 * arrivals.len() + 1000;
            loop {
                budget -= 1;
                assert!(budget > 0, "{kind}: the link loop does not end");
                let arrival = arrivals.get(next).map(|a| a.0);
                // When the link would next send: not before it is free, and as
                // `poll_at` says at that instant.
                let at = now.max(free);
                let poll = q.poll_at(at);
                hash_poll(h, poll);
                let send = match poll {
                    PollAt::Now => Some(at),
                    PollAt::At(t) => Some(t),
                    PollAt::Idle => None,
                };
                match (arrival, send) {
                    (None, None) => break,
                    (Some(a), s) if s.is_none_or(|s| a <= s) => {
                        now = now.max(a);
                        let (_, leaf, len) = arrivals[next];
                        next += 1;
                        offer(
                            &mut q,
                            h,
                            tally,
                            now,
                            leaves[leaf as usize],
                            TestPacket { id, len },
                        );
                        id += 1;
                    }
                    (_, Some(s)) => {
                        now = s;
                        if let Some(len) = take(&mut q, h, tally, now) {
                            free = now + rate.tx_time(Bytes(u64::from(len)));
                        }
                    }
                    (Some(_), None) => unreachable!("handled by the arm above"),
                }
            }
        }
    }
}

/// The hash and tally of `kind` over every workload.
fn order_hash(kind: SchedulerKind, workloads: &[Workload]) -> (u64, Tally) {
    let mut h = Fnv(Fnv::OFFSET);
    let mut tally = Tally::default();
    for w in workloads {
        run(kind, w, &mut h, &mut tally);
    }
    (h.0, tally)
}

#[test]
fn service_order_is_unchanged() {
    let workloads = workloads();
    let results: Vec<(SchedulerKind, (u64, Tally))> = std::thread::scope(|s| {
        let handles: Vec<_> = SchedulerKind::ALL
            .iter()
            .map(|&kind| {
                let w = &workloads;
                (kind, s.spawn(move || order_hash(kind, w)))
            })
            .collect();
        handles
            .into_iter()
            .map(|(kind, h)| (kind, h.join().expect("no panic")))
            .collect()
    });
    let table: String = results
        .iter()
        .map(|(kind, (hash, t))| {
            format!(
                "    // built for {} of {} workloads; {} departures, {} drops\n    (\"{kind}\", 0x{hash:016x}),\n",
                t.built,
                workloads.len(),
                t.departures,
                t.drops
            )
        })
        .collect();
    if std::env::var_os("LINKSHARE_PRINT_ORDER_HASHES").is_some() {
        println!("const EXPECTED: &[(&str, u64)] = &[\n{table}];");
    }
    let mut failures = Vec::new();
    for (kind, (hash, tally)) in &results {
        // The workloads must exercise the discipline: most trees build, packets leave
        // and some are dropped.
        if tally.built < workloads.len() as u32 / 2 || tally.departures == 0 || tally.drops == 0 {
            failures.push(format!(
                "{kind}: the workloads exercise too little: {tally:?}"
            ));
        }
        match EXPECTED.iter().find(|(name, _)| *name == kind.name()) {
            Some(&(_, want)) if want == *hash => {}
            Some(&(_, want)) => failures.push(format!(
                "{kind}: service order changed: hash 0x{hash:016x}, recorded 0x{want:016x}"
            )),
            None => failures.push(format!(
                "{kind}: no recorded hash; add (\"{kind}\", 0x{hash:016x}) to EXPECTED"
            )),
        }
    }
    assert!(
        failures.is_empty(),
        "{}\n(if intended, regenerate: see the module docs)",
        failures.join("\n")
    );
}
