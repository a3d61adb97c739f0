//! The datapath loop: one thread, two interfaces.
//!
//! Each turn, for the forward [`Tree`] (`in` to `out`) and then the reverse one (`out`
//! to `in`, when configured): read what arrived (up to [`RX_BATCH`] frames: classify,
//! copy into the tree's pool, offer to its egress port), start every transmission the
//! egress port allows now (the core's [`EgressPort::transmit`], the state machine the
//! simulator paces with) and hand them to the kernel in batches. Without a reverse
//! tree, what arrives on `out` passes back to `in` unshaped. The two trees share
//! nothing but the loop: each has its own pool, port, counters and histograms, and the
//! loop wakes at the earlier of their next instants. When a turn did nothing, wait: until the port's next
//! instant (`Busy`/`Wait`), a frame, a signal or the next metrics snapshot — sleeping on
//! an absolute monotonic deadline (`timerfd`) when it is further than `spin` away and
//! spinning when it is near (`sleep-spin`), always spinning (`spin`), or always
//! sleeping (`sleep`). `sleep-spin` also spins for [`ARRIVAL_SPIN`] (at most `spin`)
//! after the last turn that found work before it sleeps: frames come in bursts, and a
//! wake-up (a `poll`, a context switch) costs more than forwarding a frame
//! (`BENCHMARKS.md`, "Shaper": one sleep per frame was most of the datapath's CPU
//! time).
//!
//! After each sleep the loop records how late it woke for the frames that arrived
//! while it slept: from the kernel's receipt of the earliest of them (its ring
//! timestamp) to `poll`'s return. That time is the operating system's and the
//! hypervisor's, not the shaper's (the thread was blocked in `poll` all along), and is
//! what a user-space shaper adds to an idle link's latency beyond its own work.
//!
//! A turn that runs late (the thread stalled by the machine) loses no link time up to
//! `[shaper] catch_up`: each tree's port counts the next start from when the link
//! became free, within that allowance ([`linkshare_core::port`]), and sends back to back.

use std::os::fd::AsFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use linkshare_classify::{Classifier, Malformed};
use linkshare_core::DropReason;
use linkshare_core::hierarchy::{ClassId, ClassTree};
use linkshare_core::port::{EgressPort, Transmit};
use linkshare_core::sched::Scheduler;
use linkshare_core::stats::{Counters, Qdisc};
use linkshare_core::units::{Bytes, Duration, Instant, Rate};
use linkshare_scenario::PacingMode;

use crate::frames::pieces;
use crate::hist::Histogram;
use crate::pool::{Frame, FramePool};
use crate::snapshot::{ClassSnapshot, DatapathStats, PoolStats, Snapshot};
use crate::sys::clock::{Timer, monotonic_ns, poll_readable, realtime_ns, thread_cpu_ns};
use crate::sys::rx::RxRing;
use crate::sys::tx::{BATCH, TxSocket};

/// How long `sleep-spin` keeps polling after the last turn that found work before it
/// sleeps (at most `spin`). A sleep and wake-up cost about 4.5 µs of the datapath's CPU
/// on the machine of `BENCHMARKS.md` ("Shaper"); spinning about twice that long before
/// sleeping catches frames up to 10 µs apart (100 000 frames per second and more)
/// without a wake-up each, and spends at most about three times the CPU the better
/// choice would have in hindsight (the ski-rental argument). Spinning longer keeps a
/// `realtime` thread running without pause under steady traffic, until the kernel's
/// real-time throttling (95 % of each second by default) stops it for the rest of the
/// second: with 50 µs, the 100 Mbit/s tests of `crates/cli/tests/shape.rs` lost 6 % of
/// the link.
const ARRIVAL_SPIN: Duration = Duration::from_micros(10);

/// Frames read from one ring per turn at most.
pub(crate) const RX_BATCH: usize = 256;

/// The discipline, boxed.
pub(crate) type Sched = Box<dyn Scheduler<Frame> + Send>;

/// The qdisc of the shaper.
pub(crate) type FrameQdisc = Qdisc<Frame, Sched>;

/// The egress port of the shaper.
pub(crate) type Port = EgressPort<Frame, Sched>;

