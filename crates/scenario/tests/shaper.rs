//! `[shaper]` and `[[filter]]`: what a shaper configuration becomes, what each mistake
//! reports (located), and that a simulation scenario may carry them.

use std::path::Path;

use linkshare_classify::build::{FrameSpec, IpSpec, build, v4};
use linkshare_classify::frame::proto;
use linkshare_core::hierarchy::ClassId;
use linkshare_core::sched::SchedulerKind;
use linkshare_core::units::{Duration, Rate};
use linkshare_scenario::{PacingMode, load_shaper_str, load_str};

mod common;

const SHAPER: &str = r#"[link]
rate = "100mbit"
scheduler = "htb"

[[class]]
name = "voice"
rate = "10mbit"
priority = 0

[[class]]
name = "bulk"
rate = "50mbit"
ceil = "100mbit"

[shaper]
in = "veth-in"
out = "veth-out"
default = "bulk"
pool = 1024
pacing = "spin"
metrics = "127.0.0.1:9100"

[[filter]]
class = "voice"
protocol = "udp"
dport = "5000-5010"
dst = "10.0.0.0/24"
dscp = [46, 34]
"#;

fn problems(text: &str) -> String {
    load_shaper_str(text, "s.toml", "s")
        .unwrap_err()
        .to_string()
}

#[test]
fn a_shaper_file_loads() {
    let c = load_shaper_str(SHAPER, "s.toml", "s").unwrap();
    assert_eq!(c.name, "s");
    assert_eq!(c.rate, Rate::from_mbit(100));
    assert_eq!(c.scheduler.kind(), SchedulerKind::Htb);
    let s = &c.shaper;
    assert_eq!(s.interfaces.input, "veth-in");
    assert_eq!(s.interfaces.output, "veth-out");
    assert_eq!(s.pool, 1024);
    assert_eq!(s.pacing, PacingMode::Spin);
    assert_eq!(s.spin, Duration::from_micros(50));
    assert_eq!(s.catch_up, Duration::from_millis(2));
    assert_eq!(s.metrics, Some("127.0.0.1:9100".parse().unwrap()));
    assert_eq!(s.default, c.classes.id_of("bulk").unwrap());
    assert_eq!(s.rules.len(), 1);
    let voice = c.classes.id_of("voice").unwrap();
    let mut classifier = s.classifier();
    let frame = |dst: [u8; 4], dscp: u8| {
        build(&FrameSpec {
            ip: Some(IpSpec {
                version: 4,
                src: v4([1, 1, 1, 1]),
                dst: v4(dst),
                protocol: proto::UDP,
                dscp,
                ports: Some((9, 5003)),
                extensions: Vec::new(),
                payload: 50,
            }),
            ..FrameSpec::default()
        })
    };
    assert_eq!(classifier.classify(&frame([10, 0, 0, 7], 34)).class, voice);
    assert_eq!(
        classifier.classify(&frame([10, 0, 0, 7], 0)).class,
        s.default
    );
    assert_eq!(
        classifier.classify(&frame([10, 0, 1, 7], 46)).class,
        s.default
    );
}

#[test]
fn a_single_leaf_is_the_default_and_the_scenario_names_the_run() {
    let text = "[scenario]\nname = \"one\"\nduration = \"1s\"\n[link]\nrate = \"1mbit\"\n[[class]]\nname = \"all\"\n[shaper]\nin = \"a\"\nout = \"b\"\n";
    let c = load_shaper_str(text, "x.toml", "x").unwrap();
    assert_eq!(c.name, "one");
    assert_eq!(c.shaper.default, ClassId(1));
    assert_eq!(c.shaper.pacing, PacingMode::SleepSpin);
}

/// A per-flow template cannot run on a real link: refused at its `per_flow`, with the
/// fix, instead of failing later on the instances' names.
#[test]
fn per_flow_classes_are_refused() {
    let text = SHAPER.replace(
        "name = \"bulk\"\n",
        "name = \"bulk\"\nper_flow = { max_flows = 8, idle = \"1s\" }\n",
    );
    let p = problems(&text);
    assert!(
        p.contains("s.toml:12:12: field `class[1].per_flow`: `bulk` is a per-flow class")
            && p.contains("remove `per_flow`"),
        "{p}"
    );
    assert_eq!(p.lines().count(), 1, "one root cause, one message:\n{p}");
}

