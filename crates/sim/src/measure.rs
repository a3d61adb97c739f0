//! Measurement during a run: per-port window series and delays, per-flow delays.
//!
//! Everything here is recorded on the packet path, so it is cheap: window series are
//! preallocated arrays indexed by `(window, leaf)`; delays are counted as they come in
//! exact distributions ([`DelayCounter`]: each distinct delay in ns with its count),
//! whose size grows with the distinct delays, not with the packets.

use linkshare_core::hierarchy::{ClassId, ClassTree};
use linkshare_core::stats::Count;
use linkshare_core::units::{Duration, Instant};
use std::collections::hash_map::Entry;

use rustc_hash::FxHashMap;

use crate::result::{DelayHistogram, ServiceCell, ServiceSeries, WindowSample};

/// An exact delay distribution counted as packets come: each distinct delay (ns) with
/// the number of packets that had it. A hash map, because a packet's delay is counted
/// on the packet path (a sorted map costs several times more per packet); FxHash, because
/// the keys are delays, not input an adversary chooses. Its order never shows: the
/// distribution is sorted when the run reports ([`DelayCounter::histogram`]).
#[derive(Clone, Debug, Default)]
pub(crate) struct DelayCounter(FxHashMap<u64, u64>);

impl DelayCounter {
    /// Counts one packet of delay `d`; whether it is the first of that delay (a new
    /// bin).
    #[inline]
    pub(crate) fn add(&mut self, d: Duration) -> bool {
        match self.0.entry(d.0) {
            Entry::Occupied(mut e) => {
                *e.get_mut() += 1;
                false
            }
            Entry::Vacant(e) => {
                e.insert(1);
                true
            }
        }
    }

    /// The distribution, sorted.
    pub(crate) fn histogram(&self) -> DelayHistogram {
        let mut bins: Vec<(Duration, u64)> =
            self.0.iter().map(|(&d, &n)| (Duration(d), n)).collect();
        DelayHistogram::from_unsorted_bins(&mut bins)
    }
}

/// Adds a packet of `len` bytes to `c`.
#[inline]
pub(crate) fn add(c: &mut Count, len: u32) {
    c.packets += 1;
    c.bytes += u64::from(len);
}

/// Removes a packet of `len` bytes from `c`.
#[inline]
pub(crate) fn sub(c: &mut Count, len: u32) {
    c.packets -= 1;
    c.bytes -= u64::from(len);
}

/// The jumping windows `[k * len, (k + 1) * len)` covering `[0, end)`; the last one is
/// cut at `end`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Windows {
    len: Duration,
    end: Instant,
    count: usize,
}

impl Windows {
    /// Windows of `len` (positive) over `[0, end)`.
    pub(crate) fn new(len: Duration, end: Instant) -> Windows {
        Windows {
            len,
            end,
            count: end.0.div_ceil(len.0) as usize,
        }
    }

    /// Number of windows.
    pub(crate) fn count(&self) -> usize {
        self.count
    }

    /// Index of the window holding `t` (`t < end`).
    #[inline]
    fn index(&self, t: Instant) -> usize {
        (t.0 / self.len.0) as usize
    }

    /// `[start, end)` of window `k`.
    fn bounds(&self, k: usize) -> (Instant, Instant) {
        let start = Instant(k as u64 * self.len.0);
        (start, start.saturating_add(self.len).min(self.end))
    }
}

/// Measurements of one port.
#[derive(Debug)]
pub(crate) struct LinkMeter {
    windows: Windows,
    /// Position of each class among the leaves, `u32::MAX` for interior classes.
    leaf_pos: Vec<u32>,
    leaves: Vec<ClassId>,
    /// Per class: packets whose transmission completed.
    delivered: Vec<Count>,
    /// `(window, leaf)`: bytes whose transmission completed in the window.
    throughput: Vec<u64>,
    /// `(window, leaf)`: largest backlog in bytes seen in the window.
    backlog_max: Vec<u64>,
    /// Per leaf: the backlog now and the window of its last change.
    backlog_now: Vec<(u64, usize)>,
    /// Per class: the delays of its packets at this port.
    delays: Vec<DelayCounter>,
    /// Per class: the waits of its packets at this port (arrival to the start of their
    /// transmission).
    waits: Vec<DelayCounter>,
    /// `(window, leaf)`: arrivals, drops and waits ([`ServiceCell`]).
    service: Vec<ServiceCell>,
}