/// Why the loop returned to its caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stop {
    /// SIGINT or SIGTERM.
    Exit,
    /// SIGHUP: reload the configuration.
    Reload,
    /// SIGUSR1: write the summary.
    Dump,
}

/// The signals the loop watches, set by handlers; `wake` becomes readable on any.
#[derive(Debug)]
pub(crate) struct Signals {
    pub(crate) exit: Arc<AtomicBool>,
    pub(crate) reload: Arc<AtomicBool>,
    pub(crate) dump: Arc<AtomicBool>,
    pub(crate) wake: std::os::unix::net::UnixStream,
}

/// What the running configuration says, beyond the port.
#[derive(Debug)]
pub(crate) struct Running {
    pub(crate) name: String,
    pub(crate) tree: Arc<ClassTree>,
    pub(crate) classifier: Classifier,
    pub(crate) scheduler: &'static str,
}

/// One direction's shaping: frames read from one interface are classified, copied into
/// the tree's own pool, queued in its egress port and sent on the other interface when
/// the port starts them.
pub(crate) struct Tree {
    pub(crate) running: Running,
    pub(crate) port: Port,
    pool: FramePool,
    /// The direction's counters (the forward tree's also hold the loop's).
    pub(crate) stats: DatapathStats,
    pacing: Histogram,
    /// Arrival to start of transmission, per class id.
    delays: Vec<Histogram>,
    /// Final counters of classes reloads removed, by name.
    pub(crate) removed: Vec<(String, Counters)>,
    /// When the port said the next transmission may start.
    due: Instant,
    out_batch: Vec<(u32, u32)>,
    /// Sent bytes per class at the last published snapshot.
    last_sent: Vec<u64>,
}

impl Tree {
    /// A tree running `running` on `port`, its frames held in `pool`.
    pub(crate) fn new(running: Running, port: Port, pool: FramePool) -> Tree {
        let n = running.tree.len();
        Tree {
            running,
            port,
            pool,
            stats: DatapathStats::default(),
            pacing: Histogram::default(),
            delays: vec![Histogram::default(); n],
            removed: Vec::new(),
            due: Instant::ZERO,
            out_batch: Vec::with_capacity(BATCH),
            last_sent: vec![0; n],
        }
    }

    /// Reads, classifies and queues what arrived on `rx`; the number of frames read.
    fn receive(&mut self, rx: &mut RxRing, now: Instant, max_frame: usize) -> usize {
        let mut n = 0;
        while n < RX_BATCH {
            let Some(got) = rx.next() else {
                break;
            };
            n += 1;
            let frame = match got {
                Ok(f) => f,
                Err(_) => {
                    self.stats.rx_errors += 1;
                    continue;
                }
            };
            let stats = &mut self.stats;
            stats.rx_frames += 1;
            stats.rx_bytes += frame.info.len as u64;
            let (class, ip) = match linkshare_classify::parse(frame.data) {
                Ok(mut h) => {
                    if let Some((_, tci)) = frame.info.vlan {
                        h.vlan = Some(tci & 0x0fff);
                    }
                    (self.running.classifier.classify_headers(&h), h.ip)
                }
                Err(m) => {
                    stats.unparsed[unparsed_index(m)] += 1;
                    (self.running.classifier.default_class(), None)
                }
            };
            let (pool, port) = (&mut self.pool, &mut self.port);
            let done = pieces(frame.data, frame.info, ip, max_frame, stats, |piece| {
                let Some(slot) = pool.alloc() else {
                    port.refuse(class, Bytes(piece.len() as u64), DropReason::NoBuffer);
                    return;
                };
                let len = piece.write(pool.slot_mut(slot)) as u32;
                let frame = Frame {
                    slot,
                    len,
                    arrived: now,
                };
                port.enqueue(now, class, frame, |d| pool.free(d.pkt.slot));
            });
            if let Err(len) = done {
                port.refuse(class, Bytes(len as u64), DropReason::TooLarge);
            }
        }
        n
    }

