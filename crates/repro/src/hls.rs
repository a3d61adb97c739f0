//! The simulated reproductions of the HLS paper's §VIII: Experiments 2 and 3 (Experiment
//! 1 is [`crate::hls_exp1`]).

use std::io::Write;

use linkshare_core::sched::SchedulerKind;

use crate::experiment::{
    Variant, VariantRuns, draw_hierarchy, footer, guarantee_check, header, hmm_fair_check, load,
    print_missing, print_variant, run_scenario, run_variant, schedulers, shorten_times, span,
    variant_dir, variant_prefix,
};
use crate::verdict::{self, Check, Extremes};
use crate::{Options, ReproError, stdout_failure};
use linkshare_report::table::TextTable;
use linkshare_scenario::Edit;

/// The schedulers the paper compares in Experiment 2, plus HDRR (its bounds' baseline).
const EXP12_SCHEDULERS: [&str; 4] = ["hls", "htb", "cbq", "hdrr"];
/// The schedulers of Experiment 3.
const EXP3_SCHEDULERS: [&str; 3] = ["hls", "htb", "cbq"];

/// Experiment 2's variants L, M and H.
pub const EXP2: [Variant; 3] = [
    Variant {
        name: Some("L"),
        file: "hls-exp2-L.toml",
        toml: include_str!("../../../scenarios/hls-exp2-L.toml"),
    },
    Variant {
        name: Some("M"),
        file: "hls-exp2-M.toml",
        toml: include_str!("../../../scenarios/hls-exp2-M.toml"),
    },
    Variant {
        name: Some("H"),
        file: "hls-exp2-H.toml",
        toml: include_str!("../../../scenarios/hls-exp2-H.toml"),
    },
];

/// Experiment 3's scenario.
pub const EXP3: Variant = Variant {
    name: None,
    file: "hls-exp3.toml",
    toml: include_str!("../../../scenarios/hls-exp3.toml"),
};

/// What was chosen where the paper gives nothing, for the HTB and CBQ runs of every
/// experiment.
pub(crate) const CHOSEN: &str = "Chosen here (the paper does not say): every class may borrow up to \
    the link rate (ceil 1 Gbit/s); leaf quantum = rate / 1000 bytes (with tc's default \
    r2q = 10 every quantum would be clamped to 200 000 B); each sending leaf is flooded, \
    as on the paper's testbed: CBR at 1.1 Gbit/s (above the link rate) of 1000 B packets \
    into a queue of 1000 packets (Linux's default pfifo length), which drops the excess; \
    CBQ's top-level cutoff sees the dropped arrivals, as Linux's does.";

