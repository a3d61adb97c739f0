//! The service each class got, per window and against its objectives: waits, losses,
//! throughput, the achieved delay and loss ratios between consecutive leaves, and how
//! often each class met its bounds — whatever the scheduler (the objectives are the
//! scenario's JoBS constraints, [`LinkResult::objectives`]).
//!
//! **Which delay.** Everything here measures the **wait**: a packet's arrival at the
//! port to the start of its transmission, the queueing delay alone, which is what JoBS
//! bounds and controls (paper Eqs. 4 and 7; the head-of-line wait is its control input).
//! `delay_s` in `summary.json`, `delay.csv` and `delay_cdf.svg` is the delay at the port
//! (arrival to the last bit sent), which adds the packet's transmission time.
//!
//! Per window (the run's measurement window), per leaf ([`ServiceRow`]): the packets
//! and bytes that arrived, those of them dropped (then or later: a loss counts in its
//! packet's arrival window, so the loss rate is a fraction of the window's arrivals),
//! the packets whose transmission started with their mean and longest wait, and the
//! bytes sent (as `throughput.csv`). The ratio of consecutive leaves `i` and `i + 1`
//! ([`RatioRow`]), where leaf `i` has a delay or loss ratio objective: the mean wait of
//! `i + 1` over that of `i` (windows where both started packets and `i` waited), and the
//! loss rate of `i + 1` over that of `i` (windows where `i` lost some), as the paper's
//! Figs. 5 and 8 plot them.

use std::io::{self, Write};

use linkshare_core::hierarchy::ClassId;
use linkshare_core::sched::jobs::Constraints;
use linkshare_core::units::Instant;
use linkshare_sim::result::{ClassResult, LinkResult, RunResult, ServiceCell};

use crate::{Labels, secs};

/// Header of `service.csv`.
pub const SERVICE_HEADER: &str = "window_start_s,window_end_s,class,arrived_packets,\
                                  arrived_bytes,dropped_packets,dropped_bytes,loss_rate,\
                                  started_packets,mean_wait_s,max_wait_s,throughput_bps";
/// Header of `ratios.csv`.
pub const RATIOS_HEADER: &str = "window_start_s,window_end_s,class,next,delay_ratio,\
                                 delay_ratio_target,loss_ratio,loss_ratio_target";

/// One leaf in one window.
#[derive(Clone, Copy, Debug)]
pub struct ServiceRow<'r> {
    /// The link's position in the run.
    pub link: usize,
    /// The window's bounds.
    pub start: Instant,
    /// Its end.
    pub end: Instant,
    /// The leaf.
    pub class: ClassId,
    /// Arrivals, drops, waits.
    pub cell: &'r ServiceCell,
    /// Bytes whose transmission completed in the window (`throughput.csv`'s).
    pub sent_bytes: u64,
}

impl ServiceRow<'_> {
    /// The throughput, bit/s.
    pub fn throughput_bps(&self) -> f64 {
        let s = self.end.since(self.start).as_secs_f64();
        if s > 0.0 {
            self.sent_bytes as f64 * 8.0 / s
        } else {
            0.0
        }
    }
}

/// Every leaf of every link in every window: links in run order, then windows in time
/// order, then leaves in id order.
pub fn rows(result: &RunResult) -> impl Iterator<Item = ServiceRow<'_>> {
    result.links.iter().enumerate().flat_map(move |(l, link)| {
        let s = &link.service;
        // `throughput` holds one sample per window and leaf, in the same order.
        s.cells
            .iter()
            .zip(&link.throughput)
            .enumerate()
            .map(move |(i, (cell, sample))| {
                let (start, end) = result.window_bounds(i / s.leaves.len().max(1));
                ServiceRow {
                    link: l,
                    start,
                    end,
                    class: s.leaves[i % s.leaves.len()],
                    cell,
                    sent_bytes: sample.value,
                }
            })
    })
}

/// A pair of consecutive leaves with a ratio objective on the first.
#[derive(Clone, Copy, Debug)]
pub struct Pair {
    /// The link's position in the run.
    pub link: usize,
    /// Position of the first leaf among the link's leaves.
    pub first: usize,
    /// The first leaf (the better served).
    pub class: ClassId,
    /// The next leaf.
    pub next: ClassId,
    /// Its delay ratio objective: the next leaf's wait over this one's.
    pub delay_target: Option<f64>,
    /// Its loss ratio objective.
    pub loss_target: Option<f64>,
}

