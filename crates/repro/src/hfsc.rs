//! The simulated reproductions of the H-FSC paper's §VI: the delays of audio and video
//! under H-FSC and H-WF2Q+ (Figs. 10, 11) and link sharing with an ON-OFF session
//! (Fig. 12). Also the per-packet helpers the FSC reproductions use.

use std::fmt::Write as _;
use std::io::Write;

use linkshare_core::hierarchy::ClassId;
use linkshare_core::units::{Duration, Instant};
use linkshare_sim::RunResult;
use linkshare_sim::result::DelayRecord;

use crate::experiment::{
    Variant, VariantRuns, footer, header, leaf_rank, print_missing, print_variant, run_variant,
    schedulers, span, variant_dir,
};
use crate::verdict::{self, Check};
use crate::{Options, ReproError, stdout_failure};
use linkshare_core::sched::SchedulerKind;
use linkshare_report::plots::leaf_style;
use linkshare_report::svg::{Dash, LineChart, Series};
use linkshare_report::table::TextTable;

/// The schedulers of Fig. 11.
const DELAY_SCHEDULERS: [&str; 2] = ["hfsc", "hwf2q"];

/// Fig. 11's scenario (hierarchy reconstructed).
pub const DELAY: Variant = Variant {
    name: None,
    file: "hfsc-delay.toml",
    toml: include_str!("../../../scenarios/hfsc-delay.toml"),
};

/// Fig. 12's scenario.
pub const LINKSHARE: Variant = Variant {
    name: None,
    file: "hfsc-linkshare.toml",
    toml: include_str!("../../../scenarios/hfsc-linkshare.toml"),
};

/// The paper's delay targets (§VI-A): each real-time class and the `dmax` of its curve,
/// in ms. Thm. 2 adds `t_max`.
const DELAY_TARGETS: [(&str, u64); 2] = [("audio", 5), ("video", 10)];

/// The class of `hfsc-delay.toml` whose ON and OFF periods the delays are compared over.
const ON_OFF_CLASS: &str = "onoff";

/// The per-packet records of a run's only link, in memory: these reproductions' runs
/// are short (at most a few hundred thousand packets); a run that kept only histograms
/// is an internal error.
pub(super) fn packet_records(result: &RunResult) -> Result<Vec<DelayRecord>, ReproError> {
    match result.links[0].delay_log.to_vec() {
        Ok(Some(records)) => Ok(records),
        Ok(None) => Err(ReproError::Internal(
            "a reproduction's run kept no per-packet records".to_owned(),
        )),
        Err(error) => Err(ReproError::Write(linkshare_report::WriteError {
            what: "cannot read the run's per-packet delay records back".to_owned(),
            error,
        })),
    }
}

/// The class `name` of a variant's link.
pub(super) fn class_id(v: &VariantRuns, name: &str) -> Result<ClassId, ReproError> {
    v.tree().id_of(name).ok_or_else(|| {
        ReproError::Internal(format!(
            "the built-in {} has no class `{name}`",
            v.variant.file
        ))
    })
}

/// The nearest-rank `q`-quantile (`0 < q <= 1`) of `sorted`, which must not be empty.
pub(super) fn nearest_rank(sorted: &[Duration], q: f64) -> Duration {
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Milliseconds, for tables.
pub(super) fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1e3)
}

/// The rate of `class` in consecutive windows of length `window` over `[0, until)`,
/// from the departures in `records` (whole packets, counted in the window their last
/// bit left in; the last window may be shorter): `(window start s, Mbit/s)` points for
/// a step series.
pub(super) fn window_rates(
    records: &[DelayRecord],
    class: ClassId,
    window: Duration,
    until: Instant,
) -> Vec<(f64, f64)> {
    let w = window.as_nanos().max(1);
    let n = until.as_nanos().div_ceil(w) as usize;
    let mut bytes = vec![0u64; n];
    for r in records.iter().filter(|r| r.class == class) {
        if let Some(b) = bytes.get_mut((r.departure.as_nanos() / w) as usize) {
            *b += u64::from(r.len);
        }
    }
    let mut points: Vec<(f64, f64)> = bytes
        .iter()
        .enumerate()
        .map(|(k, &b)| {
            let start = k as u64 * w;
            let len = (start + w).min(until.as_nanos()) - start;
            (Instant(start).as_secs_f64(), b as f64 * 8e3 / len as f64)
        })
        .collect();
    if let Some(&(_, last)) = points.last() {
        points.push((until.as_secs_f64(), last));
    }
    points
}

