//! The plots of a run and of a comparison, built with [`crate::svg`].
//!
//! * throughput: rate in Mbit/s (10^6 bit/s) per window, drawn as steps over the window;
//! * delay CDF: fraction of packets whose delay at the port is at most x ms, as steps,
//!   with a logarithmic x axis when the delays span more than two decades;
//! * backlog: the largest backlog in each window, in kB (10^3 bytes).
//!
//! # Many classes
//!
//! A chart draws at most [`SHOWN_CLASSES`] classes one by one, each in its own colour of
//! the colour-blind-safe palette. With more leaves than that, it draws the
//! [`SHOWN_CLASSES`] that delivered the most bytes (over every run of a comparison; ties
//! to the class listed first) and one grey series `others (N classes)` that sums the
//! rest — their rates, their backlogs, or the distribution of all their packets' delays
//! — and the legend ends with `…and N more` (a single class left over is drawn in grey
//! under its own name). The CSVs have every class. Building a chart
//! is linear in the samples and delay bins of the run.
//!
//! # Colours, and hierarchies drawn as in the HLS paper's Fig. 7
//!
//! A leaf's colour comes from its identity, not from its rank in a chart: the
//! `k`-th leaf of a run (links in order, then classes in id order) gets palette colour
//! `k mod 8` ([`leaf_style`]), so a class keeps its colour in every
//! chart of runs of one scenario (a comparison's panels, a reproduction's reference)
//! whichever classes a chart draws. Past the palette's eight colours, leaves repeat them
//! dotted, then dash-dotted (dashes are left to aggregates).
//!
//! The throughput of a link with a hierarchy (an interior class below the root) is drawn
//! in the style of the HLS paper's Fig. 7: every leaf solid and labelled on the plot,
//! each interior class's total (the sum of its leaves) as a dashed grey line labelled
//! with its name (at most [`SHOWN_CLASSES`], the top levels first), and a dashed grey
//! `Total` for the link. [`throughput_panels`] draws one such chart per run of a
//! comparison, with the same classes and colours in each.
//!
//! # Scales
//!
//! Throughput and backlog have a linear y axis unless [`PlotOptions::log_scale`] is set.
//! On a linear axis, a chart whose drawn classes include some that never reach 1 % of the
//! axis says so under its title: they lie along the x axis, and a logarithmic axis shows
//! them (zero values are then not drawn).

use linkshare_core::hierarchy::ClassId;
use linkshare_core::units::Duration;
use linkshare_sim::result::{CDF_POINTS, DelayHistogram, RunResult, WindowSample};

use super::Labels;
use crate::svg::{Axis, Dash, LineChart, PALETTE, Scale, Series};

/// Classes drawn one by one, at most: one per colour of the palette.
pub const SHOWN_CLASSES: usize = PALETTE.len();

/// The dash of the leaves of each round of the palette's colours ([`leaf_style`]).
pub const LEAF_PALETTE_ROUNDS: [Dash; 3] = [Dash::Solid, Dash::Dotted, Dash::DashDot];

/// The colour (an index into [`PALETTE`]) and dash of the leaf at position `rank` among
/// the leaves of a run's links (links in order, classes in id order): the same in every
/// chart of a scenario's runs.
pub fn leaf_style(rank: usize) -> (usize, Dash) {
    let round = rank / PALETTE.len();
    (
        rank % PALETTE.len(),
        LEAF_PALETTE_ROUNDS[round % LEAF_PALETTE_ROUNDS.len()],
    )
}

/// A leaf's series with its colour from its identity ([`leaf_style`] of `rank`).
fn leaf_series(mut s: Series, rank: usize) -> Series {
    let (colour, dash) = leaf_style(rank);
    s.colour = Some(colour);
    s.dash = Some(dash);
    s
}

/// A hierarchy's aggregate series (an interior class's total, the link's `Total`):
/// dashed grey, labelled on the plot.
pub fn aggregate_series(name: String, points: Vec<(f64, f64)>) -> Series {
    let mut s = Series::steps(name, points).labelled();
    s.aggregate = true;
    s.dash = Some(Dash::Dashed);
    s
}

/// How the plots are drawn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlotOptions {
    /// A logarithmic y axis for throughput and backlog (for classes far below the
    /// others); zero values are then not drawn.
    pub log_scale: bool,
}

