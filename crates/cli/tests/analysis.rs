//! `linkshare alloc` and `linkshare bounds` against numbers worked out by hand and the
//! HLS paper's.

mod common;

use common::{TWO_HOPS, TempDir, linkshare, scenarios_dir, stderr, stdout};

fn fig1() -> String {
    std::fs::read_to_string(scenarios_dir().join("hls-fig1.toml")).unwrap()
}

/// `text` with `from` replaced by `to`, which must occur exactly once.
fn edit(text: &str, from: &str, to: &str) -> String {
    assert_eq!(text.matches(from).count(), 1, "{from:?}");
    text.replacen(from, to, 1)
}

/// Fig. 1 with only A1, B2 and C sending, C off during [10, 20) s, 25 s: while all three
/// send, A = 300, B = 300, C = 400 (weights 3 : 3 : 4 of 1000), and A1, B2 get all of
/// their parent's share; while C is off, A and B split 1000 evenly.
#[test]
fn alloc_of_fig1_with_a_schedule() {
    let dir = TempDir::new("alloc");
    let mut text = edit(&fig1(), "duration = \"2s\"", "duration = \"25s\"");
    for leaf in ["A2", "B1"] {
        text = edit(
            &text,
            &format!(
                "[[flow]]\nname = \"{leaf}\"\nclass = \"{leaf}\"\nsource = {{ type = \"greedy\", size = \"1000b\" }}\n"
            ),
            "",
        );
    }
    text = edit(
        &text,
        "name = \"C\"\nclass = \"C\"\nsource = { type = \"greedy\", size = \"1000b\" }\n",
        "name = \"C\"\nclass = \"C\"\nsource = { type = \"greedy\", size = \"1000b\" }\noff = [[\"10s\", \"20s\"]]\n",
    );
    let path = dir.file("s.toml", &text);
    let o = linkshare(&["alloc", path.to_str().unwrap(), "--json"], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let json: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let link = &json["links"][0];
    assert_eq!(link["name"], "link");
    assert_eq!(link["rate_bps"], 1_000_000_000u64);
    let intervals = link["intervals"].as_array().unwrap();
    let spans: Vec<(f64, f64)> = intervals
        .iter()
        .map(|iv| {
            (
                iv["start_s"].as_f64().unwrap(),
                iv["end_s"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(spans, [(0.0, 10.0), (10.0, 20.0), (20.0, 25.0)]);
    let rate = |k: usize, class: &str| -> f64 {
        let c = intervals[k]["classes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == class)
            .unwrap();
        c["rate_bps"].as_f64().unwrap() / 1e6
    };
    let close = |a: f64, b: f64| (a - b).abs() < 1e-6;
    for k in [0, 2] {
        for (class, mbit) in [
            ("A", 300.0),
            ("B", 300.0),
            ("C", 400.0),
            ("A1", 300.0),
            ("A2", 0.0),
            ("B1", 0.0),
            ("B2", 300.0),
            ("link", 1000.0),
        ] {
            assert!(
                close(rate(k, class), mbit),
                "{k} {class}: {}",
                rate(k, class)
            );
        }
    }
    for (class, mbit) in [("A1", 500.0), ("B2", 500.0), ("C", 0.0), ("A", 500.0)] {
        assert!(close(rate(1, class), mbit), "{class}: {}", rate(1, class));
    }
    // Greedy demands are unbounded (null); an idle class demands exactly 0.
    let c_of = |k: usize, name: &str| {
        intervals[k]["classes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .unwrap()
            .clone()
    };
    assert!(c_of(0, "A1")["demand_bps"].is_null());
    assert_eq!(c_of(1, "C")["demand_bps"], 0.0);
    assert_eq!(c_of(0, "A1")["parent"], "A");
    assert_eq!(c_of(0, "link")["parent"], serde_json::Value::Null);

    let o = linkshare(&["alloc", path.to_str().unwrap()], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    for needle in [
        "[0, 10) s",
        "[10, 20) s",
        "[20, 25) s",
        "greedy",
        "500.000",
        "    B2",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
    assert!(!text.contains("-0.000"), "{text}");
}

/// A Poisson and a CBR flow: finite demands below the link are allocated in full, and
/// a demand above its share is cut to the share (weights 1 : 1 of 10 Mbit/s).
#[test]
fn alloc_of_finite_demands() {
    let dir = TempDir::new("alloc-finite");
    let text = r#"[scenario]
name = "finite"
duration = "4s"

[link]
rate = "10mbit"

[[class]]
name = "x"
[[class]]
name = "y"

[[flow]]
name = "p"
class = "x"
source = { type = "poisson", rate = "2mbit", size = "500b" }
on = [["1s", "3s"]]

[[flow]]
name = "c"
class = "y"
source = { type = "cbr", rate = "9mbit", size = "500b" }
"#;
    let path = dir.file("s.toml", text);
    let o = linkshare(&["alloc", path.to_str().unwrap(), "--json"], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let json: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let intervals = json["links"][0]["intervals"].as_array().unwrap();
    let got: Vec<(f64, f64, f64, f64)> = intervals
        .iter()
        .map(|iv| {
            let cs = iv["classes"].as_array().unwrap();
            (
                iv["start_s"].as_f64().unwrap(),
                iv["end_s"].as_f64().unwrap(),
                cs[1]["rate_bps"].as_f64().unwrap(),
                cs[2]["rate_bps"].as_f64().unwrap(),
            )
        })
        .collect();
    // [0, 1): y alone gets its 9; [1, 3): x 2, y the remaining 8; [3, 4): y 9 again.
    assert_eq!(
        got,
        [
            (0.0, 1.0, 0.0, 9e6),
            (1.0, 3.0, 2e6, 8e6),
            (3.0, 4.0, 0.0, 9e6)
        ]
    );
}

#[test]
fn bounds_of_fig1_are_the_papers() {
    let dir = TempDir::new("bounds");
    let path = scenarios_dir().join("hls-fig1.toml");
    let o = linkshare(&["bounds", path.to_str().unwrap(), "--json"], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let json: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let obj = json.as_object().unwrap();
    let keys: Vec<&str> = obj.keys().map(String::as_str).collect();
    let mut expected = [
        "alpha_hls_bytes",
        "alpha_hdrr_bytes",
        "gap_hls_s",
        "gap_hdrr_s",
    ];
    expected.sort_unstable();
    let mut sorted = keys.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, expected);
    // §VI-A: 103.5 B and 1522.5 B. §VII prints 0.146 ms and 3600 ms: Theorem 5 is
    // 2 * (sum of weights 1600 + 5 leaves * 1500) B * 8 / 10^9 bit/s = 0.1456 ms;
    // Theorem 6 is ((1000 * 300 - 1) * 1500 + 5 * 1500) B * 8 / 10^9 = 3600.048 ms
    // (beta of A1 = (300 + 300 + 400) * (100 + 200), quantum 1500 B).
    let get = |k: &str| obj[k].as_f64().unwrap();
    assert!((get("alpha_hls_bytes") - 103.5).abs() < 1e-9);
    assert!((get("alpha_hdrr_bytes") - 1522.5).abs() < 1e-9);
    assert!((get("gap_hls_s") - 0.1456e-3).abs() < 1e-12);
    assert!((get("gap_hdrr_s") - 3.600048).abs() < 1e-9);

    let o = linkshare(&["bounds", path.to_str().unwrap()], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    for needle in [
        "103.5000",
        "1522.5000",
        "0.1456",
        "3600.0480",
        "HDRR quantum 1500 B",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
}

/// With several links, `--json` maps each link's name to its bounds. A link with one
/// leaf has no siblings (alpha 0) and a gap of one L_max at its rate times two for HLS:
/// 2 * (1 + 1500) * 8 / 10^7 s.
#[test]
fn bounds_of_several_links_are_keyed_by_name() {
    let dir = TempDir::new("bounds-links");
    let text = TWO_HOPS;
    let path = dir.file("s.toml", text);
    let o = linkshare(&["bounds", path.to_str().unwrap(), "--json"], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let json: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let names: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(names, ["l1", "l2"]);
    assert_eq!(json["l1"]["alpha_hls_bytes"], 0.0);
    let gap = json["l1"]["gap_hls_s"].as_f64().unwrap();
    assert!((gap - 2.0 * 1501.0 * 8.0 / 1e7).abs() < 1e-15, "{gap}");
    let gap2 = json["l2"]["gap_hls_s"].as_f64().unwrap();
    assert!((gap2 - 2.0 * gap).abs() < 1e-15, "{gap2}");
}
