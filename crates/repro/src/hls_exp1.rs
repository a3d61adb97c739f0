//! `hls-exp1`: the HLS paper's Experiment 1 (§VIII-B, Figs. 7 and 8) over every idle
//! order.
//!
//! The paper's list of guarantees and its idle sequence were lost in the extraction.
//! The guarantees are reconstructed in `scenarios/hls-exp1.toml` (the reasons are
//! printed). Rather than pick one idle sequence, which would let the choice decide
//! whether HTB agrees with the paper, every order in which three of the five leaves go
//! idle one at a time ([`idle_orders`], 5 x 4 x 3 = 60) runs under HLS, HTB and CBQ with
//! each of the core's three link-sharing guidelines ([`Contender`]), on both cores
//! ([`run_parallel`]). Each run is compared with the HMM-fair reference of its own
//! order, phase by phase, after the first measurement window of each phase.
//!
//! The sweep keeps no per-packet records: a class's rate in a phase is measured from
//! the run's throughput windows that lie wholly inside the measured part of the phase
//! ([`window_rates`]), which counts a packet where its last bit left, as the
//! per-packet meter of the other reproductions does. For each scheduler, the order at
//! the median of its worst deviations is then run again with every output written
//! (per-class rates over time, the paper's figure layout).
//!
//! `--shorten N` divides the times, as everywhere, and also every leaf's queue limit
//! (at least [`MIN_LIMIT`] packets), so that an idle leaf's queue still drains within
//! the first, unmeasured, window of a phase.

use std::io::Write;

use linkshare_core::hierarchy::{ClassTree, Limit};
use linkshare_core::sched::SchedulerKind;
use linkshare_core::sched::cbq::CbqSharing;
use linkshare_core::units::{Duration, Instant};
use linkshare_report::reference::{LinkReference, link_reference};
use linkshare_report::summary::stop_reason;
use linkshare_report::svg::{Dash, LineChart, Series};
use linkshare_report::table::TextTable;
use linkshare_report::{Written, create_dir};
use linkshare_scenario::{Edit, NoProgress, RunOptions, Scenario};
use linkshare_sim::RunResult;
use linkshare_sim::config::LinkId;

use crate::experiment::{
    GUARANTEE_KEPT, HMM_FAIR_TOLERANCE, Variant, draw_hierarchy, footer, header, load,
    measurement_windows, print_missing, print_variant, run_scenario, schedulers, shorten_times,
    span,
};
use crate::hls::CHOSEN;
use crate::runner::{Job, run_parallel};
use crate::verdict::{self, Check};
use crate::{Options, ReproError, stdout_failure};

/// Experiment 1's scenario: the reconstructed guarantees, and one of the idle orders.
pub const EXP1: Variant = Variant {
    name: None,
    file: "hls-exp1.toml",
    toml: include_str!("../../../scenarios/hls-exp1.toml"),
};

/// The schedulers the paper compares in Experiment 1.
const EXP1_SCHEDULERS: [&str; 3] = ["hls", "htb", "cbq"];

/// The leaves of the scenario; each has one flow of the same name.
const LEAVES: [&str; 5] = ["A1", "A2", "B1", "B2", "C"];

/// The interior classes whose guarantees the paper discusses for CBQ.
const INTERIOR: [&str; 2] = ["A", "B"];

/// How many leaves go idle, one at a time: the scenario's duration is `IDLE + 1` phases
/// of equal length. A fourth would leave one leaf alone, which every work-conserving
/// scheduler gives the whole link.
const IDLE: usize = 3;

/// The smallest queue limit, packets, that `--shorten` leaves a leaf.
pub const MIN_LIMIT: u64 = 10;

/// The leaves (indices into [`LEAVES`]) in the order they go idle.
type Order = [usize; IDLE];

/// Every order in which `IDLE` of the leaves go idle one at a time, lexicographic.
pub fn idle_orders() -> Vec<Order> {
    let n = LEAVES.len();
    let mut orders = Vec::new();
    for a in 0..n {
        for b in (0..n).filter(|&b| b != a) {
            for c in (0..n).filter(|&c| c != a && c != b) {
                orders.push([a, b, c]);
            }
        }
    }
    orders
}

/// `A1, B1, C`.
fn order_text(o: &Order) -> String {
    o.iter().map(|&l| LEAVES[l]).collect::<Vec<_>>().join(", ")
}

