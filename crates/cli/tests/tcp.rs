//! TCP flows, application sources and reverse routes in scenario files; the flow-level
//! outputs (`flows.csv`, `bursts.csv`, `tcp_trace.csv`); `repro tcp-fairness`.

mod common;

use std::path::{Path, PathBuf};

use common::{
    TWO_HOPS, TempDir, about, at, linkshare, load_in, position_of, problems_in, scenarios_dir,
    stderr, stdout,
};
use linkshare_core::hierarchy::ClassId;
use linkshare_core::sched::SchedulerKind;
use linkshare_core::units::{Duration, Rate};
use linkshare_scenario::{Problem, Problems, Scenario};
use linkshare_sim::config::{Hop, LinkId, SourceConfig, TcpConfig, TcpVariant, Transport};

/// One link with classes `a` and `b`; a TCP flow `t` into `a` and a UDP flow `u` into `b`.
const ONE_LINK: &str = r#"[scenario]
name = "tcp-one"
duration = "2s"
window = "500ms"
scheduler = "drr"

[link]
rate = "10mbit"
delay = "5ms"

[[class]]
name = "a"

[[class]]
name = "b"

[tcp]
mss = "500b"
window = 10

[[flow]]
name = "t"
class = "a"
transport = "tcp"
tcp = { variant = "reno", window = 20 }
source = { type = "ftp", bytes = "100kb" }

[[flow]]
name = "u"
class = "b"
source = { type = "cbr", rate = "1mbit", size = "1000b" }
"#;

/// The shared two-hop topology (`a` -> `b` -> `c`) with links back (`cb`, `ba`, one class
/// `x` each) and its flow `f` made TCP, acknowledged over them.
fn topology() -> String {
    TWO_HOPS
        .replace(
            "[[flow]]",
            r#"[[links]]
name = "cb"
from = "c"
to = "b"
rate = "10mbit"
class = [{ name = "x", max_packet = "1500b" }]

[[links]]
name = "ba"
from = "b"
to = "a"
rate = "10mbit"
class = [{ name = "x" }]

[[flow]]"#,
        )
        .replace(
            "source = { type = \"cbr\", rate = \"800kbit\", size = \"1000b\" }",
            r#"transport = "tcp"
reverse = [{ link = "cb", class = "x" }, { link = "ba", class = "x" }]
source = { type = "ftp" }"#,
        )
}

/// [`ONE_LINK`] with `t` made UDP (no `transport`, no `tcp`) and given a packet size.
fn udp_only() -> String {
    ONE_LINK
        .replace("transport = \"tcp\"\n", "")
        .replace("tcp = { variant = \"reno\", window = 20 }\n", "")
        .replace(
            "source = { type = \"ftp\", bytes = \"100kb\" }",
            "source = { type = \"ftp\", bytes = \"100kb\", size = \"1000b\" }",
        )
}

fn load(text: &str) -> Result<Scenario, Problems> {
    load_in(text, &scenarios_dir())
}

fn problems(text: &str) -> Vec<Problem> {
    problems_in(text, &scenarios_dir())
}

/// Checks the single problem about `field` is at `needle`'s first occurrence in `text`
/// and that its message and fix contain `problem` and `fix`.
fn expect(text: &str, field: &str, needle: &str, problem: &str, fix: &str) {
    let ps = problems(text);
    let p = about(&ps, field);
    assert_eq!(at(p), position_of(text, needle), "{p}");
    assert!(p.problem.contains(problem), "{p}");
    assert!(p.fix.contains(fix), "{p}");
    let shown = p.to_string();
    assert!(shown.starts_with("t.toml:"), "{shown}");
}

