//! `linkshare tc import SCRIPT` and `linkshare tc export SCENARIO --dev IF`: tc scripts
//! in and out (the `linkshare-tc` crate).

use std::io::Write as _;
use std::path::PathBuf;

use linkshare_core::units::Rate;
use linkshare_core::units::parse::parse_rate;
use linkshare_scenario::Problems;
use linkshare_tc::Machine;

use super::Global;
use crate::error::{Failure, stdout_failure};

/// Options of `tc`.
#[derive(Debug, clap::Args)]
pub struct TcArgs {
    /// Import or export.
    #[command(subcommand)]
    pub command: TcCommand,
}

/// `tc import` and `tc export`.
#[derive(Debug, clap::Subcommand)]
pub enum TcCommand {
    /// Read a tc script (HTB, HFSC, DRR or PRIO tree, pfifo/bfifo leaves, u32, flower
    /// and matchall filters) and write it as a commented scenario. What cannot be
    /// translated is listed line by line; then the import fails (status 2) unless
    /// --partial is given.
    Import(ImportArgs),
    /// Print the tc commands that build a scenario's link on an interface (HTB and
    /// HFSC trees, DRR and PRIO flat); disciplines the kernel lacks are refused with the
    /// closest kernel equivalent.
    Export(ExportArgs),
}

/// Options of `tc import`.
#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// The tc script (a shell script of tc commands).
    pub script: PathBuf,
    /// Where to write the scenario (default: print it on stdout).
    #[arg(short, long, value_name = "SCENARIO.toml")]
    pub output: Option<PathBuf>,
    /// Write the scenario even when some commands could not be translated.
    #[arg(long)]
    pub partial: bool,
    /// The interface's rate, when the script's top classes do not say it (tc units,
    /// e.g. 100mbit).
    #[arg(long, value_name = "RATE", value_parser = parse_link_rate)]
    pub rate: Option<Rate>,
    /// The interface frames arrive on, for `linkshare shape` ([shaper] in).
    #[arg(long = "in", value_name = "IF", requires = "out_if")]
    pub in_if: Option<String>,
    /// The interface frames leave by, shaped ([shaper] out; the script's `dev`).
    #[arg(long = "out", value_name = "IF", requires = "in_if")]
    pub out_if: Option<String>,
    /// The interface's txqueuelen: the packets of the kernel's default leaf pfifo.
    #[arg(long, value_name = "PACKETS", default_value_t = 1000)]
    pub txqueuelen: u64,
}

/// Options of `tc export`.
#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    /// The scenario (or shaper configuration) whose single link is exported.
    pub scenario: PathBuf,
    /// The interface the commands configure.
    #[arg(long, value_name = "IF")]
    pub dev: String,
}

fn parse_link_rate(text: &str) -> Result<Rate, String> {
    match parse_rate(text) {
        Ok(r) if r.bps() > 0 => Ok(r),
        Ok(_) => Err("the rate must be positive".to_owned()),
        Err(e) => Err(e.to_string()),
    }
}

/// Runs the command.
pub fn run(args: &TcArgs, global: &Global) -> Result<(), Failure> {
    match &args.command {
        TcCommand::Import(a) => import(a, global),
        TcCommand::Export(a) => export(a),
    }
}

fn import(args: &ImportArgs, global: &Global) -> Result<(), Failure> {
    let script = std::fs::read_to_string(&args.script)
        .map_err(|e| Failure::io(format!("reading {}", args.script.display()), e))?;
    let stem = |p: &PathBuf| {
        p.file_stem()
            .map(|s| {
                s.to_string_lossy().replace(
                    |c: char| !c.is_ascii_alphanumeric() && c != '-' && c != '_' && c != '.',
                    "-",
                )
            })
            .filter(|s| !s.is_empty() && s != "." && s != "..")
    };
    let name = args
        .output
        .as_ref()
        .and_then(stem)
        .or_else(|| stem(&args.script))
        .unwrap_or_else(|| "imported".to_owned());
    let scenario_file = args
        .output
        .as_ref()
        .map_or_else(|| "<stdout>".to_owned(), |p| p.display().to_string());
    let machine = Machine {
        rate: args.rate,
        txqueuelen: args.txqueuelen,
        ..Machine::default()
    };
    let target = linkshare_tc::Target {
        name: &name,
        file: &scenario_file,
        interfaces: args.in_if.as_deref().zip(args.out_if.as_deref()),
    };
    let outcome = linkshare_tc::import_scenario(
        &script,
        &args.script.display().to_string(),
        &target,
        &machine,
    )?;
    for u in &outcome.untranslated {
        let what = if args.partial { "warning: " } else { "" };
        eprintln!(
            "{what}{}: not translated: `{}`: {}",
            u.origin, u.command, u.reason
        );
    }
    if !outcome.untranslated.is_empty() && !args.partial {
        return Err(Failure::Problems(Problems::option(
            "--partial",
            format!(
                "{} command(s) of {} could not be translated (listed above), so no scenario \
                 was written",
                outcome.untranslated.len(),
                args.script.display()
            ),
            "remove or replace them, or give --partial to write the scenario without them"
                .to_owned(),
        )));
    }
    for w in &outcome.warnings {
        global.warn(&w.to_string());
    }
    match &args.output {
        Some(path) => std::fs::write(path, &outcome.scenario)
            .map_err(|e| Failure::io(format!("writing {}", path.display()), e)),
        None => std::io::stdout()
            .lock()
            .write_all(outcome.scenario.as_bytes())
            .map_err(stdout_failure),
    }
}

fn export(args: &ExportArgs) -> Result<(), Failure> {
    let link = linkshare_scenario::load_single_link_file(&args.scenario)?;
    let script = linkshare_tc::export_script(&link, &args.dev).map_err(|r| {
        Failure::Problems(Problems(vec![linkshare_scenario::Problem {
            origin: None,
            field: Some("scheduler".to_owned()),
            problem: format!(
                "{} cannot be exported: {}",
                args.scenario.display(),
                r.problem
            ),
            fix: r.fix,
        }]))
    })?;
    std::io::stdout()
        .lock()
        .write_all(script.as_bytes())
        .map_err(stdout_failure)
}
