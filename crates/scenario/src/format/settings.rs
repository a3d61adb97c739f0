//! A link's settings of the disciplines that have their own: `[link.htb]`,
//! `[link.hfsc]`, `[link.cbq]` (and `htb = { ... }` and so on on a `[[links]]` entry). Each discipline's table is read into its
//! typed settings ([`DisciplineSettings`]); the link's scheduler is then built from the
//! settings of whichever discipline runs it, so that the same file can be run under
//! another scheduler (`--scheduler`, `compare`) without losing or misapplying them.

use std::num::NonZeroU32;

use linkshare_core::sched::cbq::{CbqParams, CbqSharing};
use linkshare_core::sched::hfsc::{HfscParams, VtRestart};
use linkshare_core::sched::htb::HtbParams;
use linkshare_core::units::Bytes;

use crate::DisciplineSettings;
use crate::did_you_mean;
use crate::reader::{Ctx, Value};

/// Keys of `[link.htb]`.
const HTB_KEYS: &[&str] = &["r2q", "hz", "mtu"];

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
            "\"top-level\" (Linux's) or \"formal\" (Floyd and Jacobson's formal link \
             sharing, as in ns-2)",
        )
    {
        settings.cbq = CbqParams { sharing };
    }
    settings
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
