//! The sending end: congestion control and loss recovery, on byte sequence numbers.
//!
//! State (all in payload bytes): `snd_una` (oldest unacknowledged byte), `snd_nxt`
//! (next byte to send), `snd_max` (one past the highest byte ever sent; `snd_nxt` falls
//! below it after a timeout), `cwnd`, `ssthresh`. Data starts at sequence number 0. A
//! segment may be sent when it fits entirely in the window
//! `[snd_una, snd_una + min(cwnd, W))`; segments carry `min(MSS, bytes available)`
//! payload bytes, so a short write leaves at once in a short segment (no Nagle).
//!
//! # Congestion control (RFC 5681)
//!
//! * Initial window: the configured number of segments, or
//!   `min(4·MSS, max(2·MSS, 4380 B))` (RFC 5681 (3)). Initial `ssthresh`: the receiver
//!   window W (RFC 5681 §3.1 allows any arbitrarily high value; `cwnd` never grows past
//!   W, so nothing higher would make a difference).
//! * Slow start (`cwnd < ssthresh`): `cwnd += min(N, MSS)` per acknowledgement of `N`
//!   new bytes (appropriate byte counting with L = 1, RFC 5681 (2)).
//! * Congestion avoidance: `cwnd += max(1, MSS·MSS / cwnd)` per new acknowledgement
//!   (RFC 5681 (3), the per-ACK approximation, rounded down, at least one byte; as
//!   ns-2's per-ACK `1/cwnd` increase).
//! * `cwnd` does not grow past W by slow start or congestion avoidance (growth beyond
//!   what the receiver window lets the sender use would only be released as a burst
//!   later; ns-2 caps its window the same way). Fast-recovery inflation may exceed W;
//!   the usable window is `min(cwnd, W)` regardless.
//! * Restart after idle ([`TcpConfig::idle_restart`], off by default): when everything
//!   sent has been acknowledged and the sender then stays silent for at least one
//!   retransmission timeout (the RTO when the last acknowledgement arrived), its next
//!   transmission of new data starts from `cwnd = min(cwnd, IW)`, `ssthresh` unchanged.
//!   This is ns-2's behaviour with its defaults `slow_start_restart_ true` and
//!   `restart_bugfix_ true`: its retransmission timer keeps running after the last
//!   acknowledgement and, expiring with nothing outstanding, closes the window to one
//!   segment without touching `ssthresh` (ns-2's window is one segment, ours `IW`, the
//!   same with ns-2's default initial window of 1). RFC 5681 §4.1's restart window is the
//!   same rule. No other congestion-window validation (RFC 7661).
//!
//! # Loss recovery
//!
//! An acknowledgement is a duplicate when it acknowledges nothing new while data is
//! outstanding (pure acknowledgements carry no data and the window is constant).
//!
//! * Fast retransmit on the `dupack_threshold`-th duplicate: `ssthresh =
//!   max(FlightSize / 2, 2·MSS)` with `FlightSize = snd_max − snd_una`, retransmit the
//!   segment at `snd_una`, `cwnd = ssthresh + threshold·MSS`, `recover = snd_max`; each
//!   further duplicate inflates `cwnd` by MSS and may release new data. No limited
//!   transmit (RFC 3042).
//! * **Reno** (RFC 5681 §3.2 step 6): the first acknowledgement of new data ends
//!   recovery, `cwnd = ssthresh`. A second loss in the same window needs another
//!   `threshold` duplicates (another halving) or a timeout.
//! * **NewReno** (RFC 6582 §3.2): an acknowledgement below `recover` (partial)
//!   retransmits the segment at the new `snd_una`, deflates `cwnd` by the bytes it
//!   acknowledges, adds back MSS if that was at least MSS, and restarts the
//!   retransmission timer for the first partial acknowledgement only (the "impatient"
//!   variant). One covering `recover` (full) ends recovery with
//!   `cwnd = min(ssthresh, max(FlightSize, MSS) + MSS)` (option 1 of step 3).
//!   The careful variant of step 2: duplicates enter fast retransmit only if the
//!   cumulative acknowledgement covers `recover` (here an exclusive bound: RFC 6582's
//!   `recover` is the highest byte sent, ours the byte after it), so the duplicates
//!   caused by a go-back-N after a timeout (which sets `recover = snd_max`) do not
//!   trigger a spurious fast retransmit.
//! * Retransmission timeout (RFC 5681 (4), RFC 6298 §5): `ssthresh = max(FlightSize /
//!   2, 2·MSS)` — held constant if the segment had already been retransmitted by the
//!   timer (no new acknowledgement since the previous timeout) — `cwnd = MSS` (the loss
//!   window), recovery ends, `snd_nxt = snd_una` (go-back-N: everything from `snd_una`
//!   is sent again as the window opens), and the timeout backs off.
//!
//! # RTT samples (Karn's rule)
//!
//! One segment is timed at a time (as BSD and ns-2 do): when no segment is being timed,
//! the next segment sent for the first time is; the acknowledgement covering its last
//! byte gives a sample. Any retransmission (fast or by timeout) cancels the timing, so no
//! sample ever comes from a retransmitted segment, nor spans a recovery.

