//! Network namespaces joined by veth pairs, for tests and benchmarks with real traffic:
//!
//! ```text
//!   client ns            shaper ns                 server ns
//!   c0 10.200.0.1 ──── si        so ──────────── v0 10.200.0.2
//! ```
//!
//! The shaper (or the kernel's bridge, with or without a qdisc on `so`) joins `si` and
//! `so`. Every name starts with a prefix unique to the process and the testbed, the
//! addresses exist only inside the namespaces, and dropping the [`Testbed`] deletes the
//! namespaces (with their interfaces) and stops the processes it started, by PID — also
//! when a test fails.

use std::io;
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

/// The client's address.
pub const CLIENT_IP: &str = "10.200.0.1";
/// The server's address.
pub const SERVER_IP: &str = "10.200.0.2";
/// The shaper's interface towards the client.
pub const IN_IF: &str = "si";
/// The shaper's interface towards the server.
pub const OUT_IF: &str = "so";
/// The client's interface.
pub const CLIENT_IF: &str = "c0";

/// Why tests with real traffic cannot run here (not root, or a tool missing), if so.
pub fn skip_reason(tools: &[&str]) -> Option<String> {
    if crate::check_capabilities().is_err() {
        return Some("not root (needs CAP_NET_RAW and CAP_NET_ADMIN)".to_owned());
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for tool in ["ip"].iter().chain(tools) {
        let found = std::env::split_paths(&path)
            .chain(["/usr/sbin".into(), "/sbin".into()])
            .any(|d| d.join(tool).is_file());
        if !found {
            return Some(format!(
                "`{tool}` is not installed (apt-get install -y iperf3 iproute2)"
            ));
        }
    }
    None
}

/// A process started in a namespace; stopped (SIGKILL, by PID) when dropped.
#[derive(Debug)]
pub struct Proc {
    child: Option<Child>,
    pid: u32,
}

impl Proc {
    /// Its PID.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Sends `signal` (a name such as `INT`, `HUP`, `USR1`) to it, by PID.
    pub fn signal(&self, signal: &str) -> io::Result<()> {
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.pid().to_string())
            .status()?;
        if status.success() {
            Ok(())
        } else {
            Err(io::Error::other(format!(
                "kill -{signal} {} failed",
                self.pid()
            )))
        }
    }

    /// Waits for it to end and returns its output.
    pub fn wait(mut self) -> io::Result<Output> {
        match self.child.take() {
            Some(child) => child.wait_with_output(),
            None => Err(io::Error::other("already waited for")),
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// See the [module docs](self).
#[derive(Debug)]
pub struct Testbed {
    /// The client's namespace.
    pub client: String,
    /// The shaper's namespace.
    pub shaper: String,
    /// The server's namespace.
    pub server: String,
}

fn run(cmd: &mut Command) -> io::Result<Output> {
    let out = cmd.stdin(Stdio::null()).output()?;
    if !out.status.success() {
        return Err(io::Error::other(format!(
            "{cmd:?} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(out)
}

impl Testbed {
    /// Creates the three namespaces and two veth pairs, addresses and links up, IPv6
    /// off in the shaper's namespace (no stray neighbour discovery on its interfaces).
    pub fn new(tag: &str) -> io::Result<Testbed> {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let prefix = format!("ls{}-{n}-{tag}", std::process::id());
        let bed = Testbed {
            client: format!("{prefix}-c"),
            shaper: format!("{prefix}-s"),
            server: format!("{prefix}-v"),
        };
        for ns in [&bed.client, &bed.shaper, &bed.server] {
            run(Command::new("ip").args(["netns", "add", ns]))?;
        }
        let ip = |args: &[&str]| run(Command::new("ip").args(args));
        ip(&[
            "link",
            "add",
            CLIENT_IF,
            "netns",
            &bed.client,
            "type",
            "veth",
            "peer",
            "name",
            IN_IF,
            "netns",
            &bed.shaper,
        ])?;
        ip(&[
            "link",
            "add",
            OUT_IF,
            "netns",
            &bed.shaper,
            "type",
            "veth",
            "peer",
            "name",
            "v0",
            "netns",
            &bed.server,
        ])?;
        ip(&[
            "-n",
            &bed.client,
            "addr",
            "add",
            &format!("{CLIENT_IP}/24"),
            "dev",
            CLIENT_IF,
        ])?;
        ip(&[
            "-n",
            &bed.server,
            "addr",
            "add",
            &format!("{SERVER_IP}/24"),
            "dev",
            "v0",
        ])?;
        bed.exec(
            &bed.shaper,
            &["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"],
        )?;
        bed.exec(
            &bed.shaper,
            &["sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1"],
        )?;
        for (ns, ifs) in [
            (&bed.client, &["lo", CLIENT_IF][..]),
            (&bed.shaper, &["lo", IN_IF, OUT_IF][..]),
            (&bed.server, &["lo", "v0"][..]),
        ] {
            for i in ifs {
                ip(&["-n", ns, "link", "set", i, "up"])?;
            }
        }
        Ok(bed)
    }

    /// Runs `args` in namespace `ns` and waits; fails if it fails.
    pub fn exec(&self, ns: &str, args: &[&str]) -> io::Result<Output> {
        run(Command::new("ip").args(["netns", "exec", ns]).args(args))
    }

    /// Starts `args` in namespace `ns`, output captured.
    pub fn spawn(&self, ns: &str, args: &[&str]) -> io::Result<Proc> {
        let child = Command::new("ip")
            .args(["netns", "exec", ns])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        Ok(Proc {
            pid: child.id(),
            child: Some(child),
        })
    }

    /// Joins `si` and `so` with the kernel's bridge (kernel forwarding, the reference
    /// the shaper is compared with).
    pub fn kernel_bridge(&self) -> io::Result<()> {
        let s = &self.shaper;
        self.exec(s, &["ip", "link", "add", "br0", "type", "bridge"])?;
        self.exec(s, &["ip", "link", "set", IN_IF, "master", "br0"])?;
        self.exec(s, &["ip", "link", "set", OUT_IF, "master", "br0"])?;
        self.exec(s, &["ip", "link", "set", "br0", "up"])?;
        Ok(())
    }

    /// Removes the bridge (and any qdisc on `so`).
    pub fn remove_bridge(&self) -> io::Result<()> {
        let _ = self.exec(&self.shaper, &["tc", "qdisc", "del", "dev", OUT_IF, "root"]);
        self.exec(&self.shaper, &["ip", "link", "del", "br0"])?;
        Ok(())
    }

    /// Whether the kernel has qdisc `kind` (tried on `so`, then removed).
    pub fn kernel_has_qdisc(&self, kind: &str) -> bool {
        let ok = self
            .exec(
                &self.shaper,
                &[
                    "tc", "qdisc", "add", "dev", OUT_IF, "root", "handle", "1:", kind,
                ],
            )
            .is_ok();
        let _ = self.exec(&self.shaper, &["tc", "qdisc", "del", "dev", OUT_IF, "root"]);
        ok
    }

    /// Runs `f` on a thread that has entered namespace `ns` (sockets it opens live
    /// there).
    pub fn in_netns<T: Send>(ns: &str, f: impl FnOnce() -> T + Send) -> io::Result<T> {
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    crate::sys::net::enter_netns(ns)?;
                    Ok(f())
                })
                .join()
                .map_err(|_| io::Error::other("the thread in the namespace panicked"))?
        })
    }
}

/// Moves the calling thread into namespace `ns` (for a thread that will run a shaper
/// or a generator there).
pub fn enter_netns(ns: &str) -> io::Result<()> {
    crate::sys::net::enter_netns(ns)
}

impl Drop for Testbed {
    fn drop(&mut self) {
        for ns in [&self.client, &self.shaper, &self.server] {
            let _ = Command::new("ip").args(["netns", "del", ns]).output();
        }
    }
}

/// A raw packet socket that sends whole frames on one interface (traffic generators,
/// malformed-frame injection). Open it inside the namespace ([`Testbed::in_netns`]).
#[derive(Debug)]
pub struct RawSender(crate::sys::tx::TxSocket);

impl RawSender {
    /// A sender on interface `name`.
    pub fn open(name: &str) -> io::Result<RawSender> {
        let index = crate::sys::net::ifindex(name)?;
        crate::sys::tx::TxSocket::open(index).map(RawSender)
    }

    /// Sends `frames` (batched); returns how many the kernel took.
    pub fn send(&self, frames: &[&[u8]]) -> usize {
        self.0.send(frames).sent
    }
}

/// The machine's CPU time so far, all CPUs, from the first line of `/proc/stat`: how
/// much of it the hypervisor took (*steal*: a virtual CPU ready to run while the host
/// ran something else). A measurement of rates or latency taken while the hypervisor
/// took a large share says nothing about the program measured: the shaper's datapath,
/// a user-space thread that pays a system call per batch of frames, loses more to it
/// than the kernel's own forwarding does (`BENCHMARKS.md`, "Shaper": one TCP flow got
/// 21.6 and 29.2 of 50 Mbit/s while 22 % and 18 % of the CPU time was stolen, 47.8 and
/// 47.7 at 0.1 % and 0.5 %).
#[derive(Clone, Copy, Debug)]
pub struct CpuTime {
    /// Clock ticks stolen by the hypervisor.
    steal: u64,
    /// Clock ticks in all (user, nice, system, idle, iowait, irq, softirq, steal).
    total: u64,
}

impl CpuTime {
    /// Now, or `None` where `/proc/stat` cannot be read or has no steal field.
    pub fn now() -> Option<CpuTime> {
        CpuTime::parse(&std::fs::read_to_string("/proc/stat").ok()?)
    }

    /// The totals of `/proc/stat`'s text `stat`.
    fn parse(stat: &str) -> Option<CpuTime> {
        let ticks: Vec<u64> = stat
            .lines()
            .next()?
            .strip_prefix("cpu ")?
            .split_whitespace()
            .take(8)
            .map(|f| f.parse().ok())
            .collect::<Option<_>>()?;
        (ticks.len() == 8).then(|| CpuTime {
            steal: ticks[7],
            total: ticks.iter().sum(),
        })
    }

    /// The share of the CPU time since `earlier` that the hypervisor took, from 0 to 1
    /// (0 when no tick has passed).
    pub fn stolen_since(self, earlier: CpuTime) -> f64 {
        let total = self.total.saturating_sub(earlier.total);
        let steal = self.steal.saturating_sub(earlier.steal);
        if total == 0 {
            0.0
        } else {
            steal as f64 / total as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::CpuTime;

    /// The first line's eighth field is steal; the eight fields sum to the total.
    #[test]
    fn steal_share_from_two_readings_of_proc_stat() {
        let a = CpuTime::parse("cpu  100 0 50 800 10 0 5 35 0 0\ncpu0 1 2 3\n").unwrap();
        let b = CpuTime::parse("cpu  160 0 60 1000 10 0 5 65 0 0\n").unwrap();
        assert_eq!((a.steal, a.total), (35, 1000));
        assert_eq!(b.stolen_since(a), 30.0 / 300.0);
        assert_eq!(a.stolen_since(a), 0.0);
        assert!(CpuTime::parse("cpu  1 2 3\n").is_none(), "no steal field");
        assert!(CpuTime::now().is_some(), "this is Linux");
    }
}
