//! Keshav FQ's settings and their validation.

use crate::ds::bids::Structure;
use crate::hierarchy::{ClassId, ClassTree, ConfigError, Limit, Origin};
use crate::sched::{BuildError, SchedulerKind, class_problem};
use crate::units::Bytes;

use super::round::MAX_LINK_RATE;

/// The default buffer: 10 000 packets, the default `limit` of Linux's fair-queueing
/// qdisc `sch_fq` (the paper sizes buffers in packets; its example gateway has 32K).
pub const DEFAULT_LIMIT: Limit = Limit::Packets(10_000);

/// The offset `δ^α` of one conversation, by class name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConversationDelta {
    /// The leaf class (the conversation).
    pub class: String,
    /// Its offset, in bytes of round number.
    pub delta: Bytes,
    /// Where it was written, when known.
    pub origin: Option<Origin>,
}

/// Keshav FQ's typed settings. Weights come from the class tree's `weight` (1 if not
/// given: the paper).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeshavConfig {
    /// The shared buffer `B` (the bounded heap's `MAX`): packets, as in the paper, or
    /// bytes. On overflow the largest bids are dropped.
    pub limit: Limit,
    /// The buffer structure (all give the same schedule; they differ in cost).
    pub structure: Structure,
    /// Whether the buffer counts the paper's elementary operations (reported by
    /// [`crate::sched::Scheduler::discipline_counters`], with the round number's heap
    /// exchanges, which are always counted). Only PERC has an uncounted
    /// form, [`crate::ds::bids::FastPerc`], which runs when this is `false` (the
    /// default); LINK, TREE and HEAP always count.
    pub count_operations: bool,
    /// The offset `δ` of every conversation not listed in `deltas`, in bytes of round
    /// number (0: plain fair queueing, bids are finish numbers).
    pub delta: Bytes,
    /// Per-conversation offsets.
    pub deltas: Vec<ConversationDelta>,
    /// Where `limit` was written, when known (for messages).
    pub limit_origin: Option<Origin>,
}

impl Default for KeshavConfig {
    /// [`DEFAULT_LIMIT`], PERC uncounted, `δ = 0` for every conversation.
    fn default() -> Self {
        KeshavConfig {
            limit: DEFAULT_LIMIT,
            structure: Structure::Perc,
            count_operations: false,
            delta: Bytes::ZERO,
            deltas: Vec::new(),
            limit_origin: None,
        }
    }
}

impl KeshavConfig {
    /// The offset of every class of `tree` by index (bytes), after [`validate`] passed.
    pub(super) fn deltas_of(&self, tree: &ClassTree) -> Vec<Bytes> {
        let mut d = vec![self.delta; tree.len()];
        for cd in &self.deltas {
            if let Some(id) = tree.id_of(&cd.class) {
                d[id.index()] = cd.delta;
            }
        }
        d
    }
}

/// Checks `config` against `tree`: every problem, each with its fix.
pub fn validate(tree: &ClassTree, config: &KeshavConfig) -> Result<(), BuildError> {
    let mut problems = Vec::new();
    let root = ClassId::ROOT;
    let rate = tree.link_rate();
    if rate > MAX_LINK_RATE {
        problems.push(class_problem(
            tree,
            root,
            "rate",
            format!("the link rate {rate} exceeds the {MAX_LINK_RATE} that keshav's exact round number supports"),
            format!("use a link rate of at most {MAX_LINK_RATE}"),
        ));
    }
    // The buffer is the discipline's, not the link's: its problems name the setting
    // (`keshav.limit`) and where it was written.
    let limit_problem = |problem: String, fix: String| ConfigError {
        class: tree.get(root).name().to_owned(),
        field: "keshav.limit",
        origin: config
            .limit_origin
            .clone()
            .or_else(|| tree.get(root).spec.origin.clone()),
        problem,
        fix,
    };
    match config.limit {
        Limit::Packets(0) | Limit::Bytes(Bytes(0)) => problems.push(limit_problem(
            "keshav's buffer limit is zero".into(),
            "give keshav a buffer of at least one packet, such as 1000 packets".into(),
        )),
        Limit::Bytes(b) => {
            let biggest = tree
                .leaves()
                .iter()
                .map(|&l| (tree.get(l).max_packet(), l))
                .max();
            if let Some((m, l)) = biggest
                && m > b
            {
                problems.push(limit_problem(
                    format!(
                        "keshav's buffer of {} bytes cannot hold one maximum-size packet of class `{}` ({} bytes)",
                        b.0,
                        tree.get(l).name(),
                        m.0
                    ),
                    format!("give keshav a buffer of at least {} bytes", m.0),
                ));
            }
        }
        Limit::Packets(_) => {}
    }
    for (i, cd) in config.deltas.iter().enumerate() {
        let problem = |problem: String, fix: String| ConfigError {
            class: cd.class.clone(),
            field: "delta",
            origin: cd.origin.clone(),
            problem,
            fix,
        };
        match tree.id_of(&cd.class) {
            None => problems.push(problem(
                format!(
                    "keshav gives an offset to `{}`, but no class has that name",
                    cd.class
                ),
                "name a leaf class of this link".into(),
            )),
            Some(id) if !tree.is_leaf(id) => problems.push(problem(
                format!("`{}` is not a leaf, so it is not a conversation", cd.class),
                "give offsets to leaf classes only".into(),
            )),
            Some(_) if config.deltas[..i].iter().any(|o| o.class == cd.class) => {
                problems.push(problem(
                    format!("`{}` is given an offset twice", cd.class),
                    "give each conversation at most one offset".into(),
                ));
            }
            Some(_) => {}
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(BuildError {
            kind: SchedulerKind::Keshav,
            problems,
        })
    }
}
