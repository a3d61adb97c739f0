//! linkshare-shaper: `linkshare shape`, a transparent shaping bridge between two Linux
//! interfaces that runs the core's disciplines on real frames.
//!
//! Frames arriving on `in` are parsed and classified (`linkshare-classify`, the
//! `[[filter]]` rules), copied into a preallocated frame pool, offered to the core's
//! [`EgressPort`](linkshare_core::port::EgressPort) — the qdisc (buffer policy,
//! counters) and the discipline the configuration names — and sent on `out` when the
//! port starts them, paced at the link rate by the very state machine the simulator
//! uses (`transmit(now)` → `Started`, `Busy(t)`, `Wait(t)`, `Idle`). Frames arriving on
//! `out` pass back to `in` unshaped or, when `[shaper] reverse` names a second file,
//! through a second tree of its own (its own classes, filters, rate, discipline and
//! frame pool), paced at its link's rate on `in` by the same loop.
//!
//! # Modules
//!
//! * `sys`: the only code with `unsafe` (packet sockets, the receive ring, `timerfd`,
//!   `poll`, interface ioctls), behind a small safe API; every block says why it is
//!   sound (`clippy::undocumented_unsafe_blocks` is denied in this crate).
//! * `datapath`: the loop; `pool`: the frame pool; `frames` and `offload`: VLAN tags
//!   put back, partial checksums completed, super-frames segmented; `hist`: pacing and
//!   delay histograms.
//! * [`snapshot`], [`metrics`], [`summary`]: what is observed — Prometheus metrics,
//!   `summary.json` in the simulator's format, the final table.
//! * [`testbed`]: network namespaces joined by veth pairs, for tests with real traffic
//!   (also used to compare with the kernel's qdiscs).
//!
//! # Why AF_PACKET with a receive ring, and `sendmmsg`
//!
//! AF_XDP (even in copy mode) needs an XDP program loaded on each interface, hence an
//! eBPF loader as a dependency and `CAP_BPF`; AF_PACKET needs neither and runs on every
//! kernel and driver, veth included. On receive, a memory-mapped `TPACKET_V2` ring
//! hands frames to user space without a system call per frame (`poll` only when it is
//! empty); `TPACKET_V3` was not taken because it hands over whole blocks, which wait up
//! to the block timeout (a millisecond or more) when traffic is light — latency a
//! shaper must not add. On send, `sendmmsg` batches up to 64 frames per system call and
//! `PACKET_QDISC_BYPASS` skips the interface's own qdisc (the frames were scheduled
//! already); a memory-mapped transmit ring was not taken (see `sys::tx`). The
//! resulting forwarding rates, beside the kernel's, are in `BENCHMARKS.md` ("Shaper").
//!
//! # Units and counting
//!
//! A frame's length is counted from its Ethernet header to the end of its payload,
//! without FCS, preamble or gap — as Linux's qdiscs count `skb->len` — plus the
//! link's `overhead`. A class that does not set `max_packet` accepts frames up to the
//! largest frame `out` carries (its MTU + 14 bytes of Ethernet header + 4 of a VLAN
//! tag). Time is nanoseconds of `CLOCK_MONOTONIC` since the shaper started.
//!
//! # Deviations from a kernel qdisc
//!
//! * Super-frames (TSO from a local sender over veth, GRO on a NIC) are segmented in
//!   user space before classification, so the scheduler sees frames no longer than the
//!   MTU (Linux's HTB sees and charges the whole super-frame). GRO and LRO are turned off
//!   on both interfaces at start (and GRO restored at exit), so that a NIC does not
//!   merge what the shaper must pace.
//! * A reload restarts the discipline's state: queued frames are offered again to the
//!   new discipline as new arrivals ([`linkshare_core::Qdisc::take_over`]).
//! * "Sent" is handing the frame to the kernel: a frame the kernel then drops (a full
//!   veth backlog) is counted in `tx_errors` only if `sendmmsg` refused it.
//!
//! # Cost
//!
//! Per frame: one parse (bounded), one flow-cache lookup (first-match over the rules on
//! a miss), one copy into the pool, the discipline's enqueue and dequeue (the core's
//! costs), one copy into the kernel's buffer. No allocation per frame; the memory held
//! by queued frames is bounded by `pool`.
//!
//! # Verification
//!
//! Unit tests of offloads (segments checked against an independent checksum), the
//! histograms and the pool; `crates/cli/tests/shape.rs` runs real TCP and UDP traffic
//! (iperf3) through the shaper between namespaces and checks rates against the
//! configuration, the kernel's HTB and the simulator, the conservation identity in every
//! summary and scrape, malformed frames, overload, reloads and latency.

