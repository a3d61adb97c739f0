//! Service curves.
//!
//! A two-piece linear service curve `(m1, d, m2)`: slope `m1` (bit/s) for the first `d`,
//! then slope `m2`. The same curve can be written `(umax, dmax, rate)` (H-FSC paper,
//! Fig. 8): a burst of `umax` bytes must be served within `dmax`, and the long-term rate
//! is `rate`. See `papers/NOTES.md` for the conversion rules.
//!
//! A [`RuntimeCurve`] is a service curve anchored at a point `(x, y)` — `x` an instant
//! (or a virtual time, both in ns), `y` a byte count — as the H-FSC deadline, eligible,
//! virtual and upper-limit curves are. It supports the two lookups every curve-based
//! scheduler needs, [`RuntimeCurve::x2y`] and [`RuntimeCurve::y2x`], and the min-update
//! of the H-FSC paper's Eq. 7 / Fig. 9 ([`RuntimeCurve::min_with`]).
//!
//! # Exact integer arithmetic
//!
//! No slope is scaled into fixed point: a segment of slope `m` bit/s over `t` ns carries
//! `floor(m · t / 8e9)` bytes, and the time a segment needs for `b` bytes is
//! `ceil(b · 8e9 / m)` ns, both computed in `u128` (`m < 2^64`, `t < 2^64`, so the
//! product fits). A runtime curve is always evaluated from its anchor, never
//! incrementally, so rounding never accumulates: at most one byte per segment (two
//! segments), whatever the distance from the anchor — the value after a simulated year
//! at 100 Gbit/s is exact (see the tests). `y2x` is the exact inverse in the sense that
//! `y2x(y)` is the smallest `x` with `x2y(x) >= y`.

use crate::units::{Bytes, Duration, NANOS_PER_SEC, Rate};

/// A two-piece linear service curve through the origin.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ServiceCurve {
    /// Slope of the first segment.
    pub m1: Rate,
    /// Length of the first segment.
    pub d: Duration,
    /// Slope after `d`.
    pub m2: Rate,
}

/// Why `(umax, dmax, rate)` does not describe a service curve.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CurveError {
    /// `dmax` is zero while `umax` is not: no finite rate serves a burst in no time.
    ZeroDelay,
    /// Every slope is zero: the curve guarantees nothing.
    Zero,
}

impl core::fmt::Display for CurveError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            CurveError::ZeroDelay => {
                f.write_str("dmax is zero but umax is not; give dmax > 0 or umax = 0")
            }
            CurveError::Zero => f.write_str("all slopes are zero; give m2 (or rate) above zero"),
        }
    }
}

impl ServiceCurve {
    /// A linear curve of slope `r`.
    pub const fn linear(r: Rate) -> ServiceCurve {
        ServiceCurve {
            m1: r,
            d: Duration::ZERO,
            m2: r,
        }
    }

    /// The curve that serves a burst of `umax` bytes within `dmax` and then `rate`.
    ///
    /// If `umax / dmax > rate` the curve is concave: `m1 = umax / dmax` (rounded up, so
    /// the burst is never served late), `d = dmax`, `m2 = rate`. Otherwise it is convex:
    /// `m1 = 0`, `d = dmax - umax / rate`, `m2 = rate`.
    pub fn from_umax_dmax_rate(
        umax: Bytes,
        dmax: Duration,
        rate: Rate,
    ) -> Result<ServiceCurve, CurveError> {
        if rate.0 == 0 && umax.0 == 0 {
            return Err(CurveError::Zero);
        }
        if umax.0 == 0 {
            return Ok(ServiceCurve::linear(rate));
        }
        if dmax.0 == 0 {
            return Err(CurveError::ZeroDelay);
        }
        let burst_rate = (umax.bits() * NANOS_PER_SEC as u128).div_ceil(dmax.0 as u128);
        let burst_rate = u64::try_from(burst_rate).unwrap_or(u64::MAX);
        if burst_rate > rate.0 {
            Ok(ServiceCurve {
                m1: Rate(burst_rate),
                d: dmax,
                m2: rate,
            })
        } else {
            let at_rate = rate.tx_time(umax);
            Ok(ServiceCurve {
                m1: Rate::ZERO,
                d: dmax - at_rate,
                m2: rate,
            })
        }
    }