    /// Starts every transmission the port allows at `now`, handing full batches to
    /// `tx`; returns when to come back (`None`: nothing is queued).
    fn transmit(&mut self, now: Instant, tx: &TxSocket) -> Option<Instant> {
        loop {
            if self.out_batch.len() == BATCH {
                self.flush(tx);
            }
            match self.port.transmit(now) {
                Transmit::Started { pkt, done_at } => {
                    let scheduled = self.due.max(pkt.pkt.arrived);
                    self.pacing
                        .record(now.checked_since(scheduled).unwrap_or(Duration::ZERO));
                    if let Some(h) = self.delays.get_mut(pkt.class.index()) {
                        h.record(now.since(pkt.pkt.arrived));
                    }
                    self.out_batch.push((pkt.pkt.slot, pkt.pkt.len));
                    self.due = done_at;
                }
                Transmit::Busy(t) | Transmit::Wait(t) => {
                    self.due = t;
                    return Some(t);
                }
                Transmit::Idle => return None,
            }
        }
    }

    /// Hands the started frames to the kernel on `tx` and frees their slots.
    fn flush(&mut self, tx: &TxSocket) -> usize {
        let n = self.out_batch.len();
        if n == 0 {
            return 0;
        }
        let mut refs: [&[u8]; BATCH] = [&[]; BATCH];
        for (r, &(slot, len)) in refs.iter_mut().zip(&self.out_batch) {
            *r = self.pool.data(slot, len);
        }
        let sent = tx.send(&refs[..n]);
        self.stats.tx_frames += sent.sent as u64;
        self.stats.tx_errors += sent.failed as u64;
        self.stats.tx_calls += sent.calls as u64;
        for &(slot, _) in &self.out_batch {
            self.pool.free(slot);
        }
        self.out_batch.clear();
        n
    }

    /// The numbers now, the rates over the time since `last_publish`; with `delays`,
    /// each class's delay statistics too (for a summary: allocates more, and leaves the
    /// rate baseline alone).
    fn snapshot(
        &mut self,
        now: Instant,
        last_publish: Instant,
        delays: bool,
        interfaces: (String, String),
    ) -> Snapshot {
        let tree = &self.running.tree;
        let q = self.port.qdisc();
        let mut counters: Vec<Counters> = (0..tree.len())
            .map(|i| q.counters(ClassId(i as u32)).clone())
            .collect();
        let mut sent: Vec<u64> = counters.iter().map(|c| c.dequeued.bytes).collect();
        for &leaf in tree.leaves() {
            let c = counters[leaf.index()].clone();
            for a in tree.ancestors(leaf) {
                counters[a.index()].add_all(&c);
                sent[a.index()] += c.dequeued.bytes;
            }
        }
        let dt = now
            .checked_since(last_publish)
            .unwrap_or(Duration::ZERO)
            .as_secs_f64();
        let classes = tree
            .classes()
            .iter()
            .map(|c| {
                let i = c.id.index();
                let before = self.last_sent.get(i).copied().unwrap_or(0);
                let rate_bps = if dt > 0.0 {
                    sent[i].saturating_sub(before) as f64 * 8.0 / dt
                } else {
                    0.0
                };
                ClassSnapshot {
                    name: c.name().to_owned(),
                    parent: c.parent.map(|p| tree.get(p).name().to_owned()),
                    leaf: c.is_leaf(),
                    counters: counters[i].clone(),
                    rate_bps,
                    delay: delays.then(|| {
                        let mut h = Histogram::default();
                        if c.is_leaf() {
                            h = self.delays[i].clone();
                        } else {
                            for &l in tree.leaves() {
                                if tree.ancestors(l).any(|a| a == c.id) {
                                    h.merge(&self.delays[l.index()]);
                                }
                            }
                        }
                        h.to_delay_histogram().stats()
                    }),
                }
            })
            .collect();
        if !delays {
            self.last_sent = sent;
        }
        Snapshot {
            name: self.running.name.clone(),
            scheduler: self.running.scheduler,
            rate: self.port.rate(),
            interfaces,
            uptime: Duration(now.as_nanos()),
            classes,
            removed: self.removed.clone(),
            stats: self.stats,
            pool: PoolStats {
                capacity: self.pool.capacity() as u64,
                in_use: self.pool.in_use() as u64,
                high_water: self.pool.high_water() as u64,
            },
            pacing: self.pacing.clone(),
            wakeup: Histogram::default(),
            reverse: None,
        }
    }

