//! The exact fluid GPS (generalized processor sharing, the bit-by-bit weighted round
//! robin of fair queueing): from an arrival trace and weights, every packet's fluid
//! finish time, the round number `R(t)` and the active sets, in exact rationals.
//!
//! It is the reference the fair-queueing schedulers are tested against, so it is
//! computed **independently** of them: not by iterated deletion over finish numbers,
//! but by draining fluid. Event by event (an arrival, or some flow's head packet
//! completing), every backlogged flow `i` is served at `C · w_i / W` with `W` the total
//! weight of the backlogged flows; the round number advances at `C / W` (bytes per unit
//! of weight) while anything is backlogged and is frozen otherwise. A packet's finish
//! round is `R` at its fluid completion. A flow is *active* (has bits in the fluid
//! system) on `[arrival, completion)` of its packets: at a completion instant it has
//! left, which is Keshav's convention (inactive when `R = F`).
//!
//! Arithmetic is in [`BigRational`]: no rounding at all. Time is in nanoseconds, round
//! numbers in bytes per unit of weight. Cost: O(n) rational operations per event, for
//! tests and analysis, not for the packet path.

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{ToPrimitive, Zero};

use linkshare_core::units::{Instant, Rate};

/// One packet offered to the fluid server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FluidArrival {
    /// Arrival time.
    pub time: Instant,
    /// Flow (conversation) index, below the number of weights.
    pub flow: usize,
    /// Size in bytes.
    pub bytes: u64,
}

/// A stretch of constant slope of `R(t)`: from `start` (ns), `R = round`, advancing at
/// `slope` bytes per ns per unit weight, with the flows of `active` backlogged.
#[derive(Clone, Debug, PartialEq)]
pub struct Segment {
    /// Start instant (ns).
    pub start: BigRational,
    /// `R` at `start`.
    pub round: BigRational,
    /// `dR/dt` (0 while nothing is backlogged).
    pub slope: BigRational,
    /// Whether each flow is backlogged on this segment.
    pub active: Vec<bool>,
}

/// The fluid system's history. See the [module docs](self).
#[derive(Clone, Debug, PartialEq)]
pub struct Fluid {
    /// Fluid completion time (ns) of every packet, by its index in the arrivals.
    pub finish_time: Vec<BigRational>,
    /// `R` at every packet's completion: its finish number.
    pub finish_round: Vec<BigRational>,
    /// `R(t)` and the active sets, in time order.
    pub segments: Vec<Segment>,
}

fn int(x: u64) -> BigRational {
    BigRational::from_integer(BigInt::from(x))
}

impl Fluid {
    /// The segment in force at `t`: the last one starting at or before `t`.
    fn segment_at(&self, t: &BigRational) -> Option<&Segment> {
        let i = self.segments.partition_point(|s| &s.start <= t);
        i.checked_sub(1).map(|i| &self.segments[i])
    }

    /// `R(t)` in bytes per unit of weight (0 before the first arrival).
    pub fn round_at(&self, t: &BigRational) -> BigRational {
        self.segment_at(t)
            .map_or_else(BigRational::zero, |s| &s.round + (t - &s.start) * &s.slope)
    }

    /// The flows backlogged at `t`, after everything that happens at `t`.
    pub fn active_at(&self, t: &BigRational) -> Vec<bool> {
        self.segment_at(t)
            .map_or_else(Vec::new, |s| s.active.clone())
    }

    /// A finish time in ns as `f64` (for tolerances in tests).
    pub fn finish_time_ns(&self, packet: usize) -> f64 {
        self.finish_time[packet].to_f64().unwrap_or(f64::INFINITY)
    }
}

