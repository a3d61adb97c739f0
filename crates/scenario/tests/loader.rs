//! The scenario loader: what valid files become, and what each kind of mistake reports.

mod common;

use std::path::Path;

use common::{TWO_HOPS, TempDir, about, at, load_in, position_of, problems_in, scenarios_dir};
use linkshare_core::buffer::Overflow;
use linkshare_core::curve::ServiceCurve;
use linkshare_core::hierarchy::{ClassId, Limit};
use linkshare_core::sched::SchedulerKind;
use linkshare_core::units::{Bytes, Duration, Instant, Rate};
use linkshare_scenario::{Problem, Problems, Scenario, load_file};
use linkshare_sim::config::{Hop, LinkId, SourceConfig, TraceRecord};

/// A valid scenario: link → parent → {a, b}, and c; one CBR flow into `a`.
const BASE: &str = r#"[scenario]
name = "t"
duration = "10s"

[link]
rate = "10mbit"

[[class]]
name = "parent"

[[class]]
name = "a"
parent = "parent"

[[class]]
name = "b"
parent = "parent"

[[class]]
name = "c"

[[flow]]
name = "f"
class = "a"
source = { type = "cbr", rate = "1mbit", size = "1000b" }
"#;

fn load(text: &str) -> Result<Scenario, Problems> {
    load_in(text, Path::new("."))
}

fn problems(text: &str) -> Vec<Problem> {
    problems_in(text, Path::new("."))
}

#[test]
fn base_builds_the_expected_config() {
    let s = load(BASE).unwrap();
    assert_eq!(s.name, "t");
    let c = &s.config;
    assert_eq!(c.seed, 1);
    assert_eq!(c.duration, Duration::from_secs(10));
    assert_eq!(c.measure.window, Duration::from_millis(200));
    let nodes: Vec<&str> = c.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(nodes, ["src", "dst"]);
    assert_eq!(c.links.len(), 1);
    let l = &c.links[0];
    assert_eq!(l.name, "link");
    assert_eq!(l.rate, Rate(10_000_000));
    assert_eq!((l.from.0, l.to.0), (0, 1));
    assert_eq!(l.scheduler, SchedulerKind::Fifo.into());
    assert_eq!(l.buffer.shared, None);
    assert_eq!(l.delay, Duration::ZERO);
    let names: Vec<&str> = l.classes.classes().iter().map(|c| c.name()).collect();
    assert_eq!(names, ["link", "parent", "a", "b", "c"]);
    assert_eq!(l.classes.leaves(), &[ClassId(2), ClassId(3), ClassId(4)]);
    let f = &c.flows[0];
    assert_eq!(f.name, "f");
    assert_eq!(
        f.route,
        vec![Hop {
            link: LinkId(0),
            class: ClassId(2)
        }]
    );
    assert_eq!(f.schedule.on, vec![(Instant::ZERO, Instant::from_secs(10))]);
    assert!(matches!(
        f.source,
        SourceConfig::Cbr {
            rate: Rate(1_000_000),
            size: 1000
        }
    ));
}

/// tc's default: a leaf without `limit` queues 1 000 packets; `limit = "none"` spelled
/// out is unbounded; interior classes get no limit.
#[test]
fn leaves_get_a_default_limit_unless_none_is_spelled_out() {
    let text = BASE.replace("name = \"b\"", "name = \"b\"\nlimit = \"none\"");
    let s = load(&text).unwrap();
    let tree = &s.config.links[0].classes;
    let limit = |name: &str| tree.get(tree.id_of(name).unwrap()).spec.limit;
    assert_eq!(limit("a"), Some(Limit::Packets(1000)));
    assert_eq!(limit("c"), Some(Limit::Packets(1000)));
    assert_eq!(limit("b"), None);
    assert_eq!(limit("parent"), None);
    let described = linkshare_scenario::describe::describe(&s);
    assert!(described.contains("limit none (unbounded)"), "{described}");
    assert!(described.contains("without `limit` queues at most 1000 packets"));
}

