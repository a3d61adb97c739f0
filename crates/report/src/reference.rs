//! What every class *should* get: the scenario's traffic cut into intervals of constant
//! demand, and the hierarchical max-min fair (HMM-fair) allocation of each interval.
//!
//! `linkshare alloc` prints it, the link-sharing quality report of a run compares the
//! measured rates with it, and the reproductions print it beside the paper.
//!
//! # Demand of a flow
//!
//! A flow that is on demands its source's mean offered rate (bit/s):
//!
//! | source | demand while on |
//! | --- | --- |
//! | CBR | its rate |
//! | Poisson | its mean rate |
//! | periodic ON-OFF | `burst * size * 8 / period` |
//! | exponential or Pareto ON-OFF | `peak * mean_on / (mean_on + mean_off)` |
//! | two-state MMPP | `(r0 * t0 + r1 * t1) / (t0 + t1)`, the time-weighted mean |
//! | greedy, FTP | unbounded (`f64::INFINITY`; a finite FTP transfer counts as greedy while on) |
//! | Telnet | `size * 8 / mean gap` |
//! | web transfers | the offered `load` |
//! | video | the trace's bytes over its duration (`frames · interval`) |
//! | trace | `total bytes * 8 / T`, `T` the time of its last record, and only while its clock runs: within `[s0, s0 + T)`, `s0` the start of its first ON interval (a trace whose records all fall at one instant demands nothing) |
//!
//! These are long-run means: over an interval shorter than a source's own ON-OFF or
//! state periods a random source sends more or less than its mean. A class demands the
//! sum of its flows' demands (an interior class the sum of its leaves', Eq. 2 of the HLS
//! paper). A flow crossing several links is counted with its offered rate at every link
//! of its route: losses and throttling at upstream links are not modelled, so the
//! reference of a downstream link is exact only for flows that are not cut upstream.
//!
//! # Intervals
//!
//! The breakpoints are `0`, the run's duration, and every boundary of a flow's ON
//! intervals (for a trace, also the end of its clock) inside `(0, duration)`. Between
//! consecutive breakpoints the set of active flows is constant; consecutive pieces whose
//! leaf demands are equal are merged, so every [`Interval`] is a maximal stretch of
//! constant demand. The allocation of an interval is
//! [`linkshare_analysis::maxmin::hmm_fair`] of its demands, with the classes' `weight`s
//! (what HLS uses; the HLS paper sets weights to the guarantees).

use linkshare_analysis::maxmin::hmm_fair;
use linkshare_core::hierarchy::ClassTree;
use linkshare_core::units::{Duration, Instant};
use linkshare_sim::config::{FlowConfig, LinkId, SimConfig, SourceConfig};

/// A stretch `[start, end)` of constant demand on one link and its HMM-fair allocation.
#[derive(Clone, Debug, PartialEq)]
pub struct Interval {
    /// Start, inclusive.
    pub start: Instant,
    /// End, exclusive.
    pub end: Instant,
    /// Demand of every class by [`linkshare_core::hierarchy::ClassId`] index, bit/s
    /// (`f64::INFINITY`: unbounded): leaves the sum of their active flows' demands,
    /// interior classes and the root the sum of their leaves'.
    pub demand: Vec<f64>,
    /// The HMM-fair rate of every class by id index, bit/s; the root's is
    /// `min(demand, link rate)`.
    pub rate: Vec<f64>,
}

/// The reference allocation of one link over the whole run.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkReference {
    /// The link.
    pub link: LinkId,
    /// Maximal intervals of constant demand, in time order, covering `[0, duration)`.
    pub intervals: Vec<Interval>,
}

