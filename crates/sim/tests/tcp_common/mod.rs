//! A dumbbell for the TCP tests and a test-double discipline that drops chosen packets.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};

use linkshare_core::buffer::{BufferConfig, Overflow};
use linkshare_core::hierarchy::{ClassId, ClassTree, Limit};
use linkshare_core::sched::fifo::Fifo;
use linkshare_core::sched::{
    Dequeued, DropReason, Dropped, Enqueue, PollAt, Scheduler, SchedulerKind,
};
use linkshare_core::units::{Bytes, Duration, Instant, Rate};
use linkshare_sim::config::{
    FlowConfig, Hop, LinkConfig, LinkId, MeasureConfig, NodeConfig, NodeId, Schedule, SimConfig,
    SourceConfig, TcpConfig, Transport,
};
use linkshare_sim::packet::{PacketKind, SimPacket};
use linkshare_sim::result::{FlowResult, RunResult};
use linkshare_sim::sim::SimScheduler;
use linkshare_sim::{SimError, Simulator};

/// A dumbbell: `n` flows from node `src` to node `dst` over one forward link (the
/// bottleneck, one leaf per flow), acknowledgements back over one reverse link.
#[derive(Clone, Debug)]
pub struct Dumbbell {
    pub rate: Rate,
    pub reverse_rate: Rate,
    /// One-way propagation delay of each link.
    pub delay: Duration,
    /// Shared buffer of the forward port, packets; `None`: unlimited.
    pub buffer: Option<u64>,
    pub overflow: Overflow,
    pub scheduler: SchedulerKind,
    pub secs: u64,
    pub seed: u64,
}

impl Default for Dumbbell {
    fn default() -> Self {
        Dumbbell {
            rate: Rate::from_mbit(10),
            reverse_rate: Rate::from_mbit(10),
            delay: Duration::from_millis(10),
            buffer: Some(1000),
            overflow: Overflow::TailDrop,
            scheduler: SchedulerKind::Fifo,
            secs: 10,
            seed: 1,
        }
    }
}

impl Dumbbell {
    /// The configuration with one TCP flow per `(source, tcp)`, always on.
    pub fn config(&self, flows: Vec<(SourceConfig, TcpConfig)>) -> SimConfig {
        let duration = Duration::from_secs(self.secs);
        let schedules = flows.iter().map(|_| Schedule::always(duration)).collect();
        self.config_with_schedules(flows, schedules)
    }

    /// Like [`Dumbbell::config`], with a schedule per flow.
    pub fn config_with_schedules(
        &self,
        flows: Vec<(SourceConfig, TcpConfig)>,
        schedules: Vec<Schedule>,
    ) -> SimConfig {
        let n = flows.len();
        let fwd = Arc::new(ClassTree::flat(self.rate, n));
        let rev = Arc::new(ClassTree::flat(self.reverse_rate, n));
        let link =
            |name: &str, from, to, tree: &Arc<ClassTree>, kind: SchedulerKind, buffer| LinkConfig {
                delay: self.delay,
                buffer,
                ..LinkConfig::new(name, NodeId(from), NodeId(to), Arc::clone(tree), kind)
            };
        let fwd_buffer = BufferConfig {
            shared: self.buffer.map(Limit::Packets),
            overflow: self.overflow,
        };
        SimConfig {
            seed: self.seed,
            duration: Duration::from_secs(self.secs),
            nodes: vec![
                NodeConfig { name: "src".into() },
                NodeConfig { name: "dst".into() },
            ],
            links: vec![
                link("fwd", 0, 1, &fwd, self.scheduler, fwd_buffer),
                link(
                    "rev",
                    1,
                    0,
                    &rev,
                    SchedulerKind::Fifo,
                    BufferConfig::default(),
                ),
            ],
            flows: flows
                .into_iter()
                .zip(schedules)
                .enumerate()
                .map(|(i, ((source, tcp), schedule))| FlowConfig {
                    name: format!("tcp{i}"),
                    route: vec![Hop {
                        link: LinkId(0),
                        class: fwd.leaves()[i],
                    }],
                    reverse: vec![Hop {
                        link: LinkId(1),
                        class: rev.leaves()[i],
                    }],
                    source,
                    transport: Transport::Tcp(tcp),
                    schedule,
                })
                .collect(),
            measure: MeasureConfig::default(),
        }
    }

    /// Transmission time of `bytes` on the forward link.
    pub fn tx(&self, bytes: u64) -> Duration {
        self.rate.tx_time(Bytes(bytes))
    }

    /// Transmission time of `bytes` on the reverse link.
    pub fn tx_rev(&self, bytes: u64) -> Duration {
        self.reverse_rate.tx_time(Bytes(bytes))
    }
}

/// An endless (greedy) application.
pub fn greedy() -> SourceConfig {
    SourceConfig::Greedy {
        size: 1000,
        backlog: 2,
    }
}

/// One packet seen by a [`Scripted`] port: when, what, and whether it was dropped.
#[derive(Clone, Copy, Debug)]
pub struct Seen {
    pub at: Instant,
    pub pkt: SimPacket,
    pub dropped: bool,
}

