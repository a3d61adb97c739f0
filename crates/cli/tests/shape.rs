//! `linkshare shape` with real traffic: client and server namespaces joined through a
//! shaper namespace by veth pairs (`linkshare_shaper::testbed`), iperf3 from Debian as
//! the traffic source. These tests need root and iperf3: without them they print why
//! they skip and pass. They run one at a time (rates are measured), each in its own
//! namespaces, cleaned up on drop (also on failure).

mod common;

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use linkshare_classify::build::{FrameSpec, IpSpec, build, udp4};
use linkshare_classify::frame::proto;
use linkshare_shaper::testbed::{self, CLIENT_IF, CpuTime, Proc, RawSender, SERVER_IP, Testbed};
use serde_json::Value;

use common::TempDir;

/// One real-traffic test at a time: they measure rates on a shared machine.
static SERIAL: Mutex<()> = Mutex::new(());

/// The testbed, or `None` (after printing why) when these tests cannot run here.
fn bed(tag: &str, tools: &[&str]) -> Option<Testbed> {
    if let Some(why) = testbed::skip_reason(tools) {
        eprintln!("skipped: {why}");
        return None;
    }
    Some(Testbed::new(tag).expect("create the test namespaces"))
}

/// The testbed for a test that measures rates or latency: those need the optimised
/// binary (the core's debug assertions check whole queues on every operation), so
/// they skip in a debug build; `.ci/run` runs them with
/// `cargo test --release -p linkshare --test shape`.
fn timed_bed(tag: &str, tools: &[&str]) -> Option<Testbed> {
    if cfg!(debug_assertions) {
        eprintln!(
            "skipped: measures rates, needs a release build: cargo test --release -p linkshare --test shape"
        );
        return None;
    }
    bed(tag, tools)
}

/// A running `linkshare shape`, with its configuration and output directory.
struct Shaper {
    proc: Proc,
    config: PathBuf,
    out: PathBuf,
    metrics: u16,
}

const METRICS_PORT: u16 = 9464;

fn start(bed: &Testbed, dir: &TempDir, config: &str) -> Shaper {
    let path = dir.file("shaper.toml", config);
    let out = dir.path().join("out");
    let proc = bed
        .spawn(
            &bed.shaper,
            &[
                env!("CARGO_BIN_EXE_linkshare"),
                "shape",
                path.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
                "--metrics",
                &format!("127.0.0.1:{METRICS_PORT}"),
            ],
        )
        .expect("start linkshare shape");
    let s = Shaper {
        proc,
        config: path,
        out,
        metrics: METRICS_PORT,
    };
    let t0 = Instant::now();
    while scrape(bed, &s).is_none() {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "the shaper did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    s
}

/// The metrics text, if the shaper answers.
fn scrape(bed: &Testbed, s: &Shaper) -> Option<String> {
    let port = s.metrics;
    Testbed::in_netns(&bed.shaper, move || {
        let mut c = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
        c.write_all(b"GET /metrics HTTP/1.0\r\n\r\n").ok()?;
        let mut body = String::new();
        c.read_to_string(&mut body).ok()?;
        body.contains("linkshare_uptime_seconds").then_some(body)
    })
    .ok()
    .flatten()
}

/// The value of the metric line starting with `prefix` (`name{labels}`).
fn metric(text: &str, prefix: &str) -> f64 {
    text.lines()
        .find(|l| l.starts_with(prefix))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no metric {prefix} in:\n{text}"))
}

/// Asks for a summary (SIGUSR1) and returns it once written.
fn summary(s: &Shaper) -> Value {
    let path = s.out.join("summary.json");
    let before = std::fs::metadata(&path).and_then(|m| m.modified()).ok();
    s.proc.signal("USR1").expect("signal the shaper");
    let t0 = Instant::now();
    loop {
        let now = std::fs::metadata(&path).and_then(|m| m.modified()).ok();
        if now.is_some() && now != before {
            let text = std::fs::read_to_string(&path).expect("read summary.json");
            if let Ok(v) = serde_json::from_str::<Value>(&text) {
                return v;
            }
        }
        assert!(t0.elapsed() < Duration::from_secs(5), "no summary written");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Stops the shaper (SIGINT) and returns its final summary and output.
fn stop(s: Shaper) -> (Value, String) {
    s.proc.signal("INT").expect("signal the shaper");
    let out = s.proc.wait().expect("wait for the shaper");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "the shaper failed:\n{text}");
    let json = std::fs::read_to_string(s.out.join("summary.json")).expect("final summary");
    (
        serde_json::from_str(&json).expect("summary.json parses"),
        text,
    )
}

fn class<'a>(summary: &'a Value, name: &str) -> &'a Value {
    summary["classes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no class {name}"))
}

fn num(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// received = sent + dropped + queued, for every class of a summary.
fn assert_conserved(summary: &Value) {
    for c in summary["classes"].as_array().unwrap() {
        let (r, s, d, q) = (
            num(&c["packets_sent"]),
            num(&c["packets_delivered"]),
            num(&c["packets_dropped"]),
            num(&c["packets_queued_at_end"]),
        );
        assert_eq!(r, s + d + q, "class {}: {r} != {s} + {d} + {q}", c["name"]);
    }
}

/// Delivered bit/s of `name` between two summaries.
fn rate_between(a: &Value, b: &Value, name: &str) -> f64 {
    let bytes = num(&class(b, name)["bytes_delivered"]) - num(&class(a, name)["bytes_delivered"]);
    let dt = b["duration_s"].as_f64().unwrap() - a["duration_s"].as_f64().unwrap();
    bytes as f64 * 8.0 / dt
}

/// An iperf3 server on `port` in the server namespace, for one test.
fn iperf_server(bed: &Testbed, port: u16) -> Proc {
    let p = bed
        .spawn(
            &bed.server,
            &["iperf3", "-s", "-1", "-p", &port.to_string()],
        )
        .expect("start iperf3 -s");
    std::thread::sleep(Duration::from_millis(200));
    p
}

/// An iperf3 client in the client namespace.
fn iperf_client(bed: &Testbed, port: u16, extra: &[&str]) -> Proc {
    let port = port.to_string();
    let mut args = vec!["iperf3", "-c", SERVER_IP, "-p", &port];
    args.extend_from_slice(extra);
    bed.spawn(&bed.client, &args).expect("start iperf3 -c")
}

const ONE_CLASS_TCP: &str = r#"
[link]
rate = "50mbit"
scheduler = "htb"

[[class]]
name = "all"
rate = "50mbit"

[shaper]
in = "si"
out = "so"
realtime = true
"#;

#[test]
fn one_tcp_flow_fills_a_50mbit_link() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(bed) = timed_bed("tcp1", &["iperf3", "tc"]) else {
        return;
    };
    let dir = TempDir::new("shape-tcp1");
    let shaper = start(&bed, &dir, ONE_CLASS_TCP);
    let cpu = CpuTime::now();
    let bps = one_tcp_flow_goodput(&bed);
    let stolen = stolen_since(cpu);
    let (summary, _) = stop(shaper);
    assert_conserved(&summary);
    eprintln!(
        "one TCP flow through 50 Mbit/s: {:.2} Mbit/s goodput ({:.1} %)",
        bps / 1e6,
        bps / 50e6 * 100.0
    );
    let filled = bps >= 0.9 * 50e6;
    if !filled {
        // Short: judge only if the hypervisor left the CPUs alone and the kernel's own
        // HTB, on the same machine just after, does better (see `machine_kept_up`).
        let kernel = stolen.is_none().then(|| kernel_htb_tcp_goodput(&bed));
        if let Some(k) = kernel {
            eprintln!("the kernel's HTB just after: {:.2} Mbit/s goodput", k / 1e6);
        }
        let missed = kernel.filter(|&k| k < 0.9 * 50e6).map(|k| {
            format!(
                "the kernel's own HTB got one TCP flow only {:.2} of 50 Mbit/s just after",
                k / 1e6
            )
        });
        if !machine_kept_up(stolen.into_iter().chain(missed).collect()) {
            return;
        }
    }
    assert!(filled, "TCP reached only {:.2} Mbit/s of 50", bps / 1e6);
}

/// Runs `tc` with `args` (split at spaces) in the shaper's namespace.
fn tc(bed: &Testbed, args: &str) {
    let mut a = vec!["tc"];
    a.extend(args.split_whitespace());
    bed.exec(&bed.shaper, &a)
        .unwrap_or_else(|e| panic!("tc {args}: {e}"));
}

/// The kernel's HTB as the root qdisc of `dev` (handle `1:`, unclassified traffic to
/// `1:{default}`) with its root class `1:1` at `mbit` Mbit/s, ceiling the same.
fn kernel_htb_root(bed: &Testbed, dev: &str, default: u32, mbit: u32) {
    tc(
        bed,
        &format!("qdisc add dev {dev} root handle 1: htb default {default}"),
    );
    tc(
        bed,
        &format!("class add dev {dev} parent 1: classid 1:1 htb rate {mbit}mbit ceil {mbit}mbit"),
    );
}