/// One scheduler as the experiment runs it: CBQ once per link-sharing guideline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Contender {
    kind: SchedulerKind,
    /// The guideline, for CBQ.
    sharing: Option<CbqSharing>,
}

impl Contender {
    /// Its name in tables and checks.
    fn name(self) -> &'static str {
        match self.sharing {
            Some(CbqSharing::TopLevel) => "cbq (top-level)",
            Some(CbqSharing::Formal) => "cbq (formal)",
            Some(CbqSharing::Ns2TopLevel) => "cbq (top-level-ns2)",
            None => self.kind.name(),
        }
    }

    /// The directory of its representative run.
    fn dir(self) -> &'static str {
        match self.sharing {
            Some(CbqSharing::TopLevel) => "cbq-top-level",
            Some(CbqSharing::Formal) => "cbq-formal",
            Some(CbqSharing::Ns2TopLevel) => "cbq-top-level-ns2",
            None => self.kind.name(),
        }
    }

    /// The paper's figure.
    fn figure(self) -> &'static str {
        match (self.kind, self.sharing) {
            (SchedulerKind::Hls, _) => "Fig. 7b",
            (SchedulerKind::Htb, _) => "Fig. 8d",
            (_, Some(CbqSharing::Formal)) => "Fig. 8b (ns-2, formal)",
            (_, Some(CbqSharing::Ns2TopLevel)) => "Fig. 8c (ns-2, top-level)",
            _ => "Fig. 8a (Linux)",
        }
    }
}

/// The contenders of `kinds`: CBQ with each guideline.
fn contenders(kinds: &[SchedulerKind]) -> Vec<Contender> {
    let mut out = Vec::new();
    for &kind in kinds {
        if kind == SchedulerKind::Cbq {
            out.extend(CbqSharing::ALL.map(|g| Contender {
                kind,
                sharing: Some(g),
            }));
        } else {
            out.push(Contender {
                kind,
                sharing: None,
            });
        }
    }
    out
}

/// The scenario `c` runs in every order: the file's, under `c`, with every leaf's queue
/// limit divided by `shorten` (at least [`MIN_LIMIT`]); times not yet shortened.
fn base(c: Contender, shorten: u32) -> Result<Scenario, ReproError> {
    let file = load(&EXP1, 1)?;
    let mut edits = Vec::new();
    if let Some(g) = c.sharing {
        edits.push(Edit::new("link.cbq.sharing", format!("\"{g}\"")));
    }
    let tree = &file.config.links[0].classes;
    for leaf in LEAVES {
        let spec = tree.id_of(leaf).map(|id| &tree.classes()[id.index()].spec);
        if shorten > 1
            && let Some(Some(Limit::Packets(n))) = spec.map(|s| s.limit)
        {
            let limit = (n / u64::from(shorten)).max(MIN_LIMIT);
            edits.push(Edit::new(format!("class.{leaf}.limit"), limit.to_string()));
        }
    }
    let mut s = file.with_edits(&edits).map_err(|p| {
        ReproError::Internal(format!("{} under {} is invalid:\n{p}", EXP1.file, c.name()))
    })?;
    s.set_scheduler(c.kind, "repro")?;
    Ok(s)
}

/// `base` with the leaves of `order` going idle one per phase, in that order, and every
/// time divided by `shorten`.
fn in_order(base: &Scenario, order: &Order, shorten: u32) -> Result<Scenario, ReproError> {
    let mut s = base.clone();
    let duration = s.config.duration;
    let phase = Duration(duration.0 / (IDLE as u64 + 1));
    for (l, leaf) in LEAVES.iter().enumerate() {
        let end = match order.iter().position(|&o| o == l) {
            Some(k) => Instant::ZERO + Duration(phase.0 * (k as u64 + 1)),
            None => Instant::ZERO + duration,
        };
        let flow = s
            .config
            .flows
            .iter_mut()
            .find(|f| f.name == *leaf)
            .ok_or_else(|| ReproError::Internal(format!("{} has no flow {leaf}", EXP1.file)))?;
        flow.schedule.on = vec![(Instant::ZERO, end)];
    }
    s.name = format!("{}, idle order {}", s.name, order_text(order));
    shorten_times(&mut s.config, shorten);
    Ok(s)
}

