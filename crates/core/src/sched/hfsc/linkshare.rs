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
//! * `latest`: the active children keyed by `!v`, for `v_max`. It is brought up to date
//!   only when `v_max` is read, that is when a child of an active parent becomes active:
//!   a service or an activation only marks the child stale (a flag and a list of stale
//!   slots per parent), and the read re-keys the stale children still active, each once
//!   however often it was served in between. A child that leaves is removed at once.
//!   The read takes a fitting child's virtual time from its key in `fit` (equal by
//!   invariant), so it touches the parent's compact sets, not the children's records.
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

use crate::curve::{RuntimeCurve, ServiceCurve};
use crate::hierarchy::ClassTree;
use crate::pq::IndexedHeap;
use crate::sched::PollAt;
use crate::units::Instant;

use super::config::Curves;

/// Index of the root (the link).
const ROOT: usize = 0;

/// `Node::kids` of a leaf.
const NO_KIDS: u32 = u32::MAX;

/// Link-sharing state of one class that the packet path reads and writes (the upper
/// limit apart). Aligned to a cache line so that a class, read on every packet of a
/// random class, spans two lines rather than three.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct Node {
    /// Virtual curve `V_i` (Eq. 12), virtual time (ns) to bytes.
    virtual_curve: RuntimeCurve,
    /// `v_i = V_i^{-1}(w_i)` while active, ns of virtual time.
    vt: u64,
    /// `w_i`: bytes served to the class by either criterion.
    total: u64,
    /// The `ls` curve; `None` for classes that take no part in link-sharing.
    ls: Option<ServiceCurve>,
    /// Own fit time `U_i^{-1}(w_i)` (ns), 0 without `ul`.
    myf: u64,
    /// Parent's index (meaningless for the root).
    parent: u32,
    /// Position among the parent's children: the item in the parent's heaps.
    slot: u32,
    /// Index of the parent's [`Children`] (meaningless for the root).
    up: u32,
    /// Index of the class's [`Children`], or `NO_KIDS` for a leaf.
    kids: u32,
    /// Whether the class is active for link-sharing.
    active: bool,
    /// Whether the class has an upper limit (and an `ls` curve).
    limited: bool,
    /// Whether the virtual and upper-limit curves have been anchored once.
    anchored: bool,
}

const _: () = assert!(size_of::<Node>() == 128, "a Node spans two cache lines");

/// The upper-limit curves of one class, read only for classes with one.
#[derive(Clone, Copy, Debug)]
struct UpperLimit {
    /// The `ul` curve.
    ul: Option<ServiceCurve>,
    /// Upper-limit curve `U_i`, real time (ns) to bytes, anchored at activations.
    limit_curve: RuntimeCurve,
}

/// The active children of one class. See the [module docs](self).
#[derive(Clone, Debug)]
struct Children {
    /// Class index of each child, by position.
    ids: Vec<u32>,
    /// Fitting active children by virtual time.
    fit: IndexedHeap,
    /// Active children held back by an upper limit, by fit time.
    waiting: IndexedHeap,
    /// Active children by `!v` (largest virtual time first), brought up to date only
    /// when `v_max` is read: see [`LinkSharing::sync_latest`].
    latest: IndexedHeap,
    /// Slots of the children whose key in `latest` may lag (each at most once).
    stale: Vec<u32>,
    /// By slot: whether the child is on the `stale` list.
    marked: Vec<bool>,
    /// Largest virtual time of a child chosen by link-sharing in this active period.
    cvtmin: u64,
    /// Largest virtual time a child had when it left the active set.
    cvtoff: u64,
}

impl Children {
    /// Whether some child is active (every active child is in `fit` or in `waiting`).
    #[inline]
    fn any_active(&self) -> bool {
        !self.fit.is_empty() || !self.waiting.is_empty()
    }
}

