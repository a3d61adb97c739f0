//! `[[flow]]` tables: routes, sources and schedules.

use linkshare_core::units::{Bytes, Duration, Rate};
use linkshare_sim::config::SourceConfig;
use toml::de::DeValue;

use super::{FlowDef, HopDef, ScheduleDef, SourceDef};
use crate::scenario::problem::did_you_mean;
use crate::scenario::reader::{Ctx, Sp, Table, Value};

/// Keys of a flow.
const FLOW_KEYS: &[&str] = &["name", "class", "route", "source", "on", "off"];

/// Keys of a route hop.
const HOP_KEYS: &[&str] = &["link", "class"];

/// Source types and the keys each accepts (besides `type`).
const SOURCE_TYPES: &[(&str, &[&str])] = &[
    ("cbr", &["rate", "size"]),
    ("poisson", &["rate", "size"]),
    ("periodic-on-off", &["burst", "peak", "period", "size"]),
    ("exp-on-off", &["peak", "mean_on", "mean_off", "size"]),
    ("markov2", &["rates", "mean_sojourn", "size"]),
    (
        "pareto-on-off",
        &["peak", "mean_on", "mean_off", "shape", "size"],
    ),
    ("greedy", &["size", "backlog"]),
    ("trace", &["file"]),
];

/// Default `backlog` of a greedy source.
const DEFAULT_GREEDY_BACKLOG: u32 = 2;

pub(super) fn read_flow(ctx: &mut Ctx<'_>, path: &str, v: &Value<'_>) -> Option<FlowDef> {
    let t = ctx.table(path, v, FLOW_KEYS)?;
    let name = t
        .require(ctx, "name", "name = \"bulk1\"")
        .and(t.name(ctx, "name"));
    let class = t.name(ctx, "class");
    let route = t
        .get("route")
        .and_then(|v| read_route(ctx, &t.field("route"), v));
    let source = t
        .require(
            ctx,
            "source",
            "source = { type = \"cbr\", rate = \"1mbit\", size = \"1000b\" }",
        )
        .and_then(|v| read_source(ctx, &t.field("source"), v));
    let schedule = match (t.get("on"), t.get("off")) {
        (Some(_), Some(off)) => {
            ctx.report(
                &off.span(),
                &t.field("off"),
                "both `on` and `off` are given",
                "give the intervals when the flow is on, or those when it is off, not both",
            );
            None
        }
        (Some(v), None) => read_intervals(ctx, &t.field("on"), v, true),
        (None, Some(v)) => read_intervals(ctx, &t.field("off"), v, false),
        (None, None) => None,
    };
    Some(FlowDef {
        path: path.to_owned(),
        span: t.span.clone(),
        name,
        class,
        route,
        source,
        schedule,
    })
}

fn read_route(ctx: &mut Ctx<'_>, path: &str, v: &Value<'_>) -> Option<Sp<Vec<HopDef>>> {
    let items = ctx.array(path, v, "[{ link = \"l1\", class = \"a\" }]")?;
    let mut hops = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let hop_path = format!("{path}[{i}]");
        let Some(t) = ctx.table(&hop_path, item, HOP_KEYS) else {
            continue;
        };
        let link = t
            .require(ctx, "link", "link = \"l1\"")
            .and(t.name(ctx, "link"));
        let class = t
            .require(ctx, "class", "class = \"a\"")
            .and(t.name(ctx, "class"));
        if let (Some(link), Some(class)) = (link, class) {
            hops.push(HopDef {
                path: hop_path,
                link,
                class,
            });
        }
    }
    if items.is_empty() {
        ctx.report(
            &v.span(),
            path,
            "the route is empty",
            "list the hops in order, e.g. route = [{ link = \"l1\", class = \"a\" }]",
        );
        return None;
    }
    Some(Sp {
        value: hops,
        span: v.span(),
    })
}