    /// Whether the curve guarantees nothing at all.
    pub fn is_zero(&self) -> bool {
        self.m2.0 == 0 && (self.m1.0 == 0 || self.d.0 == 0)
    }

    /// The curve's long-term rate.
    pub fn rate(&self) -> Rate {
        self.m2
    }
}

/// Bits per byte times nanoseconds per second: the scale between bytes·ns and bit/s.
const BIT_NS_PER_BYTE_S: u64 = 8 * NANOS_PER_SEC;

/// Bytes a segment of slope `m` carries in `t` ns: `floor(m · t / 8e9)`. Computed in
/// `u64` when the product fits (the common case: under 2^64 bit·ns, e.g. 10 Gbit/s for
/// 1.8 s), else in `u128`; both give the same exact result.
#[inline]
fn seg_bytes(m: Rate, t: u64) -> u64 {
    match m.0.checked_mul(t) {
        Some(p) => p / BIT_NS_PER_BYTE_S,
        None => {
            let b = u128::from(m.0) * u128::from(t) / u128::from(BIT_NS_PER_BYTE_S);
            u64::try_from(b).unwrap_or(u64::MAX)
        }
    }
}

/// Nanoseconds a segment of slope `m` needs to carry `b` bytes: `ceil(b · 8e9 / m)`;
/// `u64::MAX` (never) for a flat segment and `b > 0`. `u64` fast path as in
/// [`seg_bytes`].
#[inline]
fn seg_time(m: Rate, b: u64) -> u64 {
    if b == 0 { 0 } else { seg_time_some(m, b) }
}

/// [`seg_time`] for `b > 0`.
#[inline]
fn seg_time_some(m: Rate, b: u64) -> u64 {
    debug_assert!(b > 0);
    if m.0 == 0 {
        return u64::MAX;
    }
    match b.checked_mul(BIT_NS_PER_BYTE_S) {
        Some(p) => p.div_ceil(m.0),
        None => {
            let t = (u128::from(b) * u128::from(BIT_NS_PER_BYTE_S)).div_ceil(u128::from(m.0));
            u64::try_from(t).unwrap_or(u64::MAX)
        }
    }
}

impl ServiceCurve {
    /// Whether the first slope is larger than the second (a burst is served faster than
    /// the long-term rate).
    pub fn is_concave(&self) -> bool {
        self.m1 > self.m2 && self.d.0 > 0
    }

    /// Whether the curve is convex with a first segment that rises but more slowly than
    /// the second (`0 < m1 < m2`): the one shape whose min-update is not exact (see
    /// [`RuntimeCurve::min_with`]).
    pub fn has_sloped_convex_start(&self) -> bool {
        self.m1.0 > 0 && self.m1 < self.m2 && self.d.0 > 0
    }

    /// The curve's [`Shape`], which decides how [`RuntimeCurve::min_with`] and
    /// [`RuntimeCurve::eligible`] treat it. Schedulers that update a curve on every
    /// activation compute it once and pass it to [`RuntimeCurve::min_with_shape`].
    pub fn shape(&self) -> Shape {
        if self.is_concave() {
            Shape::Concave
        } else if self.has_sloped_convex_start() {
            Shape::SlopedConvex
        } else {
            Shape::Line
        }
    }
}

/// How a [`ServiceCurve`] is treated by the min-update (Eq. 7) and the eligible curve
/// (Eq. 11); see [`RuntimeCurve::min_with`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shape {
    /// Linear, or convex with a flat first segment (`m1 = 0`): every anchored copy is
    /// the line of slope `m2` from a point, delayed by a fixed time.
    Line,
    /// Concave: `m1 > m2` over `d > 0` ([`ServiceCurve::is_concave`]).
    Concave,
    /// Convex with a rising first segment, `0 < m1 < m2`
    /// ([`ServiceCurve::has_sloped_convex_start`]).
    SlopedConvex,
}

/// A two-piece curve anchored at `(x, y)`: from `x` it rises with slope `m1` for `dx` ns
/// (gaining `dy = floor(m1 · dx / 8e9)` bytes), then with slope `m2`. Before `x` it is
/// `y`. See the [module docs](self) for the arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RuntimeCurve {
    /// Anchor abscissa (ns: real or virtual time).
    pub x: u64,
    /// Anchor ordinate (bytes).
    pub y: u64,
    /// Length of the first segment (ns).
    pub dx: u64,
    /// Bytes gained over the first segment.
    pub dy: u64,
    /// Slope of the first segment.
    pub m1: Rate,
    /// Slope after the first segment.
    pub m2: Rate,
}

