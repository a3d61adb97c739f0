//! The analytic reproductions of the HLS paper: the bounds of its Fig. 1 example
//! (§VI-VII) and its Table II.

use std::io::Write;

use linkshare_analysis::bounds::{gap_hdrr, gap_hls, gap_hls_table2, table2_tree};

use crate::verdict::{self, Check};
use crate::{Options, ReproError, stdout_failure};
use linkshare_report::bounds::{Bounds, bounds};
use linkshare_report::table::TextTable;
use linkshare_report::{Written, create_dir};
use linkshare_scenario::{self as scenario, Scenario};

/// `scenarios/hls-fig1.toml`, embedded.
pub const HLS_FIG1_TOML: &str = include_str!("../../../scenarios/hls-fig1.toml");

/// The Fig. 1 scenario.
pub fn fig1() -> Result<Scenario, ReproError> {
    scenario::load_str(
        HLS_FIG1_TOML,
        "hls-fig1.toml (built in)",
        std::path::Path::new("."),
    )
    .map_err(|p| ReproError::Internal(format!("the built-in hls-fig1 scenario is invalid:\n{p}")))
}

/// The paper's numbers for Fig. 1 (§VI-A and §VII), as printed: alpha(HLS) and
/// alpha(HDRR) in bytes, gamma(HLS) and gamma(HDRR) in ms.
pub const PAPER_FIG1: [&str; 4] = ["103.5", "1522.5", "0.146", "3600"];

/// The paper's Table II: `l`, gamma(HLS) in ms, gamma(HDRR) in ms, as printed.
pub const PAPER_TABLE2: [(u32, &str, &str); 8] = [
    (4, "0.096", "12"),
    (5, "0.19", "120"),
    (6, "0.39", "1200"),
    (7, "0.77", "12000"),
    (8, "1.55", "120002"),
    (9, "3.09", "1200003"),
    (10, "6.18", "12000006"),
    (11, "12.37", "120000012"),
];

/// `ours - paper` and the relative difference in percent.
fn difference(ours: f64, paper: f64) -> String {
    format!(
        "{:+.4} ({:+.2}%)",
        ours - paper,
        (ours - paper) / paper * 100.0
    )
}

/// A number with up to four decimals, trailing zeros removed.
fn num(x: f64) -> String {
    crate::verdict::short(x)
}

/// The number the paper prints as `printed`.
fn value(printed: &str) -> f64 {
    printed.parse().unwrap_or(f64::NAN)
}

/// `hls-bounds`: the four bounds of Fig. 1 beside the paper's.
pub fn hls_bounds(opts: &Options<'_>, out: &mut dyn Write) -> Result<Vec<Check>, ReproError> {
    let s = fig1()?;
    let link = &s.config.links[0];
    let b: Bounds = bounds(&link.classes);
    let ours = [
        b.alpha_hls_bytes,
        b.alpha_hdrr_bytes,
        b.gap_hls_s * 1e3,
        b.gap_hdrr_s * 1e3,
    ];
    let names = [
        ("alpha(HLS)", "Thm. 3", "bytes"),
        ("alpha(HDRR)", "Thm. 4", "bytes"),
        ("gamma(HLS)", "Thm. 5", "ms"),
        ("gamma(HDRR)", "Thm. 6", "ms"),
    ];
    let mut table = TextTable {
        header: ["bound", "theorem", "unit", "paper", "ours", "ours - paper"]
            .map(str::to_owned)
            .to_vec(),
        ..TextTable::default()
    };
    let mut csv = String::from("bound,theorem,unit,paper,ours\n");
    let mut checks = Vec::new();
    for ((name, thm, unit), (paper, ours)) in names.iter().zip(PAPER_FIG1.iter().zip(ours)) {
        table.rows.push(vec![
            (*name).to_owned(),
            (*thm).to_owned(),
            (*unit).to_owned(),
            (*paper).to_owned(),
            num(ours),
            difference(ours, value(paper)),
        ]);
        csv.push_str(&format!("{name},{thm},{unit},{paper},{ours}\n"));
        checks.push(Check::printed(
            &format!("{name} of Fig. 1 ({thm})"),
            paper,
            ours,
            unit,
        ));
    }
    create_dir(opts.out)?;
    let mut written = Written::default();
    written.write(opts.out, "bounds.csv", csv.as_bytes())?;
    writeln!(
        out,
        "hls-bounds: HLS paper §VI-A and §VII, the bounds of HLS and HDRR for the hierarchy \
         of Fig. 1\n(scenarios/hls-fig1.toml: {}, weights = guarantees in Mbit/s counted as \
         bytes, L_max = 1500 B, HDRR quantum {} B)\n",
        link.rate,
        linkshare_report::bounds::hdrr_quantum(&link.classes)
    )
    .and_then(|()| write!(out, "{}", table.render()))
    .and_then(|()| {
        writeln!(
            out,
            "Reconstructed: nothing (the paper gives every parameter of this example)."
        )
    })
    .map_err(stdout_failure)?;
    verdict::print(out, "hls-bounds: paper against ours", &checks)?;
    writeln!(out, "\nfiles written:\n  {}", written.files[0].display()).map_err(stdout_failure)?;
    Ok(checks)
}

