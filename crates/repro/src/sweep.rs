//! Parameter sweeps: a scenario run for every combination of edited values, schedulers
//! and seeds, gathered in one tidy table (one row per run and class). What
//! `linkshare sweep` and the Python module's `linkshare.sweep` run.
//!
//! A [`Plan`] lists its runs ([`Plan::runs`]) in a fixed order: the grid's first axis
//! varies slowest, then the others in order, then the scheduler, then the seed. A run
//! ([`run`]) applies its edits ([`Scenario::with_edits`]), sets its scheduler and seed,
//! simulates and keeps the summary's class rows ([`RunRows`]); a run that cannot be
//! made (an invalid combination) keeps its error instead. [`table`] puts the rows of
//! any set of runs into the table, sorted by run number, so the table is the same
//! whichever order, thread or machine the runs were made in.
//!
//! [`run_all`] makes the runs on this machine's cores, with the reproductions' runner
//! ([`runner::run_parallel_on`]) on as many threads as asked.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};

use linkshare_core::sched::SchedulerKind;
use linkshare_report::frame::{Frame, TextColumn, Values};
use linkshare_report::summary::{ClassSummary, Summary};
use linkshare_scenario::{Edit, Progress, RunOptions, Scenario};
use linkshare_sim::RunResult;

use crate::runner::{self, Job};

/// One swept parameter: a dotted path and its values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Axis {
    /// The path (see [`linkshare_scenario::edit`]); it names the table's column.
    pub path: String,
    /// The values as TOML text.
    pub values: Vec<String>,
    /// The values as the face shows them: the table's cells.
    pub labels: Vec<String>,
}

impl Axis {
    /// An axis whose values are given as on a command line (see [`Edit::from_arg`]),
    /// shown as given.
    pub fn from_args(path: &str, values: &[&str]) -> Axis {
        Axis {
            path: path.to_owned(),
            values: values
                .iter()
                .map(|v| Edit::from_arg(path, v).value)
                .collect(),
            labels: values.iter().map(|v| (*v).to_owned()).collect(),
        }
    }
}

/// What to sweep: every combination of the axes' values, schedulers and seeds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The grid.
    pub axes: Vec<Axis>,
    /// The schedulers; `None` runs the scenario's own.
    pub schedulers: Vec<Option<SchedulerKind>>,
    /// The seeds; `None` runs the scenario's own.
    pub seeds: Vec<Option<u64>>,
}

/// One run of a plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunSpec {
    /// Its number, from 0, in the plan's order.
    pub index: usize,
    /// The index of its value on each axis.
    pub choice: Vec<usize>,
    /// Its scheduler (`None`: the scenario's).
    pub scheduler: Option<SchedulerKind>,
    /// Its seed (`None`: the scenario's).
    pub seed: Option<u64>,
}

/// The most runs a plan may have: its runs are listed in memory, and a face keeps every
/// run's rows until it writes the table. A larger sweep is split into several, whose
/// tables concatenate.
pub const MAX_RUNS: usize = 1_000_000;

impl Plan {
    /// The number of runs, or `None` if it is above [`MAX_RUNS`] (then [`Plan::runs`]
    /// must not be called).
    pub fn count(&self) -> Option<usize> {
        let mut n = self.schedulers.len().max(1);
        n = n.checked_mul(self.seeds.len().max(1))?;
        for axis in &self.axes {
            n = n.checked_mul(axis.values.len())?;
        }
        (n <= MAX_RUNS).then_some(n)
    }

    /// The problem and fix to report for a plan above [`MAX_RUNS`].
    pub fn too_many_runs() -> (String, String) {
        (
            format!("the sweep has more than {MAX_RUNS} runs"),
            "sweep fewer values, schedulers or seeds at once: split it into several sweeps, \
             whose tables concatenate"
                .to_owned(),
        )
    }

    /// The runs, in order (see the module docs). An empty list of schedulers or seeds
    /// counts as the scenario's own.
    pub fn runs(&self) -> Vec<RunSpec> {
        let schedulers = if self.schedulers.is_empty() {
            vec![None]
        } else {
            self.schedulers.clone()
        };
        let seeds = if self.seeds.is_empty() {
            vec![None]
        } else {
            self.seeds.clone()
        };
        let mut choices: Vec<Vec<usize>> = vec![Vec::new()];
        for axis in &self.axes {
            choices = choices
                .into_iter()
                .flat_map(|c| {
                    (0..axis.values.len()).map(move |v| {
                        let mut c = c.clone();
                        c.push(v);
                        c
                    })
                })
                .collect();
        }
        let mut runs = Vec::new();
        for choice in &choices {
            for &scheduler in &schedulers {
                for &seed in &seeds {
                    runs.push(RunSpec {
                        index: runs.len(),
                        choice: choice.clone(),
                        scheduler,
                        seed,
                    });
                }
            }
        }
        runs
    }

