//! The engine: builds a network from a [`SimConfig`] and runs it to the end.
//!
//! # Packet path
//!
//! 1. An agent emits a packet at `now`: it is created with `sent_at = now` and offered to
//!    the port of the first link of its flow's route, in the hop's class
//!    (`port_arrival = now`).
//! 2. Whenever a port has no packet on the wire, the engine calls
//!    [`EgressPort::transmit`] right after an enqueue, when a transmission ends, and when
//!    a shaping wake-up it asked for is due (at most one pending wake-up per port; a
//!    wake-up superseded by an earlier one is ignored when it fires).
//! 3. A transmission started at `t` ends at `done_at` (the port's arithmetic). Then the
//!    packet is measured at that port (delay `done_at - port_arrival`, throughput window
//!    of `done_at`) and propagates for the link's delay: it reaches the next hop's port
//!    at `done_at + delay`, or, after the last hop, the sink, where its end-to-end delay
//!    `arrival - sent_at` is measured and the flow's agent is told. A link's delay is
//!    constant, so its propagating packets arrive in the order they were sent: they wait
//!    in a per-link FIFO pipe and only the head's arrival sits in the event queue, under
//!    the sequence number taken when its transmission ended — the order of events is
//!    exactly that of one event per packet, with a smaller heap.
//! 4. A packet refused or pushed out by a port is dropped there; the flow's agent is
//!    told.
//!
//! # Per-flow classes
//!
//! A hop whose class is an instance of a per-flow template
//! ([`linkshare_core::perflow`]) names the template: each packet is classified at the
//! port by its flow key — the flow's id and the packet's connection ([`SimPacket::conn`]:
//! TCP's connection, or for an open-loop source the number of bursts it began with a new
//! connection, [`crate::agent::Ctx::begin_burst`]) — into the instance of that flow, a
//! new one reset in the discipline first. The port's [`FlowTable`] is told when an
//! instance's queue fills and empties.
//!
//! Agents react to callbacks by emitting packets and setting timers; those actions are
//! applied in the order they were requested, right after the callback's event, at the
//! same instant.

use std::collections::VecDeque;
use std::fmt;
use std::ops::ControlFlow;
use std::sync::Arc;

use linkshare_core::hierarchy::{ClassId, ClassTree};
use linkshare_core::perflow::{Assigned, FlowTable};
use linkshare_core::port::{EgressPort, Transmit};
use linkshare_core::sched::jobs::Constraints;
use linkshare_core::sched::{BuildError, Dequeued, DropReason, Dropped, Scheduler};
use linkshare_core::stats::{Count, Qdisc};
use linkshare_core::units::{Duration, Instant};

use crate::agent::{Action, Agent, Ctx, Segment};
use crate::config::{FlowId, LinkConfig, SimConfig, Transport};
use crate::error::SimError;
use crate::event::EventQueue;
use crate::measure::{DelayCounter, LinkMeter, Windows, add, sub};
use crate::memory::{self, MemoryUse};
use crate::packet::{NO_BURST, PacketKind, SimPacket};
use crate::records::{RecordSink, Recorder};
use crate::result::{BurstRecord, DelayRecord, PathCounts, RunResult, Stopped, TransportReport};
use crate::rng::Rng;
use crate::{source, tcp, validate};

/// Events between two calls of the progress callback.
const PROGRESS_EVERY: u64 = 1 << 20;

/// The discipline of a link's egress port.
pub type SimScheduler = Box<dyn Scheduler<SimPacket> + Send>;

/// The port type of every link.
pub(crate) type Port = EgressPort<SimPacket, SimScheduler>;

/// Something due at an instant.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Event {
    /// The flow's next ON interval starts.
    Start(u32),
    /// The flow's current ON interval ends.
    Stop(u32),
    /// An agent's timer.
    Timer {
        /// The flow.
        flow: u32,
        /// The agent's token.
        token: u64,
    },
    /// The transmission on the link ends.
    TxDone(u32),
    /// A shaping wake-up of the link's port.
    Wake {
        /// The link.
        link: u32,
        /// Must equal the link's current generation, or the wake-up is stale.
        generation: u32,
    },
    /// The packet at the head of the link's propagation pipe arrives at the next port
    /// or the sink.
    Arrive(u32),
}