/// The rate of every class (by id index) in each of `windows`, bit/s: the bytes of the
/// run's throughput samples that lie wholly inside the window, counted for the leaf and
/// each of its ancestors, over the total length of those samples' time windows (0 when
/// no time window fits).
fn window_rates(
    result: &RunResult,
    tree: &ClassTree,
    windows: &[(Instant, Instant)],
) -> Vec<Vec<f64>> {
    let link = &result.links[0];
    let inside = |(from, to): (Instant, Instant), (a, b): (Instant, Instant)| a >= from && b <= to;
    let count = result
        .duration
        .0
        .div_ceil(result.window.0.max(1))
        .try_into()
        .unwrap_or(usize::MAX);
    windows
        .iter()
        .map(|&w| {
            let covered: u64 = (0..count)
                .map(|j| result.window_bounds(j))
                .filter(|&b| inside(w, b))
                .map(|(a, b)| b.since(a).0)
                .sum();
            let mut bytes = vec![0u64; tree.len()];
            for s in link
                .throughput
                .iter()
                .filter(|s| inside(w, (s.start, s.end)))
            {
                bytes[s.class.index()] += s.value;
                for a in tree.ancestors(s.class) {
                    bytes[a.index()] += s.value;
                }
            }
            bytes
                .into_iter()
                .map(|b| {
                    if covered == 0 {
                        0.0
                    } else {
                        b as f64 * 8.0 / Duration(covered).as_secs_f64()
                    }
                })
                .collect()
        })
        .collect()
}

/// One order's reference allocation, the windows each phase is measured over, and the
/// measured rates of every contender (by window, then class index).
struct OrderRuns {
    order: Order,
    reference: LinkReference,
    rates: Vec<Vec<Vec<f64>>>,
}

/// Runs every contender in every order on every core.
fn sweep(
    contenders: &[Contender],
    opts: &Options<'_>,
) -> Result<(Vec<Scenario>, Vec<OrderRuns>), ReproError> {
    let bases: Vec<Scenario> = contenders
        .iter()
        .map(|&c| base(c, opts.shorten))
        .collect::<Result<_, _>>()?;
    let orders = idle_orders();
    let shorten = opts.shorten;
    let budget = opts.memory_budget;
    let mut references = Vec::new();
    let mut jobs: Vec<Job<'_, Result<Vec<Vec<f64>>, ReproError>>> = Vec::new();
    for order in &orders {
        let s = in_order(&bases[0], order, shorten)?;
        let reference = link_reference(&s.config, LinkId(0));
        let windows = measurement_windows(&reference, s.config.measure.window);
        for b in &bases {
            let windows = windows.clone();
            jobs.push(Box::new(move || {
                let s = in_order(b, order, shorten)?;
                if let Some(budget) = budget {
                    s.check_memory(budget)?;
                }
                let options = RunOptions {
                    records: None,
                    memory_budget: budget,
                };
                let result = s
                    .simulate_with("hls-exp1 sweep", &NoProgress, options)
                    .map_err(|e| ReproError::Simulator(e.to_string()))?;
                if let Some(reason) = stop_reason(&result) {
                    return Err(ReproError::Incomplete(reason));
                }
                Ok(window_rates(&result, &s.config.links[0].classes, &windows))
            }));
        }
        references.push(reference);
    }
    let mut results = run_parallel(jobs).into_iter();
    let mut runs = Vec::new();
    for (order, reference) in orders.into_iter().zip(references) {
        let rates = results
            .by_ref()
            .take(contenders.len())
            .collect::<Result<_, _>>()?;
        runs.push(OrderRuns {
            order,
            reference,
            rates,
        });
    }
    Ok((bases, runs))
}

/// Where a measurement was taken: the phase (interval index) and the class index.
type At = (usize, usize);

/// What one run in one order shows.
#[derive(Clone, Copy, Debug)]
struct Score {
    /// The largest `|measured - reference|` of any class in any phase, bit/s, and where.
    worst: (f64, At),
    /// The smallest `measured / min(guarantee, demand)` of a leaf in any phase, and where.
    leaf: (f64, At),
    /// The smallest `measured / guarantee` of A or B while every leaf sends (the first
    /// phase), and which.
    interior_all: (f64, At),
    /// The smallest `measured / guarantee` of A or B, while it has a sending leaf, in a
    /// later phase, and where.
    interior_later: (f64, At),
}

