//! The simulated reproductions of FSC's behaviour: SCED's punishment against FSC's
//! fairness (H-FSC paper Fig. 3, FSC paper Figs. 3, 4) and the departures of a burst
//! under FSC for best effort (FSC paper Fig. 5).

use std::fmt::Write as _;
use std::io::Write;

use linkshare_core::curve::{RuntimeCurve, ServiceCurve};
use linkshare_core::sched::SchedulerKind;
use linkshare_core::units::{Bytes, Duration, Instant, Rate};
use linkshare_sim::config::{FlowConfig, SourceConfig};
use linkshare_sim::result::DelayRecord;

use crate::experiment::{
    Variant, VariantRuns, footer, header, print_missing, print_variant, run_variant, schedulers,
    variant_dir,
};
use crate::hfsc::{class_id, ms, packet_records};
use crate::verdict::{self, Check};
use crate::{Options, ReproError, stdout_failure};
use linkshare_report::svg::{Dash, LineChart, Series};
use linkshare_report::table::TextTable;

/// The schedulers `sced-vs-fsc` compares: the punishing ones, then the fair ones.
const SCED_VS_FSC_SCHEDULERS: [&str; 4] = ["sced", "vc", "fsc", "hfsc"];

/// The scenario of `sced-vs-fsc`.
pub const SCED_VS_FSC: Variant = Variant {
    name: None,
    file: "sced-vs-fsc.toml",
    toml: include_str!("../../../scenarios/sced-vs-fsc.toml"),
};

/// The papers' TCP sessions of `sced-vs-fsc`.
pub const SCED_VS_FSC_TCP: Variant = Variant {
    name: Some("tcp"),
    file: "sced-vs-fsc-tcp.toml",
    toml: include_str!("../../../scenarios/sced-vs-fsc-tcp.toml"),
};

/// The variants of `fsc-burst`, one per preferred burst size (packets).
pub const BURST: [Variant; 5] = [
    Variant {
        name: Some("pbs0"),
        file: "fsc-burst-pbs0.toml",
        toml: include_str!("../../../scenarios/fsc-burst-pbs0.toml"),
    },
    Variant {
        name: Some("pbs4"),
        file: "fsc-burst-pbs4.toml",
        toml: include_str!("../../../scenarios/fsc-burst-pbs4.toml"),
    },
    Variant {
        name: Some("pbs8"),
        file: "fsc-burst-pbs8.toml",
        toml: include_str!("../../../scenarios/fsc-burst-pbs8.toml"),
    },
    Variant {
        name: Some("pbs16"),
        file: "fsc-burst-pbs16.toml",
        toml: include_str!("../../../scenarios/fsc-burst-pbs16.toml"),
    },
    Variant {
        name: Some("pbs32"),
        file: "fsc-burst-pbs32.toml",
        toml: include_str!("../../../scenarios/fsc-burst-pbs32.toml"),
    },
];

/// The flow (and class) that starts first in `sced-vs-fsc`, and the one that joins it.
const FIRST: &str = "f1";
const SECOND: &str = "f2";

/// The flow named `name`.
pub(crate) fn flow<'a>(v: &'a VariantRuns, name: &str) -> Result<&'a FlowConfig, ReproError> {
    v.scenario
        .config
        .flows
        .iter()
        .find(|f| f.name == name)
        .ok_or_else(|| ReproError::Internal(format!("{} has no flow `{name}`", v.variant.file)))
}

/// The longest time without a departure of `class` from `from` on: the gaps between
/// consecutive departures, counting from the last one before `from` (or `from` itself
/// if there is none). `(start of the gap, its length)`.
pub(crate) fn longest_gap(
    records: &[DelayRecord],
    class: linkshare_core::hierarchy::ClassId,
    from: Instant,
) -> (Instant, Duration) {
    let mut prev = records
        .iter()
        .filter(|r| r.class == class && r.departure < from)
        .map(|r| r.departure)
        .next_back()
        .unwrap_or(from);
    let mut longest = (prev, Duration::ZERO);
    for r in records
        .iter()
        .filter(|r| r.class == class && r.departure >= from)
    {
        let gap = r.departure.since(prev);
        if gap > longest.1 {
            longest = (prev, gap);
        }
        prev = r.departure;
    }
    longest
}

