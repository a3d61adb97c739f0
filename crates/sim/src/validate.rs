//! Checks a [`SimConfig`] before anything is built, so the engine never panics on it.

use linkshare_core::hierarchy::ClassId;
use linkshare_core::units::Duration;

use crate::config::{FlowConfig, Hop, SimConfig, Transport};
use crate::error::SimError;
use crate::rng::fnv1a64;
use crate::{source, tcp};

/// The most window cells (windows times leaves, over all links) a run may measure: two
/// `u64` series per cell, 3.2 GB at this limit.
pub(crate) const MAX_WINDOW_CELLS: u64 = 200_000_000;

/// The first problem found in `config`, in this order: measurement, links, flow names,
/// then each flow's route, source and schedule.
pub(crate) fn check(config: &SimConfig) -> Result<(), SimError> {
    if config.measure.window == Duration::ZERO {
        return Err(SimError::ZeroWindow);
    }
    let windows = config.duration.0.div_ceil(config.measure.window.0);
    let leaves: u64 = config
        .links
        .iter()
        .map(|l| l.classes.leaves().len() as u64)
        .sum();
    let cells = windows.saturating_mul(leaves);
    if cells > MAX_WINDOW_CELLS {
        return Err(SimError::TooManyWindows {
            windows,
            cells,
            limit: MAX_WINDOW_CELLS,
        });
    }
    for link in &config.links {
        for node in [link.from, link.to] {
            if node.0 as usize >= config.nodes.len() {
                return Err(SimError::UnknownNode {
                    link: link.name.clone(),
                    node: node.0,
                    nodes: config.nodes.len(),
                });
            }
        }
        if link.classes.link_rate() != link.rate {
            return Err(SimError::LinkRate {
                link: link.name.clone(),
                link_rate: link.rate,
                tree_rate: link.classes.link_rate(),
            });
        }
    }
    for o in &config.measure.objectives {
        let leaf = config
            .links
            .get(o.link.0 as usize)
            .and_then(|l| l.classes.classes().get(o.class.index()))
            .is_some_and(|c| c.is_leaf());
        if !leaf {
            return Err(SimError::Objective {
                link: o.link.0,
                class: o.class,
            });
        }
    }
    check_names(config)?;
    for flow in &config.flows {
        check_route(config, flow, &flow.route)?;
        check_transport(config, flow)?;
        source::check(&flow.source).map_err(|problem| SimError::Source {
            flow: flow.name.clone(),
            problem,
        })?;
        check_schedule(flow)?;
    }
    Ok(())
}

/// Flow names must be unique and must name distinct random streams.
fn check_names(config: &SimConfig) -> Result<(), SimError> {
    let mut hashed: Vec<(u64, &str)> = config
        .flows
        .iter()
        .map(|f| (fnv1a64(f.name.as_bytes()), f.name.as_str()))
        .collect();
    hashed.sort_unstable();
    for w in hashed.windows(2) {
        if w[0].1 == w[1].1 {
            return Err(SimError::DuplicateFlow {
                name: w[0].1.to_owned(),
            });
        }
        if w[0].0 == w[1].0 {
            return Err(SimError::StreamCollision {
                first: w[0].1.to_owned(),
                second: w[1].1.to_owned(),
            });
        }
    }
    Ok(())
}