mod datapath;
mod frames;
pub mod hist;
pub mod metrics;
mod offload;
mod pool;
pub mod snapshot;
pub mod summary;
mod sys;
pub mod testbed;

use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use linkshare_classify::Classifier;
use linkshare_classify::Malformed;
use linkshare_core::buffer::BufferConfig;
use linkshare_core::hierarchy::{ClassSpec, ClassTree, LinkSpec};
use linkshare_core::sched::{BuildError, SchedulerConfig};
use linkshare_core::stats::Qdisc;
use linkshare_core::units::{Bytes, Duration, Rate};
use linkshare_scenario::{Problems, ReverseConfig, ShaperConfig};

use datapath::{Datapath, Parts, Port, Reconfig, Running, Signals, Stop, Tree};
use pool::Frame;
pub use snapshot::Snapshot;

/// Parse failures by name, in the order of [`snapshot::DatapathStats::unparsed`].
pub const UNPARSED_REASONS: [(Malformed, &str); 6] = [
    (Malformed::ShortEthernet, "short_ethernet"),
    (Malformed::BadVlan, "bad_vlan"),
    (Malformed::BadIpv4, "bad_ipv4"),
    (Malformed::BadIpv6, "bad_ipv6"),
    (Malformed::BadExtensions, "bad_ipv6_extensions"),
    (Malformed::ShortTransport, "short_transport"),
];

/// `SCHED_FIFO` priority of the datapath thread when `[shaper] realtime` is set
/// (below the kernel's own threaded interrupts, which default to 50).
const REALTIME_PRIORITY: i32 = 40;

/// Receive ring slots per interface.
const RING_FRAMES: usize = 4096;

/// Why the shaper cannot start (every one is the environment's or the input's: exit
/// status 2).
#[derive(Debug)]
pub enum ShapeError {
    /// The process lacks CAP_NET_RAW or CAP_NET_ADMIN.
    Capabilities(String),
    /// An interface cannot be used.
    Interface {
        /// Its name.
        name: String,
        /// What was being done.
        what: &'static str,
        /// The system's error.
        error: std::io::Error,
    },
    /// The discipline cannot be built for the classes with frame-sized packets.
    Build(BuildError),
    /// The metrics address cannot be listened on.
    Metrics {
        /// The address.
        addr: SocketAddr,
        /// The error.
        error: std::io::Error,
    },
    /// Another I/O failure.
    Io {
        /// What was being done.
        what: String,
        /// The error.
        error: std::io::Error,
    },
}

impl fmt::Display for ShapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShapeError::Capabilities(missing) => write!(
                f,
                "error: linkshare shape needs {missing} to open packet sockets and set interface \
                 offloads; run it as root, or grant them once with \
                 `sudo setcap cap_net_raw,cap_net_admin+ep $(command -v linkshare)`"
            ),
            ShapeError::Interface { name, what, error } => write!(
                f,
                "error: interface `{name}`: cannot {what}: {error}; check the name with `ip link` \
                 (in the shaper's network namespace) and that it is up"
            ),
            ShapeError::Build(e) => write!(f, "{e}"),
            ShapeError::Metrics { addr, error } => write!(
                f,
                "error: cannot serve metrics on {addr}: {error}; choose a free address and port \
                 with --metrics or [shaper] metrics"
            ),
            ShapeError::Io { what, error } => write!(f, "error: {what}: {error}"),
        }
    }
}

impl std::error::Error for ShapeError {}

/// How to run.
#[derive(Clone, Debug)]
pub struct Options {
    /// The configuration file (read again on SIGHUP).
    pub config_path: PathBuf,
    /// Where to serve metrics (`None`: the configuration's, or nowhere).
    pub metrics: Option<SocketAddr>,
    /// Where SIGUSR1 and exit write `summary.json`.
    pub out_dir: PathBuf,
}

/// What happened while running, for the face to print.
#[derive(Debug)]
pub enum Event<'a> {
    /// Shaping started.
    Started {
        /// `in`, `out`.
        interfaces: (&'a str, &'a str),
        /// What was turned off on them.
        offloads: &'a [String],
        /// Where metrics are served.
        metrics: Option<SocketAddr>,
        /// The largest frame accepted.
        max_frame: usize,
        /// The reverse tree's file, when frames from `out` to `in` are shaped.
        reverse: Option<&'a str>,
    },
    /// SIGHUP: the new configuration runs.
    Reloaded,
    /// SIGHUP: the new configuration was refused; the old one keeps running.
    ReloadRefused(String),
    /// `summary.json` was written.
    SummaryWritten(&'a Path),
}