/// The fluid starvation of the first flow under a deadline scheduler, the first flow
/// with curve `first` from 0, the second with curve `second` from `start`: the first
/// flow received `w1` bytes by `start`, when the second joins and is served alone at
/// the link rate `c` until its deadlines reach the first flow's next one,
/// `S1^{-1}(w1)`; that takes `S2(S1^{-1}(w1) - start) · 8 / c`.
pub(crate) fn predicted_starvation(
    first: &ServiceCurve,
    second: &ServiceCurve,
    w1: u64,
    start: Instant,
    c: Rate,
) -> Duration {
    let deadline = RuntimeCurve::new(first, 0, 0).y2x(w1);
    let catch_up = RuntimeCurve::new(second, 0, 0).x2y(deadline.saturating_sub(start.as_nanos()));
    c.tx_time(Bytes(catch_up))
}

/// `sced-vs-fsc`: the greedy variant (labelled, its outputs in `DIR/`), then the
/// papers' TCP sessions (`DIR/tcp/`).
pub fn sced_vs_fsc(opts: &Options<'_>, out: &mut dyn Write) -> Result<Vec<Check>, ReproError> {
    let (kinds, missing) = schedulers(&SCED_VS_FSC_SCHEDULERS, opts)?;
    header(
        out,
        &[
            "sced-vs-fsc: H-FSC paper Fig. 3, FSC paper Figs. 3 and 4: two flows on 10 Mbit/s, \
             f2 starting 2 s after f1, both with the same concave curve (m1 = 4 m2, knee at \
             6000 B).",
            "Reconstructed: m1 = 5 Mbit/s, m2 = 1.25 Mbit/s (2 m1 = C: admissible), d = 9.6 ms; \
             Virtual Clock gets the linear m2. Two variants: greedy sources of 1000 B packets \
             (ours, not blurred by TCP's control loop), then the papers' TCP sessions \
             (sced-vs-fsc-tcp.toml: the FSC paper's ns-2 TCP Reno, window 20, no latency).",
            "Paper: under SCED f1 gets no service for about 2 s after f2 starts; under FSC they \
             share at once (the same holds for Virtual Clock and H-FSC respectively).",
            "",
            "Variant 1 (ours): greedy sources",
        ],
    )?;
    print_missing(out, &missing)?;
    let dir = variant_dir(opts, &SCED_VS_FSC);
    let greedy = run_variant(SCED_VS_FSC, &kinds, opts, &dir)?;
    print_variant(out, &greedy)?;
    let mut checks = starvation(out, &greedy, "greedy")?;
    writeln!(out, "\nVariant 2 (the papers'): TCP Reno sessions").map_err(stdout_failure)?;
    let tcp = run_variant(
        SCED_VS_FSC_TCP,
        &kinds,
        opts,
        &variant_dir(opts, &SCED_VS_FSC_TCP),
    )?;
    print_variant(out, &tcp)?;
    checks.extend(starvation(out, &tcp, "tcp")?);
    verdict::print(out, "sced-vs-fsc: paper against ours", &checks)?;
    footer(out, &[greedy, tcp])?;
    Ok(checks)
}

/// How far a punishing scheduler's starvation may be from the fluid prediction, as a
/// fraction of it (packets and, with TCP, the window make it differ).
const STARVATION_TOLERANCE: f64 = 0.1;

/// The longest gap in f1's service that still counts as "sharing at once" under a fair
/// scheduler: a few round trips of the TCP variant's window, far below the
/// punishing schedulers' seconds.
const SHARES_AT_ONCE: Duration = Duration::from_millis(50);

