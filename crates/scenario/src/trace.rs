//! Packet traces in CSV: `time_s,flow,size_bytes`.
//!
//! The first line that is not blank and not a `#` comment must be exactly the header
//! `time_s,flow,size_bytes` (spaces around cells are ignored, as are Windows line
//! endings). Each following line is one packet: `time_s` is a non-negative decimal number
//! of seconds (read exactly, to the nanosecond), counted from the start of the flow's
//! first ON interval; `flow` is the name of the flow that sends it; `size_bytes` is its
//! length on the wire, a positive integer. A file may hold the packets of several flows;
//! each flow replays its own rows, which must be in non-decreasing time order.

use std::sync::Arc;

use linkshare_core::echo::echo;
use linkshare_core::hierarchy::Origin;
use linkshare_core::units::Duration;

use super::problem::Problem;

/// The header every trace starts with.
pub const HEADER: &str = "time_s,flow,size_bytes";

/// At most this many problems are reported per trace file.
const MAX_PROBLEMS: usize = 20;

/// One packet of a trace file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// 1-based line in the file.
    pub line: u32,
    /// Send time, from the start of the flow's first ON interval.
    pub at: Duration,
    /// The flow that sends it.
    pub flow: String,
    /// Length on the wire, in bytes.
    pub size: u32,
}

/// Parses a whole trace: its rows, or every problem (at most 20, the last saying how many
/// more there were). `file` names it in problems, `field` is the scenario field that
/// refers to it.
pub fn parse(text: &str, file: &Arc<str>, field: &str) -> Result<Vec<Row>, Vec<Problem>> {
    let mut problems = Vec::new();
    let mut rows = Vec::new();
    let mut header_seen = false;
    let mut report = |line: usize, column: usize, problem: String, fix: &str| {
        problems.push(Problem {
            origin: Some(Origin {
                file: file.clone(),
                line: u32::try_from(line).unwrap_or(u32::MAX),
                column: u32::try_from(column).unwrap_or(u32::MAX),
            }),
            field: Some(field.to_owned()),
            problem,
            fix: fix.to_owned(),
        });
    };
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let content = raw.trim();
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        if !header_seen {
            header_seen = true;
            let cells: Vec<&str> = content.split(',').map(str::trim).collect();
            if cells.join(",") != HEADER {
                report(
                    line,
                    1,
                    format!("the trace's header is {:?}", echo(content)),
                    "start the trace with the header line `time_s,flow,size_bytes`",
                );
                break;
            }
            continue;
        }
        let cells: Vec<(usize, &str)> = cells_with_columns(raw);
        if cells.len() != 3 {
            report(
                line,
                1,
                format!("the row has {} cells", cells.len()),
                "write three cells per row: time_s,flow,size_bytes, e.g. `0.5,voice,200`",
            );
            continue;
        }
        let at = seconds(cells[0].1);
        if at.is_none() {
            report(
                line,
                cells[0].0,
                format!("time_s {:?} is not a time in seconds", echo(cells[0].1)),
                "write a non-negative decimal number of seconds such as 0.25 (at most 9 decimals)",
            );
        }
        let flow = cells[1].1;
        if flow.is_empty() {
            report(
                line,
                cells[1].0,
                "the flow cell is empty".to_owned(),
                "write the name of the flow that sends the packet",
            );
        }
        let size = cells[2].1.parse::<u32>().ok().filter(|&s| s > 0);
        if size.is_none() {
            report(
                line,
                cells[2].0,
                format!(
                    "size_bytes {:?} is not a positive integer",
                    echo(cells[2].1)
                ),
                "write the packet's length in bytes, e.g. 1000",
            );
        }
        if let (Some(at), Some(size), false) = (at, size, flow.is_empty()) {
            rows.push(Row {
                line: u32::try_from(line).unwrap_or(u32::MAX),
                at,
                flow: flow.to_owned(),
                size,
            });
        }
    }
    if !header_seen {
        report(
            1,
            1,
            "the trace is empty".to_owned(),
            "start the trace with the header line `time_s,flow,size_bytes`, then one row per packet",
        );
    }
    if problems.is_empty() {
        Ok(rows)
    } else {
        let more = problems.len().saturating_sub(MAX_PROBLEMS);
        problems.truncate(MAX_PROBLEMS);
        if more > 0
            && let Some(last) = problems.last_mut()
        {
            last.fix = format!(
                "{} ({more} more problems in this file are not shown)",
                last.fix
            );
        }
        Err(problems)
    }
}

/// The cells of a CSV line, trimmed, with the 1-based column where each starts.
fn cells_with_columns(raw: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::with_capacity(3);
    let mut column = 1;
    for cell in raw.trim_end_matches('\r').split(',') {
        let lead = cell.len() - cell.trim_start().len();
        out.push((column + cell[..lead].chars().count(), cell.trim()));
        column += cell.chars().count() + 1;
    }
    out
}

/// A non-negative decimal number of seconds, exactly, in nanoseconds.
fn seconds(s: &str) -> Option<Duration> {
    let plain = !s.is_empty()
        && s.chars().all(|c| c.is_ascii_digit() || c == '.')
        && s.chars().any(|c| c.is_ascii_digit());
    if !plain {
        return None;
    }
    format!("{s}s").parse::<Duration>().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file() -> Arc<str> {
        "t.csv".into()
    }

    #[test]
    fn reads_rows_exactly() {
        let text = "# comment\ntime_s, flow ,size_bytes\r\n0.000000001,a,100\r\n\n1.5,b,1500\n";
        let rows = parse(text, &file(), "f").unwrap();
        assert_eq!(
            rows,
            vec![
                Row {
                    line: 3,
                    at: Duration(1),
                    flow: "a".into(),
                    size: 100
                },
                Row {
                    line: 5,
                    at: Duration(1_500_000_000),
                    flow: "b".into(),
                    size: 1500
                },
            ]
        );
    }

    #[test]
    fn names_the_line_and_column_of_each_bad_cell() {
        let text = "time_s,flow,size_bytes\n0.5,a,0\nabc,a,10\n1,a\n";
        let errs = parse(text, &file(), "flow[0].source.file").unwrap_err();
        let at: Vec<(u32, u32)> = errs
            .iter()
            .map(|p| p.origin.as_ref().map(|o| (o.line, o.column)).unwrap())
            .collect();
        assert_eq!(at, vec![(2, 7), (3, 1), (4, 1)]);
        assert!(errs[0].problem.contains("size_bytes \"0\""));
    }

    #[test]
    fn rejects_a_missing_header_and_inexact_times() {
        assert!(parse("0.5,a,10\n", &file(), "f").is_err());
        assert!(parse("", &file(), "f").is_err());
        assert!(parse("time_s,flow,size_bytes\n0.0000000001,a,1\n", &file(), "f").is_err());
        assert!(parse("time_s,flow,size_bytes\n-1,a,1\n", &file(), "f").is_err());
        assert!(parse("time_s,flow,size_bytes\n1e3,a,1\n", &file(), "f").is_err());
    }
}
