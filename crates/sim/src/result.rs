//! What a run produces: per-link, per-class and per-flow measurements.
//!
//! Every time is an [`Instant`] or [`Duration`] (integer nanoseconds), every rate is in
//! bit/s, every size in bytes. Floats appear only in derived report values
//! (`mean_rate_bps`, CDF fractions).
//!
//! # Where a packet is at the end of the run
//!
//! The run stops at [`RunResult::duration`]: no event at or after that instant is
//! processed. A packet sent by a source is then exactly one of
//!
//! * delivered to its sink ([`FlowResult::delivered`]),
//! * dropped at some port ([`FlowResult::dropped`]),
//! * queued at some port ([`FlowResult::queued`]),
//! * in transmission: dequeued by a port whose link has not sent its last bit
//!   ([`FlowResult::in_transmission`]; at most one per link),
//! * propagating: sent on a link, not yet arrived at the next port or the sink
//!   ([`FlowResult::propagating`]),
//!
//! so that the identities below hold exactly, in packets and in bytes, and
//! [`RunResult::check_conservation`] checks every one of them:
//!
//! * per flow, `sent = delivered + dropped + queued + in_transmission + propagating`;
//!   the same apart for the packets it sends along its reverse route (TCP
//!   acknowledgements, [`FlowResult::reverse`]). The forward counters count every packet
//!   sent, retransmitted copies included, while [`FlowResult::transport`] counts
//!   application bytes;
//! * per class of a link (an interior class and the root summing their leaves),
//!   `arrived = delivered + dropped + queued + in_transmission`, where `delivered`
//!   counts the packets whose transmission on this link completed
//!   ([`ClassResult::delivered`]), whether or not they have reached the next hop;
//! * per link, the same over the port's totals ([`LinkResult::total`],
//!   [`LinkResult::delivered`], [`LinkResult::in_transmission`]); of the delivered
//!   packets, [`LinkResult::propagating`] are still on their way;
//! * over the network, the packets the flows count as queued, in transmission and
//!   propagating (both directions) are those the ports and links count.
//!
//! # Delays
//!
//! Delay distributions are exact: [`DelayHistogram`] holds every distinct delay in
//! nanoseconds with its count. Percentiles are nearest-rank (see [`DelayStats`]).
//! Per-packet records ([`DelayRecord`]) are kept for every port (in memory or by the
//! run's record sink, see [`crate::records`]) until the run has recorded
//! [`crate::config::MeasureConfig::max_delay_records`] of them (over all links); then
//! the records are dropped and [`LinkResult::delay_log`] says [`DelayLog::Histogram`],
//! while the per-class histograms stay exact.

use linkshare_core::hierarchy::ClassId;
use linkshare_core::perflow::PoolStats;
use linkshare_core::sched::jobs::Constraints;
use linkshare_core::sched::{DisciplineCounter, DropReason};
use linkshare_core::stats::{Count, Counters};
use linkshare_core::units::{Duration, Instant, Rate};

use crate::config::{FlowId, LinkId};
pub use crate::records::DelayLog;

/// Number of points [`RunResult::cdf`] and [`RunResult::flow_cdf`] return at most.
pub const CDF_POINTS: usize = 2000;

/// Everything a run measured.
#[derive(Clone, Debug, PartialEq)]
pub struct RunResult {
    /// The seed the run used.
    pub seed: u64,
    /// Simulated time covered: `[0, duration)`.
    pub duration: Duration,
    /// The length of the throughput and backlog windows.
    pub window: Duration,
    /// One entry per link, in [`crate::config::SimConfig::links`] order.
    pub links: Vec<LinkResult>,
    /// One entry per flow, in [`crate::config::SimConfig::flows`] order.
    pub flows: Vec<FlowResult>,
    /// Events processed.
    pub events: u64,
    /// Packets whose transmission on a link completed (a packet crossing two links counts
    /// twice).
    pub packet_hops: u64,
    /// Why the run ended before `duration`, if it did: then everything measures
    /// `[0, stopped.at)` and the later windows are empty.
    pub stopped: Option<Stopped>,
}