/// The smallest `(ratio, at)` of a list, by ratio (NaN first, so it is never hidden);
/// `(NaN, (0, 0))` for none.
fn lowest(items: impl Iterator<Item = (f64, At)>) -> (f64, At) {
    let mut low: Option<(f64, At)> = None;
    for x in items {
        if low.is_none_or(|l| x.0 < l.0 || (x.0.is_nan() && !l.0.is_nan())) {
            low = Some(x);
        }
    }
    low.unwrap_or((f64::NAN, (0, 0)))
}

/// Scores a run: `rates` by phase and class index against `reference`.
fn score(tree: &ClassTree, reference: &LinkReference, rates: &[Vec<f64>]) -> Score {
    let classes = tree.classes();
    let guarantee = |c: usize| classes[c].spec.rate.map(|r| r.bps() as f64);
    let mut worst = (0.0f64, (0, 0));
    for (k, (iv, measured)) in reference.intervals.iter().zip(rates).enumerate() {
        // Every class but the root (index 0).
        for (c, (m, r)) in measured.iter().zip(&iv.rate).enumerate().skip(1) {
            let d = (m - r).abs();
            if d > worst.0 || d.is_nan() {
                worst = (d, (k, c));
            }
        }
    }
    let owed_ratio = |k: usize, c: usize| {
        let owed = guarantee(c)?.min(reference.intervals[k].demand[c]);
        (owed > 0.0).then(|| (rates[k][c] / owed, (k, c)))
    };
    let leaves: Vec<usize> = tree.leaves().iter().map(|l| l.index()).collect();
    let interior: Vec<usize> = INTERIOR
        .iter()
        .filter_map(|n| tree.id_of(n).map(|id| id.index()))
        .collect();
    let phases = 0..reference.intervals.len();
    Score {
        worst,
        leaf: lowest(
            phases
                .clone()
                .flat_map(|k| leaves.iter().filter_map(move |&c| owed_ratio(k, c))),
        ),
        interior_all: lowest(interior.iter().filter_map(|&c| owed_ratio(0, c))),
        interior_later: lowest(
            phases
                .skip(1)
                .flat_map(|k| interior.iter().filter_map(move |&c| owed_ratio(k, c))),
        ),
    }
}

/// `B1 55.1 of 60.0 Mbit/s (91.8 %) in [2, 4) s`.
fn shortfall(tree: &ClassTree, reference: &LinkReference, rates: &[Vec<f64>], at: At) -> String {
    let (k, c) = at;
    let iv = &reference.intervals[k];
    let owed = tree.classes()[c]
        .spec
        .rate
        .map_or(f64::NAN, |r| r.bps() as f64)
        .min(iv.demand[c]);
    format!(
        "{} {:.1} of {:.1} Mbit/s ({:.1} %) in {}",
        tree.classes()[c].name(),
        rates[k][c] / 1e6,
        owed / 1e6,
        rates[k][c] / owed * 100.0,
        span(iv.start, iv.end)
    )
}

/// `A2 in [2, 4) s: 431.2 against 420.0 Mbit/s`.
fn deviation_at(tree: &ClassTree, reference: &LinkReference, rates: &[Vec<f64>], at: At) -> String {
    let (k, c) = at;
    let iv = &reference.intervals[k];
    format!(
        "{} in {}: {:.1} against {:.1} Mbit/s",
        tree.classes()[c].name(),
        span(iv.start, iv.end),
        rates[k][c] / 1e6,
        iv.rate[c] / 1e6
    )
}

/// What a contender did over every order.
struct Summary {
    contender: Contender,
    /// Its index in the sweep's contenders (and in [`OrderRuns::rates`]).
    index: usize,
    /// Its score in each order, in sweep order.
    scores: Vec<Score>,
}

impl Summary {
    /// The index of the order with the largest deviation (the first of equals).
    fn worst_order(&self) -> usize {
        (0..self.scores.len())
            .reduce(|a, b| {
                if self.scores[b].worst.0 > self.scores[a].worst.0 {
                    b
                } else {
                    a
                }
            })
            .unwrap_or(0)
    }