/// Checks that the process has CAP_NET_RAW and CAP_NET_ADMIN (from
/// `/proc/self/status`).
pub fn check_capabilities() -> Result<(), ShapeError> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let eff = status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        .unwrap_or(0);
    const NET_ADMIN: u64 = 1 << 12;
    const NET_RAW: u64 = 1 << 13;
    let missing: Vec<&str> = [(NET_RAW, "CAP_NET_RAW"), (NET_ADMIN, "CAP_NET_ADMIN")]
        .into_iter()
        .filter(|(bit, _)| eff & bit == 0)
        .map(|(_, n)| n)
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(ShapeError::Capabilities(missing.join(" and ")))
    }
}

/// The tree with every class that does not set `max_packet` accepting frames of up to
/// `max_frame` bytes and one VLAN tag.
fn frame_tree(tree: &ClassTree, max_frame: usize) -> ClassTree {
    let root = tree.root();
    let link = LinkSpec {
        name: root.spec.name.clone(),
        rate: tree.link_rate(),
        origin: root.spec.origin.clone(),
    };
    let specs: Vec<ClassSpec> = tree.classes()[1..]
        .iter()
        .map(|c| {
            let mut s = c.spec.clone();
            s.max_packet = s.max_packet.or(Some(Bytes(max_frame as u64 + 4)));
            s
        })
        .collect();
    ClassTree::build(link, specs).unwrap_or_else(|_| tree.clone())
}

/// One tree's configuration, forward or reverse, as the datapath builds it.
struct TreeConfig<'a> {
    name: &'a str,
    classes: &'a ClassTree,
    scheduler: &'a SchedulerConfig,
    buffer: BufferConfig,
    classifier: Classifier,
    rate: Rate,
    overhead: Bytes,
}