/// Goodput in bit/s of one 8-second TCP flow from client to server (iperf3, the first
/// second omitted), through whatever forwards between them.
fn one_tcp_flow_goodput(bed: &Testbed) -> f64 {
    let _server = iperf_server(bed, 5201);
    let client = iperf_client(bed, 5201, &["-t", "8", "-O", "1", "-J"]);
    let out = client.wait().expect("iperf3 ends");
    let report: Value = serde_json::from_slice(&out.stdout).expect("iperf3 -J output");
    report["end"]["sum_received"]["bits_per_second"]
        .as_f64()
        .unwrap()
}

/// [`one_tcp_flow_goodput`] through the kernel's own HTB at 50 Mbit/s on `so` (one
/// class, the bridge forwarding), as [`ONE_CLASS_TCP`] configures the shaper.
fn kernel_htb_tcp_goodput(bed: &Testbed) -> f64 {
    bed.kernel_bridge().unwrap();
    kernel_htb_root(bed, "so", 1, 50);
    let bps = one_tcp_flow_goodput(bed);
    bed.remove_bridge().unwrap();
    bps
}

#[test]
fn four_tcp_flows_in_two_classes_split_1_to_3() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(bed) = timed_bed("tcp4", &["iperf3"]) else {
        return;
    };
    let dir = TempDir::new("shape-tcp4");
    let config = r#"
[link]
rate = "50mbit"
scheduler = "drr"

[[class]]
name = "light"
weight = 1
limit = 200

[[class]]
name = "heavy"
weight = 3
limit = 200

[shaper]
in = "si"
out = "so"
default = "light"
realtime = true

[[filter]]
class = "heavy"
protocol = "tcp"
dport = 5302
"#;
    let shaper = start(&bed, &dir, config);
    let _s1 = iperf_server(&bed, 5301);
    let _s2 = iperf_server(&bed, 5302);
    let c1 = iperf_client(&bed, 5301, &["-t", "10", "-P", "2"]);
    let c2 = iperf_client(&bed, 5302, &["-t", "10", "-P", "2"]);
    std::thread::sleep(Duration::from_secs(3));
    let cpu = CpuTime::now();
    let a = summary(&shaper);
    std::thread::sleep(Duration::from_secs(5));
    let b = summary(&shaper);
    let stolen = stolen_since(cpu);
    let (light, heavy) = (rate_between(&a, &b, "light"), rate_between(&a, &b, "heavy"));
    drop((c1, c2));
    let (end, _) = stop(shaper);
    assert_conserved(&end);
    let ratio = heavy / light;
    eprintln!(
        "four TCP flows, weights 1:3 over 50 Mbit/s: light {:.2}, heavy {:.2} Mbit/s, ratio {ratio:.3}",
        light / 1e6,
        heavy / 1e6
    );
    let split_ok = (ratio / 3.0 - 1.0).abs() <= 0.05;
    let filled = light + heavy >= 0.9 * 50e6;
    let within = split_ok && filled;
    if !within && !machine_kept_up(stolen.into_iter().collect()) {
        return;
    }
    assert!(split_ok, "ratio {ratio:.3}, not 3 ± 5 %");
    assert!(
        filled,
        "the link was not filled: {:.2} Mbit/s",
        (light + heavy) / 1e6
    );
}

/// Rates (Mbit/s) of A1, B2, C while C sends and after it stops.
#[derive(Debug, Clone, Copy)]
struct Exp2 {
    c_on: [f64; 3],
    c_off: [f64; 3],
    /// With real traffic, the larger share of the CPU time the hypervisor took over the
    /// two measured intervals (a burst of steal inside one interval is not diluted by
    /// the rest of the run); `None` when simulated or unknown.
    stolen: Option<f64>,
    /// Through the shaper, what arrived at each class while C idled (Mbit/s): the
    /// sources' offered rates as the shaper received them; `None` elsewhere.
    offered_off: Option<[f64; 3]>,
    /// Through the shaper, whether each class's queue was seen empty in each measured
    /// interval, while C sent and while it idled (its backlog scraped about every
    /// [`WATCH_EVERY`]); `None` elsewhere.
    emptied: Option<[[bool; 3]; 2]>,
}

const EXP2_CLASSES: [&str; 3] = ["A1", "B2", "C"];

/// Whether this machine carried the experiment in this run: it did not when the
/// hypervisor took more than [`STEAL_LIMIT`] of the CPU time while the shaper was
/// measured ([`stolen_since`]; in the two-phase experiments, in the busier of the two
/// measured intervals, [`Exp2::stolen`]), or when the kernel's own HTB, measured in the
/// same run, missed what it was given ([`kernel_missed`]); and for a borrowing split,
/// when a sender did not offer its share ([`short_source`]). Each of `reasons` says
/// which; with any, it prints them and returns `false`, and the caller does not judge
/// what depends on them.
///
/// A virtual machine whose CPUs are taken away for milliseconds at a time (the
/// hypervisor's other guests) loses HTB tokens in the kernel and in the shaper alike,
/// and the shaper's user-space datapath loses link time besides; then a comparison says
/// nothing about the shaper. Once CI's kernel HTB got 27.1 of 30 Mbit/s, and once, in a
/// clean clone's `.ci/run`, 92.2 of 100 with the third class idle; one TCP flow through
/// the shaper got 21.6 of 50 Mbit/s while 22 % of the CPU time was stolen. Once the
/// shaper got 88.9 of 100 Mbit/s with the third class idle, the kernel 99.6 just before,
/// while 4.0 % was stolen over the whole shaper run: steal comes in bursts, so the
/// two-phase experiments read it over each measured interval.
fn machine_kept_up(reasons: Vec<String>) -> bool {
    if !reasons.is_empty() {
        eprintln!(
            "inconclusive, not judged: {}; this machine did not carry the experiment",
            reasons.join("; ")
        );
    }
    reasons.is_empty()
}

/// Above this share of the CPU time taken by the hypervisor while the shaper is
/// measured, the measurement is not judged ([`machine_kept_up`]). Runs on the machine
/// of `BENCHMARKS.md` saw 0.0–1.0 % in its quiet phases and 16–28 % in its slow ones.
const STEAL_LIMIT: f64 = 0.05;

/// Why a measurement that began at `start` is not judged, if the hypervisor took more
/// than [`STEAL_LIMIT`] of the CPU time since (see [`CpuTime`]).
fn stolen_since(start: Option<CpuTime>) -> Option<String> {
    too_much_steal(CpuTime::now()?.stolen_since(start?))
}

/// Why a measurement is not judged, if the hypervisor took `share` of the CPU time
/// while it was made and that is above [`STEAL_LIMIT`].
fn too_much_steal(share: f64) -> Option<String> {
    eprintln!(
        "CPU time taken by the hypervisor meanwhile: {:.1} %",
        share * 100.0
    );
    (share > STEAL_LIMIT).then(|| {
        format!(
            "the hypervisor took {:.1} % of the CPU time while the shaper was measured",
            share * 100.0
        )
    })
}

/// Why a comparison with the kernel's own HTB is not judged, if it missed rates it was
/// given (`missed`, from [`missed_guarantees`] and [`missed_link`]).
fn kernel_missed(missed: Vec<String>) -> Option<String> {
    (!missed.is_empty()).then(|| {
        format!(
            "the kernel's own HTB missed its rates by more than 5 % in this run ({})",
            missed.join(", ")
        )
    })
}

/// The classes whose rate under the kernel's HTB, while the third class sends, is more
/// than 5 % from the simulated one.
fn missed_guarantees(kernel: Exp2, simulated: Exp2, classes: [&str; 3]) -> Vec<String> {
    (kernel.c_on.iter().zip(simulated.c_on).zip(classes))
        .filter(|((k, s), _)| (*k / s - 1.0).abs() > 0.05)
        .map(|((k, s), c)| format!("{c} {k:.2} of {s:.2} Mbit/s"))
        .collect()
}

/// While the third class idles, the other two classes' sum under the kernel's HTB (the
/// link), if it is more than 5 % from the simulated sum.
fn missed_link(kernel: Exp2, simulated: Exp2, classes: [&str; 3]) -> Option<String> {
    let (k, s) = (
        kernel.c_off[0] + kernel.c_off[1],
        simulated.c_off[0] + simulated.c_off[1],
    );
    ((k / s - 1.0).abs() > 0.05).then(|| {
        format!(
            "{} idle: {}+{} {k:.2} of {s:.2} Mbit/s",
            classes[2], classes[0], classes[1]
        )
    })
}

/// How often [`exp2_traffic`] calls its `watch` in the measured intervals: the shaper
/// publishes its counters every 100 ms.
const WATCH_EVERY: Duration = Duration::from_millis(100);

