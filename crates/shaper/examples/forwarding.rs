//! The forwarding benchmark of `BENCHMARKS.md` ("Shaper"): 64-byte UDP frames blasted
//! from the client namespace through the shaper namespace, counted as they reach the
//! server's interface, under
//!
//! * the kernel's bridge alone, and with an HTB of 1 000 classes (1 000 u32 filters);
//! * `linkshare shape` with `fifo` (one class), `htb` and `hfsc` (1 000 classes, 1 000
//!   filters on the destination port), at a link rate that does not limit;
//!
//! and the pacing error at 100 Mbit/s (1 500-byte frames offered at 150 Mbit/s). Needs
//! root. `cargo run --release -p linkshare-shaper --example forwarding [SECONDS]`.
//!
//! The generator is this program again (`forwarding gen SECONDS` in the client
//! namespace), so that the CPU time of the shaper (a thread of this process) is
//! measured alone: packets per second per core = forwarded packets / CPU seconds of
//! the process, over the middle 60 % of the run. The datapath thread's own CPU time
//! (`getrusage(RUSAGE_THREAD)`, user and system, over the whole run, from the final
//! snapshot) per frame it sent is printed beside it, with its inverse (frames per CPU
//! second of the datapath alone), and so is its busy time (the wall time of the loop's
//! turns that found work: what forwarding costs without the waiting between frames,
//! the closest to the capacity of a saturated shaper that a generator slower than the
//! shaper can show).

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use linkshare_classify::build::udp4;
use linkshare_shaper::testbed::{self, CLIENT_IF, RawSender, Testbed};

const CLASSES: u16 = 1000;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("gen") {
        let secs: f64 = args[2].parse().unwrap();
        let len: usize = args[3].parse().unwrap();
        let rate_pps: f64 = args[4].parse().unwrap();
        generate(secs, len, rate_pps);
        return;
    }
    let secs: f64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(5.0);
    if let Some(why) = testbed::skip_reason(&["tc"]) {
        eprintln!("cannot run: {why}");
        std::process::exit(2);
    }
    let bed = Testbed::new("bench").expect("namespaces");
    if let Ok(only) = std::env::var("FORWARDING_ONLY") {
        // Profiling one configuration: `FORWARDING_ONLY=htb` or `hfsc` or `fifo`.
        let classes = if only == "fifo" { 1 } else { CLASSES };
        report(
            &only,
            run(&bed, secs, 64, 0.0, Some(config(&only, classes))),
        );
        return;
    }
    println!(
        "configuration                      forwarded pps   shaper CPU   pps per core   datapath CPU ns/frame (user sys all)   frames/CPU-s   busy ns/frame   frames/busy-s"
    );
    bed.kernel_bridge().unwrap();
    report("kernel bridge", run(&bed, secs, 64, 0.0, None));
    kernel_htb(&bed);
    report(
        "kernel bridge + HTB 1000 classes",
        run(&bed, secs, 64, 0.0, None),
    );
    bed.remove_bridge().unwrap();
    for (name, config) in [
        ("linkshare fifo (unshaped)", config("fifo", 1)),
        ("linkshare htb 1000 classes", config("htb", CLASSES)),
        ("linkshare hfsc 1000 classes", config("hfsc", CLASSES)),
    ] {
        report(name, run(&bed, secs, 64, 0.0, Some(config)));
    }
    // Pacing at 100 Mbit/s: 1500-byte frames at 150 Mbit/s offered.
    let paced = config("htb", 1).replace("100gbit", "100mbit");
    let out = run(&bed, secs, 1514, 150e6 / (1514.0 * 8.0), Some(paced));
    if let Some(s) = out.snapshot {
        println!(
            "pacing error at 100 Mbit/s (1514-byte frames): p50 {:?}, p99 {:?}, p99.9 {:?} over {} frames; forwarded {:.0} pps = {:.2} Mbit/s",
            s.pacing_quantile(500),
            s.pacing_quantile(990),
            s.pacing_quantile(999),
            s.pacing.count(),
            out.pps,
            out.pps * 1514.0 * 8.0 / 1e6
        );
    }
}

struct Outcome {
    pps: f64,
    cpu: Option<f64>,
    snapshot: Option<linkshare_shaper::Snapshot>,
}

fn report(name: &str, o: Outcome) {
    match (o.cpu, &o.snapshot) {
        (Some(cpu), Some(s)) => {
            // The datapath thread's own CPU time over the whole run, per frame it sent.
            let d = &s.stats;
            let frames = d.tx_frames.max(1) as f64;
            let (user, sys) = (
                d.cpu_user_ns as f64 / frames,
                d.cpu_system_ns as f64 / frames,
            );
            let busy = d.busy_ns as f64 / frames;
            println!(
                "{name:<34} {:>13.0}   {:>9.0} %   {:>12.0}   {:>6.0} {:>6.0} {:>6.0}   {:>10.0}   {:>6.0}   {:>10.0}",
                o.pps,
                cpu * 100.0,
                o.pps / cpu.max(1e-9),
                user,
                sys,
                user + sys,
                1e9 / (user + sys).max(1e-9),
                busy,
                1e9 / busy.max(1e-9),
            )
        }
        _ => println!("{name:<34} {:>13.0}   {:>11}   {:>12}", o.pps, "-", "-"),
    }
}