#[test]
fn one_link_tcp_gets_a_reverse_link_and_merged_parameters() {
    let s = load(ONE_LINK).unwrap();
    let c = &s.config;
    assert_eq!(c.links.len(), 2);
    let (fwd, rev) = (&c.links[0], &c.links[1]);
    assert_eq!(rev.name, "link-reverse");
    assert_eq!((rev.from, rev.to), (fwd.to, fwd.from));
    assert_eq!(rev.rate, Rate(10_000_000));
    assert_eq!(rev.delay, Duration::from_millis(5));
    // The file's default scheduler is DRR; the acknowledgements' link stays FIFO.
    assert_eq!(fwd.scheduler, SchedulerKind::Drr.into());
    assert_eq!(rev.scheduler, SchedulerKind::Fifo.into());
    assert_eq!(rev.buffer.shared, None);
    let ack = rev.classes.id_of("ack").unwrap();
    assert_eq!(rev.classes.leaves(), &[ack]);
    assert!(s.link_notes[1].ack_path && !s.link_notes[0].ack_path);

    let t = &c.flows[0];
    assert_eq!(
        t.reverse,
        vec![Hop {
            link: LinkId(1),
            class: ack
        }]
    );
    let expected = TcpConfig {
        variant: TcpVariant::Reno,
        mss: 500,
        // 20 segments of the mss the file's [tcp] gives.
        window: 20 * 500,
        ..TcpConfig::default()
    };
    assert_eq!(t.transport, Transport::Tcp(expected));
    // Without `size`, an FTP source over TCP gets a full segment's size.
    assert!(matches!(
        t.source,
        SourceConfig::Ftp {
            bytes: Some(102_400),
            size: 540
        }
    ));
    let u = &c.flows[1];
    assert_eq!(u.transport, Transport::Udp);
    assert!(u.reverse.is_empty());
}

#[test]
fn overriding_the_scheduler_leaves_the_ack_link_alone() {
    let mut s = load(ONE_LINK).unwrap();
    s.set_scheduler(SchedulerKind::Prio, "--scheduler").unwrap();
    assert_eq!(s.config.links[0].scheduler, SchedulerKind::Prio.into());
    assert_eq!(s.config.links[1].scheduler, SchedulerKind::Fifo.into());
}

#[test]
fn link_reverse_shapes_the_ack_link() {
    let text = ONE_LINK.replace(
        "delay = \"5ms\"\n",
        "delay = \"5ms\"\nreverse = { rate = \"1mbit\", delay = \"30ms\", buffer = { limit = 7 } }\n",
    );
    let s = load(&text).unwrap();
    let rev = &s.config.links[1];
    assert_eq!(rev.rate, Rate(1_000_000));
    assert_eq!(rev.delay, Duration::from_millis(30));
    assert_eq!(
        rev.buffer.shared,
        Some(linkshare_core::hierarchy::Limit::Packets(7))
    );
}

#[test]
fn udp_only_files_keep_one_link() {
    let text = udp_only();
    let s = load(&text).unwrap();
    assert_eq!(s.config.links.len(), 1);
}

#[test]
fn topology_reverse_routes_are_resolved() {
    let s = load(&topology()).unwrap();
    let f = &s.config.flows[0];
    let ids: Vec<u32> = f.reverse.iter().map(|h| h.link.0).collect();
    assert_eq!(ids, [2, 3]);
    assert!(f.reverse.iter().all(|h| h.class == ClassId(1)));
    assert_eq!(f.transport, Transport::Tcp(TcpConfig::default()));
}

#[test]
fn bad_variant() {
    let text = ONE_LINK.replace("variant = \"reno\"", "variant = \"vegas\"");
    expect(
        &text,
        "flow[0].tcp.variant",
        "\"vegas\"",
        "unknown TCP variant `vegas`",
        "use \"newreno\" (RFC 6582) or \"reno\" (RFC 5681)",
    );
}

#[test]
fn segments_too_big_for_max_packet() {
    let text = ONE_LINK.replace("tcp = { variant", "tcp = { mss = \"1470b\", variant");
    expect(
        &text,
        "flow[0].tcp.mss",
        "\"1470b\"",
        "larger than the max_packet 1500b of class `a` (link `link`)",
        "lower mss to at most 1460b, or raise max_packet of class `a`",
    );
    // The same from the file's [tcp]: the problem points there.
    let text = ONE_LINK.replace("mss = \"500b\"", "mss = \"1470b\"");
    expect(
        &text,
        "tcp.mss",
        "\"1470b\"",
        "larger than the max_packet",
        "lower mss to at most 1460b",
    );
}