/// The fluid GPS of `arrivals` (sorted by time; simultaneous arrivals join in order) on
/// a link of `link` bit/s, flow `i` of weight `weights[i]` (positive).
///
/// # Panics
///
/// If the arrivals are not sorted, a flow index is out of range, a weight is zero or
/// the link rate is zero.
pub fn gps(link: Rate, weights: &[u64], arrivals: &[FluidArrival]) -> Fluid {
    assert!(link.0 > 0, "the link rate must be positive");
    assert!(weights.iter().all(|&w| w > 0), "weights must be positive");
    assert!(
        arrivals.windows(2).all(|w| w[0].time <= w[1].time),
        "arrivals must be sorted by time"
    );
    let n = weights.len();
    // Bytes per ns of the whole link.
    let c = BigRational::new(BigInt::from(link.0), BigInt::from(8_000_000_000u64));
    let w: Vec<BigRational> = weights.iter().map(|&x| int(x)).collect();
    let mut queues: Vec<std::collections::VecDeque<(usize, BigRational)>> =
        vec![Default::default(); n];
    let mut finish_time = vec![BigRational::zero(); arrivals.len()];
    let mut finish_round = vec![BigRational::zero(); arrivals.len()];
    let mut segments: Vec<Segment> = Vec::new();
    let mut t = BigRational::zero();
    let mut r = BigRational::zero();
    let mut next = 0;
    loop {
        // Arrivals due now join their queues.
        while next < arrivals.len() && int(arrivals[next].time.as_nanos()) <= t {
            let a = arrivals[next];
            queues[a.flow].push_back((next, int(a.bytes)));
            next += 1;
        }
        let active: Vec<bool> = queues.iter().map(|q| !q.is_empty()).collect();
        let total: BigRational = (0..n)
            .filter(|&i| active[i])
            .fold(BigRational::zero(), |acc, i| acc + &w[i]);
        let slope = if total.is_zero() {
            BigRational::zero()
        } else {
            &c / &total
        };
        segments.push(Segment {
            start: t.clone(),
            round: r.clone(),
            slope: slope.clone(),
            active: active.clone(),
        });
        let next_arrival = (next < arrivals.len()).then(|| int(arrivals[next].time.as_nanos()));
        if total.is_zero() {
            match next_arrival {
                Some(a) => {
                    t = a;
                    continue;
                }
                None => break,
            }
        }
        // Time until the first head completes: flow i drains at slope · w_i bytes/ns.
        let dt = (0..n)
            .filter(|&i| active[i])
            .map(|i| &queues[i][0].1 / (&slope * &w[i]))
            .min()
            .expect("something is backlogged");
        let step = match &next_arrival {
            Some(a) if *a < &t + &dt => a - &t,
            _ => dt,
        };
        t += &step;
        r += &step * &slope;
        for i in 0..n {
            if !active[i] {
                continue;
            }
            let served = &step * &slope * &w[i];
            let head = &mut queues[i][0];
            head.1 -= served;
            if head.1.is_zero() {
                let (p, _) = queues[i].pop_front().expect("non-empty");
                finish_time[p] = t.clone();
                finish_round[p] = r.clone();
            }
        }
    }
    Fluid {
        finish_time,
        finish_round,
        segments,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keshav's worked example: L = 1 byte/ns, A 100 B at 0, B 100 B at 50.
    #[test]
    fn paper_example() {
        let a = |t: u64, flow: usize| FluidArrival {
            time: Instant(t),
            flow,
            bytes: 100,
        };
        let f = gps(Rate(8_000_000_000), &[1, 1], &[a(0, 0), a(50, 1)]);
        assert_eq!(f.finish_time, vec![int(150), int(200)]);
        assert_eq!(f.finish_round, vec![int(100), int(150)]);
        assert_eq!(f.round_at(&int(50)), int(50));
        assert_eq!(f.round_at(&int(100)), int(75));
        assert_eq!(f.round_at(&int(250)), int(150));
        assert_eq!(f.active_at(&int(149)), vec![true, true]);
        assert_eq!(f.active_at(&int(150)), vec![false, true]);
        assert_eq!(f.active_at(&int(200)), vec![false, false]);
    }

    /// Weights share the link in proportion: weight 3 against weight 1, both 300 B at 0
    /// on 1 byte/ns: the heavy flow drains at 3/4 byte/ns and ends at 400 ns; the light
    /// one has 200 B left and ends at 600 ns.
    #[test]
    fn weighted_shares() {
        let a = |flow: usize| FluidArrival {
            time: Instant(0),
            flow,
            bytes: 300,
        };
        let f = gps(Rate(8_000_000_000), &[3, 1], &[a(0), a(1)]);
        assert_eq!(f.finish_time, vec![int(400), int(600)]);
        assert_eq!(f.finish_round, vec![int(100), int(300)]);
    }
}
