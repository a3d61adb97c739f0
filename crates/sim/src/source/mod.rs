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
//! | Poisson, Pareto gaps | [`renewal`] | first packet one gap after the start |
//! | periodic ON-OFF | [`periodic`] | first burst at the interval start |
//! | exponential / Pareto ON-OFF | [`onoff`] | a new ON period begins at the start |
//! | two-state MMPP | [`markov`] | state 0 entered at the start |
//! | greedy | [`greedy`] | tops its first-hop backlog up |
//! | FTP | [`ftp`] | finite: the whole transfer again at the start; endless: as greedy |
//! | Telnet | [`telnet`] | first packet one exponential gap after the start |
//! | WWW | [`www`] | first transfer one exponential gap after the start |
//! | video | [`video`] | frame 0 of the trace at the start |
//! | trace | [`trace`] | the trace clock does not restart; records falling outside ON intervals are skipped |
//! | population | [`population`] | the members on at the start (by the run's clock) start theirs |
//!
//! # Bursts
//!
//! Sources whose traffic comes in bursts mark each one with
//! [`Ctx::begin_burst`](crate::agent::Ctx::begin_burst) before its first packet, so the
//! burst delay of the FSC paper (first packet sent to last packet received) is measured
//! per burst (see [`crate::result::BurstRecord`]):
//!
//! | family | one burst is | new connection over TCP |
//! |---|---|---|
//! | periodic ON-OFF | the `burst` packets of one period | no |
//! | exponential / Pareto ON-OFF | the packets of one ON period (none for an empty period) | no |
//! | FTP, finite | one transfer (one per ON interval) | no |
//! | Telnet | one packet | no |
//! | WWW | one transfer | yes |
//! | video | one frame | no |
//!
//! CBR, Poisson, Pareto, MMPP, greedy (and endless FTP), trace and population sources
//! mark no bursts.
//!
//! # Messages larger than a packet
//!
//! FTP, WWW and video sources send messages (a transfer, a frame) of any length as
//! packets of the configured `size`, all at the same instant: a message of `n` bytes
//! becomes `ceil(n / size)` packets, every one of `size` bytes but the last, which
//! carries the remaining `n - (ceil(n / size) - 1) * size` bytes (between 1 and `size`).
//! Over TCP each packet becomes an application write of the same length, so the
//! connection receives the message's `n` bytes at once.

pub mod cbr;
pub mod ftp;
pub mod greedy;
pub mod markov;
pub mod onoff;
pub mod periodic;
pub mod population;
pub mod renewal;
pub mod telnet;
pub mod trace;
pub mod video;
pub mod www;

use linkshare_core::units::{Bytes, Duration, Rate};

use crate::agent::{Agent, Ctx};
use crate::config::{OnOffVariations, SourceConfig, Swing, TraceRecord};
use crate::rng::{Rng, nanos};

/// The agent generating `source`'s traffic, drawing from `rng`. The configuration must
/// have passed [`check`].
pub fn build(source: &SourceConfig, rng: Rng) -> Box<dyn Agent> {
    match source {
        SourceConfig::Cbr { rate, size } => Box::new(cbr::Cbr::new(*rate, *size)),
        SourceConfig::Poisson { rate, size } => Box::new(renewal::Renewal::new(
            *rate,
            *size,
            onoff::Law::Exponential,
            rng,
        )),
        SourceConfig::Pareto { rate, shape, size } => Box::new(renewal::Renewal::new(
            *rate,
            *size,
            onoff::Law::Pareto { shape: *shape },
            rng,
        )),
        SourceConfig::Population { each, swing } => {
            Box::new(population::Population::new(each, *swing, rng))
        }
        SourceConfig::PeriodicOnOff {
            burst,
            peak,
            period,
            size,
            variations,
        } => Box::new(
            periodic::PeriodicOnOff::new(*burst, *peak, *period, *size).with(*variations, rng),
        ),
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
        SourceConfig::Ftp {
            bytes: Some(bytes),
            size,
        } => Box::new(ftp::Ftp::new(*bytes, *size)),
        SourceConfig::Ftp { bytes: None, size } => {
            Box::new(greedy::Greedy::new(*size, ftp::ENDLESS_BACKLOG))
        }
        SourceConfig::Telnet { size, mean_gap } => {
            Box::new(telnet::Telnet::new(*size, *mean_gap, rng))
        }
        SourceConfig::Www {
            load,
            lengths,
            size,
        } => Box::new(www::Www::new(*load, lengths.clone(), *size, rng)),
        SourceConfig::Video {
            frames,
            interval,
            size,
        } => Box::new(video::Video::new(frames.clone(), *interval, *size)),
    }
}

