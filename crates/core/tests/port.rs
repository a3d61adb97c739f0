//! The egress port's link model with and without catch-up, against hand-derived
//! departures: 8 Mbit/s is one byte per microsecond, so a 1 000-byte packet holds the
//! link for exactly 1 ms.

use linkshare_core::hierarchy::{ClassId, ClassSpec, ClassTree, LinkSpec};
use linkshare_core::port::{EgressPort, Transmit};
use linkshare_core::sched::fifo::Fifo;
use linkshare_core::testing::TestPacket;
use linkshare_core::units::{Duration, Instant, Rate};
use proptest::prelude::*;

type Port = EgressPort<TestPacket, Fifo<TestPacket>>;

const LEN: u32 = 1000;

fn port(catch_up: Duration, backlog: u64) -> Port {
    let link = LinkSpec {
        name: "link".into(),
        rate: Rate::from_mbit(8),
        origin: None,
    };
    let tree = ClassTree::build(link, vec![ClassSpec::new("a", None)]).expect("valid tree");
    let mut port = EgressPort::simple(&tree, Fifo::new()).with_catch_up(catch_up);
    for id in 0..backlog {
        let pkt = TestPacket { id, len: LEN };
        assert!(port.enqueue(Instant::ZERO, ClassId(1), pkt, |d| panic!("{d:?}")));
    }
    port
}

fn ms(n: u64) -> Instant {
    Instant(n * 1_000_000)
}

/// Every packet the port starts at `now`, as its `done_at`, and what it said after.
fn drain(port: &mut Port, now: Instant) -> (Vec<Instant>, Transmit<TestPacket>) {
    let mut done = Vec::new();
    loop {
        match port.transmit(now) {
            Transmit::Started { done_at, .. } => done.push(done_at),
            other => return (done, other),
        }
    }
}

#[test]
fn without_catch_up_a_late_call_loses_the_link_time() {
    let mut p = port(Duration::ZERO, 10);
    assert_eq!(drain(&mut p, ms(0)).0, [ms(1)]);
    // Called 2 ms after the link became free: the next packet starts now.
    let (done, next) = drain(&mut p, ms(3));
    assert_eq!(done, [ms(4)]);
    assert!(matches!(next, Transmit::Busy(t) if t == ms(4)));
}

#[test]
fn catch_up_makes_up_lost_time_back_to_back() {
    let mut p = port(Duration::from_millis(2), 10);
    assert_eq!(drain(&mut p, ms(0)).0, [ms(1)]);
    // Free since 1 ms, called at 3 ms: the packets the link would have sent from 1 ms
    // to 3 ms leave now, and the third holds it until 4 ms, as if never late.
    let (done, next) = drain(&mut p, ms(3));
    assert_eq!(done, [ms(2), ms(3), ms(4)]);
    assert!(matches!(next, Transmit::Busy(t) if t == ms(4)));
    // Late by more than the allowance: only 2 ms of the 4 ms lost are made up.
    let (done, _) = drain(&mut p, ms(8));
    assert_eq!(done, [ms(7), ms(8), ms(9)]);
}

#[test]
fn after_idle_the_burst_is_the_allowance_and_one_packet() {
    let mut p = port(Duration::from_millis(2), 0);
    let pkt = TestPacket { id: 0, len: LEN };
    for id in 0..10 {
        let pkt = TestPacket { id, ..pkt };
        assert!(p.enqueue(ms(50), ClassId(1), pkt, |d| panic!("{d:?}")));
    }
    // Counted from 48 ms: two packets done by 50 ms leave at once, and the third.
    assert_eq!(drain(&mut p, ms(50)).0, [ms(49), ms(50), ms(51)]);
}

proptest! {
    /// With a queue that never empties and calls at arbitrary (ordered) instants: the
    /// packets started by the calls after one at `a` up to one at `b` are at most
    /// `rate · (b − a + catch_up)` plus one, and a driver never later than the allowance
    /// loses nothing (the k-th packet ends at exactly k ms, as at line rate).
    #[test]
    fn the_link_is_a_token_bucket_of_the_allowance(
        catch_up_us in 0u64..5_000,
        gaps_us in proptest::collection::vec(0u64..6_000, 1..100),
    ) {
        let catch_up = Duration::from_micros(catch_up_us).as_nanos();
        let mut p = port(Duration::from_micros(catch_up_us), 1_000);
        let (mut now, mut free_at, mut on_time) = (0u64, 0u64, true);
        let mut calls: Vec<(u64, u64)> = vec![(0, 0)];
        for gap in gaps_us {
            now += gap * 1_000;
            on_time &= now <= free_at + catch_up;
            let (done, _) = drain(&mut p, Instant(now));
            let started = calls.last().unwrap().1 + done.len() as u64;
            if let Some(last) = done.last() {
                free_at = last.0;
            }
            calls.push((now, started));
            if on_time {
                prop_assert_eq!(free_at, started * 1_000_000);
            }
        }
        for (i, &(a, before)) in calls.iter().enumerate() {
            for &(b, after) in &calls[i + 1..] {
                let allowed = (b - a + catch_up) / 1_000_000 + 1;
                prop_assert!(after - before <= allowed, "{} packets in ({a}, {b}] ns", after - before);
            }
        }
    }
}
