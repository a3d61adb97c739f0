//! A link's settings of the disciplines that have their own: `[link.htb]`,
//! `[link.jobs]`, `[link.keshav]`, `[link.hfsc]`, `[link.cbq]` (and `htb = { ... }`,
//! `jobs = { ... }` and so on on a `[[links]]` entry), and the per-class settings a discipline
//! reads from `[[class]]` tables (JoBS's constraints, Keshav FQ's `delta`). Each
//! discipline's settings are read into its typed settings ([`DisciplineSettings`]); the
//! link's scheduler is then built from the settings of whichever discipline runs it, so
//! that the same file can be run under another scheduler (`--scheduler`, `compare`)
//! without losing or misapplying them.

use std::num::NonZeroU32;

use linkshare_core::ds::bids::Structure;
use linkshare_core::sched::cbq::{CbqParams, CbqSharing};
use linkshare_core::sched::hfsc::{HfscParams, VtRestart};
use linkshare_core::sched::htb::HtbParams;
use linkshare_core::sched::jobs::{Buffer, Constraints, Mode, ReferenceBugs};
use linkshare_core::sched::keshav::{ConversationDelta, KeshavConfig};
use linkshare_core::units::{Bytes, Duration, Fraction, Rate, Ratio};
use toml::de::DeValue;

use super::ClassDef;
use crate::problem::did_you_mean;
use crate::reader::{Ctx, Table, Value};
use crate::{DisciplineSettings, JobsSettings};

/// Keys of `[link.htb]`.
const HTB_KEYS: &[&str] = &["r2q", "hz", "mtu"];

/// Keys of `[link.jobs]`.
const JOBS_KEYS: &[&str] = &[
    "mode",
    "gain",
    "buffer",
    "separate",
    "sampling",
    "global_drop_stop",
    "first_class_without_donor",
];

/// The JoBS keys of a `[[class]]` table (its constraints).
pub(crate) const JOBS_CLASS_KEYS: &[&str] = &[
    "delay_bound",
    "loss_bound",
    "min_rate",
    "delay_ratio",
    "loss_ratio",
];

/// Keys of `[link.keshav]`.
const KESHAV_KEYS: &[&str] = &["limit", "structure", "delta", "count_operations"];

/// Keys of `[link.hfsc]`.
const HFSC_KEYS: &[&str] = &["restart"];

/// Keys of `[link.cbq]`.
const CBQ_KEYS: &[&str] = &["sharing"];

/// Reads the discipline tables of a link table (`get` finds a key in it, `field` names
/// it in messages).
pub(super) fn read<'t, 'i: 't>(
    ctx: &mut Ctx<'_>,
    get: impl Fn(&str) -> Option<&'t Value<'i>>,
    field: impl Fn(&str) -> String,
) -> DisciplineSettings {
    let mut settings = DisciplineSettings::default();
    if let Some(v) = get("htb") {
        settings.htb = read_htb(ctx, &field("htb"), v).unwrap_or_default();
    }
    if let Some(v) = get("jobs") {
        settings.jobs = read_jobs(ctx, &field("jobs"), v).unwrap_or_default();
    }
    if let Some(v) = get("keshav") {
        settings.keshav = read_keshav(ctx, &field("keshav"), v);
    }
    if let Some(v) = get("hfsc")
        && let Some(t) = ctx.table(&field("hfsc"), v, HFSC_KEYS)
        && let Some(v) = t.get("restart")
        && let Some(restart) = choice(
            ctx,
            &t.field("restart"),
            v,
            &VtRestart::ALL.map(|r| (r.name(), r)),
            "\"midpoint\" (the paper's, ALTQ's and Linux's rule) or \"min\" (the smallest \
             virtual time of the active siblings)",
        )
    {
        settings.hfsc = HfscParams { restart };
    }
    if let Some(v) = get("cbq")
        && let Some(t) = ctx.table(&field("cbq"), v, CBQ_KEYS)
        && let Some(v) = t.get("sharing")
        && let Some(sharing) = choice(
            ctx,
            &t.field("sharing"),
            v,
            &CbqSharing::ALL.map(|g| (g.name(), g)),
            "\"top-level\" (Linux's), \"formal\" (Floyd and Jacobson's formal link \
             sharing, as in ns-2) or \"top-level-ns2\" (top-level with ns-2's cutoff rules)",
        )
    {
        settings.cbq = CbqParams { sharing };
    }
    settings
}