/// A run that ended early: its data grew past the memory budget
/// ([`crate::Simulator::memory_budget`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stopped {
    /// The simulated instant it stopped at.
    pub at: Instant,
    /// The budget, bytes.
    pub budget: u64,
    /// What the run's data took then.
    pub used: crate::memory::MemoryUse,
}

/// One link (its egress port) over the run.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkResult {
    /// The link's name.
    pub name: String,
    /// The discipline's name (`"fifo"`, `"drr"`, ...).
    pub scheduler: String,
    /// Line rate.
    pub rate: Rate,
    /// Every class of the link's tree in id order, root first.
    pub classes: Vec<ClassResult>,
    /// The port's counters over all classes (see [`linkshare_core::stats`]).
    pub total: Counters,
    /// Bytes whose transmission completed in each window, per leaf: sorted by window,
    /// then by class id. A packet counts in the window in which its last bit left.
    pub throughput: Vec<WindowSample>,
    /// The largest backlog in bytes of each leaf in each window, sampled exactly at every
    /// change (a window without changes reports the backlog carried into it): sorted by
    /// window, then by class id.
    pub backlog: Vec<WindowSample>,
    /// The packet in transmission at the end of the run (dequeued, last bit not yet
    /// sent): zero or one packet.
    pub in_transmission: Count,
    /// Packets whose transmission on this link completed but which had not reached the
    /// next port or the sink at the end of the run.
    pub propagating: Count,
    /// Per-packet delay records at this port, or the note that they were replaced by
    /// histograms.
    pub delay_log: DelayLog,
    /// The per-flow templates of the link's tree, with what happened in their pools.
    pub per_flow: Vec<PerFlowResult>,
    /// What the discipline itself counted, read once at the end of the run
    /// ([`linkshare_core::sched::Scheduler::discipline_counters`]): JoBS's relaxed
    /// bounds by kind and its rates; empty for disciplines with nothing of their own.
    pub discipline_counters: Vec<DisciplineCounter>,
    /// Per window and leaf: what arrived at the port, what of it was dropped, and how
    /// long the packets that started their transmission had waited.
    pub service: ServiceSeries,
    /// The service objectives of the link's classes the configuration asked to
    /// measure ([`crate::config::MeasureConfig::objectives`]), by class id.
    pub objectives: Vec<(ClassId, Constraints)>,
}

/// What a port did for each leaf in each measurement window: arrivals, drops, and the
/// waits of the packets it started sending. Exact counts; windows as
/// [`RunResult::window_bounds`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServiceSeries {
    /// The leaves, in id order: the cells of window `k` are
    /// `cells[k * leaves.len() ..][.. leaves.len()]`, in this order.
    pub leaves: Vec<ClassId>,
    /// Window by window, leaf by leaf.
    pub cells: Vec<ServiceCell>,
}

impl ServiceSeries {
    /// Number of windows.
    pub fn windows(&self) -> usize {
        self.cells.len().checked_div(self.leaves.len()).unwrap_or(0)
    }

    /// The cell of the `leaf`-th leaf (position in [`ServiceSeries::leaves`]) in window
    /// `window`.
    pub fn cell(&self, window: usize, leaf: usize) -> &ServiceCell {
        &self.cells[window * self.leaves.len() + leaf]
    }

    /// The position of `class` among the leaves.
    pub fn position(&self, class: ClassId) -> Option<usize> {
        self.leaves.iter().position(|&c| c == class)
    }
}

/// One leaf in one window (see [`ServiceSeries`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServiceCell {
    /// Packets that arrived at the port in the window.
    pub arrived: Count,
    /// Of the packets that arrived in the window, those dropped (on arrival or later,
    /// whenever that was): their loss is counted in their arrival's window, so
    /// `dropped <= arrived`.
    pub dropped: Count,
    /// Packets whose transmission started in the window.
    pub started: u64,
    /// The sum of their waits, ns (arrival at the port to the start of transmission;
    /// saturating).
    pub wait_sum: u64,
    /// The longest of their waits, ns.
    pub wait_max: u64,
}

impl ServiceCell {
    /// The mean wait of the packets that started in the window, ns; `None` if none did.
    pub fn mean_wait_ns(&self) -> Option<f64> {
        (self.started > 0).then(|| self.wait_sum as f64 / self.started as f64)
    }

