//! Whole commands, as a user runs them: `linkshare run` parsing a scenario file,
//! simulating it and writing the default outputs into a fresh directory (`--quiet`: the
//! terminal table is left out), through the same entry point as the binary.
//!
//! * `dumbbell`: 10 UDP flows, each CBR at 100 Mbit/s of 1000 B packets from its own
//!   host over a 1 Gbit/s access link, through a 1 Gbit/s bottleneck (FIFO, 1000-packet
//!   queues) and a 1 Gbit/s egress link to one sink, 10 s: 1.25 million packets, three
//!   hops each. The counter is packet-hops (transmissions completed), so divan prints
//!   packet-hops per second of wall time (target: at least 5 million).
//! * `classes_100k`: 100 000 classes under DRR on a 10 Gbit/s link, one 50 kbit/s CBR
//!   flow of 1000 B packets each, 1 s (target: under 10 s).
//!
//! Run with `cargo bench -p linkshare --bench end_to_end`. The scenario files are
//! generated into a temporary directory first.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use divan::Bencher;
use divan::counter::ItemsCount;

fn main() {
    divan::main();
}

/// The dumbbell scenario (see the module docs).
fn dumbbell() -> String {
    let mut s = String::from(
        "[scenario]\nname = \"dumbbell\"\nduration = \"10s\"\n\n\
         [[node]]\nname = \"r1\"\n[[node]]\nname = \"r2\"\n[[node]]\nname = \"dst\"\n",
    );
    let link = |s: &mut String, name: &str, from: &str, to: &str| {
        let _ = write!(
            s,
            "\n[[links]]\nname = \"{name}\"\nfrom = \"{from}\"\nto = \"{to}\"\n\
             rate = \"1gbit\"\ndelay = \"100us\"\nclass = [{{ name = \"data\" }}]\n"
        );
    };
    for i in 0..10 {
        let _ = write!(s, "[[node]]\nname = \"h{i}\"\n");
    }
    for i in 0..10 {
        link(&mut s, &format!("a{i}"), &format!("h{i}"), "r1");
    }
    link(&mut s, "bottleneck", "r1", "r2");
    link(&mut s, "egress", "r2", "dst");
    for i in 0..10 {
        let _ = write!(
            s,
            "\n[[flow]]\nname = \"f{i}\"\nroute = [{{ link = \"a{i}\", class = \"data\" }}, \
             {{ link = \"bottleneck\", class = \"data\" }}, {{ link = \"egress\", class = \"data\" }}]\n\
             source = {{ type = \"cbr\", rate = \"100mbit\", size = \"1000b\" }}\n"
        );
    }
    s
}

/// The 100 000-class scenario (see the module docs).
fn classes_100k() -> String {
    let mut s = String::from(
        "[scenario]\nname = \"classes-100k\"\nduration = \"1s\"\n\n\
         [link]\nrate = \"10gbit\"\nscheduler = \"drr\"\n",
    );
    for i in 0..100_000 {
        let _ = write!(s, "\n[[class]]\nname = \"c{i}\"\n");
    }
    for i in 0..100_000 {
        let _ = write!(
            s,
            "\n[[flow]]\nname = \"f{i}\"\nclass = \"c{i}\"\n\
             source = {{ type = \"cbr\", rate = \"50kbit\", size = \"1000b\" }}\n"
        );
    }
    s
}

/// Writes `text` as `name` in a fresh temporary directory; returns the directory.
fn scenario_file(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join(name);
    std::fs::write(&path, text).expect("write the scenario");
    (dir, path)
}

/// Packet-hops of a run of the scenario at `path` (run once, outside the measurement).
fn packet_hops(path: &Path) -> u64 {
    let scenario = linkshare_scenario::load_file(path).expect("valid benchmark scenario");
    scenario
        .simulate("count", &linkshare_scenario::NoProgress)
        .expect("runs")
        .packet_hops
}

/// `linkshare run PATH --out DIR/out-N --quiet`, a new output directory each time.
fn run(bencher: Bencher<'_, '_>, dir: &Path, path: &Path, hops: Option<u64>) {
    let n = std::cell::Cell::new(0u32);
    let bench = || {
        n.set(n.get() + 1);
        let out = dir.join(format!("out-{}", n.get()));
        let args: Vec<OsString> = vec![
            "linkshare".into(),
            "run".into(),
            path.into(),
            "--out".into(),
            out.clone().into(),
            "--quiet".into(),
        ];
        let status = linkshare_cli::main_with_args(args);
        let _ = std::fs::remove_dir_all(&out);
        status
    };
    match hops {
        Some(h) => bencher.counter(ItemsCount::new(h)).bench_local(bench),
        None => bencher.bench_local(bench),
    }
}

#[divan::bench(sample_count = 5, sample_size = 1)]
fn dumbbell_10_flows_1gbit_10s(bencher: Bencher<'_, '_>) {
    let (dir, path) = scenario_file("dumbbell.toml", &dumbbell());
    let hops = packet_hops(&path);
    run(bencher, dir.path(), &path, Some(hops));
}

#[divan::bench(sample_count = 3, sample_size = 1)]
fn classes_100k_1s(bencher: Bencher<'_, '_>) {
    let (dir, path) = scenario_file("classes-100k.toml", &classes_100k());
    run(bencher, dir.path(), &path, None);
}