    /// The index of the order at the median of the largest deviations (the lower
    /// median; among equal deviations, the first order).
    fn median_order(&self) -> usize {
        let mut idx: Vec<usize> = (0..self.scores.len()).collect();
        idx.sort_by(|&a, &b| {
            self.scores[a]
                .worst
                .0
                .total_cmp(&self.scores[b].worst.0)
                .then(a.cmp(&b))
        });
        idx.get(idx.len().saturating_sub(1) / 2)
            .copied()
            .unwrap_or(0)
    }

    /// The number of orders in which `pass` holds.
    fn count(&self, pass: impl Fn(&Score) -> bool) -> usize {
        self.scores.iter().filter(|s| pass(s)).count()
    }

    /// The index of the order with the smallest value of `f` (the first of equals).
    fn lowest_order(&self, f: impl Fn(&Score) -> f64) -> usize {
        (0..self.scores.len())
            .reduce(|a, b| {
                if f(&self.scores[b]) < f(&self.scores[a]) {
                    b
                } else {
                    a
                }
            })
            .unwrap_or(0)
    }
}

/// `hls-exp1`.
pub fn exp1(opts: &Options<'_>, out: &mut dyn Write) -> Result<Vec<Check>, ReproError> {
    let (kinds, missing) = schedulers(&EXP1_SCHEDULERS, opts)?;
    let contenders = contenders(&kinds);
    let orders = idle_orders();
    header(
        out,
        &[
            "hls-exp1: HLS paper §VIII-B (Figs. 7, 8): the hierarchy of Fig. 1 at 1 Gbit/s \
             with other rate guarantees, every leaf flooded with 1000 B packets, leaves \
             going idle one after another.",
            "Reconstructed: the paper's list of guarantees and its idle sequence were lost \
             in the extraction.",
            "  Guarantees (Mbit/s): A 420 (A1 180, A2 240), B 180 (B1 60, B2 120), C 400. \
             They must differ from Fig. 1's (\"but with the following rate guarantees\"); \
             the leaves' add up to the link and each parent's is its children's sum, since \
             \"when all leaf classes are active, they each obtain their class guarantees\"; \
             the experiment is \"a scaled version of an experiment in [16], [26]\" \
             (Floyd and Jacobson's CBQ paper, Floyd and Speer's CBQ tests): we take the \
             two-agency structure of ns-2's CBQ test suite (agency A 70 % with leaves of \
             30 % and 40 %, agency B 30 % with 10 % and 20 %) and scale it into the \
             600 Mbit/s that Fig. 1 leaves to A and B, C keeping Fig. 1's 400. The reasons \
             are in scenarios/hls-exp1.toml.",
            "  Idle sequence: none is chosen. Every order in which three of the five leaves \
             go idle one at a time runs (5 x 4 x 3 = 60; a fourth idle event would leave \
             one leaf alone, which every work-conserving scheduler gives the whole link, so \
             the 120 orders of all five leaves are these 60 experiments): four phases of \
             2 s (8 s), each measured after its first 0.2 s window and compared with the \
             HMM-fair allocation of that order's phase.",
            "  CBQ runs with each link-sharing guideline of the core: top-level with \
             Linux's cutoff rules (the Linux qdisc of Fig. 8a), formal (Floyd and \
             Jacobson's guideline as ns-2 has it, Fig. 8b) and top-level with ns-2's \
             cutoff rules (Fig. 8c); the last two put ns-2's regulator into Linux's CBQ \
             (its estimators, round robin and overlimit action), not the whole of ns-2's \
             CBQ (see the CBQ module docs).",
            "  --shorten N also divides every leaf's queue limit by N (at least 10 \
             packets), so that an idle leaf's queue drains within the unmeasured first \
             window of a phase.",
            CHOSEN,
            "Paper: HLS (Fig. 7b) follows the HMM-fair allocation at all times; HTB \
             (Fig. 8d) \"satisfies the allocation of HMM fairness\" in the paper's one run; \
             CBQ (Figs. 8a-c) keeps the leaf guarantees at all times and A's and B's while \
             all leaves send, but when not all leaves send, A or B may fall below its \
             guarantee while the other grabs the rest.",
            "",
        ],
    )?;
    print_missing(out, &missing)?;
    writeln!(
        out,
        "running {} orders x {} schedulers = {} runs on {} threads",
        orders.len(),
        contenders.len(),
        orders.len() * contenders.len(),
        crate::runner::all_cores().min(orders.len() * contenders.len())
    )
    .map_err(stdout_failure)?;
    let (bases, runs) = sweep(&contenders, opts)?;
    let tree = bases[0].config.links[0].classes.clone();
    let link = bases[0].config.links[0].rate.bps() as f64;
    let summaries: Vec<Summary> = contenders
        .iter()
        .enumerate()
        .map(|(j, &contender)| Summary {
            contender,
            index: j,
            scores: runs
                .iter()
                .map(|r| score(&tree, &r.reference, &r.rates[j]))
                .collect(),
        })
        .collect();

    create_dir(opts.out)?;
    let mut written = Written::default();
    written.write(
        opts.out,
        "orders.csv",
        orders_csv(&tree, &runs, &summaries, link).as_bytes(),
    )?;
    written.write(
        opts.out,
        "deviation.svg",
        deviation_chart(&summaries, link).render().as_bytes(),
    )?;
    writeln!(
        out,
        "\nlargest deviation from the HMM-fair allocation in each idle order, % of the link \
         (any class, any phase; * = within {} %, HMM-fair at every phase):",
        HMM_FAIR_TOLERANCE * 100.0
    )
    .and_then(|()| write!(out, "{}", orders_table(&runs, &summaries, link).render()))
    .map_err(stdout_failure)?;
    writeln!(out, "\nover the {} idle orders:", runs.len())
        .and_then(|()| {
            write!(
                out,
                "{}",
                summary_table(&tree, &runs, &summaries, link).render()
            )
        })
        .map_err(stdout_failure)?;

    let mut representatives = Vec::new();
    for (j, s) in summaries.iter().enumerate() {
        let k = s.median_order();
        let order = &runs[k].order;
        let scenario = in_order(&bases[j], order, opts.shorten)?;
        let variant = Variant {
            name: Some(s.contender.dir()),
            ..EXP1
        };
        let v = run_scenario(
            variant,
            scenario,
            &[s.contender.kind],
            opts,
            &opts.out.join(s.contender.dir()),
        )?;
        writeln!(
            out,
            "\n{}: the order at the median of its largest deviations, {} (in {}/):",
            s.contender.name(),
            order_text(order),
            s.contender.dir()
        )
        .map_err(stdout_failure)?;
        print_variant(out, &v)?;
        representatives.push(v);
    }

    let checks: Vec<Check> = summaries
        .iter()
        .flat_map(|s| checks(s, &tree, &runs, link))
        .collect();
    verdict::print(out, "hls-exp1: paper against ours", &checks)?;
    representatives[0].written.files.splice(0..0, written.files);
    draw_hierarchy(
        &mut representatives[0],
        opts.out,
        "hls-exp1: Fig. 1's hierarchy with the reconstructed guarantees (shaded: leaves with traffic)",
    )?;
    footer(out, &representatives)?;
    Ok(checks)
}