    /// Bytes dropped over bytes arrived; `None` if nothing arrived.
    pub fn loss_rate(&self) -> Option<f64> {
        (self.arrived.bytes > 0).then(|| self.dropped.bytes as f64 / self.arrived.bytes as f64)
    }
}

/// One per-flow template of a link ([`linkshare_core::perflow`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PerFlowResult {
    /// The template's name.
    pub name: String,
    /// Its instances (`max_flows`).
    pub instances: u32,
    /// How long an instance stays empty before its flow is retired.
    pub idle: Duration,
    /// Flows created and retired, packets that found no free instance, the most
    /// instances busy at once.
    pub stats: PoolStats,
}

/// One class of a link's tree.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassResult {
    /// Its id in the link's tree.
    pub id: ClassId,
    /// Its name.
    pub name: String,
    /// Its parent; `None` for the root.
    pub parent: Option<ClassId>,
    /// Whether it holds packets.
    pub is_leaf: bool,
    /// The port's counters for the class; for an interior class (and the root) the sum
    /// over the leaves below it.
    pub counters: Counters,
    /// Packets whose transmission on this link completed: `counters.dequeued` minus
    /// `in_transmission`.
    pub delivered: Count,
    /// Packets of the class dequeued whose transmission had not ended when the run did
    /// (zero or one packet per link).
    pub in_transmission: Count,
    /// `delivered.bytes * 8 / duration`, in bit/s.
    pub mean_rate_bps: f64,
    /// Per-packet delay at this port: arrival at the port to the last bit transmitted
    /// (queueing plus transmission time), over the packets in `delivered`.
    pub delay: DelayStats,
    /// The exact distribution behind `delay`.
    pub delays: DelayHistogram,
    /// Per-packet wait at this port: arrival at the port to the start of its
    /// transmission (the queueing delay alone; JoBS's delay), over the packets dequeued.
    pub wait: DelayStats,
    /// The exact distribution behind `wait`.
    pub waits: DelayHistogram,
}

/// One flow over the run.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowResult {
    /// Its id.
    pub id: FlowId,
    /// Its name.
    pub name: String,
    /// Packets the source emitted.
    pub sent: Count,
    /// Packets that reached the sink.
    pub delivered: Count,
    /// Packets dropped at any port, for any reason.
    pub dropped: Count,
    /// Drops by reason, in [`DropReason::ALL`] order, only reasons that occurred.
    pub dropped_by_reason: Vec<(DropReason, Count)>,
    /// Packets queued at some port at the end of the run.
    pub queued: Count,
    /// Packets being transmitted on some link at the end of the run.
    pub in_transmission: Count,
    /// Packets sent on some link, not yet arrived at the next port or the sink, at the
    /// end of the run.
    pub propagating: Count,
    /// `delivered.bytes * 8 / duration`, in bit/s.
    pub mean_rate_bps: f64,
    /// End-to-end delay: creation at the source to arrival of the last bit at the sink,
    /// including every hop's queueing, transmission and propagation.
    pub delay: DelayStats,
    /// The exact distribution behind `delay`.
    pub delays: DelayHistogram,
    /// Bytes delivered to the sink in each measurement window, in window order (see
    /// [`RunResult::window_bounds`]).
    pub throughput: Vec<u64>,
    /// The packets sent along the reverse route (acknowledgements); all zero for UDP.
    pub reverse: PathCounts,
    /// Application-level measurements: goodput, completion, retransmissions, bursts.
    pub transport: TransportReport,
}

/// Where the packets a flow sent in one direction are at the end of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PathCounts {
    /// Packets sent.
    pub sent: Count,
    /// Packets that reached the end of the route.
    pub delivered: Count,
    /// Packets dropped at some port.
    pub dropped: Count,
    /// Packets queued at some port.
    pub queued: Count,
    /// Packets being transmitted on some link.
    pub in_transmission: Count,
    /// Packets propagating on some link.
    pub propagating: Count,
}

