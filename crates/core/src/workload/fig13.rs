//! The workloads of the H-FSC paper's Fig. 13 (§VI-C): H-FSC behind a busy link, fed
//! by `n` sessions under hierarchies of one to three levels.
//!
//! # The hierarchy
//!
//! A 1 Gbit/s link ([`LINK`]) shared equally by the sessions (leaves), each with
//! `rt = ls = linear(C / n)` as in the paper (one curve per class); an interior class's
//! `ls` is the sum of its leaves' rates. [`fan_outs`] names the trees: `flat-N` is one
//! level of `N` sessions, `AxB...` a balanced tree with `A` children of the root, each
//! with `B` children, and so on (`10x100` and `10x10x10` are the paper's two- and
//! three-level trees of 1 000 sessions).
//!
//! # The traffic
//!
//! * [`Traffic::Markov`]: each session is a two-state Markov source (ON/OFF, the same
//!   mean number of steps in each state: each step the source stays with probability
//!   `1 - 1/BURST`). An ON step sends one packet of 64–1500 bytes (uniform) at the
//!   peak rate `2 · 0.95 · C / n`, so it lasts the packet's transmission time at that
//!   rate; an OFF step lasts the mean packet's. The long-run rate of every session is
//!   thus 0.95 of its reserved rate, as in the paper. The arrivals are generated before
//!   the run starts (a trace, replayed shifted in time when it runs out).
//! * [`Traffic::Backlogged`]: every session holds [`BACKLOG`] packets from the start,
//!   and each packet the link takes is replaced by a new one of the same session
//!   (64–1500 bytes, uniform) arriving when the link is next free: every arrival finds
//!   its queue non-empty, the paper's "all sessions continuously backlogged".
//!
//! # The link
//!
//! The link sends the packet H-FSC hands it and is busy for its transmission time;
//! arrivals up to the instant it becomes free are enqueued at their own instants before
//! the next dequeue (an idle link waits for the next arrival). Time never goes
//! backwards. [`Run::packet`] is one packet forwarded: the arrivals due, then the
//! dequeue; in the long run there is one arrival per departure, so the time per
//! [`Run::packet`] is the paper's "average per packet queueing overhead" (total work
//! divided by packets forwarded).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::{Frame, Prng};
use crate::curve::ServiceCurve;
use crate::hierarchy::{ClassId, ClassSpec, ClassTree, LinkSpec};
use crate::sched::hfsc::Hfsc;
use crate::sched::{Dropped, Enqueue, Scheduler};
use crate::units::{Bytes, Instant, Rate};

/// The link's rate.
pub const LINK: Rate = Rate::from_gbit(1);

/// Mean number of steps a Markov source stays ON (and OFF).
pub const BURST: u64 = 8;

/// Shortest packet, bytes.
pub const MIN_LEN: u32 = 64;
/// Longest packet, bytes.
pub const MAX_LEN: u32 = 1500;

/// Packets each session holds under [`Traffic::Backlogged`]: enough that a batch of up
/// to `BACKLOG - 1` dequeues in a row never empties a session.
pub const BACKLOG: u32 = 64;

/// Packets forwarded before measuring ([`warm_up`]): at least this many, and
/// [`WARM_UP_PER_SESSION`] per session, so that every session has been through several
/// ON and OFF periods and the caches hold the working set.
pub const MIN_WARM_UP: usize = 200_000;
/// See [`MIN_WARM_UP`].
pub const WARM_UP_PER_SESSION: usize = 40;

/// The packets to forward before measuring a hierarchy of `sessions` leaves.
pub fn warm_up(sessions: usize) -> usize {
    (sessions * WARM_UP_PER_SESSION).max(MIN_WARM_UP)
}

/// How the sessions send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Traffic {
    /// Two-state Markov sources at 0.95 of their reserved rates.
    Markov,
    /// Every session continuously backlogged.
    Backlogged,
}

