//! The simulator on any scenario the loader accepts: a short run (at most 20 ms of
//! simulated time and 2^20 events) ends without a panic, and its counters account for
//! every packet (`RunResult::check_conservation`).
#![no_main]

use std::ops::ControlFlow;
use std::path::Path;

use libfuzzer_sys::fuzz_target;
use linkshare_core::units::Duration;
use linkshare_scenario::load_str;
use linkshare_sim::Simulator;

/// The longest simulated time a run covers.
const MAX_RUN: Duration = Duration::from_millis(20);
/// A run's data beyond this stops it cleanly (the result says so).
const MEMORY: u64 = 256 << 20;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios"));
    let Ok(scenario) = load_str(text, "fuzz.toml", dir) else {
        return;
    };
    let mut config = scenario.config;
    config.duration = config.duration.min(MAX_RUN);
    // A configuration the shorter run makes invalid is not a finding.
    let Ok(sim) = Simulator::new(&config) else {
        return;
    };
    // The first progress report comes after 2^20 events: the run stops there.
    let result = sim
        .memory_budget(MEMORY)
        .run_interruptible(&mut |_, _, events| {
            if events > 0 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
    if let Some(result) = result {
        if let Err(e) = result.check_conservation() {
            panic!("a packet unaccounted for: {e}");
        }
    }
});
