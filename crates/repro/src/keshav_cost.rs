//! `keshav-cost`: the trace-driven cost study of Keshav's "On the Efficient
//! Implementation of Fair Queueing" (§"Performance Evaluation"): for each point `(N, B)`
//! of five axes of the workload plane, N window-limited TCP sources share a gateway of B
//! buffers running Keshav's FQ; the buffer's operations are recorded once and replayed
//! through the four structures (LINK, TREE, HEAP, PERC), each counting the paper's
//! elementary operations. Then Figs. 3 to 7 and the paper's claims, each with a
//! computed verdict ([`crate::keshav_checks`]), and the spec's sensitivity runs.
//!
//! The paper's figures did not survive its text extraction; the scenario's values and
//! the grid are reconstructed (`shared/specs/keshav-fq.md` §3.2–3.3) and printed as
//! such. The simulations are deterministic (one seed), as the paper's were.

use std::io::Write;

use linkshare_core::DropReason;
use linkshare_core::ds::bids::Structure;
use linkshare_core::ds::bids::trace::{Replay, RunningCost, replay_all};
use linkshare_core::hierarchy::Limit;
use linkshare_core::units::{Duration, Rate};
use linkshare_report::Written;
use linkshare_sim::workload::{self, KESHAV_TRUNK, KeshavCost, keshav_constants as k};

use crate::keshav_checks;
use crate::keshav_figures;
use crate::runner::{Job, run_parallel};
use crate::{Options, ReproError, stdout_failure};

/// Which coordinate moves along an axis (the x axis of its panel in Figs. 5 and 6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Along {
    /// The number of sources `N`.
    Sources,
    /// The buffers `B`.
    Buffers,
}

/// One axis of the `(N, B)` plane, with `W` = 20 (the paper's Fig. 4 is lost: spec §3.3).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Axis {
    /// `A` to `E`.
    pub(crate) name: &'static str,
    /// How its points were chosen.
    pub(crate) rule: &'static str,
    /// Its points `(N, B)` at `W` = 20, in order along the axis.
    pub(crate) points: [(u32, u64); 7],
    /// What changes along it.
    pub(crate) along: Along,
}

/// The five axes: 35 simulations, as in the paper. Reconstructed (spec §3.3).
pub(crate) const AXES: [Axis; 5] = [
    Axis {
        name: "A",
        rule: "underloaded, B = 2·W·N",
        points: [
            (2, 80),
            (5, 200),
            (8, 320),
            (12, 480),
            (16, 640),
            (20, 800),
            (30, 1200),
        ],
        along: Along::Sources,
    },
    Axis {
        name: "B",
        rule: "overloaded, B = W·N/2",
        points: [
            (2, 20),
            (5, 50),
            (8, 80),
            (12, 120),
            (16, 160),
            (20, 200),
            (30, 300),
        ],
        along: Along::Sources,
    },
    Axis {
        name: "C",
        rule: "N = 10, B crosses W·N",
        points: [
            (10, 25),
            (10, 50),
            (10, 100),
            (10, 200),
            (10, 300),
            (10, 500),
            (10, 800),
        ],
        along: Along::Buffers,
    },
    Axis {
        name: "D",
        rule: "B = 400, N crosses B/W",
        points: [
            (2, 400),
            (4, 400),
            (10, 400),
            (15, 400),
            (20, 400),
            (25, 400),
            (40, 400),
        ],
        along: Along::Sources,
    },
    Axis {
        name: "E",
        rule: "N·B ≈ 4000, crosses W·N = B",
        points: [
            (4, 1000),
            (6, 660),
            (8, 500),
            (12, 330),
            (16, 250),
            (24, 170),
            (40, 100),
        ],
        along: Along::Sources,
    },
];

/// The calibration point of Fig. 3: `(N, B)` = (10, 200) (stated in the paper).
pub(crate) const CALIBRATION: (u32, u64) = (10, 200);

/// Fig. 3's trace: twice the paper's 2 500 s, so that 2 500 s can be compared with a
/// longer run (spec §3.4).
const CALIBRATION_LENGTH: Duration = Duration::from_secs(5_000);