impl<'a> TreeConfig<'a> {
    fn forward(c: &'a ShaperConfig) -> TreeConfig<'a> {
        TreeConfig {
            name: &c.name,
            classes: &c.classes,
            scheduler: &c.scheduler,
            buffer: c.buffer,
            classifier: c.shaper.classifier(),
            rate: c.rate,
            overhead: c.overhead,
        }
    }

    fn reverse(r: &'a ReverseConfig) -> TreeConfig<'a> {
        TreeConfig {
            name: &r.link.name,
            classes: &r.link.classes,
            scheduler: &r.link.scheduler,
            buffer: r.link.buffer,
            classifier: r.classifier(),
            rate: r.link.rate,
            overhead: r.link.overhead,
        }
    }

    /// The running configuration and its qdisc for frames of at most `max_frame` bytes.
    fn build(self, max_frame: usize) -> Result<Reconfig, BuildError> {
        let tree = Arc::new(frame_tree(self.classes, max_frame));
        let sched = self.scheduler.build::<Frame>(&tree)?;
        let qdisc = Qdisc::new(&tree, sched, self.buffer);
        let running = Running {
            name: self.name.to_owned(),
            tree,
            classifier: self.classifier,
            scheduler: self.scheduler.kind().name(),
        };
        Ok(Reconfig {
            running,
            qdisc,
            rate: self.rate,
            overhead: self.overhead,
        })
    }
}

/// A tree built from `r`, its frames in a pool of `pool` slots of `slot` bytes, its port
/// making up `catch_up` of link time lost to a late wake-up.
fn new_tree(r: Reconfig, pool: u32, slot: usize, catch_up: Duration) -> Tree {
    let port: Port =
        linkshare_core::port::EgressPort::new(r.qdisc, r.rate, r.overhead).with_catch_up(catch_up);
    Tree::new(r.running, port, pool::FramePool::new(pool as usize, slot))
}

fn interface_error(name: &str, what: &'static str) -> impl FnOnce(std::io::Error) -> ShapeError {
    let name = name.to_owned();
    move |error| ShapeError::Interface { name, what, error }
}

/// Turns GRO and LRO off on `name`; what was turned off, and whether GRO was on.
fn offloads_off(name: &str, said: &mut Vec<String>) -> bool {
    let gro = sys::net::gro(name).unwrap_or(false);
    if gro && sys::net::set_gro(name, false).is_ok() {
        said.push(format!("GRO on {name}"));
    }
    if sys::net::lro(name).unwrap_or(false) && sys::net::clear_lro(name).is_ok() {
        said.push(format!("LRO on {name}"));
    }
    gro
}

/// Runs the shaper until SIGINT or SIGTERM: opens the interfaces, serves metrics,
/// writes `summary.json` on SIGUSR1 and at exit, reloads on SIGHUP. Returns the final
/// snapshot (with delays). `events` is told what happens.
pub fn run(
    config: ShaperConfig,
    options: &Options,
    events: &mut dyn FnMut(Event<'_>),
) -> Result<Snapshot, ShapeError> {
    check_capabilities()?;
    let (inp, out) = (
        &config.shaper.interfaces.input.clone(),
        &config.shaper.interfaces.output.clone(),
    );
    let in_index = sys::net::ifindex(inp).map_err(interface_error(inp, "find it"))?;
    let out_index = sys::net::ifindex(out).map_err(interface_error(out, "find it"))?;
    let mtu = sys::net::mtu(out)
        .map_err(interface_error(out, "read its MTU"))?
        .max(sys::net::mtu(inp).map_err(interface_error(inp, "read its MTU"))?)
        as usize;
    let max_frame = mtu + 14;
    let mut said = Vec::new();
    let gro_in = offloads_off(inp, &mut said);
    let gro_out = offloads_off(out, &mut said);
    let slot = (max_frame + 64).next_power_of_two().max(2048);
    let ring_frame = (max_frame + 128).next_power_of_two().max(2048);
    let parts = Parts {
        rx_in: sys::rx::RxRing::open(in_index, RING_FRAMES, ring_frame)
            .map_err(interface_error(inp, "open a packet socket on it"))?,
        rx_out: sys::rx::RxRing::open(out_index, RING_FRAMES, ring_frame)
            .map_err(interface_error(out, "open a packet socket on it"))?,
        tx_out: sys::tx::TxSocket::open(out_index)
            .map_err(interface_error(out, "open a packet socket on it"))?,
        tx_in: sys::tx::TxSocket::open(in_index)
            .map_err(interface_error(inp, "open a packet socket on it"))?,
        slot,
        max_frame,
        pacing: config.shaper.pacing,
        spin: config.shaper.spin,
        interfaces: (inp.clone(), out.clone()),
    };
    let forward = TreeConfig::forward(&config)
        .build(max_frame)
        .map_err(ShapeError::Build)?;
    let forward = new_tree(forward, config.shaper.pool, slot, config.shaper.catch_up);
    let reverse = match &config.reverse {
        Some(r) => {
            let built = TreeConfig::reverse(r)
                .build(max_frame)
                .map_err(ShapeError::Build)?;
            Some(new_tree(built, r.pool, slot, config.shaper.catch_up))
        }
        None => None,
    };
    let mut dp = Datapath::new(parts, forward, reverse).map_err(|error| ShapeError::Io {
        what: "cannot create a timer".to_owned(),
        error,
    })?;
    let signals = register_signals()?;
    let shared: metrics::Shared = Arc::new(Mutex::new(None));
    let metrics_addr = options.metrics.or(config.shaper.metrics);
    if let Some(addr) = metrics_addr {
        metrics::serve(addr, shared.clone())
            .map_err(|error| ShapeError::Metrics { addr, error })?;
    }
    if config.shaper.realtime {
        if let Err(e) = sys::clock::set_realtime(REALTIME_PRIORITY) {
            said.push(format!(
                "nothing else: realtime was asked for and refused ({e})"
            ));
        }
    }
    events(Event::Started {
        interfaces: (inp, out),
        offloads: &said,
        metrics: metrics_addr,
        max_frame,
        reverse: config.reverse.as_ref().map(|r| r.link.file.as_str()),
    });
    let mut config = config;
    let mut publish = |s: Snapshot| {
        if let Ok(mut slot) = shared.lock() {
            *slot = Some(Arc::new(s));
        }
    };
    let outcome = loop {
        match dp.run(&signals, &mut publish) {
            Err(error) => {
                break Err(ShapeError::Io {
                    what: "the datapath failed".to_owned(),
                    error,
                });
            }
            Ok(Stop::Exit) => break Ok(()),
            Ok(Stop::Dump) => {
                let now = dp.now();
                let snap = dp.snapshot(now, true);
                match write_summary(&snap, &options.out_dir) {
                    Ok(path) => events(Event::SummaryWritten(&path)),
                    Err(e) => events(Event::ReloadRefused(e.to_string())),
                }
            }
            Ok(Stop::Reload) => match reload(&config, &options.config_path, max_frame) {
                Ok((new, forward, reverse)) => {
                    dp.reconfigure(forward, reverse);
                    config = new;
                    events(Event::Reloaded);
                }
                Err(msg) => {
                    dp.forward.stats.reload_failures += 1;
                    events(Event::ReloadRefused(msg));
                }
            },
        }
    };
    for (name, on) in [(inp, gro_in), (out, gro_out)] {
        if on {
            let _ = sys::net::set_gro(name, true);
        }
    }
    outcome?;
    let now = dp.now();
    let snap = dp.snapshot(now, true);
    let path = write_summary(&snap, &options.out_dir)?;
    events(Event::SummaryWritten(&path));
    Ok(snap)
}

/// Loads the configuration again, the reverse tree's file too; refuses what cannot change
/// without a restart (the interfaces, the pools, whether there is a reverse tree).
fn reload(
    old: &ShaperConfig,
    path: &Path,
    max_frame: usize,
) -> Result<(ShaperConfig, Reconfig, Option<Reconfig>), String> {
    let new = linkshare_scenario::load_shaper_file(path).map_err(|p: Problems| p.to_string())?;
    let (a, b) = (&old.shaper, &new.shaper);
    if a.interfaces != b.interfaces || a.pool != b.pool {
        return Err(format!(
            "{}: [shaper] in, out and pool cannot change while running; restart linkshare shape \
             to change them",
            path.display()
        ));
    }
    let reverse_pool = |c: &ShaperConfig| c.reverse.as_ref().map(|r| r.pool);
    if reverse_pool(old).is_some() != reverse_pool(&new).is_some() {
        return Err(format!(
            "{}: [shaper] reverse cannot be added or removed while running; restart linkshare \
             shape to change it",
            path.display()
        ));
    }
    if reverse_pool(old) != reverse_pool(&new) {
        return Err(format!(
            "{}: the reverse tree's [shaper] pool cannot change while running; restart \
             linkshare shape to change it",
            new.reverse.as_ref().map_or("", |r| r.link.file.as_str())
        ));
    }
    let forward = TreeConfig::forward(&new)
        .build(max_frame)
        .map_err(|e| e.to_string())?;
    let reverse = match &new.reverse {
        Some(r) => Some(
            TreeConfig::reverse(r)
                .build(max_frame)
                .map_err(|e| e.to_string())?,
        ),
        None => None,
    };
    Ok((new, forward, reverse))
}

/// Writes `dir/summary.json` and returns its path.
pub fn write_summary(s: &Snapshot, dir: &Path) -> Result<PathBuf, ShapeError> {
    let io = |what: String| move |error| ShapeError::Io { what, error };
    std::fs::create_dir_all(dir).map_err(io(format!("cannot create {}", dir.display())))?;
    let path = dir.join("summary.json");
    let json = summary::summary(s).to_json().map_err(|e| ShapeError::Io {
        what: e.what,
        error: e.error,
    })?;
    let tmp = dir.join(".summary.json.tmp");
    std::fs::write(&tmp, json).map_err(io(format!("cannot write {}", tmp.display())))?;
    std::fs::rename(&tmp, &path).map_err(io(format!("cannot write {}", path.display())))?;
    Ok(path)
}

/// Handlers for SIGINT, SIGTERM (exit), SIGHUP (reload) and SIGUSR1 (summary), each
/// setting its flag and waking the loop through a socket pair.
fn register_signals() -> Result<Signals, ShapeError> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM, SIGUSR1};
    let io = |error| ShapeError::Io {
        what: "cannot install signal handlers".to_owned(),
        error,
    };
    let (wake, write) = std::os::unix::net::UnixStream::pair().map_err(io)?;
    wake.set_nonblocking(true).map_err(io)?;
    write.set_nonblocking(true).map_err(io)?;
    let signals = Signals {
        exit: Arc::new(AtomicBool::new(false)),
        reload: Arc::new(AtomicBool::new(false)),
        dump: Arc::new(AtomicBool::new(false)),
        wake,
    };
    for (sig, flag) in [
        (SIGINT, &signals.exit),
        (SIGTERM, &signals.exit),
        (SIGHUP, &signals.reload),
        (SIGUSR1, &signals.dump),
    ] {
        signal_hook::flag::register(sig, flag.clone()).map_err(io)?;
        signal_hook::low_level::pipe::register(sig, write.try_clone().map_err(io)?).map_err(io)?;
    }
    Ok(signals)
}