#[test]
fn acks_too_big_for_the_reverse_route() {
    let text = topology()
        .replace("max_packet = \"1500b\"", "max_packet = \"30b\"")
        .replace(
            "transport = \"tcp\"\n",
            "transport = \"tcp\"\ntcp = { header = \"40b\" }\n",
        );
    expect(
        &text,
        "flow[0].tcp.header",
        "\"40b\"",
        "acknowledgements of 40b (the header) are larger than the max_packet 30b of class `x` (link `cb`)",
        "lower header, or raise max_packet of class `x`",
    );
}

#[test]
fn reverse_route_not_returning_to_the_source() {
    let text = topology().replace(
        "reverse = [{ link = \"cb\", class = \"x\" }, { link = \"ba\", class = \"x\" }]",
        "reverse = [{ link = \"cb\", class = \"x\" }]",
    );
    expect(
        &text,
        "flow[0].reverse[0].link",
        "\"cb\", class = \"x\" }]",
        "the reverse route ends at node `b`, not at the source's node `a`",
        "end it with a link into `a`",
    );
}

#[test]
fn reverse_route_not_starting_at_the_sink() {
    let text = topology().replace(
        "reverse = [{ link = \"cb\", class = \"x\" }, { link = \"ba\", class = \"x\" }]",
        "reverse = [{ link = \"ba\", class = \"x\" }]",
    );
    expect(
        &text,
        "flow[0].reverse[0].link",
        "\"ba\", class = \"x\" }]",
        "the reverse route starts at node `b`, not at the sink's node `c`",
        "start it with a link from `c`",
    );
}

#[test]
fn tcp_flow_without_reverse_in_a_topology() {
    let text = topology().replace(
        "reverse = [{ link = \"cb\", class = \"x\" }, { link = \"ba\", class = \"x\" }]\n",
        "",
    );
    expect(
        &text,
        "flow[0].reverse",
        "[[flow]]",
        "a TCP flow needs a reverse route for its acknowledgements",
        "from the sink's node `c` back to the source's node `a`",
    );
}

#[test]
fn udp_flow_with_reverse() {
    let text = topology().replace("transport = \"tcp\"\n", "");
    expect(
        &text,
        "flow[0].reverse",
        "[{ link = \"cb\"",
        "a UDP flow sends nothing back, so it has no reverse route",
        "remove `reverse`, or add transport = \"tcp\" to the flow",
    );
}

#[test]
fn tcp_parameters_on_a_udp_flow() {
    let text = ONE_LINK.replace("transport = \"tcp\"\n", "");
    let ps = problems(&text);
    let p = about(&ps, "flow[0].tcp");
    assert_eq!(at(p), position_of(&text, "{ variant = \"reno\""));
    assert_eq!(
        p.fix,
        "add transport = \"tcp\" to the flow, or remove `tcp`"
    );
}

#[test]
fn reverse_in_the_one_link_form() {
    let text = ONE_LINK.replace(
        "transport = \"tcp\"\n",
        "transport = \"tcp\"\nreverse = [{ link = \"link\", class = \"a\" }]\n",
    );
    expect(
        &text,
        "flow[0].reverse",
        "[{ link = \"link\"",
        "`reverse` is for the topology form",
        "shape it with [link] reverse = {",
    );
}

#[test]
fn link_reverse_without_tcp_flows() {
    let text = udp_only().replace(
        "delay = \"5ms\"\n",
        "delay = \"5ms\"\nreverse = { delay = \"1ms\" }\n",
    );
    expect(
        &text,
        "link.reverse",
        "{ delay = \"1ms\" }",
        "no flow is TCP",
        "remove it, or make a flow TCP",
    );
}

#[test]
fn unknown_transport() {
    let text = ONE_LINK.replace("transport = \"tcp\"", "transport = \"tcpp\"");
    expect(
        &text,
        "flow[0].transport",
        "\"tcpp\"",
        "unknown transport `tcpp`",
        "did you mean `tcp`? use \"udp\"",
    );
}

#[test]
fn window_smaller_than_a_segment() {
    let text = ONE_LINK.replace("window = 20", "window = \"100b\"");
    expect(
        &text,
        "flow[0].tcp.window",
        "\"100b\"",
        "a window of 100b is smaller than one segment (mss 500b)",
        "give a window of at least one segment",
    );
}

#[test]
fn min_rto_above_max_rto() {
    let text = ONE_LINK.replace(
        "window = 10\n",
        "window = 10\nmin_rto = \"2s\"\nmax_rto = \"1s\"\n",
    );
    expect(
        &text,
        "tcp.min_rto",
        "\"2s\"\nmax_rto",
        "min_rto 2s is above max_rto 1s",
        "give a min_rto at most max_rto",
    );
}

