//! Record once, replay through every structure: the paper's trace-driven cost study
//! (spec `keshav-fq.md` §3.4).
//!
//! A scheduler running with a [`Recorder`] (Keshav FQ's
//! `Keshav::with_recorder`) logs the operations its buffer sees — every insertion
//! with its tag, every `get_min` — as a [`Trace`]. [`replay`] runs a trace through one
//! structure under a buffer limit and returns its [`Cost`] with the running average
//! cost over the trace; [`replay_all`] runs all four and checks that they served and
//! dropped exactly the same packets.
//!
//! **Format** (CSV, one row per operation, in order): `seq,time_ns,op,conv,size_bytes,bid`
//! with `op` `I` (insert into the buffer) or `G` (`get_min`; `conv`, `size_bytes` and
//! `bid` empty). `seq` numbers the rows from 0 and is the tie-break of equal bids on
//! replay (it orders insertions as their arrival order does). `bid` is the fixed-point
//! integer. Drops are not in the trace: each structure drops by itself, and the replay
//! checks they agree. A packet that **bypasses** the buffer — it arrives to an empty
//! buffer and leaves at the same instant, because the line was idle — is not in the
//! trace either (the paper sends it at once); [`Trace::bypassed`] counts them.

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use super::{BidQueue, Bounded, Cost, DoubleHeap, Entry, LinkedList, PerConversation, SearchTree};
use super::{Structure, Tag};
use crate::hierarchy::Limit;
use crate::units::{Duration, Instant};

/// One buffer operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceOp {
    /// A packet entered the buffer.
    Insert {
        /// When.
        time: Instant,
        /// Its conversation.
        conv: u32,
        /// Its size.
        size: u32,
        /// Its bid.
        bid: u128,
    },
    /// The line asked for the packet with the smallest bid.
    GetMin {
        /// When.
        time: Instant,
    },
}

impl TraceOp {
    /// When the operation happened.
    pub fn time(&self) -> Instant {
        match *self {
            TraceOp::Insert { time, .. } | TraceOp::GetMin { time } => time,
        }
    }
}

/// A buffer-operation trace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Trace {
    /// The operations, in order.
    pub ops: Vec<TraceOp>,
    /// Packets that bypassed the buffer (not in `ops`).
    pub bypassed: u64,
}

/// A malformed trace row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    /// 1-based line of the CSV text.
    pub line: usize,
    /// What is wrong and how to fix it.
    pub problem: String,
}

impl std::fmt::Display for TraceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "trace line {}: {}", self.line, self.problem)
    }
}

impl std::error::Error for TraceError {}

/// The CSV header of [`Trace::to_csv`].
pub const CSV_HEADER: &str = "seq,time_ns,op,conv,size_bytes,bid";

impl Trace {
    /// Number of conversations the trace names (largest index + 1).
    pub fn conversations(&self) -> usize {
        self.ops
            .iter()
            .filter_map(|op| match *op {
                TraceOp::Insert { conv, .. } => Some(conv as usize + 1),
                TraceOp::GetMin { .. } => None,
            })
            .max()
            .unwrap_or(0)
    }

    /// The trace as CSV text with [`CSV_HEADER`].
    pub fn to_csv(&self) -> String {
        let mut s = String::with_capacity(40 * self.ops.len() + 64);
        s.push_str(CSV_HEADER);
        s.push('\n');
        for (seq, op) in self.ops.iter().enumerate() {
            let _ = match *op {
                TraceOp::Insert {
                    time,
                    conv,
                    size,
                    bid,
                } => writeln!(s, "{seq},{},I,{conv},{size},{bid}", time.as_nanos()),
                TraceOp::GetMin { time } => writeln!(s, "{seq},{},G,,,", time.as_nanos()),
            };
        }
        s
    }

