//! Relaxation: which constraint gives way when not all can hold, and the counts of
//! every time one did.
//!
//! The order is the paper's implementation's (§6): **loss bounds**, then **delay and
//! throughput bounds**, then **ratios**. The buffer limit is physical and comes first of
//! all. Each stage of the controller applies it where it decides:
//!
//! 1. a full shared buffer must lose one packet: the loss loop prefers a victim whose
//!    drop keeps every loss bound, the one the loss ratios ask for first; if every
//!    candidate's bound would be exceeded it drops anyway, from the class furthest below
//!    its bound ([`Relaxations::loss_bound`] when that takes a class over its bound,
//!    [`Relaxations::loss_ratio`] when the ratios' choice was skipped for its bound);
//! 2. the minimum rates of the delay and throughput bounds are met by taking rate from
//!    other classes above their own minimum, most important class first; what is still
//!    missing is made up by dropping from the needy class's tail, but only within its
//!    loss bound ([`Relaxations::delay_bound`] when the delay bound is left unmet,
//!    [`Relaxations::min_rate`] when the throughput bound is: dropping cannot help it);
//! 3. the proportional delay loop never takes a class below its minimum rate
//!    ([`Relaxations::delay_ratio`] when a step was cut short by one).
//!
//! The counts, with the outcomes the user sees ([`Relaxations::delay_misses`]), are
//! reported by [`Scheduler::discipline_counters`](crate::sched::Scheduler::discipline_counters).

/// One class's counts. Each is a number of events (arrivals or drops), over the whole
/// run (busy periods do not reset them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Relaxations {
    /// Drops on a full buffer that left the class's loss rate above its bound.
    pub loss_bound: u64,
    /// Controller updates after which the class's backlog could not meet its delay bound
    /// at its rate: the loss bound stopped the drops that would have made it.
    pub delay_bound: u64,
    /// Controller updates that left the class's rate below its throughput bound.
    pub min_rate: u64,
    /// Proportional steps cut short by this class's minimum rate.
    pub delay_ratio: u64,
    /// Drops on a full buffer that could not take this class, the one the loss ratios
    /// chose, because of its loss bound.
    pub loss_ratio: u64,
    /// Packets that left after waiting longer than the class's delay bound (ALTQ's
    /// `adc_violations`).
    pub delay_misses: u64,
}

impl Relaxations {
    /// The counts with their report names, in report order.
    pub fn named(&self) -> [(&'static str, u64); 6] {
        [
            ("relaxed_loss_bound", self.loss_bound),
            ("relaxed_delay_bound", self.delay_bound),
            ("relaxed_min_rate", self.min_rate),
            ("relaxed_delay_ratio", self.delay_ratio),
            ("relaxed_loss_ratio", self.loss_ratio),
            ("delay_bound_misses", self.delay_misses),
        ]
    }
}