impl RuntimeCurve {
    /// The service curve `sc` anchored at `(x, y)`.
    #[inline]
    pub fn new(sc: &ServiceCurve, x: u64, y: u64) -> RuntimeCurve {
        RuntimeCurve {
            x,
            y,
            dx: sc.d.0,
            dy: seg_bytes(sc.m1, sc.d.0),
            m1: sc.m1,
            m2: sc.m2,
        }
    }

    /// The curve's value at `x`.
    #[inline]
    pub fn x2y(&self, x: u64) -> u64 {
        if x <= self.x {
            self.y
        } else if x - self.x <= self.dx {
            self.y.saturating_add(seg_bytes(self.m1, x - self.x))
        } else {
            self.y
                .saturating_add(self.dy)
                .saturating_add(seg_bytes(self.m2, x - self.x - self.dx))
        }
    }

    /// The smallest `x` at which the curve reaches `y` (`u64::MAX` if it never does).
    #[inline]
    pub fn y2x(&self, y: u64) -> u64 {
        if y <= self.y {
            return self.x;
        }
        // `up > 0`: on the first segment if it gains at least `up` bytes (never when it
        // gains none), else beyond it, by `up - dy > 0` bytes.
        let up = y - self.y;
        if up <= self.dy {
            self.x.saturating_add(seg_time_some(self.m1, up))
        } else {
            self.x
                .saturating_add(self.dx)
                .saturating_add(seg_time_some(self.m2, up - self.dy))
        }
    }

    /// Replaces the curve by `min(self, sc anchored at (x, y))` where it matters from
    /// now on: for ordinates `>= y`, whose inverses (deadlines, virtual times) are all
    /// that is ever looked up after the update, since `y` (service so far) only grows
    /// (H-FSC paper, Eq. 7). `sc` must be the curve `self` was built from (same slopes).
    ///
    /// * Linear `sc`, or convex with a flat first segment (`m1 = 0`, what
    ///   `(umax, dmax, rate)` gives): both candidates are `sc` anchored somewhere, so
    ///   for every `y' > y` their inverses differ by the same amount,
    ///   `(x0 − x) + (y − y0) / m2` for the old anchor `(x0, y0)`. The old curve is kept
    ///   if and only if `y` is at or above its line of slope `m2` from its anchor (its
    ///   eligible curve) at `x`; otherwise the new one replaces it. The paper's Fig. 9
    ///   compares `y` with the old curve itself instead, which keeps the old curve when
    ///   `y` lies between the two and so keeps deadlines earlier than Eq. 7's; a class
    ///   that ran ahead on its eligible curve, went idle and came back could then miss
    ///   others' deadlines by more than `t_max` (H-FSC's property test found it). Linux
    ///   and ALTQ follow Fig. 9.
    /// * Convex with a sloped first segment (`0 < m1 < m2`): the minimum is not a
    ///   two-piece curve in general; this keeps Fig. 9's rule (old curve if it is below
    ///   `y` at `x`, else the new one). H-FSC refuses such curves as `rt` curves.
    /// * Concave `sc`: `self` if it is at or below `y` at `x`; the new curve if it stays
    ///   below `self` over its whole first segment; otherwise the new curve's first
    ///   segment is cut where it meets `self`, and the result continues on `self`
    ///   (both end with slope `m2`): the pointwise minimum, within a byte per segment.
    // Inlined everywhere: the linear and flat-convex cases are a comparison and a
    // re-anchoring, cheaper than the call (H-FSC activates classes on most packets);
    // the concave case stays out of line.
    #[inline(always)]
    pub fn min_with(&mut self, sc: &ServiceCurve, x: u64, y: u64) {
        self.min_with_shape(sc, sc.shape(), x, y);
    }

    /// [`RuntimeCurve::min_with`] with `shape`, which must be `sc.shape()`, computed
    /// beforehand.
    #[inline(always)]
    pub fn min_with_shape(&mut self, sc: &ServiceCurve, shape: Shape, x: u64, y: u64) {
        match shape {
            Shape::Line => {
                if self.line_above(x, y) {
                    *self = RuntimeCurve::new(sc, x, y);
                }
            }
            Shape::Concave => self.min_with_concave(sc, x, y),
            Shape::SlopedConvex => self.min_with_sloped_convex(sc, x, y),
        }
    }

