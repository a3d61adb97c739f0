//! JoBS in scenario files: `[link.jobs]` and the classes' constraints reach
//! `SchedulerConfig::Jobs` and the measured objectives, follow the scheduler, are
//! located when wrong; `validate` says which buffer applies; the Pareto and population
//! sources.

mod common;

use std::num::NonZeroU32;
use std::path::Path;

use common::{about, at, load_in, position_of, problems_in};
use linkshare_core::sched::jobs::{Buffer, Constraints, JobsConfig, Mode, ReferenceBugs};
use linkshare_core::sched::{SchedulerConfig, SchedulerKind};
use linkshare_core::units::{Duration, Fraction, Rate, Ratio};
use linkshare_scenario::describe::describe;
use linkshare_scenario::{Problem, Scenario};
use linkshare_sim::config::{SourceConfig, Swing};

/// Four classes under JoBS: Table 1 of the paper.
const TABLE1: &str = r#"[scenario]
name = "t"
duration = "1s"

[link]
rate = "100mbit"
scheduler = "jobs"
jobs = { mode = "reference", buffer = 200, sampling = 10 }

[[class]]
name = "1"
delay_bound = "8ms"
loss_bound = "1%"

[[class]]
name = "2"
min_rate = "35mbit"
delay_ratio = 2
loss_ratio = 2

[[class]]
name = "3"
delay_ratio = "2"
loss_ratio = 2.0

[[class]]
name = "4"

[[flow]]
name = "f"
class = "1"
source = { type = "cbr", rate = "1mbit", size = "1000b" }
"#;

fn load(text: &str) -> Scenario {
    load_in(text, Path::new(".")).unwrap_or_else(|p| panic!("{p}"))
}

fn problems(text: &str) -> Vec<Problem> {
    problems_in(text, Path::new("."))
}

fn jobs(s: &Scenario) -> Option<&JobsConfig> {
    match &s.config.links[0].scheduler {
        SchedulerConfig::Jobs(j) => Some(j),
        _ => None,
    }
}

#[test]
fn table1_reaches_the_scheduler_and_the_objectives() {
    let s = load(TABLE1);
    let j = jobs(&s).expect("jobs runs the link");
    assert_eq!(j.mode, Mode::REFERENCE);
    assert_eq!(j.buffer, Buffer::Shared { packets: 200 });
    assert_eq!(j.sampling, NonZeroU32::new(10).unwrap());
    let two = Constraints {
        min_rate: Some(Rate::from_mbit(35)),
        delay_ratio: Some(Ratio::integer(2)),
        loss_ratio: Some(Ratio::integer(2)),
        ..Constraints::default()
    };
    assert_eq!(
        j.classes.get("1"),
        Some(&Constraints {
            delay_bound: Some(Duration::from_millis(8)),
            loss_bound: Some(Fraction::from_percent(1)),
            ..Constraints::default()
        })
    );
    assert_eq!(j.classes.get("2"), Some(&two));
    assert_eq!(
        j.classes.get("3").and_then(|c| c.delay_ratio),
        Some(Ratio::integer(2))
    );
    assert_eq!(j.classes.get("4"), None);
    // The same constraints are the objectives measured, by leaf.
    let o = &s.config.measure.objectives;
    assert_eq!(o.len(), 3);
    let tree = &s.config.links[0].classes;
    assert_eq!(o[1].class, tree.id_of("2").unwrap());
    assert_eq!(o[1].constraints, two);
    // `0.01` and `"1%"` are the same bound, exactly.
    let s = load(&TABLE1.replace("loss_bound = \"1%\"", "loss_bound = 0.01"));
    assert_eq!(
        jobs(&s).unwrap().classes["1"].loss_bound,
        Some(Fraction::from_percent(1))
    );
}

#[test]
fn settings_follow_the_scheduler_and_stay_objectives() {
    let mut s = load(TABLE1);
    s.set_scheduler(SchedulerKind::Fifo, "--scheduler").unwrap();
    assert!(jobs(&s).is_none());
    assert_eq!(s.config.measure.objectives.len(), 3);
    let text = describe(&s);
    assert!(
        text.contains("jobs settings are not used by scheduler `fifo`"),
        "{text}"
    );
    s.set_scheduler(SchedulerKind::Jobs, "--scheduler").unwrap();
    assert_eq!(jobs(&s).unwrap().sampling.get(), 10);
    // Loaded under FIFO from the file: the settings wait, and validate says so.
    let fifo = load(&TABLE1.replace("scheduler = \"jobs\"", "scheduler = \"fifo\""));
    assert!(describe(&fifo).contains("are measured as objectives"));
    assert_eq!(fifo.config.measure.objectives.len(), 3);
}