/// Whether a score is HMM-fair at every phase.
fn fair(s: &Score, link: f64) -> bool {
    s.worst.0 <= HMM_FAIR_TOLERANCE * link
}

/// The checks of one contender against the paper's claims for its figure.
fn checks(s: &Summary, tree: &ClassTree, runs: &[OrderRuns], link: f64) -> Vec<Check> {
    let c = s.contender;
    let n = runs.len();
    let w = s.worst_order();
    let (worst, at) = s.scores[w].worst;
    let fair_orders = s.count(|x| fair(x, link));
    let ours_fair = format!(
        "{fair_orders} of {n} orders; worst {:.2} % of the link ({}, order {})",
        worst / link * 100.0,
        deviation_at(tree, &runs[w].reference, run_rates(runs, s, w), at),
        order_text(&runs[w].order)
    );
    let tolerance = format!(
        "every phase within {} % of the link",
        HMM_FAIR_TOLERANCE * 100.0
    );
    match (c.kind, c.sharing) {
        (SchedulerKind::Hls, _) => vec![Check::claim(
            "hls follows the HMM-fair allocation",
            &format!("{}: HMM-fair at all times", c.figure()),
            ours_fair,
            &[worst],
            &tolerance,
            fair_orders == n,
        )],
        (SchedulerKind::Htb, _) => vec![
            Check::claim(
                "htb follows the HMM-fair allocation in some idle order",
                &format!(
                    "{}: HMM-fair in the paper's one run (its order is lost)",
                    c.figure()
                ),
                ours_fair,
                &[worst],
                &format!("{tolerance}, in at least one order"),
                fair_orders >= 1,
            )
            .should(),
        ],
        (_, Some(_)) => {
            let leaf = s.lowest_order(|x| x.leaf.0);
            let all = s.lowest_order(|x| x.interior_all.0);
            let later = s.lowest_order(|x| x.interior_later.0);
            let kept = format!(
                ">= {:.0} % of min(guarantee, demand)",
                GUARANTEE_KEPT * 100.0
            );
            let below = |x: &Score| x.interior_later.0 < GUARANTEE_KEPT;
            let at_order = |k: usize, at: At| {
                format!(
                    "{}, order {}",
                    shortfall(tree, &runs[k].reference, run_rates(runs, s, k), at),
                    order_text(&runs[k].order)
                )
            };
            vec![
                Check::claim(
                    &format!("{} keeps every leaf's guarantee in every idle order", c.name()),
                    &format!("{}: leaf guarantees satisfied at all times", c.figure()),
                    format!(
                        "{} of {n} orders; lowest: {}",
                        s.count(|x| x.leaf.0 >= GUARANTEE_KEPT),
                        at_order(leaf, s.scores[leaf].leaf.1)
                    ),
                    &[s.scores[leaf].leaf.0],
                    &format!("{kept} in every phase of every order"),
                    s.count(|x| x.leaf.0 >= GUARANTEE_KEPT) == n,
                )
                .should(),
                Check::claim(
                    &format!("{} keeps A's and B's guarantees while every leaf sends", c.name()),
                    &format!(
                        "{}: internal guarantees satisfied when all leaves send",
                        c.figure()
                    ),
                    format!(
                        "{} of {n} orders; lowest: {}",
                        s.count(|x| x.interior_all.0 >= GUARANTEE_KEPT),
                        at_order(all, s.scores[all].interior_all.1)
                    ),
                    &[s.scores[all].interior_all.0],
                    &format!("{kept} in the first phase of every order"),
                    s.count(|x| x.interior_all.0 >= GUARANTEE_KEPT) == n,
                )
                .should(),
                Check::claim(
                    &format!(
                        "{} lets A or B fall below its guarantee once a leaf is idle",
                        c.name()
                    ),
                    &format!(
                        "{}: one internal class may fall below its guarantee",
                        c.figure()
                    ),
                    format!(
                        "{} of {n} orders; lowest: {}",
                        s.count(below),
                        at_order(later, s.scores[later].interior_later.1)
                    ),
                    &[s.scores[later].interior_later.0],
                    &format!(
                        "A or B below {:.0} % of its guarantee in a later phase of at least one order",
                        GUARANTEE_KEPT * 100.0
                    ),
                    s.count(below) >= 1,
                )
                .should(),
            ]
        }
        _ => Vec::new(),
    }
}

