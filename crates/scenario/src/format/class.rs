//! `[[class]]` tables and service curves.

use linkshare_core::curve::ServiceCurve;
use linkshare_core::hierarchy::{ClassSpec, MAX_FLOWS, MAX_PRIORITY, PerFlow};
use linkshare_core::units::{Bytes, Duration, Rate};
use toml::de::DeValue;

use super::settings::JOBS_CLASS_KEYS;
use super::{ClassDef, limit};
use crate::reader::{Ctx, Value};

/// Keys of a class.
const CLASS_KEYS: &[&str] = &[
    "name",
    "parent",
    "weight",
    "rate",
    "ceil",
    "burst",
    "cburst",
    "rt",
    "ls",
    "ul",
    "priority",
    "limit",
    "max_packet",
    "quantum",
    "per_flow",
    "delta",
];

/// Keys of a `per_flow` table.
const PER_FLOW_KEYS: &[&str] = &["max_flows", "idle"];

/// Keys of a service curve table (either form).
const CURVE_KEYS: &[&str] = &["m1", "d", "m2", "umax", "dmax", "rate"];

pub(super) fn read_class(ctx: &mut Ctx<'_>, path: &str, v: &Value<'_>) -> Option<ClassDef> {
    // JoBS's keys are read here and kept in the link's JoBS settings, not in the spec.
    let keys: Vec<&'static str> = CLASS_KEYS.iter().chain(JOBS_CLASS_KEYS).copied().collect();
    let t = ctx.table(path, v, &keys)?;
    let origin = ctx.origin(&t.span);
    let mut spec = ClassSpec {
        origin: Some(origin),
        ..ClassSpec::default()
    };
    for key in keys {
        if let Some(v) = t.get(key) {
            spec.field_origins.push((key, ctx.origin(&v.span())));
        }
    }
    let name = t
        .require(ctx, "name", "name = \"bulk\"")
        .and(t.class_name(ctx, "name"));
    spec.name = name.map_or_else(String::new, |n| n.value);
    spec.parent = t.class_name(ctx, "parent").map(|p| p.value);
    spec.weight = t
        .integer(ctx, "weight", 1, u64::from(u32::MAX))
        .map(|w| w.value as u32);
    spec.priority = t
        .integer(ctx, "priority", 0, u64::from(MAX_PRIORITY))
        .map(|p| p.value as u8);
    spec.rate = t
        .quantity::<Rate>(ctx, "rate", "a rate", "\"1mbit\"")
        .map(|r| r.value);
    spec.ceil = t
        .quantity::<Rate>(ctx, "ceil", "a rate", "\"2mbit\"")
        .map(|r| r.value);
    let size = |ctx: &mut Ctx<'_>, key: &str| {
        t.quantity::<Bytes>(ctx, key, "a size", "\"1500b\"")
            .map(|b| b.value)
    };
    spec.burst = size(ctx, "burst");
    spec.cburst = size(ctx, "cburst");
    spec.max_packet = size(ctx, "max_packet");
    spec.quantum = size(ctx, "quantum");
    let unlimited = t
        .get("limit")
        .is_some_and(|v| matches!(v.get_ref(), DeValue::String(s) if s == "none"));
    if !unlimited {
        spec.limit = t
            .get("limit")
            .and_then(|v| limit(ctx, &t.field("limit"), v))
            .map(|l| l.value);
    }
    spec.per_flow = t
        .get("per_flow")
        .and_then(|v| per_flow(ctx, &t.field("per_flow"), v));
    let rt = t.get("rt").and_then(|v| curve(ctx, &t.field("rt"), v));
    spec.rt = rt.map(|(c, _)| c);
    spec.ls = t
        .get("ls")
        .and_then(|v| curve(ctx, &t.field("ls"), v))
        .map(|(c, _)| c);
    spec.ul = t
        .get("ul")
        .and_then(|v| curve(ctx, &t.field("ul"), v))
        .map(|(c, _)| c);
    let jobs = super::settings::read_jobs_class(ctx, &t);
    Some(ClassDef {
        path: path.to_owned(),
        spec,
        rt_burst: rt.and_then(|(_, umax)| umax),
        unlimited,
        jobs,
        delta: t.quantity::<Bytes>(ctx, "delta", "a size", "\"1500b\""),
    })
}

