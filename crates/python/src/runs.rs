//! One run, and the same traffic under several schedulers.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use linkshare_core::sched::SchedulerKind;
use linkshare_report::summary::Summary;
use linkshare_report::{frame, plots, table, write_run_with_summary};
use linkshare_repro::compare::{Comparison, compare_runs, comparison_text, write_comparison};
use linkshare_scenario::{NoProgress, Scenario, did_you_mean};
use linkshare_sim::RunResult;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::convert::{chart_to_py, frame_to_py, option_error, problems_error, repro_error};
use crate::scenario::PyScenario;
use crate::wait::detached;

/// A finished run (`linkshare.Result` wraps it): the scenario that ran, the
/// simulator's result and its summary.
#[derive(Debug)]
#[pyclass(frozen, module = "linkshare._native", name = "Run")]
pub struct PyRun {
    pub scenario: Scenario,
    pub result: RunResult,
    pub summary: Summary,
}

impl PyRun {
    /// The run of `scenario` that gave `result`.
    pub fn new(scenario: Scenario, result: RunResult) -> PyRun {
        let summary = Summary::new(&scenario.name, &scenario.config, &result);
        PyRun {
            scenario,
            result,
            summary,
        }
    }
}

#[pymethods]
impl PyRun {
    /// `summary.json`'s text.
    fn summary_json(&self) -> PyResult<String> {
        self.summary
            .to_json()
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// Every table of the run by name (see `linkshare_report::frame::all`), as column
    /// buffers.
    fn frames<'py>(&self, py: Python<'py>) -> PyResult<Vec<(&'static str, Bound<'py, PyList>)>> {
        let classes: Vec<String> = self.summary.flows.iter().map(|f| f.class.clone()).collect();
        frame::all(&self.result, &classes)
            .iter()
            .map(|(name, f)| Ok((*name, frame_to_py(py, f)?)))
            .collect()
    }

    /// The plots of `linkshare run`: `(file stem, chart data, SVG text)`.
    fn charts<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<Vec<(&'static str, Bound<'py, PyAny>, String)>> {
        let title = plots::run_title(&self.summary.scenario, &self.result);
        let mut charts = vec![
            (
                "throughput",
                plots::throughput(&title, &self.result, Default::default()),
            ),
            ("delay_cdf", plots::delay_cdf(&title, &self.result)),
            (
                "backlog",
                plots::backlog(&title, &self.result, Default::default()),
            ),
        ];
        if self
            .result
            .flows
            .iter()
            .any(|f| !f.transport.trace.is_empty())
        {
            charts.push((
                "tcp_cwnd",
                linkshare_report::flows::cwnd(&title, &self.result),
            ));
        }
        charts
            .into_iter()
            .map(|(name, c)| Ok((name, chart_to_py(py, &c)?.into_any(), c.render())))
            .collect()
    }

    /// The terminal table of `linkshare run` (classes, then flows when some flow is
    /// TCP or has bursts).
    fn table(&self) -> String {
        let mut out = table::run_table(&self.result).render();
        if let Some(t) = table::flow_table(&self.result) {
            out.push('\n');
            out.push_str(&t.render());
        }
        out
    }

    /// Writes every output of `linkshare run` to `out`; returns the files written.
    fn write(&self, py: Python<'_>, out: PathBuf) -> PyResult<Vec<PathBuf>> {
        py.detach(|| write_run_with_summary(&out, &self.result, &self.summary))
            .map(|w| w.files)
            .map_err(|e| PyOSError::new_err(e.to_string()))
    }
}

/// A scheduler named on a call (`option` names the argument in the message).
pub fn scheduler_kind(py: Python<'_>, name: &str, option: &str) -> PyResult<SchedulerKind> {
    name.trim().parse::<SchedulerKind>().map_err(|_| {
        let hint = did_you_mean(name, SchedulerKind::ALL.iter().map(|k| k.name()));
        option_error(
            py,
            option,
            format!("unknown scheduler `{name}`"),
            format!("{hint}known schedulers: {}", SchedulerKind::all_names()),
        )
    })
}