/// A packet propagating on a link, with its arrival time and the sequence number its
/// arrival event was given when its transmission ended.
#[derive(Clone, Copy, Debug)]
pub(crate) struct InFlight {
    pub(crate) at: Instant,
    pub(crate) seq: u64,
    pub(crate) pkt: SimPacket,
}

/// One link at run time.
pub(crate) struct Link {
    pub(crate) name: String,
    pub(crate) tree: Arc<ClassTree>,
    pub(crate) port: Port,
    pub(crate) delay: Duration,
    /// The packet being transmitted and its class.
    pub(crate) on_wire: Option<(SimPacket, ClassId)>,
    /// Packets propagating, in order of arrival (the delay is constant, so transmission
    /// order is arrival order); only the head's arrival is in the event queue.
    pub(crate) pipe: VecDeque<InFlight>,
    /// The pending shaping wake-up, if any.
    pub(crate) wake_at: Option<Instant>,
    pub(crate) wake_generation: u32,
    pub(crate) meter: LinkMeter,
    /// The flows of the tree's per-flow templates.
    pub(crate) per_flow: FlowTable,
    /// The classes' objectives to report ([`crate::config::MeasureConfig::objectives`]).
    pub(crate) objectives: Vec<(ClassId, Constraints)>,
}

/// One flow at run time.
#[derive(Debug)]
pub(crate) struct Flow {
    pub(crate) name: String,
    /// `(link index, class)` per hop.
    pub(crate) route: Box<[(u32, ClassId)]>,
    /// `(link index, class)` per hop of the reverse route.
    pub(crate) reverse: Box<[(u32, ClassId)]>,
    /// Whether the flow runs over UDP (the engine measures its bursts and delivery).
    pub(crate) open_loop: bool,
    pub(crate) schedule: Vec<(Instant, Instant)>,
    /// Index in `schedule` of the current or next ON interval.
    pub(crate) next_interval: usize,
    pub(crate) next_seq: u64,
    pub(crate) next_reverse_seq: u64,
    pub(crate) sent: Count,
    pub(crate) delivered: Count,
    pub(crate) dropped: [Count; DropReason::COUNT],
    /// Packets of the flow in some port's queue now.
    pub(crate) queued: Count,
    pub(crate) delays: DelayCounter,
    /// Bytes delivered to the sink in each measurement window.
    pub(crate) throughput: Vec<u64>,
    /// Packets sent along the reverse route; `in_flight` is filled at the end.
    pub(crate) reverse_counts: PathCounts,
    /// Open-loop delivery as the application sees it (unused for transport agents,
    /// which report their own).
    pub(crate) delivery: TransportReport,
    /// The burst the source's next packets belong to.
    pub(crate) current_burst: u32,
    /// Open loop: the connection number of the source's packets, one more for every
    /// burst begun with a new connection after the first.
    pub(crate) udp_conn: u32,
}

/// A network ready to run. See the [module docs](self) and the [crate docs](crate).
pub struct Simulator {
    pub(crate) now: Instant,
    pub(crate) end: Instant,
    pub(crate) seed: u64,
    pub(crate) duration: Duration,
    pub(crate) window: Duration,
    pub(crate) queue: EventQueue<Event>,
    pub(crate) links: Vec<Link>,
    pub(crate) flows: Vec<Flow>,
    pub(crate) agents: Vec<Box<dyn Agent>>,
    /// Actions requested by agents, applied in order after each event.
    actions: Vec<Action>,
    /// Scratch space for the drops of one enqueue.
    drops: Vec<Dropped<SimPacket>>,
    /// Where per-packet records go.
    pub(crate) recorder: Recorder,
    /// Stop when the run's data takes more than this many bytes.
    budget: Option<u64>,
    /// Why the run stopped early, if it did.
    pub(crate) stopped: Option<Stopped>,
    /// Distinct delays over every port's and flow's distribution.
    delay_bins: u64,
    /// Application bursts begun.
    bursts: u64,
    /// Bytes of the window series (fixed).
    series_bytes: u64,
    pub(crate) events: u64,
    pub(crate) packet_hops: u64,
}

