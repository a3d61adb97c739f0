//! The engine's reverse path and burst accounting, driven by hand-written agents
//! installed in place of the configured sources.

use std::sync::{Arc, Mutex};

use linkshare_core::buffer::{BufferConfig, Overflow};
use linkshare_core::hierarchy::{ClassId, ClassTree, Limit};
use linkshare_core::sched::SchedulerKind;
use linkshare_core::units::{Duration, Instant, Rate};

use super::Simulator;
use crate::agent::{Agent, Ctx, Segment};
use crate::config::{
    FlowConfig, Hop, LinkConfig, LinkId, MeasureConfig, NodeConfig, NodeId, Schedule, SimConfig,
    SourceConfig, TcpConfig, Transport,
};
use crate::error::SimError;
use crate::packet::{NO_BURST, PacketKind, SimPacket};
use crate::result::RunResult;

/// 1 Mbit/s: 1000 B take 8 ms, 40 B take 320 µs.
const RATE: Rate = Rate::from_mbit(1);
const DELAY: Duration = Duration::from_millis(5);

fn link(name: &str, from: u32, to: u32, buffer: BufferConfig) -> LinkConfig {
    LinkConfig {
        delay: DELAY,
        buffer,
        ..LinkConfig::new(
            name,
            NodeId(from),
            NodeId(to),
            Arc::new(ClassTree::flat(RATE, 1)),
            SchedulerKind::Fifo,
        )
    }
}

fn hop(link: u32) -> Hop {
    Hop {
        link: LinkId(link),
        class: ClassId(1),
    }
}

/// Nodes `a`, `b`; link 0 `a -> b` with `forward_buffer`, link 1 `b -> a`; one flow
/// over link 0, back over link 1 when `transport` is TCP.
fn two_way(transport: Transport, forward_buffer: BufferConfig) -> SimConfig {
    let reverse = match transport {
        Transport::Udp => Vec::new(),
        Transport::Tcp(_) => vec![hop(1)],
    };
    SimConfig {
        seed: 1,
        duration: Duration::from_secs(1),
        nodes: vec![
            NodeConfig { name: "a".into() },
            NodeConfig { name: "b".into() },
        ],
        links: vec![
            link("ab", 0, 1, forward_buffer),
            link("ba", 1, 0, BufferConfig::default()),
        ],
        flows: vec![FlowConfig {
            name: "f".into(),
            route: vec![hop(0)],
            reverse,
            source: SourceConfig::Cbr {
                rate: Rate::from_kbit(8),
                size: 1000,
            },
            transport,
            schedule: Schedule::always(Duration::from_secs(1)),
        }],
        measure: MeasureConfig::default(),
    }
}

/// Runs `config` with `agent` driving flow 0.
fn run_with(config: &SimConfig, agent: Box<dyn Agent>) -> RunResult {
    let mut sim = Simulator::new(config).expect("valid test configuration");
    sim.agents[0] = agent;
    sim.run()
}

/// Sends `count` 1000 B data segments at the start; answers each delivered one with a
/// 40 B acknowledgement carrying its number; logs when each acknowledgement arrives.
#[derive(Debug)]
struct Echo {
    count: u64,
    acks: Arc<Mutex<Vec<(Instant, u64)>>>,
}

impl Agent for Echo {
    fn on_start(&mut self, ctx: &mut Ctx<'_>) {
        for num in 0..self.count {
            ctx.send(Segment {
                kind: PacketKind::Data,
                len: 1000,
                conn: 3,
                num,
                burst: NO_BURST,
            });
        }
    }

