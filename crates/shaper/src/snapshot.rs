//! The shaper's numbers at one instant: what Prometheus scrapes, what `summary.json`
//! and the final table are written from. Taken by the datapath between two packets, so
//! the qdisc's identities (received = sent + dropped + queued, per class and in total)
//! hold in every snapshot.

use linkshare_core::stats::Counters;
use linkshare_core::units::{Duration, Rate};
use linkshare_sim::result::DelayStats;

use crate::hist::Histogram;

/// One class at the snapshot's instant.
#[derive(Clone, Debug)]
pub struct ClassSnapshot {
    /// Its name.
    pub name: String,
    /// Its parent's name (`None` for the root, named after the link).
    pub parent: Option<String>,
    /// Whether it holds packets.
    pub leaf: bool,
    /// The qdisc's counters (for interior classes and the root: sums over the leaves
    /// below).
    pub counters: Counters,
    /// Bits per second sent over the last publishing interval.
    pub rate_bps: f64,
    /// Time from arrival to the start of transmission, when the snapshot is for a
    /// summary (`None` in the periodic ones).
    pub delay: Option<DelayStats>,
}

/// The datapath's own counters (beyond the qdisc's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DatapathStats {
    /// Frames read from `in`'s receive ring.
    pub rx_frames: u64,
    /// Their bytes.
    pub rx_bytes: u64,
    /// Frames that did not parse (they went to the default class), by
    /// [`crate::UNPARSED_REASONS`] index.
    pub unparsed: [u64; 6],
    /// Super-frames cut into segments.
    pub segmented: u64,
    /// Segments they were cut into.
    pub segments: u64,
    /// Partial transport checksums completed.
    pub checksums_completed: u64,
    /// Frames lost reading the copy path of the receive ring.
    pub rx_errors: u64,
    /// Frames the kernel dropped because `in`'s receive ring was full (never seen).
    pub ring_drops_in: u64,
    /// Frames the kernel dropped because `out`'s receive ring was full (never seen).
    pub ring_drops_out: u64,
    /// Frames handed to the kernel on `out`.
    pub tx_frames: u64,
    /// Frames the kernel refused on `out` (after the qdisc counted them sent).
    pub tx_errors: u64,
    /// `sendmmsg` calls on `out`.
    pub tx_calls: u64,
    /// Frames passed back from `out` to `in`.
    pub reverse_frames: u64,
    /// Of them, refused by the kernel or too large.
    pub reverse_errors: u64,
    /// Turns of the datapath loop.
    pub loops: u64,
    /// Times it slept (poll).
    pub sleeps: u64,
    /// Reloads applied.
    pub reloads: u64,
    /// Reloads refused (invalid configuration).
    pub reload_failures: u64,
    /// Wall time of the loop turns that found work, nanoseconds: the datapath's busy
    /// time (frames sent per busy second is its forwarding capacity, whatever pace the
    /// traffic comes at).
    pub busy_ns: u64,
    /// CPU time of the datapath thread in user space, nanoseconds (both trees).
    pub cpu_user_ns: u64,
    /// CPU time of the datapath thread in the kernel (its system calls, and what the
    /// kernel does in them: a veth delivers to the peer's stack there), nanoseconds.
    pub cpu_system_ns: u64,
}

/// The frame pool.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Slots in all.
    pub capacity: u64,
    /// Slots holding a queued frame.
    pub in_use: u64,
    /// The most ever in use at once.
    pub high_water: u64,
}

/// See the [module docs](self).
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// The configuration's name.
    pub name: String,
    /// The discipline.
    pub scheduler: &'static str,
    /// The link rate.
    pub rate: Rate,
    /// `in` and `out`.
    pub interfaces: (String, String),
    /// Time since the shaper started.
    pub uptime: Duration,
    /// Every class of the current tree, root first, in id order.
    pub classes: Vec<ClassSnapshot>,
    /// Classes removed by reloads, with their final counters (summed by name).
    pub removed: Vec<(String, Counters)>,
    /// The datapath's counters.
    pub stats: DatapathStats,
    /// The pool.
    pub pool: PoolStats,
    /// Pacing error: actual minus scheduled start of each transmission.
    pub pacing: Histogram,
    /// How late the loop woke for frames that arrived while it slept, from the
    /// kernel's receipt of the earliest (its receive ring timestamp) to the end of the
    /// sleep: the operating system's share of an idle link's latency. The loop's, so
    /// in the forward snapshot only (empty in the reverse one).
    pub wakeup: Histogram,
    /// The reverse tree's snapshot, when one is configured: its `interfaces` are
    /// (`out`, `in`), its `stats` count the frames read on `out` and sent on `in`; the
    /// loop's own counters (turns, sleeps, reloads, ring drops) are in this, the
    /// forward snapshot, only.
    pub reverse: Option<Box<Snapshot>>,
}

impl Snapshot {
    /// Checks the identities in every class of both trees, removed ones included.
    pub fn check_conservation(&self) -> Result<(), String> {
        if let Some(r) = &self.reverse {
            r.check_conservation()
                .map_err(|e| format!("reverse tree: {e}"))?;
        }
        for c in &self.classes {
            c.counters.check_identities(&c.name)?;
        }
        for (name, c) in &self.removed {
            c.check_identities(name)?;
            if c.queued.packets != 0 {
                return Err(format!("removed class {name} still holds packets"));
            }
        }
        Ok(())
    }

    /// Pacing error quantile `permille`/1000 (bucket upper bound).
    pub fn pacing_quantile(&self, permille: u64) -> Duration {
        self.pacing.quantile_permille(permille)
    }
}
