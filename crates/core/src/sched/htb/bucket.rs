//! The two token buckets of an HTB class, kept in time units as Linux keeps them, and
//! the class mode they imply.
//!
//! A bucket holds *tokens in nanoseconds of transmission time* at its rate: sending `L`
//! bytes costs `rate.tx_time(L)` (rounded up), and tokens grow by one nanosecond per
//! nanosecond of real time, up to the bucket depth (`burst` at `rate`, `cburst` at
//! `ceil`). Tokens may go negative; Linux bounds the debt at `mbuffer` (60 s), as here.
//!
//! Tokens are not updated continuously: each class remembers the checkpoint `t_c` of its
//! last update, and the credit accrued since is `diff = min(now − t_c, mbuffer)`.
//!
//! Mode (Linux `htb_class_mode`, hysteresis off — the kernel default):
//! `ctokens + diff < 0` → [`Mode::CantSend`] (red); else `tokens + diff >= 0` →
//! [`Mode::CanSend`] (green); else [`Mode::MayBorrow`] (yellow).

use crate::units::{Bytes, Duration, Instant, Rate, TxTime};

/// Linux's `mbuffer`: the most credit a class accrues between two updates, and the
/// largest debt a bucket holds (60 s, in nanoseconds).
pub(super) const MBUFFER: i64 = 60_000_000_000;

/// The mode of an HTB class (Linux `enum htb_cmode`), with the colours of the usual
/// descriptions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mode {
    /// Red: the ceiling bucket is in debt; neither the class nor its descendants may send
    /// through it.
    CantSend,
    /// Yellow: the assured bucket is in debt but the ceiling bucket is not; the class
    /// may borrow from its nearest non-yellow ancestor if that one is green.
    MayBorrow,
    /// Green: both buckets have tokens; the class may send (a leaf) or lend (an interior
    /// class) at its own level.
    CanSend,
}

/// The assured (`rate`, `burst`) and ceiling (`ceil`, `cburst`) buckets of one class.
/// Laid out in this order, what a mode needs (tokens and checkpoint) first, so that a
/// class record can put it in its first cache line (module `class`).
#[derive(Clone, Debug)]
#[repr(C)]
pub(super) struct Bucket {
    /// Assured tokens at `t_c`, ns (negative: debt).
    tokens: i64,
    /// Ceiling tokens at `t_c`, ns.
    ctokens: i64,
    /// Checkpoint of the last update.
    t_c: Instant,
    /// Depth of the assured bucket: `burst` at `rate`, ns.
    buffer: i64,
    /// Depth of the ceiling bucket: `cburst` at `ceil`, ns.
    cbuffer: i64,
    /// Token costs at `rate`.
    rate: TxTime,
    /// Token costs at `ceil`.
    ceil: TxTime,
}

/// Nanoseconds of a duration as a signed token count, saturating.
#[inline]
fn ns(d: Duration) -> i64 {
    i64::try_from(d.0).unwrap_or(i64::MAX)
}

/// Linux `htb_accnt_tokens` / `htb_accnt_ctokens`: credit, cap at the depth, pay, and
/// bound the debt just inside `mbuffer`.
#[inline]
fn account(tokens: i64, diff: i64, depth: i64, cost: i64) -> i64 {
    let t = tokens.saturating_add(diff).min(depth).saturating_sub(cost);
    if t <= -MBUFFER { 1 - MBUFFER } else { t }
}

impl Bucket {
    /// Full buckets at [`Instant::ZERO`] (Linux fills both buckets when a class is created).
    pub(super) fn new(rate: Rate, ceil: Rate, burst: Bytes, cburst: Bytes) -> Bucket {
        let buffer = ns(rate.tx_time(burst));
        let cbuffer = ns(ceil.tx_time(cburst));
        Bucket {
            rate: TxTime::new(rate),
            ceil: TxTime::new(ceil),
            buffer,
            cbuffer,
            tokens: buffer,
            ctokens: cbuffer,
            t_c: Instant::ZERO,
        }
    }

    /// The credit accrued by `now`: `min(now − t_c, mbuffer)`, ns.
    #[inline]
    pub(super) fn credit(&self, now: Instant) -> i64 {
        ns(now.since(self.t_c)).min(MBUFFER)
    }

    /// The mode at `t_c + diff`, and, unless green, the time from then until the mode
    /// changes (ns, at least 1).
    #[inline]
    pub(super) fn mode(&self, diff: i64) -> (Mode, i64) {
        let c = self.ctokens.saturating_add(diff);
        if c < 0 {
            return (Mode::CantSend, -c);
        }
        let t = self.tokens.saturating_add(diff);
        if t >= 0 {
            (Mode::CanSend, 0)
        } else {
            (Mode::MayBorrow, -t)
        }
    }

