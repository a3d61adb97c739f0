//! `[[flow]]` tables: routes, sources and schedules.

use linkshare_core::echo::echo;
use linkshare_core::units::{Bytes, Duration, Rate};
use linkshare_sim::config::{OnOffVariations, SourceConfig, Swing};
use linkshare_sim::source::MAX_MEMBERS;
use linkshare_sim::source::population::MAX_PERIOD;
use toml::de::DeValue;

use super::tcp::read_tcp;
use super::{FlowDef, HopDef, ScheduleDef, SourceDef, TransportDef};
use crate::apps;
use crate::problem::did_you_mean;
use crate::reader::{Ctx, Sp, Table, Value};

/// Keys of a flow.
const FLOW_KEYS: &[&str] = &[
    "name",
    "class",
    "route",
    "reverse",
    "transport",
    "tcp",
    "source",
    "on",
    "off",
];

/// Keys of a route hop.
const HOP_KEYS: &[&str] = &["link", "class"];

/// Source types and the keys each accepts (besides `type`).
const SOURCE_TYPES: &[(&str, &[&str])] = &[
    ("cbr", &["rate", "size"]),
    ("poisson", &["rate", "size"]),
    ("pareto", &["rate", "shape", "size"]),
    ("population", &["each", "min", "max", "period"]),
    (
        "periodic-on-off",
        &[
            "burst",
            "peak",
            "period",
            "size",
            "start_offset",
            "burst_mean",
            "new_connection",
        ],
    ),
    ("exp-on-off", &["peak", "mean_on", "mean_off", "size"]),
    ("markov2", &["rates", "mean_sojourn", "size"]),
    (
        "pareto-on-off",
        &["peak", "mean_on", "mean_off", "shape", "size"],
    ),
    ("greedy", &["size", "backlog"]),
    ("trace", &["file"]),
    ("ftp", &["bytes", "size"]),
    ("telnet", &["size", "mean_gap"]),
    ("www", &["load", "lengths", "size"]),
    ("video", &["file", "interval", "fps", "size"]),
];

/// The named distributions of web transfer lengths.
const LENGTH_PRESETS: &[&str] = &["fsc-paper"];

/// Default `backlog` of a greedy source.
const DEFAULT_GREEDY_BACKLOG: u32 = 2;

pub(super) fn read_flow(ctx: &mut Ctx<'_>, path: &str, v: &Value<'_>) -> Option<FlowDef> {
    let t = ctx.table(path, v, FLOW_KEYS)?;
    let name = t
        .require(ctx, "name", "name = \"bulk1\"")
        .and(t.class_name(ctx, "name"));
    let class = t.class_name(ctx, "class");
    let route = t
        .get("route")
        .and_then(|v| read_route(ctx, &t.field("route"), v, "route"));
    let transport = t
        .get("transport")
        .and_then(|v| read_transport(ctx, &t.field("transport"), v));
    // A transport written wrongly was reported; the rest is read as for UDP.
    let udp = t.get("transport").is_none()
        || transport
            .as_ref()
            .is_some_and(|t| t.value == TransportDef::Udp);
    let tcp_flow = transport
        .as_ref()
        .is_some_and(|t| t.value == TransportDef::Tcp);
    let tcp = t.get("tcp").and_then(|v| {
        let def = read_tcp(ctx, &t.field("tcp"), v)?;
        if udp {
            ctx.report(
                &v.span(),
                &t.field("tcp"),
                "TCP parameters are given for a UDP flow",
                "add transport = \"tcp\" to the flow, or remove `tcp`",
            );
        }
        Some(Sp {
            value: def,
            span: v.span(),
        })
    });
    let reverse = t.get("reverse").and_then(|v| {
        if udp {
            ctx.report(
                &v.span(),
                &t.field("reverse"),
                "a UDP flow sends nothing back, so it has no reverse route",
                "remove `reverse`, or add transport = \"tcp\" to the flow",
            );
            return None;
        }
        read_route(ctx, &t.field("reverse"), v, "reverse")
    });
    let source = t
        .require(
            ctx,
            "source",
            "source = { type = \"cbr\", rate = \"1mbit\", size = \"1000b\" }",
        )
        .and_then(|v| read_source(ctx, &t.field("source"), v, tcp_flow));
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
        reverse,
        transport,
        tcp,
        source,
        schedule,
    })
}

