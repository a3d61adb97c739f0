//! A run's tables as typed columns: what the Python module turns into pandas
//! DataFrames, without writing or parsing CSV.
//!
//! Each [`Frame`] of a run has the name, the columns and the rows of the CSV file of
//! the same name (see [`crate::csv`] and [`crate::flows`]), in the same order, but typed:
//! counts and bytes are integers, times are seconds and rates bit/s as `f64`, names
//! are categories, and what a CSV leaves empty is missing (`None`, or NaN for floats).
//! Floats are not rounded: a time is its nanoseconds / 10^9 (the double nearest to the
//! CSV's exact nine decimals), a rate its exact quotient in double precision where the
//! CSV rounds to three decimals.
//!
//! The same types carry the sweep table ([`Frame::write_csv`] writes it).

use std::collections::BTreeMap;
use std::io::{self, Write};

use linkshare_core::hierarchy::ClassId;
use linkshare_core::sched::DropReason;
use linkshare_core::units::{Duration, Instant};
use linkshare_sim::result::{DelayLog, LinkResult, RunResult, WindowSample};

use crate::Labels;
use crate::flows::Activity;

/// A table: named, typed columns of equal length.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Frame {
    /// The columns, in order.
    pub columns: Vec<Column>,
}

/// One column.
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    /// Its name (the CSV header's).
    pub name: String,
    /// Its values.
    pub values: Values,
}

/// The values of a column, one per row.
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    /// Counts and sizes.
    Int(Vec<Option<i64>>),
    /// Seconds, bit/s; NaN when missing.
    Float(Vec<f64>),
    /// Yes or no.
    Bool(Vec<Option<bool>>),
    /// Names: an index into `labels` per row.
    Text {
        /// The index of each row's label.
        codes: Vec<Option<u32>>,
        /// The distinct labels, in order of first appearance.
        labels: Vec<String>,
    },
}

impl Values {
    /// Number of rows.
    pub fn len(&self) -> usize {
        match self {
            Values::Int(v) => v.len(),
            Values::Float(v) => v.len(),
            Values::Bool(v) => v.len(),
            Values::Text { codes, .. } => codes.len(),
        }
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Row `i` as a CSV cell: integers and booleans as written, floats in the shortest
    /// form that reads back the same double, missing values empty, text quoted when it
    /// holds a comma, a quote or a line break.
    fn cell(&self, i: usize) -> String {
        match self {
            Values::Int(v) => v[i].map_or_else(String::new, |x| x.to_string()),
            Values::Float(v) if v[i].is_nan() => String::new(),
            Values::Float(v) => v[i].to_string(),
            Values::Bool(v) => v[i].map_or_else(String::new, |b| b.to_string()),
            Values::Text { codes, labels } => codes[i]
                .and_then(|c| labels.get(c as usize))
                .map_or_else(String::new, |s| quote(s)),
        }
    }
}

/// `s` as a CSV cell (RFC 4180).
fn quote(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

impl Frame {
    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |c| c.values.len())
    }

    /// Writes the frame as CSV with a header line.
    pub fn write_csv(&self, w: &mut dyn Write) -> io::Result<()> {
        let header: Vec<String> = self.columns.iter().map(|c| quote(&c.name)).collect();
        writeln!(w, "{}", header.join(","))?;
        for i in 0..self.rows() {
            let cells: Vec<String> = self.columns.iter().map(|c| c.values.cell(i)).collect();
            writeln!(w, "{}", cells.join(","))?;
        }
        Ok(())
    }

    fn push(&mut self, name: &str, values: Values) {
        self.columns.push(Column {
            name: name.to_owned(),
            values,
        });
    }
}

/// Builds a text column, giving each distinct label a code in order of first
/// appearance.
#[derive(Debug, Default)]
pub struct TextColumn {
    codes: Vec<Option<u32>>,
    labels: Vec<String>,
    index: BTreeMap<String, u32>,
}

impl TextColumn {
    /// Appends `label` (missing when `None`).
    pub fn push(&mut self, label: Option<&str>) {
        let code = label.map(|l| match self.index.get(l) {
            Some(&c) => c,
            None => {
                let c = self.labels.len() as u32;
                self.labels.push(l.to_owned());
                self.index.insert(l.to_owned(), c);
                c
            }
        });
        self.codes.push(code);
    }