impl PathCounts {
    /// Checks `sent = delivered + dropped + queued + in_transmission + propagating` in
    /// packets and bytes; `what` names the path in the error.
    pub fn check_conservation(&self, what: &str) -> Result<(), String> {
        let parts = [
            self.delivered,
            self.dropped,
            self.queued,
            self.in_transmission,
            self.propagating,
        ];
        let sum = sum_of(&parts);
        if sum == self.sent {
            Ok(())
        } else {
            Err(format!(
                "{what}: sent {:?} != delivered {:?} + dropped {:?} + queued {:?} + in \
                 transmission {:?} + propagating {:?}",
                self.sent,
                self.delivered,
                self.dropped,
                self.queued,
                self.in_transmission,
                self.propagating
            ))
        }
    }
}

/// The sum of `counts`.
fn sum_of(counts: &[Count]) -> Count {
    counts.iter().fold(Count::default(), |acc, c| Count {
        packets: acc.packets + c.packets,
        bytes: acc.bytes + c.bytes,
    })
}

/// Checks `arrived = delivered + dropped + queued + in_transmission` of a port's
/// counters; `what` names the class or link in the error.
fn check_port(
    what: &str,
    counters: &Counters,
    delivered: Count,
    in_transmission: Count,
) -> Result<(), String> {
    let parts = [
        delivered,
        counters.dropped_total(),
        counters.queued,
        in_transmission,
    ];
    if sum_of(&parts) == counters.arrived {
        Ok(())
    } else {
        Err(format!(
            "{what}: arrived {:?} != delivered {delivered:?} + dropped {:?} + queued {:?} + in \
             transmission {in_transmission:?}",
            counters.arrived,
            counters.dropped_total(),
            counters.queued
        ))
    }
}

/// What a flow's transport measured, at the application's level. Times are instants of
/// the run; bytes are application bytes (payload, no headers).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TransportReport {
    /// `"udp"` or `"tcp"`.
    pub protocol: &'static str,
    /// Application bytes delivered to the receiving application: over TCP in order and
    /// once each (goodput); over UDP every byte of every packet that arrived.
    pub bytes_delivered: u64,
    /// When the flow sent its first packet.
    pub first_sent: Option<Instant>,
    /// When the last application byte counted in `bytes_delivered` arrived.
    pub last_delivered: Option<Instant>,
    /// TCP only: when everything the application wrote had been delivered, if it ever
    /// was and the application's writes are finite (an FTP transfer of N bytes): the
    /// flow's completion time. `None` over UDP (see the bursts instead).
    pub completed: Option<Instant>,
    /// Segments sent again (fast retransmits and timeouts; TCP only).
    pub retransmits: u64,
    /// Retransmission timeouts that fired (TCP only).
    pub timeouts: u64,
    /// Fast retransmits (TCP only).
    pub fast_retransmits: u64,
    /// One record per burst, in the order the bursts began.
    pub bursts: Vec<BurstRecord>,
    /// Congestion-control samples over time, when the flow's TCP asked for a trace.
    pub trace: Vec<TcpSample>,
}

/// One application burst (an ON period, a video frame, a web transfer, a keystroke).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BurstRecord {
    /// Its number within the flow, from 0.
    pub index: u32,
    /// The connection it was sent on (TCP; 0 over UDP).
    pub conn: u32,
    /// When the application began it ([`crate::agent::Ctx::begin_burst`]).
    pub begun: Instant,
    /// Application bytes in it.
    pub bytes: u64,
    /// When its first packet was sent, if any was.
    pub first_sent: Option<Instant>,
    /// Application bytes of it delivered.
    pub delivered: u64,
    /// When the last of its delivered bytes arrived (also for a burst that never
    /// completed: a UDP burst that lost packets). The FSC paper's delay of such a burst
    /// is `last_delivered - first_sent`.
    pub last_delivered: Option<Instant>,
    /// When its last byte arrived at the receiver (all `bytes` delivered); `None` if
    /// some never did within the run. The burst delay of the FSC paper is
    /// `completed - first_sent`.
    pub completed: Option<Instant>,
}

/// One sample of a TCP connection's congestion state, taken whenever it changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpSample {
    /// When.
    pub at: Instant,
    /// The connection.
    pub conn: u32,
    /// Congestion window, bytes.
    pub cwnd: u64,
    /// Slow-start threshold, bytes.
    pub ssthresh: u64,
    /// Smoothed round-trip time (none before the first sample).
    pub srtt: Option<Duration>,
    /// Round-trip time variation.
    pub rttvar: Option<Duration>,
    /// Current retransmission timeout, backoff included.
    pub rto: Duration,
}