impl fmt::Debug for Simulator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Simulator")
            .field("now", &self.now)
            .field("end", &self.end)
            .field("links", &self.links.len())
            .field("flows", &self.flows.len())
            .field("pending_events", &self.queue.len())
            .field("events", &self.events)
            .finish_non_exhaustive()
    }
}

impl Simulator {
    /// Checks `config` and builds the network: ports (with the disciplines named in
    /// the configuration), agents, and the first event of every flow's schedule.
    /// Nothing runs yet.
    pub fn new(config: &SimConfig) -> Result<Simulator, SimError> {
        Simulator::with_schedulers(config, &mut |link: &LinkConfig| {
            link.scheduler.build(&link.classes)
        })
    }

    /// Like [`Simulator::new`], but each link's discipline is built by `build` instead
    /// of from `LinkConfig::scheduler`: for
    /// disciplines outside the registry (research prototypes, test doubles). The
    /// discipline must be built for the link's class tree; results name it by
    /// [`Scheduler::name`].
    pub fn with_schedulers(
        config: &SimConfig,
        build: &mut dyn FnMut(&LinkConfig) -> Result<SimScheduler, BuildError>,
    ) -> Result<Simulator, SimError> {
        validate::check(config)?;
        let end = Instant::ZERO.saturating_add(config.duration);
        let windows = Windows::new(config.measure.window, end);
        let mut links = Vec::with_capacity(config.links.len());
        for l in &config.links {
            let sched = build(l).map_err(|error| SimError::Scheduler {
                link: l.name.clone(),
                error,
            })?;
            if !l.classes.templates().is_empty() && !sched.resets_classes() {
                return Err(SimError::PerFlowUnsupported {
                    link: l.name.clone(),
                    scheduler: sched.name().to_owned(),
                });
            }
            let qdisc = Qdisc::new(&l.classes, sched, l.buffer);
            links.push(Link {
                name: l.name.clone(),
                tree: Arc::clone(&l.classes),
                port: EgressPort::new(qdisc, l.rate, l.overhead),
                delay: l.delay,
                on_wire: None,
                pipe: VecDeque::new(),
                wake_at: None,
                wake_generation: 0,
                meter: LinkMeter::new(&l.classes, windows),
                per_flow: FlowTable::new(&l.classes),
                objectives: config
                    .measure
                    .objectives
                    .iter()
                    .filter(|o| o.link.0 as usize == links.len())
                    .map(|o| (o.class, o.constraints))
                    .collect(),
            });
        }
        let mut queue = EventQueue::new();
        let mut flows = Vec::with_capacity(config.flows.len());
        let mut agents = Vec::with_capacity(config.flows.len());
        for (i, f) in config.flows.iter().enumerate() {
            if let Some(&(start, _)) = f.schedule.on.first() {
                queue.push(start, Event::Start(i as u32));
            }
            flows.push(Flow {
                name: f.name.clone(),
                route: f.route.iter().map(|h| (h.link.0, h.class)).collect(),
                reverse: f.reverse.iter().map(|h| (h.link.0, h.class)).collect(),
                open_loop: f.transport == Transport::Udp,
                schedule: f.schedule.on.clone(),
                next_interval: 0,
                next_seq: 0,
                next_reverse_seq: 0,
                sent: Count::default(),
                delivered: Count::default(),
                dropped: [Count::default(); DropReason::COUNT],
                queued: Count::default(),
                delays: DelayCounter::default(),
                throughput: vec![0; windows.count()],
                reverse_counts: PathCounts::default(),
                delivery: TransportReport {
                    protocol: "udp",
                    ..TransportReport::default()
                },
                current_burst: NO_BURST,
                udp_conn: 0,
            });
            let rng = Rng::for_flow(config.seed, &f.name);
            agents.push(match &f.transport {
                Transport::Udp => source::build(&f.source, rng),
                Transport::Tcp(tcp) => tcp::build(tcp, &f.source, rng),
            });
        }
        Ok(Simulator {
            now: Instant::ZERO,
            end,
            seed: config.seed,
            duration: config.duration,
            window: config.measure.window,
            queue,
            links,
            flows,
            agents,
            actions: Vec::new(),
            drops: Vec::new(),
            recorder: Recorder::new(config.links.len(), config.measure.max_delay_records),
            budget: None,
            stopped: None,
            delay_bins: 0,
            bursts: 0,
            series_bytes: 0,
            events: 0,
            packet_hops: 0,
        }
        .with_series_counted())
    }

