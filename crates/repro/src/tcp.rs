//! `tcp-fairness`: greedy TCP flows through one bottleneck under FIFO and DRR, the
//! bottleneck's utilisation and Jain's fairness index of the flows' goodputs.
//!
//! No paper gives this experiment; it is the validation criterion of the issue that
//! brought TCP to the simulator: under DRR with one flow per class, greedy TCP flows get
//! equal goodput (Jain's index at least 0.99).

use std::io::Write;

use linkshare_core::sched::SchedulerKind;
use linkshare_sim::RunResult;

use crate::experiment::{
    Variant, VariantRuns, footer, header, print_missing, print_variant, run_variant, schedulers,
    variant_dir,
};
use crate::verdict::{self, Check};
use crate::{Options, ReproError, stdout_failure};
use linkshare_report::flows::Activity;
use linkshare_report::table::TextTable;

/// The schedulers compared.
const SCHEDULERS: [&str; 2] = ["fifo", "drr"];

/// The scenario.
pub const FAIRNESS: Variant = Variant {
    name: None,
    file: "tcp-fairness.toml",
    toml: include_str!("../../../scenarios/tcp-fairness.toml"),
};

/// The smallest Jain's index DRR must reach.
pub const DRR_MIN_JAIN: f64 = 0.99;

/// Jain's fairness index `(Σx)² / (n · Σx²)` of `values`: 1 when all are equal, `1/n`
/// when one takes everything; `None` for no values or all zero.
pub fn jain(values: &[f64]) -> Option<f64> {
    let sum: f64 = values.iter().sum();
    let squares: f64 = values.iter().map(|x| x * x).sum();
    (!values.is_empty() && squares > 0.0).then(|| sum * sum / (values.len() as f64 * squares))
}

/// The utilisation of the bottleneck (the scenario's first link): the bytes whose
/// transmission on it completed (whole packets, TCP/IP headers included; the link's
/// per-packet framing `overhead`, zero in this scenario, is not counted), times 8, over
/// `rate · duration`.
pub fn utilisation(result: &RunResult) -> f64 {
    let Some(link) = result.links.first() else {
        return 0.0;
    };
    let bytes = link.classes.first().map_or(0, |root| root.delivered.bytes);
    let capacity = link.rate.bps() as f64 * result.duration.as_secs_f64();
    if capacity == 0.0 {
        0.0
    } else {
        bytes as f64 * 8.0 / capacity
    }
}

/// Each flow's goodput in bit/s (0 for a flow that delivered nothing), in scenario
/// order.
pub fn goodputs(result: &RunResult) -> Vec<f64> {
    result
        .flows
        .iter()
        .map(|f| Activity::of(f).goodput_bps().unwrap_or(0.0))
        .collect()
}

/// `tcp-fairness`.
pub fn fairness(opts: &Options<'_>, out: &mut dyn Write) -> Result<Vec<Check>, ReproError> {
    let (kinds, missing) = schedulers(&SCHEDULERS, opts)?;
    header(
        out,
        &[
            "tcp-fairness: 8 greedy NewReno flows, one per class, through a 100 Mbit/s \
             bottleneck under fifo and drr.",
            "Chosen (no paper gives it): RTT 20 ms (10 ms each way), buffer 250 packets = C·RTT, \
             MSS 1000 B + 40 B headers, window 100 segments, all starting at 0, 20 s.",
            "Expected: DRR gives equal goodputs, Jain's index >= 0.99 (no paper figure: the \
             issue's validation criterion); FIFO: no paper figure either, whatever it is; \
             utilisation close to 1 since B >= C·RTT.",
            "",
        ],
    )?;
    print_missing(out, &missing)?;
    let dir = variant_dir(opts, &FAIRNESS);
    let v = run_variant(FAIRNESS, &kinds, opts, &dir)?;
    print_variant(out, &v)?;
    write!(out, "\n{}", table(&v).render()).map_err(stdout_failure)?;
    let checks: Vec<Check> = v
        .runs
        .iter()
        .zip(&v.results)
        .filter(|((kind, _), _)| *kind == SchedulerKind::Drr)
        .map(|(_, (_, result))| {
            let j = jain(&goodputs(result)).unwrap_or(0.0);
            Check::at_least(
                "drr: Jain's index of the goodputs",
                "no paper: the simulator's TCP validation criterion",
                j,
                DRR_MIN_JAIN,
                "",
            )
        })
        .collect();
    verdict::print(out, "tcp-fairness: expected against ours", &checks)?;
    footer(out, &[v])?;
    Ok(checks)
}

/// Per scheduler: utilisation, Jain's index against the expectation, and every flow's
/// goodput (Mbit/s).
fn table(v: &VariantRuns) -> TextTable {
    let flows: Vec<String> = v
        .scenario
        .config
        .flows
        .iter()
        .map(|f| format!("{} Mbit/s", f.name))
        .collect();
    let mut t = TextTable {
        header: ["scheduler", "utilisation", "Jain", "expected"]
            .map(str::to_owned)
            .to_vec(),
        ..TextTable::default()
    };
    t.header.extend(flows);
    for ((kind, _), (_, result)) in v.runs.iter().zip(&v.results) {
        let goodputs = goodputs(result);
        let expected = match kind {
            SchedulerKind::Drr => format!(">= {DRR_MIN_JAIN}"),
            _ => "no paper figure".to_owned(),
        };
        let mut row = vec![
            kind.name().to_owned(),
            format!("{:.4}", utilisation(result)),
            jain(&goodputs).map_or_else(|| "-".to_owned(), |j| format!("{j:.4}")),
            expected,
        ];
        row.extend(goodputs.iter().map(|g| format!("{:.3}", g / 1e6)));
        t.rows.push(row);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_of_equal_and_of_one_taker() {
        assert_eq!(jain(&[3.0, 3.0, 3.0, 3.0]), Some(1.0));
        assert_eq!(jain(&[5.0, 0.0, 0.0, 0.0]), Some(0.25));
        // (1 + 2)^2 / (2 · (1 + 4)) = 9 / 10.
        assert!((jain(&[1.0, 2.0]).unwrap() - 0.9).abs() < 1e-12);
        assert_eq!(jain(&[]), None);
        assert_eq!(jain(&[0.0, 0.0]), None);
    }
}
