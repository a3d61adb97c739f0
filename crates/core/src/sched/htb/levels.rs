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

use super::bucket::Mode;
use super::config::{MAX_DEPTH, PRIORITIES};
use super::topology::{NONE, Topology};
use crate::ds::IdSet;

/// The mode and activity of every class, and every row and feed. See the
/// [module docs](self).
#[derive(Clone, Debug)]
pub(super) struct Levels {
    /// Linux `cmode`: the mode as of the class's last update.
    mode: Vec<Mode>,
    /// Linux `prio_activity`: bit `p` set if active at priority `p`.
    activity: Vec<u8>,
    /// Rows (index [`Topology::row`]), then feeds (index [`Topology::feed`] + prio).
    turns: Vec<Turn>,
    /// Linux `row_mask`: bit `p` of `row_mask[level]` set if that row is not empty.
    row_mask: [u8; MAX_DEPTH],
}

/// One row or feed: its members (positions in class-id order, see [`super::topology`])
/// and the round-robin position in it (Linux's `htb_prio`: tree, `ptr` and
/// `last_ptr_id`).
#[derive(Clone, Debug)]
struct Turn {
    /// The members.
    set: IdSet,
    /// The member whose turn it is; `None` past the last member (the next lookup
    /// rewinds to the first).
    ptr: Option<u32>,
    /// Set when the member under `ptr` left the set: the lookup resumes at the first
    /// member at or after it.
    last: Option<u32>,
}

impl Turn {
    /// An empty row or feed over positions `0..capacity`.
    fn new(capacity: usize) -> Turn {
        Turn {
            set: IdSet::new(capacity),
            ptr: None,
            last: None,
        }
    }

