//! linkshare-tc: speak tc. Import the `tc` scripts people shape links with today as
//! scenarios, and export any scenario the kernel can run as `tc` commands.
//!
//! * [`shell`]: the part of POSIX shell tc scripts use (words, quotes, variables,
//!   continuations), every word located.
//! * [`show`]: `tc qdisc show` / `tc -d class show` output read as the commands that
//!   built it.
//! * [`import`]: tc commands → [`model::TcConfig`], with tc's and the kernel's
//!   defaults applied and noted, and what cannot be translated listed with the reason.
//! * [`scenario`]: [`model::TcConfig`] → a commented scenario file.
//! * [`export`]: a scenario's link → [`model::TcConfig`] → tc commands.
//!
//! A library, so that the command line (`linkshare tc import`, `linkshare tc export`)
//! only reads files, calls [`import_scenario`] or [`export_script`] and prints.
//!
//! # What the importer covers
//!
//! A shell script of tc commands (variables, quotes, continuations, redirections; not
//! loops, conditionals or functions), or the output of `tc qdisc show` and `tc -d
//! class show` (`-s` statistics ignored). One interface's root qdisc: `htb` (`default`, `r2q`), `hfsc` (`default`), `drr`,
//! `prio` (`bands`); their classes (HTB `rate ceil burst cburst quantum prio mtu`, HFSC
//! `sc rt ls ul` in both curve forms, DRR `quantum`); `pfifo`/`bfifo` leaves; filters
//! at the root: `u32` (`match ip|ip6 src|dst|sport|dport|protocol|tos|dsfield`, `match
//! tcp|udp src|dst`, port masks of contiguous high bits as ranges), `flower`
//! (`ip_proto src_ip dst_ip src_port dst_port ip_tos vlan_id`), `matchall`, tried in
//! `prio` order (tc's automatic priority 0xC000 when none is given).
//!
//! Defaults, as tc and the kernel apply them, written out in the scenario with a
//! comment: HTB `ceil` = `rate`; `burst` = `rate / hz + mtu` and `cburst` = `ceil / hz +
//! mtu` (tc, `hz` from `/proc/net/psched`: 10⁹ on kernels with high-resolution timers,
//! [`import::Machine`]); a leaf's `quantum` = `rate / r2q` clamped to [1000, 200000]
//! bytes (the kernel, with tc's "quantum is small/big" warning); `prio 0`; a leaf
//! without a qdisc gets the kernel's pfifo of `txqueuelen` (1000) packets; DRR's
//! quantum is the interface's MTU with its header (1514); PRIO sends unfiltered
//! packets (priority 0) to band 1, class `1:2`.
//!
//! The link rate is what the classes directly under the qdisc may send together (the
//! sum of their HTB ceilings or HFSC upper limits), or `--rate`.
//!
//! # What it refuses (listed line by line, exit 2 unless `--partial`)
//!
//! Other root qdiscs (tbf, cake, fq_codel, sfq, ...), with the closest equivalent;
//! leaf qdiscs other than pfifo/bfifo (the class keeps the default pfifo); ingress and
//! clsact; commands for a second interface; filters attached below the root or naming
//! interior classes; `fw` (firewall marks), `basic`, `bpf` and other classifiers; u32
//! hash tables and raw offset matches; actions and policing; per-class size tables
//! (`overhead`, `linklayer`, `mpu`); programs other than tc (`ip`, `iptables`, ...).
//!
//! # Deviations
//!
//! * Rates are kept in bit/s exactly; tc stores them in bytes per second (truncating)
//!   and bursts as times in its clock's ticks, so the kernel's values can be below the
//!   scenario's by less than one byte per second and a few bytes of burst (`tc class
//!   show` prints 1593 B for a burst of 1600 B at 30 Mbit/s).
//! * u32 `ip sport`/`dport` at fixed offsets assume IPv4 headers without options, as
//!   the classifier reads ports after any options; the ECN bits of a `tos` mask are
//!   ignored (the classifier matches DSCP).

pub mod export;
pub mod import;
pub mod model;
pub mod scenario;
pub mod shell;
pub mod show;

use linkshare_scenario::{Problem, Problems, SingleLink};

pub use export::Refusal;
pub use import::{Machine, Untranslated};

/// An imported script.
#[derive(Clone, Debug)]
pub struct ImportOutcome {
    /// The scenario file's text.
    pub scenario: String,
    /// What was not translated, in script order.
    pub untranslated: Vec<Untranslated>,
    /// tc's warnings: clamped quanta (located in the script), and the scenario's
    /// (burst below one MTU, ceil below rate, children's rates above the parent's;
    /// located in the scenario written).
    pub warnings: Vec<Problem>,
}

/// Where an imported scenario goes: its name, the file it is written to (which names
/// it in warnings), and the interfaces `linkshare shape` bridges, if given.
#[derive(Clone, Copy, Debug)]
pub struct Target<'a> {
    /// `[scenario] name`.
    pub name: &'a str,
    /// The scenario file, as the user named it.
    pub file: &'a str,
    /// `[shaper] in` and `out`.
    pub interfaces: Option<(&'a str, &'a str)>,
}

/// Imports the tc script `script` (named `script_file` in messages) as a scenario for
/// `target`.
pub fn import_scenario(
    script: &str,
    script_file: &str,
    target: &Target<'_>,
    machine: &Machine,
) -> Result<ImportOutcome, Problems> {
    let (name, scenario_file) = (target.name, target.file);
    let imported = import::import(script, script_file, machine)?;
    let text = scenario::write(
        &imported.config,
        &scenario::Provenance {
            name,
            script: script_file,
            machine,
            untranslated: &imported.untranslated,
            interfaces: target.interfaces,
        },
    );
    let mut warnings = imported.warnings;
    let link = linkshare_scenario::load_single_link_str(&text, scenario_file, name)?;
    warnings.extend(link.warnings);
    Ok(ImportOutcome {
        scenario: text,
        untranslated: imported.untranslated,
        warnings,
    })
}

/// The tc commands that build `link` on interface `dev`.
pub fn export_script(link: &SingleLink, dev: &str) -> Result<String, Refusal> {
    let (config, names) = export::from_link(link, dev)?;
    Ok(export::script(&config, &names))
}
