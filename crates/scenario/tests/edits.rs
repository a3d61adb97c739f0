//! Scenario edits by dotted path: an edited scenario is the scenario whose file says so,
//! and its problems are the loader's, pointing at the edit or into the file.

mod common;

use std::path::Path;

use common::{TWO_HOPS, position_of};
use linkshare_core::buffer::Overflow;
use linkshare_core::hierarchy::Limit;
use linkshare_core::units::{Bytes, Rate};
use linkshare_scenario::{EDIT_FILE, Edit, NoProgress, Problem, Scenario, load_str};

const TWO_CLASSES: &str = r#"[scenario]
name = "two"
duration = "1s"

[link]
rate = "10mbit"
scheduler = "drr"

[[class]]
name = "A"
weight = 2

[[class]]
name = "B"
weight = 1

[[flow]]
name = "a"
class = "A"
source = { type = "cbr", rate = "8mbit", size = "1000b" }

[[flow]]
name = "b"
class = "B"
source = { type = "greedy", size = "1500b" }
"#;

fn load(text: &str) -> Scenario {
    load_str(text, "t.toml", Path::new(".")).expect("valid scenario")
}

fn edit(s: &Scenario, path: &str, value: &str) -> Result<Scenario, Vec<Problem>> {
    s.with_edits(&[Edit::new(path, value)]).map_err(|p| p.0)
}

/// The scenario `text` with the first `old` replaced by `new`: what an edit must give.
fn by_hand(text: &str, old: &str, new: &str) -> Scenario {
    assert!(text.contains(old));
    load(&text.replacen(old, new, 1))
}

/// Two scenarios are the same when they run the same: the whole result, every packet's
/// delay included, is equal.
fn same_run(a: &Scenario, b: &Scenario) -> bool {
    let run = |s: &Scenario| s.simulate("t", &NoProgress).expect("runs");
    a.config.seed == b.config.seed && run(a) == run(b)
}

#[test]
fn an_edit_gives_the_scenario_whose_file_says_so() {
    let base = load(TWO_CLASSES);
    let cases = [
        (
            "link.rate",
            "\"20mbit\"",
            "rate = \"10mbit\"",
            "rate = \"20mbit\"",
        ),
        ("class.A.weight", "5", "weight = 2", "weight = 5"),
        ("class[1].weight", "7", "weight = 1", "weight = 7"),
        (
            "flow.a.source.rate",
            "\"3mbit\"",
            "rate = \"8mbit\"",
            "rate = \"3mbit\"",
        ),
        (
            "scenario.seed",
            "9",
            "duration = \"1s\"",
            "duration = \"1s\"\nseed = 9",
        ),
    ];
    for (path, value, old, new) in cases {
        let edited = edit(&base, path, value).expect(path);
        assert!(same_run(&edited, &by_hand(TWO_CLASSES, old, new)), "{path}");
        assert!(!same_run(&edited, &base), "{path} changes the run");
    }
}

#[test]
fn an_edit_adds_missing_fields_and_tables() {
    let base = load(TWO_CLASSES);
    let s = edit(&base, "link.buffer.limit", "\"64kb\"").expect("buffer added");
    assert_eq!(
        s.config.links[0].buffer.shared,
        Some(Limit::Bytes(Bytes(65_536)))
    );
    assert_eq!(s.config.links[0].buffer.overflow, Overflow::TailDrop);
    let s = edit(
        &base,
        "link.buffer",
        "{ limit = 20, overflow = \"push-out\" }",
    )
    .expect("table");
    assert_eq!(s.config.links[0].buffer.shared, Some(Limit::Packets(20)));
    assert_eq!(s.config.links[0].buffer.overflow, Overflow::PushOutLongest);
}

#[test]
fn topology_links_and_their_classes_are_named_too() {
    let base = load(TWO_HOPS);
    let s = edit(&base, "links.l2.rate", "\"8mbit\"").expect("link by name");
    assert_eq!(s.config.links[1].rate, Rate::from_mbit(8));
    let s = edit(&base, "links[1].class.y.limit", "7").expect("class of a link");
    assert_eq!(
        s.config.links[1].classes.classes()[1].spec.limit,
        Some(Limit::Packets(7))
    );
}

#[test]
fn edits_accumulate_and_the_last_wins() {
    let base = load(TWO_CLASSES);
    let once = base
        .with_edits(&[
            Edit::new("class.A.weight", "3"),
            Edit::new("link.rate", "\"5mbit\""),
        ])
        .expect("valid");
    let twice = once
        .with_edits(&[Edit::new("class.A.weight", "4")])
        .expect("valid");
    let expected = by_hand(
        &TWO_CLASSES.replacen("rate = \"10mbit\"", "rate = \"5mbit\"", 1),
        "weight = 2",
        "weight = 4",
    );
    assert!(same_run(&twice, &expected));
    assert_eq!(twice.source().edits.len(), 3);
    // The source loads again into the same scenario.
    assert!(same_run(
        &twice.source().clone().load().expect("reload"),
        &twice
    ));
}

#[test]
fn command_line_values_are_toml_or_else_strings() {
    let base = load(TWO_CLASSES);
    let s = base
        .with_edits(&[
            Edit::from_arg("link.rate", "20mbit"),
            Edit::from_arg("class.B.weight", "3"),
        ])
        .expect("valid");
    let expected = by_hand(
        &TWO_CLASSES.replacen("weight = 1", "weight = 3", 1),
        "rate = \"10mbit\"",
        "rate = \"20mbit\"",
    );
    assert!(same_run(&s, &expected));
}

fn only(ps: &[Problem]) -> &Problem {
    assert_eq!(ps.len(), 1, "{ps:#?}");
    &ps[0]
}