/// Whether `t` falls in one of the `[start, end)` intervals.
fn within(t: Instant, intervals: &[(Instant, Instant)]) -> bool {
    intervals.iter().any(|&(a, b)| a <= t && t < b)
}

/// The delays of one class in one run.
struct ClassDelays {
    /// Every delay, sorted.
    sorted: Vec<Duration>,
    /// Mean delay of the packets that arrived while the ON-OFF session was on, and
    /// while it was off (s); `None` when no packet did.
    mean_on: Option<f64>,
    mean_off: Option<f64>,
    /// `(arrival s, delay ms)` of every packet, in order of departure.
    points: Vec<(f64, f64)>,
}

impl ClassDelays {
    fn new(records: &[DelayRecord], class: ClassId, on: &[(Instant, Instant)]) -> ClassDelays {
        let mine: Vec<&DelayRecord> = records.iter().filter(|r| r.class == class).collect();
        let mut sorted: Vec<Duration> = mine.iter().map(|r| r.delay()).collect();
        sorted.sort_unstable();
        let mean = |want_on: bool| {
            let ds: Vec<f64> = mine
                .iter()
                .filter(|r| within(r.arrival, on) == want_on)
                .map(|r| r.delay().as_secs_f64())
                .collect();
            (!ds.is_empty()).then(|| ds.iter().sum::<f64>() / ds.len() as f64)
        };
        ClassDelays {
            mean_on: mean(true),
            mean_off: mean(false),
            points: mine
                .iter()
                .map(|r| (r.arrival.as_secs_f64(), r.delay().as_secs_f64() * 1e3))
                .collect(),
            sorted,
        }
    }

    fn max(&self) -> Duration {
        self.sorted.last().copied().unwrap_or_default()
    }
}

/// What `hfsc-delay` prints first: the experiment, what was reconstructed, the claim.
const DELAY_INTRO: &[&str] = &[
    "hfsc-delay: H-FSC paper §VI-A (Figs. 10, 11): 10 Mbit/s; audio sends 160 B every \
     20 ms with the curve (umax 160 B, dmax 5 ms, 64 kbit/s), video 8 KB every 33 ms \
     with (8 KB, 10 ms, 2 Mbit/s), a greedy FTP (4 KB, 16.25 ms, 5 Mbit/s); other \
     sessions send 4 KB packets; an ON-OFF session has 18% of the link and 40% of \
     its parent class A.",
    "Reconstructed: Fig. 10's hierarchy (the scenario file gives it and the admission \
     test by hand; `linkshare check` agrees): A 4.5 Mbit/s holds audio, video, onoff \
     (1.8 Mbit/s) and a1..a4 \
     (159 kbit/s); ftp (5 Mbit/s) and s1..s5 (100 kbit/s) at level 1. Other sessions \
     send CBR at their rates; onoff sends 1.8 Mbit/s during the even seconds \
     [0, 1), [2, 3), ... and nothing in the odd ones. The paper gives each class \
     one curve, which serves both criteria; we split it: `rt` is the paper's curve, \
     `ls` the linear curve of the class's rate (the concave curves of audio and video \
     would not fit within their parent's link-sharing curve).",
    "Paper: under H-FSC every audio delay is at most 5 ms + t_max and every video delay \
     at most 10 ms + t_max (t_max = L_max / C, Thm. 2); under H-WF2Q+ they are much \
     larger and follow the ON-OFF period.",
    "",
];

