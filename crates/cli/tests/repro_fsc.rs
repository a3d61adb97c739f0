//! The FSC paper's reproductions, shortened: each prints its verdict table (paper, ours,
//! tolerance, computed verdict) and writes its figures. Whether the paper reproduces is
//! not asserted at this length; the full runs are in the report.

mod common;

use common::{assert_verdicts, repro_shortened as run};

#[test]
fn table1_prints_the_papers_numbers_beside_ours() {
    let (text, dir) = run("fsc-table1", "10");
    assert_verdicts(&text, "fsc-table1: paper against ours");
    for needle in ["21.81 ms", "54.79 ms", "1.66 Mbit/s", "1.67 Mbit/s"] {
        assert!(text.contains(needle), "missing {needle} in\n{text}");
    }
    for f in ["fsc.toml", "pfq.toml"] {
        assert!(dir.path().join("o").join(f).is_file(), "{f}");
    }
}

#[test]
fn onoff_writes_every_figure_and_the_cross_checks() {
    let (text, dir) = run("fsc-onoff", "10");
    assert_verdicts(&text, "fsc-onoff: paper against ours");
    for needle in [
        "X1 PBS 0 = BPR 1",
        "X2 every m2",
        "X4 UDP",
        "32.5 %",
        "33.5 %",
    ] {
        assert!(text.contains(needle), "missing {needle} in\n{text}");
    }
    for fig in ["6a", "6b", "7a", "7b", "8a", "8b", "9a", "9b", "10a", "10b"] {
        let f = dir.path().join("o").join(format!("fig{fig}.svg"));
        assert!(f.is_file(), "{}", f.display());
    }
    let csv = std::fs::read_to_string(dir.path().join("o/fsc-onoff.csv")).unwrap();
    assert!(csv.starts_with("figure,panel,curve,x,mean_burst_delay_ms,ci95_ms"));
}

#[test]
fn www_writes_figures_13_and_14() {
    let (text, dir) = run("fsc-www", "30");
    assert_verdicts(&text, "fsc-www: paper against ours");
    assert!(text.contains("BPR 4, PBS 6000 B"), "{text}");
    for f in ["fig13.svg", "fig14a.svg", "fig14b.svg", "fsc-www.csv"] {
        assert!(dir.path().join("o").join(f).is_file(), "{f}");
    }
}

#[test]
fn exp_and_mix_write_figures_11_and_12() {
    let (text, dir) = run("fsc-exp", "50");
    assert_verdicts(&text, "fsc-exp: paper against ours");
    for f in ["fig11.svg", "fsc-exp.csv"] {
        assert!(dir.path().join("o").join(f).is_file(), "{f}");
    }
    let (text, dir) = run("fsc-mix", "20");
    assert_verdicts(&text, "fsc-mix: paper against ours");
    for f in ["fig12a.svg", "fig12b.svg", "fsc-mix.csv"] {
        assert!(dir.path().join("o").join(f).is_file(), "{f}");
    }
}

#[test]
fn fig1_and_audio_are_computed() {
    let (text, _dir) = run("fsc-fig1-audio", "1");
    assert_verdicts(&text, "fsc-fig1-audio: paper against ours");
    assert!(text.contains("5000000 ns"), "{text}");
}
