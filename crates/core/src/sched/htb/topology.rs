//! The shape of the class tree as HTB's structures address it: parents, levels, and the
//! position that numbers a class among its siblings.
//!
//! Linux sorts every row and feed by class id. Class ids here are [`ClassId`]s: a row
//! holds class ids themselves, and a feed the positions of the children in its owner's
//! list of children ([`Topology::children`]), which is in id order, so a child's
//! position orders it exactly as Linux's class id does.

use super::bucket::Mode;
use super::config::{ClassParams, MAX_DEPTH, PRIORITIES};
use crate::hierarchy::{ClassId, ClassTree};

/// Marks the absence of a class (the link's parent, a leaf's feeds).
pub(super) const NONE: u32 = u32::MAX;

/// Index of the link, which is always class 0.
pub(super) const ROOT: u32 = ClassId::ROOT.0;

/// Where one class sits, and how it is linked: what a relink reads of it, in 16 bytes
/// (four classes to a cache line).
#[derive(Clone, Copy, Debug)]
pub(super) struct Place {
    /// The parent; [`NONE`] for the link.
    pub(super) parent: u32,
    /// Position among the parent's children.
    pub(super) child_pos: u32,
    /// Linux level.
    pub(super) level: u8,
    /// Priority (leaves).
    pub(super) priority: u8,
    /// Linux `cmode`: the mode as of the class's last update (kept and changed by
    /// [`super::levels::Levels`]).
    pub(super) mode: Mode,
    /// Linux `prio_activity`: bit `p` set if the class is in a row or feeds its parent
    /// at priority `p` (kept and changed by [`super::levels::Levels`]).
    pub(super) activity: u8,
}

/// See the [module docs](self).
#[derive(Clone, Debug)]
pub(super) struct Topology {
    /// Children of each class, in id order.
    pub(super) children: Vec<Vec<u32>>,
    /// Classes of each level, in id order.
    pub(super) by_level: [Vec<u32>; MAX_DEPTH],
    /// Index of a class's first feed (one per priority) among the turns of
    /// [`super::levels::Levels`]; [`NONE`] for a class without children.
    pub(super) feed: Vec<u32>,
}

impl Topology {
    /// Rows come first among the turns: `MAX_DEPTH × PRIORITIES` of them.
    pub(super) const ROWS: usize = MAX_DEPTH * PRIORITIES;

    /// The topology of `tree` with the levels and priorities of `params`, and where each
    /// class sits (green and inactive).
    pub(super) fn new(tree: &ClassTree, params: &[ClassParams]) -> (Topology, Vec<Place>) {
        let n = tree.len();
        let mut by_level: [Vec<u32>; MAX_DEPTH] = Default::default();
        let mut class: Vec<Place> = tree
            .classes()
            .iter()
            .zip(params)
            .map(|(c, p)| Place {
                parent: c.parent.map_or(NONE, |p| p.0),
                child_pos: 0,
                level: p.level,
                priority: p.priority,
                mode: Mode::CanSend,
                activity: 0,
            })
            .collect();
        for c in tree.classes() {
            by_level[usize::from(params[c.id.index()].level)].push(c.id.0);
        }
        let mut feed = vec![NONE; n];
        let mut next_feed = Self::ROWS as u32;
        for c in tree.classes() {
            for (k, kid) in c.children.iter().enumerate() {
                class[kid.index()].child_pos = k as u32;
            }
            if !c.children.is_empty() {
                feed[c.id.index()] = next_feed;
                next_feed += PRIORITIES as u32;
            }
        }
        let topo = Topology {
            children: tree
                .classes()
                .iter()
                .map(|c| c.children.iter().map(|k| k.0).collect())
                .collect(),
            by_level,
            feed,
        };
        (topo, class)
    }

    /// Number of turns (rows, then feeds).
    pub(super) fn turns(&self) -> usize {
        Self::ROWS + PRIORITIES * self.feed.iter().filter(|&&f| f != NONE).count()
    }

    /// Index of the row of `level` and `prio` among the turns.
    #[inline]
    pub(super) fn row(level: u8, prio: u32) -> usize {
        usize::from(level) * PRIORITIES + prio as usize
    }
}
