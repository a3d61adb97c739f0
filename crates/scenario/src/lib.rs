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
mod budget;
pub mod describe;
pub mod edit;
mod format;
mod problem;
mod reader;
mod resolve;
pub mod shaper;
pub mod trace;

use std::fmt;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use linkshare_analysis::admission;
use linkshare_core::hierarchy::ClassId;
use linkshare_core::sched::keshav::KeshavConfig;
use linkshare_core::sched::{SchedulerConfig, SchedulerKind};
use linkshare_core::units::{Bytes, Duration, Instant};
use linkshare_sim::config::SimConfig;
use linkshare_sim::records::RecordSink;
use linkshare_sim::{RunResult, SimError, Simulator};
use toml::de::DeTable;

pub use best_effort::BestEffort;
pub use budget::{FALLBACK_BUDGET, default_memory_budget};
pub use edit::{EDIT_FILE, Edit};
pub use problem::did_you_mean;
pub use problem::{Problem, Problems};
pub use resolve::{ACK_CLASS, SINGLE_REVERSE_LINK};
pub use shaper::{
    Interfaces, PacingMode, ReverseConfig, ShaperConfig, ShaperSettings, SingleLink,
    load_shaper_file, load_shaper_str, load_single_link_file, load_single_link_str,
};

use problem::LineIndex;
use reader::{Ctx, Table};

/// Where a long run reports how far it got. Libraries call it; a face shows it (a
/// progress bar on a terminal) or not ([`NoProgress`]). `Sync`, so that runs on
/// several threads can share one.
pub trait Progress: Sync + std::fmt::Debug {
    /// Run `label` has simulated up to `now` of `total`, processing `events` events.
    fn update(&self, label: &str, now: Instant, total: Duration, events: u64);

    /// Run `label` is about to simulate about `events` events (an estimate, see
    /// [`linkshare_sim::event::estimate`]); a face may warn when that will take long.
    fn starting(&self, label: &str, events: u64) {
        let _ = (label, events);
    }
    /// Run `label` is over.
    fn finish(&self, label: &str);
}

/// Progress that goes nowhere.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn update(&self, _label: &str, _now: Instant, _total: Duration, _events: u64) {}
    fn finish(&self, _label: &str) {}
}

/// How a run is carried out, beyond what its scenario says.
#[derive(Debug, Default)]
pub struct RunOptions {
    /// Where the per-packet delay records go as the run makes them (the output writers
    /// spill them to a file); `None`: they are kept in memory.
    pub records: Option<Box<dyn RecordSink>>,
    /// Stop the run cleanly when its data takes more than this many bytes (see
    /// [`linkshare_sim::memory`]); `None`: no limit.
    pub memory_budget: Option<u64>,
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
    /// What it was loaded from: the text, and the edits made to it.
    source: Arc<Source>,
}

/// What a [`Scenario`] was loaded from: the scenario's text and the [`Edit`]s applied
/// to it, in order. Loading the same source again gives the same scenario (this is
/// how an edited scenario is sent to another process).
#[derive(Clone, PartialEq, Eq)]
pub struct Source {
    /// The TOML text.
    pub text: Arc<str>,
    /// The file it names in problems.
    pub file: String,
    /// Where relative trace paths start.
    pub base_dir: PathBuf,
    /// The edits, applied in order (a later edit of the same path wins).
    pub edits: Vec<Edit>,
}

impl fmt::Debug for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Source")
            .field("file", &self.file)
            .field("text_bytes", &self.text.len())
            .field("base_dir", &self.base_dir)
            .field("edits", &self.edits)
            .finish()
    }
}

impl Source {
    /// Loads the scenario: the text with the edits applied, checked by every rule of
    /// the loader (see [`load_str`] and [`edit`]).
    pub fn load(self) -> Result<Scenario, Problems> {
        load_source(Arc::new(self))
    }
}

/// The settings a link gives the disciplines that have their own (`[link.htb]`,
/// `[link.hfsc]`, `[link.cbq]`), kept
/// apart from the classes: the link's scheduler is built from those of the discipline
/// that runs it ([`DisciplineSettings::config`]), and the others wait unused (a file
/// may be run under another scheduler).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DisciplineSettings {
    /// `[link.htb]`: `r2q`, `hz`, `mtu` (tc's defaults when not given).
    pub htb: linkshare_core::sched::htb::HtbParams,
    /// `[link.jobs]` and the JoBS constraints written in the link's classes.
    pub jobs: JobsSettings,
    /// `[link.keshav]` (`limit`, `structure`, `delta`) and the classes' `delta`s: Keshav
    /// FQ's buffer, buffer structure and offsets; `None` when the file writes none of
    /// them (then Keshav FQ runs with [`KeshavConfig::default`]).
    pub keshav: Option<KeshavConfig>,
    /// `[link.hfsc]`: `restart` (the paper's `midpoint` when not given).
    pub hfsc: linkshare_core::sched::hfsc::HfscParams,
    /// `[link.cbq]`: `sharing` (Linux's `top-level` when not given).
    pub cbq: linkshare_core::sched::cbq::CbqParams,
}