/// Prints, per scheduler, f1's longest time without a departure from f2's start on,
/// beside the fluid prediction; returns one check per scheduler (named `label: ...`).
fn starvation(out: &mut dyn Write, v: &VariantRuns, label: &str) -> Result<Vec<Check>, ReproError> {
    let f1 = class_id(v, FIRST)?;
    let start = flow(v, SECOND)?
        .schedule
        .on
        .first()
        .map_or(Instant::ZERO, |iv| iv.0);
    let spec = &v.tree().get(f1).spec;
    let c = v.tree().link_rate();
    let mut t = TextTable {
        header: [
            "scheduler",
            "f1 bytes by f2's start",
            "longest f1 gap from",
            "gap s",
            "fluid prediction s",
        ]
        .map(str::to_owned)
        .to_vec(),
        ..TextTable::default()
    };
    let mut checks = Vec::new();
    for ((kind, _), (_, result)) in v.runs.iter().zip(&v.results) {
        let records = packet_records(result)?;
        let w1: u64 = records
            .iter()
            .filter(|r| r.class == f1 && r.departure <= start)
            .map(|r| u64::from(r.len))
            .sum();
        let (from, gap) = longest_gap(&records, f1, start);
        let curve = match kind {
            SchedulerKind::Sced => spec.rt,
            SchedulerKind::VirtualClock => spec.rate.map(ServiceCurve::linear),
            _ => None,
        };
        let predicted = curve.map(|sc| predicted_starvation(&sc, &sc, w1, start, c));
        let prediction = predicted.map_or("0 (shares at once)".to_owned(), |p| {
            format!("{:.3}", p.as_secs_f64())
        });
        let result = format!("{label}, {kind}: f1's longest gap after f2 starts");
        checks.push(match predicted {
            Some(p) => Check::derived(
                &result,
                "the fluid prediction; the paper: about 2 s",
                p.as_secs_f64(),
                gap.as_secs_f64(),
                STARVATION_TOLERANCE,
                "s",
            ),
            None => Check::at_most(
                &result,
                "none: f1 and f2 share at once",
                gap.as_secs_f64(),
                SHARES_AT_ONCE.as_secs_f64(),
                "s",
            ),
        });
        t.rows.push(vec![
            kind.name().to_owned(),
            w1.to_string(),
            format!("{:.3}", from.as_secs_f64()),
            format!("{:.3}", gap.as_secs_f64()),
            prediction,
        ]);
    }
    writeln!(
        out,
        "\nf1's longest time without a departure from f2's start ({:.3} s) on; the paper's \
         is about 2 s under SCED and none under FSC:",
        start.as_secs_f64()
    )
    .and_then(|()| write!(out, "{}", t.render()))
    .map_err(stdout_failure)?;
    Ok(checks)
}

/// The bursts of the burst flow.
struct Bursts {
    /// Per complete burst (one that started at least a period before the end of the
    /// run), its packets' records in order of departure.
    bursts: Vec<Vec<DelayRecord>>,
    /// The packets per burst the source sends.
    size: u32,
    /// When each measured burst started (its first packet was sent).
    starts: Vec<Instant>,
}

/// The bursts of the flow `name` of `v`, a periodic ON-OFF source whose ON intervals
/// each start a burst train, from the records of one run.
fn bursts(v: &VariantRuns, name: &str, records: &[DelayRecord]) -> Result<Bursts, ReproError> {
    let f = flow(v, name)?;
    let SourceConfig::PeriodicOnOff { burst, period, .. } = f.source else {
        return Err(ReproError::Internal(format!(
            "flow `{name}` of {} is not periodic-on-off",
            v.variant.file
        )));
    };
    let class = f.route[0].class;
    let end = Instant(v.scenario.config.duration.as_nanos());
    let mut starts = Vec::new();
    for &(a, b) in &f.schedule.on {
        let mut s = a;
        while s < b && s.saturating_add(period) <= end {
            starts.push(s);
            s = s.saturating_add(period);
        }
    }
    let bursts = starts
        .iter()
        .map(|&s| {
            let until = s.saturating_add(period);
            records
                .iter()
                .filter(|r| r.class == class && r.arrival >= s && r.arrival < until)
                .copied()
                .collect()
        })
        .collect();
    Ok(Bursts {
        bursts,
        size: burst,
        starts,
    })
}

/// The measurements of one PBS variant.
struct BurstRow {
    pbs: u64,
    measured: usize,
    mean_delay: Option<Duration>,
    max_delay: Duration,
    delivered: u64,
    sent: u64,
    rate_first: Option<f64>,
    rate_rest: Option<f64>,
    fluid: Duration,
    /// The fluid rates of the first PBS bytes and of the rest, bit/s.
    fluid_first: f64,
    fluid_rest: f64,
}

