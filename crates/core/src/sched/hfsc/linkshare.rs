//! The link-sharing criterion (H-FSC paper §III-C, Figs. 5 and 7) with upper limits:
//! virtual curves and virtual times of every class, fit times from `ul` curves, and the
//! per-parent ordered sets that pick, level by level, the fitting active child with the
//! smallest virtual time in O(log n).
//!
//! # Per-parent sets
//!
//! A class is *active* (for link-sharing) while it has an `ls` curve and a backlogged
//! leaf with an `ls` curve below it (itself, for a leaf). The active children of a
//! parent `p` (the link included) are kept in three [`IndexedHeap`]s over the children's
//! positions among `p`'s children:
//!
//! * `fit`: the children whose fit time was at or before an instant already seen, keyed
//!   by virtual time `v`: the link-sharing candidates, smallest `v` first;
//! * `waiting`: the other active children, keyed by fit time: held back by an upper
//!   limit, in their own `ul` curve or all the way down;
//! * `latest`: the active children keyed by `!v`, for `v_max`, consulted only when the
//!   cached `v_max` is lost (below).
//!
//! `v_max` is needed when a child of an active parent becomes active (for `vs_p`, below).
//! Each set caches it: virtual times only grow while a class is active, so a service or
//! an activation keeps the cache exact by a `max`, and only the departure of the child
//! holding the maximum loses it (unless one child is left, whose key in `fit` is then
//! the maximum). A lost `v_max` is recomputed when it is next read: by a scan of the
//! keys of `fit` when it holds all the active children and they are at most [`SCAN`],
//! else from `latest`. `latest` is kept up to date lazily: a service, activation or
//! departure of a child only puts it on the set's stale list (once; an array of links
//! by position), and the read re-keys the children on the list, each once however often
//! it changed in between, taking a fitting child's virtual time from its key in `fit`
//! (equal by invariant), so it touches the parent's compact sets, not the children's
//! records; a child that left is removed from `latest` then.
//!
//! A set *tracks* (keeps `latest` and its stale list) only while it may need them: in a
//! tree with upper limits, always; otherwise from the first read of a lost `v_max` that
//! finds more than [`SCAN`] active children, when `latest` is built from the keys of
//! `fit` (O(k log k) for `k` active children), until a departure leaves at most
//! [`SCAN`]` / 2`, when `latest` and the list are emptied (O(k)). Between two such
//! starts at least `k - SCAN / 2 >= k / 2` children became active, so both are O(log k)
//! amortised per activation; and a set with few active children, the common case with
//! thousands of classes, never touches its stale list (one cache miss per change of a
//! child, in a separate array, otherwise).
//!
//! The fit time of a class is `f = max(U^{-1}(w), cf)` with `U` its upper-limit curve
//! (`0` without one) and `cf` the earliest fit time among its active children: `0` if one
//! is in `fit`, else the smallest key of `waiting` (`0` for a leaf). Time only moves
//! forward, so a class in `fit` stays fit until its own `f` changes, which happens only
//! when it or a descendant is served, activated or deactivated: a service re-places every
//! class on the leaf's path (their virtual times changed), an activation or a removal
//! re-places them up to the first one whose place is unchanged, and selection moves the
//! children of `waiting` whose time has come to `fit` as it descends. So no scan is ever
//! needed (Linux walks its virtual-time tree looking for the first class that fits).
//! Without any `ul` in the tree every fit time is 0 and `waiting` is never touched.
//!
//! # System virtual time
//!
//! A class that becomes active at `a` anchors its virtual curve at `(vs_p, w_i)`
//! (Eq. 12), with the system virtual time of its parent
//! `vs_p = (v_lo + max(v_lo, v_max)) / 2`, where `v_max` is the largest virtual time of
//! `p`'s active children and `v_lo` is the paper's `v_min` with one guard for upper
//! limits: `v_lo = max(cvtmin_p, smallest v among the fitting children)`, where
//! `cvtmin_p` is the largest virtual time of a child the link-sharing criterion has
//! chosen at `p` during `p`'s current active period (Linux's `cl_cvtmin`). Without `ul`
//! every active child fits and the smallest virtual time never decreases within a period
//! (the chosen child is the smallest, virtual times only grow, and newcomers join at or
//! above the smallest), so `cvtmin_p <= v_min` and `v_lo` is exactly the paper's
//! `v_min`. With `ul`, a child held back by its limit keeps a virtual time that lags by
//! design; the guard stops it from dragging newcomers below the siblings that are being
//! served.
//!
//! When `p` has no other active child, a new active period of `p` starts and the class
//! anchors at `cvtoff_p`: the largest virtual time any child of `p` had when it last
//! left the active set (Linux's `cl_cvtoff`). Every child's virtual curve then lies at
//! or below the anchor, so every child starts the new period afresh: a class that
//! returns after idling neither keeps a lead nor a debt from the previous period (a
//! lower anchor, such as the last `vs_p`, would leave the children that were ahead when
//! the period ended still ahead, i.e. behind in line, for a service they received long
//! ago). Within a period, the min-update of Eq. 12 keeps a returning class's old virtual
//! time if that is larger than `vs_p`: leaving and coming back does not buy service.
//!
//! Amounts are bytes; virtual times and fit times are integer nanoseconds (virtual and
//! real time respectively).

