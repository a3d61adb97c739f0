//! The FSC paper's ON-OFF experiments (§3.1–3.2, spec E1–E4 and checks X1, X2, X4):
//! average burst delay against PBS with FTP or UDP background (Figs. 6, 7), against PBS
//! for several burst sizes (Fig. 8, with the stated UDP drop rates), against BPR
//! (Fig. 9), and per flow for flows of different burst sizes (Fig. 10).
//!
//! Every point is the mean over `--seeds` runs (the flows' start offsets are random) with
//! its 95 % confidence interval; every run is a generated scenario ([`text`]).

use std::fmt::Write as _;
use std::io::Write;

use linkshare_core::units::{Duration, Instant};
use linkshare_report::Written;
use linkshare_report::svg::{Dash, LineChart, Series};
use linkshare_sim::RunResult;

use crate::fsc_paper::{
    RECONSTRUCTED_COMMON, flow, measured_bursts, ms, scenario_text, simulate, tcp_table,
};
use crate::runner::{Estimate, Job, run_parallel};
use crate::verdict::{self, Check, Extremes};
use crate::{Options, ReproError, stdout_failure};

/// The background flows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Background {
    /// Greedy FTP over TCP.
    Ftp,
    /// Constant-rate UDP, twice the link in all.
    Udp,
}

/// The sizes of the foreground flows' bursts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bursts {
    /// Every flow the same number of packets.
    Same(u32),
    /// Flow `i` (from 1) `4 i` packets (Fig. 10).
    Staggered,
}

/// One configuration of an ON-OFF experiment.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// Foreground over TCP (else UDP).
    pub fg_tcp: bool,
    /// Foreground flows.
    pub n_fg: u32,
    /// Background flows and their kind (none: the unloaded baseline).
    pub bg: Option<(Background, u32)>,
    /// Burst sizes.
    pub bursts: Bursts,
    /// Burst preference ratio.
    pub bpr: u64,
    /// Preferred burst size, packets of 1000 B.
    pub pbs: u32,
    /// Divides every leaf's long-term rate `m2` (check X2: only ratios matter).
    pub scale_down: u64,
}

/// The generated scenario of `c` with `seed`.
pub fn text(c: &Config, seed: u64) -> String {
    let mut s = scenario_text(
        "fsc-onoff",
        20.0,
        seed,
        "10ms",
        c.bpr,
        u64::from(c.pbs) * 1000,
    );
    let n_bg = c.bg.map_or(0, |(_, n)| n);
    let classes = c.n_fg + n_bg;
    let rate = (c.scale_down > 1).then(|| 10_000_000 / u64::from(classes) / c.scale_down);
    let class = |s: &mut String, name: &str| {
        let _ = writeln!(s, "[[class]]\nname = \"{name}\"");
        if let Some(r) = rate {
            let _ = writeln!(s, "rate = \"{r}bit\"");
        }
        s.push('\n');
    };
    for i in 1..=c.n_fg {
        class(&mut s, &format!("fg{i}"));
    }
    for i in 1..=n_bg {
        class(&mut s, &format!("bg{i}"));
    }
    if c.fg_tcp || matches!(c.bg, Some((Background::Ftp, _))) {
        s.push_str(&tcp_table(960, 40));
        s.push('\n');
    }
    // ON-OFF: period 1 s, peak 4 Mbit/s: one 1000 B packet every 2 ms (over TCP one
    // 960 B write every 2 ms, segments of 1000 B on the wire).
    let (size, peak, transport) = if c.fg_tcp {
        ("960b", "3840kbit", "transport = \"tcp\"\n")
    } else {
        ("1000b", "4mbit", "")
    };
    for i in 1..=c.n_fg {
        let k = match c.bursts {
            Bursts::Same(k) => k,
            Bursts::Staggered => 4 * i,
        };
        let _ = writeln!(
            s,
            "[[flow]]\nname = \"fg{i}\"\nclass = \"fg{i}\"\n{transport}source = {{ type = \
             \"periodic-on-off\", burst = {k}, peak = \"{peak}\", period = \"1s\", size = \
             \"{size}\", start_offset = \"500ms\" }}\n"
        );
    }
    if let Some((kind, n)) = c.bg {
        for i in 1..=n {
            match kind {
                Background::Ftp => {
                    let _ = writeln!(
                        s,
                        "[[flow]]\nname = \"bg{i}\"\nclass = \"bg{i}\"\ntransport = \"tcp\"\n\
                         source = {{ type = \"ftp\" }}\n"
                    );
                }
                Background::Udp => {
                    // 20 Mbit/s in all; phases staggered by one packet time / n.
                    let rate = 20_000_000 / u64::from(n);
                    let phase_ns = 8000 * 1_000_000_000 / rate / u64::from(n) * u64::from(i - 1);
                    let _ = writeln!(
                        s,
                        "[[flow]]\nname = \"bg{i}\"\nclass = \"bg{i}\"\n\
                         source = {{ type = \"cbr\", rate = \"{rate}bit\", size = \"1000b\" }}\n\
                         on = [[\"{phase_ns}ns\", \"20s\"]]\n"
                    );
                }
            }
        }
    }
    s
}

