//! Every call into the kernel, behind a small safe API. The only module of linkshare
//! with unsafe code; each `unsafe` block says why it is sound.
//!
//! * [`rx`]: a packet socket with a memory-mapped `TPACKET_V2` receive ring, bound to
//!   one interface.
//! * [`tx`]: a packet socket that sends batches with `sendmmsg` and bypasses the
//!   interface's qdisc.
//! * [`net`]: interface index and MTU, promiscuous mode, GRO and LRO.
//! * [`clock`]: the monotonic clock, an absolute-deadline timer (`timerfd`) and `poll`.
#![allow(unsafe_code)]

pub(crate) mod clock;
pub(crate) mod net;
pub(crate) mod rx;
pub(crate) mod tx;

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// `setsockopt(fd, level, name, &value)`.
fn setsockopt<T>(fd: &OwnedFd, level: libc::c_int, name: libc::c_int, value: &T) -> io::Result<()> {
    // SAFETY: `value` points to a live `T` of `size_of::<T>()` bytes for the duration of
    // the call; the kernel only reads it.
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (value as *const T).cast(),
            size_of::<T>() as libc::socklen_t,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// A new `AF_PACKET` raw socket that receives nothing until bound (protocol 0).
fn packet_socket() -> io::Result<OwnedFd> {
    // SAFETY: plain system call with constant arguments.
    let fd = unsafe {
        libc::socket(
            libc::AF_PACKET,
            libc::SOCK_RAW | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK,
            0,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by `socket` and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Binds a packet socket to `ifindex`, receiving `protocol` (network byte order; 0:
/// nothing).
fn bind(fd: &OwnedFd, ifindex: u32, protocol: u16) -> io::Result<()> {
    // SAFETY: `sockaddr_ll` is plain old data; all-zero is a valid value.
    let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_protocol = protocol;
    sll.sll_ifindex = ifindex as i32;
    // SAFETY: `sll` is a valid `sockaddr_ll` that outlives the call.
    let r = unsafe {
        libc::bind(
            fd.as_raw_fd(),
            (&sll as *const libc::sockaddr_ll).cast(),
            size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