/// `hls-exp2`.
pub fn exp2(opts: &Options<'_>, out: &mut dyn Write) -> Result<Vec<Check>, ReproError> {
    let (kinds, missing) = schedulers(&EXP12_SCHEDULERS, opts)?;
    header(
        out,
        &[
            "hls-exp2: HLS paper §VIII-C (Fig. 9): isolation of guarantees. Fig. 1 at \
             1 Gbit/s; A1, B2 and C flooded (1000 B packets), C pauses during [10, 20) s; \
             25 s. Leaf guarantees (Mbit/s) A1/A2/B1/B2: L 140/160/140/160, \
             M 100/200/100/200, H 60/240/60/240 (the paper's table); A 300, B 300, C 400.",
            "Reconstructed: nothing in the setup (the guarantees table survived extraction).",
            CHOSEN,
            "HTB runs a second time per variant (X-r2q10) with the quanta tc derives with its \
             default r2q = 10 (rate in bytes/s / 10, clamped to 200 000 B: the same for every \
             leaf here); the checks say which quanta give the paper's lopsided outcome.",
            "Paper: HLS gives A1 : B2 : C = 3 : 3 : 4 while all send and A1 = B2 = 500 Mbit/s \
             while C pauses, in every variant; HTB and CBQ let the leaf guarantees decide: \
             B2 above A1 while C pauses, more lopsided from L to H.",
        ],
    )?;
    print_missing(out, &missing)?;
    let mut all: Vec<VariantRuns> = Vec::new();
    for variant in EXP2 {
        let dir = variant_dir(opts, &variant);
        let mut v = run_variant(variant, &kinds, opts, &dir)?;
        draw_hierarchy(
            &mut v,
            &dir,
            &format!(
                "hls-exp2 {}: the hierarchy (shaded: leaves with traffic)",
                variant.name.unwrap_or("")
            ),
        )?;
        writeln!(
            out,
            "\nvariant {} ({}):",
            variant.name.unwrap_or(""),
            variant.file
        )
        .map_err(stdout_failure)?;
        print_variant(out, &v)?;
        all.push(v);
    }
    let mut tc = Vec::new();
    if kinds.contains(&SchedulerKind::Htb) {
        for (variant, name) in EXP2.into_iter().zip(R2Q_VARIANTS) {
            let v = run_with_tc_quanta(variant, name, opts)?;
            writeln!(
                out,
                "\nvariant {name} ({}, HTB with the quanta tc derives with r2q = {TC_R2Q}):",
                variant.file
            )
            .map_err(stdout_failure)?;
            print_variant(out, &v)?;
            tc.push(v);
        }
    }
    let both: Vec<&VariantRuns> = all.iter().chain(&tc).collect();
    let isolation = isolation_table(&both);
    writeln!(
        out,
        "\nwhile C pauses, A1 and B2 in Mbit/s (HMM-fair: 500 and 500 in every variant; \
         variants X-r2q10 run HTB with tc's quanta):"
    )
    .and_then(|()| write!(out, "{}", isolation.render()))
    .map_err(stdout_failure)?;
    let mut checks = exp2_checks(&all);
    checks.extend(quantum_checks(&all, &tc));
    all.extend(tc);
    verdict::print(out, "hls-exp2: paper against ours", &checks)?;
    footer(out, &all)?;
    Ok(checks)
}

/// B2 counts as above A1 while C pauses when it gets this fraction of the link more.
const ABOVE: f64 = 0.005;

/// A1's and B2's rates (bit/s) under `kind` in the first interval in which C pauses
/// while A1 and B2 send, if `kind` measured.
fn while_c_pauses(v: &VariantRuns, kind: SchedulerKind) -> Option<(f64, f64)> {
    let tree = v.tree();
    let (a1, b2, c) = (
        tree.id_of("A1")?.index(),
        tree.id_of("B2")?.index(),
        tree.id_of("C")?.index(),
    );
    let k = v
        .reference
        .intervals
        .iter()
        .position(|iv| iv.demand[c] == 0.0 && iv.demand[a1] > 0.0 && iv.demand[b2] > 0.0)?;
    let (_, rates) = v.runs.iter().find(|(k, _)| *k == kind)?;
    let r = rates.as_ref()?;
    Some((r[k][a1], r[k][b2]))
}

/// Experiment 2's checks: HLS HMM-fair in every variant; HTB and CBQ with B2 above A1
/// while C pauses, more so from L to H; CBQ keeping every guarantee.
fn exp2_checks(all: &[VariantRuns]) -> Vec<Check> {
    let mut checks = Vec::new();
    for v in all {
        let link = v.scenario.config.links[0].rate.bps() as f64;
        checks.extend(hmm_fair_check(
            v,
            SchedulerKind::Hls,
            "3 : 3 : 4, then A1 = B2 = 500 Mbit/s",
        ));
        for kind in [SchedulerKind::Htb, SchedulerKind::Cbq] {
            if let Some((a1, b2)) = while_c_pauses(v, kind) {
                checks.push(Check::claim(
                    &format!(
                        "{}{kind} gives B2 more than A1 while C pauses",
                        variant_prefix(v)
                    ),
                    "B2 above A1 (leaf guarantees decide)",
                    format!(
                        "A1 {:.1}, B2 {:.1} Mbit/s (B2 - A1 = {:+.1})",
                        a1 / 1e6,
                        b2 / 1e6,
                        (b2 - a1) / 1e6
                    ),
                    &[a1, b2],
                    &format!("B2 - A1 > {} % of the link", ABOVE * 100.0),
                    b2 - a1 > ABOVE * link,
                ));
            }
        }
        checks.extend(
            guarantee_check(
                v,
                SchedulerKind::Cbq,
                false,
                "CBQ keeps the guarantees (A 300, B 300, C 400 and the leaves')",
            )
            .map(Check::should),
        );
    }
    for kind in [SchedulerKind::Htb, SchedulerKind::Cbq] {
        let gaps: Vec<f64> = all
            .iter()
            .filter_map(|v| while_c_pauses(v, kind).map(|(a1, b2)| b2 - a1))
            .collect();
        if gaps.len() == all.len() && gaps.len() > 1 {
            checks.push(Check::claim(
                &format!("{kind}: B2 - A1 grows from L to M to H"),
                "more lopsided from L to H",
                gaps.iter()
                    .map(|g| format!("{:+.1}", g / 1e6))
                    .collect::<Vec<_>>()
                    .join(", ")
                    + " Mbit/s",
                &gaps,
                "strictly increasing",
                gaps.windows(2).all(|w| w[1] > w[0]),
            ));
        }
    }
    checks
}

