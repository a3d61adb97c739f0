//! The conformance harness every scheduler is run through (see `tests/conformance.rs`).
//!
//! [`check`] drives a scheduler wrapped in a [`Qdisc`] through a sequence of [`Op`]s and
//! compares it, after **every** operation, with an independent model of what any correct
//! discipline must do, whatever its service order:
//!
//! * the conservation identities of the counters ([`Qdisc::check_conservation`]);
//! * FIFO order within each class: a dequeued packet is the oldest queued packet of its
//!   class; a packet pushed out ([`DropReason::PushedOut`]) is the newest of its class
//!   under [`Overflow::PushOutLongest`], and the one behind its head (or its only one)
//!   under [`Overflow::PushOutSecond`], where the arrival counts as queued before the
//!   push-outs it causes; any other eviction removes a packet that is queued in the
//!   class it names;
//! * the qdisc's backlog of every class and in total equals the model's (packets and
//!   bytes);
//! * every packet is accounted for exactly once: it is queued, dequeued or dropped, and
//!   moves only from queued to dequeued or dropped; the arrival's fate matches the value
//!   [`Qdisc::enqueue`] returned;
//! * `poll_at` honesty: `Idle` exactly when the model holds no packet; `Now` means the
//!   next dequeue at the same instant returns a packet; `At(t)` means `t > now` and a
//!   dequeue before `t` returns nothing, and once time reaches the earliest promised `t`
//!   with no arrival in between, `poll_at` says `Now`;
//! * if the discipline claims to be work-conserving: `poll_at` is never `At(_)`, and a
//!   dequeue returns a packet whenever the model holds one.
//!
//! At the end the harness drains the qdisc: it dequeues, moving time forward to the
//! instants `poll_at` names, until the qdisc is empty; every packet enqueued must come
//! out or have been dropped. The drain is bounded (four steps per queued packet, plus a
//! margin): a discipline that never releases its packets is a [`Violation`].
//!
//! Time starts at [`Instant::ZERO`] and only moves forward, by [`Op::Advance`].
//! Packets get consecutive ids from 0 in the order they are offered.

use std::collections::VecDeque;
use std::fmt;

use crate::buffer::{BufferConfig, Overflow};
use crate::hierarchy::{ClassId, ClassSpec, ClassTree, LinkSpec};
use crate::sched::{DropReason, Dropped, Enqueue, Packet, PollAt, Scheduler};
use crate::stats::Qdisc;
use crate::units::{Bytes, Duration, Instant, Rate};

/// A packet for tests: an id (unique per run) and a wire length in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TestPacket {
    /// Identifier, unique within a run.
    pub id: u64,
    /// Length on the wire in bytes.
    pub len: u32,
}

impl Packet for TestPacket {
    #[inline]
    fn wire_len(&self) -> u32 {
        self.len
    }
}

/// One step of a conformance run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Offer a packet of `len` bytes to leaf `tree.leaves()[leaf % leaves]` (to the root,
    /// which is not a leaf, if the tree has no leaves).
    Enqueue {
        /// Index into [`ClassTree::leaves`], taken modulo the number of leaves.
        leaf: u32,
        /// Wire length in bytes.
        len: u32,
    },
    /// Dequeue once at the current instant.
    Dequeue,
    /// Move the current instant forward (saturating at [`Instant::MAX`]).
    Advance(Duration),
}

/// What a successful run did, so that tests can check that the ops exercised something.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Packets offered.
    pub arrived: u64,
    /// Arrivals accepted into a queue.
    pub enqueued: u64,
    /// Packets dropped: refused arrivals and evictions of queued packets.
    pub dropped: u64,
    /// Packets dequeued, during the ops and the final drain.
    pub dequeued: u64,
    /// Packets dequeued by the final drain.
    pub drained: u64,
}

/// A broken rule: where and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// Index of the operation after which the rule was broken; `ops.len()` for the final
    /// drain (whose messages start with `final drain:`).
    pub op: usize,
    /// The current instant.
    pub now: Instant,
    /// What went wrong.
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "at op {} (t = {} ns): {}",
            self.op,
            self.now.as_nanos(),
            self.message
        )
    }
}

impl std::error::Error for Violation {}