fn read_source(ctx: &mut Ctx<'_>, path: &str, v: &Value<'_>) -> Option<SourceDef> {
    let example = "{ type = \"cbr\", rate = \"1mbit\", size = \"1000b\" }";
    let DeValue::Table(_) = v.get_ref() else {
        ctx.wrong_type(path, v, "a source table", example);
        return None;
    };
    let probe = Table::of(path, v)?;
    let type_path = probe.field("type");
    let kind = probe
        .require(ctx, "type", "type = \"cbr\"")
        .and_then(|v| ctx.string(&type_path, v))?;
    let Some(&(kind, keys)) = SOURCE_TYPES.iter().find(|(k, _)| *k == kind.value) else {
        let names: Vec<&str> = SOURCE_TYPES.iter().map(|(k, _)| *k).collect();
        let hint = did_you_mean(kind.value, names.iter().copied());
        ctx.report(
            &kind.span,
            &type_path,
            format!("unknown source type `{}`", kind.value),
            format!("{hint}known types: {}", names.join(", ")),
        );
        return None;
    };
    let mut allowed = vec!["type"];
    allowed.extend_from_slice(keys);
    let t = ctx.table(path, v, &allowed)?;
    let rate = |ctx: &mut Ctx<'_>, key: &str, example: &str| -> Option<Rate> {
        let r = t
            .require(ctx, key, &format!("{key} = {example}"))
            .and_then(|_| t.quantity::<Rate>(ctx, key, "a rate", example))?;
        if r.value == Rate::ZERO {
            ctx.report(
                &r.span,
                &t.field(key),
                format!("{key} is zero"),
                format!("give a positive rate such as {example}"),
            );
            return None;
        }
        Some(r.value)
    };
    let time = |ctx: &mut Ctx<'_>, key: &str, example: &str, zero_ok: bool| -> Option<Duration> {
        let d = t
            .require(ctx, key, &format!("{key} = {example}"))
            .and_then(|_| t.quantity::<Duration>(ctx, key, "a time", example))?;
        if d.value == Duration::ZERO && !zero_ok {
            ctx.report(
                &d.span,
                &t.field(key),
                format!("{key} is zero"),
                format!("give a positive time such as {example}"),
            );
            return None;
        }
        Some(d.value)
    };
    if kind == "trace" {
        let file = t.require(ctx, "file", "file = \"trace.csv\"")?;
        let file = ctx.string(&t.field("file"), file)?;
        return Some(SourceDef::Trace {
            file: Sp {
                value: file.value.to_owned(),
                span: file.span,
            },
        });
    }
    let size = packet_size(ctx, &t);
    let config = match kind {
        "cbr" | "poisson" => {
            let r = rate(ctx, "rate", "\"1mbit\"");
            let (rate, size) = (r?, size.clone()?.value);
            if kind == "cbr" {
                SourceConfig::Cbr { rate, size }
            } else {
                SourceConfig::Poisson { rate, size }
            }
        }
        "periodic-on-off" => {
            let burst = t
                .require(ctx, "burst", "burst = 4")
                .and_then(|_| t.integer(ctx, "burst", 1, u64::from(u32::MAX)));
            let peak = rate(ctx, "peak", "\"10mbit\"");
            let period = time(ctx, "period", "\"20ms\"", false);
            let (burst, peak, period, sz) = (burst?, peak?, period?, size.clone()?);
            let burst_bytes = Bytes(burst.value.saturating_mul(u64::from(sz.value)));
            let burst_time = peak.tx_time(burst_bytes);
            if burst_time > period {
                ctx.report(
                    &burst.span,
                    &t.field("burst"),
                    format!(
                        "a burst of {} packets of {} takes {burst_time} at peak {peak}, longer \
                         than the period {period}",
                        burst.value,
                        Bytes(u64::from(sz.value))
                    ),
                    "send fewer packets per burst, raise peak, or lengthen period",
                );
                return None;
            }
            SourceConfig::PeriodicOnOff {
                burst: burst.value as u32,
                peak,
                period,
                size: sz.value,
            }
        }
        "exp-on-off" | "pareto-on-off" => {
            let peak = rate(ctx, "peak", "\"10mbit\"");
            let mean_on = time(ctx, "mean_on", "\"500ms\"", false);
            let mean_off = time(ctx, "mean_off", "\"500ms\"", true);
            let shape = if kind == "pareto-on-off" {
                let s = t
                    .require(ctx, "shape", "shape = 1.5")
                    .and_then(|v| ctx.number(&t.field("shape"), v));
                match s {
                    Some(s) if s.value > 1.0 => Some(s.value),
                    Some(s) => {
                        ctx.report(
                            &s.span,
                            &t.field("shape"),
                            format!(
                                "shape {} is not above 1 (the mean would be infinite)",
                                s.value
                            ),
                            "give a shape above 1; 1.2 to 1.5 give long-range dependence",
                        );
                        None
                    }
                    None => None,
                }
            } else {
                None
            };
            let (peak, mean_on, mean_off, size) = (peak?, mean_on?, mean_off?, size.clone()?.value);
            match shape {
                Some(shape) => SourceConfig::ParetoOnOff {
                    peak,
                    mean_on,
                    mean_off,
                    shape,
                    size,
                },
                None if kind == "exp-on-off" => SourceConfig::ExpOnOff {
                    peak,
                    mean_on,
                    mean_off,
                    size,
                },
                None => return None,
            }
        }
        "markov2" => read_markov2(ctx, &t, size.clone())?,
        _ => {
            let backlog = t
                .integer(ctx, "backlog", 1, u64::from(u32::MAX))
                .map_or(DEFAULT_GREEDY_BACKLOG, |b| b.value as u32);
            SourceConfig::Greedy {
                size: size.clone()?.value,
                backlog,
            }
        }
    };
    Some(SourceDef::Ready {
        config,
        size: size?,
    })
}

