//! Flow-level outputs: goodput, completion, retransmissions, bursts and TCP traces.
//!
//! | file | header |
//! | --- | --- |
//! | `flows.csv` | [`FLOWS_HEADER`]: one row per flow, in scenario order |
//! | `bursts.csv` | [`BURSTS_HEADER`]: one row per burst, flows in scenario order, bursts in the order they began |
//! | `tcp_trace.csv` | [`TCP_TRACE_HEADER`]: one row per congestion-state sample, flows in scenario order, samples in time order (only when some flow traced) |
//!
//! A flow's **start** is when it sent its first packet; its **end** is its completion
//! (everything its application wrote was delivered, finite writes only) if it
//! completed, else the arrival of its last delivered byte. **Goodput** is
//! `bytes_delivered · 8 / (end − start)` in bit/s: application bytes (over TCP in order
//! and once each; over UDP every byte of every packet that arrived), over the time the
//! flow was active; empty when the flow delivered nothing. A burst's **delay** is
//! `completed − first_sent` (FSC paper §3), empty when the burst did not complete;
//! `last_delivered_s` is when its last delivered byte arrived, also for a burst that
//! lost packets (the FSC paper's delay of a UDP burst with drops is
//! `last_delivered − first_sent`). A flow's **drop rate** is `packets_dropped /
//! packets_sent` over the packets its source sent on its route (retransmissions
//! included; acknowledgements are counted apart), empty when it sent none.

use std::io::{self, Write};
use std::path::Path;

use linkshare_core::units::{Duration, Instant};
use linkshare_sim::result::{FlowResult, RunResult};

use super::{Labels, Written, dur_secs, ratio3, remove_stale, secs};
use crate::WriteError;
use crate::svg::LineChart;
use crate::svg::Series;

/// Header of `flows.csv`.
pub const FLOWS_HEADER: &str = "flow,class,protocol,bytes_delivered,start_s,end_s,goodput_bps,\
                                retransmits,timeouts,fast_retransmits,completed,acks_sent,\
                                acks_dropped,bursts,bursts_completed,mean_burst_delay_s,\
                                packets_sent,packets_dropped,drop_rate";
/// Header of `bursts.csv`.
pub const BURSTS_HEADER: &str = "flow,burst,conn,bytes,begun_s,first_sent_s,completed_s,delay_s,delivered_bytes,\
     last_delivered_s";
/// Header of `tcp_trace.csv`.
pub const TCP_TRACE_HEADER: &str =
    "flow,conn,time_s,cwnd_bytes,ssthresh_bytes,srtt_s,rttvar_s,rto_s";

/// A flow's activity and delivery, as the outputs report them (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Activity {
    /// When the flow sent its first packet.
    pub start: Option<Instant>,
    /// Its completion, or else the arrival of its last delivered byte.
    pub end: Option<Instant>,
    /// Application bytes delivered.
    pub bytes: u64,
    /// Bursts that completed.
    pub bursts_completed: u64,
    /// The mean delay of the completed bursts, rounded down to the ns.
    pub mean_burst_delay: Option<Duration>,
}

impl Activity {
    /// The activity of `flow`.
    pub fn of(flow: &FlowResult) -> Activity {
        let t = &flow.transport;
        let delays: Vec<u64> = t
            .bursts
            .iter()
            .filter_map(|b| Some(b.completed?.since(b.first_sent?).as_nanos()))
            .collect();
        let sum: u128 = delays.iter().map(|&d| u128::from(d)).sum();
        Activity {
            start: t.first_sent,
            end: t.completed.or(t.last_delivered),
            bytes: t.bytes_delivered,
            bursts_completed: delays.len() as u64,
            mean_burst_delay: (!delays.is_empty())
                .then(|| Duration((sum / delays.len() as u128) as u64)),
        }
    }

    /// `end − start`, when both are known and the flow delivered something.
    pub fn active(&self) -> Option<Duration> {
        match (self.start, self.end) {
            (Some(s), Some(e)) if e > s && self.bytes > 0 => Some(e.since(s)),
            _ => None,
        }
    }

    /// Goodput in bit/s (see the module docs).
    pub fn goodput_bps(&self) -> Option<f64> {
        self.active()
            .map(|d| self.bytes as f64 * 8.0 / d.as_secs_f64())
    }

    /// Goodput in bit/s with three decimals, exact (rounded half up).
    fn goodput_cell(&self) -> String {
        self.active().map_or_else(String::new, |d| {
            ratio3(
                u128::from(self.bytes) * 8 * 1_000_000_000,
                u128::from(d.as_nanos()),
            )
        })
    }
}