/// Runs `ops` through `sched` wrapped in a [`Qdisc`] with `buffer`, checking every rule
/// of the [module docs](self) after every operation, then drains. `sched` must be built
/// for `tree`.
pub fn check<S: Scheduler<TestPacket>>(
    tree: &ClassTree,
    sched: S,
    buffer: BufferConfig,
    ops: &[Op],
) -> Result<Report, Violation> {
    let mut h = Harness::new(tree, sched, buffer);
    for (i, op) in ops.iter().enumerate() {
        h.op = i;
        match *op {
            Op::Enqueue { leaf, len } => h.enqueue(tree, leaf, len)?,
            Op::Dequeue => {
                h.dequeue()?;
            }
            Op::Advance(d) => h.now = h.now.saturating_add(d),
        }
        h.check_state()?;
    }
    h.op = ops.len();
    h.draining = true;
    h.drain()?;
    Ok(h.report)
}

/// Where a packet is, in the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    Queued(ClassId),
    Dequeued,
    Dropped,
}

/// The qdisc under test, the model, and the run's position.
struct Harness<S> {
    qdisc: Qdisc<TestPacket, S>,
    overflow: Overflow,
    work_conserving: bool,
    now: Instant,
    op: usize,
    /// Whether the ops are done and the final drain has started.
    draining: bool,
    /// Fate of packet `id`, indexed by id.
    fate: Vec<Fate>,
    /// Length of packet `id`.
    len: Vec<u32>,
    /// Queued packet ids per class, oldest first.
    queues: Vec<VecDeque<u64>>,
    /// Queued bytes per class.
    bytes: Vec<u64>,
    /// Packets queued in all classes.
    queued: u64,
    /// Earliest `At(t)` promised since the last arrival and not yet honoured.
    promise: Option<Instant>,
    /// Scratch space for drops reported during one enqueue.
    drops: Vec<Dropped<TestPacket>>,
    report: Report,
}

impl<S: Scheduler<TestPacket>> Harness<S> {
    fn new(tree: &ClassTree, sched: S, buffer: BufferConfig) -> Harness<S> {
        let work_conserving = sched.is_work_conserving();
        Harness {
            qdisc: Qdisc::new(tree, sched, buffer),
            overflow: buffer.overflow,
            work_conserving,
            now: Instant::ZERO,
            op: 0,
            draining: false,
            fate: Vec::new(),
            len: Vec::new(),
            queues: vec![VecDeque::new(); tree.len()],
            bytes: vec![0; tree.len()],
            queued: 0,
            promise: None,
            drops: Vec::new(),
            report: Report::default(),
        }
    }

    fn fail<T>(&self, message: String) -> Result<T, Violation> {
        let message = if self.draining {
            format!("final drain: {message}")
        } else {
            message
        };
        Err(Violation {
            op: self.op,
            now: self.now,
            message,
        })
    }

    fn enqueue(&mut self, tree: &ClassTree, leaf: u32, len: u32) -> Result<(), Violation> {
        let leaves = tree.leaves();
        let class = if leaves.is_empty() {
            ClassId::ROOT
        } else {
            leaves[leaf as usize % leaves.len()]
        };
        let id = self.fate.len() as u64;
        self.fate.push(Fate::Dropped);
        self.len.push(len);
        self.report.arrived += 1;
        self.promise = None;
        let mut drops = core::mem::take(&mut self.drops);
        let pkt = TestPacket { id, len };
        let queued = self.qdisc.enqueue(self.now, class, pkt, |d| drops.push(d));
        // Push-out-second queues the arrival before it pushes anything out, the arrival
        // included.
        let queued_first = queued && self.overflow == Overflow::PushOutSecond;
        if queued_first {
            self.queued_now(id, class, len);
        }
        let mut arrival_dropped = false;
        for d in drops.drain(..) {
            self.report.dropped += 1;
            if d.pkt.id == id && !queued_first {
                if arrival_dropped || d.class != class {
                    return self.fail(format!(
                        "arrival {id} to class {} dropped twice or under class {}",
                        class.0, d.class.0
                    ));
                }
                arrival_dropped = true;
            } else {
                self.evicted(&d)?;
            }
        }
        self.drops = drops;
        if !queued_first && queued == arrival_dropped {
            return self.fail(format!(
                "Qdisc::enqueue returned {queued} for packet {id} but the packet was {}",
                if arrival_dropped {
                    "dropped"
                } else {
                    "not reported dropped"
                }
            ));
        }
        if queued && !queued_first {
            self.queued_now(id, class, len);
        }
        Ok(())
    }

    /// Records arrival `id` of `len` bytes as queued in `class`.
    fn queued_now(&mut self, id: u64, class: ClassId, len: u32) {
        self.report.enqueued += 1;
        self.fate[id as usize] = Fate::Queued(class);
        self.queues[class.index()].push_back(id);
        self.bytes[class.index()] += u64::from(len);
        self.queued += 1;
    }