    /// Puts a new configuration in place at `now`: classes of the same name keep their
    /// counters, queued frames and delay histograms; frames of removed classes are
    /// dropped (`reconfigured`) and their final counters kept by name.
    pub(crate) fn reconfigure(
        &mut self,
        now: Instant,
        running: Running,
        qdisc: FrameQdisc,
        rate: Rate,
        overhead: Bytes,
    ) {
        let old_tree = self.running.tree.clone();
        let new_tree = running.tree.clone();
        let pool = &mut self.pool;
        let map = |id: ClassId| new_tree.id_of(old_tree.get(id).name());
        let removed = self
            .port
            .reconfigure(now, qdisc, rate, overhead, map, |d| pool.free(d.pkt.slot));
        for (id, c) in removed {
            let name = old_tree.get(id).name().to_owned();
            match self.removed.iter_mut().find(|(n, _)| *n == name) {
                Some((_, sum)) => sum.add_all(&c),
                None => self.removed.push((name, c)),
            }
        }
        let mut delays = vec![Histogram::default(); new_tree.len()];
        let mut last_sent = vec![0; new_tree.len()];
        for c in old_tree.classes() {
            if let Some(n) = new_tree.id_of(c.name()) {
                delays[n.index()] = std::mem::take(&mut self.delays[c.id.index()]);
                last_sent[n.index()] = self.last_sent.get(c.id.index()).copied().unwrap_or(0);
            }
        }
        self.delays = delays;
        self.last_sent = last_sent;
        self.running = running;
    }
}

/// A new configuration for one tree.
pub(crate) struct Reconfig {
    pub(crate) running: Running,
    pub(crate) qdisc: FrameQdisc,
    pub(crate) rate: Rate,
    pub(crate) overhead: Bytes,
}

impl std::fmt::Debug for Reconfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reconfig")
            .field("name", &self.running.name)
            .field("rate", &self.rate)
            .finish_non_exhaustive()
    }
}

/// See the [module docs](self).
pub(crate) struct Datapath {
    /// Frames from `in` to `out`; its stats also count the loop's turns, sleeps,
    /// reloads, ring drops and the frames passed back unshaped.
    pub(crate) forward: Tree,
    /// Frames from `out` to `in`, when a reverse tree is configured (else they pass
    /// back unshaped).
    pub(crate) reverse: Option<Tree>,
    pub(crate) interfaces: (String, String),
    rx_in: RxRing,
    rx_out: RxRing,
    tx_out: TxSocket,
    tx_in: TxSocket,
    /// The largest frame `out` (and `in`) take.
    pub(crate) max_frame: usize,
    pacing_mode: PacingMode,
    spin: Duration,
    origin_ns: u64,
    rev_buf: Box<[u8]>,
    timer: Timer,
    /// When the last snapshot was published.
    last_publish: Instant,
    /// When the last turn that did work started, until the next turn counts it busy.
    working_since: Option<Instant>,
    /// When the last turn that did work started.
    last_work: Instant,
    /// How late the loop woke for frames that arrived while it slept (module docs).
    wakeup: Histogram,
}

impl std::fmt::Debug for Datapath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Datapath")
            .field("name", &self.forward.running.name)
            .field("scheduler", &self.forward.running.scheduler)
            .field("interfaces", &self.interfaces)
            .field("stats", &self.forward.stats)
            .field(
                "reverse",
                &self.reverse.as_ref().map(|r| r.running.scheduler),
            )
            .finish_non_exhaustive()
    }
}

/// The parts a datapath is opened with.
#[derive(Debug)]
pub(crate) struct Parts {
    pub(crate) rx_in: RxRing,
    pub(crate) rx_out: RxRing,
    pub(crate) tx_out: TxSocket,
    pub(crate) tx_in: TxSocket,
    /// The size of a pool slot (and of a pass-back buffer slot).
    pub(crate) slot: usize,
    pub(crate) max_frame: usize,
    pub(crate) pacing: PacingMode,
    pub(crate) spin: Duration,
    pub(crate) interfaces: (String, String),
}

/// Index of a parse failure in [`crate::UNPARSED_REASONS`].
fn unparsed_index(m: Malformed) -> usize {
    crate::UNPARSED_REASONS
        .iter()
        .position(|(r, _)| *r == m)
        .unwrap_or(0)
}