use super::anchored::{Anchored, CurveTable, Entry};
use crate::curve::{RuntimeCurve, ServiceCurve};
use crate::ds::IndexedHeap;
use crate::hierarchy::ClassTree;
use crate::sched::PollAt;
use crate::units::{Instant, Rate};

use super::config::{Curves, VtRestart};

/// Index of the root (the link).
const ROOT: usize = 0;

/// `Node::kids` of a leaf.
const NO_KIDS: u32 = u32::MAX;

/// The end of a stale list.
const NONE: u32 = u32::MAX;

/// Up to this many active children, all fitting, an unknown `v_max` is found by a scan
/// of their keys in `fit` (one or two cache lines) rather than from `latest`.
const SCAN: usize = 16;

/// [`Children::next_stale`] of a child that is not on the stale list.
const OFF: u32 = u32::MAX - 1;

/// [`Node::curve`] of a class without an `ls` curve.
const NO_CURVE: u32 = u32::MAX;

/// Link-sharing state of one class that the packet path reads and writes (the upper
/// limit apart): one cache line. The `ls` curve's slopes and shape and whether the class
/// has an upper limit are in the [`CurveTable`]; the parent is the owner of the
/// children set `up`.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct Node {
    /// Virtual curve `V_i` (Eq. 12), virtual time (ns) to bytes; the curve at infinity
    /// until the first activation.
    virtual_curve: Anchored,
    /// `v_i = V_i^{-1}(w_i)` while active, ns of virtual time.
    vt: u64,
    /// `w_i`: bytes served to the class by either criterion.
    total: u64,
    /// Position among the parent's children: the item in the parent's heaps.
    slot: u32,
    /// Index of the parent's [`Children`] (meaningless for the root).
    up: u32,
    /// Index of the `ls` curve in [`LinkSharing::curves`] (whose flag says whether the
    /// class has an upper limit), [`NO_CURVE`] for a class without one.
    curve: u32,
    /// Whether the class is active for link-sharing.
    active: bool,
}

const _: () = assert!(size_of::<Node>() == 64, "a Node is one cache line");

/// The upper-limit curves of one class, read only for classes with one.
#[derive(Clone, Copy, Debug)]
struct UpperLimit {
    /// The `ul` curve.
    ul: Option<ServiceCurve>,
    /// Upper-limit curve `U_i`, real time (ns) to bytes, anchored at activations; the
    /// curve at infinity until the first.
    limit_curve: RuntimeCurve,
    /// Own fit time `U_i^{-1}(w_i)` (ns), 0 without `ul`.
    myf: u64,
}

/// How selection maps the position of the chosen child of a set to the next step: the
/// children's own sets, or the chosen leaf. When the positions map to consecutive
/// numbers (as when siblings are declared together) that is an addition, not a load
/// that waits for the heap's answer.
#[derive(Clone, Copy, Debug)]
enum Descend {
    /// Every child has children, and the child at position `s` has set `first + s`.
    Sets(u32),
    /// Every child is a leaf, and the child at position `s` is class `first + s`.
    Leaves(u32),
    /// Otherwise: look the position up in `sets` (and `ids` for a leaf).
    Lookup,
}

/// The active children of one class. See the [module docs](self).
///
/// Laid out by use: the first cache line holds what every operation reads (`fit` and
/// the counts), the second what activations, services and selection read besides; the
/// upper-limit and `v_max` heaps, needed rarely, come after.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
struct Children {
    /// Fitting active children by virtual time.
    fit: IndexedHeap,
    /// The class whose children these are.
    owner: u32,
    /// Number of active children (in `fit` or in `waiting`).
    active: u32,
    /// Slot of the first child whose key in `latest` may lag (it changed its virtual
    /// time, became active or left since it was last re-keyed), [`NONE`] if none; the
    /// list goes on through `next_stale`, each child at most once. [`NONE`] while the
    /// set does not track.
    stale: u32,
    /// Whether `latest` and the stale list are kept (see the [module docs](self)); if
    /// not, both are empty.
    tracking: bool,
    /// Largest virtual time of a child chosen by link-sharing in this active period.
    cvtmin: u64,
    /// Largest virtual time a child had when it left the active set.
    cvtoff: u64,
    /// `v_max`, the largest virtual time of an active child (0 when none is active),
    /// while `vmax_known`.
    vmax: u64,
    /// Whether `vmax` holds `v_max` (see the [module docs](self) for how it is kept and
    /// found again).
    vmax_known: bool,
    /// How selection finds, from a child's position, where to descend.
    descend: Descend,
    /// By slot: the next slot on the stale list ([`NONE`] at its end), or [`OFF`] for
    /// a child that is not on it.
    next_stale: Box<[u32]>,
    /// By position: the index of the child's own children set, [`NO_KIDS`] for a leaf
    /// (what selection reads to descend, without loading the child's record).
    sets: Box<[u32]>,
    /// Class index of each child, by position.
    ids: Box<[u32]>,
    /// Active children held back by an upper limit, by fit time.
    waiting: IndexedHeap,
    /// Active children by `!v` (largest virtual time first), brought up to date only
    /// when `v_max` is read and `vmax` does not hold it: see [`Children::sync_latest`].
    latest: IndexedHeap,
}

