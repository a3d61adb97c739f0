//! Built-in workloads of paper reproductions, as [`SimConfig`]s.
//!
//! * [`keshav_cost`]: the gateway of Keshav's trace-driven cost study, and
//!   [`record_buffer_trace`], which runs it (or any configuration) once with the
//!   bottleneck's buffer operations recorded, for replay through every buffer structure
//!   ([`linkshare_core::ds::bids::trace`]).

use std::sync::Arc;

use linkshare_core::buffer::BufferConfig;
use linkshare_core::ds::bids::Structure;
use linkshare_core::ds::bids::trace::{Recorder, Trace};
use linkshare_core::hierarchy::{ClassSpec, ClassTree, Limit, LinkSpec};
use linkshare_core::sched::keshav::{self, KeshavConfig};
use linkshare_core::sched::{SchedulerConfig, SchedulerKind};
use linkshare_core::units::{Bytes, Duration, Instant, Rate};

use crate::config::{
    FlowConfig, Hop, LinkConfig, LinkId, MeasureConfig, NodeConfig, NodeId, Schedule, SimConfig,
    SourceConfig, TcpConfig, TcpVariant, Transport,
};
use crate::rng::Rng;
use crate::sim::SimScheduler;
use crate::{RunResult, SimError, Simulator};

/// Reconstructed values of Keshav's scenario (his Fig. 2 did not survive; spec
/// `keshav-fq.md` §3.2 derives each from the text's constraints). Every reproduction
/// output must print them as reconstructed.
pub mod keshav_constants {
    use linkshare_core::units::{Duration, Rate};

    /// Trunk (output line) rate: 1 Mbit/s. Reconstructed: a slow trunk of the REAL era,
    /// so that queueing, not propagation, dominates the round-trip time. (Sensitivity:
    /// 10 Mbit/s.)
    pub const TRUNK_RATE: Rate = Rate::from_mbit(1);
    /// Access links of the sources: 10 Mbit/s. Reconstructed: faster than the trunk, so
    /// that the trunk is the bottleneck.
    pub const ACCESS_RATE: Rate = Rate::from_mbit(10);
    /// Propagation delay of every link (access and trunk, both directions): 1 ms.
    /// Reconstructed: the bandwidth-delay product stays far below a window, so that
    /// `W·N > B` really overloads the gateway.
    pub const PROPAGATION: Duration = Duration::from_millis(1);
    /// Every data packet is 1000 bytes on the wire. Reconstructed: fixed-size packets,
    /// so that `B` counts packets as in the paper's sizing example (1 KB packets).
    pub const PACKET: u32 = 1000;
    /// TCP/IP header bytes; an acknowledgement is this long on the wire.
    pub const HEADER: u32 = 40;
    /// The maximum window `W` in packets: 20. Reconstructed: puts the calibration point
    /// (N = 10, B = 200) exactly on `W·N = B`.
    pub const WINDOW_PACKETS: u64 = 20;
    /// Sources start uniformly in `[0, START_SPREAD)` (seeded): desynchronised.
    pub const START_SPREAD: Duration = Duration::from_secs(1);
    /// Smallest retransmission timeout: 1 s (RFC 6298, Jacobson's era).
    pub const MIN_RTO: Duration = Duration::from_secs(1);
    /// Timeout before the first RTT sample: 3 s (RFC 1122, Jacobson's era).
    pub const INITIAL_RTO: Duration = Duration::from_secs(3);
    /// Timer granularity: 100 ms (BSD's 500 ms slow timer was coarser; 100 ms keeps
    /// timeouts from dominating short traces).
    pub const GRANULARITY: Duration = Duration::from_millis(100);
    /// Length of every grid trace: 2 500 s of simulated time (stated in the paper).
    pub const TRACE_LENGTH: Duration = Duration::from_secs(2_500);
}

use keshav_constants as k;

/// The parameters of one point of Keshav's cost study.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeshavCost {
    /// Number of sources `N`, each one conversation.
    pub sources: u32,
    /// Gateway buffers `B`, in packets.
    pub buffers: u64,
    /// The maximum window `W`, in packets.
    pub window: u64,
    /// The trunk's rate.
    pub trunk: Rate,
    /// Loss recovery: Reno without fast retransmit (the paper: losses end in a timeout),
    /// or NewReno with fast retransmit (a sensitivity run).
    pub fast_retransmit: bool,
    /// Simulated time.
    pub duration: Duration,
    /// Seed of the start times.
    pub seed: u64,
}

impl KeshavCost {
    /// The paper's point `(n, b)` with every other value as reconstructed
    /// ([`keshav_constants`]): 2 500 s, `W` = 20, 1 Mbit/s, no fast retransmit.
    pub fn point(n: u32, b: u64) -> KeshavCost {
        KeshavCost {
            sources: n,
            buffers: b,
            window: k::WINDOW_PACKETS,
            trunk: k::TRUNK_RATE,
            fast_retransmit: false,
            duration: k::TRACE_LENGTH,
            seed: 1,
        }
    }
}

/// Index of the trunk (the gateway's output line, where Keshav's FQ runs) in the
/// configuration [`keshav_cost`] builds.
pub const KESHAV_TRUNK: LinkId = LinkId(0);

