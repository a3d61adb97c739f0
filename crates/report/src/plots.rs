//! The plots of a run and of a comparison, built with [`crate::svg`].
//!
//! * throughput: rate in Mbit/s (10^6 bit/s) per window, drawn as steps over the window;
//! * delay CDF: fraction of packets whose delay at the port is at most x ms, as steps,
//!   with a logarithmic x axis when the delays span more than two decades;
//! * backlog: the largest backlog in each window, in kB (10^3 bytes).

use linkshare_core::hierarchy::ClassId;
use linkshare_sim::config::LinkId;
use linkshare_sim::result::{RunResult, WindowSample};

use super::Labels;
use crate::svg::{Axis, Dash, LineChart, Scale, Series};

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

/// The step points of one leaf's window samples, scaled by `scale` (per second of
/// window for rates when `rate` is set), ending at the last window's end.
fn window_points(
    samples: &[WindowSample],
    class: ClassId,
    rate: bool,
    scale: f64,
) -> Vec<(f64, f64)> {
    let mut points: Vec<(f64, f64)> = Vec::new();
    let mut last = None;
    for s in samples.iter().filter(|s| s.class == class) {
        let v = if rate { s.rate_bps() } else { s.value as f64 } * scale;
        points.push((s.start.as_secs_f64(), v));
        last = Some((s.end.as_secs_f64(), v));
    }
    points.extend(last);
    points
}

/// The CDF of one leaf's port delays in ms, starting at (smallest delay, 0).
fn cdf_points(result: &RunResult, link: usize, class: ClassId) -> Vec<(f64, f64)> {
    let cdf = result.cdf(LinkId(link as u32), class);
    let mut points = Vec::with_capacity(cdf.len() + 1);
    if let Some(&(d, _)) = cdf.first() {
        points.push((d.as_secs_f64() * 1e3, 0.0));
    }
    points.extend(cdf.iter().map(|&(d, f)| (d.as_secs_f64() * 1e3, f)));
    points
}

fn throughput_chart(title: String) -> LineChart {
    let mut chart = LineChart::new(title, "time (s)", "throughput (Mbit/s)");
    chart.y_axis.include_zero = true;
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

/// Rate of every leaf over time.
pub fn throughput(title: &str, result: &RunResult) -> LineChart {
    let labels = Labels::new(result);
    let mut chart = throughput_chart(format!("Throughput per class: {title}"));
    chart.x_axis.range = Some((0.0, result.duration.as_secs_f64()));
    chart.series = leaves(result)
        .into_iter()
        .map(|(l, c)| {
            let points = window_points(&result.links[l].throughput, c, true, 1e-6);
            Series::steps(labels.class(l, c), points)
        })
        .collect();
    chart
}

/// Delay CDF of every leaf.
pub fn delay_cdf(title: &str, result: &RunResult) -> LineChart {
    let labels = Labels::new(result);
    let series = leaves(result)
        .into_iter()
        .map(|(l, c)| Series::steps(labels.class(l, c), cdf_points(result, l, c)))
        .collect();
    cdf_chart(format!("Delay CDF per class: {title}"), series)
}

/// Largest backlog of every leaf per window.
pub fn backlog(title: &str, result: &RunResult) -> LineChart {
    let labels = Labels::new(result);
    let mut chart = LineChart::new(
        format!("Backlog per class: {title}"),
        "time (s)",
        "largest backlog in the window (kB)",
    );
    chart.y_axis.include_zero = true;
    chart.x_axis.range = Some((0.0, result.duration.as_secs_f64()));
    chart.series = leaves(result)
        .into_iter()
        .map(|(l, c)| {
            let points = window_points(&result.links[l].backlog, c, false, 1e-3);
            Series::steps(labels.class(l, c), points)
        })
        .collect();
    chart
}

/// One series per class and scheduler: colour by class, dash by scheduler.
fn compare_series(
    runs: &[(String, RunResult)],
    points: impl Fn(&RunResult, usize, ClassId) -> Vec<(f64, f64)>,
) -> Vec<Series> {
    let Some((_, first)) = runs.first() else {
        return Vec::new();
    };
    let labels = Labels::new(first);
    let mut series = Vec::new();
    for (k, (l, c)) in leaves(first).into_iter().enumerate() {
        for (j, (name, result)) in runs.iter().enumerate() {
            let mut s = Series::steps(
                format!("{} ({name})", labels.class(l, c)),
                points(result, l, c),
            );
            s.colour = Some(k);
            s.dash = Some(Dash::ALL[j % Dash::ALL.len()]);
            series.push(s);
        }
    }
    series
}

/// Throughput of every class under every scheduler (`runs`: scheduler name, result).
pub fn compare_throughput(scenario: &str, runs: &[(String, RunResult)]) -> LineChart {
    let mut chart = throughput_chart(format!("Throughput per class and scheduler: {scenario}"));
    if let Some((_, first)) = runs.first() {
        chart.x_axis.range = Some((0.0, first.duration.as_secs_f64()));
    }
    chart.series = compare_series(runs, |r, l, c| {
        r.links.get(l).map_or_else(Vec::new, |link| {
            window_points(&link.throughput, c, true, 1e-6)
        })
    });
    chart
}

/// Delay CDF of every class under every scheduler.
pub fn compare_delay_cdf(scenario: &str, runs: &[(String, RunResult)]) -> LineChart {
    let series = compare_series(runs, cdf_points);
    cdf_chart(
        format!("Delay CDF per class and scheduler: {scenario}"),
        series,
    )
}