/// Moves the per-class settings of the disciplines that have some from the link's
/// classes into `settings` (by class name): JoBS's constraints, Keshav FQ's `delta` of
/// each conversation.
pub(super) fn add_class_settings(
    ctx: &mut Ctx<'_>,
    settings: &mut DisciplineSettings,
    classes: &[ClassDef],
) {
    for c in classes {
        if c.jobs != Constraints::default() {
            settings
                .jobs
                .config
                .classes
                .insert(c.spec.name.clone(), c.jobs);
        }
        if let Some(d) = &c.delta {
            let keshav = settings.keshav.get_or_insert_with(KeshavConfig::default);
            keshav.deltas.push(ConversationDelta {
                class: c.spec.name.clone(),
                delta: d.value,
                origin: Some(ctx.origin(&d.span)),
            });
        }
    }
}

/// `[link.jobs]`: the controller (`mode`, the paper mode's `gain`, the reference mode's
/// bug flags), the buffer (`buffer` packets, `separate`) and `sampling`.
fn read_jobs(ctx: &mut Ctx<'_>, path: &str, v: &Value<'_>) -> Option<JobsSettings> {
    let t = ctx.table(path, v, JOBS_KEYS)?;
    let mut jobs = JobsSettings::default();
    for &key in JOBS_KEYS {
        if let Some(v) = t.get(key) {
            jobs.origins.push((key, ctx.origin(&v.span())));
        }
    }
    let reference = match t.get("mode") {
        None => false,
        Some(v) => {
            let s = ctx.string(&t.field("mode"), v)?;
            match s.value {
                "paper" => false,
                "reference" => true,
                other => {
                    let hint = did_you_mean(other, ["paper", "reference"]);
                    ctx.report(
                        &s.span,
                        &t.field("mode"),
                        format!("unknown jobs mode `{other}`"),
                        format!(
                            "{hint}use \"paper\" (the paper's equations, the default) or \
                             \"reference\" (the decisions of ALTQ's code)"
                        ),
                    );
                    return None;
                }
            }
        }
    };
    let mut bugs = ReferenceBugs::default();
    for (key, flag) in [
        ("global_drop_stop", &mut bugs.global_drop_stop),
        (
            "first_class_without_donor",
            &mut bugs.first_class_without_donor,
        ),
    ] {
        let Some(v) = t.get(key) else { continue };
        let b = ctx.boolean(&t.field(key), v)?;
        if b.value && !reference {
            ctx.report(
                &b.span,
                &t.field(key),
                format!("`{key}` keeps a bug of ALTQ's code, which only the reference mode has"),
                "add mode = \"reference\", or remove the flag",
            );
        }
        *flag = b.value;
    }
    jobs.config.mode = if reference {
        if let Some(g) = t.get("gain") {
            ctx.report(
                &g.span(),
                &t.field("gain"),
                "the gain factor is the paper mode's, and the mode is \"reference\" (ALTQ's \
                 own gain)",
                "remove `gain`, or use mode = \"paper\"",
            );
        }
        Mode::Reference(bugs)
    } else {
        match t.exact::<Fraction>(ctx, "gain", "a number", "0.5") {
            Some(gain) => Mode::Paper { gain: gain.value },
            None if t.get("gain").is_some() => return None,
            None => Mode::PAPER,
        }
    };
    let packets = match t.get("buffer") {
        Some(_) => t.integer(ctx, "buffer", 0, u64::from(u32::MAX))?.value as u32,
        None => match jobs.config.buffer {
            Buffer::Shared { packets } | Buffer::Separate { packets } => packets,
        },
    };
    let separate = match t.get("separate") {
        Some(v) => ctx.boolean(&t.field("separate"), v)?.value,
        None => false,
    };
    jobs.config.buffer = if separate {
        Buffer::Separate { packets }
    } else {
        Buffer::Shared { packets }
    };
    if let Some(n) = t.integer(ctx, "sampling", 1, u64::from(u32::MAX)) {
        jobs.config.sampling = NonZeroU32::new(n.value as u32).unwrap_or(NonZeroU32::MIN);
    }
    Some(jobs)
}