/// `hls-table2`: Table II beside Theorems 5 and 6.
pub fn hls_table2(opts: &Options<'_>, out: &mut dyn Write) -> Result<Vec<Check>, ReproError> {
    let mut table = TextTable {
        groups: vec![
            ("gamma(HLS), ms".to_owned(), 2, 4),
            ("gamma(HDRR), ms".to_owned(), 6, 3),
        ],
        header: [
            "l",
            "|L|",
            "paper",
            "Thm. 5",
            "Thm. 5 / 2",
            "paper vs Thm. 5 / 2",
            "paper",
            "Thm. 6",
            "paper vs Thm. 6",
        ]
        .map(str::to_owned)
        .to_vec(),
        ..TextTable::default()
    };
    let mut csv = String::from(
        "levels,leaves,paper_gap_hls_ms,thm5_gap_hls_ms,thm5_half_ms,paper_gap_hdrr_ms,thm6_gap_hdrr_ms\n",
    );
    let mut checks = Vec::new();
    let (mut full_rows, mut half_rows) = (0, 0);
    for (l, paper_hls, paper_hdrr) in PAPER_TABLE2 {
        let tree = table2_tree(l);
        let leaves = tree.leaves().len();
        let full = gap_hls(&tree) * 1e3;
        let half = gap_hls_table2(&tree) * 1e3;
        let hdrr = gap_hdrr(&tree, 1500) * 1e3;
        let (ph, pd) = (value(paper_hls), value(paper_hdrr));
        table.rows.push(vec![
            l.to_string(),
            leaves.to_string(),
            paper_hls.to_owned(),
            format!("{full:.4}"),
            format!("{half:.4}"),
            format!("{:+.2}%", (ph - half) / half * 100.0),
            paper_hdrr.to_owned(),
            format!("{hdrr:.2}"),
            format!("{:+.4}%", (pd - hdrr) / hdrr * 100.0),
        ]);
        csv.push_str(&format!(
            "{l},{leaves},{paper_hls},{full},{half},{paper_hdrr},{hdrr}\n"
        ));
        full_rows += usize::from(Check::printed("", paper_hls, full, "ms").pass);
        let half_check = Check::printed(
            &format!("Table II l = {l}: gamma(HLS) = Thm. 5 without its factor 2"),
            paper_hls,
            half,
            "ms",
        );
        half_rows += usize::from(half_check.pass);
        checks.push(half_check);
        checks.push(Check::printed(
            &format!("Table II l = {l}: gamma(HDRR) = Thm. 6"),
            paper_hdrr,
            hdrr,
            "ms",
        ));
    }
    let rows = PAPER_TABLE2.len();
    checks.insert(
        0,
        Check::claim(
            "Table II gamma(HLS) column = Thm. 5 (as the Fig. 1 example computes it)",
            "Table II, said to follow Thm. 5",
            format!(
                "{full_rows} of {rows} rows match Thm. 5; {half_rows} of {rows} match Thm. 5 / 2"
            ),
            &[full_rows as f64, half_rows as f64],
            "every row within its last printed digit",
            full_rows == rows,
        ),
    );
    create_dir(opts.out)?;
    let mut written = Written::default();
    written.write(opts.out, "table2.csv", csv.as_bytes())?;
    writeln!(
        out,
        "hls-table2: HLS paper Table II, transmission gaps of complete binary trees with l \
         levels (left children weight 3, right children weight 7, L_max = 1500 B, 1 Gbit/s, \
         HDRR quantum 1500 B)\n"
    )
    .and_then(|()| write!(out, "{}", table.render()))
    .and_then(|()| {
        writeln!(
            out,
            "Reconstructed: nothing (the tree is fully specified; the paper prints rounded \
             values). The first check below compares the gamma(HLS) column with Theorem 5 as \
             the paper's Fig. 1 example (0.146 ms, hls-bounds) computes it, with its factor 2; \
             the per-row checks compare it with Theorem 5 without that factor."
        )
    })
    .map_err(stdout_failure)?;
    verdict::print(out, "hls-table2: paper against ours", &checks)?;
    writeln!(out, "\nfiles written:\n  {}", written.files[0].display()).map_err(stdout_failure)?;
    Ok(checks)
}
