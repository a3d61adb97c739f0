//! Per-class FIFO queues of packets, in two forms.
//!
//! * [`DequeQueues`], the [`ClassQueues`] role: one `VecDeque` per class. Each class's
//!   packets are contiguous, but each class has a 32-byte header and a buffer of its
//!   own at a random address. The round-robin disciplines, whose state per class is
//!   small, use it.
//! * [`SlotPool`] with a [`QueueEnds`] per class kept by the caller: the queues threaded
//!   through one shared pool of packet slots, each linked to its neighbours in its
//!   class's queue. A discipline that reads a per-class record on every packet anyway
//!   keeps the queue's 8-byte ends in it, so that the queue costs no cache line of its
//!   own: H-FSC does (its leaf records). Freed slots are reused last-in first-out, so an
//!   arriving packet is written to a slot that a departing one has just left, which is
//!   in the cache. The pool grows (doubling, like a `Vec`) only when more packets are
//!   queued at once than ever before.
//!
//! Neither allocates in a steady state. The tests check both against one `VecDeque` per
//! class, the pool through the [`ClassQueues`] role.

use std::collections::VecDeque;

/// The end of a list of slots.
const NIL: u32 = u32::MAX;

/// FIFO queues of packets, one per class (classes are indices `0..classes`).
pub trait ClassQueues<P> {
    /// Appends `pkt` to class `c`'s queue; returns whether the queue was empty before.
    fn push_back(&mut self, c: usize, pkt: P) -> bool;
    /// Removes the oldest packet of class `c`'s queue.
    fn pop_front(&mut self, c: usize) -> Option<P>;
    /// Removes the newest packet of class `c`'s queue (`None` if it is empty or `c` is not
    /// a class).
    fn pop_back(&mut self, c: usize) -> Option<P>;
    /// Removes the packet right behind the head of class `c`'s queue (`None` if it holds
    /// fewer than two packets or `c` is not a class); the head stays (the FSC paper's
    /// push-out drops it).
    fn remove_second(&mut self, c: usize) -> Option<P>;
    /// The oldest packet of class `c`'s queue.
    fn front(&self, c: usize) -> Option<&P>;
    /// Whether class `c` holds no packet.
    fn is_empty(&self, c: usize) -> bool;
    /// Packets queued in all classes.
    fn queued(&self) -> usize;
}

/// One `VecDeque` per class. See the [module docs](self).
#[derive(Clone, Debug)]
pub struct DequeQueues<P> {
    queues: Vec<VecDeque<P>>,
    queued: usize,
}

impl<P> DequeQueues<P> {
    /// Empty queues for `classes` classes.
    pub fn new(classes: usize) -> DequeQueues<P> {
        DequeQueues {
            queues: (0..classes).map(|_| VecDeque::new()).collect(),
            queued: 0,
        }
    }
}

impl<P> ClassQueues<P> for DequeQueues<P> {
    #[inline]
    fn push_back(&mut self, c: usize, pkt: P) -> bool {
        let q = &mut self.queues[c];
        q.push_back(pkt);
        self.queued += 1;
        q.len() == 1
    }

    #[inline]
    fn pop_front(&mut self, c: usize) -> Option<P> {
        let pkt = self.queues[c].pop_front()?;
        self.queued -= 1;
        Some(pkt)
    }

    #[inline]
    fn pop_back(&mut self, c: usize) -> Option<P> {
        let pkt = self.queues.get_mut(c)?.pop_back()?;
        self.queued -= 1;
        Some(pkt)
    }

    #[inline]
    fn remove_second(&mut self, c: usize) -> Option<P> {
        let q = self.queues.get_mut(c)?;
        if q.len() < 2 {
            return None;
        }
        let pkt = q.remove(1)?;
        self.queued -= 1;
        Some(pkt)
    }

    #[inline]
    fn front(&self, c: usize) -> Option<&P> {
        self.queues[c].front()
    }

    #[inline]
    fn is_empty(&self, c: usize) -> bool {
        self.queues[c].is_empty()
    }

    #[inline]
    fn queued(&self) -> usize {
        self.queued
    }
}

/// The ends of one queue threaded through a [`SlotPool`]: the slots of its first and
/// last packets (none if it is empty). Eight bytes, kept wherever the owner of the
/// queue reads it (H-FSC keeps it in each leaf's record).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueEnds {
    first: u32,
    last: u32,
}

impl QueueEnds {
    /// An empty queue.
    pub const EMPTY: QueueEnds = QueueEnds {
        first: NIL,
        last: NIL,
    };

    /// Whether the queue holds no packet.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.first == NIL
    }
}

/// One slot of the pool: a queued packet and its neighbours in its class's queue, or a
/// free slot (`pkt` is `None`, `next` is the next free slot).
#[derive(Clone, Debug)]
struct Slot<P> {
    pkt: Option<P>,
    prev: u32,
    next: u32,
}

/// One pool of packet slots through which any number of FIFO queues are threaded, each
/// queue known by its [`QueueEnds`], which the caller keeps and passes in. See the
/// [module docs](self).
#[derive(Clone, Debug)]
pub struct SlotPool<P> {
    slots: Vec<Slot<P>>,
    /// First free slot, [`NIL`] if none.
    free: u32,
    /// Packets queued in all queues.
    queued: usize,
}

