//! `hls-fig12`: the HLS paper's Experiment 4 (§VIII-E, Fig. 12) as a cost study on this
//! machine: the cost per packet of HLS, HTB, CBQ and FIFO, and of classifying the
//! packet with one port rule per leaf, against the number of leaf classes, in a binary
//! tree and a flat hierarchy.
//!
//! The paper measured NetPerf TCP-RR transactions per second through a Linux router:
//! each TCP connection, mapped to its own leaf, has one 1-byte request in flight at a
//! time. All schedulers performed about like FIFO (the Qdisc framework and the network
//! stack, not the scheduler, were the bottleneck), and in the flat hierarchy all
//! classful ones declined beyond about 256 leaves, which the paper attributes to the
//! linear search of one port filter per leaf.
//!
//! Our analogue drives the scheduler directly (no stack, no lock, no TCP): `N` leaves,
//! each with at most one packet of 64 bytes (a 1-byte payload, padded) in the scheduler;
//! when the link (10 Gbit/s, as the paper's) has sent a leaf's packet, that leaf's next
//! one arrives at once — every arrival finds its leaf idle, as with TCP-RR. Per packet:
//! optionally the classification of its frame (a UDP/IPv4 frame to port `10000 + i` for
//! leaf `i`; one rule per leaf, in leaf order, through `linkshare-classify`, with its
//! flow cache or without), one enqueue and one dequeue. Timed as [`crate::timing`]
//! says; every check is a timing result.

use std::io::Write;

use linkshare_classify::{Classifier, Match, PortRange, Rule, build};
use linkshare_core::hierarchy::{ClassId, ClassTree};
use linkshare_core::sched::cbq::Cbq;
use linkshare_core::sched::fifo::Fifo;
use linkshare_core::sched::hls::Hls;
use linkshare_core::sched::htb::Htb;
use linkshare_core::sched::{Dropped, Enqueue, PollAt, Scheduler};
use linkshare_core::units::{Bytes, Duration, Instant, Rate};
use linkshare_core::workload::Frame;
use linkshare_core::workload::trees::binary_tree;
use linkshare_report::svg::{Axis, Dash, LineChart, Scale, Series};
use linkshare_report::table::TextTable;
use linkshare_report::{Written, create_dir};

use crate::timing::{Loop, Sampling, conditions, interleaved_medians, repeat};
use crate::verdict::{self, Check, Extremes};
use crate::{Options, ReproError, stdout_failure};

/// The link between the scheduler and the sink in the paper's Experiment 4.
const LINK: Rate = Rate::from_gbit(10);

/// Bytes on the wire per packet: a 1-byte TCP-RR payload, padded to Ethernet's minimum.
const FRAME: u32 = 64;

/// Leaves of the flat hierarchy, and of the binary tree (HTB's eight levels hold at
/// most 128 leaves in a binary tree: the paper stops there for every scheduler).
const FLAT: [usize; 7] = [2, 8, 32, 128, 256, 512, 1024];
const BINARY: [usize; 4] = [2, 8, 32, 128];

/// The destination port of leaf 0's frames; leaf `i` uses `PORT_BASE + i`.
const PORT_BASE: u16 = 10_000;

/// The paper's saturation, transactions per second (both panels of Fig. 12).
const PAPER_SATURATION: f64 = 300e3;

/// The schedulers of Fig. 12.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sched {
    Hls,
    Htb,
    Cbq,
    Fifo,
}

const SCHEDULERS: [Sched; 4] = [Sched::Hls, Sched::Htb, Sched::Cbq, Sched::Fifo];

impl Sched {
    fn name(self) -> &'static str {
        match self {
            Sched::Hls => "hls",
            Sched::Htb => "htb",
            Sched::Cbq => "cbq",
            Sched::Fifo => "fifo",
        }
    }

    /// The discipline with its defaults for `tree` (HLS: equal weights; HTB, CBQ: the
    /// link divided evenly between the leaves, as in the paper).
    fn build(self, tree: &ClassTree) -> Result<Box<dyn Scheduler<Frame>>, ReproError> {
        Ok(match self {
            Sched::Hls => Box::new(Hls::new(tree)),
            Sched::Htb => {
                Box::new(Htb::new(tree).map_err(|e| ReproError::Internal(format!("htb: {e}")))?)
            }
            Sched::Cbq => Box::new(Cbq::new(tree)),
            Sched::Fifo => Box::new(Fifo::new()),
        })
    }
}

