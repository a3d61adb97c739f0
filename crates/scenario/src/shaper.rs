//! The shaper's configuration: what `linkshare shape` runs — the scenario format's
//! `[link]` and `[[class]]` plus `[shaper]` and `[[filter]]` (documented in
//! `scenarios/README.md`, section "Shaping real traffic").
//!
//! A shaper file may be a whole simulation scenario (with `[scenario]`, `[[flow]]` and
//! `[tcp]`): `linkshare run` simulates it and `linkshare shape` shapes real traffic with
//! the same link and classes. Flows describe simulated traffic and are not read here;
//! `[scenario]` is optional, its `name` names the run (the file's stem otherwise).

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use linkshare_classify::{Classifier, Rule};
use linkshare_core::buffer::BufferConfig;
use linkshare_core::hierarchy::{ClassId, ClassTree, Origin};
use linkshare_core::sched::SchedulerConfig;
use linkshare_core::units::{Bytes, Duration, Rate};

use crate::format::LinkReader;
pub use crate::format::PacingMode;
use crate::{Problem, Problems};

/// The two interfaces the shaper bridges.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Interfaces {
    /// `[shaper] in`: frames arriving here are classified, scheduled and sent on
    /// `output`.
    pub input: String,
    /// `[shaper] out`: frames arriving here pass back to `input` unshaped.
    pub output: String,
}

/// `[shaper]` and `[[filter]]`, resolved against the class tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShaperSettings {
    /// The interfaces.
    pub interfaces: Interfaces,
    /// `pool`: frames in the preallocated frame pool (the most frames queued at once).
    pub pool: u32,
    /// `pacing`: how departures are waited for.
    pub pacing: PacingMode,
    /// `spin`: how long before a deadline `sleep-spin` stops sleeping and spins (and, if
    /// under 10 µs, how long it keeps polling after the last frame before it sleeps).
    pub spin: Duration,
    /// `catch_up`: link time lost to a late wake-up that each tree's port makes up by
    /// sending back to back ([`linkshare_core::port`]): the link is a token bucket of
    /// this depth in front of its rate.
    pub catch_up: Duration,
    /// `metrics`: where to serve Prometheus metrics (the command line may override it).
    pub metrics: Option<SocketAddr>,
    /// `realtime`: run the datapath thread under `SCHED_FIFO` (needs CAP_SYS_NICE), so
    /// that it wakes on time on a loaded machine.
    pub realtime: bool,
    /// `[[filter]]` rules, in file order.
    pub rules: Vec<Rule>,
    /// `default`: the leaf of frames no rule matches, and of frames that do not parse.
    pub default: ClassId,
    /// `reverse`: the reverse tree's file as written, and where it was named.
    pub reverse_file: Option<(String, Origin)>,
}

impl ShaperSettings {
    /// A classifier with these rules and default class.
    pub fn classifier(&self) -> Classifier {
        Classifier::new(self.rules.clone(), self.default)
    }
}

/// A loaded, valid shaper configuration.
#[derive(Clone, Debug)]
pub struct ShaperConfig {
    /// `[scenario] name`, or the file's stem.
    pub name: String,
    /// The file it was read from, as named by the user.
    pub file: String,
    /// `[link] rate`: the rate departures are paced at.
    pub rate: Rate,
    /// `[link] overhead`: bytes counted per frame on top of its length (the frame is
    /// counted from its Ethernet header to the end of its payload, without FCS,
    /// preamble or gap, as Linux qdiscs count it).
    pub overhead: Bytes,
    /// The class tree.
    pub classes: Arc<ClassTree>,
    /// The discipline with its settings.
    pub scheduler: SchedulerConfig,
    /// `[link] buffer`: the limit shared by all classes.
    pub buffer: BufferConfig,
    /// `[shaper]` and `[[filter]]`.
    pub shaper: ShaperSettings,
    /// The discipline's warnings (tc's, under HTB), located in the file.
    pub warnings: Vec<Problem>,
    /// `[shaper] reverse`: the tree that shapes frames arriving on `out` before they
    /// are sent on `in` (`None`: they pass back unshaped).
    pub reverse: Option<Box<ReverseConfig>>,
}

/// The reverse tree of a shaper: a single-link file named by the forward file's
/// `[shaper] reverse`, with its own `[link]`, `[[class]]`, `[[filter]]` and a
/// `[shaper]` that may set only `default`, `pool`, and `in` and `out` (which must be
/// the forward file's `out` and `in`). Frames arriving on the forward file's `out` are
/// classified by its filters, queued in its classes and paced at its link's rate on
/// the forward file's `in`.
#[derive(Clone, Debug)]
pub struct ReverseConfig {
    /// The link, its classes and filters, read as `linkshare tc export` reads a file;
    /// its `file` is the path the shaper opened (relative paths resolved against the
    /// forward file's directory).
    pub link: SingleLink,
    /// `[shaper] default`, or the only leaf.
    pub default: ClassId,
    /// `[shaper] pool`: the reverse tree's own frame pool (default 8192 frames).
    pub pool: u32,
}