/// The fan-out of each level of the hierarchy named `name` (`flat-N` or `AxBx...`), or
/// `None` when the name is not one.
pub fn fan_outs(name: &str) -> Option<Vec<usize>> {
    let levels = name.strip_prefix("flat-").unwrap_or(name);
    levels
        .split('x')
        .map(|n| n.parse().ok().filter(|&k| k > 0))
        .collect()
}

/// The hierarchy of `fan_outs` on [`LINK`], every leaf with `rt = ls = linear(C / n)`,
/// every interior class with `ls` the sum of its leaves'. Returns the tree and the
/// sessions' reserved rate.
pub fn hierarchy(fan_outs: &[usize]) -> (ClassTree, Rate) {
    let sessions: usize = fan_outs.iter().product();
    let share = LINK.0 / sessions as u64;
    let mut specs = Vec::new();
    let mut level: Vec<(Option<String>, u64)> = vec![(None, share * sessions as u64)];
    for (depth, &k) in fan_outs.iter().enumerate() {
        let leaf = depth + 1 == fan_outs.len();
        let mut next = Vec::with_capacity(level.len() * k);
        for (parent, rate) in &level {
            for i in 0..k {
                let name = match parent {
                    Some(p) => format!("{p}.{i}"),
                    None => format!("c{i}"),
                };
                let r = rate / k as u64;
                let mut spec = ClassSpec::new(&name, parent.as_deref());
                spec.ls = Some(ServiceCurve::linear(Rate(r)));
                if leaf {
                    spec.rt = spec.ls;
                }
                specs.push(spec);
                next.push((Some(name), r));
            }
        }
        level = next;
    }
    let link = LinkSpec {
        name: "link".into(),
        rate: LINK,
        origin: None,
    };
    let tree = ClassTree::build(link, specs).expect("the Fig. 13 hierarchies are valid");
    (tree, Rate(share))
}

/// One packet arrival.
#[derive(Clone, Copy, Debug)]
struct Arrival {
    /// Instant, ns.
    at: u64,
    /// Leaf.
    class: ClassId,
    /// Bytes.
    len: u32,
}

/// A uniform packet length in `MIN_LEN..=MAX_LEN`.
fn length(rng: &mut Prng) -> u32 {
    MIN_LEN + rng.below(u64::from(MAX_LEN - MIN_LEN + 1)) as u32
}

/// `count` arrivals of the two-state Markov sources of `leaves` (reserved rate `share`
/// each), in time order (ties by leaf order).
fn markov_arrivals(leaves: &[ClassId], share: Rate, count: usize) -> Vec<Arrival> {
    let peak = Rate(share.0 * 19 / 10);
    let slot = peak.tx_time(Bytes(u64::from(MIN_LEN + MAX_LEN) / 2)).0;
    let mut rng = Prng(0x6866_7363);
    // Sources start in a random state at a random instant within one mean period, so
    // that they are not in phase.
    let mut on: Vec<bool> = leaves.iter().map(|_| rng.one_in(2)).collect();
    let mut next: BinaryHeap<Reverse<(u64, usize)>> = (0..leaves.len())
        .map(|i| Reverse((rng.below(2 * BURST * slot), i)))
        .collect();
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let Reverse((at, i)) = next.pop().expect("every source stays in the queue");
        let step = if on[i] {
            let len = length(&mut rng);
            out.push(Arrival {
                at,
                class: leaves[i],
                len,
            });
            peak.tx_time(Bytes(u64::from(len))).0
        } else {
            slot
        };
        if rng.one_in(BURST) {
            on[i] = !on[i];
        }
        next.push(Reverse((at + step, i)));
    }
    out
}

/// Where the arrivals come from.
enum Source {
    /// A precomputed Markov trace.
    Trace {
        trace: Vec<Arrival>,
        /// Index of the next arrival.
        next: usize,
        /// Added to the trace's instants (grows at each replay).
        shift: u64,
        /// Length of one pass of the trace in time.
        span: u64,
    },
    /// Backlogged sessions: one new packet per packet sent.
    Refill {
        /// Sessions whose replacement packet has not arrived yet.
        due: Vec<ClassId>,
        rng: Prng,
    },
}

