//! The tables and figures of `keshav-cost`: the grid's costs (terminal and
//! `cost.csv`), Fig. 3 (running cost against trace length), Fig. 4 (the grid), Figs. 5
//! and 6 (average and maximum insertion cost along each axis) and Fig. 7 (LINK's zones).

use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

use linkshare_core::ds::bids::Structure;
use linkshare_core::units::Duration;
use linkshare_report::Written;
use linkshare_report::svg::{Axis as ChartAxis, LineChart, Scale, Series};
use linkshare_report::table::TextTable;

use crate::keshav_cost::{AXES, Along, Grid, Point, Variant, Zone};
use crate::{ReproError, stdout_failure};

/// Costs below this are drawn at it on the log scales (LINK's average is often 0).
const FLOOR: f64 = 0.01;

/// The structure's name as the paper writes it.
fn upper(s: Structure) -> String {
    s.name().to_ascii_uppercase()
}

/// Round-number heap exchanges per packet arriving at the trunk.
fn round_heap_per_arrival(p: &Point) -> f64 {
    p.round_heap_exchanges as f64 / (p.insertions + p.bypassed).max(1) as f64
}

/// The reconstruction's grid: one row per point.
pub(crate) fn print_grid(out: &mut dyn Write, g: &Grid) -> Result<(), ReproError> {
    let mut t = TextTable {
        header: [
            "axis",
            "N",
            "B",
            "W·N/B",
            "LINK",
            "TREE",
            "HEAP",
            "PERC",
            "zone",
            "max L/T/H/P",
            "get_min T/H/P",
            "drops",
            "timeouts",
            "buffered",
            "conv.",
            "round heap",
        ]
        .map(str::to_owned)
        .to_vec(),
        ..TextTable::default()
    };
    for p in &g.points {
        let c = |s| p.cost(s);
        t.rows.push(vec![
            AXES[p.axis].name.to_owned(),
            p.n.to_string(),
            p.b.to_string(),
            format!("{:.2}", p.load_ratio()),
            format!("{:.2}", c(Structure::Link).total),
            format!("{:.2}", c(Structure::Tree).total),
            format!("{:.2}", c(Structure::Heap).total),
            format!("{:.2}", c(Structure::Perc).total),
            p.zone().name().to_owned(),
            Structure::ALL
                .iter()
                .map(|&s| c(s).max_insert.to_string())
                .collect::<Vec<_>>()
                .join("/"),
            [Structure::Tree, Structure::Heap, Structure::Perc]
                .iter()
                .map(|&s| format!("{:.2}", c(s).get_min))
                .collect::<Vec<_>>()
                .join("/"),
            p.drops.to_string(),
            p.timeouts.to_string(),
            format!("{:.1}", p.mean_buffered),
            format!("{:.1}", p.mean_conversations),
            format!("{:.2}", round_heap_per_arrival(p)),
        ]);
    }
    write!(
        out,
        "\nAverage insertion cost (elementary operations per insertion, overflow drops \
         included; Fig. 5), LINK's zone (Fig. 7: I cheapest, III costliest), maximum \
         insertion cost without drops (Fig. 6), get_min cost, the trunk's drops, the \
         sources' timeouts, packets and conversations buffered (means over insertions), \
         round-number heap exchanges per arrival:\n{}",
        t.render()
    )
    .map_err(stdout_failure)
}

/// Fig. 3 as a table: the running averages at every tenth sample and at the end.
pub(crate) fn print_calibration(
    out: &mut dyn Write,
    p: &Point,
    length: Duration,
) -> Result<(), ReproError> {
    let mut t = TextTable {
        header: std::iter::once("time (s)".to_owned())
            .chain(Structure::ALL.iter().map(|&s| upper(s)))
            .collect(),
        ..TextTable::default()
    };
    let running = &p.costs[0].running;
    let n = running.len();
    for i in (0..n).filter(|&i| (i + 1) % 10 == 0 || i + 1 == n) {
        let mut row = vec![format!("{:.0}", running[i].time.as_secs_f64())];
        for c in &p.costs {
            row.push(
                c.running
                    .get(i)
                    .map_or_else(String::new, |r| format!("{:.3}", r.avg_insert)),
            );
        }
        t.rows.push(row);
    }
    write!(
        out,
        "\nFig. 3: running average insertion cost at ({}, {}), the paper's trace length \
         {length} and twice it:\n{}",
        p.n,
        p.b,
        t.render()
    )
    .map_err(stdout_failure)
}

