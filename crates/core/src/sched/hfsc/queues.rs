//! The leaves' FIFO queues, threaded through one shared pool of packet slots.
//!
//! Per class the packet path reads a 16-byte [`Fifo`] (first and last slot, length,
//! and the class's [`Roles`]) from one compact array: with 10 000 classes that is
//! 160 KiB, which stays in the L2 cache, where a `VecDeque` per class puts a 32-byte
//! header and a separate buffer of its own at a random address for each class. The
//! packets sit in a pool of slots, each linked to its neighbours in its class's queue;
//! freed slots are reused last-in first-out, so an arriving packet is written to a slot
//! that a departing one has just left, which is in the cache. The pool grows (doubling,
//! like a `Vec`) only when more packets are queued at once than ever before: the packet
//! path allocates nothing in a steady state.

/// The end of a list of slots.
const NIL: u32 = u32::MAX;

/// Whether a class has an `rt` curve and whether it takes part in link-sharing.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Roles {
    /// The class has an `rt` curve.
    pub(super) rt: bool,
    /// The class has an `ls` curve.
    pub(super) ls: bool,
}

/// The queue of one class: slots of its first and last packets ([`NIL`] if empty), its
/// length, and the class's roles (read with it on every packet).
#[derive(Clone, Copy, Debug)]
struct Fifo {
    first: u32,
    last: u32,
    len: u32,
    roles: Roles,
}

/// One slot of the pool: a queued packet and its neighbours in its class's queue, or a
/// free slot (`pkt` is `None`, `next` is the next free slot).
#[derive(Clone, Debug)]
struct Slot<P> {
    pkt: Option<P>,
    prev: u32,
    next: u32,
}

/// FIFO queues of packets, one per class. See the [module docs](self).
#[derive(Clone, Debug)]
pub(super) struct Queues<P> {
    fifos: Vec<Fifo>,
    slots: Vec<Slot<P>>,
    /// First free slot, [`NIL`] if none.
    free: u32,
    /// Packets queued in all classes.
    queued: usize,
}

impl<P> Queues<P> {
    /// Empty queues for classes whose roles are given by class index.
    pub(super) fn new(roles: impl Iterator<Item = Roles>) -> Queues<P> {
        Queues {
            fifos: roles
                .map(|roles| Fifo {
                    first: NIL,
                    last: NIL,
                    len: 0,
                    roles,
                })
                .collect(),
            slots: Vec::new(),
            free: NIL,
            queued: 0,
        }
    }

    /// The roles of class `c`.
    #[inline]
    pub(super) fn roles(&self, c: usize) -> Roles {
        self.fifos[c].roles
    }

    /// Packets queued in all classes.
    #[inline]
    pub(super) fn queued(&self) -> usize {
        self.queued
    }

    /// Whether class `c` holds no packet.
    #[inline]
    pub(super) fn is_empty(&self, c: usize) -> bool {
        self.fifos[c].len == 0
    }

    /// The packet at the head of class `c`'s queue.
    #[inline]
    pub(super) fn front(&self, c: usize) -> Option<&P> {
        let first = self.fifos[c].first;
        if first == NIL {
            return None;
        }
        self.slots[first as usize].pkt.as_ref()
    }

    /// Appends `pkt` to class `c`'s queue; returns whether the queue was empty before.
    #[inline]
    pub(super) fn push_back(&mut self, c: usize, pkt: P) -> bool {
        let last = self.fifos[c].last;
        let at = self.take_slot(pkt, last);
        let fifo = &mut self.fifos[c];
        if last == NIL {
            fifo.first = at;
        } else {
            self.slots[last as usize].next = at;
        }
        fifo.last = at;
        fifo.len += 1;
        self.queued += 1;
        fifo.len == 1
    }

    /// Removes the head packet of class `c`'s queue.
    #[inline]
    pub(super) fn pop_front(&mut self, c: usize) -> Option<P> {
        let first = self.fifos[c].first;
        if first == NIL {
            return None;
        }
        let (pkt, next) = self.release_slot(first);
        let fifo = &mut self.fifos[c];
        fifo.first = next;
        if next == NIL {
            fifo.last = NIL;
        } else {
            self.slots[next as usize].prev = NIL;
        }
        fifo.len -= 1;
        self.queued -= 1;
        Some(pkt)
    }

    /// Removes the newest packet of class `c`'s queue (`None` if it is empty or `c` is
    /// not a class).
    pub(super) fn pop_back(&mut self, c: usize) -> Option<P> {
        let last = self.fifos.get(c)?.last;
        if last == NIL {
            return None;
        }
        let prev = self.slots[last as usize].prev;
        let (pkt, _) = self.release_slot(last);
        let fifo = &mut self.fifos[c];
        fifo.last = prev;
        if prev == NIL {
            fifo.first = NIL;
        } else {
            self.slots[prev as usize].next = NIL;
        }
        fifo.len -= 1;
        self.queued -= 1;
        Some(pkt)
    }

    /// Removes the packet right behind the head of class `c`'s queue (`None` if it holds
    /// fewer than two packets or `c` is not a class). The head stays.
    pub(super) fn remove_second(&mut self, c: usize) -> Option<P> {
        let first = self.fifos.get(c)?.first;
        if first == NIL {
            return None;
        }
        let second = self.slots[first as usize].next;
        if second == NIL {
            return None;
        }
        let (pkt, next) = self.release_slot(second);
        self.slots[first as usize].next = next;
        let fifo = &mut self.fifos[c];
        if next == NIL {
            fifo.last = first;
        } else {
            self.slots[next as usize].prev = first;
        }
        fifo.len -= 1;
        self.queued -= 1;
        Some(pkt)
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

    /// Checks that every queue's links, length and ends agree and that the lengths add
    /// up to the count (for tests; O(n + packets)).
    pub(super) fn check(&self) -> Result<(), String> {
        let mut total = 0usize;
        for (c, f) in self.fifos.iter().enumerate() {
            let (mut at, mut prev, mut n) = (f.first, NIL, 0u32);
            while at != NIL {
                let s = self.slots.get(at as usize).ok_or("slot out of the pool")?;
                if s.prev != prev || s.pkt.is_none() || n > f.len {
                    return Err(format!("class {c}: broken queue at slot {at}"));
                }
                (prev, at, n) = (at, s.next, n + 1);
            }
            if n != f.len || f.last != prev {
                return Err(format!(
                    "class {c}: {n} packets linked, length {}, last {} (expected {prev})",
                    f.len, f.last
                ));
            }
            total += n as usize;
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

    proptest! {
        /// The queues behave as one `VecDeque` per class: every answer, every head and
        /// emptiness and the count agree after every operation, and the links check.
        #[test]
        fn match_a_deque_per_class(ops in proptest::collection::vec(op(5), 0..400)) {
            let mut q: Queues<u64> = Queues::new((0..5).map(|_| Roles::default()));
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
                        let expected = if model[c].len() >= 2 { model[c].remove(1) } else { None };
                        prop_assert_eq!(q.remove_second(c), expected);
                    }
                }
                for (c, m) in model.iter().enumerate() {
                    prop_assert_eq!(q.front(c), m.front());
                    prop_assert_eq!(q.is_empty(c), m.is_empty());
                }
                prop_assert_eq!(q.queued(), model.iter().map(VecDeque::len).sum::<usize>());
                prop_assert_eq!(q.check(), Ok(()));
            }
            prop_assert_eq!(q.pop_back(5), None, "not a class");
        }
    }
}
