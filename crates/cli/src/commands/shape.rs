//! `linkshare shape CONFIG.toml`: shape real traffic between two interfaces (the
//! `linkshare-shaper` crate), or check the configuration with `--check`.

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;

use linkshare_scenario::describe::class_tree;
use linkshare_shaper::{Event, Options};

use crate::commands::{Global, default_out};
use crate::error::{Failure, stdout_failure};

/// Options of `shape`.
#[derive(Debug, clap::Args)]
pub struct ShapeArgs {
    /// The configuration: [link], [[class]], [shaper] and [[filter]] (see
    /// scenarios/README.md, "Shaping real traffic").
    pub config: PathBuf,
    /// Check the configuration and describe it, without touching any interface.
    #[arg(long)]
    pub check: bool,
    /// Serve Prometheus metrics on this address (overrides [shaper] metrics), e.g.
    /// 127.0.0.1:9100.
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<SocketAddr>,
    /// Where SIGUSR1 and exit write summary.json (default ./linkshare-out/<name>/).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// Runs the command.
pub fn run(args: &ShapeArgs, global: &Global) -> Result<(), Failure> {
    let config = linkshare_scenario::load_shaper_file(&args.config)?;
    let reverse_warnings = config.reverse.iter().flat_map(|r| &r.link.warnings);
    for warning in config.warnings.iter().chain(reverse_warnings) {
        global.warn(&warning.to_string());
    }
    let mut so = std::io::stdout().lock();
    if args.check {
        let s = &config.shaper;
        let filters = s.rules.len();
        return writeln!(
            so,
            "shaper configuration `{}` ({}), scheduler {}",
            config.name,
            config.file,
            config.scheduler.kind()
        )
        .and_then(|()| write!(so, "{}", class_tree(&config.classes)))
            .and_then(|()| {
                writeln!(
                    so,
                    "shaper: {} -> {} at {}, {filters} filter(s), default class `{}`, pool {} frames, pacing {}",
                    s.interfaces.input,
                    s.interfaces.output,
                    config.rate,
                    config.classes.get(s.default).name(),
                    s.pool,
                    s.pacing.name(),
                )
            })
            .and_then(|()| match &config.reverse {
                None => writeln!(
                    so,
                    "reverse: {} -> {} unshaped",
                    s.interfaces.output, s.interfaces.input
                ),
                Some(r) => {
                    let l = &r.link;
                    writeln!(
                        so,
                        "reverse tree `{}` ({}), scheduler {}",
                        l.name,
                        l.file,
                        l.scheduler.kind()
                    )
                    .and_then(|()| write!(so, "{}", class_tree(&l.classes)))
                    .and_then(|()| {
                        writeln!(
                            so,
                            "reverse: {} -> {} at {}, {} filter(s), default class `{}`, pool {} frames",
                            s.interfaces.output,
                            s.interfaces.input,
                            l.rate,
                            l.rules.len(),
                            l.classes.get(r.default).name(),
                            r.pool,
                        )
                    })
                }
            })
            .and_then(|()| writeln!(so, "{}: OK", args.config.display()))
            .map_err(stdout_failure);
    }
    let options = Options {
        config_path: args.config.clone(),
        metrics: args.metrics,
        out_dir: args
            .out
            .clone()
            .unwrap_or_else(|| default_out(&config.name)),
    };
    drop(so);
    let final_snapshot = linkshare_shaper::run(config, &options, &mut |event| match event {
        Event::Started {
            interfaces,
            offloads,
            metrics,
            max_frame,
            reverse,
        } => {
            eprintln!(
                "shaping {} -> {} (frames up to {max_frame} B); SIGHUP reloads, SIGUSR1 writes summary.json, SIGINT stops",
                interfaces.0, interfaces.1
            );
            match reverse {
                Some(file) => eprintln!(
                    "shaping {} -> {} with the reverse tree of {file}",
                    interfaces.1, interfaces.0
                ),
                None => eprintln!("passing {} -> {} unshaped", interfaces.1, interfaces.0),
            }
            if !offloads.is_empty() {
                eprintln!("turned off {} (GRO is restored at exit)", offloads.join(", "));
            }
            if let Some(m) = metrics {
                eprintln!("metrics on http://{m}/metrics");
            }
        }
        Event::Reloaded => eprintln!("reloaded {}", args.config.display()),
        Event::ReloadRefused(msg) => {
            eprintln!("{msg}\nreload refused; the previous configuration keeps running")
        }
        Event::SummaryWritten(path) => eprintln!("wrote {}", path.display()),
    })
    .map_err(|e| Failure::Shape(e.to_string()))?;
    let table = linkshare_shaper::summary::table(&final_snapshot);
    let mut so = std::io::stdout().lock();
    write!(so, "{}", table.render()).map_err(stdout_failure)?;
    if let Some(r) = &final_snapshot.reverse {
        let (from, to) = &r.interfaces;
        let table = linkshare_shaper::summary::table(r);
        write!(so, "\nreverse tree, {from} -> {to}:\n{}", table.render())
            .map_err(stdout_failure)?;
    }
    Ok(())
}
