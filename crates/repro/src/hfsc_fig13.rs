//! `hfsc-fig13`: H-FSC's computation overhead against the number of sessions and the
//! number of levels, and with every session backlogged (the H-FSC paper's §VI-C and
//! Fig. 13), timed on this machine.
//!
//! The workloads are [`linkshare_core::workload::fig13`]'s, the same as the
//! `hfsc_fig13` benchmark's: 1 Gbit/s shared equally by 1 to 1 000 sessions with
//! `rt = ls` linear curves, two-state Markov sources at 0.95 of their shares (or every
//! session continuously backlogged), H-FSC driven directly behind a busy link. The
//! reproduction times the per-packet loop ([`crate::timing`]) and compares the *shapes*
//! the paper reports — growth per tenfold sessions, cost per added level, backlogged
//! against Markov — not absolute values: the paper's 200 MHz Pentium Pro is not this
//! machine. Every check is a timing result (never recorded in `expected.toml`).
//!
//! The paper's Fig. 13 did not survive its text extraction: only the values its text
//! quotes are printed as the paper's (about 9 µs per packet with 1 000 Markov sessions;
//! 8.79 µs flat and 11.54 µs three levels deep with every session backlogged; an
//! enqueue under 0.3 µs then); the others are marked as in the lost figure.

use std::io::Write;
use std::time::Instant;

use linkshare_core::workload::fig13::{BACKLOG, Op, Run, Traffic, fan_outs, warm_up};
use linkshare_report::svg::{Axis, LineChart, Scale, Series};
use linkshare_report::table::TextTable;
use linkshare_report::{Written, create_dir};

use crate::timing::{Loop, Sampling, conditions, interleaved_medians, median, repeat};
use crate::verdict::{self, Check};
use crate::{Options, ReproError, stdout_failure};

/// The hierarchies: the paper's flat ones from 1 to 1 000 sessions (Fig. 13(a)), and
/// its two- and three-level trees of 1 000 (Fig. 13(b)).
const HIERARCHIES: [&str; 6] = [
    "flat-1",
    "flat-10",
    "flat-100",
    "flat-1000",
    "10x100",
    "10x10x10",
];

/// Packets per sample: short (a few hundred µs), so that most samples run without the
/// thread being preempted on a loaded machine and the median is such a sample. (The
/// paper averages over 10 000 packets, from the 10 000th to the 20 000th, on a machine
/// in single-user mode.)
const PACKETS_PER_SAMPLE: usize = 1_000;

/// Rounds, and samples per workload's turn ([`Sampling`]); `--shorten` divides both
/// (at least 3 rounds of 5).
const ROUNDS: usize = 7;
const PER_TURN: usize = 43;

/// The sampling of a run shortened by `shorten`.
fn sampling(shorten: u32) -> Sampling {
    Sampling {
        rounds: (ROUNDS / shorten.max(1) as usize).max(3),
        per_turn: (PER_TURN / shorten.max(1) as usize).max(5),
        per_sample: PACKETS_PER_SAMPLE,
    }
}

/// Dequeues (then as many enqueues) timed in a row under [`Traffic::Backlogged`],
/// fewer than [`BACKLOG`] so that no session empties.
const BATCH: usize = 32;

/// What the paper's text gives, µs per packet, by (hierarchy, traffic).
fn paper_us(name: &str, traffic: Traffic) -> Option<(f64, &'static str)> {
    match (name, traffic) {
        ("flat-1000", Traffic::Markov) => Some((9.0, "\"approximately 9 µs\" (text)")),
        ("flat-1000", Traffic::Backlogged) => Some((8.79, "8.79 µs (text)")),
        ("10x10x10", Traffic::Backlogged) => Some((11.54, "11.54 µs (text)")),
        _ => None,
    }
}

/// One workload's measurements.
#[derive(Clone, Debug)]
struct Measured {
    name: &'static str,
    traffic: Traffic,
    sessions: usize,
    levels: usize,
    /// Median ns per packet forwarded.
    per_packet: f64,
    /// Median ns per enqueue and per dequeue ([`Traffic::Backlogged`] only).
    enqueue: Option<f64>,
    dequeue: Option<f64>,
}

fn traffic_name(t: Traffic) -> &'static str {
    match t {
        Traffic::Markov => "Markov",
        Traffic::Backlogged => "backlogged",
    }
}