fn read_markov2(
    ctx: &mut Ctx<'_>,
    t: &Table<'_, '_>,
    size: Option<Sp<u32>>,
) -> Option<SourceConfig> {
    let pair = |ctx: &mut Ctx<'_>, key: &str, example: &str| {
        let v = t.require(ctx, key, &format!("{key} = {example}"))?;
        let items = ctx.array(&t.field(key), v, example)?;
        if items.len() != 2 {
            ctx.report(
                &v.span(),
                &t.field(key),
                format!("{key} has {} values", items.len()),
                format!("give one value per state, e.g. {key} = {example}"),
            );
            return None;
        }
        Some([&items[0], &items[1]])
    };
    let rates = pair(ctx, "rates", "[\"1mbit\", \"5mbit\"]").and_then(|items| {
        let a = ctx.quantity::<Rate>(&t.field("rates[0]"), items[0], "a rate", "\"1mbit\"");
        let b = ctx.quantity::<Rate>(&t.field("rates[1]"), items[1], "a rate", "\"5mbit\"");
        let (a, b) = (a?, b?);
        if a.value == Rate::ZERO && b.value == Rate::ZERO {
            ctx.report(
                &a.span,
                &t.field("rates"),
                "both states have a zero rate: the source never sends",
                "give at least one state a positive rate",
            );
            return None;
        }
        Some([a.value, b.value])
    });
    let sojourn = pair(ctx, "mean_sojourn", "[\"1s\", \"100ms\"]").and_then(|items| {
        let mut out = [Duration::ZERO; 2];
        let mut ok = true;
        for (i, item) in items.iter().enumerate() {
            let path = t.field(&format!("mean_sojourn[{i}]"));
            match ctx.quantity::<Duration>(&path, item, "a time", "\"1s\"") {
                Some(d) if d.value > Duration::ZERO => out[i] = d.value,
                Some(d) => {
                    ctx.report(
                        &d.span,
                        &path,
                        "the mean sojourn time is zero",
                        "give a positive time such as \"1s\"",
                    );
                    ok = false;
                }
                None => ok = false,
            }
        }
        ok.then_some(out)
    });
    Some(SourceConfig::Markov2 {
        rates: rates?,
        mean_sojourn: sojourn?,
        size: size?.value,
    })
}

/// The required `size` of a source's packets: positive and at most `u32::MAX` bytes.
fn packet_size(ctx: &mut Ctx<'_>, t: &Table<'_, '_>) -> Option<Sp<u32>> {
    t.require(ctx, "size", "size = \"1000b\"")?;
    let b = t.quantity::<Bytes>(ctx, "size", "a size", "\"1000b\"")?;
    match u32::try_from(b.value.0) {
        Ok(n) if n > 0 => Some(Sp {
            value: n,
            span: b.span,
        }),
        _ => {
            ctx.report(
                &b.span,
                &t.field("size"),
                format!("a packet size of {} is not possible", b.value),
                "give a positive size up to the class's max_packet, e.g. \"1000b\"",
            );
            None
        }
    }
}

fn read_intervals(ctx: &mut Ctx<'_>, path: &str, v: &Value<'_>, on: bool) -> Option<ScheduleDef> {
    let example = "[[\"0s\", \"10s\"], [\"20s\", \"30s\"]]";
    let items = ctx.array(path, v, example)?;
    let mut intervals = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let p = format!("{path}[{i}]");
        let Some(pair) = ctx.array(&p, item, "[\"0s\", \"10s\"]") else {
            continue;
        };
        if pair.len() != 2 {
            ctx.report(
                &item.span(),
                &p,
                format!(
                    "an interval needs a start and an end, found {} values",
                    pair.len()
                ),
                "write [\"START\", \"END\"], e.g. [\"0s\", \"10s\"]",
            );
            continue;
        }
        let start = ctx.quantity::<Duration>(&format!("{p}[0]"), &pair[0], "a time", "\"0s\"");
        let end = ctx.quantity::<Duration>(&format!("{p}[1]"), &pair[1], "a time", "\"10s\"");
        if let (Some(start), Some(end)) = (start, end) {
            intervals.push(Sp {
                value: (start.value, end.value),
                span: item.span(),
            });
        }
    }
    Some(ScheduleDef {
        path: path.to_owned(),
        on,
        span: v.span(),
        intervals,
    })
}