impl Descend {
    /// How to descend from a set whose children have the sets `sets` ([`NO_KIDS`] for
    /// a leaf) and the class indices `ids`, by position.
    fn of(sets: &[u32], ids: &[u32]) -> Descend {
        let consecutive = |v: &[u32]| v.windows(2).all(|w| w[1] == w[0].wrapping_add(1));
        match (sets.first(), ids.first()) {
            (Some(&first), _) if !sets.contains(&NO_KIDS) && consecutive(sets) => {
                Descend::Sets(first)
            }
            (_, Some(&first)) if sets.iter().all(|&s| s == NO_KIDS) && consecutive(ids) => {
                Descend::Leaves(first)
            }
            _ => Descend::Lookup,
        }
    }
}

impl Node {
    /// Anchors the virtual curve at `(vs, w)` (Eq. 12; min-update with the `ls` curve
    /// `ls`, the class's entry, which gives the curve itself anchored there the first
    /// time), sets the virtual time from it and marks the class active. Its parent's
    /// count of active children is the caller's to update.
    #[inline]
    fn anchor_virtual(&mut self, ls: &Entry, vs: u64) {
        self.virtual_curve
            .min_with(&ls.sc, ls.shape, vs, self.total);
        self.vt = self.virtual_curve.y2x(&ls.sc, self.total);
        self.active = true;
    }
}

impl Children {
    /// Starts a new active period of the parent, whose first active child anchors at
    /// `cvtoff` (see the [module docs](self)); returns that `vs_p`.
    #[inline]
    fn new_period(&mut self) -> u64 {
        self.cvtmin = self.cvtoff;
        self.cvtoff
    }

    /// `vs_p` for a child becoming active while the parent has active children, whose
    /// `waiting` children are up to date (promoted), by the `restart` rule; `vt_of`
    /// gives the virtual time of a child by class index (needed only for children in
    /// `waiting`). See the [module docs](self).
    #[inline]
    fn system_virtual_time(&mut self, restart: VtRestart, vt_of: impl Fn(u32) -> u64) -> u64 {
        let lo = self
            .fit
            .peek()
            .map_or(self.cvtmin, |(_, v)| v.max(self.cvtmin));
        if restart == VtRestart::Min {
            return lo;
        }
        if !self.vmax_known {
            if self.active as usize <= SCAN && self.waiting.is_empty() {
                // Few children, all in `fit`, whose keys are their virtual times.
                self.vmax = self.fit.keys().fold(0, u64::max);
                self.vmax_known = true;
            } else {
                if !self.tracking {
                    self.start_tracking(&vt_of);
                }
                self.sync_latest(vt_of);
            }
        }
        let hi = self.vmax.max(lo);
        lo + (hi - lo) / 2
    }

    /// Brings `latest` up to date and reads `v_max` from it, when `vmax` does not hold
    /// it: every child on the stale list gets its virtual time as its key if it is
    /// active, and leaves `latest` if not (`vt_of` gives the virtual time of a child in
    /// `waiting` by class index). A service, an activation or a departure of a child
    /// only puts it on the list, so a child served many times between two reads is
    /// re-keyed once. Every such event puts at most one child per level on a list, so
    /// this costs O(log k) amortised per packet and level.
    #[inline(never)]
    fn sync_latest(&mut self, vt_of: impl Fn(u32) -> u64) {
        let mut slot = core::mem::replace(&mut self.stale, NONE);
        while slot != NONE {
            let next = core::mem::replace(&mut self.next_stale[slot as usize], OFF);
            // An active child is in `fit`, whose key is its virtual time, or in `waiting`.
            let vt = match self.fit.key_of(slot) {
                Some(vt) => Some(vt),
                None if !self.waiting.is_empty() && self.waiting.contains(slot) => {
                    Some(vt_of(self.ids[slot as usize]))
                }
                None => None,
            };
            match vt {
                Some(vt) => self.latest.set(slot, !vt),
                None => {
                    self.latest.remove(slot);
                }
            }
            slot = next;
        }
        self.vmax = self.latest.peek().map_or(0, |(_, key)| !key);
        self.vmax_known = true;
    }

    /// Starts keeping `latest`, which is empty, and the stale list, which is too: every
    /// active child gets its virtual time as its key (`vt_of` gives it by class index
    /// for a child in `waiting`).
    #[inline(never)]
    fn start_tracking(&mut self, vt_of: impl Fn(u32) -> u64) {
        for (slot, vt) in self.fit.items().zip(self.fit.keys()) {
            self.latest.set(slot, !vt);
        }
        for slot in self.waiting.items() {
            self.latest.set(slot, !vt_of(self.ids[slot as usize]));
        }
        self.tracking = true;
    }

