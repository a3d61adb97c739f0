//! The engine's last step: turns the state of a finished run into a [`RunResult`].
//!
//! A child of the engine's module because it reads the engine's run-time state
//! ([`Simulator`], [`Link`]), which nothing outside the engine sees.

use linkshare_core::sched::DropReason;
use linkshare_core::stats::{Count, Counters};
use linkshare_core::units::{Duration, Instant};

use super::{InFlight, Link, Simulator};
use crate::config::FlowId;
use crate::measure::add;
use crate::packet::SimPacket;
use crate::records::{DelayLog, Recorder};
use crate::result::{
    ClassResult, DelayHistogram, FlowResult, LinkResult, PathCounts, PerFlowResult, RunResult,
    TransportReport,
};

/// The result of a run that has processed every event before its end.
pub(crate) fn finish(mut sim: Simulator) -> RunResult {
    // Packets in transmission (on a wire) and propagating (pending arrivals), per flow
    // and direction, and per link.
    let mut forward = vec![InFlightCounts::default(); sim.flows.len()];
    let mut reverse = vec![InFlightCounts::default(); sim.flows.len()];
    let mut links = vec![InFlightCounts::default(); sim.links.len()];
    for (l, link) in sim.links.iter().enumerate() {
        let mut count = |p: &SimPacket, on_wire: bool| {
            let flows = if p.kind.is_reverse() {
                &mut reverse
            } else {
                &mut forward
            };
            for counts in [&mut flows[p.flow.0 as usize], &mut links[l]] {
                let c = if on_wire {
                    &mut counts.in_transmission
                } else {
                    &mut counts.propagating
                };
                add(c, p.len);
            }
        };
        if let Some((p, _)) = &link.on_wire {
            count(p, true);
        }
        for InFlight { pkt, .. } in &link.pipe {
            count(pkt, false);
        }
    }
    // Rates are over the time simulated: the whole duration, or up to where the run
    // stopped.
    let simulated = sim
        .stopped
        .as_ref()
        .map_or(sim.duration, |s| s.at.since(Instant::ZERO));
    let end = sim.end;
    let measured: Vec<u64> = sim
        .links
        .iter()
        .map(|l| {
            l.tree
                .leaves()
                .iter()
                .map(|&c| l.meter.delivered(c).packets)
                .sum()
        })
        .collect();
    let logs = std::mem::replace(&mut sim.recorder, Recorder::new(0, 0)).finish(&measured);
    let links = sim
        .links
        .iter_mut()
        .zip(logs)
        .enumerate()
        .map(|(l, (link, log))| link_result(link, simulated, links[l], log))
        .collect();
    let flows = sim
        .flows
        .iter_mut()
        .enumerate()
        .map(|(i, f)| {
            let delays = f.delays.histogram();
            let dropped_by_reason: Vec<(DropReason, Count)> = DropReason::ALL
                .iter()
                .map(|&r| (r, f.dropped[r.index()]))
                .filter(|(_, c)| c.packets > 0)
                .collect();
            FlowResult {
                id: FlowId(i as u32),
                name: f.name.clone(),
                sent: f.sent,
                delivered: f.delivered,
                dropped: sum(f.dropped.iter()),
                dropped_by_reason,
                queued: f.queued,
                in_transmission: forward[i].in_transmission,
                propagating: forward[i].propagating,
                mean_rate_bps: rate_bps(f.delivered, simulated),
                delay: delays.stats(),
                delays,
                throughput: core::mem::take(&mut f.throughput),
                reverse: PathCounts {
                    in_transmission: reverse[i].in_transmission,
                    propagating: reverse[i].propagating,
                    ..f.reverse_counts
                },
                transport: sim.agents[i]
                    .report(end)
                    .unwrap_or_else(|| open_loop_report(&mut f.delivery)),
            }
        })
        .collect();
    RunResult {
        seed: sim.seed,
        duration: sim.duration,
        window: sim.window,
        links,
        flows,
        events: sim.events,
        packet_hops: sim.packet_hops,
        stopped: sim.stopped.take(),
    }
}

/// Packets on a wire or propagating, of one flow in one direction or of one link.
#[derive(Clone, Copy, Debug, Default)]
struct InFlightCounts {
    in_transmission: Count,
    propagating: Count,
}

