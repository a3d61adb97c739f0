//! Strict priority: the backlogged leaf with the lowest priority number is served first.
//!
//! Every leaf has its own FIFO queue and a priority level `0..=7` taken from
//! [`ClassSpec::priority`](crate::hierarchy::ClassSpec::priority); **a leaf that does not
//! give one has priority 0 (the highest)**. On each dequeue the lowest non-empty level
//! wins; within a level the backlogged leaves are served **round-robin, one packet per
//! turn**. (Linux `sch_prio` keeps one FIFO per band, so classes sharing a band are
//! served in arrival order; here each leaf has its own queue and the leaves sharing a
//! level take turns, so one leaf cannot monopolise its level.) A leaf that becomes
//! backlogged joins the back of its level's ring: it is served after every leaf already
//! waiting at that level. Round robin counts packets, not bytes: leaves sending larger
//! packets get more bytes.
//!
//! Strict priority is flat: it uses the leaves of the tree and ignores interior classes.
//! It is work-conserving, and starves lower levels for as long as a higher level is
//! backlogged, by design.
//!
//! # Complexity
//!
//! O(1) per operation: a bitmask of non-empty levels (lowest set bit = level to serve)
//! and, per level, a [`Ring`] of backlogged leaves threaded through the per-class
//! state. [`Scheduler::remove_newest`] is O(1) too (pop the class's tail; a class that
//! empties leaves its ring from any position). No operation allocates once each leaf's
//! queue has reached its peak length.

use std::collections::VecDeque;

use super::{Dequeued, Dropped, Enqueue, Packet, PollAt, Scheduler};
use crate::ds::{Link, Linked, Ring};
use crate::hierarchy::{ClassId, ClassTree, MAX_PRIORITY};
use crate::units::Instant;

/// Number of priority levels (`0..=MAX_PRIORITY`).
const LEVELS: usize = MAX_PRIORITY as usize + 1;

/// Level stored for a class that is not a leaf (cannot hold packets).
const NOT_A_LEAF: u8 = u8::MAX;

/// One class's queue and level, with its links in its level's ring.
#[derive(Debug)]
struct Slot<P> {
    queue: VecDeque<P>,
    /// Neighbours in the ring of its level while backlogged.
    link: Link,
    /// Priority level, or `NOT_A_LEAF`.
    level: u8,
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

/// Strict priority over the leaves of a tree, round-robin within a level. See the
/// [module docs](self).
#[derive(Debug)]
pub struct Prio<P> {
    /// Indexed by [`ClassId::index`]; interior classes have `level == NOT_A_LEAF`.
    slots: Vec<Slot<P>>,
    /// One ring of backlogged leaves per level.
    rings: [Ring; LEVELS],
    /// Bit `l` is set when level `l` has a backlogged leaf.
    nonempty: u8,
}

impl<P> Prio<P> {
    /// Strict priority over the leaves of `tree`, each at its `priority` (default 0).
    pub fn new(tree: &ClassTree) -> Prio<P> {
        let slots = tree
            .classes()
            .iter()
            .map(|c| Slot {
                queue: VecDeque::new(),
                link: Link::UNLINKED,
                level: if c.is_leaf() {
                    c.spec.priority.unwrap_or(0)
                } else {
                    NOT_A_LEAF
                },
            })
            .collect();
        Prio {
            slots,
            rings: [Ring::EMPTY; LEVELS],
            nonempty: 0,
        }
    }

    /// The level a leaf is served at, or `None` if `class` is not a leaf of the tree.
    pub fn level_of(&self, class: ClassId) -> Option<u8> {
        self.slots
            .get(class.index())
            .map(|s| s.level)
            .filter(|&l| l != NOT_A_LEAF)
    }

    /// Unlinks `class` (now empty) from the ring of `level`.
    #[inline]
    fn deactivate(&mut self, level: usize, class: u32) {
        self.rings[level].remove(&mut self.slots, class);
        if self.rings[level].is_empty() {
            self.nonempty &= !(1 << level);
        }
    }
}

impl<P: Packet> Scheduler<P> for Prio<P> {
    fn name(&self) -> &'static str {
        "prio"
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
        debug_assert_ne!(slot.level, NOT_A_LEAF, "the qdisc offers leaves only");
        slot.queue.push_back(pkt);
        if slot.queue.len() == 1 {
            let level = usize::from(slot.level);
            self.rings[level].push_back(&mut self.slots, class.0);
            self.nonempty |= 1 << level;
        }
        Enqueue::Queued
    }

    #[inline]
    fn dequeue(&mut self, _now: Instant) -> Option<Dequeued<P>> {
        if self.nonempty == 0 {
            return None;
        }
        let level = self.nonempty.trailing_zeros() as usize;
        let head = self.rings[level]
            .head()
            .expect("a level marked non-empty has a head");
        let queue = &mut self.slots[head as usize].queue;
        let pkt = queue.pop_front().expect("a leaf in a ring is backlogged");
        if queue.is_empty() {
            self.deactivate(level, head);
        } else {
            self.rings[level].rotate(&self.slots);
        }
        Some(Dequeued {
            pkt,
            class: ClassId(head),
        })
    }

    fn poll_at(&self, _now: Instant) -> PollAt {
        PollAt::work_conserving(self.nonempty != 0)
    }

    /// An empty class has left its priority's ring: nothing else is kept.
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
            let level = usize::from(slot.level);
            self.deactivate(level, class.0);
        }
        Some(pkt)
    }
}
