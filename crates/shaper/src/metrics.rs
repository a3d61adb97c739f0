//! Prometheus metrics on `--metrics ADDR` (`GET /metrics`), with the maintained
//! `prometheus-client` crate for the exposition format and `tiny_http` for the server.
//!
//! The datapath publishes a [`Snapshot`] every [`PUBLISH_INTERVAL`]; a scrape encodes
//! the latest one, so every scrape sees the counters of one instant and the identity
//! received = sent + dropped + queued holds in it, per class. Names and labels:
//!
//! | metric | labels | meaning |
//! | --- | --- | --- |
//! | `linkshare_class_received_{packets,bytes}_total` | class, state | arrivals offered to the class |
//! | `linkshare_class_sent_{packets,bytes}_total` | class, state | handed to the kernel on `out` |
//! | `linkshare_class_dropped_{packets,bytes}_total` | class, state, reason | drops by reason |
//! | `linkshare_class_backlog_{packets,bytes}` | class, state | queued now |
//! | `linkshare_class_rate_bps` | class | sent over the last interval |
//! | `linkshare_pacing_error_seconds` | | histogram: actual − scheduled start |
//! | `linkshare_wakeup_delay_seconds` | | histogram: how late the loop woke for frames that arrived while it slept |
//! | `linkshare_pool_frames` | state (capacity, in_use, high_water) | the frame pool |
//! | `linkshare_datapath_*_total` | | loop turns, sleeps, frames, unparsed (by reason), offloads, ring drops |
//! | `linkshare_datapath_cpu_seconds_total` | mode (user, system) | CPU time of the datapath thread |
//! | `linkshare_datapath_busy_seconds_total` | | wall time of the loop's turns that found work |
//!
//! `state` is `active` for the classes of the running configuration and `removed` for
//! classes a reload removed (their final counters).
//!
//! With a reverse tree (`[shaper] reverse`), its series carry one more label,
//! `direction="reverse"`: class counters, backlog and rate, the pacing histogram, the
//! pool, and the per-direction datapath counters (frames read, sent, unparsed,
//! offloads). The forward tree's series keep the labels above and no `direction`, so
//! that scrapes and dashboards written for a one-tree shaper read the same numbers
//! (select the forward tree alone with `direction=""`). The loop's own counters (turns,
//! sleeps, reloads, ring drops, wake-up delay) are not per direction.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use linkshare_core::DropReason;
use linkshare_core::stats::Counters;
use linkshare_core::units::Duration;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;

use crate::UNPARSED_REASONS;
use crate::hist::Histogram;
use crate::snapshot::Snapshot;

/// How often the datapath publishes a snapshot.
pub const PUBLISH_INTERVAL: Duration = Duration::from_millis(100);

/// The latest snapshot, shared by the datapath (writer) and the server (reader).
pub(crate) type Shared = Arc<Mutex<Option<Arc<Snapshot>>>>;

#[derive(Debug)]
struct SnapshotCollector(Shared);

type Labels<'a> = Vec<(&'static str, &'a str)>;

