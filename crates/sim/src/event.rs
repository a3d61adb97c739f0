//! The event queue: events ordered by `(time, sequence number)`.
//!
//! Every scheduled event gets the next sequence number, so events due at the same
//! instant come out in the order they were scheduled (FIFO ties, by contract). Time only
//! moves forward: the simulator jumps from one event's time to the next one's; there are
//! no ticks.
//!
//! The heap holds small keys — `(time, sequence)` packed in one `u128` compared in a
//! single operation, and the payload's slot — while payloads live in a slab of slots
//! reused through a free list: sifting moves 32-byte keys whatever the payload size, and
//! a queue that has reached its peak size allocates nothing more.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use linkshare_core::units::Instant;

/// Heap key: earliest time first, then lowest sequence number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Key {
    /// `time << 64 | seq`: ordering by this orders by `(time, seq)`.
    order: u128,
    slot: u32,
}

impl Key {
    #[inline]
    fn time(&self) -> u64 {
        (self.order >> 64) as u64
    }
}

impl Ord for Key {
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        // `BinaryHeap` is a max-heap: reverse so the earliest (time, seq) is on top.
        other.order.cmp(&self.order)
    }
}

impl PartialOrd for Key {
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A priority queue of events of type `E`, earliest first, FIFO among equal times.
#[derive(Debug)]
pub struct EventQueue<E> {
    heap: BinaryHeap<Key>,
    slots: Vec<Option<E>>,
    free: Vec<u32>,
    next_seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue::new()
    }
}

