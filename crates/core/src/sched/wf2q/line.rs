//! A line of slope `r` through an anchor `(x, y)`: virtual time (ns) as a function of
//! bytes served. WF2Q+'s tags and virtual times are all such lines.
//!
//! [`Line::at`] is evaluated from the anchor, never incrementally, and rounded up:
//! `x + ceil((y' − y) · 8e9 / r)` ns, exact for any distance from the anchor. The product
//! is taken in `u64` while it fits (fewer than 2.3 GB past the anchor) and in `u128`
//! beyond, so a long backlogged period costs a wider division, never precision.

use crate::units::{NANOS_PER_SEC, Rate};

/// Bit-nanoseconds per byte-second: `bytes · BITS_NS / rate` is a time in ns.
const BITS_NS: u64 = 8 * NANOS_PER_SEC;

/// Virtual time `x + (bytes − y) / rate` for bytes at or past the anchor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Line {
    /// Anchor abscissa: virtual ns.
    x: u64,
    /// Anchor ordinate: bytes.
    y: u64,
    /// Slope: bits per second of virtual time.
    rate: u64,
}

impl Line {
    /// The line of slope `rate` through `(x, y)`.
    pub(crate) const fn new(rate: Rate, x: u64, y: u64) -> Line {
        Line { x, y, rate: rate.0 }
    }

    /// The virtual time (ns, rounded up) at which the line reaches `bytes`: `x` for
    /// `bytes <= y`; `u64::MAX` (never) for a zero slope or past `u64::MAX`.
    #[inline]
    pub(crate) fn at(&self, bytes: u64) -> u64 {
        let d = bytes.saturating_sub(self.y);
        if d == 0 {
            return self.x;
        }
        if self.rate == 0 {
            return u64::MAX;
        }
        let ns = match d.checked_mul(BITS_NS) {
            Some(bits_ns) => bits_ns.div_ceil(self.rate),
            None => {
                let wide = (u128::from(d) * u128::from(BITS_NS)).div_ceil(u128::from(self.rate));
                u64::try_from(wide).unwrap_or(u64::MAX)
            }
        };
        self.x.saturating_add(ns)
    }

    /// The same slope through `(x, y)`.
    #[inline]
    pub(crate) fn moved(&self, x: u64, y: u64) -> Line {
        Line { x, y, ..*self }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_up_from_the_anchor_in_both_widths() {
        // 1250 B at 10 Mbit/s: 1 ms exactly; 1 B more: 800 ns more.
        let l = Line::new(Rate::from_mbit(10), 5, 100);
        assert_eq!(l.at(0), 5);
        assert_eq!(l.at(100), 5);
        assert_eq!(l.at(1350), 5 + 1_000_000);
        assert_eq!(l.at(1351), 5 + 1_000_800);
        // 1 B at 3 bit/s: 8/3 s, rounded up.
        assert_eq!(Line::new(Rate(3), 0, 0).at(1), 2_666_666_667);
        // 10^12 B past the anchor (u128 path) at 100 Gbit/s: 80 s exactly.
        let far = Line::new(Rate::from_gbit(100), 0, 0);
        assert_eq!(far.at(1_000_000_000_000), 80 * NANOS_PER_SEC);
        assert_eq!(far.at(1_000_000_000_001), 80 * NANOS_PER_SEC + 1);
        assert_eq!(Line::new(Rate::ZERO, 7, 0).at(1), u64::MAX);
        assert_eq!(Line::new(Rate(1), u64::MAX - 1, 0).at(1), u64::MAX);
    }
}