#[test]
fn greedy_over_tcp() {
    let text = ONE_LINK.replace(
        "source = { type = \"ftp\", bytes = \"100kb\" }",
        "source = { type = \"greedy\", size = \"1000b\" }",
    );
    expect(
        &text,
        "flow[0].source.type",
        "\"greedy\"",
        "a greedy source keeps packets queued at its first hop",
        "write source = { type = \"ftp\" } (an endless transfer)",
    );
}

#[test]
fn unknown_length_preset() {
    let text = ONE_LINK.replace(
        "source = { type = \"ftp\", bytes = \"100kb\" }",
        "source = { type = \"www\", load = \"1mbit\", lengths = \"fsc\" }",
    );
    expect(
        &text,
        "flow[0].source.lengths",
        "\"fsc\"",
        "unknown length distribution `fsc`",
        "use \"fsc-paper\" (the FSC paper's 10 groups) or an array of transfer lengths in bytes",
    );
}

#[test]
fn length_presets_and_lists() {
    let www = |lengths: &str| {
        ONE_LINK.replace(
            "source = { type = \"ftp\", bytes = \"100kb\" }",
            &format!("source = {{ type = \"www\", load = \"1mbit\", lengths = {lengths} }}"),
        )
    };
    let s = load(&www("\"fsc-paper\"")).unwrap();
    let SourceConfig::Www {
        lengths,
        load: offered,
        ..
    } = &s.config.flows[0].source
    else {
        panic!("not a www source");
    };
    // The FSC paper's ten equally likely groups have a mean of 13 666 B (§3.6).
    assert_eq!(lengths.len(), 10);
    assert_eq!(lengths.iter().sum::<u64>(), 136_660);
    assert_eq!(*offered, Rate(1_000_000));
    match &load(&www("[1000, \"2kb\"]")).unwrap().config.flows[0].source {
        SourceConfig::Www { lengths, .. } => assert_eq!(lengths.to_vec(), [1000, 2048]),
        other => panic!("{other:?}"),
    }
    let text = www("[1000, 0]");
    expect(
        &text,
        "flow[0].source.lengths[1]",
        "0]",
        "0 is out of range",
        "give an integer of at least 1",
    );
    let text = www("[1000, \"0b\"]");
    expect(
        &text,
        "flow[0].source.lengths[1]",
        "\"0b\"",
        "a transfer of zero bytes sends nothing",
        "give positive lengths in bytes",
    );
}

#[test]
fn udp_ftp_needs_a_size() {
    let text = ONE_LINK
        .replace("transport = \"tcp\"\n", "")
        .replace("tcp = { variant = \"reno\", window = 20 }\n", "");
    let ps = problems(&text);
    let p = about(&ps, "flow[0].source.size");
    assert_eq!(p.fix, "add `size = \"1000b\"`");
}

#[test]
fn video_sources() {
    let video = |fields: &str| {
        ONE_LINK.replace(
            "source = { type = \"ftp\", bytes = \"100kb\" }",
            &format!(
                "source = {{ type = \"video\", file = \"traces/mpeg1-synthetic.csv\"{fields} }}"
            ),
        )
    };
    let s = load(&video(", fps = 30")).unwrap();
    let SourceConfig::Video {
        frames,
        interval,
        size,
    } = &s.config.flows[0].source
    else {
        panic!("not a video source");
    };
    // 10^9 / 30 = 33 333 333.3 ns, rounded to the nearest ns.
    assert_eq!(*interval, Duration(33_333_333));
    assert!(!frames.is_empty());
    assert_eq!(*size, 540);
    let s = load(&video(", interval = \"40ms\", size = \"1000b\"")).unwrap();
    assert!(matches!(
        s.config.flows[0].source,
        SourceConfig::Video {
            interval: Duration(40_000_000),
            size: 1000,
            ..
        }
    ));
    let text = video(", interval = \"40ms\", fps = 25");
    expect(
        &text,
        "flow[0].source.fps",
        "25 }",
        "both `interval` and `fps` are given",
        "not both",
    );
    let ps = problems(&video(""));
    let p = about(&ps, "flow[0].source.interval");
    assert_eq!(p.fix, "add fps = 30 or interval = \"33333333ns\"");
    let text = video(", fps = 25").replace("mpeg1-synthetic.csv", "missing.csv");
    expect(
        &text,
        "flow[0].source.file",
        "\"traces/missing.csv\"",
        "cannot read the video trace",
        "relative to the scenario file's directory",
    );
}