/// `scenario (scheduler)` — the schedulers of every link, distinct, in link order.
pub fn run_title(scenario: &str, result: &RunResult) -> String {
    let mut names: Vec<&str> = Vec::new();
    for l in &result.links {
        if !names.contains(&l.scheduler.as_str()) {
            names.push(&l.scheduler);
        }
    }
    format!("{scenario} ({})", names.join(", "))
}

/// The leaves of every link, as (link number, class), in link then id order.
fn leaves(result: &RunResult) -> Vec<(usize, ClassId)> {
    result
        .links
        .iter()
        .enumerate()
        .flat_map(|(i, l)| {
            l.classes
                .iter()
                .filter(|c| c.is_leaf)
                .map(move |c| (i, c.id))
        })
        .collect()
}

/// The leaves a chart draws one by one, and the rest.
#[derive(Debug)]
struct Selection {
    /// Drawn one by one, in leaf order.
    shown: Vec<(usize, ClassId)>,
    /// The position of each of `shown` among all the leaves ([`leaf_style`]).
    ranks: Vec<usize>,
    /// Summed into the `others` series.
    others: Vec<(usize, ClassId)>,
}

impl Selection {
    /// Every leaf of `runs`' first result when there are at most [`SHOWN_CLASSES`];
    /// else the [`SHOWN_CLASSES`] with the most bytes delivered over all `runs`.
    fn of(runs: &[&RunResult]) -> Selection {
        let Some(first) = runs.first() else {
            return Selection {
                shown: Vec::new(),
                ranks: Vec::new(),
                others: Vec::new(),
            };
        };
        let all = leaves(first);
        if all.len() <= SHOWN_CLASSES {
            return Selection {
                ranks: (0..all.len()).collect(),
                shown: all,
                others: Vec::new(),
            };
        }
        let bytes = |&(l, c): &(usize, ClassId)| -> u64 {
            runs.iter()
                .filter_map(|r| r.links.get(l)?.classes.get(c.index()))
                .map(|k| k.delivered.bytes)
                .sum()
        };
        let mut ranked: Vec<(u64, usize)> = all
            .iter()
            .enumerate()
            .map(|(i, leaf)| (bytes(leaf), i))
            .collect();
        ranked.select_nth_unstable_by(SHOWN_CLASSES - 1, |a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut top: Vec<usize> = ranked[..SHOWN_CLASSES].iter().map(|&(_, i)| i).collect();
        top.sort_unstable();
        let mut shown = Vec::with_capacity(SHOWN_CLASSES);
        let mut others = Vec::with_capacity(all.len() - SHOWN_CLASSES);
        let mut next = top.clone().into_iter().peekable();
        for (i, leaf) in all.into_iter().enumerate() {
            if next.next_if(|&t| t == i).is_some() {
                shown.push(leaf);
            } else {
                others.push(leaf);
            }
        }
        Selection {
            shown,
            ranks: top,
            others,
        }
    }

    /// The name of the `others` series: the class's own when it holds one.
    fn others_name(&self, labels: &Labels<'_>) -> String {
        match self.others.as_slice() {
            [(l, c)] => labels.class(*l, *c),
            others => format!("others ({} classes)", others.len()),
        }
    }

    /// The legend's last line, when several classes are not drawn one by one.
    fn legend_note(&self) -> Option<String> {
        (self.others.len() > 1).then(|| format!("…and {} more", self.others.len()))
    }
}

/// What a window series plots.
#[derive(Clone, Copy, Debug)]
enum Measure {
    /// Throughput samples as Mbit/s.
    Rate,
    /// Backlog samples as kB.
    Backlog,
}

impl Measure {
    /// The plotted value of `bytes` over a window of `len`.
    fn value(self, bytes: u64, len: Duration) -> f64 {
        match self {
            Measure::Rate => {
                let s = len.as_secs_f64();
                if s == 0.0 {
                    0.0
                } else {
                    bytes as f64 * 8.0 / s * 1e-6
                }
            }
            Measure::Backlog => bytes as f64 * 1e-3,
        }
    }

