//! Slots for the nodes of the linked structures, reused through a free list: no
//! allocation once the structure has reached its largest size.

/// Nodes addressed by `u32` indices.
#[derive(Debug)]
pub(crate) struct Arena<T> {
    slots: Vec<Option<T>>,
    free: Vec<u32>,
}

impl<T> Arena<T> {
    /// An empty arena with room for `n` nodes.
    pub(crate) fn with_capacity(n: usize) -> Self {
        Arena {
            slots: Vec::with_capacity(n),
            free: Vec::with_capacity(n),
        }
    }

    /// Stores `t` and returns its index.
    #[inline]
    pub(crate) fn alloc(&mut self, t: T) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = Some(t);
                i
            }
            None => {
                self.slots.push(Some(t));
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// Removes and returns node `i`.
    #[inline]
    pub(crate) fn take(&mut self, i: u32) -> T {
        let t = self.slots[i as usize].take().expect("a live node");
        self.free.push(i);
        t
    }

    /// Node `i`.
    #[inline]
    pub(crate) fn get(&self, i: u32) -> &T {
        self.slots[i as usize].as_ref().expect("a live node")
    }

    /// Node `i`, mutably.
    #[inline]
    pub(crate) fn get_mut(&mut self, i: u32) -> &mut T {
        self.slots[i as usize].as_mut().expect("a live node")
    }
}
