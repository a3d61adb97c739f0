//! The loader never panics: random bytes and random edits of the example scenarios give
//! a scenario the simulator accepts, or problems, each with a message.

mod common;

use common::scenarios_dir;
use linkshare_scenario::load_str;
use proptest::prelude::*;

const EXAMPLES: [&str; 4] = [
    include_str!("../../../scenarios/two-classes-drr.toml"),
    include_str!("../../../scenarios/demo.toml"),
    include_str!("../../../scenarios/onoff-mix.toml"),
    include_str!("../../../scenarios/tcp-mix.toml"),
];

/// Values that stress the readers: wrong types, extremes, bad units, unicode.
const GARBAGE: &[&str] = &[
    "",
    "0",
    "-1",
    "1.5",
    "1e999",
    "nan",
    "true",
    "\"\"",
    "\"x\"",
    "[]",
    "[[]]",
    "{}",
    "{ type = \"cbr\" }",
    "\"0s\"",
    "\"0b\"",
    "\"0bit\"",
    "\"18446744073709551615gbit\"",
    "\"99999999999s\"",
    "\"1.5b\"",
    "\"10 mbit\"",
    "\"link\"",
    "\"src\"",
    "\"é\"",
    "[[\"0s\", \"1s\"], [\"0s\", \"1s\"]]",
    "[\"1s\"]",
    "\"traces/probe.csv\"",
    "\"/\"",
    "\"../../../../../etc/passwd\"",
    "9223372036854775807",
    "0x10",
    "\"push-out\"",
    "\"tcp\"",
    "\"udp\"",
    "\"reno\"",
    "\"fsc-paper\"",
    "[1, 2]",
    "4294967295",
    "\"4294967295b\"",
    "false",
    "{ rate = \"0bit\" }",
];

#[derive(Clone, Debug)]
enum Edit {
    Delete(usize),
    Duplicate(usize),
    Swap(usize, usize),
    /// Replace the value after `=` on a line.
    Value(usize, usize),
    /// Replace one character with another.
    Char(usize, char),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        any::<usize>().prop_map(Edit::Delete),
        any::<usize>().prop_map(Edit::Duplicate),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Edit::Swap(a, b)),
        (any::<usize>(), 0..GARBAGE.len()).prop_map(|(a, g)| Edit::Value(a, g)),
        (
            any::<usize>(),
            prop_oneof![
                Just('"'),
                Just('['),
                Just('='),
                Just('\n'),
                Just('#'),
                any::<char>()
            ]
        )
            .prop_map(|(a, c)| Edit::Char(a, c)),
    ]
}

fn apply(text: &str, edits: &[Edit]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    for e in edits {
        if lines.is_empty() {
            break;
        }
        let n = lines.len();
        match *e {
            Edit::Delete(i) => {
                lines.remove(i % n);
            }
            Edit::Duplicate(i) => {
                let l = lines[i % n].clone();
                lines.insert(i % n, l);
            }
            Edit::Swap(a, b) => lines.swap(a % n, b % n),
            Edit::Value(i, g) => {
                let l = &mut lines[i % n];
                if let Some(eq) = l.find('=') {
                    l.truncate(eq + 1);
                    l.push(' ');
                    l.push_str(GARBAGE[g]);
                }
            }
            Edit::Char(i, c) => {
                let l = &mut lines[i % n];
                let chars: Vec<char> = l.chars().collect();
                if !chars.is_empty() {
                    let k = (i / n) % chars.len();
                    *l = chars[..k]
                        .iter()
                        .chain([c].iter())
                        .chain(chars[k + 1..].iter())
                        .collect();
                }
            }
        }
    }
    lines.join("\n")
}

fn check(text: &str) {
    match load_str(text, "fuzz.toml", &scenarios_dir()) {
        // What the loader accepts, the simulator accepts too.
        Ok(s) => {
            if let Err(e) = linkshare_sim::Simulator::new(&s.config) {
                panic!("loaded, but the simulator refuses it: {e}\n{text}");
            }
        }
        Err(problems) => {
            assert!(!problems.0.is_empty());
            for p in &problems.0 {
                assert!(!p.problem.is_empty(), "{p:?}");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        check(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn random_toml_like_text(text in "[\\[\\]a-z_=\" .,0-9{}\\n#-]{0,300}") {
        check(&text);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    #[test]
    fn mutated_examples(which in 0..EXAMPLES.len(), edits in proptest::collection::vec(edit(), 1..6)) {
        check(&apply(EXAMPLES[which], &edits));
    }
}

#[test]
fn unmutated_examples_load() {
    for text in EXAMPLES {
        assert!(load_str(text, "x.toml", &scenarios_dir()).is_ok());
    }
}