impl LinkMeter {
    /// Meters for a port with `tree`, windows `windows`.
    pub(crate) fn new(tree: &ClassTree, windows: Windows) -> LinkMeter {
        let mut leaf_pos = vec![u32::MAX; tree.len()];
        for (i, leaf) in tree.leaves().iter().enumerate() {
            leaf_pos[leaf.index()] = i as u32;
        }
        let cells = windows.count * tree.leaves().len();
        LinkMeter {
            windows,
            leaf_pos,
            leaves: tree.leaves().to_vec(),
            delivered: vec![Count::default(); tree.len()],
            throughput: vec![0; cells],
            backlog_max: vec![0; cells],
            backlog_now: vec![(0, 0); tree.leaves().len()],
            delays: vec![DelayCounter::default(); tree.len()],
            waits: vec![DelayCounter::default(); tree.len()],
            service: vec![ServiceCell::default(); cells],
        }
    }

    /// The cell of leaf `class` in the window holding `t`.
    #[inline]
    fn service_cell(&mut self, t: Instant, class: ClassId) -> &mut ServiceCell {
        let leaf = self.leaf_pos[class.index()] as usize;
        let cell = self.windows.index(t) * self.leaves.len() + leaf;
        &mut self.service[cell]
    }

    /// A packet of `len` bytes of leaf `class` arrived at the port at `now`.
    #[inline]
    pub(crate) fn arrived(&mut self, now: Instant, class: ClassId, len: u32) {
        add(&mut self.service_cell(now, class).arrived, len);
    }

    /// A packet of `len` bytes of leaf `class` that arrived at the port at `arrival` was
    /// dropped (on arrival or later): counted in its arrival's window.
    #[inline]
    pub(crate) fn dropped(&mut self, arrival: Instant, class: ClassId, len: u32) {
        add(&mut self.service_cell(arrival, class).dropped, len);
    }

    /// A packet of leaf `class` that arrived at `arrival` starts its transmission at
    /// `now`; whether its wait is a new bin of the class's distribution.
    #[inline]
    pub(crate) fn started(&mut self, now: Instant, class: ClassId, arrival: Instant) -> bool {
        let wait = now.since(arrival);
        let cell = self.service_cell(now, class);
        cell.started += 1;
        cell.wait_sum = cell.wait_sum.saturating_add(wait.0);
        cell.wait_max = cell.wait_max.max(wait.0);
        self.waits[class.index()].add(wait)
    }

    /// The backlog of leaf `class` became `bytes` at `now`.
    #[inline]
    pub(crate) fn backlog(&mut self, now: Instant, class: ClassId, bytes: u64) {
        let leaf = self.leaf_pos[class.index()] as usize;
        let n = self.leaves.len();
        let k = self.windows.index(now);
        let (current, last) = self.backlog_now[leaf];
        for w in last + 1..=k {
            self.backlog_max[w * n + leaf] = current;
        }
        let cell = &mut self.backlog_max[k * n + leaf];
        *cell = (*cell).max(bytes);
        self.backlog_now[leaf] = (bytes, k);
    }

    /// A packet of `len` bytes of `class` finished its transmission at `now`.
    #[inline]
    pub(crate) fn departed(&mut self, now: Instant, class: ClassId, len: u32) {
        add(&mut self.delivered[class.index()], len);
        let leaf = self.leaf_pos[class.index()] as usize;
        let cell = self.windows.index(now) * self.leaves.len() + leaf;
        self.throughput[cell] += u64::from(len);
    }

    /// Counts the delay of a packet of `class` at this port; whether it is a new bin.
    #[inline]
    pub(crate) fn delay(&mut self, class: ClassId, delay: Duration) -> bool {
        self.delays[class.index()].add(delay)
    }

