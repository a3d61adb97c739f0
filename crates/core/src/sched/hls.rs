//! HLS: Hierarchical Link Sharing (HLS paper, §IV–V), a round-robin scheduler whose
//! allocation is hierarchical max-min fair (HMM-fair).
//!
//! # The algorithm
//!
//! HLS is DRR over the active leaves with a per-round, per-class *quota* instead of a
//! fixed quantum. Every class `i` keeps a balance `B_i` (bytes it, or its leaves, may
//! still send); the root and interior classes also keep a residual `R_i` (balances
//! returned by children that went idle, usable only from the next round).
//!
//! * **Rounds.** A round visits every *active* leaf once. The active set is fixed at the
//!   start of a round: a leaf is active if it is backlogged then; an interior class if
//!   one of its children is. A leaf that turns backlogged mid-round waits for the next
//!   round. The round list keeps the previous round's order, newcomers appended.
//! * **Main and surplus rounds.** After a round, if some active interior class has
//!   `B_i + R_i >= w_i^ac` a *surplus* round follows, in which the root hands out nothing
//!   (`F_root = 0`); otherwise a *main* round.
//! * **Lazy, leaf-initiated replenishment** (Fig. 4). When a leaf is visited for the
//!   first time in a round it asks its parent for the fair quota `F_p`, which asks its
//!   own parent, and so on; each class computes its quota once per round:
//!   root: `B += R, R = 0` (Eq. 6), `F_root = floor(B_root / w_root^ac)` in main rounds
//!   (0 in surplus rounds, and 0 if `B_root <= 0`); interior `i`:
//!   `B_i += R_i + w_i F_p(i)`, `B_p(i) -= w_i F_p(i)`, `R_i = 0` (Eq. 7), then
//!   `F_i = floor(B_i / w_i^ac)` (Eq. 4, `w^ac` the weights of *active* children, Eq. 5);
//!   leaf: `B_i += w_i F_p(i)`, `B_p(i) -= w_i F_p(i)` (Eq. 8).
//! * **Transmission.** The visited leaf sends head packets of length `L` while `L <= B_i`
//!   (`B_i -= L`, `B_root += L`, Eq. 9). A leaf that is served and left empty goes idle
//!   and returns its balance to its parent's residual (Eq. 10); an interior class whose
//!   children are all idle goes idle and returns `B + R` to its parent's residual (Eq. 11).
//! * **Round size.** `Q*` is kept at the Theorem 2 bound
//!   `Q* = sum_{i in A} w_i + sum_{i in L_ac} L_i^max` through `R_root`: a leaf turning
//!   active adds `L_max + w_i`, an interior class `w_i`; turning idle subtracts them.
//!   `R_root` and `B_root` may go negative; then `F_root = 0` for that round.
//!
//! The invariant of Eq. 12, `sum B + sum R == Q*`, holds after every operation;
//! [`Hls::check_invariants`] verifies it (and `B_i, R_i >= 0` below the root, and that
//! `Q*` equals the Theorem 2 expression for the current active set).
//!
//! # Parameters
//!
//! Integer weight `w_i` = [`crate::hierarchy::Class::weight`] (the paper sets weights to
//! the guarantees; a scenario does so by giving `weight`); `L_max` =
//! [`crate::hierarchy::Class::max_packet`] (1500 B by default). Packets longer than
//! `L_max` must not reach HLS ([`crate::Qdisc`] drops them as `TooLarge`): Theorem 2
//! relies on it.
//!
//! # Deviations from the paper and from the published Linux module
//!
//! * The surplus round is implemented (the published Linux module leaves it out).
//! * An arrival to an idle leaf mid-round activates it at the start of the next round,
//!   exactly as §IV says; nothing is activated mid-round.
//! * A leaf emptied by a push-out buffer policy ([`Scheduler::remove_newest`]) stays
//!   active until its next visit, where it finds no packet and goes idle (Eq. 10): the
//!   paper has no push-out; this keeps the active set fixed within a round.
//!
//! # Cost
//!
//! A visit costs O(depth) for the lazy replenishment; a round start costs
//! O(newly active leaves + interior classes) (for the surplus test), paid once per
//! round of visits. The visiting order is a [`Ring`] threaded through the classes'
//! records: a leaf that goes idle leaves it in O(1), newcomers are appended at a round
//! start, and the rest of the order carries over to the next round untouched. No
//! allocation after warm-up.