impl Datapath {
    pub(crate) fn new(
        parts: Parts,
        forward: Tree,
        reverse: Option<Tree>,
    ) -> std::io::Result<Datapath> {
        let rev_buf = if reverse.is_none() {
            vec![0; BATCH * parts.slot].into_boxed_slice()
        } else {
            Box::default()
        };
        Ok(Datapath {
            forward,
            reverse,
            interfaces: parts.interfaces,
            rx_in: parts.rx_in,
            rx_out: parts.rx_out,
            tx_out: parts.tx_out,
            tx_in: parts.tx_in,
            max_frame: parts.max_frame,
            pacing_mode: parts.pacing,
            spin: parts.spin,
            origin_ns: monotonic_ns(),
            rev_buf,
            timer: Timer::new()?,
            last_publish: Instant::ZERO,
            working_since: None,
            last_work: Instant::ZERO,
            wakeup: Histogram::default(),
        })
    }

    /// Now, on the shaper's clock (nanoseconds since it started).
    pub(crate) fn now(&self) -> Instant {
        Instant(monotonic_ns().saturating_sub(self.origin_ns))
    }

    /// Runs until a signal asks for something; `publish` is called with a fresh
    /// snapshot every [`crate::metrics::PUBLISH_INTERVAL`].
    pub(crate) fn run(
        &mut self,
        signals: &Signals,
        publish: &mut dyn FnMut(Snapshot),
    ) -> std::io::Result<Stop> {
        loop {
            self.forward.stats.loops += 1;
            for (flag, stop) in [
                (&signals.exit, Stop::Exit),
                (&signals.reload, Stop::Reload),
                (&signals.dump, Stop::Dump),
            ] {
                if flag.swap(false, Ordering::Relaxed) {
                    return Ok(stop);
                }
            }
            let now = self.now();
            if let Some(start) = self.working_since.take() {
                self.forward.stats.busy_ns += now.since(start).as_nanos();
            }
            let mut work = self.forward.receive(&mut self.rx_in, now, self.max_frame);
            let mut next = self.forward.transmit(now, &self.tx_out);
            work += self.forward.flush(&self.tx_out);
            match &mut self.reverse {
                Some(rev) => {
                    work += rev.receive(&mut self.rx_out, now, self.max_frame);
                    let rev_next = rev.transmit(now, &self.tx_in);
                    work += rev.flush(&self.tx_in);
                    next = match (next, rev_next) {
                        (Some(a), Some(b)) => Some(a.min(b)),
                        (a, b) => a.or(b),
                    };
                }
                None => work += self.pass_back(),
            }
            let publish_at = self
                .last_publish
                .saturating_add(crate::metrics::PUBLISH_INTERVAL);
            if now >= publish_at {
                self.forward.stats.ring_drops_in += self.rx_in.take_drops();
                self.forward.stats.ring_drops_out += self.rx_out.take_drops();
                let snap = self.snapshot(now, false);
                self.last_publish = now;
                publish(snap);
            }
            if work > 0 {
                self.working_since = Some(now);
                self.last_work = now;
                continue;
            }
            if self.pacing_mode == PacingMode::Spin {
                continue;
            }
            let deadline = next.map_or(publish_at, |t| t.min(publish_at));
            let wake_at = match self.pacing_mode {
                PacingMode::Sleep => deadline,
                _ => Instant(deadline.as_nanos().saturating_sub(self.spin.as_nanos())),
            };
            let now = self.now();
            if wake_at <= now {
                continue; // near the deadline: spin
            }
            if self.pacing_mode == PacingMode::SleepSpin
                && now < self.last_work.saturating_add(self.spin.min(ARRIVAL_SPIN))
            {
                continue; // frames came a moment ago: more are likely, spin
            }
            self.timer.arm(self.origin_ns + wake_at.as_nanos())?;
            self.forward.stats.sleeps += 1;
            let slept_at = realtime_ns();
            let [_, _, timer, woken] = poll_readable(
                [
                    self.rx_in.fd().as_fd(),
                    self.rx_out.fd().as_fd(),
                    self.timer.fd(),
                    signals.wake.as_fd(),
                ],
                -1,
            )?;
            self.record_wakeup(slept_at, realtime_ns());
            if timer {
                self.timer.clear();
            }
            if woken {
                let mut drain = [0u8; 64];
                let _ = std::io::Read::read(&mut &signals.wake, &mut drain);
            }
        }
    }