/// The rates of `s`'s contender in order `k`, by phase then class index.
fn run_rates<'r>(runs: &'r [OrderRuns], s: &Summary, k: usize) -> &'r [Vec<f64>] {
    &runs[k].rates[s.index]
}

/// The largest deviation of each contender in each order, % of the link, `*` when
/// HMM-fair at every phase.
fn orders_table(runs: &[OrderRuns], summaries: &[Summary], link: f64) -> TextTable {
    let mut t = TextTable {
        header: vec!["idle order".to_owned()],
        ..TextTable::default()
    };
    t.header
        .extend(summaries.iter().map(|s| s.contender.name().to_owned()));
    for (k, r) in runs.iter().enumerate() {
        let mut row = vec![order_text(&r.order)];
        for s in summaries {
            let x = &s.scores[k];
            row.push(format!(
                "{:.2}{}",
                x.worst.0 / link * 100.0,
                if fair(x, link) { " *" } else { "  " }
            ));
        }
        t.rows.push(row);
    }
    t
}

/// One row per contender: how many orders are HMM-fair, the median and the worst
/// deviation, and the guarantees.
fn summary_table(
    tree: &ClassTree,
    runs: &[OrderRuns],
    summaries: &[Summary],
    link: f64,
) -> TextTable {
    let mut t = TextTable {
        header: [
            "scheduler",
            "HMM-fair orders",
            "median worst %",
            "worst %",
            "worst: where, order",
            "leaf guarantees kept",
            "A, B kept (all send)",
            "A or B below (later)",
            "lowest A or B later, order",
        ]
        .map(str::to_owned)
        .to_vec(),
        ..TextTable::default()
    };
    let n = runs.len();
    for s in summaries {
        let w = s.worst_order();
        let m = s.median_order();
        let later = s.lowest_order(|x| x.interior_later.0);
        t.rows.push(vec![
            s.contender.name().to_owned(),
            format!("{} of {n}", s.count(|x| fair(x, link))),
            format!("{:.2}", s.scores[m].worst.0 / link * 100.0),
            format!("{:.2}", s.scores[w].worst.0 / link * 100.0),
            format!(
                "{}; {}",
                deviation_at(
                    tree,
                    &runs[w].reference,
                    run_rates(runs, s, w),
                    s.scores[w].worst.1
                ),
                order_text(&runs[w].order)
            ),
            format!("{} of {n}", s.count(|x| x.leaf.0 >= GUARANTEE_KEPT)),
            format!("{} of {n}", s.count(|x| x.interior_all.0 >= GUARANTEE_KEPT)),
            format!(
                "{} of {n}",
                s.count(|x| x.interior_later.0 < GUARANTEE_KEPT)
            ),
            format!(
                "{}; {}",
                shortfall(
                    tree,
                    &runs[later].reference,
                    run_rates(runs, s, later),
                    s.scores[later].interior_later.1
                ),
                order_text(&runs[later].order)
            ),
        ]);
    }
    t
}