/// Fig. 3's sampling step of the running average.
const CALIBRATION_STEP: Duration = Duration::from_secs(50);

/// `d` divided by `by` (at least 1): `--shorten`.
pub(crate) fn shortened(d: Duration, by: u32) -> Duration {
    Duration(d.0 / u64::from(by.max(1)))
}

/// The workload: the reconstruction, or one of the spec's sensitivity runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Variant {
    /// Every value as reconstructed ([`k`]).
    Paper,
    /// `W` = 8 packets, every `B` scaled by 8/20 so that each point keeps its `W·N/B`.
    Window8,
    /// A 10 Mbit/s trunk.
    Trunk10,
    /// NewReno with fast retransmit (losses no longer always end in a timeout).
    NewReno,
}

impl Variant {
    /// Every variant, the reconstruction first.
    pub(crate) const ALL: [Variant; 4] = [
        Variant::Paper,
        Variant::Window8,
        Variant::Trunk10,
        Variant::NewReno,
    ];

    /// Its name in files (`cost.csv`'s `variant`).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Variant::Paper => "paper",
            Variant::Window8 => "w8",
            Variant::Trunk10 => "trunk10",
            Variant::NewReno => "newreno",
        }
    }

    /// What it changes, one line.
    pub(crate) fn about(self) -> &'static str {
        match self {
            Variant::Paper => "the reconstruction: W = 20, 1 Mbit/s, Reno without fast retransmit",
            Variant::Window8 => "W = 8 packets, B scaled by 8/20 (same W·N/B at every point)",
            Variant::Trunk10 => "a 10 Mbit/s trunk",
            Variant::NewReno => "NewReno with fast retransmit (3 duplicate ACKs)",
        }
    }

    /// The workload of grid point `(n, b)` (given at `W` = 20) over `duration`.
    fn workload(self, n: u32, b: u64, duration: Duration) -> KeshavCost {
        let mut p = KeshavCost::point(n, b);
        p.duration = duration;
        match self {
            Variant::Paper => {}
            Variant::Window8 => {
                p.window = 8;
                p.buffers = (b * 8).div_ceil(k::WINDOW_PACKETS).max(1);
            }
            Variant::Trunk10 => p.trunk = Rate::from_mbit(10),
            Variant::NewReno => p.fast_retransmit = true,
        }
        p
    }
}

/// What one structure cost on one trace.
#[derive(Clone, Debug)]
pub(crate) struct Cost {
    /// Which structure.
    pub(crate) structure: Structure,
    /// Elementary operations per insertion, excluding / of / including its drops.
    pub(crate) insert: f64,
    pub(crate) drop: f64,
    pub(crate) total: f64,
    /// The largest cost of one insertion, excluding its drops.
    pub(crate) max_insert: u64,
    /// Elementary operations per `get_min`.
    pub(crate) get_min: f64,
    /// Insertions whose conversation had no packet buffered: their share of all
    /// insertions and their average cost (drops excluded).
    pub(crate) fresh_share: f64,
    pub(crate) fresh_cost: f64,
    /// The average cost of the other insertions (drops excluded).
    pub(crate) queued_cost: f64,
    /// The running average over the trace (Fig. 3; the calibration run only).
    pub(crate) running: Vec<RunningCost>,
}

impl Cost {
    fn of(r: &Replay) -> Cost {
        let c = &r.cost;
        let per = |ops: u64, n: u64| if n == 0 { 0.0 } else { ops as f64 / n as f64 };
        let queued = c.insertions - r.fresh.insertions;
        Cost {
            structure: r.structure,
            insert: per(c.ops.insert, c.insertions),
            drop: per(c.ops.drop, c.insertions),
            total: r.avg_insert(),
            max_insert: c.max_insert,
            get_min: r.avg_get_min(),
            fresh_share: per(r.fresh.insertions, c.insertions),
            fresh_cost: per(r.fresh.ops, r.fresh.insertions),
            queued_cost: per(c.ops.insert - r.fresh.ops, queued),
            running: r.running.clone(),
        }
    }
}

