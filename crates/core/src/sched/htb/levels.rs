//! Rows and feeds: which classes may send at which level and priority, and the
//! round-robin lookup of the next leaf (Linux's "feed tree").
//!
//! * A **row** `(level, prio)` holds the *green* classes of that level that have, at
//!   `prio`, a backlogged leaf to serve: the leaf itself (level 0), or yellow
//!   descendants feeding it.
//! * A **feed** `(class, prio)` of an interior class holds its *yellow* children that
//!   have a backlogged leaf at `prio` below them (or are such a leaf).
//! * A class's *activity* is the set of priorities at which it is in a row or feeds its
//!   parent: a backlogged leaf's own priority; for an interior class, the priorities
//!   of its non-empty feeds.
//!
//! [`Levels::activate`] and [`Levels::deactivate`] link a class into (or out of) its
//! parent's feed while it is yellow, climbing as long as the parent's feed was empty and
//! the parent is yellow too, and end in the row of the first green class reached; a red
//! class is linked nowhere, which cuts its subtree off. [`Levels::lookup`] descends
//! from a row through the feeds, following each one's round-robin position, to a leaf.
//!
//! The class records (module `class`) live here, since a relink reads and writes the
//! place, mode and activity they hold; the rest of HTB reaches the buckets and deficits
//! through [`Levels::class_mut`] and the wait-queue nodes through
//! [`Levels::wait_nodes`]. A leaf's relink is written out for its single priority
//! ([`Levels::set_leaf_mode`]) and inlined where the caller knows it has a leaf.

use super::bucket::Mode;
use super::class::{Class, WaitNodes};
use super::config::{MAX_DEPTH, PRIORITIES};
use super::topology::{NONE, Place, Topology};
use crate::ds::IdSet;

/// Every row and feed, and the class records and [`Topology`] they link, which it owns.
/// See the [module docs](self).
#[derive(Clone, Debug)]
pub(super) struct Levels {
    /// The shape of the tree.
    topo: Topology,
    /// Every class's record (module `class`); of its [`Place`], this module changes the
    /// mode (Linux `cmode`, as of the class's last update) and the activity (Linux
    /// `prio_activity`: bit `p` set if active at priority `p`).
    class: Vec<Class>,
    /// Rows (index [`Topology::row`]), then feeds (index [`Topology::feed`] + prio).
    turns: Vec<Turn>,
    /// Linux `row_mask`: bit `p` of `row_mask[level]` set if that row is not empty.
    row_mask: [u8; MAX_DEPTH],
}

/// One row or feed: its members (class ids in a row, positions among the owner's
/// children in a feed; either way in class-id order, see [`super::topology`]) and the
/// round-robin position in it (Linux's `htb_prio`: tree, `ptr` and
/// `last_ptr_id`).
#[derive(Clone, Debug)]
struct Turn {
    /// The members.
    set: IdSet,
    /// The member whose turn it is; [`NONE`] past the last member (the next lookup
    /// rewinds to the first).
    ptr: u32,
    /// Unless [`NONE`], the member under `ptr` left the set: the lookup resumes at the
    /// first member at or after it.
    last: u32,
}

impl Turn {
    /// An empty row or feed over members `0..capacity`.
    fn new(capacity: usize) -> Turn {
        Turn {
            set: IdSet::new(capacity),
            ptr: NONE,
            last: NONE,
        }
    }

    /// Passes the turn to the next member ([`NONE`] past the last), as Linux's
    /// `htb_next_rb_node`.
    #[inline]
    fn advance(&mut self) {
        if self.ptr != NONE {
            self.ptr = self.set.next_after(self.ptr).unwrap_or(NONE);
        }
    }

    /// Removes member `pos` of a row: the turn passes on if it was `pos`'s.
    #[inline]
    fn remove_from_row(&mut self, pos: u32) {
        if self.ptr == pos {
            self.advance();
        }
        self.set.remove(pos);
    }

    /// Removes member `pos` of a feed: the position is forgotten if it was `pos`, but
    /// where it was is remembered.
    #[inline]
    fn remove_from_feed(&mut self, pos: u32) {
        if self.ptr == pos {
            self.last = pos;
            self.ptr = NONE;
        }
        self.set.remove(pos);
    }