    /// Accounts for a queued packet the qdisc dropped to admit an arrival.
    fn evicted(&mut self, d: &Dropped<TestPacket>) -> Result<(), Violation> {
        let id = d.pkt.id;
        let Some(&fate) = self.fate.get(id as usize) else {
            return self.fail(format!("evicted packet {id} was never offered"));
        };
        if fate != Fate::Queued(d.class) {
            return self.fail(format!(
                "evicted packet {id} reported in class {} but its fate was {fate:?}",
                d.class.0
            ));
        }
        let queue = &self.queues[d.class.index()];
        let expected = match self.overflow {
            Overflow::PushOutSecond => queue.get(1).or(queue.front()).copied(),
            _ => queue.back().copied(),
        };
        if d.reason == DropReason::PushedOut && expected != Some(id) {
            return self.fail(format!(
                "packet {id} pushed out of class {} under {:?} is not the one the rule \
                 names ({expected:?})",
                d.class.0, self.overflow
            ));
        }
        let queue = &mut self.queues[d.class.index()];
        let at = queue
            .iter()
            .rposition(|&q| q == id)
            .expect("fate says queued here");
        queue.remove(at);
        self.bytes[d.class.index()] -= u64::from(self.len[id as usize]);
        self.queued -= 1;
        self.fate[id as usize] = Fate::Dropped;
        Ok(())
    }

    /// One dequeue at `now`, checked against the `poll_at` taken just before it.
    /// Returns whether a packet came out.
    fn dequeue(&mut self) -> Result<bool, Violation> {
        let poll = self.qdisc.poll_at(self.now);
        let out = self.qdisc.dequeue(self.now);
        match (poll, &out) {
            (PollAt::Now, None) => {
                return self.fail("poll_at said Now but dequeue returned nothing".into());
            }
            (PollAt::Idle, Some(d)) => {
                return self.fail(format!(
                    "poll_at said Idle but dequeue returned packet {}",
                    d.pkt.id
                ));
            }
            (PollAt::At(t), Some(d)) => {
                return self.fail(format!(
                    "poll_at said At({} ns) but dequeue returned packet {}",
                    t.as_nanos(),
                    d.pkt.id
                ));
            }
            _ => {}
        }
        let Some(d) = out else {
            if self.work_conserving && self.queued > 0 {
                return self.fail(format!(
                    "work-conserving discipline returned nothing with {} packets queued",
                    self.queued
                ));
            }
            return Ok(false);
        };
        let id = d.pkt.id;
        let queue = self.queues.get_mut(d.class.index());
        match queue.and_then(|q| q.front().copied()) {
            Some(oldest) if oldest == id => {}
            oldest => {
                return self.fail(format!(
                    "dequeued packet {id} from class {}, whose oldest queued packet is {oldest:?} \
                     (fate of {id}: {:?})",
                    d.class.0,
                    self.fate.get(id as usize)
                ));
            }
        }
        if d.pkt.len != self.len[id as usize] {
            return self.fail(format!("packet {id} changed length"));
        }
        self.queues[d.class.index()].pop_front();
        self.bytes[d.class.index()] -= u64::from(d.pkt.len);
        self.queued -= 1;
        self.fate[id as usize] = Fate::Dequeued;
        self.report.dequeued += 1;
        Ok(true)
    }

    /// Every rule that must hold between operations.
    fn check_state(&mut self) -> Result<(), Violation> {
        if let Err(e) = self.qdisc.check_conservation() {
            return self.fail(format!("conservation: {e}"));
        }
        for (c, queue) in self.queues.iter().enumerate() {
            let b = self.qdisc.backlog(ClassId(c as u32));
            if (b.packets, b.bytes) != (queue.len() as u64, self.bytes[c]) {
                return self.fail(format!(
                    "class {c}: qdisc backlog {} packets / {} bytes, model {} / {}",
                    b.packets,
                    b.bytes,
                    queue.len(),
                    self.bytes[c]
                ));
            }
        }
        let t = self.qdisc.total().queued;
        if t.packets != self.queued {
            return self.fail(format!(
                "total backlog {} packets, model {}",
                t.packets, self.queued
            ));
        }
        let poll = self.qdisc.poll_at(self.now);
        match poll {
            PollAt::Idle if self.queued > 0 => {
                return self.fail(format!(
                    "poll_at says Idle with {} packets queued",
                    self.queued
                ));
            }
            PollAt::Now | PollAt::At(_) if self.queued == 0 => {
                return self.fail(format!("poll_at says {poll:?} with nothing queued"));
            }
            PollAt::At(_) if self.work_conserving => {
                return self.fail(format!("work-conserving discipline says {poll:?}"));
            }
            PollAt::At(t) if t <= self.now => {
                return self.fail(format!(
                    "poll_at says At({} ns), not in the future",
                    t.as_nanos()
                ));
            }
            _ => {}
        }
        if let Some(p) = self.promise
            && p <= self.now
            && poll != PollAt::Now
        {
            return self.fail(format!(
                "poll_at promised At({} ns); at or after it, with no arrival since, it says \
                 {poll:?}",
                p.as_nanos()
            ));
        }
        self.promise = match poll {
            PollAt::At(t) => Some(self.promise.map_or(t, |p| p.min(t))),
            PollAt::Now | PollAt::Idle => None,
        };
        Ok(())
    }

