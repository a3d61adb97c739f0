//! `fsc-table1`: the FSC paper's Table 1 (§3.5), worst-case back-to-back bursts against a
//! persistent TCP flow: FSC (BPR 5, PBS 10 packets) against PFQ (PBS 0).

use std::fmt::Write as _;
use std::io::Write;

use linkshare_core::units::{Duration, Instant};
use linkshare_report::Written;
use linkshare_sim::RunResult;

use crate::fsc_paper::{
    RECONSTRUCTED_COMMON, flow, measured_bursts, ms, scenario_text, simulate, tcp_table,
};
use crate::runner::{Job, run_parallel};
use crate::verdict::{self, Check};
use crate::{Options, ReproError, stdout_failure};

/// The generated scenario, under FSC with PBS `pbs` bytes (0: PFQ).
fn text(pbs: u64) -> String {
    let mut s = scenario_text("fsc-table1", 20.0, 1, "10ms", 5, pbs);
    s.push_str(
        "# Table 1: one greedy TCP flow and a new UDP flow of 10 packets every 9.6 ms, each\n\
         # in a fresh per-flow class (a new instance; idle 5 ms is far longer than the\n\
         # 8 us its packets take to arrive and far shorter than the 9.6 ms between flows).\n\
         [[class]]\nname = \"tcp\"\n\n[[class]]\nname = \"udp\"\n\
         per_flow = { max_flows = 64, idle = \"5ms\" }\n\n",
    );
    s.push_str(&tcp_table(960, 40));
    s.push_str(
        "\n[[flow]]\nname = \"tcp\"\nclass = \"tcp\"\ntransport = \"tcp\"\n\
         source = { type = \"ftp\" }\n\n[[flow]]\nname = \"udp\"\nclass = \"udp\"\n\
         source = { type = \"periodic-on-off\", burst = 10, peak = \"10gbit\", \
         period = \"9600us\", size = \"1000b\", new_connection = true }\n",
    );
    s
}

/// What one run measured.
struct Row {
    delay_ms: f64,
    bursts: usize,
    tcp_mbit: f64,
    /// Time-average number of UDP flows backlogged, from 0.1 s on.
    backlogged: f64,
    /// Fraction of that time with at most one backlogged.
    at_most_one: f64,
    drops: u64,
    shared_packets: u64,
}

fn measure(result: &RunResult) -> Result<Row, ReproError> {
    let end = Instant(result.duration.as_nanos());
    let udp = flow(result, "udp")?;
    let bursts = measured_bursts(udp, end, Duration::from_micros(9600));
    let delay_ms = bursts.iter().map(|(_, d)| ms(*d)).sum::<f64>() / bursts.len().max(1) as f64;
    let link = &result.links[0];
    let tcp = link
        .classes
        .iter()
        .find(|c| c.name == "tcp")
        .ok_or_else(|| ReproError::Internal("no class `tcp`".into()))?;
    // A flow is backlogged at the port from its first packet's arrival (its sending
    // instant) to its last packet's departure (its arrival less the 10 ms link).
    let from = Instant::from_millis(100);
    let mut edges: Vec<(Instant, i64)> = Vec::new();
    for (b, _) in &bursts {
        let (Some(s), Some(e)) = (b.first_sent, b.completed) else {
            continue;
        };
        let e = Instant(e.as_nanos().saturating_sub(10_000_000));
        if e > from {
            edges.push((s.max(from), 1));
            edges.push((e, -1));
        }
    }
    edges.sort();
    let (mut n, mut last, mut area, mut one) = (0i64, from, 0.0, 0.0);
    for (t, step) in edges {
        let dt = t.since(last).as_secs_f64();
        area += n as f64 * dt;
        if n <= 1 {
            one += dt;
        }
        n += step;
        last = t;
    }
    let span = end.since(from).as_secs_f64();
    one += end.since(last).as_secs_f64();
    Ok(Row {
        delay_ms,
        bursts: bursts.len(),
        tcp_mbit: tcp.mean_rate_bps / 1e6,
        backlogged: area / span,
        at_most_one: one / span,
        drops: link.total.dropped_total().packets,
        shared_packets: link.per_flow.iter().map(|p| p.stats.shared_packets).sum(),
    })
}