/// Where LINK ranks among the four structures by average insertion cost (Fig. 7).
/// The variants are the paper's Roman numerals.
#[allow(clippy::upper_case_acronyms)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Zone {
    /// LINK is the cheapest (ties included).
    I,
    /// In between.
    II,
    /// LINK is the most expensive (ties included).
    III,
}

impl Zone {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Zone::I => "I",
            Zone::II => "II",
            Zone::III => "III",
        }
    }
}

/// One simulation of the grid, replayed through every structure.
#[derive(Clone, Debug)]
pub(crate) struct Point {
    /// Index into [`AXES`].
    pub(crate) axis: usize,
    /// The sources `N`.
    pub(crate) n: u32,
    /// The buffers `B` of this variant.
    pub(crate) b: u64,
    /// The window `W` of this variant.
    pub(crate) window: u64,
    /// Costs in [`Structure::ALL`] order.
    pub(crate) costs: Vec<Cost>,
    /// Packets the trunk dropped (largest bid), TCP timeouts of all sources.
    pub(crate) drops: u64,
    pub(crate) timeouts: u64,
    /// Packets buffered and conversations with buffered packets, averaged over the
    /// insertions.
    pub(crate) mean_buffered: f64,
    pub(crate) mean_conversations: f64,
    /// Insertions and `get_min`s in the trace; packets that bypassed the buffer.
    pub(crate) insertions: u64,
    pub(crate) get_mins: u64,
    pub(crate) bypassed: u64,
    /// Exchanges in the round number's heap of active conversations.
    pub(crate) round_heap_exchanges: u64,
}

impl Point {
    /// `W·N/B`: above 1 the gateway can be congested.
    pub(crate) fn load_ratio(&self) -> f64 {
        (self.window * u64::from(self.n)) as f64 / self.b as f64
    }

    /// `W·N < B`: the paper's uncongested regime.
    pub(crate) fn underloaded(&self) -> bool {
        self.window * u64::from(self.n) < self.b
    }

    /// `W·N > B`.
    pub(crate) fn overloaded(&self) -> bool {
        self.window * u64::from(self.n) > self.b
    }

    /// The cost of `s`.
    pub(crate) fn cost(&self, s: Structure) -> &Cost {
        &self.costs[Structure::ALL.iter().position(|&x| x == s).unwrap_or(0)]
    }

    /// LINK's zone (Fig. 7).
    pub(crate) fn zone(&self) -> Zone {
        let link = self.cost(Structure::Link).total;
        let others = self.costs.iter().filter(|c| c.structure != Structure::Link);
        let (lo, hi) = others.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), c| {
            (lo.min(c.total), hi.max(c.total))
        });
        if link <= lo {
            Zone::I
        } else if link >= hi {
            Zone::III
        } else {
            Zone::II
        }
    }
}

/// The points of one variant, in [`AXES`] order, and its calibration run (the paper's
/// variant only).
#[derive(Debug)]
pub(crate) struct Grid {
    pub(crate) variant: Variant,
    pub(crate) points: Vec<Point>,
}

impl Grid {
    /// The points of axis `a`.
    pub(crate) fn axis(&self, a: usize) -> impl Iterator<Item = &Point> + '_ {
        self.points.iter().filter(move |p| p.axis == a)
    }
}