#[test]
fn catch_up_is_a_time_of_at_most_100ms() {
    let with = |v: &str| SHAPER.replace("pool = 1024", &format!("pool = 1024\ncatch_up = {v}"));
    let c = load_shaper_str(&with("\"0s\""), "s.toml", "s").unwrap();
    assert_eq!(c.shaper.catch_up, Duration::ZERO);
    let p = problems(&with("\"1s\""));
    assert!(
        p.contains("s.toml:20:12: field `shaper.catch_up`: catching up 1s would send that much of the link at once; give at most \"100ms\""),
        "{p}"
    );
    let p = problems(&with("5"));
    assert!(p.contains("s.toml:20:12: field `shaper.catch_up`:"), "{p}");
}

#[test]
fn mistakes_are_located() {
    let bad = SHAPER
        .replace("out = \"veth-out\"", "out = \"veth-in\"")
        .replace("default = \"bulk\"", "default = \"bluk\"")
        .replace("pacing = \"spin\"", "pacing = \"spinn\"")
        .replace("dport = \"5000-5010\"", "dport = \"5010-5000\"")
        .replace("dst = \"10.0.0.0/24\"", "dst = \"10.0.0.1/24\"")
        .replace("dscp = [46, 34]", "dscp = 64")
        .replace("metrics = \"127.0.0.1:9100\"", "metrics = \"localhost\"");
    let p = problems(&bad);
    for want in [
        "s.toml:17:7: field `shaper.out`: `in` and `out` are the same interface `veth-in`",
        "s.toml:18:11: field `shaper.default`: no class is named `bluk`; name a leaf of [[class]]: voice, bulk",
        "s.toml:20:10: field `shaper.pacing`: unknown pacing mode `spinn`; did you mean `spin`?",
        "s.toml:21:11: field `shaper.metrics`: `localhost` is not an address with a port",
        "s.toml:26:9: field `filter[0].dport`: the port range `5010-5000` is empty",
        "s.toml:27:7: field `filter[0].dst`: `10.0.0.1/24` has bits set past its prefix length; write `10.0.0.0/24`",
        "s.toml:28:8: field `filter[0].dscp`: 64 is out of range",
    ] {
        assert!(p.contains(want), "missing {want:?} in:\n{p}");
    }
}

#[test]
fn filters_name_leaves() {
    let text = SHAPER
        .replace("name = \"voice\"", "name = \"voice\"\nparent = \"rt\"")
        .replace(
            "[[class]]\nname = \"voice\"",
            "[[class]]\nname = \"rt\"\n\n[[class]]\nname = \"voice\"",
        )
        .replace("class = \"voice\"", "class = \"rt\"");
    let p = problems(&text);
    assert!(
        p.contains("field `filter[0].class`: class `rt` has children: only leaves hold packets"),
        "{p}"
    );
}

#[test]
fn what_a_shaper_needs() {
    let no_shaper = SHAPER.split("[shaper]").next().unwrap();
    assert!(problems(no_shaper).contains("field `shaper`: the file has no [shaper] table"));
    let no_default = SHAPER.replace("default = \"bulk\"\n", "");
    assert!(
        problems(&no_default).contains("`[shaper]` has no `default` class"),
        "{}",
        problems(&no_default)
    );
    let bad_if = SHAPER.replace("in = \"veth-in\"", "in = \"a/b\"");
    assert!(problems(&bad_if).contains("\"a/b\" is not a network interface name"));
}

#[test]
fn a_simulation_scenario_may_carry_the_shaper_tables_and_checks_them() {
    let sim = format!(
        "[scenario]\nname = \"t\"\nduration = \"1s\"\n{SHAPER}\n[[flow]]\nname = \"f\"\nclass = \"voice\"\nsource = {{ type = \"cbr\", rate = \"1mbit\", size = \"1000b\" }}\n"
    );
    let s = load_str(&sim, "t.toml", Path::new(".")).unwrap();
    assert_eq!(s.config.links[0].rate, Rate::from_mbit(100));
    let shaper = load_shaper_str(&sim, "t.toml", "t").unwrap();
    assert_eq!(shaper.name, "t");
    let broken = sim.replace("class = \"voice\"\nprotocol", "class = \"nope\"\nprotocol");
    let p = load_str(&broken, "t.toml", Path::new("."))
        .unwrap_err()
        .to_string();
    assert!(
        p.contains("field `filter[0].class`: no class is named `nope`"),
        "{p}"
    );
}

