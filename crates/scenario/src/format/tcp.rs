//! TCP parameters: the file-wide `[tcp]` table and a flow's `tcp = { ... }`, read field by
//! field so that a flow's table overrides only what it writes.

use linkshare_core::echo::echo;
use linkshare_core::units::{Bytes, Duration};
use linkshare_sim::config::TcpVariant;
use toml::de::DeValue;

use crate::problem::did_you_mean;
use crate::reader::{Ctx, Sp, Table, Value};

/// Keys of a TCP table.
const TCP_KEYS: &[&str] = &[
    "variant",
    "mss",
    "header",
    "window",
    "initial_window",
    "min_rto",
    "max_rto",
    "initial_rto",
    "granularity",
    "delayed_ack",
    "handshake",
    "dupack_threshold",
    "trace",
    "idle_restart",
];

/// Names of the TCP variants.
const VARIANTS: [(&str, TcpVariant); 2] =
    [("newreno", TcpVariant::NewReno), ("reno", TcpVariant::Reno)];

/// The receiver's window as written: in segments of the flow's MSS, or in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WindowDef {
    /// `window = 64`: this many segments of `mss` payload bytes.
    Segments(u64),
    /// `window = "64kb"`: payload bytes.
    Bytes(u64),
}

/// A TCP table as written: only the fields it gives, each with its position.
#[derive(Clone, Debug, Default)]
pub(crate) struct TcpDef {
    pub(crate) variant: Option<Sp<TcpVariant>>,
    pub(crate) mss: Option<Sp<u32>>,
    pub(crate) header: Option<Sp<u32>>,
    pub(crate) window: Option<Sp<WindowDef>>,
    pub(crate) initial_window: Option<Sp<u32>>,
    pub(crate) min_rto: Option<Sp<Duration>>,
    pub(crate) max_rto: Option<Sp<Duration>>,
    pub(crate) initial_rto: Option<Sp<Duration>>,
    pub(crate) granularity: Option<Sp<Duration>>,
    pub(crate) delayed_ack: Option<Sp<Duration>>,
    pub(crate) handshake: Option<Sp<bool>>,
    pub(crate) dupack_threshold: Option<Sp<u32>>,
    pub(crate) trace: Option<Sp<bool>>,
    pub(crate) idle_restart: Option<Sp<bool>>,
}

impl TcpDef {
    /// `self`'s fields, falling back to `defaults`' where `self` does not give one.
    pub(crate) fn over(&self, defaults: &TcpDef) -> TcpDef {
        fn pick<T: Clone>(a: &Option<Sp<T>>, b: &Option<Sp<T>>) -> Option<Sp<T>> {
            a.clone().or_else(|| b.clone())
        }
        TcpDef {
            variant: pick(&self.variant, &defaults.variant),
            mss: pick(&self.mss, &defaults.mss),
            header: pick(&self.header, &defaults.header),
            window: pick(&self.window, &defaults.window),
            initial_window: pick(&self.initial_window, &defaults.initial_window),
            min_rto: pick(&self.min_rto, &defaults.min_rto),
            max_rto: pick(&self.max_rto, &defaults.max_rto),
            initial_rto: pick(&self.initial_rto, &defaults.initial_rto),
            granularity: pick(&self.granularity, &defaults.granularity),
            delayed_ack: pick(&self.delayed_ack, &defaults.delayed_ack),
            handshake: pick(&self.handshake, &defaults.handshake),
            dupack_threshold: pick(&self.dupack_threshold, &defaults.dupack_threshold),
            trace: pick(&self.trace, &defaults.trace),
            idle_restart: pick(&self.idle_restart, &defaults.idle_restart),
        }
    }
}