    /// Makes `ptr` a member, resuming after a departure or rewinding; returns whether
    /// it had to rewind (the turn ran past the last member).
    #[inline]
    fn settle_ptr(&mut self) -> bool {
        if self.ptr == NONE && self.last != NONE {
            self.ptr = self.set.next_from(self.last).unwrap_or(NONE);
        }
        self.last = NONE;
        if self.ptr == NONE {
            self.ptr = self.set.first().unwrap_or(NONE);
            debug_assert!(self.ptr != NONE, "a linked row or feed is not empty");
            return true;
        }
        false
    }
}

/// The priorities set in `mask`, lowest first.
#[inline]
fn prios(mut mask: u8) -> impl Iterator<Item = u32> {
    core::iter::from_fn(move || {
        (mask != 0).then(|| {
            let p = mask.trailing_zeros();
            mask &= mask - 1;
            p
        })
    })
}

impl Levels {
    /// Every row and feed empty, over classes `class` (all inactive).
    pub(super) fn new(topo: Topology, class: Vec<Class>) -> Levels {
        let mut turns = Vec::with_capacity(topo.turns());
        for level in 0..MAX_DEPTH {
            // Class ids up to the largest of the level.
            let ids = topo.by_level[level].last().map_or(0, |&c| c as usize + 1);
            turns.extend((0..PRIORITIES).map(|_| Turn::new(ids)));
        }
        for (c, &f) in topo.feed.iter().enumerate() {
            if f != NONE {
                debug_assert_eq!(f as usize, turns.len());
                let kids = topo.children[c].len();
                turns.extend((0..PRIORITIES).map(|_| Turn::new(kids)));
            }
        }
        Levels {
            topo,
            class,
            turns,
            row_mask: [0; MAX_DEPTH],
        }
    }

    /// Every class's record.
    #[inline]
    pub(super) fn classes(&self) -> &[Class] {
        &self.class
    }

    /// The record of class `c`.
    #[inline]
    pub(super) fn class(&self, c: u32) -> &Class {
        &self.class[c as usize]
    }

    /// The record of class `c`, to change its buckets and round-robin state (not its
    /// place, which is this module's).
    #[inline]
    pub(super) fn class_mut(&mut self, c: u32) -> &mut Class {
        &mut self.class[c as usize]
    }

