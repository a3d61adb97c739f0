//! A packet socket that sends frames in batches with `sendmmsg`, bypassing the
//! interface's qdisc (`PACKET_QDISC_BYPASS`: the frames were scheduled already).
//!
//! Why not a memory-mapped transmit ring: its frames reach the driver as page
//! fragments of the ring, released when the kernel frees (or orphans) the packet, and
//! a veth peer in another namespace orphans it on the way; copying into the packet, as
//! `sendmmsg` does, costs the same one copy per frame as copying into the ring did.

use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, OwnedFd};

use super::{bind, packet_socket, setsockopt};

/// The most frames one `sendmmsg` call carries.
pub(crate) const BATCH: usize = 64;

/// See the [module docs](self).
#[derive(Debug)]
pub(crate) struct TxSocket {
    fd: OwnedFd,
}

/// The result of one flush.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Sent {
    /// Frames the kernel took.
    pub(crate) sent: usize,
    /// Frames it refused (counted as transmit errors).
    pub(crate) failed: usize,
    /// System calls made.
    pub(crate) calls: usize,
}

impl TxSocket {
    /// A socket sending on interface `ifindex`.
    pub(crate) fn open(ifindex: u32) -> io::Result<TxSocket> {
        let fd = packet_socket()?;
        setsockopt(&fd, libc::SOL_PACKET, libc::PACKET_QDISC_BYPASS, &1i32)?;
        let sndbuf: i32 = 4 << 20;
        if setsockopt(&fd, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, &sndbuf).is_err() {
            setsockopt(&fd, libc::SOL_SOCKET, libc::SO_SNDBUF, &sndbuf)?;
        }
        bind(&fd, ifindex, 0)?;
        Ok(TxSocket { fd })
    }

    /// Sends `frames` (at most [`BATCH`] per system call), retrying the rest after a
    /// partial send; a frame the kernel refuses is skipped and counted.
    pub(crate) fn send(&self, frames: &[&[u8]]) -> Sent {
        let mut out = Sent::default();
        let mut rest = frames;
        // Filled for the frames of each call only: clearing all BATCH headers (4 KiB)
        // for a call of one frame was a visible part of the datapath's time.
        let mut iov = [const { MaybeUninit::<libc::iovec>::uninit() }; BATCH];
        let mut msgs = [const { MaybeUninit::<libc::mmsghdr>::uninit() }; BATCH];
        while !rest.is_empty() {
            let n = rest.len().min(BATCH);
            for (i, f) in rest[..n].iter().enumerate() {
                let v = iov[i].write(libc::iovec {
                    iov_base: f.as_ptr().cast_mut().cast(),
                    iov_len: f.len(),
                });
                // SAFETY: `mmsghdr` is plain old data; all-zero is valid (no name, no
                // control data).
                let mut m: libc::mmsghdr = unsafe { std::mem::zeroed() };
                m.msg_hdr.msg_iov = v;
                m.msg_hdr.msg_iovlen = 1;
                msgs[i].write(m);
            }
            // SAFETY: the first `n` headers were written above and point at live
            // iovecs, which point at the caller's frames; the kernel reads only those
            // `n` during the call (and writes their `msg_len`).
            let r = unsafe {
                libc::sendmmsg(
                    self.fd.as_raw_fd(),
                    msgs.as_mut_ptr().cast::<libc::mmsghdr>(),
                    n as u32,
                    libc::MSG_DONTWAIT,
                )
            };
            out.calls += 1;
            if r <= 0 {
                // The first frame was refused (ENOBUFS, EMSGSIZE, ...): skip it.
                out.failed += 1;
                rest = &rest[1..];
            } else {
                out.sent += r as usize;
                rest = &rest[r as usize..];
            }
        }
        out
    }
}