/// Sends the experiment's traffic for 10 s: A1, B2 and C at 60 Mbit/s each, C only in
/// the first 5 s; `sample(t)` is called at 1, 4.5, 6 and 9.5 s and returns per-class
/// (seconds, bytes) counters; `watch(i)` is called every [`WATCH_EVERY`] inside the
/// measured intervals, from 1 to 4.5 s (`i` = 0) and from 6 to 9.5 s (`i` = 1).
fn exp2_traffic(
    bed: &Testbed,
    mut sample: impl FnMut() -> [(f64, f64); 3],
    mut watch: impl FnMut(usize),
) -> Exp2 {
    let servers: Vec<Proc> = [5201, 5202, 5203]
        .iter()
        .map(|&p| iperf_server(bed, p))
        .collect();
    let udp = |port: u16, secs: &str| {
        iperf_client(bed, port, &["-u", "-b", "60M", "-l", "1000", "-t", secs])
    };
    let clients = [udp(5201, "12"), udp(5202, "12"), udp(5203, "5")];
    // The schedule counts from the instant every class has sent its first 100 kB (more
    // than iperf3's control connection, which its class also carries): a client that
    // starts late on a loaded machine would otherwise be measured as a class that does
    // not get its rate (seen once: 1:30 at 26 of 40 Mbit/s, its siblings above 30).
    let t0 = Instant::now();
    let flowing = |s: [(f64, f64); 3]| s.iter().all(|&(_, bytes)| bytes >= 100e3);
    while !flowing(sample()) && t0.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let t0 = Instant::now();
    let at = |s: f64| {
        let target = Duration::from_secs_f64(s);
        if let Some(wait) = target.checked_sub(t0.elapsed()) {
            std::thread::sleep(wait);
        }
    };
    let mut samples = Vec::new();
    let mut cpu = Vec::new();
    for s in [1.0, 4.5, 6.0, 9.5] {
        if samples.len() % 2 == 1 {
            while t0.elapsed() + WATCH_EVERY < Duration::from_secs_f64(s) {
                watch(samples.len() / 2);
                std::thread::sleep(WATCH_EVERY);
            }
        }
        at(s);
        samples.push(sample());
        cpu.push(CpuTime::now());
    }
    let stolen = |a: usize, b: usize| Some(cpu[b]?.stolen_since(cpu[a]?));
    drop(clients);
    drop(servers);
    let rate = |a: &[(f64, f64); 3], b: &[(f64, f64); 3]| {
        std::array::from_fn(|i| (b[i].1 - a[i].1) * 8.0 / (b[i].0 - a[i].0) / 1e6)
    };
    Exp2 {
        c_on: rate(&samples[0], &samples[1]),
        c_off: rate(&samples[2], &samples[3]),
        stolen: stolen(0, 1).zip(stolen(2, 3)).map(|(a, b)| a.max(b)),
        offered_off: None,
        emptied: None,
    }
}

fn exp2_shaper(bed: &Testbed, scheduler: &str) -> Exp2 {
    let dir = TempDir::new(&format!("shape-exp2-{scheduler}"));
    let text =
        std::fs::read_to_string(common::scenarios_dir().join("shaper/hls-exp2-100mbit.toml"))
            .unwrap();
    let text = text.replace(
        "scheduler = \"hls\"",
        &format!("scheduler = \"{scheduler}\""),
    );
    let shaper = start(bed, &dir, &text);
    let r = exp2_through(bed, &shaper, EXP2_CLASSES);
    let (end, _) = stop(shaper);
    assert_conserved(&end);
    r
}