    /// Stops keeping `latest` and the stale list, and empties both.
    #[inline(never)]
    fn stop_tracking(&mut self) {
        let mut slot = core::mem::replace(&mut self.stale, NONE);
        while slot != NONE {
            slot = core::mem::replace(&mut self.next_stale[slot as usize], OFF);
        }
        self.latest.clear();
        self.tracking = false;
    }

    /// Puts the active child at `slot`, whose virtual time is now `vt` (new, or grown
    /// since it was last placed), in `fit` with that key, takes `vt` into `v_max`, and
    /// marks its key in `latest` stale.
    #[inline(always)]
    fn place_fitting(&mut self, slot: u32, vt: u64) {
        self.mark_stale(slot);
        self.vmax = self.vmax.max(vt);
        self.fit.set_inlined(slot, vt);
    }

    /// Removes the child at `slot`, whose virtual time is `vt`, from the active set
    /// (from `fit`, and from `waiting` if `limits`), recording `cvtoff` and keeping
    /// `v_max` exact or marking it lost; returns whether no child is left active.
    #[inline]
    fn remove(&mut self, slot: u32, vt: u64, limits: bool) -> bool {
        self.active -= 1;
        self.mark_stale(slot);
        self.fit.remove(slot);
        if limits {
            self.waiting.remove(slot);
        }
        self.cvtoff = self.cvtoff.max(vt);
        if self.tracking && !limits && self.active as usize <= SCAN / 2 {
            self.stop_tracking();
        }
        if self.any_active() {
            // If the child may have had the largest virtual time, `v_max` is lost, unless
            // one child is left and it fits: its key in `fit` is its virtual time, the
            // new `v_max`. A lost `v_max` is found again when it is next read. (Selects,
            // not branches: both conditions are as good as random.)
            let lost = !self.vmax_known || vt >= self.vmax;
            let single = self.active == 1 && self.fit.len() == 1;
            let top = self.fit.peek().map_or(0, |(_, v)| v);
            self.vmax = if lost && single { top } else { self.vmax };
            self.vmax_known = if lost { single } else { self.vmax_known };
            return false;
        }
        self.vmax = 0;
        self.vmax_known = true;
        true
    }

    /// Whether some child is active (every active child is in `fit` or in `waiting`).
    #[inline]
    fn any_active(&self) -> bool {
        self.active > 0
    }

    /// Puts the child at `slot` on the stale list, once, if the set tracks. Written with
    /// selects, not a branch: whether the child is already on the list is as good as
    /// random.
    #[inline]
    fn mark_stale(&mut self, slot: u32) {
        if !self.tracking {
            return;
        }
        let next = &mut self.next_stale[slot as usize];
        let off = *next == OFF;
        *next = if off { self.stale } else { *next };
        self.stale = if off { slot } else { self.stale };
    }
}

/// The link-sharing criterion over the class tree. See the [module docs](self).
#[derive(Clone, Debug)]
pub(super) struct LinkSharing {
    nodes: Vec<Node>,
    /// The distinct `ls` curves, flagged for classes with an upper limit.
    curves: CurveTable,
    /// By class: the index of its [`Children`], [`NO_KIDS`] for a leaf.
    sets_of: Vec<u32>,
    upper: Vec<UpperLimit>,
    /// The children sets of the root and the interior classes.
    kids: Vec<Children>,
    /// Whether some class has an upper limit; if not, every fit time is 0, `waiting`
    /// sets stay empty and the packet path skips them.
    limits: bool,
    /// Where a class restarts when it joins active siblings.
    restart: VtRestart,
}

impl LinkSharing {
    /// The state for `tree` with the resolved `curves` (by class index), restarting
    /// classes by `restart`.
    pub(super) fn new(tree: &ClassTree, curves: &[Curves], restart: VtRestart) -> LinkSharing {
        let mut table = CurveTable::default();
        let mut nodes: Vec<Node> = curves
            .iter()
            .map(|c| Node {
                virtual_curve: Anchored::infinite(
                    &c.ls.unwrap_or(ServiceCurve::linear(Rate::ZERO)),
                ),
                vt: 0,
                total: 0,
                slot: 0,
                up: 0,
                curve: c.ls.map_or(NO_CURVE, |ls| table.intern(ls, c.ul.is_some())),
                active: false,
            })
            .collect();
        let upper = curves
            .iter()
            .map(|c| UpperLimit {
                ul: c.ul,
                // At infinity, as `Anchored::infinite`.
                limit_curve: RuntimeCurve::new(
                    &c.ul.unwrap_or(ServiceCurve::linear(Rate::ZERO)),
                    0,
                    u64::MAX,
                ),
                myf: 0,
            })
            .collect();
        let limits = nodes
            .iter()
            .any(|n| n.curve != NO_CURVE && table.get(n.curve).flag);
        let mut sets_of = vec![NO_KIDS; curves.len()];
        let mut kids = Vec::new();
        for c in tree.classes() {
            if c.children.is_empty() && c.parent.is_some() {
                continue;
            }
            for (slot, k) in c.children.iter().enumerate() {
                let child = &mut nodes[k.index()];
                child.slot = slot as u32;
                child.up = kids.len() as u32;
            }
            sets_of[c.id.index()] = kids.len() as u32;
            let n = c.children.len();
            kids.push(Children {
                ids: c.children.iter().map(|k| k.0).collect(),
                descend: Descend::Lookup,
                sets: Box::default(),
                fit: IndexedHeap::new(n),
                owner: c.id.0,
                waiting: IndexedHeap::new(n),
                latest: IndexedHeap::new(n),
                active: 0,
                stale: NONE,
                tracking: limits,
                next_stale: vec![OFF; n].into(),
                vmax: 0,
                vmax_known: true,
                cvtmin: 0,
                cvtoff: 0,
            });
        }
        for set in &mut kids {
            set.sets = set.ids.iter().map(|&c| sets_of[c as usize]).collect();
            set.descend = Descend::of(&set.sets, &set.ids);
        }
        LinkSharing {
            nodes,
            curves: table,
            sets_of,
            upper,
            kids,
            limits,
            restart,
        }
    }