/// What one run measured of each foreground flow, and of the background.
#[derive(Clone, Debug, Default)]
pub struct Measured {
    /// Per foreground flow: the sum of its burst delays (ms) and their number.
    pub delays: Vec<(f64, usize)>,
    /// Per foreground flow: packets sent and dropped.
    pub drops: Vec<(u64, u64)>,
    /// Mean delivered rate of a background flow, Mbit/s.
    pub bg_mbit: f64,
    /// Every burst record and the port's totals, to compare runs exactly (X1, X2).
    pub fingerprint: String,
}

impl Measured {
    /// Mean burst delay over every burst of every foreground flow, ms.
    pub fn mean_delay(&self) -> f64 {
        let (s, n) = self
            .delays
            .iter()
            .fold((0.0, 0), |(s, n), &(a, b)| (s + a, n + b));
        s / n.max(1) as f64
    }

    /// Packets dropped over packets sent, over every foreground flow.
    pub fn drop_rate(&self) -> f64 {
        let (s, d) = self
            .drops
            .iter()
            .fold((0, 0), |(s, d), &(a, b)| (s + a, d + b));
        d as f64 / s.max(1) as f64
    }
}

fn measure(result: &RunResult, c: &Config) -> Result<Measured, ReproError> {
    let end = Instant(result.duration.as_nanos());
    let mut m = Measured::default();
    for i in 1..=c.n_fg {
        let f = flow(result, &format!("fg{i}"))?;
        let bursts = measured_bursts(f, end, Duration::from_secs(1));
        m.delays
            .push((bursts.iter().map(|(_, d)| ms(*d)).sum(), bursts.len()));
        m.drops.push((f.sent.packets, f.dropped.packets));
        for (b, _) in &bursts {
            let _ = write!(m.fingerprint, "{b:?};");
        }
    }
    let n_bg = c.bg.map_or(0, |(_, n)| n);
    if n_bg > 0 {
        let mut sum = 0.0;
        for i in 1..=n_bg {
            sum += flow(result, &format!("bg{i}"))?.mean_rate_bps;
        }
        m.bg_mbit = sum / f64::from(n_bg) / 1e6;
    }
    let _ = write!(m.fingerprint, "{:?}", result.links[0].total);
    Ok(m)
}

/// Runs every configuration with `seeds` seeds on every core; per configuration, the
/// runs' measurements in seed order.
pub fn run_all(
    configs: &[Config],
    seeds: u32,
    shorten: u32,
) -> Result<Vec<Vec<Measured>>, ReproError> {
    let mut jobs: Vec<Job<'_, Result<Measured, ReproError>>> = Vec::new();
    for &c in configs {
        for seed in 1..=u64::from(seeds) {
            jobs.push(Box::new(move || {
                let (_, r) = simulate(&text(&c, seed), shorten)?;
                measure(&r, &c)
            }));
        }
    }
    let mut results = run_parallel(jobs).into_iter();
    configs
        .iter()
        .map(|_| {
            (0..seeds)
                .map(|_| results.next().expect("one result per job"))
                .collect()
        })
        .collect()
}

