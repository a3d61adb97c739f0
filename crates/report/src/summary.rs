//! `summary.json`: the run's numbers per link, class and flow.
//!
//! Keys appear in the order of the structs below (a stable contract); times are seconds
//! as JSON floats, rates bit/s, sizes bytes, counts packets.
//!
//! # Conservation
//!
//! Every packet is counted exactly once, and the counts close exactly, in packets and in
//! bytes (`linkshare_sim::result` defines the states; `scenarios/README.md` documents
//! the identities for users):
//!
//! * per link and per class: `sent = delivered + dropped + queued_at_end +
//!   in_transmission_at_end` (a link's `delivered` packets include its
//!   `propagating_at_end` ones);
//! * per flow: `sent = delivered + dropped + queued_at_end + in_transmission_at_end +
//!   propagating_at_end`, and the same for its acknowledgements (`transport.acks_*`).

use linkshare_core::hierarchy::ClassId;
use linkshare_core::sched::DropReason;
use linkshare_core::stats::Counters;
use linkshare_sim::config::{FlowId, SimConfig};
use linkshare_sim::result::{DelayStats, FlowResult, LinkResult, RunResult};
use serde::ser::{Serialize, SerializeMap, Serializer};

use linkshare_sim::memory::human_bytes;

use super::Labels;
use super::flows::Activity;
use super::quality::{self, LinkSharing};
use crate::WriteError;
use crate::outputs::Outputs;
use crate::service;

/// The whole summary.
#[derive(Debug, serde::Serialize)]
pub struct Summary {
    /// `[scenario] name`.
    pub scenario: String,
    /// The seed of the run.
    pub seed: u64,
    /// Simulated time, seconds.
    pub duration_s: f64,
    /// Throughput and backlog window, seconds.
    pub window_s: f64,
    /// The delay file written: `"per-packet"` (`delay.csv`, every packet), `"histogram"`
    /// (`delay_histogram.csv`, the exact distribution, for big runs) or `"none"` (see
    /// [`crate::outputs`]).
    pub delay_records: &'static str,
    /// Whether the run covered its whole duration; `false` when it stopped early (its
    /// data grew past the memory budget): every number then covers `[0, stopped.at_s)`.
    pub complete: bool,
    /// Where and why an incomplete run stopped (absent when complete).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<StopSummary>,
    /// Links in scenario order.
    pub links: Vec<LinkSummary>,
    /// Every class of every link (root first, then in declaration order).
    pub classes: Vec<ClassSummary>,
    /// Flows in scenario order.
    pub flows: Vec<FlowSummary>,
}

/// Where and why a run stopped early.
#[derive(Debug, serde::Serialize)]
pub struct StopSummary {
    /// The simulated instant, seconds.
    pub at_s: f64,
    /// Why, with what the run's data took and how to fix it.
    pub reason: String,
}

/// Why `result` stopped, with the fix, if it stopped early.
pub fn stop_reason(result: &RunResult) -> Option<String> {
    let s = result.stopped.as_ref()?;
    Some(format!(
        "the run's data grew past the memory budget of {} at {} s simulated: {}; bound \
         the queues that grow (a class limit, not \"none\"; a shared buffer), shorten \
         the run, or raise --max-memory",
        human_bytes(s.budget),
        s.at.as_secs_f64(),
        s.used
    ))
}