/// Reads a TCP table at `path` (`tcp` or `flow[i].tcp`).
pub(crate) fn read_tcp(ctx: &mut Ctx<'_>, path: &str, v: &Value<'_>) -> Option<TcpDef> {
    let t = ctx.table(path, v, TCP_KEYS)?;
    let variant = t.get("variant").and_then(|v| {
        let s = ctx.string(&t.field("variant"), v)?;
        match VARIANTS.iter().find(|(n, _)| *n == s.value) {
            Some(&(_, variant)) => Some(Sp {
                value: variant,
                span: s.span,
            }),
            None => {
                let hint = did_you_mean(s.value, VARIANTS.iter().map(|(n, _)| *n));
                ctx.report(
                    &s.span,
                    &t.field("variant"),
                    format!("unknown TCP variant `{}`", echo(s.value)),
                    format!("{hint}use \"newreno\" (RFC 6582) or \"reno\" (RFC 5681)"),
                );
                None
            }
        }
    });
    let mss = bytes_u32(ctx, &t, "mss", "\"1000b\"");
    let header = bytes_u32(ctx, &t, "header", "\"40b\"");
    let window = t
        .get("window")
        .and_then(|v| window(ctx, &t.field("window"), v));
    let initial_window = t
        .integer(ctx, "initial_window", 1, u64::from(u32::MAX))
        .map(|n| Sp {
            value: n.value as u32,
            span: n.span,
        });
    let min_rto = time(ctx, &t, "min_rto", "\"1s\"");
    let max_rto = time(ctx, &t, "max_rto", "\"60s\"");
    let initial_rto = time(ctx, &t, "initial_rto", "\"1s\"");
    let granularity = time(ctx, &t, "granularity", "\"1ms\"");
    let delayed_ack = time(ctx, &t, "delayed_ack", "\"40ms\"");
    let handshake = t
        .get("handshake")
        .and_then(|v| ctx.boolean(&t.field("handshake"), v));
    let dupack_threshold = t
        .integer(ctx, "dupack_threshold", 1, u64::from(u32::MAX))
        .map(|n| Sp {
            value: n.value as u32,
            span: n.span,
        });
    let trace = t
        .get("trace")
        .and_then(|v| ctx.boolean(&t.field("trace"), v));
    let idle_restart = t
        .get("idle_restart")
        .and_then(|v| ctx.boolean(&t.field("idle_restart"), v));
    Some(TcpDef {
        idle_restart,
        variant,
        mss,
        header,
        window,
        initial_window,
        min_rto,
        max_rto,
        initial_rto,
        granularity,
        delayed_ack,
        handshake,
        dupack_threshold,
        trace,
    })
}

/// `key` as a positive size of at most `u32::MAX` bytes.
fn bytes_u32(ctx: &mut Ctx<'_>, t: &Table<'_, '_>, key: &str, example: &str) -> Option<Sp<u32>> {
    let fix = format!("give a positive size below 4 GiB, e.g. {example}");
    super::size_u32(ctx, t, key, example, key, &fix)
}

/// `key` as a positive time.
fn time(ctx: &mut Ctx<'_>, t: &Table<'_, '_>, key: &str, example: &str) -> Option<Sp<Duration>> {
    let d = t.quantity::<Duration>(ctx, key, "a time", example)?;
    if d.value == Duration::ZERO {
        ctx.report(
            &d.span,
            &t.field(key),
            format!("{key} is zero"),
            format!("give a positive time such as {example}, or leave it out"),
        );
        return None;
    }
    Some(d)
}

/// The window: an integer (segments) or a size string (bytes), positive.
fn window(ctx: &mut Ctx<'_>, path: &str, v: &Value<'_>) -> Option<Sp<WindowDef>> {
    let (value, span) = match v.get_ref() {
        DeValue::Integer(_) => {
            let n = ctx.integer(path, v, 1, u64::from(u32::MAX))?;
            (WindowDef::Segments(n.value), n.span)
        }
        DeValue::String(_) => {
            let b = ctx.quantity::<Bytes>(path, v, "a size", "\"64kb\"")?;
            if b.value == Bytes::ZERO {
                ctx.report(
                    &b.span,
                    path,
                    "the window is zero: the connection could never send",
                    "give a positive window such as 64 (segments) or \"64kb\"",
                );
                return None;
            }
            (WindowDef::Bytes(b.value.0), b.span)
        }
        _ => {
            ctx.wrong_type(
                path,
                v,
                "an integer (segments of mss) or a size string (bytes)",
                "64 or \"64kb\"",
            );
            return None;
        }
    };
    Some(Sp { value, span })
}
