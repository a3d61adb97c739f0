//! Loading scenarios and editing them by dotted path.

use std::path::{Path, PathBuf};

use linkshare_scenario::describe::describe;
use linkshare_scenario::{Edit, Scenario, Source};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::convert::problems_error;

/// A loaded, valid scenario (`linkshare.Scenario` wraps it). Pickled as its source:
/// the text, the file name, the base directory of traces and the edits.
#[derive(Debug)]
#[pyclass(frozen, module = "linkshare._native", name = "Scenario")]
pub struct PyScenario {
    pub inner: Scenario,
}

impl PyScenario {
    fn loaded(py: Python<'_>, s: Result<Scenario, linkshare_scenario::Problems>) -> PyResult<Self> {
        s.map(|inner| PyScenario { inner })
            .map_err(|p| problems_error(py, &p))
    }
}

#[pymethods]
impl PyScenario {
    /// `[scenario] name`.
    #[getter]
    fn name(&self) -> &str {
        &self.inner.name
    }

    /// `[scenario] description`.
    #[getter]
    fn description(&self) -> Option<&str> {
        self.inner.description.as_deref()
    }

    /// The file it was read from, as named.
    #[getter]
    fn file(&self) -> &str {
        &self.inner.file
    }

    /// The seed it runs with.
    #[getter]
    fn seed(&self) -> u64 {
        self.inner.config.seed
    }

    /// Simulated time, seconds.
    #[getter]
    fn duration_s(&self) -> f64 {
        self.inner.config.duration.as_secs_f64()
    }

    /// The edits made so far, as `(path, TOML value)`.
    #[getter]
    fn edits(&self) -> Vec<(String, String)> {
        self.inner
            .source()
            .edits
            .iter()
            .map(|e| (e.path.clone(), e.value.clone()))
            .collect()
    }

    /// What `linkshare validate` prints: the links and the class trees.
    fn describe(&self) -> String {
        describe(&self.inner)
    }

    /// The scenario with `edits` (`(path, TOML value)` pairs) made after its own,
    /// checked like a file.
    fn with_edits(&self, py: Python<'_>, edits: Vec<(String, String)>) -> PyResult<Self> {
        let edits: Vec<Edit> = edits.into_iter().map(|(p, v)| Edit::new(p, v)).collect();
        Self::loaded(py, self.inner.with_edits(&edits))
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let s = self.inner.source();
        let load = py.import("linkshare._native")?.getattr("load_source")?;
        let args = (
            s.text.to_string(),
            s.file.clone(),
            s.base_dir.clone(),
            s.edits
                .iter()
                .map(|e| (e.path.clone(), e.value.clone()))
                .collect::<Vec<_>>(),
        );
        PyTuple::new(py, [load, args.into_pyobject(py)?.into_any()])
    }
}

/// Reads and loads the scenario file at `path`.
#[pyfunction]
pub fn load_file(py: Python<'_>, path: PathBuf) -> PyResult<PyScenario> {
    PyScenario::loaded(py, linkshare_scenario::load_file(&path))
}

/// Loads a scenario from `text`, named `file` in problems, its traces relative to
/// `base_dir`, with `edits` made to it.
#[pyfunction]
#[pyo3(signature = (text, file, base_dir, edits = Vec::new()))]
pub fn load_source(
    py: Python<'_>,
    text: &str,
    file: String,
    base_dir: PathBuf,
    edits: Vec<(String, String)>,
) -> PyResult<PyScenario> {
    let source = Source {
        text: text.into(),
        file,
        base_dir: if base_dir.as_os_str().is_empty() {
            Path::new(".").to_owned()
        } else {
            base_dir
        },
        edits: edits.into_iter().map(|(p, v)| Edit::new(p, v)).collect(),
    };
    PyScenario::loaded(py, source.load())
}

/// A Python value as the TOML text of an edit.
#[pyfunction]
pub fn toml_value(value: &Bound<'_, PyAny>) -> PyResult<String> {
    crate::convert::toml_text(value)
}
