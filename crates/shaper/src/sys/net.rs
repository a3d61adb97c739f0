//! Interfaces: index, MTU, and the receive offloads (GRO, LRO) the shaper turns off on
//! its own interfaces.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// `ETHTOOL_GGRO` / `ETHTOOL_SGRO` (linux/ethtool.h).
const ETHTOOL_GGRO: u32 = 0x2b;
const ETHTOOL_SGRO: u32 = 0x2c;
/// `ETHTOOL_GFLAGS` / `ETHTOOL_SFLAGS` and `ETH_FLAG_LRO`.
const ETHTOOL_GFLAGS: u32 = 0x25;
const ETHTOOL_SFLAGS: u32 = 0x26;
const ETH_FLAG_LRO: u32 = 1 << 15;

/// `struct ethtool_value`.
#[repr(C)]
struct EthtoolValue {
    cmd: u32,
    data: u32,
}

/// The index of interface `name`.
pub(crate) fn ifindex(name: &str) -> io::Result<u32> {
    let c = CString::new(name).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: `c` is a NUL-terminated string that outlives the call.
    let i = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if i == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(i)
}

/// A datagram socket for interface ioctls.
fn ioctl_socket() -> io::Result<OwnedFd> {
    // SAFETY: plain system call with constant arguments.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by `socket` and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn ifreq(name: &str) -> io::Result<libc::ifreq> {
    // SAFETY: `ifreq` is plain old data; all-zero is valid.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    if name.len() >= req.ifr_name.len() {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    }
    for (d, s) in req.ifr_name.iter_mut().zip(name.bytes()) {
        *d = s as libc::c_char;
    }
    Ok(req)
}

/// The MTU of interface `name`.
pub(crate) fn mtu(name: &str) -> io::Result<u32> {
    let sock = ioctl_socket()?;
    let mut req = ifreq(name)?;
    // SAFETY: `req` is a valid `ifreq` naming the interface; SIOCGIFMTU writes the MTU
    // into its union.
    let r = unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFMTU, &mut req) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: SIOCGIFMTU filled the `ifru_mtu` member of the union.
    let mtu = unsafe { req.ifr_ifru.ifru_mtu };
    Ok(mtu.max(0) as u32)
}

fn ethtool(name: &str, cmd: u32, data: u32) -> io::Result<u32> {
    let sock = ioctl_socket()?;
    let mut req = ifreq(name)?;
    let mut v = EthtoolValue { cmd, data };
    req.ifr_ifru.ifru_data = (&mut v as *mut EthtoolValue).cast();
    // SAFETY: `req` names the interface and points at `v`, a live `ethtool_value` the
    // kernel reads and (for a get) writes during the call.
    let r = unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCETHTOOL, &mut req) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(v.data)
}

/// Whether GRO is on for `name`.
pub(crate) fn gro(name: &str) -> io::Result<bool> {
    ethtool(name, ETHTOOL_GGRO, 0).map(|d| d != 0)
}

/// Turns GRO on or off for `name`.
pub(crate) fn set_gro(name: &str, on: bool) -> io::Result<()> {
    ethtool(name, ETHTOOL_SGRO, u32::from(on)).map(|_| ())
}

/// Whether LRO is on for `name`.
pub(crate) fn lro(name: &str) -> io::Result<bool> {
    ethtool(name, ETHTOOL_GFLAGS, 0).map(|f| f & ETH_FLAG_LRO != 0)
}

/// Turns LRO off for `name` (other flags unchanged).
pub(crate) fn clear_lro(name: &str) -> io::Result<()> {
    let flags = ethtool(name, ETHTOOL_GFLAGS, 0)?;
    ethtool(name, ETHTOOL_SFLAGS, flags & !ETH_FLAG_LRO).map(|_| ())
}

/// Moves the calling thread into the network namespace `name` (as `ip netns` names
/// them, a file under `/var/run/netns`). Only this thread changes namespace.
pub(crate) fn enter_netns(name: &str) -> io::Result<()> {
    let path = std::path::Path::new("/var/run/netns").join(name);
    let file = std::fs::File::open(path)?;
    // SAFETY: `file` is an open namespace file descriptor that outlives the call;
    // CLONE_NEWNET only switches this thread's network namespace.
    let r = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
