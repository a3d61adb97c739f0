//! The frame pool: every frame the shaper holds lives in one buffer allocated at start,
//! in fixed-size slots; a queued packet is a slot index ([`Frame`]). No allocation per
//! packet, and the memory held is bounded by the pool's size: when every slot is taken,
//! an arrival is dropped with [`linkshare_core::DropReason::NoBuffer`].

use linkshare_core::sched::Packet;
use linkshare_core::units::Instant;

/// A frame in the pool, as the scheduler queues it.
#[derive(Debug)]
pub(crate) struct Frame {
    /// Its slot.
    pub(crate) slot: u32,
    /// Its length in bytes from the Ethernet header (without FCS).
    pub(crate) len: u32,
    /// When it arrived (read from the receive ring).
    pub(crate) arrived: Instant,
}

impl Packet for Frame {
    #[inline]
    fn wire_len(&self) -> u32 {
        self.len
    }
}

/// See the [module docs](self).
#[derive(Debug)]
pub(crate) struct FramePool {
    buf: Box<[u8]>,
    slot_size: usize,
    free: Vec<u32>,
    /// The most slots ever in use at once.
    high_water: usize,
}

impl FramePool {
    /// A pool of `slots` slots of `slot_size` bytes.
    pub(crate) fn new(slots: usize, slot_size: usize) -> FramePool {
        FramePool {
            buf: vec![0; slots * slot_size].into_boxed_slice(),
            slot_size,
            free: (0..slots as u32).rev().collect(),
            high_water: 0,
        }
    }

    /// Slots in all.
    pub(crate) fn capacity(&self) -> usize {
        self.buf.len() / self.slot_size
    }

    /// Slots in use now.
    pub(crate) fn in_use(&self) -> usize {
        self.capacity() - self.free.len()
    }

    /// The most slots ever in use at once.
    pub(crate) fn high_water(&self) -> usize {
        self.high_water
    }

    /// Takes a free slot, if any.
    #[inline]
    pub(crate) fn alloc(&mut self) -> Option<u32> {
        let slot = self.free.pop()?;
        self.high_water = self.high_water.max(self.in_use());
        Some(slot)
    }

    /// Gives `slot` back.
    #[inline]
    pub(crate) fn free(&mut self, slot: u32) {
        debug_assert!(!self.free.contains(&slot), "slot {slot} freed twice");
        self.free.push(slot);
    }

    /// The whole slot, to write a frame into.
    #[inline]
    pub(crate) fn slot_mut(&mut self, slot: u32) -> &mut [u8] {
        let at = slot as usize * self.slot_size;
        &mut self.buf[at..at + self.slot_size]
    }

    /// The first `len` bytes of `slot`.
    #[inline]
    pub(crate) fn data(&self, slot: u32, len: u32) -> &[u8] {
        let at = slot as usize * self.slot_size;
        &self.buf[at..at + (len as usize).min(self.slot_size)]
    }
}
