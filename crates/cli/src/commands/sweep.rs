//! `linkshare sweep SCENARIO.toml --grid PATH=V1,V2 ... [--schedulers a,b] [--seeds N]
//! [--jobs J]`: every combination, on every core, in one tidy CSV
//! ([`linkshare_repro::sweep`]).

use std::io::{IsTerminal as _, Write as _};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use linkshare_core::units::{Duration, Instant};
use linkshare_report::Written;
use linkshare_repro::runner::all_cores;
use linkshare_repro::sweep::{Axis, MAX_RUNS, Plan, RunRows, run_all, table};
use linkshare_scenario::edit::split_values;
use linkshare_scenario::{Problem, Problems, Progress};

use super::{default_out, parse_scheduler};
use crate::error::{Failure, stdout_failure};

/// Options of `sweep`.
#[derive(Debug, clap::Args)]
pub struct SweepArgs {
    /// The scenario file (TOML; see scenarios/README.md).
    pub scenario: PathBuf,
    /// A swept parameter: a dotted path and its values, such as `link.rate=5mbit,10mbit`
    /// or `class.A.weight=1,3` (repeat for more; values are TOML, or else strings).
    #[arg(long, value_name = "PATH=V1,V2,...")]
    pub grid: Vec<String>,
    /// Schedulers, comma-separated (each overrides every link's) [default: the
    /// scenario's].
    #[arg(long, value_delimiter = ',')]
    pub schedulers: Vec<String>,
    /// Run seeds 0 to N-1 [default: the scenario's seed only].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub seeds: Option<u64>,
    /// Runs at a time [default: one per core].
    #[arg(long, value_name = "J", value_parser = clap::value_parser!(u64).range(1..))]
    pub jobs: Option<u64>,
    /// The CSV file to write [default: ./linkshare-out/NAME/sweep.csv].
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Finished runs counted on stderr when it is a terminal.
#[derive(Debug)]
struct Count {
    done: AtomicUsize,
    total: usize,
    terminal: bool,
}

impl Progress for Count {
    fn update(&self, _label: &str, _now: Instant, _total: Duration, _events: u64) {}

    fn finish(&self, _label: &str) {
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        if self.terminal {
            let end = if done == self.total { "\n" } else { "" };
            eprint!("\rsweep: {done} of {} runs done{end}", self.total);
        }
    }
}

/// Parses `PATH=V1,V2,...`.
fn axis(text: &str) -> Result<Axis, Failure> {
    let bad = |problem: String| {
        Failure::Problems(Problems::option(
            "--grid",
            problem,
            "write PATH=V1,V2,..., such as link.rate=5mbit,10mbit or class.A.weight=1,3".to_owned(),
        ))
    };
    let Some((path, values)) = text.split_once('=') else {
        return Err(bad(format!("`{text}` has no `=`")));
    };
    let values = split_values(values);
    if path.trim().is_empty() || values.iter().any(|v| v.is_empty()) {
        return Err(bad(format!("`{text}` has an empty path or value")));
    }
    Ok(Axis::from_args(path.trim(), &values))
}

/// Runs the command.
pub fn run(args: &SweepArgs) -> Result<(), Failure> {
    let scenario = linkshare_scenario::load_file(&args.scenario)?;
    let axes = args
        .grid
        .iter()
        .map(|g| axis(g))
        .collect::<Result<Vec<_>, _>>()?;
    let mut schedulers = Vec::new();
    for name in &args.schedulers {
        schedulers.push(Some(parse_scheduler(name, "--schedulers")?));
    }
    let too_many = |option: &str| {
        let (problem, fix) = Plan::too_many_runs();
        Failure::Problems(Problems::option(option, problem, fix))
    };
    if args.seeds.is_some_and(|n| n > MAX_RUNS as u64) {
        return Err(too_many("--seeds"));
    }
    let seeds = args
        .seeds
        .map_or_else(Vec::new, |n| (0..n).map(Some).collect());
    let plan = Plan {
        axes,
        schedulers,
        seeds,
    };
    let total = plan.count().ok_or_else(|| too_many("--grid"))?;
    let progress = Count {
        done: AtomicUsize::new(0),
        total,
        terminal: std::io::stderr().is_terminal(),
    };
    let jobs = args
        .jobs
        .map_or_else(all_cores, |j| usize::try_from(j).unwrap_or(usize::MAX))
        .clamp(1, total.max(1));
    let rows = run_all(
        &scenario,
        &plan,
        jobs,
        &progress,
        &AtomicBool::new(false),
        &|spec, outcome| RunRows::new(spec, &outcome),
    )
    .ok_or_else(|| Failure::Internal("the sweep stopped without being asked to".to_owned()))?;
    let failed = rows.iter().filter(|r| r.error.is_some()).count();
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| default_out(&scenario.name).join("sweep.csv"));
    let dir = out.parent().unwrap_or(std::path::Path::new(""));
    if !dir.as_os_str().is_empty() {
        linkshare_report::create_dir(dir)?;
    }
    let name = out.file_name().map_or_else(
        || "sweep.csv".to_owned(),
        |n| n.to_string_lossy().into_owned(),
    );
    let mut written = Written::default();
    written.stream(dir, &name, |w| table(&plan, &rows).write_csv(w))?;
    let mut so = std::io::stdout().lock();
    let count = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    writeln!(
        so,
        "{}: {} on {}, {failed} could not be made (see the `error` column)\n\
         table written: {}",
        scenario.name,
        count(total, "run"),
        count(jobs, "thread"),
        out.display()
    )
    .map_err(stdout_failure)?;
    // Every run failing is a problem of the input (a path that names nothing, a value
    // that no run accepts), not a result.
    match rows.iter().find_map(|r| r.error.as_deref()) {
        Some(first) if failed == total => Err(Failure::Problems(Problems(vec![Problem {
            origin: None,
            field: None,
            problem: format!(
                "none of the {total} runs could be made (each one's error is in the `error` \
                 column of {}); the first: {first}",
                out.display()
            ),
            fix: String::new(),
        }]))),
        _ => Ok(()),
    }
}