/// `transport = "udp"` or `"tcp"`.
fn read_transport(ctx: &mut Ctx<'_>, path: &str, v: &Value<'_>) -> Option<Sp<TransportDef>> {
    let s = ctx.string(path, v)?;
    let value = match s.value {
        "udp" => TransportDef::Udp,
        "tcp" => TransportDef::Tcp,
        other => {
            let hint = did_you_mean(other, ["udp", "tcp"]);
            ctx.report(
                &s.span,
                path,
                format!("unknown transport `{}`", echo(other)),
                format!("{hint}use \"udp\" (open loop, the default) or \"tcp\""),
            );
            return None;
        }
    };
    Some(Sp {
        value,
        span: s.span,
    })
}

/// A list of hops (`key`: `route` or `reverse`, for the messages).
fn read_route(ctx: &mut Ctx<'_>, path: &str, v: &Value<'_>, key: &str) -> Option<Sp<Vec<HopDef>>> {
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
            .and(t.class_name(ctx, "class"));
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
            if key == "route" {
                "the route is empty"
            } else {
                "the reverse route is empty"
            },
            format!("list the hops in order, e.g. {key} = [{{ link = \"l1\", class = \"a\" }}]"),
        );
        return None;
    }
    Some(Sp {
        value: hops,
        span: v.span(),
    })
}

/// A flow's source; `tcp`: the flow is TCP (sizes then mean application writes, and
/// `ftp`, `www` and `video` may leave `size` out).
fn read_source(ctx: &mut Ctx<'_>, path: &str, v: &Value<'_>, tcp: bool) -> Option<SourceDef> {
    let example = "{ type = \"cbr\", rate = \"1mbit\", size = \"1000b\" }";
    let DeValue::Table(_) = v.get_ref() else {
        ctx.wrong_type(path, v, "a source table", example);
        return None;
    };
    let (kind, keys) = source_type(ctx, path, v, tcp)?;
    let mut allowed = vec!["type"];
    allowed.extend_from_slice(keys);
    let t = ctx.table(path, v, &allowed)?;
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
    if kind == "video" {
        return read_video(ctx, &t, tcp);
    }
    if kind == "population" {
        return read_population(ctx, &t, tcp);
    }
    let size = if tcp && matches!(kind, "ftp" | "www") && t.get("size").is_none() {
        None
    } else {
        packet_size(ctx, &t)
    };
    let config = match kind {
        "ftp" => read_ftp(ctx, &t, tcp, size.as_ref())?,
        "telnet" => {
            let mean_gap = required_time(ctx, &t, "mean_gap", "\"100ms\"", false);
            SourceConfig::Telnet {
                size: size.clone()?.value,
                mean_gap: mean_gap?,
            }
        }
        "www" => {
            let load = required_rate(ctx, &t, "load", "\"9.5mbit\"");
            let lengths = t
                .require(ctx, "lengths", "lengths = \"fsc-paper\"")
                .and_then(|v| read_lengths(ctx, &t.field("lengths"), v));
            SourceConfig::Www {
                load: load?,
                lengths: lengths?,
                size: written_size(tcp, size.as_ref())?,
            }
        }
        "pareto" => {
            let r = required_rate(ctx, &t, "rate", "\"1mbit\"");
            let shape = pareto_shape(ctx, &t);
            SourceConfig::Pareto {
                rate: r?,
                shape: shape?,
                size: size.clone()?.value,
            }
        }
        "cbr" | "poisson" => {
            let r = required_rate(ctx, &t, "rate", "\"1mbit\"");
            let (rate, size) = (r?, size.clone()?.value);
            if kind == "cbr" {
                SourceConfig::Cbr { rate, size }
            } else {
                SourceConfig::Poisson { rate, size }
            }
        }
        "periodic-on-off" => read_periodic_on_off(ctx, &t, size.clone())?,
        "exp-on-off" | "pareto-on-off" => read_on_off(ctx, &t, kind, size.clone())?,
        "markov2" => read_markov2(ctx, &t, size.clone())?,
        "greedy" => {
            let backlog = t
                .integer(ctx, "backlog", 1, u64::from(u32::MAX))
                .map_or(DEFAULT_GREEDY_BACKLOG, |b| b.value as u32);
            SourceConfig::Greedy {
                size: size.clone()?.value,
                backlog,
            }
        }
        _ => return None,
    };
    Some(SourceDef::Ready { config, size })
}