    fn samples(self, result: &RunResult, link: usize) -> &[WindowSample] {
        let l = &result.links[link];
        match self {
            Measure::Rate => &l.throughput,
            Measure::Backlog => &l.backlog,
        }
    }
}

/// A chart's points: one line per shown leaf (in selection order), and the others'.
type Lines = (Vec<Vec<(f64, f64)>>, Vec<(f64, f64)>);

/// The step points of every shown leaf (in `sel.shown` order) and of the others' sum,
/// from one pass over the window samples of `result`: `(window start, value)` per
/// window, ending at the last window's end.
fn window_series(result: &RunResult, sel: &Selection, measure: Measure) -> Lines {
    let mut shown: Vec<Vec<(f64, f64)>> = vec![Vec::new(); sel.shown.len()];
    let mut others_bytes: Vec<u64> = Vec::new();
    let mut bounds: Vec<(f64, f64, Duration)> = Vec::new();
    for link in 0..result.links.len() {
        // Position of each class of this link among the shown (usize::MAX: others,
        // usize::MAX - 1: not a leaf of the selection).
        let classes = result.links[link].classes.len();
        let mut slot = vec![usize::MAX - 1; classes];
        for (i, &(l, c)) in sel.shown.iter().enumerate() {
            if l == link {
                slot[c.index()] = i;
            }
        }
        for &(l, c) in &sel.others {
            if l == link {
                slot[c.index()] = usize::MAX;
            }
        }
        for s in measure.samples(result, link) {
            let k = (s.start.as_nanos() / result.window.as_nanos().max(1)) as usize;
            let len = s.end.since(s.start);
            match slot.get(s.class.index()).copied() {
                Some(usize::MAX) => {
                    if others_bytes.len() <= k {
                        others_bytes.resize(k + 1, 0);
                        bounds.resize(k + 1, (0.0, 0.0, Duration::ZERO));
                    }
                    others_bytes[k] += s.value;
                    bounds[k] = (s.start.as_secs_f64(), s.end.as_secs_f64(), len);
                }
                Some(i) if i < sel.shown.len() => {
                    shown[i].push((s.start.as_secs_f64(), measure.value(s.value, len)));
                    shown[i].push((s.end.as_secs_f64(), measure.value(s.value, len)));
                }
                _ => {}
            }
        }
    }
    // Each sample was pushed as (start, v), (end, v): keep the starts and the last end.
    let steps = |pairs: Vec<(f64, f64)>| -> Vec<(f64, f64)> {
        let last = pairs.last().copied();
        let mut points: Vec<(f64, f64)> = pairs.into_iter().step_by(2).collect();
        points.extend(last);
        points
    };
    let shown = shown.into_iter().map(steps).collect();
    let mut others: Vec<(f64, f64)> = others_bytes
        .iter()
        .zip(&bounds)
        .map(|(&b, &(start, _, len))| (start, measure.value(b, len)))
        .collect();
    if let (Some(&(_, end, len)), Some(&b)) = (bounds.last(), others_bytes.last()) {
        others.push((end, measure.value(b, len)));
    }
    (shown, others)
}

/// The CDF of a delay distribution in ms, starting at (smallest delay, 0).
fn cdf_points(delays: &DelayHistogram) -> Vec<(f64, f64)> {
    let cdf = delays.cdf(CDF_POINTS);
    let mut points = Vec::with_capacity(cdf.len() + 1);
    if let Some(&(d, _)) = cdf.first() {
        points.push((d.as_secs_f64() * 1e3, 0.0));
    }
    points.extend(cdf.iter().map(|&(d, f)| (d.as_secs_f64() * 1e3, f)));
    points
}

/// The delays at the port of one leaf (empty for an unknown one).
fn leaf_delays(result: &RunResult, (link, class): (usize, ClassId)) -> Option<&DelayHistogram> {
    Some(&result.links.get(link)?.classes.get(class.index())?.delays)
}

/// The distribution of every packet of `leaves` together: their bins merged in one
/// sort (linear after sorting, whatever the number of leaves).
fn merged_delays(result: &RunResult, leaves: &[(usize, ClassId)]) -> DelayHistogram {
    let mut bins: Vec<(Duration, u64)> = leaves
        .iter()
        .filter_map(|&leaf| leaf_delays(result, leaf))
        .flat_map(|h| h.bins().iter().copied())
        .collect();
    DelayHistogram::from_unsorted_bins(&mut bins)
}

fn throughput_chart(title: String, options: PlotOptions) -> LineChart {
    let mut chart = LineChart::new(title, "time (s)", "throughput (Mbit/s)");
    chart.y_axis.include_zero = true;
    if options.log_scale {
        chart.y_axis.scale = Scale::Log10;
    }
    chart
}

fn cdf_chart(title: String, series: Vec<Series>) -> LineChart {
    let mut chart = LineChart::new(title, "delay at the port (ms)", "fraction of packets");
    let (lo, hi) = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .filter(|&x| x > 0.0)
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), x| {
            (lo.min(x), hi.max(x))
        });
    chart.x_axis = Axis {
        scale: if hi / lo > 100.0 {
            Scale::Log10
        } else {
            Scale::Linear
        },
        range: None,
        include_zero: true,
    };
    chart.y_axis.range = Some((0.0, 1.0));
    chart.series = series;
    chart
}