impl<P> Default for SlotPool<P> {
    fn default() -> SlotPool<P> {
        SlotPool {
            slots: Vec::new(),
            free: NIL,
            queued: 0,
        }
    }
}

impl<P> SlotPool<P> {
    /// An empty pool.
    pub fn new() -> SlotPool<P> {
        SlotPool::default()
    }

    /// Packets queued in all queues.
    #[inline]
    pub fn queued(&self) -> usize {
        self.queued
    }

    /// Puts `pkt` in a free slot (growing the pool if there is none), linked after
    /// `prev`; returns the slot.
    #[inline]
    fn take_slot(&mut self, pkt: P, prev: u32) -> u32 {
        let slot = Slot {
            pkt: Some(pkt),
            prev,
            next: NIL,
        };
        if self.free == NIL {
            let at = u32::try_from(self.slots.len()).expect("fewer than 2^32 packets queued");
            self.slots.push(slot);
            return at;
        }
        let at = self.free;
        let s = &mut self.slots[at as usize];
        self.free = s.next;
        *s = slot;
        at
    }

    /// Frees slot `at`; returns its packet and the slot that followed it in its queue.
    #[inline]
    fn release_slot(&mut self, at: u32) -> (P, u32) {
        let s = &mut self.slots[at as usize];
        let pkt = s.pkt.take().expect("a queued slot holds a packet");
        let next = core::mem::replace(&mut s.next, self.free);
        self.free = at;
        (pkt, next)
    }

    /// Appends `pkt` to the queue `q`; returns whether it was empty before.
    #[inline]
    pub fn push_back(&mut self, q: &mut QueueEnds, pkt: P) -> bool {
        let last = q.last;
        let at = self.take_slot(pkt, last);
        if last == NIL {
            q.first = at;
        } else {
            self.slots[last as usize].next = at;
        }
        q.last = at;
        self.queued += 1;
        last == NIL
    }

    /// Removes the oldest packet of the queue `q`.
    #[inline]
    pub fn pop_front(&mut self, q: &mut QueueEnds) -> Option<P> {
        let first = q.first;
        if first == NIL {
            return None;
        }
        let (pkt, next) = self.release_slot(first);
        q.first = next;
        if next == NIL {
            q.last = NIL;
        } else {
            self.slots[next as usize].prev = NIL;
        }
        self.queued -= 1;
        Some(pkt)
    }

    /// Removes the newest packet of the queue `q`.
    #[inline]
    pub fn pop_back(&mut self, q: &mut QueueEnds) -> Option<P> {
        let last = q.last;
        if last == NIL {
            return None;
        }
        let prev = self.slots[last as usize].prev;
        let (pkt, _) = self.release_slot(last);
        q.last = prev;
        if prev == NIL {
            q.first = NIL;
        } else {
            self.slots[prev as usize].next = NIL;
        }
        self.queued -= 1;
        Some(pkt)
    }

    /// Removes the packet right behind the head of the queue `q` (`None` if it holds
    /// fewer than two packets).
    pub fn remove_second(&mut self, q: &mut QueueEnds) -> Option<P> {
        let first = q.first;
        if first == NIL {
            return None;
        }
        let second = self.slots[first as usize].next;
        if second == NIL {
            return None;
        }
        let (pkt, next) = self.release_slot(second);
        self.slots[first as usize].next = next;
        if next == NIL {
            q.last = first;
        } else {
            self.slots[next as usize].prev = first;
        }
        self.queued -= 1;
        Some(pkt)
    }

    /// The oldest packet of the queue `q`.
    #[inline]
    pub fn front(&self, q: &QueueEnds) -> Option<&P> {
        if q.first == NIL {
            return None;
        }
        self.slots[q.first as usize].pkt.as_ref()
    }

    /// Checks that the queue `q`'s links and ends agree (for tests; O(its length));
    /// returns its length.
    pub fn check(&self, q: &QueueEnds) -> Result<usize, String> {
        let (mut at, mut prev, mut n) = (q.first, NIL, 0usize);
        while at != NIL {
            let s = self.slots.get(at as usize).ok_or("slot out of the pool")?;
            if s.prev != prev || s.pkt.is_none() || n > self.queued {
                return Err(format!("broken queue at slot {at}"));
            }
            (prev, at, n) = (at, s.next, n + 1);
        }
        if q.last != prev {
            return Err(format!(
                "{n} packets linked, last {} (expected {prev})",
                q.last
            ));
        }
        Ok(n)
    }