/// The names of Experiment 2's variants run with tc's quanta.
const R2Q_VARIANTS: [&str; 3] = ["L-r2q10", "M-r2q10", "H-r2q10"];

/// tc's default `r2q`: HTB's quantum is `rate in bytes/s / r2q`...
const TC_R2Q: u64 = 10;
/// ... clamped by tc to at least 1000 and at most 200 000 bytes.
const TC_QUANTUM: (u64, u64) = (1000, 200_000);

/// `variant` (shortened) with every leaf's quantum the one tc derives from its rate
/// with r2q = 10, run under HTB into `DIR/<name>/`.
fn run_with_tc_quanta(
    variant: Variant,
    name: &'static str,
    opts: &Options<'_>,
) -> Result<VariantRuns, ReproError> {
    let base = load(&variant, 1)?;
    let edits: Vec<Edit> = base.config.links[0]
        .classes
        .leaves()
        .iter()
        .filter_map(|&id| {
            let c = &base.config.links[0].classes.classes()[id.index()];
            let rate = c.spec.rate?;
            let q = (rate.bps() / 8 / TC_R2Q).clamp(TC_QUANTUM.0, TC_QUANTUM.1);
            Some(Edit::new(
                format!("class.{}.quantum", c.name()),
                format!("\"{q}b\""),
            ))
        })
        .collect();
    let mut s = base.with_edits(&edits).map_err(|p| {
        ReproError::Internal(format!(
            "{} with tc's quanta is invalid:\n{p}",
            variant.file
        ))
    })?;
    shorten_times(&mut s.config, opts.shorten);
    let v = Variant {
        name: Some(name),
        ..variant
    };
    run_scenario(v, s, &[SchedulerKind::Htb], opts, &variant_dir(opts, &v))
}

/// Which quanta give the paper's lopsided outcome under HTB: B2 - A1 while C pauses
/// with rate / 1000 and with tc's quanta, per variant.
fn quantum_checks(rate_quanta: &[VariantRuns], tc_quanta: &[VariantRuns]) -> Vec<Check> {
    let mut checks = Vec::new();
    for (a, b) in rate_quanta.iter().zip(tc_quanta) {
        let (Some((a1, b2)), Some((ta1, tb2))) = (
            while_c_pauses(a, SchedulerKind::Htb),
            while_c_pauses(b, SchedulerKind::Htb),
        ) else {
            continue;
        };
        let link = a.scenario.config.links[0].rate.bps() as f64;
        let name = a.variant.name.unwrap_or("");
        checks.push(
            Check::claim(
                &format!("variant {name}: htb with tc's quanta (r2q = {TC_R2Q}) gives B2 more than A1 while C pauses"),
                "B2 above A1 (the paper's Linux HTB)",
                format!(
                    "A1 {:.1}, B2 {:.1} Mbit/s (B2 - A1 = {:+.1}; with rate / 1000: {:+.1})",
                    ta1 / 1e6,
                    tb2 / 1e6,
                    (tb2 - ta1) / 1e6,
                    (b2 - a1) / 1e6
                ),
                &[ta1, tb2, a1, b2],
                &format!("B2 - A1 > {} % of the link", ABOVE * 100.0),
                tb2 - ta1 > ABOVE * link,
            )
            .should(),
        );
    }
    checks
}