impl FlowResult {
    /// The flow's forward path: the counts of the packets its source sent.
    pub fn forward(&self) -> PathCounts {
        PathCounts {
            sent: self.sent,
            delivered: self.delivered,
            dropped: self.dropped,
            queued: self.queued,
            in_transmission: self.in_transmission,
            propagating: self.propagating,
        }
    }

    /// Checks `sent = delivered + dropped + queued + in_transmission + propagating` in
    /// packets and bytes, forward and along the reverse route.
    pub fn check_conservation(&self) -> Result<(), String> {
        self.forward()
            .check_conservation(&format!("flow `{}`", self.name))?;
        self.reverse
            .check_conservation(&format!("flow `{}`, reverse route", self.name))
    }
}

impl LinkResult {
    /// Packets whose transmission on this link completed: the port's `dequeued` minus
    /// the packet in transmission.
    pub fn delivered(&self) -> Count {
        Count {
            packets: self.total.dequeued.packets - self.in_transmission.packets,
            bytes: self.total.dequeued.bytes - self.in_transmission.bytes,
        }
    }

    /// Checks `arrived = delivered + dropped + queued + in_transmission` for the link
    /// and for each of its classes, in packets and bytes.
    pub fn check_conservation(&self) -> Result<(), String> {
        let link = format!("link `{}`", self.name);
        check_port(&link, &self.total, self.delivered(), self.in_transmission)?;
        for c in &self.classes {
            check_port(
                &format!("{link}, class `{}`", c.name),
                &c.counters,
                c.delivered,
                c.in_transmission,
            )?;
        }
        Ok(())
    }
}

/// A value measured over one window `[start, end)` for one class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowSample {
    /// Start of the window: `k * window`.
    pub start: Instant,
    /// End of the window: `(k + 1) * window`, or the end of the run for the last window.
    pub end: Instant,
    /// The leaf class.
    pub class: ClassId,
    /// Bytes (see the field holding the samples for what they count).
    pub value: u64,
}

impl WindowSample {
    /// `value * 8 / (end - start)` in bit/s: the rate of a throughput sample.
    pub fn rate_bps(&self) -> f64 {
        let len = self.end.since(self.start).as_secs_f64();
        if len == 0.0 {
            0.0
        } else {
            self.value as f64 * 8.0 / len
        }
    }
}

/// Summary of a delay distribution. All fields are zero when `count` is zero.
///
/// Percentiles are nearest-rank on the exact sorted values: the `q`-quantile (`q` in
/// thousandths: 500, 900, 990, 999) is the value of rank `max(1, ceil(count * q / 1000))`
/// (1-based) — the smallest measured delay such that at least a fraction `q/1000` of
/// the delays are not larger. `mean` is the exact sum divided by `count`, rounded down
/// to the nanosecond.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DelayStats {
    /// Number of delays.
    pub count: u64,
    /// Smallest.
    pub min: Duration,
    /// Mean, rounded down.
    pub mean: Duration,
    /// Median (nearest rank).
    pub p50: Duration,
    /// 90th percentile (nearest rank).
    pub p90: Duration,
    /// 99th percentile (nearest rank).
    pub p99: Duration,
    /// 99.9th percentile (nearest rank).
    pub p999: Duration,
    /// Largest.
    pub max: Duration,
}

/// One packet's passage through one port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DelayRecord {
    /// The leaf class it was queued in.
    pub class: ClassId,
    /// Its flow.
    pub flow: FlowId,
    /// Its length in bytes, without the link's per-packet overhead (its transmission
    /// took `rate.tx_time(len + overhead)` and ended at `departure`).
    pub len: u32,
    /// Arrival at the port.
    pub arrival: Instant,
    /// When its last bit was transmitted.
    pub departure: Instant,
}

impl DelayRecord {
    /// `departure - arrival`: queueing plus transmission time.
    pub fn delay(&self) -> Duration {
        self.departure.since(self.arrival)
    }
}

/// An exact delay distribution: every distinct delay (ns) with the number of packets
/// that had it, in increasing order of delay.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DelayHistogram {
    bins: Vec<(Duration, u64)>,
}