    /// Dequeues until empty, following `poll_at`, then checks that every packet came out
    /// or was dropped.
    fn drain(&mut self) -> Result<(), Violation> {
        let cap = 4 * self.queued + 64;
        let mut steps = 0;
        while self.queued > 0 {
            if steps == cap {
                return self.fail(format!(
                    "drain: {} packets still queued after {cap} steps",
                    self.queued
                ));
            }
            steps += 1;
            if let PollAt::At(t) = self.qdisc.poll_at(self.now) {
                if t <= self.now {
                    return self.fail(format!(
                        "poll_at says At({} ns), not in the future",
                        t.as_nanos()
                    ));
                }
                self.now = t;
            } else if self.dequeue()? {
                self.report.drained += 1;
            }
            self.check_state()?;
        }
        if let Some(pos) = self.fate.iter().position(|f| matches!(f, Fate::Queued(_))) {
            return self.fail(format!("packet {pos} neither dequeued nor dropped"));
        }
        let total = self.qdisc.total();
        let dropped = total.dropped_total().packets;
        if (total.dequeued.packets, dropped) != (self.report.dequeued, self.report.dropped) {
            return self.fail(format!(
                "qdisc counted {} dequeued and {dropped} dropped, the model {} and {}",
                total.dequeued.packets, self.report.dequeued, self.report.dropped
            ));
        }
        if !self.qdisc.is_empty() || self.qdisc.poll_at(self.now) != PollAt::Idle {
            return self.fail("drained, but the qdisc is not empty and idle".into());
        }
        Ok(())
    }
}

/// Test fixture: the class tree of `specs` under a link named `link` of `rate`.
///
/// # Panics
///
/// With the build's problems, if the tree is invalid.
pub fn tree(rate: Rate, specs: Vec<ClassSpec>) -> ClassTree {
    let link = LinkSpec {
        name: "link".into(),
        rate,
        origin: None,
    };
    ClassTree::build(link, specs).expect("valid tree")
}

/// Test fixture: enqueues `TestPacket { id, len }` in `class` at `now`.
///
/// # Panics
///
/// If the scheduler does not queue it.
pub fn put<S: Scheduler<TestPacket>>(s: &mut S, now: Instant, class: ClassId, id: u64, len: u32) {
    let r = s.enqueue(now, class, TestPacket { id, len }, &mut Vec::new());
    assert!(matches!(r, Enqueue::Queued), "packet {id} refused: {r:?}");
}

/// Test fixture: the class hierarchy of the HLS paper's Fig. 1 on a 1 Gbit/s link named
/// `root`, with weights equal to the guarantees in Mbit/s (A 300: A1 100, A2 200;
/// B 300: B1 100, B2 200; C 400) and 1500-byte maximum packets.
pub fn hls_fig1() -> ClassTree {
    let class = |name: &str, parent: Option<&str>, weight: u32| {
        let mut s = ClassSpec::new(name, parent);
        s.weight = Some(weight);
        s.max_packet = Some(Bytes(1500));
        s
    };
    let link = LinkSpec {
        name: "root".into(),
        rate: Rate::from_gbit(1),
        origin: None,
    };
    let specs = vec![
        class("A", None, 300),
        class("B", None, 300),
        class("C", None, 400),
        class("A1", Some("A"), 100),
        class("A2", Some("A"), 200),
        class("B1", Some("B"), 100),
        class("B2", Some("B"), 200),
    ];
    ClassTree::build(link, specs).expect("Fig. 1 is a valid tree")
}
