//! TCP loss recovery through the real engine, with scripted losses.
//!
//! One flow over the default [`Dumbbell`]: 10 Mbit/s each way, 10 ms propagation each
//! way, a 1000-packet buffer (never full here), MSS 1000 B, 40 B headers, W = 64 KiB.
//! A [`tcp_common::Scripted`] FIFO on each link logs every arrival (at the forward
//! link, the instant the sender sent the segment) and drops what the test's rule picks.
//! Expected values are computed from the log and the link parameters, never taken from
//! the agent's own output.

mod tcp_common;

use linkshare_core::units::{Duration, Instant};
use linkshare_sim::config::{SourceConfig, TcpConfig, TcpVariant, TraceRecord};
use linkshare_sim::packet::PacketKind;
use linkshare_sim::result::{FlowResult, TcpSample};
use tcp_common::{
    Dumbbell, Rule, Seen, copies_of, drop_first_copy_of, greedy, keep_all, run, run_scripted,
};

const MSS: u64 = 1000;
const HEADER: u64 = 40;

fn traced(variant: TcpVariant) -> TcpConfig {
    TcpConfig {
        variant,
        trace: true,
        ..TcpConfig::default()
    }
}

/// How many times ssthresh went down along the trace.
fn halvings(trace: &[TcpSample]) -> usize {
    trace
        .windows(2)
        .filter(|w| w[1].ssthresh < w[0].ssthresh)
        .count()
}

/// The last trace sample at or before `at`.
fn sample_at(trace: &[TcpSample], at: Instant) -> TcpSample {
    *trace
        .iter()
        .rfind(|s| s.at <= at)
        .expect("a sample before the instant")
}

/// One past the highest payload byte sent before `at` (exclusive), from the forward log.
fn highest_sent_before(log: &[Seen], at: Instant) -> u64 {
    log.iter()
        .filter(|s| s.pkt.kind == PacketKind::Data && s.at < at)
        .map(|s| s.pkt.num + u64::from(s.pkt.len) - HEADER)
        .max()
        .expect("data was sent")
}

fn flow(r: &linkshare_sim::RunResult) -> &FlowResult {
    &r.flows[0]
}

#[test]
fn one_loss_is_repaired_by_fast_retransmit_without_timeout() {
    let net = Dumbbell {
        secs: 5,
        ..Dumbbell::default()
    };
    let lost = 200 * MSS;
    for variant in [TcpVariant::Reno, TcpVariant::NewReno] {
        let config = net.config(vec![(greedy(), traced(variant))]);
        let (r, fwd, rev) = run_scripted(&config, drop_first_copy_of(&[lost]), keep_all());
        let t = &flow(&r).transport;
        assert_eq!(
            (t.fast_retransmits, t.timeouts, t.retransmits),
            (1, 0, 1),
            "{variant:?}"
        );
        let copies = copies_of(&fwd, lost);
        assert_eq!(copies.len(), 2, "{variant:?}: sent, lost, sent again");
        // The retransmission leaves when the third duplicate acknowledgement (the fourth
        // acknowledgement of `lost`) reaches the sender: no queueing on the reverse link.
        let acks: Vec<Instant> = rev
            .iter()
            .filter(|s| s.pkt.kind == PacketKind::Ack && s.pkt.num == lost)
            .map(|s| s.at)
            .collect();
        assert!(acks.len() >= 4, "{variant:?}: {} acks", acks.len());
        let third_dup_arrives = acks[3] + net.tx_rev(HEADER) + net.delay;
        assert_eq!(copies[1], third_dup_arrives, "{variant:?}");
        // ssthresh = FlightSize / 2, cwnd = ssthresh + 3 MSS at that instant.
        let flight = highest_sent_before(&fwd, copies[1]) - lost;
        let s = sample_at(&t.trace, copies[1]);
        assert_eq!(s.ssthresh, (flight / 2).max(2 * MSS), "{variant:?}");
        assert_eq!(s.cwnd, s.ssthresh + 3 * MSS, "{variant:?}");
        // W = 64 KiB: 65 segments were in flight; the window was halved once.
        assert_eq!(flight, 65 * MSS, "{variant:?}");
        assert_eq!(halvings(&t.trace), 1, "{variant:?}");
        // Everything up to the end keeps flowing: more than 4 s of data at ~W per RTT.
        assert!(t.bytes_delivered > 4_000_000, "{variant:?}: {t:?}");
    }
}