#[test]
fn values_are_exact() {
    let text = BASE
        .replace(
            "[link]\nrate = \"10mbit\"",
            "[link]\nrate = \"10mbit\"\ndelay = \"1.5ms\"\noverhead = \"24b\"\nbuffer = { limit = \"64kb\", overflow = \"push-out\" }",
        )
        .replace(
            "name = \"c\"",
            "name = \"c\"\nrate = \"1.5mbit\"\nceil = \"2mbit\"\nlimit = 10\nmax_packet = \"9000b\"\nquantum = \"3kb\"\nweight = 3\npriority = 7\nrt = { umax = \"160b\", dmax = \"5ms\", rate = \"64kbit\" }\nls = { m1 = \"2mbit\", d = \"10ms\", m2 = \"1mbit\" }\nul = \"3mbit\"",
        )
        .replace("name = \"t\"", "name = \"t\"\nseed = 42\nwindow = \"50ms\"");
    let s = load(&text).unwrap();
    let l = &s.config.links[0];
    assert_eq!(s.config.seed, 42);
    assert_eq!(s.config.measure.window, Duration(50_000_000));
    assert_eq!(l.delay, Duration(1_500_000));
    assert_eq!(l.overhead, Bytes(24));
    assert_eq!(l.buffer.shared, Some(Limit::Bytes(Bytes(65_536))));
    assert_eq!(l.buffer.overflow, Overflow::PushOutLongest);
    let second = load(&text.replace("\"push-out\"", "\"push-out-second\"")).unwrap();
    assert_eq!(
        second.config.links[0].buffer.overflow,
        Overflow::PushOutSecond
    );
    let c = &l.classes.get(ClassId(4)).spec;
    assert_eq!(c.rate, Some(Rate(1_500_000)));
    assert_eq!(c.ceil, Some(Rate(2_000_000)));
    assert_eq!(c.limit, Some(Limit::Packets(10)));
    assert_eq!(c.max_packet, Some(Bytes(9000)));
    assert_eq!(c.quantum, Some(Bytes(3072)));
    assert_eq!((c.weight, c.priority), (Some(3), Some(7)));
    // 160 B within 5 ms is 256 kbit/s for 5 ms, then 64 kbit/s.
    assert_eq!(
        c.rt,
        Some(ServiceCurve {
            m1: Rate(256_000),
            d: Duration::from_millis(5),
            m2: Rate(64_000)
        })
    );
    assert_eq!(
        c.ls,
        Some(ServiceCurve {
            m1: Rate(2_000_000),
            d: Duration::from_millis(10),
            m2: Rate(1_000_000)
        })
    );
    assert_eq!(c.ul, Some(ServiceCurve::linear(Rate(3_000_000))));
}

