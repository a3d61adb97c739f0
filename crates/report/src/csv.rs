//! Tidy CSV files: one observation per row, a fixed header, times in seconds with nine
//! decimals (exact nanoseconds). Class and flow names contain no commas or quotes (the
//! scenario loader only accepts letters, digits, `_`, `-`, `.`), so no cell needs quoting.
//!
//! | file | header |
//! | --- | --- |
//! | `throughput.csv` | `window_start_s,window_end_s,class,bytes,rate_bps` |
//! | `flow_throughput.csv` | `window_start_s,window_end_s,flow,bytes,rate_bps` (bytes delivered to the sink) |
//! | `delay.csv` | `class,flow,arrival_s,departure_s,delay_s` |
//! | `delay_histogram.csv` | `class,delay_s,count` (instead of `delay.csv` for big runs, see [`crate::outputs`]) |
//! | `backlog.csv` | `window_start_s,window_end_s,class,max_backlog_bytes` |
//! | `drops.csv` | `class,reason,packets,bytes` |
//! | `service.csv`, `ratios.csv` | see [`crate::service`] |
//!
//! Rows go link by link (in scenario order), and within a link in the order the
//! simulator reports them: windows in time order then classes in id order; delay records
//! in order of departure.
//!
//! The rows are written with `writeln!` rather than the `csv` crate: no cell needs
//! quoting, and the crate, which wants every number formatted into a string first, wrote
//! `delay.csv` about 40 % slower in a measurement (`BENCHMARKS.md`, "CSV: hand-written
//! writers against the `csv` crate").

use std::io::{self, Write};
use std::path::Path;

use linkshare_core::sched::DropReason;
use linkshare_sim::result::{RunResult, WindowSample};

use super::{Labels, Written, dur_secs, ratio3, remove_stale, secs};
use crate::outputs::{DelayFile, Output, Outputs};
use crate::{WriteError, service};

/// Header of `throughput.csv`.
pub const THROUGHPUT_HEADER: &str = "window_start_s,window_end_s,class,bytes,rate_bps";
/// Header of `flow_throughput.csv`.
pub const FLOW_THROUGHPUT_HEADER: &str = "window_start_s,window_end_s,flow,bytes,rate_bps";
/// Header of `delay.csv`.
pub const DELAY_HEADER: &str = "class,flow,arrival_s,departure_s,delay_s";
/// Header of `delay_histogram.csv`.
pub const DELAY_HISTOGRAM_HEADER: &str = "class,delay_s,count";
/// Header of `backlog.csv`.
pub const BACKLOG_HEADER: &str = "window_start_s,window_end_s,class,max_backlog_bytes";
/// Header of `drops.csv`.
pub const DROPS_HEADER: &str = "class,reason,packets,bytes";

/// Writes the CSVs of a run that `outputs` chooses to `dir`. The delay file not written
/// is removed if an earlier run left it, so a directory never holds both.
pub fn write_all(
    dir: &Path,
    result: &RunResult,
    outputs: &Outputs,
    written: &mut Written,
) -> Result<(), WriteError> {
    let labels = Labels::new(result);
    if outputs.contains(Output::Throughput) {
        written.stream(dir, "throughput.csv", |w| throughput(w, result, &labels))?;
    }
    if outputs.contains(Output::FlowThroughput) {
        written.stream(dir, "flow_throughput.csv", |w| {
            flow_throughput(w, result, &labels)
        })?;
    }
    match outputs.delay_file(result) {
        DelayFile::PerPacket => {
            remove_stale(dir, "delay_histogram.csv")?;
            written.stream(dir, "delay.csv", |w| delays(w, result, &labels))?;
        }
        DelayFile::Histogram => {
            remove_stale(dir, "delay.csv")?;
            written.stream(dir, "delay_histogram.csv", |w| {
                delay_histogram(w, result, &labels)
            })?;
        }
        DelayFile::None => {
            remove_stale(dir, "delay.csv")?;
            remove_stale(dir, "delay_histogram.csv")?;
        }
    }
    if outputs.contains(Output::Backlog) {
        written.stream(dir, "backlog.csv", |w| backlog(w, result, &labels))?;
    }
    if outputs.contains(Output::Drops) {
        written.stream(dir, "drops.csv", |w| drops(w, result, &labels))?;
    }
    if outputs.contains(Output::Service) {
        written.stream(dir, "service.csv", |w| {
            service::write_service(w, result, &labels)
        })?;
    }
    if outputs.contains(Output::Ratios) {
        if service::pairs(result).is_empty() {
            remove_stale(dir, "ratios.csv")?;
        } else {
            written.stream(dir, "ratios.csv", |w| {
                service::write_ratios(w, result, &labels)
            })?;
        }
    }
    Ok(())
}

/// Bytes sent per leaf per window, and the rate they make (bit/s, three decimals).
pub fn throughput(w: &mut dyn Write, result: &RunResult, labels: &Labels<'_>) -> io::Result<()> {
    writeln!(w, "{THROUGHPUT_HEADER}")?;
    for (i, link) in result.links.iter().enumerate() {
        for s in &link.throughput {
            let len = s.end.since(s.start).as_nanos();
            let rate = ratio3(u128::from(s.value) * 8 * 1_000_000_000, u128::from(len));
            window_row(w, s, &labels.class(i, s.class))?;
            writeln!(w, ",{},{rate}", s.value)?;
        }
    }
    Ok(())
}