impl Source {
    /// The next arrival; under [`Source::Refill`], at `now`. A trace that runs out is
    /// replayed one span later: each arrival is shifted by the passes before its own.
    #[inline]
    fn next_arrival(&mut self, now: u64) -> Arrival {
        match self {
            Source::Trace {
                trace,
                next,
                shift,
                span,
            } => {
                let a = Arrival {
                    at: trace[*next].at + *shift,
                    ..trace[*next]
                };
                *next += 1;
                if *next == trace.len() {
                    *next = 0;
                    *shift += *span;
                }
                a
            }
            Source::Refill { due, rng } => Arrival {
                at: now,
                class: due.pop().expect("enqueue only when an arrival is due"),
                len: length(rng),
            },
        }
    }
}

/// What the link does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// An arrival is due.
    Enqueue,
    /// The link takes a packet.
    Dequeue,
}

/// H-FSC behind a link, fed by one of the [`Traffic`]s.
pub struct Run {
    hfsc: Hfsc<Frame>,
    source: Source,
    /// When the link is next free to send, ns.
    free: u64,
    /// Packets held by H-FSC.
    queued: usize,
    /// Transmission time at the link rate, by packet length.
    tx: Vec<u64>,
    evicted: Vec<Dropped<Frame>>,
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Run")
            .field("free", &self.free)
            .field("queued", &self.queued)
            .finish_non_exhaustive()
    }
}

impl Run {
    /// The run of the hierarchy `fan_outs` with `traffic`, warmed up by `warm_up`
    /// packets (usually [`warm_up`]), ready for at least `measured` packets without
    /// replaying its trace.
    pub fn new(fan_outs: &[usize], traffic: Traffic, warm_up: usize, measured: usize) -> Run {
        let (tree, share) = hierarchy(fan_outs);
        let source = match traffic {
            Traffic::Markov => {
                let trace =
                    markov_arrivals(tree.leaves(), share, warm_up + measured + measured / 4);
                Source::Trace {
                    span: trace.last().map_or(0, |a| a.at) + 1,
                    trace,
                    next: 0,
                    shift: 0,
                }
            }
            // Every session's first BACKLOG packets are due at once.
            Traffic::Backlogged => Source::Refill {
                due: (0..BACKLOG)
                    .flat_map(|_| tree.leaves().iter().rev().copied())
                    .collect(),
                rng: Prng(0x6866_7363),
            },
        };
        let mut run = Run {
            hfsc: Hfsc::new(&tree).expect("leaves only carry rt curves"),
            source,
            free: 0,
            queued: 0,
            tx: (0..=MAX_LEN)
                .map(|len| LINK.tx_time(Bytes(u64::from(len))).0)
                .collect(),
            evicted: Vec::new(),
        };
        run.until(Op::Dequeue);
        for _ in 0..warm_up {
            run.packet();
        }
        run
    }

    /// Whether the next operation is an arrival or the link taking a packet.
    #[inline]
    pub fn next_op(&self) -> Op {
        let arrival_due = match &self.source {
            Source::Trace {
                trace, next, shift, ..
            } => trace[*next].at + shift <= self.free,
            Source::Refill { due, .. } => !due.is_empty(),
        };
        if self.queued == 0 || arrival_due {
            Op::Enqueue
        } else {
            Op::Dequeue
        }
    }

    /// Enqueues the next arrival at its instant (under [`Traffic::Backlogged`], the
    /// replacement of the packet sent last, now).
    #[inline]
    pub fn enqueue(&mut self) {
        let a = self.source.next_arrival(self.free);
        self.free = self.free.max(a.at);
        let verdict = self
            .hfsc
            .enqueue(Instant(a.at), a.class, Frame(a.len), &mut self.evicted);
        debug_assert!(matches!(verdict, Enqueue::Queued));
        self.queued += 1;
    }

