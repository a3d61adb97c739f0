//! Messages a user can act on: one root cause gives one message, ranges say what is
//! accepted, echoes of long input are cut, and tc-style warnings name the class and the
//! fix.

mod common;

use std::path::Path;

use common::{about, load_in, problems_in};
use linkshare_scenario::Problem;

/// One class `a` under a 10 Mbit/s link, one flow into it; `{SCENARIO}` is replaced by
/// extra `[scenario]` lines and `{CLASS}` by extra lines of the class.
const TEMPLATE: &str = r#"[scenario]
name = "t"
duration = "{DURATION}"
{SCENARIO}

[link]
rate = "10mbit"

[[class]]
name = "a"
{CLASS}

[[flow]]
name = "f"
class = "a"
source = { type = "cbr", rate = "1mbit", size = "1000b" }
"#;

fn scenario(duration: &str, scenario: &str, class: &str) -> String {
    TEMPLATE
        .replace("{DURATION}", duration)
        .replace("{SCENARIO}", scenario)
        .replace("{CLASS}", class)
}

fn problems(text: &str) -> Vec<Problem> {
    problems_in(text, Path::new("."))
}

/// `window = "1h"` is one mistake: no second message blames the default window that
/// stood in for it, even where the default would make too many windows.
#[test]
fn an_unknown_time_unit_is_one_message_and_hours_are_converted() {
    let ps = problems(&scenario("300000s", "window = \"1h\"", ""));
    assert_eq!(ps.len(), 1, "{ps:#?}");
    let p = about(&ps, "scenario.window");
    assert!(
        p.problem.contains("unknown unit \"h\"")
            && p.problem
                .contains("tc has no unit of hours or minutes: write \"3600s\""),
        "{p}"
    );
    let ps = problems(&scenario("10s", "window = \"1.5min\"", ""));
    assert!(
        about(&ps, "scenario.window")
            .problem
            .contains("write \"90s\"")
    );
    // The default window still gets its own message when it is the cause.
    let ps = problems(&scenario("300000s", "", ""));
    assert!(
        about(&ps, "scenario.window")
            .problem
            .contains("1500000 windows")
    );
}

/// A class name that is not valid (Unicode), or missing, is reported once, at the name:
/// no second message quotes an empty name.
#[test]
fn a_bad_class_name_is_one_message() {
    let text = scenario("1s", "", "").replace(
        "[[flow]]",
        "[[class]]\nname = \"bülk\"\n\n[[class]]\nweight = 2\n\n[[flow]]",
    );
    let ps = problems(&text);
    assert_eq!(ps.len(), 2, "{ps:#?}");
    assert!(
        about(&ps, "class[1].name")
            .problem
            .contains("\"bülk\" is not a valid name")
    );
    assert!(
        about(&ps, "class[2].name")
            .problem
            .contains("has no `name`")
    );
    assert!(ps.iter().all(|p| !p.problem.contains("``")), "{ps:#?}");
}

/// Ranges name the values that are accepted.
#[test]
fn ranges_say_what_is_accepted() {
    for (line, field, fix) in [
        (
            "weight = 0",
            "class[0].weight",
            "give an integer from 1 to 4294967295",
        ),
        (
            "weight = -1",
            "class[0].weight",
            "give an integer from 1 to 4294967295",
        ),
        (
            "priority = 9",
            "class[0].priority",
            "give an integer from 0 to 7",
        ),
        (
            "priority = 300",
            "class[0].priority",
            "give an integer from 0 to 7",
        ),
        (
            "limit = 0",
            "class[0].limit",
            "give an integer of at least 1",
        ),
    ] {
        let ps = problems(&scenario("1s", "", line));
        assert_eq!(ps.len(), 1, "{line}: {ps:#?}");
        assert_eq!(about(&ps, field).fix, fix, "{line}");
    }
}

/// A megabyte of input is quoted as 64 characters and its length, wherever a message
/// quotes it.
#[test]
fn long_input_is_cut_in_messages() {
    let big = "x".repeat(1_000_000);
    let cases = [
        // An unknown scheduler, a value that is not a rate, an unknown field, an unknown
        // class (a valid name), a name that is not valid.
        scenario("1s", &format!("scheduler = \"{big}\""), ""),
        scenario("1s", "", "").replace("\"10mbit\"", &format!("\"1{big}\"")),
        scenario("1s", "", &format!("{big} = 1")),
        scenario("1s", "", "").replace("class = \"a\"", &format!("class = \"{big}\"")),
        scenario("1s", "", "").replace("name = \"a\"", &format!("name = \"{big}é\"")),
    ];
    for text in cases {
        let ps = problems(&text);
        assert!(!ps.is_empty());
        for p in ps {
            let line = p.to_string();
            assert!(line.len() < 1000, "{} bytes: {}", line.len(), &line[..1000]);
            assert!(line.contains("characters)"), "{line}");
        }
    }
}

/// HTB's quanta derived from `rate / r2q` are clamped as in Linux, with tc's warning:
/// the scenario loads, and its warnings name the class, the field and the fix.
#[test]
fn htb_warns_of_clamped_quanta() {
    let text = scenario("1s", "scheduler = \"htb\"", "rate = \"64kbit\"")
        .replace("\"10mbit\"", "\"100mbit\"")
        .replace(
            "[[flow]]",
            "[[class]]\nname = \"fast\"\nrate = \"90mbit\"\n\n[[class]]\nname = \"given\"\n\
             rate = \"64kbit\"\nquantum = \"1500b\"\n\n[[flow]]",
        );
    let s = load_in(&text, Path::new(".")).expect("loads");
    let warnings: Vec<String> = s.warnings().iter().map(ToString::to_string).collect();
    assert_eq!(warnings.len(), 2, "{warnings:#?}");
    assert!(
        warnings[0].starts_with(
            "t.toml:9:1: field `class[0].quantum`: under scheduler `htb`, the quantum of \
             class `a` is small"
        ) && warnings[0].contains("64kbit / 10 = 800b, so HTB uses 1000b")
            && warnings[0].contains("give the class its own `quantum`"),
        "{}",
        warnings[0]
    );
    assert!(
        warnings[1].contains("class `fast` is big") && warnings[1].contains("200000b"),
        "{}",
        warnings[1]
    );
    // Other schedulers have nothing to say about the same classes.
    let drr = text.replace("scheduler = \"htb\"", "scheduler = \"drr\"");
    assert!(load_in(&drr, Path::new(".")).unwrap().warnings().is_empty());
}

/// A derived check keeps every problem it finds about one field: H-FSC refuses an `rt`
/// curve on a class with children and, separately, a convex `rt` curve with a sloped
/// first segment; both are reported on the class's `rt`.
#[test]
fn a_check_reports_all_its_problems_about_one_field() {
    let text = scenario(
        "1s",
        "scheduler = \"hfsc\"",
        "rt = { m1 = \"1mbit\", d = \"10ms\", m2 = \"2mbit\" }",
    )
    .replace("class = \"a\"", "class = \"a1\"")
    .replace(
        "[[flow]]",
        "[[class]]\nname = \"a1\"\nparent = \"a\"\n\n[[flow]]",
    );
    let ps = problems(&text);
    let rt: Vec<&Problem> = ps
        .iter()
        .filter(|p| p.field.as_deref() == Some("class[0].rt"))
        .collect();
    assert_eq!(rt.len(), 2, "{ps:#?}");
    assert!(
        rt.iter().any(|p| p.problem.contains("also children")),
        "{ps:#?}"
    );
    assert!(rt.iter().any(|p| p.problem.contains("convex")), "{ps:#?}");
}
