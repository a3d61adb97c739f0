//! Timing loops with the machine's clock, for the cost reproductions (`hfsc-fig13`,
//! `hls-fig12`). Their results are timing results ([`crate::verdict::Check::timing`]).
//!
//! The method: each loop is timed with `std::time::Instant` over short samples of a
//! fixed number of iterations, and the median of its samples is taken (a sample that
//! another process interrupted is an outlier, which the median ignores). The loops take
//! turns in rounds — a block of consecutive samples of each loop, then the next round —
//! so that a change in the machine's load falls on every loop alike; the first sample of
//! a block, which refills the caches the other loops emptied, is not counted. One
//! thread: nothing else of ours runs meanwhile.

use std::time::Instant;

/// One loop to time: `run(k)` does `k` iterations.
pub(crate) type Loop<'a> = Box<dyn FnMut(usize) + 'a>;

/// The loop that calls `step(run)` once per iteration.
pub(crate) fn repeat<'a, T>(run: &'a mut T, step: fn(&mut T)) -> Loop<'a> {
    Box::new(move |k| {
        for _ in 0..k {
            step(run);
        }
    })
}

/// How a loop is sampled.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sampling {
    /// Rounds: each loop's turn comes this many times.
    pub(crate) rounds: usize,
    /// Samples counted per turn (one more is taken first and not counted).
    pub(crate) per_turn: usize,
    /// Iterations per sample.
    pub(crate) per_sample: usize,
}

impl Sampling {
    /// The samples counted per loop.
    pub(crate) fn samples(&self) -> usize {
        self.rounds * self.per_turn
    }
}

/// The median time per iteration, ns, of each of `loops`, sampled as `s` says.
pub(crate) fn interleaved_medians(loops: &mut [Loop<'_>], s: Sampling) -> Vec<f64> {
    let mut times: Vec<Vec<f64>> = vec![Vec::with_capacity(s.samples()); loops.len()];
    for _ in 0..s.rounds {
        for (run, t) in loops.iter_mut().zip(&mut times) {
            run(s.per_sample);
            for _ in 0..s.per_turn {
                let start = Instant::now();
                run(s.per_sample);
                t.push(start.elapsed().as_nanos() as f64 / s.per_sample as f64);
            }
        }
    }
    times.into_iter().map(median).collect()
}

/// The median of `xs` (the mean of the middle two for an even count), NaN for none.
pub(crate) fn median(mut xs: Vec<f64>) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.sort_by(f64::total_cmp);
    let m = xs.len() / 2;
    if xs.len() % 2 == 1 {
        xs[m]
    } else {
        (xs[m - 1] + xs[m]) / 2.0
    }
}

/// What the timings were taken under: the build (a debug build is many times slower
/// than a release build, and its figures say nothing of the code's speed) and the load
/// average, where the system gives one (`/proc/loadavg`).
pub(crate) fn conditions() -> String {
    let build = if cfg!(debug_assertions) {
        "a DEBUG build (not representative: use a release build)"
    } else {
        "a release build"
    };
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| {
            let fields: Vec<&str> = l.split_whitespace().take(3).collect();
            (fields.len() == 3).then(|| format!("load average {}", fields.join(" ")))
        })
        .unwrap_or_else(|| "load average not available".to_owned());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{build}, {cores} cores, {load} at the start")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(Vec::new()).is_nan());
    }

    #[test]
    fn every_loop_runs_every_sample() {
        let (mut a, mut b) = (0, 0);
        {
            let mut loops: Vec<Loop<'_>> = vec![Box::new(|k| a += k), Box::new(|k| b += 2 * k)];
            let s = Sampling {
                rounds: 3,
                per_turn: 2,
                per_sample: 5,
            };
            let t = interleaved_medians(&mut loops, s);
            assert_eq!(t.len(), 2);
            assert!(t.iter().all(|x| x.is_finite() && *x >= 0.0));
        }
        // Three rounds of one uncounted and two counted samples of 5 iterations.
        assert_eq!((a, b), (45, 90));
    }
}
