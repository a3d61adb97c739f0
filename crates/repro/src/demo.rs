//! The built-in demo: a 10 Mbit/s link shared by a voice-like CBR class, a web-like
//! Poisson class and a bulk transfer that keeps a deep queue from 2 s on
//! (`scenarios/demo.toml`, embedded), compared under FIFO, strict priority and DRR.
//! Under FIFO the voice packets wait behind the bulk queue; a priority or fair-queueing
//! discipline isolates them.

use std::path::Path;

use linkshare_core::sched::SchedulerKind;
use linkshare_scenario::{self as scenario, Scenario};

use crate::ReproError;

/// The demo scenario, as shipped in `scenarios/demo.toml`.
pub const DEMO_TOML: &str = include_str!("../../../scenarios/demo.toml");

/// The schedulers the demo compares, in this order.
pub const SCHEDULERS: [SchedulerKind; 3] =
    [SchedulerKind::Fifo, SchedulerKind::Prio, SchedulerKind::Drr];

/// The built-in demo scenario.
pub fn scenario() -> Result<Scenario, ReproError> {
    scenario::load_str(DEMO_TOML, "demo.toml (built in)", Path::new("."))
        .map_err(|p| ReproError::Internal(format!("the built-in demo scenario is invalid:\n{p}")))
}
