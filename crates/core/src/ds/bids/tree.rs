//! TREE: an unbalanced binary search tree keyed by tag, with pointers to its smallest
//! and largest nodes.
//!
//! The paper studies the plain tree on purpose (balanced trees behave like heaps, which
//! it evaluates): there is no rebalancing. Monotone bids skew it to the right.
//!
//! * Insertion descends from the root; its cost is the number of nodes visited, that is
//!   the depth of the new node (0 into an empty tree).
//! * `get_min` splices out the smallest node (it has no left child) and walks to the new
//!   smallest: to the removed node's right child and down its left spine, or up to its
//!   parent; each link followed costs 1. An overflow drop is the mirror image.
//!
//! Theory (Table 1): O(1) best, O(B) worst, O(log B) on uniformly random tags.

use super::arena::Arena;
use super::{BidQueue, Entry, Ops};

const NIL: u32 = u32::MAX;

#[derive(Debug)]
struct Node<V> {
    entry: Entry<V>,
    left: u32,
    right: u32,
    parent: u32,
}

/// TREE. See the [module docs](self).
#[derive(Debug)]
pub struct SearchTree<V> {
    nodes: Arena<Node<V>>,
    root: u32,
    min: u32,
    max: u32,
    len: usize,
    ops: Ops,
}

impl<V> SearchTree<V> {
    /// Makes `child` (possibly `NIL`) take `node`'s place under `node`'s parent.
    fn replace(&mut self, node: u32, child: u32) {
        let parent = self.nodes.get(node).parent;
        match parent {
            NIL => self.root = child,
            p => {
                let pn = self.nodes.get_mut(p);
                if pn.left == node {
                    pn.left = child;
                } else {
                    pn.right = child;
                }
            }
        }
        if child != NIL {
            self.nodes.get_mut(child).parent = parent;
        }
    }

    /// The leftmost node under `i` (not `NIL`) and the links walked to reach it.
    fn leftmost(&self, mut i: u32) -> (u32, u64) {
        let mut walked = 0;
        while self.nodes.get(i).left != NIL {
            i = self.nodes.get(i).left;
            walked += 1;
        }
        (i, walked)
    }

    /// The rightmost node under `i` (not `NIL`) and the links walked to reach it.
    fn rightmost(&self, mut i: u32) -> (u32, u64) {
        let mut walked = 0;
        while self.nodes.get(i).right != NIL {
            i = self.nodes.get(i).right;
            walked += 1;
        }
        (i, walked)
    }

    /// Removes node `i` (any node) and returns its entry. Updates the min and max
    /// pointers without counting.
    fn delete(&mut self, i: u32) -> Entry<V> {
        let (left, right) = {
            let n = self.nodes.get(i);
            (n.left, n.right)
        };
        if left == NIL {
            self.replace(i, right);
        } else if right == NIL {
            self.replace(i, left);
        } else {
            let (succ, _) = self.leftmost(right);
            if self.nodes.get(succ).parent != i {
                let succ_right = self.nodes.get(succ).right;
                self.replace(succ, succ_right);
                self.nodes.get_mut(succ).right = right;
                self.nodes.get_mut(right).parent = succ;
            }
            self.replace(i, succ);
            self.nodes.get_mut(succ).left = left;
            self.nodes.get_mut(left).parent = succ;
        }
        self.len -= 1;
        let entry = self.nodes.take(i).entry;
        if self.root == NIL {
            (self.min, self.max) = (NIL, NIL);
        } else {
            if self.min == i {
                self.min = self.leftmost(self.root).0;
            }
            if self.max == i {
                self.max = self.rightmost(self.root).0;
            }
        }
        entry
    }
}

impl<V> BidQueue<V> for SearchTree<V> {
    const NAME: &'static str = "TREE";

    fn new(_conversations: usize, packets: usize) -> Self {
        SearchTree {
            nodes: Arena::with_capacity(packets),
            root: NIL,
            min: NIL,
            max: NIL,
            len: 0,
            ops: Ops::default(),
        }
    }