/// The preferred burst size of a variant's curve, in bytes: the bytes of its first
/// segment (0 for a linear curve).
fn pbs_bytes(sc: &ServiceCurve) -> u64 {
    if sc.m1 == sc.m2 {
        0
    } else {
        RuntimeCurve::new(sc, 0, 0).x2y(sc.d.as_nanos())
    }
}

/// The fluid delay of a burst of `bytes` under FSC against `others` continuously
/// backlogged flows with the same curve: its first `pbs` bytes at `C · m1 / (m1 +
/// others · m2)`, the rest at `C · m2 / ((1 + others) · m2)`, plus the link's delay.
fn fluid_burst_delay(
    sc: &ServiceCurve,
    bytes: u64,
    pbs: u64,
    others: u64,
    c: Rate,
    prop: Duration,
) -> Duration {
    let (m1, m2) = (u128::from(sc.m1.bps()), u128::from(sc.m2.bps()));
    let c = u128::from(c.bps());
    let fast = u128::from(bytes.min(pbs));
    let slow = u128::from(bytes.saturating_sub(pbs));
    let ns = |b: u128, rate_num: u128, rate_den: u128| {
        (b * 8 * 1_000_000_000 * rate_den).div_ceil(c * rate_num)
    };
    let t =
        ns(fast, m1, m1 + u128::from(others) * m2) + ns(slow, m2, (1 + u128::from(others)) * m2);
    Duration(u64::try_from(t).unwrap_or(u64::MAX)) + prop
}

/// One variant's row, from its only run.
fn burst_row(v: &VariantRuns, b: &Bursts, result_idx: usize) -> Result<BurstRow, ReproError> {
    let f = flow(v, "burst")?;
    let class = f.route[0].class;
    let sc = v.tree().get(class).spec.ls.ok_or_else(|| {
        ReproError::Internal(format!("{}: class `burst` has no ls", v.variant.file))
    })?;
    let pbs = pbs_bytes(&sc);
    let link = &v.scenario.config.links[0];
    let (_, result) = &v.results[result_idx];
    let flow_result = result
        .flows
        .iter()
        .find(|r| r.name == "burst")
        .ok_or_else(|| ReproError::Internal("no result for flow `burst`".to_owned()))?;
    let delays: Vec<Duration> = b
        .bursts
        .iter()
        .zip(&b.starts)
        .filter_map(|(packets, &s)| {
            packets
                .iter()
                .map(|r| r.departure)
                .max()
                .map(|last| last.since(s) + link.delay)
        })
        .collect();
    let packet = b
        .bursts
        .iter()
        .flatten()
        .map(|r| u64::from(r.len))
        .max()
        .unwrap_or(0);
    let first_n = pbs.checked_div(packet).unwrap_or(0);
    let (mut fast_bytes, mut fast_ns, mut slow_bytes, mut slow_ns) = (0u64, 0u64, 0u64, 0u64);
    for packets in b.bursts.iter().filter(|p| p.len() == b.size as usize) {
        let sum = |ps: &[DelayRecord]| ps.iter().map(|r| u64::from(r.len)).sum::<u64>();
        let k = (first_n as usize).min(packets.len());
        if k >= 2 {
            fast_bytes += sum(&packets[1..k]);
            fast_ns += packets[k - 1]
                .departure
                .since(packets[0].departure)
                .as_nanos();
        }
        let a = k.max(1) - 1;
        if a + 1 < packets.len() {
            slow_bytes += sum(&packets[a + 1..]);
            slow_ns += packets[packets.len() - 1]
                .departure
                .since(packets[a].departure)
                .as_nanos();
        }
    }
    let rate = |bytes: u64, ns: u64| (ns > 0).then(|| bytes as f64 * 8e9 / ns as f64);
    let others = v.tree().leaves().len() as u64 - 1;
    Ok(BurstRow {
        pbs: first_n,
        measured: delays.len(),
        mean_delay: (!delays.is_empty()).then(|| {
            Duration(delays.iter().map(|d| d.as_nanos()).sum::<u64>() / delays.len() as u64)
        }),
        max_delay: delays.iter().copied().max().unwrap_or_default(),
        delivered: flow_result.delivered.packets,
        sent: flow_result.sent.packets,
        rate_first: rate(fast_bytes, fast_ns),
        rate_rest: rate(slow_bytes, slow_ns),
        fluid_first: link.rate.bps() as f64 * sc.m1.bps() as f64
            / (sc.m1.bps() + others * sc.m2.bps()) as f64,
        fluid_rest: link.rate.bps() as f64 / (1 + others) as f64,
        fluid: fluid_burst_delay(
            &sc,
            u64::from(b.size) * packet,
            pbs,
            others,
            link.rate,
            link.delay,
        ),
    })
}