#[test]
fn every_problem_in_one_pass() {
    let text = ONE_LINK
        .replace("variant = \"reno\"", "variant = \"cubic\"")
        .replace("mss = \"500b\"", "mss = \"0b\"")
        .replace("transport = \"tcp\"", "transport = \"tcp\"\ntcp2 = 1");
    let ps = problems(&text);
    for field in ["flow[0].tcp.variant", "tcp.mss", "flow[0].tcp2"] {
        about(&ps, field);
    }
}

/// Runs `linkshare` in `dir` with `args` and `--out dir/out`, failing unless it succeeds;
/// returns the output directory and the standard output.
fn run_into(dir: &TempDir, args: &[&str], out: &str) -> (PathBuf, String) {
    let out = dir.path().join(out);
    let mut args = args.to_vec();
    args.extend(["--out", out.to_str().unwrap()]);
    let o = linkshare(&args, dir.path());
    assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
    (out, stdout(&o))
}

/// Runs `linkshare run` on `text` into `out`.
fn run(dir: &TempDir, text: &str, out: &str) -> PathBuf {
    let file = dir.file("s.toml", text);
    run_into(dir, &["run", file.to_str().unwrap()], out).0
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn flows_csv_has_one_row_per_flow() {
    let dir = TempDir::new("tcp-flows");
    let out = run(&dir, ONE_LINK, "out");
    let flows = read(&out, "flows.csv");
    let mut lines = flows.lines();
    let header = lines.next().unwrap();
    assert!(
        header.starts_with(
            "flow,class,protocol,bytes_delivered,start_s,end_s,goodput_bps,retransmits,timeouts"
        ),
        "{header}"
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 2);
    let columns = header.split(',').count();
    assert!(rows.iter().all(|r| r.len() == columns));
    // Classes keep their one-link names despite the acknowledgements' link.
    assert_eq!(&rows[0][..2], ["t", "a"]);
    assert_eq!(&rows[1][..3], ["u", "b", "udp"]);
    // u: 1000 B every 8 ms from 0, transmitted in 0.8 ms, 5 ms of propagation: the
    // last packet before the end, k = 249, arrives at 8k + 5.8 = 1997.8 ms (t's transfer
    // is long over), and all 250 arrive (no buffer limit).
    assert_eq!(rows[1][3], "250000");
    assert_eq!(rows[1][4], "0.000000000");
    assert_eq!(rows[1][5], "1.997800000");
    // 250 000 B · 8 / 1.9978 s = 1 001 101.2113 bit/s.
    assert_eq!(rows[1][6], "1001101.211");
    let drops = read(&out, "drops.csv");
    assert!(drops.contains("\nlink-reverse/ack,"), "{drops}");
    let bursts = read(&out, "bursts.csv");
    assert_eq!(
        bursts.lines().next(),
        Some(
            "flow,burst,conn,bytes,begun_s,first_sent_s,completed_s,delay_s,delivered_bytes,\
             last_delivered_s"
        )
    );
    let summary = read(&out, "summary.json");
    assert!(summary.contains("\"transport\": {"), "{summary}");
    assert!(!out.join("tcp_trace.csv").exists());
}

/// Needs the real TCP: a 100 KiB transfer on an idle path completes, without
/// retransmissions, with every byte delivered once.
#[test]
fn finite_tcp_transfer_completes() {
    let dir = TempDir::new("tcp-complete");
    let out = run(&dir, ONE_LINK, "out");
    let flows = read(&out, "flows.csv");
    let header: Vec<&str> = flows.lines().next().unwrap().split(',').collect();
    let row: Vec<&str> = flows.lines().nth(1).unwrap().split(',').collect();
    let col = |name: &str| row[header.iter().position(|h| *h == name).unwrap()];
    assert_eq!(col("protocol"), "tcp");
    assert_eq!(col("bytes_delivered"), "102400");
    assert_eq!(col("completed"), "true");
    assert_eq!(col("retransmits"), "0");
    assert_eq!(col("timeouts"), "0");
    // 102 400 B need at least 205 segments of 500 B; one ACK per segment at least
    // until the last.
    let acks: u64 = col("acks_sent").parse().unwrap();
    assert!(acks >= 205, "{acks}");
    let bursts = read(&out, "bursts.csv");
    let burst: Vec<&str> = bursts.lines().nth(1).unwrap().split(',').collect();
    assert_eq!(&burst[..4], ["t", "0", "0", "102400"]);
    // Completed within the run: the delay is known and equals end - start.
    assert_eq!(burst[6], col("end_s"));
    assert!(!burst[7].is_empty());
}

#[test]
fn outputs_are_deterministic() {
    let dir = TempDir::new("tcp-determinism");
    let text = ONE_LINK.replace(
        "tcp = { variant = \"reno\", window = 20 }",
        "tcp = { variant = \"reno\", window = 20, trace = true }",
    );
    let a = run(&dir, &text, "a");
    let b = run(&dir, &text, "b");
    for name in [
        "flows.csv",
        "bursts.csv",
        "summary.json",
        "tcp_trace.csv",
        "tcp_cwnd.svg",
    ] {
        assert_eq!(read(&a, name), read(&b, name), "{name} differs");
    }
    let trace = read(&a, "tcp_trace.csv");
    assert_eq!(
        trace.lines().next(),
        Some("flow,conn,time_s,cwnd_bytes,ssthresh_bytes,srtt_s,rttvar_s,rto_s")
    );
    assert!(trace.lines().count() > 1);
}

#[test]
fn shipped_tcp_scenarios_load() {
    for name in [
        "tcp-mix.toml",
        "tcp-fairness.toml",
        "jobs-exp2-topology.toml",
    ] {
        let path = scenarios_dir().join(name);
        if let Err(p) = linkshare_scenario::load_file(&path) {
            panic!("{name}:\n{p}");
        }
    }
}

#[test]
fn jobs_topology_is_paper_003s_experiment_2() {
    let s =
        linkshare_scenario::load_file(&scenarios_dir().join("jobs-exp2-topology.toml")).unwrap();
    let c = &s.config;
    assert!(c.links.iter().all(|l| l.rate == Rate(100_000_000)));
    let routers =
        |l: &&linkshare_sim::config::LinkConfig| c.nodes[l.from.0 as usize].name.starts_with('r');
    let limit = Some(linkshare_core::hierarchy::Limit::Packets(200));
    assert!(
        c.links
            .iter()
            .filter(routers)
            .all(|l| l.buffer.shared == limit)
    );
    // Six flows per class per source-sink pair; class 1 UDP, the others TCP NewReno.
    assert_eq!(c.flows.len(), 3 * 4 * 6);
    for f in &c.flows {
        let class = c.links[f.route[0].link.0 as usize]
            .classes
            .get(f.route[0].class)
            .name()
            .to_owned();
        match &f.transport {
            Transport::Udp => assert_eq!(class, "1", "{}", f.name),
            Transport::Tcp(t) => {
                assert_ne!(class, "1", "{}", f.name);
                assert_eq!(t.variant, TcpVariant::NewReno);
                assert_eq!(t.mss + t.header, 1024);
            }
        }
    }
    // Both bottlenecks carry two pairs.
    for bottleneck in ["r1-r2", "r2-r3"] {
        let id = c.links.iter().position(|l| l.name == bottleneck).unwrap() as u32;
        let crossing = c
            .flows
            .iter()
            .filter(|f| f.route.iter().any(|h| h.link.0 == id))
            .count();
        assert_eq!(crossing, 2 * 24, "{bottleneck}");
    }
}

/// Jain's index of the `goodput_bps` column of a `flows.csv`.
fn jain_of(flows: &str) -> f64 {
    let header: Vec<&str> = flows.lines().next().unwrap().split(',').collect();
    let col = header.iter().position(|h| *h == "goodput_bps").unwrap();
    let x: Vec<f64> = flows
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(col).unwrap().parse().unwrap_or(0.0))
        .collect();
    let sum: f64 = x.iter().sum();
    let squares: f64 = x.iter().map(|v| v * v).sum();
    sum * sum / (x.len() as f64 * squares)
}