    fn on_stop(&mut self, _ctx: &mut Ctx<'_>) {}

    fn on_timer(&mut self, _ctx: &mut Ctx<'_>, _token: u64) {}

    fn on_delivered(&mut self, ctx: &mut Ctx<'_>, pkt: &SimPacket) {
        match pkt.kind {
            PacketKind::Data => {
                assert_eq!(pkt.conn, 3, "the connection travels with the packet");
                ctx.send(Segment {
                    kind: PacketKind::Ack,
                    len: 40,
                    conn: pkt.conn,
                    num: pkt.num,
                    burst: NO_BURST,
                });
            }
            PacketKind::Ack => self
                .acks
                .lock()
                .expect("not poisoned")
                .push((ctx.now(), pkt.num)),
            PacketKind::Syn | PacketKind::SynAck => unreachable!("the test sends none"),
        }
    }
}

fn tcp() -> Transport {
    Transport::Tcp(TcpConfig::default())
}

#[test]
fn acknowledgements_travel_the_reverse_route_through_its_port() {
    let acks = Arc::new(Mutex::new(Vec::new()));
    let config = two_way(tcp(), BufferConfig::default());
    let agent = Echo {
        count: 3,
        acks: Arc::clone(&acks),
    };
    let r = run_with(&config, Box::new(agent));
    // Data k leaves link ab at 8 ms·(k+1), arrives at b 5 ms later; its 40 B ack takes
    // 320 µs on link ba (idle by then: acks are 8 ms apart) and 5 ms more.
    let expected: Vec<(Instant, u64)> = (0..3)
        .map(|k| {
            let ns = 8_000_000 * (k + 1) + 5_000_000 + 320_000 + 5_000_000;
            (Instant(ns), k)
        })
        .collect();
    assert_eq!(*acks.lock().expect("not poisoned"), expected);
    let f = &r.flows[0];
    assert_eq!((f.sent.packets, f.delivered.packets), (3, 3));
    assert_eq!(f.reverse.sent.packets, 3);
    assert_eq!(f.reverse.delivered.bytes, 120);
    assert_eq!(r.links[1].total.dequeued.packets, 3, "acks crossed link ba");
    assert_eq!(
        r.links[0].total.dequeued.bytes, 3000,
        "only data crossed ab"
    );
    f.check_conservation().unwrap();
}

#[test]
fn reverse_packets_still_queued_or_in_flight_are_counted() {
    let acks = Arc::new(Mutex::new(Vec::new()));
    let mut config = two_way(tcp(), BufferConfig::default());
    // The first ack leaves b at 13 ms and is on link ba's wire until 13.32 ms.
    config.duration = Duration::from_nanos(13_100_000);
    let r = run_with(&config, Box::new(Echo { count: 3, acks }));
    let rev = r.flows[0].reverse;
    assert_eq!(rev.sent.packets, 1);
    assert_eq!(rev.in_transmission.packets, 1);
    assert_eq!(rev.propagating.packets, 0);
    assert_eq!(
        rev.delivered.packets + rev.dropped.packets + rev.queued.packets,
        0
    );
    r.flows[0].check_conservation().unwrap();
}

/// Two bursts: 3 packets, then (10 ms later) 2 packets; packets outside bursts before.
#[derive(Debug)]
struct Bursty;

impl Agent for Bursty {
    fn on_start(&mut self, ctx: &mut Ctx<'_>) {
        ctx.emit(500);
        ctx.begin_burst(false);
        for _ in 0..3 {
            ctx.emit(1000);
        }
        ctx.set_timer(ctx.now() + Duration::from_millis(10), 0);
    }

    fn on_stop(&mut self, _ctx: &mut Ctx<'_>) {}

    fn on_timer(&mut self, ctx: &mut Ctx<'_>, _token: u64) {
        ctx.begin_burst(false);
        ctx.emit(1000);
        ctx.emit(1000);
    }
}

#[test]
fn open_loop_bursts_run_from_first_send_to_last_arrival() {
    let r = run_with(
        &two_way(Transport::Udp, BufferConfig::default()),
        Box::new(Bursty),
    );
    let t = &r.flows[0].transport;
    assert_eq!(t.protocol, "udp");
    assert_eq!(t.bytes_delivered, 5500);
    assert_eq!(t.bursts.len(), 2);
    let (b0, b1) = (t.bursts[0], t.bursts[1]);
    // Burst 0: sent at 0 behind the 500 B packet (4 ms); its third packet leaves the
    // link at 4 + 3·8 = 28 ms and arrives 5 ms later.
    assert_eq!((b0.bytes, b0.delivered), (3000, 3000));
    assert_eq!(b0.first_sent, Some(Instant::ZERO));
    assert_eq!(b0.completed, Some(Instant::from_millis(33)));
    // Burst 1: begun at 10 ms while burst 0 is queued; its packets leave at 36 and
    // 44 ms.
    assert_eq!(b1.begun, Instant::from_millis(10));
    assert_eq!(b1.first_sent, Some(Instant::from_millis(10)));
    assert_eq!(b1.completed, Some(Instant::from_millis(49)));
    assert_eq!(t.first_sent, Some(Instant::ZERO));
    assert_eq!(t.last_delivered, Some(Instant::from_millis(49)));
}

#[test]
fn a_burst_with_a_lost_packet_never_completes() {
    // The forward port holds one packet: of burst 0's three packets sent at once behind
    // the 500 B packet, two are dropped.
    let buffer = BufferConfig {
        shared: Some(Limit::Packets(1)),
        overflow: Overflow::TailDrop,
    };
    let r = run_with(&two_way(Transport::Udp, buffer), Box::new(Bursty));
    let b0 = r.flows[0].transport.bursts[0];
    assert_eq!((b0.bytes, b0.delivered), (3000, 1000));
    assert_eq!(b0.completed, None);
    r.flows[0].check_conservation().unwrap();
}

#[test]
fn a_udp_flow_with_a_reverse_route_is_refused() {
    let mut config = two_way(Transport::Udp, BufferConfig::default());
    config.flows[0].reverse = vec![hop(1)];
    let err = Simulator::new(&config).unwrap_err();
    assert!(matches!(err, SimError::Reverse { .. }), "{err}");
    assert!(
        err.to_string().contains("remove the reverse route"),
        "{err}"
    );
}

#[test]
fn a_tcp_flow_needs_a_reverse_route_back_to_its_source() {
    let mut config = two_way(tcp(), BufferConfig::default());
    config.flows[0].reverse.clear();
    let err = Simulator::new(&config).unwrap_err().to_string();
    assert!(err.contains("needs a reverse route"), "{err}");

    // A reverse route that does not start where the route ends: link ab again.
    config.flows[0].reverse = vec![hop(0)];
    let err = Simulator::new(&config).unwrap_err().to_string();
    assert!(
        err.contains("starts at node `a`, not at the sink's node `b`"),
        "{err}"
    );
}

/// A shaper thread or a Python module may own a simulator (and its schedulers).
#[test]
fn simulator_is_send() {
    fn owned_by_another_thread<T: Send>() {}
    owned_by_another_thread::<Simulator>();
    owned_by_another_thread::<RunResult>();
}