/// `hfsc-delay`.
pub fn delay(opts: &Options<'_>, out: &mut dyn Write) -> Result<Vec<Check>, ReproError> {
    let (kinds, missing) = schedulers(&DELAY_SCHEDULERS, opts)?;
    header(out, DELAY_INTRO)?;
    print_missing(out, &missing)?;
    let dir = variant_dir(opts, &DELAY);
    let mut v = run_variant(DELAY, &kinds, opts, &dir)?;
    let tree = v.tree();
    let l_max = tree.classes()[1..]
        .iter()
        .map(|c| c.max_packet())
        .max()
        .unwrap_or_default();
    let link_rate = tree.link_rate();
    let t_max = link_rate.tx_time(l_max);
    let onoff = v
        .scenario
        .config
        .flows
        .iter()
        .find(|f| f.name == ON_OFF_CLASS)
        .ok_or_else(|| ReproError::Internal("hfsc-delay.toml has no flow `onoff`".to_owned()))?;
    let on = onoff.schedule.on.clone();
    let duration = v.scenario.config.duration;
    let mut table = delay_table();
    let mut chart = delay_chart(&on, duration);
    let mut verdicts = Vec::new();
    let mut checks = Vec::new();
    for (k, ((kind, _), (name, result))) in v.runs.iter().zip(&v.results).enumerate() {
        let records = packet_records(result)?;
        for &(class, dmax_ms) in &DELAY_TARGETS {
            let id = class_id(&v, class)?;
            let bound = Duration::from_millis(dmax_ms) + t_max;
            let d = ClassDelays::new(&records, id, &on);
            table.rows.push(delay_row(name, class, &d, bound));
            verdicts.push(delay_verdict(name, class, dmax_ms, &d, bound));
            let bound_ms = bound.as_secs_f64() * 1e3;
            let result = format!("{kind}: largest {class} delay");
            checks.push(match kind {
                SchedulerKind::Hfsc => Check::at_most(
                    &result,
                    &format!("at most {dmax_ms} ms + t_max (Thm. 2)"),
                    d.max().as_secs_f64() * 1e3,
                    bound_ms,
                    "ms",
                ),
                _ => Check::claim(
                    &result,
                    &format!("much larger than {dmax_ms} ms + t_max"),
                    format!("{} ms", ms(d.max())),
                    &[d.max().as_secs_f64()],
                    &format!("> {} ms", ms(bound)),
                    d.max() > bound,
                ),
            });
            let mut s = Series::line(format!("{class} ({name})"), d.points);
            s.colour = Some(leaf_style(leaf_rank(v.tree(), id)).0);
            s.dash = Some(Dash::ALL[k % Dash::ALL.len()]);
            chart.series.push(s);
        }
    }
    for &(class, dmax_ms) in &DELAY_TARGETS {
        let id = class_id(&v, class)?;
        let y = (Duration::from_millis(dmax_ms) + t_max).as_secs_f64() * 1e3;
        let mut s = Series::line(
            format!("{class}: {dmax_ms} ms + t_max"),
            vec![(0.0, y), (duration.as_secs_f64(), y)],
        );
        s.colour = Some(leaf_style(leaf_rank(v.tree(), id)).0);
        s.dash = Some(Dash::Dotted);
        chart.series.push(s);
    }
    v.written
        .write(&dir, "delay_vs_time.svg", chart.render().as_bytes())?;
    let mut text = format!(
        "delays at the port (arrival to last bit sent); t_max = L_max / C = {} B / {} = {} ms\n",
        l_max.0,
        link_rate,
        ms(t_max)
    );
    text.push_str(&table.render());
    text.push_str("per scheduler and class:\n");
    for line in &verdicts {
        let _ = writeln!(text, "{line}");
    }
    out.write_all(text.as_bytes()).map_err(stdout_failure)?;
    verdict::print(out, "hfsc-delay: paper against ours", &checks)?;
    footer(out, &[v])?;
    Ok(checks)
}

