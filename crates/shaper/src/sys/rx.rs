//! A packet socket with a memory-mapped `TPACKET_V2` receive ring.
//!
//! The kernel writes each received frame into the next slot of the ring and hands the
//! slot to user space by setting its status to `TP_STATUS_USER`; we read it in place
//! and give it back (`TP_STATUS_KERNEL`). No system call per frame: `poll` only when
//! the ring is empty. A frame longer than a slot (a GRO or TSO super-frame) is cut in
//! the ring, and because `PACKET_COPY_THRESH` is set the kernel also queues the whole
//! frame on the socket, where [`RxRing::next`] reads it with `recv` (status
//! `TP_STATUS_COPY`).

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};

use super::{bind, packet_socket, setsockopt};

/// What the ring says about one received frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RxInfo {
    /// The frame's length on the wire, as received (the data may be shorter when cut).
    pub(crate) len: usize,
    /// The transport checksum is partial (`CHECKSUM_PARTIAL`: a local sender left it to
    /// offload).
    pub(crate) csum_partial: bool,
    /// A VLAN tag the kernel took out of the frame: (TPID, TCI).
    pub(crate) vlan: Option<(u16, u16)>,
}

/// A received frame, borrowed from the ring (or from the copy buffer).
#[derive(Debug)]
pub(crate) struct RxFrame<'a> {
    /// The frame's bytes from its Ethernet header (without a tag the kernel took out).
    pub(crate) data: &'a [u8],
    /// What the ring says about it.
    pub(crate) info: RxInfo,
}

/// See the [module docs](self).
#[derive(Debug)]
pub(crate) struct RxRing {
    fd: OwnedFd,
    map: NonNull<u8>,
    map_len: usize,
    frame_size: usize,
    frames_per_block: usize,
    block_size: usize,
    frames: usize,
    next: usize,
    /// The slot handed out by the last `next`, given back on the following call.
    held: Option<usize>,
    /// Where whole frames queued by `PACKET_COPY_THRESH` are read.
    copy: Box<[u8]>,
}

// SAFETY: the ring is a private mapping owned by this value; nothing else refers to it.
unsafe impl Send for RxRing {}

/// The largest frame read through the copy path (64 KiB of GSO payload plus headers).
const COPY_BUFFER: usize = 65536 + 256;

