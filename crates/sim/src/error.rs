//! Why a configuration cannot be simulated.
//!
//! The scenario loader should catch these first, with file positions; the simulator
//! re-checks everything it relies on so that it never panics on a [`SimConfig`] built by
//! hand. Every message names the link, flow and hop concerned and says how to fix it.
//!
//! [`SimConfig`]: crate::config::SimConfig

use std::fmt;

use linkshare_core::hierarchy::ClassId;
use linkshare_core::sched::BuildError;
use linkshare_core::units::Rate;

/// A configuration that cannot run. See the [module docs](self).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SimError {
    /// `measure.window` is zero. Fix: give a positive window such as 200 ms.
    ZeroWindow,
    /// The measurement window is so short that the throughput and backlog series would
    /// not fit in memory. Fix: lengthen the window.
    TooManyWindows {
        /// Number of windows in the run.
        windows: u64,
        /// Window cells (windows times leaves, over all links).
        cells: u64,
        /// The most cells a run may measure.
        limit: u64,
    },
    /// A measured objective names a link that does not exist or a class that is not a
    /// leaf of it. Fix: name a leaf of an existing link.
    Objective {
        /// The link index named.
        link: u32,
        /// The class named.
        class: ClassId,
    },
    /// A link names a node index that does not exist. Fix: use an index into `nodes`.
    UnknownNode {
        /// The link.
        link: String,
        /// The index it names.
        node: u32,
        /// Number of nodes.
        nodes: usize,
    },
    /// The root of a link's class tree does not have the link's rate. Fix: build the
    /// tree with the link's rate.
    LinkRate {
        /// The link.
        link: String,
        /// `LinkConfig::rate`.
        link_rate: Rate,
        /// The tree's root rate.
        tree_rate: Rate,
    },
    /// The discipline cannot be built for the link's tree.
    Scheduler {
        /// The link.
        link: String,
        /// What the discipline reported.
        error: BuildError,
    },
    /// The link's tree has per-flow classes and its discipline cannot reset a class
    /// ([`linkshare_core::Scheduler::resets_classes`]). Fix: another discipline.
    PerFlowUnsupported {
        /// The link.
        link: String,
        /// The discipline's name.
        scheduler: String,
    },
    /// Two flows have the same name (names seed the flows' random streams). Fix: rename
    /// one.
    DuplicateFlow {
        /// The name.
        name: String,
    },
    /// Two distinct flow names hash to the same random stream. Fix: rename one.
    StreamCollision {
        /// One flow.
        first: String,
        /// The other.
        second: String,
    },
    /// A flow's route is empty. Fix: give at least one hop.
    EmptyRoute {
        /// The flow.
        flow: String,
    },
    /// A flow's route has more hops than a packet can count (65 535).
    RouteTooLong {
        /// The flow.
        flow: String,
        /// Its number of hops.
        hops: usize,
    },
    /// A hop names a link index that does not exist.
    UnknownLink {
        /// The flow.
        flow: String,
        /// Index of the hop in the route (0 = first).
        hop: usize,
        /// The link index it names.
        link: u32,
        /// Number of links.
        links: usize,
    },
    /// Consecutive hops do not share a node.
    Disconnected {
        /// The flow.
        flow: String,
        /// Index of the hop whose link does not start where the previous one ends.
        hop: usize,
        /// The previous hop's link.
        previous: String,
        /// The node where the previous link ends.
        previous_to: String,
        /// This hop's link, which starts elsewhere.
        link: String,
    },
    /// A hop's class is not a leaf of that link's tree.
    NotALeaf {
        /// The flow.
        flow: String,
        /// Index of the hop in the route.
        hop: usize,
        /// The hop's link.
        link: String,
        /// The class as named (its name, or its id if the tree has no such class).
        class: String,
        /// The leaves of the link's tree, comma-separated.
        leaves: String,
    },
    /// A source's parameters cannot generate traffic.
    Source {
        /// The flow.
        flow: String,
        /// What is wrong and how to fix it.
        problem: String,
    },
    /// The flow's reverse route is missing, unexpected, or does not lead back.
    Reverse {
        /// The flow.
        flow: String,
        /// What is wrong, and the fix.
        problem: String,
    },
    /// The flow's transport parameters are unusable.
    Transport {
        /// The flow.
        flow: String,
        /// What is wrong, and the fix.
        problem: String,
    },
    /// The flow's ON schedule is malformed.
    Schedule {
        /// The flow.
        flow: String,
        /// What is wrong and how to fix it.
        problem: String,
    },
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Objective { link, class } => write!(
                f,
                "an objective to measure names class {} of link {link}, which is not a leaf \
                 of an existing link; name a leaf of one of the links",
                class.index()
            ),
            SimError::ZeroWindow => {
                f.write_str("the measurement window is zero; give a positive window such as 200ms")
            }
            SimError::TooManyWindows {
                windows,
                cells,
                limit,
            } => write!(
                f,
                "the measurement window splits the run into {windows} windows, {cells} \
                 window series values over all leaves of all links, more than the {limit} \
                 supported; use a longer window"
            ),
            SimError::UnknownNode { link, node, nodes } => write!(
                f,
                "link `{link}`: node index {node} does not exist (there are {nodes} nodes); \
                 use an index into the node list"
            ),
            SimError::LinkRate {
                link,
                link_rate,
                tree_rate,
            } => write!(
                f,
                "link `{link}`: its class tree's root rate {} bit/s differs from the link \
                 rate {} bit/s; build the tree with the link's rate",
                tree_rate.0, link_rate.0
            ),
            SimError::Scheduler { link, error } => write!(f, "link `{link}`: {error}"),
            SimError::PerFlowUnsupported { link, scheduler } => write!(
                f,
                "link `{link}` has per-flow classes, and its scheduler `{scheduler}` cannot \
                 reset a class for a new flow; use a discipline that can (fifo, prio, drr, \
                 hls, hfsc, fsc)"
            ),
            SimError::DuplicateFlow { name } => write!(
                f,
                "two flows are named `{name}`; flow names must be unique (they seed each \
                 flow's random stream)"
            ),
            SimError::StreamCollision { first, second } => write!(
                f,
                "flows `{first}` and `{second}` hash to the same random stream; rename one"
            ),
            SimError::EmptyRoute { flow } => {
                write!(
                    f,
                    "flow `{flow}`: the route is empty; give at least one hop"
                )
            }
            SimError::RouteTooLong { flow, hops } => write!(
                f,
                "flow `{flow}`: the route has {hops} hops, more than the 65535 supported"
            ),
            SimError::UnknownLink {
                flow,
                hop,
                link,
                links,
            } => write!(
                f,
                "flow `{flow}`, hop {hop}: link index {link} does not exist (there are \
                 {links} links); use an index into the link list"
            ),
            SimError::Disconnected {
                flow,
                hop,
                previous,
                previous_to,
                link,
            } => {
                write!(
                    f,
                    "flow `{flow}`, hop {hop}: link `{link}` does not start at node \
                     `{previous_to}`, where the previous hop's link `{previous}` ends; \
                     consecutive hops must share a node"
                )
            }
            SimError::NotALeaf {
                flow,
                hop,
                link,
                class,
                leaves,
            } => write!(
                f,
                "flow `{flow}`, hop {hop}: class `{class}` is not a leaf of link `{link}`; \
                 packets can only be queued in a leaf: one of {leaves}"
            ),
            SimError::Reverse { flow, problem } => {
                write!(f, "flow `{flow}`, reverse route: {problem}")
            }
            SimError::Transport { flow, problem } => write!(f, "flow `{flow}`, tcp: {problem}"),
            SimError::Source { flow, problem } => write!(f, "flow `{flow}`, source: {problem}"),
            SimError::Schedule { flow, problem } => {
                write!(f, "flow `{flow}`, schedule: {problem}")
            }
        }
    }
}

impl std::error::Error for SimError {}
