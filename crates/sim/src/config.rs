//! What a simulation is made of, validated and in memory.
//!
//! The command line's scenario loader builds a [`SimConfig`] from a TOML file; tests and
//! benchmarks build one directly. Everything here is plain data: the simulator never
//! reads files.

use std::sync::Arc;

use linkshare_core::buffer::BufferConfig;
use linkshare_core::hierarchy::{ClassId, ClassTree};
use linkshare_core::sched::SchedulerConfig;
use linkshare_core::sched::jobs::Constraints;
use linkshare_core::units::{Bytes, Duration, Instant, Rate};

/// Index of a node in [`SimConfig::nodes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub u32);

/// The name of the one forward link of a single-link network (the scenario format's
/// `[link]` form): reports name its classes without the link's name.
pub const SINGLE_LINK: &str = "link";

/// The name of the link that carries a single-link network's acknowledgements back
/// (from the receiving node to the sending one); reports name its classes
/// `link-reverse/CLASS` and leave the forward link's classes unprefixed.
pub const SINGLE_REVERSE_LINK: &str = "link-reverse";

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

impl SimConfig {
    /// One link between two nodes, `src` and `dst` (the link's `from` and `to` are set to
    /// them), and one always-on open-loop (UDP) flow per leaf of its class tree, in leaf
    /// order: flow `i`, named `f{i}`, sends `source(i)` into leaf `i`. Seed 1, default
    /// measurement; change the fields for anything else. The shape of most tests and
    /// benchmarks of a single port.
    pub fn one_flow_per_leaf(
        mut link: LinkConfig,
        duration: Duration,
        source: impl Fn(usize) -> SourceConfig,
    ) -> SimConfig {
        link.from = NodeId(0);
        link.to = NodeId(1);
        let flows = link
            .classes
            .leaves()
            .iter()
            .enumerate()
            .map(|(i, &class)| FlowConfig {
                name: format!("f{i}"),
                route: vec![Hop {
                    link: LinkId(0),
                    class,
                }],
                reverse: Vec::new(),
                source: source(i),
                transport: Transport::Udp,
                schedule: Schedule::always(duration),
            })
            .collect();
        SimConfig {
            seed: 1,
            duration,
            nodes: vec![
                NodeConfig { name: "src".into() },
                NodeConfig { name: "dst".into() },
            ],
            links: vec![link],
            flows,
            measure: MeasureConfig::default(),
        }
    }
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
    /// The discipline of the egress port, with its settings.
    pub scheduler: SchedulerConfig,
    /// The shared buffer of the egress port.
    pub buffer: BufferConfig,
}

impl LinkConfig {
    /// A link `from -> to` named `name`, at the rate of the root of `classes`, with no
    /// propagation delay, no framing overhead and the default buffer: the single
    /// bottleneck that tests and examples start from. Set other fields with struct
    /// update syntax (`LinkConfig { delay, ..LinkConfig::new(..) }`).
    pub fn new(
        name: impl Into<String>,
        from: NodeId,
        to: NodeId,
        classes: Arc<ClassTree>,
        scheduler: impl Into<SchedulerConfig>,
    ) -> Self {
        LinkConfig {
            name: name.into(),
            from,
            to,
            rate: classes.link_rate(),
            delay: Duration::ZERO,
            overhead: Bytes::ZERO,
            classes,
            scheduler: scheduler.into(),
            buffer: BufferConfig::default(),
        }
    }
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

/// A flow: a source, a transport, static routes, and when it is on.
#[derive(Clone, Debug)]
pub struct FlowConfig {
    /// Unique name.
    pub name: String,
    /// Links in order from the source's node to the sink's; consecutive links share a
    /// node. Non-empty.
    pub route: Vec<Hop>,
    /// Links in order from the sink's node back to the source's, along which the
    /// flow's reverse packets (acknowledgements) travel. Required (non-empty) for TCP,
    /// empty for UDP.
    pub reverse: Vec<Hop>,
    /// What the application sends.
    pub source: SourceConfig,
    /// How: open loop (UDP) or through a TCP connection.
    pub transport: Transport,
    /// When the source is on.
    pub schedule: Schedule,
}

/// The transport carrying a flow's application data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transport {
    /// Open loop: every packet the source emits enters the network at once, with the
    /// source's size; nothing is retransmitted.
    Udp,
    /// A TCP connection (see [`crate::tcp`]): what the source emits is written into the
    /// connection's send buffer as application bytes, and leaves as the congestion
    /// window allows, in segments of at most `mss` payload bytes plus `header`.
    Tcp(TcpConfig),
}

