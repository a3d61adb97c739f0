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
                others: Vec::new(),
            };
        };
        let all = leaves(first);
        if all.len() <= SHOWN_CLASSES {
            return Selection {
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
        let mut next = top.iter().peekable();
        for (i, leaf) in all.into_iter().enumerate() {
            if next.next_if(|&&t| t == i).is_some() {
                shown.push(leaf);
            } else {
                others.push(leaf);
            }
        }
        Selection { shown, others }
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

/// The series of one window measure for a run: every shown leaf, then the others' sum.
fn run_window_series(result: &RunResult, measure: Measure) -> (Vec<Series>, Option<String>) {
    let labels = Labels::new(result);
    let sel = Selection::of(&[result]);
    let (shown, others) = window_series(result, &sel, measure);
    let mut series: Vec<Series> = sel
        .shown
        .iter()
        .zip(shown)
        .map(|(&(l, c), points)| Series::steps(labels.class(l, c), points))
        .collect();
    if !sel.others.is_empty() {
        let mut s = Series::steps(sel.others_name(&labels), others);
        s.aggregate = true;
        series.push(s);
    }
    (series, sel.legend_note())
}

/// Rate of every leaf over time (see the [module docs](self) for many classes).
pub fn throughput(title: &str, result: &RunResult, options: PlotOptions) -> LineChart {
    let mut chart = throughput_chart(format!("Throughput per class: {title}"), options);
    chart.x_axis.range = Some((0.0, result.duration.as_secs_f64()));
    (chart.series, chart.legend_note) = run_window_series(result, Measure::Rate);
    note_small_series(&mut chart);
    chart
}

/// Delay CDF of every leaf.
pub fn delay_cdf(title: &str, result: &RunResult) -> LineChart {
    let labels = Labels::new(result);
    let sel = Selection::of(&[result]);
    let mut series: Vec<Series> = sel
        .shown
        .iter()
        .map(|&(l, c)| {
            let points = leaf_delays(result, (l, c)).map_or_else(Vec::new, cdf_points);
            Series::steps(labels.class(l, c), points)
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
    (chart.series, chart.legend_note) = run_window_series(result, Measure::Backlog);
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
    for (k, &(l, c)) in sel.shown.iter().enumerate() {
        for (j, (name, _)) in runs.iter().enumerate() {
            let mut s = Series::steps(
                format!("{} ({name})", labels.class(l, c)),
                per_run[j].0.get(k).cloned().unwrap_or_default(),
            );
            s.colour = Some(k);
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
    use linkshare_core::buffer::BufferConfig;
    use linkshare_core::hierarchy::ClassTree;
    use linkshare_core::sched::SchedulerKind;
    use linkshare_core::units::{Bytes, Rate};
    use linkshare_sim::Simulator;
    use linkshare_sim::config::{LinkConfig, NodeId, SimConfig, SourceConfig};
    use std::sync::Arc;

    /// `n` leaves under DRR on 10 Mbit/s, leaf `i` sending CBR at `(i + 1)` times
    /// 10 kbit/s for 1 s: leaf `n - 1` delivers the most bytes.
    fn run(n: usize) -> RunResult {
        let rate = Rate::from_mbit(10);
        let duration = Duration::from_secs(1);
        let link = LinkConfig {
            name: "l".into(),
            from: NodeId(0),
            to: NodeId(1),
            rate,
            delay: Duration::ZERO,
            overhead: Bytes::ZERO,
            classes: Arc::new(ClassTree::flat(rate, n)),
            scheduler: SchedulerKind::Drr.into(),
            buffer: BufferConfig::default(),
        };
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
}