fn at_edit(p: &Problem, line: u32, column: u32) {
    let o = p.origin.as_ref().expect("a position");
    assert_eq!(
        (&*o.file, o.line, o.column),
        (EDIT_FILE, line, column),
        "{p}"
    );
}

#[test]
fn a_bad_value_is_the_loaders_problem_at_the_edit() {
    let base = load(TWO_CLASSES);
    let ps = edit(&base, "class.A.weight", "\"heavy\"").unwrap_err();
    let p = only(&ps);
    assert_eq!(p.field.as_deref(), Some("class[0].weight"));
    assert!(p.problem.contains("expected an integer"), "{p}");
    // `class.A.weight = "heavy"`: the value is at column 18.
    at_edit(p, 1, 18);
    assert!(
        p.to_string()
            .starts_with("edit:1:18: field `class[0].weight`: "),
        "{p}"
    );

    let ps = edit(&base, "link.rate", "\"10 parsecs\"").unwrap_err();
    at_edit(only(&ps), 1, 13);
}

#[test]
fn an_unknown_field_is_reported_with_a_suggestion() {
    let base = load(TWO_CLASSES);
    let ps = edit(&base, "class.A.weigth", "3").unwrap_err();
    let p = only(&ps);
    assert!(p.problem.contains("unknown field `weigth`"), "{p}");
    assert!(p.fix.contains("did you mean `weight`?"), "{p}");
    at_edit(p, 1, 9);
}

#[test]
fn an_unknown_name_lists_the_names() {
    let base = load(TWO_CLASSES);
    let ps = edit(&base, "class.a.weight", "3").unwrap_err();
    let p = only(&ps);
    assert_eq!(p.problem, "no `class` is named `a`");
    assert!(p.fix.contains("did you mean `A`?"), "{p}");
    assert!(p.fix.contains("the names are: A, B"), "{p}");
    at_edit(p, 1, 7);

    let ps = edit(&base, "class[5].weight", "3").unwrap_err();
    assert!(only(&ps).problem.contains("`class` has 2 tables"), "{ps:?}");
    let ps = edit(&base, "link.rate.x", "3").unwrap_err();
    assert!(
        only(&ps)
            .problem
            .contains("`link.rate` is string, not a table"),
        "{ps:?}"
    );
    let ps = edit(&base, "class..weight", "3").unwrap_err();
    assert!(only(&ps).problem.starts_with("bad path"), "{ps:?}");
    let ps = edit(&base, "class.A.weight", "3 3").unwrap_err();
    at_edit(only(&ps), 1, 18);
}

#[test]
fn the_nth_edit_is_line_n_and_other_problems_stay_in_the_file() {
    let base = load(TWO_CLASSES);
    // Edit 2 makes flow `b` send into a class that does not exist: the problem is the
    // edit's. Edit 1 is fine.
    let ps = base
        .with_edits(&[
            Edit::new("class.A.weight", "3"),
            Edit::new("flow.b.class", "\"C\""),
        ])
        .unwrap_err()
        .0;
    let p = only(&ps);
    assert!(p.problem.contains("`C`"), "{p}");
    at_edit(p, 2, 16);

    // A link rate that the edit makes too small for the classes' rates is reported
    // where the file's `[link]` is, which the edit did not move.
    let text = TWO_CLASSES.replacen("weight = 2", "weight = 2\nrate = \"7mbit\"", 1);
    let base = load(&text);
    let ps = edit(&base, "link.rate", "\"5mbit\"").unwrap_err();
    let in_file: Vec<&Problem> = ps
        .iter()
        .filter(|p| p.origin.as_ref().is_some_and(|o| &*o.file == "t.toml"))
        .collect();
    assert!(!in_file.is_empty(), "{ps:#?}");
    let (line, _) = position_of(&text, "[link]");
    assert!(
        in_file
            .iter()
            .any(|p| p.origin.as_ref().unwrap().line == line),
        "{ps:#?}"
    );
}

mod never_panics {
    use super::*;
    use proptest::prelude::*;

    const KEYS: &[&str] = &[
        "link", "class", "flow", "scenario", "A", "B", "a", "rate", "weight", "source", "buffer",
        "limit", "[0]", "[9]", "\"x.y\"", "", "name", "links", "é",
    ];
    const VALUES: &[&str] = &[
        "3",
        "0",
        "-1",
        "\"10mbit\"",
        "\"\"",
        "[]",
        "{}",
        "{ limit = 1 }",
        "true",
        "1.5",
        "\"A\"",
        "[[1]]",
        "\"",
        "}",
        "\n",
        "nan",
        "9223372036854775807",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// Any path and value: a scenario the simulator accepts, or problems with
        /// messages.
        #[test]
        fn any_edit(
            edits in proptest::collection::vec(
                (
                    proptest::collection::vec(0..KEYS.len(), 1..5),
                    0..VALUES.len(),
                    any::<bool>(),
                ),
                1..4,
            )
        ) {
            let base = load(TWO_CLASSES);
            let edits: Vec<Edit> = edits
                .into_iter()
                .map(|(keys, v, dotted)| {
                    let sep = if dotted { "." } else { "" };
                    let path: Vec<&str> = keys.into_iter().map(|k| KEYS[k]).collect();
                    Edit::new(path.join(sep), VALUES[v])
                })
                .collect();
            match base.with_edits(&edits) {
                Ok(s) => prop_assert!(linkshare_sim::Simulator::new(&s.config).is_ok()),
                Err(ps) => prop_assert!(ps.0.iter().all(|p| !p.problem.is_empty())),
            }
        }
    }
}