/// `fsc-table1`.
pub fn table1(opts: &Options<'_>, out: &mut dyn Write) -> Result<Vec<Check>, ReproError> {
    crate::experiment::header(
        out,
        &[
            "fsc-table1: FSC paper Table 1 (§3.5): one persistent TCP flow and a new UDP flow \
             of ten 1000 B packets every 9.6 ms on 10 Mbit/s; FSC with BPR 5, PBS 10 packets \
             against PFQ (PBS 0).",
            RECONSTRUCTED_COMMON,
            "Reconstructed (spec E7): the TCP flow starts at 0; UDP flow j arrives at 9.6 j ms \
             with its 10 packets at once (at 10 Gbit/s), each a new per-flow instance; 20 s; \
             TCP throughput counts every byte the link carried for it over the whole run.",
            "Reconstructed: deterministic in the paper: one run each (--seeds does not \
             apply). §3.5 fixes the arrival pattern, a new UDP flow every 9.6 ms (the worst \
             case it studies), beside one TCP flow from the start: nothing is drawn at random.",
        ],
    )?;
    let jobs: Vec<Job<'_, Result<(String, RunResult), ReproError>>> = [10_000u64, 0]
        .into_iter()
        .map(|pbs| {
            let shorten = opts.shorten;
            Box::new(move || {
                let t = text(pbs);
                simulate(&t, shorten).map(|(_, r)| (t, r))
            }) as Job<'_, _>
        })
        .collect();
    let runs = run_parallel(jobs);
    let mut rows = Vec::new();
    let mut written = Written::default();
    linkshare_report::create_dir(opts.out)?;
    for (name, run) in ["fsc", "pfq"].into_iter().zip(runs) {
        let (text, result) = run?;
        written.write(opts.out, &format!("{name}.toml"), text.as_bytes())?;
        rows.push(measure(&result)?);
    }
    let (fsc, pfq) = (&rows[0], &rows[1]);
    let mut text = String::from(
        "\nscheduler  bursts  mean burst delay ms  TCP Mbit/s  UDP flows backlogged (mean)  \
         time with <= 1  drops  packets without an instance\n",
    );
    for (name, r) in [("FSC", fsc), ("PFQ", pfq)] {
        let _ = writeln!(
            text,
            "{name:<9}  {:>6}  {:>19.2}  {:>10.3}  {:>27.2}  {:>13.1}%  {:>5}  {:>27}",
            r.bursts,
            r.delay_ms,
            r.tcp_mbit,
            r.backlogged,
            r.at_most_one * 100.0,
            r.drops,
            r.shared_packets
        );
    }
    out.write_all(text.as_bytes()).map_err(stdout_failure)?;
    let ratio = (pfq.delay_ms - 10.0) / (fsc.delay_ms - 10.0);
    let checks = vec![
        Check::relative("FSC average burst delay", 21.81, fsc.delay_ms, 0.15, "ms"),
        Check::relative("PFQ average burst delay", 54.79, pfq.delay_ms, 0.15, "ms"),
        Check::claim(
            "queueing delay PFQ / FSC, (d - 10 ms)",
            "3.79 (\"almost a factor of 4\")",
            format!("{ratio:.2}"),
            &[ratio],
            ">= 3.0",
            ratio >= 3.0,
        ),
        Check::range(
            "FSC TCP throughput",
            "1.66 Mbit/s",
            fsc.tcp_mbit,
            1.58,
            1.75,
            "Mbit/s",
        ),
        Check::range(
            "PFQ TCP throughput",
            "1.67 Mbit/s",
            pfq.tcp_mbit,
            1.58,
            1.75,
            "Mbit/s",
        ),
        Check::claim(
            "|TCP FSC - TCP PFQ|",
            "0.01 Mbit/s",
            format!("{:.3} Mbit/s", (fsc.tcp_mbit - pfq.tcp_mbit).abs()),
            &[fsc.tcp_mbit, pfq.tcp_mbit],
            "<= 0.05 Mbit/s",
            (fsc.tcp_mbit - pfq.tcp_mbit).abs() <= 0.05,
        ),
        Check::claim(
            "FSC: time with at most one UDP flow backlogged",
            "\"only one bursty UDP flow is backlogged at any given time\"",
            format!("{:.1} %", fsc.at_most_one * 100.0),
            &[fsc.at_most_one],
            ">= 95 %",
            fsc.at_most_one >= 0.95,
        )
        .should(),
        Check::range(
            "PFQ: UDP flows backlogged, time average",
            "5 (\"five bursty UDP flows\")",
            pfq.backlogged,
            4.0,
            5.5,
            "flows",
        )
        .should(),
        Check::claim(
            "buffer drops",
            "none (implied)",
            format!("{} FSC, {} PFQ", fsc.drops, pfq.drops),
            &[fsc.drops as f64, pfq.drops as f64],
            "0",
            fsc.drops == 0 && pfq.drops == 0,
        )
        .should(),
    ];
    verdict::print(out, "fsc-table1: paper against ours", &checks)?;
    crate::experiment::print_files(out, &written.files)?;
    Ok(checks)
}
