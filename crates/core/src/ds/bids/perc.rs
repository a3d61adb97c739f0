//! PERC: one FIFO per conversation, and a double heap over the conversations that
//! have buffered packets — a min-heap keyed by the tag at the **head** of each FIFO and
//! a max-heap keyed by the tag at its **tail**.
//!
//! Bids grow within a conversation, so each FIFO is sorted, the smallest buffered tag
//! is some conversation's head and the largest some conversation's tail.
//!
//! * Insertion appends to the conversation's FIFO (no elementary operation). A
//!   conversation that had no packet enters both heaps (sift-up exchanges); otherwise its
//!   tail grew and it sifts up in the max-heap ("adds a packet to the end of the per
//!   channel queue and updates the max heap").
//! * `get_min` pops the head of the min-heap's root conversation, which then sifts down
//!   in the min-heap, or leaves both heaps if its FIFO emptied. An overflow drop pops the
//!   tail of the max-heap's root conversation, symmetrically. Every exchange counts 1.
//!
//! Theory (Table 1): O(log N) best, worst and average, N the conversations present.
//!
//! A tag smaller than its conversation's tail (which fair queueing never produces) is
//! placed in order by scanning the FIFO back from its tail, one counted link per entry
//! stepped over, so that the structure stays correct on any input.

use std::collections::VecDeque;

use super::{BidQueue, Entry, Ops, Tag};
use crate::ds::counted_heap::{MaxHeap, MinHeap};

/// A buffered packet without its conversation (the FIFO says it). The tag comes first
/// (`repr(C)`): removing a FIFO's head reads the head and then the next item's tag,
/// adjacent bytes that then span at most two cache lines.
#[derive(Debug)]
#[repr(C)]
pub(super) struct Item<V> {
    pub(super) tag: Tag,
    pub(super) size: u32,
    pub(super) value: V,
}

impl<V> Item<V> {
    /// The item of entry `e` (its conversation is the FIFO's).
    #[inline]
    pub(super) fn of(e: Entry<V>) -> Item<V> {
        Item {
            tag: e.tag,
            size: e.size,
            value: e.value,
        }
    }

    /// The entry of conversation `conv` this item holds.
    #[inline]
    pub(super) fn into_entry(self, conv: u32) -> Entry<V> {
        Entry {
            tag: self.tag,
            conv,
            size: self.size,
            value: self.value,
        }
    }
}

/// PERC. See the [module docs](self).
#[derive(Debug)]
pub struct PerConversation<V> {
    queues: Vec<VecDeque<Item<V>>>,
    heads: MinHeap<Tag>,
    tails: MaxHeap<Tag>,
    len: usize,
    ops: Ops,
}

impl<V> PerConversation<V> {
    fn exchanges(&self) -> u64 {
        self.heads.exchanges() + self.tails.exchanges()
    }

    /// Removes the head (`front`) or tail of conversation `c`, which has packets, and
    /// restores both heaps.
    #[inline]
    fn take(&mut self, c: u32, front: bool) -> Entry<V> {
        let q = &mut self.queues[c as usize];
        let item = if front { q.pop_front() } else { q.pop_back() };
        let item = item.expect("a conversation in the heaps has packets");
        self.len -= 1;
        if front {
            match q.front() {
                Some(next) => self.heads.sink(c, next.tag),
                None => {
                    self.heads.remove(c);
                    self.tails.remove(c);
                }
            }
        } else {
            match q.back() {
                Some(next) => self.tails.sink(c, next.tag),
                None => {
                    self.heads.remove(c);
                    self.tails.remove(c);
                }
            }
        }
        item.into_entry(c)
    }

    /// Conversations with buffered packets.
    pub fn backlogged(&self) -> usize {
        self.heads.len()
    }
}

impl<V> BidQueue<V> for PerConversation<V> {
    const NAME: &'static str = "PERC";

    fn new(conversations: usize, _packets: usize) -> Self {
        PerConversation {
            queues: (0..conversations).map(|_| VecDeque::new()).collect(),
            heads: MinHeap::with_items(conversations),
            tails: MaxHeap::with_items(conversations),
            len: 0,
            ops: Ops::default(),
        }
    }

    #[inline]
    fn insert(&mut self, e: Entry<V>) {
        let (c, tag) = (e.conv, e.tag);
        if c as usize >= self.queues.len() {
            self.queues.resize_with(c as usize + 1, VecDeque::new);
        }
        let before = self.exchanges();
        let q = &mut self.queues[c as usize];
        let item = Item::of(e);
        self.len += 1;
        // The tail's tag is read from the max-heap, which is small and hot, rather than
        // from the FIFO's last packet.
        match self.tails.key_of(c) {
            None => {
                q.push_back(item);
                self.heads.insert(c, tag);
                self.tails.insert(c, tag);
            }
            Some(tail) if tail < tag => {
                q.push_back(item);
                self.tails.rise(c, tag);
            }
            Some(_) => {
                let mut at = q.len();
                while at > 0 && q[at - 1].tag > tag {
                    at -= 1;
                    self.ops.insert += 1;
                }
                q.insert(at, item);
                if at == 0 {
                    self.heads.rise(c, tag);
                }
            }
        }
        self.ops.insert += self.exchanges() - before;
    }

    #[inline]
    fn pop_min(&mut self) -> Option<Entry<V>> {
        let (c, _) = self.heads.peek()?;
        let before = self.exchanges();
        let e = self.take(c, true);
        self.ops.get_min += self.exchanges() - before;
        Some(e)
    }

    fn pop_max(&mut self) -> Option<Entry<V>> {
        let (c, _) = self.tails.peek()?;
        let before = self.exchanges();
        let e = self.take(c, false);
        self.ops.drop += self.exchanges() - before;
        Some(e)
    }

    fn pop_newest_of(&mut self, conv: u32) -> Option<Entry<V>> {
        self.heads.contains(conv).then(|| self.take(conv, false))
    }

    fn len(&self) -> usize {
        self.len
    }

    fn ops(&self) -> Ops {
        self.ops
    }

    fn check(&self) -> Result<(), String> {
        self.heads.check()?;
        self.tails.check()?;
        let mut n = 0;
        for (c, q) in self.queues.iter().enumerate() {
            let c = c as u32;
            n += q.len();
            if q.iter().zip(q.iter().skip(1)).any(|(a, b)| a.tag >= b.tag) {
                return Err(format!("conversation {c}: FIFO out of order"));
            }
            let (head, tail) = (q.front().map(|i| i.tag), q.back().map(|i| i.tag));
            if self.heads.key_of(c) != head || self.tails.key_of(c) != tail {
                return Err(format!("conversation {c}: heap keys differ from its FIFO"));
            }
        }
        if n != self.len {
            return Err(format!("{n} packets in FIFOs, length {}", self.len));
        }
        Ok(())
    }
}