    /// The wait-queue nodes of the class records.
    #[inline]
    pub(super) fn wait_nodes(&mut self) -> WaitNodes<'_> {
        WaitNodes(&mut self.class)
    }

    /// Where class `c` sits (and its mode and activity).
    #[inline]
    pub(super) fn place(&self, c: u32) -> &Place {
        &self.class[c as usize].place
    }

    /// The mode of class `c` as of its last update.
    #[inline]
    pub(super) fn mode(&self, c: u32) -> Mode {
        self.class[c as usize].place.mode
    }

    /// Whether some row holds a class.
    #[inline]
    pub(super) fn any_row(&self) -> bool {
        u64::from_ne_bytes(self.row_mask) != 0
    }

    /// The non-empty rows of `level`, as a priority mask.
    #[inline]
    pub(super) fn row_mask(&self, level: usize) -> u8 {
        self.row_mask[level]
    }

    #[inline]
    fn feed(&self, class: u32, prio: u32) -> usize {
        self.topo.feed[class as usize] as usize + prio as usize
    }

    /// Sets the mode of `c`, which is inactive (linked nowhere).
    #[inline]
    pub(super) fn set_idle_mode(&mut self, c: u32, mode: Mode) {
        let place = &mut self.class[c as usize].place;
        debug_assert_eq!(place.activity, 0);
        place.mode = mode;
    }

    /// Leaf `c` became backlogged: it becomes active at its priority (Linux
    /// `htb_activate`). A no-op if already active.
    #[inline]
    pub(super) fn activate_leaf(&mut self, c: u32) {
        let place = &mut self.class[c as usize].place;
        if place.activity == 0 {
            let prio = u32::from(place.priority);
            place.activity = 1 << prio;
            let place = *place;
            self.link_leaf(c, &place, prio);
        }
    }

    /// Leaf `c` has no packet left: it leaves its row or feed (Linux `htb_deactivate`).
    #[inline]
    pub(super) fn deactivate_leaf(&mut self, c: u32) {
        let place = &mut self.class[c as usize].place;
        let activity = place.activity;
        if activity != 0 {
            place.activity = 0;
            let place = *place;
            self.unlink_leaf(c, &place, activity.trailing_zeros());
        }
    }

    /// Sets the mode of `c`, moving it between its parent's feeds and its row as the
    /// mode requires (the structural part of Linux `htb_change_class_mode`).
    pub(super) fn set_mode(&mut self, c: u32, new: Mode) {
        let place = &mut self.class[c as usize].place;
        if place.level == 0 {
            self.set_leaf_mode(c, new);
            return;
        }
        let (old, activity) = (place.mode, place.activity);
        if new == old {
            return;
        }
        if activity != 0 && old != Mode::CantSend {
            self.deactivate(c, activity);
        }
        self.class[c as usize].place.mode = new;
        if activity != 0 && new != Mode::CantSend {
            self.activate(c, activity);
        }
    }

    /// [`Levels::set_mode`] for leaf `c`, written out for its single priority and
    /// inlined where the caller knows it has a leaf.
    #[inline(always)]
    pub(super) fn set_leaf_mode(&mut self, c: u32, new: Mode) {
        let place = &mut self.class[c as usize].place;
        let old = *place;
        if new == old.mode {
            return;
        }
        place.mode = new;
        if old.activity != 0 {
            let prio = old.activity.trailing_zeros();
            let now = *place;
            self.unlink_leaf(c, &old, prio);
            self.link_leaf(c, &now, prio);
        }
    }

    /// [`Levels::activate`] for leaf `leaf_id` of place `leaf` (mode set), active at
    /// `prio` only: the first step written out for one priority (row 0 or the parent's
    /// feed), the climb above left to `activate`.
    #[inline(always)]
    fn link_leaf(&mut self, leaf_id: u32, leaf: &Place, prio: u32) {
        let bit = 1 << prio;
        match leaf.mode {
            Mode::CanSend => {
                self.row_mask[0] |= bit;
                self.turns[Topology::row(0, prio)].set.insert(leaf_id);
            }
            Mode::MayBorrow => {
                let p = leaf.parent;
                let feed = self.feed(p, prio);
                let feed = &mut self.turns[feed];
                let was_empty = feed.set.is_empty();
                feed.set.insert(leaf.child_pos);
                if was_empty {
                    self.class[p as usize].place.activity |= bit;
                    self.activate(p, bit);
                }
            }
            Mode::CantSend => {}
        }
    }

    /// [`Levels::deactivate`] for leaf `leaf_id` of place `leaf` (mode still the old
    /// one), active at `prio` only (see [`Levels::link_leaf`]).
    #[inline(always)]
    fn unlink_leaf(&mut self, leaf_id: u32, leaf: &Place, prio: u32) {
        let bit = 1 << prio;
        match leaf.mode {
            Mode::CanSend => {
                let row = &mut self.turns[Topology::row(0, prio)];
                row.remove_from_row(leaf_id);
                if row.set.is_empty() {
                    self.row_mask[0] &= !bit;
                }
            }
            Mode::MayBorrow => {
                let p = leaf.parent;
                let feed = self.feed(p, prio);
                let feed = &mut self.turns[feed];
                feed.remove_from_feed(leaf.child_pos);
                if feed.set.is_empty() {
                    self.class[p as usize].place.activity &= !bit;
                    self.deactivate(p, bit);
                }
            }
            Mode::CantSend => {}
        }
    }

    /// Links `c` (mode set), active at the priorities of `mask`, into its parent's
    /// feeds if yellow, climbing while feeds were empty and parents yellow, and into
    /// the row of the first green class reached (Linux `htb_activate_prios`).
    #[inline(always)]
    fn activate(&mut self, c: u32, mask: u8) {
        let mut mask = mask;
        let mut id = c;
        let mut cl = self.class[c as usize].place;
        while cl.mode == Mode::MayBorrow && mask != 0 {
            let p = cl.parent;
            if p == NONE {
                break;
            }
            for prio in prios(mask) {
                let feed = self.feed(p, prio);
                let feed = &mut self.turns[feed];
                if !feed.set.is_empty() {
                    // The parent is already active at this priority: stop climbing it.
                    mask &= !(1 << prio);
                }
                feed.set.insert(cl.child_pos);
            }
            let parent = &mut self.class[p as usize].place;
            parent.activity |= mask;
            (id, cl) = (p, *parent);
        }
        if cl.mode == Mode::CanSend && mask != 0 {
            self.row_mask[usize::from(cl.level)] |= mask;
            for prio in prios(mask) {
                self.turns[Topology::row(cl.level, prio)].set.insert(id);
            }
        }
    }

    /// Unlinks `c` (mode still the old one), active at the priorities of `mask`, from
    /// its parent's feeds, climbing while feeds become empty, or from its row (Linux
    /// `htb_deactivate_prios`).
    #[inline(always)]
    fn deactivate(&mut self, c: u32, mask: u8) {
        let mut mask = mask;
        let mut id = c;
        let mut cl = self.class[c as usize].place;
        while cl.mode == Mode::MayBorrow && mask != 0 {
            let p = cl.parent;
            if p == NONE {
                break;
            }
            let removed = mask;
            mask = 0;
            for prio in prios(removed) {
                let feed = self.feed(p, prio);
                let feed = &mut self.turns[feed];
                feed.remove_from_feed(cl.child_pos);
                if feed.set.is_empty() {
                    mask |= 1 << prio;
                }
            }
            let parent = &mut self.class[p as usize].place;
            parent.activity &= !mask;
            (id, cl) = (p, *parent);
        }
        if cl.mode == Mode::CanSend && mask != 0 {
            let mut emptied = 0;
            for prio in prios(mask) {
                let row = &mut self.turns[Topology::row(cl.level, prio)];
                row.remove_from_row(id);
                if row.set.is_empty() {
                    emptied |= 1 << prio;
                }
            }
            self.row_mask[usize::from(cl.level)] &= !emptied;
        }
    }

    /// The leaf whose turn it is in row `(level, prio)`, which must not be empty
    /// (Linux `htb_lookup_leaf`). From the row, follow each turn's position down through
    /// the feeds; a position invalidated by a departure resumes at the next member; a
    /// feed whose position ran past its last member rewinds to its first and passes the
    /// turn at the level above to the next member.
    #[inline]
    pub(super) fn lookup(&mut self, level: u8, prio: u32) -> u32 {
        debug_assert!(self.row_mask[usize::from(level)] & (1 << prio) != 0);
        if level == 0 {
            // The members of a row of level 0 are leaves: the walk in short.
            let turn = &mut self.turns[Topology::row(0, prio)];
            turn.settle_ptr();
            return turn.ptr;
        }
        self.lookup_through_feeds(level, prio)
    }

    /// [`Levels::lookup`] for a row above level 0: down through the feeds.
    #[inline(never)]
    fn lookup_through_feeds(&mut self, level: u8, prio: u32) -> u32 {
        // Turn indices and the class that owns each (NONE for the row).
        let mut stack = [(0usize, NONE); MAX_DEPTH];
        stack[0] = (Topology::row(level, prio), NONE);
        let mut sp = 0;
        loop {
            let (t, owner) = stack[sp];
            let turn = &mut self.turns[t];
            if turn.settle_ptr() {
                if sp > 0 {
                    sp -= 1;
                    self.turns[stack[sp].0].advance();
                }
                continue;
            }
            let cl = if owner == NONE {
                turn.ptr
            } else {
                self.topo.children[owner as usize][turn.ptr as usize]
            };
            if self.class[cl as usize].place.level == 0 {
                return cl;
            }
            sp += 1;
            stack[sp] = (self.feed(cl, prio), cl);
        }
    }

    /// Passes the turn on after `leaf`, served at `level` and `prio`, used up its quantum:
    /// in row `(0, prio)` if it was served at level 0, else in its parent's feed.
    pub(super) fn pass_turn(&mut self, leaf: u32, level: u8, prio: u32) {
        let t = if level == 0 {
            Topology::row(0, prio)
        } else {
            self.feed(self.class[leaf as usize].place.parent, prio)
        };
        self.turns[t].advance();
    }
}
