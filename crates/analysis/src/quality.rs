//! Link-sharing quality measured from a packet log, for any scheduler.
//!
//! * [`empirical_alpha`] — Definition 1 of the HLS paper, exactly: over every pair of
//!   siblings `i, j` and every interval `[t1, t2]` in which both are backlogged, the
//!   largest `|D_i(t1, t2)/w_i − D_j(t1, t2)/w_j|`.
//! * [`max_gap`] — Definition 2, as observed: the longest time a backlogged leaf waits
//!   between the end of one of its transmissions and the start of its next.
//!
//! # Timing conventions
//!
//! A class is *backlogged* while it (or a leaf below it) holds a packet that has arrived
//! and has not yet been dequeued: a packet counts from its `arrival` until its `start`
//! (the instant the scheduler released it to the link). Its bytes count in `D` at
//! `start`. Arrivals at an instant are applied before releases at the same instant, so a
//! source that refills its queue when a packet leaves keeps the class backlogged.
//!
//! # Cost
//!
//! `O(P log P)` to order the events plus `O(P · depth · k)` for `P` packets and at most
//! `k` children per class: meant for the hierarchies of experiments (tens of classes),
//! not for 100 000 siblings.

use linkshare_core::hierarchy::{ClassId, ClassTree};
use linkshare_core::units::{Duration, Instant};

/// One packet as seen at a scheduler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transmission {
    /// The leaf it was queued in.
    pub class: ClassId,
    /// Length in bytes.
    pub bytes: u32,
    /// Arrival at the scheduler.
    pub arrival: Instant,
    /// Released by the scheduler (start of transmission).
    pub start: Instant,
    /// Last bit on the wire.
    pub end: Instant,
}

/// The result of [`empirical_alpha`].
#[derive(Clone, Debug, PartialEq)]
pub struct AlphaReport {
    /// The largest deviation over all sibling pairs, bytes per unit of weight.
    pub alpha: f64,
    /// The largest deviation of every sibling pair that was ever backlogged together,
    /// in tree order.
    pub per_pair: Vec<(ClassId, ClassId, f64)>,
}

impl AlphaReport {
    /// The pair with the largest deviation, if any pair was backlogged together.
    pub fn worst(&self) -> Option<(ClassId, ClassId, f64)> {
        self.per_pair
            .iter()
            .copied()
            .max_by(|a, b| a.2.total_cmp(&b.2))
    }
}

/// Running extremes of `X = D_i/w_i − D_j/w_j` in the current common backlog interval.
#[derive(Clone, Copy, Debug)]
struct PairWindow {
    open: bool,
    lo: f64,
    hi: f64,
    best: f64,
    seen: bool,
}

/// Definition 1 over the packet log `txs` of a scheduler configured with `tree`
/// (see the [module docs](self) for the conventions): the log's arrivals and releases in
/// time order, arrivals first at equal instants, fed to an [`AlphaMeter`].
pub fn empirical_alpha(tree: &ClassTree, txs: &[Transmission]) -> AlphaReport {
    let mut events: Vec<(Instant, bool, usize)> = Vec::with_capacity(2 * txs.len());
    for (k, t) in txs.iter().enumerate() {
        events.push((t.arrival, false, k));
        events.push((t.start, true, k));
    }
    events.sort_unstable();
    let mut meter = AlphaMeter::new(tree);
    for (_, is_start, k) in events {
        let t = &txs[k];
        if is_start {
            meter.release(t.class, t.bytes);
        } else {
            meter.arrival(t.class);
        }
    }
    meter.report()
}

/// Definition 1 computed as a packet log is replayed, without holding the log: the
/// caller feeds every packet's arrival ([`AlphaMeter::arrival`]) and release
/// ([`AlphaMeter::release`]) in time order, arrivals before releases at the same
/// instant, releases in the order the scheduler made them. The order among arrivals at
/// one instant does not matter: an arrival only raises backlogs, and the differences
/// `X` only change at releases. Memory: one window per pair of siblings.
#[derive(Debug)]
pub struct AlphaMeter<'t> {
    tree: &'t ClassTree,
    now: Running,
    /// Pairs grouped by parent: `pair_base[p]` indexes the pairs of p's children (a < b).
    pair_base: Vec<usize>,
    windows: Vec<PairWindow>,
    path: Vec<ClassId>,
}