/// Which loss recovery a TCP sender uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcpVariant {
    /// RFC 5681: fast retransmit and fast recovery; a partial acknowledgement ends
    /// recovery.
    Reno,
    /// RFC 6582: fast recovery lasts until everything outstanding when it began is
    /// acknowledged, retransmitting one segment per partial acknowledgement.
    NewReno,
}

/// A TCP connection's parameters. Sizes in bytes, times in ns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TcpConfig {
    /// Loss recovery.
    pub variant: TcpVariant,
    /// Maximum segment size: payload bytes of a full segment.
    pub mss: u32,
    /// Bytes of TCP/IP header on every segment and acknowledgement (a pure
    /// acknowledgement is `header` bytes on the wire).
    pub header: u32,
    /// The receiver's window W: at most this many payload bytes outstanding.
    pub window: u64,
    /// Initial congestion window in segments; `None` gives RFC 5681's
    /// `min(4·MSS, max(2·MSS, 4380 B))`.
    pub initial_window: Option<u32>,
    /// RFC 6298 (2.4): the smallest retransmission timeout (1 s in the RFC).
    pub min_rto: Duration,
    /// The largest retransmission timeout, after backoff (RFC 6298 (2.5): at least
    /// 60 s).
    pub max_rto: Duration,
    /// The timeout before the first RTT sample (RFC 6298 (2.1): 1 s).
    pub initial_rto: Duration,
    /// The clock granularity G of RFC 6298 (2.2)–(2.3).
    pub granularity: Duration,
    /// Delayed acknowledgements (RFC 5681 §4.2): acknowledge every second full segment
    /// or after this delay, whichever comes first; `None` acknowledges every segment.
    pub delayed_ack: Option<Duration>,
    /// Open the connection with a SYN / SYN-ACK exchange before sending data; without
    /// it (the papers' simulators) data flows from the first instant.
    pub handshake: bool,
    /// Duplicate acknowledgements that trigger fast retransmit (3).
    pub dupack_threshold: u32,
    /// Record cwnd, ssthresh and RTT estimates over time (see
    /// [`crate::result::TcpSample`]).
    pub trace: bool,
    /// Slow-start restart after idle, as ns-2's `slow_start_restart_` (its default) with
    /// `restart_bugfix_`: a sender that has had everything acknowledged for at least one
    /// retransmission timeout before it sends again restarts from the initial window
    /// (`cwnd = min(cwnd, IW)`, `ssthresh` kept). See [`crate::tcp::sender`].
    pub idle_restart: bool,
}