/// On a linear y axis: says under the title how many drawn series never reach 1 % of
/// the largest value drawn (they lie along the x axis), and that a logarithmic axis
/// shows them.
fn note_small_series(chart: &mut LineChart) {
    if chart.y_axis.scale != Scale::Linear {
        return;
    }
    let peak = |s: &Series| s.points.iter().map(|p| p.1).fold(0.0f64, f64::max);
    let top = chart.series.iter().map(peak).fold(0.0f64, f64::max);
    let small = chart
        .series
        .iter()
        .filter(|s| {
            let p = peak(s);
            p > 0.0 && p < top * 0.01
        })
        .count();
    if small > 0 {
        chart.subtitle = Some(format!(
            "{small} of the series stay below 1% of the axis: a logarithmic scale shows them"
        ));
    }
}

/// The series of one window measure for a run: every leaf of `sel` in its own colour
/// (labelled on the plot when `labelled`), then the others' sum.
fn run_window_series(
    result: &RunResult,
    sel: &Selection,
    measure: Measure,
    labelled: bool,
) -> (Vec<Series>, Option<String>) {
    let labels = Labels::new(result);
    let (shown, others) = window_series(result, sel, measure);
    let mut series: Vec<Series> = sel
        .shown
        .iter()
        .zip(&sel.ranks)
        .zip(shown)
        .map(|((&(l, c), &rank), points)| {
            let s = leaf_series(Series::steps(labels.class(l, c), points), rank);
            if labelled { s.labelled() } else { s }
        })
        .collect();
    if !sel.others.is_empty() {
        let mut s = Series::steps(sel.others_name(&labels), others);
        s.aggregate = true;
        series.push(s);
    }
    (series, sel.legend_note())
}

/// The interior classes (neither the root nor a leaf) of every link, top levels first
/// (by depth, then link and id), and the links that have any: the links drawn as
/// hierarchies.
fn interior_classes(result: &RunResult) -> (Vec<(usize, ClassId)>, Vec<usize>) {
    let mut interior: Vec<(u32, usize, ClassId)> = Vec::new();
    let mut links = Vec::new();
    for (l, link) in result.links.iter().enumerate() {
        let before = interior.len();
        for c in &link.classes {
            if c.parent.is_some() && !c.is_leaf {
                let mut depth = 0;
                let mut up = c.parent;
                while let Some(p) = up {
                    depth += 1;
                    up = link.classes.get(p.index()).and_then(|k| k.parent);
                }
                interior.push((depth, l, c.id));
            }
        }
        if interior.len() > before {
            links.push(l);
        }
    }
    interior.sort_unstable();
    (
        interior.into_iter().map(|(_, l, c)| (l, c)).collect(),
        links,
    )
}

/// The dashed grey aggregates of the links drawn as hierarchies: the rate of each
/// interior class (the sum of its leaves; at most [`SHOWN_CLASSES`], top levels first)
/// and of each such link (`Total`), per window, from one pass over the samples; and
/// how many interior classes were left out.
fn hierarchy_series(result: &RunResult) -> (Vec<Series>, usize) {
    let (mut interior, links) = interior_classes(result);
    let left_out = interior.len().saturating_sub(SHOWN_CLASSES);
    interior.truncate(SHOWN_CLASSES);
    let groups = interior.len() + links.len();
    let windows = result
        .links
        .iter()
        .filter_map(|l| l.throughput.last())
        .map(|s| (s.start.as_nanos() / result.window.as_nanos().max(1)) as usize + 1)
        .max()
        .unwrap_or(0);
    let mut bytes = vec![vec![0u64; windows]; groups];
    for (t, &l) in links.iter().enumerate() {
        let classes = &result.links[l].classes;
        // The groups each class counts in: its drawn ancestors and the link's total.
        let member: Vec<Vec<usize>> = classes
            .iter()
            .map(|c| {
                let mut groups = vec![interior.len() + t];
                let mut up = c.parent;
                while let Some(p) = up {
                    if let Some(g) = interior.iter().position(|&x| x == (l, p)) {
                        groups.push(g);
                    }
                    up = classes.get(p.index()).and_then(|k| k.parent);
                }
                groups
            })
            .collect();
        for s in &result.links[l].throughput {
            let k = (s.start.as_nanos() / result.window.as_nanos().max(1)) as usize;
            for &g in member.get(s.class.index()).into_iter().flatten() {
                bytes[g][k] += s.value;
            }
        }
    }
    let labels = Labels::new(result);
    let points = |b: &[u64]| -> Vec<(f64, f64)> {
        let mut points: Vec<(f64, f64)> = Vec::with_capacity(b.len() + 1);
        for (k, &v) in b.iter().enumerate() {
            let (start, end) = result.window_bounds(k);
            points.push((
                start.as_secs_f64(),
                Measure::Rate.value(v, end.since(start)),
            ));
        }
        if let (Some(&v), Some(k)) = (b.last(), b.len().checked_sub(1)) {
            let (start, end) = result.window_bounds(k);
            points.push((end.as_secs_f64(), Measure::Rate.value(v, end.since(start))));
        }
        points
    };
    let mut series: Vec<Series> = interior
        .iter()
        .zip(&bytes)
        .map(|(&(l, c), b)| aggregate_series(labels.class(l, c), points(b)))
        .collect();
    for (&l, b) in links.iter().zip(&bytes[interior.len()..]) {
        // `Total`, after the link's name where classes carry it.
        let root = labels.class(l, ClassId(0));
        let prefix = root
            .strip_suffix(result.links[l].classes[0].name.as_str())
            .unwrap_or("");
        series.push(aggregate_series(format!("{prefix}Total"), points(b)));
    }
    (series, left_out)
}