impl<'t> AlphaMeter<'t> {
    /// A meter for a scheduler configured with `tree`, before any packet.
    pub fn new(tree: &'t ClassTree) -> AlphaMeter<'t> {
        let classes = tree.classes();
        let n = classes.len();
        let mut pair_base = vec![0usize; n];
        let mut total_pairs = 0;
        for c in classes {
            pair_base[c.id.index()] = total_pairs;
            let k = c.children.len();
            total_pairs += k * k.saturating_sub(1) / 2;
        }
        AlphaMeter {
            tree,
            now: Running {
                backlog: vec![0; n],
                per_weight: vec![0.0; n],
            },
            pair_base,
            windows: vec![
                PairWindow {
                    open: false,
                    lo: 0.0,
                    hi: 0.0,
                    best: 0.0,
                    seen: false
                };
                total_pairs
            ],
            path: Vec::new(),
        }
    }

    /// A packet arrived at leaf `class`.
    pub fn arrival(&mut self, class: ClassId) {
        self.event(class, 0, false);
    }

    /// The scheduler released a packet of `bytes` of leaf `class`.
    pub fn release(&mut self, class: ClassId, bytes: u32) {
        self.event(class, bytes, true);
    }

    fn event(&mut self, class: ClassId, bytes: u32, is_start: bool) {
        let classes = self.tree.classes();
        self.path.clear();
        self.path.push(class);
        self.path.extend(self.tree.ancestors(class));
        for &c in &self.path[..self.path.len() - 1] {
            let ci = c.index();
            if is_start {
                self.now.per_weight[ci] += f64::from(bytes) / f64::from(classes[ci].weight());
                self.now.backlog[ci] -= 1;
            } else {
                self.now.backlog[ci] += 1;
            }
            let parent = classes[ci].parent.expect("non-root").index();
            update_pairs(
                self.tree,
                parent,
                self.pair_base[parent],
                &self.now,
                &mut self.windows,
                is_start,
                c,
            );
        }
    }

    /// The largest deviation of every pair of siblings backlogged together so far.
    pub fn report(&self) -> AlphaReport {
        let mut per_pair = Vec::new();
        let mut alpha = 0f64;
        for c in self.tree.classes() {
            let kids = &c.children;
            let mut idx = self.pair_base[c.id.index()];
            for a in 0..kids.len() {
                for b in a + 1..kids.len() {
                    let w = self.windows[idx];
                    if w.seen {
                        per_pair.push((kids[a], kids[b], w.best));
                        alpha = alpha.max(w.best);
                    }
                    idx += 1;
                }
            }
        }
        AlphaReport { alpha, per_pair }
    }
}

/// Per class, while the log is replayed: packets arrived and not yet released, and
/// `D_c / w_c`, bytes released so far per unit of weight.
#[derive(Debug)]
struct Running {
    backlog: Vec<u64>,
    per_weight: Vec<f64>,
}

/// Updates the windows of every pair of `parent`'s children that involves `changed`,
/// after `changed`'s backlog or service changed. A release (`is_start`) first extends
/// the window with the new `X`, and closes it if the class went idle.
fn update_pairs(
    tree: &ClassTree,
    parent: usize,
    base: usize,
    now: &Running,
    windows: &mut [PairWindow],
    is_start: bool,
    changed: ClassId,
) {
    let kids = &tree.classes()[parent].children;
    let Some(me) = kids.iter().position(|&k| k == changed) else {
        return;
    };
    let k = kids.len();
    for other in 0..k {
        if other == me {
            continue;
        }
        let (a, b) = if me < other { (me, other) } else { (other, me) };
        // Index of pair (a, b) among p's pairs in row-major upper-triangle order.
        let idx = base + a * (2 * k - a - 1) / 2 + (b - a - 1);
        let (ia, ib) = (kids[a].index(), kids[b].index());
        let x = now.per_weight[ia] - now.per_weight[ib];
        let both = now.backlog[ia] > 0 && now.backlog[ib] > 0;
        let w = &mut windows[idx];
        if w.open {
            w.lo = w.lo.min(x);
            w.hi = w.hi.max(x);
            w.best = w.best.max(w.hi - w.lo);
            if !both {
                w.open = false;
            }
        } else if both && !is_start {
            *w = PairWindow {
                open: true,
                lo: x,
                hi: x,
                best: w.best,
                seen: true,
            };
        }
    }
}

/// The result of [`max_gap`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GapReport {
    /// The leaf that waited longest.
    pub class: ClassId,
    /// How long it waited while backlogged.
    pub gap: Duration,
    /// When the wait began (the end of its previous transmission).
    pub from: Instant,
}

/// The longest wait of a backlogged leaf between the end of one of its transmissions
/// and the start of its next, over the log `txs` (packets of each leaf in FIFO order).
/// A leaf counts as backlogged after a transmission if its next packet had arrived by
/// the time that transmission started. Of equal waits, the one of the leaf with the
/// smallest id, then the earliest, is reported.
pub fn max_gap(txs: &[Transmission]) -> Option<GapReport> {
    let mut order: Vec<usize> = (0..txs.len()).collect();
    order.sort_by_key(|&k| txs[k].start);
    let mut meter = GapMeter::default();
    for k in order {
        meter.transmission(&txs[k]);
    }
    meter.report()
}