/// A shaper configuration: `classes` leaves (1 000 filters on destination ports
/// 10000..), link 100 Gbit/s (it does not limit).
fn config(scheduler: &str, classes: u16) -> String {
    let mut c = format!(
        "[link]\nrate = \"100gbit\"\nscheduler = \"{scheduler}\"\n\n[shaper]\nin = \"si\"\nout = \"so\"\ndefault = \"c0\"\npool = 65536\nrealtime = true\n"
    );
    for i in 0..classes {
        c.push_str(&format!(
            "\n[[class]]\nname = \"c{i}\"\nrate = \"50mbit\"\nceil = \"100gbit\"\nlimit = 1000\n"
        ));
        if classes > 1 {
            c.push_str(&format!(
                "\n[[filter]]\nclass = \"c{i}\"\nprotocol = \"udp\"\ndport = {}\n",
                10000 + i
            ));
        }
    }
    c
}

fn kernel_htb(bed: &Testbed) {
    let mut script = String::from(
        "qdisc add dev so root handle 1: htb default 1\nclass add dev so parent 1: classid 1:1 htb rate 100gbit\n",
    );
    for i in 0..CLASSES {
        let id = 10 + u32::from(i);
        script.push_str(&format!(
            "class add dev so parent 1:1 classid 1:{id:x} htb rate 50mbit ceil 100gbit\nfilter add dev so parent 1: protocol ip prio 1 u32 match ip protocol 17 0xff match ip dport {} 0xffff flowid 1:{id:x}\n",
            10000 + i
        ));
    }
    let path = std::env::temp_dir().join(format!("linkshare-bench-{}.tc", std::process::id()));
    std::fs::write(&path, script).unwrap();
    bed.exec(&bed.shaper, &["tc", "-batch", path.to_str().unwrap()])
        .expect("tc -batch");
    let _ = std::fs::remove_file(path);
}

/// Packets the server's interface received so far.
fn server_rx(bed: &Testbed) -> u64 {
    let out = bed.exec(
        &bed.server,
        &["cat", "/sys/class/net/v0/statistics/rx_packets"],
    );
    out.ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(0)
}

/// CPU seconds this process has used.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks: f64 = f.get(11).and_then(|u| u.parse().ok()).unwrap_or(0.0)
        + f.get(12).and_then(|s| s.parse().ok()).unwrap_or(0.0);
    ticks / 100.0
}

fn run(bed: &Testbed, secs: f64, len: usize, rate_pps: f64, shaper: Option<String>) -> Outcome {
    let mut handle = None;
    if let Some(text) = shaper {
        let dir: PathBuf =
            std::env::temp_dir().join(format!("linkshare-bench-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("shaper.toml");
        std::fs::write(&path, &text).unwrap();
        let config = linkshare_scenario::load_shaper_file(&path).expect("valid configuration");
        let ns = bed.shaper.clone();
        let options = linkshare_shaper::Options {
            config_path: path,
            metrics: None,
            out_dir: dir,
        };
        handle = Some(std::thread::spawn(move || {
            testbed::enter_netns(&ns).unwrap();
            linkshare_shaper::run(config, &options, &mut |_| {}).expect("the shaper runs")
        }));
        std::thread::sleep(Duration::from_millis(500));
    }
    let exe = std::env::current_exe().unwrap();
    let mut generator = Command::new("ip")
        .args(["netns", "exec", &bed.client])
        .arg(&exe)
        .args([
            "gen",
            &secs.to_string(),
            &len.to_string(),
            &rate_pps.to_string(),
        ])
        .spawn()
        .expect("start the generator");
    // Measure the middle of the run.
    std::thread::sleep(Duration::from_secs_f64(secs * 0.2));
    let (rx0, cpu0, t0) = (server_rx(bed), cpu_seconds(), Instant::now());
    std::thread::sleep(Duration::from_secs_f64(secs * 0.6));
    let (rx1, cpu1, dt) = (server_rx(bed), cpu_seconds(), t0.elapsed().as_secs_f64());
    let _ = generator.wait();
    let snapshot = handle.map(|h| {
        let _ = Command::new("kill")
            .args(["-INT", &std::process::id().to_string()])
            .status();
        h.join().expect("the shaper thread")
    });
    Outcome {
        pps: (rx1 - rx0) as f64 / dt,
        cpu: snapshot.as_ref().map(|_| (cpu1 - cpu0) / dt),
        snapshot,
    }
}

/// Sends UDP frames of `len` bytes to 1 000 destination ports, round robin, for
/// `secs` (as fast as possible when `rate_pps` is 0).
fn generate(secs: f64, len: usize, rate_pps: f64) {
    let frames: Vec<Vec<u8>> = (0..CLASSES)
        .map(|i| {
            udp4(
                [10, 200, 0, 1],
                [10, 200, 0, 2],
                4000,
                10000 + i,
                len.max(60),
            )
        })
        .collect();
    let tx = RawSender::open(CLIENT_IF).expect("raw socket on c0");
    let t0 = Instant::now();
    let mut sent = 0u64;
    let mut i = 0;
    while t0.elapsed().as_secs_f64() < secs {
        if rate_pps > 0.0 && sent as f64 > rate_pps * t0.elapsed().as_secs_f64() {
            std::hint::spin_loop();
            continue;
        }
        let batch: Vec<&[u8]> = (0..32)
            .map(|k| frames[(i + k) % frames.len()].as_slice())
            .collect();
        let n = if rate_pps > 0.0 { 1 } else { batch.len() };
        sent += tx.send(&batch[..n]) as u64;
        i = (i + n) % frames.len();
    }
}
