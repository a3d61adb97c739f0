//! `linkshare._native`: the Python module's compiled half, a thin face over the
//! library crates like the command line. It converts arguments and results and
//! computes nothing itself; `python/linkshare/` turns what it returns into pandas
//! DataFrames, dicts and matplotlib figures.
//!
//! Long work (runs, comparisons, sweeps, reproductions) happens with the GIL released
//! on a thread of its own while the calling thread waits, shows progress and checks
//! for Ctrl-C ([`wait::detached`]): an interrupted run stops within about 2^20
//! simulated events and raises `KeyboardInterrupt`.

mod analysis;
mod convert;
mod runs;
mod scenario;
mod sweep;
mod wait;

use pyo3::prelude::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<scenario::PyScenario>()?;
    m.add_class::<runs::PyRun>()?;
    m.add_class::<sweep::PyPlan>()?;
    m.add_function(wrap_pyfunction!(scenario::load_file, m)?)?;
    m.add_function(wrap_pyfunction!(scenario::load_source, m)?)?;
    m.add_function(wrap_pyfunction!(scenario::toml_value, m)?)?;
    m.add_function(wrap_pyfunction!(runs::run, m)?)?;
    m.add_function(wrap_pyfunction!(runs::compare, m)?)?;
    m.add_function(wrap_pyfunction!(analysis::alloc, m)?)?;
    m.add_function(wrap_pyfunction!(analysis::bounds, m)?)?;
    m.add_function(wrap_pyfunction!(analysis::check, m)?)?;
    m.add_function(wrap_pyfunction!(analysis::repro, m)?)?;
    m.add_function(wrap_pyfunction!(analysis::repro_list, m)?)?;
    m.add_function(wrap_pyfunction!(sweep::sweep_local, m)?)?;
    m.add_function(wrap_pyfunction!(sweep::sweep_run, m)?)?;
    m.add_function(wrap_pyfunction!(sweep::sweep_table, m)?)?;
    let schedulers: Vec<&str> = linkshare_core::sched::SchedulerKind::ALL
        .iter()
        .map(|k| k.name())
        .collect();
    m.add("SCHEDULERS", schedulers)?;
    Ok(())
}