/// Writes `flows.csv`, `bursts.csv`, and `tcp_trace.csv` with `tcp_cwnd.svg` when some
/// flow recorded TCP samples (else removes those left by an earlier run).
pub fn write_all(
    dir: &Path,
    result: &RunResult,
    classes: &[String],
    title: &str,
    written: &mut Written,
) -> Result<(), WriteError> {
    let labels = Labels::new(result);
    written.stream(dir, "flows.csv", |w| flows(w, result, classes))?;
    written.stream(dir, "bursts.csv", |w| bursts(w, result, &labels))?;
    if result.flows.iter().any(|f| !f.transport.trace.is_empty()) {
        written.stream(dir, "tcp_trace.csv", |w| tcp_trace(w, result, &labels))?;
        written.write(dir, "tcp_cwnd.svg", cwnd(title, result).render().as_bytes())?;
    } else {
        remove_stale(dir, "tcp_trace.csv")?;
        remove_stale(dir, "tcp_cwnd.svg")?;
    }
    Ok(())
}

/// `Some(t)` as seconds, `None` as an empty cell.
fn cell(t: Option<Instant>) -> String {
    t.map_or_else(String::new, |t| secs(t).to_string())
}

/// One row per flow; `classes[i]` is flow `i`'s first-hop class as outputs name it.
pub fn flows(w: &mut dyn Write, result: &RunResult, classes: &[String]) -> io::Result<()> {
    writeln!(w, "{FLOWS_HEADER}")?;
    for (i, f) in result.flows.iter().enumerate() {
        let t = &f.transport;
        let a = Activity::of(f);
        writeln!(
            w,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            f.name,
            classes.get(i).map_or("?", String::as_str),
            t.protocol,
            t.bytes_delivered,
            cell(a.start),
            cell(a.end),
            a.goodput_cell(),
            t.retransmits,
            t.timeouts,
            t.fast_retransmits,
            t.completed.is_some(),
            f.reverse.sent.packets,
            f.reverse.dropped.packets,
            t.bursts.len(),
            a.bursts_completed,
            a.mean_burst_delay
                .map_or_else(String::new, |d| dur_secs(d).to_string()),
            f.sent.packets,
            f.dropped.packets,
            if f.sent.packets == 0 {
                String::new()
            } else {
                format!("{:.6}", f.dropped.packets as f64 / f.sent.packets as f64)
            },
        )?;
    }
    Ok(())
}

/// One row per burst.
pub fn bursts(w: &mut dyn Write, result: &RunResult, labels: &Labels<'_>) -> io::Result<()> {
    writeln!(w, "{BURSTS_HEADER}")?;
    for (i, f) in result.flows.iter().enumerate() {
        for b in &f.transport.bursts {
            let delay = match (b.first_sent, b.completed) {
                (Some(s), Some(c)) => dur_secs(c.since(s)).to_string(),
                _ => String::new(),
            };
            writeln!(
                w,
                "{},{},{},{},{},{},{},{delay},{},{}",
                labels.flow(i),
                b.index,
                b.conn,
                b.bytes,
                secs(b.begun),
                cell(b.first_sent),
                cell(b.completed),
                b.delivered,
                cell(b.last_delivered)
            )?;
        }
    }
    Ok(())
}

/// One row per TCP sample.
pub fn tcp_trace(w: &mut dyn Write, result: &RunResult, labels: &Labels<'_>) -> io::Result<()> {
    writeln!(w, "{TCP_TRACE_HEADER}")?;
    let d = |d: Option<Duration>| d.map_or_else(String::new, |d| dur_secs(d).to_string());
    for (i, f) in result.flows.iter().enumerate() {
        for s in &f.transport.trace {
            writeln!(
                w,
                "{},{},{},{},{},{},{},{}",
                labels.flow(i),
                s.conn,
                secs(s.at),
                s.cwnd,
                s.ssthresh,
                d(s.srtt),
                d(s.rttvar),
                dur_secs(s.rto)
            )?;
        }
    }
    Ok(())
}

/// The congestion window of every traced connection over time, in kB (10^3 bytes), as
/// steps; one line per flow and connection (`flow` or `flow#conn` beyond connection 0).
pub fn cwnd(title: &str, result: &RunResult) -> LineChart {
    let labels = Labels::new(result);
    let mut chart = LineChart::new(
        format!("TCP congestion window: {title}"),
        "time (s)",
        "cwnd (kB)",
    );
    chart.y_axis.include_zero = true;
    chart.x_axis.range = Some((0.0, result.duration.as_secs_f64()));
    for (i, f) in result.flows.iter().enumerate() {
        let mut conns: Vec<u32> = f.transport.trace.iter().map(|s| s.conn).collect();
        conns.sort_unstable();
        conns.dedup();
        for conn in conns {
            let points: Vec<(f64, f64)> = f
                .transport
                .trace
                .iter()
                .filter(|s| s.conn == conn)
                .map(|s| (s.at.as_secs_f64(), s.cwnd as f64 / 1e3))
                .collect();
            let name = if conn == 0 {
                labels.flow(i).to_owned()
            } else {
                format!("{}#{conn}", labels.flow(i))
            };
            chart.series.push(Series::steps(name, points));
        }
    }
    chart
}