    /// Checks that the queues whose ends are `queues` are all the queues of the pool:
    /// each one's links agree with its ends and their lengths add up to the count (for
    /// tests; O(queues + packets)).
    pub fn check_all<'a>(&self, queues: impl Iterator<Item = &'a QueueEnds>) -> Result<(), String> {
        let mut total = 0usize;
        for (c, q) in queues.enumerate() {
            total += self.check(q).map_err(|e| format!("queue {c}: {e}"))?;
        }
        if total != self.queued {
            return Err(format!(
                "{total} packets queued, count says {}",
                self.queued
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    /// A queue per class in one [`SlotPool`], each class's ends and length kept beside
    /// it, as H-FSC keeps them in its leaf records: the pool through the role's tests.
    struct PoolQueues {
        ends: Vec<(QueueEnds, usize)>,
        pool: SlotPool<u64>,
    }

    impl PoolQueues {
        fn new(classes: usize) -> PoolQueues {
            PoolQueues {
                ends: vec![(QueueEnds::EMPTY, 0); classes],
                pool: SlotPool::new(),
            }
        }

        /// Every queue's links agree with its length, and the pool with all of them.
        fn check(&self) -> Result<(), String> {
            for (c, (ends, len)) in self.ends.iter().enumerate() {
                let n = self
                    .pool
                    .check(ends)
                    .map_err(|e| format!("class {c}: {e}"))?;
                if n != *len {
                    return Err(format!("class {c}: {n} packets linked, length {len}"));
                }
            }
            self.pool.check_all(self.ends.iter().map(|(e, _)| e))
        }
    }

    impl ClassQueues<u64> for PoolQueues {
        fn push_back(&mut self, c: usize, pkt: u64) -> bool {
            let (ends, len) = &mut self.ends[c];
            *len += 1;
            self.pool.push_back(ends, pkt)
        }
        fn pop_front(&mut self, c: usize) -> Option<u64> {
            let (ends, len) = &mut self.ends[c];
            let pkt = self.pool.pop_front(ends)?;
            *len -= 1;
            Some(pkt)
        }
        fn pop_back(&mut self, c: usize) -> Option<u64> {
            let (ends, len) = self.ends.get_mut(c)?;
            let pkt = self.pool.pop_back(ends)?;
            *len -= 1;
            Some(pkt)
        }
        fn remove_second(&mut self, c: usize) -> Option<u64> {
            let (ends, len) = self.ends.get_mut(c)?;
            let pkt = self.pool.remove_second(ends)?;
            *len -= 1;
            Some(pkt)
        }
        fn front(&self, c: usize) -> Option<&u64> {
            self.pool.front(&self.ends[c].0)
        }
        fn is_empty(&self, c: usize) -> bool {
            self.ends[c].1 == 0
        }
        fn queued(&self) -> usize {
            self.pool.queued()
        }
    }

    /// One operation on the queues and on the model.
    #[derive(Clone, Copy, Debug)]
    enum Op {
        Push(usize),
        PopFront(usize),
        PopBack(usize),
        RemoveSecond(usize),
    }

    fn op(classes: usize) -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (0..classes).prop_map(Op::Push),
            2 => (0..classes).prop_map(Op::PopFront),
            1 => (0..classes).prop_map(Op::PopBack),
            1 => (0..classes).prop_map(Op::RemoveSecond),
        ]
    }

    /// Runs `ops` on `q` (5 classes) and on one `VecDeque` per class, comparing every
    /// answer, every head and emptiness and the count after every operation, and
    /// `check(q)`.
    fn against_deques<Q: ClassQueues<u64>>(
        mut q: Q,
        ops: Vec<Op>,
        check: impl Fn(&Q) -> Result<(), String>,
    ) -> Result<(), TestCaseError> {
        let mut model: Vec<VecDeque<u64>> = vec![VecDeque::new(); 5];
        for (id, op) in (0u64..).zip(ops) {
            match op {
                Op::Push(c) => {
                    prop_assert_eq!(q.push_back(c, id), model[c].is_empty());
                    model[c].push_back(id);
                }
                Op::PopFront(c) => prop_assert_eq!(q.pop_front(c), model[c].pop_front()),
                Op::PopBack(c) => prop_assert_eq!(q.pop_back(c), model[c].pop_back()),
                Op::RemoveSecond(c) => {
                    let expected = if model[c].len() >= 2 {
                        model[c].remove(1)
                    } else {
                        None
                    };
                    prop_assert_eq!(q.remove_second(c), expected);
                }
            }
            for (c, m) in model.iter().enumerate() {
                prop_assert_eq!(q.front(c), m.front());
                prop_assert_eq!(q.is_empty(c), m.is_empty());
            }
            prop_assert_eq!(q.queued(), model.iter().map(VecDeque::len).sum::<usize>());
            prop_assert_eq!(check(&q), Ok(()));
        }
        prop_assert_eq!(q.pop_back(5), None, "not a class");
        Ok(())
    }

    proptest! {
        /// Queues in a slot pool behave as one `VecDeque` per class, and their links
        /// check.
        #[test]
        fn pooled_match_a_deque_per_class(ops in proptest::collection::vec(op(5), 0..400)) {
            against_deques(PoolQueues::new(5), ops, PoolQueues::check)?;
        }

        /// The deques' answers and count agree with plain deques.
        #[test]
        fn deques_match_a_deque_per_class(ops in proptest::collection::vec(op(5), 0..400)) {
            against_deques(DequeQueues::new(5), ops, |_| Ok(()))?;
        }
    }
}
