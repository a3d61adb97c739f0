//! LINK: an ordered doubly linked list, smallest tag at the head.
//!
//! Insertion scans **backwards from the tail** (the paper credits D. Presotto): bids
//! grow within a conversation, so most arrivals belong near the end. Its cost is the
//! number of links traversed, that is the number of buffered entries with a larger tag
//! than the new one (appending at the tail costs 0). `get_min` unlinks the head and an
//! overflow drop the tail, both at cost 0. Theory (the paper's Table 1): O(1) best, O(B)
//! worst and average.

use super::arena::Arena;
use super::{BidQueue, Entry, Ops};

const NIL: u32 = u32::MAX;

#[derive(Debug)]
struct Node<V> {
    entry: Entry<V>,
    prev: u32,
    next: u32,
}

/// LINK. See the [module docs](self).
#[derive(Debug)]
pub struct LinkedList<V> {
    nodes: Arena<Node<V>>,
    head: u32,
    tail: u32,
    len: usize,
    ops: Ops,
}

impl<V> LinkedList<V> {
    fn unlink(&mut self, i: u32) -> Entry<V> {
        let n = self.nodes.take(i);
        match n.prev {
            NIL => self.head = n.next,
            p => self.nodes.get_mut(p).next = n.next,
        }
        match n.next {
            NIL => self.tail = n.prev,
            s => self.nodes.get_mut(s).prev = n.prev,
        }
        self.len -= 1;
        n.entry
    }
}

impl<V> BidQueue<V> for LinkedList<V> {
    const NAME: &'static str = "LINK";

    fn new(_conversations: usize, packets: usize) -> Self {
        LinkedList {
            nodes: Arena::with_capacity(packets),
            head: NIL,
            tail: NIL,
            len: 0,
            ops: Ops::default(),
        }
    }

    fn insert(&mut self, e: Entry<V>) {
        let mut after = self.tail;
        while after != NIL && self.nodes.get(after).entry.tag > e.tag {
            after = self.nodes.get(after).prev;
            self.ops.insert += 1;
        }
        let next = match after {
            NIL => self.head,
            a => self.nodes.get(a).next,
        };
        let i = self.nodes.alloc(Node {
            entry: e,
            prev: after,
            next,
        });
        match after {
            NIL => self.head = i,
            a => self.nodes.get_mut(a).next = i,
        }
        match next {
            NIL => self.tail = i,
            n => self.nodes.get_mut(n).prev = i,
        }
        self.len += 1;
    }

    fn pop_min(&mut self) -> Option<Entry<V>> {
        (self.head != NIL).then(|| self.unlink(self.head))
    }

    fn pop_max(&mut self) -> Option<Entry<V>> {
        (self.tail != NIL).then(|| self.unlink(self.tail))
    }

    fn pop_newest_of(&mut self, conv: u32) -> Option<Entry<V>> {
        let mut i = self.tail;
        while i != NIL && self.nodes.get(i).entry.conv != conv {
            i = self.nodes.get(i).prev;
        }
        (i != NIL).then(|| self.unlink(i))
    }

    fn len(&self) -> usize {
        self.len
    }

    fn ops(&self) -> Ops {
        self.ops
    }

    fn check(&self) -> Result<(), String> {
        let (mut i, mut prev, mut n) = (self.head, NIL, 0);
        while i != NIL {
            let node = self.nodes.get(i);
            if node.prev != prev {
                return Err(format!(
                    "node {i}: back link {} instead of {prev}",
                    node.prev
                ));
            }
            if prev != NIL && self.nodes.get(prev).entry.tag >= node.entry.tag {
                return Err(format!("node {i} is out of order"));
            }
            (prev, i, n) = (i, node.next, n + 1);
        }
        if prev != self.tail || n != self.len {
            return Err(format!(
                "tail {} / {n} nodes, expected {prev} / {}",
                self.tail, self.len
            ));
        }
        Ok(())
    }
}
