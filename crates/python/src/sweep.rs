//! Sweeps: the plan, its runs on this machine's cores, one run at a time (what a Ray
//! task calls), and the table.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use linkshare_core::units::{Duration, Instant};
use linkshare_repro::sweep::{self, Axis, Plan, RunRows, RunSpec};
use linkshare_scenario::Progress;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use crate::convert::{frame_to_py, option_error};
use crate::runs::{PyRun, scheduler_kind};
use crate::scenario::PyScenario;
use crate::wait::detached;

/// A sweep's plan (`linkshare.sweep` makes it). Pickled as its arguments.
#[derive(Debug)]
#[pyclass(frozen, module = "linkshare._native", name = "Plan")]
pub struct PyPlan {
    plan: Plan,
    runs: Vec<RunSpec>,
}

type AxisArg = (String, Vec<String>, Vec<String>);

#[pymethods]
impl PyPlan {
    /// A plan: `axes` as `(path, TOML values, labels)`, scheduler names (`None`: the
    /// scenario's) and seeds (`None`: the scenario's).
    #[new]
    fn new(
        py: Python<'_>,
        axes: Vec<AxisArg>,
        schedulers: Vec<Option<String>>,
        seeds: Vec<Option<u64>>,
    ) -> PyResult<Self> {
        for (path, values, labels) in &axes {
            if values.is_empty() || values.len() != labels.len() {
                return Err(option_error(
                    py,
                    "grid",
                    format!("`{path}` has no values"),
                    "give at least one value for every swept path".to_owned(),
                ));
            }
        }
        let kinds = schedulers
            .iter()
            .map(|s| {
                s.as_deref()
                    .map(|n| scheduler_kind(py, n, "schedulers"))
                    .transpose()
            })
            .collect::<PyResult<Vec<_>>>()?;
        let plan = Plan {
            axes: axes
                .into_iter()
                .map(|(path, values, labels)| Axis {
                    path,
                    values,
                    labels,
                })
                .collect(),
            schedulers: kinds,
            seeds,
        };
        if plan.count().is_none() {
            let (problem, fix) = Plan::too_many_runs();
            return Err(option_error(py, "grid", problem, fix));
        }
        let runs = plan.runs();
        Ok(PyPlan { plan, runs })
    }

    /// The number of runs.
    fn __len__(&self) -> usize {
        self.runs.len()
    }

    /// Run `index`: `(choice of each axis, scheduler name or None, seed or None)`.
    fn run_spec(&self, index: usize) -> PyResult<(Vec<usize>, Option<&'static str>, Option<u64>)> {
        let spec = self.spec(index)?;
        Ok((
            spec.choice.clone(),
            spec.scheduler.map(|k| k.name()),
            spec.seed,
        ))
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let class = py.import("linkshare._native")?.getattr("Plan")?;
        let axes: Vec<AxisArg> = self
            .plan
            .axes
            .iter()
            .map(|a| (a.path.clone(), a.values.clone(), a.labels.clone()))
            .collect();
        let schedulers: Vec<Option<&str>> = self
            .plan
            .schedulers
            .iter()
            .map(|k| k.map(|k| k.name()))
            .collect();
        let args = (axes, schedulers, self.plan.seeds.clone()).into_pyobject(py)?;
        PyTuple::new(py, [class, args.into_any()])
    }
}

impl PyPlan {
    fn spec(&self, index: usize) -> PyResult<&RunSpec> {
        self.runs.get(index).ok_or_else(|| {
            PyValueError::new_err(format!(
                "the plan has {} runs, not {}",
                self.runs.len(),
                index + 1
            ))
        })
    }
}

/// Counts finished runs for the face's progress bar.
#[derive(Debug, Default)]
struct Finished(AtomicUsize);

impl Progress for Finished {
    fn update(&self, _label: &str, _now: Instant, _total: Duration, _events: u64) {}
    fn finish(&self, _label: &str) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// What one run gives back: its rows as JSON, and the run itself when kept.
type Kept = (String, Option<PyRun>);

fn kept(spec: &RunSpec, outcome: Result<sweep::Run, String>, keep: bool) -> Kept {
    let rows = RunRows::new(spec, &outcome).to_json();
    let run = match outcome {
        Ok(r) if keep => Some(PyRun {
            scenario: r.scenario,
            result: r.result,
            summary: r.summary,
        }),
        _ => None,
    };
    (rows, run)
}

/// Makes every run of `plan` on `jobs` threads without the GIL, calling
/// `on_progress(finished runs)` about ten times a second; Ctrl-C stops the sweep.
/// Returns the table (column buffers) and, when `keep`, each run (or `None` for the
/// runs that could not be made).
#[pyfunction]
#[pyo3(signature = (scenario, plan, jobs, keep, on_progress))]
pub fn sweep_local<'py>(
    py: Python<'py>,
    scenario: &PyScenario,
    plan: &PyPlan,
    jobs: usize,
    keep: bool,
    on_progress: Bound<'py, PyAny>,
) -> PyResult<(Bound<'py, PyList>, Vec<Option<PyRun>>)> {
    let stop = AtomicBool::new(false);
    let finished = Finished::default();
    let jobs = if jobs == 0 {
        linkshare_repro::runner::all_cores()
    } else {
        jobs
    };
    let made = detached(
        py,
        &stop,
        || {
            sweep::run_all(
                &scenario.inner,
                &plan.plan,
                jobs,
                &finished,
                &stop,
                &|spec, o| kept(spec, o, keep),
            )
        },
        |_| {
            on_progress
                .call1((finished.0.load(Ordering::Relaxed),))
                .map(|_| ())
        },
    )?;
    let Some(made) = made else {
        return Err(pyo3::exceptions::PyKeyboardInterrupt::new_err(
            "interrupted",
        ));
    };
    let (rows, runs): (Vec<String>, Vec<Option<PyRun>>) = made.into_iter().unzip();
    let rows = rows
        .iter()
        .map(|r| RunRows::from_json(r).map_err(PyValueError::new_err))
        .collect::<PyResult<Vec<_>>>()?;
    Ok((frame_to_py(py, &sweep::table(&plan.plan, &rows))?, runs))
}

/// Makes run `index` of `plan` (what one Ray task does); returns its rows as JSON and,
/// when `keep`, the run.
#[pyfunction]
pub fn sweep_run(
    py: Python<'_>,
    scenario: &PyScenario,
    plan: &PyPlan,
    index: usize,
    keep: bool,
) -> PyResult<(String, Option<PyRun>)> {
    let spec = plan.spec(index)?;
    let stop = AtomicBool::new(false);
    let made = detached(
        py,
        &stop,
        || {
            sweep::run(
                &scenario.inner,
                &plan.plan,
                spec,
                &linkshare_scenario::NoProgress,
                &stop,
            )
        },
        |_| Ok(()),
    )?;
    let Some(outcome) = made else {
        return Err(pyo3::exceptions::PyKeyboardInterrupt::new_err(
            "interrupted",
        ));
    };
    Ok(kept(spec, outcome, keep))
}

/// The table of runs given as [`sweep_run`]'s JSON rows, in any order.
#[pyfunction]
pub fn sweep_table<'py>(
    py: Python<'py>,
    plan: &PyPlan,
    rows: Vec<String>,
) -> PyResult<Bound<'py, PyList>> {
    let rows = rows
        .iter()
        .map(|r| RunRows::from_json(r).map_err(PyValueError::new_err))
        .collect::<PyResult<Vec<_>>>()?;
    frame_to_py(py, &sweep::table(&plan.plan, &rows))
}
