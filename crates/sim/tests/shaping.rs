//! Driving a non-work-conserving port: shaping wake-ups, through a custom discipline.

mod common;

use std::collections::VecDeque;
use std::sync::Arc;

use common::*;
use linkshare_core::hierarchy::ClassId;
use linkshare_core::sched::{Dequeued, Dropped, Enqueue, PollAt, Scheduler, SchedulerKind};
use linkshare_core::units::{Duration, Instant, Rate};
use linkshare_sim::Simulator;
use linkshare_sim::config::{SourceConfig, TraceRecord};
use linkshare_sim::packet::SimPacket;

/// FIFO that releases packets only at multiples of `slot`, at most one per slot.
#[derive(Debug)]
struct SlotPacer {
    queue: VecDeque<(ClassId, SimPacket)>,
    slot: u64,
    /// No release before this instant (the slot after the last release).
    allowed: u64,
}

impl SlotPacer {
    fn next_release(&self, now: Instant) -> u64 {
        now.0.max(self.allowed).div_ceil(self.slot) * self.slot
    }
}

impl Scheduler<SimPacket> for SlotPacer {
    fn name(&self) -> &'static str {
        "slot-pacer"
    }
    fn is_work_conserving(&self) -> bool {
        false
    }
    fn enqueue(
        &mut self,
        _: Instant,
        class: ClassId,
        pkt: SimPacket,
        _: &mut Vec<Dropped<SimPacket>>,
    ) -> Enqueue<SimPacket> {
        self.queue.push_back((class, pkt));
        Enqueue::Queued
    }
    fn dequeue(&mut self, now: Instant) -> Option<Dequeued<SimPacket>> {
        if self.poll_at(now) != PollAt::Now {
            return None;
        }
        self.allowed = now.0 + self.slot;
        self.queue
            .pop_front()
            .map(|(class, pkt)| Dequeued { pkt, class })
    }
    fn poll_at(&self, now: Instant) -> PollAt {
        if self.queue.is_empty() {
            return PollAt::Idle;
        }
        match self.next_release(now) {
            t if t == now.0 => PollAt::Now,
            t => PollAt::At(Instant(t)),
        }
    }
    fn remove_newest(&mut self, class: ClassId) -> Option<SimPacket> {
        let at = self.queue.iter().rposition(|(c, _)| *c == class)?;
        self.queue.remove(at).map(|(_, p)| p)
    }
    fn remove_behind_head(&mut self, class: ClassId) -> Option<SimPacket> {
        self.remove_newest(class)
    }
}

#[test]
fn wake_ups_release_shaped_packets_on_time() {
    let at = |us: u64| TraceRecord {
        at: Duration::from_micros(us),
        size: 125,
    };
    // Arrivals at 1, 2, 25, 25.5 and 40 ms.
    let trace: Arc<[TraceRecord]> =
        vec![at(1000), at(2000), at(25_000), at(25_500), at(40_000)].into();
    let cfg = single_link(
        Rate::from_gbit(1),
        SchedulerKind::Fifo,
        1,
        1,
        vec![flow("shaped", 0, SourceConfig::Trace { records: trace })],
    );
    let r = Simulator::with_schedulers(&cfg, &mut |_| {
        Ok(Box::new(SlotPacer {
            queue: VecDeque::new(),
            slot: 10_000_000,
            allowed: 0,
        }))
    })
    .expect("valid")
    .run();
    assert_eq!(r.links[0].scheduler, "slot-pacer");
    // One release per 10 ms slot boundary, each taking 1 us (125 B at 1 Gbit/s).
    let starts: Vec<u64> = records(&r, 0)
        .iter()
        .map(|x| x.departure.0 - 1000)
        .collect();
    assert_eq!(
        starts,
        vec![10_000_000, 20_000_000, 30_000_000, 40_000_000, 50_000_000]
    );
    r.check_conservation().expect("conservation");
}
