//! One WF2Q+ server: the system virtual time of a class and the order of its children.
//!
//! The children a server orders are numbered by *slot*, `0..k` (their position among the
//! class's children). A child is *offered* with the start and finish tags `(S, F)` of its
//! head packet and stays in the server until it is *withdrawn*. The server keeps two
//! heaps: children not yet eligible (`S > V`) by `S`, eligible ones (`S <= V`) by `F`.
//!
//! The virtual time follows Bennett and Zhang's WF2Q+ definition,
//! `V(t + τ) = max(V(t) + W(t, t + τ) / r, min_{backlogged j} S_j)`: the linear part is
//! kept as a [`Line`] of slope `r` (the class's rate) over the bytes `W` the class
//! has served, anchored where the `max` last took the minimum start tag, so that it is
//! evaluated from its anchor and never accumulates rounding. See the
//! [WF2Q+ module docs](super) for the units.

use super::line::Line;
use crate::ds::IndexedHeap;
use crate::units::Rate;

/// The system virtual time of one class and its children's tags.
#[derive(Clone, Debug)]
pub(crate) struct Server {
    /// The linear part of `V` as a function of the bytes served, of slope the class's
    /// rate: `clock.at(W)` is `V` at `W` served bytes, before the `max`.
    clock: Line,
    /// Eligible children (`S <= V`) keyed by `F`.
    eligible: IndexedHeap,
    /// Children not yet eligible (`S > V`) keyed by `S`.
    waiting: IndexedHeap,
    /// `S` of each offered child, by slot.
    start: Vec<u64>,
    /// `F` of each offered child, by slot.
    finish: Vec<u64>,
    /// Whether a child's packet is in service: its start tag, at or below `V` when it
    /// was chosen, still counts in `min S`, so `V` does not jump.
    busy: bool,
    /// The largest finish tag offered so far: at or above every child's last finish.
    max_finish: u64,
}

impl Server {
    /// A server for a class of rate `rate` with `children` children, at virtual time 0.
    pub(crate) fn new(rate: Rate, children: usize) -> Server {
        Server {
            clock: Line::new(rate, 0, 0),
            eligible: IndexedHeap::new(children),
            waiting: IndexedHeap::new(children),
            start: vec![0; children],
            finish: vec![0; children],
            busy: false,
            max_finish: 0,
        }
    }

    /// Brings `V` up to date for a class that has served `served` bytes in all, applying
    /// the `max` with the smallest start tag, and moves children that became eligible.
    /// Returns `V` (virtual ns).
    pub(crate) fn advance(&mut self, served: u64) -> u64 {
        let linear = self.clock.at(served);
        let v = match (self.eligible.is_empty(), self.waiting.peek()) {
            (true, Some((_, s))) if s > linear && !self.busy => {
                self.clock = self.clock.moved(s, served);
                s
            }
            _ => linear,
        };
        while let Some((slot, s)) = self.waiting.peek() {
            if s > v {
                break;
            }
            self.waiting.remove(slot);
            self.eligible.set(slot, self.finish[slot as usize]);
        }
        v
    }

    /// Offers child `slot` (not offered yet) with head tags `start` and `finish`;
    /// `served` as in [`Server::advance`], which takes the child into account: it is
    /// eligible if `start <= V`, and if no child is, `V` may jump to its start tag.
    pub(crate) fn offer(&mut self, slot: u32, start: u64, finish: u64, served: u64) {
        debug_assert!(!self.holds(slot), "slot {slot} offered twice");
        self.start[slot as usize] = start;
        self.finish[slot as usize] = finish;
        self.max_finish = self.max_finish.max(finish);
        if self.busy || !self.eligible.is_empty() {
            // `V` cannot jump: place the child against it directly.
            if start <= self.advance(served) {
                self.eligible.set(slot, finish);
            } else {
                self.waiting.set(slot, start);
            }
        } else {
            // `V` may jump to the smallest start tag, this child's included.
            self.waiting.set(slot, start);
            self.advance(served);
        }
    }

    /// Marks whether a child's packet is in service.
    pub(crate) fn set_busy(&mut self, busy: bool) {
        self.busy = busy;
    }

    /// Starts a new busy period if the class is idle (no child offered, none in
    /// service): `V` moves up to the largest finish tag given so far, so that every
    /// child that turns backlogged starts at `V`, with equal tags, as in a fluid system
    /// whose busy period ends only once every child has been served its due.
    pub(crate) fn restart(&mut self, served: u64) {
        if self.busy || !self.eligible.is_empty() || !self.waiting.is_empty() {
            return;
        }
        if self.max_finish > self.clock.at(served) {
            self.clock = self.clock.moved(self.max_finish, served);
        }
    }

    /// Withdraws child `slot`, if offered.
    pub(crate) fn withdraw(&mut self, slot: u32) {
        if !self.eligible.remove(slot) {
            self.waiting.remove(slot);
        }
    }

    /// Whether child `slot` is offered.
    pub(crate) fn holds(&self, slot: u32) -> bool {
        self.eligible.contains(slot) || self.waiting.contains(slot)
    }

    /// The eligible child with the smallest finish tag (smallest slot on ties). Call
    /// [`Server::advance`] first.
    pub(crate) fn peek(&self) -> Option<u32> {
        self.eligible.peek().map(|(slot, _)| slot)
    }

    /// Moves the time origin back: with `v` the virtual time returned by the last
    /// [`Server::advance`] (at `served` bytes), subtracts `offset = min(v, min S)` from
    /// `V` and from every offered child's tags, which keeps eligibility and order, and
    /// returns `offset`. The caller moves its children's tag curves back by as much.
    pub(crate) fn rebase(&mut self, served: u64, v: u64) -> u64 {
        let slots = 0..self.start.len() as u32;
        let offset = slots
            .clone()
            .filter(|&s| self.holds(s))
            .map(|s| self.start[s as usize])
            .fold(v, u64::min);
        self.clock = self.clock.moved(v - offset, served);
        self.max_finish = self.max_finish.saturating_sub(offset);
        for s in slots {
            let i = s as usize;
            if self.holds(s) {
                self.start[i] -= offset;
                self.finish[i] -= offset;
            }
            if self.eligible.contains(s) {
                self.eligible.set(s, self.finish[i]);
            } else if self.waiting.contains(s) {
                self.waiting.set(s, self.start[i]);
            }
        }
        offset
    }

    /// Number of slots.
    pub(crate) fn slots(&self) -> usize {
        self.start.len()
    }
}