#[test]
fn validate_says_which_buffer_applies() {
    let text = describe(&load(TABLE1));
    assert!(
        text.contains("jobs's own, 200 packets shared by the classes"),
        "{text}"
    );
    assert!(!text.contains("limit 1000 packets"), "{text}");
    assert!(!text.contains("tc's default"), "{text}");
    assert!(text.contains(
        "jobs: reference mode (ALTQ's decisions, its bugs fixed), ratio loop every 10 arrivals"
    ));
    assert!(
        text.contains("`1` delay bound 8ms, loss bound 1%"),
        "{text}"
    );
    let separate = describe(&load(
        &TABLE1
            .replace(
                "jobs = { mode = \"reference\", buffer = 200, sampling = 10 }",
                "jobs = { buffer = 50, separate = true }",
            )
            .replace("loss_bound = \"1%\"\n", "")
            .replace("loss_ratio = 2\n", "")
            .replace("loss_ratio = 2.0\n", ""),
    ));
    assert!(separate.contains("50 packets per class"), "{separate}");
    assert!(
        separate.contains("paper mode (gain factor 50%)"),
        "{separate}"
    );
    let fifo = describe(&load(
        &TABLE1.replace("scheduler = \"jobs\"", "scheduler = \"fifo\""),
    ));
    assert!(fifo.contains("limit 1000 packets"), "{fifo}");
    assert!(fifo.contains("tc's default"), "{fifo}");
}

#[test]
fn paper_mode_gain_and_reference_bugs() {
    let s = load(&TABLE1.replace(
        "mode = \"reference\", buffer = 200",
        "mode = \"paper\", gain = 0.25, buffer = 200",
    ));
    assert_eq!(
        jobs(&s).unwrap().mode,
        Mode::Paper {
            gain: Fraction(250_000_000)
        }
    );
    let s = load(&TABLE1.replace(
        "mode = \"reference\"",
        "mode = \"reference\", global_drop_stop = true, first_class_without_donor = true",
    ));
    assert_eq!(
        jobs(&s).unwrap().mode,
        Mode::Reference(ReferenceBugs {
            global_drop_stop: true,
            first_class_without_donor: true
        })
    );
}

/// Every problem is located at the key written, with a fix.
#[test]
fn mistakes_are_located() {
    let cases: &[(&str, &str, &str, &str)] = &[
        // (replace, with, field, needle of the position)
        (
            "mode = \"reference\"",
            "mode = \"altq\"",
            "link.jobs.mode",
            "\"altq\"",
        ),
        (
            "mode = \"reference\", buffer = 200",
            "mode = \"reference\", gain = 0.5, buffer = 200",
            "link.jobs.gain",
            "0.5,",
        ),
        (
            "mode = \"reference\"",
            "mode = \"paper\", global_drop_stop = true",
            "link.jobs.global_drop_stop",
            "true",
        ),
        (
            "buffer = 200",
            "buffer = 0",
            "link.jobs.buffer",
            "0, sampling",
        ),
        ("sampling = 10", "sampling = 0", "link.jobs.sampling", "0 }"),
        (
            "mode = \"reference\", buffer = 200",
            "gain = 0, buffer = 200",
            "link.jobs.gain",
            "0, buffer",
        ),
        (
            "delay_bound = \"8ms\"",
            "delay_bound = \"0ms\"",
            "class[0].delay_bound",
            "\"0ms\"",
        ),
        (
            "delay_bound = \"8ms\"",
            "delay_bound = \"1us\"",
            "class[0].delay_bound",
            "\"1us\"",
        ),
        (
            "loss_bound = \"1%\"",
            "loss_bound = \"1 percent\"",
            "class[0].loss_bound",
            "\"1 percent\"",
        ),
        (
            "loss_bound = \"1%\"",
            "loss_bound = 1.5",
            "class[0].loss_bound",
            "1.5",
        ),
        (
            "min_rate = \"35mbit\"",
            "min_rate = \"135mbit\"",
            "class[1].min_rate",
            "\"135mbit\"",
        ),
        (
            "delay_ratio = 2\n",
            "delay_ratio = 1\n",
            "class[1].delay_ratio",
            "1\nloss_ratio = 2\n",
        ),
        (
            "delay_ratio = 2\n",
            "delay_ratio = true\n",
            "class[1].delay_ratio",
            "true",
        ),
        (
            "name = \"4\"\n",
            "name = \"4\"\nloss_ratio = 2\n",
            "class[3].loss_ratio",
            "2\n\n[[flow]]",
        ),
        (
            "jobs = { mode",
            "jobs = { modes = \"x\", mode",
            "link.jobs",
            "modes",
        ),
    ];
    for (from, to, field, needle) in cases {
        let text = TABLE1.replacen(from, to, 1);
        assert_ne!(text, TABLE1, "{from}");
        let ps = problems(&text);
        let p = if *field == "link.jobs" {
            ps.iter()
                .find(|p| p.problem.contains("modes"))
                .unwrap_or_else(|| panic!("{ps:#?}"))
        } else {
            about(&ps, field)
        };
        assert_eq!(at(p), position_of(&text, needle), "{field}: {p:?}");
        assert!(
            *field == "link.jobs" || !p.fix.is_empty(),
            "{field}: no fix in {p:?}"
        );
    }
    // Separate buffers cannot keep a loss bound.
    let text = TABLE1.replace("buffer = 200", "buffer = 200, separate = true");
    let ps = problems(&text);
    assert!(
        ps.iter()
            .any(|p| p.field.as_deref() == Some("class[0].loss_bound"))
    );
    assert!(
        ps.iter()
            .any(|p| p.field.as_deref() == Some("class[1].loss_ratio"))
    );
}