/// [`max_gap`] computed as a packet log is replayed, without holding the log: feed the
/// transmissions in order of start (a link's log in order of departure). Memory: the
/// last transmission of each leaf.
#[derive(Clone, Debug, Default)]
pub struct GapMeter {
    last: Vec<Option<Transmission>>,
    best: Option<GapReport>,
}

impl GapMeter {
    /// The next transmission, in order of start.
    pub fn transmission(&mut self, b: &Transmission) {
        let i = b.class.index();
        if self.last.len() <= i {
            self.last.resize(i + 1, None);
        }
        if let Some(a) = self.last[i].replace(*b)
            && b.arrival <= a.start
            && b.start >= a.end
        {
            let gap = b.start.since(a.end);
            let better = self.best.is_none_or(|g| {
                gap > g.gap || (gap == g.gap && (a.class, a.end) < (g.class, g.from))
            });
            if better {
                self.best = Some(GapReport {
                    class: a.class,
                    gap,
                    from: a.end,
                });
            }
        }
    }

    /// The longest wait so far.
    pub fn report(&self) -> Option<GapReport> {
        self.best
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use linkshare_core::hierarchy::{ClassSpec, LinkSpec};
    use linkshare_core::units::Rate;

    fn tree(weights: &[u32]) -> ClassTree {
        let specs = weights
            .iter()
            .enumerate()
            .map(|(i, &w)| {
                let mut s = ClassSpec::new(&format!("c{i}"), None);
                s.weight = Some(w);
                s
            })
            .collect();
        ClassTree::build(
            LinkSpec {
                name: "l".into(),
                rate: Rate::from_mbit(8),
                origin: None,
            },
            specs,
        )
        .unwrap()
    }

    fn tx(class: u32, bytes: u32, arrival: u64, start: u64) -> Transmission {
        Transmission {
            class: ClassId(class),
            bytes,
            arrival: Instant(arrival),
            start: Instant(start),
            end: Instant(start + u64::from(bytes)),
        }
    }

    /// Two equal-weight classes, all packets there from t = 0; c1 is served three times
    /// in a row (X = +300, +600, +900 in units of 300 B), then c2 three times:
    /// the largest deviation is 900 B per unit weight.
    #[test]
    fn alpha_of_a_bursty_schedule() {
        let t = tree(&[1, 1]);
        let mut log = Vec::new();
        for k in 0..3 {
            log.push(tx(1, 300, 0, 300 * k));
        }
        for k in 3..6 {
            log.push(tx(2, 300, 0, 300 * k));
        }
        let r = empirical_alpha(&t, &log);
        // c2 stays backlogged until its last release; c1 goes idle at its third release,
        // where X = 900 was already reached.
        assert_eq!(r.alpha, 900.0);
        assert_eq!(
            r.worst().map(|w| (w.0, w.1)),
            Some((ClassId(1), ClassId(2)))
        );
    }

    /// Alternating service of equal packets with weights 1:1 keeps X within one packet.
    #[test]
    fn alpha_of_round_robin_is_one_packet() {
        let t = tree(&[1, 1]);
        let log: Vec<_> = (0..100)
            .map(|k| tx(1 + (k % 2) as u32, 500, 0, 500 * k))
            .collect();
        assert_eq!(empirical_alpha(&t, &log).alpha, 500.0);
    }

    /// Service while the sibling is idle does not count (Definition 1 only considers
    /// intervals where both are backlogged).
    #[test]
    fn service_while_the_sibling_is_idle_is_not_counted() {
        let t = tree(&[1, 1]);
        // c1 alone for 10 packets, then both, alternating.
        let mut log: Vec<_> = (0..10).map(|k| tx(1, 100, 0, 100 * k)).collect();
        for k in 10..20 {
            log.push(tx(1 + (k % 2) as u32, 100, 1000, 100 * k));
        }
        assert_eq!(empirical_alpha(&t, &log).alpha, 100.0);
    }

    #[test]
    fn gap_counts_only_backlogged_waits() {
        let log = vec![
            tx(1, 100, 0, 0),           // ends at 100
            tx(1, 100, 0, 500),         // next packet was queued: gap 400
            tx(1, 100, 10_000, 10_000), // arrived after: not a backlogged wait
            tx(2, 100, 0, 100),
        ];
        let g = max_gap(&log).unwrap();
        assert_eq!(
            (g.class, g.gap, g.from),
            (ClassId(1), Duration(400), Instant(100))
        );
    }
}