/// One link.
#[derive(Debug, serde::Serialize)]
pub struct LinkSummary {
    /// Its name.
    pub name: String,
    /// The discipline it ran.
    pub scheduler: String,
    /// Line rate, bit/s.
    pub rate_bps: u64,
    /// Packets that arrived at the link's port.
    pub packets_sent: u64,
    /// Their bytes.
    pub bytes_sent: u64,
    /// Packets whose transmission on the link completed.
    pub packets_delivered: u64,
    /// Their bytes.
    pub bytes_delivered: u64,
    /// Packets dropped at the port, all reasons.
    pub packets_dropped: u64,
    /// Their bytes.
    pub bytes_dropped: u64,
    /// Packets still queued when the run ended.
    pub packets_queued_at_end: u64,
    /// Their bytes.
    pub bytes_queued_at_end: u64,
    /// The packet being transmitted when the run ended (0 or 1).
    pub packets_in_transmission_at_end: u64,
    /// Its bytes.
    pub bytes_in_transmission_at_end: u64,
    /// Delivered packets still propagating towards the next hop or the sink when the
    /// run ended.
    pub packets_propagating_at_end: u64,
    /// Their bytes.
    pub bytes_propagating_at_end: u64,
    /// Link-sharing quality: empirical alpha, largest gap, and reference against
    /// measured rates per interval of constant demand (see [`super::quality`]).
    pub link_sharing: LinkSharing,
    /// The per-flow templates and what happened in their pools (left out when the link
    /// has none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub per_flow: Vec<PerFlowSummary>,
    /// The discipline's own counters about the link as a whole (JoBS: `busy_periods`);
    /// left out when it has none.
    #[serde(skip_serializing_if = "SchedulerCounters::is_empty")]
    pub scheduler_counters: SchedulerCounters,
    /// The delay and loss ratios achieved between consecutive leaves whose first has a
    /// ratio objective (left out when none has).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ratios: Vec<RatioSummary>,
}