/// One run's throughput chart over `sel`: for a hierarchy in the style of the HLS
/// paper's Fig. 7 (see the [module docs](self)).
fn throughput_panel(
    title: String,
    result: &RunResult,
    sel: &Selection,
    options: PlotOptions,
) -> LineChart {
    let mut chart = throughput_chart(title, options);
    chart.x_axis.range = Some((0.0, result.duration.as_secs_f64()));
    let (aggregates, left_out) = hierarchy_series(result);
    let hierarchy = !aggregates.is_empty();
    let (mut series, mut note) =
        run_window_series(result, sel, Measure::Rate, !aggregates.is_empty());
    series.extend(aggregates);
    if left_out > 0 {
        let more = format!("{left_out} interior classes not drawn");
        note = Some(match note {
            Some(n) => format!("{n}; {more}"),
            None => more,
        });
    }
    chart.series = series;
    chart.legend_note = note;
    if hierarchy {
        let top = highest(&chart);
        headroom(&mut chart, top);
    }
    note_small_series(&mut chart);
    chart
}

/// The highest finite value a chart draws (0 for none).
fn highest(chart: &LineChart) -> f64 {
    chart
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .filter(|y| y.is_finite())
        .fold(0.0f64, f64::max)
}

/// On a linear y axis, from 0 to 5 % above `top`: a hierarchy's `Total` at the link
/// rate would otherwise lie on the plot's frame.
pub fn headroom(chart: &mut LineChart, top: f64) {
    if chart.y_axis.scale == Scale::Linear && top > 0.0 {
        chart.y_axis.range = Some((0.0, top * 1.05));
    }
}

/// Rate of every leaf over time, and for a hierarchy its interior classes and total
/// (see the [module docs](self)).
pub fn throughput(title: &str, result: &RunResult, options: PlotOptions) -> LineChart {
    let sel = Selection::of(&[result]);
    throughput_panel(
        format!("Throughput per class: {title}"),
        result,
        &sel,
        options,
    )
}

/// One [`throughput`] chart per run of a comparison (`runs`: scheduler name, result),
/// with the same classes, colours and axes in each: the panels of the HLS paper's
/// Fig. 7.
pub fn throughput_panels(
    scenario: &str,
    runs: &[(String, RunResult)],
    options: PlotOptions,
) -> Vec<(String, LineChart)> {
    let results: Vec<&RunResult> = runs.iter().map(|(_, r)| r).collect();
    let sel = Selection::of(&results);
    let mut panels: Vec<(String, LineChart)> = runs
        .iter()
        .map(|(name, r)| {
            let title = format!("Throughput per class under {name}: {scenario}");
            (name.clone(), throughput_panel(title, r, &sel, options))
        })
        .collect();
    // One y range for every panel, so that heights compare across them.
    let top = panels
        .iter()
        .map(|(_, c)| highest(c))
        .fold(0.0f64, f64::max);
    for (_, c) in &mut panels {
        headroom(c, top);
    }
    panels
}

