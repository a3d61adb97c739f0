//! What a scenario guarantees before it runs (`alloc`, `bounds`, `check`), and the
//! papers' reproductions: the command line's JSON documents and texts.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use linkshare_report::summary::to_json;
use linkshare_report::{
    alloc as alloc_report, bounds as bounds_report, check as check_report, reference,
};
use linkshare_repro::{ALL, Options, find};
use linkshare_scenario::{NoProgress, did_you_mean};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::convert::{option_error, repro_error};
use crate::runs::scheduler_kind;
use crate::scenario::PyScenario;
use crate::wait::detached;

fn json_text(v: &impl serde::Serialize) -> PyResult<String> {
    to_json(v).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// `linkshare alloc --json` and `linkshare alloc`: `(json, text)`.
#[pyfunction]
pub fn alloc(py: Python<'_>, scenario: &PyScenario) -> PyResult<(String, String)> {
    let s = &scenario.inner;
    let refs = py.detach(|| reference::reference(&s.config));
    Ok((
        json_text(&alloc_report::json(&s.name, &s.config, &refs))?,
        alloc_report::render(&s.name, &s.config, &refs),
    ))
}

/// `linkshare bounds --json` and `linkshare bounds`: `(json, text)`.
#[pyfunction]
pub fn bounds(scenario: &PyScenario) -> PyResult<(String, String)> {
    let s = &scenario.inner;
    let all = bounds_report::scenario_bounds(&s.config);
    Ok((
        json_text(&all)?,
        bounds_report::render(&s.name, &s.config, &all),
    ))
}

/// `linkshare check --json` and `linkshare check`: `(json, text, admissible)`.
#[pyfunction]
pub fn check(scenario: &PyScenario) -> PyResult<(String, String, bool)> {
    let s = &scenario.inner;
    let all = check_report::admissions(&s.config, |i| s.admission_options(i));
    let admissible = all.iter().all(|l| l.admission.is_admissible());
    Ok((
        json_text(&check_report::json(&all))?,
        check_report::render(&s.name, &all),
        admissible,
    ))
}

/// The reproductions: `(name, about)`.
#[pyfunction]
pub fn repro_list() -> Vec<(&'static str, &'static str)> {
    ALL.iter().map(|r| (r.name, r.about)).collect()
}

/// Runs reproduction `name` as `linkshare repro NAME --out OUT` does; returns what it
/// prints.
#[pyfunction]
#[pyo3(signature = (name, out, schedulers = None, shorten = 1, seeds = linkshare_repro::runner::DEFAULT_SEEDS))]
pub fn repro(
    py: Python<'_>,
    name: &str,
    out: PathBuf,
    schedulers: Option<Vec<String>>,
    shorten: u32,
    seeds: u32,
) -> PyResult<String> {
    let Some(r) = find(name.trim()) else {
        let hint = did_you_mean(name, ALL.iter().map(|r| r.name));
        let names: Vec<&str> = ALL.iter().map(|r| r.name).collect();
        return Err(option_error(
            py,
            "name",
            format!("unknown reproduction `{name}`"),
            format!("{hint}the reproductions are: {}", names.join(", ")),
        ));
    };
    let only = match schedulers {
        None => None,
        Some(names) => Some(
            names
                .iter()
                .map(|n| scheduler_kind(py, n, "schedulers"))
                .collect::<PyResult<Vec<_>>>()?,
        ),
    };
    let options = Options {
        out: &out,
        only: only.as_deref(),
        shorten: shorten.max(1),
        progress: &NoProgress,
        seeds: seeds.max(1),
        write: Default::default(),
        memory_budget: Some(linkshare_scenario::default_memory_budget()),
    };
    // A reproduction cannot be stopped in the middle (its runs take no stop flag):
    // Ctrl-C is raised when it ends.
    let stop = AtomicBool::new(false);
    let printed = detached(
        py,
        &stop,
        || {
            let mut text = Vec::new();
            (r.run)(&options, &mut text).map(|_checks| text)
        },
        |_| Ok(()),
    )?;
    let text = printed.map_err(|e| repro_error(py, e))?;
    Ok(String::from_utf8_lossy(&text).into_owned())
}
