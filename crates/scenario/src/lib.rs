//! linkshare-scenario: scenario files, TOML in, a validated [`SimConfig`] out, or every
//! problem found.
//!
//! This crate knows the file format and nothing about outputs: it sits above the engine
//! (`linkshare-sim`, which knows no file format) and below the report writers and the
//! faces (the `linkshare` command line, later the Python module and the shaper), which
//! only parse their arguments, call the libraries and print.
//!
//! The format is documented in `scenarios/README.md`. Loading never panics: whatever
//! the bytes, [`load_str`] returns a [`Scenario`] or [`Problems`], each problem with the
//! file, line and column where it was written, the field's path, what is wrong and how
//! to fix it.
//!
//! Loading happens in three steps: the TOML is parsed into a tree that keeps the byte
//! range of every value (`toml::de::DeTable`); `format` reads each table into plain
//! definitions, checking types and units; `resolve` resolves names (parents, classes,
//! nodes, links, traces) and builds the class trees with
//! [`linkshare_core::hierarchy::ClassTree::build`], whose errors carry the positions
//! the loader recorded.

#![warn(missing_docs)]

mod apps;
mod best_effort;
pub mod describe;
mod format;
mod problem;
mod reader;
mod resolve;
pub mod shaper;
pub mod trace;

use std::path::Path;
use std::sync::Arc;

use linkshare_analysis::admission;
use linkshare_core::echo::echo;
use linkshare_core::hierarchy::ClassId;
use linkshare_core::sched::SchedulerKind;
use linkshare_core::units::{Bytes, Duration, Instant};
use linkshare_sim::config::SimConfig;
use linkshare_sim::{RunResult, SimError, Simulator};
use toml::de::DeTable;

pub use best_effort::BestEffort;
pub use problem::did_you_mean;
pub use problem::{Problem, Problems};
pub use resolve::{ACK_CLASS, SINGLE_REVERSE_LINK};
pub use shaper::{
    Interfaces, PacingMode, ShaperConfig, ShaperSettings, load_shaper_file, load_shaper_str,
};

use problem::LineIndex;
use reader::{Ctx, Table};

/// Where a long run reports how far it got. Libraries call it; a face shows it (a
/// progress bar on a terminal) or not ([`NoProgress`]). `Sync`, so that runs on
/// several threads can share one.
pub trait Progress: Sync + std::fmt::Debug {
    /// Run `label` has simulated up to `now` of `total`.
    fn update(&self, label: &str, now: Instant, total: Duration);
    /// Run `label` is over.
    fn finish(&self, label: &str);
}

/// Progress that goes nowhere.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn update(&self, _label: &str, _now: Instant, _total: Duration) {}
    fn finish(&self, _label: &str) {}
}

/// The form a scenario was written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// `[link]` and `[[class]]`: one link `link` from node `src` to node `dst`.
    SingleLink,
    /// `[[node]]` and `[[links]]`: any topology; flows have routes.
    Topology,
}

/// A loaded, valid scenario.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// `[scenario] name`: letters, digits, `_`, `-`, `.` (usable as a directory name).
    pub name: String,
    /// `[scenario] description`, if given.
    pub description: Option<String>,
    /// The file it was read from, as named by the user.
    pub file: String,
    /// The form it was written in.
    pub layout: Layout,
    /// What to simulate.
    pub config: SimConfig,
    /// What the file says about each link beyond [`SimConfig`], in the order of
    /// `config.links`.
    pub link_notes: Vec<LinkNotes>,
}

/// What a scenario file says about a link that the simulator does not need but admission
/// control (`linkshare check`) does.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinkNotes {
    /// The link's `best_effort` parameters, whose curves the loader gave every leaf.
    pub best_effort: Option<BestEffort>,
    /// The `umax` of each `rt` curve written as `{ umax, dmax, rate }`, by class.
    pub rt_bursts: Vec<(ClassId, Bytes)>,
    /// Whether this is the link the loader added for the acknowledgements of a
    /// single-link file's TCP flows ([`SINGLE_REVERSE_LINK`]): it stays FIFO when a
    /// command runs the scenario under another scheduler.
    pub ack_path: bool,
}

impl Scenario {
    /// Runs every link with `kind` instead of the scheduler the file names (all but the
    /// single-link form's acknowledgement link, which stays FIFO). Fails if `kind`
    /// cannot be built for some link's classes (`option` names the command-line option
    /// in the message).
    pub fn set_scheduler(&mut self, kind: SchedulerKind, option: &str) -> Result<(), Problems> {
        let ack_path = |i: usize| self.link_notes.get(i).is_some_and(|n| n.ack_path);
        for (i, link) in self.config.links.iter().enumerate() {
            if ack_path(i) {
                continue;
            }
            if let Err(problem) = resolve::check_scheduler(kind, &link.classes) {
                return Err(Problems::option(
                    option,
                    format!("on link `{}`: {problem}", link.name),
                    format!(
                        "choose another scheduler; known schedulers: {}",
                        SchedulerKind::all_names()
                    ),
                ));
            }
        }
        let skip: Vec<bool> = (0..self.config.links.len()).map(ack_path).collect();
        for (link, skip) in self.config.links.iter_mut().zip(skip) {
            if !skip {
                link.scheduler = kind.into();
            }
        }
        Ok(())
    }

