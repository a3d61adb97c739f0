//! The plots of the classes' service against their objectives (see [`crate::service`]),
//! one set per link whose leaves have objectives, drawn so that a reader can set them
//! beside the JoBS paper's figures panel by panel:
//!
//! * `delay_ratios.svg` (Figs. 5a, 8a, 9a): the achieved delay ratio of each pair of
//!   consecutive leaves with a delay ratio objective, per window, the target dashed in
//!   the same colour;
//! * `loss_ratios.svg` (Figs. 5b, 8d, 9d): the same for loss ratios;
//! * `wait.svg` (Figs. 8b, 8c): the mean wait of every leaf per window (ms), each delay
//!   bound dashed in its leaf's colour;
//! * `loss.svg` (Figs. 8e, 9e): the loss rate of every leaf per window (%), each loss
//!   bound dashed.
//!
//! A point is drawn at the middle of its window; a window where the value is undefined
//! (no packet started, nothing lost) has no point. With several links with objectives,
//! each file name ends in `-<link>` (the link's name, characters other than letters,
//! digits, `-` and `_` replaced by `_`). At most [`SHOWN_CLASSES`] leaves or pairs are
//! drawn, the first in order; the legend says how many more there are.

use linkshare_core::hierarchy::ClassId;
use linkshare_sim::result::{RunResult, ServiceCell};

use crate::Labels;
use crate::plots::SHOWN_CLASSES;
use crate::service::{self, Pair};
use crate::svg::{Dash, LineChart, Series};

/// One chart to write: its file name and the chart.
pub type NamedChart = (String, LineChart);

/// Every chart of `result` (none when no leaf has objectives), titled after `title`.
pub fn charts(title: &str, result: &RunResult) -> Vec<NamedChart> {
    let labels = Labels::new(result);
    let with_objectives: Vec<usize> = result
        .links
        .iter()
        .enumerate()
        .filter(|(_, l)| !l.objectives.is_empty())
        .map(|(i, _)| i)
        .collect();
    let pairs = service::pairs(result);
    let mut out = Vec::new();
    for &link in &with_objectives {
        let suffix = if with_objectives.len() > 1 {
            format!("-{}", file_safe(&result.links[link].name))
        } else {
            String::new()
        };
        let name = |base: &str| format!("{base}{suffix}.svg");
        let link_pairs: Vec<&Pair> = pairs.iter().filter(|p| p.link == link).collect();
        let link_title = if with_objectives.len() > 1 {
            format!("{title}, link {}", result.links[link].name)
        } else {
            title.to_owned()
        };
        if link_pairs.iter().any(|p| p.delay_target.is_some()) {
            out.push((
                name("delay_ratios"),
                ratio_chart(&link_title, result, &labels, &link_pairs, false),
            ));
        }
        if link_pairs.iter().any(|p| p.loss_target.is_some()) {
            out.push((
                name("loss_ratios"),
                ratio_chart(&link_title, result, &labels, &link_pairs, true),
            ));
        }
        out.push((
            name("wait"),
            leaf_chart(&link_title, result, &labels, link, false),
        ));
        out.push((
            name("loss"),
            leaf_chart(&link_title, result, &labels, link, true),
        ));
    }
    out
}

/// `name` with every character but letters, digits, `-` and `_` replaced by `_`.
fn file_safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The middle of window `k`, seconds.
fn middle(result: &RunResult, k: usize) -> f64 {
    let (start, end) = result.window_bounds(k);
    (start.as_secs_f64() + end.as_secs_f64()) / 2.0
}

/// A dashed horizontal line at `y` over the run, in colour `colour`.
fn target(result: &RunResult, name: String, y: f64, colour: usize) -> Series {
    let mut s = Series::line(name, vec![(0.0, y), (result.duration.as_secs_f64(), y)]);
    s.colour = Some(colour);
    s.dash = Some(Dash::Dashed);
    s
}

/// The legend's note when `n` things were not drawn.
fn more(n: usize) -> Option<String> {
    (n > 0).then(|| format!("…and {n} more"))
}

