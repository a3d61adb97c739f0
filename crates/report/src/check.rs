//! Admission control for every link's service curves (`linkshare check`), computed by [`linkshare_analysis::admission`] (exact, see there): the leaves'
//! `rt` curves within the link, link-sharing children within their parent, `ul` curves
//! between `rt` and the link, and the delay bound of every leaf with an `rt` curve
//! (its curve's delay for its burst plus `t_max = L_max / C`, Thm. 2).
//!
//! The link-sharing check is not made on a link with `best_effort` or scheduled by
//! `fsc`: there the `ls` curves are relative (only their ratios matter), not promises.
//!
//! [`json`] is one object: `admissible` (bool) and `links`, in scenario order, each
//! with `name`, `rate_bps`, `scheduler`, `max_packet_bytes`, `t_max_ns`, `refused`
//! (H-FSC's reason to refuse the tree, or null), `relative_link_sharing`, `admissible`,
//! `violations` (each: `check` — `rt_above_link`, `ls_above_parent`, `ul_below_rt` or
//! `ul_above_link` —, `limit` (the class whose curve is exceeded; the link's name for
//! its line), `classes`, `rising`, `starts_ns`, `until_ns` or null for never) and
//! `delay_bounds` (each: `class`, `burst_bytes`, `burst_from` — `umax`,
//! `first_segment` or `max_packet` —, `curve_delay_ns`, `bound_ns`, null when the curve
//! never serves the burst). Times are integer nanoseconds.

use linkshare_analysis::admission::{self, Check, LinkAdmission, Options, Violation};
use linkshare_core::hierarchy::{ClassId, ClassTree};
use linkshare_core::sched::SchedulerKind;
use serde::Serialize;

use linkshare_sim::config::SimConfig;

use crate::table::{TextTable, exact_time_column};

/// The admission decision for one link of a scenario.
#[derive(Debug)]
pub struct LinkCheck<'s> {
    /// The link's name.
    pub name: &'s str,
    /// Its classes.
    pub tree: &'s ClassTree,
    /// Its scheduler.
    pub scheduler: SchedulerKind,
    /// Whether its `ls` curves are only relative (`best_effort`, or scheduler `fsc`), so
    /// that the link-sharing check was not made.
    pub relative_link_sharing: bool,
    /// The decision.
    pub admission: LinkAdmission,
}

/// The admission decision of every link of `config`, in link order; `options` gives
/// each link's options by its index (the scenario knows them:
/// `linkshare_scenario::Scenario::admission_options`).
pub fn admissions(config: &SimConfig, options: impl Fn(usize) -> Options) -> Vec<LinkCheck<'_>> {
    config
        .links
        .iter()
        .enumerate()
        .map(|(i, link)| {
            let options = options(i);
            LinkCheck {
                name: &link.name,
                tree: &link.classes,
                scheduler: link.scheduler.kind(),
                relative_link_sharing: options.relative_link_sharing,
                admission: admission::check(&link.classes, &options),
            }
        })
        .collect()
}