    /// The options of admission control for link number `link` (in `config.links`
    /// order): the bursts its `rt` curves were declared with, and whether its `ls`
    /// curves are only relative (`best_effort`, or scheduler `fsc`), so that the
    /// link-sharing check is not made.
    pub fn admission_options(&self, link: usize) -> admission::Options {
        let notes = self.link_notes.get(link);
        admission::Options {
            declared_bursts: notes.map(|n| n.rt_bursts.clone()).unwrap_or_default(),
            relative_link_sharing: notes.is_some_and(|n| n.best_effort.is_some())
                || self
                    .config
                    .links
                    .get(link)
                    .is_some_and(|l| l.scheduler.kind() == SchedulerKind::Fsc),
        }
    }

    /// What the scenario's schedulers do to its classes that the file may not mean,
    /// as tc warns about it (HTB's quanta clamped from `rate / r2q`): one problem per
    /// finding, located at the class, naming the link, the scheduler and the field.
    /// Valid scenarios only warn; faces print these before running.
    pub fn warnings(&self) -> Vec<Problem> {
        self.config
            .links
            .iter()
            .flat_map(|link| {
                let kind = link.scheduler.kind();
                link.scheduler
                    .warnings(&link.classes)
                    .into_iter()
                    .map(move |w| Problem {
                        origin: w.origin,
                        field: None,
                        problem: format!(
                            "link `{}`, scheduler `{kind}`, class `{}`, field `{}`: {}",
                            link.name,
                            echo(&w.class),
                            w.field,
                            w.problem
                        ),
                        fix: w.fix,
                    })
            })
            .collect()
    }

    /// Runs the simulation, telling `progress` how far run `label` got.
    pub fn simulate(&self, label: &str, progress: &dyn Progress) -> Result<RunResult, SimError> {
        let sim = Simulator::new(&self.config)?;
        let result = sim.run_with_progress(&mut |now, total| progress.update(label, now, total));
        progress.finish(label);
        Ok(result)
    }

    /// Whether the scenario has more than one link (outputs then name classes
    /// `link/class`).
    pub fn is_multi_link(&self) -> bool {
        self.config.links.len() > 1
    }
}

/// Reads and loads the scenario file at `path` (traces are read relative to its
/// directory). I/O errors are reported as a problem without a position.
pub fn load_file(path: &Path) -> Result<Scenario, Problems> {
    let name = path.display().to_string();
    let text = read_text(path, "scenario file")?;
    let base = path.parent().unwrap_or(Path::new("."));
    load_str(&text, &name, base)
}

/// The text of the file at `path` (a `what`), or the problem that it cannot be read or
/// is not UTF-8.
pub(crate) fn read_text(path: &Path, what: &str) -> Result<String, Problems> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| {
        Problems(vec![Problem {
            origin: None,
            field: None,
            problem: format!("cannot read the {what} {name}: {e}"),
            fix: "give the path of a .toml file (see scenarios/README.md)".to_owned(),
        }])
    })?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let prefix = String::from_utf8_lossy(&e.as_bytes()[..at]).into_owned();
        let origin = LineIndex::new(name.as_str().into(), &prefix).origin(at);
        Problems(vec![Problem {
            origin: Some(origin),
            field: None,
            problem: "the file is not UTF-8 text".to_owned(),
            fix: "save it as UTF-8".to_owned(),
        }])
    })
}

/// Loads a scenario from `text`; `file` names it in problems, `base_dir` is where
/// relative trace paths start.
pub fn load_str(text: &str, file: &str, base_dir: &Path) -> Result<Scenario, Problems> {
    with_document(text, file, |ctx, doc| {
        let defs = format::read_document(ctx, doc);
        resolve::build(ctx, &defs, base_dir, file)
    })
}

/// Parses `text` as TOML and hands the document to `load`, which reports problems to
/// the context; returns what `load` built if no problem was reported, else every
/// problem in file order.
pub(crate) fn with_document<T>(
    text: &str,
    file: &str,
    load: impl FnOnce(&mut Ctx<'_>, &Table<'_, '_>) -> Option<T>,
) -> Result<T, Problems> {
    let file_name: Arc<str> = file.into();
    let lines = LineIndex::new(file_name.clone(), text);
    let (doc, syntax) = DeTable::parse_recoverable(text);
    if !syntax.is_empty() {
        let mut problems = Problems(
            syntax
                .iter()
                .map(|e| Problem {
                    origin: Some(lines.origin(e.span().map_or(0, |s| s.start))),
                    field: None,
                    problem: format!("TOML syntax error: {}", e.message().trim_end()),
                    fix: String::new(),
                })
                .collect(),
        );
        problems.sort();
        return Err(problems);
    }
    let mut ctx = Ctx {
        lines,
        problems: Vec::new(),
    };
    let table = Table::document(&doc);
    let loaded = load(&mut ctx, &table);
    match loaded {
        Some(s) if ctx.problems.is_empty() => Ok(s),
        _ => {
            let mut problems = Problems(ctx.problems);
            if problems.0.is_empty() {
                problems.0.push(Problem {
                    origin: None,
                    field: None,
                    problem: format!("{file} does not describe a complete configuration"),
                    fix: "see scenarios/README.md for the format".to_owned(),
                });
            }
            problems.sort();
            Err(problems)
        }
    }
}