    /// Cells of the window series.
    pub(crate) fn series_cells(&self) -> usize {
        self.throughput.len()
    }

    /// Packets of `class` whose transmission completed.
    pub(crate) fn delivered(&self, class: ClassId) -> Count {
        self.delivered[class.index()]
    }

    /// The throughput and backlog series, sorted by window then class.
    pub(crate) fn series(&mut self) -> (Vec<WindowSample>, Vec<WindowSample>) {
        let n = self.leaves.len();
        for (leaf, &(current, last)) in self.backlog_now.iter().enumerate() {
            for w in last + 1..self.windows.count {
                self.backlog_max[w * n + leaf] = current;
            }
        }
        let sample = |cells: &[u64]| -> Vec<WindowSample> {
            let mut out = Vec::with_capacity(cells.len());
            for k in 0..self.windows.count {
                let (start, end) = self.windows.bounds(k);
                for (i, &class) in self.leaves.iter().enumerate() {
                    out.push(WindowSample {
                        start,
                        end,
                        class,
                        value: cells[k * n + i],
                    });
                }
            }
            out
        };
        (sample(&self.throughput), sample(&self.backlog_max))
    }

    /// The exact delay distribution of every leaf (empty for interior classes).
    pub(crate) fn delays(&self) -> Vec<DelayHistogram> {
        self.delays.iter().map(DelayCounter::histogram).collect()
    }

    /// The exact wait distribution of every leaf (empty for interior classes).
    pub(crate) fn waits(&self) -> Vec<DelayHistogram> {
        self.waits.iter().map(DelayCounter::histogram).collect()
    }

    /// The arrivals, drops and waits of every leaf per window, taken out of the meter.
    pub(crate) fn take_service(&mut self) -> ServiceSeries {
        ServiceSeries {
            leaves: self.leaves.clone(),
            cells: core::mem::take(&mut self.service),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use linkshare_core::units::Rate;

    #[test]
    fn windows_cover_the_run() {
        let w = Windows::new(Duration(10), Instant(25));
        assert_eq!(w.count, 3);
        assert_eq!(w.bounds(0), (Instant(0), Instant(10)));
        assert_eq!(w.bounds(2), (Instant(20), Instant(25)));
        assert_eq!(w.index(Instant(19)), 1);
        assert_eq!(Windows::new(Duration(10), Instant(0)).count, 0);
    }

    #[test]
    fn backlog_max_carries_across_quiet_windows() {
        let tree = ClassTree::flat(Rate::from_mbit(1), 1);
        let leaf = tree.leaves()[0];
        let mut m = LinkMeter::new(&tree, Windows::new(Duration(10), Instant(50)));
        m.backlog(Instant(2), leaf, 100);
        m.backlog(Instant(5), leaf, 300);
        m.backlog(Instant(7), leaf, 200);
        // Nothing changes in window 1; window 2 drops to 0 at 25.
        m.backlog(Instant(25), leaf, 0);
        let (_, backlog) = m.series();
        let values: Vec<u64> = backlog.iter().map(|s| s.value).collect();
        assert_eq!(values, vec![300, 200, 200, 0, 0]);
    }

    #[test]
    fn delays_are_counted_exactly() {
        let tree = ClassTree::flat(Rate::from_mbit(1), 2);
        let (a, b) = (tree.leaves()[0], tree.leaves()[1]);
        let mut m = LinkMeter::new(&tree, Windows::new(Duration(100), Instant(100)));
        for (class, d) in [(a, 6), (b, 5), (a, 6), (b, 7)] {
            m.departed(Instant(50), class, 100);
            let _ = m.delay(class, Duration(d));
        }
        let hists = m.delays();
        assert_eq!(hists[a.index()].bins(), &[(Duration(6), 2)]);
        assert_eq!(
            hists[b.index()].bins(),
            &[(Duration(5), 1), (Duration(7), 1)]
        );
        assert_eq!(
            m.delivered(a),
            Count {
                packets: 2,
                bytes: 200
            }
        );
    }
}