/// Decides whether an arriving packet is dropped.
pub type Rule = Box<dyn FnMut(Instant, &SimPacket) -> bool + Send>;

/// FIFO that logs every arrival and drops those its rule picks (reported as
/// [`DropReason::ClassLimit`]).
pub struct Scripted {
    fifo: Fifo<SimPacket>,
    rule: Rule,
    log: Arc<Mutex<Vec<Seen>>>,
}

impl Scheduler<SimPacket> for Scripted {
    fn name(&self) -> &'static str {
        "scripted"
    }

    fn is_work_conserving(&self) -> bool {
        true
    }

    fn enqueue(
        &mut self,
        now: Instant,
        class: ClassId,
        pkt: SimPacket,
        evicted: &mut Vec<Dropped<SimPacket>>,
    ) -> Enqueue<SimPacket> {
        let dropped = (self.rule)(now, &pkt);
        self.log.lock().expect("not poisoned").push(Seen {
            at: now,
            pkt,
            dropped,
        });
        if dropped {
            return Enqueue::Dropped(Dropped {
                pkt,
                class,
                reason: DropReason::ClassLimit,
            });
        }
        self.fifo.enqueue(now, class, pkt, evicted)
    }

    fn dequeue(&mut self, now: Instant) -> Option<Dequeued<SimPacket>> {
        self.fifo.dequeue(now)
    }

    fn poll_at(&self, now: Instant) -> PollAt {
        self.fifo.poll_at(now)
    }

    fn remove_newest(&mut self, class: ClassId) -> Option<SimPacket> {
        self.fifo.remove_newest(class)
    }

    fn remove_behind_head(&mut self, class: ClassId) -> Option<SimPacket> {
        self.fifo.remove_behind_head(class)
    }
}

/// Runs `config` with a [`Scripted`] discipline on the forward link (`fwd_rule`) and on
/// the reverse link (`rev_rule`); returns the result and both logs.
pub fn run_scripted(
    config: &SimConfig,
    fwd_rule: Rule,
    rev_rule: Rule,
) -> (RunResult, Vec<Seen>, Vec<Seen>) {
    let fwd_log = Arc::new(Mutex::new(Vec::new()));
    let rev_log = Arc::new(Mutex::new(Vec::new()));
    let mut rules = [Some(fwd_rule), Some(rev_rule)];
    let logs = [Arc::clone(&fwd_log), Arc::clone(&rev_log)];
    let mut build = |l: &LinkConfig| -> Result<SimScheduler, _> {
        let i = usize::from(l.name == "rev");
        Ok(Box::new(Scripted {
            fifo: Fifo::new(),
            rule: rules[i].take().expect("one build per link"),
            log: Arc::clone(&logs[i]),
        }) as SimScheduler)
    };
    let sim: Result<Simulator, SimError> = Simulator::with_schedulers(config, &mut build);
    let result = sim.expect("valid configuration").run();
    check_accounting(&result);
    let fwd = fwd_log.lock().expect("not poisoned").clone();
    let rev = rev_log.lock().expect("not poisoned").clone();
    (result, fwd, rev)
}

/// A rule that never drops.
pub fn keep_all() -> Rule {
    Box::new(|_, _| false)
}

/// Drops the first copy of each data segment whose sequence number is in `nums`.
pub fn drop_first_copy_of(nums: &[u64]) -> Rule {
    let mut pending: Vec<u64> = nums.to_vec();
    Box::new(move |_, p| {
        if p.kind != PacketKind::Data {
            return false;
        }
        match pending.iter().position(|&n| n == p.num) {
            Some(i) => {
                pending.swap_remove(i);
                true
            }
            None => false,
        }
    })
}

/// Runs `config` with the registry's disciplines and checks the accounting.
pub fn run(config: &SimConfig) -> RunResult {
    let result = Simulator::new(config).expect("valid configuration").run();
    check_accounting(&result);
    result
}

/// Conservation of every flow's forward packets (and the ports' totals), and of its
/// reverse packets.
pub fn check_accounting(r: &RunResult) {
    r.check_conservation().expect("conservation");
    for f in &r.flows {
        check_reverse(f);
    }
}

/// `sent = delivered + dropped + queued + in_transmission + propagating` for the
/// reverse packets.
pub fn check_reverse(f: &FlowResult) {
    f.reverse
        .check_conservation(&f.name)
        .expect("reverse conservation");
}

/// Times of the transmissions (arrivals at the port) of the data segment `num`.
pub fn copies_of(log: &[Seen], num: u64) -> Vec<Instant> {
    log.iter()
        .filter(|s| s.pkt.kind == PacketKind::Data && s.pkt.num == num)
        .map(|s| s.at)
        .collect()
}

/// Jain's fairness index of `xs`.
pub fn jain(xs: &[f64]) -> f64 {
    let sum: f64 = xs.iter().sum();
    let squares: f64 = xs.iter().map(|x| x * x).sum();
    sum * sum / (xs.len() as f64 * squares)
}