/// `hfsc-delay`'s table, without rows.
fn delay_table() -> TextTable {
    TextTable {
        header: [
            "scheduler",
            "class",
            "packets",
            "p99 ms",
            "max ms",
            "bound ms",
            "over bound",
            "mean ms, onoff on",
            "mean ms, onoff off",
        ]
        .map(str::to_owned)
        .to_vec(),
        ..TextTable::default()
    }
}

/// `hfsc-delay`'s chart of delay against arrival time, without series; `on` is when the
/// ON-OFF session sends.
fn delay_chart(on: &[(Instant, Instant)], duration: Duration) -> LineChart {
    let mut chart = LineChart::new(
        format!(
            "Audio and video delay; onoff on during {}{}",
            on.iter()
                .take(2)
                .map(|&(a, b)| span(a, b))
                .collect::<Vec<_>>()
                .join(", "),
            if on.len() > 2 { ", ..." } else { "" }
        ),
        "arrival time (s)",
        "delay at the port (ms)",
    );
    chart.y_axis.include_zero = true;
    chart.x_axis.range = Some((0.0, duration.as_secs_f64()));
    chart
}

/// The table row of `class` under scheduler `name`: its delays against `bound`.
fn delay_row(name: &str, class: &str, d: &ClassDelays, bound: Duration) -> Vec<String> {
    let mean = |m: Option<f64>| m.map_or("-".to_owned(), |s| format!("{:.3}", s * 1e3));
    let over = d.sorted.iter().filter(|&&x| x > bound).count();
    vec![
        name.to_owned(),
        class.to_owned(),
        d.sorted.len().to_string(),
        if d.sorted.is_empty() {
            "-".to_owned()
        } else {
            ms(nearest_rank(&d.sorted, 0.99))
        },
        ms(d.max()),
        ms(bound),
        over.to_string(),
        mean(d.mean_on),
        mean(d.mean_off),
    ]
}

/// The verdict line of `class` (bound `dmax_ms` + t_max) under scheduler `name`.
fn delay_verdict(
    name: &str,
    class: &str,
    dmax_ms: u64,
    d: &ClassDelays,
    bound: Duration,
) -> String {
    let over = d.sorted.iter().filter(|&&x| x > bound).count();
    format!(
        "  {name} {class}: {} of {} packets later than {dmax_ms} ms + t_max = {} ms \
         (largest {} ms); mean delay while onoff is on / off = {}",
        over,
        d.sorted.len(),
        ms(bound),
        ms(d.max()),
        match (d.mean_on, d.mean_off) {
            (Some(a), Some(b)) if b > 0.0 => format!("{:.2}", a / b),
            _ => "-".to_owned(),
        }
    )
}

/// The 80 kbit/s class, measured over longer windows as the paper did.
const SLOW_CLASS: &str = "b80k";
/// The paper's window for [`SLOW_CLASS`], and for every other class, ns.
const SLOW_WINDOW: Duration = Duration::from_millis(60);
/// The paper's averaging interval for the other classes.
const WINDOW: Duration = Duration::from_micros(37_500);
/// The ON-OFF class of Fig. 12.
const ON_OFF_LEAF: &str = "b2m";
/// The paper's expected rates of the level-2 sessions, bit/s: while every session is on,
/// and while the ON-OFF session is off (its 2 Mbit/s shared 80 : 480 : 1440).
const FIG12_EXPECTED: [(&str, f64, f64); 4] = [
    ("b80k", 80e3, 160e3),
    ("b480k", 480e3, 960e3),
    ("b1440k", 1440e3, 2880e3),
    ("b2m", 2e6, 0.0),
];