    /// The column's values.
    pub fn finish(self) -> Values {
        Values::Text {
            codes: self.codes,
            labels: self.labels,
        }
    }
}

/// Seconds since the start of the run: the double nearest to the exact value for runs
/// shorter than 2^53 ns (104 days), whose nanoseconds are exact doubles.
fn s(t: Instant) -> f64 {
    t.as_nanos() as f64 / 1e9
}

/// Seconds of a duration.
fn ds(d: Duration) -> f64 {
    d.as_nanos() as f64 / 1e9
}

/// Seconds, NaN when missing.
fn opt_s(t: Option<Instant>) -> f64 {
    t.map_or(f64::NAN, s)
}

/// `bytes` in `len` as bit/s.
fn rate(bytes: u64, len: Duration) -> f64 {
    if len.as_nanos() == 0 {
        0.0
    } else {
        bytes as f64 * 8.0 * 1e9 / len.as_nanos() as f64
    }
}

/// A count as an `i64` cell (saturating: counts never come near 2^63).
fn int(x: u64) -> Option<i64> {
    Some(i64::try_from(x).unwrap_or(i64::MAX))
}

/// Every table of `result` by its CSV file's stem, in the order [`crate::write_run`]
/// writes them: `throughput`, `flow_throughput`, `delay` (or `delay_histogram`),
/// `backlog`, `drops`, `flows`, `bursts`, and `tcp_trace` when some flow traced.
/// `classes[i]` is flow `i`'s first-hop class as outputs name it (the summary's).
pub fn all(result: &RunResult, classes: &[String]) -> Vec<(&'static str, Frame)> {
    let labels = Labels::new(result);
    let mut out = vec![
        ("throughput", throughput(result, &labels)),
        ("flow_throughput", flow_throughput(result, &labels)),
    ];
    if result.per_packet_delays() {
        out.push(("delay", delay(result, &labels)));
    } else {
        out.push(("delay_histogram", delay_histogram(result, &labels)));
    }
    out.push(("backlog", backlog(result, &labels)));
    out.push(("drops", drops(result, &labels)));
    out.push(("flows", flows(result, classes)));
    out.push(("bursts", bursts(result, &labels)));
    if result.flows.iter().any(|f| !f.transport.trace.is_empty()) {
        out.push(("tcp_trace", tcp_trace(result, &labels)));
    }
    out
}

/// Window samples of every link: `window_start_s`, `window_end_s`, `class`, then the
/// value under `value_name` (and `rate_bps` when `with_rate`).
fn windows(
    result: &RunResult,
    labels: &Labels<'_>,
    samples: impl Fn(&LinkResult) -> &[WindowSample],
    value_name: &str,
    with_rate: bool,
) -> Frame {
    let (mut start, mut end, mut class, mut value, mut rates) = (
        Vec::new(),
        Vec::new(),
        TextColumn::default(),
        Vec::new(),
        Vec::new(),
    );
    for (i, link) in result.links.iter().enumerate() {
        let names = class_names(result, labels, i);
        for w in samples(link) {
            start.push(s(w.start));
            end.push(s(w.end));
            class.push(names.get(w.class.index()).map(String::as_str));
            value.push(int(w.value));
            rates.push(rate(w.value, w.end.since(w.start)));
        }
    }
    let mut f = Frame::default();
    f.push("window_start_s", Values::Float(start));
    f.push("window_end_s", Values::Float(end));
    f.push("class", class.finish());
    f.push(value_name, Values::Int(value));
    if with_rate {
        f.push("rate_bps", Values::Float(rates));
    }
    f
}

/// The output names of every class of link `i`, by class id.
fn class_names(result: &RunResult, labels: &Labels<'_>, i: usize) -> Vec<String> {
    let n = result.links.get(i).map_or(0, |l| l.classes.len());
    (0..n).map(|c| labels.class(i, ClassId(c as u32))).collect()
}

/// `throughput.csv`: bytes sent per leaf per window and their rate.
pub fn throughput(result: &RunResult, labels: &Labels<'_>) -> Frame {
    windows(result, labels, |l| &l.throughput, "bytes", true)
}

/// `backlog.csv`: the largest backlog of each leaf in each window.
pub fn backlog(result: &RunResult, labels: &Labels<'_>) -> Frame {
    windows(result, labels, |l| &l.backlog, "max_backlog_bytes", false)
}