#[test]
fn constraints_on_a_parent_are_refused_under_any_scheduler() {
    let text = TABLE1.replace(
        "[[class]]\nname = \"4\"\n",
        "[[class]]\nname = \"4\"\ndelay_bound = \"50ms\"\n\n[[class]]\nname = \"5\"\nparent = \"4\"\n",
    );
    for text in [
        text.clone(),
        text.replace("scheduler = \"jobs\"", "scheduler = \"fifo\""),
    ] {
        let ps = problems(&text);
        let p = about(&ps, "class[3].delay_bound");
        assert_eq!(at(p), position_of(&text, "\"50ms\""));
    }
}

const SOURCES: &str = r#"[scenario]
name = "t"
duration = "1s"

[link]
rate = "1gbit"

[[class]]
name = "a"

[[flow]]
name = "f"
class = "a"
source = { type = "population", min = 75, max = 138, period = "10s", each = { type = "pareto", rate = "2353kbit", shape = 1.9, size = "500b" } }
"#;

#[test]
fn pareto_and_population_sources() {
    let s = load(SOURCES);
    match &s.config.flows[0].source {
        SourceConfig::Population { each, swing } => {
            assert_eq!(
                *swing,
                Swing {
                    min: 75,
                    max: 138,
                    period: Duration::from_secs(10)
                }
            );
            match **each {
                SourceConfig::Pareto { rate, shape, size } => {
                    assert_eq!((rate, shape, size), (Rate::from_kbit(2353), 1.9, 500));
                }
                ref other => panic!("{other:?}"),
            }
        }
        other => panic!("{other:?}"),
    }
    let text = describe(&s);
    assert!(
        text.contains("population of 75 to 138 members on (a sine of period 10s), each: Pareto gaps (shape 1.9), mean 2353kbit, 500b packets"),
        "{text}"
    );
    // A constant population needs no period.
    let s = load(&SOURCES.replace("min = 75, max = 138, period = \"10s\"", "min = 5, max = 5"));
    assert!(matches!(
        s.config.flows[0].source,
        SourceConfig::Population {
            swing: Swing { min: 5, max: 5, .. },
            ..
        }
    ));
    let cases: &[(&str, &str, &str, &str)] = &[
        ("min = 75", "min = 200", "flow[0].source.min", "200"),
        (
            ", period = \"10s\"",
            "",
            "flow[0].source.period",
            "{ type = \"population\"",
        ),
        (
            "shape = 1.9",
            "shape = 1",
            "flow[0].source.each.shape",
            "1, size",
        ),
        (
            "each = { type = \"pareto\", rate = \"2353kbit\", shape = 1.9, size = \"500b\" }",
            "each = { type = \"greedy\", size = \"500b\" }",
            "flow[0].source.each",
            "{ type = \"greedy\"",
        ),
        ("max = 138", "max = 0", "flow[0].source.max", "0, period"),
    ];
    for (from, to, field, needle) in cases {
        let text = SOURCES.replacen(from, to, 1);
        let ps = problems(&text);
        let p = about(&ps, field);
        assert_eq!(at(p), position_of(&text, needle), "{field}: {p:?}");
    }
}
