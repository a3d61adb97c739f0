//! `[shaper]` and `[[filter]]`: what `linkshare shape` needs beyond the link and its
//! classes. Read here (types, units, ranges); class names are resolved in
//! [`crate::resolve::shaper`].

use std::net::SocketAddr;

use linkshare_classify::frame::{ETHERTYPE_ARP, ETHERTYPE_IPV4, ETHERTYPE_IPV6, proto};
use linkshare_classify::{DscpSet, Match, PortRange, Prefix};
use linkshare_core::units::Duration;
use toml::de::DeValue;

use crate::problem::did_you_mean;
use crate::reader::{Ctx, Sp, Span, Table, Value};

/// Keys of `[shaper]`.
const SHAPER_KEYS: &[&str] = &[
    "in", "out", "default", "pool", "pacing", "spin", "catch_up", "metrics", "realtime", "reverse",
];

/// Keys of `[shaper]` that only the forward file may set: the one datapath loop that
/// runs both trees waits, serves metrics and loads the reverse tree as it says.
pub(crate) const FORWARD_ONLY_KEYS: &[&str] = &[
    "pacing", "spin", "catch_up", "metrics", "realtime", "reverse",
];

/// Keys of a `[[filter]]`.
const FILTER_KEYS: &[&str] = &[
    "class",
    "ether_type",
    "vlan",
    "src",
    "dst",
    "protocol",
    "sport",
    "dport",
    "dscp",
];

/// Default `[shaper] pool`: frames of the preallocated pool.
pub(crate) const DEFAULT_POOL: u32 = 8192;
/// The largest `[shaper] pool` accepted (frames of 2 KiB: 2 GiB).
const MAX_POOL: u64 = 1 << 20;
/// Default `[shaper] spin`.
pub(crate) const DEFAULT_SPIN: Duration = Duration::from_micros(50);
/// Default `[shaper] catch_up`: link time lost to a late wake-up that the shaper makes
/// up. Stalls of a millisecond or two happen to a thread on a shared machine, even a
/// real-time one (a hypervisor taking the virtual CPU); on the 2-core virtual machine of
/// `BENCHMARKS.md` ("Shaper"), with 2 ms stalls taking 40 % of each CPU, 2 ms kept a
/// DRR link full (49.9 of 50 Mbit/s) where none left 8–15 % of it unused.
pub(crate) const DEFAULT_CATCH_UP: Duration = Duration::from_millis(2);
/// The largest `[shaper] catch_up` accepted.
const MAX_CATCH_UP: Duration = Duration::from_millis(100);

/// How the shaper waits for a packet's departure time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacingMode {
    /// Sleep on an absolute monotonic deadline until `spin` before it, then spin; after
    /// the last frame, keep polling for 10 µs (or `spin`, if shorter) before sleeping.
    SleepSpin,
    /// Never sleep: poll the rings and the clock continuously (lowest pacing error, one
    /// core busy all the time).
    Spin,
    /// Sleep until the deadline (the kernel's timer slack is the pacing error).
    Sleep,
}

impl PacingMode {
    /// Every mode, by its name in the file.
    pub const ALL: [(&'static str, PacingMode); 3] = [
        ("sleep-spin", PacingMode::SleepSpin),
        ("spin", PacingMode::Spin),
        ("sleep", PacingMode::Sleep),
    ];

    /// Its name in the file.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, m)| *m == self)
            .map_or("?", |(n, _)| n)
    }
}