impl DelayHistogram {
    /// The distribution of `values` (nanoseconds, any order). Sorts `values` in place.
    pub fn from_values(values: &mut [u64]) -> DelayHistogram {
        values.sort_unstable();
        let mut bins: Vec<(Duration, u64)> = Vec::new();
        for &v in values.iter() {
            match bins.last_mut() {
                Some((d, n)) if d.0 == v => *n += 1,
                _ => bins.push((Duration(v), 1)),
            }
        }
        DelayHistogram { bins }
    }

    /// A distribution from `(delay, count)` pairs strictly increasing in delay, with
    /// positive counts (as iterated from a sorted map). Zero counts are skipped.
    ///
    /// # Panics
    /// If the delays are not strictly increasing.
    pub fn from_sorted_bins(bins: impl IntoIterator<Item = (Duration, u64)>) -> DelayHistogram {
        let bins: Vec<(Duration, u64)> = bins.into_iter().filter(|&(_, n)| n > 0).collect();
        assert!(
            bins.windows(2).all(|w| w[0].0 < w[1].0),
            "DelayHistogram bins must be strictly increasing"
        );
        DelayHistogram { bins }
    }

    /// A distribution from `(delay, count)` pairs in any order, a delay possibly
    /// repeated (their counts add up): the union of several distributions' bins. Sorts
    /// `bins` in place.
    pub fn from_unsorted_bins(bins: &mut [(Duration, u64)]) -> DelayHistogram {
        bins.sort_unstable_by_key(|&(d, _)| d);
        let mut merged: Vec<(Duration, u64)> = Vec::with_capacity(bins.len());
        for &(d, n) in bins.iter().filter(|&&(_, n)| n > 0) {
            match merged.last_mut() {
                Some((last, count)) if *last == d => *count += n,
                _ => merged.push((d, n)),
            }
        }
        DelayHistogram { bins: merged }
    }

    /// Distinct delays with their counts, increasing.
    pub fn bins(&self) -> &[(Duration, u64)] {
        &self.bins
    }

    /// Number of delays.
    pub fn count(&self) -> u64 {
        self.bins.iter().map(|&(_, n)| n).sum()
    }

    /// Whether the distribution holds no delay.
    pub fn is_empty(&self) -> bool {
        self.bins.is_empty()
    }