/// How a packet's class is found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Classify {
    /// Not timed: the packet carries its leaf.
    None,
    /// One rule per leaf, with the classifier's flow cache.
    Cached,
    /// One rule per leaf, tried in order for every packet.
    Linear,
}

const CLASSIFY: [Classify; 3] = [Classify::None, Classify::Cached, Classify::Linear];

impl Classify {
    /// Its name in `fig12.csv`.
    fn id(self) -> &'static str {
        match self {
            Classify::None => "none",
            Classify::Cached => "cached",
            Classify::Linear => "linear",
        }
    }

    /// Its name in the table and the figures.
    fn name(self) -> &'static str {
        match self {
            Classify::None => "scheduler only",
            Classify::Cached => "+ rules, flow cache",
            Classify::Linear => "+ rules, linear",
        }
    }
}

/// The shape of the hierarchy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    Binary,
    Flat,
}

impl Shape {
    fn name(self) -> &'static str {
        match self {
            Shape::Binary => "binary",
            Shape::Flat => "flat",
        }
    }

    fn tree(self, leaves: usize) -> ClassTree {
        match self {
            // Depth 6 as the deepest binary level puts 128 leaves at depth 7: HTB's
            // eight levels with the link.
            Shape::Binary => binary_tree(LINK, leaves, 6),
            Shape::Flat => ClassTree::flat(LINK, leaves),
        }
    }
}

/// The TCP-RR analogue: one packet per leaf at most, the next arriving when the link
/// has sent the last.
struct Transactions {
    sched: Box<dyn Scheduler<Frame>>,
    classifier: Option<Classifier>,
    /// Leaf `i`'s frame.
    frames: Vec<Vec<u8>>,
    /// Leaf `i`'s class.
    leaves: Vec<ClassId>,
    /// Leaf index by class index.
    leaf_of: Vec<usize>,
    /// Leaves whose next packet is due now.
    due: Vec<usize>,
    now: Instant,
    tx: Duration,
    evicted: Vec<Dropped<Frame>>,
}

impl Transactions {
    fn new(sched: Sched, tree: &ClassTree, classify: Classify) -> Result<Transactions, ReproError> {
        let leaves = tree.leaves().to_vec();
        let mut leaf_of = vec![usize::MAX; tree.len()];
        for (i, c) in leaves.iter().enumerate() {
            leaf_of[c.index()] = i;
        }
        let frames: Vec<Vec<u8>> = (0..leaves.len())
            .map(|i| {
                let port = PORT_BASE + i as u16;
                build::udp4([10, 0, 0, 1], [10, 0, 0, 2], 40_000, port, FRAME as usize)
            })
            .collect();
        let rules: Vec<Rule> = leaves
            .iter()
            .enumerate()
            .map(|(i, &class)| {
                let port = PORT_BASE + i as u16;
                Rule {
                    matches: Match {
                        dport: Some(PortRange { lo: port, hi: port }),
                        ..Match::default()
                    },
                    class,
                }
            })
            .collect();
        let default = leaves[0];
        let mut classifier = match classify {
            Classify::None => None,
            Classify::Cached => Some(Classifier::new(rules, default)),
            Classify::Linear => Some(Classifier::without_cache(rules, default)),
        };
        // The rules send every leaf's frame to that leaf.
        if let Some(c) = &mut classifier {
            for (frame, &leaf) in frames.iter().zip(&leaves) {
                if c.classify(frame).class != leaf {
                    return Err(ReproError::Internal(
                        "hls-fig12: a port rule sent a frame to another leaf".to_owned(),
                    ));
                }
            }
        }
        let mut run = Transactions {
            sched: sched.build(tree)?,
            classifier,
            frames,
            leaf_of,
            due: (0..leaves.len()).rev().collect(),
            leaves,
            now: Instant::ZERO,
            tx: LINK.tx_time(Bytes(u64::from(FRAME))),
            evicted: Vec::new(),
        };
        // Every leaf's first packet, then one fewer than a packet per leaf queued.
        while run.due.len() > 1 {
            run.arrive();
        }
        Ok(run)
    }