/// `per_flow = { max_flows = 64, idle = "1s" }`: the class is a per-flow template.
fn per_flow(ctx: &mut Ctx<'_>, path: &str, v: &Value<'_>) -> Option<PerFlow> {
    let t = ctx.table(path, v, PER_FLOW_KEYS)?;
    let max_flows = t
        .require(ctx, "max_flows", "max_flows = 64")
        .and_then(|_| t.integer(ctx, "max_flows", 1, u64::from(MAX_FLOWS)));
    let idle = t
        .require(ctx, "idle", "idle = \"1s\"")
        .and_then(|_| t.quantity::<Duration>(ctx, "idle", "a time", "\"1s\""));
    Some(PerFlow {
        max_flows: max_flows?.value as u32,
        idle: idle?.value,
    })
}

/// A service curve: a rate string (a line through the origin), `{ m1, d, m2 }` or
/// `{ umax, dmax, rate }`, with the `umax` of the latter form (the burst its delay bound
/// is for).
fn curve(ctx: &mut Ctx<'_>, path: &str, v: &Value<'_>) -> Option<(ServiceCurve, Option<Bytes>)> {
    if let DeValue::String(_) = v.get_ref() {
        return ctx
            .quantity::<Rate>(path, v, "a rate", "\"1mbit\"")
            .map(|r| (ServiceCurve::linear(r.value), None));
    }
    if !matches!(v.get_ref(), DeValue::Table(_)) {
        ctx.wrong_type(
            path,
            v,
            "a service curve",
            "{ m1 = \"2mbit\", d = \"10ms\", m2 = \"1mbit\" } or \
             { umax = \"1500b\", dmax = \"10ms\", rate = \"1mbit\" } or \"1mbit\"",
        );
        return None;
    }
    let t = ctx.table(path, v, CURVE_KEYS)?;
    let has = |k: &str| t.get(k).is_some();
    let umax_form = has("umax") || has("dmax") || has("rate");
    let m_form = has("m1") || has("d") || has("m2");
    if umax_form && m_form {
        ctx.report(
            &t.span,
            path,
            "the curve mixes the (m1, d, m2) form with the (umax, dmax, rate) form",
            "give either m1, d and m2, or umax, dmax and rate",
        );
        return None;
    }
    let rate = |ctx: &mut Ctx<'_>, k: &str| t.quantity::<Rate>(ctx, k, "a rate", "\"1mbit\"");
    let time = |ctx: &mut Ctx<'_>, k: &str| t.quantity::<Duration>(ctx, k, "a time", "\"10ms\"");
    if umax_form {
        let umax = t
            .require(ctx, "umax", "umax = \"1500b\"")
            .and_then(|_| t.quantity::<Bytes>(ctx, "umax", "a size", "\"1500b\""));
        let dmax = t
            .require(ctx, "dmax", "dmax = \"10ms\"")
            .and_then(|_| time(ctx, "dmax"));
        let r = t
            .require(ctx, "rate", "rate = \"1mbit\"")
            .and_then(|_| rate(ctx, "rate"));
        let (umax, dmax, r) = (umax?, dmax?, r?);
        return match ServiceCurve::from_umax_dmax_rate(umax.value, dmax.value, r.value) {
            Ok(c) => Some((c, Some(umax.value))),
            Err(e) => {
                ctx.report(&t.span, path, e.to_string(), "");
                None
            }
        };
    }
    let m2 = t
        .require(ctx, "m2", "m2 = \"1mbit\"")
        .and_then(|_| rate(ctx, "m2"));
    let (m1, d) = match (has("m1"), has("d")) {
        (false, false) => (None, Some(Duration::ZERO)),
        (true, true) => (
            rate(ctx, "m1").map(|r| r.value),
            time(ctx, "d").map(|d| d.value),
        ),
        (m1, _) => {
            let (given, missing, example) = if m1 {
                ("m1", "d", "d = \"10ms\"")
            } else {
                ("d", "m1", "m1 = \"2mbit\"")
            };
            ctx.report(
                &t.span,
                path,
                format!("`{given}` is given without `{missing}`"),
                format!("add `{example}`, or leave both m1 and d out for a straight line"),
            );
            return None;
        }
    };
    let m2 = m2?.value;
    let c = ServiceCurve {
        m1: m1.unwrap_or(m2),
        d: d?,
        m2,
    };
    Some((c, None))
}