fn link_result(
    link: &mut Link,
    duration: Duration,
    in_flight: InFlightCounts,
    delay_log: DelayLog,
) -> LinkResult {
    let tree = &link.tree;
    let service = link.meter.take_service();
    let qdisc = link.port.qdisc();
    let mut delays = link.meter.delays();
    let mut waits = link.meter.waits();
    let mut counters: Vec<Counters> = tree
        .classes()
        .iter()
        .map(|c| {
            if c.is_leaf() {
                qdisc.counters(c.id).clone()
            } else {
                Counters::default()
            }
        })
        .collect();
    let mut delivered: Vec<Count> = tree
        .classes()
        .iter()
        .map(|c| link.meter.delivered(c.id))
        .collect();
    let mut in_transmission = vec![Count::default(); tree.len()];
    if let Some((p, class)) = &link.on_wire {
        add(&mut in_transmission[class.index()], p.len);
    }
    // An interior class's distribution: every bin of the leaves below it, merged in one
    // sort (merging leaf by leaf would cost leaves × bins for the root).
    let mut below: Vec<Vec<(Duration, u64)>> = vec![Vec::new(); tree.len()];
    let mut waits_below: Vec<Vec<(Duration, u64)>> = vec![Vec::new(); tree.len()];
    for &leaf in tree.leaves() {
        for ancestor in tree.ancestors(leaf) {
            let (a, l) = (ancestor.index(), leaf.index());
            let leaf_counters = counters[l].clone();
            add_counters(&mut counters[a], &leaf_counters);
            let leaf_delivered = delivered[l];
            add_count(&mut delivered[a], leaf_delivered);
            let leaf_in_transmission = in_transmission[l];
            add_count(&mut in_transmission[a], leaf_in_transmission);
            below[a].extend_from_slice(delays[l].bins());
            waits_below[a].extend_from_slice(waits[l].bins());
        }
    }
    for (a, mut bins) in below.into_iter().enumerate() {
        if !bins.is_empty() {
            delays[a] = DelayHistogram::from_unsorted_bins(&mut bins);
        }
    }
    for (a, mut bins) in waits_below.into_iter().enumerate() {
        if !bins.is_empty() {
            waits[a] = DelayHistogram::from_unsorted_bins(&mut bins);
        }
    }
    let classes = tree
        .classes()
        .iter()
        .zip(counters)
        .zip(delivered)
        .zip(in_transmission)
        .zip(delays)
        .zip(waits)
        .map(
            |(((((class, counters), delivered), in_transmission), delays), waits)| ClassResult {
                id: class.id,
                name: class.name().to_owned(),
                parent: class.parent,
                is_leaf: class.is_leaf(),
                counters,
                delivered,
                in_transmission,
                mean_rate_bps: rate_bps(delivered, duration),
                delay: delays.stats(),
                delays,
                wait: waits.stats(),
                waits,
            },
        )
        .collect();
    let (throughput, backlog) = link.meter.series();
    LinkResult {
        name: link.name.clone(),
        scheduler: qdisc.scheduler().name().to_owned(),
        rate: link.port.rate(),
        classes,
        total: qdisc.total().clone(),
        throughput,
        backlog,
        in_transmission: in_flight.in_transmission,
        propagating: in_flight.propagating,
        delay_log,
        per_flow: tree
            .templates()
            .iter()
            .enumerate()
            .map(|(i, t)| PerFlowResult {
                name: t.name.clone(),
                instances: t.count,
                idle: t.idle,
                stats: link.per_flow.stats(i as u32),
            })
            .collect(),
        discipline_counters: qdisc.scheduler().discipline_counters(),
        service,
        objectives: link.objectives.clone(),
    }
}

/// The delivery the engine measured for an open-loop flow. A burst counts as
/// completed only if every byte of it arrived (a packet emitted after the burst's
/// earlier packets had all arrived may still have been lost).
fn open_loop_report(delivery: &mut TransportReport) -> TransportReport {
    let mut report = core::mem::take(delivery);
    for b in &mut report.bursts {
        if b.delivered != b.bytes {
            b.completed = None;
        }
    }
    report
}

/// `count.bytes * 8 / duration` in bit/s; zero for an empty run.
fn rate_bps(count: Count, duration: Duration) -> f64 {
    if duration == Duration::ZERO {
        0.0
    } else {
        count.bytes as f64 * 8.0 / duration.as_secs_f64()
    }
}

fn add_count(dst: &mut Count, src: Count) {
    dst.packets += src.packets;
    dst.bytes += src.bytes;
}

fn sum<'a>(counts: impl Iterator<Item = &'a Count>) -> Count {
    counts.fold(Count::default(), |mut acc, &c| {
        add_count(&mut acc, c);
        acc
    })
}

fn add_counters(dst: &mut Counters, src: &Counters) {
    add_count(&mut dst.arrived, src.arrived);
    add_count(&mut dst.enqueued, src.enqueued);
    add_count(&mut dst.dequeued, src.dequeued);
    add_count(&mut dst.queued, src.queued);
    for r in 0..DropReason::COUNT {
        add_count(&mut dst.dropped_on_arrival[r], src.dropped_on_arrival[r]);
        add_count(&mut dst.evicted[r], src.evicted[r]);
    }
}
