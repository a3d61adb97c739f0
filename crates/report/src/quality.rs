//! Link-sharing quality of a run, for any scheduler: the `link_sharing` object of each
//! link in `summary.json` and the compact section printed after a run's table.
//!
//! From the port's per-packet records (arrival, departure, length) each packet's
//! transmission is rebuilt: it started at `departure - rate.tx_time(len + overhead)`,
//! which is exactly when the scheduler released it (the port sends back to back). Then:
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

use linkshare_analysis::quality::{Transmission, empirical_alpha, max_gap};
use linkshare_core::hierarchy::{ClassId, ClassTree};
use linkshare_core::units::{Bytes, Instant, Rate};
use linkshare_sim::config::{LinkConfig, SimConfig};
use linkshare_sim::result::{DelayLog, DelayRecord, LinkResult, RunResult};

use super::table::TextTable;
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

/// Every packet of `records` as a [`Transmission`] on a link of `rate` with `overhead`
/// bytes per packet.
pub fn transmissions(records: &[DelayRecord], rate: Rate, overhead: Bytes) -> Vec<Transmission> {
    records
        .iter()
        .map(|r| {
            let wire = Bytes(u64::from(r.len)) + overhead;
            let start = r.departure - rate.tx_time(wire);
            Transmission {
                class: r.class,
                bytes: r.len,
                arrival: r.arrival,
                start,
                end: r.departure,
            }
        })
        .collect()
}

/// The measured rate (bit/s) of every class of `tree` in each window `[from, to)` of
/// `windows` (sorted, disjoint): bytes of the packets of `records` (in departure order)
/// whose transmission completed in the window, counted for the leaf and every ancestor,
/// times 8 over the window's length. Empty windows measure 0.
pub fn measured_rates(
    tree: &ClassTree,
    records: &[DelayRecord],
    windows: &[(Instant, Instant)],
) -> Vec<Vec<f64>> {
    let paths: Vec<Vec<usize>> = tree
        .classes()
        .iter()
        .map(|c| {
            std::iter::once(c.id)
                .chain(tree.ancestors(c.id))
                .map(ClassId::index)
                .collect()
        })
        .collect();
    let mut next = 0;
    windows
        .iter()
        .map(|&(from, to)| {
            let mut bytes = vec![0u64; tree.len()];
            while next < records.len() && records[next].departure < from {
                next += 1;
            }
            while let Some(r) = records.get(next)
                && r.departure < to
            {
                for &c in &paths[r.class.index()] {
                    bytes[c] += u64::from(r.len);
                }
                next += 1;
            }
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

/// The largest number of children of a class of `tree`.
fn most_children(tree: &ClassTree) -> (usize, &str) {
    tree.classes()
        .iter()
        .map(|c| (c.children.len(), c.name()))
        .max_by_key(|&(n, _)| n)
        .unwrap_or((0, ""))
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
    let records = match &measured.delay_log {
        DelayLog::Packets(records) => Some(records.as_slice()),
        DelayLog::Histogram { .. } => None,
    };
    let windows: Vec<(Instant, Instant)> = r.intervals.iter().map(|i| (i.start, i.end)).collect();
    let rates = records.map(|recs| measured_rates(tree, recs, &windows));
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
    let Some(records) = records else {
        let reason = format!(
            "the run measured more than {max_records} packet delays, the most it keeps as \
             per-packet records, so they were replaced by exact histograms; shorten the run \
             or lower the rates to measure link-sharing quality"
        );
        return unmeasured("unavailable", Some(&reason), intervals);
    };
    let mut q = unmeasured("measured", None, intervals);
    let txs = transmissions(records, link.rate, link.overhead);
    let (siblings, crowded) = most_children(tree);
    if siblings > MAX_SIBLINGS {
        q.empirical_alpha_note = Some(format!(
            "skipped: class `{crowded}` has {siblings} children (more than {MAX_SIBLINGS}), \
             and the exact computation costs packets x siblings"
        ));
    } else {
        match empirical_alpha(tree, &txs).worst() {
            Some((a, b, alpha)) => {
                q.empirical_alpha_bytes = Some(alpha);
                q.empirical_alpha_pair = Some([name(a), name(b)]);
            }
            None => {
                q.empirical_alpha_note =
                    Some("no two sibling classes were ever backlogged together".to_owned());
            }
        }
    }
    if let Some(g) = max_gap(&txs) {
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
/// demand (Mbit/s) with the relative error. `links` pairs each link's name and
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
        let _ = writeln!(
            out,
            "  reference (HMM-fair) and measured rates, Mbit/s, per interval of constant demand:"
        );
        let shown = &q.intervals[..q.intervals.len().min(SHOWN_INTERVALS)];
        for chunk in shown.chunks(INTERVALS_PER_TABLE) {
            let text = interval_table(chunk).render();
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

/// Classes as rows; for each interval its reference, measured rate and relative error.
fn interval_table(intervals: &[IntervalQuality]) -> TextTable {
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
            row.push(format!("{:.3}", k.reference_bps / 1e6));
            row.push(
                k.measured_bps
                    .map_or("-".to_owned(), |m| format!("{:.3}", m / 1e6)),
            );
            row.push(
                k.relative_error
                    .map_or("-".to_owned(), |e| format!("{:+.2}", e * 100.0)),
            );
        }
        t.rows.push(row);
    }
    t
}
