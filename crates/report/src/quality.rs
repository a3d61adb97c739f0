//! Link-sharing quality of a run, for any scheduler: the `link_sharing` object of each
//! link in `summary.json` and the compact section printed after a run's table.
//!
//! From the port's per-packet records (arrival, departure, length) each packet's
//! transmission is rebuilt: it started at `departure - rate.tx_time(len + overhead)`,
//! which is exactly when the scheduler released it (the port sends back to back). The
//! records are read in two passes, wherever the run kept them (memory or a spill file):
//! the first measures the rates and the gap and collects every packet's arrival (16
//! bytes a packet, the only memory that grows with the packets), the second replays the
//! releases in order among the sorted arrivals for empirical alpha
//! ([`linkshare_analysis::quality::AlphaMeter`]). Then:
//!
//! * `empirical_alpha_bytes`: Definition 1 of the HLS paper computed exactly
//!   ([`linkshare_analysis::quality::empirical_alpha`]) — the largest
//!   `|D_i/w_i - D_j/w_j|` over sibling pairs and intervals in which both were
//!   backlogged, bytes per unit of weight, with the worst pair's names. It costs
//!   `O(P · depth · siblings)` for `P` packets, so it is skipped (with the reason) when a
//!   class has more than [`MAX_SIBLINGS`] children.
//! * `max_gap_s`: the longest wait of a backlogged leaf between the end of one of its
//!   transmissions and the start of its next (Definition 2 as observed), with the leaf.
//! * `intervals`: for every interval of constant demand ([`crate::reference`]), every
//!   class's reference (HMM-fair) rate beside its measured rate — the bytes of its packets
//!   whose transmission completed in the interval, divided by the interval's length.
//!
//! Packets still queued or on the wire when the run ended are not in the records, so
//! they count neither as service nor as backlog. When the run replaced per-packet
//! records with histograms (more than its limit of them), the measured
//! metrics are unavailable: the object says so and why, and keeps the reference rates.

use std::fmt::Write as _;

use std::io;

use linkshare_analysis::quality::{AlphaMeter, AlphaReport, GapMeter, Transmission};
use linkshare_core::hierarchy::{ClassId, ClassTree};
use linkshare_core::units::{Bytes, Instant, Rate};
use linkshare_sim::config::{LinkConfig, SimConfig};
use linkshare_sim::result::{DelayLog, DelayRecord, LinkResult, RunResult};

use super::table::{TextTable, in_unit, rate_unit};
use crate::reference::{self, LinkReference};

/// Empirical alpha is skipped on a link where some class has more children than this.
pub const MAX_SIBLINGS: usize = 64;

/// The `link_sharing` object of one link in `summary.json`.
#[derive(Clone, Debug, serde::Serialize)]
pub struct LinkSharing {
    /// `"measured"`; `"unavailable"` when the run kept no per-packet records;
    /// `"reverse-only"` when no flow's route crosses the link (only TCP
    /// acknowledgements do), so there is no reference to compare with.
    pub status: &'static str,
    /// Why the measured metrics are missing (`null` when measured).
    pub unavailable_reason: Option<String>,
    /// Empirical HMM(alpha), bytes per unit of weight; `null` if unavailable, skipped,
    /// or if no two siblings were ever backlogged together.
    pub empirical_alpha_bytes: Option<f64>,
    /// The sibling pair that reached it.
    pub empirical_alpha_pair: Option<[String; 2]>,
    /// Why `empirical_alpha_bytes` is `null` while the status is `"measured"`.
    pub empirical_alpha_note: Option<String>,
    /// The longest wait of a backlogged leaf, seconds; `null` if none waited.
    pub max_gap_s: Option<f64>,
    /// The leaf that waited.
    pub max_gap_class: Option<String>,
    /// When its wait began (end of its previous transmission), seconds.
    pub max_gap_from_s: Option<f64>,
    /// Every interval of constant demand, in time order.
    pub intervals: Vec<IntervalQuality>,
}

/// One interval of constant demand.
#[derive(Clone, Debug, serde::Serialize)]
pub struct IntervalQuality {
    /// Start, seconds.
    pub start_s: f64,
    /// End, seconds (exclusive).
    pub end_s: f64,
    /// Every class of the link (root first, then by id).
    pub classes: Vec<ClassQuality>,
}