/// The mean rate `source` offers while on, bit/s (`f64::INFINITY` for a greedy source);
/// see the [module docs](self) for each family.
pub fn mean_rate_bps(source: &SourceConfig) -> f64 {
    let secs = |d: Duration| d.as_secs_f64();
    match source {
        SourceConfig::Cbr { rate, .. } | SourceConfig::Poisson { rate, .. } => rate.bps() as f64,
        SourceConfig::PeriodicOnOff {
            burst,
            period,
            size,
            ..
        } => {
            let bits = f64::from(*burst) * f64::from(*size) * 8.0;
            bits / secs(*period)
        }
        SourceConfig::ExpOnOff {
            peak,
            mean_on,
            mean_off,
            ..
        }
        | SourceConfig::ParetoOnOff {
            peak,
            mean_on,
            mean_off,
            ..
        } => {
            let (on, off) = (secs(*mean_on), secs(*mean_off));
            peak.bps() as f64 * on / (on + off)
        }
        SourceConfig::Markov2 {
            rates,
            mean_sojourn,
            ..
        } => {
            let (t0, t1) = (secs(mean_sojourn[0]), secs(mean_sojourn[1]));
            (rates[0].bps() as f64 * t0 + rates[1].bps() as f64 * t1) / (t0 + t1)
        }
        SourceConfig::Greedy { .. } => f64::INFINITY,
        SourceConfig::Trace { records } => {
            let span = records.last().map_or(Duration::ZERO, |r| r.at);
            if span == Duration::ZERO {
                return 0.0;
            }
            let bytes: u64 = records.iter().map(|r| u64::from(r.size)).sum();
            bytes as f64 * 8.0 / secs(span)
        }
        SourceConfig::Ftp { .. } => f64::INFINITY,
        SourceConfig::Telnet { size, mean_gap } => f64::from(*size) * 8.0 / secs(*mean_gap),
        SourceConfig::Www { load, .. } => load.bps() as f64,
        SourceConfig::Video {
            frames, interval, ..
        } => {
            let bytes: u64 = frames.iter().map(|&f| u64::from(f)).sum();
            bytes as f64 * 8.0 / (secs(*interval) * frames.len() as f64)
        }
    }
}

/// The intervals during which `flow` offers traffic, clipped to `[0, end)`: its ON
/// intervals, and for a trace only while its clock runs (see the [module docs](self)).
pub fn active_intervals(flow: &FlowConfig, end: Instant) -> Vec<(Instant, Instant)> {
    let clock = match &flow.source {
        SourceConfig::Trace { records } => {
            let s0 = flow.schedule.on.first().map_or(Instant::ZERO, |iv| iv.0);
            let span = records.last().map_or(Duration::ZERO, |r| r.at);
            Some((s0, s0.saturating_add(span)))
        }
        _ => None,
    };
    flow.schedule
        .on
        .iter()
        .filter_map(|&(a, b)| {
            let (mut a, mut b) = (a, b.min(end));
            if let Some((c0, c1)) = clock {
                a = a.max(c0);
                b = b.min(c1);
            }
            (a < b).then_some((a, b))
        })
        .collect()
}

/// The reference allocation of every link of `config`, in link order.
pub fn reference(config: &SimConfig) -> Vec<LinkReference> {
    (0..config.links.len())
        .map(|l| link_reference(config, LinkId(l as u32)))
        .collect()
}

