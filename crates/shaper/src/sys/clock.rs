//! The monotonic and real-time clocks, a timer on an absolute monotonic deadline, and `poll`.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

/// Nanoseconds of `CLOCK_MONOTONIC`.
pub(crate) fn monotonic_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// Nanoseconds of `CLOCK_REALTIME`, the clock of the receive ring's timestamps.
pub(crate) fn realtime_ns() -> u64 {
    clock_ns(libc::CLOCK_REALTIME)
}

fn clock_ns(clock: libc::clockid_t) -> u64 {
    // SAFETY: `timespec` is plain old data; all-zero is valid.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: `ts` is live and writable; both clocks always exist on Linux.
    unsafe {
        libc::clock_gettime(clock, &mut ts);
    }
    (ts.tv_sec as u64) * 1_000_000_000 + ts.tv_nsec as u64
}

/// A `timerfd` on `CLOCK_MONOTONIC`, armed on absolute deadlines.
#[derive(Debug)]
pub(crate) struct Timer {
    fd: OwnedFd,
    armed: Option<u64>,
}

impl Timer {
    pub(crate) fn new() -> io::Result<Timer> {
        // SAFETY: plain system call with constant arguments.
        let fd = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just returned by `timerfd_create` and is owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(Timer { fd, armed: None })
    }

    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        use std::os::fd::AsFd;
        self.fd.as_fd()
    }

    /// Arms the timer to fire at monotonic instant `at_ns` (0: disarm).
    pub(crate) fn arm(&mut self, at_ns: u64) -> io::Result<()> {
        let armed = (at_ns != 0).then_some(at_ns);
        if self.armed == armed {
            return Ok(());
        }
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: (at_ns / 1_000_000_000) as libc::time_t,
                tv_nsec: (at_ns % 1_000_000_000) as libc::c_long,
            },
        };
        // SAFETY: `spec` is a valid itimerspec that outlives the call; the old value is
        // not asked for.
        let r = unsafe {
            libc::timerfd_settime(
                self.fd.as_raw_fd(),
                libc::TFD_TIMER_ABSTIME,
                &spec,
                std::ptr::null_mut(),
            )
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        self.armed = armed;
        Ok(())
    }

    /// Clears a pending expiry (after `poll` said the timer fired).
    pub(crate) fn clear(&mut self) {
        let mut buf = [0u8; 8];
        // SAFETY: reads at most 8 bytes into `buf`; the fd is non-blocking.
        unsafe {
            libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len());
        }
        self.armed = None;
    }
}

/// Waits until one of `fds` is readable, or `timeout_ms` passes (-1: no limit).
/// Returns which are readable; an interrupted wait (a signal) returns all false.
pub(crate) fn poll_readable<const N: usize>(
    fds: [BorrowedFd<'_>; N],
    timeout_ms: i32,
) -> io::Result<[bool; N]> {
    let mut pfds = fds.map(|fd| libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    });
    // SAFETY: `pfds` is an array of N valid pollfd records, live during the call.
    let r = unsafe { libc::poll(pfds.as_mut_ptr(), N as libc::nfds_t, timeout_ms) };
    if r < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            return Ok([false; N]);
        }
        return Err(e);
    }
    Ok(pfds.map(|p| p.revents & (libc::POLLIN | libc::POLLERR) != 0))
}

/// Gives the calling thread the real-time policy `SCHED_FIFO` at `priority` (1–99), so
/// that it runs as soon as its timer fires even on a loaded machine.
pub(crate) fn set_realtime(priority: i32) -> io::Result<()> {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: `param` is a valid sched_param that outlives the call; pid 0 is the
    // calling thread.
    let r = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// CPU time the calling thread has used so far: (user, system) nanoseconds
/// (`getrusage(RUSAGE_THREAD)`; the kernel's accounting, in its tick or finer).
pub(crate) fn thread_cpu_ns() -> (u64, u64) {
    // SAFETY: `rusage` is plain old data; all-zero is valid.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is live and writable; RUSAGE_THREAD is valid for the calling thread.
    let r = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    if r < 0 {
        return (0, 0);
    }
    let ns = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
    (ns(ru.ru_utime), ns(ru.ru_stime))
}