/// One class in one interval. Rates are bit/s.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ClassQuality {
    /// The class (the root is named after the link).
    pub name: String,
    /// Offered demand; `null` when unbounded (a greedy flow).
    pub demand_bps: Option<f64>,
    /// The HMM-fair rate.
    pub reference_bps: f64,
    /// The measured rate; `null` when unavailable.
    pub measured_bps: Option<f64>,
    /// Absolute error `measured - reference` (signed: positive means more than the
    /// reference).
    pub error_bps: Option<f64>,
    /// Relative error `(measured - reference) / reference`; `null` when the reference
    /// is zero or the measurement unavailable.
    pub relative_error: Option<f64>,
}

/// The link-sharing quality of every link of `result`, a run of `config`.
pub fn link_sharing(config: &SimConfig, result: &RunResult) -> Vec<LinkSharing> {
    let refs = reference::reference(config);
    config
        .links
        .iter()
        .zip(&result.links)
        .zip(&refs)
        .enumerate()
        .map(|(l, ((link, measured), r))| {
            let forward = config
                .flows
                .iter()
                .any(|f| f.route.iter().any(|h| h.link.0 as usize == l));
            if forward {
                link_quality(link, measured, r, config.measure.max_delay_records)
            } else {
                reverse_only()
            }
        })
        .collect()
}

/// The quality of a link only acknowledgements cross: nothing to measure.
fn reverse_only() -> LinkSharing {
    unmeasured(
        "reverse-only",
        Some(
            "no flow's route crosses this link, only acknowledgements on reverse routes; \
             the reference allocation covers forward traffic",
        ),
        Vec::new(),
    )
}

/// A link's quality with `status` and the reference `intervals`, none of the measured
/// metrics filled in; `reason` says why they are missing (`None` when they are still to
/// be measured).
fn unmeasured(
    status: &'static str,
    reason: Option<&str>,
    intervals: Vec<IntervalQuality>,
) -> LinkSharing {
    LinkSharing {
        status,
        unavailable_reason: reason.map(str::to_owned),
        empirical_alpha_bytes: None,
        empirical_alpha_pair: None,
        empirical_alpha_note: None,
        max_gap_s: None,
        max_gap_class: None,
        max_gap_from_s: None,
        intervals,
    }
}

/// A packet's record as a [`Transmission`] on a link of `rate` with `overhead` bytes
/// per packet: it started when its last bit left minus its transmission time.
pub fn transmission(r: &DelayRecord, rate: Rate, overhead: Bytes) -> Transmission {
    let wire = Bytes(u64::from(r.len)) + overhead;
    Transmission {
        class: r.class,
        bytes: r.len,
        arrival: r.arrival,
        start: r.departure - rate.tx_time(wire),
        end: r.departure,
    }
}

/// The measured rate (bit/s) of every class of a tree in each window `[from, to)` of a
/// list (sorted, disjoint), from the records of its link fed in departure order: the
/// bytes of the packets whose transmission completed in the window, counted for the leaf
/// and every ancestor, times 8 over the window's length. Empty windows measure 0.
#[derive(Debug)]
pub struct RateMeter<'w> {
    /// Each class and its ancestors, by class index.
    paths: Vec<Vec<usize>>,
    windows: &'w [(Instant, Instant)],
    /// The window the next record may fall in.
    next: usize,
    /// Bytes per window per class.
    bytes: Vec<Vec<u64>>,
}