/// The pairs of consecutive leaves of every link whose first leaf has a delay or loss
/// ratio objective, in link then leaf order.
pub fn pairs(result: &RunResult) -> Vec<Pair> {
    let mut out = Vec::new();
    for (l, link) in result.links.iter().enumerate() {
        let leaves = &link.service.leaves;
        for (i, w) in leaves.windows(2).enumerate() {
            let Some(c) = objective(link, w[0]) else {
                continue;
            };
            if c.delay_ratio.is_none() && c.loss_ratio.is_none() {
                continue;
            }
            out.push(Pair {
                link: l,
                first: i,
                class: w[0],
                next: w[1],
                delay_target: c.delay_ratio.map(|r| r.as_f64()),
                loss_target: c.loss_ratio.map(|r| r.as_f64()),
            });
        }
    }
    out
}

/// The objectives of `class` on `link`, if it has any.
pub fn objective(link: &LinkResult, class: ClassId) -> Option<&Constraints> {
    link.objectives
        .iter()
        .find(|(c, _)| *c == class)
        .map(|(_, o)| o)
}

/// The delay ratio of two cells: mean wait of `next` over that of `first`, when both
/// started packets and `first` waited.
pub fn delay_ratio(first: &ServiceCell, next: &ServiceCell) -> Option<f64> {
    let (a, b) = (first.mean_wait_ns()?, next.mean_wait_ns()?);
    (a > 0.0).then(|| b / a)
}

/// The loss ratio of two cells: the loss rate of `next` over that of `first`, when
/// `first` lost some.
pub fn loss_ratio(first: &ServiceCell, next: &ServiceCell) -> Option<f64> {
    let (a, b) = (first.loss_rate()?, next.loss_rate()?);
    (a > 0.0).then(|| b / a)
}

/// One pair in one window.
#[derive(Clone, Copy, Debug)]
pub struct RatioRow {
    /// The pair.
    pub pair: Pair,
    /// The window's start.
    pub start: Instant,
    /// Its end.
    pub end: Instant,
    /// The achieved delay ratio (see [`delay_ratio`]).
    pub delay: Option<f64>,
    /// The achieved loss ratio (see [`loss_ratio`]).
    pub loss: Option<f64>,
}

/// Every pair of [`pairs`] in every window: pairs in order, then windows in time order.
pub fn ratio_rows(result: &RunResult) -> Vec<RatioRow> {
    let mut out = Vec::new();
    for pair in pairs(result) {
        let s = &result.links[pair.link].service;
        for k in 0..s.windows() {
            let (a, b) = (s.cell(k, pair.first), s.cell(k, pair.first + 1));
            let (start, end) = result.window_bounds(k);
            out.push(RatioRow {
                pair,
                start,
                end,
                delay: delay_ratio(a, b),
                loss: loss_ratio(a, b),
            });
        }
    }
    out
}

/// The median of `values` (the mean of the middle two for an even count); `None` when
/// empty.
pub fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    Some(if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    })
}

/// A class over the whole run against its objectives.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Compliance {
    /// Of the packets that started their transmission, the fraction whose wait was at
    /// most the delay bound.
    pub within_delay_bound: Option<f64>,
    /// Of the windows with arrivals, the fraction whose loss rate was at most the loss
    /// bound.
    pub windows_within_loss_bound: Option<f64>,
    /// Of the windows in which the class offered at least its throughput bound (bytes
    /// arrived at the bound's rate), the fraction in which it was sent at least at that
    /// rate.
    pub windows_at_min_rate: Option<f64>,
}

