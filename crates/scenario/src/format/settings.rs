//! A link's settings of the disciplines that have their own: `[link.htb]`,
//! `[link.keshav]` (and `htb = { ... }`, `keshav = { ... }` on a `[[links]]` entry), and
//! the per-class settings a discipline reads from `[[class]]` tables (Keshav FQ's
//! `delta`). Each discipline's settings are read into its typed settings
//! ([`DisciplineSettings`]); the link's scheduler is then built from the settings of
//! whichever discipline runs it, so that the same file can be run under another
//! scheduler (`--scheduler`, `compare`) without losing or misapplying them.

use std::num::NonZeroU32;

use linkshare_core::ds::bids::Structure;
use linkshare_core::sched::htb::HtbParams;
use linkshare_core::sched::keshav::{ConversationDelta, KeshavConfig};
use linkshare_core::units::Bytes;
use toml::de::DeValue;

use super::ClassDef;
use crate::DisciplineSettings;
use crate::problem::did_you_mean;
use crate::reader::{Ctx, Value};

/// Keys of `[link.htb]`.
const HTB_KEYS: &[&str] = &["r2q", "hz", "mtu"];

/// Keys of `[link.keshav]`.
const KESHAV_KEYS: &[&str] = &["limit", "structure", "delta"];

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
    if let Some(v) = get("keshav") {
        settings.keshav = read_keshav(ctx, &field("keshav"), v);
    }
    settings
}

/// Moves the per-class settings of the disciplines that have some from the link's
/// classes into `settings`: Keshav FQ's `delta` of each conversation.
pub(super) fn add_class_settings(
    ctx: &mut Ctx<'_>,
    settings: &mut DisciplineSettings,
    classes: &[ClassDef],
) {
    for c in classes {
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

/// `[link.keshav]`: the shared buffer (`limit`, packets or bytes), the buffer structure
/// and the offset `delta` of every conversation without its own.
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
    Some(config)
}