impl<'w> RateMeter<'w> {
    /// A meter for the classes of `tree` over `windows`.
    pub fn new(tree: &ClassTree, windows: &'w [(Instant, Instant)]) -> RateMeter<'w> {
        let paths = tree
            .classes()
            .iter()
            .map(|c| {
                std::iter::once(c.id)
                    .chain(tree.ancestors(c.id))
                    .map(ClassId::index)
                    .collect()
            })
            .collect();
        RateMeter {
            paths,
            windows,
            next: 0,
            bytes: vec![vec![0; tree.len()]; windows.len()],
        }
    }

    /// The next record, in order of departure.
    pub fn add(&mut self, r: &DelayRecord) {
        while let Some(&(_, to)) = self.windows.get(self.next)
            && r.departure >= to
        {
            self.next += 1;
        }
        let Some(&(from, _)) = self.windows.get(self.next) else {
            return;
        };
        if r.departure >= from
            && let Some(path) = self.paths.get(r.class.index())
        {
            for &c in path {
                self.bytes[self.next][c] += u64::from(r.len);
            }
        }
    }

    /// The rates, by window then class index.
    pub fn rates(self) -> Vec<Vec<f64>> {
        self.windows
            .iter()
            .zip(self.bytes)
            .map(|(&(from, to), bytes)| {
                let secs = to.since(from).as_secs_f64();
                bytes
                    .into_iter()
                    .map(|b| {
                        if secs > 0.0 {
                            b as f64 * 8.0 / secs
                        } else {
                            0.0
                        }
                    })
                    .collect()
            })
            .collect()
    }
}

/// The rates of [`RateMeter`] over the whole `log` of a link with `tree`; `None` when
/// the run kept no per-packet records.
pub fn measured_rates(
    tree: &ClassTree,
    log: &DelayLog,
    windows: &[(Instant, Instant)],
) -> io::Result<Option<Vec<Vec<f64>>>> {
    let mut meter = RateMeter::new(tree, windows);
    let kept = log.for_each(|r| meter.add(r))?;
    Ok(kept.then(|| meter.rates()))
}

/// The largest number of children of a class of `tree`.
fn most_children(tree: &ClassTree) -> (usize, &str) {
    tree.classes()
        .iter()
        .map(|c| (c.children.len(), c.name()))
        .max_by_key(|&(n, _)| n)
        .unwrap_or((0, ""))
}

/// What the first pass measures: the rates per interval and class, the largest gap, and
/// every packet's arrival and leaf.
type FirstPass = (Vec<Vec<f64>>, GapMeter, Vec<(Instant, ClassId)>);

/// What one pass over a link's records measures: the rates per interval, the largest
/// gap, and the arrivals (sorted later) for empirical alpha.
fn first_pass(
    link: &LinkConfig,
    log: &DelayLog,
    windows: &[(Instant, Instant)],
    with_arrivals: bool,
) -> io::Result<FirstPass> {
    let mut rates = RateMeter::new(&link.classes, windows);
    let mut gap = GapMeter::default();
    let mut arrivals = Vec::new();
    log.for_each(|r| {
        rates.add(r);
        gap.transmission(&transmission(r, link.rate, link.overhead));
        if with_arrivals {
            arrivals.push((r.arrival, r.class));
        }
    })?;
    Ok((rates.rates(), gap, arrivals))
}

/// Empirical alpha from a second pass over a link's records: the releases in order,
/// each after the arrivals (`arrivals`, sorted by time) up to its instant.
fn alpha_pass(
    link: &LinkConfig,
    log: &DelayLog,
    arrivals: &[(Instant, ClassId)],
) -> io::Result<AlphaReport> {
    let mut meter = AlphaMeter::new(&link.classes);
    let mut next = 0;
    log.for_each(|r| {
        let t = transmission(r, link.rate, link.overhead);
        while let Some(&(at, class)) = arrivals.get(next)
            && at <= t.start
        {
            meter.arrival(class);
            next += 1;
        }
        meter.release(t.class, t.bytes);
    })?;
    for &(_, class) in &arrivals[next..] {
        meter.arrival(class);
    }
    Ok(meter.report())
}

/// The quality of one link; `max_records` is the run's limit on per-packet delay
/// records, named when the run went past it.
fn link_quality(
    link: &LinkConfig,
    measured: &LinkResult,
    r: &LinkReference,
    max_records: u64,
) -> LinkSharing {
    let tree = &link.classes;
    let name = |id: ClassId| tree.get(id).name().to_owned();
    let log = &measured.delay_log;
    let windows: Vec<(Instant, Instant)> = r.intervals.iter().map(|i| (i.start, i.end)).collect();
    let (siblings, crowded) = most_children(tree);
    let with_alpha = siblings <= MAX_SIBLINGS;
    // Without two siblings there is no pair to measure: no second pass.
    let pairs = siblings >= 2;
    let passes = if log.is_per_packet() {
        first_pass(link, log, &windows, with_alpha && pairs).and_then(
            |(rates, gap, mut arrivals)| {
                let alpha = if !with_alpha {
                    None
                } else if pairs {
                    arrivals.sort_unstable_by_key(|a| a.0);
                    Some(alpha_pass(link, log, &arrivals)?)
                } else {
                    Some(AlphaReport {
                        alpha: 0.0,
                        per_pair: Vec::new(),
                    })
                };
                Ok((rates, gap, alpha))
            },
        )
    } else {
        Err(io::Error::other(format!(
            "the run measured more than {max_records} packet delays, the most it keeps as \
             per-packet records, so they were replaced by exact histograms; shorten the run \
             or lower the rates to measure link-sharing quality"
        )))
    };
    let (rates, failure) = match passes {
        Ok((rates, gap, alpha)) => (Some(rates), Ok((gap, alpha))),
        Err(e) => (None, Err(e)),
    };
    let intervals = r
        .intervals
        .iter()
        .enumerate()
        .map(|(k, iv)| IntervalQuality {
            start_s: iv.start.as_secs_f64(),
            end_s: iv.end.as_secs_f64(),
            classes: tree
                .classes()
                .iter()
                .map(|c| {
                    let i = c.id.index();
                    let reference_bps = iv.rate[i];
                    let measured_bps = rates.as_ref().map(|m| m[k][i]);
                    let error_bps = measured_bps.map(|m| m - reference_bps);
                    ClassQuality {
                        name: c.name().to_owned(),
                        demand_bps: iv.demand[i].is_finite().then_some(iv.demand[i]),
                        reference_bps,
                        measured_bps,
                        error_bps,
                        relative_error: error_bps
                            .filter(|_| reference_bps > 0.0)
                            .map(|e| e / reference_bps),
                    }
                })
                .collect(),
        })
        .collect();
    let (gap, alpha) = match failure {
        Ok(found) => found,
        Err(e) => return unmeasured("unavailable", Some(&e.to_string()), intervals),
    };
    let mut q = unmeasured("measured", None, intervals);
    match alpha.map(|a| a.worst()) {
        None => {
            q.empirical_alpha_note = Some(format!(
                "skipped: class `{crowded}` has {siblings} children (more than {MAX_SIBLINGS}), \
                 and the exact computation costs packets x siblings"
            ));
        }
        Some(Some((a, b, alpha))) => {
            q.empirical_alpha_bytes = Some(alpha);
            q.empirical_alpha_pair = Some([name(a), name(b)]);
        }
        Some(None) => {
            q.empirical_alpha_note =
                Some("no two sibling classes were ever backlogged together".to_owned());
        }
    }
    if let Some(g) = gap.report() {
        q.max_gap_s = Some(g.gap.as_secs_f64());
        q.max_gap_class = Some(name(g.class));
        q.max_gap_from_s = Some(g.from.as_secs_f64());
    }
    q
}

/// At most this many intervals are printed per link (all are in `summary.json`).
const SHOWN_INTERVALS: usize = 12;
/// Intervals per table, side by side.
const INTERVALS_PER_TABLE: usize = 4;

/// Seconds with up to three decimals, trailing zeros removed (`5`, `2.5`, `0.125`).
pub fn short_secs(s: f64) -> String {
    let text = format!("{s:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// The compact section printed after a run's table: per link, alpha and the largest
/// gap, then the reference and measured rate of every class per interval of constant
/// demand (in the unit the largest rate needs) with the relative error. `links` pairs each link's name and
/// scheduler with its quality. Links only acknowledgements cross are left out.
pub fn terminal_section(links: &[(&str, &str, &LinkSharing)]) -> String {
    let mut out = String::new();
    for &(name, scheduler, q) in links {
        if q.status == "reverse-only" {
            continue;
        }
        let _ = writeln!(out, "link sharing on `{name}` [{scheduler}]:");
        if let Some(reason) = &q.unavailable_reason {
            let _ = writeln!(out, "  measured metrics unavailable: {reason}");
        } else {
            let alpha = match (&q.empirical_alpha_bytes, &q.empirical_alpha_pair) {
                (Some(a), Some([x, y])) => {
                    format!("{a:.1} B per unit of weight ({x} vs {y})")
                }
                _ => q.empirical_alpha_note.clone().unwrap_or_default(),
            };
            let _ = writeln!(out, "  empirical alpha (Def. 1): {alpha}");
            let gap = match (&q.max_gap_s, &q.max_gap_class, &q.max_gap_from_s) {
                (Some(g), Some(c), Some(from)) => {
                    format!("{:.3} ms ({c}, from {from:.6} s)", g * 1e3)
                }
                _ => "no backlogged leaf waited".to_owned(),
            };
            let _ = writeln!(out, "  largest gap of a backlogged leaf (Def. 2): {gap}");
        }
        let shown = &q.intervals[..q.intervals.len().min(SHOWN_INTERVALS)];
        let (unit, size) = rate_unit(shown.iter().flat_map(|iv| {
            iv.classes
                .iter()
                .flat_map(|c| [Some(c.reference_bps), c.measured_bps])
                .flatten()
        }));
        let _ = writeln!(
            out,
            "  reference (HMM-fair) and measured rates, {unit}, per interval of constant demand:"
        );
        for chunk in shown.chunks(INTERVALS_PER_TABLE) {
            let text = interval_table(chunk, size).render();
            for line in text.lines() {
                let _ = writeln!(out, "  {line}");
            }
        }
        if q.intervals.len() > shown.len() {
            let _ = writeln!(
                out,
                "  ... and {} more intervals in summary.json",
                q.intervals.len() - shown.len()
            );
        }
    }
    out
}

/// Classes as rows; for each interval its reference, measured rate (in units of
/// `unit` bit/s) and relative error.
fn interval_table(intervals: &[IntervalQuality], unit: f64) -> TextTable {
    let mut t = TextTable {
        header: vec!["class".to_owned()],
        ..TextTable::default()
    };
    for (j, iv) in intervals.iter().enumerate() {
        t.groups.push((
            format!("[{}, {}) s", short_secs(iv.start_s), short_secs(iv.end_s)),
            1 + 3 * j,
            3,
        ));
        t.header.extend(["ref", "meas", "err %"].map(str::to_owned));
    }
    let Some(first) = intervals.first() else {
        return t;
    };
    for (i, c) in first.classes.iter().enumerate() {
        let mut row = vec![c.name.clone()];
        for iv in intervals {
            let k = &iv.classes[i];
            row.push(in_unit(Some(k.reference_bps), unit));
            row.push(in_unit(k.measured_bps, unit));
            row.push(
                k.relative_error
                    .map_or("-".to_owned(), |e| format!("{:+.2}", e * 100.0)),
            );
        }
        t.rows.push(row);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spill::Spill;
    use linkshare_analysis::quality::{empirical_alpha, max_gap};
    use linkshare_core::sched::SchedulerKind;
    use linkshare_core::testing::hls_fig1;
    use linkshare_core::units::Duration;
    use linkshare_sim::Simulator;
    use linkshare_sim::config::{NodeId, SourceConfig};
    use std::sync::Arc;

    /// HLS's Fig. 1 tree under HDRR, every leaf fed by a Poisson source at 30 % of the
    /// link (so classes go idle and come back), 0.05 s.
    fn config() -> SimConfig {
        let tree = Arc::new(hls_fig1());
        let rate = tree.link_rate();
        let duration = Duration::from_millis(50);
        let link = LinkConfig {
            overhead: Bytes(24),
            ..LinkConfig::new("l", NodeId(0), NodeId(1), tree, SchedulerKind::Hdrr)
        };
        let mut config = SimConfig::one_flow_per_leaf(link, duration, |i| SourceConfig::Poisson {
            rate: Rate(rate.bps() * 3 / 10),
            size: 200 + 300 * i as u32,
        });
        config.seed = 7;
        config
    }

    /// The streamed quality (two passes over the log, arrivals sorted apart) equals the
    /// analysis crate's computation over the whole log in memory, with the records in
    /// memory and spilled to a file alike.
    #[test]
    fn streamed_passes_equal_the_whole_log_computation() {
        let config = config();
        let link = &config.links[0];
        let in_memory = Simulator::new(&config).unwrap().run();
        let spill = Spill::in_dir(&std::env::temp_dir(), 1).unwrap();
        let spilled = Simulator::new(&config)
            .unwrap()
            .record_to(Box::new(spill))
            .run();
        let records = in_memory.links[0].delay_log.to_vec().unwrap().unwrap();
        assert!(records.len() > 1000, "{} packets", records.len());
        let txs: Vec<Transmission> = records
            .iter()
            .map(|r| transmission(r, link.rate, link.overhead))
            .collect();
        let want_alpha = empirical_alpha(&link.classes, &txs);
        let want_gap = max_gap(&txs);
        assert!(want_alpha.alpha > 0.0);
        for log in [&in_memory.links[0].delay_log, &spilled.links[0].delay_log] {
            let (_, gap, mut arrivals) = first_pass(link, log, &[], true).unwrap();
            arrivals.sort_unstable_by_key(|a| a.0);
            assert_eq!(alpha_pass(link, log, &arrivals).unwrap(), want_alpha);
            assert_eq!(gap.report(), want_gap);
        }
        assert!(matches!(spilled.links[0].delay_log, DelayLog::Stored(_)));
        assert_eq!(
            spilled.links[0].delay_log.to_vec().unwrap().unwrap(),
            records
        );
    }
}
