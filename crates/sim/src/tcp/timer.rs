//! Restartable timers on top of the engine's uncancellable ones, and their tokens.
//!
//! TCP restarts its retransmission timer on almost every acknowledgement. Scheduling an
//! engine timer each time would add one event per acknowledgement; instead a
//! `LazyTimer` keeps its *deadline* apart from the engine timer *armed* for it. Moving
//! the deadline later leaves the armed timer alone; when that one fires before the
//! deadline it re-arms for the deadline. Moving the deadline earlier arms a new engine
//! timer and makes the old one stale (a generation number in its token). So the
//! deadline behaves exactly like a cancellable timer, with at most one engine event per
//! deadline actually reached, plus one per re-arm.
//!
//! # Tokens
//!
//! The agent shares the token space with the source it wraps. TCP tokens have bit 63
//! set; a wrapped source's tokens (generation counters) must leave it clear. Below it:
//! bit 62 the timer kind, bits 32–61 the connection (so at most 2^30 connections per
//! flow), bits 0–31 the generation.

use linkshare_core::units::Instant;

/// Bit marking a token as the transport's.
const TCP_BIT: u64 = 1 << 63;
/// Bit marking a delayed-acknowledgement timer.
const DELACK_BIT: u64 = 1 << 62;
/// Connections a flow may open (the width of the token's connection field).
pub(crate) const MAX_CONNECTIONS: u32 = 1 << 30;

/// Which of a connection's timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TimerKind {
    /// The sender's retransmission timer (also guards the SYN).
    Retransmit,
    /// The receiver's delayed-acknowledgement timer.
    DelayedAck,
}

/// A decoded TCP token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TimerId {
    /// The connection.
    pub(crate) conn: u32,
    /// Which timer.
    pub(crate) kind: TimerKind,
    /// The generation it was armed with.
    pub(crate) generation: u32,
}

impl TimerId {
    /// The engine token of this timer.
    pub(crate) fn token(self) -> u64 {
        debug_assert!(self.conn < MAX_CONNECTIONS);
        let kind = match self.kind {
            TimerKind::Retransmit => 0,
            TimerKind::DelayedAck => DELACK_BIT,
        };
        TCP_BIT | kind | (u64::from(self.conn) << 32) | u64::from(self.generation)
    }

    /// The TCP timer `token` names, or `None` for a wrapped source's token.
    pub(crate) fn decode(token: u64) -> Option<TimerId> {
        if token & TCP_BIT == 0 {
            return None;
        }
        let kind = if token & DELACK_BIT == 0 {
            TimerKind::Retransmit
        } else {
            TimerKind::DelayedAck
        };
        Some(TimerId {
            conn: ((token >> 32) as u32) & (MAX_CONNECTIONS - 1),
            kind,
            generation: token as u32,
        })
    }

    /// Whether a wrapped source may use `token` (it must not look like a TCP token).
    pub(crate) fn is_source_token(token: u64) -> bool {
        token & TCP_BIT == 0
    }
}

/// What a fired engine timer means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fired {
    /// The deadline is reached: the timer expired (and is no longer running).
    Expired,
    /// The deadline moved later: arm an engine timer for `at` with `generation`.
    Rearm {
        /// The deadline.
        at: Instant,
        /// The generation to put in the token.
        generation: u32,
    },
    /// A superseded engine timer, or the timer was stopped: nothing to do.
    Stale,
}

/// A restartable timer. See the [module docs](self).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct LazyTimer {
    deadline: Option<Instant>,
    armed: Option<(Instant, u32)>,
    generation: u32,
}

impl LazyTimer {
    /// (Re)starts the timer to expire at `at`. Returns the generation of an engine timer
    /// the caller must arm for `at`, if the one already armed fires too late.
    #[must_use = "arm an engine timer when asked"]
    pub(crate) fn start(&mut self, at: Instant) -> Option<u32> {
        self.deadline = Some(at);
        match self.armed {
            Some((armed_at, _)) if armed_at <= at => None,
            _ => Some(self.arm(at)),
        }
    }

    /// Stops the timer; an armed engine timer will fire as [`Fired::Stale`].
    pub(crate) fn stop(&mut self) {
        self.deadline = None;
    }

    /// Whether the timer is running.
    pub(crate) fn is_running(&self) -> bool {
        self.deadline.is_some()
    }

    /// The engine timer of `generation` fired at `now`.
    pub(crate) fn fired(&mut self, now: Instant, generation: u32) -> Fired {
        if self.armed.is_none_or(|(_, g)| g != generation) {
            return Fired::Stale;
        }
        self.armed = None;
        match self.deadline {
            None => Fired::Stale,
            Some(at) if at <= now => {
                self.deadline = None;
                Fired::Expired
            }
            Some(at) => Fired::Rearm {
                at,
                generation: self.arm(at),
            },
        }
    }

    fn arm(&mut self, at: Instant) -> u32 {
        self.generation = self.generation.wrapping_add(1);
        self.armed = Some((at, self.generation));
        self.generation
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip() {
        for kind in [TimerKind::Retransmit, TimerKind::DelayedAck] {
            let id = TimerId {
                conn: MAX_CONNECTIONS - 1,
                kind,
                generation: u32::MAX,
            };
            assert_eq!(TimerId::decode(id.token()), Some(id));
            assert!(!TimerId::is_source_token(id.token()));
        }
        assert_eq!(TimerId::decode(7), None);
        assert!(TimerId::is_source_token(7));
    }

    #[test]
    fn later_deadline_rearms_when_the_early_timer_fires() {
        let mut t = LazyTimer::default();
        let g1 = t.start(Instant(100)).expect("first start arms");
        assert_eq!(t.start(Instant(150)), None);
        assert_eq!(
            t.fired(Instant(100), g1),
            Fired::Rearm {
                at: Instant(150),
                generation: g1 + 1
            }
        );
        assert_eq!(t.fired(Instant(150), g1 + 1), Fired::Expired);
        assert!(!t.is_running());
    }

    #[test]
    fn earlier_deadline_makes_the_old_timer_stale() {
        let mut t = LazyTimer::default();
        let g1 = t.start(Instant(100)).expect("arms");
        let g2 = t.start(Instant(50)).expect("earlier deadline arms again");
        assert_eq!(t.fired(Instant(50), g2), Fired::Expired);
        assert_eq!(t.fired(Instant(100), g1), Fired::Stale);
    }

    #[test]
    fn stopped_timer_fires_stale() {
        let mut t = LazyTimer::default();
        let g = t.start(Instant(100)).expect("arms");
        t.stop();
        assert_eq!(t.fired(Instant(100), g), Fired::Stale);
        // Restarting after the stale firing arms again.
        assert!(t.start(Instant(200)).is_some());
    }
}