use linkshare_core::units::Instant;

use super::rto::RtoEstimator;
use crate::config::{TcpConfig, TcpVariant};

/// A data segment to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Seg {
    /// Sequence number of its first payload byte.
    pub(crate) seq: u64,
    /// Payload bytes.
    pub(crate) len: u32,
    /// Whether some of its bytes were sent before.
    pub(crate) retransmission: bool,
}

/// What to do with the retransmission timer after an acknowledgement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TimerCmd {
    /// Leave it as it is.
    Keep,
    /// Restart it for the current RTO.
    Restart,
    /// Stop it: nothing is outstanding.
    Stop,
}

/// The sender's reaction to an acknowledgement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AckOutcome {
    /// A segment to retransmit now (fast retransmit, or a NewReno partial
    /// acknowledgement).
    pub(crate) retransmit: Option<Seg>,
    /// Whether this was a fast retransmit (entering recovery).
    pub(crate) fast_retransmit: bool,
    /// The retransmission timer.
    pub(crate) timer: TimerCmd,
}

/// The sending end of one connection. See the [module docs](self).
#[derive(Clone, Debug)]
pub(crate) struct Sender {
    variant: TcpVariant,
    mss: u64,
    window: u64,
    dupack_threshold: u32,
    snd_una: u64,
    snd_nxt: u64,
    snd_max: u64,
    cwnd: u64,
    ssthresh: u64,
    dupacks: u32,
    in_recovery: bool,
    /// NewReno: the next partial acknowledgement is the first of the episode.
    first_partial: bool,
    /// One past the highest byte sent when recovery or the last timeout began.
    recover: Option<u64>,
    /// The timed segment: one past its last byte, and when it was sent.
    timed: Option<(u64, Instant)>,
    /// Timeouts since the last acknowledgement of new data.
    consecutive_timeouts: u32,
    rto: RtoEstimator,
    /// The initial window, bytes.
    initial_cwnd: u64,
    /// With restart after idle: when everything sent had been acknowledged, the instant
    /// one RTO later from which a new transmission restarts the window.
    idle_restart_at: Option<Instant>,
    idle_restart: bool,
}

impl Sender {
    /// A sender with nothing sent, configured by `config` (which passed
    /// [`super::check`]).
    pub(crate) fn new(config: &TcpConfig) -> Sender {
        let mss = u64::from(config.mss);
        let cwnd = match config.initial_window {
            Some(segments) => u64::from(segments) * mss,
            None => (4 * mss).min((2 * mss).max(4380)),
        };
        Sender {
            variant: config.variant,
            mss,
            window: config.window,
            dupack_threshold: config.dupack_threshold,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            cwnd,
            ssthresh: config.window,
            dupacks: 0,
            in_recovery: false,
            first_partial: false,
            recover: None,
            timed: None,
            consecutive_timeouts: 0,
            initial_cwnd: cwnd,
            idle_restart_at: None,
            idle_restart: config.idle_restart,
            rto: RtoEstimator::new(
                config.initial_rto,
                config.min_rto,
                config.max_rto,
                config.granularity,
            ),
        }
    }

    /// The oldest unacknowledged byte.
    pub(crate) fn snd_una(&self) -> u64 {
        self.snd_una
    }

    /// One past the highest byte ever sent.
    pub(crate) fn snd_max(&self) -> u64 {
        self.snd_max
    }

    /// Congestion window, bytes.
    pub(crate) fn cwnd(&self) -> u64 {
        self.cwnd
    }

    /// Slow-start threshold, bytes.
    pub(crate) fn ssthresh(&self) -> u64 {
        self.ssthresh
    }

    /// The RTO estimator.
    pub(crate) fn rto(&self) -> &RtoEstimator {
        &self.rto
    }

    /// The RTO estimator, to feed it a handshake sample or re-initialise it.
    pub(crate) fn rto_mut(&mut self) -> &mut RtoEstimator {
        &mut self.rto
    }

