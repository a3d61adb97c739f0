//! One record per class: what a packet reads and writes of a class, side by side in
//! two cache lines, where separate arrays cost a line (and a bounds check) each.
//!
//! The first line holds what a mode change needs: the class's [`Place`] (with its mode
//! and activity), its wait-queue [`Node`] and its buckets' tokens and checkpoint. A
//! class coming due in the wait queue and a leaf backlogged again read only that line;
//! the leaf being served also reads the second, with the buckets' depths and rates and
//! its round robin's deficit and quantum.

use super::bucket::Bucket;
use super::topology::Place;
use super::wait::{Node, Nodes};

/// A class's record. See the [module docs](self).
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub(super) struct Class {
    /// Where the class sits, its mode and activity (changed by
    /// [`super::levels::Levels`]).
    pub(super) place: Place,
    /// Where it is in the wait queue of its level (module `wait`; its items are class
    /// ids).
    pub(super) wait: Node,
    /// Its assured and ceiling buckets, tokens and checkpoint first (the end of the
    /// first line).
    pub(super) bucket: Bucket,
    /// A leaf's DRR deficit when served at level 0, bytes (Linux `deficit[0]`; the
    /// deficits of the levels it borrows at are kept apart).
    pub(super) deficit: i64,
    /// A leaf's quantum, bytes (0 for other classes).
    pub(super) quantum: i64,
}

const _: () = assert!(size_of::<Class>() == 128);

/// The wait-queue nodes of the class records, and nothing else of them.
pub(super) struct WaitNodes<'a>(pub(super) &'a mut [Class]);

impl Nodes for WaitNodes<'_> {
    #[inline]
    fn node(&mut self, item: u32) -> &mut Node {
        &mut self.0[item as usize].wait
    }
}