    /// The next due packet arrives: classified if asked, enqueued.
    #[inline]
    fn arrive(&mut self) {
        let Some(i) = self.due.pop() else { return };
        let class = match &mut self.classifier {
            Some(c) => c.classify(&self.frames[i]).class,
            None => self.leaves[i],
        };
        let verdict = self
            .sched
            .enqueue(self.now, class, Frame(FRAME), &mut self.evicted);
        // Nothing here limits a queue (one packet per leaf, no buffer policy); a refused
        // packet would be a lost transaction, sent again at once.
        if !matches!(verdict, Enqueue::Queued) {
            self.due.push(i);
        }
    }

    /// One packet: the due arrival, then the link takes the next packet (waiting, for a
    /// shaping discipline, until it may leave) and sends it.
    #[inline]
    fn packet(&mut self) {
        self.arrive();
        loop {
            if let Some(d) = self.sched.dequeue(self.now) {
                self.now += self.tx;
                self.due.push(self.leaf_of[d.class.index()]);
                return;
            }
            match self.sched.poll_at(self.now) {
                PollAt::At(t) if t > self.now => self.now = t,
                // Nothing queued, or a discipline that says now and gives nothing:
                // move on by a packet time.
                _ => self.now += self.tx,
            }
        }
    }
}

/// One point of the study.
#[derive(Clone, Debug)]
struct Point {
    shape: Shape,
    leaves: usize,
    sched: Sched,
    classify: Classify,
    /// Median ns per packet.
    ns: f64,
}

/// Rounds, samples per turn and packets per sample; `--shorten` divides them (at least
/// 3 rounds of 3 samples of 100 packets).
fn sampling(shorten: u32) -> Sampling {
    let s = shorten.max(1) as usize;
    Sampling {
        rounds: (5 / s).max(3),
        per_turn: (21 / s).max(3),
        per_sample: (1_000 / s).max(100),
    }
}

fn measure(shorten: u32) -> Result<Vec<Point>, ReproError> {
    let mut points = Vec::new();
    let mut runs = Vec::new();
    for (shape, sizes) in [(Shape::Binary, &BINARY[..]), (Shape::Flat, &FLAT[..])] {
        for &leaves in sizes {
            let tree = shape.tree(leaves);
            for sched in SCHEDULERS {
                for classify in CLASSIFY {
                    let mut run = Transactions::new(sched, &tree, classify)?;
                    for _ in 0..(leaves * 8).max(20_000) / shorten.max(1) as usize {
                        run.packet();
                    }
                    runs.push(run);
                    points.push(Point {
                        shape,
                        leaves,
                        sched,
                        classify,
                        ns: f64::NAN,
                    });
                }
            }
        }
    }
    let mut loops: Vec<Loop<'_>> = runs
        .iter_mut()
        .map(|run| repeat(run, |r| r.packet()))
        .collect();
    let ns = interleaved_medians(&mut loops, sampling(shorten));
    for (p, ns) in points.iter_mut().zip(ns) {
        p.ns = ns;
    }
    Ok(points)
}

fn ns(points: &[Point], shape: Shape, leaves: usize, sched: Sched, classify: Classify) -> f64 {
    points
        .iter()
        .find(|p| {
            p.shape == shape && p.leaves == leaves && p.sched == sched && p.classify == classify
        })
        .map_or(f64::NAN, |p| p.ns)
}