/// The JoBS constraints of a `[[class]]` table `t` (those not written are `None`).
pub(super) fn read_jobs_class(ctx: &mut Ctx<'_>, t: &Table<'_, '_>) -> Constraints {
    let ratio = |ctx: &mut Ctx<'_>, key: &str| {
        t.exact::<Ratio>(ctx, key, "a ratio", "2 or \"1.5\"")
            .map(|r| r.value)
    };
    Constraints {
        delay_bound: t
            .quantity::<Duration>(ctx, "delay_bound", "a time", "\"8ms\"")
            .map(|d| d.value),
        loss_bound: t
            .exact::<Fraction>(ctx, "loss_bound", "a fraction", "\"1%\" or 0.01")
            .map(|f| f.value),
        min_rate: t
            .quantity::<Rate>(ctx, "min_rate", "a rate", "\"35mbit\"")
            .map(|r| r.value),
        delay_ratio: ratio(ctx, "delay_ratio"),
        loss_ratio: ratio(ctx, "loss_ratio"),
    }
}

/// A string naming one of `options` (name, value); reports any other with `fix`.
fn choice<T: Copy>(
    ctx: &mut Ctx<'_>,
    path: &str,
    v: &Value<'_>,
    options: &[(&str, T)],
    fix: &str,
) -> Option<T> {
    let s = ctx.string(path, v)?;
    if let Some(&(_, value)) = options.iter().find(|(name, _)| *name == s.value) {
        return Some(value);
    }
    let hint = did_you_mean(s.value, options.iter().map(|(name, _)| *name));
    ctx.report(
        &s.span,
        path,
        format!("unknown value `{}`", s.value),
        format!("{hint}use {fix}"),
    );
    None
}

/// `[link.htb]`: tc's `r2q`, and the `hz` and `mtu` tc derives default bursts from.
fn read_htb(ctx: &mut Ctx<'_>, path: &str, v: &Value<'_>) -> Option<HtbParams> {
    let t = ctx.table(path, v, HTB_KEYS)?;
    let mut params = HtbParams::default();
    let positive = |ctx: &mut Ctx<'_>, key: &str| {
        t.integer(ctx, key, 1, u64::from(u32::MAX))
            .and_then(|n| NonZeroU32::new(n.value as u32))
    };
    if let Some(r2q) = positive(ctx, "r2q") {
        params.r2q = r2q;
    }
    if let Some(hz) = positive(ctx, "hz") {
        params.hz = hz;
    }
    if let Some(mtu) = t.quantity::<Bytes>(ctx, "mtu", "a size", "\"1600b\"") {
        params.mtu = mtu.value;
    }
    Some(params)
}

/// `[link.keshav]`: the shared buffer (`limit`, packets or bytes), the buffer structure,
/// the offset `delta` of every conversation without its own, and whether PERC counts
/// the paper's elementary operations (`count_operations`).
fn read_keshav(ctx: &mut Ctx<'_>, path: &str, v: &Value<'_>) -> Option<KeshavConfig> {
    let t = ctx.table(path, v, KESHAV_KEYS)?;
    let mut config = KeshavConfig::default();
    if let Some(v) = t.get("limit") {
        if matches!(v.get_ref(), DeValue::String(s) if s == "none") {
            ctx.report(
                &v.span(),
                &t.field("limit"),
                "keshav's buffer cannot be unbounded: it drops the largest bids when full",
                "give a number of packets (10000) or a size (\"10mb\")",
            );
        } else if let Some(l) = super::limit(ctx, &t.field("limit"), v) {
            config.limit = l.value;
            config.limit_origin = Some(ctx.origin(&l.span));
        }
    }
    if let Some(v) = t.get("structure")
        && let Some(s) = ctx.string(&t.field("structure"), v)
    {
        match Structure::from_name(&s.value.to_ascii_lowercase()) {
            Some(structure) => config.structure = structure,
            None => {
                let names = Structure::ALL.map(Structure::name);
                let hint = did_you_mean(s.value, names);
                ctx.report(
                    &s.span,
                    &t.field("structure"),
                    format!("unknown buffer structure `{}`", s.value),
                    format!("{hint}write one of {}", names.join(", ")),
                );
            }
        }
    }
    if let Some(d) = t.quantity::<Bytes>(ctx, "delta", "a size", "\"1500b\"") {
        config.delta = d.value;
    }
    if let Some(v) = t.get("count_operations")
        && let Some(b) = ctx.boolean(&t.field("count_operations"), v)
    {
        config.count_operations = b.value;
    }
    Some(config)
}