/// [`exp2_traffic`] through the running `shaper`: the rates delivered to `classes`,
/// which of their queues were seen empty in each measured interval ([`Exp2::emptied`]),
/// and what arrived at them while the third idled ([`Exp2::offered_off`]) unless the
/// shaper's receive rings dropped frames at any time in the run (what arrived is then
/// not all that was offered).
fn exp2_through(bed: &Testbed, shaper: &Shaper, classes: [&str; 3]) -> Exp2 {
    // What had arrived at each class at every sample; the last two bound the interval.
    let mut arrived: Vec<[(f64, f64); 3]> = Vec::new();
    let mut emptied = [[false; 3]; 2];
    let mut r = exp2_traffic(
        bed,
        || {
            let s = summary(shaper);
            let t = s["duration_s"].as_f64().unwrap();
            arrived.push(classes.map(|c| (t, num(&class(&s, c)["bytes_sent"]) as f64)));
            classes.map(|c| (t, num(&class(&s, c)["bytes_delivered"]) as f64))
        },
        |interval| {
            let Some(text) = scrape(bed, shaper) else {
                return;
            };
            for (empty, c) in emptied[interval].iter_mut().zip(classes) {
                let backlog =
                    format!("linkshare_class_backlog_packets{{class=\"{c}\",state=\"active\"}}");
                *empty |= metric(&text, &backlog) == 0.0;
            }
        },
    );
    r.emptied = Some(emptied);
    let text = scrape(bed, shaper).expect("the shaper still answers");
    let ring_drops: f64 = text
        .lines()
        .filter(|l| l.starts_with("linkshare_datapath_ring_drops_total"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum();
    let [.., from, to] = arrived[..] else {
        unreachable!("exp2_traffic samples four times")
    };
    if ring_drops == 0.0 {
        r.offered_off = Some(std::array::from_fn(|i| {
            (to[i].1 - from[i].1) * 8.0 / (to[i].0 - from[i].0) / 1e6
        }));
    } else {
        eprintln!("the shaper's receive rings dropped {ring_drops} frames");
    }
    r
}

/// The premise check alone (no traffic): a borrower offered less than its simulated
/// share is named; one offered more, or a run whose arrivals are unknown, is not.
#[test]
fn a_borrower_offered_less_than_its_share_is_not_judged() {
    let run = |offered_off| Exp2 {
        offered_off,
        ..shaped_run([48.4, 51.6, 0.0])
    };
    let simulated = Exp2 {
        c_off: [41.27, 58.73, 0.0],
        stolen: None,
        ..run(None)
    };
    let short = short_source(run(Some([62.5, 51.6, 0.0])), simulated, EXP2_CLASSES);
    let short = short.expect("B2 offered 51.6 of its 58.73");
    assert!(
        short.contains("B2 51.60") && !short.contains("A1"),
        "{short}"
    );
    assert_eq!(
        short_source(run(Some([62.5, 62.5, 0.0])), simulated, EXP2_CLASSES),
        None
    );
    assert_eq!(short_source(run(None), simulated, EXP2_CLASSES), None);
}

/// A run through the shaper for the premise checks' tests: every class at its share
/// while the third sends, `c_off` after, no steal, nothing else known.
fn shaped_run(c_off: [f64; 3]) -> Exp2 {
    Exp2 {
        c_on: [30.0, 30.0, 40.0],
        c_off,
        stolen: Some(0.0),
        offered_off: None,
        emptied: None,
    }
}

/// The other premise check alone (no traffic): a class whose queue was seen empty in a
/// measured interval is named for that interval, the third class only while it sends;
/// a run whose queues were not watched is judged.
#[test]
fn a_class_whose_queue_ran_empty_is_not_judged() {
    let run = |emptied| Exp2 {
        emptied,
        ..shaped_run([41.27, 58.73, 0.0])
    };
    let none = [false; 3];
    let on = emptied_queue(run(Some([[true, false, false], none])), EXP2_CLASSES, 0);
    let on = on.expect("A1 emptied while C sent");
    assert!(on.contains("A1") && on.contains("every class sent"), "{on}");
    let c_idles = run(Some([none, [false, false, true]]));
    assert_eq!(emptied_queue(c_idles, EXP2_CLASSES, 1), None);
    let off = emptied_queue(run(Some([none, [false, true, false]])), EXP2_CLASSES, 1);
    assert!(off.is_some_and(|s| s.contains("B2") && !s.contains("A1")));
    assert_eq!(emptied_queue(run(None), EXP2_CLASSES, 0), None);
}

/// The classes sending in measured interval `interval` (0 while the third class sends,
/// 1 while it idles) whose queue was seen empty in it ([`Exp2::emptied`]); none if the
/// queues were not watched.
fn emptied_in(r: Exp2, classes: [&str; 3], interval: usize) -> Vec<&str> {
    let Some(emptied) = r.emptied else {
        return Vec::new();
    };
    let sending = if interval == 0 { 3 } else { 2 };
    (emptied[interval].iter().zip(classes).take(sending))
        .filter(|(empty, _)| **empty)
        .map(|(_, c)| c)
        .collect()
}

/// Prints, under a row of rates, the sending classes whose queue was seen empty in a
/// measured interval, if any ([`emptied_in`]).
fn eprint_emptied(r: Exp2, classes: [&str; 3]) {
    let seen: Vec<String> = (0..2)
        .flat_map(|i| {
            let when = ["sending", "idle"][i];
            (emptied_in(r, classes, i).into_iter())
                .map(move |c| format!("{c} ({} {when})", classes[2]))
        })
        .collect();
    if !seen.is_empty() {
        eprintln!("    queue seen empty: {}", seen.join(", "));
    }
}

/// Prints, under a row of rates, what arrived at the shaper while the third class idled
/// (if known): the row's `|` at column `bar`, `gap` spaces after it.
fn eprint_offered(r: Exp2, bar: usize, gap: usize) {
    const LABEL: &str = "    arriving at the shaper";
    if let Some([a, b, c]) = r.offered_off {
        let pad = bar - LABEL.len();
        eprintln!("{LABEL}{:pad$}|{:gap$}{a:>7.2} {b:>7.2} {c:>7.2}", "", "");
    }
}

/// Why the rates of measured interval `interval` (0 while the third class sends, 1
/// while it idles) are not judged: the queue of a class sending in it was seen empty
/// ([`Exp2::emptied`]). The experiment keeps every sending class backlogged, each
/// offered 60 Mbit/s and its queue at its limit, so a queue runs empty only when its
/// source paused for longer than the queue lasts (a sender the loaded machine stalled),
/// and its siblings then take the rest, whatever the scheduler.
fn emptied_queue(shaped: Exp2, classes: [&str; 3], interval: usize) -> Option<String> {
    let named = emptied_in(shaped, classes, interval);
    (!named.is_empty()).then(|| {
        format!(
            "the queue of {} ran empty while {}: its source paused",
            named.join(" and "),
            ["every class sent", "the third class idled"][interval]
        )
    })
}

/// Why a comparison of the borrowers' split while the third class idles is not judged:
/// a borrower's source, through the shaper, offered less than its simulated share (the
/// experiment has every class offer more than it can get, so that each stays
/// backlogged; a sender the loaded machine slowed down takes less, and its sibling
/// more, whatever the scheduler).
fn short_source(shaped: Exp2, simulated: Exp2, classes: [&str; 3]) -> Option<String> {
    let offered = shaped.offered_off?;
    let short: Vec<String> = (offered.iter().zip(simulated.c_off).zip(classes))
        .take(2)
        .filter(|((o, s), _)| **o < *s)
        .map(|((o, s), c)| format!("{c} {o:.2}, its simulated share {s:.2} Mbit/s"))
        .collect();
    (!short.is_empty()).then(|| {
        format!(
            "a borrower's source offered less than its simulated share ({})",
            short.join("; ")
        )
    })
}

/// The kernel's HTB on `so` with the same hierarchy (rates, ceils, quanta of the
/// scenario), u32 filters on the destination ports, the bridge forwarding.
fn exp2_kernel_htb(bed: &Testbed) -> Exp2 {
    bed.kernel_bridge().unwrap();
    kernel_htb_root(bed, "so", 12, 100);
    for (id, parent, rate) in [
        (10, 1, 30),
        (20, 1, 30),
        (30, 1, 40),
        (11, 10, 10),
        (12, 10, 20),
        (21, 20, 10),
        (22, 20, 20),
    ] {
        tc(
            bed,
            &format!(
                "class add dev so parent 1:{parent} classid 1:{id} htb rate {rate}mbit ceil 100mbit"
            ),
        );
    }
    for id in [30, 11, 12, 21, 22] {
        tc(
            bed,
            &format!("qdisc add dev so parent 1:{id} handle {id}: pfifo limit 1000"),
        );
    }
    for (port, id) in [(5201, 11), (5202, 22), (5203, 30)] {
        tc(
            bed,
            &format!(
                "filter add dev so parent 1: protocol ip prio 1 u32 match ip protocol 17 0xff match ip dport {port} 0xffff flowid 1:{id}"
            ),
        );
    }
    let r = exp2_traffic(
        bed,
        || kernel_bytes(bed, "so", ["1:11", "1:22", "1:30"]),
        |_| (),
    );
    bed.remove_bridge().unwrap();
    r
}

/// (seconds since [`START`], bytes sent) of each of the kernel's classes `handles` on
/// `dev`, from `tc -s class show`.
fn kernel_bytes<const N: usize>(bed: &Testbed, dev: &str, handles: [&str; N]) -> [(f64, f64); N] {
    let out = bed
        .exec(&bed.shaper, &["tc", "-s", "class", "show", "dev", dev])
        .unwrap();
    let secs = START.elapsed().as_secs_f64();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    // `class htb 1:11 parent ...` then ` Sent 12345 bytes 10 pkt ...`.
    let bytes = |handle: &str| {
        let mut lines = text.lines();
        while let Some(l) = lines.next() {
            if l.split_whitespace().nth(2) == Some(handle) {
                return lines
                    .next()
                    .and_then(|s| s.split_whitespace().nth(1)?.parse::<f64>().ok())
                    .unwrap_or(0.0);
            }
        }
        0.0
    };
    handles.map(|h| (secs, bytes(h)))
}

static START: std::sync::LazyLock<Instant> = std::sync::LazyLock::new(Instant::now);

/// The simulator's rates in the same intervals, from throughput.csv.
fn exp2_simulated(scheduler: &str) -> Exp2 {
    let scenario = common::scenarios_dir().join("shaper/hls-exp2-100mbit.toml");
    simulated(&scenario, scheduler, EXP2_CLASSES)
}

/// The simulator's rates of `classes` in the intervals [`exp2_traffic`] samples.
fn simulated(scenario: &Path, scheduler: &str, classes: [&str; 3]) -> Exp2 {
    let dir = TempDir::new(&format!("sim-exp2-{scheduler}"));
    let out = common::linkshare(
        &[
            "run",
            scenario.to_str().unwrap(),
            "--scheduler",
            scheduler,
            "--out",
            dir.path().to_str().unwrap(),
        ],
        Path::new("."),
    );
    assert!(out.status.success(), "{}", common::stderr(&out));
    let csv = std::fs::read_to_string(dir.path().join("throughput.csv")).unwrap();
    let rate = |from: f64, to: f64, class: &str| {
        let mut bytes = 0.0;
        for line in csv.lines().skip(1) {
            let f: Vec<&str> = line.split(',').collect();
            let (s, e): (f64, f64) = (f[0].parse().unwrap(), f[1].parse().unwrap());
            if f[2] == class && s >= from - 1e-9 && e <= to + 1e-9 {
                bytes += f[3].parse::<f64>().unwrap();
            }
        }
        bytes * 8.0 / (to - from) / 1e6
    };
    Exp2 {
        c_on: classes.map(|c| rate(1.0, 4.5, c)),
        c_off: classes.map(|c| rate(6.0, 9.5, c)),
        stolen: None,
        offered_off: None,
        emptied: None,
    }
}

#[test]
fn hls_experiment_2_beside_the_kernel_and_the_simulator() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(bed) = timed_bed("exp2", &["iperf3", "tc"]) else {
        return;
    };
    let _ = *START;
    eprintln!(
        "HLS Experiment 2 at 100 Mbit/s, Mbit/s  C sending:  A1      B2      C  |  C idle:  A1      B2      C"
    );
    let row = |name: &str, r: Exp2| {
        eprintln!(
            "  {name:<16}            {:>7.2} {:>7.2} {:>7.2} |        {:>7.2} {:>7.2} {:>7.2}",
            r.c_on[0], r.c_on[1], r.c_on[2], r.c_off[0], r.c_off[1], r.c_off[2]
        );
        eprint_offered(r, 54, 8);
        eprint_emptied(r, EXP2_CLASSES);
        (name.to_owned(), r)
    };
    let shaped = [exp2_shaper(&bed, "htb"), exp2_shaper(&bed, "hls")];
    let stolen = shaped
        .iter()
        .filter_map(|r| r.stolen)
        .reduce(f64::max)
        .and_then(too_much_steal);
    let mut rows: Vec<(String, Exp2)> = vec![
        row("shaper htb", shaped[0]),
        row("shaper hls", shaped[1]),
        row("simulator htb", exp2_simulated("htb")),
        row("simulator hls", exp2_simulated("hls")),
    ];
    if bed.kernel_has_qdisc("htb") {
        rows.push(row("kernel htb", exp2_kernel_htb(&bed)));
    } else {
        eprintln!("kernel htb skipped: this kernel has no HTB qdisc");
    }
    let (real, sim) = (rows[0].1, rows[2].1);
    let kernel = rows
        .get(4)
        .and_then(|(_, kernel)| kernel_missed(missed_guarantees(*kernel, sim, EXP2_CLASSES)));
    if !machine_kept_up(stolen.into_iter().chain(kernel).collect()) {
        return;
    }
    // While C sends, every class has its guarantee: our HTB on real frames within ±5 %
    // of our simulated HTB, class by class, if every class stayed backlogged.
    if machine_kept_up(emptied_queue(real, EXP2_CLASSES, 0).into_iter().collect()) {
        for ((got, want), class) in real.c_on.iter().zip(sim.c_on).zip(EXP2_CLASSES) {
            assert!(
                (got / want - 1.0).abs() <= 0.05,
                "C sending: real HTB {got:.2} vs simulated {want:.2} Mbit/s (class {class})"
            );
        }
    }
    // The rest compares what A1 and B2 get while C idles, each scheduler's run judged
    // only if both were offered at least their simulated shares in it and stayed
    // backlogged.
    let (hls, hls_sim) = (rows[1].1, rows[3].1);
    let hls_offered = machine_kept_up(
        short_source(hls, hls_sim, EXP2_CLASSES)
            .into_iter()
            .chain(emptied_queue(hls, EXP2_CLASSES, 1))
            .collect(),
    );
    if hls_offered {
        let split = hls.c_off[0] / hls.c_off[1];
        assert!(
            (split - 1.0).abs() <= 0.03,
            "HLS A1/B2 while C idles: {split:.3}"
        );
    }
    if !machine_kept_up(
        short_source(real, sim, EXP2_CLASSES)
            .into_iter()
            .chain(emptied_queue(real, EXP2_CLASSES, 1))
            .collect(),
    ) {
        return;
    }
    // While C idles, A1 and B2 borrow its 40 Mbit/s: their sum within ±5 %; how HTB
    // splits what they borrow depends on when each class's tokens run out, and moves
    // between runs on the kernel's own HTB too (its A1 has been from 3 % below to 15 %
    // above the simulated 41.27 Mbit/s; BENCHMARKS.md, "Shaper"). Each is checked within
    // ±10 % of the simulated split, which ours met in all but one of the runs recorded
    // there.
    let (got, want) = (real.c_off[0] + real.c_off[1], sim.c_off[0] + sim.c_off[1]);
    assert!(
        (got / want - 1.0).abs() <= 0.05,
        "C idle: real HTB A1+B2 {got:.2} vs simulated {want:.2}"
    );
    for ((got, want), class) in real.c_off.iter().zip(sim.c_off).zip(EXP2_CLASSES).take(2) {
        assert!(
            (got / want - 1.0).abs() <= 0.10,
            "C idle: real HTB {got:.2} vs simulated {want:.2} Mbit/s (class {class})"
        );
    }
}

/// Issue 16's reference run: a published-style HTB script (`scenarios/tc/htb-tenants.sh`)
/// built by the real tc on `so`, beside `linkshare shape` on the scenario `linkshare tc
/// import` made of it, and the simulator on that scenario with the same traffic
/// (Experiment 2's: 60 Mbit/s of UDP into 1:11, 1:22 and 1:30, 1:30 idle after 5 s).
/// Per-class rates side by side: the shaper's and the simulator's within ±5 % of the
/// kernel's while every class is backlogged (each class at its assured rate); once 1:30
/// idles, the borrowers' sum within ±5 % and each borrower within ±20 %: how HTB splits
/// what is borrowed depends on when each class's tokens run out, and the kernel's own
/// split moves between runs (1:11 got 47.9 Mbit/s in one run, 40.2 in the next; see
/// also `hls_experiment_2_beside_the_kernel_and_the_simulator`).
#[test]
fn an_imported_tc_script_beside_the_kernel_and_the_simulator() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(bed) = timed_bed("tcimp", &["iperf3", "tc"]) else {
        return;
    };
    if !bed.kernel_has_qdisc("htb") {
        eprintln!("skipped: this kernel has no HTB qdisc (sch_htb), the reference");
        return;
    }
    if bed.kernel_has_qdisc("hfsc") {
        eprintln!("note: the kernel has HFSC; only the HTB script is compared here");
    } else {
        eprintln!("HFSC skipped: this kernel has no HFSC qdisc (sch_hfsc)");
    }
    let _ = *START;
    let dir = TempDir::new("tc-import-kernel");
    let script = common::scenarios_dir().join("tc/htb-tenants.sh");
    let imported = dir.path().join("tenants.toml");
    let out = common::linkshare(
        &[
            "tc",
            "import",
            script.to_str().unwrap(),
            "--in",
            "si",
            "--out",
            "so",
            "-o",
            imported.to_str().unwrap(),
        ],
        Path::new("."),
    );
    assert!(out.status.success(), "{}", common::stderr(&out));
    let imported = std::fs::read_to_string(&imported).unwrap();
    const LEAVES: [&str; 3] = ["1:11", "1:22", "1:30"];

    // The kernel: the script itself, on `so`.
    let text = std::fs::read_to_string(&script)
        .unwrap()
        .replace("DEV=eth0", "DEV=so");
    let on_so = dir.file("tenants.sh", &text);
    bed.kernel_bridge().unwrap();
    bed.exec(&bed.shaper, &["sh", on_so.to_str().unwrap()])
        .expect("the script runs under the real tc");
    let kernel = exp2_traffic(&bed, || kernel_bytes(&bed, "so", LEAVES), |_| ());
    bed.remove_bridge().unwrap();

    // The shaper on the imported scenario.
    let shaper = start(
        &bed,
        &dir,
        &imported.replace("[shaper]", "[shaper]\nrealtime = true"),
    );
    let shaped = exp2_through(&bed, &shaper, LEAVES);
    let stolen = shaped.stolen.and_then(too_much_steal);
    let (end, _) = stop(shaper);
    assert_conserved(&end);

    // The simulator on the imported scenario, with the experiment's traffic in place of
    // the greedy flows the import writes.
    let classes = imported
        .split("\n# The traffic:")
        .next()
        .unwrap()
        .to_owned();
    let flows: String = LEAVES
        .iter()
        .map(|c| {
            let off = if *c == "1:30" {
                "off = [[\"5s\", \"10s\"]]\n"
            } else {
                ""
            };
            format!(
                "\n[[flow]]\nname = \"{c}\"\nclass = \"{c}\"\n\
                 source = {{ type = \"cbr\", rate = \"60mbit\", size = \"1042b\" }}\n{off}"
            )
        })
        .collect();
    // Windows of 100 ms, so that the sampled intervals (1 to 4.5 s, 6 to 9.5 s) are
    // made of whole windows.
    let classes = classes.replace("[scenario]\n", "[scenario]\nwindow = \"100ms\"\n");
    let sim = dir.file("simulated.toml", &format!("{classes}{flows}"));
    let simulated = simulated(&sim, "htb", LEAVES);

    eprintln!(
        "htb-tenants.sh at 100 Mbit/s, Mbit/s  1:30 sending: 1:11    1:22    1:30 |  1:30 idle: 1:11    1:22    1:30"
    );
    for (name, r) in [
        ("kernel htb", kernel),
        ("shaper htb", shaped),
        ("simulator htb", simulated),
    ] {
        eprintln!(
            "  {name:<16}               {:>7.2} {:>7.2} {:>7.2} |          {:>7.2} {:>7.2} {:>7.2}",
            r.c_on[0], r.c_on[1], r.c_on[2], r.c_off[0], r.c_off[1], r.c_off[2]
        );
        eprint_offered(r, 57, 10);
        eprint_emptied(r, LEAVES);
    }
    // Every rate below is judged against the kernel's, in both phases.
    let missed = missed_guarantees(kernel, simulated, LEAVES)
        .into_iter()
        .chain(missed_link(kernel, simulated, LEAVES))
        .collect();
    if !machine_kept_up(stolen.into_iter().chain(kernel_missed(missed)).collect()) {
        return;
    }
    let judged = [(shaped, "shaper"), (simulated, "simulator")];
    let shaper_backlogged = machine_kept_up(emptied_queue(shaped, LEAVES, 0).into_iter().collect());
    for (other, what) in judged {
        if what == "shaper" && !shaper_backlogged {
            continue;
        }
        for ((got, want), c) in other.c_on.iter().zip(kernel.c_on).zip(LEAVES) {
            assert!(
                (got / want - 1.0).abs() <= 0.05,
                "1:30 sending: {what} {got:.2} vs kernel {want:.2} Mbit/s (class {c})"
            );
        }
    }
    // The rest compares what 1:11 and 1:22 get while 1:30 idles: the shaper's run judged
    // only if both were offered at least their simulated shares in it and stayed
    // backlogged.
    let shaper_offered = machine_kept_up(
        short_source(shaped, simulated, LEAVES)
            .into_iter()
            .chain(emptied_queue(shaped, LEAVES, 1))
            .collect(),
    );
    for (other, what) in judged {
        if what == "shaper" && !shaper_offered {
            continue;
        }
        let (got, want) = (
            other.c_off[0] + other.c_off[1],
            kernel.c_off[0] + kernel.c_off[1],
        );
        assert!(
            (got / want - 1.0).abs() <= 0.05,
            "1:30 idle: {what} 1:11+1:22 {got:.2} vs kernel {want:.2} Mbit/s"
        );
        for ((got, want), c) in other.c_off.iter().zip(kernel.c_off).zip(LEAVES).take(2) {
            assert!(
                (got / want - 1.0).abs() <= 0.20,
                "1:30 idle: {what} {got:.2} vs kernel {want:.2} Mbit/s (class {c})"
            );
        }
    }
}

