//! linkshare-report: everything a run writes — `summary.json`, tidy CSVs, SVG plots and
//! terminal tables — and the reference allocation and link-sharing quality they report.
//!
//! It reads a run's configuration ([`linkshare_sim::config::SimConfig`]) and result
//! ([`RunResult`]) and knows nothing of scenario files or of the faces that print what it
//! renders: the command line, the Python module and the shaper call it alike.
//!
//! * [`summary`], [`csv`], [`flows`]: the files of one run; [`write_run`] writes them all,
//!   [`write_run_with`] those [`outputs`] chooses; [`frame`]: the same tables as typed
//!   columns (the Python module's DataFrames).
//! * [`spill`]: the per-packet records of a run kept in a temporary file while it runs.
//! * [`plots`]: the run's and a comparison's charts, drawn with [`svg`], a small
//!   deterministic SVG line-chart library; [`tree`]: a class tree drawn as SVG.
//! * [`table`]: terminal tables; [`quality`] and [`reference`]: what every class should
//!   get (the HMM-fair reference per interval of constant demand) beside what it got.
//!
//! The file names, CSV headers and JSON keys are a contract that users' scripts rely on;
//! they are listed in `scenarios/README.md`. Every number is computed from the
//! [`RunResult`] (and, for the reference allocation of [`quality`], the scenario's
//! configuration) in a fixed order, so the same scenario and seed give byte-identical
//! files.

#![warn(missing_docs)]

pub mod alloc;
pub mod bounds;
pub mod check;
pub mod csv;
pub mod flows;
pub mod frame;
pub mod outputs;
pub mod plots;
pub mod quality;
pub mod reference;
pub mod service;
pub mod service_plots;
pub mod spill;
pub mod summary;
pub mod svg;
pub mod table;
pub mod tree;

use std::fmt;
use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use linkshare_core::hierarchy::ClassId;
use linkshare_core::units::{Duration, Instant, NANOS_PER_SEC};
use linkshare_sim::result::RunResult;

use linkshare_sim::config::{SINGLE_LINK, SINGLE_REVERSE_LINK, SimConfig};

/// A file or directory that could not be written: what was being done (naming the
/// path) and the operating system's error.
#[derive(Debug)]
pub struct WriteError {
    /// What was being done, naming the path.
    pub what: String,
    /// The operating system's error.
    pub error: io::Error,
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.what, self.error)
    }
}

impl std::error::Error for WriteError {}

fn failed(what: String, error: io::Error) -> WriteError {
    WriteError { what, error }
}

/// How outputs name a class: `class` with one link, `link/class` with several. The
/// link a single-link scenario gets for its TCP acknowledgements does not count: the
/// classes of `link` keep their names, the acknowledgements' class is
/// `link-reverse/ack`.
#[derive(Clone, Copy, Debug)]
pub struct Labels<'r> {
    result: &'r RunResult,
    multi_link: bool,
    /// The single-link form with its acknowledgement link (`link`, `link-reverse`).
    single_with_acks: bool,
}

impl<'r> Labels<'r> {
    /// Labels for the classes of `result`.
    pub fn new(result: &'r RunResult) -> Labels<'r> {
        let single_with_acks = matches!(
            result.links.as_slice(),
            [l, r] if l.name == SINGLE_LINK && r.name == SINGLE_REVERSE_LINK
        );
        Labels {
            result,
            multi_link: result.links.len() > 1,
            single_with_acks,
        }
    }

    /// The label of `class` of link number `link` (`?` for an unknown class).
    pub fn class(&self, link: usize, class: ClassId) -> String {
        let Some(l) = self.result.links.get(link) else {
            return "?".to_owned();
        };
        let name = l
            .classes
            .get(class.index())
            .map_or("?", |c| c.name.as_str());
        if self.multi_link && !(self.single_with_acks && link == 0) {
            format!("{}/{name}", l.name)
        } else {
            name.to_owned()
        }
    }

    /// The name of flow number `flow` (`?` if unknown).
    pub fn flow(&self, flow: usize) -> &'r str {
        self.result.flows.get(flow).map_or("?", |f| f.name.as_str())
    }
}

/// A number of nanoseconds displayed as seconds with nine decimals: exact
/// (`1.500000000`). Formatting it allocates nothing, which matters for `delay.csv`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Secs(pub u64);

impl fmt::Display for Secs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}.{:09}",
            self.0 / NANOS_PER_SEC,
            self.0 % NANOS_PER_SEC
        )
    }
}

/// An instant in seconds with nine decimals.
pub fn secs(t: Instant) -> Secs {
    Secs(t.as_nanos())
}

/// A duration in seconds with nine decimals.
pub fn dur_secs(d: Duration) -> Secs {
    Secs(d.as_nanos())
}

/// `numerator / denominator` with three decimals, rounded half up; `0.000` for a zero
/// denominator.
pub fn ratio3(numerator: u128, denominator: u128) -> String {
    if denominator == 0 {
        return "0.000".to_owned();
    }
    let thousandths = (numerator * 1000 * 2 + denominator) / (denominator * 2);
    format!("{}.{:03}", thousandths / 1000, thousandths % 1000)
}

/// Files written to an output directory, in the order they were written.
#[derive(Debug, Default)]
pub struct Written {
    /// Paths of the files.
    pub files: Vec<PathBuf>,
}

