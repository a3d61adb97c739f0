//! Running a simulated reproduction: every variant under every scheduler, the outputs
//! of each run, the overlaid plots, and the measured rates beside the reference.
//!
//! A reproduction's scenarios have one link. The rate of a class is measured in every
//! interval of constant demand ([`crate::reference`]) from the port's per-packet
//! records, leaving out the first measurement window after the interval starts (the
//! transition from the previous allocation): over `[start + window, end)`, or the whole
//! interval if it is not longer than a window. `DIR/<variant>/rates.csv` holds these
//! numbers, one row per interval, class and scheduler:
//!
//! `interval_start_s,interval_end_s,measured_from_s,class,demand_bps,reference_bps,scheduler,measured_bps,error_bps,relative_error`
//!
//! (`demand_bps` empty when unbounded; `measured_bps`, `error_bps` empty when the run
//! kept no per-packet records; `relative_error` empty when the reference is zero;
//! `error_bps = measured - reference`.)

use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

use linkshare_core::hierarchy::{ClassId, ClassTree};
use linkshare_core::sched::SchedulerKind;
use linkshare_core::units::{Duration, Instant};
use linkshare_sim::RunResult;
use linkshare_sim::config::{LinkId, SimConfig};

use crate::verdict::{Check, Extremes};
use crate::{Options, ReproError, stdout_failure};
use linkshare_report::quality::{measured_rates, short_secs};
use linkshare_report::reference::{LinkReference, link_reference};
use linkshare_report::spill::records_in;
use linkshare_report::summary::{Summary, stop_reason};
use linkshare_report::svg::{LineChart, Series};
use linkshare_report::table::TextTable;
use linkshare_report::{Written, csv, files_listing, plots, write_run_with};
use linkshare_scenario::{self as scenario, Problems, RunOptions, Scenario};

/// One scenario of a reproduction.
#[derive(Clone, Copy, Debug)]
pub struct Variant {
    /// Its name (the subdirectory of its outputs); `None` for a reproduction with a
    /// single scenario.
    pub name: Option<&'static str>,
    /// The file under `scenarios/` it was embedded from.
    pub file: &'static str,
    /// Its text.
    pub toml: &'static str,
}

/// The runs of one variant.
#[derive(Debug)]
pub struct VariantRuns {
    /// The variant.
    pub variant: Variant,
    /// Its scenario, times shortened as asked.
    pub scenario: Scenario,
    /// The reference allocation of its link.
    pub reference: LinkReference,
    /// The window each interval of `reference` is measured over.
    pub windows: Vec<(Instant, Instant)>,
    /// Each scheduler that ran, with the rate of every class (by id index) in every
    /// window, bit/s (`None` when the run kept no per-packet records).
    pub runs: Vec<(SchedulerKind, Option<Vec<Vec<f64>>>)>,
    /// The result of each run, in the order of `runs`, by scheduler name.
    pub results: Vec<(String, RunResult)>,
    /// The files written.
    pub written: Written,
}

impl VariantRuns {
    /// The class tree of the link.
    pub fn tree(&self) -> &ClassTree {
        &self.scenario.config.links[0].classes
    }

    /// Classes other than the root that have a demand in some interval, in id order.
    pub fn shown_classes(&self) -> Vec<usize> {
        (1..self.tree().len())
            .filter(|&c| self.reference.intervals.iter().any(|iv| iv.demand[c] > 0.0))
            .collect()
    }
}