    /// The mode at `at` and, unless green, the instant at which it next changes if nothing
    /// is charged meanwhile. An `at` before the checkpoint counts as the checkpoint.
    #[inline]
    pub(super) fn mode_at(&self, at: Instant) -> (Mode, Instant) {
        let (mode, delay) = self.mode(self.credit(at));
        let from = if at > self.t_c { at } else { self.t_c };
        (mode, from.saturating_add(Duration(delay.unsigned_abs())))
    }

    /// Charges a packet of `len` bytes sent at `now` (Linux `htb_charge_class`, one
    /// class): the ceiling bucket always pays; the assured bucket pays if `pays_rate`
    /// (the class is the lender or above it), else it is only credited, since `t_c`
    /// moves to `now`.
    #[inline(always)]
    pub(super) fn charge(&mut self, now: Instant, len: Bytes, pays_rate: bool) {
        let diff = self.credit(now);
        self.tokens = if pays_rate {
            account(self.tokens, diff, self.buffer, ns(self.rate.of(len)))
        } else {
            self.tokens.saturating_add(diff)
        };
        self.ctokens = account(self.ctokens, diff, self.cbuffer, ns(self.ceil.of(len)));
        self.t_c = now;
    }

    /// The instant from which the class is not red, if nothing is charged meanwhile.
    #[inline]
    pub(super) fn not_red_from(&self) -> Instant {
        self.after_debt(self.ctokens)
    }

    /// The instant from which the class is green, if nothing is charged meanwhile.
    #[inline]
    pub(super) fn green_from(&self) -> Instant {
        self.after_debt(self.ctokens.min(self.tokens))
    }

    /// `t_c` plus the time to pay off a debt of `-tokens` (no time if not in debt). The
    /// debt is below `mbuffer`, so the `mbuffer` cap on the credit never delays this.
    #[inline]
    fn after_debt(&self, tokens: i64) -> Instant {
        self.t_c
            .saturating_add(Duration(tokens.min(0).unsigned_abs()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1 Mbit/s: 1000 B cost 8 ms of tokens. Burst 2000 B = 16 ms deep.
    fn bucket() -> Bucket {
        Bucket::new(
            Rate::from_mbit(1),
            Rate::from_mbit(2),
            Bytes(2000),
            Bytes(2000),
        )
    }

    #[test]
    fn modes_follow_the_two_buckets() {
        let mut b = bucket();
        assert_eq!(b.mode(0), (Mode::CanSend, 0));
        // Two packets at t = 0: tokens 16 ms - 16 ms = 0 (still green: `>= 0`),
        // ctokens 8 ms - 8 ms = 0 (ceil bucket is 8 ms deep at 2 Mbit/s).
        b.charge(Instant::ZERO, Bytes(1000), true);
        b.charge(Instant::ZERO, Bytes(1000), true);
        assert_eq!(b.mode(0), (Mode::CanSend, 0));
        // A third: tokens -8 ms, ctokens -4 ms: red for 4 ms, then yellow for 4 ms.
        b.charge(Instant::ZERO, Bytes(1000), true);
        assert_eq!(b.mode(0), (Mode::CantSend, 4_000_000));
        assert_eq!(b.mode(4_000_000), (Mode::MayBorrow, 4_000_000));
        assert_eq!(b.mode(8_000_000), (Mode::CanSend, 0));
        assert_eq!(b.not_red_from(), Instant(4_000_000));
        assert_eq!(b.green_from(), Instant(8_000_000));
        // Borrowing at t = 1 ms: the assured bucket is credited, not charged.
        b.charge(Instant(1_000_000), Bytes(1000), false);
        assert_eq!(b.green_from(), Instant(8_000_000));
        assert_eq!(b.not_red_from(), Instant(8_000_000));
    }

    #[test]
    fn credit_is_capped_and_debt_bounded() {
        let mut b = Bucket::new(Rate(8), Rate(8), Bytes(1), Bytes(1));
        // 1 B at 8 bit/s costs 1 s; 100 B cost 100 s: the debt stops just inside 60 s.
        b.charge(Instant::ZERO, Bytes(100), true);
        assert_eq!(b.mode(0), (Mode::CantSend, MBUFFER - 1));
        assert_eq!(b.credit(Instant::from_secs(3600)), MBUFFER);
        // As in Linux, an hour of idling credits only 60 s: the 1 s deep bucket, 60 s
        // minus 1 ns in debt, holds 1 ns afterwards, not its depth.
        b.charge(Instant::from_secs(3600), Bytes(0), true);
        assert_eq!(b.mode(0), (Mode::CanSend, 0));
        assert_eq!((b.tokens, b.ctokens), (1, 1));
        // Once out of debt, credit is capped at the depth: 1 s.
        b.charge(Instant::from_secs(7200), Bytes(0), true);
        assert_eq!((b.tokens, b.ctokens), (1_000_000_000, 1_000_000_000));
    }
}