/// Delay CDF of every leaf.
pub fn delay_cdf(title: &str, result: &RunResult) -> LineChart {
    let labels = Labels::new(result);
    let sel = Selection::of(&[result]);
    let mut series: Vec<Series> = sel
        .shown
        .iter()
        .zip(&sel.ranks)
        .map(|(&(l, c), &rank)| {
            let points = leaf_delays(result, (l, c)).map_or_else(Vec::new, cdf_points);
            leaf_series(Series::steps(labels.class(l, c), points), rank)
        })
        .collect();
    if !sel.others.is_empty() {
        let mut s = Series::steps(
            sel.others_name(&labels),
            cdf_points(&merged_delays(result, &sel.others)),
        );
        s.aggregate = true;
        series.push(s);
    }
    let mut chart = cdf_chart(format!("Delay CDF per class: {title}"), series);
    chart.legend_note = sel.legend_note();
    chart
}

/// Largest backlog of every leaf per window.
pub fn backlog(title: &str, result: &RunResult, options: PlotOptions) -> LineChart {
    let mut chart = LineChart::new(
        format!("Backlog per class: {title}"),
        "time (s)",
        "largest backlog in the window (kB)",
    );
    chart.y_axis.include_zero = true;
    if options.log_scale {
        chart.y_axis.scale = Scale::Log10;
    }
    chart.x_axis.range = Some((0.0, result.duration.as_secs_f64()));
    let sel = Selection::of(&[result]);
    (chart.series, chart.legend_note) = run_window_series(result, &sel, Measure::Backlog, false);
    note_small_series(&mut chart);
    chart
}

/// One series per shown class and scheduler, then the others' per scheduler: colour by
/// class (grey for the others), dash by scheduler.
fn compare_series(
    runs: &[(String, RunResult)],
    sel: &Selection,
    mut points: impl FnMut(usize, &RunResult) -> Lines,
) -> Vec<Series> {
    let Some((_, first)) = runs.first() else {
        return Vec::new();
    };
    let labels = Labels::new(first);
    let per_run: Vec<_> = runs
        .iter()
        .enumerate()
        .map(|(j, (_, r))| points(j, r))
        .collect();
    let mut series = Vec::new();
    for (k, (&(l, c), &rank)) in sel.shown.iter().zip(&sel.ranks).enumerate() {
        for (j, (name, _)) in runs.iter().enumerate() {
            let mut s = Series::steps(
                format!("{} ({name})", labels.class(l, c)),
                per_run[j].0.get(k).cloned().unwrap_or_default(),
            );
            s.colour = Some(leaf_style(rank).0);
            s.dash = Some(Dash::ALL[j % Dash::ALL.len()]);
            series.push(s);
        }
    }
    if !sel.others.is_empty() {
        for (j, (name, _)) in runs.iter().enumerate() {
            let mut s = Series::steps(
                format!("{} ({name})", sel.others_name(&labels)),
                per_run[j].1.clone(),
            );
            s.aggregate = true;
            s.dash = Some(Dash::ALL[j % Dash::ALL.len()]);
            series.push(s);
        }
    }
    series
}

/// Throughput of every class under every scheduler (`runs`: scheduler name, result).
pub fn compare_throughput(
    scenario: &str,
    runs: &[(String, RunResult)],
    options: PlotOptions,
) -> LineChart {
    let mut chart = throughput_chart(
        format!("Throughput per class and scheduler: {scenario}"),
        options,
    );
    if let Some((_, first)) = runs.first() {
        chart.x_axis.range = Some((0.0, first.duration.as_secs_f64()));
    }
    let results: Vec<&RunResult> = runs.iter().map(|(_, r)| r).collect();
    let sel = Selection::of(&results);
    chart.series = compare_series(runs, &sel, |_, r| window_series(r, &sel, Measure::Rate));
    chart.legend_note = sel.legend_note();
    note_small_series(&mut chart);
    chart
}

/// Delay CDF of every class under every scheduler.
pub fn compare_delay_cdf(scenario: &str, runs: &[(String, RunResult)]) -> LineChart {
    let results: Vec<&RunResult> = runs.iter().map(|(_, r)| r).collect();
    let sel = Selection::of(&results);
    let series = compare_series(runs, &sel, |_, r| {
        let shown = sel
            .shown
            .iter()
            .map(|&leaf| leaf_delays(r, leaf).map_or_else(Vec::new, cdf_points))
            .collect();
        let others = if sel.others.is_empty() {
            Vec::new()
        } else {
            cdf_points(&merged_delays(r, &sel.others))
        };
        (shown, others)
    });
    let mut chart = cdf_chart(
        format!("Delay CDF per class and scheduler: {scenario}"),
        series,
    );
    chart.legend_note = sel.legend_note();
    chart
}

