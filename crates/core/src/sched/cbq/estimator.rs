//! The CBQ idle-time estimator of one class (Floyd & Jacobson 1995, Appendix A; Linux
//! `cbq_update`), in integer nanoseconds.
//!
//! After each packet of the class (or of one of its descendants) leaves, the estimator
//! compares the time since the previous packet's end of service with the time the
//! packet would take at the class's allotted rate:
//!
//! ```text
//! idle    = (eos - last) - len / rate            (ns; negative: sent faster than rate)
//! avgidle = (1 - W) * avgidle + W * idle,        W = 2^-EWMA_LOG
//! ```
//!
//! As in Linux, the average is stored *scaled*: `avgidle_scaled = avgidle / W`, so the
//! update is `avgidle_scaled += idle - (avgidle_scaled >> EWMA_LOG)` with an arithmetic
//! (flooring) shift. A positive average is capped at `maxidle` (scaled too). The class is
//! *underlimit* while `avgidle_scaled > 0`; at or below zero it is *overlimit* (Linux's
//! "overlimit or at-limit") until its *undertime*:
//!
//! ```text
//! undertime = start + len / rate + (1 - W) * (-avgidle_scaled)
//! ```
//!
//! where `start` is when the packet started on the link (Linux writes it as
//! `eos + (1 - W)(-avgidle_scaled) - len/link + len/rate`, the same instant). The
//! `(1 - W)(-avgidle_scaled)` term is the idle time after which one more sample brings
//! the average back to zero: `(1 - W) * avgidle + W * d = 0` gives
//! `d = (1/W - 1)(-avgidle) = (1 - W)(-avgidle_scaled)`.
//!
//! A class that has never sent is rested: its first update sets the average to `maxidle`
//! (Linux gets the same result from the huge gap since boot).

use crate::units::{Duration, Instant};

/// `log2(1/W)`: the weight of one sample in the moving average is `2^-EWMA_LOG` = 1/32
/// (Linux `TC_CBQ_DEF_EWMA`, the default of `tc ... cbq ... ewma`).
pub const EWMA_LOG: u32 = 5;

/// The estimator state of one class. See the [module docs](self).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Estimator {
    /// `avgidle / W`, nanoseconds; at most `maxidle`.
    avgidle: i64,
    /// Cap on `avgidle`, scaled like it (ns / W); positive.
    maxidle: i64,
    /// End of service of the class's previous packet; `None` before its first packet.
    last: Option<Instant>,
    /// While overlimit: when the class becomes underlimit again. `None`: underlimit.
    undertime: Option<Instant>,
}

impl Estimator {
    /// A rested estimator: `avgidle = maxidle` (scaled ns, positive), underlimit.
    pub(super) fn new(maxidle: i64) -> Estimator {
        Estimator {
            avgidle: maxidle,
            maxidle,
            last: None,
            undertime: None,
        }
    }

    /// The scaled average idle time `avgidle / W`, ns.
    pub(super) fn avgidle(&self) -> i64 {
        self.avgidle
    }

    /// The cap on the scaled average, ns / W.
    pub(super) fn maxidle(&self) -> i64 {
        self.maxidle
    }

    /// When the class becomes underlimit again; `None` while it is underlimit.
    pub(super) fn undertime(&self) -> Option<Instant> {
        self.undertime
    }

    /// Whether the class is underlimit at `now`: no undertime, or undertime reached.
    #[inline]
    pub(super) fn is_under(&self, now: Instant) -> bool {
        self.undertime.is_none_or(|u| u <= now)
    }