/// The estimate over seeds of `f` of each run.
fn est(runs: &[Measured], f: impl Fn(&Measured) -> f64) -> Estimate {
    Estimate::of(&runs.iter().map(f).collect::<Vec<_>>())
}

/// One curve of a figure: its label, x values, and the runs at each.
struct Curve {
    label: String,
    points: Vec<(f64, Vec<Measured>)>,
}

impl Curve {
    fn means(&self, f: &dyn Fn(&Measured) -> f64) -> Vec<(f64, Estimate)> {
        self.points.iter().map(|(x, r)| (*x, est(r, f))).collect()
    }

    /// The largest relative increase from one x to the next, up to `upto` (inclusive).
    fn worst_increase(&self, upto: f64, f: &dyn Fn(&Measured) -> f64) -> f64 {
        let m: Vec<(f64, f64)> = self
            .means(f)
            .into_iter()
            .filter(|(x, _)| *x <= upto)
            .map(|(x, e)| (x, e.mean))
            .collect();
        m.windows(2).map(|w| (w[1].1 - w[0].1) / w[0].1).largest()
    }

    fn at(&self, x: f64, f: &dyn Fn(&Measured) -> f64) -> f64 {
        self.points
            .iter()
            .find(|(px, _)| *px == x)
            .map_or(f64::NAN, |(_, r)| est(r, f).mean)
    }
}

/// A figure panel: curves over one x axis, written as CSV rows and an SVG chart.
struct Panel {
    name: &'static str,
    title: String,
    x_label: &'static str,
    curves: Vec<Curve>,
    baseline: Option<f64>,
}

impl Panel {
    fn csv(&self, rows: &mut String) {
        for c in &self.curves {
            for (x, runs) in &c.points {
                let d = est(runs, Measured::mean_delay);
                let p = est(runs, Measured::drop_rate);
                let _ = writeln!(
                    rows,
                    "{},{},{x},{:.4},{:.4},{:.6},{:.6},{}",
                    self.name, c.label, d.mean, d.half_width, p.mean, p.half_width, d.n
                );
            }
        }
    }

    fn chart(&self) -> LineChart {
        let mut chart = LineChart::new(&self.title, self.x_label, "average burst delay (ms)");
        chart.y_axis.include_zero = true;
        for (k, c) in self.curves.iter().enumerate() {
            let pts = c
                .means(&Measured::mean_delay)
                .into_iter()
                .map(|(x, e)| (x, e.mean))
                .collect();
            let mut s = Series::line(c.label.clone(), pts);
            s.colour = Some(k);
            chart.series.push(s);
        }
        if let (Some(b), Some(c)) = (self.baseline, self.curves.first()) {
            let xs: Vec<f64> = c.points.iter().map(|(x, _)| *x).collect();
            let (lo, hi) = (
                xs.first().copied().unwrap_or(0.0),
                xs.last().copied().unwrap_or(1.0),
            );
            let mut s = Series::line("baseline (unloaded link)", vec![(lo, b), (hi, b)]);
            s.dash = Some(Dash::Dashed);
            s.colour = Some(7);
            chart.series.push(s);
        }
        chart
    }
}

/// PBS values of Figs. 6 and 7 (packets).
const PBS_E1: [u32; 12] = [0, 2, 4, 6, 8, 10, 12, 14, 16, 20, 24, 32];
/// PBS values of Fig. 8.
const PBS_E2: [u32; 10] = [0, 2, 4, 8, 12, 16, 20, 24, 32, 40];
/// PBS values of Fig. 10.
const PBS_E4: [u32; 10] = [0, 4, 8, 12, 16, 20, 24, 28, 32, 40];
/// Burst sizes of Figs. 8 and 9.
const SIZES: [u32; 4] = [4, 8, 16, 32];