impl DisciplineSettings {
    /// The discipline `kind` with these settings.
    pub fn config(&self, kind: SchedulerKind) -> SchedulerConfig {
        match kind {
            SchedulerKind::Htb => SchedulerConfig::Htb(self.htb),
            SchedulerKind::Jobs => SchedulerConfig::Jobs(self.jobs.config.clone()),
            SchedulerKind::Keshav => {
                SchedulerConfig::Keshav(self.keshav.clone().unwrap_or_default())
            }
            SchedulerKind::Hfsc => SchedulerConfig::Hfsc(self.hfsc),
            SchedulerKind::Cbq => SchedulerConfig::Cbq(self.cbq),
            k => k.into(),
        }
    }

    /// The disciplines other than `kind` whose settings the file gives (HTB's, H-FSC's
    /// and CBQ's when they differ from their defaults): a link run by `kind` ignores them.
    pub fn unused_under(&self, kind: SchedulerKind) -> Vec<SchedulerKind> {
        let written = [
            (
                SchedulerKind::Htb,
                self.htb != linkshare_core::sched::htb::HtbParams::default(),
            ),
            (SchedulerKind::Keshav, self.keshav.is_some()),
            (
                SchedulerKind::Hfsc,
                self.hfsc != linkshare_core::sched::hfsc::HfscParams::default(),
            ),
            (
                SchedulerKind::Cbq,
                self.cbq != linkshare_core::sched::cbq::CbqParams::default(),
            ),
        ];
        written
            .into_iter()
            .filter(|&(k, w)| w && k != kind)
            .map(|(k, _)| k)
            .collect()
    }
}

/// JoBS's settings of a link: `[link.jobs]` (mode, gain, buffer, sampling, ALTQ's bug
/// flags) and the constraints written in its `[[class]]` tables (`delay_bound`,
/// `loss_bound`, `min_rate`, `delay_ratio`, `loss_ratio`), kept with where the link's
/// keys were written. The class keys' positions are in the classes'
/// [`ClassSpec::field_origins`](linkshare_core::hierarchy::ClassSpec::field_origins).
/// The constraints are also the objectives the outputs measure, whichever scheduler
/// runs the link.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JobsSettings {
    /// The settings JoBS is built with when it runs the link.
    pub config: linkshare_core::sched::jobs::JobsConfig,
    /// Where each key of `[link.jobs]` was written.
    pub origins: Vec<(&'static str, linkshare_core::hierarchy::Origin)>,
}

impl JobsSettings {
    /// Whether the file gave JoBS any setting for this link.
    pub fn is_given(&self) -> bool {
        !self.origins.is_empty() || !self.config.classes.is_empty()
    }

    /// Where `[link.jobs]`'s `key` was written.
    pub fn origin_of(&self, key: &str) -> Option<&linkshare_core::hierarchy::Origin> {
        self.origins.iter().find(|(k, _)| *k == key).map(|(_, o)| o)
    }
}

/// What a scenario file says about a link that the simulator does not need but admission
/// control (`linkshare check`) does.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinkNotes {
    /// The link's `best_effort` parameters, whose curves the loader gave every leaf.
    pub best_effort: Option<BestEffort>,
    /// The `umax` of each `rt` curve written as `{ umax, dmax, rate }`, by class.
    pub rt_bursts: Vec<(ClassId, Bytes)>,
    /// The settings of the disciplines that have their own, for whichever runs the link.
    pub settings: DisciplineSettings,
    /// Whether this is the link the loader added for the acknowledgements of a
    /// single-link file's TCP flows ([`SINGLE_REVERSE_LINK`]): it stays FIFO when a
    /// command runs the scenario under another scheduler.
    pub ack_path: bool,
    /// The path of each class in the file (`class[2]`), by class id; the link's own
    /// path (`link`, `links[0]`) for the root. Locates warnings.
    pub class_paths: Vec<String>,
}

impl Scenario {
    /// What the scenario was loaded from.
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// The scenario with `edits` made after those it already has: the text and every
    /// edit are loaded again, so the result is checked like a file and its problems
    /// point into the file or at the edit (see [`edit`]). Changes made to `config`
    /// directly (a seed, [`Scenario::set_scheduler`]) are not carried over.
    pub fn with_edits(&self, edits: &[Edit]) -> Result<Scenario, Problems> {
        let mut source = (*self.source).clone();
        source.edits.extend_from_slice(edits);
        source.load()
    }