/// `flow_throughput.csv`: bytes delivered to each flow's sink per window.
pub fn flow_throughput(result: &RunResult, labels: &Labels<'_>) -> Frame {
    let (mut start, mut end, mut flow, mut bytes, mut rates) = (
        Vec::new(),
        Vec::new(),
        TextColumn::default(),
        Vec::new(),
        Vec::new(),
    );
    let windows = result.flows.first().map_or(0, |f| f.throughput.len());
    for k in 0..windows {
        let (a, b) = result.window_bounds(k);
        for (i, f) in result.flows.iter().enumerate() {
            let n = f.throughput.get(k).copied().unwrap_or(0);
            start.push(s(a));
            end.push(s(b));
            flow.push(Some(labels.flow(i)));
            bytes.push(int(n));
            rates.push(rate(n, b.since(a)));
        }
    }
    let mut f = Frame::default();
    f.push("window_start_s", Values::Float(start));
    f.push("window_end_s", Values::Float(end));
    f.push("flow", flow.finish());
    f.push("bytes", Values::Int(bytes));
    f.push("rate_bps", Values::Float(rates));
    f
}

/// `delay.csv`: one row per packet and port, in order of departure per link.
pub fn delay(result: &RunResult, labels: &Labels<'_>) -> Frame {
    let (mut class, mut flow) = (TextColumn::default(), TextColumn::default());
    let (mut arrival, mut departure, mut delay) = (Vec::new(), Vec::new(), Vec::new());
    for (i, link) in result.links.iter().enumerate() {
        let DelayLog::Packets(records) = &link.delay_log else {
            continue;
        };
        let names = class_names(result, labels, i);
        for r in records {
            class.push(names.get(r.class.index()).map(String::as_str));
            flow.push(Some(labels.flow(r.flow.0 as usize)));
            arrival.push(s(r.arrival));
            departure.push(s(r.departure));
            delay.push(ds(r.delay()));
        }
    }
    let mut f = Frame::default();
    f.push("class", class.finish());
    f.push("flow", flow.finish());
    f.push("arrival_s", Values::Float(arrival));
    f.push("departure_s", Values::Float(departure));
    f.push("delay_s", Values::Float(delay));
    f
}

/// `delay_histogram.csv`: every distinct delay of every leaf with its count.
pub fn delay_histogram(result: &RunResult, labels: &Labels<'_>) -> Frame {
    let (mut class, mut delay, mut count) = (TextColumn::default(), Vec::new(), Vec::new());
    for (i, link) in result.links.iter().enumerate() {
        for c in link.classes.iter().filter(|c| c.is_leaf) {
            let name = labels.class(i, c.id);
            for &(d, n) in c.delays.bins() {
                class.push(Some(&name));
                delay.push(ds(d));
                count.push(int(n));
            }
        }
    }
    let mut f = Frame::default();
    f.push("class", class.finish());
    f.push("delay_s", Values::Float(delay));
    f.push("count", Values::Int(count));
    f
}

/// `drops.csv`: drops of every leaf for every reason, zeros included.
pub fn drops(result: &RunResult, labels: &Labels<'_>) -> Frame {
    let (mut class, mut reason) = (TextColumn::default(), TextColumn::default());
    let (mut packets, mut bytes) = (Vec::new(), Vec::new());
    for (i, link) in result.links.iter().enumerate() {
        for c in link.classes.iter().filter(|c| c.is_leaf) {
            let name = labels.class(i, c.id);
            for r in DropReason::ALL {
                let d = c.counters.dropped(r);
                class.push(Some(&name));
                reason.push(Some(r.as_str()));
                packets.push(int(d.packets));
                bytes.push(int(d.bytes));
            }
        }
    }
    let mut f = Frame::default();
    f.push("class", class.finish());
    f.push("reason", reason.finish());
    f.push("packets", Values::Int(packets));
    f.push("bytes", Values::Int(bytes));
    f
}