    /// The next segment the window allows at `now`, given that the application has
    /// written bytes up to `available` (exclusive); records it as sent.
    pub(crate) fn next_segment(&mut self, now: Instant, available: u64) -> Option<Seg> {
        self.snd_nxt = self.snd_nxt.max(self.snd_una);
        let len = self.mss.min(available.saturating_sub(self.snd_nxt));
        if len > 0
            && let Some(at) = self.idle_restart_at.take()
            && now >= at
        {
            self.cwnd = self.cwnd.min(self.initial_cwnd);
        }
        let limit = self.snd_una + self.cwnd.min(self.window);
        if len == 0 || self.snd_nxt + len > limit {
            return None;
        }
        let seq = self.snd_nxt;
        let retransmission = seq < self.snd_max;
        if retransmission {
            self.timed = None;
        } else if self.timed.is_none() {
            self.timed = Some((seq + len, now));
        }
        self.snd_nxt += len;
        self.snd_max = self.snd_max.max(self.snd_nxt);
        Some(Seg {
            seq,
            len: len as u32,
            retransmission,
        })
    }

    /// The segment at `snd_una`, sent again now.
    fn retransmit_first(&mut self) -> Seg {
        self.timed = None;
        Seg {
            seq: self.snd_una,
            len: self.mss.min(self.snd_max - self.snd_una) as u32,
            retransmission: true,
        }
    }

    /// An acknowledgement of everything below `ack` arrived at `now`.
    pub(crate) fn on_ack(&mut self, now: Instant, ack: u64) -> AckOutcome {
        let mut out = AckOutcome {
            retransmit: None,
            fast_retransmit: false,
            timer: TimerCmd::Keep,
        };
        if ack > self.snd_max {
            return out;
        }
        if ack > self.snd_una {
            self.new_ack(now, ack, &mut out);
        } else if ack == self.snd_una && self.snd_max > self.snd_una {
            self.duplicate(ack, &mut out);
        }
        out
    }

    fn new_ack(&mut self, now: Instant, ack: u64, out: &mut AckOutcome) {
        let acked = ack - self.snd_una;
        if let Some((end, sent)) = self.timed
            && ack >= end
        {
            self.rto.sample(now.since(sent));
            self.timed = None;
        }
        self.snd_una = ack;
        self.consecutive_timeouts = 0;
        out.timer = if ack == self.snd_max {
            TimerCmd::Stop
        } else {
            TimerCmd::Restart
        };
        if self.idle_restart && ack == self.snd_max {
            self.idle_restart_at = Some(now.saturating_add(self.rto.rto()));
        }
        if !self.in_recovery {
            self.dupacks = 0;
            self.grow(acked);
            return;
        }
        let full = match self.variant {
            TcpVariant::Reno => true,
            TcpVariant::NewReno => self.recover.is_none_or(|r| ack >= r),
        };
        if full {
            self.in_recovery = false;
            self.dupacks = 0;
            self.cwnd = match self.variant {
                TcpVariant::Reno => self.ssthresh,
                TcpVariant::NewReno => {
                    let flight = self.snd_max - ack;
                    self.ssthresh.min(flight.max(self.mss) + self.mss)
                }
            };
            return;
        }
        out.retransmit = Some(self.retransmit_first());
        self.cwnd = self.cwnd.saturating_sub(acked);
        if acked >= self.mss {
            self.cwnd += self.mss;
        }
        self.cwnd = self.cwnd.max(self.mss);
        if self.first_partial {
            self.first_partial = false;
        } else if out.timer == TimerCmd::Restart {
            out.timer = TimerCmd::Keep;
        }
    }

    fn duplicate(&mut self, ack: u64, out: &mut AckOutcome) {
        self.dupacks = self.dupacks.saturating_add(1);
        if self.in_recovery {
            self.cwnd += self.mss;
            return;
        }
        if self.dupacks != self.dupack_threshold {
            return;
        }
        let careful_block = self.variant == TcpVariant::NewReno
            && self.recover.is_some_and(|recover| ack < recover);
        if careful_block {
            return;
        }
        let flight = self.snd_max - self.snd_una;
        self.ssthresh = (flight / 2).max(2 * self.mss);
        self.cwnd = self.ssthresh + u64::from(self.dupack_threshold) * self.mss;
        self.recover = Some(self.snd_max);
        self.in_recovery = true;
        self.first_partial = true;
        out.retransmit = Some(self.retransmit_first());
        out.fast_retransmit = true;
    }