impl Default for TcpConfig {
    /// NewReno, MSS 1000 B, 40 B headers, W = 64 KiB, RFC 6298's timer constants with a
    /// 1 ms clock, no delayed acknowledgements, no handshake, no trace, no restart after
    /// idle.
    fn default() -> Self {
        TcpConfig {
            variant: TcpVariant::NewReno,
            mss: 1000,
            header: 40,
            window: 65_536,
            initial_window: None,
            min_rto: Duration::from_secs(1),
            max_rto: Duration::from_secs(60),
            initial_rto: Duration::from_secs(1),
            granularity: Duration::from_millis(1),
            delayed_ack: None,
            handshake: false,
            dupack_threshold: 3,
            trace: false,
            idle_restart: false,
        }
    }
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
    /// Packets after independent Pareto gaps of mean `size / rate` (a renewal process;
    /// see [`crate::source::renewal`]).
    Pareto {
        /// Mean rate.
        rate: Rate,
        /// Pareto shape (tail index) of the gaps, > 1; below 2 their variance is
        /// infinite.
        shape: f64,
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
        /// The FSC paper's variations: a random start, random burst sizes, a new
        /// connection (or flow) per burst. All off by default.
        variations: OnOffVariations,
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
    /// A bulk transfer (FTP): `bytes` at the start of each ON interval, or endless
    /// (`None`). Over UDP the bytes leave as packets of `size` at once (endless: as a
    /// greedy source with a backlog of 2); over TCP they are written into the
    /// connection at once.
    Ftp {
        /// Bytes per transfer; `None` for an endless transfer.
        bytes: Option<u64>,
        /// Packet size over UDP (TCP uses its MSS).
        size: u32,
    },
    /// Telnet: one `size`-byte packet (write) after exponential gaps of mean
    /// `mean_gap`; each is a burst of its own.
    Telnet {
        /// Bytes per keystroke packet (64 in the FSC paper).
        size: u32,
        /// Mean gap between packets.
        mean_gap: Duration,
    },
    /// Web-like transfers: arrivals form a Poisson process whose mean offered rate is
    /// `load`; each transfer's length is drawn uniformly among `lengths` (an empirical
    /// distribution of equally likely values, e.g. the FSC paper's ten groups). Each
    /// transfer is a burst; over TCP each opens a connection of its own.
    Www {
        /// Mean offered load.
        load: Rate,
        /// Equally likely transfer lengths in bytes, non-empty.
        lengths: Arc<[u64]>,
        /// Packet size over UDP (TCP uses its MSS).
        size: u32,
    },
    /// Video: frame `k` of `frames` (bytes) is sent at `k · interval` after the start
    /// of the ON interval, as one burst of packets of at most `size` bytes; the trace
    /// loops.
    Video {
        /// Frame sizes in bytes, non-empty.
        frames: Arc<[u32]>,
        /// Time between frames (33.3 ms at 30 frames/s).
        interval: Duration,
        /// Largest packet size.
        size: u32,
    },
    /// A population of `swing.max` independent copies of `each`, of which
    /// `swing.level(t)` are on at time `t`: members `0 .. level` (see
    /// [`crate::source::population`]). `each` generates its own traffic from its timers:
    /// not greedy, FTP, a trace or another population.
    Population {
        /// What every member sends.
        each: Arc<SourceConfig>,
        /// How many members are on over time.
        swing: Swing,
    },
    /// Replays a trace: one packet of `size` bytes at `start + at` for every record,
    /// `start` being the start of the flow's first ON interval; records falling outside
    /// the ON intervals are skipped.
    Trace {
        /// Records sorted by `at`.
        records: Arc<[TraceRecord]>,
    },
}

/// How many members of a [`SourceConfig::Population`] are on over time: the number
/// `round(mid + amp · sin(2π t / period))` with `mid = (min + max) / 2` and
/// `amp = (max - min) / 2`, `t` the run's clock; constant `min` when `min = max`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Swing {
    /// The fewest members on (at `t = 3 period / 4`).
    pub min: u32,
    /// The most members on (at `t = period / 4`), and the population's size.
    pub max: u32,
    /// The period of the sine (unused when `min = max`).
    pub period: Duration,
}

/// Variations of a periodic ON-OFF source (see [`crate::source::periodic`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OnOffVariations {
    /// The first burst of each ON interval comes `Exp(mean) mod period` after the
    /// interval starts (one draw from the flow's stream), instead of at its start.
    pub start_offset_mean: Option<Duration>,
    /// Each burst has a geometric number of packets on {1, 2, ...} of this mean (one
    /// draw per burst), instead of `burst` (which is then the most a burst may have).
    pub geometric_mean: Option<u32>,
    /// Each burst begins a new connection over TCP, or a new flow over UDP (a new
    /// instance of a per-flow class, [`linkshare_core::perflow`]).
    pub new_connection: bool,
}

impl SourceConfig {
    /// The size of the packets it sends (the largest, for a video source); for a trace,
    /// the largest record's.
    pub fn packet_size(&self) -> u32 {
        match self {
            SourceConfig::Cbr { size, .. }
            | SourceConfig::Poisson { size, .. }
            | SourceConfig::Pareto { size, .. }
            | SourceConfig::PeriodicOnOff { size, .. }
            | SourceConfig::ExpOnOff { size, .. }
            | SourceConfig::Markov2 { size, .. }
            | SourceConfig::ParetoOnOff { size, .. }
            | SourceConfig::Greedy { size, .. }
            | SourceConfig::Ftp { size, .. }
            | SourceConfig::Telnet { size, .. }
            | SourceConfig::Www { size, .. }
            | SourceConfig::Video { size, .. } => *size,
            SourceConfig::Trace { records } => records.iter().map(|r| r.size).max().unwrap_or(1),
            SourceConfig::Population { each, .. } => each.packet_size(),
        }
    }