impl<E> EventQueue<E> {
    /// An empty queue.
    pub fn new() -> EventQueue<E> {
        EventQueue {
            heap: BinaryHeap::new(),
            slots: Vec::new(),
            free: Vec::new(),
            next_seq: 0,
        }
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether no event is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Schedules `event` at `time`, after every event already scheduled at `time`.
    ///
    /// # Panics
    /// If more than `u32::MAX` events are pending at once.
    #[inline]
    pub fn push(&mut self, time: Instant, event: E) {
        let seq = self.reserve();
        self.push_reserved(time, seq, event);
    }

    /// Takes the next sequence number without scheduling anything: an event scheduled
    /// later with [`EventQueue::push_reserved`] and this number is ordered as if it had
    /// been scheduled now. Lets a caller hold a FIFO of future events outside the heap
    /// and schedule only its head.
    #[inline]
    pub fn reserve(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    /// Schedules `event` at `time` with a sequence number taken by
    /// [`EventQueue::reserve`] (each number must be used at most once).
    ///
    /// # Panics
    /// If more than `u32::MAX` events are pending at once.
    #[inline]
    pub fn push_reserved(&mut self, time: Instant, seq: u64, event: E) {
        let slot = match self.free.pop() {
            Some(s) => {
                self.slots[s as usize] = Some(event);
                s
            }
            None => {
                let s = u32::try_from(self.slots.len()).expect("at most 2^32 pending events");
                self.slots.push(Some(event));
                s
            }
        };
        self.heap.push(Key {
            order: u128::from(time.0) << 64 | u128::from(seq),
            slot,
        });
    }

    /// The time of the earliest pending event.
    #[inline]
    pub fn peek_time(&self) -> Option<Instant> {
        self.heap.peek().map(|k| Instant(k.time()))
    }

    /// Removes and returns the earliest pending event, if it is due strictly before
    /// `end`.
    #[inline]
    pub fn pop_before(&mut self, end: Instant) -> Option<(Instant, E)> {
        let key = *self.heap.peek()?;
        if key.time() >= end.0 {
            return None;
        }
        self.heap.pop();
        let event = self.slots[key.slot as usize]
            .take()
            .expect("a queued key points at a filled slot");
        self.free.push(key.slot);
        Some((Instant(key.time()), event))
    }

    /// Every pending event with its time, in no particular order.
    pub fn pending(&self) -> impl Iterator<Item = (Instant, &E)> + '_ {
        self.heap.iter().map(|k| {
            let e = self.slots[k.slot as usize]
                .as_ref()
                .expect("a queued key points at a filled slot");
            (Instant(k.time()), e)
        })
    }
}

/// About how many events a run of `config` processes, before it runs: for every link,
/// two events (end of transmission, arrival at the next hop) per packet it carries —
/// the packets its flows offer over their ON time (a greedy source or an endless
/// transfer as many as the link can send), at most what it can send in the run — plus
/// one event per packet a source emits. TCP acknowledgements count as one packet per
/// data packet on the reverse links. An estimate to warn about long runs, not a bound.
pub fn estimate(config: &crate::config::SimConfig) -> u64 {
    let seconds = config.duration.as_secs_f64();
    let end = Instant::ZERO.saturating_add(config.duration);
    let mut offered = vec![0.0f64; config.links.len()];
    let mut smallest = vec![f64::INFINITY; config.links.len()];
    let mut emitted = 0.0;
    for f in &config.flows {
        let on: f64 = f
            .schedule
            .on
            .iter()
            .map(|&(a, b)| b.min(end).since(a.min(b)).as_secs_f64())
            .sum();
        let size = f64::from(f.source.packet_size().max(1));
        let packets = f.source.mean_rate_bps() * on / 8.0 / size;
        if packets.is_finite() {
            emitted += packets;
        }
        for hop in f.route.iter().chain(&f.reverse) {
            let l = hop.link.0 as usize;
            offered[l] += packets;
            smallest[l] = smallest[l].min(size);
        }
    }
    let mut events = emitted;
    for (l, link) in config.links.iter().enumerate() {
        let size = if smallest[l].is_finite() {
            smallest[l]
        } else {
            1500.0
        };
        let capacity = link.rate.bps() as f64 * seconds / 8.0 / size;
        events += 2.0 * offered[l].min(capacity);
    }
    if events.is_finite() {
        events as u64
    } else {
        u64::MAX
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(q: &mut EventQueue<u32>) -> Vec<(u64, u32)> {
        std::iter::from_fn(|| q.pop_before(Instant::MAX))
            .map(|(t, e)| (t.0, e))
            .collect()
    }

    #[test]
    fn earliest_first() {
        let mut q = EventQueue::new();
        for (t, e) in [(30, 0), (10, 1), (20, 2), (5, 3)] {
            q.push(Instant(t), e);
        }
        assert_eq!(drain(&mut q), vec![(5, 3), (10, 1), (20, 2), (30, 0)]);
    }

    #[test]
    fn ties_are_fifo() {
        let mut q = EventQueue::new();
        // Interleave two instants; within each, insertion order must be kept.
        for e in 0..100 {
            q.push(Instant(if e % 2 == 0 { 7 } else { 3 }), e);
        }
        let out = drain(&mut q);
        let at3: Vec<u32> = out.iter().filter(|p| p.0 == 3).map(|p| p.1).collect();
        let at7: Vec<u32> = out.iter().filter(|p| p.0 == 7).map(|p| p.1).collect();
        assert_eq!(at3, (0..100).filter(|e| e % 2 == 1).collect::<Vec<_>>());
        assert_eq!(at7, (0..100).filter(|e| e % 2 == 0).collect::<Vec<_>>());
        assert!(out[..50].iter().all(|p| p.0 == 3));
    }

    #[test]
    fn ties_stay_fifo_when_pushed_while_draining() {
        let mut q = EventQueue::new();
        q.push(Instant(1), 0);
        q.push(Instant(1), 1);
        let (_, first) = q.pop_before(Instant::MAX).unwrap();
        assert_eq!(first, 0);
        // Scheduled "now" while handling event 0: runs after the already-queued event 1.
        q.push(Instant(1), 2);
        assert_eq!(drain(&mut q), vec![(1, 1), (1, 2)]);
    }

    #[test]
    fn reserved_numbers_keep_their_place() {
        let mut q = EventQueue::new();
        let early = q.reserve();
        q.push(Instant(4), 1);
        q.push_reserved(Instant(4), early, 0);
        q.push(Instant(4), 2);
        assert_eq!(drain(&mut q), vec![(4, 0), (4, 1), (4, 2)]);
    }

    #[test]
    fn stops_at_end_and_reuses_slots() {
        let mut q = EventQueue::new();
        q.push(Instant(5), 1);
        q.push(Instant(10), 2);
        assert_eq!(q.pop_before(Instant(10)), Some((Instant(5), 1)));
        assert_eq!(q.pop_before(Instant(10)), None);
        assert_eq!(q.len(), 1);
        q.push(Instant(6), 3);
        // The slot freed by event 1 was reused: still two slots.
        assert_eq!(q.slots.len(), 2);
        let mut pending: Vec<(Instant, u32)> = q.pending().map(|(t, &e)| (t, e)).collect();
        pending.sort();
        assert_eq!(pending, vec![(Instant(6), 3), (Instant(10), 2)]);
    }
}