/// `flows.csv`: one row per flow; `classes[i]` is flow `i`'s first-hop class.
pub fn flows(result: &RunResult, classes: &[String]) -> Frame {
    let (mut flow, mut class, mut protocol) = (
        TextColumn::default(),
        TextColumn::default(),
        TextColumn::default(),
    );
    let mut ints: [Vec<Option<i64>>; 10] = Default::default();
    let (mut start, mut end, mut goodput, mut mean_burst, mut drop_rate) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut completed = Vec::new();
    for (i, f) in result.flows.iter().enumerate() {
        let t = &f.transport;
        let a = Activity::of(f);
        flow.push(Some(&f.name));
        class.push(Some(classes.get(i).map_or("?", String::as_str)));
        protocol.push(Some(t.protocol));
        start.push(opt_s(a.start));
        end.push(opt_s(a.end));
        goodput.push(a.goodput_bps().unwrap_or(f64::NAN));
        completed.push(Some(t.completed.is_some()));
        mean_burst.push(a.mean_burst_delay.map_or(f64::NAN, ds));
        drop_rate.push(if f.sent.packets == 0 {
            f64::NAN
        } else {
            f.dropped.packets as f64 / f.sent.packets as f64
        });
        let counts = [
            t.bytes_delivered,
            t.retransmits,
            t.timeouts,
            t.fast_retransmits,
            f.reverse.sent.packets,
            f.reverse.dropped.packets,
            t.bursts.len() as u64,
            a.bursts_completed,
            f.sent.packets,
            f.dropped.packets,
        ];
        for (col, x) in ints.iter_mut().zip(counts) {
            col.push(int(x));
        }
    }
    let [
        delivered,
        retransmits,
        timeouts,
        fast,
        acks,
        acks_dropped,
        bursts,
        bursts_done,
        sent,
        dropped,
    ] = ints;
    let mut f = Frame::default();
    f.push("flow", flow.finish());
    f.push("class", class.finish());
    f.push("protocol", protocol.finish());
    f.push("bytes_delivered", Values::Int(delivered));
    f.push("start_s", Values::Float(start));
    f.push("end_s", Values::Float(end));
    f.push("goodput_bps", Values::Float(goodput));
    f.push("retransmits", Values::Int(retransmits));
    f.push("timeouts", Values::Int(timeouts));
    f.push("fast_retransmits", Values::Int(fast));
    f.push("completed", Values::Bool(completed));
    f.push("acks_sent", Values::Int(acks));
    f.push("acks_dropped", Values::Int(acks_dropped));
    f.push("bursts", Values::Int(bursts));
    f.push("bursts_completed", Values::Int(bursts_done));
    f.push("mean_burst_delay_s", Values::Float(mean_burst));
    f.push("packets_sent", Values::Int(sent));
    f.push("packets_dropped", Values::Int(dropped));
    f.push("drop_rate", Values::Float(drop_rate));
    f
}

/// `bursts.csv`: one row per application burst.
pub fn bursts(result: &RunResult, labels: &Labels<'_>) -> Frame {
    let mut flow = TextColumn::default();
    let (mut burst, mut conn, mut bytes, mut delivered) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut begun, mut first, mut completed, mut delay, mut last) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (i, f) in result.flows.iter().enumerate() {
        for b in &f.transport.bursts {
            flow.push(Some(labels.flow(i)));
            burst.push(int(u64::from(b.index)));
            conn.push(int(u64::from(b.conn)));
            bytes.push(int(b.bytes));
            begun.push(s(b.begun));
            first.push(opt_s(b.first_sent));
            completed.push(opt_s(b.completed));
            delay.push(match (b.first_sent, b.completed) {
                (Some(a), Some(c)) => ds(c.since(a)),
                _ => f64::NAN,
            });
            delivered.push(int(b.delivered));
            last.push(opt_s(b.last_delivered));
        }
    }
    let mut f = Frame::default();
    f.push("flow", flow.finish());
    f.push("burst", Values::Int(burst));
    f.push("conn", Values::Int(conn));
    f.push("bytes", Values::Int(bytes));
    f.push("begun_s", Values::Float(begun));
    f.push("first_sent_s", Values::Float(first));
    f.push("completed_s", Values::Float(completed));
    f.push("delay_s", Values::Float(delay));
    f.push("delivered_bytes", Values::Int(delivered));
    f.push("last_delivered_s", Values::Float(last));
    f
}

