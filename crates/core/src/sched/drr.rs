//! Deficit Round Robin (Shreedhar & Varghese, SIGCOMM 1995 / ToN 1996).
//!
//! # The algorithm, as in the paper
//!
//! Every leaf has a FIFO queue, a *quantum* `Q_i` (bytes) and a *deficit counter*
//! `DC_i` (bytes). Backlogged leaves are kept in an *active list* in round-robin order.
//! When a leaf reaches the head of the list for a new turn, `Q_i` is added to `DC_i`;
//! the leaf then sends packets while its queue is not empty and its head packet is no
//! longer than `DC_i`, subtracting each packet's length from `DC_i`. If the leaf still has
//! packets after its turn it moves to the back of the list, keeping its deficit; if its
//! queue empties it leaves the list and `DC_i` is reset to 0. A leaf that becomes
//! backlogged joins the back of the list with `DC_i = 0`.
//!
//! We run the paper's loop one packet per [`Scheduler::dequeue`] call, so a turn spans
//! as many `dequeue` calls as the leaf sends packets in it. A leaf is credited its
//! quantum at the moment it becomes the head of the active list (the list's first
//! leaf becoming backlogged, the turn passing on, or the head leaving the list), which
//! is the paper's "reaches the head of the list for a new turn"; the sequence of packets
//! is exactly the paper's.
//!
//! # Parameters
//!
//! * Quantum: [`ClassSpec::quantum`](crate::hierarchy::ClassSpec::quantum) if given, else
//!   `weight × base`, where the base quantum is the largest
//!   [`max_packet`](crate::hierarchy::Class::max_packet) over all leaves. With the
//!   default the quantum is at least every leaf's `L_max`, so every backlogged leaf
//!   sends at least one packet per turn (the paper's condition for O(1) work).
//!
//! # Fairness
//!
//! Backlogged leaves share the link in proportion to their quanta. At the end of each of
//! its turns a leaf has `0 <= DC_i < L_max` (its turn ended because its head packet did
//! not fit, or its deficit was reset). Count from an instant at which leaves `i` and `j`
//! become backlogged together, and suppose both stay backlogged: a leaf that has started
//! `t` turns since then has sent at most `t·Q_i` and more than `(t−1)·Q_i − L_max`
//! bytes, and the two turn counts differ by at most one (round robin). Hence at every
//! instant `sent_j/Q_j − sent_i/Q_i < 2 + L_max/Q_i`: the paper's fairness bound
//! (`2·Quantum + Max`) in units of quanta.
//!
//! DRR is flat: it uses the leaves of the tree and ignores interior classes and their
//! parameters (hierarchical DRR is a separate discipline).
//!
//! # Complexity
//!
//! Enqueue is O(1). Dequeue is O(1) when every quantum is at least the largest packet.
//! A leaf whose quantum is smaller than its head packet is skipped, accumulating deficit
//! over turns, which is still correct; a single dequeue may then visit several leaves,
//! at most `ceil(L_max / Q_min)` full rounds of the active list. The active list is an
//! intrusive doubly linked [`Ring`] threaded through the per-class state (queue,
//! quantum, deficit, links and the head packet's length share one cache line; with the
//! length kept there, the check that ends a turn does not read the queue's buffer), so
//! [`Scheduler::remove_newest`]
//! (pop the class's tail; a class that empties leaves the list and loses its deficit)
//! is O(1) from any position. No operation allocates once each leaf's queue has reached
//! its peak length.

use std::collections::VecDeque;

use super::{Dequeued, Dropped, Enqueue, Packet, PollAt, Scheduler};
use crate::ds::{Link, Linked, Ring};
use crate::hierarchy::{ClassId, ClassTree};
use crate::units::{Bytes, Instant};

/// One class's queue and DRR state, with its links in the active list: everything a
/// visit touches is in one cache line.
#[derive(Debug)]
#[repr(align(64))]
struct Slot<P> {
    queue: VecDeque<P>,
    /// `Q_i` in bytes.
    quantum: u64,
    /// `DC_i` in bytes; 0 whenever the queue is empty.
    deficit: u64,
    /// Neighbours in the active list while backlogged.
    link: Link,
    /// Wire length of the head packet in bytes; meaningless while the queue is empty.
    front_len: u32,
    /// Whether the class can hold packets.
    is_leaf: bool,
}

impl<P> Linked for Slot<P> {
    #[inline]
    fn link(&self) -> &Link {
        &self.link
    }
    #[inline]
    fn link_mut(&mut self) -> &mut Link {
        &mut self.link
    }
}

/// Deficit Round Robin over the leaves of a tree. See the [module docs](self).
#[derive(Debug)]
pub struct Drr<P> {
    /// Indexed by [`ClassId::index`].
    slots: Vec<Slot<P>>,
    /// The active list: backlogged leaves in round-robin order, head = current turn
    /// (already credited its quantum for it).
    active: Ring,
}