/// The reference allocation of link `link` of `config` (see the [module docs](self)).
pub fn link_reference(config: &SimConfig, link: LinkId) -> LinkReference {
    let tree: &ClassTree = &config.links[link.0 as usize].classes;
    let end = Instant::ZERO.saturating_add(config.duration);
    let flows: Vec<FlowDemand> = config
        .flows
        .iter()
        .filter_map(|f| {
            let hop = f.route.iter().find(|h| h.link == link)?;
            Some(FlowDemand {
                class: hop.class.index(),
                rate: mean_rate_bps(&f.source),
                on: active_intervals(f, end),
            })
        })
        .collect();
    // Sweep over the ON boundaries: (time, starts?, flow); at one instant, ends first,
    // so a flow whose intervals touch stays on.
    let mut events: Vec<(Instant, bool, usize)> = Vec::new();
    for (f, flow) in flows.iter().enumerate() {
        for &(a, b) in &flow.on {
            events.extend([(a, true, f), (b, false, f)]);
        }
    }
    events.sort_unstable();
    let mut by_class: Vec<Vec<usize>> = vec![Vec::new(); tree.len()];
    for (f, flow) in flows.iter().enumerate() {
        by_class[flow.class].push(f);
    }
    let mut on = vec![false; flows.len()];
    let mut demand = vec![0.0; tree.len()];
    let mut intervals: Vec<Interval> = Vec::new();
    let mut at = Instant::ZERO;
    let mut next = 0;
    while at < end {
        let mut touched: Vec<usize> = Vec::new();
        while let Some(&(t, starts, f)) = events.get(next)
            && t <= at
        {
            on[f] = starts;
            touched.push(flows[f].class);
            next += 1;
        }
        touched.sort_unstable();
        touched.dedup();
        for c in touched {
            // A fold from +0.0: `sum` of no term is -0.0, which would print as such.
            demand[c] = by_class[c]
                .iter()
                .filter(|&&f| on[f])
                .fold(0.0, |acc, &f| acc + flows[f].rate);
        }
        let until = events.get(next).map_or(end, |e| e.0.min(end));
        match intervals.last_mut() {
            Some(last) if leaf_demands_equal(tree, &last.demand, &demand) => last.end = until,
            _ => intervals.push(Interval {
                start: at,
                end: until,
                demand: demand.clone(),
                rate: Vec::new(),
            }),
        }
        at = until;
    }
    for iv in &mut intervals {
        let alloc = hmm_fair(tree, &iv.demand);
        iv.demand = alloc.request;
        iv.rate = alloc.rate;
    }
    LinkReference { link, intervals }
}

/// One flow as seen by one link.
#[derive(Debug)]
struct FlowDemand {
    /// Index of its class on the link.
    class: usize,
    /// Its demand while on, bit/s.
    rate: f64,
    /// When it is on, within the run.
    on: Vec<(Instant, Instant)>,
}

/// Whether the leaves' entries of `a` and `b` are equal.
fn leaf_demands_equal(tree: &ClassTree, a: &[f64], b: &[f64]) -> bool {
    tree.leaves().iter().all(|l| a[l.index()] == b[l.index()])
}

#[cfg(test)]
mod tests {
    use super::*;
    use linkshare_core::units::Rate;

    #[test]
    fn mean_rates_of_the_families() {
        let mbit = Rate::from_mbit;
        let ms = Duration::from_millis;
        let periodic = SourceConfig::PeriodicOnOff {
            burst: 4,
            peak: mbit(10),
            period: ms(20),
            size: 1000,
            variations: Default::default(),
        };
        // 4 * 1000 * 8 bits every 20 ms = 1.6 Mbit/s.
        assert!((mean_rate_bps(&periodic) - 1.6e6).abs() < 1e-6);
        let exp = SourceConfig::ExpOnOff {
            peak: mbit(8),
            mean_on: ms(100),
            mean_off: ms(300),
            size: 1000,
        };
        assert!((mean_rate_bps(&exp) - 2e6).abs() < 1e-6);
        let mmpp = SourceConfig::Markov2 {
            rates: [mbit(1), mbit(5)],
            mean_sojourn: [ms(2000), ms(500)],
            size: 1000,
        };
        // (1 * 2 + 5 * 0.5) / 2.5 = 1.8 Mbit/s.
        assert!((mean_rate_bps(&mmpp) - 1.8e6).abs() < 1e-6);
        let greedy = SourceConfig::Greedy {
            size: 1000,
            backlog: 2,
        };
        assert_eq!(mean_rate_bps(&greedy), f64::INFINITY);
        let trace = SourceConfig::Trace {
            records: vec![
                linkshare_sim::config::TraceRecord {
                    at: Duration::ZERO,
                    size: 500,
                },
                linkshare_sim::config::TraceRecord {
                    at: ms(10),
                    size: 750,
                },
            ]
            .into(),
        };
        // 1250 B over 10 ms = 1 Mbit/s.
        assert!((mean_rate_bps(&trace) - 1e6).abs() < 1e-6);
    }
}