/// The link-sharing criterion over the class tree. See the [module docs](self).
#[derive(Clone, Debug)]
pub(super) struct LinkSharing {
    nodes: Vec<Node>,
    upper: Vec<UpperLimit>,
    /// The children sets of the root and the interior classes.
    kids: Vec<Children>,
    /// Whether some class has an upper limit; if not, every fit time is 0, `waiting`
    /// sets stay empty and the packet path skips them.
    limits: bool,
}

impl LinkSharing {
    /// The state for `tree` with the resolved `curves` (by class index).
    pub(super) fn new(tree: &ClassTree, curves: &[Curves]) -> LinkSharing {
        let zero = ServiceCurve::linear(crate::units::Rate::ZERO);
        let mut nodes: Vec<Node> = curves
            .iter()
            .map(|c| Node {
                virtual_curve: RuntimeCurve::new(&c.ls.unwrap_or(zero), 0, 0),
                vt: 0,
                total: 0,
                myf: 0,
                ls: c.ls,
                parent: 0,
                slot: 0,
                up: 0,
                kids: NO_KIDS,
                active: false,
                limited: c.ls.is_some() && c.ul.is_some(),
                anchored: false,
            })
            .collect();
        let upper = curves
            .iter()
            .map(|c| UpperLimit {
                ul: c.ul,
                limit_curve: RuntimeCurve::new(&c.ul.unwrap_or(zero), 0, 0),
            })
            .collect();
        let mut kids = Vec::new();
        for c in tree.classes() {
            if c.children.is_empty() && c.parent.is_some() {
                continue;
            }
            for (slot, k) in c.children.iter().enumerate() {
                let child = &mut nodes[k.index()];
                child.parent = c.id.0;
                child.slot = slot as u32;
                child.up = kids.len() as u32;
            }
            nodes[c.id.index()].kids = kids.len() as u32;
            let n = c.children.len();
            kids.push(Children {
                ids: c.children.iter().map(|k| k.0).collect(),
                fit: IndexedHeap::new(n),
                waiting: IndexedHeap::new(n),
                latest: IndexedHeap::new(n),
                stale: Vec::with_capacity(n),
                marked: vec![false; n],
                cvtmin: 0,
                cvtoff: 0,
            });
        }
        let limits = nodes.iter().any(|n| n.limited);
        LinkSharing {
            nodes,
            upper,
            kids,
            limits,
        }
    }

    /// The children sets of class `p` (the root or an interior class).
    #[inline]
    fn kids_of(&self, p: usize) -> &Children {
        &self.kids[self.nodes[p].kids as usize]
    }

    /// The children sets of class `p` (the root or an interior class), mutably.
    #[inline]
    fn kids_of_mut(&mut self, p: usize) -> &mut Children {
        let k = self.nodes[p].kids as usize;
        &mut self.kids[k]
    }

    /// Whether class `c` takes part in link-sharing (has an `ls` curve).
    #[inline]
    pub(super) fn has(&self, c: usize) -> bool {
        self.nodes[c].ls.is_some()
    }

    /// Loads a word of each cache line of class `c`'s record, so that a later access
    /// finds them in the cache (an early load, kept by [`core::hint::black_box`]; no
    /// state changes).
    #[inline(always)]
    pub(super) fn touch(&self, c: usize) {
        if let Some(n) = self.nodes.get(c) {
            core::hint::black_box((n.total, n.parent));
        }
    }

    /// Whether some class has an upper limit that can hold link-sharing back.
    pub(super) fn any_limit(&self) -> bool {
        self.limits
    }

    /// Whether class `c` has no children.
    #[inline]
    fn is_leaf(&self, c: usize) -> bool {
        self.nodes[c].kids == NO_KIDS
    }

