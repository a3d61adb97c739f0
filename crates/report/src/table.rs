//! Aligned text tables for the terminal, and the two tables the commands print: the
//! per-class summary of a run and the side-by-side comparison of schedulers.

use std::fmt::Write as _;

use linkshare_core::units::Duration;
use linkshare_sim::result::{ClassResult, RunResult};

use super::Labels;
use super::flows::Activity;

/// A text table: a header row, optional column groups above it, and rows. The first
/// column is left-aligned, the others right-aligned.
#[derive(Clone, Debug, Default)]
pub struct TextTable {
    /// Groups of columns labelled above the header: (label, first column, columns).
    pub groups: Vec<(String, usize, usize)>,
    /// Column titles.
    pub header: Vec<String>,
    /// Cells, one row per entry.
    pub rows: Vec<Vec<String>>,
}

impl TextTable {
    /// The table, one line per row, columns separated by two spaces.
    pub fn render(&self) -> String {
        let columns = self.header.len();
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (i, cell) in row.iter().enumerate().take(columns) {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
        // A group label wider than its columns widens its last column.
        for (label, first, n) in &self.groups {
            let span: usize = widths[*first..first + n].iter().sum::<usize>() + 2 * (n - 1);
            let need = label.chars().count();
            if need > span
                && let Some(w) = widths.get_mut(first + n - 1)
            {
                *w += need - span;
            }
        }
        let mut out = String::new();
        if !self.groups.is_empty() {
            let mut line = String::new();
            let mut col = 0;
            for (label, first, n) in &self.groups {
                while col < *first {
                    pad(&mut line, "", widths[col], false, col);
                    col += 1;
                }
                let span: usize = widths[*first..first + n].iter().sum::<usize>() + 2 * (n - 1);
                if col > 0 {
                    line.push_str("  ");
                }
                let _ = write!(line, "{label:^span$}");
                col += n;
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
        for row in core::iter::once(&self.header)
            .chain(core::iter::once(&rule))
            .chain(self.rows.iter())
        {
            let mut line = String::new();
            for (i, w) in widths.iter().enumerate() {
                let cell = row.get(i).map_or("", String::as_str);
                pad(&mut line, cell, *w, i > 0, i);
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

/// Appends `cell` padded to `width` (right-aligned if `right`), after a separator unless
/// it is column 0.
fn pad(line: &mut String, cell: &str, width: usize, right: bool, column: usize) {
    if column > 0 {
        line.push_str("  ");
    }
    if right {
        let _ = write!(line, "{cell:>width$}");
    } else {
        let _ = write!(line, "{cell:<width$}");
    }
}

/// One column of times in one unit: the largest of s, ms, us and ns in which the
/// column's largest value is at least 1. Every value is exact (with as many decimals
/// as it needs, at most nine) and the values are aligned on the decimal point; `None`
/// is written `none`. Returns the unit's name and the cells.
pub fn time_column(values: &[Option<Duration>], none: &str) -> (&'static str, Vec<String>) {
    let largest = values.iter().flatten().map(|d| d.0).max().unwrap_or(0);
    let (unit, per_unit, digits) = [
        ("s", 1_000_000_000, 9),
        ("ms", 1_000_000, 6),
        ("us", 1_000, 3),
    ]
    .into_iter()
    .find(|&(_, per_unit, _)| largest >= per_unit)
    .unwrap_or(("ns", 1, 0));
    let exact = |ns: u64| {
        let (whole, part) = (ns / per_unit, ns % per_unit);
        let fraction = format!("{part:0digits$}");
        (whole.to_string(), fraction.trim_end_matches('0').to_owned())
    };
    let parts: Vec<Option<(String, String)>> =
        values.iter().map(|v| v.map(|d| exact(d.0))).collect();
    let decimals = parts
        .iter()
        .flatten()
        .map(|(_, f)| f.len())
        .max()
        .unwrap_or(0);
    let cells = parts
        .into_iter()
        .map(|p| match p {
            None => format!(
                "{none}{:width$}",
                "",
                width = decimals + usize::from(decimals > 0)
            ),
            Some((whole, f)) if f.is_empty() => {
                let pad = decimals + usize::from(decimals > 0);
                format!("{whole}{:pad$}", "")
            }
            Some((whole, f)) => format!("{whole}.{f:<decimals$}"),
        })
        .collect();
    (unit, cells)
}

/// Milliseconds with three decimals.
pub fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1e3)
}

/// Mbit/s with three decimals.
pub fn mbit(bps: f64) -> String {
    format!("{:.3}", bps / 1e6)
}

/// The per-class table of a run: every class of every link, indented by depth (the
/// link itself first, as `name [scheduler]`, its counters summing all classes). The
/// instances of a per-flow template make one row, `NAME (N per-flow)`: their counters
/// and rates summed, their delays pooled.
pub fn run_table(result: &RunResult) -> TextTable {
    let header = [
        "class",
        "sent",
        "delivered",
        "dropped",
        "rate Mbit/s",
        "mean ms",
        "p99 ms",
        "max ms",
    ];
    let labels = Labels::new(result);
    let mut rows = Vec::new();
    for (i, link) in result.links.iter().enumerate() {
        let mut k = 0;
        while let Some(c) = link.classes.get(k) {
            let depth = depth(&link.classes, c);
            // The per-flow template this class is the first instance of, if any.
            let template = link
                .per_flow
                .iter()
                .find(|t| c.name == format!("{}#0", t.name));
            let (name, members) = match template {
                Some(t) => (
                    format!(
                        "{}{} ({} per-flow)",
                        "  ".repeat(depth),
                        t.name,
                        t.instances
                    ),
                    &link.classes[k..(k + t.instances as usize).min(link.classes.len())],
                ),
                None if depth == 0 => (
                    format!("{} [{}]", link.name, link.scheduler),
                    &link.classes[k..=k],
                ),
                None => (
                    format!("{}{}", "  ".repeat(depth), labels.class(i, c.id)),
                    &link.classes[k..=k],
                ),
            };
            let delays = match members {
                [one] => one.delay,
                _ => members[1..]
                    .iter()
                    .fold(members[0].delays.clone(), |acc, m| acc.merged(&m.delays))
                    .stats(),
            };
            rows.push(vec![
                name,
                members
                    .iter()
                    .map(|m| m.counters.arrived.packets)
                    .sum::<u64>()
                    .to_string(),
                members
                    .iter()
                    .map(|m| m.delivered.packets)
                    .sum::<u64>()
                    .to_string(),
                members
                    .iter()
                    .map(|m| m.counters.dropped_total().packets)
                    .sum::<u64>()
                    .to_string(),
                mbit(members.iter().map(|m| m.mean_rate_bps).sum()),
                ms(delays.mean),
                ms(delays.p99),
                ms(delays.max),
            ]);
            k += members.len();
        }
    }
    TextTable {
        groups: Vec::new(),
        header: header.iter().map(|h| (*h).to_owned()).collect(),
        rows,
    }
}

/// The per-flow transport table of a run: goodput, retransmissions and timeouts (TCP
/// flows), completed bursts and their mean delay (flows with bursts). `None` when no
/// flow is TCP and none has bursts (the class table then says it all).
pub fn flow_table(result: &RunResult) -> Option<TextTable> {
    let shown = result
        .flows
        .iter()
        .any(|f| f.transport.protocol == "tcp" || !f.transport.bursts.is_empty());
    if !shown {
        return None;
    }
    let header = [
        "flow",
        "protocol",
        "delivered B",
        "goodput Mbit/s",
        "retransmits",
        "timeouts",
        "bursts done",
        "burst mean ms",
    ];
    let rows = result
        .flows
        .iter()
        .map(|f| {
            let t = &f.transport;
            let a = Activity::of(f);
            let tcp = t.protocol == "tcp";
            let count = |n: u64| if tcp { n.to_string() } else { "-".to_owned() };
            vec![
                f.name.clone(),
                t.protocol.to_owned(),
                t.bytes_delivered.to_string(),
                a.goodput_bps().map_or_else(|| "-".to_owned(), mbit),
                count(t.retransmits),
                count(t.timeouts),
                format!("{}/{}", a.bursts_completed, t.bursts.len()),
                a.mean_burst_delay.map_or_else(|| "-".to_owned(), ms),
            ]
        })
        .collect();
    Some(TextTable {
        groups: Vec::new(),
        header: header.iter().map(|h| (*h).to_owned()).collect(),
        rows,
    })
}

/// Distance of `c` from the root of its tree.
fn depth(classes: &[ClassResult], c: &ClassResult) -> usize {
    let mut d = 0;
    let mut cur = c.parent;
    while let Some(p) = cur {
        d += 1;
        cur = classes.get(p.index()).and_then(|p| p.parent);
        if d > classes.len() {
            break;
        }
    }
    d
}

/// The comparison table: one row per leaf class, and for each scheduler its delivered
/// rate and mean and 99th-percentile delay at the port. `runs` hold results of the same
/// scenario (same classes) under different schedulers.
pub fn compare_table(runs: &[(String, RunResult)]) -> TextTable {
    let mut table = TextTable {
        header: vec!["class".to_owned()],
        ..TextTable::default()
    };
    for (j, (name, _)) in runs.iter().enumerate() {
        table.groups.push((name.clone(), 1 + 3 * j, 3));
        table
            .header
            .extend(["Mbit/s", "mean ms", "p99 ms"].map(str::to_owned));
    }
    for (link, class, label) in compare_rows(runs) {
        let mut row = vec![label];
        for (_, result) in runs {
            match result.links.get(link).and_then(|l| l.classes.get(class)) {
                Some(c) => row.extend([mbit(c.mean_rate_bps), ms(c.delay.mean), ms(c.delay.p99)]),
                None => row.extend(["-", "-", "-"].map(str::to_owned)),
            }
        }
        table.rows.push(row);
    }
    table
}

/// The leaves of the first run as (link number, class index, label).
pub fn compare_rows(runs: &[(String, RunResult)]) -> Vec<(usize, usize, String)> {
    let Some((_, first)) = runs.first() else {
        return Vec::new();
    };
    let labels = Labels::new(first);
    first
        .links
        .iter()
        .enumerate()
        .flat_map(|(i, l)| {
            l.classes
                .iter()
                .filter(|c| c.is_leaf)
                .map(move |c| (i, c.id.index(), labels.class(i, c.id)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_column_has_one_unit_and_exact_values() {
        let column = |ns: &[Option<u64>]| {
            let values: Vec<Option<Duration>> = ns.iter().map(|v| v.map(Duration)).collect();
            time_column(&values, "never")
        };
        // `check`'s column on the H-FSC paper's classes: 16250us, 5ms, 18204445ns.
        let (unit, cells) = column(&[
            Some(16_250_000),
            Some(5_000_000),
            Some(18_204_445),
            Some(327_680_000),
            None,
        ]);
        assert_eq!(unit, "ms");
        assert_eq!(
            cells,
            [
                "16.25    ",
                "5       ",
                "18.204445",
                "327.68    ",
                "never       "
            ]
        );
        // Cells right-aligned in a table line up on the decimal point.
        let width = cells.iter().map(String::len).max().unwrap();
        let points: Vec<usize> = cells
            .iter()
            .filter(|c| c.contains('.'))
            .map(|c| width - c.len() + c.find('.').unwrap())
            .collect();
        assert!(points.windows(2).all(|w| w[0] == w[1]), "{cells:?}");
        assert_eq!(column(&[Some(1_500_000_000), Some(2_000)]).0, "s");
        assert_eq!(
            column(&[Some(999), Some(7)]),
            ("ns", vec!["999".into(), "7".into()])
        );
        assert_eq!(column(&[None]), ("ns", vec!["never".into()]));
    }

    #[test]
    fn columns_are_aligned() {
        let t = TextTable {
            groups: vec![("fifo".into(), 1, 2)],
            header: vec!["class".into(), "a".into(), "bb".into()],
            rows: vec![
                vec!["voice".into(), "1".into(), "22".into()],
                vec!["x".into(), "333".into(), "4".into()],
            ],
        };
        let text = t.render();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "        fifo");
        assert_eq!(lines[1], "class    a  bb");
        assert_eq!(lines[2], "-----  ---  --");
        assert_eq!(lines[3], "voice    1  22");
        assert_eq!(lines[4], "x      333   4");
    }
}