/// The sensitivity runs: per variant and axis, LINK's zones and the mean costs.
pub(crate) fn print_sensitivity(out: &mut dyn Write, grids: &[Grid]) -> Result<(), ReproError> {
    let mut t = TextTable {
        header: [
            "variant", "axis", "zones", "LINK", "TREE", "HEAP", "PERC", "drops", "timeouts",
        ]
        .map(str::to_owned)
        .to_vec(),
        ..TextTable::default()
    };
    for g in grids {
        for (a, axis) in AXES.iter().enumerate() {
            let pts: Vec<&Point> = g.axis(a).collect();
            let mean = |f: &dyn Fn(&Point) -> f64| {
                pts.iter().map(|p| f(p)).sum::<f64>() / pts.len().max(1) as f64
            };
            let mut row = vec![
                g.variant.name().to_owned(),
                axis.name.to_owned(),
                pts.iter()
                    .map(|p| p.zone().name())
                    .collect::<Vec<_>>()
                    .join(" "),
            ];
            for s in Structure::ALL {
                row.push(format!("{:.2}", mean(&|p: &Point| p.cost(s).total)));
            }
            row.push(pts.iter().map(|p| p.drops).sum::<u64>().to_string());
            row.push(pts.iter().map(|p| p.timeouts).sum::<u64>().to_string());
            t.rows.push(row);
        }
    }
    let about: String = grids
        .iter()
        .map(|g| format!("  {}: {}\n", g.variant.name(), g.variant.about()))
        .collect();
    write!(
        out,
        "\nSensitivity runs (spec §3.2; every value in cost.csv): LINK's zone at each point \
         along the axis, and the mean average insertion cost over the axis:\n{about}{}",
        t.render()
    )
    .map_err(stdout_failure)
}

/// `cost.csv`: one row per variant, point and structure.
fn cost_csv(grids: &[Grid]) -> String {
    let mut s = String::from(
        "variant,axis,N,B,W,load_ratio,zone,structure,insertions,get_mins,avg_insert_ops,\
         avg_drop_ops,avg_total_ops,max_insert_ops,avg_getmin_ops,fresh_share,\
         avg_fresh_insert_ops,avg_other_insert_ops,drops,timeouts,mean_buffered,\
         mean_conversations,bypassed,round_heap_exchanges\n",
    );
    for g in grids {
        for p in &g.points {
            for c in &p.costs {
                let _ = writeln!(
                    s,
                    "{},{},{},{},{},{:.4},{},{},{},{},{:.6},{:.6},{:.6},{},{:.6},{:.6},{:.6},{:.6},\
                     {},{},{:.4},{:.4},{},{}",
                    g.variant.name(),
                    AXES[p.axis].name,
                    p.n,
                    p.b,
                    p.window,
                    p.load_ratio(),
                    p.zone().name(),
                    upper(c.structure),
                    p.insertions,
                    p.get_mins,
                    c.insert,
                    c.drop,
                    c.total,
                    c.max_insert,
                    c.get_min,
                    c.fresh_share,
                    c.fresh_cost,
                    c.queued_cost,
                    p.drops,
                    p.timeouts,
                    p.mean_buffered,
                    p.mean_conversations,
                    p.bypassed,
                    p.round_heap_exchanges
                );
            }
        }
    }
    s
}

/// `fig3.csv`: the calibration run's running averages.
fn fig3_csv(p: &Point) -> String {
    let mut s = String::from("time_s,structure,insertions,avg_insert_ops\n");
    for c in &p.costs {
        for r in &c.running {
            let _ = writeln!(
                s,
                "{},{},{},{:.6}",
                r.time.as_secs_f64(),
                upper(c.structure),
                r.insertions,
                r.avg_insert
            );
        }
    }
    s
}

/// A series per structure, coloured the same in every figure.
fn structure_series(name: String, s: Structure, points: Vec<(f64, f64)>) -> Series {
    let mut series = Series::line(name, points).with_dots();
    series.colour = Structure::ALL.iter().position(|&x| x == s);
    series
}

fn log_y() -> ChartAxis {
    ChartAxis {
        scale: Scale::Log10,
        ..ChartAxis::default()
    }
}

/// Fig. 3: running average against trace length.
fn fig3(p: &Point, length: Duration) -> LineChart {
    let mut chart = LineChart::new(
        format!("Fig. 3: running cost at (N, B) = ({}, {})", p.n, p.b),
        "trace length (s)",
        "average insertion cost (operations, log scale)",
    );
    chart.subtitle = Some(format!(
        "the paper's traces are {length} long; below {FLOOR} drawn at {FLOOR}"
    ));
    chart.y_axis = log_y();
    for c in &p.costs {
        let pts = c
            .running
            .iter()
            .map(|r| (r.time.as_secs_f64(), r.avg_insert.max(FLOOR)))
            .collect();
        let mut s = Series::line(upper(c.structure), pts);
        s.colour = Structure::ALL.iter().position(|&x| x == c.structure);
        chart.series.push(s);
    }
    chart
}

/// The x coordinate of a point along its axis.
fn along(p: &Point) -> f64 {
    match AXES[p.axis].along {
        Along::Sources => f64::from(p.n),
        Along::Buffers => p.b as f64,
    }
}