/// Per variant and scheduler: A1 and B2 while C pauses, and their difference.
fn isolation_table(all: &[&VariantRuns]) -> TextTable {
    let mut t = TextTable {
        header: [
            "variant",
            "scheduler",
            "A1",
            "B2",
            "B2 - A1",
            "A1 reference",
            "B2 reference",
        ]
        .map(str::to_owned)
        .to_vec(),
        ..TextTable::default()
    };
    for v in all {
        let tree = v.tree();
        let (Some(a1), Some(b2), Some(c)) = (tree.id_of("A1"), tree.id_of("B2"), tree.id_of("C"))
        else {
            continue;
        };
        let (a1, b2, c) = (a1.index(), b2.index(), c.index());
        let Some(k) = v
            .reference
            .intervals
            .iter()
            .position(|iv| iv.demand[c] == 0.0 && iv.demand[a1] > 0.0 && iv.demand[b2] > 0.0)
        else {
            continue;
        };
        let iv = &v.reference.intervals[k];
        for (kind, rates) in &v.runs {
            let cells = match rates {
                Some(r) => [
                    format!("{:.3}", r[k][a1] / 1e6),
                    format!("{:.3}", r[k][b2] / 1e6),
                    format!("{:+.3}", (r[k][b2] - r[k][a1]) / 1e6),
                ],
                None => ["n/a", "n/a", "n/a"].map(str::to_owned),
            };
            let mut row = vec![
                v.variant.name.unwrap_or("").to_owned(),
                kind.name().to_owned(),
            ];
            row.extend(cells);
            row.push(format!("{:.3}", iv.rate[a1] / 1e6));
            row.push(format!("{:.3}", iv.rate[b2] / 1e6));
            t.rows.push(row);
        }
    }
    t
}

/// Two ON periods' rates of a class count as the same allocation when they differ by
/// at most this fraction of the link rate.
const SAME_ALLOCATION: f64 = 0.02;

/// `hls-exp3`.
pub fn exp3(opts: &Options<'_>, out: &mut dyn Write) -> Result<Vec<Check>, ReproError> {
    let (kinds, missing) = schedulers(&EXP3_SCHEDULERS, opts)?;
    header(
        out,
        &[
            "hls-exp3: HLS paper §VIII-D (Figs. 10, 11): A, B1 and C1 send for 4 s and pause \
             for 0.5 s, five times; 1 Gbit/s, sources flooding with 1000 B packets.",
            "Reconstructed: Fig. 10's hierarchy did not survive extraction. From the text \
             (HLS shares 4 : 5 : 5 by the guarantees of A, B, C; C1's parent is guaranteed \
             250 Mbit/s): A 200 (a leaf), B 250, C 250 Mbit/s; ours: B1 50, B2 200, C1 50, \
             C2 200 Mbit/s (B2, C2 idle); 300 Mbit/s of the link is not guaranteed to anyone.",
            CHOSEN,
            "Paper: Linux's CBQ settles into one of two allocations after a pause (A near \
             its guarantee and B1 taking the rest, or B1 at 250 and A taking the rest; C1 \
             at 250), which ns-2's CBQ did not show; HTB's and HLS's allocations are the \
             same in every ON period, HLS's A : B1 : C1 = 4 : 5 : 5.",
            "",
        ],
    )?;
    print_missing(out, &missing)?;
    let dir = variant_dir(opts, &EXP3);
    let mut v = run_variant(EXP3, &kinds, opts, &dir)?;
    draw_hierarchy(
        &mut v,
        &dir,
        "HLS paper Fig. 10 (reconstructed): the hierarchy of hls-exp3, active classes shaded",
    )?;
    print_variant(out, &v)?;
    let (table, mut checks) = on_periods(&v);
    writeln!(
        out,
        "\nrates in each ON period, Mbit/s, and whether every ON period gets the same \
         allocation (each class within {:.0}% of the link rate):",
        SAME_ALLOCATION * 100.0
    )
    .and_then(|()| write!(out, "{}", table.render()))
    .map_err(stdout_failure)?;
    checks.extend(hmm_fair_check(
        &v,
        SchedulerKind::Hls,
        "A : B1 : C1 = 4 : 5 : 5 in every ON period",
    ));
    verdict::print(out, "hls-exp3: paper against ours", &checks)?;
    footer(out, &[v])?;
    Ok(checks)
}