/// The schedulers of `names` this build has, filtered by `opts`, and the names it does
/// not have. Fails if that leaves none to run.
pub fn schedulers(
    names: &[&'static str],
    opts: &Options<'_>,
) -> Result<(Vec<SchedulerKind>, Vec<&'static str>), ReproError> {
    let mut kinds = Vec::new();
    let mut missing = Vec::new();
    for &name in names {
        match name.parse::<SchedulerKind>() {
            Ok(k) if opts.only.as_ref().is_none_or(|o| o.contains(&k)) => kinds.push(k),
            Ok(_) => {}
            Err(_) => missing.push(name),
        }
    }
    if kinds.is_empty() {
        return Err(ReproError::Problems(Problems::option(
            "--schedulers",
            "none of the schedulers asked for is one this reproduction runs".to_owned(),
            format!("choose among {}", names.join(", ")),
        )));
    }
    Ok((kinds, missing))
}

/// Loads a variant's scenario and divides its times by `shorten`.
pub fn load(variant: &Variant, shorten: u32) -> Result<Scenario, ReproError> {
    let mut s = scenario::load_str(
        variant.toml,
        &format!("{} (built in)", variant.file),
        Path::new("."),
    )
    .map_err(|p| ReproError::Internal(format!("the built-in {} is invalid:\n{p}", variant.file)))?;
    shorten_times(&mut s.config, shorten);
    Ok(s)
}

/// Divides the duration, the measurement window and every ON interval's ends by `n`
/// (nanoseconds rounded down). Sources' own parameters are left alone.
pub fn shorten_times(config: &mut SimConfig, n: u32) {
    let n = u64::from(n.max(1));
    config.duration = Duration(config.duration.0 / n);
    config.measure.window = Duration((config.measure.window.0 / n).max(1));
    for f in &mut config.flows {
        for iv in &mut f.schedule.on {
            *iv = (Instant(iv.0.0 / n), Instant(iv.1.0 / n));
        }
    }
}

/// Runs `variant` under each of `kinds`, writing to `dir`: each run's outputs in
/// `dir/<scheduler>/`, and `compare.csv`, `throughput.svg` (every scheduler overlaid),
/// `throughput-<scheduler>.svg` (one panel per scheduler, in the style of the HLS
/// paper's Fig. 7 for a hierarchy), `delay_cdf.svg`, `reference.svg` (the HMM-fair
/// allocation in the same style) and `rates.csv` in `dir`.
pub fn run_variant(
    variant: Variant,
    kinds: &[SchedulerKind],
    opts: &Options<'_>,
    dir: &Path,
) -> Result<VariantRuns, ReproError> {
    let scenario = load(&variant, opts.shorten)?;
    run_scenario(variant, scenario, kinds, opts, dir)
}

/// [`run_variant`] with the variant's scenario already loaded (and shortened), perhaps
/// edited.
pub fn run_scenario(
    variant: Variant,
    scenario: Scenario,
    kinds: &[SchedulerKind],
    opts: &Options<'_>,
    dir: &Path,
) -> Result<VariantRuns, ReproError> {
    if let Some(budget) = opts.memory_budget {
        scenario.check_memory(budget)?;
    }
    let reference = link_reference(&scenario.config, LinkId(0));
    let windows = measurement_windows(&reference, scenario.config.measure.window);
    let mut written = Written::default();
    let mut results: Vec<(String, RunResult)> = Vec::new();
    let mut runs = Vec::new();
    for &kind in kinds {
        let mut s = scenario.clone();
        s.set_scheduler(kind, "repro")?;
        let run_dir = dir.join(kind.name());
        let options = RunOptions {
            records: Some(records_in(&run_dir, s.config.links.len())?),
            memory_budget: opts.memory_budget,
        };
        let result = s
            .simulate_with(
                &format!("{} under {kind}", scenario.name),
                opts.progress,
                options,
            )
            .map_err(|e| ReproError::Simulator(e.to_string()))?;
        let summary = Summary::with_outputs(&s.name, &s.config, &result, &opts.write.outputs);
        let files = write_run_with(&run_dir, &result, &summary, &opts.write)?;
        written.files.extend(files.files);
        if let Some(reason) = stop_reason(&result) {
            return Err(ReproError::Incomplete(reason));
        }
        let rates = measured_rates(
            &s.config.links[0].classes,
            &result.links[0].delay_log,
            &windows,
        )
        .map_err(|error| {
            ReproError::Write(linkshare_report::WriteError {
                what: "cannot read the run's per-packet delay records back".to_owned(),
                error,
            })
        })?;
        runs.push((kind, rates));
        results.push((kind.name().to_owned(), result));
    }
    let mut out = VariantRuns {
        variant,
        scenario,
        reference,
        windows,
        runs,
        results,
        written,
    };
    let title = out.scenario.name.clone();
    out.written
        .write(dir, "compare.csv", csv::compare(&out.results).as_bytes())?;
    let throughput = plots::compare_throughput(&title, &out.results, opts.write.plots).render();
    out.written
        .write(dir, "throughput.svg", throughput.as_bytes())?;
    for (name, panel) in plots::throughput_panels(&title, &out.results, opts.write.plots) {
        out.written.write(
            dir,
            &format!("throughput-{name}.svg"),
            panel.render().as_bytes(),
        )?;
    }
    let cdf = plots::compare_delay_cdf(&title, &out.results).render();
    out.written.write(dir, "delay_cdf.svg", cdf.as_bytes())?;
    let reference = reference_chart(&title, &out).render();
    out.written
        .write(dir, "reference.svg", reference.as_bytes())?;
    let rates = rates_csv(&out);
    out.written.write(dir, "rates.csv", rates.as_bytes())?;
    Ok(out)
}

/// The window each interval of `reference` is measured over: `[start + settle, end)`,
/// or the whole interval if it is not longer than `settle` (see the [module docs](self)).
pub fn measurement_windows(reference: &LinkReference, settle: Duration) -> Vec<(Instant, Instant)> {
    reference
        .intervals
        .iter()
        .map(|iv| {
            let from = iv.start.saturating_add(settle);
            (if from < iv.end { from } else { iv.start }, iv.end)
        })
        .collect()
}

/// The reference rate of every class with a demand over time: leaves solid, interior
/// classes dashed.
/// The place of leaf `class` among the leaves of `tree` in id order: with
/// [`plots::leaf_style`], its colour in every chart of the runs of the tree's scenario
/// (for a reproduction's own figures to match the runs' and the comparison's).
pub fn leaf_rank(tree: &ClassTree, class: ClassId) -> usize {
    tree.classes()
        .iter()
        .take(class.index())
        .filter(|c| c.is_leaf())
        .count()
}

/// The reference rate of every class with a demand over time, in the style of the
/// comparison's panels ([`plots::throughput_panels`]): leaves solid in their own colour,
/// and for a hierarchy every leaf labelled, interior classes and the link's `Total`
/// dashed grey.
fn reference_chart(title: &str, v: &VariantRuns) -> LineChart {
    let mut chart = LineChart::new(
        format!("Reference (HMM-fair) allocation: {title}"),
        "time (s)",
        "rate (Mbit/s)",
    );
    chart.y_axis.include_zero = true;
    chart.x_axis.range = Some((0.0, v.scenario.config.duration.as_secs_f64()));
    let tree = v.tree();
    let hierarchy = tree
        .classes()
        .iter()
        .any(|c| c.parent.is_some() && !c.is_leaf());
    let points = |c: usize| -> Vec<(f64, f64)> {
        let mut points: Vec<(f64, f64)> = v
            .reference
            .intervals
            .iter()
            .map(|iv| (iv.start.as_secs_f64(), iv.rate[c] / 1e6))
            .collect();
        if let Some(last) = v.reference.intervals.last() {
            points.push((last.end.as_secs_f64(), last.rate[c] / 1e6));
        }
        points
    };
    let mut aggregates = Vec::new();
    for c in v.shown_classes() {
        let class = &tree.classes()[c];
        if class.is_leaf() {
            let (colour, dash) = plots::leaf_style(leaf_rank(tree, class.id));
            let mut s = Series::steps(class.name(), points(c));
            s.colour = Some(colour);
            s.dash = Some(dash);
            s.label = hierarchy;
            chart.series.push(s);
        } else {
            aggregates.push(plots::aggregate_series(class.name().to_owned(), points(c)));
        }
    }
    chart.series.extend(aggregates);
    if hierarchy {
        chart
            .series
            .push(plots::aggregate_series("Total".to_owned(), points(0)));
        let link = v.scenario.config.links[0].rate.bps() as f64 / 1e6;
        plots::headroom(&mut chart, link);
    }
    chart
}

/// `rates.csv` (see the [module docs](self)).
fn rates_csv(v: &VariantRuns) -> String {
    let mut s = String::from(
        "interval_start_s,interval_end_s,measured_from_s,class,demand_bps,reference_bps,\
         scheduler,measured_bps,error_bps,relative_error\n",
    );
    let tree = v.tree();
    for (k, iv) in v.reference.intervals.iter().enumerate() {
        for c in tree.classes() {
            let i = c.id.index();
            let reference = iv.rate[i];
            let demand = if iv.demand[i].is_finite() {
                format!("{:.3}", iv.demand[i])
            } else {
                String::new()
            };
            for (kind, rates) in &v.runs {
                let measured = rates.as_ref().map(|r| r[k][i]);
                let _ = writeln!(
                    s,
                    "{},{},{},{},{demand},{reference:.3},{kind},{},{},{}",
                    iv.start.as_secs_f64(),
                    iv.end.as_secs_f64(),
                    v.windows[k].0.as_secs_f64(),
                    c.name(),
                    measured.map_or(String::new(), |m| format!("{m:.3}")),
                    measured.map_or(String::new(), |m| format!("{:.3}", m - reference)),
                    measured
                        .filter(|_| reference > 0.0)
                        .map_or(String::new(), |m| format!(
                            "{:.6}",
                            (m - reference) / reference
                        )),
                );
            }
        }
    }
    s
}

/// `[a, b) s` for an interval.
pub fn span(start: Instant, end: Instant) -> String {
    format!(
        "[{}, {}) s",
        short_secs(start.as_secs_f64()),
        short_secs(end.as_secs_f64())
    )
}

/// The table of a variant: one row per interval and shown class, its reference rate,
/// and for each scheduler the measured rate and the relative error (Mbit/s, %).
/// Intervals without any demand are left out.
pub fn rates_table(v: &VariantRuns) -> TextTable {
    let mut t = TextTable {
        header: ["interval", "class", "reference"]
            .map(str::to_owned)
            .to_vec(),
        ..TextTable::default()
    };
    for (j, (kind, _)) in v.runs.iter().enumerate() {
        t.groups.push((kind.name().to_owned(), 3 + 2 * j, 2));
        t.header.extend(["Mbit/s", "err %"].map(str::to_owned));
    }
    let tree = v.tree();
    let shown = v.shown_classes();
    for (k, iv) in v.reference.intervals.iter().enumerate() {
        if shown.iter().all(|&c| iv.demand[c] == 0.0) {
            continue;
        }
        for (n, &c) in shown.iter().enumerate() {
            let label = if n == 0 {
                span(iv.start, iv.end)
            } else {
                String::new()
            };
            let depth = tree.classes()[c].depth as usize;
            let mut row = vec![
                label,
                format!("{}{}", "  ".repeat(depth - 1), tree.classes()[c].name()),
                format!("{:.3}", iv.rate[c] / 1e6),
            ];
            for (_, rates) in &v.runs {
                match rates {
                    Some(r) => {
                        let m = r[k][c];
                        row.push(format!("{:.3}", m / 1e6));
                        row.push(if iv.rate[c] > 0.0 {
                            format!("{:+.2}", (m - iv.rate[c]) / iv.rate[c] * 100.0)
                        } else {
                            "-".to_owned()
                        });
                    }
                    None => row.extend(["n/a", "n/a"].map(str::to_owned)),
                }
            }
            t.rows.push(row);
        }
    }
    t
}

/// The largest `|measured - reference|` of any shown class in any interval, bit/s, per
/// scheduler that measured.
pub fn worst_errors(v: &VariantRuns) -> Vec<(SchedulerKind, Option<f64>)> {
    let shown = v.shown_classes();
    v.runs
        .iter()
        .map(|(kind, rates)| {
            let worst = rates.as_ref().map(|r| {
                v.reference
                    .intervals
                    .iter()
                    .enumerate()
                    .flat_map(|(k, iv)| shown.iter().map(move |&c| (r[k][c] - iv.rate[c]).abs()))
                    .largest()
            });
            (*kind, worst)
        })
        .collect()
}

/// Prints a variant: its rates table, the largest deviations, and the files written.
pub fn print_variant(out: &mut dyn Write, v: &VariantRuns) -> Result<(), ReproError> {
    let link = v.scenario.config.links[0].rate.bps() as f64;
    let settle = v.scenario.config.measure.window;
    let mut text = format!(
        "reference (HMM-fair) and measured rates per interval of constant demand, Mbit/s; \
         measured from {} s after each change (one measurement window)\n",
        short_secs(settle.as_secs_f64())
    );
    text.push_str(&rates_table(v).render());
    let worst: Vec<String> = worst_errors(v)
        .into_iter()
        .map(|(kind, w)| match w {
            Some(w) => format!(
                "{kind} {:.3} Mbit/s ({:.2}% of the link)",
                w / 1e6,
                w / link * 100.0
            ),
            None => format!("{kind} n/a (no per-packet records)"),
        })
        .collect();
    let _ = writeln!(
        text,
        "largest deviation from the reference: {}",
        worst.join(", ")
    );
    out.write_all(text.as_bytes()).map_err(stdout_failure)
}

/// Prints `lines`, one per line: a reproduction's header (what the paper claims, what
/// was reconstructed).
pub fn header(out: &mut dyn Write, lines: &[&str]) -> Result<(), ReproError> {
    for l in lines {
        writeln!(out, "{l}").map_err(stdout_failure)?;
    }
    Ok(())
}

/// Prints the files written by `runs`, grouped by directory.
pub fn footer(out: &mut dyn Write, runs: &[VariantRuns]) -> Result<(), ReproError> {
    let files: Vec<_> = runs
        .iter()
        .flat_map(|v| v.written.files.iter().cloned())
        .collect();
    print_files(out, &files)
}

/// Prints the list of files a reproduction wrote, under "files written:".
pub fn print_files(out: &mut dyn Write, files: &[std::path::PathBuf]) -> Result<(), ReproError> {
    write!(out, "\nfiles written:\n{}", files_listing(files)).map_err(stdout_failure)
}

/// Draws the variant's class tree to `dir/hierarchy.svg`, titled `title`: every class
/// with its guarantee, the leaves with traffic shaded ([`linkshare_report::tree`]).
pub fn draw_hierarchy(
    v: &mut VariantRuns,
    dir: &std::path::Path,
    title: &str,
) -> Result<(), ReproError> {
    let tree = v.tree();
    let active: Vec<linkshare_core::hierarchy::ClassId> = v
        .shown_classes()
        .into_iter()
        .map(|c| &tree.classes()[c])
        .filter(|c| c.is_leaf())
        .map(|c| c.id)
        .collect();
    let svg = linkshare_report::tree::class_tree(title, tree, &active);
    v.written.write(dir, "hierarchy.svg", svg.as_bytes())?;
    Ok(())
}

/// The directory of a variant's outputs: `opts.out/<name>`, or `opts.out` for a
/// reproduction without variants.
pub fn variant_dir(opts: &Options<'_>, v: &Variant) -> std::path::PathBuf {
    match v.name {
        Some(name) => opts.out.join(name),
        None => opts.out.to_path_buf(),
    }
}

/// Prints the schedulers the reproduction needs that this build lacks.
pub fn print_missing(out: &mut dyn Write, missing: &[&str]) -> Result<(), ReproError> {
    if missing.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "not available yet in this build: {} (left out of the comparison)",
        missing.join(", ")
    )
    .map_err(stdout_failure)
}