    /// Passes the turn to the next member (`None` past the last), as Linux's
    /// `htb_next_rb_node`.
    #[inline]
    fn advance(&mut self) {
        if let Some(p) = self.ptr {
            self.ptr = self.set.next_after(p);
        }
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
    /// Every class green and inactive, every row and feed empty.
    pub(super) fn new(topo: &Topology) -> Levels {
        let mut turns = Vec::with_capacity(topo.turns());
        for level in 0..MAX_DEPTH {
            let classes = topo.by_level[level].len();
            turns.extend((0..PRIORITIES).map(|_| Turn::new(classes)));
        }
        for (c, &f) in topo.feed.iter().enumerate() {
            if f != NONE {
                debug_assert_eq!(f as usize, turns.len());
                let kids = topo.children[c].len();
                turns.extend((0..PRIORITIES).map(|_| Turn::new(kids)));
            }
        }
        Levels {
            mode: vec![Mode::CanSend; topo.class.len()],
            activity: vec![0; topo.class.len()],
            turns,
            row_mask: [0; MAX_DEPTH],
        }
    }

    /// The mode of class `c` as of its last update.
    #[inline]
    pub(super) fn mode(&self, c: u32) -> Mode {
        self.mode[c as usize]
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
    fn feed(topo: &Topology, class: u32, prio: u32) -> usize {
        topo.feed[class as usize] as usize + prio as usize
    }

    /// Sets the mode of `c`, which is inactive (linked nowhere).
    #[inline]
    pub(super) fn set_idle_mode(&mut self, c: u32, mode: Mode) {
        debug_assert_eq!(self.activity[c as usize], 0);
        self.mode[c as usize] = mode;
    }

    /// Leaf `c` became backlogged: it becomes active at its priority (Linux
    /// `htb_activate`). A no-op if already active.
    pub(super) fn activate_leaf(&mut self, topo: &Topology, c: u32) {
        if self.activity[c as usize] == 0 {
            let prio = u32::from(topo.class[c as usize].priority);
            self.activity[c as usize] = 1 << prio;
            self.link_leaf(topo, c, prio);
        }
    }

    /// Leaf `c` has no packet left: it leaves its row or feed (Linux `htb_deactivate`).
    pub(super) fn deactivate_leaf(&mut self, topo: &Topology, c: u32) {
        let activity = self.activity[c as usize];
        if activity != 0 {
            self.unlink_leaf(topo, c, activity.trailing_zeros());
            self.activity[c as usize] = 0;
        }
    }

    /// Sets the mode of `c`, moving it between its parent's feeds and its row as the
    /// mode requires (the structural part of Linux `htb_change_class_mode`).
    pub(super) fn set_mode(&mut self, topo: &Topology, c: u32, new: Mode) {
        let old = self.mode[c as usize];
        if new == old {
            return;
        }
        let activity = self.activity[c as usize];
        if topo.class[c as usize].level == 0 {
            // A leaf: active at one priority at most, the common case made short.
            if activity != 0 {
                let prio = activity.trailing_zeros();
                self.unlink_leaf(topo, c, prio);
                self.mode[c as usize] = new;
                self.link_leaf(topo, c, prio);
            } else {
                self.mode[c as usize] = new;
            }
            return;
        }
        if activity != 0 && old != Mode::CantSend {
            self.deactivate(topo, c, activity);
        }
        self.mode[c as usize] = new;
        if activity != 0 && new != Mode::CantSend {
            self.activate(topo, c, activity);
        }
    }

    /// [`Levels::activate`] for leaf `c` (mode set), active at `prio` only: the first
    /// step written out for one priority (row 0 or the parent's feed), the climb
    /// above left to `activate`.
    #[inline(always)]
    fn link_leaf(&mut self, topo: &Topology, c: u32, prio: u32) {
        let bit = 1 << prio;
        match self.mode[c as usize] {
            Mode::CanSend => {
                self.row_mask[0] |= bit;
                self.turns[Topology::row(0, prio)]
                    .set
                    .insert(topo.class[c as usize].level_pos);
            }
            Mode::MayBorrow => {
                let p = topo.class[c as usize].parent;
                let feed = &mut self.turns[Self::feed(topo, p, prio)];
                let was_empty = feed.set.is_empty();
                feed.set.insert(topo.class[c as usize].child_pos);
                if was_empty {
                    self.activity[p as usize] |= bit;
                    self.activate(topo, p, bit);
                }
            }
            Mode::CantSend => {}
        }
    }

    /// [`Levels::deactivate`] for leaf `c` (mode still the old one), active at `prio`
    /// only (see [`Levels::link_leaf`]).
    #[inline(always)]
    fn unlink_leaf(&mut self, topo: &Topology, c: u32, prio: u32) {
        let bit = 1 << prio;
        match self.mode[c as usize] {
            Mode::CanSend => {
                let pos = topo.class[c as usize].level_pos;
                let row = &mut self.turns[Topology::row(0, prio)];
                if row.ptr == Some(pos) {
                    row.advance();
                }
                row.set.remove(pos);
                if row.set.is_empty() {
                    self.row_mask[0] &= !bit;
                }
            }
            Mode::MayBorrow => {
                let p = topo.class[c as usize].parent;
                let pos = topo.class[c as usize].child_pos;
                let feed = &mut self.turns[Self::feed(topo, p, prio)];
                if feed.ptr == Some(pos) {
                    feed.last = Some(pos);
                    feed.ptr = None;
                }
                feed.set.remove(pos);
                if feed.set.is_empty() {
                    self.activity[p as usize] &= !bit;
                    self.deactivate(topo, p, bit);
                }
            }
            Mode::CantSend => {}
        }
    }

    /// Links `c` (mode set), active at the priorities of `mask`, into its parent's
    /// feeds if yellow, climbing while feeds were empty and parents yellow, and into
    /// the row of the first green class reached (Linux `htb_activate_prios`).
    #[inline(always)]
    fn activate(&mut self, topo: &Topology, c: u32, mask: u8) {
        let mut mask = mask;
        let mut cl = c;
        while self.mode[cl as usize] == Mode::MayBorrow && mask != 0 {
            let p = topo.class[cl as usize].parent;
            if p == NONE {
                break;
            }
            let pos = topo.class[cl as usize].child_pos;
            for prio in prios(mask) {
                let feed = &mut self.turns[Self::feed(topo, p, prio)];
                if !feed.set.is_empty() {
                    // The parent is already active at this priority: stop climbing it.
                    mask &= !(1 << prio);
                }
                feed.set.insert(pos);
            }
            self.activity[p as usize] |= mask;
            cl = p;
        }
        if self.mode[cl as usize] == Mode::CanSend && mask != 0 {
            let level = topo.class[cl as usize].level;
            self.row_mask[usize::from(level)] |= mask;
            for prio in prios(mask) {
                self.turns[Topology::row(level, prio)]
                    .set
                    .insert(topo.class[cl as usize].level_pos);
            }
        }
    }

    /// Unlinks `c` (mode still the old one), active at the priorities of `mask`, from
    /// its parent's feeds, climbing while feeds become empty, or from its row (Linux
    /// `htb_deactivate_prios`).
    #[inline(always)]
    fn deactivate(&mut self, topo: &Topology, c: u32, mask: u8) {
        let mut mask = mask;
        let mut cl = c;
        while self.mode[cl as usize] == Mode::MayBorrow && mask != 0 {
            let p = topo.class[cl as usize].parent;
            if p == NONE {
                break;
            }
            let pos = topo.class[cl as usize].child_pos;
            let removed = mask;
            mask = 0;
            for prio in prios(removed) {
                let feed = &mut self.turns[Self::feed(topo, p, prio)];
                if feed.ptr == Some(pos) {
                    // Forget the position but remember where it was.
                    feed.last = Some(pos);
                    feed.ptr = None;
                }
                feed.set.remove(pos);
                if feed.set.is_empty() {
                    mask |= 1 << prio;
                }
            }
            self.activity[p as usize] &= !mask;
            cl = p;
        }
        if self.mode[cl as usize] == Mode::CanSend && mask != 0 {
            let level = topo.class[cl as usize].level;
            let pos = topo.class[cl as usize].level_pos;
            let mut emptied = 0;
            for prio in prios(mask) {
                let row = &mut self.turns[Topology::row(level, prio)];
                if row.ptr == Some(pos) {
                    row.advance();
                }
                row.set.remove(pos);
                if row.set.is_empty() {
                    emptied |= 1 << prio;
                }
            }
            self.row_mask[usize::from(level)] &= !emptied;
        }
    }

    /// The leaf whose turn it is in row `(level, prio)`, which must not be empty
    /// (Linux `htb_lookup_leaf`). From the row, follow each turn's position down through
    /// the feeds; a position invalidated by a departure resumes at the next member; a
    /// feed whose position ran past its last member rewinds to its first and passes the
    /// turn at the level above to the next member.
    pub(super) fn lookup(&mut self, topo: &Topology, level: u8, prio: u32) -> u32 {
        debug_assert!(self.row_mask[usize::from(level)] & (1 << prio) != 0);
        if level == 0 {
            // The members of a row of level 0 are leaves: the loop below in short.
            let turn = &mut self.turns[Topology::row(0, prio)];
            if turn.ptr.is_none() {
                turn.ptr = turn.last.and_then(|last| turn.set.next_from(last));
                if turn.ptr.is_none() {
                    turn.ptr = turn.set.first();
                }
            }
            turn.last = None;
            let pos = turn.ptr.expect("a linked row is not empty");
            return topo.by_level[0][pos as usize];
        }
        // Turn indices and the class that owns each (NONE for the row).
        let mut stack = [(0usize, NONE); MAX_DEPTH];
        stack[0] = (Topology::row(level, prio), NONE);
        let mut sp = 0;
        loop {
            let (t, owner) = stack[sp];
            let turn = &mut self.turns[t];
            if turn.ptr.is_none()
                && let Some(last) = turn.last
            {
                turn.ptr = turn.set.next_from(last);
            }
            turn.last = None;
            match turn.ptr {
                None => {
                    turn.ptr = turn.set.first();
                    debug_assert!(turn.ptr.is_some(), "a linked row or feed is not empty");
                    if sp > 0 {
                        sp -= 1;
                        self.turns[stack[sp].0].advance();
                    }
                }
                Some(pos) => {
                    let cl = if owner == NONE {
                        topo.by_level[usize::from(level)][pos as usize]
                    } else {
                        topo.children[owner as usize][pos as usize]
                    };
                    if topo.class[cl as usize].level == 0 {
                        return cl;
                    }
                    sp += 1;
                    stack[sp] = (Self::feed(topo, cl, prio), cl);
                }
            }
        }
    }

    /// Passes the turn on after `leaf`, served at `level` and `prio`, used up its quantum:
    /// in row `(0, prio)` if it was served at level 0, else in its parent's feed.
    pub(super) fn pass_turn(&mut self, topo: &Topology, leaf: u32, level: u8, prio: u32) {
        let t = if level == 0 {
            Topology::row(0, prio)
        } else {
            Self::feed(topo, topo.class[leaf as usize].parent, prio)
        };
        self.turns[t].advance();
    }
}
