//! The fairness and transmission-gap bounds of HLS and HDRR (`linkshare bounds`) for every link's class tree (HLS paper, Theorems 3–6, computed by
//! [`linkshare_analysis::bounds`]).
//!
//! Weights count as bytes (as in the paper), `L_max` is each leaf's `max_packet`, and
//! HDRR's quantum is the largest leaf `max_packet`, which is what
//! [`linkshare_core::sched::hdrr`] uses. As JSON ([`ScenarioBounds`]), a scenario with one
//! link is one object with the keys `alpha_hls_bytes`, `alpha_hdrr_bytes`, `gap_hls_s`,
//! `gap_hdrr_s`; with several links, an object mapping each link's name (in scenario
//! order) to such an object.

use linkshare_analysis::bounds::{alpha_hdrr, alpha_hls, gap_hdrr, gap_hls, max_packet};
use linkshare_core::hierarchy::ClassTree;
use serde::ser::{Serialize, SerializeMap, Serializer};

use linkshare_sim::config::SimConfig;

use crate::table::TextTable;

/// The four bounds of one class tree.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Bounds {
    /// Theorem 3: HLS is HMM(alpha)-fair with this alpha, bytes per unit of weight.
    pub alpha_hls_bytes: f64,
    /// Theorem 4: the same for HDRR with quantum [`hdrr_quantum`].
    pub alpha_hdrr_bytes: f64,
    /// Theorem 5: the transmission gap of HLS, seconds.
    pub gap_hls_s: f64,
    /// Theorem 6: the transmission gap of HDRR, seconds.
    pub gap_hdrr_s: f64,
}

/// HDRR's quantum for `tree`: the largest leaf `max_packet`, bytes.
pub fn hdrr_quantum(tree: &ClassTree) -> u64 {
    max_packet(tree)
}

/// The bounds of `tree`.
pub fn bounds(tree: &ClassTree) -> Bounds {
    let q = hdrr_quantum(tree);
    Bounds {
        alpha_hls_bytes: alpha_hls(tree),
        alpha_hdrr_bytes: alpha_hdrr(tree, q),
        gap_hls_s: gap_hls(tree),
        gap_hdrr_s: gap_hdrr(tree, q),
    }
}

/// The bounds of every link of a scenario, serialised as `--json` prints them.
#[derive(Debug)]
pub struct ScenarioBounds(pub Vec<(String, Bounds)>);

impl Serialize for ScenarioBounds {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if let [(_, only)] = self.0.as_slice() {
            return only.serialize(s);
        }
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (name, b) in &self.0 {
            map.serialize_entry(name, b)?;
        }
        map.end()
    }
}

/// The bounds of every link of `config`, in link order.
pub fn scenario_bounds(config: &SimConfig) -> ScenarioBounds {
    ScenarioBounds(
        config
            .links
            .iter()
            .map(|l| (l.name.clone(), bounds(&l.classes)))
            .collect(),
    )
}

/// The bounds of the scenario `name` as text: per link, one row per bound with its
/// theorem.
pub fn render(name: &str, config: &SimConfig, all: &ScenarioBounds) -> String {
    let mut out = format!(
        "{}: bounds of HLS and HDRR (HLS paper, §VI-VII); weights count as bytes, L_max is \
         each leaf's max_packet, HDRR's quantum the largest of them\n",
        name
    );
    for (link, (name, b)) in config.links.iter().zip(&all.0) {
        out.push_str(&format!(
            "\nlink `{name}` ({}), HDRR quantum {} B:\n",
            link.rate,
            hdrr_quantum(&link.classes)
        ));
        out.push_str(&table(b).render());
    }
    out
}

/// One row per bound: name, theorem, value, unit.
pub fn table(b: &Bounds) -> TextTable {
    let rows = [
        (
            "alpha(HLS)",
            "Thm. 3",
            format!("{:.4}", b.alpha_hls_bytes),
            "bytes",
        ),
        (
            "alpha(HDRR)",
            "Thm. 4",
            format!("{:.4}", b.alpha_hdrr_bytes),
            "bytes",
        ),
        (
            "gamma(HLS)",
            "Thm. 5",
            format!("{:.4}", b.gap_hls_s * 1e3),
            "ms",
        ),
        (
            "gamma(HDRR)",
            "Thm. 6",
            format!("{:.4}", b.gap_hdrr_s * 1e3),
            "ms",
        ),
    ];
    TextTable {
        groups: Vec::new(),
        header: ["bound", "theorem", "value", "unit"]
            .map(str::to_owned)
            .to_vec(),
        rows: rows
            .into_iter()
            .map(|(n, t, v, u)| vec![n.to_owned(), t.to_owned(), v, u.to_owned()])
            .collect(),
    }
}