use super::{Dequeued, Dropped, Enqueue, Packet, PollAt, Scheduler};
use crate::ds::{ClassQueues, DequeQueues, Link, Linked, Ring};
use crate::hierarchy::{ClassId, ClassTree};
use crate::units::Instant;

const NO_PARENT: u32 = u32::MAX;
const ROOT: usize = 0;

/// [`Hls::cursor`] when the round is over.
const END: u32 = u32::MAX;

/// The state of one class, all of it in one record: a visit reads the leaf's and its
/// parent's, and passes the turn through the leaf's link.
#[derive(Clone, Copy, Debug)]
struct Node {
    /// `B_i`, bytes.
    balance: i64,
    /// `R_i`, bytes (root and interior classes).
    residual: i64,
    /// `F_i` of the current round, bytes per unit of weight (root and interior).
    fair_quota: i64,
    /// `w_i^ac`: sum of the weights of the active children.
    active_weight: i64,
    /// What the class adds to `Q*` while active (Theorem 2): `L_max + w_i` for a leaf,
    /// `w_i` for an interior class.
    q_share: i64,
    /// Round in which the class last took its quota.
    replenished_in: u64,
    /// Neighbours in the round's visiting order, while an active leaf.
    link: Link,
    /// Parent class, [`NO_PARENT`] for the root.
    parent: u32,
    /// `w_i`.
    weight: u32,
    active: bool,
    /// A backlogged leaf waiting for the next round to become active.
    pending: bool,
}

/// The HLS scheduler. See the [module docs](self).
#[derive(Debug)]
pub struct Hls<P> {
    /// By class index.
    nodes: Vec<Node>,
    /// Classes with children, other than the root.
    interior: Vec<u32>,
    queues: DequeQueues<P>,
    /// Leaves backlogged but not active, in arrival order; activated at the next round.
    pending: Vec<u32>,
    /// The active leaves in visiting order: the previous round's order, newcomers
    /// appended. A leaf that goes idle leaves it at once (it was visited already).
    order: Ring,
    /// The leaf to visit next in the current round, [`END`] once every active leaf has
    /// been visited.
    cursor: u32,
    round: u64,
    surplus: bool,
    /// `Q*`, bytes.
    q_star: i64,
    rounds_main: u64,
    rounds_surplus: u64,
}

impl Linked for Node {
    #[inline]
    fn link(&self) -> &Link {
        &self.link
    }
    #[inline]
    fn link_mut(&mut self) -> &mut Link {
        &mut self.link
    }
}

impl<P: Packet> Hls<P> {
    /// HLS for `tree`.
    pub fn new(tree: &ClassTree) -> Hls<P> {
        let n = tree.len();
        let classes = tree.classes();
        Hls {
            nodes: classes
                .iter()
                .map(|c| {
                    let weight = c.weight();
                    let l_max = if c.is_leaf() {
                        c.max_packet().0 as i64
                    } else {
                        0
                    };
                    Node {
                        balance: 0,
                        residual: 0,
                        fair_quota: 0,
                        active_weight: 0,
                        q_share: l_max + i64::from(weight),
                        replenished_in: 0,
                        link: Link::UNLINKED,
                        parent: c.parent.map_or(NO_PARENT, |p| p.0),
                        weight,
                        active: false,
                        pending: false,
                    }
                })
                .collect(),
            interior: classes
                .iter()
                .filter(|c| c.parent.is_some() && !c.children.is_empty())
                .map(|c| c.id.0)
                .collect(),
            queues: DequeQueues::new(n),
            pending: Vec::with_capacity(n),
            order: Ring::EMPTY,
            cursor: END,
            round: 0,
            surplus: false,
            q_star: 0,
            rounds_main: 0,
            rounds_surplus: 0,
        }
    }