    fn with_series_counted(mut self) -> Simulator {
        let links: usize = self.links.iter().map(|l| l.meter.series_cells()).sum();
        let flows: usize = self.flows.iter().map(|f| f.throughput.len()).sum();
        self.series_bytes = memory::series_bytes(links as u64, flows as u64);
        self
    }

    /// Hands every per-packet delay record to `sink` as the run makes it, instead of
    /// keeping it in memory (see [`crate::records`]); the result reads them back from
    /// the store the sink turns into.
    pub fn record_to(mut self, sink: Box<dyn RecordSink>) -> Simulator {
        self.recorder.set_sink(sink);
        self
    }

    /// Stops the run cleanly when its data takes more than `bytes` (counted as
    /// [`crate::memory`] says, every [`memory::CHECK_EVERY`] events): the result then
    /// says where and why ([`RunResult::stopped`]).
    pub fn memory_budget(mut self, bytes: u64) -> Simulator {
        self.budget = Some(bytes);
        self
    }

    /// What the run's data takes now (see [`crate::memory`]).
    pub fn memory_use(&self) -> MemoryUse {
        let in_flight: u64 = self
            .links
            .iter()
            .map(|l| {
                l.port.qdisc().total().queued.packets
                    + l.pipe.len() as u64
                    + u64::from(l.on_wire.is_some())
            })
            .sum();
        MemoryUse {
            packets: in_flight * memory::PACKET_BYTES,
            events: self.queue.len() as u64 * memory::EVENT_BYTES,
            records: self.recorder.in_memory() * memory::RECORD_BYTES,
            delays: self.delay_bins * memory::DELAY_BIN_BYTES,
            series: self.series_bytes,
            bursts: self.bursts * memory::BURST_BYTES,
        }
    }

    /// Runs to the end of the configured duration and reports.
    pub fn run(self) -> RunResult {
        self.run_with_progress(&mut |_, _, _| {})
    }

    /// Runs like [`Simulator::run`], calling `on_progress(now, duration, events)` with
    /// the simulated time reached and the events processed every 2^20 events and once at
    /// the end (with `now = duration`). The callback cannot influence the run.
    pub fn run_with_progress(
        mut self,
        on_progress: &mut dyn FnMut(Instant, Duration, u64),
    ) -> RunResult {
        // Never breaks: the callback always continues.
        let _ = self.advance(&mut |now, total, events| {
            on_progress(now, total, events);
            ControlFlow::Continue(())
        });
        on_progress(self.end, self.duration, self.events);
        finish::finish(self)
    }

    /// Runs like [`Simulator::run_with_progress`], but stops as soon as `on_progress`
    /// returns [`ControlFlow::Break`] (it is called every 2^20 events, about a tenth of
    /// a second of computing): then there is no result (`None`). This is how a face
    /// lets its user interrupt a long run.
    pub fn run_interruptible(
        mut self,
        on_progress: &mut dyn FnMut(Instant, Duration, u64) -> ControlFlow<()>,
    ) -> Option<RunResult> {
        if self.advance(on_progress).is_break() {
            return None;
        }
        let _ = on_progress(self.end, self.duration, self.events);
        Some(finish::finish(self))
    }

    /// Handles every event before the end, calling `on_progress` every
    /// [`PROGRESS_EVERY`] events; stops early when it breaks, or (continuing) when the
    /// run's data grew past the memory budget (the result says so).
    fn advance(
        &mut self,
        on_progress: &mut dyn FnMut(Instant, Duration, u64) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        while let Some((t, event)) = self.queue.pop_before(self.end) {
            self.now = t;
            self.events += 1;
            self.handle(event);
            self.apply_actions();
            if self.events % memory::CHECK_EVERY == 0 {
                if self.events % PROGRESS_EVERY == 0 {
                    on_progress(self.now, self.duration, self.events)?;
                }
                if let Some(budget) = self.budget {
                    let used = self.memory_use();
                    if used.total() > budget {
                        self.stopped = Some(Stopped {
                            at: self.now,
                            budget,
                            used,
                        });
                        break;
                    }
                }
            }
        }
        ControlFlow::Continue(())
    }