    /// Leaf `leaf` (with an `ls` curve) becomes backlogged at `now`: it and every
    /// ancestor that was passive become active (Fig. 7 `update_v` on activation,
    /// Eq. 12), and the fit times above them are brought up to date.
    pub(super) fn activate(&mut self, leaf: usize, now: u64) {
        let mut k = leaf;
        loop {
            let Node { parent, up, .. } = self.nodes[k];
            let p = parent as usize;
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
            let kids = &mut self.kids[at];
            kids.cvtmin = kids.cvtoff;
            return kids.cvtoff;
        }
        self.promote_at(at, now);
        self.sync_latest(at);
        let kids = &self.kids[at];
        let lo = kids
            .fit
            .peek()
            .map_or(kids.cvtmin, |(_, v)| v.max(kids.cvtmin));
        let hi = kids.latest.peek().map_or(lo, |(_, key)| (!key).max(lo));
        lo + (hi - lo) / 2
    }

    /// Anchors the virtual curve of `k` at `(vs, w_k)` and its upper-limit curve at
    /// `(now, w_k)` (min-update after the first time), and marks it active.
    fn anchor(&mut self, k: usize, vs: u64, now: u64) {
        let n = &mut self.nodes[k];
        let ls =
            n.ls.expect("anchor: only classes with an ls curve become active");
        let anchored = n.anchored;
        if anchored {
            n.virtual_curve.min_with(&ls, vs, n.total);
        } else {
            n.virtual_curve = RuntimeCurve::new(&ls, vs, n.total);
        }
        n.vt = n.virtual_curve.y2x(n.total);
        n.anchored = true;
        n.active = true;
        if n.limited {
            let total = n.total;
            let upper = &mut self.upper[k];
            let ul = upper.ul.expect("limited classes have a ul curve");
            if anchored {
                upper.limit_curve.min_with(&ul, now, total);
            } else {
                upper.limit_curve = RuntimeCurve::new(&ul, now, total);
            }
            self.nodes[k].myf = upper.limit_curve.y2x(total);
        }
    }

