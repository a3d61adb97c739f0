//! Builders of small configurations shared by the integration tests.
#![allow(dead_code)]

use std::sync::Arc;

use linkshare_core::hierarchy::{ClassId, ClassTree};
use linkshare_core::sched::SchedulerKind;
use linkshare_core::units::{Duration, Instant, Rate};
use linkshare_sim::config::{
    FlowConfig, Hop, LinkConfig, LinkId, MeasureConfig, NodeConfig, NodeId, Schedule, SimConfig,
    SourceConfig, Transport,
};
use linkshare_sim::result::{DelayLog, DelayRecord, RunResult};

/// A flow's description for the builders: name, leaf index, source, schedule (`None`:
/// always on).
pub struct F {
    pub name: &'static str,
    pub leaf: usize,
    pub source: SourceConfig,
    pub schedule: Option<Schedule>,
}

pub fn flow(name: &'static str, leaf: usize, source: SourceConfig) -> F {
    F {
        name,
        leaf,
        source,
        schedule: None,
    }
}

/// A link of `rate` between nodes `from` and `to` with a flat tree of `leaves` leaves.
pub fn link(
    name: &str,
    from: u32,
    to: u32,
    rate: Rate,
    leaves: usize,
    kind: SchedulerKind,
) -> LinkConfig {
    LinkConfig::new(
        name,
        NodeId(from),
        NodeId(to),
        Arc::new(ClassTree::flat(rate, leaves)),
        kind,
    )
}

/// One link `src -> dst` of `rate`, a flat tree with one leaf per flow index used.
pub fn single_link(
    rate: Rate,
    kind: SchedulerKind,
    secs: u64,
    seed: u64,
    flows: Vec<F>,
) -> SimConfig {
    let leaves = flows.iter().map(|f| f.leaf + 1).max().unwrap_or(1);
    let duration = Duration::from_secs(secs);
    let l = link("link", 0, 1, rate, leaves, kind);
    let tree = Arc::clone(&l.classes);
    SimConfig {
        seed,
        duration,
        nodes: vec![
            NodeConfig { name: "src".into() },
            NodeConfig { name: "dst".into() },
        ],
        links: vec![l],
        flows: flows
            .into_iter()
            .map(|f| FlowConfig {
                name: f.name.to_owned(),
                route: vec![Hop {
                    link: LinkId(0),
                    class: tree.leaves()[f.leaf],
                }],
                reverse: Vec::new(),
                transport: Transport::Udp,
                source: f.source,
                schedule: f.schedule.unwrap_or_else(|| Schedule::always(duration)),
            })
            .collect(),
        measure: MeasureConfig::default(),
    }
}

/// The delay records of link `l` (which must have kept them).
pub fn records(r: &RunResult, l: usize) -> &[DelayRecord] {
    match &r.links[l].delay_log {
        DelayLog::Packets(v) => v,
        other => panic!("records were not kept in memory: {other:?}"),
    }
}

/// Arrival times at link `l` of the packets of flow `name` that completed there, sorted.
pub fn arrivals(r: &RunResult, l: usize, name: &str) -> Vec<Instant> {
    let id = r
        .flows
        .iter()
        .find(|f| f.name == name)
        .expect("flow exists")
        .id;
    let mut v: Vec<Instant> = records(r, l)
        .iter()
        .filter(|x| x.flow == id)
        .map(|x| x.arrival)
        .collect();
    v.sort();
    v
}

/// The leaf class ids of link `l` of a result.
pub fn leaves(r: &RunResult, l: usize) -> Vec<ClassId> {
    r.links[l]
        .classes
        .iter()
        .filter(|c| c.is_leaf)
        .map(|c| c.id)
        .collect()
}

pub fn secs(s: f64) -> Instant {
    Instant((s * 1e9).round() as u64)
}