/// TCP needs a reverse route leading from the sink's node back to the source's, UDP
/// has none.
fn check_transport(config: &SimConfig, flow: &FlowConfig) -> Result<(), SimError> {
    let problem = |problem: String| SimError::Reverse {
        flow: flow.name.clone(),
        problem,
    };
    let tcp = match &flow.transport {
        Transport::Udp if flow.reverse.is_empty() => return Ok(()),
        Transport::Udp => {
            return Err(problem(
                "a UDP flow sends nothing back; remove the reverse route or make the flow TCP"
                    .to_owned(),
            ));
        }
        Transport::Tcp(tcp) => tcp,
    };
    if flow.reverse.is_empty() {
        return Err(problem(
            "a TCP flow needs a reverse route for its acknowledgements; give the links \
             from the sink's node back to the source's"
                .to_owned(),
        ));
    }
    check_route(config, flow, &flow.reverse).map_err(|e| problem(e.to_string()))?;
    let node = |hop: &Hop, end: bool| {
        let link = &config.links[hop.link.0 as usize];
        let id = if end { link.to } else { link.from };
        (id, config.nodes[id.0 as usize].name.as_str())
    };
    let (sink, sink_name) = node(&flow.route[flow.route.len() - 1], true);
    let (source, source_name) = node(&flow.route[0], false);
    let (first, first_name) = node(&flow.reverse[0], false);
    let (last, last_name) = node(&flow.reverse[flow.reverse.len() - 1], true);
    if first != sink {
        return Err(problem(format!(
            "it starts at node `{first_name}`, not at the sink's node `{sink_name}` where \
             the route ends; start it there"
        )));
    }
    if last != source {
        return Err(problem(format!(
            "it ends at node `{last_name}`, not at the source's node `{source_name}` where \
             the route starts; end it there"
        )));
    }
    tcp::check(tcp).map_err(|problem| SimError::Transport {
        flow: flow.name.clone(),
        problem,
    })
}

/// One of the flow's routes (`hops`: its route or its reverse route).
fn check_route(config: &SimConfig, flow: &FlowConfig, hops: &[Hop]) -> Result<(), SimError> {
    let name = || flow.name.clone();
    if hops.is_empty() {
        return Err(SimError::EmptyRoute { flow: name() });
    }
    if hops.len() > usize::from(u16::MAX) {
        return Err(SimError::RouteTooLong {
            flow: name(),
            hops: hops.len(),
        });
    }
    for (i, hop) in hops.iter().enumerate() {
        let Some(link) = config.links.get(hop.link.0 as usize) else {
            return Err(SimError::UnknownLink {
                flow: name(),
                hop: i,
                link: hop.link.0,
                links: config.links.len(),
            });
        };
        if i > 0 {
            let prev = &config.links[hops[i - 1].link.0 as usize];
            if prev.to != link.from {
                return Err(SimError::Disconnected {
                    flow: name(),
                    hop: i,
                    previous: prev.name.clone(),
                    previous_to: config.nodes[prev.to.0 as usize].name.clone(),
                    link: link.name.clone(),
                });
            }
        }
        let tree = &link.classes;
        if !tree.is_leaf(hop.class) {
            let class = if hop.class.index() < tree.len() {
                tree.get(hop.class).name().to_owned()
            } else {
                format!("#{}", hop.class.0)
            };
            let leaves = tree
                .leaves()
                .iter()
                .map(|&l: &ClassId| format!("`{}`", tree.get(l).name()))
                .collect::<Vec<_>>()
                .join(", ");
            return Err(SimError::NotALeaf {
                flow: name(),
                hop: i,
                link: link.name.clone(),
                class,
                leaves: if leaves.is_empty() {
                    "(the tree has no leaf)".to_owned()
                } else {
                    leaves
                },
            });
        }
    }
    Ok(())
}

fn check_schedule(flow: &FlowConfig) -> Result<(), SimError> {
    let problem = |problem: String| SimError::Schedule {
        flow: flow.name.clone(),
        problem,
    };
    for (i, &(start, stop)) in flow.schedule.on.iter().enumerate() {
        if start >= stop {
            return Err(problem(format!(
                "interval {i} [{} ns, {} ns) is empty; give a start before the stop",
                start.0, stop.0
            )));
        }
        if i > 0 && flow.schedule.on[i - 1].1 > start {
            return Err(problem(format!(
                "interval {i} starts at {} ns, before interval {} ends at {} ns; sort the \
                 intervals and merge overlapping ones",
                start.0,
                i - 1,
                flow.schedule.on[i - 1].1.0
            )));
        }
    }
    Ok(())
}