#[test]
fn malformed_frames_go_to_the_default_class_and_are_counted() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(bed) = bed("bad", &["ping"]) else {
        return;
    };
    let dir = TempDir::new("shape-bad");
    let shaper = start(&bed, &dir, &ONE_CLASS_TCP.replace("50mbit", "10mbit"));
    let good = udp4([10, 200, 0, 1], [10, 200, 0, 2], 1, 9, 100);
    let mut truncated = good.clone();
    truncated[16..18].copy_from_slice(&1400u16.to_be_bytes()); // total length past the frame
    let mut bad_ihl = good.clone();
    bad_ihl[14] = 0x43; // IHL 3: shorter than the fixed header
    let long_chain = build(&FrameSpec {
        ip: Some(IpSpec {
            version: 6,
            src: [1; 16],
            dst: [2; 16],
            protocol: proto::UDP,
            dscp: 0,
            ports: Some((1, 2)),
            extensions: vec![proto::DSTOPTS; 12],
            payload: 8,
        }),
        ..FrameSpec::default()
    });
    let vlans = build(&FrameSpec {
        vlans: vec![1, 2, 3, 4, 5, 6],
        ..FrameSpec::default()
    });
    let short_udp = {
        let mut f = udp4([10, 200, 0, 1], [10, 200, 0, 2], 1, 9, 64);
        f[14] = 0x45;
        f[16..18].copy_from_slice(&22u16.to_be_bytes()); // 20-byte header + 2: no room for ports
        f[23] = proto::UDP;
        f
    };
    let frames: Vec<Vec<u8>> = vec![truncated, bad_ihl, long_chain, vlans, short_udp];
    let sent = Testbed::in_netns(&bed.client, || {
        let tx = RawSender::open(CLIENT_IF).expect("raw socket");
        let refs: Vec<&[u8]> = frames
            .iter()
            .flat_map(|f| std::iter::repeat_n(f.as_slice(), 20))
            .collect();
        tx.send(&refs)
    })
    .unwrap();
    assert_eq!(sent, 100);
    std::thread::sleep(Duration::from_millis(300));
    let text = scrape(&bed, &shaper).expect("the shaper still answers");
    let unparsed: f64 = [
        "bad_ipv4",
        "bad_ipv6_extensions",
        "bad_vlan",
        "short_transport",
    ]
    .iter()
    .map(|r| {
        metric(
            &text,
            &format!("linkshare_datapath_unparsed_total{{reason=\"{r}\"}}"),
        )
    })
    .sum();
    assert_eq!(unparsed, 100.0, "{text}");
    // And real traffic still flows.
    let ping = bed.exec(
        &bed.client,
        &["ping", "-c", "3", "-i", "0.2", "-W", "2", SERVER_IP],
    );
    assert!(ping.is_ok(), "ping after malformed frames: {ping:?}");
    let (summary, _) = stop(shaper);
    assert_conserved(&summary);
    assert!(num(&class(&summary, "all")["packets_sent"]) >= 100);
}

