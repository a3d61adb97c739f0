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
pub fn exact_time_column(values: &[Option<Duration>], none: &str) -> (&'static str, Vec<String>) {
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

/// Rate units, smallest first: name and bit/s per unit.
const RATE_UNITS: [(&str, f64); 4] = [
    ("bit/s", 1.0),
    ("kbit/s", 1e3),
    ("Mbit/s", 1e6),
    ("Gbit/s", 1e9),
];

/// Time units, smallest first: name and nanoseconds per unit.
const TIME_UNITS: [(&str, f64); 4] = [("ns", 1.0), ("us", 1e3), ("ms", 1e6), ("s", 1e9)];

/// The largest of `units` (name, size) whose size is at most `largest` (the smallest
/// unit when `largest` is below every size).
fn unit_for(units: &[(&'static str, f64)], largest: f64) -> (&'static str, f64) {
    units
        .iter()
        .rev()
        .find(|&&(_, size)| largest >= size)
        .copied()
        .unwrap_or(units[0])
}

/// The unit a column of rates (bit/s) is shown in: the one its largest value needs
/// (bit/s, kbit/s, Mbit/s or Gbit/s), and its size in bit/s.
pub fn rate_unit(values: impl IntoIterator<Item = f64>) -> (&'static str, f64) {
    let largest = values.into_iter().map(f64::abs).fold(0.0, f64::max);
    unit_for(&RATE_UNITS, largest)
}

/// The unit a column of times is shown in: the one its largest value needs (ns, us, ms
/// or s), and its size in ns.
pub fn time_unit(values: impl IntoIterator<Item = Duration>) -> (&'static str, f64) {
    let largest = values.into_iter().map(|d| d.0).max().unwrap_or(0);
    unit_for(&TIME_UNITS, largest as f64)
}

/// `value` in a unit of `size` with three decimals (`-` for `None`).
pub fn in_unit(value: Option<f64>, size: f64) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{:.3}", v / size))
}

/// A column of a table being built: its title (the unit appended) and its cells.
fn column<T: Copy>(
    title: &str,
    values: &[Option<T>],
    unit: impl Fn(&mut dyn Iterator<Item = T>) -> (&'static str, f64),
    as_f64: impl Fn(T) -> f64,
) -> (String, Vec<String>) {
    let (name, size) = unit(&mut values.iter().flatten().copied());
    let cells = values
        .iter()
        .map(|v| in_unit(v.map(&as_f64), size))
        .collect();
    (format!("{title} {name}"), cells)
}

/// A column of rates (bit/s) in the unit its largest value needs.
pub fn rate_column(title: &str, values: &[Option<f64>]) -> (String, Vec<String>) {
    column(title, values, |v| rate_unit(v), |x| x)
}

/// A column of times in the unit its largest value needs.
pub fn time_column(title: &str, values: &[Option<Duration>]) -> (String, Vec<String>) {
    column(title, values, |v| time_unit(v), |d| d.0 as f64)
}

/// Appends `columns` to `header` and to each row, cell by cell.
pub fn append_columns(
    header: &mut Vec<String>,
    rows: &mut [Vec<String>],
    columns: Vec<(String, Vec<String>)>,
) {
    for (title, cells) in columns {
        header.push(title);
        for (row, cell) in rows.iter_mut().zip(cells) {
            row.push(cell);
        }
    }
}

/// The per-class table of a run: every class of every link, indented by depth (the
/// link itself first, as `name [scheduler]`, its counters summing all classes). The
/// instances of a per-flow template make one row, `NAME (N per-flow)`: their counters
/// and rates summed, their delays pooled. Rates and delays are in the unit each
/// column's largest value needs.
pub fn run_table(result: &RunResult) -> TextTable {
    let labels = Labels::new(result);
    let mut rows = Vec::new();
    let (mut rates, mut means, mut p99s, mut maxes) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
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
            ]);
            rates.push(Some(members.iter().map(|m| m.mean_rate_bps).sum()));
            means.push(Some(delays.mean));
            p99s.push(Some(delays.p99));
            maxes.push(Some(delays.max));
            k += members.len();
        }
    }
    let mut header: Vec<String> = ["class", "sent", "delivered", "dropped"]
        .map(str::to_owned)
        .to_vec();
    append_columns(
        &mut header,
        &mut rows,
        vec![
            rate_column("rate", &rates),
            time_column("mean", &means),
            time_column("p99", &p99s),
            time_column("max", &maxes),
        ],
    );
    TextTable {
        groups: Vec::new(),
        header,
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
    let mut rows = Vec::new();
    let (mut goodputs, mut bursts) = (Vec::new(), Vec::new());
    let mut tail = Vec::new();
    for f in &result.flows {
        let t = &f.transport;
        let a = Activity::of(f);
        let tcp = t.protocol == "tcp";
        let count = |n: u64| if tcp { n.to_string() } else { "-".to_owned() };
        rows.push(vec![
            f.name.clone(),
            t.protocol.to_owned(),
            t.bytes_delivered.to_string(),
        ]);
        goodputs.push(a.goodput_bps());
        tail.push([
            count(t.retransmits),
            count(t.timeouts),
            format!("{}/{}", a.bursts_completed, t.bursts.len()),
        ]);
        bursts.push(a.mean_burst_delay);
    }
    let mut header: Vec<String> = ["flow", "protocol", "delivered B"]
        .map(str::to_owned)
        .to_vec();
    append_columns(
        &mut header,
        &mut rows,
        vec![rate_column("goodput", &goodputs)],
    );
    header.extend(["retransmits", "timeouts", "bursts done"].map(str::to_owned));
    for (row, cells) in rows.iter_mut().zip(tail) {
        row.extend(cells);
    }
    append_columns(
        &mut header,
        &mut rows,
        vec![time_column("burst mean", &bursts)],
    );
    Some(TextTable {
        groups: Vec::new(),
        header,
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
/// rate and mean and 99th-percentile delay at the port, each column in the unit its
/// largest value needs. `runs` hold results of the same scenario (same classes) under
/// different schedulers.
pub fn compare_table(runs: &[(String, RunResult)]) -> TextTable {
    let mut table = TextTable {
        header: vec!["class".to_owned()],
        ..TextTable::default()
    };
    let classes = compare_rows(runs);
    table.rows = classes
        .iter()
        .map(|(_, _, label)| vec![label.clone()])
        .collect();
    for (j, (name, result)) in runs.iter().enumerate() {
        table.groups.push((name.clone(), 1 + 3 * j, 3));
        let class = |&(link, class, _): &(usize, usize, String)| {
            result.links.get(link).and_then(|l| l.classes.get(class))
        };
        let rates: Vec<Option<f64>> = classes
            .iter()
            .map(|k| class(k).map(|c| c.mean_rate_bps))
            .collect();
        let means: Vec<Option<Duration>> = classes
            .iter()
            .map(|k| class(k).map(|c| c.delay.mean))
            .collect();
        let p99s: Vec<Option<Duration>> = classes
            .iter()
            .map(|k| class(k).map(|c| c.delay.p99))
            .collect();
        append_columns(
            &mut table.header,
            &mut table.rows,
            vec![
                rate_column("rate", &rates),
                time_column("mean", &means),
                time_column("p99", &p99s),
            ],
        );
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
            exact_time_column(&values, "never")
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