/// The largest deviation of a scheduler from a variant's HMM-fair reference allowed for
/// "follows the HMM-fair allocation", as a fraction of the link rate: the measurement
/// windows see whole packets, and a shortened run has short intervals.
pub const HMM_FAIR_TOLERANCE: f64 = 0.02;

/// Whether `kind` followed the variant's HMM-fair reference: its largest deviation
/// over every shown class and interval ([`worst_errors`]) in percent of the link rate,
/// at most [`HMM_FAIR_TOLERANCE`]. `None` when `kind` did not run or measured nothing.
pub fn hmm_fair_check(v: &VariantRuns, kind: SchedulerKind, paper: &str) -> Option<Check> {
    let link = v.scenario.config.links[0].rate.bps() as f64;
    let (_, worst) = worst_errors(v).into_iter().find(|(k, _)| *k == kind)?;
    let worst = worst?;
    Some(Check::at_most(
        &format!(
            "{}{kind} follows the HMM-fair allocation",
            variant_prefix(v)
        ),
        paper,
        worst / link * 100.0,
        HMM_FAIR_TOLERANCE * 100.0,
        "% of the link (largest deviation)",
    ))
}

/// A guarantee counts as kept when the class received at least this fraction of it.
pub const GUARANTEE_KEPT: f64 = 0.99;