#[test]
fn overload_stays_within_the_pool_and_every_drop_is_counted() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(bed) = timed_bed("load", &["iperf3"]) else {
        return;
    };
    let dir = TempDir::new("shape-load");
    let config = ONE_CLASS_TCP
        .replace("50mbit", "5mbit")
        .replace("realtime = true", "realtime = true\npool = 256");
    let shaper = start(&bed, &dir, &config);
    let rss = |pid: u32| {
        let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        s.lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .unwrap_or(0)
    };
    let before = rss(shaper.proc.pid());
    let _server = iperf_server(&bed, 5201);
    let client = iperf_client(&bed, 5201, &["-u", "-b", "300M", "-l", "1400", "-t", "4"]);
    std::thread::sleep(Duration::from_secs(2));
    let text = scrape(&bed, &shaper).unwrap();
    let during = rss(shaper.proc.pid());
    assert!(metric(&text, "linkshare_pool_frames{state=\"in_use\"}") <= 256.0);
    // At every scrape: received = sent + dropped + queued.
    let received = metric(
        &text,
        "linkshare_class_received_packets_total{class=\"all\",state=\"active\"}",
    );
    let sent = metric(
        &text,
        "linkshare_class_sent_packets_total{class=\"all\",state=\"active\"}",
    );
    let queued = metric(
        &text,
        "linkshare_class_backlog_packets{class=\"all\",state=\"active\"}",
    );
    let dropped: f64 = text
        .lines()
        .filter(|l| l.starts_with("linkshare_class_dropped_packets_total{class=\"all\""))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum();
    assert_eq!(received, sent + dropped + queued, "{text}");
    assert!(dropped > 0.0, "300 Mbit/s into 5 Mbit/s drops");
    let _ = client.wait();
    let (summary, _) = stop(shaper);
    assert_conserved(&summary);
    let all = class(&summary, "all");
    let drops = &all["drops_by_reason"];
    assert!(num(&drops["no_buffer"]) > 0, "{drops}");
    eprintln!("overload: RSS {before} kB before, {during} kB during; drops {drops}");
    assert!(
        during < before + 16 * 1024,
        "RSS grew from {before} to {during} kB"
    );
}

#[test]
fn reload_under_traffic_loses_nothing_unaccounted() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(bed) = bed("reload", &["iperf3"]) else {
        return;
    };
    let dir = TempDir::new("shape-reload");
    let two = r#"
[link]
rate = "20mbit"
scheduler = "htb"

[[class]]
name = "a"
rate = "10mbit"
ceil = "20mbit"

[[class]]
name = "b"
rate = "10mbit"
ceil = "20mbit"

[shaper]
in = "si"
out = "so"
default = "a"
realtime = true