#[test]
fn repro_tcp_fairness_runs() {
    let dir = TempDir::new("tcp-fairness");
    let (out, text) = run_into(&dir, &["repro", "tcp-fairness", "--shorten", "4"], "r");
    assert!(text.contains("Jain"), "{text}");
    assert!(text.contains("no paper figure"), "{text}");
    for s in ["fifo", "drr"] {
        let flows = read(&out.join(s), "flows.csv");
        assert_eq!(flows.lines().count(), 1 + 8, "{s}");
        assert!(out.join(s).join("summary.json").exists());
    }
}

/// Needs the real TCP: under DRR, one greedy flow per class share equally.
#[test]
fn repro_tcp_fairness_drr_is_fair() {
    let dir = TempDir::new("tcp-fairness-drr");
    let args = [
        "repro",
        "tcp-fairness",
        "--schedulers",
        "drr",
        "--shorten",
        "2",
    ];
    let (out, _) = run_into(&dir, &args, "r");
    let flows = read(&out.join("drr"), "flows.csv");
    let j = jain_of(&flows);
    assert!(j >= 0.99, "Jain's index {j}\n{flows}");
    // The bottleneck is busy: B = C·RTT. Bytes sent on `link` over its capacity.
    let summary = read(&out.join("drr"), "summary.json");
    let v: serde_json::Value = serde_json::from_str(&summary).unwrap();
    let root = &v["classes"][0];
    assert_eq!(root["name"], "link");
    let bytes = root["bytes_delivered"].as_f64().unwrap();
    let utilisation = bytes * 8.0 / (100e6 * v["duration_s"].as_f64().unwrap());
    assert!(utilisation > 0.9, "utilisation {utilisation}");
}