    fn handle(&mut self, event: Event) {
        match event {
            Event::Start(f) => {
                let flow = &mut self.flows[f as usize];
                let (_, stop) = flow.schedule[flow.next_interval];
                self.queue.push(stop, Event::Stop(f));
                self.call(f, |a, ctx| a.on_start(ctx));
            }
            Event::Stop(f) => {
                self.call(f, |a, ctx| a.on_stop(ctx));
                let flow = &mut self.flows[f as usize];
                flow.next_interval += 1;
                if let Some(&(start, _)) = flow.schedule.get(flow.next_interval) {
                    self.queue.push(start, Event::Start(f));
                }
            }
            Event::Timer { flow, token } => self.call(flow, |a, ctx| a.on_timer(ctx, token)),
            Event::TxDone(l) => {
                self.finish_transmission(l as usize);
                self.transmit(l as usize);
            }
            Event::Wake { link, generation } => {
                let l = &mut self.links[link as usize];
                if l.wake_generation == generation
                    && l.wake_at.take().is_some()
                    && l.on_wire.is_none()
                {
                    self.transmit(link as usize);
                }
            }
            Event::Arrive(l) => {
                let pipe = &mut self.links[l as usize].pipe;
                let Some(InFlight { pkt, .. }) = pipe.pop_front() else {
                    return;
                };
                if let Some(next) = pipe.front() {
                    self.queue
                        .push_reserved(next.at, next.seq, Event::Arrive(l));
                }
                let flow = &self.flows[pkt.flow.0 as usize];
                let route = if pkt.kind.is_reverse() {
                    &flow.reverse
                } else {
                    &flow.route
                };
                if usize::from(pkt.hop) == route.len() {
                    self.deliver(pkt);
                } else {
                    self.enqueue(pkt);
                }
            }
        }
    }