#[test]
fn every_source_type() {
    let sources = [
        r#"{ type = "poisson", rate = "2mbit", size = "500b" }"#,
        r#"{ type = "periodic-on-off", burst = 4, peak = "10mbit", period = "20ms", size = "1000b" }"#,
        r#"{ type = "exp-on-off", peak = "5mbit", mean_on = "1s", mean_off = "0s", size = "1500b" }"#,
        r#"{ type = "pareto-on-off", peak = "5mbit", mean_on = "100ms", mean_off = "400ms", shape = 1.4, size = "1000b" }"#,
        r#"{ type = "markov2", rates = ["0bit", "5mbit"], mean_sojourn = ["2s", "500ms"], size = "1000b" }"#,
        r#"{ type = "greedy", size = "1500b" }"#,
        r#"{ type = "greedy", size = "1500b", backlog = 7 }"#,
    ];
    let got: Vec<String> = sources
        .iter()
        .map(|src| {
            let text = BASE.replace(r#"{ type = "cbr", rate = "1mbit", size = "1000b" }"#, src);
            format!("{:?}", load(&text).unwrap().config.flows[0].source)
        })
        .collect();
    let expected = [
        SourceConfig::Poisson {
            rate: Rate(2_000_000),
            size: 500,
        },
        SourceConfig::PeriodicOnOff {
            burst: 4,
            peak: Rate(10_000_000),
            period: Duration::from_millis(20),
            size: 1000,
            variations: Default::default(),
        },
        SourceConfig::ExpOnOff {
            peak: Rate(5_000_000),
            mean_on: Duration::from_secs(1),
            mean_off: Duration::ZERO,
            size: 1500,
        },
        SourceConfig::ParetoOnOff {
            peak: Rate(5_000_000),
            mean_on: Duration::from_millis(100),
            mean_off: Duration::from_millis(400),
            shape: 1.4,
            size: 1000,
        },
        SourceConfig::Markov2 {
            rates: [Rate(0), Rate(5_000_000)],
            mean_sojourn: [Duration::from_secs(2), Duration::from_millis(500)],
            size: 1000,
        },
        SourceConfig::Greedy {
            size: 1500,
            backlog: 2,
        },
        SourceConfig::Greedy {
            size: 1500,
            backlog: 7,
        },
    ]
    .map(|s| format!("{s:?}"));
    assert_eq!(got, expected);
}

#[test]
fn hierarchy_errors_point_at_the_field() {
    let text = BASE.replace(
        "name = \"a\"\nparent = \"parent\"",
        "name = \"a\"\nparent = \"parent\"\nrate = \"2mbit\"\nceil = \"1mbit\"",
    );
    let ps = problems(&text);
    let p = about(&ps, "class[1].ceil");
    assert_eq!(at(p), position_of(&text, "\"1mbit\"\n\n"));
    assert_eq!(p.origin.as_ref().unwrap().file.as_ref(), "t.toml");
    assert!(p.problem.contains("ceil 1mbit is below rate 2mbit"), "{p}");
    assert!(p.fix.contains("raise ceil"), "{p}");
    let line = p.to_string();
    let (l, c) = at(p);
    assert!(
        line.starts_with(&format!("t.toml:{l}:{c}: field `class[1].ceil`: ")),
        "{line}"
    );

    let text = BASE.replace(
        "parent = \"parent\"\n\n[[class]]\nname = \"b\"",
        "parent = \"nope\"\n\n[[class]]\nname = \"b\"",
    );
    let ps = problems(&text);
    let p = about(&ps, "class[1].parent");
    assert_eq!(at(p), position_of(&text, "\"nope\""));
}

/// A class with a bad parameter does not hide a flow's mistake: both come out in one
/// pass (the flows are checked against the classes' names and parents).
#[test]
fn flows_are_checked_even_when_a_class_is_wrong() {
    let text = BASE
        .replace(
            "name = \"c\"",
            "name = \"c\"\nrate = \"2mbit\"\nceil = \"1mbit\"",
        )
        .replace("class = \"a\"", "class = \"parent\"");
    let ps = problems(&text);
    about(&ps, "class[3].ceil");
    let p = about(&ps, "flow[0].class");
    assert!(p.problem.contains("`parent` is not a leaf"), "{p}");
    assert!(p.fix.contains("a, b"), "{p}");
}

#[test]
fn unknown_fields_suggest_the_closest() {
    let text = BASE.replace("class = \"a\"", "clas = \"a\"");
    let ps = problems(&text);
    let p = about(&ps, "flow[0].clas");
    assert_eq!(at(p), position_of(&text, "clas ="));
    assert!(p.fix.contains("did you mean `class`?"), "{p}");
    assert!(
        p.fix
            .contains("name, class, route, reverse, transport, tcp, source, on, off"),
        "{p}"
    );
    // The missing class is reported too.
    about(&ps, "flow[0].class");

    let text = BASE.replace("[link]", "[lnk]");
    let ps = problems(&text);
    assert!(
        ps.iter().any(|p| p.fix.contains("did you mean `link`?")),
        "{ps:#?}"
    );
}

#[test]
fn flows_must_go_to_existing_leaves() {
    let text = BASE.replace("class = \"a\"", "class = \"parent\"");
    let ps = problems(&text);
    let p = about(&ps, "flow[0].class");
    assert!(p.problem.contains("not a leaf"), "{p}");
    assert!(p.fix.ends_with("a, b"), "{p}");
    assert_eq!(at(p), position_of(&text, "\"parent\"\nsource"));

    let ps = problems(&BASE.replace("class = \"a\"", "class = \"aa\""));
    let p = about(&ps, "flow[0].class");
    assert!(p.problem.contains("no class named `aa`"), "{p}");
    assert!(
        p.fix.contains("did you mean `a`?") && p.fix.ends_with("a, b, c"),
        "{p}"
    );

    let ps = problems(&BASE.replace("class = \"a\"", "class = \"link\""));
    assert!(
        about(&ps, "flow[0].class")
            .problem
            .contains("the link itself")
    );
}

#[test]
fn flow_names_are_unique() {
    let text = format!(
        "{BASE}\n[[flow]]\nname = \"f\"\nclass = \"b\"\nsource = {{ type = \"greedy\", size = \"100b\" }}\n"
    );
    let ps = problems(&text);
    let p = about(&ps, "flow[1].name");
    assert!(p.problem.contains("already named `f`"), "{p}");
    let (line, _) = at(p);
    assert_eq!(line as usize, text.lines().count() - 2);
}

#[test]
fn schedules() {
    let with = |sched: &str| BASE.replace("class = \"a\"\n", &format!("class = \"a\"\n{sched}\n"));
    let s = load(&with("off = [[\"2s\", \"4s\"], [\"6s\", \"8s\"]]")).unwrap();
    let secs = |a, b| (Instant::from_secs(a), Instant::from_secs(b));
    assert_eq!(
        s.config.flows[0].schedule.on,
        vec![secs(0, 2), secs(4, 6), secs(8, 10)]
    );
    let s = load(&with("off = [[\"0s\", \"4s\"]]")).unwrap();
    assert_eq!(s.config.flows[0].schedule.on, vec![secs(4, 10)]);
    let s = load(&with("on = [[\"1s\", \"2s\"], [\"2s\", \"10s\"]]")).unwrap();
    assert_eq!(s.config.flows[0].schedule.on, vec![secs(1, 2), secs(2, 10)]);

    let text =
        with("on = [[\"0s\", \"5s\"], [\"4s\", \"6s\"], [\"7s\", \"11s\"], [\"9s\", \"8s\"]]");
    let ps = problems(&text);
    assert!(
        about(&ps, "flow[0].on[1]")
            .problem
            .contains("before the previous one ends")
    );
    assert!(
        about(&ps, "flow[0].on[2]")
            .problem
            .contains("after the end of the scenario")
    );
    assert!(about(&ps, "flow[0].on[3]").problem.contains("is empty"));
    assert_eq!(
        at(about(&ps, "flow[0].on[1]")),
        position_of(&text, "[\"4s\"")
    );

    let ps = problems(&with("off = [[\"0s\", \"10s\"]]"));
    assert!(about(&ps, "flow[0].off").problem.contains("never on"));
    let ps = problems(&with("on = [[\"0s\", \"1s\"]]\noff = [[\"2s\", \"3s\"]]"));
    assert!(about(&ps, "flow[0].off").problem.contains("both"));
}

#[test]
fn packet_sizes_fit_the_class() {
    let text = BASE.replace(
        "name = \"a\"\nparent = \"parent\"",
        "name = \"a\"\nparent = \"parent\"\nmax_packet = \"500b\"",
    );
    let ps = problems(&text);
    let p = about(&ps, "flow[0].source.size");
    assert!(p.problem.contains("max_packet 500b of class `a`"), "{p}");
    assert_eq!(at(p), position_of(&text, "\"1000b\""));
    let ps = problems(&BASE.replace("size = \"1000b\"", "size = \"0b\""));
    assert!(
        about(&ps, "flow[0].source.size")
            .problem
            .contains("not possible")
    );
    let ps = problems(&BASE.replace("size = \"1000b\"", "size = 1000"));
    let p = about(&ps, "flow[0].source.size");
    assert!(p.problem.contains("found the integer 1000"), "{p}");
}

#[test]
fn unit_errors_come_from_the_core_parser() {
    let text = BASE.replace("rate = \"10mbit\"", "rate = \"10mb\"");
    let ps = problems(&text);
    let p = about(&ps, "link.rate");
    assert_eq!(at(p), position_of(&text, "\"10mb\""));
    let expected = "10mb".parse::<Rate>().unwrap_err().to_string();
    assert_eq!(p.problem, expected);
}

#[test]
fn unknown_scheduler_lists_the_known_ones() {
    let text = BASE.replace("[link]", "[link]\nscheduler = \"fiffo\"");
    let ps = problems(&text);
    let p = about(&ps, "link.scheduler");
    assert!(p.fix.contains("did you mean `fifo`?"), "{p}");
    assert!(p.fix.contains(&SchedulerKind::all_names()), "{p}");
}

#[test]
fn scheduler_defaults_and_overrides() {
    let names = SchedulerKind::ALL;
    let last = names[names.len() - 1];
    let text = BASE.replace(
        "duration = \"10s\"",
        &format!("duration = \"10s\"\nscheduler = \"{last}\""),
    );
    assert_eq!(load(&text).unwrap().config.links[0].scheduler, last.into());
    let mut s = load(BASE).unwrap();
    s.set_scheduler(last, "--scheduler").unwrap();
    assert_eq!(s.config.links[0].scheduler, last.into());
}

#[test]
fn every_problem_is_reported_at_once() {
    let text = r#"[scenario]
name = "x"
duration = "10s"
window = "0s"

[link]
rate = "fast"

[[class]]
name = "a"
weight = "2"

[[flow]]
name = "f"
class = "a"
source = { type = "cbr", rate = "1mbit" }
"#;
    let ps = problems(text);
    for field in [
        "scenario.window",
        "link.rate",
        "class[0].weight",
        "flow[0].source.size",
    ] {
        about(&ps, field);
    }
    let mut lines: Vec<u32> = ps.iter().map(|p| at(p).0).collect();
    let sorted = lines.clone();
    lines.sort_unstable();
    assert_eq!(lines, sorted, "problems come in file order");
}

#[test]
fn syntax_errors_have_positions() {
    let text = BASE.replace("rate = \"10mbit\"", "rate = \"10mbit");
    let ps = problems(&text);
    assert!(
        ps.iter()
            .all(|p| p.problem.starts_with("TOML syntax error")),
        "{ps:#?}"
    );
    let (line, _) = position_of(&text, "rate = \"10mbit");
    assert!(ps.iter().any(|p| at(p).0 == line), "{ps:#?}");
}

#[test]
fn missing_sections() {
    let ps = problems("");
    for field in ["scenario", "link", "flow"] {
        about(&ps, field);
    }
    let ps = problems(&BASE.replace("[link]\nrate = \"10mbit\"", ""));
    assert!(about(&ps, "class").problem.contains("no [link]"));
}

/// The shared two-hop topology with a second leaf `z` on l2, where the route ends.
fn topology() -> String {
    TWO_HOPS
        .replace(
            "[[links.class]]\nname = \"y\"\n",
            "[[links.class]]\nname = \"y\"\n[[links.class]]\nname = \"z\"\n",
        )
        .replace("class = \"y\" }]", "class = \"z\" }]")
}

#[test]
fn topology_form() {
    let s = load(&topology()).unwrap();
    let c = &s.config;
    assert_eq!(c.nodes.len(), 3);
    assert_eq!((c.links[1].from.0, c.links[1].to.0), (1, 2));
    assert_eq!(c.links[0].delay, Duration::from_millis(5));
    assert_eq!(
        c.flows[0].route,
        vec![
            Hop {
                link: LinkId(0),
                class: ClassId(1)
            },
            Hop {
                link: LinkId(1),
                class: ClassId(2)
            },
        ]
    );
    assert!(s.is_multi_link());
}

#[test]
fn topology_errors() {
    let text = topology().replace(
        "route = [{ link = \"l1\", class = \"x\" }, { link = \"l2\", class = \"z\" }]",
        "route = [{ link = \"l2\", class = \"y\" }, { link = \"l1\", class = \"x\" }, { link = \"l3\", class = \"q\" }]",
    );
    let ps = problems(&text);
    assert!(
        about(&ps, "flow[0].route[1].link")
            .problem
            .contains("does not start where")
    );
    let p = about(&ps, "flow[0].route[2].link");
    assert!(p.fix.contains("did you mean `l1`?"), "{p}");

    let text = topology().replace("to = \"c\"", "to = \"d\"");
    let p = about(&problems(&text), "links[1].to").clone();
    assert!(p.problem.contains("no node is named `d`"), "{p}");

    let text = topology().replace("route = [", "class = \"x\"\nroute = [");
    assert!(
        about(&problems(&text), "flow[0].class")
            .problem
            .contains("topology form")
    );

    let text = format!("{}\n[link]\nrate = \"1mbit\"\n", topology());
    let ps = problems(&text);
    assert!(ps.iter().any(|p| p.problem.contains("mixes")), "{ps:#?}");
}

#[test]
fn traces() {
    let dir = TempDir::new("traces");
    dir.file(
        "t.csv",
        "# a trace\ntime_s,flow,size_bytes\n0,f,100\n0.25,g,200\n0.5,f,300\n0.500000001,f,1500\n",
    );
    let scenario = |file: &str| {
        BASE.replace(
            r#"{ type = "cbr", rate = "1mbit", size = "1000b" }"#,
            &format!(r#"{{ type = "trace", file = "{file}" }}"#),
        )
    };
    let path = dir.file("s.toml", &scenario("t.csv"));
    let s = load_file(&path).unwrap();
    let SourceConfig::Trace { records } = &s.config.flows[0].source else {
        panic!("not a trace");
    };
    let expected = [
        TraceRecord {
            at: Duration(0),
            size: 100,
        },
        TraceRecord {
            at: Duration(500_000_000),
            size: 300,
        },
        TraceRecord {
            at: Duration(500_000_001),
            size: 1500,
        },
    ];
    assert_eq!(&records[..], &expected);

    // Malformed rows are reported in the trace file, at their line.
    dir.file("bad.csv", "time_s,flow,size_bytes\n0,f,100\n0.1,f,big\n");
    let path = dir.file("s.toml", &scenario("bad.csv"));
    let ps = load_file(&path).unwrap_err().0;
    let p = about(&ps, "flow[0].source.file");
    let o = p.origin.as_ref().unwrap();
    assert!(o.file.ends_with("bad.csv"), "{p}");
    assert_eq!((o.line, o.column), (3, 7));

    // Rows out of order, a packet too large for the class, no rows for the flow.
    dir.file(
        "order.csv",
        "time_s,flow,size_bytes\n1,f,100\n0.5,f,100\n0.7,f,1600\n",
    );
    let ps = load_file(&dir.file("s.toml", &scenario("order.csv")))
        .unwrap_err()
        .0;
    let lines: Vec<u32> = ps.iter().map(|p| at(p).0).collect();
    assert_eq!(lines, [3, 4], "{ps:#?}");
    dir.file("other.csv", "time_s,flow,size_bytes\n1,g,100\n");
    let ps = load_file(&dir.file("s.toml", &scenario("other.csv")))
        .unwrap_err()
        .0;
    assert!(
        about(&ps, "flow[0].source.file")
            .fix
            .contains("rows for: g")
    );
    let ps = load_file(&dir.file("s.toml", &scenario("none.csv")))
        .unwrap_err()
        .0;
    assert!(
        about(&ps, "flow[0].source.file")
            .problem
            .contains("cannot read the trace")
    );
}

#[test]
fn example_scenarios_are_valid() {
    let mut n = 0;
    for entry in std::fs::read_dir(scenarios_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            if let Err(p) = load_file(&path) {
                panic!("{}:\n{p}", path.display());
            }
            n += 1;
        }
    }
    assert!(n >= 3, "found {n} scenarios");
}

/// A per-flow class: a template of instances, with the link's best-effort curve each;
/// flows name the template; a discipline that cannot reset a class is refused.
#[test]
fn per_flow_classes_are_templates() {
    let text = BASE
        .replace(
            "[link]\nrate = \"10mbit\"",
            "[link]\nrate = \"10mbit\"\nscheduler = \"fsc\"\nbest_effort = { bpr = 4, pbs = \"6000b\" }",
        )
        .replace(
            "name = \"c\"",
            "name = \"c\"\nper_flow = { max_flows = 3, idle = \"2s\" }",
        )
        .replace("class = \"a\"", "class = \"c\"");
    let s = load(&text).unwrap();
    let tree = &s.config.links[0].classes;
    let t = &tree.templates()[0];
    assert_eq!(
        (t.name.as_str(), t.count, t.idle),
        ("c", 3, Duration::from_secs(2))
    );
    assert_eq!(s.config.flows[0].route[0].class, t.first);
    // Under the link: `parent` and the three instances, weight 1 each: m2 = 10 / 4 =
    // 2.5 Mbit/s per instance, m1 = 4 m2.
    for c in t.instances() {
        let ls = tree.get(c).spec.ls.expect("a best-effort curve");
        assert_eq!((ls.m1, ls.m2), (Rate::from_mbit(10), Rate(2_500_000)));
    }
    let refused = load(&text.replace("scheduler = \"fsc\"", "scheduler = \"htb\"")).unwrap_err();
    assert!(refused.to_string().contains("per-flow"), "{refused}");
    let wrong = load(&text.replace("max_flows = 3", "max_flows = 0")).unwrap_err();
    assert!(wrong.to_string().contains("max_flows"), "{wrong}");
}

/// A run must keep one value per window for every leaf and flow: a budget below that
/// is refused before running, naming `window` and the fix; a queue without a limit that
/// its UDP source must fill is named at its `limit = "none"`.
#[test]
fn memory_the_run_must_take_is_checked_before_running() {
    let s = load(BASE).unwrap();
    assert!(s.check_memory(1 << 30).is_ok());
    let p = s.check_memory(1000).unwrap_err();
    assert_eq!(p.0.len(), 1);
    assert_eq!(p.0[0].field.as_deref(), Some("scenario.window"));
    assert!(
        p.0[0].problem.contains("more than the budget of 1000 B"),
        "{p}"
    );
    assert!(p.0[0].fix.contains("lengthen `window`"), "{p}");
    let text = BASE
        .replace(
            "name = \"a\"\nparent",
            "name = \"a\"\nlimit = \"none\"\nparent",
        )
        .replace("rate = \"1mbit\", size", "rate = \"20mbit\", size");
    let s = load(&text).unwrap();
    let p = s.check_memory(1 << 20).unwrap_err();
    let (line, column) = position_of(&text, "\"none\"");
    assert_eq!(
        p.0[0].origin.as_ref().map(|o| (o.line, o.column)),
        Some((line, column))
    );
    // 20 Mbit/s into 10 Mbit/s for 10 s: 100 Mbit of 1000 B packets stay queued.
    assert!(
        p.0[0].problem.contains("class `a`") && p.0[0].problem.contains("12500 packets"),
        "{p}"
    );
}

/// `[link.htb]` reaches HTB's settings, stays with the link under another scheduler
/// and comes back with HTB; a wrong value is located.
#[test]
fn htb_settings_are_read_and_follow_the_scheduler() {
    use linkshare_core::sched::SchedulerConfig;
    let text = BASE.replace(
        "[link]\nrate = \"10mbit\"",
        "[link]\nrate = \"10mbit\"\nscheduler = \"htb\"\nhtb = { r2q = 5, hz = 100, mtu = \"2000b\" }",
    );
    let mut s = load(&text).unwrap();
    let htb = |s: &Scenario| match &s.config.links[0].scheduler {
        SchedulerConfig::Htb(p) => Some((p.r2q.get(), p.hz.get(), p.mtu)),
        _ => None,
    };
    assert_eq!(htb(&s), Some((5, 100, Bytes(2000))));
    s.set_scheduler(SchedulerKind::Drr, "--scheduler").unwrap();
    assert_eq!(htb(&s), None);
    s.set_scheduler(SchedulerKind::Htb, "--scheduler").unwrap();
    assert_eq!(htb(&s), Some((5, 100, Bytes(2000))));
    let bad = text.replace("r2q = 5", "r2q = 0");
    let ps = problems_in(&bad, Path::new("."));
    let p = about(&ps, "link.htb.r2q");
    assert_eq!(at(p), position_of(&bad, "0, hz"));
    let unknown = problems_in(&text.replace("r2q = 5", "r2qq = 5"), Path::new("."));
    assert!(
        unknown.iter().any(|p| p.problem.contains("r2qq")),
        "{unknown:?}"
    );
}

/// `[link.keshav]` and the classes' `delta`s reach Keshav FQ's settings, stay with the
/// link under another scheduler (and `validate` says they are unused there), and come
/// back with Keshav FQ.
#[test]
fn keshav_settings_are_read_and_follow_the_scheduler() {
    use linkshare_core::ds::bids::Structure;
    use linkshare_core::sched::SchedulerConfig;
    let text = BASE
        .replace(
            "[link]\nrate = \"10mbit\"",
            "[link]\nrate = \"10mbit\"\nscheduler = \"keshav\"\n\
             keshav = { limit = 200, structure = \"link\", delta = \"3000b\", \
             count_operations = true }",
        )
        .replace("name = \"c\"\n", "name = \"c\"\ndelta = \"1500b\"\n");
    let mut s = load(&text).unwrap();
    let keshav = |s: &Scenario| match &s.config.links[0].scheduler {
        SchedulerConfig::Keshav(k) => Some(k.clone()),
        _ => None,
    };
    let k = keshav(&s).expect("keshav");
    assert_eq!(k.limit, Limit::Packets(200));
    assert_eq!(k.structure, Structure::Link);
    assert!(k.count_operations);
    assert_eq!(k.delta, Bytes(3000));
    assert_eq!(k.deltas.len(), 1);
    assert_eq!(
        (k.deltas[0].class.as_str(), k.deltas[0].delta),
        ("c", Bytes(1500))
    );
    let described = linkshare_scenario::describe::describe(&s);
    assert!(
        described.contains("keshav's own, 200 packets shared by the classes")
            && described.contains(
                "structure LINK (counting the paper's operations), offset 3000b, 1500b for `c`"
            ),
        "{described}"
    );
    assert!(
        !described.contains("limit 1000 packets") && !described.contains("A leaf without"),
        "no class limit applies under keshav:\n{described}"
    );

    s.set_scheduler(SchedulerKind::Drr, "--scheduler").unwrap();
    assert_eq!(keshav(&s), None);
    let described = linkshare_scenario::describe::describe(&s);
    assert!(
        described.contains("its keshav settings are not used: the link runs drr"),
        "{described}"
    );
    assert!(described.contains("A leaf without `limit`"), "{described}");
    s.set_scheduler(SchedulerKind::Keshav, "--scheduler")
        .unwrap();
    assert_eq!(keshav(&s), Some(k));

    // Bytes as the unit of the buffer.
    let bytes = load(&text.replace("limit = 200", "limit = \"64kb\"")).unwrap();
    assert_eq!(
        keshav(&bytes).map(|k| k.limit),
        Some(Limit::Bytes(Bytes(65536)))
    );
    // The topology form: `keshav = { ... }` on a `[[links]]` entry, `delta` on its class.
    let topo = TWO_HOPS
        .replace(
            "rate = \"5mbit\"\n",
            "rate = \"5mbit\"\nscheduler = \"keshav\"\nkeshav = { limit = 50, structure = \"tree\" }\n",
        )
        .replace("name = \"y\"\n", "name = \"y\"\ndelta = \"100b\"\n");
    let t = load(&topo).unwrap();
    match &t.config.links[1].scheduler {
        SchedulerConfig::Keshav(k) => {
            assert_eq!(
                (k.limit, k.structure, k.count_operations),
                (Limit::Packets(50), Structure::Tree, false)
            );
            assert_eq!(k.deltas[0].delta, Bytes(100));
        }
        other => panic!("{other:?}"),
    }
    let bad = problems(&topo.replace("limit = 50", "limt = 50"));
    assert!(
        about(&bad, "links[1].keshav.limt")
            .fix
            .contains("did you mean `limit`?"),
        "{bad:#?}"
    );
    // Without any setting, the defaults.
    let plain = load(&BASE.replace("[link]\n", "[link]\nscheduler = \"keshav\"\n")).unwrap();
    assert_eq!(
        keshav(&plain),
        Some(linkshare_core::sched::keshav::KeshavConfig::default())
    );
}

/// Each wrong Keshav setting is reported where it was written, with its fix.
#[test]
fn keshav_setting_errors_are_located() {
    let text = BASE.replace(
        "[link]\nrate = \"10mbit\"",
        "[link]\nrate = \"10mbit\"\nscheduler = \"keshav\"\n\
         keshav = { limit = 0, structure = \"heep\", delta = \"lots\", \
         count_operations = \"yes\" }",
    );
    let ps = problems(&text);
    let p = about(&ps, "link.keshav.limit");
    assert_eq!(at(p), position_of(&text, "0, structure"));
    assert!(p.fix.contains("at least 1"), "{p}");
    let p = about(&ps, "link.keshav.structure");
    assert_eq!(at(p), position_of(&text, "\"heep\""));
    assert!(p.fix.contains("did you mean `heap`?"), "{p}");
    assert!(about(&ps, "link.keshav.delta").problem.contains("lots"));
    let p = about(&ps, "link.keshav.count_operations");
    assert_eq!(at(p), position_of(&text, "\"yes\""));

    let none = text.replace("limit = 0", "limit = \"none\"");
    let p = about(&problems(&none), "link.keshav.limit").clone();
    assert!(p.problem.contains("cannot be unbounded"), "{p}");

    // A byte buffer smaller than a class's largest packet.
    let small = BASE.replace(
        "[link]\nrate = \"10mbit\"",
        "[link]\nrate = \"10mbit\"\nscheduler = \"keshav\"\nkeshav = { limit = \"1000b\" }",
    );
    let p = about(&problems(&small), "link.keshav.limit").clone();
    assert_eq!(at(&p), position_of(&small, "\"1000b\""));
    assert!(p.fix.contains("at least 1500 bytes"), "{p}");

    // An offset on a class that is not a conversation.
    let inner = BASE
        .replace("[link]\n", "[link]\nscheduler = \"keshav\"\n")
        .replace(
            "name = \"parent\"\n",
            "name = \"parent\"\ndelta = \"1500b\"\n",
        );
    let ps = problems(&inner);
    let p = about(&ps, "class[0].delta");
    assert_eq!(at(p), position_of(&inner, "\"1500b\""));
    assert!(p.problem.contains("not a leaf"), "{p}");
    // Under another scheduler the same offset is not an error: it is unused.
    assert!(load(&inner.replace("scheduler = \"keshav\"", "scheduler = \"drr\"")).is_ok());
}

/// `[link.hfsc]` and `[link.cbq]` reach their disciplines' settings, follow the
/// scheduler like `[link.htb]`, and a wrong value is located with the values allowed.
#[test]
fn hfsc_and_cbq_settings_are_read_and_follow_the_scheduler() {
    use linkshare_core::sched::SchedulerConfig;
    use linkshare_core::sched::cbq::CbqSharing;
    use linkshare_core::sched::hfsc::VtRestart;
    let text = BASE.replace(
        "[link]\nrate = \"10mbit\"",
        "[link]\nrate = \"10mbit\"\nscheduler = \"hfsc\"\nhfsc = { restart = \"min\" }\ncbq = { sharing = \"formal\" }",
    );
    let mut s = load(&text).unwrap();
    let settings = |s: &Scenario| match &s.config.links[0].scheduler {
        SchedulerConfig::Hfsc(p) => Some(format!("hfsc {}", p.restart)),
        SchedulerConfig::Cbq(p) => Some(format!("cbq {}", p.sharing)),
        _ => None,
    };
    assert_eq!(settings(&s).as_deref(), Some("hfsc min"));
    s.set_scheduler(SchedulerKind::Cbq, "--scheduler").unwrap();
    assert_eq!(settings(&s).as_deref(), Some("cbq formal"));
    s.set_scheduler(SchedulerKind::Hfsc, "--scheduler").unwrap();
    assert_eq!(settings(&s).as_deref(), Some("hfsc min"));
    assert_eq!(VtRestart::default(), VtRestart::Midpoint);
    assert_eq!(CbqSharing::default(), CbqSharing::TopLevel);
    let bad = text.replace("\"min\"", "\"mid\"");
    let ps = problems_in(&bad, Path::new("."));
    let p = about(&ps, "link.hfsc.restart");
    assert_eq!(at(p), position_of(&bad, "\"mid\""));
    assert!(p.fix.contains("midpoint"), "{p:?}");
    let unknown = problems_in(&text.replace("sharing", "shared"), Path::new("."));
    assert!(
        unknown.iter().any(|p| p.problem.contains("shared")),
        "{unknown:?}"
    );
}