/// Runs `scenario` (under `scheduler` on every link and with `seed`, when given),
/// without the GIL; Ctrl-C stops it.
#[pyfunction]
#[pyo3(signature = (scenario, scheduler = None, seed = None))]
pub fn run(
    py: Python<'_>,
    scenario: &PyScenario,
    scheduler: Option<&str>,
    seed: Option<u64>,
) -> PyResult<PyRun> {
    let mut s = scenario.inner.clone();
    if let Some(name) = scheduler {
        let kind = scheduler_kind(py, name, "scheduler")?;
        s.set_scheduler(kind, "scheduler")
            .map_err(|p| problems_error(py, &p))?;
    }
    if let Some(seed) = seed {
        s.config.seed = seed;
    }
    let stop = AtomicBool::new(false);
    let made = detached(
        py,
        &stop,
        || {
            let result = s.simulate_interruptible(&s.name, &NoProgress, Default::default(), &stop);
            result.map(|r| r.map(|r| PyRun::new(s.clone(), r)))
        },
        |_| Ok(()),
    )?;
    match made {
        Ok(Some(run)) => Ok(run),
        Ok(None) => Err(pyo3::exceptions::PyKeyboardInterrupt::new_err(
            "interrupted",
        )),
        Err(e) => Err(PyValueError::new_err(format!(
            "the simulator cannot run this scenario: {e}"
        ))),
    }
}

/// What [`compare`] returns: the runs by scheduler, the text, the files written.
type Compared = (Vec<(String, PyRun)>, String, Vec<PathBuf>);

/// Runs `scenario` under each of `schedulers` (same traffic, same seed); returns the
/// runs by scheduler, the side-by-side text of `linkshare compare` and, when `out` is
/// given, the files `linkshare compare --out OUT` writes.
#[pyfunction]
#[pyo3(signature = (scenario, schedulers, seed = None, out = None))]
pub fn compare(
    py: Python<'_>,
    scenario: &PyScenario,
    schedulers: Vec<String>,
    seed: Option<u64>,
    out: Option<PathBuf>,
) -> PyResult<Compared> {
    let mut kinds = Vec::new();
    for name in &schedulers {
        let kind = scheduler_kind(py, name, "schedulers")?;
        if kinds.contains(&kind) {
            return Err(option_error(
                py,
                "schedulers",
                format!("`{kind}` is listed twice"),
                "list each scheduler once".to_owned(),
            ));
        }
        kinds.push(kind);
    }
    let mut s = scenario.inner.clone();
    if let Some(seed) = seed {
        s.config.seed = seed;
    }
    let stop = AtomicBool::new(false);
    let made = detached(
        py,
        &stop,
        || {
            let Some(runs) = compare_runs(&s, &kinds, "schedulers", &NoProgress, &stop)? else {
                return Ok(None);
            };
            let written = match &out {
                Some(dir) => write_comparison(&s, &runs, dir)?.files,
                None => Vec::new(),
            };
            let comparison = Comparison {
                runs,
                written: Default::default(),
            };
            let text = comparison_text(&s, &comparison);
            let mut named = Vec::new();
            for (name, result) in comparison.runs {
                let mut one = s.clone();
                if let Ok(kind) = name.parse::<SchedulerKind>() {
                    one.set_scheduler(kind, "schedulers")?;
                }
                named.push((name, PyRun::new(one, result)));
            }
            Ok(Some((named, text, written)))
        },
        |_| Ok(()),
    )?;
    match made {
        Ok(Some(v)) => Ok(v),
        Ok(None) => Err(pyo3::exceptions::PyKeyboardInterrupt::new_err(
            "interrupted",
        )),
        Err(e) => Err(repro_error(py, e)),
    }
}