    /// The link takes a packet now and is busy for its transmission time.
    #[inline]
    pub fn dequeue(&mut self) {
        let d = self
            .hfsc
            .dequeue(Instant(self.free))
            .expect("H-FSC without upper limits is work-conserving");
        self.queued -= 1;
        self.free += self.tx[d.pkt.0 as usize];
        if let Source::Refill { due, .. } = &mut self.source {
            due.push(d.class);
        }
    }

    /// One packet forwarded: the arrivals due before the next dequeue, then the dequeue.
    #[inline]
    pub fn packet(&mut self) {
        while self.next_op() == Op::Enqueue {
            self.enqueue();
        }
        self.dequeue();
    }

    /// Does operations other than `op` until `op` is next.
    pub fn until(&mut self, op: Op) {
        while self.next_op() != op {
            match op {
                Op::Enqueue => self.dequeue(),
                Op::Dequeue => self.enqueue(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_hierarchies() {
        assert_eq!(fan_outs("flat-1000"), Some(vec![1000]));
        assert_eq!(fan_outs("10x10x10"), Some(vec![10, 10, 10]));
        assert_eq!(fan_outs("flat-0"), None);
        assert_eq!(fan_outs("10xy"), None);
        let (tree, share) = hierarchy(&[10, 100]);
        assert_eq!(tree.leaves().len(), 1000);
        assert_eq!(share, Rate(1_000_000));
    }

    /// The Markov sources send 0.95 of their reserved rate in the long run: counted
    /// from the trace itself (bytes over its span), not from the generator's formula.
    #[test]
    fn markov_sessions_send_095_of_their_share() {
        let (tree, share) = hierarchy(&[10]);
        let trace = markov_arrivals(tree.leaves(), share, 400_000);
        let bytes: u64 = trace.iter().map(|a| u64::from(a.len)).sum();
        let span_s = trace.last().unwrap().at as f64 / 1e9;
        let per_session = bytes as f64 * 8.0 / span_s / 10.0;
        let ratio = per_session / share.0 as f64;
        assert!((ratio - 0.95).abs() < 0.02, "{ratio}");
        assert!(trace.windows(2).all(|w| w[0].at <= w[1].at));
    }

    /// A trace that runs out is replayed one span later, every arrival of a pass
    /// shifted alike (the last one of a pass once was shifted with the next pass: an
    /// arrival a whole span late, then the next pass flooding in at once).
    #[test]
    fn a_replayed_trace_follows_on_in_time() {
        let (tree, share) = hierarchy(&[3]);
        let trace = markov_arrivals(tree.leaves(), share, 50);
        let span = trace.last().unwrap().at + 1;
        let mut source = Source::Trace {
            trace: trace.clone(),
            next: 0,
            shift: 0,
            span,
        };
        let arrivals: Vec<Arrival> = (0..3 * trace.len())
            .map(|_| source.next_arrival(0))
            .collect();
        for (i, a) in arrivals.iter().enumerate() {
            let original = trace[i % trace.len()];
            let pass = (i / trace.len()) as u64;
            assert_eq!(a.at, original.at + pass * span, "arrival {i}");
            assert_eq!((a.class, a.len), (original.class, original.len));
        }
        assert!(arrivals.windows(2).all(|w| w[0].at <= w[1].at));
    }

    /// Backlogged: every arrival after the first fill finds its queue non-empty, so
    /// no session ever falls below BACKLOG - 1 packets; the link never idles.
    #[test]
    fn backlogged_sessions_stay_backlogged() {
        let mut run = Run::new(&[2, 3], Traffic::Backlogged, warm_up(6), 0);
        for _ in 0..10_000 {
            // The packet sent last is not replaced yet.
            assert_eq!(run.queued, 6 * BACKLOG as usize - 1);
            assert_eq!(run.next_op(), Op::Enqueue);
            run.packet();
        }
    }
}