/// Checks that `source` can generate traffic; the error says what is wrong and how to
/// fix it.
pub fn check(source: &SourceConfig) -> Result<(), String> {
    match source {
        SourceConfig::Ftp { bytes, size } => {
            positive_size(*size)?;
            if *bytes == Some(0) {
                return Err(
                    "the FTP transfer is 0 bytes; give a positive number of bytes, \
                            or leave `bytes` out for an endless transfer"
                        .into(),
                );
            }
            Ok(())
        }
        SourceConfig::Telnet { size, mean_gap } => {
            positive_size(*size)?;
            positive_mean("mean gap between Telnet packets", *mean_gap)
        }
        SourceConfig::Www {
            load,
            lengths,
            size,
        } => {
            positive_size(*size)?;
            positive_rate("offered load", *load)?;
            check_lengths(lengths)
        }
        SourceConfig::Video {
            frames,
            interval,
            size,
        } => {
            positive_size(*size)?;
            positive_mean("interval between video frames", *interval)?;
            check_frames(frames)
        }
        SourceConfig::Cbr { rate, size } | SourceConfig::Poisson { rate, size } => {
            positive_size(*size)?;
            positive_rate("rate", *rate)
        }
        SourceConfig::Pareto { rate, shape, size } => {
            positive_size(*size)?;
            positive_rate("rate", *rate)?;
            pareto_shape(*shape)
        }
        SourceConfig::Population { each, swing } => check_population(each, swing),
        SourceConfig::PeriodicOnOff {
            burst,
            peak,
            period,
            size,
            variations,
        } => check_periodic(*burst, *peak, *period, *size, variations),
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
            pareto_shape(*shape)
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
        SourceConfig::Trace { records } => check_trace(records),
    }
}

/// The most members a population may have.
pub const MAX_MEMBERS: u32 = 1 << 20;

/// A population: members that make their own traffic (checked themselves), 1 <= min <=
/// max <= [`MAX_MEMBERS`], and a period within [`population::MAX_PERIOD`] when the
/// number of members swings.
fn check_population(each: &SourceConfig, swing: &Swing) -> Result<(), String> {
    match *each {
        SourceConfig::Greedy { .. }
        | SourceConfig::Ftp { .. }
        | SourceConfig::Trace { .. }
        | SourceConfig::Population { .. } => {
            return Err("a population's members must make their traffic from their \
                            own timers: greedy, FTP, trace and population sources \
                            cannot be members; use cbr, poisson, pareto or an ON-OFF \
                            source"
                .into());
        }
        _ => {}
    }
    check(each).map_err(|e| format!("a member of the population: {e}"))?;
    if swing.max == 0 || swing.max < swing.min {
        return Err(format!(
            "the population swings from {} to {} members; give 1 <= min <= max",
            swing.min, swing.max
        ));
    }
    if swing.max > MAX_MEMBERS {
        return Err(format!(
            "the population has {} members, above the limit of {MAX_MEMBERS}; \
                 use fewer, faster members",
            swing.max
        ));
    }
    if swing.min < swing.max
        && (swing.period == Duration::ZERO || swing.period > population::MAX_PERIOD)
    {
        return Err(format!(
            "the population's period is {}; give a positive period of at most {}",
            swing.period,
            population::MAX_PERIOD
        ));
    }
    Ok(())
}

/// A web source's transfer lengths: at least one, each positive.
fn check_lengths(lengths: &[u64]) -> Result<(), String> {
    if lengths.is_empty() {
        return Err("the list of transfer lengths is empty; give at least one \
                    length in bytes (e.g. the FSC paper's ten groups)"
            .into());
    }
    if let Some(i) = lengths.iter().position(|&l| l == 0) {
        return Err(format!(
            "transfer length {i} is 0 bytes; every length must be positive"
        ));
    }
    Ok(())
}

/// A video source's frame sizes: at least one, each positive.
fn check_frames(frames: &[u32]) -> Result<(), String> {
    if frames.is_empty() {
        return Err("the video trace has no frames; give at least one frame size".into());
    }
    if let Some(i) = frames.iter().position(|&f| f == 0) {
        return Err(format!(
            "video frame {i} is 0 bytes; every frame must have a positive size"
        ));
    }
    Ok(())
}