    /// The children sets of class `p` (the root or an interior class).
    #[inline]
    fn kids_of(&self, p: usize) -> &Children {
        &self.kids[self.sets_of[p] as usize]
    }

    /// The parent of class `k` (not the root).
    #[inline]
    fn parent(&self, k: usize) -> usize {
        self.kids[self.nodes[k].up as usize].owner as usize
    }

    /// Whether class `c` takes part in link-sharing (has an `ls` curve).
    #[inline]
    pub(super) fn has(&self, c: usize) -> bool {
        self.nodes[c].curve != NO_CURVE
    }

    /// Loads class `c`'s record, so that a later access finds it in the cache (an early
    /// load, kept by [`core::hint::black_box`]; no state changes).
    #[inline(always)]
    pub(super) fn touch(&self, c: usize) {
        if let Some(n) = self.nodes.get(c) {
            core::hint::black_box(n.total);
        }
    }

    /// Whether some class has an upper limit that can hold link-sharing back.
    pub(super) fn any_limit(&self) -> bool {
        self.limits
    }

    /// Whether class `c` has no children.
    #[inline]
    fn is_leaf(&self, c: usize) -> bool {
        self.sets_of[c] == NO_KIDS
    }

    /// Class `c` (a passive leaf) forgets its virtual and upper-limit curves: both at
    /// infinity again, as before its first activation, so that the next activation
    /// anchors them afresh.
    pub(super) fn reset(&mut self, c: usize) {
        debug_assert!(!self.nodes[c].active, "reset: the class is active");
        let n = &mut self.nodes[c];
        if n.curve != NO_CURVE {
            n.virtual_curve = Anchored::infinite(&self.curves.get(n.curve).sc);
        }
        let upper = &mut self.upper[c];
        if let Some(ul) = upper.ul {
            upper.limit_curve = RuntimeCurve::new(&ul, 0, u64::MAX);
        }
    }

    /// Leaf `leaf` (with an `ls` curve) becomes backlogged at `now`: it and every
    /// ancestor that was passive become active (Fig. 7 `update_v` on activation,
    /// Eq. 12), and the fit times above them are brought up to date.
    pub(super) fn activate(&mut self, leaf: usize, now: u64) {
        if !self.limits {
            self.activate_unlimited(leaf);
            return;
        }
        let mut k = leaf;
        loop {
            let up = self.nodes[k].up;
            let p = self.kids[up as usize].owner as usize;
            let parent_was_active = self.kids[up as usize].any_active();
            let vs = self.system_virtual_time(up as usize, now);
            self.anchor(k, vs, now);
            self.place(k, now);
            if p == ROOT || parent_was_active {
                self.refit_from(p, now);
                return;
            }
            k = p;
        }
    }

    /// `vs_p` for a child of `p` (whose children set is `kids[at]`) becoming active at
    /// `now`; starts a new active period of `p` if it has no active child. See the
    /// [module docs](self).
    fn system_virtual_time(&mut self, at: usize, now: u64) -> u64 {
        if !self.kids[at].any_active() {
            return self.kids[at].new_period();
        }
        self.promote_at(at, now);
        let LinkSharing {
            nodes,
            kids,
            restart,
            ..
        } = self;
        kids[at].system_virtual_time(*restart, |c| nodes[c as usize].vt)
    }

    /// [`LinkSharing::activate`] in a tree without upper limits (every fit time is 0):
    /// the same steps, with each class's record and its parent's set looked up once per
    /// level.
    fn activate_unlimited(&mut self, leaf: usize) {
        let LinkSharing {
            nodes,
            kids,
            curves,
            restart,
            ..
        } = self;
        let mut k = leaf;
        loop {
            let n = &nodes[k];
            let slot = n.slot;
            let set = &mut kids[n.up as usize];
            let parent = set.owner as usize;
            let parent_was_active = set.any_active();
            let vs = if parent_was_active {
                set.system_virtual_time(*restart, |c| nodes[c as usize].vt)
            } else {
                set.new_period()
            };
            let n = &mut nodes[k];
            n.anchor_virtual(curves.get(n.curve), vs);
            set.active += 1;
            set.place_fitting(slot, n.vt);
            if parent == ROOT || parent_was_active {
                return;
            }
            k = parent;
        }
    }