/// The rates of the active classes in every ON period (intervals with a demand), per
/// scheduler, and one check per scheduler: the same allocation in every ON period.
fn on_periods(v: &VariantRuns) -> (TextTable, Vec<Check>) {
    let tree = v.tree();
    let active: Vec<usize> = v
        .shown_classes()
        .into_iter()
        .filter(|&c| tree.classes()[c].is_leaf())
        .collect();
    let periods: Vec<usize> = (0..v.reference.intervals.len())
        .filter(|&k| {
            active
                .iter()
                .any(|&c| v.reference.intervals[k].demand[c] > 0.0)
        })
        .collect();
    let mut t = TextTable {
        header: vec!["ON period".to_owned()],
        ..TextTable::default()
    };
    t.groups.push(("reference".to_owned(), 1, active.len()));
    for &c in &active {
        t.header.push(tree.classes()[c].name().to_owned());
    }
    for (j, (kind, _)) in v.runs.iter().enumerate() {
        t.groups.push((
            kind.name().to_owned(),
            1 + active.len() * (j + 1),
            active.len(),
        ));
        for &c in &active {
            t.header.push(tree.classes()[c].name().to_owned());
        }
    }
    for &k in &periods {
        let iv = &v.reference.intervals[k];
        let mut row = vec![span(iv.start, iv.end)];
        row.extend(active.iter().map(|&c| format!("{:.1}", iv.rate[c] / 1e6)));
        for (_, rates) in &v.runs {
            match rates {
                Some(r) => row.extend(active.iter().map(|&c| format!("{:.1}", r[k][c] / 1e6))),
                None => row.extend(active.iter().map(|_| "n/a".to_owned())),
            }
        }
        t.rows.push(row);
    }
    let link = v.scenario.config.links[0].rate.bps() as f64;
    let checks = v
        .runs
        .iter()
        .filter_map(|(kind, rates)| {
            same_allocation(*kind, rates.as_deref()?, &periods, &active, tree, link)
        })
        .collect();
    (t, checks)
}

/// Whether `kind` gave every class the same rate in every ON period (`None` without
/// at least two ON periods). The paper: HLS and HTB do; Linux's CBQ does not, ns-2's
/// does, and our CBQ follows ns-2's.
fn same_allocation(
    kind: SchedulerKind,
    r: &[Vec<f64>],
    periods: &[usize],
    active: &[usize],
    tree: &linkshare_core::hierarchy::ClassTree,
    link: f64,
) -> Option<Check> {
    if periods.len() < 2 {
        return None;
    }
    let spread: Vec<f64> = active
        .iter()
        .map(|&c| {
            let rates = || periods.iter().map(|&k| r[k][c]);
            rates().largest() - rates().smallest()
        })
        .collect();
    let spreads: Vec<String> = active
        .iter()
        .zip(&spread)
        .map(|(&c, s)| format!("{} {:.1}", tree.classes()[c].name(), s / 1e6))
        .collect();
    let paper = match kind {
        SchedulerKind::Cbq => "ns-2's CBQ: the same in every ON period (Linux's: one of two)",
        _ => "the same in every ON period",
    };
    Some(Check::claim(
        &format!("{kind} gives the same allocation in every ON period"),
        paper,
        format!("largest - smallest, Mbit/s: {}", spreads.join(", ")),
        &spread,
        &format!(
            "every class within {} % of the link",
            SAME_ALLOCATION * 100.0
        ),
        spread.iter().all(|&s| s <= SAME_ALLOCATION * link),
    ))
}
