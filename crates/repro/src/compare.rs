//! The same traffic (same seed) under several schedulers, side by side: what
//! `linkshare compare` and `linkshare demo` run.

use std::path::Path;

use linkshare_core::sched::SchedulerKind;
use linkshare_report::spill::records_in;
use linkshare_report::summary::{Summary, stop_reason};
use linkshare_report::{WriteOptions, Written, csv, plots, table, write_run_with};
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
/// `out/<scheduler>/` and the comparison (`compare.csv`, `throughput.svg`,
/// `delay_cdf.svg`) to `out`.
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
            .simulate_with(
                &format!("{} under {kind}", scenario.name),
                progress,
                options,
            )
            .map_err(|e| ReproError::Simulator(e.to_string()))?;
        let summary = Summary::with_outputs(&s.name, &s.config, &result, &write.outputs);
        let files = write_run_with(&run_dir, &result, &summary, write)?;
        written.files.extend(files.files);
        if let Some(reason) = stop_reason(&result) {
            return Err(ReproError::Incomplete(reason));
        }
        runs.push((kind.name().to_owned(), result));
    }
    written.write(out, "compare.csv", csv::compare(&runs).as_bytes())?;
    let throughput = plots::compare_throughput(&scenario.name, &runs, write.plots).render();
    written.write(out, "throughput.svg", throughput.as_bytes())?;
    let cdf = plots::compare_delay_cdf(&scenario.name, &runs).render();
    written.write(out, "delay_cdf.svg", cdf.as_bytes())?;
    Ok(Comparison { runs, written })
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
