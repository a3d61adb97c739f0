//! Measurement during a run: per-port window series and delays, per-flow delays.
//!
//! Everything here is recorded on the packet path, so it is cheap: window series are
//! preallocated arrays indexed by `(window, leaf)`, per-packet delays are pushed to a
//! `Vec` until the run's record budget is spent, then counted in exact histograms
//! (sorted maps from delay in ns to count).

use std::collections::BTreeMap;

use linkshare_core::hierarchy::{ClassId, ClassTree};
use linkshare_core::stats::Count;
use linkshare_core::units::{Duration, Instant};

use crate::result::{DelayHistogram, DelayLog, DelayRecord, WindowSample};

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

/// Where per-packet delays go: how many records the run may still keep.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RecordBudget {
    left: u64,
    exhausted: bool,
}

impl RecordBudget {
    /// A budget of `max` records.
    pub(crate) fn new(max: u64) -> RecordBudget {
        RecordBudget {
            left: max,
            exhausted: false,
        }
    }

    /// Whether one more record may be kept (and counts it); once it says no, it always
    /// says no.
    #[inline]
    fn take(&mut self) -> bool {
        if self.left == 0 {
            self.exhausted = true;
            return false;
        }
        self.left -= 1;
        true
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
    records: Vec<DelayRecord>,
    /// Per class, once the record budget is spent.
    histograms: Vec<BTreeMap<u64, u64>>,
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
            records: Vec::new(),
            histograms: Vec::new(),
        }
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

    /// Records a packet's delay at this port. Returns `false`, recording nothing, when
    /// this record is the first over the budget: the caller must then switch every port
    /// to histograms ([`LinkMeter::switch_to_histograms`]) and record it again.
    #[inline]
    pub(crate) fn record_delay(&mut self, record: DelayRecord, budget: &mut RecordBudget) -> bool {
        if budget.exhausted {
            self.count_delay(record.class, record.delay());
            return true;
        }
        if budget.take() {
            self.records.push(record);
            return true;
        }
        false
    }

    /// Replaces the per-packet records by per-class histograms (the record budget is
    /// spent).
    pub(crate) fn switch_to_histograms(&mut self) {
        self.histograms = vec![BTreeMap::new(); self.leaf_pos.len()];
        for r in core::mem::take(&mut self.records) {
            self.count_delay(r.class, r.delay());
        }
    }

    #[inline]
    fn count_delay(&mut self, class: ClassId, delay: Duration) {
        *self.histograms[class.index()].entry(delay.0).or_insert(0) += 1;
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

    /// The exact delay distribution of every leaf (empty for interior classes), and the
    /// delay log.
    pub(crate) fn delays(&mut self) -> (Vec<DelayHistogram>, DelayLog) {
        let classes = self.leaf_pos.len();
        if !self.histograms.is_empty() {
            let hists: Vec<DelayHistogram> = self
                .histograms
                .iter()
                .map(|h| {
                    DelayHistogram::from_sorted_bins(h.iter().map(|(&d, &n)| (Duration(d), n)))
                })
                .collect();
            let packets = hists.iter().map(DelayHistogram::count).sum();
            return (hists, DelayLog::Histogram { packets });
        }
        let mut per_class: Vec<Vec<u64>> = (0..classes)
            .map(|c| Vec::with_capacity(self.delivered[c].packets as usize))
            .collect();
        for r in &self.records {
            per_class[r.class.index()].push(r.delay().0);
        }
        let hists = per_class
            .iter_mut()
            .map(|v| DelayHistogram::from_values(v))
            .collect();
        (hists, DelayLog::Packets(core::mem::take(&mut self.records)))
    }
}

/// End-to-end delays of one flow.
#[derive(Debug, Default)]
pub(crate) struct FlowDelays {
    values: Vec<u64>,
    histogram: BTreeMap<u64, u64>,
}

impl FlowDelays {
    /// Records one end-to-end delay. Returns `false`, recording nothing, when this delay is the first over the
    /// budget: the caller must then switch every flow to histograms
    /// ([`FlowDelays::switch_to_histogram`]) and record it again.
    #[inline]
    pub(crate) fn record(&mut self, delay: Duration, budget: &mut RecordBudget) -> bool {
        if budget.exhausted {
            *self.histogram.entry(delay.0).or_insert(0) += 1;
            return true;
        }
        if budget.take() {
            self.values.push(delay.0);
            return true;
        }
        false
    }

    /// Moves the kept values to the histogram (the budget is spent).
    pub(crate) fn switch_to_histogram(&mut self) {
        for v in core::mem::take(&mut self.values) {
            *self.histogram.entry(v).or_insert(0) += 1;
        }
    }

    /// The exact distribution.
    pub(crate) fn histogram(&mut self) -> DelayHistogram {
        if self.histogram.is_empty() {
            DelayHistogram::from_values(&mut self.values)
        } else {
            DelayHistogram::from_sorted_bins(self.histogram.iter().map(|(&d, &n)| (Duration(d), n)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::FlowId;
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
    fn records_switch_to_histograms_when_the_budget_is_spent() {
        let tree = ClassTree::flat(Rate::from_mbit(1), 2);
        let (a, b) = (tree.leaves()[0], tree.leaves()[1]);
        let mut m = LinkMeter::new(&tree, Windows::new(Duration(100), Instant(100)));
        let mut budget = RecordBudget::new(2);
        let rec = |class, arrival, departure| DelayRecord {
            class,
            flow: FlowId(0),
            len: 100,
            arrival: Instant(arrival),
            departure: Instant(departure),
        };
        for (class, arrival, departure) in [(a, 4, 10), (b, 15, 20), (a, 24, 30)] {
            m.departed(Instant(departure), class, 100);
            if !m.record_delay(rec(class, arrival, departure), &mut budget) {
                m.switch_to_histograms();
                assert!(m.record_delay(rec(class, arrival, departure), &mut budget));
            }
        }
        assert!(m.record_delay(rec(b, 40, 47), &mut budget));
        let (hists, log) = m.delays();
        assert_eq!(log, DelayLog::Histogram { packets: 4 });
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