/// Restart after idle (ns-2's `slow_start_restart_`), on the FSC paper's unloaded link:
/// a burst of 16 segments of 1000 B written one every 2 ms, 1 s apart, initial window 1.
/// With restart every burst starts from one segment again: segments leave in rounds of
/// 1, 2, 4, 8 and 1, one RTT (10 + 0.8 + 10 ms + 32 us of acknowledgement) apart, so the
/// 16th leaves about 4 RTTs (83.3 ms) after the first and arrives 10.8 ms later: 94.1 ms.
/// Without restart the window stays open (20 segments) and the second burst leaves at
/// the writing pace: its last segment is written at 30 ms and arrives at 40.8 ms.
#[test]
fn idle_restart_closes_the_window_after_an_idle_rto() {
    let text = |restart: bool| {
        format!(
            "[scenario]\nname = \"restart\"\nduration = \"2900ms\"\n\n[link]\nrate = \"10mbit\"\n\
             delay = \"10ms\"\n\n[[class]]\nname = \"a\"\n\n[tcp]\nvariant = \"reno\"\n\
             mss = \"960b\"\nheader = \"40b\"\nwindow = 20\ninitial_window = 1\n\
             min_rto = \"200ms\"\ninitial_rto = \"3s\"\ngranularity = \"100ms\"\n\
             idle_restart = {restart}\n\n[[flow]]\nname = \"f\"\nclass = \"a\"\n\
             transport = \"tcp\"\nsource = {{ type = \"periodic-on-off\", burst = 16, \
             peak = \"3840kbit\", period = \"1s\", size = \"960b\" }}\n"
        )
    };
    let delays = |restart: bool| -> Vec<f64> {
        let dir = TempDir::new("tcp-restart");
        let out = run(&dir, &text(restart), "out");
        read(&out, "bursts.csv")
            .lines()
            .skip(1)
            .map(|l| l.split(',').nth(7).unwrap().parse::<f64>().unwrap() * 1e3)
            .collect()
    };
    let with = delays(true);
    let without = delays(false);
    assert_eq!((with.len(), without.len()), (3, 3));
    // The first burst starts from the initial window either way.
    assert!((with[0] - without[0]).abs() < 1e-9, "{with:?} {without:?}");
    for d in &with {
        assert!((93.5..=94.7).contains(d), "with restart: {with:?}");
    }
    for d in &without[1..] {
        assert!((40.7..=41.0).contains(d), "without restart: {without:?}");
    }
}