    /// The edits of run `spec`.
    pub fn edits(&self, spec: &RunSpec) -> Vec<Edit> {
        self.axes
            .iter()
            .zip(&spec.choice)
            .filter_map(|(a, &v)| Some(Edit::new(a.path.clone(), a.values.get(v)?.clone())))
            .collect()
    }

    /// A one-line description of run `spec` (`link.rate=5mbit drr seed 2`).
    pub fn label(&self, spec: &RunSpec) -> String {
        let mut parts: Vec<String> = self
            .axes
            .iter()
            .zip(&spec.choice)
            .map(|(a, &v)| format!("{}={}", a.path, a.labels.get(v).map_or("?", |l| l)))
            .collect();
        if let Some(k) = spec.scheduler {
            parts.push(k.name().to_owned());
        }
        if let Some(s) = spec.seed {
            parts.push(format!("seed {s}"));
        }
        format!("run {}: {}", spec.index, parts.join(" "))
    }
}

/// A run that was made: its scenario (edited, with its scheduler and seed), its result
/// and its summary.
#[derive(Debug)]
pub struct Run {
    /// The scenario that ran.
    pub scenario: Scenario,
    /// What the simulator returned.
    pub result: RunResult,
    /// Its summary (`summary.json`).
    pub summary: Summary,
}

/// What a run gives the table: its class rows, or why it could not be made.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RunRows {
    /// The run's number.
    pub index: usize,
    /// The seed it ran with.
    pub seed: Option<u64>,
    /// Why it could not be made (problems one per line), if it could not.
    pub error: Option<String>,
    /// One row per class of every link, as in `summary.json`.
    pub classes: Vec<ClassRow>,
}

/// A class's numbers in one run (the units of `summary.json`: packets, bytes, bit/s,
/// seconds).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[allow(missing_docs)]
pub struct ClassRow {
    pub link: String,
    pub scheduler: String,
    pub class: String,
    pub parent: Option<String>,
    pub leaf: bool,
    pub packets_sent: u64,
    pub bytes_sent: u64,
    pub packets_delivered: u64,
    pub bytes_delivered: u64,
    pub packets_dropped: u64,
    pub bytes_dropped: u64,
    pub packets_queued_at_end: u64,
    pub mean_rate_bps: f64,
    pub delay_count: u64,
    pub delay_min_s: f64,
    pub delay_mean_s: f64,
    pub delay_p50_s: f64,
    pub delay_p90_s: f64,
    pub delay_p99_s: f64,
    pub delay_p999_s: f64,
    pub delay_max_s: f64,
}

impl ClassRow {
    fn new(c: &ClassSummary, scheduler: &str) -> ClassRow {
        let d = &c.delay_s;
        ClassRow {
            link: c.link.clone(),
            scheduler: scheduler.to_owned(),
            class: c.name.clone(),
            parent: c.parent.clone(),
            leaf: c.leaf,
            packets_sent: c.packets_sent,
            bytes_sent: c.bytes_sent,
            packets_delivered: c.packets_delivered,
            bytes_delivered: c.bytes_delivered,
            packets_dropped: c.packets_dropped,
            bytes_dropped: c.bytes_dropped,
            packets_queued_at_end: c.packets_queued_at_end,
            mean_rate_bps: c.mean_rate_bps,
            delay_count: d.count,
            delay_min_s: d.min,
            delay_mean_s: d.mean,
            delay_p50_s: d.p50,
            delay_p90_s: d.p90,
            delay_p99_s: d.p99,
            delay_p999_s: d.p999,
            delay_max_s: d.max,
        }
    }
}

impl RunRows {
    /// The rows as JSON (how they travel from a worker process to the table); floats
    /// come back as the same doubles.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The rows from [`RunRows::to_json`]'s text.
    pub fn from_json(text: &str) -> Result<RunRows, String> {
        serde_json::from_str(text).map_err(|e| format!("not the rows of a sweep run: {e}"))
    }

    /// The rows of run `spec`, made (`Ok`) or not (`Err` with the reason).
    pub fn new(spec: &RunSpec, outcome: &Result<Run, String>) -> RunRows {
        match outcome {
            Ok(run) => {
                let scheduler_of = |link: &str| {
                    run.summary
                        .links
                        .iter()
                        .find(|l| l.name == link)
                        .map_or("?", |l| l.scheduler.as_str())
                };
                RunRows {
                    index: spec.index,
                    seed: Some(run.summary.seed),
                    error: None,
                    classes: run
                        .summary
                        .classes
                        .iter()
                        .map(|c| ClassRow::new(c, scheduler_of(&c.link)))
                        .collect(),
                }
            }
            Err(e) => RunRows {
                index: spec.index,
                seed: spec.seed,
                error: Some(e.clone()),
                classes: Vec::new(),
            },
        }
    }
}

