//! The built binary: exit statuses, messages, outputs and determinism.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{TempDir, linkshare, position_of, scenarios_dir, stderr, stdout};

/// Every file under `dir`, by path relative to it, with its bytes.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().display().to_string();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// One CBR flow of 1 Mbit/s in 1000-byte packets on an otherwise idle 10 Mbit/s link:
/// every packet waits for nothing and takes 1000 * 8 / 10^7 s = 0.8 ms to send.
const ISOLATED: &str = r#"[scenario]
name = "isolated"
duration = "2s"
window = "500ms"

[link]
rate = "10mbit"

[[class]]
name = "only"

[[flow]]
name = "cbr"
class = "only"
source = { type = "cbr", rate = "1mbit", size = "1000b" }
"#;

#[test]
fn bad_scenario_exits_2_with_position_field_and_fix() {
    let dir = TempDir::new("bad");
    let text = r#"[scenario]
name = "bad"
duration = "10s"

[link]
rate = "10mbit"

[[class]]
name = "a"
rate = "2mbit"
ceil = "1mbit"

[[class]]
name = "b"
weigth = 2

[[flow]]
name = "f"
class = "a"
source = { type = "cbr", rate = "1mbit", size = "1000b" }
"#;
    let path = dir.file("bad.toml", text);
    for cmd in ["validate", "run"] {
        let o = linkshare(&[cmd, path.to_str().unwrap()], dir.path());
        assert_eq!(o.status.code(), Some(2), "{cmd}: {}", stderr(&o));
        let err = stderr(&o);
        let (l, c) = position_of(text, "\"1mbit\"\n\n");
        let expected = format!(
            "{}:{l}:{c}: field `class[0].ceil`: under scheduler `fifo`, ceil 1mbit is below rate 2mbit; raise ceil to at least rate",
            path.display()
        );
        assert!(err.contains(&expected), "{cmd}: {err}");
        let (l, c) = position_of(text, "weigth");
        let expected = format!(
            "{}:{l}:{c}: field `class[1].weigth`: unknown field `weigth`; did you mean `weight`?",
            path.display()
        );
        assert!(err.contains(&expected), "{cmd}: {err}");
        assert_eq!(err.lines().count(), 2, "one line per problem: {err}");
        assert!(
            !err.contains("panicked") && !err.contains("backtrace"),
            "{err}"
        );
        assert!(
            !dir.path().join("linkshare-out").exists(),
            "nothing written"
        );
    }
}

/// Runs `linkshare args` in `cwd` and checks it exits with status 2 and says `needle`
/// on stderr.
fn exits_2_saying(args: &[&str], cwd: &Path, needle: &str) {
    let o = linkshare(args, cwd);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
}

#[test]
fn usage_and_io_errors_exit_2() {
    let dir = TempDir::new("usage");
    exits_2_saying(&["run"], dir.path(), "");
    exits_2_saying(&["frobnicate"], dir.path(), "");
    exits_2_saying(
        &["validate", "does-not-exist.toml"],
        dir.path(),
        "cannot read the scenario file does-not-exist.toml",
    );
    let path = dir.file("s.toml", ISOLATED);
    let path = path.to_str().unwrap();
    exits_2_saying(
        &["run", path, "--scheduler", "nope"],
        dir.path(),
        "field `--scheduler`: unknown scheduler `nope`; known schedulers: ",
    );
    // The output directory cannot be created inside a file.
    let inside_a_file = format!("{path}/x");
    exits_2_saying(
        &["run", path, "--out", &inside_a_file],
        dir.path(),
        "cannot create the output directory",
    );
    exits_2_saying(
        &["compare", path, "--schedulers", "fifo,fifo"],
        dir.path(),
        "listed twice",
    );
}

