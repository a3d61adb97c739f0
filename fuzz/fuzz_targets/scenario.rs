//! The scenario loader: any text gives a scenario the simulator accepts (and `validate`
//! can describe), or problems, each with a message. Never a panic.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use linkshare_scenario::{describe::describe, load_str};
use linkshare_sim::Simulator;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // Relative trace paths resolve against the shipped scenarios, as in the seed corpus.
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios"));
    match load_str(text, "fuzz.toml", dir) {
        Ok(scenario) => {
            let _ = describe(&scenario);
            if let Err(e) = Simulator::new(&scenario.config) {
                panic!("loaded, but the simulator refuses it: {e}");
            }
        }
        Err(problems) => {
            assert!(!problems.0.is_empty());
            for p in &problems.0 {
                assert!(!p.problem.is_empty(), "a problem without a message: {p:?}");
                let _ = p.to_string();
            }
        }
    }
});
