//! The receiving end: reassembly and acknowledgement policy.
//!
//! The receiver keeps `rcv_nxt`, the next byte it expects (everything below has been
//! delivered to the application, in order, once), and the byte ranges received above
//! it, as a sorted list of disjoint intervals (no per-packet allocation once the list
//! has reached its largest length). Every acknowledgement is cumulative: it carries
//! `rcv_nxt`. There is no SACK.
//!
//! When to acknowledge (RFC 5681 §4.2):
//!
//! * without delayed acknowledgements, every data segment is acknowledged at once (as
//!   ns-2's `TCPSink`);
//! * with them, an in-order segment is acknowledged at once when at least two full
//!   segments (`2·MSS` payload bytes) have arrived in order since the last
//!   acknowledgement, otherwise within the configured delay;
//! * a segment above `rcv_nxt` (out of order), one that fills all or part of a gap, and
//!   one entirely below `rcv_nxt` (a duplicate) are acknowledged at once.

use linkshare_core::units::Duration;

/// What the receiver wants after a segment arrived.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AckPolicy {
    /// Send an acknowledgement now.
    Now,
    /// Send one within the delayed-acknowledgement delay unless another is sent first.
    Delay(Duration),
}

/// The outcome of one arriving data segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Arrival {
    /// Bytes newly delivered in order to the application (the advance of `rcv_nxt`).
    pub(crate) delivered: u64,
    /// When to acknowledge.
    pub(crate) ack: AckPolicy,
}

/// The receiving end of one connection. See the [module docs](self).
#[derive(Clone, Debug)]
pub(crate) struct Receiver {
    rcv_nxt: u64,
    /// Received ranges `[start, end)` above `rcv_nxt`, sorted, disjoint, not touching.
    above: Vec<(u64, u64)>,
    /// In-order bytes received since the last acknowledgement.
    unacked: u64,
    mss: u64,
    delayed_ack: Option<Duration>,
}

impl Receiver {
    /// A receiver expecting byte 0, for segments of at most `mss` payload bytes.
    pub(crate) fn new(mss: u32, delayed_ack: Option<Duration>) -> Receiver {
        Receiver {
            rcv_nxt: 0,
            above: Vec::with_capacity(8),
            unacked: 0,
            mss: u64::from(mss),
            delayed_ack,
        }
    }

    /// The cumulative acknowledgement number: the next byte expected.
    pub(crate) fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    /// A segment carrying bytes `[seq, seq + len)` arrived (`len > 0`).
    pub(crate) fn on_segment(&mut self, seq: u64, len: u64) -> Arrival {
        let end = seq + len;
        if end <= self.rcv_nxt {
            return Arrival {
                delivered: 0,
                ack: AckPolicy::Now,
            };
        }
        if seq > self.rcv_nxt {
            self.insert(seq, end);
            return Arrival {
                delivered: 0,
                ack: AckPolicy::Now,
            };
        }
        let had_gap = !self.above.is_empty();
        let before = self.rcv_nxt;
        self.rcv_nxt = end;
        let merged = self
            .above
            .iter()
            .take_while(|&&(s, _)| s <= self.rcv_nxt)
            .count();
        if merged > 0 {
            self.rcv_nxt = self.rcv_nxt.max(self.above[merged - 1].1);
            self.above.drain(..merged);
        }
        let delivered = self.rcv_nxt - before;
        self.unacked += delivered;
        let ack = match self.delayed_ack {
            Some(delay) if !had_gap && self.unacked < 2 * self.mss => AckPolicy::Delay(delay),
            _ => AckPolicy::Now,
        };
        Arrival { delivered, ack }
    }

    /// An acknowledgement of `rcv_nxt` is being sent.
    pub(crate) fn acknowledged(&mut self) {
        self.unacked = 0;
    }

    /// Inserts `[start, end)` (above `rcv_nxt`) into the interval list, merging.
    fn insert(&mut self, start: u64, end: u64) {
        // First interval that ends at or after `start` (could touch or overlap).
        let i = self.above.partition_point(|&(_, e)| e < start);
        // Intervals from `i` that start at or before `end` overlap or touch.
        let j = i + self.above[i..]
            .iter()
            .take_while(|&&(s, _)| s <= end)
            .count();
        if i == j {
            self.above.insert(i, (start, end));
        } else {
            let merged = (start.min(self.above[i].0), end.max(self.above[j - 1].1));
            self.above[i] = merged;
            self.above.drain(i + 1..j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now(delivered: u64) -> Arrival {
        Arrival {
            delivered,
            ack: AckPolicy::Now,
        }
    }

    #[test]
    fn in_order_and_duplicates() {
        let mut r = Receiver::new(100, None);
        assert_eq!(r.on_segment(0, 100), now(100));
        assert_eq!(r.on_segment(100, 100), now(100));
        assert_eq!(r.on_segment(0, 100), now(0));
        assert_eq!(r.rcv_nxt(), 200);
    }

    #[test]
    fn reassembly_fills_gaps() {
        let mut r = Receiver::new(100, None);
        assert_eq!(r.on_segment(200, 100), now(0));
        assert_eq!(r.on_segment(400, 100), now(0));
        assert_eq!(r.on_segment(300, 100), now(0));
        assert_eq!(r.above, vec![(200, 500)]);
        assert_eq!(r.on_segment(600, 50), now(0));
        assert_eq!(r.above, vec![(200, 500), (600, 650)]);
        // Filling [0, 200) delivers up to 500.
        assert_eq!(r.on_segment(0, 100), now(100));
        assert_eq!(r.on_segment(100, 100), now(400));
        assert_eq!(r.rcv_nxt(), 500);
        assert_eq!(r.above, vec![(600, 650)]);
        // A segment overlapping what is already there.
        assert_eq!(r.on_segment(450, 200), now(150));
        assert!(r.above.is_empty());
    }

    #[test]
    fn insert_merges_overlaps() {
        let mut r = Receiver::new(100, None);
        for (s, e) in [(500, 600), (100, 200), (300, 400), (150, 350)] {
            r.insert(s, e);
        }
        assert_eq!(r.above, vec![(100, 400), (500, 600)]);
        r.insert(50, 700);
        assert_eq!(r.above, vec![(50, 700)]);
    }

    #[test]
    fn delayed_ack_every_second_full_segment() {
        let d = Duration::from_millis(100);
        let mut r = Receiver::new(100, Some(d));
        assert_eq!(r.on_segment(0, 100).ack, AckPolicy::Delay(d));
        assert_eq!(r.on_segment(100, 100).ack, AckPolicy::Now);
        r.acknowledged();
        assert_eq!(r.on_segment(200, 100).ack, AckPolicy::Delay(d));
        // Out of order, then the gap filler: both immediate.
        assert_eq!(r.on_segment(400, 100).ack, AckPolicy::Now);
        r.acknowledged();
        assert_eq!(r.on_segment(300, 100), now(200));
    }
}