/// The paper's claims, as the analogue can test them; every one a timing result.
fn checks(p: &[Point]) -> Vec<Check> {
    let classful = [Sched::Hls, Sched::Htb, Sched::Cbq];
    let mut checks = Vec::new();
    // (a) "All schedulers show roughly the same performance" (binary tree).
    let (mut worst, mut at) = (f64::NEG_INFINITY, 0);
    for &n in &BINARY {
        let costs = classful.map(|s| ns(p, Shape::Binary, n, s, Classify::None));
        let spread = costs.iter().copied().largest() / costs.iter().copied().smallest();
        if spread.is_nan() || spread > worst {
            (worst, at) = (spread, n);
        }
    }
    checks.push(
        Check::claim(
            "binary tree: hls, htb and cbq cost about the same per packet",
            "\"all schedulers show roughly the same performance\" (Fig. 12(a))",
            format!("largest / smallest x{worst:.2} (at {at} leaves)"),
            &[worst],
            "<= x2 at every number of leaves",
            worst <= 2.0,
        )
        .should(),
    );
    // "The HLS Qdisc does not incur a performance penalty, compared to HTB and CBQ."
    let (mut worst, mut at) = (f64::NEG_INFINITY, String::new());
    for (shape, sizes) in [(Shape::Binary, &BINARY[..]), (Shape::Flat, &FLAT[..])] {
        for &n in sizes {
            let hls = ns(p, shape, n, Sched::Hls, Classify::None);
            let other = ns(p, shape, n, Sched::Htb, Classify::None).max(ns(
                p,
                shape,
                n,
                Sched::Cbq,
                Classify::None,
            ));
            let r = hls / other;
            if r.is_nan() || r > worst {
                (worst, at) = (r, format!("{} {n}", shape.name()));
            }
        }
    }
    checks.push(Check::claim(
        "hls against the slower of htb and cbq",
        "\"HLS does not incur a performance penalty, compared to HTB and CBQ\"",
        format!("at most x{worst:.2} (at {at} leaves)"),
        &[worst],
        "<= x1.25 everywhere",
        worst <= 1.25,
    ));
    // "None of the hierarchical schedulers presents a bottleneck": each costs a small
    // part of the time a packet had at the paper's saturation.
    let budget = 1e9 / PAPER_SATURATION;
    let costliest = p
        .iter()
        .filter(|x| x.classify == Classify::None && x.sched != Sched::Fifo)
        .max_by(|a, b| a.ns.total_cmp(&b.ns));
    let largest = costliest.map_or(f64::NAN, |x| x.ns);
    let at = costliest.map_or(String::new(), |x| {
        format!("{} at {} {}", x.sched.name(), x.shape.name(), x.leaves)
    });
    checks.push(
        Check::claim(
            "the costliest classful scheduler per packet, up to 1024 leaves",
            &format!(
                "\"none of the hierarchical schedulers presents a bottleneck\" at about 300K \
                 transactions/s: {budget:.0} ns per packet"
            ),
            format!("{largest:.0} ns ({at})"),
            &[largest],
            &format!("<= a quarter of it: {:.0} ns", budget / 4.0),
            largest <= budget / 4.0,
        )
        .should(),
    );
    // Fig. 12(b): beyond about 256 leaves the flat hierarchy declines, from classifying
    // by one port rule per leaf (linear), not from scheduling.
    let growth =
        |s: Sched, c: Classify| ns(p, Shape::Flat, 1024, s, c) / ns(p, Shape::Flat, 256, s, c);
    let linear = growth(Sched::Hls, Classify::Linear);
    checks.push(Check::claim(
        "flat, hls + one rule per leaf tried in order: growth from 256 to 1024 leaves",
        "performance declines beyond about 256 leaves (linear classification)",
        format!("x{linear:.2}"),
        &[linear],
        ">= x2 (the rules walked grow x4)",
        linear >= 2.0,
    ));
    let alone = classful
        .map(|s| growth(s, Classify::None))
        .into_iter()
        .largest();
    checks.push(Check::claim(
        "flat, the classful schedulers alone: growth from 256 to 1024 leaves",
        "the bottleneck is classification, not scheduling",
        format!("at most x{alone:.2}"),
        &[alone],
        "<= x1.5",
        alone <= 1.5,
    ));
    let cached = growth(Sched::Hls, Classify::Cached);
    checks.push(Check::claim(
        "flat, hls + rules with the flow cache: growth from 256 to 1024 leaves",
        "expected (ours, not the paper's): a flow cache hit costs the same at any number of rules",
        format!("x{cached:.2}"),
        &[cached],
        "<= x1.5",
        cached <= 1.5,
    ));
    checks.into_iter().map(Check::timing).collect()
}

fn table(p: &[Point]) -> TextTable {
    let mut header = vec!["shape".to_owned(), "leaves".to_owned()];
    let mut groups = Vec::new();
    for (k, c) in CLASSIFY.iter().enumerate() {
        groups.push((format!("ns per packet, {}", c.name()), 2 + 4 * k, 4));
        header.extend(SCHEDULERS.map(|s| s.name().to_owned()));
    }
    let mut t = TextTable {
        groups,
        header,
        ..TextTable::default()
    };
    for (shape, sizes) in [(Shape::Binary, &BINARY[..]), (Shape::Flat, &FLAT[..])] {
        for &n in sizes {
            let mut row = vec![shape.name().to_owned(), n.to_string()];
            for c in CLASSIFY {
                row.extend(SCHEDULERS.map(|s| format!("{:.0}", ns(p, shape, n, s, c))));
            }
            t.rows.push(row);
        }
    }
    t
}