/// Times every workload: per packet, then (backlogged) per operation.
fn measure(shorten: u32) -> Vec<Measured> {
    let sampling = sampling(shorten);
    let shorten = shorten.max(1) as usize;
    let workloads: Vec<(&'static str, Traffic, Vec<usize>)> =
        [Traffic::Markov, Traffic::Backlogged]
            .into_iter()
            .flat_map(|t| {
                HIERARCHIES.map(|name| (name, t, fan_outs(name).expect("built-in names parse")))
            })
            .collect();
    let mut runs: Vec<Run> = workloads
        .iter()
        .map(|(_, t, levels)| {
            let sessions = levels.iter().product();
            Run::new(
                levels,
                *t,
                warm_up(sessions) / shorten,
                (sampling.samples() + sampling.rounds) * PACKETS_PER_SAMPLE,
            )
        })
        .collect();
    let per_packet = {
        let mut loops: Vec<Loop<'_>> = runs
            .iter_mut()
            .map(|run| repeat(run, |r| r.packet()))
            .collect();
        interleaved_medians(&mut loops, sampling)
    };
    let ops = operation_medians(&mut runs, &workloads, sampling);
    workloads
        .iter()
        .zip(per_packet)
        .zip(ops)
        .map(|(((name, traffic, levels), per_packet), ops)| Measured {
            name,
            traffic: *traffic,
            sessions: levels.iter().product(),
            levels: levels.len(),
            per_packet,
            enqueue: ops.map(|o| o.0),
            dequeue: ops.map(|o| o.1),
        })
        .collect()
}

/// Under [`Traffic::Backlogged`], the median ns per enqueue and per dequeue: batches
/// of [`BATCH`] dequeues in a row, then their [`BATCH`] replacements, each batch timed,
/// in the rounds of `sampling` (a turn's first batch not counted). `None` for the
/// Markov runs, where arrivals and departures interleave by time (their per-operation
/// figures are the `hfsc_fig13` benchmark's, with the TSC timer).
fn operation_medians(
    runs: &mut [Run],
    workloads: &[(&'static str, Traffic, Vec<usize>)],
    sampling: Sampling,
) -> Vec<Option<(f64, f64)>> {
    let mut times: Vec<(Vec<f64>, Vec<f64>)> = vec![(Vec::new(), Vec::new()); runs.len()];
    for _ in 0..sampling.rounds {
        for ((run, w), (enq, deq)) in runs.iter_mut().zip(workloads).zip(&mut times) {
            if w.1 != Traffic::Backlogged {
                continue;
            }
            for turn in 0..=sampling.per_turn {
                run.until(Op::Dequeue);
                let start = Instant::now();
                for _ in 0..BATCH {
                    run.dequeue();
                }
                let dequeued = Instant::now();
                for _ in 0..BATCH {
                    run.enqueue();
                }
                let enqueued = Instant::now();
                if turn > 0 {
                    deq.push((dequeued - start).as_nanos() as f64 / BATCH as f64);
                    enq.push((enqueued - dequeued).as_nanos() as f64 / BATCH as f64);
                }
            }
        }
    }
    times
        .into_iter()
        .map(|(enq, deq)| (!enq.is_empty()).then(|| (median(enq), median(deq))))
        .collect()
}

/// The measurement of `name` under `traffic`.
fn find<'a>(m: &'a [Measured], name: &str, traffic: Traffic) -> Option<&'a Measured> {
    m.iter().find(|x| x.name == name && x.traffic == traffic)
}

fn per_packet(m: &[Measured], name: &str, traffic: Traffic) -> f64 {
    find(m, name, traffic).map_or(f64::NAN, |x| x.per_packet)
}

/// The paper's claims against our measurements, every one a timing result.
fn checks(m: &[Measured]) -> Vec<Check> {
    use Traffic::{Backlogged, Markov};
    let mut checks = Vec::new();
    // Fig. 13(a): logarithmic complexity, so from 100 to 1 000 sessions the cost grows
    // by at most log 1000 / log 100 = 1.5 (a constant part makes it less).
    let (c100, c1000) = (
        per_packet(m, "flat-100", Markov),
        per_packet(m, "flat-1000", Markov),
    );
    let growth = c1000 / c100;
    checks.push(Check::claim(
        "Markov, flat: per-packet growth from 100 to 1000 sessions",
        "\"increase very little\" (logarithmic time)",
        format!("x{growth:.2} ({c100:.1} -> {c1000:.1} ns)"),
        &[c100, c1000],
        "<= x1.5 (log 1000 / log 100)",
        growth <= 1.5,
    ));
    // Fig. 13(b): linear in the number of levels: each added level adds about the same.
    let (l1, l2, l3) = (
        c1000,
        per_packet(m, "10x100", Markov),
        per_packet(m, "10x10x10", Markov),
    );
    let (d1, d2) = (l2 - l1, l3 - l2);
    checks.push(Check::claim(
        "Markov, 1000 sessions: cost per added level",
        "\"increase linearly with the number of levels\"",
        format!("{d1:+.1} ns (1 -> 2 levels), {d2:+.1} ns (2 -> 3)"),
        &[d1, d2],
        "both steps > 0, their ratio in [0.5, 2]",
        d1 > 0.0 && d2 > 0.0 && (0.5..=2.0).contains(&(d2 / d1)),
    ));
    // All backlogged: the per-packet overhead "changes little" (8.79 against about 9).
    let b1000 = per_packet(m, "flat-1000", Backlogged);
    let ratio = b1000 / c1000;
    checks.push(Check::claim(
        "1000 sessions flat: per-packet cost, all backlogged against Markov",
        "\"changes little\": 8.79 against about 9 µs (x0.98)",
        format!("x{ratio:.2} ({b1000:.1} against {c1000:.1} ns)"),
        &[b1000, c1000],
        "within ±25 %: [0.75, 1.25]",
        (0.75..=1.25).contains(&ratio),
    ));
    // All backlogged, three levels against flat: 11.54 / 8.79.
    let b3 = per_packet(m, "10x10x10", Backlogged);
    checks.push(
        Check {
            paper: "11.54 / 8.79 µs = x1.31".to_owned(),
            ours: format!("x{:.2} ({b3:.1} / {b1000:.1} ns)", b3 / b1000),
            ..Check::relative(
                "all backlogged, 1000 sessions: three levels against flat",
                11.54 / 8.79,
                b3 / b1000,
                0.3,
                "",
            )
        }
        .should(),
    );
    // All backlogged: an arrival at a non-empty queue only appends.
    let b = find(m, "flat-1000", Backlogged);
    let (enq, deq) = (
        b.and_then(|x| x.enqueue).unwrap_or(f64::NAN),
        b.and_then(|x| x.dequeue).unwrap_or(f64::NAN),
    );
    checks.push(Check::claim(
        "all backlogged, 1000 sessions flat: enqueue against dequeue",
        "enqueue \"very small (less than 0.3 µs)\", dequeue about 8.5 µs (< 4 %)",
        format!("{:.1} % ({enq:.1} against {deq:.1} ns)", enq / deq * 100.0),
        &[enq, deq],
        "<= 25 % of the dequeue",
        enq <= 0.25 * deq,
    ));
    checks.into_iter().map(Check::timing).collect()
}

/// The table of every workload: ours per packet beside the paper's where its text
/// gives one.
fn table(m: &[Measured]) -> TextTable {
    let mut t = TextTable {
        header: [
            "hierarchy",
            "levels",
            "sessions",
            "traffic",
            "paper, µs/packet",
            "ours, ns/packet",
            "paper / ours",
            "ours, ns/enqueue",
            "ours, ns/dequeue",
        ]
        .map(str::to_owned)
        .to_vec(),
        ..TextTable::default()
    };
    let opt = |x: Option<f64>| x.map_or("-".to_owned(), |v| format!("{v:.1}"));
    for x in m {
        let paper = paper_us(x.name, x.traffic);
        t.rows.push(vec![
            x.name.to_owned(),
            x.levels.to_string(),
            x.sessions.to_string(),
            traffic_name(x.traffic).to_owned(),
            paper.map_or("in the lost Fig. 13".to_owned(), |p| p.1.to_owned()),
            format!("{:.1}", x.per_packet),
            paper.map_or("-".to_owned(), |p| {
                format!("x{:.0}", p.0 * 1e3 / x.per_packet)
            }),
            opt(x.enqueue),
            opt(x.dequeue),
        ]);
    }
    t
}

fn csv(m: &[Measured]) -> String {
    let mut s = String::from(
        "hierarchy,levels,sessions,traffic,paper_us_per_packet,ns_per_packet,ns_per_enqueue,ns_per_dequeue\n",
    );
    let opt = |x: Option<f64>| x.map_or(String::new(), |v| v.to_string());
    for x in m {
        s.push_str(&format!(
            "{},{},{},{},{},{},{},{}\n",
            x.name,
            x.levels,
            x.sessions,
            traffic_name(x.traffic),
            opt(paper_us(x.name, x.traffic).map(|p| p.0)),
            x.per_packet,
            opt(x.enqueue),
            opt(x.dequeue),
        ));
    }
    s
}

/// Fig. 13(a) and (b) redrawn with our numbers: per-packet cost against sessions (flat)
/// and against levels (1 000 sessions), Markov and backlogged.
fn figures(m: &[Measured]) -> [LineChart; 2] {
    let series = |traffic: Traffic, pick: &dyn Fn(&Measured) -> Option<f64>| {
        let points = m
            .iter()
            .filter(|x| x.traffic == traffic)
            .filter_map(|x| pick(x).map(|at| (at, x.per_packet)))
            .collect();
        let mut s = Series::line(traffic_name(traffic), points).with_dots();
        s.colour = Some(usize::from(traffic == Traffic::Backlogged));
        s
    };
    let mut a = LineChart::new(
        "H-FSC paper Fig. 13(a): overhead against sessions (flat)".to_owned(),
        "sessions (log scale)",
        "ns per packet forwarded (this machine)",
    );
    a.x_axis = Axis {
        scale: Scale::Log10,
        ..Axis::default()
    };
    a.y_axis.include_zero = true;
    let flat = |x: &Measured| (x.levels == 1).then_some(x.sessions as f64);
    a.series = vec![
        series(Traffic::Markov, &flat),
        series(Traffic::Backlogged, &flat),
    ];
    let mut b = LineChart::new(
        "H-FSC paper Fig. 13(b): overhead against levels (1000 sessions)".to_owned(),
        "levels",
        "ns per packet forwarded (this machine)",
    );
    b.y_axis.include_zero = true;
    let thousand = |x: &Measured| (x.sessions == 1000).then_some(x.levels as f64);
    b.series = vec![
        series(Traffic::Markov, &thousand),
        series(Traffic::Backlogged, &thousand),
    ];
    [a, b]
}

/// `linkshare repro hfsc-fig13`.
pub fn fig13(opts: &Options<'_>, out: &mut dyn Write) -> Result<Vec<Check>, ReproError> {
    let conditions = conditions();
    let m = measure(opts.shorten);
    let s = sampling(opts.shorten);
    let (samples, rounds, per_turn) = (s.samples(), s.rounds, s.per_turn);
    write!(
        out,
        "hfsc-fig13: H-FSC paper §VI-C, Fig. 13: H-FSC's overhead against sessions and \
         levels, and with every session backlogged\n\
         Timed on this machine ({conditions}): each workload's loop over {samples} samples of \
         {PACKETS_PER_SAMPLE} packets, the median sample (short samples: most escape \
         preemption on a loaded machine); {rounds} rounds, in each of which every workload \
         takes {per_turn} samples in a row after one that refills the caches and is not \
         counted. Backlogged enqueue and dequeue: the same rounds, over batches of \
         {BATCH} in a row. The shapes are compared, not the values: the paper ran a 200 MHz \
         Pentium Pro.\n\n{}",
        table(&m).render()
    )
    .map_err(stdout_failure)?;
    writeln!(
        out,
        "\nReconstructed: the link rate (1 Gbit/s), the packet lengths (uniform 64-1500 B), \
         the Markov sources' mean burst ({} steps) and peak rate (2 x 0.95 of the share), \
         the backlog of a backlogged session ({BACKLOG} packets); the paper gives none of \
         them.\nReconstructed: the paper's values beside ours are the ones its text quotes; \
         the other points were only in Fig. 13, lost in the text extraction, and are not \
         read off anything.\nReconstructed: the Markov runs' separate enqueue and dequeue \
         times are not measured here (arrivals and departures interleave by time); the \
         `hfsc_fig13` benchmark has them (`cargo bench -p linkshare-core --bench \
         hfsc_fig13 -- --timer tsc`). Classification (the paper's 3 µs) is not part of \
         this study: see `hls-fig12`.",
        linkshare_core::workload::fig13::BURST,
    )
    .map_err(stdout_failure)?;
    let checks = checks(&m);
    verdict::print(out, "hfsc-fig13: the paper's shapes against ours", &checks)?;
    create_dir(opts.out)?;
    let mut written = Written::default();
    written.write(opts.out, "fig13.csv", csv(&m).as_bytes())?;
    let [a, b] = figures(&m);
    written.write(opts.out, "fig13a.svg", a.render().as_bytes())?;
    written.write(opts.out, "fig13b.svg", b.render().as_bytes())?;
    crate::experiment::print_files(out, &written.files)?;
    Ok(checks)
}
