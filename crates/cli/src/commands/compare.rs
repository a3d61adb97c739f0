//! `linkshare compare SCENARIO.toml --schedulers a,b,...`: the same traffic (same seed)
//! under several schedulers, side by side.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use linkshare_core::sched::SchedulerKind;
use linkshare_sim::RunResult;

use super::{default_out, parse_scheduler, print_files, simulate};
use crate::error::Failure;
use crate::output::{self, Written, csv, plots, summary, table};
use crate::scenario::{self, Problems, Scenario};

/// Options of `compare`.
#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// The scenario file (TOML; see scenarios/README.md).
    pub scenario: PathBuf,
    /// Schedulers to compare, comma-separated (each overrides every link's scheduler).
    #[arg(long, value_delimiter = ',', required = true)]
    pub schedulers: Vec<String>,
    /// Output directory [default: ./linkshare-out/NAME/, NAME being the scenario name].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Seed of every run, instead of the scenario's `seed`.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Print the summaries as JSON on stdout (the list of files goes to stderr).
    #[arg(long)]
    pub json: bool,
}

/// The runs of a comparison and the files written.
#[derive(Debug)]
pub struct Comparison {
    /// Scheduler name and result, in the order asked for.
    pub runs: Vec<(String, RunResult)>,
    /// Every file written.
    pub written: Written,
}

/// The JSON printed by `compare --json`.
#[derive(Debug, serde::Serialize)]
struct CompareJson<'a> {
    scenario: &'a str,
    runs: Vec<RunJson>,
}

#[derive(Debug, serde::Serialize)]
struct RunJson {
    scheduler: String,
    summary: summary::Summary,
}

/// Runs the command.
pub fn run(args: &CompareArgs) -> Result<(), Failure> {
    let mut scenario = scenario::load_file(&args.scenario)?;
    if let Some(seed) = args.seed {
        scenario.config.seed = seed;
    }
    let mut kinds: Vec<SchedulerKind> = Vec::with_capacity(args.schedulers.len());
    for name in &args.schedulers {
        let kind = parse_scheduler(name, "--schedulers")?;
        if kinds.contains(&kind) {
            return Err(Failure::Problems(Problems::option(
                "--schedulers",
                format!("`{kind}` is listed twice"),
                "list each scheduler once".to_owned(),
            )));
        }
        kinds.push(kind);
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| default_out(&scenario.name));
    let comparison = compare(&scenario, &kinds, &out)?;
    let stdout = std::io::stdout();
    let mut so = stdout.lock();
    let printed = if args.json {
        let json = CompareJson {
            scenario: &scenario.name,
            runs: comparison
                .runs
                .iter()
                .map(|(name, r)| RunJson {
                    scheduler: name.clone(),
                    summary: summary::Summary::new(&scenario.name, &scenario.config, r),
                })
                .collect(),
        };
        let text = summary::to_json(&json)?;
        so.write_all(text.as_bytes()).and_then(|()| {
            let mut se = std::io::stderr().lock();
            writeln!(se, "files written:")?;
            print_files(&mut se, &comparison.written.files)
        })
    } else {
        print_comparison(&mut so, &scenario, &comparison)
    };
    printed.map_err(|e| Failure::io("cannot write to stdout".to_owned(), e))
}

/// Prints the side-by-side table and the files written.
pub fn print_comparison(
    out: &mut dyn std::io::Write,
    scenario: &Scenario,
    comparison: &Comparison,
) -> std::io::Result<()> {
    writeln!(
        out,
        "{}: {} simulated per scheduler, seed {}; rate delivered and delay at the port per class\n",
        scenario.name, scenario.config.duration, scenario.config.seed
    )?;
    write!(out, "{}", table::compare_table(&comparison.runs).render())?;
    writeln!(out, "\nfiles written:")?;
    print_files(out, &comparison.written.files)
}

/// Runs `scenario` under each of `kinds`, writing each run's outputs to
/// `out/<scheduler>/` and the comparison (`compare.csv`, `throughput.svg`,
/// `delay_cdf.svg`) to `out`.
pub fn compare(
    scenario: &Scenario,
    kinds: &[SchedulerKind],
    out: &Path,
) -> Result<Comparison, Failure> {
    let mut written = Written::default();
    let mut runs = Vec::with_capacity(kinds.len());
    for &kind in kinds {
        let mut s = scenario.clone();
        s.set_scheduler(kind, "--schedulers")?;
        let result = simulate(&s, &format!("{} under {kind}", scenario.name))?;
        let files = output::write_run(&out.join(kind.name()), &s, &result)?;
        written.files.extend(files.files);
        runs.push((kind.name().to_owned(), result));
    }
    written.write(out, "compare.csv", csv::compare(&runs).as_bytes())?;
    let throughput = plots::compare_throughput(&scenario.name, &runs).render();
    written.write(out, "throughput.svg", throughput.as_bytes())?;
    let cdf = plots::compare_delay_cdf(&scenario.name, &runs).render();
    written.write(out, "delay_cdf.svg", cdf.as_bytes())?;
    Ok(Comparison { runs, written })
}
