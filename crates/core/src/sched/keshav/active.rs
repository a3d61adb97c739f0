//! The round number's active conversations by key, smallest first ([`super::round`]):
//! each key a lower bound of the conversation's finish number `F^α`, re-keyed when the
//! round number reaches it. Two forms of the same set:
//!
//! * **counted**: the paper's binary heap ([`MinHeap`]), whose exchanges the cost study
//!   reports (`round_heap_exchanges`); Keshav FQ runs it when its buffer counts;
//! * **uncounted** ([`ActiveBuckets`], `buckets.rs`): the nearest conversations in a
//!   small exact heap, the others in buckets of round number, for the packet path
//!   (Keshav FQ's uncounted PERC, WFQ). In fair queueing with every conversation
//!   backlogged, the conversation re-keyed is the smallest and its new key among the
//!   largest: the heap sifts it down O(log k) levels, the buckets take it in O(1).
//!
//! Both give the round number a lower bound of every active finish number, equal to the
//! smallest when the round number is to act on it (a conversation leaves only when its
//! exact finish number is reached, [`super::round`]), so the round number and the
//! finish numbers are the same with either (`round.rs`'s tests run them side by side).
//! Ties between equal keys may be broken differently, which changes no result:
//! conversations leaving at the same round number leave at the same instant.

use super::buckets::ActiveBuckets;
use crate::ds::MinHeap;

/// The active conversations: counted heap or uncounted buckets. See the [module docs](self).
#[derive(Clone, Debug)]
pub(super) enum Active {
    Counted(MinHeap<u128>),
    Uncounted(ActiveBuckets),
}

impl Active {
    /// The conversation with the smallest key, and that key (`finish` gives each
    /// conversation's finish number, which the uncounted form reads).
    #[inline]
    pub(super) fn peek(&mut self, finish: impl Fn(u32) -> u128) -> Option<(u32, u128)> {
        match self {
            Active::Counted(h) => h.peek(),
            Active::Uncounted(t) => t.peek(finish),
        }
    }

    /// Adds conversation `c`, absent, with `key`.
    #[inline]
    pub(super) fn insert(&mut self, c: u32, key: u128) {
        match self {
            Active::Counted(h) => h.insert(c, key),
            Active::Uncounted(t) => t.insert(c, key),
        }
    }

    /// Re-keys conversation `c`, the one with the smallest key (as [`Active::peek`]
    /// returned it), to the larger `key`.
    #[inline]
    pub(super) fn rekey_min(&mut self, c: u32, key: u128) {
        match self {
            Active::Counted(h) => h.update(c, key),
            Active::Uncounted(t) => t.rekey_min(c, key),
        }
    }

    /// Removes the conversation with the smallest key (as [`Active::peek`] returned it).
    #[inline]
    pub(super) fn pop_min(&mut self) {
        match self {
            Active::Counted(h) => {
                h.pop();
            }
            Active::Uncounted(t) => t.pop_min(),
        }
    }

    /// Conversations present.
    pub(super) fn len(&self) -> usize {
        match self {
            Active::Counted(h) => h.len(),
            Active::Uncounted(t) => t.len(),
        }
    }

    /// The counted heap's exchanges so far; `None` for the uncounted tree.
    pub(super) fn exchanges(&self) -> Option<u64> {
        match self {
            Active::Counted(h) => Some(h.exchanges()),
            Active::Uncounted(_) => None,
        }
    }
}
