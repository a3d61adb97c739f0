//! The reference allocation of a scenario (`linkshare alloc`) —
//! the hierarchical max-min fair rate of every class in every interval of constant
//! demand (see [`crate::reference`] for how demands and intervals are derived).

use linkshare_core::hierarchy::ClassTree;
use linkshare_sim::config::SimConfig;

use crate::quality::short_secs;
use crate::reference::{Interval, LinkReference};
use crate::table::TextTable;

/// The reference allocation as one JSON document (`alloc --json`).
#[derive(Debug, serde::Serialize)]
pub struct AllocJson {
    /// `[scenario] name`.
    pub scenario: String,
    /// Links in scenario order.
    pub links: Vec<LinkAllocJson>,
}

/// One link of `alloc --json`.
#[derive(Debug, serde::Serialize)]
pub struct LinkAllocJson {
    /// The link's name.
    pub name: String,
    /// Its line rate, bit/s.
    pub rate_bps: u64,
    /// Intervals of constant demand, in time order, covering the run.
    pub intervals: Vec<IntervalJson>,
}

/// One interval of `alloc --json`.
#[derive(Debug, serde::Serialize)]
pub struct IntervalJson {
    /// Start, seconds.
    pub start_s: f64,
    /// End (exclusive), seconds.
    pub end_s: f64,
    /// Every class, root (named after the link) first, then in declaration order.
    pub classes: Vec<ClassAllocJson>,
}

/// One class in one interval of `alloc --json`.
#[derive(Debug, serde::Serialize)]
pub struct ClassAllocJson {
    /// The class.
    pub name: String,
    /// Its parent; `null` for the root.
    pub parent: Option<String>,
    /// Whether it is a leaf.
    pub leaf: bool,
    /// Its demand, bit/s; `null` when unbounded (a greedy flow).
    pub demand_bps: Option<f64>,
    /// Its HMM-fair rate, bit/s.
    pub rate_bps: f64,
}

/// The JSON document of the reference allocation `refs` of `config`.
pub fn json(name: &str, config: &SimConfig, refs: &[LinkReference]) -> AllocJson {
    AllocJson {
        scenario: name.to_owned(),
        links: refs
            .iter()
            .map(|r| {
                let link = &config.links[r.link.0 as usize];
                let tree = &link.classes;
                LinkAllocJson {
                    name: link.name.clone(),
                    rate_bps: link.rate.bps(),
                    intervals: r
                        .intervals
                        .iter()
                        .map(|iv| IntervalJson {
                            start_s: iv.start.as_secs_f64(),
                            end_s: iv.end.as_secs_f64(),
                            classes: tree
                                .classes()
                                .iter()
                                .map(|c| ClassAllocJson {
                                    name: c.name().to_owned(),
                                    parent: c.parent.map(|p| tree.get(p).name().to_owned()),
                                    leaf: c.is_leaf(),
                                    demand_bps: finite(iv.demand[c.id.index()]),
                                    rate_bps: iv.rate[c.id.index()],
                                })
                                .collect(),
                        })
                        .collect(),
                }
            })
            .collect(),
    }
}

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// Intervals side by side per table.
const INTERVALS_PER_TABLE: usize = 4;

/// The tables of the reference allocation: per link, classes as rows (indented by
/// depth), and for every interval each class's demand and rate in Mbit/s.
pub fn render(name: &str, config: &SimConfig, refs: &[LinkReference]) -> String {
    let mut out = format!(
        "{name}: hierarchical max-min fair rates (HLS paper, Thm. 1) per interval of constant \
         demand, Mbit/s; demand `greedy` is unbounded\n"
    );
    for r in refs {
        let link = &config.links[r.link.0 as usize];
        out.push_str(&format!(
            "\nlink `{}` ({}), {} interval{}:\n",
            link.name,
            link.rate,
            r.intervals.len(),
            if r.intervals.len() == 1 { "" } else { "s" }
        ));
        for chunk in r.intervals.chunks(INTERVALS_PER_TABLE) {
            out.push_str(&table(&link.classes, chunk).render());
        }
    }
    out
}

fn table(tree: &ClassTree, intervals: &[Interval]) -> TextTable {
    let mut t = TextTable {
        header: vec!["class".to_owned()],
        ..TextTable::default()
    };
    for (j, iv) in intervals.iter().enumerate() {
        t.groups.push((
            format!(
                "[{}, {}) s",
                short_secs(iv.start.as_secs_f64()),
                short_secs(iv.end.as_secs_f64())
            ),
            1 + 2 * j,
            2,
        ));
        t.header.extend(["demand", "rate"].map(str::to_owned));
    }
    for c in tree.classes() {
        let mut row = vec![format!("{}{}", "  ".repeat(c.depth as usize), c.name())];
        for iv in intervals {
            let i = c.id.index();
            row.push(mbit_or_greedy(iv.demand[i]));
            row.push(format!("{:.3}", iv.rate[i] / 1e6));
        }
        t.rows.push(row);
    }
    t
}

/// Mbit/s with three decimals, or `greedy` for an unbounded demand.
fn mbit_or_greedy(bps: f64) -> String {
    if bps.is_finite() {
        format!("{:.3}", bps / 1e6)
    } else {
        "greedy".to_owned()
    }
}