#[cfg(test)]
mod tests {
    use super::*;
    use linkshare_core::hierarchy::ClassTree;
    use linkshare_core::sched::SchedulerKind;
    use linkshare_core::units::Rate;
    use linkshare_sim::Simulator;
    use linkshare_sim::config::{LinkConfig, NodeId, SimConfig, SourceConfig};
    use std::sync::Arc;

    /// `n` leaves under DRR on 10 Mbit/s, leaf `i` sending CBR at `(i + 1)` times
    /// 10 kbit/s for 1 s: leaf `n - 1` delivers the most bytes.
    fn run(n: usize) -> RunResult {
        let rate = Rate::from_mbit(10);
        let duration = Duration::from_secs(1);
        let link = LinkConfig::new(
            "l",
            NodeId(0),
            NodeId(1),
            Arc::new(ClassTree::flat(rate, n)),
            SchedulerKind::Drr,
        );
        let config = SimConfig::one_flow_per_leaf(link, duration, |i| SourceConfig::Cbr {
            rate: Rate(10_000 * (i as u64 + 1)),
            size: 100,
        });
        Simulator::new(&config).unwrap().run()
    }

    #[test]
    fn few_classes_are_all_drawn() {
        let r = run(SHOWN_CLASSES);
        let chart = throughput("t", &r, PlotOptions::default());
        assert_eq!(chart.series.len(), SHOWN_CLASSES);
        assert!(chart.series.iter().all(|s| !s.aggregate));
        assert_eq!(chart.legend_note, None);
    }

    /// With 20 leaves: the 8 that sent the most, in leaf order, then the others' sum,
    /// whose rate in every window is the sum of the 12 others' rates.
    #[test]
    fn many_classes_draw_the_top_and_the_others_sum() {
        let r = run(20);
        let chart = throughput("t", &r, PlotOptions::default());
        let names: Vec<&str> = chart.series.iter().map(|s| s.name.as_str()).collect();
        let labels = Labels::new(&r);
        let leaves = leaves(&r);
        let mut want: Vec<String> = leaves[12..]
            .iter()
            .map(|&(l, c)| labels.class(l, c))
            .collect();
        want.push("others (12 classes)".to_owned());
        assert_eq!(names, want);
        assert_eq!(chart.legend_note.as_deref(), Some("…and 12 more"));
        let others = chart.series.last().unwrap();
        assert!(others.aggregate);
        let link = &r.links[0];
        let (start, end) = r.window_bounds(1);
        let bytes: u64 = link
            .throughput
            .iter()
            .filter(|s| s.start == start && leaves[..12].iter().any(|&(_, c)| c == s.class))
            .map(|s| s.value)
            .sum();
        let want = bytes as f64 * 8.0 / end.since(start).as_secs_f64() * 1e-6;
        assert!(
            (others.points[1].1 - want).abs() < 1e-9,
            "{} {want}",
            others.points[1].1
        );
        // The delay CDF of the others holds every packet of theirs.
        let cdf = delay_cdf("t", &r);
        assert_eq!(cdf.series.len(), SHOWN_CLASSES + 1);
        let merged = merged_delays(&r, &leaves[..12]);
        let count: u64 = leaves[..12]
            .iter()
            .map(|&(l, c)| r.links[l].classes[c.index()].delays.count())
            .sum();
        assert_eq!(merged.count(), count);
        let svg = chart.render();
        assert!(svg.contains("…and 12 more") && svg.contains(crate::svg::AGGREGATE_COLOUR));
    }

    /// H-LS Fig. 1's tree on 1 Gbit/s under `kind`, leaf `i` (C, A1, A2, B1, B2 in id
    /// order) sending CBR at `(i + 1) * 100` Mbit/s for 20 ms.
    fn hierarchy_run(kind: SchedulerKind) -> RunResult {
        let tree = linkshare_core::testing::hls_fig1();
        let link = LinkConfig::new("l", NodeId(0), NodeId(1), Arc::new(tree), kind);
        let mut config =
            SimConfig::one_flow_per_leaf(link, Duration::from_millis(20), |i| SourceConfig::Cbr {
                rate: Rate::from_mbit(100 * (i as u64 + 1)),
                size: 1000,
            });
        config.measure.window = Duration::from_millis(2);
        Simulator::new(&config).unwrap().run()
    }

