//! Compact per-class curves: the part of a [`RuntimeCurve`] that changes at run time
//! (the anchor and the first segment, which a concave min-update may cut), with the
//! slopes kept once per distinct curve in a [`CurveTable`].
//!
//! A class's runtime curves are always built from its own service curve, and neither a
//! min-update ([`RuntimeCurve::min_with`]) nor a lookup changes their slopes, so the
//! slopes, the service curve and its shape need not be stored per class. With
//! thousands of classes this halves the records a packet reads (the real-time and the
//! link-sharing state of a class each fit one cache line); classes with the same curves
//! (all the leaves of a parent, typically) share one table entry.

use std::collections::BTreeMap;

use crate::curve::{RuntimeCurve, ServiceCurve, Shape};

/// A [`RuntimeCurve`] without its slopes: anchor `(x, y)` (ns, bytes), first segment
/// `dx` ns long gaining `dy` bytes. Read and updated with the slopes of its
/// [`CurveTable`] entry.
#[derive(Clone, Copy, Debug)]
pub(super) struct Anchored {
    x: u64,
    y: u64,
    dx: u64,
    dy: u64,
}

impl Anchored {
    /// The curve of a class with service curve `sc` before its first activation: `sc`
    /// anchored at `(0, u64::MAX)`, at infinity (`u64::MAX` bytes everywhere). The first
    /// min-update ([`Anchored::min_with`]) with `sc` anchored at `(x, y)` then gives
    /// exactly that curve, for every shape, since no amount of service reaches
    /// `u64::MAX` bytes; and the first segment is already `sc`'s, as a line-shaped curve
    /// needs (see [`Anchored::min_with`]).
    pub(super) fn infinite(sc: &ServiceCurve) -> Anchored {
        Anchored::of(RuntimeCurve::new(sc, 0, u64::MAX))
    }

    /// The curve `c` without its slopes.
    #[inline(always)]
    fn of(c: RuntimeCurve) -> Anchored {
        Anchored {
            x: c.x,
            y: c.y,
            dx: c.dx,
            dy: c.dy,
        }
    }

    /// The full curve, with the slopes of `sc`.
    #[inline(always)]
    fn with(self, sc: &ServiceCurve) -> RuntimeCurve {
        RuntimeCurve {
            x: self.x,
            y: self.y,
            dx: self.dx,
            dy: self.dy,
            m1: sc.m1,
            m2: sc.m2,
        }
    }

    /// [`RuntimeCurve::y2x`] of this curve with the slopes of `sc`.
    #[inline(always)]
    pub(super) fn y2x(self, sc: &ServiceCurve, y: u64) -> u64 {
        self.with(sc).y2x(y)
    }

    /// [`RuntimeCurve::y2x`] of the eligible curve ([`RuntimeCurve::eligible_for`]) of
    /// this deadline curve.
    #[inline(always)]
    pub(super) fn eligible_y2x(self, sc: &ServiceCurve, shape: Shape, y: u64) -> u64 {
        self.with(sc).eligible_for(shape).y2x(y)
    }

    /// [`RuntimeCurve::min_with_shape`]: `self <- min(self, sc anchored at (x, y))`.
    /// `sc` (of shape `shape`) must be the curve `self` was built from
    /// ([`Anchored::infinite`]). A line-shaped curve keeps `sc`'s first segment through
    /// every update (the minimum is one of two copies of `sc`), so only its anchor is
    /// written: the first segment's bytes are not recomputed on every activation.
    ///
    /// The line-shaped case, a comparison and at most a new anchor, is inlined into the
    /// callers (every activation); the other shapes are updated out of line, so that the
    /// full curve is only built on the stack for them.
    #[inline(always)]
    pub(super) fn min_with(&mut self, sc: &ServiceCurve, shape: Shape, x: u64, y: u64) {
        if shape == Shape::Line {
            // `RuntimeCurve::min_with_shape`'s line case, on the anchor alone.
            if self.with(sc).line_above(x, y) {
                (self.x, self.y) = (x, y);
            }
        } else {
            self.min_with_curved(sc, shape, x, y);
        }
    }

    /// [`Anchored::min_with`] for a concave `sc`, or a convex one whose first segment rises.
    #[inline(never)]
    fn min_with_curved(&mut self, sc: &ServiceCurve, shape: Shape, x: u64, y: u64) {
        let mut c = self.with(sc);
        c.min_with_shape(sc, shape, x, y);
        *self = Anchored::of(c);
    }
}

/// One distinct curve of a [`CurveTable`], with its shape and a flag of the caller's.
#[derive(Clone, Copy, Debug)]
pub(super) struct Entry {
    /// The service curve.
    pub(super) sc: ServiceCurve,
    /// Its shape.
    pub(super) shape: Shape,
    /// A property of the classes sharing the entry (the link-sharing criterion: whether
    /// they have an upper limit).
    pub(super) flag: bool,
}

/// The distinct `(curve, flag)` pairs of a set of classes; each class stores the index
/// of its entry. Built once; entries appear in order of first use, so indices are
/// deterministic.
#[derive(Clone, Debug, Default)]
pub(super) struct CurveTable {
    entries: Vec<Entry>,
    index: BTreeMap<(u64, u64, u64, bool), u32>,
}

impl CurveTable {
    /// The index of the entry for `(sc, flag)`, added if new.
    pub(super) fn intern(&mut self, sc: ServiceCurve, flag: bool) -> u32 {
        let entries = &mut self.entries;
        *self
            .index
            .entry((sc.m1.0, sc.d.0, sc.m2.0, flag))
            .or_insert_with(|| {
                entries.push(Entry {
                    sc,
                    shape: sc.shape(),
                    flag,
                });
                u32::try_from(entries.len() - 1).expect("fewer than 2^32 distinct curves")
            })
    }

    /// The entry at `i`.
    #[inline(always)]
    pub(super) fn get(&self, i: u32) -> &Entry {
        &self.entries[i as usize]
    }
}
