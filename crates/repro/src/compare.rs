//! The same traffic (same seed) under several schedulers, side by side: what
//! `linkshare compare` and `linkshare demo` run, and the Python module's `compare`.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use linkshare_core::sched::SchedulerKind;
use linkshare_report::spill::records_in;
use linkshare_report::summary::{Summary, stop_reason};
use linkshare_report::{WriteOptions, Written, csv, plots, table, write_run, write_run_with};
use linkshare_scenario::{Progress, RunOptions, Scenario};
use linkshare_sim::RunResult;

use crate::ReproError;

/// The runs of a comparison and the files written.
#[derive(Debug)]
pub struct Comparison {
    /// Scheduler name and result, in the order asked for.
    pub runs: Vec<(String, RunResult)>,
    /// Every file written.
    pub written: Written,
}

/// Runs `scenario` under each of `kinds` (`option` names where the kinds came from, for
/// the message when one cannot be built), writing each run's outputs to
/// `out/<scheduler>/` as it ends (its per-packet records spilled there while it runs)
/// and the comparison (`compare.csv`, `throughput.svg`, `delay_cdf.svg`) to `out`. A run
/// whose data grows past `memory_budget` stops the comparison
/// ([`ReproError::Incomplete`]) after its outputs are written.
pub fn compare(
    scenario: &Scenario,
    kinds: &[SchedulerKind],
    option: &str,
    out: &Path,
    progress: &dyn Progress,
    write: &WriteOptions,
    memory_budget: Option<u64>,
) -> Result<Comparison, ReproError> {
    if let Some(budget) = memory_budget {
        scenario.check_memory(budget)?;
    }
    let mut written = Written::default();
    let mut runs = Vec::with_capacity(kinds.len());
    for &kind in kinds {
        let mut s = scenario.clone();
        s.set_scheduler(kind, option)?;
        let run_dir = out.join(kind.name());
        let options = RunOptions {
            records: Some(records_in(&run_dir, s.config.links.len())?),
            memory_budget,
        };
        let result = s
            .simulate_with(&label(scenario, kind), progress, options)
            .map_err(|e| ReproError::Simulator(e.to_string()))?;
        let summary = Summary::with_outputs(&s.name, &s.config, &result, &write.outputs);
        let files = write_run_with(&run_dir, &result, &summary, write)?;
        written.files.extend(files.files);
        if let Some(reason) = stop_reason(&result) {
            return Err(ReproError::Incomplete(reason));
        }
        runs.push((kind.name().to_owned(), result));
    }
    write_comparison_files(scenario, &runs, out, write.plots, &mut written)?;
    Ok(Comparison { runs, written })
}

/// The runs of [`compare`] without writing anything (their records kept in memory):
/// scheduler name and result, in the order of `kinds`; `None` when `stop` was set (see
/// [`Scenario::simulate_interruptible`]).
pub fn compare_runs(
    scenario: &Scenario,
    kinds: &[SchedulerKind],
    option: &str,
    progress: &dyn Progress,
    stop: &AtomicBool,
) -> Result<Option<Vec<(String, RunResult)>>, ReproError> {
    let mut runs = Vec::with_capacity(kinds.len());
    for &kind in kinds {
        let mut s = scenario.clone();
        s.set_scheduler(kind, option)?;
        let Some(result) = s
            .simulate_interruptible(
                &label(scenario, kind),
                progress,
                RunOptions::default(),
                stop,
            )
            .map_err(|e| ReproError::Simulator(e.to_string()))?
        else {
            return Ok(None);
        };
        runs.push((kind.name().to_owned(), result));
    }
    Ok(Some(runs))
}

/// Writes the files of [`compare`] for `runs` of `scenario` (named by their
/// schedulers, as [`compare_runs`] returns them) to `out`, with the default outputs.
pub fn write_comparison(
    scenario: &Scenario,
    runs: &[(String, RunResult)],
    out: &Path,
) -> Result<Written, ReproError> {
    let mut written = Written::default();
    for (name, result) in runs {
        let mut s = scenario.clone();
        if let Ok(kind) = name.parse::<SchedulerKind>() {
            s.set_scheduler(kind, "scheduler")?;
        }
        let files = write_run(&out.join(name), &s.name, &s.config, result)?;
        written.files.extend(files.files);
    }
    let plots = WriteOptions::default().plots;
    write_comparison_files(scenario, runs, out, plots, &mut written)?;
    Ok(written)
}

/// `compare.csv` and the overlaid throughput and delay plots of `runs`, in `out`.
fn write_comparison_files(
    scenario: &Scenario,
    runs: &[(String, RunResult)],
    out: &Path,
    plot_options: plots::PlotOptions,
    written: &mut Written,
) -> Result<(), ReproError> {
    written.write(out, "compare.csv", csv::compare(runs).as_bytes())?;
    let throughput = plots::compare_throughput(&scenario.name, runs, plot_options).render();
    written.write(out, "throughput.svg", throughput.as_bytes())?;
    let cdf = plots::compare_delay_cdf(&scenario.name, runs).render();
    written.write(out, "delay_cdf.svg", cdf.as_bytes())?;
    Ok(())
}

/// How progress names the run of `scenario` under `kind`.
fn label(scenario: &Scenario, kind: SchedulerKind) -> String {
    format!("{} under {kind}", scenario.name)
}

/// The side-by-side table of `comparison` of `scenario`, with its heading.
pub fn comparison_text(scenario: &Scenario, comparison: &Comparison) -> String {
    format!(
        "{}: {} simulated per scheduler, seed {}; rate delivered and delay at the port per \
         class\n\n{}",
        scenario.name,
        scenario.config.duration,
        scenario.config.seed,
        table::compare_table(&comparison.runs).render()
    )
}
