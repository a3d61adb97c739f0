//! Traffic sources: one [`Agent`] per [`SourceConfig`] variant.
//!
//! Every source emits packets only inside the ON intervals of its flow's
//! [`Schedule`](crate::config::Schedule). At the start of each ON interval it
//! **restarts** its pattern as if the run began then (each file documents what that
//! means for its family); at the end of an interval it forgets its pending timer.
//!
//! Random sources draw from their own stream ([`crate::rng::Rng::for_flow`]), in the
//! order documented with each source, so a run is reproducible from the seed and a
//! flow's traffic does not depend on the other flows.
//!
//! | family | file | restart at each ON interval |
//! |---|---|---|
//! | CBR | [`cbr`] | first packet at the interval start |
//! | Poisson | [`poisson`] | first packet one exponential gap after the start |
//! | periodic ON-OFF | [`periodic`] | first burst at the interval start |
//! | exponential / Pareto ON-OFF | [`onoff`] | a new ON period begins at the start |
//! | two-state MMPP | [`markov`] | state 0 entered at the start |
//! | greedy | [`greedy`] | tops its first-hop backlog up |
//! | trace | [`trace`] | the trace clock does not restart; records falling outside ON intervals are skipped |

pub mod cbr;
pub mod greedy;
pub mod markov;
pub mod onoff;
pub mod periodic;
pub mod poisson;
pub mod trace;

use linkshare_core::units::{Bytes, Duration, Rate};

use crate::agent::Agent;
use crate::config::SourceConfig;
use crate::rng::Rng;

/// The agent generating `source`'s traffic, drawing from `rng`. The configuration must
/// have passed [`check`].
pub fn build(source: &SourceConfig, rng: Rng) -> Box<dyn Agent> {
    match source {
        SourceConfig::Cbr { rate, size } => Box::new(cbr::Cbr::new(*rate, *size)),
        SourceConfig::Poisson { rate, size } => Box::new(poisson::Poisson::new(*rate, *size, rng)),
        SourceConfig::PeriodicOnOff {
            burst,
            peak,
            period,
            size,
        } => Box::new(periodic::PeriodicOnOff::new(*burst, *peak, *period, *size)),
        SourceConfig::ExpOnOff {
            peak,
            mean_on,
            mean_off,
            size,
        } => Box::new(onoff::OnOff::new(
            *peak,
            *size,
            *mean_on,
            *mean_off,
            onoff::Law::Exponential,
            rng,
        )),
        SourceConfig::ParetoOnOff {
            peak,
            mean_on,
            mean_off,
            shape,
            size,
        } => Box::new(onoff::OnOff::new(
            *peak,
            *size,
            *mean_on,
            *mean_off,
            onoff::Law::Pareto { shape: *shape },
            rng,
        )),
        SourceConfig::Markov2 {
            rates,
            mean_sojourn,
            size,
        } => Box::new(markov::Markov2::new(*rates, *mean_sojourn, *size, rng)),
        SourceConfig::Greedy { size, backlog } => Box::new(greedy::Greedy::new(*size, *backlog)),
        SourceConfig::Trace { records } => Box::new(trace::Trace::new(records.clone())),
    }
}

/// Checks that `source` can generate traffic; the error says what is wrong and how to
/// fix it.
pub fn check(source: &SourceConfig) -> Result<(), String> {
    match source {
        SourceConfig::Cbr { rate, size } | SourceConfig::Poisson { rate, size } => {
            positive_size(*size)?;
            positive_rate("rate", *rate)
        }
        SourceConfig::PeriodicOnOff {
            burst,
            peak,
            period,
            size,
        } => {
            positive_size(*size)?;
            positive_rate("peak", *peak)?;
            if *burst == 0 {
                return Err("the burst is 0 packets; give at least 1".into());
            }
            let burst_time = peak.tx_time(Bytes(u64::from(*burst) * u64::from(*size)));
            if *period == Duration::ZERO || burst_time > *period {
                return Err(format!(
                    "a burst of {burst} packets of {size} B takes {} ns at the peak rate, more \
                     than the period of {} ns; lengthen the period, raise the peak rate or \
                     shorten the burst",
                    burst_time.0, period.0
                ));
            }
            Ok(())
        }
        SourceConfig::ExpOnOff {
            peak,
            mean_on,
            size,
            ..
        } => {
            positive_size(*size)?;
            positive_rate("peak", *peak)?;
            positive_mean("mean ON time", *mean_on)
        }
        SourceConfig::ParetoOnOff {
            peak,
            mean_on,
            shape,
            size,
            ..
        } => {
            positive_size(*size)?;
            positive_rate("peak", *peak)?;
            positive_mean("mean ON time", *mean_on)?;
            if !(shape.is_finite() && *shape > 1.0) {
                return Err(format!(
                    "the Pareto shape is {shape}; it must be a number above 1 (the mean is \
                     infinite otherwise), typically 1.2 to 1.5"
                ));
            }
            Ok(())
        }
        SourceConfig::Markov2 {
            mean_sojourn, size, ..
        } => {
            positive_size(*size)?;
            positive_mean("mean time in state 0", mean_sojourn[0])?;
            positive_mean("mean time in state 1", mean_sojourn[1])
        }
        SourceConfig::Greedy { size, backlog } => {
            positive_size(*size)?;
            if *backlog == 0 {
                return Err(
                    "the greedy backlog is 0 packets; give at least 1 (2 keeps the \
                            class backlogged at every dequeue)"
                        .into(),
                );
            }
            Ok(())
        }
        SourceConfig::Trace { records } => {
            if let Some(i) = records.iter().position(|r| r.size == 0) {
                return Err(format!("trace record {i} has size 0; give a positive size"));
            }
            if let Some(i) = records.windows(2).position(|w| w[1].at < w[0].at) {
                return Err(format!(
                    "trace record {} (at {} ns) comes before record {} (at {} ns); sort the \
                     trace by time",
                    i + 1,
                    records[i + 1].at.0,
                    i,
                    records[i].at.0
                ));
            }
            Ok(())
        }
    }
}

fn positive_size(size: u32) -> Result<(), String> {
    if size == 0 {
        return Err("the packet size is 0 bytes; give a positive size".into());
    }
    Ok(())
}

fn positive_rate(what: &str, rate: Rate) -> Result<(), String> {
    if rate == Rate::ZERO {
        return Err(format!("the {what} is 0 bit/s; give a positive rate"));
    }
    Ok(())
}

fn positive_mean(what: &str, mean: Duration) -> Result<(), String> {
    if mean == Duration::ZERO {
        return Err(format!("the {what} is 0; give a positive duration"));
    }
    Ok(())
}

/// Whether a source is inside an ON interval, and the generation that makes timers set
/// in earlier intervals stale.
#[derive(Clone, Copy, Debug, Default)]
struct Gate {
    on: bool,
    generation: u64,
}

impl Gate {
    /// An ON interval starts; timers of earlier intervals are stale.
    fn open(&mut self) {
        self.on = true;
        self.generation += 1;
    }

    /// The ON interval ends: every timer set so far becomes stale.
    fn close(&mut self) {
        self.on = false;
        self.generation += 1;
    }

    /// Whether a timer with `token` belongs to the current ON interval.
    fn accepts(&self, token: u64) -> bool {
        self.on && token == self.generation
    }

    /// The token for timers set now.
    fn token(&self) -> u64 {
        self.generation
    }
}

/// The mean gap in nanoseconds between packets of `size` bytes at `rate` (positive).
fn mean_gap_ns(size: u32, rate: Rate) -> f64 {
    f64::from(size) * 8.0 * 1e9 / rate.0 as f64
}