    /// Slow start or congestion avoidance after `acked` new bytes.
    fn grow(&mut self, acked: u64) {
        let increase = if self.cwnd < self.ssthresh {
            acked.min(self.mss)
        } else {
            (self.mss * self.mss / self.cwnd).max(1)
        };
        self.cwnd = self.cwnd.max((self.cwnd + increase).min(self.window));
    }

    /// The retransmission timer expired: collapse the window, go back to `snd_una`
    /// and back the timeout off. The caller then sends what [`Sender::next_segment`]
    /// allows (the segment at `snd_una`).
    pub(crate) fn on_timeout(&mut self) {
        if self.consecutive_timeouts == 0 {
            let flight = self.snd_max - self.snd_una;
            self.ssthresh = (flight / 2).max(2 * self.mss);
        }
        self.consecutive_timeouts = self.consecutive_timeouts.saturating_add(1);
        self.cwnd = self.mss;
        self.in_recovery = false;
        self.dupacks = 0;
        self.recover = Some(self.snd_max);
        self.snd_nxt = self.snd_una;
        self.timed = None;
        self.rto.back_off();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use linkshare_core::units::Duration;

    const MSS: u64 = 1000;

    fn sender(variant: TcpVariant, iw: u32) -> Sender {
        Sender::new(&TcpConfig {
            variant,
            mss: MSS as u32,
            window: 1_000_000,
            initial_window: Some(iw),
            ..TcpConfig::default()
        })
    }

    /// Sends everything the window allows from an endless buffer.
    fn fill(s: &mut Sender, now: Instant) -> Vec<Seg> {
        std::iter::from_fn(|| s.next_segment(now, u64::MAX)).collect()
    }

    #[test]
    fn initial_window_rfc5681() {
        for (mss, iw) in [(536, 4 * 536), (1000, 4000), (1460, 4380), (3000, 6000)] {
            let s = Sender::new(&TcpConfig {
                mss,
                ..TcpConfig::default()
            });
            assert_eq!(s.cwnd(), iw, "mss {mss}");
        }
    }

    #[test]
    fn slow_start_then_avoidance() {
        let mut s = sender(TcpVariant::NewReno, 2);
        let t = Instant::ZERO;
        assert_eq!(fill(&mut s, t).len(), 2);
        s.on_ack(t, MSS);
        assert_eq!(s.cwnd(), 3 * MSS);
        s.ssthresh = 3 * MSS;
        s.on_ack(t, 2 * MSS);
        // 1000 * 1000 / 3000 = 333 bytes.
        assert_eq!(s.cwnd(), 3 * MSS + 333);
        // Short writes: a partial segment, and none beyond the written bytes.
        let mut s = sender(TcpVariant::NewReno, 4);
        let segs: Vec<Seg> = std::iter::from_fn(|| s.next_segment(t, 2500)).collect();
        let lens: Vec<u32> = segs.iter().map(|g| g.len).collect();
        assert_eq!(lens, vec![1000, 1000, 500]);
    }

    #[test]
    fn window_limit_w() {
        let mut s = Sender::new(&TcpConfig {
            mss: 1000,
            window: 3500,
            initial_window: Some(10),
            ..TcpConfig::default()
        });
        // min(cwnd, W) = 3500: three whole segments fit.
        assert_eq!(fill(&mut s, Instant::ZERO).len(), 3);
    }

    /// Ten segments out, segment 0 lost; three duplicates.
    fn one_loss(variant: TcpVariant) -> Sender {
        let mut s = sender(variant, 10);
        let t = Instant::ZERO;
        assert_eq!(fill(&mut s, t).len(), 10);
        for i in 0..2 {
            let o = s.on_ack(t, 0);
            assert_eq!(o.retransmit, None, "dupack {i}");
        }
        let o = s.on_ack(t, 0);
        assert!(o.fast_retransmit);
        assert_eq!(
            o.retransmit,
            Some(Seg {
                seq: 0,
                len: 1000,
                retransmission: true
            })
        );
        // ssthresh = 10 000 / 2, cwnd = ssthresh + 3 MSS.
        assert_eq!(s.ssthresh(), 5 * MSS);
        assert_eq!(s.cwnd(), 8 * MSS);
        s
    }

    #[test]
    fn fast_recovery_inflates_and_deflates() {
        for (variant, exit_cwnd) in [
            (TcpVariant::Reno, 5 * MSS),
            // min(ssthresh, max(FlightSize = 0, MSS) + MSS)
            (TcpVariant::NewReno, 2 * MSS),
        ] {
            let mut s = one_loss(variant);
            let t = Instant::ZERO;
            // Dupacks 4..=9 inflate cwnd to 14 MSS: 4 new segments fit (snd_una 0).
            for _ in 0..6 {
                s.on_ack(t, 0);
            }
            assert_eq!(s.cwnd(), 14 * MSS);
            let sent = fill(&mut s, t);
            assert_eq!(sent.len(), 4);
            assert!(sent.iter().all(|g| !g.retransmission));
            // Everything up to the new segments is acknowledged: recovery ends.
            let o = s.on_ack(t, 14 * MSS);
            assert!(!s.in_recovery);
            assert_eq!(o.timer, TimerCmd::Stop);
            assert_eq!(s.cwnd(), exit_cwnd, "{variant:?}");
        }
    }

    #[test]
    fn partial_ack_newreno_retransmits_next_hole() {
        let mut s = one_loss(TcpVariant::NewReno);
        let t = Instant::ZERO;
        // Segment 3 also lost: the retransmission of 0 brings ack 3000 (partial).
        let o = s.on_ack(t, 3 * MSS);
        assert!(s.in_recovery);
        assert_eq!(o.retransmit.map(|g| g.seq), Some(3 * MSS));
        assert_eq!(o.timer, TimerCmd::Restart);
        // Deflate by 3000, add back 1000.
        assert_eq!(s.cwnd(), 8 * MSS - 3 * MSS + MSS);
        // A second partial acknowledgement does not restart the timer.
        let o = s.on_ack(t, 6 * MSS);
        assert_eq!(o.retransmit.map(|g| g.seq), Some(6 * MSS));
        assert_eq!(o.timer, TimerCmd::Keep);
        let o = s.on_ack(t, 10 * MSS);
        assert_eq!(o.retransmit, None);
        assert!(!s.in_recovery);
    }

    #[test]
    fn partial_ack_reno_ends_recovery() {
        let mut s = one_loss(TcpVariant::Reno);
        let o = s.on_ack(Instant::ZERO, 3 * MSS);
        assert_eq!(o.retransmit, None);
        assert!(!s.in_recovery);
        assert_eq!(s.cwnd(), 5 * MSS);
    }

    #[test]
    fn timeout_goes_back_and_careful_variant_ignores_stale_dupacks() {
        let mut s = sender(TcpVariant::NewReno, 10);
        let t = Instant::ZERO;
        fill(&mut s, t);
        s.on_timeout();
        assert_eq!((s.cwnd(), s.ssthresh()), (MSS, 5 * MSS));
        assert_eq!(s.rto().rto(), Duration::from_secs(2));
        let g = s
            .next_segment(t, u64::MAX)
            .expect("the first segment again");
        assert_eq!((g.seq, g.retransmission), (0, true));
        assert_eq!(s.next_segment(t, u64::MAX), None);
        // A second timeout without progress keeps ssthresh.
        s.on_timeout();
        assert_eq!(s.ssthresh(), 5 * MSS);
        assert_eq!(s.rto().rto(), Duration::from_secs(4));
        s.next_segment(t, u64::MAX);
        // Ack 1000, then duplicates of 1000 (from go-back-N copies): below recover, no
        // fast retransmit.
        s.on_ack(t, MSS);
        for _ in 0..5 {
            let o = s.on_ack(t, MSS);
            assert!(!o.fast_retransmit);
        }
        // Reno has no such check.
        let mut r = sender(TcpVariant::Reno, 10);
        fill(&mut r, t);
        r.on_timeout();
        r.next_segment(t, u64::MAX);
        r.on_ack(t, MSS);
        let fast: Vec<bool> = (0..3).map(|_| r.on_ack(t, MSS).fast_retransmit).collect();
        assert_eq!(fast, vec![false, false, true]);
    }

    #[test]
    fn karn_no_sample_from_retransmission() {
        let mut s = sender(TcpVariant::NewReno, 1);
        let t0 = Instant::ZERO;
        s.next_segment(t0, u64::MAX);
        s.on_timeout();
        s.next_segment(Instant::from_secs(1), u64::MAX);
        s.on_ack(Instant::from_millis(1100), MSS);
        assert_eq!(s.rto().srtt(), None);
        // The next segment, sent once, is timed.
        s.next_segment(Instant::from_millis(1100), u64::MAX);
        s.on_ack(Instant::from_millis(1150), 2 * MSS);
        assert_eq!(s.rto().srtt(), Some(Duration::from_millis(50)));
    }
}
