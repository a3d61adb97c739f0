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
//! O(active leaves + interior classes) (for the surplus test), paid once per round of
//! visits. No allocation after warm-up.

use super::{Dequeued, Dropped, Enqueue, Packet, PollAt, Scheduler};
use crate::ds::{ClassQueues, DequeQueues};
use crate::hierarchy::{ClassId, ClassTree};
use crate::units::Instant;

const NO_PARENT: u32 = u32::MAX;
const ROOT: usize = 0;

/// The HLS scheduler. See the [module docs](self).
#[derive(Debug)]
pub struct Hls<P> {
    parent: Vec<u32>,
    weight: Vec<i64>,
    l_max: Vec<i64>,
    is_leaf: Vec<bool>,
    /// Classes with children, other than the root.
    interior: Vec<u32>,
    /// `B_i`, bytes.
    balance: Vec<i64>,
    /// `R_i`, bytes (root and interior classes).
    residual: Vec<i64>,
    /// `F_i` of the current round, bytes per unit of weight (root and interior).
    fair_quota: Vec<i64>,
    /// `w_i^ac`: sum of the weights of the active children.
    active_weight: Vec<i64>,
    active: Vec<bool>,
    /// Round in which the class last took its quota.
    replenished_in: Vec<u64>,
    queues: DequeQueues<P>,
    /// Leaves backlogged but not active, in arrival order; activated at the next round.
    pending: Vec<u32>,
    is_pending: Vec<bool>,
    /// Active leaves of the current round in visiting order, and the next visit.
    order: Vec<u32>,
    next_order: Vec<u32>,
    cursor: usize,
    round: u64,
    surplus: bool,
    /// `Q*`, bytes.
    q_star: i64,
    rounds_main: u64,
    rounds_surplus: u64,
}