impl<P> Drr<P> {
    /// DRR over the leaves of `tree`, with quanta as described in the module docs.
    pub fn new(tree: &ClassTree) -> Drr<P> {
        let leaves = tree.leaves().iter().map(|&id| tree.get(id));
        let base = leaves.map(|c| c.max_packet().0).max().unwrap_or(0);
        let slots = tree
            .classes()
            .iter()
            .map(|c| Slot {
                queue: VecDeque::new(),
                quantum: c.spec.quantum.map_or(u64::from(c.weight()) * base, |q| q.0),
                deficit: 0,
                link: Link::UNLINKED,
                front_len: 0,
                is_leaf: c.is_leaf(),
            })
            .collect();
        Drr {
            slots,
            active: Ring::EMPTY,
        }
    }

    /// The quantum `Q_i` of leaf `class`, or `None` if it is not a leaf of the tree.
    pub fn quantum_of(&self, class: ClassId) -> Option<Bytes> {
        self.leaf(class).map(|s| Bytes(s.quantum))
    }

    /// The deficit counter `DC_i` of leaf `class` now (0 for a leaf with an empty queue;
    /// the head of the active list has been credited its quantum for its turn from the
    /// moment it became the head), or `None` if it is not a leaf of the tree.
    pub fn deficit_of(&self, class: ClassId) -> Option<Bytes> {
        self.leaf(class).map(|s| Bytes(s.deficit))
    }

    fn leaf(&self, class: ClassId) -> Option<&Slot<P>> {
        self.slots.get(class.index()).filter(|s| s.is_leaf)
    }

    /// Credits the head of the active list, which has just become the head, its quantum
    /// for the turn it starts.
    #[inline]
    fn credit_head(&mut self) {
        if let Some(head) = self.active.head() {
            let slot = &mut self.slots[head as usize];
            slot.deficit += slot.quantum;
        }
    }

    /// Takes `class`, whose queue has just emptied, off the active list; if it was the
    /// head, the turn passes to the next leaf.
    #[inline]
    fn deactivate(&mut self, class: u32) {
        let was_head = self.active.head() == Some(class);
        self.active.remove(&mut self.slots, class);
        self.slots[class as usize].deficit = 0;
        if was_head {
            self.credit_head();
        }
    }
}

impl<P: Packet> Scheduler<P> for Drr<P> {
    fn name(&self) -> &'static str {
        "drr"
    }

    fn is_work_conserving(&self) -> bool {
        true
    }

    #[inline]
    fn enqueue(
        &mut self,
        _now: Instant,
        class: ClassId,
        pkt: P,
        _evicted: &mut Vec<Dropped<P>>,
    ) -> Enqueue<P> {
        let slot = &mut self.slots[class.index()];
        debug_assert!(slot.is_leaf, "the qdisc offers leaves only");
        let len = pkt.wire_len();
        slot.queue.push_back(pkt);
        if slot.queue.len() == 1 {
            slot.front_len = len;
            let first = self.active.is_empty();
            self.active.push_back(&mut self.slots, class.0);
            if first {
                self.credit_head();
            }
        }
        Enqueue::Queued
    }

    #[inline]
    fn dequeue(&mut self, _now: Instant) -> Option<Dequeued<P>> {
        loop {
            let head = self.active.head()?;
            let slot = &mut self.slots[head as usize];
            let len = u64::from(slot.front_len);
            if len <= slot.deficit {
                slot.deficit -= len;
                let next = slot.queue.get(1).map(P::wire_len);
                let pkt = slot
                    .queue
                    .pop_front()
                    .expect("an active leaf is backlogged");
                match next {
                    Some(next) => slot.front_len = next,
                    None => self.deactivate(head),
                }
                return Some(Dequeued {
                    pkt,
                    class: ClassId(head),
                });
            }
            self.active.rotate(&self.slots);
            self.credit_head();
        }
    }

    fn poll_at(&self, _now: Instant) -> PollAt {
        PollAt::work_conserving(!self.active.is_empty())
    }

    /// An empty leaf has left the active list with its deficit at 0: nothing to forget.
    fn resets_classes(&self) -> bool {
        true
    }

    fn remove_behind_head(&mut self, class: ClassId) -> Option<P> {
        match self.slots.get_mut(class.index()) {
            Some(slot) if slot.queue.len() >= 2 => slot.queue.remove(1),
            _ => self.remove_newest(class),
        }
    }

    fn remove_newest(&mut self, class: ClassId) -> Option<P> {
        let slot = self.slots.get_mut(class.index())?;
        let pkt = slot.queue.pop_back()?;
        if slot.queue.is_empty() {
            self.deactivate(class.0);
        }
        Some(pkt)
    }
}