#[test]
fn three_losses_in_one_window_newreno_one_recovery_reno_more() {
    let net = Dumbbell {
        secs: 10,
        ..Dumbbell::default()
    };
    let lost = [200 * MSS, 203 * MSS, 206 * MSS];
    let run_variant = |variant| {
        let config = net.config(vec![(greedy(), traced(variant))]);
        let (r, fwd, _) = run_scripted(&config, drop_first_copy_of(&lost), keep_all());
        for num in lost {
            assert!(copies_of(&fwd, num).len() >= 2, "{variant:?}: {num} resent");
        }
        flow(&r).transport.clone()
    };
    let newreno = run_variant(TcpVariant::NewReno);
    assert_eq!(newreno.fast_retransmits, 1);
    assert_eq!(newreno.timeouts, 0);
    assert_eq!(newreno.retransmits, 3, "exactly the three holes");
    assert_eq!(halvings(&newreno.trace), 1);
    let reno = run_variant(TcpVariant::Reno);
    assert!(
        reno.timeouts >= 1 || reno.fast_retransmits >= 2,
        "Reno repairs three holes in one recovery: {reno:?}"
    );
    assert!(
        halvings(&reno.trace) >= 2 || reno.timeouts >= 1,
        "Reno: {} halvings, {} timeouts",
        halvings(&reno.trace),
        reno.timeouts
    );
    assert!(reno.bytes_delivered < newreno.bytes_delivered);
}

/// The gaps between successive transmissions of the segment sent most often.
fn retransmission_gaps(fwd: &[Seen]) -> (u64, Vec<Duration>) {
    let mut nums: Vec<u64> = fwd
        .iter()
        .filter(|s| s.pkt.kind == PacketKind::Data)
        .map(|s| s.pkt.num)
        .collect();
    nums.sort_unstable();
    let mut best = (0, 0);
    for chunk in nums.chunk_by(|a, b| a == b) {
        if chunk.len() > best.1 {
            best = (chunk[0], chunk.len());
        }
    }
    let times = copies_of(fwd, best.0);
    let gaps = times.windows(2).skip(1).map(|w| w[1].since(w[0])).collect();
    (best.0, gaps)
}

#[test]
fn lost_acknowledgements_drive_the_rto_through_backoff() {
    let net = Dumbbell {
        secs: 30,
        ..Dumbbell::default()
    };
    let config = net.config(vec![(greedy(), traced(TcpVariant::NewReno))]);
    // Every acknowledgement sent in [1 s, 9 s) is lost.
    let (from, to) = (Instant::from_secs(1), Instant::from_secs(9));
    let rev_rule: Rule =
        Box::new(move |now, p| p.kind == PacketKind::Ack && now >= from && now < to);
    let (r, fwd, _) = run_scripted(&config, keep_all(), rev_rule);
    let t = &flow(&r).transport;
    // The RTO is min_rto = 1 s (SRTT + 4 RTTVAR is far below it here): the timer fires
    // ~1 s after the last acknowledgement, then after 2 s, 4 s and 8 s; the copy sent
    // 16 s after... is the first one whose acknowledgement (after 9 s) gets through.
    let (num, gaps) = retransmission_gaps(&fwd);
    let secs = |s| Duration::from_secs(s);
    assert_eq!(gaps, vec![secs(2), secs(4), secs(8)], "segment {num}");
    assert_eq!(t.timeouts, 4);
    // The flow recovers: data keeps being delivered after the silence.
    assert!(t.last_delivered.expect("delivered") > Instant::from_secs(29));
    // The acknowledgements really were lost.
    assert!(flow(&r).reverse.dropped.packets > 0);
}

#[test]
fn dead_path_backs_off_to_the_maximum_rto() {
    let net = Dumbbell {
        secs: 60,
        ..Dumbbell::default()
    };
    let tcp = TcpConfig {
        max_rto: Duration::from_secs(10),
        ..traced(TcpVariant::NewReno)
    };
    let config = net.config(vec![(greedy(), tcp)]);
    let dead = Instant::from_secs(2);
    let (r, fwd, _) = run_scripted(
        &config,
        Box::new(move |now, _| now >= dead),
        Box::new(move |now, _| now >= dead),
    );
    let (num, gaps) = retransmission_gaps(&fwd);
    // 1 s doubled each time, capped at 10 s: 2, 4, 8, 10, 10, ...
    let expected: Vec<Duration> = [2, 4, 8, 10, 10, 10, 10]
        .into_iter()
        .map(Duration::from_secs)
        .collect();
    assert_eq!(gaps, expected, "segment {num}");
    let t = &flow(&r).transport;
    assert_eq!(t.timeouts, 8);
    let last = t.trace.last().expect("traced");
    assert_eq!(last.rto, Duration::from_secs(10));
    assert_eq!(last.cwnd, MSS);
}

/// A wrapped trace source writing `records` (at, bytes).
fn writes(records: &[(Duration, u32)]) -> SourceConfig {
    SourceConfig::Trace {
        records: records
            .iter()
            .map(|&(at, size)| TraceRecord { at, size })
            .collect(),
    }
}