#[test]
fn validate_describes_the_scenario() {
    let dir = TempDir::new("validate");
    let o = linkshare(
        &[
            "validate",
            scenarios_dir().join("onoff-mix.toml").to_str().unwrap(),
        ],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    for needle in [
        "├── realtime",
        "│   └── video",
        "└── probe",
        "bulk -> bulk: greedy",
        "on [0s, 8s) [12s, 20s)",
        ": OK",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in\n{out}");
    }
}

/// HTB's quantum of a 64 kbit/s class, 800 bytes from `rate / r2q`, is raised to
/// Linux's minimum of 1000 bytes: `validate` and `run` say so on stderr, as tc does, and
/// succeed.
#[test]
fn validate_and_run_warn_of_clamped_htb_quanta() {
    let dir = TempDir::new("htb-warnings");
    let text = ISOLATED
        .replace("[link]", "[link]\nscheduler = \"htb\"")
        .replace("name = \"only\"", "name = \"only\"\nrate = \"64kbit\"");
    dir.file("h.toml", &text);
    for args in [
        &["validate", "h.toml"][..],
        &["run", "h.toml", "--out", "o"],
    ] {
        let o = linkshare(args, dir.path());
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let err = stderr(&o);
        assert!(
            err.starts_with("warning: h.toml:")
                && err.contains("field `class[0].quantum`: under scheduler `htb`")
                && err.contains("the quantum of class `only` is small")
                && err.contains("HTB uses 1000b")
                && err.contains("give the class its own `quantum`"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn run_writes_exact_outputs() {
    let dir = TempDir::new("run");
    let path = dir.file("s.toml", ISOLATED);
    let o = linkshare(&["run", path.to_str().unwrap()], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = dir.path().join("linkshare-out/isolated");
    let read = |name: &str| std::fs::read_to_string(out.join(name)).unwrap();

    // 2 s at one packet per 8 ms: 250 packets, each delayed exactly 0.8 ms.
    let delay = read("delay.csv");
    let mut lines = delay.lines();
    assert_eq!(
        lines.next(),
        Some("class,flow,arrival_s,departure_s,delay_s")
    );
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 250);
    for (k, row) in rows.iter().enumerate() {
        let sent_ns = k as u64 * 8_000_000;
        let expected = format!(
            "only,cbr,{}.{:09},{}.{:09},0.000800000",
            sent_ns / 1_000_000_000,
            sent_ns % 1_000_000_000,
            (sent_ns + 800_000) / 1_000_000_000,
            (sent_ns + 800_000) % 1_000_000_000
        );
        assert_eq!(*row, expected);
    }

    // 500 ms windows: 62.5 packets sent per window, so windows complete 63, 62, 63, 62
    // packets (the k-th packet completes at 8k + 0.8 ms).
    let throughput = read("throughput.csv");
    let expected: Vec<String> = [(0, 63), (1, 62), (2, 63), (3, 62)]
        .iter()
        .map(|&(w, n)| {
            let bytes = n * 1000;
            format!(
                "{}.{:09},{}.{:09},only,{bytes},{}.000",
                w / 2,
                (w % 2) * 500_000_000,
                (w + 1) / 2,
                ((w + 1) % 2) * 500_000_000,
                bytes * 8 * 2
            )
        })
        .collect();
    let got: Vec<&str> = throughput.lines().skip(1).collect();
    assert_eq!(got, expected);
    assert_eq!(
        throughput.lines().next(),
        Some("window_start_s,window_end_s,class,bytes,rate_bps")
    );

    let summary: serde_json::Value = serde_json::from_str(&read("summary.json")).unwrap();
    assert_eq!(summary["scenario"], "isolated");
    assert_eq!(summary["delay_records"], "per-packet");
    assert_eq!(summary["links"][0]["rate_bps"], 10_000_000);
    let only = &summary["classes"][1];
    assert_eq!(only["name"], "only");
    assert_eq!(only["parent"], "link");
    assert_eq!(only["packets_sent"], 250);
    assert_eq!(only["packets_delivered"], 250);
    assert_eq!(only["bytes_delivered"], 250_000);
    assert_eq!(only["mean_rate_bps"], 1_000_000.0);
    assert_eq!(only["delay_s"]["p99"], 0.0008);
    assert_eq!(only["drops_by_reason"]["class_limit"], 0);
    let keys: Vec<&str> = summary
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let mut expected_keys = [
        "scenario",
        "seed",
        "duration_s",
        "window_s",
        "delay_records",
        "complete",
        "links",
        "classes",
        "flows",
    ];
    expected_keys.sort_unstable();
    let mut sorted_keys = keys.clone();
    sorted_keys.sort_unstable();
    assert_eq!(sorted_keys, expected_keys);
    let text = read("summary.json");
    let order: Vec<usize> = [
        "\"scenario\"",
        "\"seed\"",
        "\"duration_s\"",
        "\"window_s\"",
        "\"delay_records\"",
        "\"complete\"",
        "\"links\"",
        "\"classes\"",
        "\"flows\"",
    ]
    .iter()
    .map(|k| text.find(k).unwrap())
    .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "key order");
    let flow = &summary["flows"][0];
    assert_eq!(
        (flow["name"].as_str(), flow["class"].as_str()),
        (Some("cbr"), Some("only"))
    );
    assert_eq!(flow["packets_sent"], 250);

    // A header, then one row per drop reason of the one class.
    assert_eq!(
        read("drops.csv").lines().count(),
        1 + linkshare_core::DropReason::COUNT
    );
    for svg in ["throughput.svg", "delay_cdf.svg", "backlog.svg"] {
        let s = read(svg);
        assert!(
            s.starts_with("<svg") && s.trim_end().ends_with("</svg>"),
            "{svg}"
        );
    }
    let table = stdout(&o);
    assert!(table.contains("only"), "{table}");
    assert!(table.contains("files written:"), "{table}");
}

#[test]
fn json_summary_on_stdout() {
    let dir = TempDir::new("json");
    let path = dir.file("s.toml", ISOLATED);
    let o = linkshare(
        &[
            "run",
            path.to_str().unwrap(),
            "--json",
            "--seed",
            "9",
            "--out",
            "o",
        ],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["seed"], 9);
    let file = std::fs::read(dir.path().join("o/summary.json")).unwrap();
    assert_eq!(o.stdout, file);
    assert!(stderr(&o).contains("summary.json"));
}

#[test]
fn same_seed_same_bytes() {
    let a = TempDir::new("det-a");
    let b = TempDir::new("det-b");
    let scenario = scenarios_dir().join("onoff-mix.toml");
    for d in [&a, &b] {
        let o = linkshare(
            &[
                "compare",
                scenario.to_str().unwrap(),
                "--schedulers",
                "fifo,prio",
                "--out",
                "out",
            ],
            d.path(),
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    let (fa, fb) = (files(&a.path().join("out")), files(&b.path().join("out")));
    assert!(fa.len() >= 19, "{:?}", fa.keys());
    assert_eq!(fa.keys().collect::<Vec<_>>(), fb.keys().collect::<Vec<_>>());
    for (name, bytes) in &fa {
        assert!(bytes == &fb[name], "{name} differs between two runs");
    }
    // Another seed changes the random traffic.
    let c = TempDir::new("det-c");
    let args = [
        "run",
        scenario.to_str().unwrap(),
        "--seed",
        "8",
        "--scheduler",
        "fifo",
        "--out",
        "out",
    ];
    let o = linkshare(&args, c.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let fc = files(&c.path().join("out"));
    assert_ne!(fc["delay.csv"], fa["fifo/delay.csv"]);
}

#[test]
fn compare_writes_side_by_side() {
    let dir = TempDir::new("compare");
    let path = dir.file("s.toml", ISOLATED);
    let o = linkshare(
        &[
            "compare",
            path.to_str().unwrap(),
            "--schedulers",
            "fifo",
            "--out",
            "c",
        ],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let csv = std::fs::read_to_string(dir.path().join("c/compare.csv")).unwrap();
    assert_eq!(
        csv,
        "class,fifo_rate_bps,fifo_delay_mean_s,fifo_delay_p99_s\nonly,1000000.000,0.000800000,0.000800000\n"
    );
    for f in ["fifo/summary.json", "throughput.svg", "delay_cdf.svg"] {
        assert!(dir.path().join("c").join(f).exists(), "{f}");
    }
    let o = linkshare(
        &[
            "compare",
            path.to_str().unwrap(),
            "--schedulers",
            "fifo",
            "--out",
            "c",
            "--json",
        ],
        dir.path(),
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["runs"][0]["scheduler"], "fifo");
    assert_eq!(
        v["runs"][0]["summary"]["classes"][1]["packets_delivered"],
        250
    );
}

#[test]
fn demo_runs() {
    let dir = TempDir::new("demo");
    let o = linkshare(&["demo", "--out", "d"], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("voice") && out.contains("What to look at"),
        "{out}"
    );
    assert!(dir.path().join("d/compare.csv").exists());
    assert!(dir.path().join("d/fifo/delay.csv").exists());
}

/// `shape --check` loads and describes both trees of a two-way shaper, touching no
/// interface (no root needed); a mistake in the reverse file exits 2, located there.
#[test]
fn shape_check_describes_the_reverse_tree() {
    let dir = TempDir::new("shape-check-reverse");
    let forward = scenarios_dir().join("shaper/two-ways.toml");
    let o = linkshare(&["shape", "--check", forward.to_str().unwrap()], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    for needle in [
        "reverse tree `two-ways-down`",
        "scheduler hfsc",
        "reverse: so -> si at 8mbit, 3 filter(s), default class `bulk`",
        ": OK",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in\n{out}");
    }
    let down = std::fs::read_to_string(scenarios_dir().join("shaper/two-ways-down.toml")).unwrap();
    let bad = down.replace("default = \"bulk\"", "default = \"bulkk\"");
    dir.file("two-ways-down.toml", &bad);
    let fwd = std::fs::read_to_string(&forward).unwrap();
    dir.file("two-ways.toml", &fwd);
    let o = linkshare(&["shape", "--check", "two-ways.toml"], dir.path());
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let (line, col) = position_of(&bad, "\"bulkk\"");
    let err = stderr(&o);
    assert!(
        err.contains(&format!("two-ways-down.toml:{line}:{col}")) && err.contains("bulkk"),
        "{err}"
    );
}
