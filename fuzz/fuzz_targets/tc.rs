//! The tc importer: any text gives a scenario (which loads, and exports back to tc
//! commands) or problems, each with a message. Never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linkshare_tc::{Machine, Target, export_script, import_scenario};

fuzz_target!(|data: &[u8]| {
    let Ok(script) = std::str::from_utf8(data) else {
        return;
    };
    let target = Target {
        name: "fuzz",
        file: "fuzz.toml",
        interfaces: None,
    };
    match import_scenario(script, "fuzz.sh", &target, &Machine::default()) {
        Ok(outcome) => {
            let link =
                linkshare_scenario::load_single_link_str(&outcome.scenario, "fuzz.toml", "fuzz")
                    .unwrap_or_else(|p| {
                        panic!(
                            "imported, but the scenario does not load: {p}\n{}",
                            outcome.scenario
                        )
                    });
            // An export may refuse (with its reason); it must not panic.
            let _ = export_script(&link, "eth0");
        }
        Err(problems) => {
            assert!(!problems.0.is_empty());
            for p in &problems.0 {
                assert!(!p.problem.is_empty(), "a problem without a message: {p:?}");
            }
        }
    }
});