    /// Runs one agent callback; its actions are applied by `apply_actions`.
    #[inline]
    fn call(&mut self, flow: u32, f: impl FnOnce(&mut dyn Agent, &mut Ctx<'_>)) {
        let mut ctx = Ctx::new(self.now, FlowId(flow), &mut self.actions);
        f(self.agents[flow as usize].as_mut(), &mut ctx);
    }

    /// Applies the agents' actions in order, including those requested while applying.
    fn apply_actions(&mut self) {
        let mut i = 0;
        while let Some(&action) = self.actions.get(i) {
            i += 1;
            match action {
                Action::Emit { flow, len } => {
                    let f = &self.flows[flow.0 as usize];
                    let (burst, conn) = (f.current_burst, f.udp_conn);
                    self.send(
                        flow,
                        Segment {
                            kind: PacketKind::Data,
                            len,
                            conn,
                            num: 0,
                            burst,
                        },
                    );
                }
                Action::Send { flow, segment } => self.send(flow, segment),
                Action::BeginBurst {
                    flow,
                    new_connection,
                } => self.begin_burst(flow, new_connection),
                Action::Timer { flow, at, token } => {
                    self.queue.push(
                        at,
                        Event::Timer {
                            flow: flow.0,
                            token,
                        },
                    );
                }
            }
        }
        self.actions.clear();
    }

    /// Creates the packet `segment` describes and queues it at the first hop of its
    /// direction's route.
    fn send(&mut self, flow: FlowId, segment: Segment) {
        let now = self.now;
        let f = &mut self.flows[flow.0 as usize];
        let seq = if segment.kind.is_reverse() {
            add(&mut f.reverse_counts.sent, segment.len);
            f.next_reverse_seq += 1;
            f.next_reverse_seq - 1
        } else {
            add(&mut f.sent, segment.len);
            f.delivery.first_sent.get_or_insert(now);
            if let Some(b) = f.delivery.bursts.get_mut(segment.burst as usize) {
                b.bytes += u64::from(segment.len);
                b.first_sent.get_or_insert(now);
            }
            f.next_seq += 1;
            f.next_seq - 1
        };
        self.enqueue(SimPacket {
            flow,
            seq,
            len: segment.len,
            sent_at: now,
            hop: 0,
            port_arrival: now,
            kind: segment.kind,
            conn: segment.conn,
            num: segment.num,
            burst: segment.burst,
        });
    }

    /// The flow's open-loop source starts a burst (on a new connection if asked, after
    /// its first): its next packets belong to it.
    fn begin_burst(&mut self, flow: FlowId, new_connection: bool) {
        let f = &mut self.flows[flow.0 as usize];
        let index = f.delivery.bursts.len() as u32;
        if new_connection && index > 0 {
            f.udp_conn += 1;
        }
        self.bursts += 1;
        f.delivery.bursts.push(BurstRecord {
            index,
            conn: f.udp_conn,
            begun: self.now,
            bytes: 0,
            first_sent: None,
            delivered: 0,
            last_delivered: None,
            completed: None,
        });
        f.current_burst = index;
    }

    /// Offers `pkt` to the port of hop `pkt.hop` of its route.
    fn enqueue(&mut self, mut pkt: SimPacket) {
        let now = self.now;
        let flow = pkt.flow.0 as usize;
        let f = &self.flows[flow];
        let route = if pkt.kind.is_reverse() {
            &f.reverse
        } else {
            &f.route
        };
        let (l, mut class) = route[usize::from(pkt.hop)];
        pkt.port_arrival = now;
        let link = &mut self.links[l as usize];
        if !link.per_flow.is_empty()
            && let Some(template) = link.tree.get(class).template
        {
            let key = (u64::from(pkt.flow.0) << 32) | u64::from(pkt.conn);
            let assigned = link.per_flow.classify(now, template, key);
            if let Assigned::New(c) = assigned {
                link.port.reset_class(now, c);
            }
            class = assigned.class();
        }
        link.meter.arrived(now, class, pkt.len);
        let drops = &mut self.drops;
        let queued = link.port.enqueue(now, class, pkt, |d| drops.push(d));
        if queued {
            link.per_flow.filled(class);
            let f = &mut self.flows[flow];
            if pkt.kind.is_reverse() {
                add(&mut f.reverse_counts.queued, pkt.len);
            } else {
                add(&mut f.queued, pkt.len);
            }
            let backlog = link.port.qdisc().backlog(class).bytes;
            link.meter.backlog(now, class, backlog);
        }
        if !self.drops.is_empty() {
            self.dropped(l as usize, &pkt, queued);
        }
        if self.links[l as usize].on_wire.is_none() {
            self.transmit(l as usize);
        }
    }

    /// Accounts the drops of one enqueue of `arrival` at link `l` (whether the arrival
    /// itself was `queued`) and tells the agents.
    fn dropped(&mut self, l: usize, arrival: &SimPacket, queued: bool) {
        let mut drops = core::mem::take(&mut self.drops);
        for d in drops.drain(..) {
            let p = d.pkt;
            let is_arrival =
                !queued && p.flow == arrival.flow && p.seq == arrival.seq && p.kind == arrival.kind;
            self.links[l].meter.dropped(p.port_arrival, d.class, p.len);
            let flow = &mut self.flows[p.flow.0 as usize];
            if !is_arrival {
                if p.kind.is_reverse() {
                    sub(&mut flow.reverse_counts.queued, p.len);
                } else {
                    sub(&mut flow.queued, p.len);
                }
                let link = &mut self.links[l];
                let backlog = link.port.qdisc().backlog(d.class).bytes;
                link.meter.backlog(self.now, d.class, backlog);
                if backlog == 0 {
                    link.per_flow.emptied(self.now, d.class);
                }
            }
            if p.kind.is_reverse() {
                add(&mut flow.reverse_counts.dropped, p.len);
            } else {
                add(&mut flow.dropped[d.reason.index()], p.len);
            }
            self.call(p.flow.0, |a, ctx| a.on_dropped(ctx, &p, d.reason));
        }
        self.drops = drops;
    }

    /// Starts the next transmission of link `l` if its port releases a packet, or
    /// arranges to come back when shaping allows one.
    fn transmit(&mut self, l: usize) {
        let now = self.now;
        let link = &mut self.links[l];
        match link.port.transmit(now) {
            Transmit::Started {
                pkt: Dequeued { pkt, class },
                done_at,
            } => {
                let backlog = link.port.qdisc().backlog(class).bytes;
                link.meter.backlog(now, class, backlog);
                if link.meter.started(now, class, pkt.port_arrival) {
                    self.delay_bins += 1;
                }
                if backlog == 0 {
                    link.per_flow.emptied(now, class);
                }
                link.on_wire = Some((pkt, class));
                self.queue.push(done_at, Event::TxDone(l as u32));
                let f = &mut self.flows[pkt.flow.0 as usize];
                if pkt.kind.is_reverse() {
                    sub(&mut f.reverse_counts.queued, pkt.len);
                } else {
                    sub(&mut f.queued, pkt.len);
                }
                if pkt.hop == 0 {
                    self.call(pkt.flow.0, |a, ctx| a.on_departure(ctx, &pkt));
                }
            }
            Transmit::Wait(t) => {
                if link.wake_at.is_none_or(|w| w > t) {
                    link.wake_generation = link.wake_generation.wrapping_add(1);
                    link.wake_at = Some(t);
                    self.queue.push(
                        t,
                        Event::Wake {
                            link: l as u32,
                            generation: link.wake_generation,
                        },
                    );
                }
            }
            Transmit::Busy(_) | Transmit::Idle => {}
        }
    }

    /// The packet on the wire of link `l` has been fully transmitted: measure it and send
    /// it on its way.
    fn finish_transmission(&mut self, l: usize) {
        let now = self.now;
        let link = &mut self.links[l];
        let Some((mut pkt, class)) = link.on_wire.take() else {
            return;
        };
        link.meter.departed(now, class, pkt.len);
        let record = DelayRecord {
            class,
            flow: pkt.flow,
            len: pkt.len,
            arrival: pkt.port_arrival,
            departure: now,
        };
        if link.meter.delay(class, record.delay()) {
            self.delay_bins += 1;
        }
        self.recorder.record(l, &record);
        self.packet_hops += 1;
        pkt.hop += 1;
        let link = &mut self.links[l];
        let at = now.saturating_add(link.delay);
        let seq = self.queue.reserve();
        if link.pipe.is_empty() {
            self.queue.push_reserved(at, seq, Event::Arrive(l as u32));
        }
        link.pipe.push_back(InFlight { at, seq, pkt });
    }

    /// `pkt` reached the end of its route: the sink (forward kinds) or the source
    /// (reverse kinds).
    fn deliver(&mut self, pkt: SimPacket) {
        if pkt.kind.is_reverse() {
            add(
                &mut self.flows[pkt.flow.0 as usize].reverse_counts.delivered,
                pkt.len,
            );
            self.call(pkt.flow.0, |a, ctx| a.on_delivered(ctx, &pkt));
            return;
        }
        let now = self.now;
        let flow = &mut self.flows[pkt.flow.0 as usize];
        if flow.open_loop {
            let d = &mut flow.delivery;
            d.bytes_delivered += u64::from(pkt.len);
            d.last_delivered = Some(now);
            if let Some(b) = d.bursts.get_mut(pkt.burst as usize) {
                b.delivered += u64::from(pkt.len);
                b.last_delivered = Some(now);
                if b.delivered == b.bytes {
                    b.completed = Some(now);
                }
            }
        }
        if pkt.kind != PacketKind::Data {
            add(&mut flow.delivered, pkt.len);
            self.call(pkt.flow.0, |a, ctx| a.on_delivered(ctx, &pkt));
            return;
        }
        let delay = self.now.since(pkt.sent_at);
        let window = self.now.0 / self.window.0;
        let flow = &mut self.flows[pkt.flow.0 as usize];
        add(&mut flow.delivered, pkt.len);
        flow.throughput[window as usize] += u64::from(pkt.len);
        if flow.delays.add(delay) {
            self.delay_bins += 1;
        }
        self.call(pkt.flow.0, |a, ctx| a.on_delivered(ctx, &pkt));
    }
}

mod finish;
#[cfg(test)]
mod tests;