/// Simulates `p`, records the trunk's buffer trace and replays it through every
/// structure, sampling the running cost every `every`.
fn measure(
    opts: &Options<'_>,
    label: &str,
    axis: usize,
    p: &KeshavCost,
    every: Duration,
) -> Result<Point, ReproError> {
    let config = workload::keshav_cost(p);
    opts.progress
        .starting(label, linkshare_sim::event::estimate(&config));
    let (result, trace) =
        workload::record_buffer_trace(&config, KESHAV_TRUNK, &mut |now, total, ev| {
            opts.progress.update(label, now, total, ev);
        })
        .map_err(|e| ReproError::Internal(format!("{label}: the workload is invalid: {e}")))?;
    opts.progress.finish(label);
    let limit = Limit::Packets(p.buffers);
    let replays = replay_all(&trace, limit, every).map_err(|m| {
        ReproError::Internal(format!(
            "{label}: the structures did not serve and drop the same packets: {m}"
        ))
    })?;
    let trunk = &result.links[KESHAV_TRUNK.0 as usize];
    let drops = trunk.total.dropped(DropReason::LargestBid).packets;
    if let Some(r) = replays.iter().find(|r| r.cost.drops != drops) {
        return Err(ReproError::Internal(format!(
            "{label}: {} dropped {} packets on replay, the simulation {drops}",
            r.structure.name(),
            r.cost.drops
        )));
    }
    let counter = |name: &str| {
        trunk
            .discipline_counters
            .iter()
            .find(|c| c.name == name)
            .map_or(0, |c| c.value)
    };
    let first = &replays[0];
    Ok(Point {
        axis,
        n: p.sources,
        b: p.buffers,
        window: p.window,
        costs: replays.iter().map(Cost::of).collect(),
        drops,
        timeouts: result.flows.iter().map(|f| f.transport.timeouts).sum(),
        mean_buffered: first.mean_buffered,
        mean_conversations: first.mean_conversations,
        insertions: first.cost.insertions,
        get_mins: first.cost.get_mins,
        bypassed: trace.bypassed,
        round_heap_exchanges: counter("round_heap_exchanges"),
    })
}

/// The introduction: what is reproduced and every reconstructed value.
fn introduction(opts: &Options<'_>, out: &mut dyn Write) -> Result<(), ReproError> {
    let length = shortened(k::TRACE_LENGTH, opts.shorten);
    let mut text = format!(
        "keshav-cost: Keshav, \"On the Efficient Implementation of Fair Queueing\", the \
         trace-driven cost study (Figs. 3-7). N TCP sources, one conversation each, share a \
         gateway's trunk and its B buffers under Keshav's FQ (exact round number, delta = 0, \
         the largest bid dropped); the gateway's buffer operations are recorded once and \
         replayed through LINK, TREE, HEAP and PERC. Cost = elementary operations (a link \
         followed or a heap exchange) per insertion, overflow drops included.\n\
         Reconstructed (the paper's Figs. 2 and 4 are lost; spec keshav-fq.md §3.2-3.3):\n\
         \x20 trunk {} [reconstructed]; access links {}, propagation {} on every link \
         [reconstructed]; acknowledgements on a separate uncongested FIFO path, {} B each \
         [reconstructed]\n\
         \x20 packets {} B on the wire [reconstructed]; maximum window W = {} packets \
         [reconstructed: puts (10, 200) on W·N = B]\n\
         \x20 TCP Reno without fast retransmit (losses end in a timeout, as the paper says), \
         initial window 1, RTO min {} / initial {}, timer {} [reconstructed]\n\
         \x20 sources start uniformly in [0, {}) [reconstructed], endless transfers; \
         delta = 0 for every conversation [reconstructed]\n\
         \x20 the 35 points (N, B) of axes A-E [reconstructed], W·N/B the load:\n",
        k::TRUNK_RATE,
        k::ACCESS_RATE,
        k::PROPAGATION,
        k::HEADER,
        k::PACKET,
        k::WINDOW_PACKETS,
        k::MIN_RTO,
        k::INITIAL_RTO,
        k::GRANULARITY,
        k::START_SPREAD,
    );
    for a in &AXES {
        let pts: Vec<String> = a.points.iter().map(|(n, b)| format!("({n},{b})")).collect();
        text.push_str(&format!("    {} ({}): {}\n", a.name, a.rule, pts.join(" ")));
    }
    text.push_str(&format!(
        "Stated in the paper: {} s traces (here {length}{}), the calibration point (10, 200) \
         (Fig. 3, run here to {} to check the paper's 10 % claim), 35 simulations, W fixed.\n\
         Deterministic: one run per point (seed 1), as the paper's; --seeds does not apply.\n\
         Sensitivity runs (spec §3.2): {}.\n",
        k::TRACE_LENGTH.as_secs_f64(),
        if opts.shorten > 1 {
            format!(", shortened {}x", opts.shorten)
        } else {
            String::new()
        },
        shortened(CALIBRATION_LENGTH, opts.shorten),
        Variant::ALL[1..]
            .iter()
            .map(|v| v.about())
            .collect::<Vec<_>>()
            .join("; "),
    ));
    out.write_all(text.as_bytes()).map_err(stdout_failure)
}

