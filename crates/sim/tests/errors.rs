//! Configurations that cannot run are refused with a message naming what is wrong.

mod common;

use common::*;
use linkshare_core::hierarchy::ClassId;
use linkshare_core::sched::SchedulerKind;
use linkshare_core::units::{Duration, Instant, Rate};
use linkshare_sim::config::{Hop, LinkId, NodeConfig, Schedule, SimConfig, SourceConfig};
use linkshare_sim::{SimError, Simulator};

fn base() -> SimConfig {
    single_link(
        Rate::from_mbit(10),
        SchedulerKind::Fifo,
        1,
        1,
        vec![
            flow(
                "voice",
                0,
                SourceConfig::Cbr {
                    rate: Rate::from_kbit(64),
                    size: 200,
                },
            ),
            flow(
                "bulk",
                1,
                SourceConfig::Greedy {
                    size: 1000,
                    backlog: 2,
                },
            ),
        ],
    )
}

fn error(cfg: &SimConfig) -> (SimError, String) {
    let e = Simulator::new(cfg).expect_err("must be refused");
    let msg = e.to_string();
    (e, msg)
}

#[test]
fn disconnected_route_names_flow_hop_and_links() {
    let mut cfg = base();
    cfg.nodes.push(NodeConfig {
        name: "elsewhere".into(),
    });
    // l2 starts at node 2, but `link` ends at node 1.
    cfg.links.push(link(
        "l2",
        2,
        0,
        Rate::from_mbit(10),
        1,
        SchedulerKind::Fifo,
    ));
    cfg.flows[1].route.push(Hop {
        link: LinkId(1),
        class: ClassId(1),
    });
    let (e, msg) = error(&cfg);
    assert!(matches!(e, SimError::Disconnected { hop: 1, .. }), "{e:?}");
    for part in ["flow `bulk`", "hop 1", "`l2`", "`link`", "node `dst`"] {
        assert!(msg.contains(part), "{msg}");
    }
}

#[test]
fn interior_class_is_not_a_leaf() {
    let mut cfg = base();
    cfg.flows[0].route[0].class = ClassId::ROOT;
    let (e, msg) = error(&cfg);
    assert!(matches!(e, SimError::NotALeaf { hop: 0, .. }), "{e:?}");
    for part in ["flow `voice`", "hop 0", "`link`", "`c0`, `c1`"] {
        assert!(msg.contains(part), "{msg}");
    }
    cfg.flows[0].route[0].class = ClassId(77);
    assert!(error(&cfg).1.contains("#77"));
}

#[test]
fn unknown_link_and_empty_route() {
    let mut cfg = base();
    cfg.flows[0].route[0].link = LinkId(5);
    assert!(error(&cfg).1.contains("link index 5 does not exist"));
    cfg.flows[0].route.clear();
    assert!(matches!(error(&cfg).0, SimError::EmptyRoute { .. }));
}

#[test]
fn bad_sources_are_explained() {
    let cases = [
        (
            SourceConfig::Cbr {
                rate: Rate::ZERO,
                size: 100,
            },
            "0 bit/s",
        ),
        (
            SourceConfig::Poisson {
                rate: Rate::from_mbit(1),
                size: 0,
            },
            "size is 0",
        ),
        (
            SourceConfig::ParetoOnOff {
                peak: Rate::from_mbit(1),
                mean_on: Duration::from_millis(5),
                mean_off: Duration::from_millis(5),
                shape: 1.0,
                size: 100,
            },
            "above 1",
        ),
        (
            SourceConfig::PeriodicOnOff {
                burst: 10,
                peak: Rate::from_mbit(1),
                period: Duration::from_millis(1),
                size: 1000,
                variations: Default::default(),
            },
            "lengthen the period",
        ),
        (
            SourceConfig::Greedy {
                size: 100,
                backlog: 0,
            },
            "at least 1",
        ),
        (
            SourceConfig::Markov2 {
                rates: [Rate::from_mbit(1); 2],
                mean_sojourn: [Duration::ZERO, Duration::from_millis(1)],
                size: 100,
            },
            "state 0",
        ),
    ];
    for (source, expected) in cases {
        let mut cfg = base();
        cfg.flows[0].source = source;
        let (e, msg) = error(&cfg);
        assert!(matches!(e, SimError::Source { .. }), "{e:?}");
        assert!(
            msg.contains("flow `voice`") && msg.contains(expected),
            "{msg}"
        );
    }
}

#[test]
fn overlapping_or_empty_intervals_are_refused() {
    let s = Instant::from_secs;
    let mut cfg = base();
    cfg.flows[1].schedule = Schedule {
        on: vec![(s(0), s(5)), (s(4), s(6))],
    };
    assert!(error(&cfg).1.contains("before interval 0 ends"));
    cfg.flows[1].schedule = Schedule {
        on: vec![(s(3), s(3))],
    };
    assert!(error(&cfg).1.contains("is empty"));
}

#[test]
fn names_window_and_rates() {
    let mut cfg = base();
    cfg.flows[1].name = "voice".into();
    assert!(matches!(error(&cfg).0, SimError::DuplicateFlow { .. }));
    let mut cfg = base();
    cfg.measure.window = Duration::ZERO;
    assert_eq!(error(&cfg).0, SimError::ZeroWindow);
    let mut cfg = base();
    cfg.duration = Duration::from_secs(3600);
    cfg.measure.window = Duration::from_micros(1);
    assert!(matches!(
        error(&cfg).0,
        SimError::TooManyWindows {
            windows: 3_600_000_000,
            ..
        }
    ));
    let mut cfg = base();
    cfg.links[0].rate = Rate::from_mbit(20);
    assert!(error(&cfg).1.contains("differs from the link rate"));
    let mut cfg = base();
    cfg.links[0].to = linkshare_sim::config::NodeId(9);
    assert!(matches!(
        error(&cfg).0,
        SimError::UnknownNode { node: 9, .. }
    ));
}