/// `hfsc-linkshare`.
pub fn linkshare(opts: &Options<'_>, out: &mut dyn Write) -> Result<Vec<Check>, ReproError> {
    let (kinds, missing) = schedulers(&["hfsc"], opts)?;
    header(
        out,
        &[
            "hfsc-linkshare: H-FSC paper §VI-B (Fig. 12): 10 Mbit/s; level-1 sessions s1..s4 of \
             1.5 Mbit/s; class B holds b80k, b480k, b1440k, b2m (80 kbit/s, 480 kbit/s, \
             1.44 Mbit/s, 2 Mbit/s); every session greedy with 512 B packets except b2m, on \
             during [0, 5) and [10, 15) s; 20 s; rates in 37.5 ms windows (60 ms for b80k).",
            "Reconstructed (the paper ran a NetBSD box and gives none of these): b2m's ON-OFF \
             timing (on during [0, 5) and [10, 15) s) and the 20 s duration; every session \
             greedy (the paper says both \"continuously backlogged\" and \"UDP packets at \
             the required rates\"; a session sending at its rate could not receive more \
             while b2m is off, so we take the first); 512 B packets as the paper's. Curves are linear, rt = ls = the rate; weights (for the \
             reference allocation) are the rates in kbit/s.",
            "Paper: every session at its rate while all are on; while b2m is off its 2 Mbit/s \
             goes to its siblings in proportion 80 : 480 : 1440 (the paper prints no rates; \
             the proportion gives 160 kbit/s, 960 kbit/s, 2.88 Mbit/s: `expected (derived)` \
             below).",
            "",
        ],
    )?;
    print_missing(out, &missing)?;
    let dir = variant_dir(opts, &LINKSHARE);
    let mut v = run_variant(LINKSHARE, &kinds, opts, &dir)?;
    print_variant(out, &v)?;
    let table = fig12_table(&v)?;
    writeln!(
        out,
        "\nthe level-2 sessions, Mbit/s (measured from one window after each change; \
         expected: the session's rate while b2m is on, as the paper says; while b2m is off, \
         derived from the paper's proportion; error = measured - expected):"
    )
    .and_then(|()| write!(out, "{}", table.render()))
    .map_err(stdout_failure)?;
    let chart = fig12_chart(&v, opts.shorten)?;
    v.written
        .write(&dir, "fig12.svg", chart.render().as_bytes())?;
    let checks = fig12_checks(&v)?;
    verdict::print(out, "hfsc-linkshare: paper against ours", &checks)?;
    footer(out, &[v])?;
    Ok(checks)
}

/// How far a level-2 session's measured rate may be from its expected rate, as a
/// fraction of it: the slowest session sends one 512 B packet every 51 ms (25 ms while
/// b2m is off), so a shortened run's intervals hold few of its packets.
const FIG12_TOLERANCE: f64 = 0.05;

/// Per level-2 session, with b2m on and off: the measurement furthest from the expected
/// rate over the intervals of that kind, against it. With b2m on the paper gives the
/// rates (the sessions' own); with b2m off it gives only the proportion, so the rates
/// are labelled as derived.
fn fig12_checks(v: &VariantRuns) -> Result<Vec<Check>, ReproError> {
    let b2m = class_id(v, ON_OFF_LEAF)?.index();
    let mut checks = Vec::new();
    for (kind, rates) in &v.runs {
        let Some(r) = rates else { continue };
        for on in [true, false] {
            for &(class, all_on, b2m_off) in &FIG12_EXPECTED {
                let expected = if on { all_on } else { b2m_off };
                if expected == 0.0 {
                    continue;
                }
                let c = class_id(v, class)?.index();
                let furthest = v
                    .reference
                    .intervals
                    .iter()
                    .enumerate()
                    .filter(|(_, iv)| (iv.demand[b2m] > 0.0) == on)
                    .map(|(k, _)| r[k][c])
                    .max_by(|a, b| (a - expected).abs().total_cmp(&(b - expected).abs()));
                let Some(measured) = furthest else { continue };
                let result = format!(
                    "{kind}: {class} while b2m is {}",
                    if on { "on" } else { "off" }
                );
                checks.push(if on {
                    Check::relative(
                        &result,
                        expected / 1e3,
                        measured / 1e3,
                        FIG12_TOLERANCE,
                        "kbit/s",
                    )
                } else {
                    Check::derived(
                        &result,
                        "b2m's 2 Mbit/s shared 80 : 480 : 1440",
                        expected / 1e3,
                        measured / 1e3,
                        FIG12_TOLERANCE,
                        "kbit/s",
                    )
                });
            }
        }
    }
    Ok(checks)
}

