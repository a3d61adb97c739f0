//! What a simulation is made of, validated and in memory.
//!
//! The command line's scenario loader builds a [`SimConfig`] from a TOML file; tests and
//! benchmarks build one directly. Everything here is plain data: the simulator never
//! reads files.

use std::sync::Arc;

use linkshare_core::buffer::BufferConfig;
use linkshare_core::hierarchy::{ClassId, ClassTree};
use linkshare_core::sched::SchedulerKind;
use linkshare_core::units::{Bytes, Duration, Instant, Rate};

/// Index of a node in [`SimConfig::nodes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub u32);

/// Index of a link in [`SimConfig::links`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LinkId(pub u32);

/// Index of a flow in [`SimConfig::flows`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlowId(pub u32);

/// A whole simulation.
#[derive(Clone, Debug)]
pub struct SimConfig {
    /// Seed of the run; every source draws from its own stream derived from it.
    pub seed: u64,
    /// The run covers `[0, duration)`: sources stop generating and measurement ends;
    /// packets still in the network are reported as queued or in flight (see
    /// [`crate::result`]).
    pub duration: Duration,
    /// Hosts and routers.
    pub nodes: Vec<NodeConfig>,
    /// Unidirectional links, each with an egress port (scheduler) at its `from` end.
    pub links: Vec<LinkConfig>,
    /// Traffic.
    pub flows: Vec<FlowConfig>,
    /// What to measure.
    pub measure: MeasureConfig,
}

/// A host or router.
#[derive(Clone, Debug)]
pub struct NodeConfig {
    /// Unique name.
    pub name: String,
}

/// A unidirectional link from `from` to `to` with a scheduler at its egress port.
#[derive(Clone, Debug)]
pub struct LinkConfig {
    /// Unique name.
    pub name: String,
    /// Sending node (owns the egress port).
    pub from: NodeId,
    /// Receiving node.
    pub to: NodeId,
    /// Line rate.
    pub rate: Rate,
    /// Propagation delay.
    pub delay: Duration,
    /// Extra bytes counted on the wire per packet (framing); 0 in the papers.
    pub overhead: Bytes,
    /// The class hierarchy of the egress port; its root rate equals `rate`.
    pub classes: Arc<ClassTree>,
    /// The discipline of the egress port.
    pub scheduler: SchedulerKind,
    /// The shared buffer of the egress port.
    pub buffer: BufferConfig,
}

/// One hop of a flow's route: the link and the class of that link's hierarchy the
/// flow's packets are queued in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hop {
    /// The link.
    pub link: LinkId,
    /// A leaf of the link's class tree.
    pub class: ClassId,
}

/// A flow: a source, a static route, and when it is on.
#[derive(Clone, Debug)]
pub struct FlowConfig {
    /// Unique name.
    pub name: String,
    /// Links in order from the source's node to the sink's; consecutive links share a
    /// node. Non-empty.
    pub route: Vec<Hop>,
    /// What the source sends.
    pub source: SourceConfig,
    /// When the source is on.
    pub schedule: Schedule,
}

/// The intervals `[start, stop)` during which a source generates traffic: sorted,
/// disjoint, non-empty intervals (touching is allowed). Outside them it is silent (a
/// greedy source stops refilling; packets already queued still drain); at the start of
/// each interval it restarts its pattern, as documented per source in
/// [`crate::source`]. Intervals may extend past the run's duration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// Half-open intervals, sorted and disjoint.
    pub on: Vec<(Instant, Instant)>,
}

impl Schedule {
    /// On from `0` until `until`.
    pub fn always(until: Duration) -> Schedule {
        Schedule {
            on: vec![(Instant::ZERO, Instant::ZERO + until)],
        }
    }
}

/// Packet generators. Every size is the packet's length on the wire in bytes.
#[derive(Clone, Debug)]
pub enum SourceConfig {
    /// Constant bit rate: one packet every `size / rate`.
    Cbr {
        /// Rate.
        rate: Rate,
        /// Packet size.
        size: u32,
    },
    /// Poisson arrivals of mean rate `rate` (exponential gaps, mean `size / rate`).
    Poisson {
        /// Mean rate.
        rate: Rate,
        /// Packet size.
        size: u32,
    },
    /// A burst of `burst` packets sent at `peak` every `period` (the H-FSC paper's
    /// audio/video and the FSC paper's ON-OFF sources).
    PeriodicOnOff {
        /// Packets per period.
        burst: u32,
        /// Rate at which a burst is sent.
        peak: Rate,
        /// Period.
        period: Duration,
        /// Packet size.
        size: u32,
    },
    /// Exponentially distributed ON and OFF periods; CBR at `peak` while ON.
    ExpOnOff {
        /// Rate while on.
        peak: Rate,
        /// Mean ON time.
        mean_on: Duration,
        /// Mean OFF time.
        mean_off: Duration,
        /// Packet size.
        size: u32,
    },
    /// Two-state Markov-modulated Poisson process: Poisson at `rates[s]` while in state
    /// `s`, leaving state `s` after an exponential time of mean `mean_sojourn[s]`.
    Markov2 {
        /// Mean rate in each state.
        rates: [Rate; 2],
        /// Mean time spent in each state.
        mean_sojourn: [Duration; 2],
        /// Packet size.
        size: u32,
    },
    /// Pareto-distributed ON and OFF periods (shape `shape`, mean as given); CBR at
    /// `peak` while ON. Aggregates of such sources are self-similar.
    ParetoOnOff {
        /// Rate while on.
        peak: Rate,
        /// Mean ON time.
        mean_on: Duration,
        /// Mean OFF time.
        mean_off: Duration,
        /// Pareto shape (tail index), > 1; 1.2 to 1.5 give long-range dependence.
        shape: f64,
        /// Packet size.
        size: u32,
    },
    /// Always backlogged: keeps `backlog` packets queued at the first hop, topping the
    /// backlog up whenever one of its packets starts transmission there (see
    /// [`crate::source::greedy`]).
    Greedy {
        /// Packet size.
        size: u32,
        /// Packets kept queued at the first hop (at least 1; 2 keeps the class backlogged
        /// at the instant of a dequeue).
        backlog: u32,
    },
    /// Replays a trace: one packet of `size` bytes at `start + at` for every record,
    /// `start` being the start of the flow's first ON interval; records falling outside
    /// the ON intervals are skipped.
    Trace {
        /// Records sorted by `at`.
        records: Arc<[TraceRecord]>,
    },
}

/// One packet of a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceRecord {
    /// Send time, relative to the start of the source's first ON interval.
    pub at: Duration,
    /// Packet size.
    pub size: u32,
}

/// What the run measures.
#[derive(Clone, Debug)]
pub struct MeasureConfig {
    /// Length of the jumping windows of throughput and backlog series (0.2 s default).
    pub window: Duration,
    /// Up to this many per-packet delay records are kept over all links (10 million by
    /// default); beyond it every port's delays go to exact per-class histograms. Flows'
    /// end-to-end delays have a budget of their own of the same size, beyond which they
    /// go to exact per-flow histograms.
    pub max_delay_records: u64,
}

impl Default for MeasureConfig {
    fn default() -> Self {
        MeasureConfig {
            window: Duration::from_millis(200),
            max_delay_records: 10_000_000,
        }
    }
}