    /// [`RuntimeCurve::min_with`] for a convex `sc` with `0 < m1 < m2` (Fig. 9's rule).
    #[inline(never)]
    fn min_with_sloped_convex(&mut self, sc: &ServiceCurve, x: u64, y: u64) {
        if self.x2y(x) >= y {
            *self = RuntimeCurve::new(sc, x, y);
        }
    }

    /// [`RuntimeCurve::min_with`] for a concave `sc`.
    #[inline(never)]
    fn min_with_concave(&mut self, sc: &ServiceCurve, x: u64, y: u64) {
        let here = self.x2y(x);
        if here <= y {
            return;
        }
        let fresh = RuntimeCurve::new(sc, x, y);
        if self.x2y(x.saturating_add(fresh.dx)) >= y.saturating_add(fresh.dy) {
            *self = fresh;
            return;
        }
        // The first segment of `fresh` (slope m1) meets `self` where
        // y + m1·t = here + m2·t (self is on its m2 part there or joins it by then):
        // t = (here − y) / (m1 − m2). Take the first whole ns at which fresh reaches self.
        let gap = here - y;
        let mut t = seg_time(Rate(sc.m1.0 - sc.m2.0), gap);
        // `self` may still be on its m1 segment at `x`; then it rises as fast as `fresh`
        // until its own knee, which moves the meeting point by the time left to it.
        let knee = self.x.saturating_add(self.dx);
        if knee > x {
            t = t.saturating_add(knee - x);
        }
        let t = t.min(fresh.dx);
        *self = RuntimeCurve {
            x,
            y,
            dx: t,
            dy: seg_bytes(sc.m1, t),
            m1: sc.m1,
            m2: sc.m2,
        };
    }

    /// Whether the line of slope `m2` from the anchor is strictly above `y` at `x`,
    /// compared exactly (`m2 · (x − x0)` against `(y − y0) · 8e9`: in `u64` when both
    /// products fit, else in `u128`), not through the rounded-down value `x2y` would
    /// give.
    #[inline]
    pub(crate) fn line_above(&self, x: u64, y: u64) -> bool {
        match (x.checked_sub(self.x), y.checked_sub(self.y)) {
            (_, None) => true,
            (None, Some(_)) => false,
            (Some(dt), Some(dy)) => {
                match (self.m2.0.checked_mul(dt), dy.checked_mul(BIT_NS_PER_BYTE_S)) {
                    (Some(line), Some(point)) => line > point,
                    _ => {
                        u128::from(self.m2.0) * u128::from(dt)
                            > u128::from(dy) * u128::from(BIT_NS_PER_BYTE_S)
                    }
                }
            }
        }
    }

    /// The eligible curve of a deadline curve (H-FSC paper, Eq. 11): the deadline curve
    /// itself for a concave `sc`; for a convex one the line of slope `m2` from the
    /// deadline curve's anchor.
    #[inline]
    pub fn eligible(&self, sc: &ServiceCurve) -> RuntimeCurve {
        self.eligible_for(sc.shape())
    }

