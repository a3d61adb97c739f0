//! What a run's data takes in memory: counted while it runs, against a budget.
//!
//! The engine counts the structures that grow with the traffic — packets queued at the
//! ports and propagating on links, pending events, per-packet records kept in memory,
//! distinct delays in the exact distributions, application bursts — and the window
//! series, which are allocated at the start. Each item is charged a fixed number of
//! bytes, its size in memory with the slack of the containers holding it (a growing
//! vector holds up to twice its length), so the count is an estimate from above of what
//! these structures take, the same on every machine: a run stopped by the budget stops
//! at the same instant everywhere. The program itself (its code, the configuration, the
//! disciplines' per-class state) and the agents' private state (TCP buffers of
//! sequence numbers) are not counted.
//!
//! With a budget ([`crate::Simulator::memory_budget`]) the engine checks the count
//! every [`CHECK_EVERY`] events and stops the run cleanly when it is above: the result
//! says so ([`crate::result::RunResult::stopped`]) and measures everything up to that
//! instant.

use std::fmt;

use linkshare_core::hierarchy::ClassId;
use linkshare_core::units::Instant;

use crate::config::{LinkId, SimConfig, SourceConfig, Transport};
use crate::packet::SimPacket;
use crate::result::{BurstRecord, DelayRecord, ServiceCell};

/// Events between two checks of the memory budget.
pub const CHECK_EVERY: u64 = 1 << 12;

/// Bytes charged per packet queued at a port, on a wire or propagating: the packet and
/// the slack of the queue holding it.
pub const PACKET_BYTES: u64 = 2 * size_of::<SimPacket>() as u64;
/// Bytes charged per pending event: the heap entry and its slack.
pub const EVENT_BYTES: u64 = 64;
/// Bytes charged per per-packet record kept in memory.
pub const RECORD_BYTES: u64 = 2 * size_of::<DelayRecord>() as u64;
/// Bytes charged per distinct delay of an exact distribution: a hash map entry of two
/// `u64` and its slack.
pub const DELAY_BIN_BYTES: u64 = 40;
/// Bytes charged per cell of the window series: the counters during the run and the
/// samples of the result.
pub const SERIES_CELL_BYTES: u64 = 16 + 2 * 32;
/// Bytes charged per cell of a leaf's service series (arrivals, drops and waits per
/// window), on top of [`SERIES_CELL_BYTES`]: made during the run, handed to the result.
pub const SERVICE_CELL_BYTES: u64 = size_of::<ServiceCell>() as u64;

/// The bytes of the window series of `leaf_cells` cells of the leaves (windows times
/// leaves) and `flow_cells` of the flows.
pub fn series_bytes(leaf_cells: u64, flow_cells: u64) -> u64 {
    leaf_cells
        .saturating_mul(SERIES_CELL_BYTES + SERVICE_CELL_BYTES)
        .saturating_add(flow_cells.saturating_mul(SERIES_CELL_BYTES))
}

/// Bytes charged per application burst.
pub const BURST_BYTES: u64 = 2 * size_of::<BurstRecord>() as u64;

/// What a run's data takes, by kind, in bytes (see the [module docs](self)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryUse {
    /// Packets queued at ports, on wires and propagating.
    pub packets: u64,
    /// Pending events.
    pub events: u64,
    /// Per-packet records kept in memory.
    pub records: u64,
    /// Distinct delays of the exact delay distributions.
    pub delays: u64,
    /// Throughput and backlog series of every leaf and flow.
    pub series: u64,
    /// Application bursts.
    pub bursts: u64,
}

impl MemoryUse {
    /// The sum of every kind.
    pub fn total(&self) -> u64 {
        self.packets + self.events + self.records + self.delays + self.series + self.bursts
    }

    /// The kinds with their names, largest first (ties in declaration order).
    pub fn parts(&self) -> Vec<(&'static str, u64)> {
        let mut parts = vec![
            ("queued and propagating packets", self.packets),
            ("pending events", self.events),
            ("per-packet records in memory", self.records),
            ("distinct delays of the delay distributions", self.delays),
            ("throughput and backlog series", self.series),
            ("application bursts", self.bursts),
        ];
        parts.sort_by_key(|p| std::cmp::Reverse(p.1));
        parts
    }
}

/// `bytes` with a binary unit (`1.5 GiB`), for messages.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

impl fmt::Display for MemoryUse {
    /// `1.2 GiB: 1.1 GiB queued and propagating packets, 80.0 MiB pending events, ...`
    /// (the kinds that take anything, largest first).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", human_bytes(self.total()))?;
        let parts: Vec<String> = self
            .parts()
            .into_iter()
            .filter(|&(_, b)| b > 0)
            .map(|(name, b)| format!("{} {name}", human_bytes(b)))
            .collect();
        if !parts.is_empty() {
            write!(f, " ({})", parts.join(", "))?;
        }
        Ok(())
    }
}