fn base(fg_tcp: bool, bg: Option<(Background, u32)>) -> Config {
    Config {
        fg_tcp,
        n_fg: 16 - bg.map_or(15, |(_, n)| n),
        bg,
        bursts: Bursts::Same(16),
        bpr: 5,
        pbs: 0,
        scale_down: 1,
    }
}

/// Builds the curves of `panels` from one flat list of runs.
fn curves(
    specs: &[(String, Vec<(f64, Config)>)],
    results: &mut impl Iterator<Item = Vec<Measured>>,
) -> Vec<Curve> {
    specs
        .iter()
        .map(|(label, pts)| Curve {
            label: label.clone(),
            points: pts
                .iter()
                .map(|(x, _)| (*x, results.next().expect("one result per configuration")))
                .collect(),
        })
        .collect()
}

/// A panel to run: its name (`a`, `b`), title, figure, and curves (label, points).
type PanelSpec = (&'static str, String, &'static str, Vec<CurveSpec>);

/// A curve to run: its label and its configurations by x value.
type CurveSpec = (String, Vec<(f64, Config)>);

/// `fsc-onoff`: Figs. 6–10 and the cross checks.
pub fn onoff(opts: &Options<'_>, out: &mut dyn Write) -> Result<Vec<Check>, ReproError> {
    crate::experiment::header(
        out,
        &[
            "fsc-onoff: FSC paper Figs. 6-10 (§3.1-3.2): average burst delay of periodic \
             ON-OFF flows (period 1 s, peak 4 Mbit/s, 1000 B packets) against PBS and BPR, \
             with FTP or UDP background, TCP or UDP foreground; 16 flows in all.",
            RECONSTRUCTED_COMMON,
            "Reconstructed (spec E1-E4): background counts 1, 2, 4, 8 (foreground 16 - bg); \
             UDP background 20 Mbit/s in all, phases staggered by one packet time / n; start \
             offsets Exp(0.5 s) mod 1 s per flow and seed; every x value listed in the CSV; \
             burst sizes 4, 8, 16, 32 for Figs. 8-9; BPR 5 unless swept; 20 s runs; a burst \
             begun less than 1 s before the end is left out; a UDP burst with drops is \
             measured to its last delivered packet.",
            &format!(
                "{} seeds per point (mean and 95 % confidence interval in fsc-onoff.csv).",
                opts.seeds
            ),
        ],
    )?;
    // Every configuration, figure by figure, in one list so that all runs share the cores.
    let mut specs: Vec<PanelSpec> = Vec::new();
    for (fig, bg) in [("fig6", Background::Ftp), ("fig7", Background::Udp)] {
        for (panel, tcp) in [("a", true), ("b", false)] {
            let curves = [1u32, 2, 4, 8]
                .iter()
                .map(|&n| {
                    let pts = PBS_E1
                        .iter()
                        .map(|&p| {
                            (
                                f64::from(p),
                                Config {
                                    pbs: p,
                                    ..base(tcp, Some((bg, n)))
                                },
                            )
                        })
                        .collect();
                    (format!("{}/{n}", 16 - n), pts)
                })
                .collect();
            let title = format!(
                "Fig. {}({panel}): {} ON-OFF, {} background",
                &fig[3..],
                if tcp { "TCP" } else { "UDP" },
                if bg == Background::Ftp { "FTP" } else { "UDP" }
            );
            specs.push((if tcp { "a" } else { "b" }, title, fig, curves));
        }
    }
    let udp8 = |tcp: bool| base(tcp, Some((Background::Udp, 8)));
    for (panel, tcp) in [("a", true), ("b", false)] {
        let curves = SIZES
            .iter()
            .map(|&k| {
                let pts = PBS_E2
                    .iter()
                    .map(|&p| {
                        (
                            f64::from(p),
                            Config {
                                pbs: p,
                                bursts: Bursts::Same(k),
                                ..udp8(tcp)
                            },
                        )
                    })
                    .collect();
                (format!("burst {k}"), pts)
            })
            .collect();
        let title = format!(
            "Fig. 8({panel}): {} ON-OFF, burst sizes",
            if tcp { "TCP" } else { "UDP" }
        );
        specs.push((panel, title, "fig8", curves));
    }
    for (panel, tcp) in [("a", true), ("b", false)] {
        let curves = SIZES
            .iter()
            .map(|&k| {
                let pts = (1..=10u64)
                    .map(|b| {
                        (
                            b as f64,
                            Config {
                                bpr: b,
                                pbs: k,
                                bursts: Bursts::Same(k),
                                ..udp8(tcp)
                            },
                        )
                    })
                    .collect();
                (format!("burst {k}, PBS {k}"), pts)
            })
            .collect();
        let title = format!(
            "Fig. 9({panel}): {} ON-OFF, BPR",
            if tcp { "TCP" } else { "UDP" }
        );
        specs.push((panel, title, "fig9", curves));
    }
    for (panel, tcp) in [("a", true), ("b", false)] {
        let pts = PBS_E4
            .iter()
            .map(|&p| {
                (
                    f64::from(p),
                    Config {
                        pbs: p,
                        bursts: Bursts::Staggered,
                        ..udp8(tcp)
                    },
                )
            })
            .collect();
        let title = format!(
            "Fig. 10({panel}): {} ON-OFF, flow i bursts 4i",
            if tcp { "TCP" } else { "UDP" }
        );
        specs.push((panel, title, "fig10", vec![("all flows".to_owned(), pts)]));
    }
    // Baselines (X4) and the cross checks (X1, X2) on Fig. 7(b)'s 8/8 case.
    let alone = |tcp: bool| Config {
        n_fg: 1,
        bg: None,
        ..base(tcp, None)
    };
    let x = udp8(false);
    let extra: Vec<Config> = vec![
        alone(true),
        alone(false),
        Config { pbs: 0, ..x },
        Config {
            pbs: 16,
            bpr: 1,
            ..x
        },
        Config { pbs: 16, ..x },
        Config {
            pbs: 16,
            scale_down: 5,
            ..x
        },
    ];
    let mut all: Vec<Config> = specs
        .iter()
        .flat_map(|(_, _, _, cs)| cs.iter().flat_map(|(_, pts)| pts.iter().map(|(_, c)| *c)))
        .collect();
    all.extend(&extra);
    let mut results = run_all(&all, opts.seeds, opts.shorten)?.into_iter();
    let mut panels: Vec<(&str, Panel)> = Vec::new();
    for (panel, title, fig, cs) in &specs {
        let x_label = if *fig == "fig9" {
            "BPR"
        } else {
            "PBS (packets)"
        };
        panels.push((
            fig,
            Panel {
                name: panel,
                title: title.clone(),
                x_label,
                curves: curves(cs, &mut results),
                baseline: None,
            },
        ));
    }
    let extra: Vec<Vec<Measured>> = results.collect();
    let baseline_tcp = est(&extra[0], Measured::mean_delay).mean;
    let baseline_udp = est(&extra[1], Measured::mean_delay).mean;
    for (fig, p) in &mut panels {
        if fig.starts_with("fig6") || fig.starts_with("fig7") {
            p.baseline = Some(if p.name == "a" {
                baseline_tcp
            } else {
                baseline_udp
            });
        }
    }
    // Files: one CSV for everything, one SVG per panel.
    linkshare_report::create_dir(opts.out)?;
    let mut written = Written::default();
    let mut csv = String::from(
        "figure,panel,curve,x,mean_burst_delay_ms,ci95_ms,drop_rate,drop_rate_ci95,seeds\n",
    );
    for (fig, p) in &panels {
        let mut rows = String::new();
        p.csv(&mut rows);
        for line in rows.lines() {
            let _ = writeln!(csv, "{fig},{line}");
        }
        written.write(
            opts.out,
            &format!("{fig}{}.svg", p.name),
            p.chart().render().as_bytes(),
        )?;
    }
    written.write(opts.out, "fsc-onoff.csv", csv.as_bytes())?;
    // The figures' numbers, briefly.
    let mut text = String::from(
        "\naverage burst delay, ms (mean over seeds), per curve at PBS 0 / 8 / 16 (Figs. 6-8, 10) or BPR 1 / 5 / 10 (Fig. 9):\n",
    );
    for (fig, p) in &panels {
        for c in &p.curves {
            let xs: [f64; 3] = if *fig == "fig9" {
                [1.0, 5.0, 10.0]
            } else {
                [0.0, 8.0, 16.0]
            };
            let d = &Measured::mean_delay;
            let _ = writeln!(
                text,
                "  {:<44} {:<18} {:>8.1} {:>8.1} {:>8.1}   drops {:>5.1}% -> {:>5.1}%",
                p.title,
                c.label,
                c.at(xs[0], d),
                c.at(xs[1], d),
                c.at(xs[2], d),
                c.at(xs[0], &Measured::drop_rate) * 100.0,
                c.at(xs[2], &Measured::drop_rate) * 100.0,
            );
        }
    }
    out.write_all(text.as_bytes()).map_err(stdout_failure)?;
    let checks = checks(&panels, &extra, baseline_tcp, baseline_udp);
    verdict::print(out, "fsc-onoff: paper against ours", &checks)?;
    crate::experiment::print_files(out, &written.files)?;
    Ok(checks)
}

