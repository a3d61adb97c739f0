//! `linkshare tc import` and `linkshare tc export`: files in and out, exit statuses,
//! located messages, and the README's walkthrough (import, validate, run, export).

mod common;

use std::path::Path;

use common::{TempDir, linkshare, scenarios_dir, stderr, stdout};

fn corpus(name: &str) -> String {
    scenarios_dir().join("tc").join(name).display().to_string()
}

#[test]
fn import_validate_run_and_export_a_published_htb_script() {
    let dir = TempDir::new("tc-walkthrough");
    let scenario = dir.path().join("wondershaper.toml");
    let s = scenario.to_str().unwrap();
    let out = linkshare(
        &["tc", "import", &corpus("wondershaper.sh"), "-o", s],
        Path::new("."),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    // tc's warnings about the script, located in the scenario written.
    let err = stderr(&out);
    assert!(
        err.contains("the rates of the children of `1:1` (1:10, 1:20, 1:30) add up to 2.7mbit"),
        "{err}"
    );
    assert!(err.contains(&format!("warning: {s}:")), "{err}");
    let text = std::fs::read_to_string(&scenario).unwrap();
    assert!(
        text.contains("cburst = \"1600b\"  # tc's default: ceil / hz + mtu"),
        "{text}"
    );

    let out = linkshare(&["validate", s], Path::new("."));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("add up to 2.7mbit"),
        "validate warns too"
    );

    let run_dir = dir.path().join("run");
    let out = linkshare(
        &["run", s, "--out", run_dir.to_str().unwrap()],
        Path::new("."),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(run_dir.join("summary.json").exists());

    let out = linkshare(&["tc", "export", s, "--dev", "eth0"], Path::new("."));
    assert!(out.status.success(), "{}", stderr(&out));
    let commands = stdout(&out);
    assert!(
        commands.contains("tc qdisc add dev eth0 root handle 1: htb default 20 r2q 10\n"),
        "{commands}"
    );
    assert!(
        commands.contains(
            "tc class add dev eth0 parent 1:1 classid 1:10 htb rate 1mbit ceil 1mbit burst 6kb \
             cburst 1600b quantum 12500 prio 1\n"
        ),
        "{commands}"
    );
    // Exported commands import back to the same scenario.
    let again = dir.file("again.sh", &commands);
    let out = linkshare(
        &["tc", "import", again.to_str().unwrap(), "-o", s],
        Path::new("."),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text2 = std::fs::read_to_string(&scenario).unwrap();
    // The same scenario; only the comments on defaults are gone (they are explicit in
    // the exported commands).
    let body = |t: &str| {
        let after = t.split("\n[scenario]").nth(1).unwrap();
        after
            .lines()
            .map(|l| l.split("  # ").next().unwrap())
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(body(&text), body(&text2));
}

#[test]
fn untranslated_commands_fail_the_import_unless_partial() {
    let dir = TempDir::new("tc-partial");
    let scenario = dir.path().join("sqm.toml");
    let s = scenario.to_str().unwrap();
    let script = corpus("sqm-simple.sh");
    let out = linkshare(&["tc", "import", &script, "-o", s], Path::new("."));
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "{script}:18:49: not translated: `tc qdisc add dev $IFACE parent 1:11"
        )),
        "{err}"
    );
    assert!(err.contains("3 command(s)"), "{err}");
    assert!(!scenario.exists(), "nothing is written without --partial");
    let out = linkshare(
        &["tc", "import", &script, "-o", s, "--partial"],
        Path::new("."),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&scenario).unwrap();
    assert!(text.contains("# Not translated"), "{text}");
}

#[test]
fn a_syntax_error_is_located() {
    let dir = TempDir::new("tc-syntax");
    let script = dir.file(
        "bad.sh",
        "tc qdisc add dev eth0 root handle 1: htb\ntc class add dev eth0 parent 1: classid 1:1 htb rate \"10mbit\n",
    );
    let out = linkshare(&["tc", "import", script.to_str().unwrap()], Path::new("."));
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.starts_with(&format!(
            "{}:2:54: this double quote is never closed",
            script.display()
        )),
        "{err}"
    );
}

#[test]
fn export_refuses_what_the_kernel_lacks_with_the_closest_equivalent() {
    let s = scenarios_dir().join("shaper/hls-exp2-100mbit.toml");
    let out = linkshare(
        &["tc", "export", s.to_str().unwrap(), "--dev", "eth0"],
        Path::new("."),
    );
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("the kernel has no `hls` qdisc"), "{err}");
    assert!(err.contains("closest: htb"), "{err}");
}