impl Written {
    /// Writes `contents` to `dir/name` and records it.
    pub fn write(&mut self, dir: &Path, name: &str, contents: &[u8]) -> Result<(), WriteError> {
        let path = dir.join(name);
        let result = fs::File::create(&path).and_then(|mut f| {
            f.write_all(contents)?;
            f.flush()
        });
        result.map_err(|e| failed(format!("cannot write {}", path.display()), e))?;
        self.files.push(path);
        Ok(())
    }

    /// Streams a large file to `dir/name` through `fill` and records it.
    pub fn stream(
        &mut self,
        dir: &Path,
        name: &str,
        fill: impl FnOnce(&mut dyn io::Write) -> io::Result<()>,
    ) -> Result<(), WriteError> {
        let path = dir.join(name);
        let result = fs::File::create(&path).and_then(|f| {
            let mut w = io::BufWriter::with_capacity(1 << 16, f);
            fill(&mut w)?;
            w.flush()
        });
        result.map_err(|e| failed(format!("cannot write {}", path.display()), e))?;
        self.files.push(path);
        Ok(())
    }
}

/// The files written, one line per directory: `  DIR/: a.csv b.svg ...`.
pub fn files_listing(files: &[PathBuf]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < files.len() {
        let dir = files[i].parent().unwrap_or(Path::new(""));
        let mut names = Vec::new();
        while let Some(f) = files.get(i)
            && f.parent().unwrap_or(Path::new("")) == dir
        {
            names.push(
                f.file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
            );
            i += 1;
        }
        out.push_str(&format!(
            "  {}{}: {}\n",
            dir.display(),
            std::path::MAIN_SEPARATOR,
            names.join(" ")
        ));
    }
    out
}

/// Creates `dir` (and its parents).
pub fn create_dir(dir: &Path) -> Result<(), WriteError> {
    fs::create_dir_all(dir).map_err(|e| {
        failed(
            format!("cannot create the output directory {}", dir.display()),
            e,
        )
    })
}

/// Removes `dir/name` if it exists (a file left by an earlier run that this run replaces
/// with another kind of output).
pub fn remove_stale(dir: &Path, name: &str) -> Result<(), WriteError> {
    let path = dir.join(name);
    match fs::remove_file(&path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(failed(
            format!("cannot remove the stale {}", path.display()),
            e,
        )),
    }
}

/// Writes every output of one run of the scenario `name` with `config` to `dir`:
/// summary, CSVs and plots.
pub fn write_run(
    dir: &Path,
    name: &str,
    config: &SimConfig,
    result: &RunResult,
) -> Result<Written, WriteError> {
    let summary = summary::Summary::new(name, config, result);
    write_run_with_summary(dir, result, &summary)
}

/// How a run's outputs are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriteOptions {
    /// Which files are written.
    pub outputs: outputs::Outputs,
    /// How the plots are drawn.
    pub plots: plots::PlotOptions,
}

/// [`write_run`] with the run's summary already computed (computing it measures the
/// link-sharing quality, which is worth doing once for a big run).
pub fn write_run_with_summary(
    dir: &Path,
    result: &RunResult,
    summary: &summary::Summary,
) -> Result<Written, WriteError> {
    write_run_with(dir, result, summary, &WriteOptions::default())
}

/// [`write_run_with_summary`] with `options`: the files `options.outputs` chooses
/// (the summary should have been made with the same choice,
/// [`summary::Summary::with_outputs`], so that it names the delay file written).
pub fn write_run_with(
    dir: &Path,
    result: &RunResult,
    summary: &summary::Summary,
    options: &WriteOptions,
) -> Result<Written, WriteError> {
    use outputs::Output;
    create_dir(dir)?;
    let chosen = |o: Output| options.outputs.contains(o);
    let mut written = Written::default();
    if chosen(Output::Summary) {
        written.write(dir, "summary.json", summary.to_json()?.as_bytes())?;
    }
    csv::write_all(dir, result, &options.outputs, &mut written)?;
    let title = plots::run_title(&summary.scenario, result);
    let classes: Vec<String> = summary.flows.iter().map(|f| f.class.clone()).collect();
    flows::write_all(
        dir,
        result,
        &classes,
        &title,
        &options.outputs,
        &mut written,
    )?;
    if chosen(Output::Plots) {
        written.write(
            dir,
            "throughput.svg",
            plots::throughput(&title, result, options.plots)
                .render()
                .as_bytes(),
        )?;
        written.write(
            dir,
            "delay_cdf.svg",
            plots::delay_cdf(&title, result).render().as_bytes(),
        )?;
        written.write(
            dir,
            "backlog.svg",
            plots::backlog(&title, result, options.plots)
                .render()
                .as_bytes(),
        )?;
        for (name, chart) in service_plots::charts(&title, result) {
            written.write(dir, &name, chart.render().as_bytes())?;
        }
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_exact() {
        assert_eq!(secs(Instant(0)).to_string(), "0.000000000");
        assert_eq!(secs(Instant(1_500_000_001)).to_string(), "1.500000001");
        assert_eq!(
            dur_secs(Duration(u64::MAX)).to_string(),
            "18446744073.709551615"
        );
    }

    #[test]
    fn ratio_rounds_half_up() {
        assert_eq!(ratio3(1, 3), "0.333");
        assert_eq!(ratio3(2, 3), "0.667");
        assert_eq!(ratio3(1, 2000), "0.001");
        assert_eq!(ratio3(10_000_000, 1), "10000000.000");
        assert_eq!(ratio3(5, 0), "0.000");
    }
}