/// A discipline's own counters, by name, in the order it reports them.
#[derive(Debug, Default)]
pub struct SchedulerCounters(pub Vec<(&'static str, u64)>);

impl SchedulerCounters {
    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for SchedulerCounters {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// The ratios two consecutive leaves achieved (see [`crate::service`]): waits are
/// arrival to the start of transmission, loss rates bytes dropped over bytes arrived.
#[derive(Debug, serde::Serialize)]
pub struct RatioSummary {
    /// The first leaf (the better served).
    pub class: String,
    /// The next leaf.
    pub next: String,
    /// The delay ratio objective (the next leaf's wait over the first's), if any.
    pub delay_ratio_target: Option<f64>,
    /// Mean wait of the next over the first's, over the run.
    pub delay_ratio: Option<f64>,
    /// The median of the per-window delay ratios.
    pub delay_ratio_median: Option<f64>,
    /// The windows in which the delay ratio is defined (both started packets).
    pub delay_ratio_windows: usize,
    /// The loss ratio objective, if any.
    pub loss_ratio_target: Option<f64>,
    /// Loss rate of the next over the first's, over the run.
    pub loss_ratio: Option<f64>,
    /// The median of the per-window loss ratios.
    pub loss_ratio_median: Option<f64>,
    /// The windows in which the loss ratio is defined (the first lost some).
    pub loss_ratio_windows: usize,
}

/// A class's objectives and how it met them over the run (see [`crate::service`]).
#[derive(Debug, serde::Serialize)]
pub struct ObjectivesSummary {
    /// Delay bound on the wait, seconds.
    pub delay_bound_s: Option<f64>,
    /// Fraction of the packets sent whose wait was at most the bound.
    pub within_delay_bound: Option<f64>,
    /// Loss-rate bound.
    pub loss_bound: Option<f64>,
    /// Fraction of the windows with arrivals whose loss rate was at most the bound.
    pub windows_within_loss_bound: Option<f64>,
    /// Throughput bound, bit/s.
    pub min_rate_bps: Option<u64>,
    /// Fraction of the windows in which the class offered at least the bound whose
    /// throughput was at least the bound.
    pub windows_at_min_rate: Option<f64>,
    /// Delay ratio objective to the next leaf.
    pub delay_ratio: Option<f64>,
    /// Loss ratio objective to the next leaf.
    pub loss_ratio: Option<f64>,
}

/// One per-flow template of a link: its pool of instances over the run.
#[derive(Debug, serde::Serialize)]
pub struct PerFlowSummary {
    /// The template's name (its instances are the classes `NAME#i`).
    pub template: String,
    /// Instances in the pool.
    pub instances: u32,
    /// How long an instance stays empty before its flow is retired, s.
    pub idle_s: f64,
    /// Flows that got an instance (a flow back after `idle` counts again).
    pub flows_created: u64,
    /// Flows retired when their instance was needed again.
    pub flows_retired: u64,
    /// Packets that found no free instance and shared one: nonzero means the pool was
    /// too small for the traffic.
    pub shared_packets: u64,
    /// The most instances holding packets at once.
    pub peak_busy: u32,
}

/// One class of one link. Counters of an interior class (and of the root, named after
/// the link) are sums over the leaves below it.
#[derive(Debug, serde::Serialize)]
pub struct ClassSummary {
    /// The link.
    pub link: String,
    /// The class.
    pub name: String,
    /// Its parent; `null` for the root.
    pub parent: Option<String>,
    /// Whether it holds packets.
    pub leaf: bool,
    /// Packets that arrived at the port for this class.
    pub packets_sent: u64,
    /// Their bytes.
    pub bytes_sent: u64,
    /// Packets whose transmission on the link completed.
    pub packets_delivered: u64,
    /// Their bytes.
    pub bytes_delivered: u64,
    /// Packets dropped, all reasons.
    pub packets_dropped: u64,
    /// Their bytes.
    pub bytes_dropped: u64,
    /// Packets dropped per reason (every reason, zero included).
    pub drops_by_reason: DropsByReason,
    /// Packets still queued when the run ended.
    pub packets_queued_at_end: u64,
    /// Their bytes.
    pub bytes_queued_at_end: u64,
    /// Packets of the class being transmitted when the run ended (0 or 1 per link).
    pub packets_in_transmission_at_end: u64,
    /// Their bytes.
    pub bytes_in_transmission_at_end: u64,
    /// Delivered bits per second of simulated time.
    pub mean_rate_bps: f64,
    /// Delay at this port (arrival to last bit sent), seconds.
    pub delay_s: DelaySummary,
    /// Wait at this port (arrival to the start of transmission: the queueing delay,
    /// JoBS's delay), seconds.
    pub wait_s: DelaySummary,
    /// Bytes dropped over bytes arrived (`null` when nothing arrived).
    pub loss_rate: Option<f64>,
    /// The class's objectives (the scenario's JoBS constraints) and how it met them;
    /// left out when it has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub objectives: Option<ObjectivesSummary>,
    /// The discipline's own counters about the class (JoBS: its rate, loss rate and
    /// relaxations); left out when it has none.
    #[serde(skip_serializing_if = "SchedulerCounters::is_empty")]
    pub scheduler_counters: SchedulerCounters,
}

/// Drops per reason, keyed by [`DropReason::as_str`] in [`DropReason::ALL`] order.
#[derive(Debug)]
pub struct DropsByReason(pub [u64; DropReason::COUNT]);

impl Serialize for DropsByReason {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(DropReason::COUNT))?;
        for r in DropReason::ALL {
            map.serialize_entry(r.as_str(), &self.0[r.index()])?;
        }
        map.end()
    }
}

/// A delay distribution in seconds (all zero when `count` is zero; percentiles are
/// nearest-rank).
#[derive(Debug, serde::Serialize)]
pub struct DelaySummary {
    /// Number of packets measured.
    pub count: u64,
    /// Smallest.
    pub min: f64,
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
    /// Largest.
    pub max: f64,
}

impl From<&DelayStats> for DelaySummary {
    fn from(d: &DelayStats) -> DelaySummary {
        DelaySummary {
            count: d.count,
            min: d.min.as_secs_f64(),
            mean: d.mean.as_secs_f64(),
            p50: d.p50.as_secs_f64(),
            p90: d.p90.as_secs_f64(),
            p99: d.p99.as_secs_f64(),
            p999: d.p999.as_secs_f64(),
            max: d.max.as_secs_f64(),
        }
    }
}

/// One flow, end to end.
#[derive(Debug, serde::Serialize)]
pub struct FlowSummary {
    /// Its name.
    pub name: String,
    /// The class of its first hop (`link/class` when the scenario has several links).
    pub class: String,
    /// Packets the source emitted.
    pub packets_sent: u64,
    /// Their bytes.
    pub bytes_sent: u64,
    /// Packets that reached the sink.
    pub packets_delivered: u64,
    /// Their bytes.
    pub bytes_delivered: u64,
    /// Packets dropped at any port.
    pub packets_dropped: u64,
    /// Their bytes.
    pub bytes_dropped: u64,
    /// Packets queued at some port when the run ended.
    pub packets_queued_at_end: u64,
    /// Their bytes.
    pub bytes_queued_at_end: u64,
    /// Packets being transmitted on some link when the run ended.
    pub packets_in_transmission_at_end: u64,
    /// Their bytes.
    pub bytes_in_transmission_at_end: u64,
    /// Packets propagating on some link when the run ended.
    pub packets_propagating_at_end: u64,
    /// Their bytes.
    pub bytes_propagating_at_end: u64,
    /// Delivered bits per second of simulated time.
    pub mean_rate_bps: f64,
    /// End-to-end delay (creation to arrival at the sink, with propagation), seconds.
    pub delay_s: DelaySummary,
    /// What the flow's transport measured at the application's level.
    pub transport: TransportSummary,
}

/// A flow's application-level measurements (see [`super::flows`] for the definitions
/// of start, end, goodput and burst delay). Times are seconds of the run; `null` when
/// they did not happen.
#[derive(Debug, serde::Serialize)]
pub struct TransportSummary {
    /// `"udp"` or `"tcp"`.
    pub protocol: &'static str,
    /// Application bytes delivered (over TCP in order and once each).
    pub bytes_delivered: u64,
    /// When the flow sent its first packet.
    pub start_s: Option<f64>,
    /// Its completion, or else the arrival of its last delivered byte.
    pub end_s: Option<f64>,
    /// `bytes_delivered · 8 / (end − start)`, bit/s.
    pub goodput_bps: Option<f64>,
    /// When everything the application wrote was delivered (finite writes only).
    pub completed_s: Option<f64>,
    /// Segments sent again (TCP).
    pub retransmits: u64,
    /// Retransmission timeouts (TCP).
    pub timeouts: u64,
    /// Fast retransmits (TCP).
    pub fast_retransmits: u64,
    /// Packets sent along the reverse route (TCP acknowledgements).
    pub acks_sent: u64,
    /// Of them, dropped.
    pub acks_dropped: u64,
    /// Of them, arrived at the end of the reverse route.
    pub acks_delivered: u64,
    /// Of them, queued at some port when the run ended.
    pub acks_queued_at_end: u64,
    /// Of them, being transmitted when the run ended.
    pub acks_in_transmission_at_end: u64,
    /// Of them, propagating when the run ended.
    pub acks_propagating_at_end: u64,
    /// Application bursts begun.
    pub bursts: u64,
    /// Of them, completed.
    pub bursts_completed: u64,
    /// Mean delay of the completed bursts, seconds.
    pub mean_burst_delay_s: Option<f64>,
}

impl TransportSummary {
    /// The transport summary of `f`.
    pub fn new(f: &FlowResult) -> TransportSummary {
        let t = &f.transport;
        let a = Activity::of(f);
        TransportSummary {
            protocol: t.protocol,
            bytes_delivered: t.bytes_delivered,
            start_s: a.start.map(|t| t.as_secs_f64()),
            end_s: a.end.map(|t| t.as_secs_f64()),
            goodput_bps: a.goodput_bps(),
            completed_s: t.completed.map(|t| t.as_secs_f64()),
            retransmits: t.retransmits,
            timeouts: t.timeouts,
            fast_retransmits: t.fast_retransmits,
            acks_sent: f.reverse.sent.packets,
            acks_dropped: f.reverse.dropped.packets,
            acks_delivered: f.reverse.delivered.packets,
            acks_queued_at_end: f.reverse.queued.packets,
            acks_in_transmission_at_end: f.reverse.in_transmission.packets,
            acks_propagating_at_end: f.reverse.propagating.packets,
            bursts: t.bursts.len() as u64,
            bursts_completed: a.bursts_completed,
            mean_burst_delay_s: a.mean_burst_delay.map(|d| d.as_secs_f64()),
        }
    }
}

impl Summary {
    /// The summary of `result`, a run of `config` from the scenario named `scenario`,
    /// with the default outputs.
    pub fn new(scenario: &str, config: &SimConfig, result: &RunResult) -> Summary {
        Summary::with_outputs(scenario, config, result, &Outputs::default())
    }

    /// The summary of a run whose files `outputs` chooses (it names the delay file).
    pub fn with_outputs(
        scenario: &str,
        config: &SimConfig,
        result: &RunResult,
        outputs: &Outputs,
    ) -> Summary {
        let labels = Labels::new(result);
        let links = result
            .links
            .iter()
            .enumerate()
            .zip(quality::link_sharing(config, result))
            .map(|((i, l), link_sharing)| {
                let (delivered, dropped) = (l.delivered(), l.total.dropped_total());
                LinkSummary {
                    name: l.name.clone(),
                    scheduler: l.scheduler.clone(),
                    rate_bps: l.rate.bps(),
                    packets_sent: l.total.arrived.packets,
                    bytes_sent: l.total.arrived.bytes,
                    packets_delivered: delivered.packets,
                    bytes_delivered: delivered.bytes,
                    packets_dropped: dropped.packets,
                    bytes_dropped: dropped.bytes,
                    packets_queued_at_end: l.total.queued.packets,
                    bytes_queued_at_end: l.total.queued.bytes,
                    packets_in_transmission_at_end: l.in_transmission.packets,
                    bytes_in_transmission_at_end: l.in_transmission.bytes,
                    packets_propagating_at_end: l.propagating.packets,
                    bytes_propagating_at_end: l.propagating.bytes,
                    link_sharing,
                    per_flow: l
                        .per_flow
                        .iter()
                        .map(|p| PerFlowSummary {
                            template: p.name.clone(),
                            instances: p.instances,
                            idle_s: p.idle.as_secs_f64(),
                            flows_created: p.stats.created,
                            flows_retired: p.stats.retired,
                            shared_packets: p.stats.shared_packets,
                            peak_busy: p.stats.peak_busy,
                        })
                        .collect(),
                    scheduler_counters: counters_of(l, None),
                    ratios: service::pairs(result)
                        .iter()
                        .filter(|p| p.link == i)
                        .map(|p| {
                            let a = service::pair_summary(result, p);
                            RatioSummary {
                                class: labels.class(i, p.class),
                                next: labels.class(i, p.next),
                                delay_ratio_target: p.delay_target,
                                delay_ratio: a.delay,
                                delay_ratio_median: a.delay_median,
                                delay_ratio_windows: a.delay_windows,
                                loss_ratio_target: p.loss_target,
                                loss_ratio: a.loss,
                                loss_ratio_median: a.loss_median,
                                loss_ratio_windows: a.loss_windows,
                            }
                        })
                        .collect(),
                }
            })
            .collect();
        let classes = result
            .links
            .iter()
            .flat_map(|l| {
                l.classes.iter().map(move |c| {
                    let dropped = c.counters.dropped_total();
                    ClassSummary {
                        link: l.name.clone(),
                        name: c.name.clone(),
                        parent: c
                            .parent
                            .and_then(|p| l.classes.get(p.index()))
                            .map(|p| p.name.clone()),
                        leaf: c.is_leaf,
                        packets_sent: c.counters.arrived.packets,
                        bytes_sent: c.counters.arrived.bytes,
                        packets_delivered: c.delivered.packets,
                        bytes_delivered: c.delivered.bytes,
                        packets_dropped: dropped.packets,
                        bytes_dropped: dropped.bytes,
                        drops_by_reason: drops_by_reason(&c.counters),
                        packets_queued_at_end: c.counters.queued.packets,
                        bytes_queued_at_end: c.counters.queued.bytes,
                        packets_in_transmission_at_end: c.in_transmission.packets,
                        bytes_in_transmission_at_end: c.in_transmission.bytes,
                        mean_rate_bps: c.mean_rate_bps,
                        delay_s: (&c.delay).into(),
                        wait_s: (&c.wait).into(),
                        loss_rate: (c.counters.arrived.bytes > 0)
                            .then(|| dropped.bytes as f64 / c.counters.arrived.bytes as f64),
                        objectives: service::objective(l, c.id).map(|o| {
                            let m = service::compliance(result, l, c, o);
                            ObjectivesSummary {
                                delay_bound_s: o.delay_bound.map(|d| d.as_secs_f64()),
                                within_delay_bound: m.within_delay_bound,
                                loss_bound: o.loss_bound.map(|f| f.as_f64()),
                                windows_within_loss_bound: m.windows_within_loss_bound,
                                min_rate_bps: o.min_rate.map(|r| r.bps()),
                                windows_at_min_rate: m.windows_at_min_rate,
                                delay_ratio: o.delay_ratio.map(|r| r.as_f64()),
                                loss_ratio: o.loss_ratio.map(|r| r.as_f64()),
                            }
                        }),
                        scheduler_counters: counters_of(l, Some(c.id)),
                    }
                })
            })
            .collect();
        let flows = result
            .flows
            .iter()
            .map(|f| {
                let FlowId(i) = f.id;
                let class = config
                    .flows
                    .get(i as usize)
                    .and_then(|f| f.route.first())
                    .map_or_else(
                        || "?".to_owned(),
                        |hop| labels.class(hop.link.0 as usize, hop.class),
                    );
                FlowSummary {
                    name: f.name.clone(),
                    class,
                    packets_sent: f.sent.packets,
                    bytes_sent: f.sent.bytes,
                    packets_delivered: f.delivered.packets,
                    bytes_delivered: f.delivered.bytes,
                    packets_dropped: f.dropped.packets,
                    bytes_dropped: f.dropped.bytes,
                    packets_queued_at_end: f.queued.packets,
                    bytes_queued_at_end: f.queued.bytes,
                    packets_in_transmission_at_end: f.in_transmission.packets,
                    bytes_in_transmission_at_end: f.in_transmission.bytes,
                    packets_propagating_at_end: f.propagating.packets,
                    bytes_propagating_at_end: f.propagating.bytes,
                    mean_rate_bps: f.mean_rate_bps,
                    delay_s: (&f.delay).into(),
                    transport: TransportSummary::new(f),
                }
            })
            .collect();
        Summary {
            scenario: scenario.to_owned(),
            seed: result.seed,
            duration_s: result.duration.as_secs_f64(),
            window_s: result.window.as_secs_f64(),
            delay_records: outputs.delay_file(result).label(),
            complete: result.stopped.is_none(),
            stopped: result.stopped.as_ref().map(|s| StopSummary {
                at_s: s.at.as_secs_f64(),
                reason: stop_reason(result).unwrap_or_default(),
            }),
            links,
            classes,
            flows,
        }
    }

    /// Pretty-printed JSON with a final newline.
    pub fn to_json(&self) -> Result<String, WriteError> {
        to_json(self)
    }
}

/// `value` as pretty-printed JSON with a final newline.
pub fn to_json(value: &impl Serialize) -> Result<String, WriteError> {
    let mut s = serde_json::to_string_pretty(value).map_err(|e| WriteError {
        what: "cannot serialise the summary".to_owned(),
        error: std::io::Error::other(e),
    })?;
    s.push('\n');
    Ok(s)
}

/// The discipline's counters of `link` about `class` (`None`: the link as a whole).
fn counters_of(link: &LinkResult, class: Option<ClassId>) -> SchedulerCounters {
    SchedulerCounters(
        link.discipline_counters
            .iter()
            .filter(|c| c.class == class)
            .map(|c| (c.name, c.value))
            .collect(),
    )
}

/// Packets dropped per reason, on arrival or later.
pub fn drops_by_reason(c: &Counters) -> DropsByReason {
    let mut out = [0; DropReason::COUNT];
    for r in DropReason::ALL {
        out[r.index()] = c.dropped(r).packets;
    }
    DropsByReason(out)
}