fn csv(p: &[Point]) -> String {
    let mut s = String::from("shape,leaves,scheduler,classification,ns_per_packet\n");
    for x in p {
        s.push_str(&format!(
            "{},{},{},{},{}\n",
            x.shape.name(),
            x.leaves,
            x.sched.name(),
            x.classify.id(),
            x.ns
        ));
    }
    s
}

/// Fig. 12(a) or (b) as cost per packet (the paper plots throughput): one colour per
/// scheduler, solid for the scheduler alone, dashed with linear classification.
fn figure(p: &[Point], shape: Shape) -> LineChart {
    let panel = match shape {
        Shape::Binary => "(a) binary tree",
        Shape::Flat => "(b) flat hierarchy",
    };
    let mut chart = LineChart::new(
        format!("HLS paper Fig. 12{panel}: cost per packet against leaf classes"),
        "leaf classes (log scale)",
        "ns per packet (this machine, log scale)",
    );
    chart.x_axis = Axis {
        scale: Scale::Log10,
        ..Axis::default()
    };
    chart.y_axis = Axis {
        scale: Scale::Log10,
        ..Axis::default()
    };
    for (k, s) in SCHEDULERS.iter().enumerate() {
        for c in [Classify::None, Classify::Linear] {
            let pts = p
                .iter()
                .filter(|x| x.shape == shape && x.sched == *s && x.classify == c)
                .map(|x| (x.leaves as f64, x.ns))
                .collect();
            let mut series = Series::line(format!("{} {}", s.name(), c.name()), pts).with_dots();
            series.colour = Some(k);
            if c == Classify::Linear {
                series.dash = Some(Dash::Dashed);
            }
            chart.series.push(series);
        }
    }
    chart
}

/// `linkshare repro hls-fig12`.
pub fn fig12(opts: &Options<'_>, out: &mut dyn Write) -> Result<Vec<Check>, ReproError> {
    let conditions = conditions();
    let p = measure(opts.shorten)?;
    let s = sampling(opts.shorten);
    write!(
        out,
        "hls-fig12: HLS paper §VIII-E, Fig. 12: the schedulers' cost per packet against the \
         number of leaf classes, binary and flat, with and without classification\n\
         Timed on this machine ({conditions}): a TCP-RR analogue (one 64-byte packet per leaf \
         at most, the next arriving when the link has sent the last), {} samples of {} \
         packets per point, the median; {} rounds, each point taking {} samples in a row \
         after one that refills the caches. The paper measured transactions per second \
         through a router; this measures the scheduler (and classifier) alone.\n\n{}",
        s.samples(),
        s.per_sample,
        s.rounds,
        s.per_turn,
        table(&p).render()
    )
    .map_err(stdout_failure)?;
    writeln!(
        out,
        "\nReconstructed: the workload (the paper's TCP-RR through a Linux router is \
         replaced by the scheduler driven directly, one packet per leaf in flight, no TCP, \
         no network stack, no Qdisc lock), the frame (UDP/IPv4, 64 bytes), the leaf counts \
         (the figure is lost: {FLAT:?} flat, {BINARY:?} binary).\nReconstructed: the paper \
         filtered progressively in the binary tree (two filters per interior class) and \
         by one filter per leaf at the root in the flat hierarchy; here both use one rule \
         per leaf at the root (linkshare-classify has no per-class filters), the paper's \
         alternative that it says drops sharply beyond 100 leaves.\nReconstructed: the \
         bottleneck check compares with the per-packet time at the paper's saturation \
         (about 300K transactions/s, one packet per transaction through the scheduler)."
    )
    .map_err(stdout_failure)?;
    let checks = checks(&p);
    verdict::print(out, "hls-fig12: the paper's claims against ours", &checks)?;
    create_dir(opts.out)?;
    let mut written = Written::default();
    written.write(opts.out, "fig12.csv", csv(&p).as_bytes())?;
    written.write(
        opts.out,
        "fig12a.svg",
        figure(&p, Shape::Binary).render().as_bytes(),
    )?;
    written.write(
        opts.out,
        "fig12b.svg",
        figure(&p, Shape::Flat).render().as_bytes(),
    )?;
    crate::experiment::print_files(out, &written.files)?;
    Ok(checks)
}