    /// Parses CSV text written by [`Trace::to_csv`] (the bypass count is not part of the
    /// format and is 0).
    pub fn from_csv(text: &str) -> Result<Trace, TraceError> {
        let mut ops = Vec::new();
        let mut lines = text.lines().enumerate();
        match lines.next() {
            Some((_, h)) if h.trim() == CSV_HEADER => {}
            _ => {
                return Err(TraceError {
                    line: 1,
                    problem: format!("the first line must be the header `{CSV_HEADER}`"),
                });
            }
        }
        let mut last = Instant::ZERO;
        for (i, line) in lines {
            let line_no = i + 1;
            if line.trim().is_empty() {
                continue;
            }
            let err = |problem: String| TraceError {
                line: line_no,
                problem,
            };
            let f: Vec<&str> = line.split(',').map(str::trim).collect();
            if f.len() != 6 {
                return Err(err(format!(
                    "{} fields, expected 6 ({CSV_HEADER})",
                    f.len()
                )));
            }
            if f[0].parse::<u64>().ok() != Some(ops.len() as u64) {
                return Err(err(format!(
                    "seq `{}` should be {}: rows numbered from 0, in order",
                    f[0],
                    ops.len()
                )));
            }
            let time = f[1]
                .parse::<u64>()
                .map(Instant)
                .map_err(|_| err(format!("time_ns `{}` is not a whole number of ns", f[1])))?;
            if time < last {
                return Err(err(format!(
                    "time_ns {} goes back in time (previous row {})",
                    time.0, last.0
                )));
            }
            last = time;
            let number = |k: usize, what: &str| -> Result<u128, TraceError> {
                f[k].parse::<u128>()
                    .map_err(|_| err(format!("{what} `{}` is not a non-negative integer", f[k])))
            };
            let op = match f[2] {
                "I" => TraceOp::Insert {
                    time,
                    conv: u32::try_from(number(3, "conv")?)
                        .map_err(|_| err("conv does not fit 32 bits".into()))?,
                    size: u32::try_from(number(4, "size_bytes")?)
                        .map_err(|_| err("size_bytes does not fit 32 bits".into()))?,
                    bid: number(5, "bid")?,
                },
                "G" => TraceOp::GetMin { time },
                other => {
                    return Err(err(format!(
                        "op `{other}` is neither `I` (insert) nor `G` (get_min)"
                    )));
                }
            };
            ops.push(op);
        }
        Ok(Trace { ops, bypassed: 0 })
    }
}

/// Collects a trace while a scheduler runs; see the [module docs](self). Cheap to clone:
/// clones share one trace (the simulator owns the scheduler; the caller keeps a clone
/// to read the trace after the run).
#[derive(Clone, Debug, Default)]
pub struct Recorder {
    inner: Arc<Mutex<Recording>>,
}

#[derive(Debug, Default)]
struct Recording {
    trace: Trace,
    /// An insertion into an empty buffer, held until the next operation says whether it
    /// bypassed the buffer.
    held: Option<TraceOp>,
}

impl Recorder {
    /// A recorder with an empty trace.
    pub fn new() -> Recorder {
        Recorder::default()
    }

    fn with<R>(&self, f: impl FnOnce(&mut Recording) -> R) -> R {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut g)
    }

    /// A packet entered the buffer, which held `buffered_before` packets.
    pub fn insert(&self, time: Instant, conv: u32, size: u32, bid: u128, buffered_before: usize) {
        let op = TraceOp::Insert {
            time,
            conv,
            size,
            bid,
        };
        self.with(|r| {
            if let Some(h) = r.held.take() {
                r.trace.ops.push(h);
            }
            if buffered_before == 0 {
                r.held = Some(op);
            } else {
                r.trace.ops.push(op);
            }
        });
    }

    /// The line took the smallest bid.
    pub fn get_min(&self, time: Instant) {
        self.with(|r| match r.held.take() {
            Some(h) if h.time() == time => r.trace.bypassed += 1,
            held => {
                r.trace.ops.extend(held);
                r.trace.ops.push(TraceOp::GetMin { time });
            }
        });
    }

    /// The trace so far (an insertion still held is included).
    pub fn trace(&self) -> Trace {
        self.with(|r| {
            let mut t = r.trace.clone();
            t.ops.extend(r.held);
            t
        })
    }
}

/// What happened to a packet in a replay, in order: the sequence every structure must
/// produce identically.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// `get_min` returned the packet inserted at row `seq`.
    Served(u64),
    /// The packet inserted at row `seq` was dropped on overflow.
    Dropped(u64),
    /// `get_min` found the buffer empty.
    Empty,
}

/// The running average insertion cost at one instant of a replay.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RunningCost {
    /// Trace time.
    pub time: Instant,
    /// Insertions so far.
    pub insertions: u64,
    /// Elementary operations per insertion so far, drops included (the headline).
    pub avg_insert: f64,
}

/// One structure's replay of a trace.
#[derive(Clone, Debug, PartialEq)]
pub struct Replay {
    /// Which structure.
    pub structure: Structure,
    /// Operations and their elementary costs.
    pub cost: Cost,
    /// The running average cost, one point per `every` of trace time (the last at the
    /// end of the trace).
    pub running: Vec<RunningCost>,
    /// What happened to every packet, in order.
    pub outcomes: Vec<Outcome>,
    /// Packets buffered, averaged over the insertions (before each).
    pub mean_buffered: f64,
    /// Conversations with buffered packets, averaged over the insertions (before each).
    pub mean_conversations: f64,
    /// The insertions of packets whose conversation had no packet buffered, and the
    /// elementary operations they cost (excluding drops): in fair queueing their bids
    /// can fall anywhere in the buffer, while a conversation's next packet bids above
    /// its own tail.
    pub fresh: FreshInsertions,
}

/// Insertions into a conversation with no packet buffered, and their cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FreshInsertions {
    /// How many.
    pub insertions: u64,
    /// Their elementary operations, drops excluded.
    pub ops: u64,
}