/// One simulation's point, and its variant (none for the calibration run).
type Measured = Result<(Option<Variant>, Point), ReproError>;

/// Every simulation: the grid of every variant and the calibration run, on every core.
/// Returns the grids (the reconstruction first) and the calibration point.
fn simulate(opts: &Options<'_>) -> Result<(Vec<Grid>, Point), ReproError> {
    let shorten = opts.shorten.max(1);
    let length = shortened(k::TRACE_LENGTH, shorten);
    // (variant, axis, n, b): the longest runs (the fast trunk) first, so that the cores
    // finish together.
    let mut order: Vec<Variant> = Variant::ALL.to_vec();
    order.sort_by_key(|&v| v != Variant::Trunk10);
    let mut specs: Vec<(Option<Variant>, usize, u32, u64)> =
        vec![(None, 2, CALIBRATION.0, CALIBRATION.1)];
    for &v in &order {
        for (a, axis) in AXES.iter().enumerate() {
            for &(n, b) in &axis.points {
                specs.push((Some(v), a, n, b));
            }
        }
    }
    let jobs: Vec<Job<'_, Measured>> = specs
        .into_iter()
        .map(|(v, a, n, b)| {
            Box::new(move || {
                let (workload, every, label) = match v {
                    None => (
                        Variant::Paper.workload(n, b, shortened(CALIBRATION_LENGTH, shorten)),
                        shortened(CALIBRATION_STEP, shorten),
                        format!("calibration ({n}, {b})"),
                    ),
                    Some(v) => (
                        v.workload(n, b, length),
                        length,
                        format!("{} ({n}, {b})", v.name()),
                    ),
                };
                measure(opts, &label, a, &workload, every).map(|p| (v, p))
            }) as Job<'_, _>
        })
        .collect();
    let mut grids: Vec<Grid> = Variant::ALL
        .iter()
        .map(|&variant| Grid {
            variant,
            points: Vec::new(),
        })
        .collect();
    let mut calibration = None;
    for r in run_parallel(jobs) {
        match r? {
            (None, p) => calibration = Some(p),
            (Some(v), p) => {
                if let Some(g) = grids.iter_mut().find(|g| g.variant == v) {
                    g.points.push(p);
                }
            }
        }
    }
    let calibration =
        calibration.ok_or_else(|| ReproError::Internal("no calibration run".into()))?;
    Ok((grids, calibration))
}

/// `keshav-cost`.
pub fn keshav_cost(
    opts: &Options<'_>,
    out: &mut dyn Write,
) -> Result<Vec<crate::verdict::Check>, ReproError> {
    introduction(opts, out)?;
    let (grids, calibration) = simulate(opts)?;
    let paper = &grids[0];
    keshav_figures::print_grid(out, paper)?;
    let length = shortened(k::TRACE_LENGTH, opts.shorten);
    keshav_figures::print_calibration(out, &calibration, length)?;
    let mut checks = keshav_checks::paper_claims(paper, &calibration, length);
    checks.extend(keshav_checks::sensitivity(&grids[1..]));
    crate::verdict::print(out, "keshav-cost: the paper's claims against ours", &checks)?;
    keshav_checks::print_why(out, &grids)?;
    keshav_figures::print_sensitivity(out, &grids[1..])?;
    linkshare_report::create_dir(opts.out)?;
    let mut written = Written::default();
    keshav_figures::write(opts.out, &mut written, &grids, &calibration, length)?;
    crate::experiment::print_files(out, &written.files)?;
    Ok(checks)
}