    /// The colour of the legend row named exactly `name` in `svg`.
    fn legend_colour<'a>(svg: &'a str, name: &str) -> &'a str {
        // The legend comes last; its row may carry a note (`B2 (overlaps A1)`).
        let at = [format!(">{name}</text>"), format!(">{name} (")]
            .iter()
            .filter_map(|p| svg.rfind(p.as_str()))
            .max()
            .unwrap_or_else(|| panic!("no legend row {name}: {svg}"));
        let stroke = svg[..at]
            .rfind("stroke=\"#")
            .expect("a legend line before it")
            + 8;
        &svg[stroke..stroke + 7]
    }

    /// A hierarchy's panels are drawn as the HLS paper's Fig. 7: its interior classes
    /// and the link's total dashed grey and labelled, each interior class the sum of its
    /// leaves, and a leaf in the same colour in every panel.
    #[test]
    fn hierarchy_panels_have_dashed_parents_a_total_and_one_colour_per_class() {
        let runs = vec![
            ("hls".to_owned(), hierarchy_run(SchedulerKind::Hls)),
            ("hdrr".to_owned(), hierarchy_run(SchedulerKind::Hdrr)),
        ];
        let panels = throughput_panels("fig1", &runs, PlotOptions::default());
        assert_eq!(panels.len(), 2);
        let mut colours = Vec::new();
        for (name, chart) in &panels {
            let names: Vec<&str> = chart.series.iter().map(|s| s.name.as_str()).collect();
            assert_eq!(
                names,
                ["C", "A1", "A2", "B1", "B2", "A", "B", "Total"],
                "{name}"
            );
            let series = |n: &str| chart.series.iter().find(|s| s.name == n).unwrap();
            for n in ["A", "B", "Total"] {
                let s = series(n);
                assert!(
                    s.aggregate && s.label && s.dash == Some(Dash::Dashed),
                    "{n}"
                );
            }
            // A = A1 + A2 in every window, computed from the samples directly.
            let (result, a, a1, a2) = (
                &runs.iter().find(|r| &r.0 == name).unwrap().1,
                series("A"),
                series("A1"),
                series("A2"),
            );
            for k in 0..a.points.len() {
                let sum = a1.points[k].1 + a2.points[k].1;
                assert!((a.points[k].1 - sum).abs() < 1e-9, "{name} window {k}");
            }
            let total: u64 = result.links[0].throughput.iter().map(|s| s.value).sum();
            let drawn: f64 = series("Total").points[..a.points.len() - 1]
                .iter()
                .enumerate()
                .map(|(k, p)| {
                    let (start, end) = result.window_bounds(k);
                    p.1 * 1e6 / 8.0 * end.since(start).as_secs_f64()
                })
                .sum();
            assert!((drawn - total as f64).abs() < 1.0, "{drawn} {total}");
            let svg = chart.render();
            let grey_dashed = format!(
                "stroke=\"{}\" stroke-dasharray=\"9 5\"",
                crate::svg::AGGREGATE_COLOUR
            );
            assert!(svg.matches(&grey_dashed).count() >= 3, "{svg}");
            for label in ["A", "B", "Total", "A1", "C"] {
                // Once on the plot, and in the legend (maybe with a note).
                assert!(svg.contains(&format!(">{label}</text>")), "{label}: {svg}");
                assert!(
                    svg.matches(&format!(">{label}")).count() >= 2,
                    "{label}: {svg}"
                );
            }
            colours.push(["C", "A1", "B2"].map(|n| legend_colour(&svg, n).to_owned()));
        }
        assert_eq!(colours[0], colours[1]);
        assert_eq!(
            colours[0],
            [PALETTE[0], PALETTE[1], PALETTE[4]].map(str::to_owned)
        );
    }

    /// A leaf's colour comes from its place among the leaves, not its rank in the chart:
    /// with 20 leaves, the 8 drawn keep the colours of leaves 12 to 19.
    #[test]
    fn colours_follow_the_class_not_the_rank() {
        let r = run(20);
        let chart = throughput("t", &r, PlotOptions::default());
        for (k, s) in chart.series.iter().take(SHOWN_CLASSES).enumerate() {
            assert_eq!(
                (s.colour, s.dash),
                (Some((12 + k) % 8), Some(LEAF_PALETTE_ROUNDS[(12 + k) / 8]))
            );
        }
    }
}