    /// Main and surplus rounds started so far.
    pub fn rounds(&self) -> (u64, u64) {
        (self.rounds_main, self.rounds_surplus)
    }

    /// The current `Q*` in bytes (Theorem 2 bound for the current active set).
    pub fn q_star(&self) -> i64 {
        self.q_star
    }

    /// Checks Eq. 12 (`sum B + sum R == Q*`), `B_i >= 0` and `R_i >= 0` below the root,
    /// and that `Q*` equals the Theorem 2 expression for the current active set.
    pub fn check_invariants(&self) -> Result<(), String> {
        let total: i64 = self.nodes.iter().map(|n| n.balance + n.residual).sum();
        if total != self.q_star {
            return Err(format!(
                "Eq. 12 broken: sum B + sum R = {total}, Q* = {}",
                self.q_star
            ));
        }
        let mut bound = 0;
        for (i, n) in self.nodes.iter().enumerate().skip(1) {
            if n.balance < 0 || n.residual < 0 {
                return Err(format!("class {i}: B = {}, R = {}", n.balance, n.residual));
            }
            if n.active {
                bound += n.q_share;
            } else if n.balance != 0 || n.residual != 0 {
                return Err(format!(
                    "idle class {i} holds B = {}, R = {}",
                    n.balance, n.residual
                ));
            }
        }
        if bound != self.q_star {
            return Err(format!("Q* = {} but Theorem 2 gives {bound}", self.q_star));
        }
        Ok(())
    }

    /// Starts a main or surplus round: activates pending leaves (and their ancestors),
    /// appending them to the visiting order, decides the round type, and starts the
    /// visits at the first active leaf.
    fn start_round(&mut self) {
        for k in 0..self.pending.len() {
            let leaf = self.pending[k];
            self.nodes[leaf as usize].pending = false;
            self.activate(leaf as usize);
            self.order.push_back(&mut self.nodes, leaf);
        }
        self.pending.clear();
        self.cursor = self.order.head().unwrap_or(END);
        self.round += 1;
        self.surplus = self.interior.iter().any(|&k| {
            let n = &self.nodes[k as usize];
            n.active && n.balance + n.residual >= n.active_weight
        });
        if self.surplus {
            self.rounds_surplus += 1;
        } else {
            self.rounds_main += 1;
        }
    }

    /// A leaf turns active; so do its idle ancestors. `Q*` grows by `L_max + w` for the
    /// leaf and `w` for each newly active interior class (via `R_root`).
    fn activate(&mut self, leaf: usize) {
        let mut child = leaf;
        self.nodes[leaf].active = true;
        self.grow_q_star(self.nodes[leaf].q_share);
        loop {
            let weight = i64::from(self.nodes[child].weight);
            let p = self.nodes[child].parent as usize;
            let parent = &mut self.nodes[p];
            parent.active_weight += weight;
            if p == ROOT || parent.active {
                return;
            }
            parent.active = true;
            let share = parent.q_share;
            self.grow_q_star(share);
            child = p;
        }
    }

    /// A served leaf left empty goes idle (Eq. 10) and leaves the visiting order;
    /// ancestors with no active child left go idle too (Eq. 11).
    fn deactivate(&mut self, leaf: usize) {
        self.order.remove(&mut self.nodes, leaf as u32);
        self.nodes[leaf].active = false;
        self.grow_q_star(-self.nodes[leaf].q_share);
        let mut child = leaf;
        loop {
            let c = &mut self.nodes[child];
            let (returned, p) = (c.balance + c.residual, c.parent as usize);
            let weight = i64::from(c.weight);
            (c.balance, c.residual) = (0, 0);
            let parent = &mut self.nodes[p];
            parent.residual += returned;
            parent.active_weight -= weight;
            if p == ROOT || parent.active_weight > 0 {
                return;
            }
            parent.active = false;
            let share = parent.q_share;
            self.grow_q_star(-share);
            child = p;
        }
    }

    #[inline]
    fn grow_q_star(&mut self, bytes: i64) {
        self.q_star += bytes;
        self.nodes[ROOT].residual += bytes;
    }