/// The achieved delay (or loss) ratios of `pairs` over time, with their targets.
fn ratio_chart(
    title: &str,
    result: &RunResult,
    labels: &Labels<'_>,
    pairs: &[&Pair],
    loss: bool,
) -> LineChart {
    let (what, figures) = if loss {
        ("Loss", "JoBS Figs. 5b, 8d, 9d")
    } else {
        ("Delay", "JoBS Figs. 5a, 8a, 9a")
    };
    let mut chart = LineChart::new(
        format!("{what} ratios of consecutive classes: {title}"),
        "time (s)",
        if loss {
            "loss rate of the next class / this class's"
        } else {
            "mean wait of the next class / this class's"
        },
    );
    chart.subtitle = Some(format!(
        "per window, target dashed (compare with {figures})"
    ));
    chart.y_axis.include_zero = true;
    chart.x_axis.range = Some((0.0, result.duration.as_secs_f64()));
    let shown: Vec<&&Pair> = pairs
        .iter()
        .filter(|p| if loss { p.loss_target } else { p.delay_target }.is_some())
        .collect();
    for (colour, p) in shown.iter().take(SHOWN_CLASSES).enumerate() {
        let series = &result.links[p.link].service;
        let points = (0..series.windows())
            .filter_map(|k| {
                let (a, b) = (series.cell(k, p.first), series.cell(k, p.first + 1));
                let r = if loss {
                    service::loss_ratio(a, b)
                } else {
                    service::delay_ratio(a, b)
                }?;
                Some((middle(result, k), r))
            })
            .collect();
        let name = format!(
            "{} / {}",
            labels.class(p.link, p.next),
            labels.class(p.link, p.class)
        );
        let mut line = Series::line(name.clone(), points);
        line.colour = Some(colour);
        line.dash = Some(Dash::Solid);
        chart.series.push(line);
        if let Some(t) = if loss { p.loss_target } else { p.delay_target } {
            chart
                .series
                .push(target(result, format!("{name} target"), t, colour));
        }
    }
    chart.legend_note = more(shown.len().saturating_sub(SHOWN_CLASSES));
    chart
}

/// The mean wait (ms) or loss rate (%) of every leaf of `link` over time, with its
/// bound dashed.
fn leaf_chart(
    title: &str,
    result: &RunResult,
    labels: &Labels<'_>,
    link: usize,
    loss: bool,
) -> LineChart {
    let l = &result.links[link];
    let s = &l.service;
    let mut chart = if loss {
        LineChart::new(
            format!("Loss rate per class: {title}"),
            "time (s)",
            "bytes dropped / bytes arrived in the window (%)",
        )
    } else {
        LineChart::new(
            format!("Mean wait per class: {title}"),
            "time (s)",
            "mean wait, arrival to start of transmission (ms)",
        )
    };
    chart.subtitle = Some(if loss {
        "per window, loss bounds dashed (compare with JoBS Figs. 8e, 9e)".to_owned()
    } else {
        "per window, delay bounds dashed (compare with JoBS Figs. 8b, 8c)".to_owned()
    });
    chart.y_axis.include_zero = true;
    chart.x_axis.range = Some((0.0, result.duration.as_secs_f64()));
    let value = |c: &ServiceCell| {
        if loss {
            c.loss_rate().map(|r| r * 100.0)
        } else {
            c.mean_wait_ns().map(|ns| ns / 1e6)
        }
    };
    for (pos, &class) in s.leaves.iter().enumerate().take(SHOWN_CLASSES) {
        let points = (0..s.windows())
            .filter_map(|k| Some((middle(result, k), value(s.cell(k, pos))?)))
            .collect();
        let name = labels.class(link, class);
        let mut line = Series::line(name.clone(), points);
        line.colour = Some(pos);
        line.dash = Some(Dash::Solid);
        chart.series.push(line);
        if let Some(bound) = bound(l, class, loss) {
            chart
                .series
                .push(target(result, format!("{name} bound"), bound, pos));
        }
    }
    chart.legend_note = more(s.leaves.len().saturating_sub(SHOWN_CLASSES));
    chart
}

/// The delay bound (ms) or loss bound (%) of `class`, if it has one.
fn bound(link: &linkshare_sim::result::LinkResult, class: ClassId, loss: bool) -> Option<f64> {
    let o = service::objective(link, class)?;
    if loss {
        o.loss_bound.map(|f| f.as_f64() * 100.0)
    } else {
        o.delay_bound.map(|d| d.as_secs_f64() * 1e3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The overloaded FIFO of the service tests: leaf 0 has every objective, so all four
    /// charts are drawn, with the bounds and targets as dashed lines at their values and
    /// one point per window where the value is defined.
    #[test]
    fn charts_of_a_link_with_objectives() {
        let r = crate::service::tests::overloaded(crate::service::tests::every_objective());
        let charts = charts("t", &r);
        let names: Vec<&str> = charts.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "delay_ratios.svg",
                "loss_ratios.svg",
                "wait.svg",
                "loss.svg"
            ]
        );
        let wait = &charts[2].1;
        // Leaf 0, its 5 ms bound, leaf 1.
        assert_eq!(wait.series.len(), 3);
        assert_eq!(wait.series[1].points[0].1, 5.0);
        assert_eq!(wait.series[1].dash, Some(Dash::Dashed));
        let s = &r.links[0].service;
        let started = (0..s.windows())
            .filter(|&k| s.cell(k, 0).started > 0)
            .count();
        assert_eq!(wait.series[0].points.len(), started);
        let loss = &charts[3].1;
        assert_eq!(loss.series[1].points[0].1, 1.0);
        let ratios = &charts[0].1;
        assert_eq!(ratios.series[1].points[0].1, 2.0);
        assert!(charts.iter().all(|(_, c)| c.render().starts_with("<svg")));
    }

    #[test]
    fn file_names_are_safe() {
        assert_eq!(file_safe("r1-r2"), "r1-r2");
        assert_eq!(file_safe("a/b c"), "a_b_c");
    }
}
