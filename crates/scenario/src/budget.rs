//! The memory budget of a run: its default for this machine, and the check made before
//! running, which refuses a scenario that must take more (see
//! [`linkshare_sim::memory::estimate`]) with the cause and the fix.

use linkshare_sim::memory::{self, human_bytes};

use crate::{Problem, Problems, Scenario};

/// Used when the machine's memory cannot be read.
pub const FALLBACK_BUDGET: u64 = 4 << 30;

/// The default budget of a run: half of the machine's memory (`MemTotal` of
/// `/proc/meminfo`), or [`FALLBACK_BUDGET`] where that cannot be read.
pub fn default_memory_budget() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kib.saturating_mul(1024) / 2)
        })
        .unwrap_or(FALLBACK_BUDGET)
}

impl Scenario {
    /// Refuses the scenario when what it must take in memory (at least, see
    /// [`memory::estimate`]) is above `budget` bytes: one problem naming each queue that
    /// must grow (located at its class) and the window series, with the fix.
    pub fn check_memory(&self, budget: u64) -> Result<(), Problems> {
        let e = memory::estimate(&self.config);
        let need = e.at_least.total();
        if need <= budget {
            return Ok(());
        }
        let head = format!(
            "this run needs at least {} of memory, more than the budget of {}",
            human_bytes(need),
            human_bytes(budget)
        );
        let raise = "or raise --max-memory (default: half the machine's memory)";
        let mut problems = Vec::new();
        for g in &e.growing {
            let link = &self.config.links[g.link.0 as usize];
            let spec = &link.classes.get(g.class).spec;
            problems.push(Problem {
                origin: spec.origin_of("limit").cloned(),
                field: None,
                problem: format!(
                    "{head}: the queue of class `{}` on link `{}` has no limit and must hold \
                     {} packets ({}) at once: {}",
                    spec.name,
                    link.name,
                    g.packets,
                    human_bytes(g.packets.saturating_mul(memory::PACKET_BYTES)),
                    g.why
                ),
                fix: format!(
                    "give the class a limit (a leaf without `limit` has 1000 packets; \
                     `limit = \"none\"` is unbounded), lower the sources' rates or the \
                     duration, {raise}"
                ),
            });
        }
        if e.at_least.series > budget / 2 || problems.is_empty() {
            problems.push(Problem {
                origin: None,
                field: Some("scenario.window".to_owned()),
                problem: format!(
                    "{head}: the throughput and backlog series keep one value per window \
                     for every leaf and flow ({})",
                    human_bytes(e.at_least.series)
                ),
                fix: format!("lengthen `window` or shorten the run, {raise}"),
            });
        }
        Err(Problems(problems))
    }
}