/// `[shaper]`, read. `in` and `out` may be left out of a scenario that is only
/// simulated (as `linkshare tc import` writes one without `--in`); `linkshare shape`
/// requires both.
#[derive(Debug)]
pub(crate) struct ShaperDef {
    pub(crate) span: Span,
    pub(crate) input: Option<Sp<String>>,
    pub(crate) output: Option<Sp<String>>,
    pub(crate) default: Option<Sp<String>>,
    pub(crate) pool: u32,
    pub(crate) pacing: PacingMode,
    pub(crate) spin: Duration,
    pub(crate) catch_up: Duration,
    pub(crate) metrics: Option<SocketAddr>,
    pub(crate) realtime: bool,
    /// `reverse`: the file of the reverse tree, as written (relative to this file).
    pub(crate) reverse: Option<Sp<String>>,
    /// Where the keys of [`FORWARD_ONLY_KEYS`] were written, if they were.
    pub(crate) forward_only: Vec<(&'static str, Span)>,
}

/// A `[[filter]]`, read.
#[derive(Debug)]
pub(crate) struct FilterDef {
    pub(crate) path: String,
    pub(crate) class: Option<Sp<String>>,
    pub(crate) matches: Match,
}

/// Reads `[shaper]`.
pub(crate) fn read_shaper(ctx: &mut Ctx<'_>, v: &Value<'_>) -> Option<ShaperDef> {
    let t = ctx.table("shaper", v, SHAPER_KEYS)?;
    let input = t.get("in").and_then(|v| interface(ctx, &t.field("in"), v));
    let output = t
        .get("out")
        .and_then(|v| interface(ctx, &t.field("out"), v));
    if let (Some(i), Some(o)) = (&input, &output)
        && i.value == o.value
    {
        ctx.report(
            &o.span,
            "shaper.out",
            format!("`in` and `out` are the same interface `{}`", o.value),
            "the shaper bridges two interfaces: name the one traffic arrives on as `in` and the \
             one it leaves by as `out`",
        );
    }
    let default = t.class_name(ctx, "default");
    let pool = t
        .integer(ctx, "pool", 64, MAX_POOL)
        .map_or(DEFAULT_POOL, |p| p.value as u32);
    let pacing = match t.get("pacing") {
        None => PacingMode::SleepSpin,
        Some(v) => {
            let s = ctx.string("shaper.pacing", v)?;
            match PacingMode::ALL.iter().find(|(n, _)| *n == s.value) {
                Some((_, m)) => *m,
                None => {
                    let names = PacingMode::ALL.map(|(n, _)| n);
                    let hint = did_you_mean(s.value, names);
                    ctx.report(
                        &s.span,
                        "shaper.pacing",
                        format!("unknown pacing mode `{}`", s.value),
                        format!("{hint}use one of: {}", names.join(", ")),
                    );
                    PacingMode::SleepSpin
                }
            }
        }
    };
    let spin = t
        .quantity::<Duration>(ctx, "spin", "a time", "\"50us\"")
        .map_or(DEFAULT_SPIN, |d| d.value);
    if spin > Duration::from_millis(100) {
        ctx.report(
            &t.get("spin").map_or(t.span.clone(), |v| v.span()),
            "shaper.spin",
            format!("spinning {spin} before every deadline would keep a core busy"),
            "give at most \"100ms\" (the default, \"50us\", covers the kernel's timer slack)",
        );
    }
    let catch_up = t
        .quantity::<Duration>(ctx, "catch_up", "a time", "\"2ms\"")
        .map_or(DEFAULT_CATCH_UP, |d| d.value);
    if catch_up > MAX_CATCH_UP {
        ctx.report(
            &t.get("catch_up").map_or(t.span.clone(), |v| v.span()),
            "shaper.catch_up",
            format!("catching up {catch_up} would send that much of the link at once"),
            "give at most \"100ms\" (the default, \"2ms\", covers a stalled thread; \"0s\" \
             starts every frame when it leaves)",
        );
    }
    let metrics = t.get("metrics").and_then(|v| {
        let s = ctx.string("shaper.metrics", v)?;
        match s.value.parse::<SocketAddr>() {
            Ok(a) => Some(a),
            Err(_) => {
                ctx.report(
                    &s.span,
                    "shaper.metrics",
                    format!("`{}` is not an address with a port", s.value),
                    "write an IP address and port such as \"127.0.0.1:9100\" or \"[::1]:9100\"",
                );
                None
            }
        }
    });
    let realtime = t
        .get("realtime")
        .and_then(|v| ctx.boolean("shaper.realtime", v))
        .is_some_and(|b| b.value);
    let reverse = t.get("reverse").and_then(|v| {
        let s = ctx.string("shaper.reverse", v)?;
        if s.value.is_empty() {
            ctx.report(
                &s.span,
                "shaper.reverse",
                "`reverse` names no file",
                "name the reverse tree's file, e.g. reverse = \"download.toml\" (relative to \
                 this file), or remove `reverse` to pass frames back unshaped",
            );
            return None;
        }
        Some(Sp {
            value: s.value.to_owned(),
            span: s.span,
        })
    });
    let forward_only = FORWARD_ONLY_KEYS
        .iter()
        .filter_map(|&k| t.key_span(k).map(|span| (k, span)))
        .collect();
    Some(ShaperDef {
        realtime,
        reverse,
        forward_only,
        span: t.span.clone(),
        input,
        output,
        default,
        pool,
        pacing,
        spin,
        catch_up,
        metrics,
    })
}

/// A network interface name, as Linux accepts them (1 to 15 bytes, no `/`, no space or
/// `:`, not `.` or `..`).
fn interface(ctx: &mut Ctx<'_>, path: &str, v: &Value<'_>) -> Option<Sp<String>> {
    let s = ctx.string(path, v)?;
    let ok = !s.value.is_empty()
        && s.value.len() <= 15
        && s.value != "."
        && s.value != ".."
        && s.value
            .bytes()
            .all(|b| b.is_ascii_graphic() && b != b'/' && b != b':');
    if !ok {
        ctx.report(
            &s.span,
            path,
            format!("{:?} is not a network interface name", s.value),
            "give the name `ip link` shows: 1 to 15 characters, no `/`, `:` or spaces",
        );
        return None;
    }
    Some(Sp {
        value: s.value.to_owned(),
        span: s.span,
    })
}

/// Reads `[[filter]]` number `i`.
pub(crate) fn read_filter(ctx: &mut Ctx<'_>, i: usize, v: &Value<'_>) -> Option<FilterDef> {
    let path = format!("filter[{i}]");
    let t = ctx.table(&path, v, FILTER_KEYS)?;
    let class = t
        .require(ctx, "class", "class = \"voice\"")
        .and(t.class_name(ctx, "class"));
    let matches = Match {
        ether_type: t.get("ether_type").and_then(|v| ether_type(ctx, &t, v)),
        vlan: t.integer(ctx, "vlan", 0, 4095).map(|v| v.value as u16),
        src: t.get("src").and_then(|v| prefix(ctx, &t.field("src"), v)),
        dst: t.get("dst").and_then(|v| prefix(ctx, &t.field("dst"), v)),
        protocol: t.get("protocol").and_then(|v| protocol(ctx, &t, v)),
        sport: t
            .get("sport")
            .and_then(|v| ports(ctx, &t.field("sport"), v)),
        dport: t
            .get("dport")
            .and_then(|v| ports(ctx, &t.field("dport"), v)),
        dscp: t.get("dscp").and_then(|v| dscp(ctx, &t.field("dscp"), v)),
    };
    Some(FilterDef {
        path,
        class,
        matches,
    })
}

/// Named EtherTypes.
const ETHER_TYPES: [(&str, u16); 3] = [
    ("ipv4", ETHERTYPE_IPV4),
    ("ipv6", ETHERTYPE_IPV6),
    ("arp", ETHERTYPE_ARP),
];

fn ether_type(ctx: &mut Ctx<'_>, t: &Table<'_, '_>, v: &Value<'_>) -> Option<u16> {
    let path = t.field("ether_type");
    if let DeValue::Integer(_) = v.get_ref() {
        return ctx
            .integer(&path, v, 0x0600, 0xffff)
            .map(|n| n.value as u16);
    }
    let s = ctx.string(&path, v)?;
    match ETHER_TYPES.iter().find(|(n, _)| *n == s.value) {
        Some((_, et)) => Some(*et),
        None => {
            let hint = did_you_mean(s.value, ETHER_TYPES.map(|(n, _)| n));
            ctx.report(
                &s.span,
                &path,
                format!("unknown EtherType `{}`", s.value),
                format!("{hint}write \"ipv4\", \"ipv6\", \"arp\" or a number such as 0x88cc"),
            );
            None
        }
    }
}

/// Named protocols.
const PROTOCOLS: [(&str, u8); 6] = [
    ("tcp", proto::TCP),
    ("udp", proto::UDP),
    ("icmp", proto::ICMP),
    ("icmpv6", proto::ICMPV6),
    ("sctp", proto::SCTP),
    ("udplite", proto::UDPLITE),
];

fn protocol(ctx: &mut Ctx<'_>, t: &Table<'_, '_>, v: &Value<'_>) -> Option<u8> {
    let path = t.field("protocol");
    if let DeValue::Integer(_) = v.get_ref() {
        return ctx.integer(&path, v, 0, 255).map(|n| n.value as u8);
    }
    let s = ctx.string(&path, v)?;
    match PROTOCOLS.iter().find(|(n, _)| *n == s.value) {
        Some((_, p)) => Some(*p),
        None => {
            let hint = did_you_mean(s.value, PROTOCOLS.map(|(n, _)| n));
            ctx.report(
                &s.span,
                &path,
                format!("unknown protocol `{}`", s.value),
                format!(
                    "{hint}write one of {} or a protocol number from 0 to 255",
                    PROTOCOLS.map(|(n, _)| n).join(", ")
                ),
            );
            None
        }
    }
}

fn prefix(ctx: &mut Ctx<'_>, path: &str, v: &Value<'_>) -> Option<Prefix> {
    let s = ctx.string(path, v)?;
    match s.value.parse::<Prefix>() {
        Ok(p) => Some(p),
        Err(e) => {
            ctx.report(&s.span, path, e.to_string(), "");
            None
        }
    }
}

/// A port (integer) or a range (`"1000-2000"`).
fn ports(ctx: &mut Ctx<'_>, path: &str, v: &Value<'_>) -> Option<PortRange> {
    if let DeValue::Integer(_) = v.get_ref() {
        let p = ctx.integer(path, v, 0, 65535)?.value as u16;
        return Some(PortRange { lo: p, hi: p });
    }
    let DeValue::String(s) = v.get_ref() else {
        ctx.wrong_type(path, v, "a port or a port range", "5001 or \"5000-5010\"");
        return None;
    };
    match s.parse::<PortRange>() {
        Ok(r) => Some(r),
        Err(e) => {
            ctx.report(&v.span(), path, e.to_string(), "");
            None
        }
    }
}

/// A DSCP (integer 0 to 63) or an array of them.
fn dscp(ctx: &mut Ctx<'_>, path: &str, v: &Value<'_>) -> Option<DscpSet> {
    let one = |ctx: &mut Ctx<'_>, v: &Value<'_>| ctx.integer(path, v, 0, 63).map(|n| n.value);
    match v.get_ref() {
        DeValue::Array(items) if !items.is_empty() => {
            let mut set = 0u64;
            for item in items {
                set |= 1 << one(ctx, item)?;
            }
            Some(DscpSet(set))
        }
        DeValue::Integer(_) => one(ctx, v).map(|d| DscpSet(1 << d)),
        _ => {
            ctx.wrong_type(
                path,
                v,
                "a DSCP from 0 to 63 or a non-empty array of them",
                "46 or [46, 34]",
            );
            None
        }
    }
}