/// Makes run `spec` of `plan` from `base`; `None` when `stop` was set before it ended.
/// Every run ends with one call of `progress.finish` (those that could not be made
/// too), so that a face can count finished runs.
pub fn run(
    base: &Scenario,
    plan: &Plan,
    spec: &RunSpec,
    progress: &dyn Progress,
    stop: &AtomicBool,
) -> Option<Result<Run, String>> {
    let label = plan.label(spec);
    let made = catch_unwind(AssertUnwindSafe(|| {
        make(base, plan, spec, &label, progress, stop)
    }))
    .unwrap_or_else(|_| {
        Some(Err(
            "internal error: the run panicked; this is a bug in linkshare, please report it"
                .to_owned(),
        ))
    });
    if matches!(made, Some(Err(_))) {
        progress.finish(&label);
    }
    made
}

fn make(
    base: &Scenario,
    plan: &Plan,
    spec: &RunSpec,
    label: &str,
    progress: &dyn Progress,
    stop: &AtomicBool,
) -> Option<Result<Run, String>> {
    let edits = plan.edits(spec);
    let mut scenario = if edits.is_empty() {
        base.clone()
    } else {
        match base.with_edits(&edits) {
            Ok(s) => s,
            Err(p) => return Some(Err(p.to_string())),
        }
    };
    if let Some(kind) = spec.scheduler
        && let Err(p) = scenario.set_scheduler(kind, "scheduler")
    {
        return Some(Err(p.to_string()));
    }
    if let Some(seed) = spec.seed {
        scenario.config.seed = seed;
    }
    let result = match scenario.simulate_interruptible(label, progress, RunOptions::default(), stop)
    {
        Ok(Some(r)) => r,
        Ok(None) => return None,
        Err(e) => {
            return Some(Err(format!("the simulator cannot run this scenario: {e}")));
        }
    };
    let summary = Summary::new(&scenario.name, &scenario.config, &result);
    Some(Ok(Run {
        scenario,
        result,
        summary,
    }))
}

/// Makes every run of `plan` on `jobs` threads (at least 1; [`runner::run_parallel_on`])
/// and returns `keep(spec, outcome)` of each, in run order; `None` when `stop` was set
/// (runs in progress stop within about 2^20 events, the others are not started).
pub fn run_all<T: Send>(
    base: &Scenario,
    plan: &Plan,
    jobs: usize,
    progress: &dyn Progress,
    stop: &AtomicBool,
    keep: &(dyn Fn(&RunSpec, Result<Run, String>) -> T + Sync),
) -> Option<Vec<T>> {
    let runs = plan.runs();
    let work: Vec<Job<'_, Option<T>>> = runs
        .iter()
        .map(|spec| {
            Box::new(move || {
                if stop.load(Ordering::Relaxed) {
                    return None;
                }
                run(base, plan, spec, progress, stop).map(|outcome| keep(spec, outcome))
            }) as Job<'_, Option<T>>
        })
        .collect();
    let done = runner::run_parallel_on(jobs, work);
    if stop.load(Ordering::Relaxed) {
        return None;
    }
    done.into_iter().collect()
}