impl RxRing {
    /// Opens a ring of `frames` slots of `frame_size` bytes (a power of two of at least
    /// 2048) on interface `ifindex`, in promiscuous mode, not seeing the frames this
    /// host sends on it.
    pub(crate) fn open(ifindex: u32, frames: usize, frame_size: usize) -> io::Result<RxRing> {
        let fd = packet_socket()?;
        setsockopt(
            &fd,
            libc::SOL_PACKET,
            libc::PACKET_VERSION,
            &(libc::tpacket_versions::TPACKET_V2 as libc::c_int),
        )?;
        let block_size = (frame_size * 16).max(1 << 16);
        let frames_per_block = block_size / frame_size;
        let blocks = frames.div_ceil(frames_per_block).max(1);
        let frames = blocks * frames_per_block;
        let req = libc::tpacket_req {
            tp_block_size: block_size as u32,
            tp_block_nr: blocks as u32,
            tp_frame_size: frame_size as u32,
            tp_frame_nr: frames as u32,
        };
        setsockopt(&fd, libc::SOL_PACKET, libc::PACKET_RX_RING, &req)?;
        setsockopt(&fd, libc::SOL_PACKET, libc::PACKET_COPY_THRESH, &1i32)?;
        setsockopt(&fd, libc::SOL_PACKET, libc::PACKET_IGNORE_OUTGOING, &1i32)?;
        // Room for a few super-frames queued by the copy path.
        let rcvbuf: i32 = 8 << 20;
        if setsockopt(&fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, &rcvbuf).is_err() {
            setsockopt(&fd, libc::SOL_SOCKET, libc::SO_RCVBUF, &rcvbuf)?;
        }
        let map_len = block_size * blocks;
        // SAFETY: maps the ring the kernel just allocated for this socket, `map_len`
        // bytes as it was told; the result is checked.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_LOCKED | libc::MAP_POPULATE,
                fd.as_raw_fd(),
                0,
            )
        };
        let map = if map == libc::MAP_FAILED {
            // Without the right to lock memory, map it unlocked.
            // SAFETY: as above, without MAP_LOCKED.
            let m = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    map_len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_SHARED | libc::MAP_POPULATE,
                    fd.as_raw_fd(),
                    0,
                )
            };
            if m == libc::MAP_FAILED {
                return Err(io::Error::last_os_error());
            }
            m
        } else {
            map
        };
        let map =
            NonNull::new(map.cast::<u8>()).ok_or_else(|| io::Error::other("mmap returned null"))?;
        let mreq = libc::packet_mreq {
            mr_ifindex: ifindex as i32,
            mr_type: libc::PACKET_MR_PROMISC as u16,
            mr_alen: 0,
            mr_address: [0; 8],
        };
        let ring = RxRing {
            fd,
            map,
            map_len,
            frame_size,
            frames_per_block,
            block_size,
            frames,
            next: 0,
            held: None,
            copy: vec![0; COPY_BUFFER].into_boxed_slice(),
        };
        setsockopt(
            &ring.fd,
            libc::SOL_PACKET,
            libc::PACKET_ADD_MEMBERSHIP,
            &mreq,
        )?;
        bind(&ring.fd, ifindex, (libc::ETH_P_ALL as u16).to_be())?;
        Ok(ring)
    }

    /// The socket, for `poll`.
    pub(crate) fn fd(&self) -> &OwnedFd {
        &self.fd
    }

    fn header(&self, slot: usize) -> *mut libc::tpacket2_hdr {
        let offset = (slot / self.frames_per_block) * self.block_size
            + (slot % self.frames_per_block) * self.frame_size;
        // SAFETY: `slot < frames`, so `offset + frame_size <= map_len`: the pointer
        // stays inside the mapping.
        unsafe { self.map.as_ptr().add(offset).cast() }
    }

    fn status(&self, slot: usize) -> &AtomicU32 {
        // SAFETY: `tp_status` is the first field of the slot's header, a 4-byte aligned
        // u32 inside the mapping, which lives as long as `self`; the kernel writes it
        // concurrently, which is why it is read and written atomically.
        unsafe { AtomicU32::from_ptr(self.header(slot).cast::<u32>()) }
    }

    /// Gives the slot handed out last back to the kernel.
    fn release(&mut self) {
        if let Some(slot) = self.held.take() {
            self.status(slot)
                .store(libc::TP_STATUS_KERNEL, Ordering::Release);
        }
    }

    /// When the kernel received the next frame waiting in the ring, if one is:
    /// `CLOCK_REALTIME` nanoseconds, the frame's software timestamp or, without one,
    /// the time the kernel wrote it into the ring (`tpacket_rcv`).
    pub(crate) fn waiting_since(&self) -> Option<u64> {
        let status = self.status(self.next).load(Ordering::Acquire);
        if status & libc::TP_STATUS_USER == 0 {
            return None;
        }
        // SAFETY: as in `next`: the slot is ours while its status says TP_STATUS_USER
        // (read with Acquire above), and its header lies inside the mapping.
        let h = unsafe { *self.header(self.next) };
        Some(u64::from(h.tp_sec) * 1_000_000_000 + u64::from(h.tp_nsec))
    }

    /// The next received frame, if one is waiting. The frame borrows the ring: its slot
    /// goes back to the kernel on the next call. `Err` only for a failed `recv` of a
    /// copied frame (the slot is released and the frame lost).
    pub(crate) fn next(&mut self) -> Option<io::Result<RxFrame<'_>>> {
        self.release();
        let slot = self.next;
        let status = self.status(slot).load(Ordering::Acquire);
        if status & libc::TP_STATUS_USER == 0 {
            return None;
        }
        self.next = (slot + 1) % self.frames;
        self.held = Some(slot);
        // SAFETY: the kernel handed the slot to us (TP_STATUS_USER, read with Acquire
        // after the kernel's release of the header and data) and will not touch it
        // until we store TP_STATUS_KERNEL; the header is inside the mapping.
        let h = unsafe { *self.header(slot) };
        let vlan = (status & libc::TP_STATUS_VLAN_VALID != 0).then(|| {
            let tpid = if status & libc::TP_STATUS_VLAN_TPID_VALID != 0 {
                h.tp_vlan_tpid
            } else {
                0x8100
            };
            (tpid, h.tp_vlan_tci)
        });
        let info = RxInfo {
            len: h.tp_len as usize,
            csum_partial: status & libc::TP_STATUS_CSUMNOTREADY != 0,
            vlan,
        };
        if status & libc::TP_STATUS_COPY != 0 {
            // SAFETY: `copy` is a live buffer of `copy.len()` bytes we own; the kernel
            // writes at most that many.
            let n = unsafe {
                libc::recv(
                    self.fd.as_raw_fd(),
                    self.copy.as_mut_ptr().cast(),
                    self.copy.len(),
                    libc::MSG_DONTWAIT,
                )
            };
            if n < 0 {
                return Some(Err(io::Error::last_os_error()));
            }
            let n = (n as usize).min(self.copy.len());
            return Some(Ok(RxFrame {
                data: &self.copy[..n],
                info: RxInfo {
                    len: n.max(info.len),
                    ..info
                },
            }));
        }
        let mac = usize::from(h.tp_mac);
        let snap = h.tp_snaplen as usize;
        if mac + snap > self.frame_size {
            // A header that points outside its slot: never trust it.
            return Some(Ok(RxFrame { data: &[], info }));
        }
        // SAFETY: `mac <= frame_size` (checked above), so the pointer stays inside this
        // slot of the mapping.
        let start = unsafe { self.header(slot).cast::<u8>().add(mac) };
        // SAFETY: `mac + snap <= frame_size`, so the bytes lie inside this slot, which
        // the kernel handed to us; they stay valid and unmodified while the frame
        // borrows `self` (the slot is released on the next call only).
        let data = unsafe { std::slice::from_raw_parts(start, snap) };
        Some(Ok(RxFrame { data, info }))
    }

    /// Frames the kernel dropped because the ring was full, since the last call
    /// (`PACKET_STATISTICS`, which resets on read).
    pub(crate) fn take_drops(&self) -> u64 {
        // SAFETY: `tpacket_stats` is plain old data; all-zero is valid.
        let mut stats: libc::tpacket_stats = unsafe { std::mem::zeroed() };
        let mut len = size_of::<libc::tpacket_stats>() as libc::socklen_t;
        // SAFETY: `stats` and `len` are live and sized as the kernel expects.
        let r = unsafe {
            libc::getsockopt(
                self.fd.as_raw_fd(),
                libc::SOL_PACKET,
                libc::PACKET_STATISTICS,
                (&mut stats as *mut libc::tpacket_stats).cast(),
                &mut len,
            )
        };
        if r < 0 { 0 } else { u64::from(stats.tp_drops) }
    }
}

impl Drop for RxRing {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `open`; no frame borrows it any
        // more (frames borrow `self`).
        unsafe {
            libc::munmap(self.map.as_ptr().cast(), self.map_len);
        }
    }
}
