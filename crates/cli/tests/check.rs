//! FSC's best-effort mode in scenario files (the curves the loader builds, by hand, and
//! its problems), and `linkshare check` / `run`'s admission warnings on the built binary.

mod common;

use std::path::Path;

use common::{TempDir, linkshare, position_of, scenarios_dir};
use linkshare_core::curve::ServiceCurve;
use linkshare_core::units::{Bytes, Duration, Rate};
use linkshare_scenario::{BestEffort, Problem, load_str};

const FLOW: &str = r#"
[[flow]]
name = "f"
class = "a"
source = { type = "cbr", rate = "1mbit", size = "1000b" }
"#;

fn scenario(link: &str, classes: &str) -> String {
    format!("[scenario]\nname = \"t\"\nduration = \"1s\"\n\n[link]\n{link}\n\n{classes}\n{FLOW}")
}

fn problems(text: &str) -> Vec<Problem> {
    match load_str(text, "t.toml", Path::new(".")) {
        Ok(_) => panic!("expected problems in:\n{text}"),
        Err(p) => p.0,
    }
}

/// BPR 4 and PBS 6000 B on 10 Mbit/s. `a` has rate 1.25 Mbit/s: m1 = 5 Mbit/s, and
/// 48 000 bit at 5 Mbit/s take 9.6 ms. `b` (weight 3) and `c` (weight 1) have no rate:
/// their shares among weights 1 + 3 + 1 are 6 and 2 Mbit/s (a's weight, 1, counts), so
/// m1 = 24 Mbit/s, d = 2 ms, and m1 = 8 Mbit/s, d = 6 ms. `c` keeps its `rt` curve.
#[test]
fn best_effort_gives_every_leaf_its_concave_curve() {
    let text = scenario(
        "rate = \"10mbit\"\nscheduler = \"fsc\"\nbest_effort = { bpr = 4, pbs = \"6000b\" }",
        "[[class]]\nname = \"a\"\nrate = \"1250kbit\"\n\
         [[class]]\nname = \"b\"\nweight = 3\n\
         [[class]]\nname = \"c\"\nrt = \"1mbit\"",
    );
    let s = load_str(&text, "t.toml", Path::new(".")).unwrap();
    let tree = &s.config.links[0].classes;
    let ls = |n: &str| tree.get(tree.id_of(n).unwrap()).spec.ls;
    let curve = |m1: u64, d_us: u64, m2: u64| ServiceCurve {
        m1: Rate(m1),
        d: Duration::from_micros(d_us),
        m2: Rate(m2),
    };
    assert_eq!(ls("a"), Some(curve(5_000_000, 9_600, 1_250_000)));
    assert_eq!(ls("b"), Some(curve(24_000_000, 2_000, 6_000_000)));
    assert_eq!(ls("c"), Some(curve(8_000_000, 6_000, 2_000_000)));
    let c = tree.get(tree.id_of("c").unwrap());
    assert_eq!(c.spec.rt, Some(ServiceCurve::linear(Rate::from_mbit(1))));
    assert_eq!(
        s.link_notes[0].best_effort,
        Some(BestEffort {
            bpr: 4,
            pbs: Bytes(6000)
        })
    );
}

/// BPR 1 or PBS 0 is plain fair queueing: straight lines.
#[test]
fn bpr_one_or_pbs_zero_is_a_straight_line() {
    for be in ["{ bpr = 1, pbs = \"6000b\" }", "{ bpr = 5, pbs = \"0b\" }"] {
        let text = scenario(
            &format!("rate = \"10mbit\"\nbest_effort = {be}"),
            "[[class]]\nname = \"a\"\nrate = \"2mbit\"",
        );
        let s = load_str(&text, "t.toml", Path::new(".")).unwrap();
        let tree = &s.config.links[0].classes;
        assert_eq!(
            tree.get(tree.id_of("a").unwrap()).spec.ls,
            Some(ServiceCurve::linear(Rate::from_mbit(2))),
            "{be}"
        );
    }
}

#[test]
fn best_effort_problems_have_positions_and_fixes() {
    let text = scenario(
        "rate = \"10mbit\"\nbest_effort = { bpr = 4, pbs = \"6000b\" }",
        "[[class]]\nname = \"a\"\n[[class]]\nname = \"b\"\nls = \"1mbit\"",
    );
    let ps = problems(&text);
    assert_eq!(ps.len(), 1, "{ps:?}");
    assert_eq!(ps[0].field.as_deref(), Some("class[1].ls"));
    let o = ps[0].origin.as_ref().unwrap();
    assert_eq!((o.line, o.column), position_of(&text, "\"1mbit\""));
    assert!(ps[0].problem.contains("best_effort"), "{}", ps[0].problem);
    assert!(ps[0].fix.contains("remove `ls`"), "{}", ps[0].fix);

    let text = scenario(
        "rate = \"10mbit\"\nbest_effort = { bpr = 0 }",
        "[[class]]\nname = \"a\"",
    );
    let ps = problems(&text);
    let at = |field: &str| {
        let p = ps
            .iter()
            .find(|p| p.field.as_deref() == Some(field))
            .unwrap_or_else(|| panic!("no problem about {field}: {ps:?}"));
        let o = p.origin.as_ref().unwrap();
        (o.line, o.column)
    };
    assert_eq!(ps.len(), 2, "{ps:?}");
    assert_eq!(at("link.best_effort.bpr"), position_of(&text, "0 }"));
    assert_eq!(at("link.best_effort.pbs"), position_of(&text, "{ bpr"));

    let text = scenario(
        "rate = \"10mbit\"\nbest_effort = { bpr = 4, pbs = \"6000b\", m1 = 3 }",
        "[[class]]\nname = \"a\"",
    );
    let ps = problems(&text);
    assert_eq!(ps.len(), 1, "{ps:?}");
    assert!(ps[0].problem.contains("m1"), "{}", ps[0].problem);
}