/// The tidy table of `runs` (any subset of the plan's, in any order): one row per run
/// and class, one per run that could not be made. Columns: `run`, `scheduler`, `seed`,
/// one per axis (named by its path, its cells the axis's labels), `link`, `class`,
/// `parent`, `leaf`, the counters and delays of [`ClassRow`], `error`.
pub fn table(plan: &Plan, runs: &[RunRows]) -> Frame {
    let specs = plan.runs();
    let mut order: Vec<&RunRows> = runs.iter().collect();
    order.sort_by_key(|r| r.index);
    let mut run_col = Vec::new();
    let mut seed = Vec::new();
    let mut axes: Vec<Vec<Option<u32>>> = vec![Vec::new(); plan.axes.len()];
    let (mut scheduler, mut link, mut class, mut parent, mut error) = (
        TextColumn::default(),
        TextColumn::default(),
        TextColumn::default(),
        TextColumn::default(),
        TextColumn::default(),
    );
    let mut leaf = Vec::new();
    let mut ints: [Vec<Option<i64>>; 8] = Default::default();
    let mut floats: [Vec<f64>; 8] = Default::default();
    let int = |x: u64| Some(i64::try_from(x).unwrap_or(i64::MAX));
    for r in order {
        let spec = specs.get(r.index);
        let n = r.classes.len().max(1);
        for k in 0..n {
            run_col.push(int(r.index as u64));
            seed.push(r.seed.map(|s| i64::try_from(s).unwrap_or(i64::MAX)));
            for (a, col) in axes.iter_mut().enumerate() {
                col.push(spec.and_then(|s| s.choice.get(a)).map(|&v| v as u32));
            }
            error.push(r.error.as_deref());
            match r.classes.get(k) {
                Some(c) => {
                    scheduler.push(Some(&c.scheduler));
                    link.push(Some(&c.link));
                    class.push(Some(&c.class));
                    parent.push(c.parent.as_deref());
                    leaf.push(Some(c.leaf));
                    let counts = [
                        c.packets_sent,
                        c.bytes_sent,
                        c.packets_delivered,
                        c.bytes_delivered,
                        c.packets_dropped,
                        c.bytes_dropped,
                        c.packets_queued_at_end,
                        c.delay_count,
                    ];
                    for (col, x) in ints.iter_mut().zip(counts) {
                        col.push(int(x));
                    }
                    let values = [
                        c.mean_rate_bps,
                        c.delay_min_s,
                        c.delay_mean_s,
                        c.delay_p50_s,
                        c.delay_p90_s,
                        c.delay_p99_s,
                        c.delay_p999_s,
                        c.delay_max_s,
                    ];
                    for (col, x) in floats.iter_mut().zip(values) {
                        col.push(x);
                    }
                }
                None => {
                    scheduler.push(spec.and_then(|s| s.scheduler).map(|k| k.name()));
                    link.push(None);
                    class.push(None);
                    parent.push(None);
                    leaf.push(None);
                    ints.iter_mut().for_each(|c| c.push(None));
                    floats.iter_mut().for_each(|c| c.push(f64::NAN));
                }
            }
        }
    }
    let mut f = Frame::default();
    let mut push = |name: &str, values: Values| {
        f.columns.push(linkshare_report::frame::Column {
            name: name.to_owned(),
            values,
        });
    };
    push("run", Values::Int(run_col));
    push("scheduler", scheduler.finish());
    push("seed", Values::Int(seed));
    for (axis, codes) in plan.axes.iter().zip(axes) {
        push(
            &axis.path,
            Values::Text {
                codes,
                labels: axis.labels.clone(),
            },
        );
    }
    push("link", link.finish());
    push("class", class.finish());
    push("parent", parent.finish());
    push("leaf", Values::Bool(leaf));
    let int_names = [
        "packets_sent",
        "bytes_sent",
        "packets_delivered",
        "bytes_delivered",
        "packets_dropped",
        "bytes_dropped",
        "packets_queued_at_end",
        "delay_count",
    ];
    for (name, col) in int_names.into_iter().zip(ints) {
        push(name, Values::Int(col));
    }
    let float_names = [
        "mean_rate_bps",
        "delay_min_s",
        "delay_mean_s",
        "delay_p50_s",
        "delay_p90_s",
        "delay_p99_s",
        "delay_p999_s",
        "delay_max_s",
    ];
    for (name, col) in float_names.into_iter().zip(floats) {
        push(name, Values::Float(col));
    }
    push("error", error.finish());
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_vary_the_last_axis_then_scheduler_then_seed_fastest() {
        let plan = Plan {
            axes: vec![
                Axis::from_args("a", &["1", "2"]),
                Axis::from_args("b", &["x", "y", "z"]),
            ],
            schedulers: vec![Some(SchedulerKind::Fifo), Some(SchedulerKind::Drr)],
            seeds: vec![Some(7), Some(8)],
        };
        let runs = plan.runs();
        assert_eq!(runs.len(), 2 * 3 * 2 * 2);
        assert!(runs.iter().enumerate().all(|(i, r)| r.index == i));
        let key = |r: &RunSpec| (r.choice.clone(), r.scheduler.map(|k| k.name()), r.seed);
        assert_eq!(key(&runs[0]), (vec![0, 0], Some("fifo"), Some(7)));
        assert_eq!(key(&runs[1]), (vec![0, 0], Some("fifo"), Some(8)));
        assert_eq!(key(&runs[2]), (vec![0, 0], Some("drr"), Some(7)));
        assert_eq!(key(&runs[4]), (vec![0, 1], Some("fifo"), Some(7)));
        assert_eq!(key(&runs[23]), (vec![1, 2], Some("drr"), Some(8)));
        assert_eq!(
            plan.edits(&runs[23]),
            [Edit::new("a", "2"), Edit::new("b", "\"z\"")]
        );
        assert_eq!(plan.label(&runs[23]), "run 23: a=2 b=z drr seed 8");
    }

    #[test]
    fn no_axes_no_schedulers_no_seeds_is_one_run() {
        let plan = Plan {
            axes: Vec::new(),
            schedulers: Vec::new(),
            seeds: Vec::new(),
        };
        assert_eq!(plan.runs().len(), 1);
    }
}
