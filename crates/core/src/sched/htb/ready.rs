//! When can HTB next send? The exact earliest instant, kept up to date incrementally, so
//! that `poll_at` is honest (Linux only knows its next *event*, a mode change that may
//! not let any packet out).
//!
//! Between two charges a class's mode only improves with time (red → yellow → green):
//! it is not red from `Y = t_c + max(0, −ctokens)` on, and green from
//! `G = t_c + max(0, −tokens, −ctokens)` on
//! ([`super::bucket::Bucket::not_red_from`], [`super::bucket::Bucket::green_from`]). A
//! backlogged leaf can send at `t` if some class on its path
//! to the link is green at `t` and every class below that one is not red at `t`; so,
//! bottom-up over the tree, with `∞` for a class without backlog below it:
//!
//! * `R(c)`: earliest instant from which some backlogged leaf under `c` has a path up to
//!   and including `c` that is nowhere red. Leaf: `Y`. Interior:
//!   `max(Y_c, min over children R(child))`.
//! * `S(c)`: earliest instant from which some backlogged leaf under `c` can send through
//!   a lender under or at `c`. Leaf: `G`. Interior:
//!   `min(min over children S(child), max(G_c, min over children R(child)))`.
//!
//! The link is never out of tokens (`Y = G = 0`), so `S(link)` is when HTB can next send.
//! `Y` and `G` change only when a class is charged, and backlog only at leaves, so after
//! each change the values are recomputed along one path, each interior class keeping
//! its children's `R` and `S` in two [`IndexedHeap`]s: O(depth · log children).
//!
//! The recomputation is deferred: a charge or a change of backlog only marks the leaf
//! ([`Readiness::mark`]), and the marked paths are recomputed ([`Readiness::flush`])
//! when `S(link)` is needed, that is when no row holds a class (see
//! [`super::Htb::settle`]). While a row does, a packet can be sent now and later (modes
//! only improve with time until the next charge), and `poll_at` answers `Now` without
//! `S`. Under load the rows are rarely all empty, so most packets cost no recomputation.

use super::class::Class;
use super::topology::{NONE, ROOT, Topology};
use crate::ds::IndexedHeap;
use crate::units::Instant;

/// No backlogged leaf below.
const NEVER: u64 = u64::MAX;

/// `R` and `S` of every class. See the [module docs](self).
#[derive(Clone, Debug)]
pub(super) struct Readiness {
    /// `R` of each class, ns.
    reach: Vec<u64>,
    /// `S` of each class, ns.
    send: Vec<u64>,
    /// Children's `R`, keyed by child position (interior classes; empty for leaves).
    reach_kids: Vec<IndexedHeap>,
    /// Children's `S`, keyed by child position.
    send_kids: Vec<IndexedHeap>,
    /// Leaves whose path is to be recomputed, each once.
    dirty: Vec<u32>,
    /// Whether each class is in `dirty`.
    is_dirty: Vec<bool>,
}

/// Sets the key of `pos` in `heap`, or removes it for [`NEVER`]; returns the minimum.
#[inline]
fn update(heap: &mut IndexedHeap, pos: u32, key: u64) -> u64 {
    if key == NEVER {
        heap.remove(pos);
    } else {
        heap.set(pos, key);
    }
    heap.peek().map_or(NEVER, |(_, k)| k)
}

impl Readiness {
    /// No backlog anywhere.
    pub(super) fn new(topo: &Topology) -> Readiness {
        let n = topo.children.len();
        let heaps = || -> Vec<IndexedHeap> {
            topo.children
                .iter()
                .map(|kids| IndexedHeap::new(kids.len()))
                .collect()
        };
        Readiness {
            reach: vec![NEVER; n],
            send: vec![NEVER; n],
            reach_kids: heaps(),
            send_kids: heaps(),
            dirty: Vec::with_capacity(n),
            is_dirty: vec![false; n],
        }
    }

    /// The earliest instant at which a packet can be sent, if any leaf is backlogged.
    /// Only after a [`Readiness::flush`] with nothing marked since.
    #[inline]
    pub(super) fn earliest(&self) -> Option<Instant> {
        debug_assert!(self.dirty.is_empty(), "readiness read before a flush");
        let s = self.send[ROOT as usize];
        (s != NEVER).then_some(Instant(s))
    }

    /// Notes that `leaf`'s backlog or the buckets of classes on its path changed.
    #[inline]
    pub(super) fn mark(&mut self, leaf: u32) {
        let flag = &mut self.is_dirty[leaf as usize];
        if !*flag {
            *flag = true;
            self.dirty.push(leaf);
        }
    }

    /// Recomputes the paths of the marked leaves of classes `class`; `backlogged` tells
    /// whether a leaf holds packets. The order does not matter: a class's values are
    /// recomputed from its children's current ones each time a marked path passes
    /// through it, the last time after all its marked descendants.
    pub(super) fn flush(&mut self, class: &[Class], backlogged: impl Fn(u32) -> bool) {
        let mut dirty = core::mem::take(&mut self.dirty);
        for &leaf in &dirty {
            self.is_dirty[leaf as usize] = false;
            self.refresh(class, leaf, backlogged(leaf));
        }
        dirty.clear();
        self.dirty = dirty;
    }

    /// Recomputes `R` and `S` from `leaf` (backlogged or not) up to the link.
    fn refresh(&mut self, class: &[Class], leaf: u32, backlogged: bool) {
        let b = &class[leaf as usize].bucket;
        let (mut reach, mut send) = if backlogged {
            (b.not_red_from().0, b.green_from().0)
        } else {
            (NEVER, NEVER)
        };
        let mut c = leaf;
        loop {
            self.reach[c as usize] = reach;
            self.send[c as usize] = send;
            let place = &class[c as usize].place;
            let (p, pos) = (place.parent, place.child_pos);
            if p == NONE {
                return;
            }
            let kids_reach = update(&mut self.reach_kids[p as usize], pos, reach);
            let kids_send = update(&mut self.send_kids[p as usize], pos, send);
            let (y, g) = if p == ROOT || kids_reach == NEVER {
                (0, 0)
            } else {
                let b = &class[p as usize].bucket;
                (b.not_red_from().0, b.green_from().0)
            };
            reach = if kids_reach == NEVER {
                NEVER
            } else {
                y.max(kids_reach)
            };
            send = kids_send.min(g.max(reach));
            c = p;
        }
    }
}