    /// Records how long after the kernel received the earliest frame that arrived
    /// during a sleep from `slept_at` to `woke` (`CLOCK_REALTIME` nanoseconds) the loop
    /// woke, if one did. Frames stamped outside the sleep (they came before it began,
    /// or the clock was stepped) are not counted.
    fn record_wakeup(&mut self, slept_at: u64, woke: u64) {
        let first = [self.rx_in.waiting_since(), self.rx_out.waiting_since()]
            .into_iter()
            .flatten()
            .filter(|t| (slept_at..=woke).contains(t))
            .min();
        if let Some(t) = first {
            self.wakeup.record(Duration(woke - t));
        }
    }

    /// Passes what arrived on `out` back to `in`, unshaped; the number of frames read.
    fn pass_back(&mut self) -> usize {
        let slot = self.rev_buf.len() / BATCH;
        let mut n = 0;
        let mut lens = [0usize; BATCH];
        let mut count = 0;
        while n < RX_BATCH {
            let Some(got) = self.rx_out.next() else {
                break;
            };
            n += 1;
            let stats = &mut self.forward.stats;
            let Ok(frame) = got else {
                stats.rx_errors += 1;
                continue;
            };
            let ip = linkshare_classify::parse(frame.data)
                .ok()
                .and_then(|h| h.ip);
            let buf = &mut self.rev_buf;
            let tx = &self.tx_in;
            let mut errors = 0;
            let done = pieces(frame.data, frame.info, ip, self.max_frame, stats, |piece| {
                if count == BATCH {
                    errors += send_from(tx, buf, slot, &lens[..count]);
                    count = 0;
                }
                lens[count] = piece.write(&mut buf[count * slot..(count + 1) * slot]);
                count += 1;
            });
            stats.reverse_frames += 1;
            stats.reverse_errors += errors + u64::from(done.is_err());
        }
        if count > 0 {
            self.forward.stats.reverse_errors +=
                send_from(&self.tx_in, &self.rev_buf, slot, &lens[..count]);
        }
        n
    }

    /// The numbers now (the reverse tree's in [`Snapshot::reverse`]); with `delays`,
    /// each class's delay statistics too (for a summary: allocates more).
    pub(crate) fn snapshot(&mut self, now: Instant, delays: bool) -> Snapshot {
        (
            self.forward.stats.cpu_user_ns,
            self.forward.stats.cpu_system_ns,
        ) = thread_cpu_ns();
        let (inp, out) = self.interfaces.clone();
        let mut snap =
            self.forward
                .snapshot(now, self.last_publish, delays, (inp.clone(), out.clone()));
        snap.wakeup = self.wakeup.clone();
        snap.reverse = self
            .reverse
            .as_mut()
            .map(|r| Box::new(r.snapshot(now, self.last_publish, delays, (out, inp))));
        snap
    }

    /// Puts new configurations in place (see [`Tree::reconfigure`]): `forward`, and
    /// `reverse` for the reverse tree (which exists exactly when it is given).
    pub(crate) fn reconfigure(&mut self, forward: Reconfig, reverse: Option<Reconfig>) {
        let now = self.now();
        let Reconfig {
            running,
            qdisc,
            rate,
            overhead,
        } = forward;
        self.forward
            .reconfigure(now, running, qdisc, rate, overhead);
        if let (Some(tree), Some(r)) = (&mut self.reverse, reverse) {
            tree.reconfigure(now, r.running, r.qdisc, r.rate, r.overhead);
        }
        self.forward.stats.reloads += 1;
    }
}

/// Sends the first `lens.len()` slots of `buf` (slots of `slot` bytes) on `tx`; the
/// number of frames refused.
fn send_from(tx: &TxSocket, buf: &[u8], slot: usize, lens: &[usize]) -> u64 {
    let mut refs: [&[u8]; BATCH] = [&[]; BATCH];
    for (i, (r, &len)) in refs.iter_mut().zip(lens).enumerate() {
        *r = &buf[i * slot..i * slot + len];
    }
    tx.send(&refs[..lens.len()]).failed as u64
}