    /// Anchors the virtual curve of `k` at `(vs, w_k)` and its upper-limit curve at
    /// `(now, w_k)` (min-update after the first time), and marks it active.
    fn anchor(&mut self, k: usize, vs: u64, now: u64) {
        let n = &mut self.nodes[k];
        let ls = self.curves.get(n.curve);
        n.anchor_virtual(ls, vs);
        self.kids[n.up as usize].active += 1;
        if ls.flag {
            self.anchor_limit(k, now);
        }
    }

    /// The upper-limit part of [`LinkSharing::anchor`]: anchors the upper-limit curve of
    /// `k` at `(now, w_k)` (min-update; the curve itself anchored there the first time)
    /// and sets its own fit time.
    #[cold]
    fn anchor_limit(&mut self, k: usize, now: u64) {
        let total = self.nodes[k].total;
        let upper = &mut self.upper[k];
        let ul = upper.ul.expect("limited classes have a ul curve");
        upper.limit_curve.min_with(&ul, now, total);
        upper.myf = upper.limit_curve.y2x(total);
    }

    /// The fit time of active class `k`: `max(own fit time, earliest child fit time)`.
    fn fit_time(&self, k: usize) -> u64 {
        let own = self.upper[k].myf;
        if self.is_leaf(k) {
            return own;
        }
        let kids = self.kids_of(k);
        let children = if kids.fit.is_empty() {
            kids.waiting.peek().map_or(u64::MAX, |(_, f)| f)
        } else {
            0
        };
        own.max(children)
    }

    /// Puts active class `k` where it belongs in its parent's sets, given its current
    /// virtual time (new, or grown since it was last placed) and fit time and the
    /// instant `now`; `v_max` takes the new virtual time into account, and the key in
    /// `latest` is marked stale, for [`Children::sync_latest`].
    #[inline]
    fn place(&mut self, k: usize, now: u64) {
        let Node { up, slot, vt, .. } = self.nodes[k];
        let kids = &mut self.kids[up as usize];
        if self.limits {
            kids.mark_stale(slot);
            kids.vmax = kids.vmax.max(vt);
            self.place_limited(k, now);
        } else {
            kids.place_fitting(slot, vt);
        }
    }

    /// [`LinkSharing::place`] in a tree with upper limits, after the stale mark.
    fn place_limited(&mut self, k: usize, now: u64) {
        let Node { up, slot, vt, .. } = self.nodes[k];
        let f = self.fit_time(k);
        let kids = &mut self.kids[up as usize];
        if f <= now {
            kids.waiting.remove(slot);
            kids.fit.set(slot, vt);
        } else {
            kids.fit.remove(slot);
            kids.waiting.set(slot, f);
        }
    }

    /// Brings the fit status of the active classes from `k` up to date after a change
    /// below them that left their virtual times alone (an activation or a removal):
    /// moves a class between its parent's `fit` and `waiting` sets if its fit time says
    /// so, and stops at the first class whose place is unchanged, since nothing above it
    /// can change then.
    #[inline]
    fn refit_from(&mut self, k: usize, now: u64) {
        if self.limits {
            self.refit_limited_from(k, now);
        }
    }

    /// [`LinkSharing::refit_from`] in a tree with upper limits.
    fn refit_limited_from(&mut self, mut k: usize, now: u64) {
        while k != ROOT && self.nodes[k].active {
            let f = self.fit_time(k);
            let Node { up, slot, vt, .. } = self.nodes[k];
            let kids = &mut self.kids[up as usize];
            let parent = kids.owner;
            if f <= now {
                if kids.fit.contains(slot) {
                    return;
                }
                kids.waiting.remove(slot);
                kids.fit.set(slot, vt);
            } else {
                if kids.waiting.key_of(slot) == Some(f) {
                    return;
                }
                kids.fit.remove(slot);
                kids.waiting.set(slot, f);
            }
            k = parent as usize;
        }
    }

    /// Moves the children in the children set `kids[at]` whose fit time has come from
    /// `waiting` to `fit`.
    #[inline]
    fn promote_at(&mut self, at: usize, now: u64) {
        if self.limits {
            self.promote_waiting(at, now);
        }
    }

    /// [`LinkSharing::promote_at`] in a tree with upper limits.
    fn promote_waiting(&mut self, at: usize, now: u64) {
        while let Some((slot, f)) = self.kids[at].waiting.peek()
            && f <= now
        {
            let vt = self.nodes[self.kids[at].ids[slot as usize] as usize].vt;
            let kids = &mut self.kids[at];
            kids.waiting.remove(slot);
            kids.fit.set(slot, vt);
        }
    }