/// Per interval of constant demand and level-2 session: the paper's rate, the reference,
/// and each scheduler's measurement with its error against the paper.
fn fig12_table(v: &VariantRuns) -> Result<TextTable, ReproError> {
    let mut t = TextTable {
        header: ["interval", "b2m", "class", "expected", "reference"]
            .map(str::to_owned)
            .to_vec(),
        ..TextTable::default()
    };
    for (j, (kind, _)) in v.runs.iter().enumerate() {
        t.groups.push((kind.name().to_owned(), 5 + 2 * j, 2));
        t.header.extend(["measured", "error"].map(str::to_owned));
    }
    let b2m = class_id(v, ON_OFF_LEAF)?.index();
    for (k, iv) in v.reference.intervals.iter().enumerate() {
        let on = iv.demand[b2m] > 0.0;
        for (n, &(class, all_on, b2m_off)) in FIG12_EXPECTED.iter().enumerate() {
            let c = class_id(v, class)?.index();
            let paper = if on { all_on } else { b2m_off };
            let mut row = vec![
                if n == 0 {
                    span(iv.start, iv.end)
                } else {
                    String::new()
                },
                if n == 0 {
                    (if on { "on" } else { "off" }).to_owned()
                } else {
                    String::new()
                },
                class.to_owned(),
                format!("{:.3}", paper / 1e6),
                format!("{:.3}", iv.rate[c] / 1e6),
            ];
            for (_, rates) in &v.runs {
                match rates {
                    Some(r) => {
                        row.push(format!("{:.3}", r[k][c] / 1e6));
                        row.push(format!("{:+.4}", (r[k][c] - paper) / 1e6));
                    }
                    None => row.extend(["n/a", "n/a"].map(str::to_owned)),
                }
            }
            t.rows.push(row);
        }
    }
    Ok(t)
}

/// Fig. 12: the rates of the level-2 sessions over time, b80k over 60 ms windows and the
/// others over 37.5 ms (both divided by `shorten`), one line style per scheduler.
fn fig12_chart(v: &VariantRuns, shorten: u32) -> Result<LineChart, ReproError> {
    let mut chart = LineChart::new(
        format!(
            "Fig. 12: level-2 sessions, {} ms windows ({} ms for {SLOW_CLASS})",
            WINDOW.as_secs_f64() * 1e3 / f64::from(shorten),
            SLOW_WINDOW.as_secs_f64() * 1e3 / f64::from(shorten),
        ),
        "time (s)",
        "rate (Mbit/s)",
    );
    chart.y_axis.include_zero = true;
    let until = Instant(v.scenario.config.duration.as_nanos());
    chart.x_axis.range = Some((0.0, until.as_secs_f64()));
    for (k, (name, result)) in v.results.iter().enumerate() {
        let records = packet_records(result)?;
        for &(class, _, _) in &FIG12_EXPECTED {
            let window = if class == SLOW_CLASS {
                SLOW_WINDOW
            } else {
                WINDOW
            };
            let window = Duration(window.as_nanos() / u64::from(shorten));
            let id = class_id(v, class)?;
            let points = window_rates(&records, id, window, until);
            let mut s = Series::steps(format!("{class} ({name})"), points);
            s.colour = Some(leaf_style(leaf_rank(v.tree(), id)).0);
            s.dash = Some(Dash::ALL[k % Dash::ALL.len()]);
            chart.series.push(s);
        }
    }
    Ok(chart)
}
