//! Bid numbers (Keshav, §"The Fair Queueing Algorithm", Summary):
//! `B_i = P_i + max(F^α, R(t_i) − δ^α)`, with `F^α` the conversation's finish number
//! *before* this packet and `P_i` in round units at the conversation's weight.
//!
//! Consequences the tests check: with `δ = 0`, or for a packet of a conversation that
//! was active, the bid is the finish number (`F^α > R ≥ R − δ`); only a packet arriving
//! to an inactive conversation can bid lower, `B_i ≤ F_i`, by at most `δ` — the paper's
//! "additional promptness". Bids increase strictly within a conversation
//! (`B_{i+1} ≥ P_{i+1} + F_i > F_i ≥ B_i` for `P > 0`), so every conversation's buffered
//! packets are in bid order.

use super::round::Arrival;

/// The bid of the packet whose arrival did `a`, with offset `delta` (round units).
#[inline]
pub fn bid(a: &Arrival, delta: u128) -> u128 {
    match a.round {
        None => a.finish,
        Some(r) => {
            let size = a.finish - r;
            size.saturating_add(a.finish_before.max(r.saturating_sub(delta)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bid_is_the_finish_number_unless_an_inactive_conversation_has_an_offset() {
        let active = Arrival {
            finish_before: 500,
            finish: 600,
            round: None,
        };
        assert_eq!(bid(&active, 1_000), 600);
        let fresh = Arrival {
            finish_before: 0,
            finish: 1_100,
            round: Some(1_000),
        };
        assert_eq!(bid(&fresh, 0), 1_100);
        assert_eq!(bid(&fresh, 300), 800, "P + (R - δ)");
        assert_eq!(bid(&fresh, 5_000), 100, "R - δ saturates at 0");
        let recent = Arrival {
            finish_before: 900,
            finish: 1_100,
            round: Some(1_000),
        };
        assert_eq!(bid(&recent, 300), 1_000, "P + F^α when F^α > R - δ");
    }
}