/// `fsc-burst`.
pub fn burst(opts: &Options<'_>, out: &mut dyn Write) -> Result<Vec<Check>, ReproError> {
    let (kinds, missing) = schedulers(&["fsc"], opts)?;
    header(
        out,
        &[
            "fsc-burst: FSC paper Fig. 5: 15 CBR flows and one ON-OFF flow sending 32-packet \
             bursts share 10 Mbit/s (10 ms latency, 1000 B packets); every flow has the same \
             concave curve, BPR 5, PBS 0, 4, 8, 16, 32 packets. Run without §3's 128 KB \
             push-out buffer (see below; fsc-onoff runs with it).",
            "Reconstructed: from §3's common setup, the burst flow's period (1 s) and peak \
             (4 Mbit/s), the CBR rates (1.333 Mbit/s each, twice the link in all), the slopes \
             (best_effort: m2 = C / 16, m1 = 5 m2; only their ratio matters); the burst flow \
             starts at 0.5 s; no buffer limit (Fig. 5 shows no losses; §3's 128 KB push-out \
             buffer would drop most of each burst here).",
            "Reconstructed: deterministic in the paper: one run (--seeds does not apply). \
             Fig. 5 (§2) traces the bursts of one ON-OFF flow among CBR flows; the random \
             (exponential) start times are §3.1's, whose experiments fsc-onoff runs with seeds.",
            "Paper: the burst's delay (first packet sent to last packet delivered) falls as \
             PBS grows, and departures follow the curve's shape: the first PBS packets at the \
             rate of m1, the rest at the rate of m2.",
            "",
        ],
    )?;
    print_missing(out, &missing)?;
    let mut table = TextTable {
        header: [
            "PBS",
            "scheduler",
            "bursts",
            "mean burst delay ms",
            "max ms",
            "fluid estimate ms",
            "delivered / sent",
            "first PBS Mbit/s",
            "fluid",
            "rest Mbit/s",
            "fluid",
        ]
        .map(str::to_owned)
        .to_vec(),
        ..TextTable::default()
    };
    let mut all = Vec::new();
    let mut rows = Vec::new();
    let mut chart = LineChart::new(
        "Fig. 5: arrivals and departures of two consecutive bursts",
        "time since the first plotted burst started (s)",
        "packet number",
    );
    chart.y_axis.include_zero = true;
    for (j, variant) in BURST.into_iter().enumerate() {
        let v = run_variant(variant, &kinds, opts, &variant_dir(opts, &variant))?;
        for (k, (name, result)) in v.results.iter().enumerate() {
            let records = packet_records(result)?;
            let b = bursts(&v, "burst", &records)?;
            let row = burst_row(&v, &b, k)?;
            let mbit = |r: Option<f64>| r.map_or("-".to_owned(), |r| format!("{:.3}", r / 1e6));
            table.rows.push(vec![
                row.pbs.to_string(),
                name.clone(),
                row.measured.to_string(),
                row.mean_delay.map_or("-".to_owned(), ms),
                ms(row.max_delay),
                ms(row.fluid),
                format!("{} / {}", row.delivered, row.sent),
                mbit(row.rate_first),
                mbit((row.pbs > 0).then_some(row.fluid_first)),
                mbit(row.rate_rest),
                mbit((row.pbs < u64::from(b.size)).then_some(row.fluid_rest)),
            ]);
            add_fig5_series(&mut chart, &b, j, k, &format!("PBS {} ({name})", row.pbs));
            rows.push((v.variant.name.unwrap_or(""), row));
        }
        all.push(v);
    }
    let mut text = String::from(
        "per PBS: the burst's delay (first packet sent to last delivered, with the link's \
         10 ms) over every burst that started a period before the end; the fluid estimate \
         ignores packets and drops; the rates at which the burst's packets left, after its \
         first packet, up to packet PBS and after it (bursts with no drops); with --shorten \
         the first burst comes before the background flows have received PBS bytes (their \
         curves' first segment) and is slower:\n",
    );
    text.push_str(&table.render());
    let _ = writeln!(
        text,
        "fig5.svg: packet number against time of the bursts that started second and third \
         (arrivals solid black, departures per PBS)"
    );
    out.write_all(text.as_bytes()).map_err(stdout_failure)?;
    if let Some(first) = all.first_mut() {
        first
            .written
            .write(opts.out, "fig5.svg", chart.render().as_bytes())?;
    }
    let checks = burst_checks(&rows);
    verdict::print(out, "fsc-burst: paper against ours", &checks)?;
    footer(out, &all)?;
    Ok(checks)
}