impl ReverseConfig {
    /// A classifier with its rules and default class.
    pub fn classifier(&self) -> Classifier {
        Classifier::new(self.link.rules.clone(), self.default)
    }
}

/// The single link of a scenario or shaper configuration, as one interface's qdisc
/// would hold it: what `linkshare tc export` reads. `[shaper]` is optional (its `out`
/// and `default` are kept when written); flows, if any, are not read.
#[derive(Clone, Debug)]
pub struct SingleLink {
    /// `[scenario] name`, or the file's stem.
    pub name: String,
    /// The file it was read from, as named by the user.
    pub file: String,
    /// `[link] rate`.
    pub rate: Rate,
    /// `[link] overhead`.
    pub overhead: Bytes,
    /// The class tree.
    pub classes: Arc<ClassTree>,
    /// The discipline with its settings.
    pub scheduler: SchedulerConfig,
    /// `[link] buffer`.
    pub buffer: BufferConfig,
    /// `[link] best_effort`, if given (its curves are in the tree's `ls`).
    pub best_effort: Option<crate::BestEffort>,
    /// `[[filter]]` rules, in file order.
    pub rules: Vec<Rule>,
    /// `[shaper] default` (or the only leaf), when `[shaper]` is written.
    pub default: Option<ClassId>,
    /// `[shaper] out`, when written.
    pub output: Option<String>,
    /// The discipline's warnings (tc's, under HTB), located in the file.
    pub warnings: Vec<Problem>,
}

/// Reads and loads the shaper configuration at `path`; I/O errors are a problem without
/// a position.
pub fn load_shaper_file(path: &Path) -> Result<ShaperConfig, Problems> {
    let name = path.display().to_string();
    let text = crate::read_text(path, "shaper configuration")?;
    load_shaper_str(&text, &name, &file_stem(path))
}

/// Loads a shaper configuration from `text`; `file` names it in problems, `stem` names
/// the run when the file has no `[scenario] name`. A `[shaper] reverse` file is read
/// relative to `file`'s directory.
pub fn load_shaper_str(text: &str, file: &str, stem: &str) -> Result<ShaperConfig, Problems> {
    let mut config = crate::with_document(text, file, &[], |ctx, doc| {
        crate::format::read_shaper_document(ctx, doc, LinkReader::Shaper)
            .and_then(|defs| crate::resolve::build_shaper(ctx, &defs, file, stem))
    })?;
    if let Some((name, origin)) = &config.shaper.reverse_file {
        let dir = Path::new(file).parent().unwrap_or(Path::new(""));
        let path = dir.join(name);
        let text = crate::read_text(&path, "reverse tree's file").map_err(|mut p| {
            for problem in &mut p.0 {
                problem.origin = Some(origin.clone());
                problem.field = Some("shaper.reverse".to_owned());
                problem.fix = "name a single-link file (its [link], [[class]] and [[filter]]), \
                               relative to this file's directory"
                    .to_owned();
            }
            p
        })?;
        let name = path.display().to_string();
        let interfaces = &config.shaper.interfaces;
        let reverse = crate::with_document(&text, &name, &[], |ctx, doc| {
            crate::format::read_shaper_document(ctx, doc, LinkReader::Reverse).and_then(|defs| {
                crate::resolve::build_reverse(ctx, &defs, &name, &file_stem(&path), interfaces)
            })
        })?;
        config.reverse = Some(Box::new(reverse));
    }
    Ok(config)
}

/// Reads and loads the single link of the scenario or shaper configuration at `path`
/// (see [`SingleLink`]); I/O errors are a problem without a position.
pub fn load_single_link_file(path: &Path) -> Result<SingleLink, Problems> {
    let name = path.display().to_string();
    let text = crate::read_text(path, "scenario file")?;
    load_single_link_str(&text, &name, &file_stem(path))
}

/// Loads the single link of a scenario or shaper configuration from `text` (see
/// [`SingleLink`]); `file` names it in problems, `stem` names it when the file has no
/// `[scenario] name`.
pub fn load_single_link_str(text: &str, file: &str, stem: &str) -> Result<SingleLink, Problems> {
    crate::with_document(text, file, &[], |ctx, doc| {
        crate::format::read_shaper_document(ctx, doc, LinkReader::Export)
            .and_then(|defs| crate::resolve::build_single_link(ctx, &defs, file, stem))
    })
}

/// The stem of `path` if it is a valid name, else `shaper`.
fn file_stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| crate::reader::valid_name(s))
        .unwrap_or_else(|| "shaper".to_owned())
}