    /// The mean rate the source offers while on, bit/s (`f64::INFINITY` for a greedy
    /// source or an endless transfer): `cbr`, `poisson` and `pareto` their rate, periodic ON-OFF
    /// `burst · size · 8 / period` (with geometric bursts, their mean in place of `burst`), exponential and Pareto ON-OFF `peak · on / (on +
    /// off)`, `markov2` the time-weighted mean of its rates, `telnet` `size · 8 / gap`,
    /// `www` its load, `video` the trace's bits over its length in time, `trace` its bits
    /// over the time of its last record, a population its mean number of members on
    /// ([`Swing::mean_level`]) times a member's rate. The reference allocation's demands.
    pub fn mean_rate_bps(&self) -> f64 {
        let secs = |d: Duration| d.as_secs_f64();
        match self {
            SourceConfig::Cbr { rate, .. }
            | SourceConfig::Poisson { rate, .. }
            | SourceConfig::Pareto { rate, .. } => rate.bps() as f64,
            SourceConfig::Population { each, swing } => swing.mean_level() * each.mean_rate_bps(),
            SourceConfig::PeriodicOnOff {
                burst,
                period,
                size,
                variations,
                ..
            } => {
                // A geometric burst of mean m on {1, 2, ...}, capped at `burst`, has the
                // mean sum_{k<burst} (1 - 1/m)^k = m (1 - (1 - 1/m)^burst).
                let packets = match variations.geometric_mean {
                    Some(m) if m > 0 => {
                        let m = f64::from(m);
                        m * (1.0 - (1.0 - 1.0 / m).powf(f64::from(*burst)))
                    }
                    _ => f64::from(*burst),
                };
                packets * f64::from(*size) * 8.0 / secs(*period)
            }
            SourceConfig::ExpOnOff {
                peak,
                mean_on,
                mean_off,
                ..
            }
            | SourceConfig::ParetoOnOff {
                peak,
                mean_on,
                mean_off,
                ..
            } => {
                let (on, off) = (secs(*mean_on), secs(*mean_off));
                peak.bps() as f64 * on / (on + off)
            }
            SourceConfig::Markov2 {
                rates,
                mean_sojourn,
                ..
            } => {
                let (t0, t1) = (secs(mean_sojourn[0]), secs(mean_sojourn[1]));
                (rates[0].bps() as f64 * t0 + rates[1].bps() as f64 * t1) / (t0 + t1)
            }
            SourceConfig::Greedy { .. } => f64::INFINITY,
            SourceConfig::Trace { records } => {
                let span = records.last().map_or(Duration::ZERO, |r| r.at);
                if span == Duration::ZERO {
                    return 0.0;
                }
                let bytes: u64 = records.iter().map(|r| u64::from(r.size)).sum();
                bytes as f64 * 8.0 / secs(span)
            }
            SourceConfig::Ftp { .. } => f64::INFINITY,
            SourceConfig::Telnet { size, mean_gap } => f64::from(*size) * 8.0 / secs(*mean_gap),
            SourceConfig::Www { load, .. } => load.bps() as f64,
            SourceConfig::Video {
                frames, interval, ..
            } => {
                let bytes: u64 = frames.iter().map(|&f| u64::from(f)).sum();
                bytes as f64 * 8.0 / (secs(*interval) * frames.len() as f64)
            }
        }
    }
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
    /// default), in memory or by the run's record sink ([`crate::records`]); beyond it
    /// they are dropped. The exact delay distributions of every class and flow are
    /// counted whatever the number of packets.
    pub max_delay_records: u64,
    /// Service objectives to measure, whatever the scheduler runs the link (the
    /// scenario's JoBS constraints, also under FIFO): the report checks each class's
    /// waits, losses and throughput against them. Copied to
    /// [`crate::result::LinkResult::objectives`].
    pub objectives: Vec<Objective>,
}

/// The objectives of one class of one link (see [`MeasureConfig::objectives`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Objective {
    /// The link.
    pub link: LinkId,
    /// A leaf of its tree.
    pub class: ClassId,
    /// Delay and loss bounds, a throughput bound, ratios to the next leaf.
    pub constraints: Constraints,
}

impl Default for MeasureConfig {
    fn default() -> Self {
        MeasureConfig {
            window: Duration::from_millis(200),
            max_delay_records: 10_000_000,
            objectives: Vec::new(),
        }
    }
}
