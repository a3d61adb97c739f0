//! `summary.json` and the terminal table of a shaper run, in the simulator's format
//! (`linkshare_report::summary::Summary`), so that the same scripts and plots read
//! simulated and real runs.
//!
//! What differs from a simulated run: `packets_delivered` counts frames handed to the
//! kernel on `out` (the qdisc's dequeued frames), so nothing is counted in transmission
//! or propagating; `duration_s` is the time since the shaper started; `delay_s` (and
//! `wait_s`, the same) is the time from a frame's arrival on `in` to the start of its
//! transmission on `out`, from a histogram (each value at its bucket's upper bound,
//! a quarter of a power of two); `flows` is empty (the shaper sees frames, not flows);
//! `link_sharing.status` is `"unavailable"` (no per-packet records are kept). Classes
//! removed by a reload are not listed (their final counters are in the metrics, with
//! `state="removed"`). A reverse tree is the second link, named `link-reverse` as the
//! simulator names a single-link scenario's reverse direction, its classes tagged with
//! that link; the final table prints it below the forward tree.

use linkshare_report::quality::LinkSharing;
use linkshare_report::summary::{
    ClassSummary, DelaySummary, LinkSummary, SchedulerCounters, Summary, drops_by_reason,
};
use linkshare_report::table::{TextTable, append_columns, rate_column, time_column};
use linkshare_sim::config::{SINGLE_LINK, SINGLE_REVERSE_LINK};
use linkshare_sim::result::DelayStats;

use crate::snapshot::Snapshot;

/// The summary of `s` (a snapshot taken with delays): the forward tree as the link
/// `link`, the reverse tree, if any, as `link-reverse`.
pub fn summary(s: &Snapshot) -> Summary {
    let mut links = vec![link_summary(s, SINGLE_LINK)];
    let mut classes = class_summaries(s, SINGLE_LINK);
    if let Some(r) = &s.reverse {
        links.push(link_summary(r, SINGLE_REVERSE_LINK));
        classes.extend(class_summaries(r, SINGLE_REVERSE_LINK));
    }
    Summary {
        scenario: s.name.clone(),
        seed: 0,
        duration_s: s.uptime.as_secs_f64(),
        window_s: crate::metrics::PUBLISH_INTERVAL.as_secs_f64(),
        delay_records: "histogram",
        links,
        classes,
        flows: Vec::new(),
        complete: true,
        stopped: None,
    }
}

/// Mean bits per second of `bytes` over the snapshot's uptime.
fn mean_rate(s: &Snapshot, bytes: u64) -> f64 {
    let secs = s.uptime.as_secs_f64();
    if secs > 0.0 {
        bytes as f64 * 8.0 / secs
    } else {
        0.0
    }
}

/// The classes of one tree, tagged with `link`.
fn class_summaries(s: &Snapshot, link: &str) -> Vec<ClassSummary> {
    s.classes
        .iter()
        .map(|c| {
            let dropped = c.counters.dropped_total();
            let delay = c.delay.unwrap_or_default();
            ClassSummary {
                link: link.to_owned(),
                name: c.name.clone(),
                parent: c.parent.clone(),
                leaf: c.leaf,
                packets_sent: c.counters.arrived.packets,
                bytes_sent: c.counters.arrived.bytes,
                packets_delivered: c.counters.dequeued.packets,
                bytes_delivered: c.counters.dequeued.bytes,
                packets_dropped: dropped.packets,
                bytes_dropped: dropped.bytes,
                drops_by_reason: drops_by_reason(&c.counters),
                packets_queued_at_end: c.counters.queued.packets,
                bytes_queued_at_end: c.counters.queued.bytes,
                packets_in_transmission_at_end: 0,
                bytes_in_transmission_at_end: 0,
                mean_rate_bps: mean_rate(s, c.counters.dequeued.bytes),
                delay_s: DelaySummary::from(&delay),
                // The shaper's delay is measured to the start of transmission already.
                wait_s: DelaySummary::from(&delay),
                loss_rate: (c.counters.arrived.bytes > 0)
                    .then(|| dropped.bytes as f64 / c.counters.arrived.bytes as f64),
                objectives: None,
                scheduler_counters: SchedulerCounters::default(),
            }
        })
        .collect()
}

/// One tree as the link `name`.
fn link_summary(s: &Snapshot, name: &str) -> LinkSummary {
    // The link's counts are its root's (the first class); a frame handed to the kernel
    // is delivered, so none is in transmission or propagating.
    let root = s
        .classes
        .first()
        .map(|c| c.counters.clone())
        .unwrap_or_default();
    let root_dropped = root.dropped_total();
    LinkSummary {
        name: name.to_owned(),
        scheduler: s.scheduler.to_owned(),
        rate_bps: s.rate.bps(),
        packets_sent: root.arrived.packets,
        bytes_sent: root.arrived.bytes,
        packets_delivered: root.dequeued.packets,
        bytes_delivered: root.dequeued.bytes,
        packets_dropped: root_dropped.packets,
        bytes_dropped: root_dropped.bytes,
        packets_queued_at_end: root.queued.packets,
        bytes_queued_at_end: root.queued.bytes,
        packets_in_transmission_at_end: 0,
        bytes_in_transmission_at_end: 0,
        packets_propagating_at_end: 0,
        bytes_propagating_at_end: 0,
        link_sharing: LinkSharing {
            status: "unavailable",
            unavailable_reason: Some(
                "a real link: the shaper keeps counters and histograms, not per-packet records"
                    .to_owned(),
            ),
            empirical_alpha_bytes: None,
            empirical_alpha_pair: None,
            empirical_alpha_note: None,
            max_gap_s: None,
            max_gap_class: None,
            max_gap_from_s: None,
            intervals: Vec::new(),
        },
        per_flow: Vec::new(),
        scheduler_counters: SchedulerCounters::default(),
        ratios: Vec::new(),
    }
}

/// The final table: every class indented by depth, the link first.
pub fn table(s: &Snapshot) -> TextTable {
    let mut header: Vec<String> = ["class", "received", "sent", "dropped", "queued"]
        .map(str::to_owned)
        .to_vec();
    let secs = s.uptime.as_secs_f64().max(1e-9);
    let mut depth: Vec<(String, usize)> = Vec::new();
    let mut rows = Vec::new();
    let (mut rates, mut p99s) = (Vec::new(), Vec::new());
    for c in &s.classes {
        let d = c
            .parent
            .as_ref()
            .and_then(|p| depth.iter().find(|(n, _)| n == p))
            .map_or(0, |(_, d)| d + 1);
        depth.push((c.name.clone(), d));
        let name = if d == 0 {
            format!("{} [{}]", c.name, s.scheduler)
        } else {
            format!("{}{}", "  ".repeat(d), c.name)
        };
        let p99 = c
            .delay
            .as_ref()
            .map_or(DelayStats::default().p99, |d| d.p99);
        rows.push(vec![
            name,
            c.counters.arrived.packets.to_string(),
            c.counters.dequeued.packets.to_string(),
            c.counters.dropped_total().packets.to_string(),
            c.counters.queued.packets.to_string(),
        ]);
        rates.push(Some(c.counters.dequeued.bytes as f64 * 8.0 / secs));
        p99s.push(Some(p99));
    }
    append_columns(
        &mut header,
        &mut rows,
        vec![rate_column("rate", &rates), time_column("p99", &p99s)],
    );
    TextTable {
        groups: Vec::new(),
        header,
        rows,
    }
}