/// A reverse tree beside `SHAPER`, in `dir`.
const REVERSE: &str = r#"[link]
rate = "20mbit"
scheduler = "drr"

[[class]]
name = "acks"
weight = 1

[[class]]
name = "rest"
weight = 3

[shaper]
in = "veth-out"
out = "veth-in"
default = "rest"
pool = 256

[[filter]]
class = "acks"
protocol = "tcp"
"#;

/// Loads `forward` as `dir/s.toml` with `reverse` as `dir/r.toml` beside it.
fn load_pair(
    tag: &str,
    forward: &str,
    reverse: &str,
) -> Result<linkshare_scenario::ShaperConfig, String> {
    let dir = common::TempDir::new(tag);
    dir.file("r.toml", reverse);
    let path = dir.file("s.toml", forward);
    linkshare_scenario::load_shaper_file(&path).map_err(|p| p.to_string())
}

fn with_reverse(forward: &str) -> String {
    forward.replace("[shaper]\n", "[shaper]\nreverse = \"r.toml\"\n")
}

#[test]
fn a_reverse_tree_is_a_second_file_beside_the_first() {
    let c = load_pair("rev-ok", &with_reverse(SHAPER), REVERSE).unwrap();
    let r = c.reverse.as_ref().expect("a reverse tree");
    assert_eq!(r.link.rate, Rate::from_mbit(20));
    assert_eq!(r.link.scheduler.kind(), SchedulerKind::Drr);
    assert_eq!(r.pool, 256);
    assert_eq!(r.link.classes.get(r.default).name(), "rest");
    assert!(r.link.file.ends_with("r.toml"), "{}", r.link.file);
    // Its filters classify by its own classes.
    let tcp = build(&FrameSpec {
        ip: Some(IpSpec {
            version: 4,
            src: v4([10, 0, 0, 2]),
            dst: v4([10, 0, 0, 1]),
            protocol: proto::TCP,
            dscp: 0,
            ports: Some((80, 40000)),
            extensions: Vec::new(),
            payload: 0,
        }),
        ..FrameSpec::default()
    });
    let class = r.classifier().classify(&tcp).class;
    assert_eq!(r.link.classes.get(class).name(), "acks");
    // Without [shaper], a one-leaf reverse tree needs nothing more.
    let one = "[link]\nrate = \"5mbit\"\nscheduler = \"fifo\"\n[[class]]\nname = \"all\"\n";
    let c = load_pair("rev-one", &with_reverse(SHAPER), one).unwrap();
    let r = c.reverse.unwrap();
    assert_eq!(r.link.classes.leaves(), &[r.default]);
    // Without `reverse`, there is none.
    assert!(
        load_pair("rev-none", SHAPER, REVERSE)
            .unwrap()
            .reverse
            .is_none()
    );
}

#[test]
fn reverse_tree_mistakes_are_located_in_its_file() {
    // A bad value in the reverse file: its name, line and column.
    let e = load_pair(
        "rev-bad",
        &with_reverse(SHAPER),
        &REVERSE.replace("rate = \"20mbit\"", "rate = \"20 parsecs\""),
    )
    .unwrap_err();
    assert!(e.contains("r.toml:2:8"), "{e}");
    // Interfaces that are not the forward ones swapped; keys only the forward file sets.
    let e = load_pair(
        "rev-ifaces",
        &with_reverse(SHAPER),
        &REVERSE
            .replace("in = \"veth-out\"", "in = \"eth9\"")
            .replace("pool = 256", "pool = 256\npacing = \"spin\""),
    )
    .unwrap_err();
    assert!(
        e.contains("r.toml:14:6") && e.contains("`in` is `eth9`"),
        "{e}"
    );
    assert!(e.contains("cannot set `pacing`"), "{e}");
    // Several leaves and no default.
    let e = load_pair(
        "rev-default",
        &with_reverse(SHAPER),
        &REVERSE.replace(
            "[shaper]\nin = \"veth-out\"\nout = \"veth-in\"\ndefault = \"rest\"\npool = 256\n",
            "",
        ),
    )
    .unwrap_err();
    assert!(e.contains("no default class"), "{e}");
    // A missing file: located where the forward file names it.
    let e = load_pair(
        "rev-missing",
        &SHAPER.replace("[shaper]\n", "[shaper]\nreverse = \"nope.toml\"\n"),
        REVERSE,
    )
    .unwrap_err();
    assert!(e.contains("s.toml:16:11") && e.contains("nope.toml"), "{e}");
}