    /// The fit time of active class `k`: `max(own fit time, earliest child fit time)`.
    fn fit_time(&self, k: usize) -> u64 {
        let own = self.nodes[k].myf;
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
    /// virtual time and fit time and the instant `now`; its key in `latest` is marked
    /// stale, for [`LinkSharing::sync_latest`].
    #[inline]
    fn place(&mut self, k: usize, now: u64) {
        let Node { up, slot, vt, .. } = self.nodes[k];
        let kids = &mut self.kids[up as usize];
        if !kids.marked[slot as usize] {
            kids.marked[slot as usize] = true;
            kids.stale.push(slot);
        }
        if self.limits {
            self.place_limited(k, now);
        } else {
            kids.fit.set(slot, vt);
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

    /// Brings `latest` of the children set `kids[at]` up to date before `v_max` is read:
    /// every child on its `stale` list that is still active gets its virtual time as its
    /// key. Each service or activation of a child only marks it stale, so a child served
    /// many times between two reads is re-keyed once, and one that leaves first never
    /// (leaving removes it from `latest` at once). Every service marks at most one child
    /// per level, so this costs O(log k) amortised per packet and level.
    fn sync_latest(&mut self, at: usize) {
        let LinkSharing { nodes, kids, .. } = self;
        let Children {
            ids,
            fit,
            waiting,
            latest,
            stale,
            marked,
            ..
        } = &mut kids[at];
        for slot in stale.drain(..) {
            marked[slot as usize] = false;
            let vt = match fit.key_of(slot) {
                Some(vt) => vt,
                None if !waiting.is_empty() && waiting.contains(slot) => {
                    nodes[ids[slot as usize] as usize].vt
                }
                None => continue,
            };
            latest.set(slot, !vt);
        }
    }

    /// Re-places every active class from `k` up to the root's children.
    fn refresh_from(&mut self, mut k: usize, now: u64) {
        while k != ROOT {
            if self.nodes[k].active {
                self.place(k, now);
            }
            k = self.nodes[k].parent as usize;
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
            let Node {
                parent,
                up,
                slot,
                vt,
                ..
            } = self.nodes[k];
            let kids = &mut self.kids[up as usize];
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

    /// Moves the children of `p` whose fit time has come from `waiting` to `fit`.
    #[inline]
    fn promote(&mut self, p: usize, now: u64) {
        self.promote_at(self.nodes[p].kids as usize, now);
    }

    /// [`LinkSharing::promote`] for the children set `kids[at]`.
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

    /// Removes active class `k` and every ancestor left without an active child from
    /// their parents' sets (recording `cvtoff`); returns the lowest ancestor still active
    /// (or the root).
    fn leave(&mut self, mut k: usize) -> usize {
        loop {
            let Node {
                parent,
                up,
                slot,
                vt,
                ..
            } = self.nodes[k];
            self.nodes[k].active = false;
            let p = parent as usize;
            let kids = &mut self.kids[up as usize];
            kids.fit.remove(slot);
            if self.limits {
                kids.waiting.remove(slot);
            }
            kids.latest.remove(slot);
            kids.cvtoff = kids.cvtoff.max(vt);
            if p == ROOT || kids.any_active() {
                return p;
            }
            k = p;
        }
    }

    /// Leaf `leaf` was served `len` bytes at `now` (by either criterion); `emptied` says
    /// whether it has no packet left. `w` grows for the leaf and every ancestor, active
    /// classes get their new virtual and fit times (Fig. 7), an emptied leaf leaves the
    /// active sets with the ancestors it leaves without an active child.
    pub(super) fn served(&mut self, leaf: usize, len: u64, now: u64, emptied: bool) {
        let mut k = leaf;
        while k != ROOT {
            let n = &mut self.nodes[k];
            n.total += len;
            if n.active {
                n.vt = n.virtual_curve.y2x(n.total);
                if n.limited {
                    n.myf = self.upper[k].limit_curve.y2x(n.total);
                }
            }
            k = n.parent as usize;
        }
        let from = if emptied && self.nodes[leaf].active {
            self.leave(leaf)
        } else {
            leaf
        };
        self.refresh_from(from, now);
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
        let mut p = ROOT;
        loop {
            self.promote(p, now);
            let kids = self.kids_of_mut(p);
            let (slot, vt) = kids.fit.peek()?;
            kids.cvtmin = kids.cvtmin.max(vt);
            let c = kids.ids[slot as usize] as usize;
            if self.is_leaf(c) {
                return Some(c);
            }
            p = c;
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
    /// equal to its virtual time and fit time, and a class in `fit` fits at `now`; its
    /// key in `latest` is its virtual time unless it is marked stale (then it is absent
    /// or lags), and it is on its parent's `stale` list exactly when marked; a passive
    /// class is in none of the sets; `w` of an interior class is the sum over its
    /// children.
    pub(super) fn check(&self, backlogged: impl Fn(usize) -> bool, now: u64) -> Result<(), String> {
        for (k, n) in self.nodes.iter().enumerate().skip(1) {
            let kids = &self.kids[n.up as usize];
            if kids.ids.get(n.slot as usize) != Some(&(k as u32))
                || n.up != self.nodes[n.parent as usize].kids
            {
                return Err(format!(
                    "class {k}: wrong place among its parent's children"
                ));
            }
            let stale = kids.marked[n.slot as usize];
            let listed = kids.stale.iter().filter(|&&s| s == n.slot).count();
            if listed != usize::from(stale) {
                return Err(format!(
                    "class {k}: stale = {stale} but listed {listed} times"
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
            if !n.active {
                if fit.is_some() || waiting.is_some() || latest.is_some() {
                    return Err(format!("passive class {k} is in its parent's sets"));
                }
                continue;
            }
            if n.vt != n.virtual_curve.y2x(n.total) {
                return Err(format!("class {k}: stale virtual time"));
            }
            let latest_ok = if stale {
                latest.is_none_or(|key| !key <= n.vt)
            } else {
                latest == Some(!n.vt)
            };
            if !latest_ok {
                return Err(format!(
                    "class {k}: key {latest:?} in latest, v = {}, stale = {stale}",
                    n.vt
                ));
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