/// The `type` of the source table `v` at `path`, with the keys it accepts; reports an
/// unknown type, and a greedy source on a TCP flow.
fn source_type(
    ctx: &mut Ctx<'_>,
    path: &str,
    v: &Value<'_>,
    tcp: bool,
) -> Option<(&'static str, &'static [&'static str])> {
    let probe = Table::of(path, v)?;
    let type_path = probe.field("type");
    let kind = probe
        .require(ctx, "type", "type = \"cbr\"")
        .and_then(|v| ctx.string(&type_path, v))?;
    let Some(&(name, keys)) = SOURCE_TYPES.iter().find(|(k, _)| *k == kind.value) else {
        let names: Vec<&str> = SOURCE_TYPES.iter().map(|(k, _)| *k).collect();
        let hint = did_you_mean(kind.value, names.iter().copied());
        ctx.report(
            &kind.span,
            &type_path,
            format!("unknown source type `{}`", echo(kind.value)),
            format!("{hint}known types: {}", names.join(", ")),
        );
        return None;
    };
    if name == "greedy" && tcp {
        ctx.report(
            &kind.span,
            &type_path,
            "a greedy source keeps packets queued at its first hop, which a TCP connection \
             does not do",
            "for a greedy TCP flow write source = { type = \"ftp\" } (an endless transfer)",
        );
        return None;
    }
    Some((name, keys))
}

/// The positive rate `key` of `t`, reporting its absence or zero (`example` shows one).
fn required_rate(ctx: &mut Ctx<'_>, t: &Table<'_, '_>, key: &str, example: &str) -> Option<Rate> {
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
}

/// The time `key` of `t`, positive unless `zero_ok`, reporting its absence or zero.
fn required_time(
    ctx: &mut Ctx<'_>,
    t: &Table<'_, '_>,
    key: &str,
    example: &str,
    zero_ok: bool,
) -> Option<Duration> {
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
}

/// An `ftp` source: `bytes` (positive; absent for an endless transfer) and `size`.
fn read_ftp(
    ctx: &mut Ctx<'_>,
    t: &Table<'_, '_>,
    tcp: bool,
    size: Option<&Sp<u32>>,
) -> Option<SourceConfig> {
    let bytes = match t.quantity::<Bytes>(ctx, "bytes", "a size", "\"1mb\"") {
        Some(b) if b.value == Bytes::ZERO => {
            ctx.report(
                &b.span,
                &t.field("bytes"),
                "a transfer of zero bytes sends nothing",
                "give a positive size such as \"1mb\", or leave `bytes` out for an endless \
                 transfer",
            );
            return None;
        }
        Some(b) => Some(b.value.0),
        None if t.get("bytes").is_some() => return None,
        None => None,
    };
    Some(SourceConfig::Ftp {
        bytes,
        size: written_size(tcp, size)?,
    })
}

/// A `periodic-on-off` source: `burst` packets at `peak` every `period`, the burst
/// fitting in the period, and the variations `start_offset`, `burst_mean` and
/// `new_connection`.
fn read_periodic_on_off(
    ctx: &mut Ctx<'_>,
    t: &Table<'_, '_>,
    size: Option<Sp<u32>>,
) -> Option<SourceConfig> {
    let burst = t
        .require(ctx, "burst", "burst = 4")
        .and_then(|_| t.integer(ctx, "burst", 1, u64::from(u32::MAX)));
    let peak = required_rate(ctx, t, "peak", "\"10mbit\"");
    let period = required_time(ctx, t, "period", "\"20ms\"", false);
    let (burst, peak, period, sz) = (burst?, peak?, period?, size?);
    let burst_bytes = Bytes(burst.value.saturating_mul(u64::from(sz.value)));
    let burst_time = peak.tx_time(burst_bytes);
    if burst_time > period {
        ctx.report(
            &burst.span,
            &t.field("burst"),
            format!(
                "a burst of {} packets of {} takes {burst_time} at peak {peak}, longer than \
                 the period {period}",
                burst.value,
                Bytes(u64::from(sz.value))
            ),
            "send fewer packets per burst, raise peak, or lengthen period",
        );
        return None;
    }
    let start_offset_mean = t
        .quantity::<Duration>(ctx, "start_offset", "a time", "\"500ms\"")
        .map(|d| d.value);
    let geometric_mean = t
        .integer(ctx, "burst_mean", 1, burst.value)
        .map(|m| m.value as u32);
    let new_connection = t
        .get("new_connection")
        .and_then(|v| ctx.boolean(&t.field("new_connection"), v))
        .is_some_and(|b| b.value);
    Some(SourceConfig::PeriodicOnOff {
        burst: burst.value as u32,
        peak,
        period,
        size: sz.value,
        variations: OnOffVariations {
            start_offset_mean: start_offset_mean.filter(|d| *d > Duration::ZERO),
            geometric_mean,
            new_connection,
        },
    })
}

/// An `exp-on-off` or `pareto-on-off` source (`kind`): `peak`, `mean_on`, `mean_off`,
/// and for Pareto a `shape` above 1.
fn read_on_off(
    ctx: &mut Ctx<'_>,
    t: &Table<'_, '_>,
    kind: &str,
    size: Option<Sp<u32>>,
) -> Option<SourceConfig> {
    let peak = required_rate(ctx, t, "peak", "\"10mbit\"");
    let mean_on = required_time(ctx, t, "mean_on", "\"500ms\"", false);
    let mean_off = required_time(ctx, t, "mean_off", "\"500ms\"", true);
    let shape = if kind == "pareto-on-off" {
        Some(pareto_shape(ctx, t))
    } else {
        None
    };
    let (peak, mean_on, mean_off, size) = (peak?, mean_on?, mean_off?, size?.value);
    Some(match shape {
        Some(shape) => SourceConfig::ParetoOnOff {
            peak,
            mean_on,
            mean_off,
            shape: shape?,
            size,
        },
        None => SourceConfig::ExpOnOff {
            peak,
            mean_on,
            mean_off,
            size,
        },
    })
}

/// A `population` source: `each` (a source making its traffic from its own timers),
/// `min` and `max` members on, and the `period` of their sine (needed when they
/// differ).
fn read_population(ctx: &mut Ctx<'_>, t: &Table<'_, '_>, tcp: bool) -> Option<SourceDef> {
    let each = t
        .require(
            ctx,
            "each",
            "each = { type = \"pareto\", rate = \"2mbit\", shape = 1.9, size = \"500b\" }",
        )
        .and_then(|v| {
            let path = t.field("each");
            match read_source(ctx, &path, v, tcp)? {
                SourceDef::Ready { config, size }
                    if !matches!(
                        config,
                        SourceConfig::Greedy { .. }
                            | SourceConfig::Ftp { .. }
                            | SourceConfig::Population { .. }
                    ) =>
                {
                    Some((config, size))
                }
                _ => {
                    ctx.report(
                        &v.span(),
                        &path,
                        "a member of a population must make its traffic from its own \
                         timers, not react to departures or replay a file",
                        "use a cbr, poisson, pareto or ON-OFF source as `each`",
                    );
                    None
                }
            }
        });
    let max = t
        .require(ctx, "max", "max = 550")
        .and_then(|_| t.integer(ctx, "max", 1, u64::from(MAX_MEMBERS)));
    let min = t
        .require(ctx, "min", "min = 300")
        .and_then(|_| t.integer(ctx, "min", 0, u64::from(MAX_MEMBERS)));
    let (min, max) = (min?, max?);
    if min.value > max.value {
        ctx.report(
            &min.span,
            &t.field("min"),
            format!("min {} is above max {}", min.value, max.value),
            "give min <= max (equal for a constant number of members)",
        );
        return None;
    }
    let period = match t.get("period") {
        Some(_) => {
            let p = t.quantity::<Duration>(ctx, "period", "a time", "\"10s\"")?;
            if p.value == Duration::ZERO || p.value > MAX_PERIOD {
                ctx.report(
                    &p.span,
                    &t.field("period"),
                    format!("a period of {} is not possible", p.value),
                    format!("give a positive period of at most {MAX_PERIOD}"),
                );
                return None;
            }
            p.value
        }
        None if min.value == max.value => Duration::ZERO,
        None => {
            t.require(ctx, "period", "period = \"10s\"");
            return None;
        }
    };
    let (each, size) = each?;
    Some(SourceDef::Ready {
        config: SourceConfig::Population {
            each: std::sync::Arc::new(each),
            swing: Swing {
                min: min.value as u32,
                max: max.value as u32,
                period,
            },
        },
        size,
    })
}

/// A Pareto source's `shape`: a number above 1 (below, the mean is infinite).
fn pareto_shape(ctx: &mut Ctx<'_>, t: &Table<'_, '_>) -> Option<f64> {
    let s = t
        .require(ctx, "shape", "shape = 1.5")
        .and_then(|v| ctx.number(&t.field("shape"), v))?;
    if s.value > 1.0 {
        return Some(s.value);
    }
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

/// The packet size of an `ftp`, `www` or `video` source: as written, or 0 for a TCP flow
/// that left it out (the build puts the flow's segment size there); `None` when a UDP
/// flow's size is missing or wrong (reported).
fn written_size(tcp: bool, size: Option<&Sp<u32>>) -> Option<u32> {
    match size {
        Some(s) => Some(s.value),
        None if tcp => Some(0),
        None => None,
    }
}

/// A `video` source: `file`, `interval` or `fps`, and `size`.
fn read_video(ctx: &mut Ctx<'_>, t: &Table<'_, '_>, tcp: bool) -> Option<SourceDef> {
    let file = t
        .require(ctx, "file", "file = \"traces/mpeg1-synthetic.csv\"")
        .and_then(|v| ctx.string(&t.field("file"), v));
    let interval = match (t.get("interval"), t.get("fps")) {
        (Some(_), Some(fps)) => {
            ctx.report(
                &fps.span(),
                &t.field("fps"),
                "both `interval` and `fps` are given",
                "give the time between frames with `interval`, or the frame rate with `fps`, \
                 not both",
            );
            None
        }
        (Some(_), None) => {
            let d = t.quantity::<Duration>(ctx, "interval", "a time", "\"33333333ns\"")?;
            if d.value == Duration::ZERO {
                ctx.report(
                    &d.span,
                    &t.field("interval"),
                    "the frame interval is zero",
                    "give a positive time such as \"33333333ns\" (30 frames/s)",
                );
                return None;
            }
            Some(d.value)
        }
        (None, Some(v)) => {
            let fps = ctx.number(&t.field("fps"), v)?;
            // 1 ns at the finest: at most 1e9 frames per second.
            if !(fps.value > 0.0 && fps.value <= 1e9) {
                ctx.report(
                    &fps.span,
                    &t.field("fps"),
                    format!("{} frames per second is not possible", fps.value),
                    "give a positive frame rate such as 30 (at most 1e9)",
                );
                return None;
            }
            Some(Duration((1e9 / fps.value).round() as u64))
        }
        (None, None) => {
            ctx.report(
                &t.span,
                &t.field("interval"),
                format!("`{}` has neither `interval` nor `fps`", t.path),
                "add fps = 30 or interval = \"33333333ns\"",
            );
            None
        }
    };
    let size = if tcp && t.get("size").is_none() {
        None
    } else {
        Some(packet_size(ctx, t)?)
    };
    let file = file?;
    Some(SourceDef::Video {
        file: Sp {
            value: file.value.to_owned(),
            span: file.span,
        },
        interval: interval?,
        size,
    })
}

/// Web transfer lengths: a preset's name or an array of byte counts (integers or size
/// strings), each positive.
fn read_lengths(ctx: &mut Ctx<'_>, path: &str, v: &Value<'_>) -> Option<std::sync::Arc<[u64]>> {
    let example = "\"fsc-paper\" or [1000, 20000]";
    match v.get_ref() {
        DeValue::String(name) => {
            if name.as_ref() == "fsc-paper" {
                return Some(apps::FSC_PAPER_GROUPS.to_vec().into());
            }
            let hint = did_you_mean(name, LENGTH_PRESETS.iter().copied());
            ctx.report(
                &v.span(),
                path,
                format!("unknown length distribution `{}`", echo(name)),
                format!(
                    "{hint}use \"fsc-paper\" (the FSC paper's 10 groups) or an array of \
                     transfer lengths in bytes, e.g. [1000, 20000]"
                ),
            );
            None
        }
        DeValue::Array(items) => {
            if items.is_empty() {
                ctx.report(
                    &v.span(),
                    path,
                    "the list of transfer lengths is empty",
                    format!("give at least one length, e.g. lengths = {example}"),
                );
                return None;
            }
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let p = format!("{path}[{i}]");
                let n = match item.get_ref() {
                    DeValue::String(_) => ctx
                        .quantity::<Bytes>(&p, item, "a size", "\"13666b\"")
                        .map(|b| Sp {
                            value: b.value.0,
                            span: b.span,
                        }),
                    _ => ctx.integer(&p, item, 1, u64::MAX),
                };
                match n {
                    Some(n) if n.value > 0 => out.push(n.value),
                    Some(n) => ctx.report(
                        &n.span,
                        &p,
                        "a transfer of zero bytes sends nothing",
                        "give positive lengths in bytes",
                    ),
                    None => {}
                }
            }
            (out.len() == items.len()).then(|| out.into())
        }
        _ => {
            ctx.wrong_type(
                path,
                v,
                "a distribution name or an array of lengths",
                example,
            );
            None
        }
    }
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
    super::size_u32(
        ctx,
        t,
        "size",
        "\"1000b\"",
        "packet size",
        "give a positive size up to the class's max_packet, e.g. \"1000b\"",
    )
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