    /// The union of two distributions.
    pub fn merged(&self, other: &DelayHistogram) -> DelayHistogram {
        let (a, b) = (&self.bins, &other.bins);
        let mut bins = Vec::with_capacity(a.len() + b.len());
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            match a[i].0.cmp(&b[j].0) {
                core::cmp::Ordering::Less => {
                    bins.push(a[i]);
                    i += 1;
                }
                core::cmp::Ordering::Greater => {
                    bins.push(b[j]);
                    j += 1;
                }
                core::cmp::Ordering::Equal => {
                    bins.push((a[i].0, a[i].1 + b[j].1));
                    i += 1;
                    j += 1;
                }
            }
        }
        bins.extend_from_slice(&a[i..]);
        bins.extend_from_slice(&b[j..]);
        DelayHistogram { bins }
    }

    /// The value of 1-based `rank` in the sorted delays; `rank` in `1..=count`.
    fn value_at_rank(&self, rank: u64) -> Duration {
        let mut seen = 0;
        for &(d, n) in &self.bins {
            seen += n;
            if seen >= rank {
                return d;
            }
        }
        self.bins.last().map_or(Duration::ZERO, |&(d, _)| d)
    }

    /// The nearest-rank quantile `permille / 1000` (see [`DelayStats`]); zero when empty.
    pub fn quantile_permille(&self, permille: u32) -> Duration {
        let count = self.count();
        if count == 0 {
            return Duration::ZERO;
        }
        let rank = (u128::from(count) * u128::from(permille)).div_ceil(1000);
        self.value_at_rank((rank as u64).clamp(1, count))
    }

    /// Summary statistics (see [`DelayStats`]).
    pub fn stats(&self) -> DelayStats {
        let count = self.count();
        let (Some(&(min, _)), Some(&(max, _))) = (self.bins.first(), self.bins.last()) else {
            return DelayStats::default();
        };
        let sum: u128 = self
            .bins
            .iter()
            .map(|&(d, n)| u128::from(d.0) * u128::from(n))
            .sum();
        DelayStats {
            count,
            min,
            mean: Duration((sum / u128::from(count)) as u64),
            p50: self.quantile_permille(500),
            p90: self.quantile_permille(900),
            p99: self.quantile_permille(990),
            p999: self.quantile_permille(999),
            max,
        }
    }

    /// The empirical CDF as `(delay, fraction of delays <= delay)` points, increasing,
    /// at most `max_points` of them (at least 2 if there are 2 distinct delays), each
    /// exact. With more distinct delays than `max_points`, the points kept are the
    /// smallest and largest delays and the delays at evenly spaced ranks in between
    /// (the `k / (max_points - 1)` nearest-rank quantiles).
    pub fn cdf(&self, max_points: usize) -> Vec<(Duration, f64)> {
        let count = self.count();
        if count == 0 || max_points == 0 {
            return Vec::new();
        }
        let total = count as f64;
        let mut cumulative = Vec::with_capacity(self.bins.len());
        let mut seen = 0;
        for &(d, n) in &self.bins {
            seen += n;
            cumulative.push((d, seen));
        }
        if cumulative.len() <= max_points {
            return cumulative
                .into_iter()
                .map(|(d, c)| (d, c as f64 / total))
                .collect();
        }
        let steps = max_points.max(2) as u128 - 1;
        let mut out: Vec<(Duration, f64)> = Vec::with_capacity(max_points);
        let mut bin = 0;
        for k in 0..=steps {
            let rank = ((u128::from(count) * k).div_ceil(steps) as u64).max(1);
            while cumulative[bin].1 < rank {
                bin += 1;
            }
            let (d, c) = cumulative[bin];
            if out.last().is_none_or(|&(last, _)| last < d) {
                out.push((d, c as f64 / total));
            }
        }
        out
    }
}

impl RunResult {
    /// `[start, end)` of measurement window `k`: `[k * window, (k + 1) * window)`, the
    /// last one cut at `duration`.
    pub fn window_bounds(&self, k: usize) -> (Instant, Instant) {
        let start = Instant(k as u64 * self.window.0);
        let end = Instant::ZERO + self.duration;
        (start, start.saturating_add(self.window).min(end))
    }

    /// The delay CDF of `class` at `link` (see [`DelayHistogram::cdf`]), at most
    /// [`CDF_POINTS`] points. Empty for an unknown link or class.
    pub fn cdf(&self, link: LinkId, class: ClassId) -> Vec<(Duration, f64)> {
        self.links
            .get(link.0 as usize)
            .and_then(|l| l.classes.get(class.index()))
            .map_or_else(Vec::new, |c| c.delays.cdf(CDF_POINTS))
    }

    /// The end-to-end delay CDF of `flow`, at most [`CDF_POINTS`] points. Empty for an
    /// unknown flow.
    pub fn flow_cdf(&self, flow: FlowId) -> Vec<(Duration, f64)> {
        self.flows
            .get(flow.0 as usize)
            .map_or_else(Vec::new, |f| f.delays.cdf(CDF_POINTS))
    }

    /// Whether every link kept its per-packet delay records.
    pub fn per_packet_delays(&self) -> bool {
        self.links.iter().all(|l| l.delay_log.is_per_packet())
    }

