//! Checks a [`SimConfig`] before anything is built, so the engine never panics on it.

use linkshare_core::hierarchy::ClassId;
use linkshare_core::units::Duration;

use crate::config::{FlowConfig, SimConfig};
use crate::error::SimError;
use crate::rng::fnv1a64;
use crate::source;

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
        return Err(SimError::TooManyWindows { windows, cells });
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
    check_names(config)?;
    for flow in &config.flows {
        check_route(config, flow)?;
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

fn check_route(config: &SimConfig, flow: &FlowConfig) -> Result<(), SimError> {
    let name = || flow.name.clone();
    if flow.route.is_empty() {
        return Err(SimError::EmptyRoute { flow: name() });
    }
    if flow.route.len() > usize::from(u16::MAX) {
        return Err(SimError::RouteTooLong {
            flow: name(),
            hops: flow.route.len(),
        });
    }
    for (i, hop) in flow.route.iter().enumerate() {
        let Some(link) = config.links.get(hop.link.0 as usize) else {
            return Err(SimError::UnknownLink {
                flow: name(),
                hop: i,
                link: hop.link.0,
                links: config.links.len(),
            });
        };
        if i > 0 {
            let prev = &config.links[flow.route[i - 1].link.0 as usize];
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