/// `tcp_trace.csv`: one row per congestion-state sample.
pub fn tcp_trace(result: &RunResult, labels: &Labels<'_>) -> Frame {
    let mut flow = TextColumn::default();
    let (mut conn, mut cwnd, mut ssthresh) = (Vec::new(), Vec::new(), Vec::new());
    let (mut time, mut srtt, mut rttvar, mut rto) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (i, f) in result.flows.iter().enumerate() {
        for x in &f.transport.trace {
            flow.push(Some(labels.flow(i)));
            conn.push(int(u64::from(x.conn)));
            time.push(s(x.at));
            cwnd.push(int(x.cwnd));
            ssthresh.push(int(x.ssthresh));
            srtt.push(x.srtt.map_or(f64::NAN, ds));
            rttvar.push(x.rttvar.map_or(f64::NAN, ds));
            rto.push(ds(x.rto));
        }
    }
    let mut f = Frame::default();
    f.push("flow", flow.finish());
    f.push("conn", Values::Int(conn));
    f.push("time_s", Values::Float(time));
    f.push("cwnd_bytes", Values::Int(cwnd));
    f.push("ssthresh_bytes", Values::Int(ssthresh));
    f.push("srtt_s", Values::Float(srtt));
    f.push("rttvar_s", Values::Float(rttvar));
    f.push("rto_s", Values::Float(rto));
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use linkshare_core::units::Duration;

    /// Each frame has its CSV file's columns, in the same order: a column added to a
    /// file and not to its frame (or the reverse) fails here, not in Python.
    #[test]
    fn every_frame_has_its_csv_header() {
        let empty = RunResult {
            seed: 0,
            duration: Duration::from_secs(1),
            window: Duration::from_millis(10),
            links: Vec::new(),
            flows: Vec::new(),
            events: 0,
            packet_hops: 0,
            stopped: None,
        };
        let labels = Labels::new(&empty);
        let frames = [
            (throughput(&empty, &labels), crate::csv::THROUGHPUT_HEADER),
            (
                flow_throughput(&empty, &labels),
                crate::csv::FLOW_THROUGHPUT_HEADER,
            ),
            (delay(&empty, &labels), crate::csv::DELAY_HEADER),
            (
                delay_histogram(&empty, &labels),
                crate::csv::DELAY_HISTOGRAM_HEADER,
            ),
            (backlog(&empty, &labels), crate::csv::BACKLOG_HEADER),
            (drops(&empty, &labels), crate::csv::DROPS_HEADER),
            (flows(&empty, &[]), crate::flows::FLOWS_HEADER),
            (bursts(&empty, &labels), crate::flows::BURSTS_HEADER),
            (tcp_trace(&empty, &labels), crate::flows::TCP_TRACE_HEADER),
        ];
        for (frame, header) in frames {
            let names: Vec<&str> = frame.columns.iter().map(|c| c.name.as_str()).collect();
            assert_eq!(names.join(","), header);
        }
    }

    #[test]
    fn text_codes_follow_first_appearance() {
        let mut t = TextColumn::default();
        for l in [Some("b"), Some("a"), None, Some("b")] {
            t.push(l);
        }
        assert_eq!(
            t.finish(),
            Values::Text {
                codes: vec![Some(0), Some(1), None, Some(0)],
                labels: vec!["b".into(), "a".into()],
            }
        );
    }

    #[test]
    fn csv_cells() {
        let mut f = Frame::default();
        f.push("n", Values::Int(vec![Some(3), None]));
        f.push("x", Values::Float(vec![0.1, f64::NAN]));
        f.push("ok", Values::Bool(vec![Some(true), None]));
        let mut t = TextColumn::default();
        t.push(Some("{ limit = 1, overflow = \"push-out\" }"));
        t.push(None);
        f.push("v", t.finish());
        let mut out = Vec::new();
        f.write_csv(&mut out).expect("in memory");
        assert_eq!(
            String::from_utf8(out).expect("utf-8"),
            "n,x,ok,v\n3,0.1,true,\"{ limit = 1, overflow = \"\"push-out\"\" }\"\n,,,\n"
        );
    }

    #[test]
    fn times_are_the_doubles_nearest_to_the_exact_decimals() {
        for ns in [0u64, 1, 1_500_000_001, 123_456_789_012, (1 << 53) - 1] {
            let text = crate::Secs(ns).to_string();
            assert_eq!(
                s(Instant(ns)),
                text.parse::<f64>().expect("a number"),
                "{text}"
            );
        }
    }
}