/// The acceptance checks of spec E1-E4 and X1, X2, X4.
fn checks(panels: &[(&str, Panel)], extra: &[Vec<Measured>], b_tcp: f64, b_udp: f64) -> Vec<Check> {
    let d: &dyn Fn(&Measured) -> f64 = &Measured::mean_delay;
    let drop: &dyn Fn(&Measured) -> f64 = &Measured::drop_rate;
    let mut out = Vec::new();
    let find = |fig: &str, panel: &str| {
        panels
            .iter()
            .find(|(f, p)| *f == fig && p.name == panel)
            .map(|(_, p)| p)
    };
    // X4: the unloaded baselines.
    out.push(Check::range(
        "X4 UDP 16-packet burst alone",
        "40.8 ms (derived, spec §2.0)",
        b_udp,
        40.6,
        41.0,
        "ms",
    ));
    out.push(Check::range(
        "X4 TCP 16-packet burst alone",
        "~94 ms (derived)",
        b_tcp,
        89.0,
        99.0,
        "ms",
    ));
    out.push(Check::range(
        "X4 TCP / UDP alone",
        "\"roughly three times\"",
        b_tcp / b_udp,
        2.0,
        3.5,
        "x",
    ));
    // X1: PBS 0 and BPR 1 are both PFQ.
    let same = extra[2]
        .iter()
        .zip(&extra[3])
        .all(|(a, b)| a.fingerprint == b.fingerprint);
    out.push(Check::claim(
        "X1 PBS 0 = BPR 1 (PFQ), Fig. 7(b) 8/8",
        "\"FSC degenerates to PFQ\"",
        if same {
            "identical bursts".into()
        } else {
            "differ".into()
        },
        &[],
        "byte-identical",
        same,
    ));
    // X2: scaling every curve.
    let worst = extra[4]
        .iter()
        .zip(&extra[5])
        .map(|(a, b)| ((a.mean_delay() - b.mean_delay()) / a.mean_delay()).abs())
        .largest();
    let identical = extra[4]
        .iter()
        .zip(&extra[5])
        .all(|(a, b)| a.fingerprint == b.fingerprint);
    out.push(Check::claim(
        "X2 every m2 / 5 changes nothing (PBS 16)",
        "\"scaling ... does not change the service\"",
        if identical {
            "identical bursts".into()
        } else {
            format!("mean delay {:.4} % apart", worst * 100.0)
        },
        // Identical bursts are exact (their fingerprints); otherwise the delays decide.
        if identical {
            &[]
        } else {
            std::slice::from_ref(&worst)
        },
        "identical, or within 0.1 %",
        identical || worst <= 0.001,
    ));
    // E1: Figs. 6 and 7.
    for (fig, panel) in [("fig6", "a"), ("fig6", "b"), ("fig7", "a"), ("fig7", "b")] {
        let Some(p) = find(fig, panel) else { continue };
        let tcp = panel == "a";
        let allow = if tcp { 0.10 } else { 0.05 };
        let worst_up = p.curves.iter().map(|c| c.worst_increase(16.0, d)).largest();
        out.push(Check::claim(
            &format!("{} delay falls with PBS up to 16", p.title),
            "\"the average burst delay decreases as PBS increases\"",
            format!("largest step up {:+.1} %", worst_up * 100.0),
            &[worst_up],
            &format!("no step up above {:.0} %", allow * 100.0),
            worst_up <= allow,
        ));
        let need = if tcp { 0.10 } else { 0.20 };
        for c in p
            .curves
            .iter()
            .filter(|c| c.label == "8/8" || c.label == "12/4")
        {
            let gain = 1.0 - c.at(16.0, d) / c.at(0.0, d);
            out.push(Check::claim(
                &format!("{} {}: FSC (PBS 16) below PFQ", p.title, c.label),
                "\"FSC out-performs PFQ\"",
                format!("{:.1} % lower", gain * 100.0),
                &[gain],
                &format!(">= {:.0} % lower", need * 100.0),
                gain >= need,
            ));
        }
        let flat = p
            .curves
            .iter()
            .flat_map(|c| [20.0, 24.0, 32.0].map(|x| (c.at(x, d) / c.at(16.0, d) - 1.0).abs()))
            .largest();
        out.push(Check::claim(
            &format!("{} flat beyond PBS 16", p.title),
            "\"does not decrease after PBS exceeds the burst size\"",
            format!("largest change {:.1} %", flat * 100.0),
            &[flat],
            &format!("<= {:.0} %", allow * 100.0),
            flat <= allow,
        ));
        let gains: Vec<f64> = p
            .curves
            .iter()
            .map(|c| 1.0 - c.at(16.0, d) / c.at(0.0, d))
            .collect();
        let inversions = gains.windows(2).filter(|w| w[1] < w[0]).count();
        out.push(
            Check::claim(
                &format!("{} improvement grows with background flows", p.title),
                "\"as the number of background flows increases, the relative improvement also increases\"",
                format!("{} (bg 1, 2, 4, 8)", gains.iter().map(|g| format!("{:.0}%", g * 100.0)).collect::<Vec<_>>().join(", ")),
                &gains,
                if tcp { "at most one inversion" } else { "non-decreasing" },
                inversions <= usize::from(tcp),
            )
            .should(),
        );
    }
    // E2: Fig. 8.
    if let Some(p) = find("fig8", "b") {
        if let Some(c) = p.curves.iter().find(|c| c.label == "burst 32") {
            let at = |x: f64| c.at(x, drop) * 100.0;
            out.push(Check::claim(
                "Fig. 8(b) burst 32 drops at PBS 0 >= 15 %",
                "32.5 %",
                format!("{:.1} %", at(0.0)),
                &[at(0.0)],
                ">= 15 %",
                at(0.0) >= 15.0,
            ));
            out.push(Check::claim(
                "Fig. 8(b) burst 32 no drops for PBS >= 20",
                "0 for PBS > 16",
                format!("{:.2} % at 20", at(20.0)),
                &[at(20.0)],
                "<= 0.5 %",
                at(20.0) <= 0.5,
            ));
            out.push(
                Check::range(
                    "Fig. 8(b) burst 32 drops at PBS 0",
                    "32.5 %",
                    at(0.0),
                    22.0,
                    43.0,
                    "%",
                )
                .should(),
            );
            out.push(
                Check::range(
                    "Fig. 8(b) burst 32 drops at PBS 4",
                    "15 %",
                    at(4.0),
                    8.0,
                    25.0,
                    "%",
                )
                .should(),
            );
            out.push(
                Check::range(
                    "Fig. 8(b) burst 32 drops at PBS 8",
                    "1.5 %",
                    at(8.0),
                    0.0,
                    5.0,
                    "%",
                )
                .should(),
            );
        }
    }
    if let Some(p) = find("fig8", "a") {
        let worst_up = p.curves.iter().map(|c| c.worst_increase(40.0, d)).largest();
        out.push(Check::claim(
            "Fig. 8(a) TCP delay falls with PBS, every burst size",
            "\"the average burst delay decreases as PBS increases\"",
            format!("largest step up {:+.1} %", worst_up * 100.0),
            &[worst_up],
            "no step up above 10 %",
            worst_up <= 0.10,
        ));
        let gains: Vec<f64> = p
            .curves
            .iter()
            .map(|c| c.at(0.0, d) - c.at(40.0, d))
            .collect();
        out.push(
            Check::claim(
                "Fig. 8(a) TCP: larger bursts gain more",
                "\"more significant for larger bursts\"",
                format!(
                    "{} ms (4, 8, 16, 32)",
                    gains
                        .iter()
                        .map(|g| format!("{g:.0}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                &gains,
                "increasing",
                gains.windows(2).all(|w| w[1] > w[0]),
            )
            .should(),
        );
    }
    // E3: Fig. 9.
    for panel in ["a", "b"] {
        if let Some(p) = find("fig9", panel) {
            let worst_up = p.curves.iter().map(|c| c.worst_increase(10.0, d)).largest();
            out.push(Check::claim(
                &format!("{} delay falls with BPR", p.title),
                "\"the average burst delay decreases as the BPR increases\"",
                format!("largest step up {:+.1} %", worst_up * 100.0),
                &[worst_up],
                "no step up above 10 %",
                worst_up <= 0.10,
            ));
        }
    }
    // E4: Fig. 10, per flow.
    let per_flow = |m: &Measured, i: usize| m.delays[i].0 / m.delays[i].1.max(1) as f64;
    if let Some(p) = find("fig10", "a") {
        let c = &p.curves[0];
        let worst = (0..8)
            .map(|i| {
                let f = move |m: &Measured| per_flow(m, i);
                c.worst_increase(4.0 * (i + 1) as f64, &f)
            })
            .largest();
        out.push(Check::claim(
            "Fig. 10(a) each TCP flow's delay falls with PBS up to its burst",
            "\"decreases as PBS increases\"",
            format!("largest step up {:+.1} %", worst * 100.0),
            &[worst],
            "no step up above 10 %",
            worst <= 0.10,
        ));
    }
    if let Some(p) = find("fig10", "b") {
        let c = &p.curves[0];
        let f8 = |m: &Measured| m.drops[7].1 as f64 / m.drops[7].0.max(1) as f64 * 100.0;
        out.push(Check::claim(
            "Fig. 10(b) flow 8 drops at PBS 0 >= 15 %",
            "33.5 %",
            format!("{:.1} %", c.at(0.0, &f8)),
            &[c.at(0.0, &f8)],
            ">= 15 %",
            c.at(0.0, &f8) >= 15.0,
        ));
        out.push(Check::claim(
            "Fig. 10(b) flow 8 no drops for PBS >= 16",
            "0",
            format!("{:.2} % at 16", c.at(16.0, &f8)),
            &[c.at(16.0, &f8)],
            "<= 0.5 %",
            c.at(16.0, &f8) <= 0.5,
        ));
        out.push(
            Check::range(
                "Fig. 10(b) flow 8 drops at PBS 0",
                "33.5 %",
                c.at(0.0, &f8),
                23.0,
                44.0,
                "%",
            )
            .should(),
        );
        out.push(
            Check::range(
                "Fig. 10(b) flow 8 drops at PBS 8",
                "15 %",
                c.at(8.0, &f8),
                8.0,
                25.0,
                "%",
            )
            .should(),
        );
        let d8 = |m: &Measured| per_flow(m, 7);
        out.push(
            Check::claim(
                "Fig. 10(b) flow 8 delay rises first (PBS 8 >= PBS 0)",
                "\"actually increases initially\"",
                format!("{:.1} -> {:.1} ms", c.at(0.0, &d8), c.at(8.0, &d8)),
                &[c.at(0.0, &d8), c.at(8.0, &d8)],
                "PBS 8 >= PBS 0",
                c.at(8.0, &d8) >= c.at(0.0, &d8),
            )
            .should(),
        );
    }
    out
}