#[test]
fn karn_no_sample_from_a_retransmitted_segment() {
    let net = Dumbbell::default();
    // 1000 B at 0 (lost once), 1000 B at 3 s.
    let source = writes(&[(Duration::ZERO, 1000), (Duration::from_secs(3), 1000)]);
    let config = net.config(vec![(source, traced(TcpVariant::NewReno))]);
    let (r, fwd, _) = run_scripted(&config, drop_first_copy_of(&[0]), keep_all());
    let t = &flow(&r).transport;
    // Initial RTO 1 s: the copy goes at 1 s exactly.
    assert_eq!(
        copies_of(&fwd, 0),
        vec![Instant::ZERO, Instant::from_secs(1)]
    );
    let rtt = net.tx(MSS + HEADER) + net.delay + net.tx_rev(HEADER) + net.delay;
    let second_acked = Instant::from_secs(3) + rtt;
    for s in &t.trace {
        if s.at < second_acked {
            // No sample from the retransmitted segment; the backed-off RTO is kept.
            assert_eq!(s.srtt, None, "{s:?}");
        }
    }
    let after_timeout = sample_at(&t.trace, Instant::from_millis(2500));
    assert_eq!(after_timeout.rto, Duration::from_secs(2));
    let last = t.trace.last().expect("traced");
    assert_eq!(last.at, second_acked);
    assert_eq!(last.srtt, Some(rtt));
    assert_eq!(last.rttvar, Some(Duration(rtt.0 / 2)));
    // SRTT + 4 RTTVAR = 3 RTT < min_rto: the RTO is 1 s again, backoff over.
    assert_eq!(last.rto, Duration::from_secs(1));
    assert_eq!((t.timeouts, t.retransmits), (1, 1));
    assert_eq!(t.bytes_delivered, 2000);
}

#[test]
fn delayed_acknowledgements_halve_the_acknowledgements() {
    let net = Dumbbell::default();
    let plain = run(&net.config(vec![(greedy(), TcpConfig::default())]));
    let f = flow(&plain);
    // Every delivered segment is acknowledged at once.
    assert_eq!(f.reverse.sent.packets, f.delivered.packets);
    let delayed_tcp = TcpConfig {
        delayed_ack: Some(Duration::from_millis(200)),
        ..TcpConfig::default()
    };
    let delayed = run(&net.config(vec![(greedy(), delayed_tcp)]));
    let f = flow(&delayed);
    let ratio = f.reverse.sent.packets as f64 / f.delivered.packets as f64;
    assert!((0.49..=0.51).contains(&ratio), "ratio {ratio}: {f:?}");
    assert_eq!(f.transport.timeouts, 0);
}

/// `bytes` written at 0 by an application that is on for 1 s, with or without the
/// handshake.
fn short_transfer(net: &Dumbbell, handshake: bool, rule: Rule) -> FlowResult {
    let tcp = TcpConfig {
        handshake,
        trace: true,
        ..TcpConfig::default()
    };
    let schedule = linkshare_sim::config::Schedule {
        on: vec![(Instant::ZERO, Instant::from_secs(1))],
    };
    let config = net.config_with_schedules(
        vec![(writes(&[(Duration::ZERO, 20_000)]), tcp)],
        vec![schedule],
    );
    let (r, _, _) = run_scripted(&config, rule, keep_all());
    r.flows[0].clone()
}

#[test]
fn handshake_adds_one_round_trip() {
    let net = Dumbbell::default();
    let plain = short_transfer(&net, false, keep_all());
    let hs = short_transfer(&net, true, keep_all());
    let syn_rtt = net.tx(HEADER) + net.delay + net.tx_rev(HEADER) + net.delay;
    let done = |f: &FlowResult| f.transport.completed.expect("the transfer completes");
    assert_eq!(done(&hs).since(done(&plain)), syn_rtt);
    assert_eq!(plain.transport.bytes_delivered, 20_000);
    assert_eq!(hs.transport.bytes_delivered, 20_000);
    // One SYN more forward, one SYN-ACK more back.
    assert_eq!(hs.sent.packets, plain.sent.packets + 1);
    assert_eq!(hs.reverse.sent.packets, plain.reverse.sent.packets + 1);
    // The SYN-ACK gave the first RTT sample.
    assert_eq!(hs.transport.trace[1].srtt, Some(syn_rtt));
}

#[test]
fn lost_syn_is_retransmitted_and_the_rto_restarts_at_three_seconds() {
    let net = Dumbbell::default();
    let lose_first_syn: Rule = {
        let mut lost = false;
        Box::new(move |_, p| {
            let drop = p.kind == PacketKind::Syn && !lost;
            lost |= drop;
            drop
        })
    };
    let f = short_transfer(&net, true, lose_first_syn);
    let t = &f.transport;
    assert_eq!((t.timeouts, t.retransmits), (1, 1));
    let syn_rtt = net.tx(HEADER) + net.delay + net.tx_rev(HEADER) + net.delay;
    // The second SYN leaves at the initial RTO (1 s); its SYN-ACK opens the connection.
    let open = sample_at(&t.trace, Instant::from_secs(1) + syn_rtt);
    assert_eq!(open.srtt, None, "no sample from a retransmitted SYN");
    assert_eq!(open.rto, Duration::from_secs(3));
    assert_eq!(t.bytes_delivered, 20_000);
    assert!(t.completed.expect("completes") > Instant::from_secs(1));
}