/// How `class` (a leaf of `link`) met `objectives`; `windows` of the run.
pub fn compliance(
    result: &RunResult,
    link: &LinkResult,
    class: &ClassResult,
    objectives: &Constraints,
) -> Compliance {
    let within_delay_bound = objectives.delay_bound.and_then(|d| {
        let n = class.waits.count();
        let ok: u64 = class
            .waits
            .bins()
            .iter()
            .take_while(|(w, _)| *w <= d)
            .map(|(_, c)| c)
            .sum();
        (n > 0).then(|| ok as f64 / n as f64)
    });
    let s = &link.service;
    let Some(pos) = s.position(class.id) else {
        return Compliance {
            within_delay_bound,
            ..Compliance::default()
        };
    };
    let cells = (0..s.windows()).map(|k| (k, s.cell(k, pos)));
    let windows_within_loss_bound = objectives.loss_bound.and_then(|bound| {
        let (mut ok, mut n) = (0u64, 0u64);
        for (_, c) in cells.clone() {
            if c.arrived.bytes > 0 {
                n += 1;
                // dropped / arrived <= ppb / 10^9, exactly.
                if u128::from(c.dropped.bytes) * 1_000_000_000
                    <= u128::from(bound.ppb()) * u128::from(c.arrived.bytes)
                {
                    ok += 1;
                }
            }
        }
        (n > 0).then(|| ok as f64 / n as f64)
    });
    let windows_at_min_rate = objectives.min_rate.and_then(|mu| {
        let (mut ok, mut n) = (0u64, 0u64);
        let sent: Vec<u64> = link
            .throughput
            .iter()
            .filter(|w| w.class == class.id)
            .map(|w| w.value)
            .collect();
        for (k, c) in cells.clone() {
            let (start, end) = result.window_bounds(k);
            let due = mu.bytes_in(end.since(start)).0;
            if c.arrived.bytes >= due && due > 0 {
                n += 1;
                if sent.get(k).is_some_and(|&b| b >= due) {
                    ok += 1;
                }
            }
        }
        (n > 0).then(|| ok as f64 / n as f64)
    });
    Compliance {
        within_delay_bound,
        windows_within_loss_bound,
        windows_at_min_rate,
    }
}

/// The ratios a pair achieved over the run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PairSummary {
    /// Mean wait of the next leaf over the first's, over the whole run.
    pub delay: Option<f64>,
    /// The median over the windows where it is defined.
    pub delay_median: Option<f64>,
    /// Those windows.
    pub delay_windows: usize,
    /// Loss rate of the next leaf over the first's, over the whole run.
    pub loss: Option<f64>,
    /// The median over the windows where it is defined.
    pub loss_median: Option<f64>,
    /// Those windows.
    pub loss_windows: usize,
}

/// The ratios `pair` achieved over the run.
pub fn pair_summary(result: &RunResult, pair: &Pair) -> PairSummary {
    let s = &result.links[pair.link].service;
    let mut total = [ServiceCell::default(), ServiceCell::default()];
    let (mut delays, mut losses) = (Vec::new(), Vec::new());
    for k in 0..s.windows() {
        let (a, b) = (s.cell(k, pair.first), s.cell(k, pair.first + 1));
        for (t, c) in total.iter_mut().zip([a, b]) {
            t.arrived.bytes += c.arrived.bytes;
            t.dropped.bytes += c.dropped.bytes;
            t.started += c.started;
            t.wait_sum = t.wait_sum.saturating_add(c.wait_sum);
        }
        delays.extend(delay_ratio(a, b));
        losses.extend(loss_ratio(a, b));
    }
    PairSummary {
        delay: delay_ratio(&total[0], &total[1]),
        delay_windows: delays.len(),
        delay_median: median(&mut delays),
        loss: loss_ratio(&total[0], &total[1]),
        loss_windows: losses.len(),
        loss_median: median(&mut losses),
    }
}

/// A float cell: shortest form that reads back the same, empty when missing.
fn cell(v: Option<f64>) -> String {
    v.map_or_else(String::new, |x| x.to_string())
}

/// `service.csv`: one row per leaf and window (see the [module docs](self)).
pub fn write_service(w: &mut dyn Write, result: &RunResult, labels: &Labels<'_>) -> io::Result<()> {
    writeln!(w, "{SERVICE_HEADER}")?;
    for r in rows(result) {
        let c = r.cell;
        writeln!(
            w,
            "{},{},{},{},{},{},{},{},{},{},{},{}",
            secs(r.start),
            secs(r.end),
            labels.class(r.link, r.class),
            c.arrived.packets,
            c.arrived.bytes,
            c.dropped.packets,
            c.dropped.bytes,
            cell(c.loss_rate()),
            c.started,
            cell(c.mean_wait_ns().map(|ns| ns / 1e9)),
            if c.started > 0 {
                crate::Secs(c.wait_max).to_string()
            } else {
                String::new()
            },
            crate::ratio3(
                u128::from(r.sent_bytes) * 8 * 1_000_000_000,
                u128::from(r.end.since(r.start).as_nanos())
            )
        )?;
    }
    Ok(())
}