/// The H-FSC paper's audio and video curves on 10 Mbit/s with 1500 B packets:
/// t_max = 1.2 ms, bounds 5 + 1.2 and 10 + 1.2 ms.
const ADMISSIBLE: &str = r#"[scenario]
name = "av"
duration = "100ms"

[link]
rate = "10mbit"
scheduler = "hfsc"

[[class]]
name = "audio"
rt = { umax = "160b", dmax = "5ms", rate = "64kbit" }

[[class]]
name = "video"
rt = { umax = "8kb", dmax = "10ms", rate = "2mbit" }

[[flow]]
name = "a"
class = "audio"
source = { type = "cbr", rate = "64kbit", size = "160b" }
"#;

#[test]
fn check_prints_delay_bounds_and_exits_0_when_admissible() {
    let dir = TempDir::new("check-ok");
    dir.file("av.toml", ADMISSIBLE);
    let o = linkshare(&["check", "av.toml"], dir.path());
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("verdict: admissible"), "{out}");
    assert!(out.contains("bound (ms)"), "{out}");
    let bounds: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("  audio") || l.starts_with("  video"))
        .filter_map(|l| l.split_whitespace().last())
        .collect();
    assert_eq!(bounds, ["6.2", "11.2"], "{out}");

    let o = linkshare(&["check", "av.toml", "--json"], dir.path());
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["admissible"], true);
    let link = &v["links"][0];
    assert_eq!(link["t_max_ns"], 1_200_000);
    assert_eq!(link["delay_bounds"][0]["class"], "audio");
    assert_eq!(link["delay_bounds"][0]["burst_from"], "umax");
    assert_eq!(link["delay_bounds"][0]["bound_ns"], 6_200_000);
    assert_eq!(link["delay_bounds"][1]["burst_bytes"], 8192);
    assert_eq!(link["delay_bounds"][1]["bound_ns"], 11_200_000);
}

/// Audio and video beside a convex `bulk` curve, flat for 5 ms then 8 Mbit/s, on
/// 10 Mbit/s. At 5 ms the sum is 1280 (audio at 256 kbit/s) + 32 768 (video at
/// 6.5536 Mbit/s) + 0 = 34 048 bit against 50 000; then it rises at 0.064 + 6.5536 + 8 =
/// 14.6176 Mbit/s against 10 and closes the 15 952 bit gap in 15 952 / 4 617 600 s =
/// 3 454 608.5 ns: above the line from 8 454 608 ns (rounded down) on, and, the
/// long-term rates adding up to 10.064 Mbit/s, for ever.
#[test]
fn check_exits_1_and_run_warns_when_not_admissible() {
    let text = ADMISSIBLE.replace(
        "[[flow]]",
        "[[class]]\nname = \"bulk\"\nrt = { m1 = \"0bit\", d = \"5ms\", m2 = \"8mbit\" }\n\n[[flow]]",
    );
    let dir = TempDir::new("check-bad");
    dir.file("bad.toml", &text);
    let o = linkshare(&["check", "bad.toml", "--json"], dir.path());
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["admissible"], false);
    let viol = &v["links"][0]["violations"][0];
    assert_eq!(viol["check"], "rt_above_link");
    assert_eq!(viol["limit"], "link");
    assert_eq!(
        viol["classes"],
        serde_json::json!(["audio", "video", "bulk"])
    );
    assert_eq!(viol["starts_ns"], 8_454_608);
    assert_eq!(viol["until_ns"], serde_json::Value::Null);
    assert!(String::from_utf8_lossy(&o.stderr).contains("not admissible"));

    let o = linkshare(&["check", "bad.toml"], dir.path());
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("VIOLATION") && out.contains("from t = 8454608ns on, for ever"),
        "{out}"
    );

    let o = linkshare(&["run", "bad.toml", "--out", "out"], dir.path());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("warning: link `link`: the rt curves of `audio`, `video`, `bulk`"),
        "{err}"
    );

    dir.file("broken.toml", "[scenario]\n");
    assert_eq!(
        linkshare(&["check", "broken.toml"], dir.path())
            .status
            .code(),
        Some(2)
    );
}

/// The H-FSC paper's classes have delays from 5 ms to 206.088051 ms: each column is in
/// one unit (ms), every value exact, none with its own unit.
#[test]
fn check_prints_each_column_in_one_unit() {
    let dir = TempDir::new("check-units");
    let file = scenarios_dir().join("hfsc-delay.toml");
    let o = linkshare(&["check", file.to_str().unwrap()], dir.path());
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("curve delay (ms)  t_max (ms)  bound (ms)"),
        "{out}"
    );
    let row = |class: &str| -> Vec<String> {
        let line = out
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{class} ")))
            .unwrap_or_else(|| panic!("no row for {class} in {out}"));
        line.split_whitespace().map(str::to_owned).collect()
    };
    assert_eq!(
        row("onoff"),
        [
            "onoff",
            "4096",
            "max_packet",
            "18.204445",
            "6.5536",
            "24.758045"
        ]
    );
    assert_eq!(
        row("audio"),
        ["audio", "160", "umax", "5", "6.5536", "11.5536"]
    );
    assert_eq!(
        row("s1"),
        ["s1", "4096", "max_packet", "327.68", "6.5536", "334.2336"]
    );
}