fn counter(
    e: &mut DescriptorEncoder<'_>,
    name: &str,
    help: &str,
    rows: &[(Labels<'_>, u64)],
) -> std::fmt::Result {
    let mut m = e.encode_descriptor(name, help, None, MetricType::Counter)?;
    for (labels, v) in rows {
        ConstCounter::new(*v).encode(m.encode_family(labels)?)?;
    }
    Ok(())
}

fn gauge(
    e: &mut DescriptorEncoder<'_>,
    name: &str,
    help: &str,
    rows: &[(Labels<'_>, f64)],
) -> std::fmt::Result {
    let mut m = e.encode_descriptor(name, help, None, MetricType::Gauge)?;
    for (labels, v) in rows {
        ConstGauge::new(*v).encode(m.encode_family(labels)?)?;
    }
    Ok(())
}

/// Encodes `h` as one series of a histogram family, labelled `labels`: a bucket at
/// every power of two nanoseconds (the histogram has four per power; the encoder wants
/// each bucket's own count and accumulates them).
fn encode_histogram(
    m: &mut prometheus_client::encoding::MetricEncoder<'_>,
    labels: &Labels<'_>,
    h: &Histogram,
) -> std::fmt::Result {
    let mut buckets: Vec<(f64, u64)> = Vec::new();
    let mut pending = 0;
    for (bound, c) in h.buckets() {
        pending += c;
        if bound.is_power_of_two() {
            buckets.push((bound as f64 / 1e9, pending));
            pending = 0;
        }
    }
    if let Some(last) = buckets.last_mut() {
        last.1 += pending;
    }
    let sum = h.sum_ns() as f64 / 1e9;
    m.encode_family(labels)?
        .encode_histogram::<prometheus_client::encoding::NoLabelSet>(sum, h.count(), &buckets, None)
}

/// The trees of a snapshot with the labels that tell them apart: none for the forward
/// tree (its series are those of a shaper without a reverse tree), `direction="reverse"`
/// for the reverse one.
fn trees(s: &Snapshot) -> Vec<(&Snapshot, Labels<'static>)> {
    let mut trees = vec![(s, Vec::new())];
    if let Some(r) = &s.reverse {
        trees.push((r.as_ref(), vec![("direction", "reverse")]));
    }
    trees
}

/// `base` followed by `more`.
fn with<'a>(base: &Labels<'a>, more: &[(&'static str, &'a str)]) -> Labels<'a> {
    let mut l = base.clone();
    l.extend_from_slice(more);
    l
}

impl Collector for SnapshotCollector {
    fn encode(&self, mut e: DescriptorEncoder<'_>) -> std::fmt::Result {
        let snap = self.0.lock().ok().and_then(|s| s.clone());
        let Some(s) = snap else {
            return Ok(());
        };
        let trees = trees(&s);
        let none: Labels<'_> = Vec::new();
        // Every class of both trees: its labels (class, state, direction) and counters.
        let classes: Vec<(Labels<'_>, &Counters)> = trees
            .iter()
            .flat_map(|(t, dir)| {
                let active = t
                    .classes
                    .iter()
                    .filter(|c| c.leaf)
                    .map(|c| (c.name.as_str(), "active", &c.counters));
                let removed = t.removed.iter().map(|(n, c)| (n.as_str(), "removed", c));
                active
                    .chain(removed)
                    .map(move |(n, st, c)| (with(&vec![("class", n), ("state", st)], dir), c))
            })
            .collect();
        let per = |f: &dyn Fn(&Counters) -> u64| -> Vec<(Labels<'_>, u64)> {
            classes.iter().map(|(l, c)| (l.clone(), f(c))).collect()
        };
        counter(
            &mut e,
            "linkshare_class_received_packets",
            "Frames offered to the class",
            &per(&|c| c.arrived.packets),
        )?;
        counter(
            &mut e,
            "linkshare_class_received_bytes",
            "Bytes offered to the class",
            &per(&|c| c.arrived.bytes),
        )?;
        counter(
            &mut e,
            "linkshare_class_sent_packets",
            "Frames of the class handed to the kernel (on out; on in for the reverse tree)",
            &per(&|c| c.dequeued.packets),
        )?;
        counter(
            &mut e,
            "linkshare_class_sent_bytes",
            "Bytes of the class handed to the kernel (on out; on in for the reverse tree)",
            &per(&|c| c.dequeued.bytes),
        )?;
        let drops = |bytes: bool| -> Vec<(Labels<'_>, u64)> {
            classes
                .iter()
                .flat_map(|(l, c)| {
                    DropReason::ALL.iter().map(move |r| {
                        let d = c.dropped(*r);
                        (
                            with(l, &[("reason", r.as_str())]),
                            if bytes { d.bytes } else { d.packets },
                        )
                    })
                })
                .collect()
        };
        counter(
            &mut e,
            "linkshare_class_dropped_packets",
            "Frames of the class dropped, by reason",
            &drops(false),
        )?;
        counter(
            &mut e,
            "linkshare_class_dropped_bytes",
            "Bytes of the class dropped, by reason",
            &drops(true),
        )?;
        let backlog = |bytes: bool| -> Vec<(Labels<'_>, f64)> {
            classes
                .iter()
                .map(|(l, c)| {
                    let q = if bytes {
                        c.queued.bytes
                    } else {
                        c.queued.packets
                    };
                    (l.clone(), q as f64)
                })
                .collect()
        };
        gauge(
            &mut e,
            "linkshare_class_backlog_packets",
            "Frames queued in the class now",
            &backlog(false),
        )?;
        gauge(
            &mut e,
            "linkshare_class_backlog_bytes",
            "Bytes queued in the class now",
            &backlog(true),
        )?;
        let rates: Vec<(Labels<'_>, f64)> = trees
            .iter()
            .flat_map(|(t, dir)| {
                t.classes
                    .iter()
                    .map(move |c| (with(&vec![("class", c.name.as_str())], dir), c.rate_bps))
            })
            .collect();
        gauge(
            &mut e,
            "linkshare_class_rate_bps",
            "Bits per second sent by the class over the last 100 ms (interior classes and the link: sums)",
            &rates,
        )?;
        {
            let mut m = e.encode_descriptor(
                "linkshare_pacing_error_seconds",
                "Actual minus scheduled start of each transmission",
                None,
                MetricType::Histogram,
            )?;
            for (t, dir) in &trees {
                encode_histogram(&mut m, dir, &t.pacing)?;
            }
        }
        {
            let mut m = e.encode_descriptor(
                "linkshare_wakeup_delay_seconds",
                "How late the datapath woke for frames that arrived while it slept (kernel receipt of the earliest to the end of the sleep)",
                None,
                MetricType::Histogram,
            )?;
            encode_histogram(&mut m, &none, &s.wakeup)?;
        }
        let pool: Vec<(Labels<'_>, f64)> = trees
            .iter()
            .flat_map(|(t, dir)| {
                [
                    ("capacity", t.pool.capacity),
                    ("in_use", t.pool.in_use),
                    ("high_water", t.pool.high_water),
                ]
                .map(|(st, v)| (with(&vec![("state", st)], dir), v as f64))
            })
            .collect();
        gauge(&mut e, "linkshare_pool_frames", "Frame pool slots", &pool)?;
        let d = &s.stats;
        // Counted by the loop, in the forward tree's stats only.
        for (name, help, v) in [
            (
                "linkshare_datapath_loops",
                "Turns of the datapath loop",
                d.loops,
            ),
            (
                "linkshare_datapath_sleeps",
                "Times the datapath slept",
                d.sleeps,
            ),
        ] {
            counter(&mut e, name, help, &[(none.clone(), v)])?;
        }
        // Counted per direction.
        type Field = fn(&crate::snapshot::DatapathStats) -> u64;
        let per_direction: [(&str, &str, Field); 9] = [
            (
                "linkshare_datapath_rx_frames",
                "Frames read on the in interface (on out for the reverse tree)",
                |d| d.rx_frames,
            ),
            (
                "linkshare_datapath_rx_bytes",
                "Bytes read on the in interface (on out for the reverse tree)",
                |d| d.rx_bytes,
            ),
            (
                "linkshare_datapath_rx_errors",
                "Frames lost reading the copy path",
                |d| d.rx_errors,
            ),
            (
                "linkshare_datapath_segmented_frames",
                "Super-frames cut into segments",
                |d| d.segmented,
            ),
            (
                "linkshare_datapath_segments",
                "Segments cut from super-frames",
                |d| d.segments,
            ),
            (
                "linkshare_datapath_checksums_completed",
                "Partial checksums completed",
                |d| d.checksums_completed,
            ),
            (
                "linkshare_datapath_tx_frames",
                "Frames handed to the kernel on the out interface (on in for the reverse tree)",
                |d| d.tx_frames,
            ),
            (
                "linkshare_datapath_tx_errors",
                "Frames the kernel refused on the out interface (on in for the reverse tree)",
                |d| d.tx_errors,
            ),
            (
                "linkshare_datapath_tx_calls",
                "sendmmsg calls on the out interface (on in for the reverse tree)",
                |d| d.tx_calls,
            ),
        ];
        for (name, help, field) in per_direction {
            let rows: Vec<(Labels<'_>, u64)> = trees
                .iter()
                .map(|(t, dir)| (dir.clone(), field(&t.stats)))
                .collect();
            counter(&mut e, name, help, &rows)?;
        }
        for (name, help, v) in [
            (
                "linkshare_datapath_reverse_frames",
                "Frames passed back unshaped from out to in (no reverse tree)",
                d.reverse_frames,
            ),
            (
                "linkshare_datapath_reverse_errors",
                "Frames passed back unshaped that the kernel refused",
                d.reverse_errors,
            ),
            (
                "linkshare_datapath_reloads",
                "Configurations reloaded",
                d.reloads,
            ),
            (
                "linkshare_datapath_reload_failures",
                "Reloads refused",
                d.reload_failures,
            ),
        ] {
            counter(&mut e, name, help, &[(none.clone(), v)])?;
        }
        {
            let mut m = e.encode_descriptor(
                "linkshare_datapath_cpu_seconds",
                "CPU time of the datapath thread, by mode (system: in the kernel)",
                None,
                MetricType::Counter,
            )?;
            for (mode, ns) in [("user", d.cpu_user_ns), ("system", d.cpu_system_ns)] {
                ConstCounter::new(ns as f64 / 1e9)
                    .encode(m.encode_family(&vec![("mode", mode)])?)?;
            }
        }
        ConstCounter::new(d.busy_ns as f64 / 1e9).encode(e.encode_descriptor(
            "linkshare_datapath_busy_seconds",
            "Wall time of the datapath loop's turns that found work",
            None,
            MetricType::Counter,
        )?)?;
        let unparsed: Vec<(Labels<'_>, u64)> = trees
            .iter()
            .flat_map(|(t, dir)| {
                UNPARSED_REASONS
                    .iter()
                    .zip(t.stats.unparsed)
                    .map(move |((_, name), v)| (with(&vec![("reason", *name)], dir), v))
            })
            .collect();
        counter(
            &mut e,
            "linkshare_datapath_unparsed",
            "Frames that did not parse (sent to the default class), by reason",
            &unparsed,
        )?;
        counter(
            &mut e,
            "linkshare_datapath_ring_drops",
            "Frames the kernel dropped because a receive ring was full",
            &[
                (
                    vec![("interface", s.interfaces.0.as_str())],
                    d.ring_drops_in,
                ),
                (
                    vec![("interface", s.interfaces.1.as_str())],
                    d.ring_drops_out,
                ),
            ],
        )?;
        gauge(
            &mut e,
            "linkshare_uptime_seconds",
            "Time since the shaper started",
            &[(none, s.uptime.as_secs_f64())],
        )?;
        Ok(())
    }
}

/// Serves `GET /metrics` on `addr` from a thread; the thread ends with the process.
pub(crate) fn serve(addr: SocketAddr, shared: Shared) -> std::io::Result<JoinHandle<()>> {
    let server = tiny_http::Server::http(addr).map_err(std::io::Error::other)?;
    let mut registry = Registry::default();
    registry.register_collector(Box::new(SnapshotCollector(shared)));
    std::thread::Builder::new()
        .name("linkshare-metrics".to_owned())
        .spawn(move || {
            for request in server.incoming_requests() {
                let (status, body) = if request.url() == "/metrics" {
                    let mut body = String::new();
                    match prometheus_client::encoding::text::encode(&mut body, &registry) {
                        Ok(()) => (200, body),
                        Err(_) => (500, "cannot encode the metrics\n".to_owned()),
                    }
                } else {
                    (404, "linkshare serves /metrics\n".to_owned())
                };
                let header = tiny_http::Header::from_bytes(
                    &b"Content-Type"[..],
                    &b"application/openmetrics-text; version=1.0.0; charset=utf-8"[..],
                )
                .ok();
                let mut response = tiny_http::Response::from_string(body).with_status_code(status);
                if let Some(h) = header {
                    response = response.with_header(h);
                }
                let _ = request.respond(response);
            }
        })
}

#[cfg(test)]
mod tests {
    use linkshare_core::stats::Count;
    use linkshare_core::units::Rate;

    use super::*;
    use crate::hist::Histogram;
    use crate::snapshot::{ClassSnapshot, DatapathStats, PoolStats};

    /// A tree of one leaf `leaf` that received 10 frames and sent 7 (3 queued).
    fn tree(leaf: &str, from: &str, to: &str) -> Snapshot {
        let mut c = Counters::default();
        c.arrived = Count {
            packets: 10,
            bytes: 1000,
        };
        c.enqueued = c.arrived;
        c.dequeued = Count {
            packets: 7,
            bytes: 700,
        };
        c.queued = Count {
            packets: 3,
            bytes: 300,
        };
        let mut pacing = Histogram::default();
        pacing.record(Duration::from_micros(3));
        Snapshot {
            name: leaf.to_owned(),
            scheduler: "fifo",
            rate: Rate::from_mbit(10),
            interfaces: (from.to_owned(), to.to_owned()),
            uptime: Duration::from_millis(1500),
            classes: vec![ClassSnapshot {
                name: leaf.to_owned(),
                parent: None,
                leaf: true,
                counters: c,
                rate_bps: 0.0,
                delay: None,
            }],
            removed: Vec::new(),
            stats: DatapathStats {
                rx_frames: 10,
                ..DatapathStats::default()
            },
            pool: PoolStats {
                capacity: 64,
                in_use: 3,
                high_water: 5,
            },
            pacing,
            wakeup: Histogram::default(),
            reverse: None,
        }
    }

    fn encode(s: Snapshot) -> String {
        let shared: Shared = Arc::new(Mutex::new(Some(Arc::new(s))));
        let mut registry = Registry::default();
        registry.register_collector(Box::new(SnapshotCollector(shared)));
        let mut body = String::new();
        prometheus_client::encoding::text::encode(&mut body, &registry).unwrap();
        body
    }

    /// With a reverse tree, each family is described once and holds both trees'
    /// series; the forward tree's series are exactly those of a one-tree shaper.
    #[test]
    fn the_reverse_tree_is_labelled_and_the_forward_one_unchanged() {
        let forward = || {
            let mut t = tree("up", "si", "so");
            t.wakeup.record(Duration::from_micros(20));
            t.wakeup.record(Duration::from_millis(2));
            t
        };
        let one = encode(forward());
        let mut both = forward();
        both.reverse = Some(Box::new(tree("down", "so", "si")));
        let both = encode(both);
        for line in one.lines().filter(|l| !l.starts_with('#')) {
            if line.starts_with("linkshare_uptime") || line.starts_with("linkshare_datapath_cpu") {
                continue;
            }
            assert!(both.contains(line), "{line} is gone:\n{both}");
        }
        let helps: Vec<&str> = both.lines().filter(|l| l.starts_with("# HELP")).collect();
        let mut unique = helps.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(
            helps.len(),
            unique.len(),
            "a family described twice:\n{both}"
        );
        for want in [
            "linkshare_class_sent_packets_total{class=\"down\",state=\"active\",direction=\"reverse\"} 7",
            "linkshare_class_backlog_packets{class=\"down\",state=\"active\",direction=\"reverse\"} 3",
            "linkshare_pool_frames{state=\"in_use\",direction=\"reverse\"} 3",
            "linkshare_datapath_rx_frames_total{direction=\"reverse\"} 10",
            "linkshare_pacing_error_seconds_count{direction=\"reverse\"} 1",
            "linkshare_pacing_error_seconds_count 1",
            // The loop's: one series, no direction; 20 µs is below 2^20 ns, 2 ms above.
            "linkshare_wakeup_delay_seconds_bucket{le=\"0.001048576\"} 1",
            "linkshare_wakeup_delay_seconds_count 2",
        ] {
            assert!(both.contains(want), "no {want} in:\n{both}");
        }
        assert!(
            !both.contains("linkshare_wakeup_delay_seconds_count{"),
            "{both}"
        );
    }
}
