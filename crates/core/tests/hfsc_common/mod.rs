//! A small event loop that drives H-FSC through an `EgressPort` at line rate, shared by
//! `tests/hfsc.rs` and `tests/hfsc_props.rs`.
//!
//! Arrivals are given up front (open loop); *greedy* classes are kept backlogged in
//! closed loop (see [`Greedy`]). The loop records every departure with the deadline the
//! scheduler gave the packet when it reached the head of its queue (a deadline does not
//! change while the packet stays at the head), and every instant a class became
//! backlogged.

use std::collections::VecDeque;

use linkshare_core::hierarchy::{ClassId, ClassTree};
use linkshare_core::port::{EgressPort, Transmit};
use linkshare_core::sched::hfsc::{Hfsc, HfscParams};
use linkshare_core::testing::TestPacket;
use linkshare_core::units::Instant;

/// A packet offered at `at` to leaf `class`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    pub at: Instant,
    pub class: ClassId,
    pub len: u32,
}

/// A class kept backlogged during `[from, until)`, with packets of `len` bytes: it gets
/// two packets at `from`, and one more each time one of its packets starts before
/// `until`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Greedy {
    pub class: ClassId,
    pub from: Instant,
    pub until: Instant,
    pub len: u32,
}

impl Greedy {
    /// Backlogged from `from` for ever.
    pub fn from(class: ClassId, from: Instant, len: u32) -> Greedy {
        Greedy {
            class,
            from,
            until: Instant::MAX,
            len,
        }
    }
}

/// A packet that went onto the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Departure {
    pub class: ClassId,
    pub len: u32,
    /// When its first bit left (the dequeue).
    pub start: Instant,
    /// When its last bit left.
    pub done: Instant,
    /// Its H-FSC deadline, if its class has an `rt` curve.
    pub deadline: Option<Instant>,
    /// Whether the real-time criterion sent it (its class's `rt_work` grew).
    pub by_rt: bool,
}

/// What a run did.
#[derive(Debug, Default)]
pub struct Log {
    pub departures: Vec<Departure>,
    /// Per class index, the instants at which it became backlogged.
    pub activations: Vec<Vec<Instant>>,
}

impl Log {
    /// The departures of `class`.
    pub fn of(&self, class: ClassId) -> impl Iterator<Item = &Departure> + '_ {
        self.departures.iter().filter(move |d| d.class == class)
    }

    /// Bytes of `class` whose transmission started in `[from, to)`.
    pub fn bytes_started(&self, class: ClassId, from: Instant, to: Instant) -> u64 {
        self.of(class)
            .filter(|d| d.start >= from && d.start < to)
            .map(|d| u64::from(d.len))
            .sum()
    }
}

/// The port, the per-class FIFOs of packet ids, and what has been recorded.
struct Driver {
    port: EgressPort<TestPacket, Hfsc<TestPacket>>,
    fifo: Vec<VecDeque<u64>>,
    /// Deadline of every packet offered so far, by id, once it reached the head.
    deadline_of: Vec<Option<Instant>>,
    /// `rt_work` of each class after its last departure, bytes.
    rt_work: Vec<u64>,
    log: Log,
}

impl Driver {
    fn offer(&mut self, now: Instant, class: ClassId, len: u32) {
        let id = self.deadline_of.len() as u64;
        let c = class.index();
        let was_empty = self.fifo[c].is_empty();
        let queued = self.port.enqueue(now, class, TestPacket { id, len }, |d| {
            panic!("unexpected drop {d:?}")
        });
        assert!(queued);
        self.fifo[c].push_back(id);
        self.deadline_of.push(None);
        if was_empty {
            self.log.activations[c].push(now);
            self.note_head(class);
        }
    }

    /// Records the deadline of the packet now at the head of `class`.
    fn note_head(&mut self, class: ClassId) {
        if let Some(&id) = self.fifo[class.index()].front() {
            self.deadline_of[id as usize] = self.port.qdisc().scheduler().deadline(class);
        }
    }
}

/// Runs `tree` under H-FSC on a port at the link rate until `until` (no event after it
/// is processed). `observe` is called after every transmission start with the instant
/// and the scheduler. Arrivals must be sorted by time.
#[allow(dead_code)] // tests/hfsc_props.rs calls `run_with` only
pub fn run(
    tree: &ClassTree,
    arrivals: &[Arrival],
    greedy: &[Greedy],
    until: Instant,
    observe: impl FnMut(Instant, &Hfsc<TestPacket>),
) -> Log {
    run_with(
        HfscParams::default(),
        tree,
        arrivals,
        greedy,
        until,
        observe,
    )
}

/// [`run`] with H-FSC's settings `params`.
pub fn run_with(
    params: HfscParams,
    tree: &ClassTree,
    arrivals: &[Arrival],
    greedy: &[Greedy],
    until: Instant,
    mut observe: impl FnMut(Instant, &Hfsc<TestPacket>),
) -> Log {
    assert!(arrivals.windows(2).all(|w| w[0].at <= w[1].at));
    let sched = Hfsc::with_params(tree, params).expect("the test tree builds");
    let n = tree.len();
    let mut dr = Driver {
        port: EgressPort::simple(tree, sched),
        fifo: vec![VecDeque::new(); n],
        deadline_of: Vec::new(),
        rt_work: vec![0; n],
        log: Log {
            departures: Vec::new(),
            activations: vec![Vec::new(); n],
        },
    };
    let mut started = vec![false; greedy.len()];
    let mut now = Instant::ZERO;
    let mut next = 0;
    loop {
        while next < arrivals.len() && arrivals[next].at <= now {
            let a = arrivals[next];
            dr.offer(now, a.class, a.len);
            next += 1;
        }
        for (g, s) in greedy.iter().zip(started.iter_mut()) {
            if !*s && g.from <= now {
                *s = true;
                dr.offer(now, g.class, g.len);
                dr.offer(now, g.class, g.len);
            }
        }
        let wake = match dr.port.transmit(now) {
            Transmit::Started { pkt, done_at } => {
                let c = pkt.class;
                let id = dr.fifo[c.index()]
                    .pop_front()
                    .expect("a departing class has a queue");
                assert_eq!(id, pkt.pkt.id, "FIFO within a class");
                let rt_work = dr.port.qdisc().scheduler().rt_work(c).0;
                let by_rt = rt_work > dr.rt_work[c.index()];
                dr.rt_work[c.index()] = rt_work;
                dr.log.departures.push(Departure {
                    class: c,
                    len: pkt.pkt.len,
                    start: now,
                    done: done_at,
                    deadline: dr.deadline_of[id as usize],
                    by_rt,
                });
                dr.note_head(c);
                let refill = greedy
                    .iter()
                    .zip(&started)
                    .find(|(g, s)| **s && g.class == c && now < g.until)
                    .map(|(g, _)| g.len);
                if let Some(len) = refill {
                    dr.offer(now, c, len);
                }
                observe(now, dr.port.qdisc().scheduler());
                Some(done_at)
            }
            Transmit::Busy(t) | Transmit::Wait(t) => Some(t),
            Transmit::Idle => None,
        };
        let next_arrival = arrivals.get(next).map(|a| a.at);
        let next_greedy = greedy
            .iter()
            .zip(&started)
            .filter(|(_, s)| !**s)
            .map(|(g, _)| g.from)
            .min();
        match [wake, next_arrival, next_greedy]
            .into_iter()
            .flatten()
            .min()
        {
            Some(t) if t <= until => now = t,
            _ => break,
        }
    }
    dr.log
}