/// What a run will take at least, known before it runs (see [`estimate`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Estimate {
    /// The lower bound, by kind.
    pub at_least: MemoryUse,
    /// The queues that must grow, largest first.
    pub growing: Vec<Growth>,
}

/// A queue without a limit that must hold at least `packets` at some point of the run.
#[derive(Clone, Debug, PartialEq)]
pub struct Growth {
    /// The link.
    pub link: LinkId,
    /// The leaf.
    pub class: ClassId,
    /// Packets it must hold at once, at least.
    pub packets: u64,
    /// What makes it grow, in words.
    pub why: String,
}

/// What a run of `config` will take at least, before it runs: the window series, which
/// are allocated at the start, and the packets that must pile up in a queue without a
/// limit (no class limit, no shared buffer) — an open-loop (UDP) source offering more
/// than the link's rate over its ON time, beyond what the link can send in the run, or a
/// UDP transfer of N bytes, all queued at its start. It is a lower bound: the rest
/// (delay distributions, events, queues that might grow) is watched while running.
pub fn estimate(config: &SimConfig) -> Estimate {
    let windows = config.duration.0.div_ceil(config.measure.window.0.max(1));
    let leaves: u64 = config
        .links
        .iter()
        .map(|l| l.classes.leaves().len() as u64)
        .sum();
    let series = series_bytes(
        windows.saturating_mul(leaves),
        windows.saturating_mul(config.flows.len() as u64),
    );
    let mut growing = Vec::new();
    let seconds = config.duration.as_secs_f64();
    for (l, link) in config.links.iter().enumerate() {
        // A shared buffer, or a discipline that keeps its own (bounded) buffer, holds
        // every queue of the link.
        if link.buffer.shared.is_some() || link.scheduler.kind().owns_buffer() {
            continue;
        }
        let unlimited = |c: ClassId| link.classes.get(c).spec.limit.is_none();
        // Per unlimited leaf: bits offered by open-loop sources over the run, the largest
        // packet, and the largest transfer queued at once.
        let mut offered: Vec<(ClassId, f64, u32, u64)> = Vec::new();
        for f in &config.flows {
            let Some(hop) = f.route.first() else { continue };
            if hop.link.0 as usize != l || f.transport != Transport::Udp || !unlimited(hop.class) {
                continue;
            }
            let on: f64 = f
                .schedule
                .on
                .iter()
                .map(|&(a, b)| {
                    b.min(Instant::ZERO.saturating_add(config.duration))
                        .since(a.min(b))
                        .as_secs_f64()
                })
                .sum();
            let (size, burst) = match &f.source {
                SourceConfig::Ftp {
                    bytes: Some(b),
                    size,
                } => (*size, *b / u64::from((*size).max(1))),
                s => (s.packet_size(), 0),
            };
            let rate = f.source.mean_rate_bps();
            let bits = if rate.is_finite() { rate * on } else { 0.0 };
            match offered.iter_mut().find(|o| o.0 == hop.class) {
                Some(o) => {
                    o.1 += bits;
                    o.2 = o.2.max(size);
                    o.3 = o.3.max(burst);
                }
                None => offered.push((hop.class, bits, size, burst)),
            }
        }
        let total: f64 = offered.iter().map(|o| o.1).sum();
        let excess = total - link.rate.bps() as f64 * seconds;
        for &(class, bits, size, burst) in &offered {
            // The class's share of the excess, in its largest packets.
            let piled = if excess > 0.0 && total > 0.0 {
                (excess * bits / total / 8.0 / f64::from(size.max(1))) as u64
            } else {
                0
            };
            let (packets, why) = if piled >= burst {
                (
                    piled,
                    format!(
                        "its UDP sources offer {:.0} bit/s on average beside the link's {}, \
                         and what the link cannot send stays queued",
                        bits / seconds.max(f64::MIN_POSITIVE),
                        link.rate
                    ),
                )
            } else {
                (
                    burst,
                    "a UDP transfer queues all its packets at once".to_owned(),
                )
            };
            if packets > 0 {
                growing.push(Growth {
                    link: LinkId(l as u32),
                    class,
                    packets,
                    why,
                });
            }
        }
    }
    growing.sort_by_key(|g| std::cmp::Reverse(g.packets));
    let packets: u64 = growing.iter().map(|g| g.packets).sum();
    Estimate {
        at_least: MemoryUse {
            packets: packets.saturating_mul(PACKET_BYTES),
            series,
            ..MemoryUse::default()
        },
        growing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_read_well() {
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(3 << 30), "3.0 GiB");
        let m = MemoryUse {
            packets: 2048,
            events: 1024,
            ..MemoryUse::default()
        };
        assert_eq!(
            m.to_string(),
            "3.0 KiB (2.0 KiB queued and propagating packets, 1.0 KiB pending events)"
        );
    }
}