[[filter]]
class = "b"
protocol = "udp"
dport = 5202
"#;
    let shaper = start(&bed, &dir, two);
    let _s1 = iperf_server(&bed, 5201);
    let _s2 = iperf_server(&bed, 5202);
    let c1 = iperf_client(&bed, 5201, &["-u", "-b", "30M", "-l", "1000", "-t", "5"]);
    let c2 = iperf_client(&bed, 5202, &["-u", "-b", "30M", "-l", "1000", "-t", "5"]);
    std::thread::sleep(Duration::from_secs(2));
    let before = summary(&shaper);
    // b goes, c comes; a stays with a new rate.
    let three = two
        .replace("name = \"b\"", "name = \"c\"")
        .replace("class = \"b\"", "class = \"c\"")
        .replace(
            "rate = \"10mbit\"\nceil = \"20mbit\"\n\n[[class]]\nname = \"c\"",
            "rate = \"15mbit\"\nceil = \"20mbit\"\n\n[[class]]\nname = \"c\"",
        )
        .replace("rate = \"10mbit\"\nceil", "rate = \"5mbit\"\nceil");
    std::fs::write(&shaper.config, &three).unwrap();
    shaper.proc.signal("HUP").unwrap();
    std::thread::sleep(Duration::from_secs(1));
    // An invalid configuration is refused; the running one stays.
    std::fs::write(
        &shaper.config,
        three.replace("default = \"a\"", "default = \"nope\""),
    )
    .unwrap();
    shaper.proc.signal("HUP").unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let text = scrape(&bed, &shaper).unwrap();
    assert_eq!(metric(&text, "linkshare_datapath_reloads_total"), 1.0);
    assert_eq!(
        metric(&text, "linkshare_datapath_reload_failures_total"),
        1.0
    );
    let b_removed = metric(
        &text,
        "linkshare_class_received_packets_total{class=\"b\",state=\"removed\"}",
    );
    let b_sent = metric(
        &text,
        "linkshare_class_sent_packets_total{class=\"b\",state=\"removed\"}",
    );
    let b_dropped: f64 = text
        .lines()
        .filter(|l| {
            l.starts_with("linkshare_class_dropped_packets_total{class=\"b\",state=\"removed\"")
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum();
    assert_eq!(
        b_removed,
        b_sent + b_dropped,
        "a removed class holds nothing: {text}"
    );
    let _ = (c1.wait(), c2.wait());
    std::thread::sleep(Duration::from_millis(300));
    // Every frame read is in a class, current or removed (UDP: no segmentation).
    let text = scrape(&bed, &shaper).unwrap();
    let received = |class: &str, state: &str| {
        metric(
            &text,
            &format!(
                "linkshare_class_received_packets_total{{class=\"{class}\",state=\"{state}\"}}"
            ),
        )
    };
    assert_eq!(
        metric(&text, "linkshare_datapath_rx_frames_total"),
        received("a", "active") + received("c", "active") + received("b", "removed"),
        "{text}"
    );
    let (end, log) = stop(shaper);
    assert!(log.contains("reload refused"), "{log}");
    assert_conserved(&end);
    // a kept its counters across the reload.
    assert!(num(&class(&end, "a")["packets_sent"]) >= num(&class(&before, "a")["packets_sent"]));
    assert!(
        num(&class(&end, "c")["packets_delivered"]) > 0,
        "c took b's traffic"
    );
}

/// Round-trip times (ms) of `count` pings from the client to the server.
fn ping(bed: &Testbed, count: u32) -> Vec<f64> {
    let out = bed
        .exec(
            &bed.client,
            &[
                "ping",
                "-c",
                &count.to_string(),
                "-i",
                "0.02",
                "-W",
                "2",
                SERVER_IP,
            ],
        )
        .expect("ping");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut rtts: Vec<f64> = text
        .lines()
        .filter_map(|l| l.split("time=").nth(1)?.split(' ').next()?.parse().ok())
        .collect();
    rtts.sort_by(f64::total_cmp);
    rtts
}

/// The histogram bucket bound above [`SLACK_MS`]: 2^21 ns, 2.1 ms.
const LATE_NS: u64 = 1 << 21;
const _: () = assert!(LATE_NS as f64 >= SLACK_MS * 1e6);

/// Wake-ups of the datapath between the metrics texts `before` and `after` later than
/// [`LATE_NS`]: frames that waited in the receive ring that long for the operating
/// system to run the sleeping datapath, which is no work of the shaper's
/// (`linkshare_wakeup_delay_seconds`).
fn late_wakeups(before: &str, after: &str) -> u64 {
    let le = format!(
        "linkshare_wakeup_delay_seconds_bucket{{le=\"{}\"}}",
        LATE_NS as f64 / 1e9
    );
    let later =
        |text: &str| metric(text, "linkshare_wakeup_delay_seconds_count") - metric(text, &le);
    (later(after) - later(before)) as u64
}

/// Why a check of the 99th percentile of `pings` round trips is not judged, if the
/// operating system woke the datapath later than the slack (`late`, from
/// [`late_wakeups`]) as often as it takes to move that percentile (each such wake-up
/// alone spends more than a round trip's slack). `what` names the pings.
fn os_woke_late(late: u64, pings: usize, what: &str) -> Option<String> {
    let moves_p99 = pings - (pings as f64 * 0.99).ceil() as usize + 1;
    (late >= moves_p99 as u64).then(|| {
        format!(
            "the operating system woke the datapath more than {:.1} ms after a frame arrived {late} times during the {what} pings ({moves_p99} move their 99th percentile)",
            LATE_NS as f64 / 1e6
        )
    })
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1]
}

/// Slack allowed above a class's bound for scheduling on a loaded machine: the time
/// from a frame's arrival in the receive ring to the datapath reading it, and from
/// `sendmmsg` to the peer's socket, on both ways of the round trip.
const SLACK_MS: f64 = 2.0;

/// The wake-up check alone (no traffic): late wake-ups are read between two scrapes of
/// the histogram, and excuse a percentile only when there are enough of them to move
/// it (3 of 200 pings: the 99th percentile is the 198th).
#[test]
fn late_wake_ups_excuse_a_percentile_only_when_enough_to_move_it() {
    let text = |within: u64, all: u64| {
        format!(
            "linkshare_wakeup_delay_seconds_bucket{{le=\"0.001048576\"}} {within}\nlinkshare_wakeup_delay_seconds_bucket{{le=\"0.002097152\"}} {within}\nlinkshare_wakeup_delay_seconds_count {all}\n"
        )
    };
    assert_eq!(late_wakeups(&text(10, 11), &text(400, 404)), 3);
    assert_eq!(os_woke_late(2, 200, "idle"), None);
    let why = os_woke_late(3, 200, "idle").expect("3 move the 198th of 200");
    assert!(why.contains("3 times during the idle pings"), "{why}");
    assert_eq!(os_woke_late(0, 1, "idle"), None);
}

#[test]
fn priority_pings_under_a_saturated_class_and_the_idle_shapers_latency() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(bed) = timed_bed("lat", &["iperf3", "ping"]) else {
        return;
    };
    // The idle reference: the kernel's bridge.
    bed.kernel_bridge().unwrap();
    let kernel = ping(&bed, 200);
    bed.remove_bridge().unwrap();
    let dir = TempDir::new("shape-lat");
    let config = r#"
[link]
rate = "10mbit"
scheduler = "prio"

[[class]]
name = "rt"
priority = 0

[[class]]
name = "be"
priority = 1
limit = 100

[shaper]
in = "si"
out = "so"
default = "be"
realtime = true

[[filter]]
class = "rt"
protocol = "icmp"
"#;
    let shaper = start(&bed, &dir, config);
    let cpu = CpuTime::now();
    let started = scrape(&bed, &shaper).expect("metrics");
    let idle = ping(&bed, 200);
    let after_idle = scrape(&bed, &shaper).expect("metrics");
    let _server = iperf_server(&bed, 5201);
    let flood = iperf_client(&bed, 5201, &["-u", "-b", "50M", "-l", "1400", "-t", "8"]);
    std::thread::sleep(Duration::from_secs(1));
    let loaded = ping(&bed, 200);
    let stolen = stolen_since(cpu);
    let after_loaded = scrape(&bed, &shaper).expect("metrics");
    drop(flood);
    let (summary, _) = stop(shaper);
    assert_conserved(&summary);
    assert!(
        num(&class(&summary, "be")["packets_dropped"]) > 0,
        "the best-effort class was saturated"
    );
    // A ping waits at most for the best-effort frame on the wire (1442 B at 10 Mbit/s)
    // plus its own 98 B, once each way through the shaper (only the forward way is
    // shaped).
    let bound_ms = (1442.0 + 98.0) * 8.0 / 10e6 * 1e3;
    eprintln!(
        "latency, ms (p50 / p99): kernel bridge {:.3} / {:.3}; idle shaper {:.3} / {:.3}; rt class under a saturated be class {:.3} / {:.3} (bound {bound_ms:.3} + slack {SLACK_MS})",
        pct(&kernel, 0.5),
        pct(&kernel, 0.99),
        pct(&idle, 0.5),
        pct(&idle, 0.99),
        pct(&loaded, 0.5),
        pct(&loaded, 0.99)
    );
    let priority_ok = pct(&loaded, 0.99) <= pct(&idle, 0.99) + bound_ms + SLACK_MS;
    let idle_ok = pct(&idle, 0.99) <= pct(&kernel, 0.99) + SLACK_MS;
    let (idle_late, loaded_late) = (
        late_wakeups(&started, &after_idle),
        late_wakeups(&after_idle, &after_loaded),
    );
    eprintln!(
        "datapath wake-ups more than {:.1} ms after a frame arrived (the operating system's time): {idle_late} during the idle pings, {loaded_late} during the loaded ones",
        LATE_NS as f64 / 1e6
    );
    let mut reasons: Vec<String> = stolen.into_iter().collect();
    if !idle_ok {
        reasons.extend(os_woke_late(idle_late, idle.len(), "idle"));
    }
    if !priority_ok {
        reasons.extend(os_woke_late(loaded_late, loaded.len(), "loaded"));
    }
    let within = priority_ok && idle_ok;
    if !within && !machine_kept_up(reasons) {
        return;
    }
    assert!(priority_ok, "priority pings: {loaded:?}");
    assert!(idle_ok, "the idle shaper adds too much: {idle:?}");
}

/// The forward tree of the two-direction tests: uploads (client to server) at 20 Mbit/s,
/// the reverse tree in `reverse.toml` beside it.
const UPLOAD_20M: &str = r#"
[link]
rate = "20mbit"
scheduler = "htb"

[[class]]
name = "up"
rate = "20mbit"

[shaper]
in = "si"
out = "so"
realtime = true
reverse = "reverse.toml"
"#;

/// The reverse tree: downloads (server to client) at 8 Mbit/s in two classes, UDP from
/// port 5202 in `down_b`, the rest in `down_a`.
const DOWNLOAD_8M: &str = r#"
[link]
rate = "8mbit"
scheduler = "hfsc"

[[class]]
name = "down_a"
ls = "4mbit"
ul = "8mbit"

[[class]]
name = "down_b"
ls = "4mbit"
ul = "8mbit"

[shaper]
default = "down_a"

[[filter]]
class = "down_b"
protocol = "udp"
sport = 5202
"#;

/// The link `name` of a summary.
fn link<'a>(summary: &'a Value, name: &str) -> &'a Value {
    summary["links"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == name)
        .unwrap_or_else(|| panic!("no link {name} in {summary}"))
}