/// Keshav's gateway (spec §3.2): `N` window-limited TCP sources, each on its own access
/// link, through one gateway whose output trunk runs Keshav's FQ (δ = 0, PERC, a shared
/// buffer of `B` packets, largest bid dropped) to a sink; acknowledgements return over a
/// separate, uncongested FIFO path. Each source is an endless transfer of 1000-byte
/// packets with a maximum window of `W` packets, starting at a seeded uniform instant in
/// its first second.
pub fn keshav_cost(p: &KeshavCost) -> SimConfig {
    let n = p.sources as usize;
    // Nodes: sources 0..n, then the gateway and the sink.
    let gw = n as u32;
    let sink = gw + 1;
    let mut nodes: Vec<NodeConfig> = (0..n)
        .map(|i| NodeConfig {
            name: format!("src{i}"),
        })
        .collect();
    nodes.push(NodeConfig { name: "gw".into() });
    nodes.push(NodeConfig {
        name: "sink".into(),
    });
    let flat = |rate: Rate, leaves: usize| Arc::new(ClassTree::flat(rate, leaves));
    let one = |rate: Rate| {
        let link = LinkSpec {
            name: "link".into(),
            rate,
            origin: None,
        };
        Arc::new(ClassTree::build(link, vec![ClassSpec::new("all", None)]).expect("valid"))
    };
    let link = |name: String,
                from: u32,
                to: u32,
                rate: Rate,
                classes: Arc<ClassTree>,
                scheduler: SchedulerConfig| LinkConfig {
        name,
        from: NodeId(from),
        to: NodeId(to),
        rate,
        delay: k::PROPAGATION,
        overhead: Bytes::ZERO,
        classes,
        scheduler,
        buffer: BufferConfig::default(),
    };
    let trunk_classes = flat(p.trunk, n);
    let back_classes = flat(p.trunk, n);
    let fifo = || SchedulerConfig::from(SchedulerKind::Fifo);
    let mut links = vec![
        link(
            "trunk".into(),
            gw,
            sink,
            p.trunk,
            Arc::clone(&trunk_classes),
            SchedulerConfig::Keshav(KeshavConfig {
                limit: Limit::Packets(p.buffers),
                structure: Structure::Perc,
                // The round number's heap exchanges are reported (`cost.csv`).
                count_operations: true,
                ..KeshavConfig::default()
            }),
        ),
        link(
            "back".into(),
            sink,
            gw,
            p.trunk,
            Arc::clone(&back_classes),
            fifo(),
        ),
    ];
    for i in 0..n as u32 {
        links.push(link(
            format!("up{i}"),
            i,
            gw,
            k::ACCESS_RATE,
            one(k::ACCESS_RATE),
            fifo(),
        ));
        links.push(link(
            format!("down{i}"),
            gw,
            i,
            k::ACCESS_RATE,
            one(k::ACCESS_RATE),
            fifo(),
        ));
    }
    let mss = k::PACKET - k::HEADER;
    let tcp = TcpConfig {
        variant: if p.fast_retransmit {
            TcpVariant::NewReno
        } else {
            TcpVariant::Reno
        },
        mss,
        header: k::HEADER,
        window: p.window * u64::from(mss),
        initial_window: Some(1),
        min_rto: k::MIN_RTO,
        initial_rto: k::INITIAL_RTO,
        granularity: k::GRANULARITY,
        delayed_ack: None,
        handshake: false,
        // More duplicates than a window can produce: fast retransmit never fires.
        dupack_threshold: if p.fast_retransmit {
            3
        } else {
            p.window as u32 + 1
        },
        ..TcpConfig::default()
    };
    let mut rng = Rng::stream(p.seed, 0x6b65_7368_6176);
    let end = Instant::ZERO.saturating_add(p.duration);
    let flows = (0..n)
        .map(|i| {
            let start = Instant((rng.next_u64() % k::START_SPREAD.as_nanos().max(1)).min(end.0));
            let up = LinkId(2 + 2 * i as u32);
            let down = LinkId(3 + 2 * i as u32);
            FlowConfig {
                name: format!("tcp{i}"),
                route: vec![
                    Hop {
                        link: up,
                        class: linkshare_core::ClassId(1),
                    },
                    Hop {
                        link: KESHAV_TRUNK,
                        class: trunk_classes.leaves()[i],
                    },
                ],
                reverse: vec![
                    Hop {
                        link: LinkId(1),
                        class: back_classes.leaves()[i],
                    },
                    Hop {
                        link: down,
                        class: linkshare_core::ClassId(1),
                    },
                ],
                source: SourceConfig::Ftp {
                    bytes: None,
                    size: k::PACKET,
                },
                transport: Transport::Tcp(tcp.clone()),
                schedule: Schedule {
                    on: vec![(start, end.max(Instant(start.0 + 1)))],
                },
            }
        })
        .collect();
    SimConfig {
        seed: p.seed,
        duration: p.duration,
        nodes,
        links,
        flows,
        measure: MeasureConfig {
            window: Duration::from_secs(1),
            // The cost study needs no per-packet delays.
            max_delay_records: 0,
            ..MeasureConfig::default()
        },
    }
}

/// Runs `config` with the buffer operations of link `link` recorded: that link must run
/// Keshav's FQ ([`SchedulerConfig::Keshav`]); it is built with its settings and a
/// [`Recorder`]. Returns the run's result and the trace. `on_progress` is called as
/// [`Simulator::run_with_progress`] calls it.
pub fn record_buffer_trace(
    config: &SimConfig,
    link: LinkId,
    on_progress: &mut dyn FnMut(Instant, Duration, u64),
) -> Result<(RunResult, Trace), SimError> {
    let recorder = Recorder::new();
    let traced = &config.links[link.0 as usize].name;
    let mut build = |l: &LinkConfig| -> Result<SimScheduler, _> {
        match (&l.scheduler, &l.name == traced) {
            (SchedulerConfig::Keshav(kc), true) => {
                keshav::build(&l.classes, kc, Some(recorder.clone()))
            }
            _ => l.scheduler.build(&l.classes),
        }
    };
    let sim = Simulator::with_schedulers(config, &mut build)?;
    let result = sim.run_with_progress(on_progress);
    Ok((result, recorder.trace()))
}