    /// Removes active class `k` from its parent's sets (recording `cvtoff`); returns
    /// whether that left the parent, a class other than the root, without an active
    /// child (so that it leaves too).
    #[inline]
    fn leave_one(&mut self, k: usize) -> bool {
        let n = &mut self.nodes[k];
        n.active = false;
        let set = &mut self.kids[n.up as usize];
        let emptied = set.remove(n.slot, n.vt, self.limits);
        emptied && set.owner as usize != ROOT
    }

    /// Removes active class `k` and every ancestor left without an active child from
    /// their parents' sets; returns the lowest ancestor still active (or the root).
    fn leave(&mut self, mut k: usize) -> usize {
        while self.leave_one(k) {
            k = self.parent(k);
        }
        self.parent(k)
    }

    /// Leaf `leaf` was served `len` bytes at `now` (by either criterion); `emptied` says
    /// whether it has no packet left. `w` grows for the leaf and every ancestor, active
    /// classes get their new virtual and fit times (Fig. 7) and are re-placed in their
    /// parents' sets, an emptied leaf leaves the active sets with the ancestors it leaves
    /// without an active child. One pass from the leaf up: what a class's place depends
    /// on (its own times and its children's sets) is final when the pass reaches it.
    pub(super) fn served(&mut self, leaf: usize, len: u64, now: u64, emptied: bool) {
        if !self.limits {
            self.served_unlimited(leaf, len, emptied);
            return;
        }
        let mut k = leaf;
        // Whether `k` leaves the active set: the leaf if emptied, an ancestor if the
        // class below it left it without an active child.
        let mut leaving = emptied;
        while k != ROOT {
            let parent = self.parent(k);
            let n = &mut self.nodes[k];
            n.total += len;
            if n.active {
                let ls = self.curves.get(n.curve);
                n.vt = n.virtual_curve.y2x(&ls.sc, n.total);
                if ls.flag {
                    let upper = &mut self.upper[k];
                    upper.myf = upper.limit_curve.y2x(n.total);
                }
                if leaving {
                    leaving = self.leave_one(k);
                } else {
                    self.place(k, now);
                }
            } else {
                leaving = false;
            }
            k = parent;
        }
    }

    /// [`LinkSharing::served`] in a tree without upper limits (every fit time is 0): the
    /// same pass, with each class's record and its parent's set looked up once.
    fn served_unlimited(&mut self, leaf: usize, len: u64, emptied: bool) {
        let LinkSharing {
            nodes,
            kids,
            curves,
            ..
        } = self;
        let mut k = leaf;
        let mut leaving = emptied;
        while k != ROOT {
            let n = &mut nodes[k];
            n.total += len;
            let set = &mut kids[n.up as usize];
            let parent = set.owner as usize;
            if n.active {
                n.vt = n.virtual_curve.y2x(&curves.get(n.curve).sc, n.total);
                if leaving {
                    n.active = false;
                    leaving = set.remove(n.slot, n.vt, false) && parent != ROOT;
                } else {
                    set.place_fitting(n.slot, n.vt);
                }
            } else {
                leaving = false;
            }
            k = parent;
        }
    }

    /// Leaf `leaf` lost its last packet without being served (push-out) at or after
    /// `now`.
    pub(super) fn deactivate(&mut self, leaf: usize, now: u64) {
        if self.nodes[leaf].active {
            let from = self.leave(leaf);
            self.refit_from(from, now);
        }
    }

    /// The link-sharing choice at `now`: from the root, the fitting active child with
    /// the smallest virtual time (smaller class id on ties), down to a leaf.
    pub(super) fn select(&mut self, now: u64) -> Option<usize> {
        let mut at = self.sets_of[ROOT] as usize;
        loop {
            self.promote_at(at, now);
            let kids = &mut self.kids[at];
            let (slot, vt) = kids.fit.peek()?;
            kids.cvtmin = kids.cvtmin.max(vt);
            match kids.descend {
                Descend::Sets(first) => at = (first + slot) as usize,
                Descend::Leaves(first) => return Some((first + slot) as usize),
                Descend::Lookup => match kids.sets[slot as usize] {
                    NO_KIDS => return Some(kids.ids[slot as usize] as usize),
                    set => at = set as usize,
                },
            }
        }
    }

    /// When the link-sharing criterion can next serve a packet.
    pub(super) fn poll_at(&self, now: u64) -> PollAt {
        let root = self.kids_of(ROOT);
        if !root.fit.is_empty() {
            return PollAt::Now;
        }
        match root.waiting.peek() {
            None => PollAt::Idle,
            Some((_, f)) if f <= now => PollAt::Now,
            Some((_, f)) => PollAt::At(Instant(f)),
        }
    }

    /// `v_i` of an active class.
    pub(super) fn virtual_time(&self, c: usize) -> Option<u64> {
        let n = self.nodes.get(c)?;
        (c != ROOT && n.active).then_some(n.vt)
    }

    /// `w_i`: bytes served to class `c` and its descendants by either criterion.
    pub(super) fn total(&self, c: usize) -> u64 {
        self.nodes.get(c).map_or(0, |n| n.total)
    }