/// Whether `kind` gave every shown class with a guarantee (`rate`; only leaves when
/// `leaves_only`) at least [`GUARANTEE_KEPT`] of the smaller of its guarantee and its
/// demand in every interval;
/// `ours` names the class and interval that came furthest below. `None` when `kind` did
/// not run or measured nothing.
pub fn guarantee_check(
    v: &VariantRuns,
    kind: SchedulerKind,
    leaves_only: bool,
    paper: &str,
) -> Option<Check> {
    let (_, rates) = v.runs.iter().find(|(k, _)| *k == kind)?;
    let rates = rates.as_ref()?;
    let tree = v.tree();
    // (measured / owed, class, interval, measured, owed)
    let mut worst: Option<(f64, usize, usize, f64, f64)> = None;
    for (k, iv) in v.reference.intervals.iter().enumerate() {
        for c in v.shown_classes() {
            if leaves_only && !tree.classes()[c].is_leaf() {
                continue;
            }
            let Some(rate) = tree.classes()[c].spec.rate else {
                continue;
            };
            let owed = (rate.bps() as f64).min(iv.demand[c]);
            if owed <= 0.0 {
                continue;
            }
            let ratio = rates[k][c] / owed;
            if worst.is_none_or(|w| ratio < w.0) {
                worst = Some((ratio, c, k, rates[k][c], owed));
            }
        }
    }
    // The guarantee's share the verdict rests on (none: nothing to measure, vacuously
    // kept).
    let measured: Vec<f64> = worst.iter().map(|w| w.0).collect();
    let (ours, pass) = match worst {
        Some((ratio, c, k, got, owed)) => {
            let iv = &v.reference.intervals[k];
            (
                format!(
                    "lowest: {} {:.1} of {:.1} Mbit/s ({:.1} %) in {}",
                    tree.classes()[c].name(),
                    got / 1e6,
                    owed / 1e6,
                    ratio * 100.0,
                    span(iv.start, iv.end)
                ),
                ratio >= GUARANTEE_KEPT,
            )
        }
        None => ("no class with a guarantee sends".to_owned(), true),
    };
    Some(Check::claim(
        &format!(
            "{}{kind} keeps the guarantee of every {}",
            variant_prefix(v),
            if leaves_only { "leaf" } else { "class" }
        ),
        paper,
        ours,
        &measured,
        &format!(
            ">= {:.0} % of min(guarantee, demand) in every interval",
            GUARANTEE_KEPT * 100.0
        ),
        pass,
    ))
}

/// `variant X: ` for a named variant, empty otherwise: the start of a check's name.
pub fn variant_prefix(v: &VariantRuns) -> String {
    v.variant
        .name
        .map_or(String::new(), |n| format!("variant {n}: "))
}