/// Delivered bit/s of the link `name` between two summaries.
fn link_rate_between(a: &Value, b: &Value, name: &str) -> f64 {
    let bytes = num(&link(b, name)["bytes_delivered"]) - num(&link(a, name)["bytes_delivered"]);
    let dt = b["duration_s"].as_f64().unwrap() - a["duration_s"].as_f64().unwrap();
    bytes as f64 * 8.0 / dt
}

/// Greedy UDP both ways for 6 s — 40 Mbit/s offered to the 20 Mbit/s upload, 20 Mbit/s
/// (`-R`: the server sends) to the 8 Mbit/s download, 1 000-byte datagrams — and
/// `sample` taken 2 s and 5 s in.
fn two_way_udp<T>(bed: &Testbed, mut sample: impl FnMut() -> T) -> (T, T) {
    let _up = iperf_server(bed, 5201);
    let _down = iperf_server(bed, 5202);
    let c1 = iperf_client(bed, 5201, &["-u", "-b", "40M", "-l", "1000", "-t", "6"]);
    let c2 = iperf_client(
        bed,
        5202,
        &["-u", "-b", "20M", "-l", "1000", "-t", "6", "-R"],
    );
    std::thread::sleep(Duration::from_secs(2));
    let a = sample();
    std::thread::sleep(Duration::from_secs(3));
    let b = sample();
    let _ = (c1.wait(), c2.wait());
    (a, b)
}

/// The upload and download rates in bit/s of [`two_way_udp`] through the kernel's own
/// HTB, one class at 20 Mbit/s on `so` and one at 8 Mbit/s on `si`, the bridge
/// forwarding (bytes sent by the classes, from `tc -s class show`).
fn kernel_two_way_rates(bed: &Testbed) -> (f64, f64) {
    bed.kernel_bridge().unwrap();
    kernel_htb_root(bed, "so", 1, 20);
    kernel_htb_root(bed, "si", 1, 8);
    let sent = || {
        let [(t, up)] = kernel_bytes(bed, "so", ["1:1"]);
        let [(_, down)] = kernel_bytes(bed, "si", ["1:1"]);
        (t, up, down)
    };
    let ((t0, up0, down0), (t1, up1, down1)) = two_way_udp(bed, sent);
    tc(bed, "qdisc del dev si root");
    bed.remove_bridge().unwrap();
    let dt = t1 - t0;
    ((up1 - up0) * 8.0 / dt, (down1 - down0) * 8.0 / dt)
}

#[test]
fn a_shaped_upload_and_a_shaped_download_at_once() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(bed) = timed_bed("both", &["iperf3", "tc"]) else {
        return;
    };
    let dir = TempDir::new("shape-both");
    dir.file("reverse.toml", DOWNLOAD_8M);
    let shaper = start(&bed, &dir, UPLOAD_20M);
    let cpu = CpuTime::now();
    let (a, b) = two_way_udp(&bed, || summary(&shaper));
    let stolen = stolen_since(cpu);
    let up = link_rate_between(&a, &b, "link");
    let down = link_rate_between(&a, &b, "link-reverse");
    let down_b = rate_between(&a, &b, "down_b");
    eprintln!(
        "upload {:.2} Mbit/s of 20, download {:.2} Mbit/s of 8 ({:.2} in down_b)",
        up / 1e6,
        down / 1e6,
        down_b / 1e6
    );
    let text = scrape(&bed, &shaper).unwrap();
    let (end, log) = stop(shaper);
    assert!(log.contains("with the reverse tree of"), "{log}");
    assert!(log.contains("reverse tree, so -> si"), "{log}");
    assert_conserved(&end);
    assert_eq!(link(&end, "link-reverse")["scheduler"], "hfsc");
    let off = |rate: f64, want: f64| (rate / want - 1.0).abs() > 0.05;
    let (up_off, down_off) = (off(up, 20e6), off(down, 8e6));
    if up_off || down_off {
        // Judge the rates only if the hypervisor left the CPUs alone and the kernel's
        // own HTB, on the same machine just after, kept its own (see `machine_kept_up`).
        let kernel = stolen.is_none().then(|| kernel_two_way_rates(&bed));
        if let Some((k_up, k_down)) = kernel {
            eprintln!(
                "the kernel's HTB just after: upload {:.2} Mbit/s, download {:.2}",
                k_up / 1e6,
                k_down / 1e6
            );
        }
        let missed = kernel
            .filter(|&(k_up, k_down)| off(k_up, 20e6) || off(k_down, 8e6))
            .map(|(k_up, k_down)| {
                format!(
                    "the kernel's own HTB gave the upload {:.2} of 20 and the download {:.2} of 8 Mbit/s just after",
                    k_up / 1e6,
                    k_down / 1e6
                )
            });
        if !machine_kept_up(stolen.into_iter().chain(missed).collect()) {
            return;
        }
    }
    assert!(!up_off, "upload at {up} bit/s");
    assert!(!down_off, "download at {down} bit/s");
    // The download's UDP went to its class by its source port; the reverse tree's
    // series carry direction="reverse", the forward ones keep their labels.
    assert!(down_b >= 0.9 * down, "down_b got {down_b} of {down}");
    assert!(
        metric(
            &text,
            "linkshare_class_sent_packets_total{class=\"down_b\",state=\"active\",direction=\"reverse\"}"
        ) > 0.0,
        "{text}"
    );
    assert!(
        metric(
            &text,
            "linkshare_class_sent_packets_total{class=\"up\",state=\"active\"}"
        ) > 0.0
    );
    assert!(
        metric(
            &text,
            "linkshare_pool_frames{state=\"capacity\",direction=\"reverse\"}"
        ) > 0.0
    );
}

#[test]
fn reloading_the_reverse_tree_under_traffic_loses_nothing_unaccounted() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(bed) = bed("revload", &["iperf3"]) else {
        return;
    };
    let dir = TempDir::new("shape-revload");
    let reverse = dir.file("reverse.toml", DOWNLOAD_8M);
    let shaper = start(&bed, &dir, UPLOAD_20M);
    let _s1 = iperf_server(&bed, 5201);
    let _s2 = iperf_server(&bed, 5202);
    let c1 = iperf_client(
        &bed,
        5201,
        &["-u", "-b", "16M", "-l", "1000", "-t", "5", "-R"],
    );
    let c2 = iperf_client(
        &bed,
        5202,
        &["-u", "-b", "16M", "-l", "1000", "-t", "5", "-R"],
    );
    std::thread::sleep(Duration::from_secs(2));
    // down_b goes, down_c comes with its filter; down_a stays.
    let changed = DOWNLOAD_8M.replace("down_b", "down_c");
    std::fs::write(&reverse, &changed).unwrap();
    shaper.proc.signal("HUP").unwrap();
    std::thread::sleep(Duration::from_secs(1));
    // An invalid reverse tree is refused, the forward one with it; both keep running.
    std::fs::write(
        &reverse,
        changed.replace("ls = \"4mbit\"", "ls = \"4 parsecs\""),
    )
    .unwrap();
    shaper.proc.signal("HUP").unwrap();
    let _ = (c1.wait(), c2.wait());
    std::thread::sleep(Duration::from_millis(300));
    let text = scrape(&bed, &shaper).unwrap();
    assert_eq!(metric(&text, "linkshare_datapath_reloads_total"), 1.0);
    assert_eq!(
        metric(&text, "linkshare_datapath_reload_failures_total"),
        1.0
    );
    let series = |name: &str, class: &str, state: &str| -> f64 {
        let prefix = format!("{name}{{class=\"{class}\",state=\"{state}\"");
        text.lines()
            .filter(|l| l.starts_with(&prefix) && l.contains("direction=\"reverse\""))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    };
    let received =
        |class: &str, state: &str| series("linkshare_class_received_packets_total", class, state);
    // The removed class holds nothing: all it received was sent or dropped.
    assert_eq!(
        received("down_b", "removed"),
        series("linkshare_class_sent_packets_total", "down_b", "removed")
            + series("linkshare_class_dropped_packets_total", "down_b", "removed"),
        "{text}"
    );
    // Every frame read on `out` is in a class of the reverse tree, current or removed
    // (UDP: no segmentation).
    assert_eq!(
        metric(
            &text,
            "linkshare_datapath_rx_frames_total{direction=\"reverse\"}"
        ),
        received("down_a", "active") + received("down_c", "active") + received("down_b", "removed"),
        "{text}"
    );
    let (end, log) = stop(shaper);
    assert!(log.contains("reload refused"), "{log}");
    assert!(
        log.contains("4 parsecs"),
        "the refusal says what is wrong: {log}"
    );
    assert_conserved(&end);
    assert!(
        num(&class(&end, "down_c")["packets_delivered"]) > 0,
        "down_c took down_b's traffic"
    );
    assert!(num(&class(&end, "down_a")["packets_delivered"]) > 0);
}