    /// Checks the sets against the classes (O(n · fan-out)): a class is active exactly
    /// when it has an `ls` curve and an active child (a leaf: when `backlogged`); an
    /// active class is in exactly one of its parent's `fit` and `waiting`, with keys
    /// equal to its virtual time and fit time, and a class in `fit` fits at `now`; a
    /// class is on its parent's stale list exactly when flagged stale, and if not, its
    /// key in `latest` is its virtual time when active and absent when passive (a set
    /// that does not track keeps neither a stale list nor `latest`); a
    /// passive class is in neither `fit` nor `waiting`; selection descends from each
    /// position to the child's own set, or to the leaf; each set counts its active
    /// children, and a known `vmax` is the largest virtual time among them (0 if none);
    /// `w` of an interior class is the sum over its children.
    pub(super) fn check(&self, backlogged: impl Fn(usize) -> bool, now: u64) -> Result<(), String> {
        let mut listed = vec![0usize; self.nodes.len()];
        for (at, kids) in self.kids.iter().enumerate() {
            if !kids.tracking && (kids.stale != NONE || !kids.latest.is_empty()) {
                return Err(format!("children set {at} keeps latest without tracking"));
            }
            let mut slot = kids.stale;
            let mut steps = 0;
            while slot != NONE {
                steps += 1;
                if steps > kids.ids.len() || slot == OFF {
                    return Err(format!("children set {at}: broken stale list"));
                }
                listed[kids.ids[slot as usize] as usize] += 1;
                slot = kids.next_stale[slot as usize];
            }
            for (slot, (&set, &id)) in kids.sets.iter().zip(kids.ids.iter()).enumerate() {
                let slot = slot as u32;
                let by_position = match kids.descend {
                    Descend::Sets(first) => Some((first + slot, NO_KIDS)),
                    Descend::Leaves(first) => Some((NO_KIDS, first + slot)),
                    Descend::Lookup => None,
                };
                let found = if set == NO_KIDS {
                    (NO_KIDS, id)
                } else {
                    (set, NO_KIDS)
                };
                if by_position.is_some_and(|p| p != found) || set != self.sets_of[id as usize] {
                    return Err(format!("children set {at}: child {slot} descends wrongly"));
                }
            }
            let active = kids.ids.iter().filter(|&&c| self.nodes[c as usize].active);
            if active.clone().count() != kids.active as usize {
                return Err(format!(
                    "children set {at}: {} active children, count says {}",
                    active.count(),
                    kids.active
                ));
            }
            let vmax = active
                .map(|&c| self.nodes[c as usize].vt)
                .max()
                .unwrap_or(0);
            if kids.vmax_known && kids.vmax != vmax {
                return Err(format!(
                    "children set {at}: vmax = {} but the largest virtual time is {vmax}",
                    kids.vmax
                ));
            }
        }
        for (k, n) in self.nodes.iter().enumerate().skip(1) {
            let kids = &self.kids[n.up as usize];
            if kids.ids.get(n.slot as usize) != Some(&(k as u32))
                || n.up != self.sets_of[self.parent(k)]
            {
                return Err(format!(
                    "class {k}: wrong place among its parent's children"
                ));
            }
            let stale = kids.next_stale[n.slot as usize] != OFF;
            if listed[k] != usize::from(stale) {
                return Err(format!(
                    "class {k}: stale = {stale} but listed {} times",
                    listed[k]
                ));
            }
            let expect_active = self.has(k)
                && if self.is_leaf(k) {
                    backlogged(k)
                } else {
                    self.kids_of(k).any_active()
                };
            if n.active != expect_active {
                return Err(format!("class {k}: active = {}", n.active));
            }
            if !self.is_leaf(k) {
                let sum: u64 = self
                    .kids_of(k)
                    .ids
                    .iter()
                    .map(|&c| self.nodes[c as usize].total)
                    .sum();
                if sum != n.total {
                    return Err(format!("class {k}: w = {} but children sum {sum}", n.total));
                }
            }
            let (fit, waiting, latest) = (
                kids.fit.key_of(n.slot),
                kids.waiting.key_of(n.slot),
                kids.latest.key_of(n.slot),
            );
            let latest_ok = stale || !kids.tracking || latest == n.active.then_some(!n.vt);
            if !latest_ok {
                return Err(format!(
                    "class {k}: key {latest:?} in latest, v = {}, active = {}",
                    n.vt, n.active
                ));
            }
            if !n.active {
                if fit.is_some() || waiting.is_some() {
                    return Err(format!("passive class {k} is in its parent's sets"));
                }
                continue;
            }
            if n.vt != n.virtual_curve.y2x(&self.curves.get(n.curve).sc, n.total) {
                return Err(format!("class {k}: stale virtual time"));
            }
            let f = self.fit_time(k);
            match (fit, waiting) {
                (Some(v), None) if v == n.vt && f <= now => {}
                (None, Some(key)) if key == f => {}
                _ => {
                    return Err(format!(
                        "class {k}: fit {fit:?}, waiting {waiting:?}, v = {}, f = {f}",
                        n.vt
                    ));
                }
            }
        }
        Ok(())
    }
}