/// Bytes delivered to each flow's sink per window, and the rate they make (bit/s, three
/// decimals). Rows: windows in time order, then flows in scenario order.
pub fn flow_throughput(
    w: &mut dyn Write,
    result: &RunResult,
    labels: &Labels<'_>,
) -> io::Result<()> {
    writeln!(w, "{FLOW_THROUGHPUT_HEADER}")?;
    let windows = result.flows.first().map_or(0, |f| f.throughput.len());
    for k in 0..windows {
        let (start, end) = result.window_bounds(k);
        let len = end.since(start).as_nanos();
        for (i, flow) in result.flows.iter().enumerate() {
            let bytes = flow.throughput[k];
            let rate = ratio3(u128::from(bytes) * 8 * 1_000_000_000, u128::from(len));
            writeln!(
                w,
                "{},{},{},{bytes},{rate}",
                secs(start),
                secs(end),
                labels.flow(i)
            )?;
        }
    }
    Ok(())
}

/// One row per packet per port, read from wherever the run kept the records.
pub fn delays(w: &mut dyn Write, result: &RunResult, labels: &Labels<'_>) -> io::Result<()> {
    writeln!(w, "{DELAY_HEADER}")?;
    for (i, link) in result.links.iter().enumerate() {
        let names: Vec<String> = (0..link.classes.len())
            .map(|c| labels.class(i, linkshare_core::hierarchy::ClassId(c as u32)))
            .collect();
        let mut written = Ok(());
        link.delay_log.for_each(|r| {
            if written.is_ok() {
                let class = names.get(r.class.index()).map_or("?", String::as_str);
                written = writeln!(
                    w,
                    "{class},{},{},{},{}",
                    labels.flow(r.flow.0 as usize),
                    secs(r.arrival),
                    secs(r.departure),
                    dur_secs(r.delay())
                );
            }
        })?;
        written?;
    }
    Ok(())
}

/// The exact delay distribution of every leaf: each distinct delay with its count.
pub fn delay_histogram(
    w: &mut dyn Write,
    result: &RunResult,
    labels: &Labels<'_>,
) -> io::Result<()> {
    writeln!(w, "{DELAY_HISTOGRAM_HEADER}")?;
    for (i, link) in result.links.iter().enumerate() {
        for c in link.classes.iter().filter(|c| c.is_leaf) {
            let name = labels.class(i, c.id);
            for &(d, n) in c.delays.bins() {
                writeln!(w, "{name},{},{n}", dur_secs(d))?;
            }
        }
    }
    Ok(())
}

/// The largest backlog of each leaf in each window.
pub fn backlog(w: &mut dyn Write, result: &RunResult, labels: &Labels<'_>) -> io::Result<()> {
    writeln!(w, "{BACKLOG_HEADER}")?;
    for (i, link) in result.links.iter().enumerate() {
        for s in &link.backlog {
            window_row(w, s, &labels.class(i, s.class))?;
            writeln!(w, ",{}", s.value)?;
        }
    }
    Ok(())
}

/// Drops of every leaf for every reason (zeros included, so the table is complete).
pub fn drops(w: &mut dyn Write, result: &RunResult, labels: &Labels<'_>) -> io::Result<()> {
    writeln!(w, "{DROPS_HEADER}")?;
    for (i, link) in result.links.iter().enumerate() {
        for c in link.classes.iter().filter(|c| c.is_leaf) {
            let name = labels.class(i, c.id);
            for r in DropReason::ALL {
                let d = c.counters.dropped(r);
                writeln!(w, "{name},{},{},{}", r.as_str(), d.packets, d.bytes)?;
            }
        }
    }
    Ok(())
}

/// `start,end,class` without a newline.
fn window_row(w: &mut dyn Write, s: &WindowSample, class: &str) -> io::Result<()> {
    write!(w, "{},{},{class}", secs(s.start), secs(s.end))
}

/// `compare.csv`: one row per leaf class, and for each scheduler (in `runs` order) the
/// delivered rate in bit/s (three decimals) and the mean and 99th-percentile delay at
/// the port in seconds. Columns: `class`, then `<scheduler>_rate_bps`,
/// `<scheduler>_delay_mean_s`, `<scheduler>_delay_p99_s` per scheduler.
pub fn compare(runs: &[(String, RunResult)]) -> String {
    let mut out = String::from("class");
    for (name, _) in runs {
        out.push_str(&format!(
            ",{name}_rate_bps,{name}_delay_mean_s,{name}_delay_p99_s"
        ));
    }
    out.push('\n');
    for (link, class, label) in super::table::compare_rows(runs) {
        out.push_str(&label);
        for (_, result) in runs {
            match result.links.get(link).and_then(|l| l.classes.get(class)) {
                Some(c) => {
                    let rate = ratio3(
                        u128::from(c.delivered.bytes) * 8 * 1_000_000_000,
                        u128::from(result.duration.as_nanos()),
                    );
                    out.push_str(&format!(
                        ",{rate},{},{}",
                        dur_secs(c.delay.mean),
                        dur_secs(c.delay.p99)
                    ));
                }
                None => out.push_str(",,,"),
            }
        }
        out.push('\n');
    }
    out
}