    fn insert(&mut self, e: Entry<V>) {
        let tag = e.tag;
        let i = self.nodes.alloc(Node {
            entry: e,
            left: NIL,
            right: NIL,
            parent: NIL,
        });
        self.len += 1;
        if self.root == NIL {
            (self.root, self.min, self.max) = (i, i, i);
            return;
        }
        let mut at = self.root;
        loop {
            self.ops.insert += 1;
            let n = self.nodes.get(at);
            let go_left = tag < n.entry.tag;
            let next = if go_left { n.left } else { n.right };
            if next == NIL {
                let n = self.nodes.get_mut(at);
                if go_left {
                    n.left = i;
                } else {
                    n.right = i;
                }
                self.nodes.get_mut(i).parent = at;
                break;
            }
            at = next;
        }
        if tag < self.nodes.get(self.min).entry.tag {
            self.min = i;
        }
        if tag > self.nodes.get(self.max).entry.tag {
            self.max = i;
        }
    }

    fn pop_min(&mut self) -> Option<Entry<V>> {
        let m = self.min;
        if m == NIL {
            return None;
        }
        let (right, parent) = {
            let n = self.nodes.get(m);
            (n.right, n.parent)
        };
        self.replace(m, right);
        self.len -= 1;
        self.min = if right != NIL {
            let (at, walked) = self.leftmost(right);
            self.ops.get_min += 1 + walked;
            at
        } else {
            self.ops.get_min += u64::from(parent != NIL);
            parent
        };
        if self.min == NIL {
            self.max = NIL;
        }
        Some(self.nodes.take(m).entry)
    }

    fn pop_max(&mut self) -> Option<Entry<V>> {
        let m = self.max;
        if m == NIL {
            return None;
        }
        let (left, parent) = {
            let n = self.nodes.get(m);
            (n.left, n.parent)
        };
        self.replace(m, left);
        self.len -= 1;
        self.max = if left != NIL {
            let (at, walked) = self.rightmost(left);
            self.ops.drop += 1 + walked;
            at
        } else {
            self.ops.drop += u64::from(parent != NIL);
            parent
        };
        if self.max == NIL {
            self.min = NIL;
        }
        Some(self.nodes.take(m).entry)
    }

    fn pop_newest_of(&mut self, conv: u32) -> Option<Entry<V>> {
        // In-order predecessors from the largest node.
        let mut i = self.max;
        while i != NIL && self.nodes.get(i).entry.conv != conv {
            let n = self.nodes.get(i);
            i = if n.left != NIL {
                self.rightmost(n.left).0
            } else {
                let mut c = i;
                let mut p = n.parent;
                while p != NIL && self.nodes.get(p).left == c {
                    c = p;
                    p = self.nodes.get(p).parent;
                }
                p
            };
        }
        (i != NIL).then(|| self.delete(i))
    }

    fn len(&self) -> usize {
        self.len
    }

    fn ops(&self) -> Ops {
        self.ops
    }

    fn check(&self) -> Result<(), String> {
        if self.root == NIL {
            return if self.len == 0 && self.min == NIL && self.max == NIL {
                Ok(())
            } else {
                Err("empty tree with nodes or pointers".into())
            };
        }
        // Iterative in-order walk: strictly increasing tags, consistent parents.
        let mut stack = Vec::new();
        let (mut i, mut prev, mut n) = (self.root, None, 0usize);
        let (mut first, mut last) = (NIL, NIL);
        while i != NIL || !stack.is_empty() {
            while i != NIL {
                let node = self.nodes.get(i);
                for c in [node.left, node.right] {
                    if c != NIL && self.nodes.get(c).parent != i {
                        return Err(format!("node {c}: wrong parent"));
                    }
                }
                stack.push(i);
                i = node.left;
            }
            let at = stack.pop().expect("non-empty");
            let tag = self.nodes.get(at).entry.tag;
            if prev.is_some_and(|p| p >= tag) {
                return Err(format!("node {at} is out of order"));
            }
            if first == NIL {
                first = at;
            }
            (last, prev, n) = (at, Some(tag), n + 1);
            i = self.nodes.get(at).right;
        }
        if (first, last, n) != (self.min, self.max, self.len) {
            return Err(format!(
                "min/max/len {}/{}/{}, walk found {first}/{last}/{n}",
                self.min, self.max, self.len
            ));
        }
        Ok(())
    }
}