/// `orders.csv`: one row per order and contender.
fn orders_csv(tree: &ClassTree, runs: &[OrderRuns], summaries: &[Summary], link: f64) -> String {
    let mut text = String::from(
        "order,scheduler,worst_deviation_bps,worst_deviation_of_link,worst_class,\
         worst_phase_start_s,hmm_fair,lowest_leaf_ratio,lowest_interior_ratio_all_send,\
         lowest_interior_ratio_later\n",
    );
    for (k, r) in runs.iter().enumerate() {
        for s in summaries {
            let x = &s.scores[k];
            let (k_at, c_at) = x.worst.1;
            text.push_str(&format!(
                "{},{},{:.3},{:.6},{},{},{},{:.6},{:.6},{:.6}\n",
                order_text(&r.order).replace(", ", " "),
                s.contender.name(),
                x.worst.0,
                x.worst.0 / link,
                tree.classes()[c_at].name(),
                r.reference.intervals[k_at].start.as_secs_f64(),
                fair(x, link),
                x.leaf.0,
                x.interior_all.0,
                x.interior_later.0,
            ));
        }
    }
    text
}

/// The distribution of the largest deviation over the orders: per contender, the
/// orders sorted by it, and the tolerance.
fn deviation_chart(summaries: &[Summary], link: f64) -> LineChart {
    let mut chart = LineChart::new(
        "hls-exp1: largest deviation from HMM fairness in each idle order",
        "idle orders, sorted by the deviation",
        "largest deviation (% of the link)",
    );
    chart.y_axis.include_zero = true;
    let n = summaries.first().map_or(0, |s| s.scores.len());
    for (k, s) in summaries.iter().enumerate() {
        let mut d: Vec<f64> = s.scores.iter().map(|x| x.worst.0 / link * 100.0).collect();
        d.sort_by(f64::total_cmp);
        let points = d
            .into_iter()
            .enumerate()
            .map(|(i, y)| ((i + 1) as f64, y))
            .collect();
        let mut series = Series::line(s.contender.name(), points).with_dots();
        series.colour = Some(k);
        chart.series.push(series);
    }
    let mut tol = Series::line(
        "tolerance",
        vec![
            (1.0, HMM_FAIR_TOLERANCE * 100.0),
            (n as f64, HMM_FAIR_TOLERANCE * 100.0),
        ],
    );
    tol.dash = Some(Dash::Dashed);
    tol.colour = Some(summaries.len());
    chart.series.push(tol);
    chart
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 5 x 4 x 3 orders, all distinct, each of three distinct leaves.
    #[test]
    fn sixty_idle_orders() {
        let orders = idle_orders();
        assert_eq!(orders.len(), 60);
        let mut sorted = orders.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 60);
        assert!(
            orders
                .iter()
                .all(|o| o[0] != o[1] && o[1] != o[2] && o[0] != o[2])
        );
    }
}