    /// Runs every link with `kind` instead of the scheduler the file names (all but the
    /// single-link form's acknowledgement link, which stays FIFO). Fails if `kind`
    /// cannot be built for some link's classes (`option` names the command-line option
    /// in the message).
    pub fn set_scheduler(&mut self, kind: SchedulerKind, option: &str) -> Result<(), Problems> {
        let mut configs = Vec::with_capacity(self.config.links.len());
        for (i, link) in self.config.links.iter().enumerate() {
            let notes = self.link_notes.get(i);
            if notes.is_some_and(|n| n.ack_path) {
                configs.push(None);
                continue;
            }
            let config = notes.map_or_else(|| kind.into(), |n| n.settings.config(kind));
            if let Err(problem) = config.validate(&link.classes) {
                return Err(Problems::option(
                    option,
                    format!("on link `{}`: {problem}", link.name),
                    format!(
                        "choose another scheduler; known schedulers: {}",
                        SchedulerKind::all_names()
                    ),
                ));
            }
            configs.push(Some(config));
        }
        for (link, config) in self.config.links.iter_mut().zip(configs) {
            if let Some(config) = config {
                link.scheduler = config;
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

    /// Runs the simulation, telling `progress` how far run `label` got.
    pub fn simulate(&self, label: &str, progress: &dyn Progress) -> Result<RunResult, SimError> {
        self.simulate_with(label, progress, RunOptions::default())
    }

    /// [`Scenario::simulate`] with `options`: where the records go, the memory budget.
    pub fn simulate_with(
        &self,
        label: &str,
        progress: &dyn Progress,
        options: RunOptions,
    ) -> Result<RunResult, SimError> {
        let sim = self.simulator(options)?;
        progress.starting(label, linkshare_sim::event::estimate(&self.config));
        let result = sim.run_with_progress(&mut |now, total, events| {
            progress.update(label, now, total, events)
        });
        progress.finish(label);
        Ok(result)
    }

    /// Runs the simulation like [`Scenario::simulate_with`], but stops soon (within
    /// about 2^20 events) after `stop` is set: then there is no result (`Ok(None)`).
    pub fn simulate_interruptible(
        &self,
        label: &str,
        progress: &dyn Progress,
        options: RunOptions,
        stop: &AtomicBool,
    ) -> Result<Option<RunResult>, SimError> {
        let sim = self.simulator(options)?;
        progress.starting(label, linkshare_sim::event::estimate(&self.config));
        let result = sim.run_interruptible(&mut |now, total, events| {
            progress.update(label, now, total, events);
            if stop.load(Ordering::Relaxed) {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
        progress.finish(label);
        Ok(result)
    }

    /// The simulator of this scenario with `options` applied.
    fn simulator(&self, options: RunOptions) -> Result<Simulator, SimError> {
        let mut sim = Simulator::new(&self.config)?;
        if let Some(sink) = options.records {
            sim = sim.record_to(sink);
        }
        if let Some(budget) = options.memory_budget {
            sim = sim.memory_budget(budget);
        }
        Ok(sim)
    }

    /// Advice about the scenario as it will run: for each link, the warnings of its
    /// discipline ([`SchedulerConfig::warnings`], tc's warnings under HTB), located at
    /// the fields they are about. Follows [`Scenario::set_scheduler`].
    pub fn warnings(&self) -> Vec<Problem> {
        let mut all = Vec::new();
        for (link, notes) in self.config.links.iter().zip(&self.link_notes) {
            if notes.ack_path {
                continue;
            }
            all.extend(resolve::discipline_warnings(
                &link.scheduler,
                &link.classes,
                &notes.class_paths,
            ));
        }
        all
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
    Source {
        text: text.into(),
        file: file.to_owned(),
        base_dir: base_dir.to_owned(),
        edits: Vec::new(),
    }
    .load()
}

/// Loads `source`: parses the text, applies the edits, reads and resolves.
fn load_source(source: Arc<Source>) -> Result<Scenario, Problems> {
    with_document(&source.text, &source.file, &source.edits, |ctx, doc| {
        let defs = format::read_document(ctx, doc);
        resolve::build(ctx, &defs, &source)
    })
}

/// Parses `text` as TOML, applies `edits` to the document and hands it to `load`, which
/// reports problems to the context; returns what `load` built if no problem was
/// reported, else every problem in file order.
pub(crate) fn with_document<T>(
    text: &str,
    file: &str,
    edits: &[Edit],
    load: impl FnOnce(&mut Ctx<'_>, &Table<'_, '_>) -> Option<T>,
) -> Result<T, Problems> {
    // The edits follow the text as lines `PATH = VALUE`, so that their values are parsed
    // and located like the file's (see `edit`).
    let mut all = String::with_capacity(text.len() + 64 * edits.len());
    all.push_str(text);
    let mut edit_starts = Vec::with_capacity(edits.len());
    for e in edits {
        all.push('\n');
        edit_starts.push(all.len());
        all.push_str(&e.line());
    }
    let file_name: Arc<str> = file.into();
    let lines = LineIndex::with_edits(file_name, &all, edit_starts.clone());
    let (mut doc, syntax) = DeTable::parse_recoverable(&all[..text.len()]);
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
    for (e, &at) in edits.iter().zip(&edit_starts) {
        edit::apply(&mut ctx, doc.get_mut(), e, &all, at);
    }
    if !ctx.problems.is_empty() {
        let mut problems = Problems(ctx.problems);
        problems.sort();
        return Err(problems);
    }
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