fn along_label(a: usize) -> &'static str {
    match AXES[a].along {
        Along::Sources => "sources N",
        Along::Buffers => "buffers B (packets)",
    }
}

/// Figs. 5 and 6, one panel (axis `a`): `value` of each structure along the axis.
fn panel(
    g: &Grid,
    a: usize,
    title: &str,
    y_label: &str,
    value: &dyn Fn(&Point, Structure) -> f64,
) -> LineChart {
    let axis = &AXES[a];
    let mut chart = LineChart::new(
        format!("{title}, axis {} ({})", axis.name, axis.rule),
        along_label(a),
        y_label,
    );
    let boundary = g
        .axis(a)
        .find(|p| !p.underloaded())
        .map_or("never".to_owned(), |p| format!("from ({}, {})", p.n, p.b));
    chart.subtitle = Some(format!(
        "W = {}; W·N >= B {boundary}; log scale, below {FLOOR} drawn at {FLOOR}",
        g.points.first().map_or(0, |p| p.window)
    ));
    chart.y_axis = log_y();
    for s in Structure::ALL {
        let pts = g
            .axis(a)
            .map(|p| (along(p), value(p, s).max(FLOOR)))
            .collect();
        chart.series.push(structure_series(upper(s), s, pts));
    }
    chart
}

/// The line `W·N = B` across the grid's range of `N`.
fn boundary(g: &Grid) -> Series {
    let w = g.points.first().map_or(20, |p| p.window) as f64;
    let top = g.points.iter().map(|p| p.n).max().unwrap_or(1);
    let mut s = Series::line(
        "W·N = B",
        (0..=top)
            .map(|n| (f64::from(n), w * f64::from(n)))
            .collect(),
    );
    s.aggregate = true;
    s
}

/// Fig. 4: the grid's axes in the (N, B) plane.
fn fig4(g: &Grid) -> LineChart {
    let mut chart = LineChart::new(
        "Fig. 4: the (N, B) points of the five axes",
        "sources N",
        "buffers B (packets)",
    );
    chart.subtitle = Some(
        "reconstructed (the paper's figure is lost); above the line the gateway is never congested"
            .into(),
    );
    for (a, axis) in AXES.iter().enumerate() {
        let pts = g.axis(a).map(|p| (f64::from(p.n), p.b as f64)).collect();
        chart
            .series
            .push(Series::line(format!("axis {}", axis.name), pts).with_dots());
    }
    chart.series.push(boundary(g));
    chart
}

/// Fig. 7: every point coloured by LINK's zone.
fn fig7(g: &Grid) -> LineChart {
    let mut chart = LineChart::new(
        format!(
            "Fig. 7: LINK's rank among the four structures ({})",
            g.variant.name()
        ),
        "sources N",
        "buffers B (packets)",
    );
    chart.subtitle = Some(format!(
        "{}; zone I: LINK cheapest, III: costliest, II: in between",
        g.variant.about()
    ));
    for (i, zone) in [Zone::I, Zone::II, Zone::III].into_iter().enumerate() {
        let pts = g
            .points
            .iter()
            .filter(|p| p.zone() == zone)
            .map(|p| (f64::from(p.n), p.b as f64))
            .collect();
        let mut s = Series::dots(format!("zone {}", zone.name()), pts);
        s.colour = Some([2, 4, 1][i]);
        chart.series.push(s);
    }
    chart.series.push(boundary(g));
    chart
}

/// Writes `cost.csv`, `fig3.csv` and every figure into `dir`.
pub(crate) fn write(
    dir: &Path,
    written: &mut Written,
    grids: &[Grid],
    calibration: &Point,
    length: Duration,
) -> Result<(), ReproError> {
    written.write(dir, "cost.csv", cost_csv(grids).as_bytes())?;
    written.write(dir, "fig3.csv", fig3_csv(calibration).as_bytes())?;
    let mut svg =
        |name: String, chart: LineChart| written.write(dir, &name, chart.render().as_bytes());
    svg("fig3.svg".into(), fig3(calibration, length))?;
    let paper = &grids[0];
    svg("fig4.svg".into(), fig4(paper))?;
    for (a, axis) in AXES.iter().enumerate() {
        svg(
            format!("fig5_{}.svg", axis.name),
            panel(
                paper,
                a,
                "Fig. 5: average insertion cost",
                "operations per insertion (log scale)",
                &|p, s| p.cost(s).total,
            ),
        )?;
        svg(
            format!("fig6_{}.svg", axis.name),
            panel(
                paper,
                a,
                "Fig. 6: maximum insertion cost",
                "operations, largest insertion (log scale)",
                &|p, s| p.cost(s).max_insert as f64,
            ),
        )?;
    }
    for g in grids {
        let name = match g.variant {
            Variant::Paper => "fig7.svg".to_owned(),
            v => format!("fig7_{}.svg", v.name()),
        };
        svg(name, fig7(g))?;
    }
    Ok(())
}