/// A periodic ON-OFF source: positive size, peak and burst, the burst sent at the peak
/// rate within the period, and positive means for its variations.
fn check_periodic(
    burst: u32,
    peak: Rate,
    period: Duration,
    size: u32,
    variations: &OnOffVariations,
) -> Result<(), String> {
    if variations.geometric_mean == Some(0) {
        return Err("the mean burst size is 0 packets; give at least 1".into());
    }
    if variations.start_offset_mean == Some(Duration::ZERO) {
        return Err("the mean start offset is 0; give a positive duration, or leave it out".into());
    }
    positive_size(size)?;
    positive_rate("peak", peak)?;
    if burst == 0 {
        return Err("the burst is 0 packets; give at least 1".into());
    }
    let burst_time = peak.tx_time(Bytes(u64::from(burst) * u64::from(size)));
    if period == Duration::ZERO || burst_time > period {
        return Err(format!(
            "a burst of {burst} packets of {size} B takes {} ns at the peak rate, more \
             than the period of {} ns; lengthen the period, raise the peak rate or \
             shorten the burst",
            burst_time.0, period.0
        ));
    }
    Ok(())
}

/// A Pareto shape: finite and above 1.
fn pareto_shape(shape: f64) -> Result<(), String> {
    if !(shape.is_finite() && shape > 1.0) {
        return Err(format!(
            "the Pareto shape is {shape}; it must be a number above 1 (the mean is \
             infinite otherwise), typically 1.2 to 1.9"
        ));
    }
    Ok(())
}

/// A packet trace: positive sizes, in time order.
fn check_trace(records: &[TraceRecord]) -> Result<(), String> {
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

/// Emits a message of `bytes` (positive) as packets of at most `size` (positive) bytes,
/// all at the current instant, the last one carrying the remainder (see the
/// [module docs](self#messages-larger-than-a-packet)).
fn emit_message(ctx: &mut Ctx<'_>, bytes: u64, size: u32) {
    let full = bytes / u64::from(size);
    for _ in 0..full {
        ctx.emit(size);
    }
    let rest = bytes % u64::from(size);
    if rest > 0 {
        // Less than `size`, so it fits a u32.
        ctx.emit(rest as u32);
    }
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

/// A gated timer firing after independent random gaps: the arrivals of a renewal
/// process inside the ON intervals (a Poisson process for exponential gaps). Each gap is
/// one draw of mean `mean_ns` from the source's stream, following `law`, rounded to the
/// nearest nanosecond ([`crate::rng::nanos`]), made when the timer is armed.
#[derive(Clone, Copy, Debug)]
struct RandomGaps {
    /// The mean gap, nanoseconds (positive).
    mean_ns: f64,
    law: onoff::Law,
    gate: Gate,
}

impl RandomGaps {
    /// Exponential gaps of mean `mean_ns` nanoseconds (positive); closed until
    /// [`Self::start`].
    fn exponential(mean_ns: f64) -> RandomGaps {
        RandomGaps::new(mean_ns, onoff::Law::Exponential)
    }

    /// Gaps of mean `mean_ns` nanoseconds (positive) following `law`; closed until
    /// [`Self::start`].
    fn new(mean_ns: f64, law: onoff::Law) -> RandomGaps {
        RandomGaps {
            mean_ns,
            law,
            gate: Gate::default(),
        }
    }

    /// An ON interval starts: the first firing comes one gap from now (one draw).
    fn start(&mut self, ctx: &mut Ctx<'_>, rng: &mut Rng) {
        self.gate.open();
        self.arm(ctx, rng);
    }

    /// The ON interval ends: pending firings become stale.
    fn stop(&mut self) {
        self.gate.close();
    }

    /// Handles the timer with `token`: if it is a firing of the current ON interval,
    /// calls `arrive` (which may draw from `rng`), then sets the next firing one gap
    /// from now (one draw, after `arrive`'s). A stale timer does nothing.
    fn fire(
        &mut self,
        ctx: &mut Ctx<'_>,
        token: u64,
        rng: &mut Rng,
        arrive: impl FnOnce(&mut Ctx<'_>, &mut Rng),
    ) {
        if self.gate.accepts(token) {
            arrive(ctx, rng);
            self.arm(ctx, rng);
        }
    }

    /// Sets the next firing one gap from now (one draw).
    fn arm(&self, ctx: &mut Ctx<'_>, rng: &mut Rng) {
        let gap = nanos(match self.law {
            onoff::Law::Exponential => rng.exponential(self.mean_ns),
            onoff::Law::Pareto { shape } => rng.pareto(shape, self.mean_ns),
        });
        ctx.set_timer(ctx.now().saturating_add(gap), self.gate.token());
    }
}

/// The mean gap in nanoseconds between packets of `size` bytes at `rate` (positive).
fn mean_gap_ns(size: u32, rate: Rate) -> f64 {
    f64::from(size) * 8.0 * 1e9 / rate.0 as f64
}
