//! Conversions between the libraries' values and Python's: problems to
//! `linkshare.ScenarioError`, frames to column buffers (turned into DataFrames by
//! `linkshare/_frames.py`, the one place that does), charts to plain data, Python
//! values to TOML.

use linkshare_report::frame::{Frame, Values};
use linkshare_report::svg::{LineChart, Scale};
use linkshare_scenario::Problems;
use pyo3::exceptions::{PyMemoryError, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

/// `linkshare.ScenarioError` carrying `problems`: one `(file, line, column, field,
/// problem, fix)` per problem (file, line and column `None` without a position).
pub fn problems_error(py: Python<'_>, problems: &Problems) -> PyErr {
    let made = || -> PyResult<PyErr> {
        let items: Vec<_> = problems
            .0
            .iter()
            .map(|p| {
                let o = p.origin.as_ref();
                (
                    o.map(|o| o.file.to_string()),
                    o.map(|o| o.line),
                    o.map(|o| o.column),
                    p.field.clone(),
                    p.problem.clone(),
                    p.fix.clone(),
                )
            })
            .collect();
        let class = py.import("linkshare._errors")?.getattr("ScenarioError")?;
        Ok(PyErr::from_value(class.call1((items,))?))
    };
    made().unwrap_or_else(|e| e)
}

/// A problem without a position, as a `ScenarioError` (an option of a call).
pub fn option_error(py: Python<'_>, option: &str, problem: String, fix: String) -> PyErr {
    problems_error(py, &Problems::option(option, problem, fix))
}

/// A repro error as the exception a Python caller expects.
pub fn repro_error(py: Python<'_>, e: linkshare_repro::ReproError) -> PyErr {
    use linkshare_repro::ReproError;
    match e {
        ReproError::Problems(p) => problems_error(py, &p),
        ReproError::Write(w) => PyOSError::new_err(w.to_string()),
        ReproError::Simulator(m) => {
            PyValueError::new_err(format!("the simulator cannot run this scenario: {m}"))
        }
        ReproError::Incomplete(m) => PyMemoryError::new_err(format!(
            "the run stopped early, its data past the memory budget: {m}"
        )),
        ReproError::Internal(m) => PyRuntimeError::new_err(format!(
            "internal error: {m}; this is a bug in linkshare, please report it"
        )),
    }
}

/// Little-endian bytes of `values`.
fn bytes_of<T: Copy, const N: usize>(
    values: impl Iterator<Item = T>,
    f: fn(T) -> [u8; N],
) -> Vec<u8> {
    let mut out = Vec::new();
    for v in values {
        out.extend_from_slice(&f(v));
    }
    out
}

/// The missing-value mask of `values` (one byte per row, 1 = missing), or `None` when
/// nothing is missing.
fn mask<T>(values: &[Option<T>]) -> Option<Vec<u8>> {
    values
        .iter()
        .any(Option::is_none)
        .then(|| values.iter().map(|v| u8::from(v.is_none())).collect())
}

/// `frame` as a list of `(name, kind, data, extra)`: kind `"int"` (data: i64 bytes,
/// extra: mask bytes or `None`), `"float"` (f64 bytes, NaN missing; extra `None`),
/// `"bool"` (u8 bytes, mask), `"text"` (i32 codes, -1 missing; extra: the labels).
pub fn frame_to_py<'py>(py: Python<'py>, frame: &Frame) -> PyResult<Bound<'py, PyList>> {
    let columns = PyList::empty(py);
    for c in &frame.columns {
        let (kind, data, extra): (&str, Vec<u8>, Bound<'py, PyAny>) = match &c.values {
            Values::Int(v) => (
                "int",
                bytes_of(v.iter().map(|x| x.unwrap_or(0)), i64::to_le_bytes),
                mask(v)
                    .map(|m| PyBytes::new(py, &m))
                    .into_pyobject(py)?
                    .into_any(),
            ),
            Values::Float(v) => (
                "float",
                bytes_of(v.iter().copied(), f64::to_le_bytes),
                py.None().into_bound(py),
            ),
            Values::Bool(v) => (
                "bool",
                v.iter().map(|b| u8::from(b.unwrap_or(false))).collect(),
                mask(v)
                    .map(|m| PyBytes::new(py, &m))
                    .into_pyobject(py)?
                    .into_any(),
            ),
            Values::Text { codes, labels } => (
                "text",
                bytes_of(
                    codes.iter().map(|c| c.map_or(-1, |c| c as i32)),
                    i32::to_le_bytes,
                ),
                PyList::new(py, labels)?.into_any(),
            ),
        };
        let item = (c.name.as_str(), kind, PyBytes::new(py, &data), extra);
        columns.append(item)?;
    }
    Ok(columns)
}

/// A chart as a dict: `title`, `x_label`, `y_label`, `x_log`, `y_log`, and `series`,
/// a list of `(name, xs, ys, step)` with xs and ys as f64 bytes.
pub fn chart_to_py<'py>(py: Python<'py>, chart: &LineChart) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("title", &chart.title)?;
    d.set_item("x_label", &chart.x_label)?;
    d.set_item("y_label", &chart.y_label)?;
    d.set_item("x_log", matches!(chart.x_axis.scale, Scale::Log10))?;
    d.set_item("y_log", matches!(chart.y_axis.scale, Scale::Log10))?;
    let series = PyList::empty(py);
    for s in &chart.series {
        let xs = bytes_of(s.points.iter().map(|p| p.0), f64::to_le_bytes);
        let ys = bytes_of(s.points.iter().map(|p| p.1), f64::to_le_bytes);
        series.append((
            s.name.as_str(),
            PyBytes::new(py, &xs),
            PyBytes::new(py, &ys),
            s.step,
        ))?;
    }
    d.set_item("series", series)?;
    Ok(d)
}

/// A Python value as TOML text: `bool`, `int`, `float`, `str`, lists and tuples of
/// them, and dicts with string keys (inline tables).
pub fn toml_text(value: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(toml_value(value)?.to_string())
}

fn toml_value(value: &Bound<'_, PyAny>) -> PyResult<toml::Value> {
    if value.is_instance_of::<PyBool>() {
        return Ok(toml::Value::Boolean(value.extract()?));
    }
    if value.is_instance_of::<PyInt>() {
        let n: i64 = value.extract().map_err(|_| {
            PyValueError::new_err(format!("{value} does not fit in a TOML integer (64 bits)"))
        })?;
        return Ok(toml::Value::Integer(n));
    }
    if value.is_instance_of::<PyFloat>() {
        return Ok(toml::Value::Float(value.extract()?));
    }
    if value.is_instance_of::<PyString>() {
        return Ok(toml::Value::String(value.extract()?));
    }
    if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        let items = value
            .try_iter()?
            .map(|v| toml_value(&v?))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(toml::Value::Array(items));
    }
    if let Ok(d) = value.cast::<PyDict>() {
        let mut table = toml::Table::new();
        for (k, v) in d.iter() {
            let key: String = k.extract().map_err(|_| {
                PyValueError::new_err(format!("a table's key must be a string, not {k}"))
            })?;
            table.insert(key, toml_value(&v)?);
        }
        return Ok(toml::Value::Table(table));
    }
    Err(PyValueError::new_err(format!(
        "cannot write {} ({}) in a scenario: use a number, a string such as \"10mbit\", a \
         boolean, a list or a dict",
        value.repr()?,
        value.get_type().name()?
    )))
}
