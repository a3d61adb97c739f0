//! Round-robin rings: intrusive circular doubly linked lists over a slice of items.
//!
//! A [`Ring`] threads through items of a slice (for example a discipline's per-class
//! state) that each embed a [`Link`]; items are named by their index. Keeping the links
//! inside the items, rather than in separate arrays, means that visiting a class and
//! passing the turn to the next one touch the same cache line, which matters once the
//! per-class state outgrows the caches (tens of thousands of classes; see
//! `benches/sched.rs`).
//!
//! A ring has a *head*, the item whose turn it is; [`Ring::rotate`] passes the turn to
//! the next item, [`Ring::push_back`] inserts an item just before the head (so it is
//! served last in the current cycle), and [`Ring::remove`] unlinks any item, the head
//! included. Every operation is O(1) and none allocates. An item is in at most one ring
//! at a time; the rings sharing a slice must be given that same slice.
//!
//! Used for the active lists of round-robin disciplines (DRR's active list, the
//! per-priority rings of strict priority, HLS's visiting order, walked with
//! [`Ring::next_after`]), where a class must be able to leave the list
//! from any position in O(1) (push-out calls [`crate::Scheduler::remove_newest`] on an
//! arbitrary class).

/// Marks an absent link (item not in any ring, or an empty ring's head).
const NONE: u32 = u32::MAX;

/// The links of one item: its neighbours in the ring it is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Link {
    /// Index of the successor, or `NONE` while the item is in no ring.
    next: u32,
    /// Index of the predecessor (meaningful only while linked).
    prev: u32,
}

impl Link {
    /// The links of an item in no ring.
    pub const UNLINKED: Link = Link {
        next: NONE,
        prev: NONE,
    };

    /// Whether the item is in a ring.
    #[inline]
    pub fn is_linked(&self) -> bool {
        self.next != NONE
    }
}

impl Default for Link {
    fn default() -> Self {
        Link::UNLINKED
    }
}

/// An item that embeds a [`Link`].
pub trait Linked {
    /// The item's links.
    fn link(&self) -> &Link;
    /// The item's links, mutably.
    fn link_mut(&mut self) -> &mut Link;
}

/// A bare link is an item of its own, for rings over items that carry no other state.
impl Linked for Link {
    #[inline]
    fn link(&self) -> &Link {
        self
    }
    #[inline]
    fn link_mut(&mut self) -> &mut Link {
        self
    }
}

/// A round-robin ring over items of a slice. See the [module docs](self).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ring {
    /// Index of the item whose turn it is, or `NONE` if the ring is empty.
    head: u32,
}

impl Default for Ring {
    fn default() -> Self {
        Ring::EMPTY
    }
}

impl Ring {
    /// A ring with no item.
    pub const EMPTY: Ring = Ring { head: NONE };

    /// The item whose turn it is, or `None` if the ring is empty.
    #[inline]
    pub fn head(&self) -> Option<u32> {
        (self.head != NONE).then_some(self.head)
    }

    /// Whether the ring holds no item.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.head == NONE
    }

    /// Inserts `items[item]`, which must be in no ring, at the back of the ring: just
    /// before the head, so it gets its turn after every item already in the ring. Into an
    /// empty ring, it becomes the head. `item` must be below `u32::MAX`.
    #[inline]
    pub fn push_back<T: Linked>(&mut self, items: &mut [T], item: u32) {
        debug_assert!(item != NONE, "Ring::push_back: item index {item} too large");
        debug_assert!(
            !items[item as usize].link().is_linked(),
            "Ring::push_back: {item} already linked"
        );
        let h = self.head;
        if h == NONE {
            *items[item as usize].link_mut() = Link {
                next: item,
                prev: item,
            };
            self.head = item;
        } else {
            let tail = items[h as usize].link().prev;
            *items[item as usize].link_mut() = Link {
                next: h,
                prev: tail,
            };
            items[tail as usize].link_mut().next = item;
            items[h as usize].link_mut().prev = item;
        }
    }

    /// Unlinks `items[item]`, which must be in this ring. If it was the head, the turn
    /// passes to its successor (or the ring becomes empty).
    #[inline]
    pub fn remove<T: Linked>(&mut self, items: &mut [T], item: u32) {
        let Link { next, prev } = *items[item as usize].link();
        debug_assert!(next != NONE, "Ring::remove: item {item} is not linked");
        if next == item {
            self.head = NONE;
        } else {
            items[prev as usize].link_mut().next = next;
            items[next as usize].link_mut().prev = prev;
            if self.head == item {
                self.head = next;
            }
        }
        *items[item as usize].link_mut() = Link::UNLINKED;
    }

    /// The item after `item` (which must be in this ring) in a walk from the head, `None`
    /// if `item` is the last one (just before the head).
    #[inline]
    pub fn next_after<T: Linked>(&self, items: &[T], item: u32) -> Option<u32> {
        let next = items[item as usize].link().next;
        debug_assert!(next != NONE, "Ring::next_after: item {item} is not linked");
        (next != self.head).then_some(next)
    }

    /// Passes the turn from the head to the next item (a no-op on an empty ring or a ring
    /// of one item).
    #[inline]
    pub fn rotate<T: Linked>(&mut self, items: &[T]) {
        if self.head != NONE {
            self.head = items[self.head as usize].link().next;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The items of `ring` from its head, following `next`; checks `prev` on the way.
    fn order(ring: &Ring, items: &[Link]) -> Vec<u32> {
        let mut out = Vec::new();
        let Some(h) = ring.head() else { return out };
        let mut cur = h;
        loop {
            out.push(cur);
            let next = items[cur as usize].next;
            assert_eq!(items[next as usize].prev, cur, "prev of {next}");
            cur = next;
            if cur == h {
                return out;
            }
        }
    }

    #[test]
    fn push_rotate_remove() {
        let mut items = [Link::UNLINKED; 8];
        let (mut a, mut b) = (Ring::EMPTY, Ring::EMPTY);
        assert!(a.is_empty());
        for i in [3, 1, 4] {
            a.push_back(&mut items, i);
        }
        b.push_back(&mut items, 5);
        assert_eq!(order(&a, &items), [3, 1, 4]);
        assert_eq!(order(&b, &items), [5]);
        assert_eq!(a.next_after(&items, 3), Some(1));
        assert_eq!(a.next_after(&items, 4), None);
        a.rotate(&items);
        assert_eq!(order(&a, &items), [1, 4, 3]);
        assert_eq!(a.next_after(&items, 4), Some(3));
        assert_eq!(a.next_after(&items, 3), None);
        // A new item goes just before the head: last in the current cycle.
        a.push_back(&mut items, 7);
        assert_eq!(order(&a, &items), [1, 4, 3, 7]);
        // Removing from the middle keeps the turn; removing the head passes it on.
        a.remove(&mut items, 3);
        assert_eq!(order(&a, &items), [1, 4, 7]);
        a.remove(&mut items, 1);
        assert_eq!(order(&a, &items), [4, 7]);
        assert!(!items[1].is_linked() && items[4].is_linked());
        a.remove(&mut items, 4);
        a.remove(&mut items, 7);
        assert!(a.is_empty());
        assert_eq!(a.head(), None);
        a.rotate(&items);
        b.rotate(&items);
        assert_eq!(order(&b, &items), [5]);
        b.push_back(&mut items, 2);
        b.push_back(&mut items, 6);
        assert_eq!(order(&b, &items), [5, 2, 6]);
    }
}