    /// Checks every identity of the [module docs](self): per flow (both directions), per
    /// link and class, and that the packets the flows count as queued, in transmission
    /// and propagating are those the ports and links count.
    pub fn check_conservation(&self) -> Result<(), String> {
        for f in &self.flows {
            f.check_conservation()?;
        }
        for l in &self.links {
            l.check_conservation()?;
        }
        let flows = |get: fn(&PathCounts) -> Count| {
            let counts: Vec<Count> = self
                .flows
                .iter()
                .flat_map(|f| [get(&f.forward()), get(&f.reverse)])
                .collect();
            sum_of(&counts)
        };
        let links = |get: fn(&LinkResult) -> Count| {
            let counts: Vec<Count> = self.links.iter().map(get).collect();
            sum_of(&counts)
        };
        let pairs: [(&str, Count, Count); 3] = [
            ("queued", flows(|p| p.queued), links(|l| l.total.queued)),
            (
                "in transmission",
                flows(|p| p.in_transmission),
                links(|l| l.in_transmission),
            ),
            (
                "propagating",
                flows(|p| p.propagating),
                links(|l| l.propagating),
            ),
        ];
        for (what, by_flows, by_links) in pairs {
            if by_flows != by_links {
                return Err(format!(
                    "flows count {by_flows:?} {what}, ports and links count {by_links:?}"
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist(values: &[u64]) -> DelayHistogram {
        DelayHistogram::from_values(&mut values.to_vec())
    }

    #[test]
    fn nearest_rank_percentiles() {
        // 1..=1000 ns: the q-quantile of rank ceil(1000 q) is q*1000 ns.
        let values: Vec<u64> = (1..=1000).rev().collect();
        let s = hist(&values).stats();
        assert_eq!(s.count, 1000);
        assert_eq!(s.min, Duration(1));
        assert_eq!(s.max, Duration(1000));
        assert_eq!(s.p50, Duration(500));
        assert_eq!(s.p90, Duration(900));
        assert_eq!(s.p99, Duration(990));
        assert_eq!(s.p999, Duration(999));
        // (1 + 1000) / 2 = 500.5, rounded down.
        assert_eq!(s.mean, Duration(500));
    }

    #[test]
    fn percentiles_of_few_values() {
        // Three values: ranks ceil(1.5)=2, ceil(2.7)=3, ceil(2.97)=3, ceil(2.997)=3.
        let s = hist(&[30, 10, 20]).stats();
        assert_eq!(s.p50, Duration(20));
        assert_eq!(s.p90, Duration(30));
        assert_eq!(s.p999, Duration(30));
        assert_eq!(s.mean, Duration(20));
        let one = hist(&[7]).stats();
        assert_eq!(
            (one.min, one.p50, one.p999, one.max),
            (Duration(7), Duration(7), Duration(7), Duration(7))
        );
    }

    #[test]
    fn empty_is_all_zero() {
        assert_eq!(DelayHistogram::default().stats(), DelayStats::default());
        assert!(DelayHistogram::default().cdf(10).is_empty());
    }

    #[test]
    fn duplicates_are_counted() {
        let h = hist(&[5, 5, 5, 9]);
        assert_eq!(h.bins(), &[(Duration(5), 3), (Duration(9), 1)]);
        assert_eq!(h.stats().p50, Duration(5));
        assert_eq!(h.quantile_permille(760), Duration(9));
        assert_eq!(h.cdf(10), vec![(Duration(5), 0.75), (Duration(9), 1.0)]);
    }

    #[test]
    fn merge_is_union() {
        let a = hist(&[1, 3, 3, 8]);
        let b = hist(&[2, 3, 9]);
        assert_eq!(a.merged(&b), hist(&[1, 2, 3, 3, 3, 8, 9]));
        let mut bins: Vec<_> = b.bins().iter().chain(a.bins()).copied().collect();
        assert_eq!(DelayHistogram::from_unsorted_bins(&mut bins), a.merged(&b));
    }

    #[test]
    fn thinned_cdf_is_exact_at_its_points() {
        let values: Vec<u64> = (0..10_000).map(|i| (i * 7919) % 10_007).collect();
        let h = hist(&values);
        let mut sorted = values.clone();
        sorted.sort_unstable();
        let cdf = h.cdf(100);
        assert!(cdf.len() <= 100 && cdf.len() >= 90, "{} points", cdf.len());
        assert_eq!(
            cdf.first().map(|p| p.0),
            sorted.first().map(|&v| Duration(v))
        );
        assert_eq!(cdf.last(), Some(&(Duration(*sorted.last().unwrap()), 1.0)));
        for (d, f) in &cdf {
            let below = sorted.iter().filter(|&&v| v <= d.0).count();
            assert_eq!(*f, below as f64 / sorted.len() as f64);
        }
        assert!(cdf.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn window_rate() {
        let w = WindowSample {
            start: Instant::from_millis(200),
            end: Instant::from_millis(400),
            class: ClassId(1),
            value: 25_000,
        };
        assert_eq!(w.rate_bps(), 1_000_000.0);
    }
}