    /// Accounts a packet that started on the link at `start` and finishes at `eos`
    /// (`eos` never earlier than the previous call's), taking `class_tx` at the class's
    /// allotted rate.
    pub(super) fn update(&mut self, start: Instant, eos: Instant, class_tx: Duration) {
        let avgidle = i128::from(self.avgidle);
        let next = match self.last {
            None => i128::from(self.maxidle),
            Some(last) => {
                let idle = i128::from(eos.since(last).as_nanos()) - i128::from(class_tx.as_nanos());
                avgidle + idle - (avgidle >> EWMA_LOG)
            }
        };
        self.last = Some(eos);
        if next <= 0 {
            self.avgidle = i64::try_from(next).unwrap_or(i64::MIN);
            let wait = wait_term(-next);
            self.undertime = Some(start.saturating_add(class_tx).saturating_add(wait));
        } else {
            self.avgidle = i64::try_from(next.min(i128::from(self.maxidle))).unwrap_or(i64::MAX);
            self.undertime = None;
        }
    }

    /// The part of the undertime owed to a negative average, `(1 - W)(-avgidle_scaled)`;
    /// zero when the average is not negative. Linux's overlimit action subtracts it from
    /// the undertime of a class that cannot borrow ("let's forgive it").
    pub(super) fn forgiveness(&self) -> Duration {
        if self.avgidle < 0 {
            wait_term(-i128::from(self.avgidle))
        } else {
            Duration::ZERO
        }
    }

    /// The undertime after [`Estimator::forgive`], without changing anything.
    pub(super) fn forgiven_undertime(&self) -> Option<Instant> {
        let f = self.forgiveness();
        self.undertime.map(|u| Instant(u.0.saturating_sub(f.0)))
    }

    /// Applies the forgiveness to the undertime (see [`Estimator::forgiveness`]).
    pub(super) fn forgive(&mut self) {
        self.undertime = self.forgiven_undertime();
    }

    /// Makes the class underlimit until its next update (Linux resets the link class
    /// this way when nothing else can send).
    pub(super) fn clear_undertime(&mut self) {
        self.undertime = None;
    }
}

/// `(1 - W) * deficit` for a non-negative scaled deficit, as a duration (saturating).
fn wait_term(deficit: i128) -> Duration {
    let wait = deficit - (deficit >> EWMA_LOG);
    Duration(u64::try_from(wait).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn first_packet_rests_the_class() {
        let mut e = Estimator::new(1_500_000);
        e.update(Instant(0), Instant(MS), Duration(4 * MS));
        assert_eq!(e.avgidle(), 1_500_000);
        assert_eq!(e.undertime(), None);
    }

    /// maxidle 1.5 ms; packets take 1 ms on the link and 4 ms at the class rate.
    /// Second packet back to back: idle = 1 - 4 = -3 ms;
    /// avgidle = 1 500 000 - 3 000 000 - (1 500 000 >> 5 = 46 875) = -1 546 875.
    /// undertime = 1 ms + 4 ms + (1 546 875 - (1 546 875 >> 5 = 48 339)) = 6 498 536 ns.
    #[test]
    fn back_to_back_packets_go_overlimit() {
        let mut e = Estimator::new(1_500_000);
        e.update(Instant(0), Instant(MS), Duration(4 * MS));
        e.update(Instant(MS), Instant(2 * MS), Duration(4 * MS));
        assert_eq!(e.avgidle(), -1_546_875);
        assert_eq!(e.undertime(), Some(Instant(6_498_536)));
        assert!(!e.is_under(Instant(6_498_535)));
        assert!(e.is_under(Instant(6_498_536)));
        assert_eq!(e.forgiveness(), Duration(1_498_536));
        assert_eq!(e.forgiven_undertime(), Some(Instant(5 * MS)));
        e.forgive();
        assert_eq!(e.undertime(), Some(Instant(5 * MS)));
    }

    /// A long pause caps the average at maxidle.
    #[test]
    fn idle_time_is_capped_at_maxidle() {
        let mut e = Estimator::new(1_500_000);
        e.update(Instant(0), Instant(MS), Duration(4 * MS));
        e.update(Instant(MS), Instant(2 * MS), Duration(4 * MS));
        e.update(Instant(1_000 * MS), Instant(1_001 * MS), Duration(4 * MS));
        assert_eq!(e.avgidle(), 1_500_000);
        assert_eq!(e.undertime(), None);
        assert_eq!(e.forgiveness(), Duration::ZERO);
    }
}