impl<P: Packet> Hls<P> {
    /// HLS for `tree`.
    pub fn new(tree: &ClassTree) -> Hls<P> {
        let n = tree.len();
        let classes = tree.classes();
        Hls {
            parent: classes
                .iter()
                .map(|c| c.parent.map_or(NO_PARENT, |p| p.0))
                .collect(),
            weight: classes.iter().map(|c| i64::from(c.weight())).collect(),
            l_max: classes.iter().map(|c| c.max_packet().0 as i64).collect(),
            is_leaf: classes.iter().map(|c| c.is_leaf()).collect(),
            interior: classes
                .iter()
                .filter(|c| c.parent.is_some() && !c.children.is_empty())
                .map(|c| c.id.0)
                .collect(),
            balance: vec![0; n],
            residual: vec![0; n],
            fair_quota: vec![0; n],
            active_weight: vec![0; n],
            active: vec![false; n],
            replenished_in: vec![0; n],
            queues: DequeQueues::new(n),
            pending: Vec::with_capacity(n),
            is_pending: vec![false; n],
            order: Vec::with_capacity(n),
            next_order: Vec::with_capacity(n),
            cursor: 0,
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
        let total: i64 = self.balance.iter().sum::<i64>() + self.residual.iter().sum::<i64>();
        if total != self.q_star {
            return Err(format!(
                "Eq. 12 broken: sum B + sum R = {total}, Q* = {}",
                self.q_star
            ));
        }
        let mut bound = 0;
        for i in 1..self.parent.len() {
            if self.balance[i] < 0 || self.residual[i] < 0 {
                return Err(format!(
                    "class {i}: B = {}, R = {}",
                    self.balance[i], self.residual[i]
                ));
            }
            if self.active[i] {
                bound += self.weight[i] + if self.is_leaf[i] { self.l_max[i] } else { 0 };
            } else if self.balance[i] != 0 || self.residual[i] != 0 {
                return Err(format!(
                    "idle class {i} holds B = {}, R = {}",
                    self.balance[i], self.residual[i]
                ));
            }
        }
        if bound != self.q_star {
            return Err(format!("Q* = {} but Theorem 2 gives {bound}", self.q_star));
        }
        Ok(())
    }

    /// Starts a main or surplus round: activates pending leaves (and their ancestors),
    /// decides the round type, and resets the visiting order.
    fn start_round(&mut self) {
        self.next_order.clear();
        for k in 0..self.order.len() {
            let leaf = self.order[k];
            if self.active[leaf as usize] {
                self.next_order.push(leaf);
            }
        }
        for k in 0..self.pending.len() {
            let leaf = self.pending[k];
            self.is_pending[leaf as usize] = false;
            self.activate(leaf as usize);
            self.next_order.push(leaf);
        }
        self.pending.clear();
        std::mem::swap(&mut self.order, &mut self.next_order);
        self.cursor = 0;
        self.round += 1;
        self.surplus = self.interior.iter().any(|&k| {
            let k = k as usize;
            self.active[k] && self.balance[k] + self.residual[k] >= self.active_weight[k]
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
        self.active[leaf] = true;
        self.grow_q_star(self.l_max[leaf] + self.weight[leaf]);
        let mut child = leaf;
        loop {
            let p = self.parent[child] as usize;
            self.active_weight[p] += self.weight[child];
            if p == ROOT || self.active[p] {
                return;
            }
            self.active[p] = true;
            self.grow_q_star(self.weight[p]);
            child = p;
        }
    }

    /// A served leaf left empty goes idle (Eq. 10); ancestors with no active child left
    /// go idle too (Eq. 11).
    fn deactivate(&mut self, leaf: usize) {
        self.active[leaf] = false;
        self.grow_q_star(-(self.l_max[leaf] + self.weight[leaf]));
        let mut child = leaf;
        loop {
            let p = self.parent[child] as usize;
            self.residual[p] += self.balance[child] + self.residual[child];
            self.balance[child] = 0;
            self.residual[child] = 0;
            self.active_weight[p] -= self.weight[child];
            if p == ROOT || self.active_weight[p] > 0 {
                return;
            }
            self.active[p] = false;
            self.grow_q_star(-self.weight[p]);
            child = p;
        }
    }

    #[inline]
    fn grow_q_star(&mut self, bytes: i64) {
        self.q_star += bytes;
        self.residual[ROOT] += bytes;
    }

    /// Makes sure class `k` (root or interior) has computed its fair quota this round.
    fn ensure_quota(&mut self, k: usize) {
        if self.replenished_in[k] == self.round {
            return;
        }
        self.replenished_in[k] = self.round;
        if k == ROOT {
            self.balance[ROOT] += self.residual[ROOT];
            self.residual[ROOT] = 0;
            let b = self.balance[ROOT];
            self.fair_quota[ROOT] = if self.surplus || b <= 0 {
                0
            } else {
                b / self.active_weight[ROOT]
            };
            return;
        }
        let p = self.parent[k] as usize;
        self.ensure_quota(p);
        let quota = self.weight[k] * self.fair_quota[p];
        self.balance[k] += self.residual[k] + quota;
        self.balance[p] -= quota;
        self.residual[k] = 0;
        self.fair_quota[k] = self.balance[k] / self.active_weight[k];
    }

    /// A leaf's first visit of the round: takes its quota `w_i F_p(i)` (Eq. 8).
    fn replenish_leaf(&mut self, leaf: usize) {
        self.replenished_in[leaf] = self.round;
        let p = self.parent[leaf] as usize;
        self.ensure_quota(p);
        let quota = self.weight[leaf] * self.fair_quota[p];
        self.balance[leaf] += quota;
        self.balance[p] -= quota;
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
        if !self.active[c] && !self.is_pending[c] {
            self.is_pending[c] = true;
            self.pending.push(c as u32);
        }
        Enqueue::Queued
    }

    fn dequeue(&mut self, _now: Instant) -> Option<Dequeued<P>> {
        if self.queues.queued() == 0 {
            return None;
        }
        loop {
            if self.cursor >= self.order.len() {
                self.start_round();
            }
            let leaf = self.order[self.cursor] as usize;
            if self.replenished_in[leaf] != self.round {
                self.replenish_leaf(leaf);
            }
            let Some(head) = self.queues.front(leaf) else {
                self.deactivate(leaf);
                self.cursor += 1;
                continue;
            };
            let len = i64::from(head.wire_len());
            if len > self.balance[leaf] {
                self.cursor += 1;
                continue;
            }
            let pkt = self.queues.pop_front(leaf).expect("head exists");
            self.balance[leaf] -= len;
            self.balance[ROOT] += len;
            if self.queues.is_empty(leaf) {
                self.deactivate(leaf);
                self.cursor += 1;
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
