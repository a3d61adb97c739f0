//! Bounded memory: a run that must take more than the budget is refused before it runs,
//! one that grows past it stops cleanly with its outputs marked incomplete; `--outputs`
//! chooses the files; `--quiet` prints nothing but errors.

mod common;

use common::{TempDir, linkshare, stderr, stdout};

/// The case: one class without a limit, a 1 Tbit/s CBR source into 10 Mbit/s
/// for 20 s. About 2.5 billion packets would pile up: refused before running (status 2),
/// at the class's `limit = "none"`, with the cause and the fix; never killed by the
/// allocator.
#[test]
fn a_queue_that_must_outgrow_the_budget_is_refused_before_running() {
    let dir = TempDir::new("tbit");
    dir.file(
        "t.toml",
        "[scenario]\nname = \"tbit\"\nduration = \"20s\"\n\n[link]\nrate = \"10mbit\"\n\n\
         [[class]]\nname = \"c\"\nlimit = \"none\"\n\n[[flow]]\nname = \"f\"\nclass = \"c\"\n\
         source = { type = \"cbr\", rate = \"1tbit\", size = \"1000b\" }\n",
    );
    let o = linkshare(&["run", "t.toml", "--out", "out"], dir.path());
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with("t.toml:10:9: this run needs at least"),
        "{err}"
    );
    assert!(
        err.contains("class `c`") && err.contains("2499975000 packets"),
        "{err}"
    );
    assert!(
        err.contains("give the class a limit") && err.contains("--max-memory"),
        "{err}"
    );
    assert!(!dir.path().join("out").exists(), "nothing ran");
}

/// A queue shaped below its source's rate grows while the run goes (the estimate cannot
/// know it: the link itself is not overloaded): the run stops at the budget, status 1,
/// with every output so far written and `summary.json` saying where and why.
#[test]
fn a_run_that_grows_past_the_budget_stops_cleanly() {
    let dir = TempDir::new("grows");
    dir.file(
        "t.toml",
        "[scenario]\nname = \"grows\"\nduration = \"20s\"\n\n[link]\nrate = \"10mbit\"\n\
         scheduler = \"htb\"\n\n[[class]]\nname = \"c\"\nrate = \"1mbit\"\nceil = \"1mbit\"\n\
         limit = \"none\"\n\n[[flow]]\nname = \"f\"\nclass = \"c\"\n\
         source = { type = \"cbr\", rate = \"9mbit\", size = \"1000b\" }\n",
    );
    let o = linkshare(
        &["run", "t.toml", "--out", "out", "--max-memory", "1mb"],
        dir.path(),
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("the run stopped early") && err.contains("1.0 MiB"),
        "{err}"
    );
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("out/summary.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(summary["complete"], false);
    let at = summary["stopped"]["at_s"].as_f64().unwrap();
    assert!(at > 0.0 && at < 20.0, "{at}");
    assert!(
        summary["stopped"]["reason"]
            .as_str()
            .unwrap()
            .contains("queued and propagating packets")
    );
    for f in ["throughput.csv", "delay.csv", "throughput.svg"] {
        assert!(dir.path().join("out").join(f).exists(), "{f}");
    }
    // Without the budget the same run completes.
    let o = linkshare(&["run", "t.toml", "--out", "full", "--quiet"], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "", "--quiet prints nothing");
}

#[test]
fn outputs_choose_the_files() {
    let dir = TempDir::new("outputs");
    let scenario = common::scenarios_dir().join("two-classes-drr.toml");
    let scenario = scenario.to_str().unwrap();
    let o = linkshare(
        &[
            "run",
            scenario,
            "--out",
            "a",
            "--outputs",
            "summary,throughput",
            "--quiet",
        ],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let mut names: Vec<String> = std::fs::read_dir(dir.path().join("a"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["summary.json", "throughput.csv"]);
    let o = linkshare(
        &["run", scenario, "--out", "b", "--outputs", "default,-delay"],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(0));
    assert!(!dir.path().join("b/delay.csv").exists());
    assert!(dir.path().join("b/delay_histogram.csv").exists());
    let o = linkshare(
        &["run", scenario, "--outputs", "summary,delays"],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("unknown output `delays`"),
        "{}",
        stderr(&o)
    );
}
