//! FIFO: one queue for all classes, served in arrival order.
//!
//! Work-conserving; O(1) enqueue and dequeue. Classes only matter for accounting and
//! for [`Scheduler::remove_newest`], which scans from the tail for the newest packet of
//! the class (O(queue length); used only when a push-out policy overflows).

use std::collections::VecDeque;

use super::{Dequeued, Dropped, Enqueue, Packet, PollAt, Scheduler};
use crate::hierarchy::ClassId;
use crate::units::Instant;

/// First in, first out over all classes.
#[derive(Debug)]
pub struct Fifo<P> {
    queue: VecDeque<(ClassId, P)>,
}

impl<P> Fifo<P> {
    /// An empty FIFO.
    pub fn new() -> Fifo<P> {
        Fifo {
            queue: VecDeque::new(),
        }
    }
}

impl<P> Default for Fifo<P> {
    fn default() -> Self {
        Fifo::new()
    }
}

impl<P: Packet> Scheduler<P> for Fifo<P> {
    fn name(&self) -> &'static str {
        "fifo"
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
        self.queue.push_back((class, pkt));
        Enqueue::Queued
    }

    #[inline]
    fn dequeue(&mut self, _now: Instant) -> Option<Dequeued<P>> {
        self.queue
            .pop_front()
            .map(|(class, pkt)| Dequeued { pkt, class })
    }

    fn poll_at(&self, _now: Instant) -> PollAt {
        PollAt::work_conserving(!self.queue.is_empty())
    }

    fn remove_newest(&mut self, class: ClassId) -> Option<P> {
        let at = self.queue.iter().rposition(|(c, _)| *c == class)?;
        self.queue.remove(at).map(|(_, p)| p)
    }

    /// FIFO keeps nothing per class but the packets.
    fn resets_classes(&self) -> bool {
        true
    }

    fn remove_behind_head(&mut self, class: ClassId) -> Option<P> {
        let mut of_class = self
            .queue
            .iter()
            .enumerate()
            .filter(|(_, (c, _))| *c == class)
            .map(|(i, _)| i);
        let head = of_class.next()?;
        let at = of_class.next().unwrap_or(head);
        self.queue.remove(at).map(|(_, p)| p)
    }
}