    /// Makes sure class `k` (root or interior) has computed its fair quota this round.
    fn ensure_quota(&mut self, k: usize) {
        let round = self.round;
        if self.nodes[k].replenished_in == round {
            return;
        }
        self.nodes[k].replenished_in = round;
        if k == ROOT {
            let surplus = self.surplus;
            let root = &mut self.nodes[ROOT];
            root.balance += root.residual;
            root.residual = 0;
            let b = root.balance;
            root.fair_quota = if surplus || b <= 0 {
                0
            } else {
                b / root.active_weight
            };
            return;
        }
        let p = self.nodes[k].parent as usize;
        self.ensure_quota(p);
        let quota = i64::from(self.nodes[k].weight) * self.nodes[p].fair_quota;
        self.nodes[p].balance -= quota;
        let n = &mut self.nodes[k];
        n.balance += n.residual + quota;
        n.residual = 0;
        n.fair_quota = n.balance / n.active_weight;
    }

    /// A leaf's first visit of the round: takes its quota `w_i F_p(i)` (Eq. 8).
    fn replenish_leaf(&mut self, leaf: usize) {
        self.nodes[leaf].replenished_in = self.round;
        let p = self.nodes[leaf].parent as usize;
        self.ensure_quota(p);
        let quota = i64::from(self.nodes[leaf].weight) * self.nodes[p].fair_quota;
        self.nodes[leaf].balance += quota;
        self.nodes[p].balance -= quota;
    }
}

impl<P: Packet> Scheduler<P> for Hls<P> {
    fn name(&self) -> &'static str {
        "hls"
    }

    fn is_work_conserving(&self) -> bool {
        true
    }

    fn enqueue(
        &mut self,
        _now: Instant,
        class: ClassId,
        pkt: P,
        _evicted: &mut Vec<Dropped<P>>,
    ) -> Enqueue<P> {
        let c = class.index();
        self.queues.push_back(c, pkt);
        let n = &mut self.nodes[c];
        if !n.active && !n.pending {
            n.pending = true;
            self.pending.push(c as u32);
        }
        Enqueue::Queued
    }

    fn dequeue(&mut self, _now: Instant) -> Option<Dequeued<P>> {
        if self.queues.queued() == 0 {
            return None;
        }
        loop {
            if self.cursor == END {
                self.start_round();
            }
            let leaf = self.cursor as usize;
            if self.nodes[leaf].replenished_in != self.round {
                self.replenish_leaf(leaf);
            }
            let Some(head) = self.queues.front(leaf) else {
                self.cursor = self
                    .order
                    .next_after(&self.nodes, self.cursor)
                    .unwrap_or(END);
                self.deactivate(leaf);
                continue;
            };
            let len = i64::from(head.wire_len());
            if len > self.nodes[leaf].balance {
                self.cursor = self
                    .order
                    .next_after(&self.nodes, self.cursor)
                    .unwrap_or(END);
                continue;
            }
            let pkt = self.queues.pop_front(leaf).expect("head exists");
            self.nodes[leaf].balance -= len;
            self.nodes[ROOT].balance += len;
            if self.queues.is_empty(leaf) {
                self.cursor = self
                    .order
                    .next_after(&self.nodes, self.cursor)
                    .unwrap_or(END);
                self.deactivate(leaf);
            }
            return Some(Dequeued {
                pkt,
                class: ClassId(leaf as u32),
            });
        }
    }

    fn poll_at(&self, _now: Instant) -> PollAt {
        PollAt::work_conserving(self.queues.queued() != 0)
    }

    /// An idle leaf has returned its balance (Eq. 10): nothing to forget. A leaf emptied by
    /// push-out stays active until its next visit (module docs), and a new flow arriving
    /// in it before then continues that round's balance.
    fn resets_classes(&self) -> bool {
        true
    }

    fn remove_behind_head(&mut self, class: ClassId) -> Option<P> {
        let second = self.queues.remove_second(class.index());
        second.or_else(|| self.remove_newest(class))
    }

    fn remove_newest(&mut self, class: ClassId) -> Option<P> {
        let pkt = self.queues.pop_back(class.index())?;
        Some(pkt)
    }
}
