//! Many independent runs on every core, and what several seeds say together.
//!
//! A reproduction whose traffic is random runs each configuration with several seeds
//! (`--seeds N`, default [`DEFAULT_SEEDS`]) and reports the mean over the seeds with its
//! 95 % confidence interval ([`Estimate`]). The runs are independent, so
//! [`run_parallel`] spreads them over the machine's cores (std threads, one queue of
//! jobs); results come back in job order, so what a reproduction prints and writes does
//! not depend on the number of threads or on which finished first.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Seeds per configuration when `--seeds` is not given.
pub const DEFAULT_SEEDS: u32 = 5;

/// One independent run, to be handed to [`run_parallel`].
pub type Job<'a, T> = Box<dyn FnOnce() -> T + Send + 'a>;

/// The number of threads that use every core of this machine (at least 1).
pub fn all_cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// Runs every job, on as many threads as the machine has cores (at most one per job);
/// returns the results in the order of `jobs`.
pub fn run_parallel<T: Send>(jobs: Vec<Job<'_, T>>) -> Vec<T> {
    run_parallel_on(all_cores(), jobs)
}

/// Runs every job on `threads` threads (at least 1, at most one per job; the calling
/// thread is one of them); returns the results in the order of `jobs`. Each thread
/// takes the next job from a shared counter: a few lines, no thread pool to configure
/// and no global state, which is why this uses no library. A job that panics
/// propagates its panic once the others have finished.
pub fn run_parallel_on<T: Send>(threads: usize, jobs: Vec<Job<'_, T>>) -> Vec<T> {
    let n = jobs.len();
    let threads = threads.min(n).max(1);
    let queue: Vec<Mutex<Option<Job<'_, T>>>> =
        jobs.into_iter().map(|j| Mutex::new(Some(j))).collect();
    let results: Vec<Mutex<Option<T>>> = (0..n).map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let worker = || {
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= n {
                return;
            }
            let job = queue[i].lock().map(|mut j| j.take()).ok().flatten();
            if let Some(job) = job {
                let out = job();
                if let Ok(mut slot) = results[i].lock() {
                    *slot = Some(out);
                }
            }
        }
    };
    std::thread::scope(|s| {
        for _ in 1..threads {
            s.spawn(worker);
        }
        worker();
    });
    results
        .into_iter()
        .map(|r| {
            r.into_inner()
                .ok()
                .flatten()
                .expect("every job ran to completion (a panicking job propagates)")
        })
        .collect()
}

/// The mean of independent samples (one per seed) and the half-width of its 95 %
/// confidence interval, Student's t with `n - 1` degrees of freedom (0 with one
/// sample).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// The mean.
    pub mean: f64,
    /// Half the width of the 95 % confidence interval.
    pub half_width: f64,
    /// Number of samples.
    pub n: usize,
}

/// Two-sided 95 % quantiles of Student's t for 1 to 30 degrees of freedom.
const T95: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

impl Estimate {
    /// The estimate from `samples` (`NaN` mean when there are none).
    pub fn of(samples: &[f64]) -> Estimate {
        let n = samples.len();
        if n == 0 {
            return Estimate {
                mean: f64::NAN,
                half_width: f64::NAN,
                n,
            };
        }
        let mean = samples.iter().sum::<f64>() / n as f64;
        if n == 1 {
            return Estimate {
                mean,
                half_width: 0.0,
                n,
            };
        }
        let var = samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let t = T95.get(n - 2).copied().unwrap_or(1.960);
        Estimate {
            mean,
            half_width: t * (var / n as f64).sqrt(),
            n,
        }
    }

    /// `mean ± half_width` with `decimals` decimals (the mean alone with one sample).
    pub fn show(&self, decimals: usize) -> String {
        if self.n <= 1 {
            format!("{:.decimals$}", self.mean)
        } else {
            format!("{:.decimals$} ± {:.decimals$}", self.mean, self.half_width)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_come_back_in_order() {
        let jobs: Vec<Job<'_, usize>> = (0..50usize)
            .map(|i| Box::new(move || i * i) as Job<'_, usize>)
            .collect();
        assert_eq!(
            run_parallel(jobs),
            (0..50).map(|i| i * i).collect::<Vec<_>>()
        );
    }

    /// 1, 2, 3, 4, 5: mean 3, sample variance 2.5, t(4) = 2.776: 2.776 sqrt(0.5).
    #[test]
    fn confidence_interval_by_hand() {
        let e = Estimate::of(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(e.mean, 3.0);
        assert!((e.half_width - 2.776 * 0.5f64.sqrt()).abs() < 1e-12);
        assert_eq!(Estimate::of(&[7.0]).half_width, 0.0);
        assert_eq!(e.show(2), "3.00 ± 1.96");
    }
}