    /// [`RuntimeCurve::eligible`] for a service curve of shape `shape`.
    #[inline]
    pub fn eligible_for(&self, shape: Shape) -> RuntimeCurve {
        if shape == Shape::Concave {
            *self
        } else {
            RuntimeCurve {
                dx: 0,
                dy: 0,
                m1: self.m2,
                ..*self
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MS: u64 = 1_000_000;

    /// 2 Mbit/s for 10 ms, then 1 Mbit/s: 2500 B at the knee.
    fn concave() -> ServiceCurve {
        ServiceCurve {
            m1: Rate::from_mbit(2),
            d: Duration::from_millis(10),
            m2: Rate::from_mbit(1),
        }
    }

    /// Flat for 10 ms, then 1 Mbit/s.
    fn convex() -> ServiceCurve {
        ServiceCurve {
            m1: Rate::ZERO,
            d: Duration::from_millis(10),
            m2: Rate::from_mbit(1),
        }
    }

    #[test]
    fn lookups_by_hand() {
        let c = RuntimeCurve::new(&concave(), 100 * MS, 1000);
        assert_eq!(c.x2y(0), 1000);
        assert_eq!(c.x2y(105 * MS), 1000 + 1250);
        assert_eq!(c.x2y(110 * MS), 1000 + 2500);
        assert_eq!(c.x2y(118 * MS), 1000 + 2500 + 1000);
        assert_eq!(c.y2x(1000), 100 * MS);
        assert_eq!(c.y2x(1000 + 1250), 105 * MS);
        assert_eq!(c.y2x(1000 + 3500), 118 * MS);
        // One byte at 2 Mbit/s takes 4 us; the curve reaches y + 1 after 4000 ns.
        assert_eq!(c.y2x(1001), 100 * MS + 4000);
        let v = RuntimeCurve::new(&convex(), 0, 0);
        assert_eq!(v.x2y(10 * MS), 0);
        assert_eq!(v.y2x(1), 10 * MS + 8000);
        assert_eq!(
            RuntimeCurve::new(&ServiceCurve::linear(Rate::ZERO), 0, 0).y2x(1),
            u64::MAX
        );
    }

    /// The line of slope `m2` is compared strictly and exactly: at 1 Gbit/s one byte
    /// takes exactly 8 ns, so the point (8 ns, 1 B) after the anchor is on the line, not
    /// under it; at 2^62 bit/s over 2^40 ns the products overflow `u64` and the `u128`
    /// path gives the same answers.
    #[test]
    fn line_above_by_hand() {
        let c = RuntimeCurve::new(&ServiceCurve::linear(Rate::from_gbit(1)), 100, 50);
        assert!(!c.line_above(108, 51));
        assert!(c.line_above(109, 51));
        assert!(!c.line_above(107, 51));
        let fast = RuntimeCurve::new(&ServiceCurve::linear(Rate(1 << 62)), 0, 0);
        // 2^62 bit/s for 2^40 ns = 2^102 / 8e9 B = 2^99 / 1e9 B, about 6.3e20 B: above
        // u64::MAX bytes, so every representable ordinate is under the line.
        assert!(fast.line_above(1 << 40, u64::MAX));
        // For 2^20 ns: 2^82 / 8e9 = 604_462_909_807_314.6... B.
        assert!(fast.line_above(1 << 20, 604_462_909_807_314));
        assert!(!fast.line_above(1 << 20, 604_462_909_807_315));
    }

    /// Issue 4: a class driven for a simulated year at 100 Gbit/s, re-anchored at every
    /// hour as if it went idle and came back, stays exact to within one byte.
    #[test]
    fn a_year_at_100_gbit_stays_exact() {
        let sc = ServiceCurve::linear(Rate::from_gbit(100));
        let hour = 3600 * NANOS_PER_SEC;
        let exact =
            |t: u64| (u128::from(t) * 100_000_000_000 / 8 / u128::from(NANOS_PER_SEC)) as u64;
        let mut c = RuntimeCurve::new(&sc, 0, 0);
        for h in 1..=365 * 24u64 {
            let t = h * hour;
            let got = c.x2y(t);
            assert!(
                got.abs_diff(exact(t)) <= 1,
                "hour {h}: {got} vs {}",
                exact(t)
            );
            c.min_with(&sc, t, exact(t));
            assert_eq!(
                c.y2x(exact(t) + 12_500),
                t + 1_000,
                "next 12.5 kB take 1 us"
            );
        }
        assert_eq!(
            c.x2y(365 * 24 * hour),
            100_000_000_000 / 8 * 365 * 24 * 3600
        );
    }

    /// Convex, flat for 10 ms then 1 Mbit/s, anchored at (0, 0): at 50 ms the curve is at
    /// 5000 B and its eligible line (slope m2 from the anchor) at 6250 B. For any later
    /// ordinate the old and new inverses differ by `(0 − 50 ms) + (c − 0) / m2`, which
    /// is >= 0, keeping the old curve, exactly when c >= 6250 B.
    #[test]
    fn convex_min_compares_with_the_eligible_line() {
        let sc = convex();
        let old = RuntimeCurve::new(&sc, 0, 0);
        for (c, kept) in [(10_000, true), (6250, true), (5500, false), (4000, false)] {
            let mut got = old;
            got.min_with(&sc, 50 * MS, c);
            let want = if kept {
                old
            } else {
                RuntimeCurve::new(&sc, 50 * MS, c)
            };
            assert_eq!(got, want, "c = {c}");
        }
        // c = 5500 lies between the curve (5000) and its eligible line (6250): Fig. 9
        // would keep the old curve, whose deadline for 6000 B is 58 ms; Eq. 7's is 64 ms.
        let mut got = old;
        got.min_with(&sc, 50 * MS, 5500);
        assert_eq!(
            old.y2x(6000)
                .max(RuntimeCurve::new(&sc, 50 * MS, 5500).y2x(6000)),
            64 * MS
        );
        assert_eq!(got.y2x(6000), 64 * MS);
    }

    #[test]
    fn concave_min_cuts_the_burst_where_the_curves_meet() {
        let sc = concave();
        // Old curve from (0, 0); at 20 ms it is at 3750 B on its m2 part. The new one
        // from (20 ms, 3000): gap 750 B closes at (2 - 1) Mbit/s in 6 ms.
        let mut c = RuntimeCurve::new(&sc, 0, 0);
        c.min_with(&sc, 20 * MS, 3000);
        assert_eq!((c.x, c.y, c.dx, c.dy), (20 * MS, 3000, 6 * MS, 1500));
        assert_eq!(c.x2y(40 * MS), RuntimeCurve::new(&sc, 0, 0).x2y(40 * MS));
        // The old curve still on its burst at the new anchor: from (0, 0) it is at 1250 B
        // at 5 ms and rises at m1 until its knee at 10 ms. The new one from (5 ms, 1000)
        // rises as fast until then, and closes the remaining 250 B gap at 1 Mbit/s in
        // 2 ms more: the curves meet 7 ms after the anchor, at 2750 B.
        let mut c = RuntimeCurve::new(&sc, 0, 0);
        c.min_with(&sc, 5 * MS, 1000);
        assert_eq!((c.x, c.y, c.dx, c.dy), (5 * MS, 1000, 7 * MS, 1750));
        assert_eq!(c.x2y(12 * MS), 2750);
        // Far below: the new curve replaces the old one.
        let mut c = RuntimeCurve::new(&sc, 0, 0);
        c.min_with(&sc, 20 * MS, 0);
        assert_eq!(c, RuntimeCurve::new(&sc, 20 * MS, 0));
        // Above: unchanged.
        let mut c = RuntimeCurve::new(&sc, 0, 0);
        c.min_with(&sc, 20 * MS, 5000);
        assert_eq!(c, RuntimeCurve::new(&sc, 0, 0));
    }

    /// The shapes by hand: `min_with` and `eligible` treat each curve by its shape.
    #[test]
    fn shapes() {
        assert_eq!(concave().shape(), Shape::Concave);
        assert_eq!(convex().shape(), Shape::Line, "flat first segment");
        assert_eq!(
            ServiceCurve::linear(Rate::from_mbit(1)).shape(),
            Shape::Line
        );
        let sloped = ServiceCurve {
            m1: Rate::from_kbit(500),
            ..convex()
        };
        assert_eq!(sloped.shape(), Shape::SlopedConvex);
        // A burst slope with no burst length is a line.
        let no_burst = ServiceCurve {
            d: Duration::ZERO,
            ..concave()
        };
        assert_eq!(no_burst.shape(), Shape::Line);
    }

    #[test]
    fn eligible_curve() {
        let d = RuntimeCurve::new(&concave(), 7, 9);
        assert_eq!(d.eligible(&concave()), d);
        let d = RuntimeCurve::new(&convex(), 7 * MS, 9);
        let e = d.eligible(&convex());
        assert_eq!(e.x2y(17 * MS), 9 + 1250, "slope m2 from the anchor");
    }

    proptest! {
        /// For concave curves the min-update is the pointwise minimum of the old curve
        /// and the new one, within one byte per segment, at every abscissa after the anchor.
        #[test]
        fn concave_min_is_the_pointwise_min(
            m1 in 2u64..10_000, m2 in 1u64..10_000, d_us in 1u64..100_000,
            x0 in 0u64..1_000_000, y0 in 0u64..1_000_000,
            after_us in 0u64..200_000, gap in 0u64..20_000,
            probes in proptest::collection::vec(0u64..400_000, 20),
        ) {
            prop_assume!(m1 > m2);
            let sc = ServiceCurve { m1: Rate::from_kbit(m1), d: Duration::from_micros(d_us), m2: Rate::from_kbit(m2) };
            let old = RuntimeCurve::new(&sc, x0 * 1000, y0);
            let x = old.x + after_us * 1000;
            // Anchor the new curve a little below the old one, so that they usually cross.
            let y1 = old.x2y(x).saturating_sub(gap);
            let fresh = RuntimeCurve::new(&sc, x, y1);
            let mut got = old;
            got.min_with(&sc, x, y1);
            for p in probes {
                let at = x + p * 1000;
                let want = old.x2y(at).min(fresh.x2y(at));
                prop_assert!(got.x2y(at).abs_diff(want) <= 2, "at {}: {} vs {}", at, got.x2y(at), want);
            }
        }

        /// The `u64` fast paths give exactly the `u128` results, on both sides of the
        /// overflow boundary.
        #[test]
        fn segment_arithmetic_is_exact(m in any::<u64>(), t in any::<u64>(), small in 0u64..1 << 34) {
            for (m, t) in [(m, t), (m >> 30, small), (small, t >> 30)] {
                let want = u128::from(m) * u128::from(t) / 8_000_000_000;
                prop_assert_eq!(u128::from(seg_bytes(Rate(m), t)), want.min(u128::from(u64::MAX)));
                if m > 0 && t > 0 {
                    let want = (u128::from(t) * 8_000_000_000).div_ceil(u128::from(m));
                    prop_assert_eq!(u128::from(seg_time(Rate(m), t)), want.min(u128::from(u64::MAX)));
                }
            }
        }

        /// The comparison with the line of slope `m2` is exact on both sides of the
        /// `u64` overflow boundary: it agrees with `m2 · (x − x0) > (y − y0) · 8e9`
        /// computed in `u128`, and a point below the anchor is always under the line.
        #[test]
        fn line_above_is_exact(m2 in any::<u64>(), dt in any::<u64>(), dy in any::<u64>(), shift in 0u32..64) {
            let (m2, dt, dy) = (m2 >> shift, dt >> (63 - shift.min(63)), dy >> shift);
            let c = RuntimeCurve::new(&ServiceCurve::linear(Rate(m2)), 1000, 500);
            let (x, y) = (1000u64.saturating_add(dt), 500u64.saturating_add(dy));
            let want = u128::from(m2) * u128::from(x - 1000) > u128::from(y - 500) * 8_000_000_000;
            prop_assert_eq!(c.line_above(x, y), want);
            prop_assert!(c.line_above(x, 499));
            prop_assert!(!c.line_above(999, 500 + dy));
        }

        /// `y2x` is the exact inverse of `x2y`: the smallest abscissa reaching `y`.
        #[test]
        fn y2x_inverts_x2y(m1 in 0u64..10_000, m2 in 1u64..10_000, d_us in 0u64..100_000, y in 0u64..10_000_000) {
            let sc = ServiceCurve { m1: Rate::from_kbit(m1), d: Duration::from_micros(d_us), m2: Rate::from_kbit(m2) };
            let c = RuntimeCurve::new(&sc, 1_000_000, 500);
            let x = c.y2x(y);
            prop_assert!(c.x2y(x) >= y);
            if x > c.x {
                prop_assert!(c.x2y(x - 1) < y);
            }
        }
    }

    #[test]
    fn umax_dmax_rate_concave_and_convex() {
        // Audio of the H-FSC paper: 160 B in 5 ms at 64 kbit/s -> m1 = 256 kbit/s.
        let c =
            ServiceCurve::from_umax_dmax_rate(Bytes(160), Duration::from_millis(5), Rate(64_000))
                .unwrap();
        assert_eq!(
            c,
            ServiceCurve {
                m1: Rate(256_000),
                d: Duration::from_millis(5),
                m2: Rate(64_000)
            }
        );
        // 1000 B in 1 s at 1 Mbit/s: 8 ms at the rate suffices, so convex with a 992 ms delay.
        let c =
            ServiceCurve::from_umax_dmax_rate(Bytes(1000), Duration::from_secs(1), Rate(1_000_000))
                .unwrap();
        assert_eq!(
            c,
            ServiceCurve {
                m1: Rate(0),
                d: Duration::from_millis(992),
                m2: Rate(1_000_000)
            }
        );
    }
}