/// One line per finding, for `run` to print as warnings: H-FSC's refusal and every
/// violation, prefixed by the link's name.
pub fn warnings(all: &[LinkCheck<'_>]) -> Vec<String> {
    let mut out = Vec::new();
    for l in all {
        if let Some(r) = &l.admission.refused {
            out.push(format!("link `{}`: H-FSC refuses the classes: {r}", l.name));
        }
        for v in &l.admission.violations {
            out.push(format!("link `{}`: {}", l.name, describe(l.tree, v)));
        }
    }
    out
}

/// A violation in one sentence.
pub fn describe(tree: &ClassTree, v: &Violation) -> String {
    let names = |ids: &[ClassId]| {
        ids.iter()
            .map(|&c| format!("`{}`", tree.get(c).name()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let limit = tree.get(v.limit).name();
    let what = match v.check {
        Check::RealTime => format!(
            "the rt curves of {} add up to more than the link's rate line",
            names(&v.classes)
        ),
        Check::LinkSharing if v.limit == ClassId::ROOT => format!(
            "the ls curves of {} add up to more than the link's rate line",
            names(&v.classes)
        ),
        Check::LinkSharing => format!(
            "the ls curves of {}, children of `{limit}`, add up to more than its ls curve",
            names(&v.classes)
        ),
        Check::UpperLimitBelowRealTime => format!(
            "the ul curve of `{limit}` is below the rt curves of {}",
            names(&v.classes)
        ),
        Check::UpperLimitAboveLink => format!(
            "the ul curve of {} is above the link's rate line",
            names(&v.classes)
        ),
    };
    let until = v
        .until
        .map_or("for ever".to_owned(), |u| format!("until {u}"));
    let rising = if v.rising.len() < v.classes.len() && !v.rising.is_empty() {
        format!(" (rising there: {})", names(&v.rising))
    } else {
        String::new()
    };
    format!("{what} from t = {} on, {until}{rising}", v.starts)
}

/// The findings for the scenario `name` as text: per link, the checks, the delay
/// bounds, a verdict.
pub fn render(name: &str, all: &[LinkCheck<'_>]) -> String {
    let mut out =
        format!("{name}: admission control of the service curves (H-FSC paper, Thm. 2; exact)\n");
    for l in all {
        let (tree, a) = (l.tree, &l.admission);
        out.push_str(&format!(
            "\nlink `{}` ({}, {}): L_max {}, t_max = L_max / C = {}\n",
            l.name, a.link_rate, l.scheduler, a.max_packet, a.t_max
        ));
        if l.relative_link_sharing {
            out.push_str(
                "  ls curves are relative here (best_effort or fsc): not checked against parents\n",
            );
        }
        if let Some(r) = &a.refused {
            out.push_str(&format!("  H-FSC refuses the classes: {r}\n"));
        }
        if a.violations.is_empty() {
            let ls = if l.relative_link_sharing {
                ""
            } else {
                "ls within parents, "
            };
            out.push_str(&format!(
                "  all checks pass: rt within the link, {ls}ul between rt and the link\n"
            ));
        }
        for v in &a.violations {
            out.push_str(&format!("  VIOLATION: {}\n", describe(tree, v)));
        }
        if !a.delays.is_empty() {
            out.push_str("\n  delay bounds (rt curve's delay for the burst, plus t_max):\n");
            out.push_str(&indent(&delay_table(tree, a).render()));
        }
        out.push_str(&format!(
            "\n  verdict: {}\n",
            if a.is_admissible() {
                "admissible"
            } else {
                "NOT admissible"
            }
        ));
    }
    out
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
}

/// One row per leaf with an `rt` curve. Each time column has one unit, chosen for its
/// largest value ([`exact_time_column`]); bursts are in bytes.
fn delay_table(tree: &ClassTree, a: &LinkAdmission) -> TextTable {
    let (curve_unit, curve) = exact_time_column(
        &a.delays.iter().map(|d| d.curve_delay).collect::<Vec<_>>(),
        "never",
    );
    let (t_max_unit, t_max) = exact_time_column(&vec![Some(a.t_max); a.delays.len()], "never");
    let (bound_unit, bound) = exact_time_column(
        &a.delays.iter().map(|d| d.bound).collect::<Vec<_>>(),
        "never",
    );
    TextTable {
        groups: Vec::new(),
        header: vec![
            "class".to_owned(),
            "burst (B)".to_owned(),
            "burst from".to_owned(),
            format!("curve delay ({curve_unit})"),
            format!("t_max ({t_max_unit})"),
            format!("bound ({bound_unit})"),
        ],
        rows: a
            .delays
            .iter()
            .zip(curve)
            .zip(t_max)
            .zip(bound)
            .map(|(((d, curve), t_max), bound)| {
                vec![
                    tree.get(d.class).name().to_owned(),
                    d.burst.0.to_string(),
                    d.burst_from.as_str().to_owned(),
                    curve,
                    t_max,
                    bound,
                ]
            })
            .collect(),
    }
}

/// `--json`'s object.
#[derive(Debug, Serialize)]
pub struct CheckJson {
    /// Whether every link is admissible.
    pub admissible: bool,
    /// Every link, in scenario order.
    pub links: Vec<LinkJson>,
}

/// One link in `--json`.
#[derive(Debug, Serialize)]
pub struct LinkJson {
    /// The link's name.
    pub name: String,
    /// Its rate, bit/s.
    pub rate_bps: u64,
    /// Its scheduler's name.
    pub scheduler: String,
    /// `L_max`, bytes.
    pub max_packet_bytes: u64,
    /// `t_max`, ns.
    pub t_max_ns: u64,
    /// Why H-FSC refuses the classes, if it does.
    pub refused: Option<String>,
    /// Whether the link-sharing check was skipped (best-effort or FSC link).
    pub relative_link_sharing: bool,
    /// Whether the link is admissible.
    pub admissible: bool,
    /// Every violation.
    pub violations: Vec<ViolationJson>,
    /// Every leaf with an `rt` curve.
    pub delay_bounds: Vec<DelayJson>,
}

/// One violation in `--json`.
#[derive(Debug, Serialize)]
pub struct ViolationJson {
    /// [`Check::as_str`].
    pub check: &'static str,
    /// The class whose curve is exceeded (the link's name for its line).
    pub limit: String,
    /// The classes whose curves add up to more.
    pub classes: Vec<String>,
    /// Those rising where the excess starts.
    pub rising: Vec<String>,
    /// The crossing time, ns, rounded down.
    pub starts_ns: u64,
    /// When the excess ends, ns; null: never.
    pub until_ns: Option<u64>,
}

/// One delay bound in `--json`.
#[derive(Debug, Serialize)]
pub struct DelayJson {
    /// The leaf.
    pub class: String,
    /// The burst, bytes.
    pub burst_bytes: u64,
    /// `umax`, `first_segment` or `max_packet`.
    pub burst_from: &'static str,
    /// The curve's delay for the burst, ns (null: never).
    pub curve_delay_ns: Option<u64>,
    /// `curve_delay + t_max`, ns (null: never).
    pub bound_ns: Option<u64>,
}

/// The `--json` object of `all`.
pub fn json(all: &[LinkCheck<'_>]) -> CheckJson {
    let links = all
        .iter()
        .map(|l| {
            let (tree, a) = (l.tree, &l.admission);
            let names =
                |ids: &[ClassId]| ids.iter().map(|&c| tree.get(c).name().to_owned()).collect();
            LinkJson {
                name: l.name.to_owned(),
                rate_bps: a.link_rate.bps(),
                scheduler: l.scheduler.name().to_owned(),
                max_packet_bytes: a.max_packet.0,
                t_max_ns: a.t_max.0,
                refused: a.refused.clone(),
                relative_link_sharing: l.relative_link_sharing,
                admissible: a.is_admissible(),
                violations: a
                    .violations
                    .iter()
                    .map(|v| ViolationJson {
                        check: v.check.as_str(),
                        limit: tree.get(v.limit).name().to_owned(),
                        classes: names(&v.classes),
                        rising: names(&v.rising),
                        starts_ns: v.starts.0,
                        until_ns: v.until.map(|u| u.0),
                    })
                    .collect(),
                delay_bounds: a
                    .delays
                    .iter()
                    .map(|d| DelayJson {
                        class: tree.get(d.class).name().to_owned(),
                        burst_bytes: d.burst.0,
                        burst_from: d.burst_from.as_str(),
                        curve_delay_ns: d.curve_delay.map(|x| x.0),
                        bound_ns: d.bound.map(|x| x.0),
                    })
                    .collect(),
            }
        })
        .collect();
    CheckJson {
        admissible: all.iter().all(|l| l.admission.is_admissible()),
        links,
    }
}