impl Replay {
    /// Average elementary operations per insertion, drops included (the paper's metric).
    pub fn avg_insert(&self) -> f64 {
        let c = &self.cost;
        ratio(c.ops.insert + c.ops.drop, c.insertions)
    }
    /// Average elementary operations per `get_min`.
    pub fn avg_get_min(&self) -> f64 {
        ratio(self.cost.ops.get_min, self.cost.get_mins)
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

/// Replays `trace` through structure `S` with buffer `limit`, sampling the running
/// average cost every `every` of trace time.
pub fn replay_with<S: BidQueue<()>>(
    structure: Structure,
    trace: &Trace,
    limit: Limit,
    every: Duration,
) -> Replay {
    let mut buf: Bounded<(), S> = Bounded::new(trace.conversations(), limit);
    let mut outcomes = Vec::with_capacity(trace.ops.len());
    // Packets buffered per conversation, and how many conversations have some.
    let mut per_conv = vec![0u64; trace.conversations()];
    let mut backlogged = 0u64;
    let (mut sum_buffered, mut sum_conversations) = (0u64, 0u64);
    let mut fresh = FreshInsertions::default();
    let mut running = Vec::new();
    let step = every.as_nanos().max(1);
    let mut next_sample = step;
    let sample = |buf: &Bounded<(), S>, time: Instant| {
        let c = buf.cost();
        RunningCost {
            time,
            insertions: c.insertions,
            avg_insert: ratio(c.ops.insert + c.ops.drop, c.insertions),
        }
    };
    for (seq, op) in trace.ops.iter().enumerate() {
        while op.time().as_nanos() >= next_sample {
            running.push(sample(&buf, Instant(next_sample)));
            next_sample = next_sample.saturating_add(step);
        }
        match *op {
            TraceOp::Insert {
                conv, size, bid, ..
            } => {
                sum_buffered += buf.len() as u64;
                sum_conversations += backlogged;
                let e = Entry {
                    tag: Tag::new(bid, seq as u64),
                    conv,
                    size,
                    value: (),
                };
                per_conv[conv as usize] += 1;
                let is_fresh = per_conv[conv as usize] == 1;
                backlogged += u64::from(is_fresh);
                let before = buf.cost().ops.insert;
                buf.insert(e, |d| {
                    per_conv[d.conv as usize] -= 1;
                    backlogged -= u64::from(per_conv[d.conv as usize] == 0);
                    outcomes.push(Outcome::Dropped(d.tag.seq()));
                });
                if is_fresh {
                    fresh.insertions += 1;
                    fresh.ops += buf.cost().ops.insert - before;
                }
            }
            TraceOp::GetMin { .. } => outcomes.push(match buf.get_min() {
                Some(e) => {
                    per_conv[e.conv as usize] -= 1;
                    backlogged -= u64::from(per_conv[e.conv as usize] == 0);
                    Outcome::Served(e.tag.seq())
                }
                None => Outcome::Empty,
            }),
        }
    }
    let end = trace.ops.last().map_or(Instant::ZERO, TraceOp::time);
    running.push(sample(&buf, end));
    let insertions = buf.cost().insertions;
    Replay {
        structure,
        cost: buf.cost(),
        running,
        outcomes,
        mean_buffered: ratio(sum_buffered, insertions),
        mean_conversations: ratio(sum_conversations, insertions),
        fresh,
    }
}

/// Replays `trace` through `structure` (see [`replay_with`]).
pub fn replay(structure: Structure, trace: &Trace, limit: Limit, every: Duration) -> Replay {
    match structure {
        Structure::Link => replay_with::<LinkedList<()>>(structure, trace, limit, every),
        Structure::Tree => replay_with::<SearchTree<()>>(structure, trace, limit, every),
        Structure::Heap => replay_with::<DoubleHeap<()>>(structure, trace, limit, every),
        Structure::Perc => replay_with::<PerConversation<()>>(structure, trace, limit, every),
    }
}

/// Two structures served or dropped different packets on the same trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// The structures.
    pub structures: (Structure, Structure),
    /// Index of the first differing outcome.
    pub at: usize,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} and {} differ at outcome {}",
            self.structures.0.name(),
            self.structures.1.name(),
            self.at
        )
    }
}

impl std::error::Error for Mismatch {}

/// Replays `trace` through all four structures and checks that they produce the same
/// outcomes (spec test P7 / check M5).
pub fn replay_all(trace: &Trace, limit: Limit, every: Duration) -> Result<Vec<Replay>, Mismatch> {
    let all: Vec<Replay> = Structure::ALL
        .iter()
        .map(|&s| replay(s, trace, limit, every))
        .collect();
    for r in &all[1..] {
        if r.outcomes != all[0].outcomes {
            let at = r
                .outcomes
                .iter()
                .zip(&all[0].outcomes)
                .position(|(a, b)| a != b)
                .unwrap_or(r.outcomes.len().min(all[0].outcomes.len()));
            return Err(Mismatch {
                structures: (all[0].structure, r.structure),
                at,
            });
        }
    }
    Ok(all)
}