/// `ratios.csv`: one row per pair with a ratio objective and window.
pub fn write_ratios(w: &mut dyn Write, result: &RunResult, labels: &Labels<'_>) -> io::Result<()> {
    writeln!(w, "{RATIOS_HEADER}")?;
    for r in ratio_rows(result) {
        let p = r.pair;
        writeln!(
            w,
            "{},{},{},{},{},{},{},{}",
            secs(r.start),
            secs(r.end),
            labels.class(p.link, p.class),
            labels.class(p.link, p.next),
            cell(r.delay),
            cell(p.delay_target),
            cell(r.loss),
            cell(p.loss_target)
        )?;
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use linkshare_core::buffer::{BufferConfig, Overflow};
    use linkshare_core::hierarchy::{ClassTree, Limit};
    use linkshare_core::sched::SchedulerKind;
    use linkshare_core::stats::Count;
    use linkshare_core::units::{Duration, Fraction, Rate, Ratio};
    use linkshare_sim::Simulator;
    use linkshare_sim::config::{
        LinkConfig, LinkId, MeasureConfig, NodeId, Objective, Schedule, SimConfig, SourceConfig,
    };
    use std::sync::Arc;

    /// Packet size (bytes) and link rate of [`overloaded`]: one packet takes 1 ms.
    const SIZE: u32 = 1000;
    const LINK_MBIT: u64 = 8;

    /// Two leaves through FIFO at 8 Mbit/s with a 10-packet buffer, leaf 0 sending CBR
    /// 4 Mbit/s and leaf 1 8 Mbit/s (1.5 times the link) for 0.9 s of a 1 s run (the
    /// queue drains before the end), 100 ms windows; leaf 0 carries every objective.
    pub(crate) fn overloaded(objectives: Constraints) -> RunResult {
        let rate = Rate::from_mbit(LINK_MBIT);
        let tree = Arc::new(ClassTree::flat(rate, 2));
        let duration = Duration::from_secs(1);
        let link = LinkConfig {
            buffer: BufferConfig {
                shared: Some(Limit::Packets(10)),
                overflow: Overflow::TailDrop,
            },
            ..LinkConfig::new(
                "l",
                NodeId(0),
                NodeId(1),
                Arc::clone(&tree),
                SchedulerKind::Fifo,
            )
        };
        let mut config = SimConfig::one_flow_per_leaf(link, duration, |i| SourceConfig::Cbr {
            rate: Rate::from_mbit(4 * (i as u64 + 1)),
            size: SIZE,
        });
        for f in &mut config.flows {
            f.schedule = Schedule::always(Duration::from_millis(900));
        }
        config.measure = MeasureConfig {
            window: Duration::from_millis(100),
            objectives: vec![Objective {
                link: LinkId(0),
                class: tree.leaves()[0],
                constraints: objectives,
            }],
            ..MeasureConfig::default()
        };
        Simulator::new(&config).unwrap().run()
    }

    pub(crate) fn every_objective() -> Constraints {
        Constraints {
            delay_bound: Some(Duration::from_millis(5)),
            loss_bound: Some(Fraction::from_percent(1)),
            min_rate: Some(Rate::from_mbit(3)),
            delay_ratio: Some(Ratio::integer(2)),
            loss_ratio: Some(Ratio::integer(2)),
        }
    }

    fn cell(arrived: u64, dropped: u64, started: u64, wait_sum: u64) -> ServiceCell {
        ServiceCell {
            arrived: Count {
                packets: arrived,
                bytes: arrived * 100,
            },
            dropped: Count {
                packets: dropped,
                bytes: dropped * 100,
            },
            started,
            wait_sum,
            wait_max: wait_sum,
        }
    }

    #[test]
    fn ratios_of_cells_by_hand() {
        // Waits 2 ms and 6 ms on average: 3; loss rates 1/10 and 2/10: 2.
        let (a, b) = (cell(10, 1, 2, 4_000_000), cell(10, 2, 3, 18_000_000));
        assert_eq!(delay_ratio(&a, &b), Some(3.0));
        assert_eq!(loss_ratio(&a, &b), Some(2.0));
        // Undefined when the first leaf did not wait, started nothing or lost nothing.
        assert_eq!(delay_ratio(&cell(10, 0, 2, 0), &b), None);
        assert_eq!(delay_ratio(&cell(10, 0, 0, 0), &b), None);
        assert_eq!(loss_ratio(&cell(10, 0, 2, 0), &b), None);
        assert_eq!(loss_ratio(&a, &cell(0, 0, 0, 0)), None);
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&mut []), None);
    }

    /// The windows' arrivals and drops add up to the port's counters (kept apart, on
    /// the queue), and every packet of a drained run started once.
    #[test]
    fn windows_add_up_to_the_counters() {
        let r = overloaded(every_objective());
        let link = &r.links[0];
        let s = &link.service;
        assert_eq!(s.windows(), 10);
        for (pos, &class) in s.leaves.iter().enumerate() {
            let c = &link.classes[class.index()];
            let cells: Vec<&ServiceCell> = (0..s.windows()).map(|k| s.cell(k, pos)).collect();
            let arrived: u64 = cells.iter().map(|c| c.arrived.bytes).sum();
            let dropped: u64 = cells.iter().map(|c| c.dropped.bytes).sum();
            let started: u64 = cells.iter().map(|c| c.started).sum();
            assert_eq!(arrived, c.counters.arrived.bytes);
            assert_eq!(dropped, c.counters.dropped_total().bytes);
            assert_eq!(started, c.delivered.packets);
            assert_eq!(c.counters.queued.packets, 0);
        }
        // 12 Mbit/s offered to 8 Mbit/s: the FIFO loses (leaf 0, in this phase).
        assert!(link.classes[0].counters.dropped_total().packets > 0);
        let rows: Vec<_> = rows(&r).collect();
        assert_eq!(rows.len(), 20);
        assert_eq!(
            (rows[3].start, rows[3].class),
            (Instant::from_millis(100), s.leaves[1])
        );
    }

    /// The wait is the delay at the port less the 1 ms transmission: the fraction
    /// within the delay bound, and the run's delay ratio, computed from the delays.
    #[test]
    fn compliance_and_ratios_from_the_delays() {
        let r = overloaded(every_objective());
        let link = &r.links[0];
        let leaves = &link.service.leaves;
        let tx = Duration::from_millis(1);
        let class = |i: usize| &link.classes[leaves[i].index()];
        let delays = &class(0).delays;
        let within: u64 = delays
            .bins()
            .iter()
            .filter(|(d, _)| *d <= Duration::from_millis(5) + tx)
            .map(|(_, n)| n)
            .sum();
        let m = compliance(&r, link, class(0), &every_objective());
        assert_eq!(
            m.within_delay_bound,
            Some(within as f64 / delays.count() as f64)
        );
        let mean_wait = |i: usize| {
            let d = &class(i).delays;
            let total: u128 = d
                .bins()
                .iter()
                .map(|(w, n)| u128::from(w.as_nanos() - tx.as_nanos()) * u128::from(*n))
                .sum();
            total as f64 / d.count() as f64
        };
        let p = pairs(&r);
        assert_eq!(p.len(), 1);
        assert_eq!(
            (p[0].delay_target, p[0].loss_target),
            (Some(2.0), Some(2.0))
        );
        let got = pair_summary(&r, &p[0]);
        let want = mean_wait(1) / mean_wait(0);
        assert!(
            (got.delay.unwrap() - want).abs() < 1e-9 * want,
            "{got:?} {want}"
        );
        // Loss rates over the run, from the counters.
        let loss = |i: usize| {
            let c = &class(i).counters;
            c.dropped_total().bytes as f64 / c.arrived.bytes as f64
        };
        match got.loss {
            Some(l) => assert!((l - loss(1) / loss(0)).abs() <= 1e-9 * l.max(1.0)),
            None => assert_eq!(loss(0), 0.0),
        }
        // Leaf 0 (4 Mbit/s offered, sent at least 3 Mbit/s whenever it offered that much
        // in a window, or not): the fraction is over the windows where it offered 3.
        assert!(m.windows_at_min_rate.is_some());
        assert!(m.windows_within_loss_bound.is_some());
    }

    /// Without ratio objectives there are no pairs and no `ratios.csv` rows.
    #[test]
    fn no_pairs_without_ratios() {
        let r = overloaded(Constraints {
            delay_bound: Some(Duration::from_millis(5)),
            ..Constraints::default()
        });
        assert!(pairs(&r).is_empty());
        assert!(ratio_rows(&r).is_empty());
    }
}