/// How far the rates at which a burst's packets left may be from the fluid rates of
/// the curve's two slopes, as a fraction of them.
const BURST_RATE_TOLERANCE: f64 = 0.1;

/// Fig. 5's claims: the mean burst delay falls as PBS grows; per PBS, the first PBS
/// packets leave at the fluid rate of m1 and the rest at that of m2.
/// `rows` are named by their variants (`pbs0`, `pbs4`, ...).
fn burst_checks(rows: &[(&str, BurstRow)]) -> Vec<Check> {
    let delays: Vec<Option<Duration>> = rows.iter().map(|(_, r)| r.mean_delay).collect();
    let mut checks = vec![Check::claim(
        "the mean burst delay falls as PBS grows",
        "falls as PBS grows",
        rows.iter()
            .map(|(name, r)| format!("{name}: {}", r.mean_delay.map_or("-".to_owned(), ms)))
            .collect::<Vec<_>>()
            .join(", ")
            + " ms",
        &delays
            .iter()
            .map(|d| d.map_or(f64::NAN, |d| d.as_secs_f64()))
            .collect::<Vec<_>>(),
        "strictly decreasing",
        delays.iter().all(Option::is_some) && delays.windows(2).all(|w| w[1] < w[0]),
    )];
    for (name, r) in rows {
        if let (Some(first), true) = (r.rate_first, r.pbs > 1) {
            checks.push(Check::derived(
                &format!("{name}: rate of the first PBS packets"),
                "the fluid rate of m1",
                r.fluid_first / 1e6,
                first / 1e6,
                BURST_RATE_TOLERANCE,
                "Mbit/s",
            ));
        }
        if let Some(rest) = r.rate_rest {
            checks.push(Check::derived(
                &format!("{name}: rate of the packets after PBS"),
                "the fluid rate of m2",
                r.fluid_rest / 1e6,
                rest / 1e6,
                BURST_RATE_TOLERANCE,
                "Mbit/s",
            ));
        }
    }
    checks
}

/// The second and third measured bursts: for the first variant and scheduler, the
/// arrivals; for every one, the departures, as packet number against time since the
/// second burst started.
fn add_fig5_series(chart: &mut LineChart, b: &Bursts, variant: usize, run: usize, label: &str) {
    let (Some(two), Some(&origin)) = (b.bursts.get(1..3), b.starts.get(1)) else {
        return;
    };
    let since = |t: Instant| t.since(origin).as_secs_f64();
    if variant == 0 && run == 0 {
        let mut arrivals: Vec<Instant> = two.iter().flatten().map(|r| r.arrival).collect();
        arrivals.sort_unstable();
        let points = arrivals
            .iter()
            .enumerate()
            .map(|(n, &t)| (since(t), (n + 1) as f64))
            .collect();
        let mut s = Series::steps("arrivals", points);
        s.colour = Some(6);
        s.dash = Some(Dash::Solid);
        chart.series.push(s);
    }
    let points = two
        .iter()
        .flatten()
        .enumerate()
        .map(|(n, r)| (since(r.departure), (n + 1) as f64))
        .collect();
    let mut s = Series::steps(format!("departures, {label}"), points);
    s.colour = Some(variant);
    s.dash = Some(Dash::ALL[run % Dash::ALL.len()]);
    chart.series.push(s);
}
