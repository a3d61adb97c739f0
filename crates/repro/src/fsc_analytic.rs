//! `fsc-fig1-audio`: the FSC paper's two worked examples, computed (spec E10): Fig. 1's
//! long and short transfers under PFQ, under weights 3:1 and under FSC (fluid), and the
//! audio flow of §2.1-2.2 (the reservation PFQ needs against the service curve's delay,
//! computed with the core's exact curve arithmetic).

use std::io::Write;

use linkshare_core::curve::{RuntimeCurve, ServiceCurve};
use linkshare_core::units::{Duration, Rate};

use crate::verdict::{self, Check};
use crate::{Options, ReproError};

/// Link rate of Fig. 1, bit/s.
const C: f64 = 2e6;
/// The long transfer and each short one, bits (1 MB and 50 KB of 10^3 bytes).
const LONG: f64 = 8e6;
const SHORT: f64 = 4e5;
/// Short transfers, one after another: 20 × 50 KB = 1 MB, so the link carries 2 MB.
const SHORTS: u32 = 20;

/// Fig. 1 under a fair share where a short flow gets `ratio` times the long flow's rate
/// while both are backlogged (from the `from`-th short transfer on; before it 1:1):
/// each short transfer's duration and the long flow's completion, s (fluid).
fn fig1(ratio: f64, from: u32) -> (Vec<f64>, f64) {
    let mut t = 0.0;
    let mut long_left = LONG;
    let mut shorts = Vec::new();
    for k in 0..SHORTS {
        let r = if k >= from { ratio } else { 1.0 };
        let short_rate = C * r / (r + 1.0);
        let d = SHORT / short_rate;
        shorts.push(d);
        long_left -= (C - short_rate) * d;
        t += d;
    }
    (shorts, t + long_left / C)
}

/// `fsc-fig1-audio`.
pub fn fig1_audio(_opts: &Options<'_>, out: &mut dyn Write) -> Result<Vec<Check>, ReproError> {
    crate::experiment::header(
        out,
        &[
            "fsc-fig1-audio: FSC paper Fig. 1 (§1) and the audio example (§2.1-2.2), computed.",
            "Fig. 1: a 2 Mbit/s link, one long transfer of 1 MB and short transfers of 50 KB \
             one after another, all backlogged; fluid service. Reconstructed (spec E10): 20 \
             short transfers (1 MB in all, so the long one's completion is unchanged, as the \
             text says), each a new flow; under FSC (BPR 3, PBS 50 KB) the first short \
             transfer meets the long one on its own first slope (1:1), every later one gets \
             3:1 (the long one is past its 50 KB).",
            "Audio: 64 kbit/s, 160 B packets, 5 ms worst-case delay; the service curve \
             m1 = 256 kbit/s, m2 = 64 kbit/s, knee at 160 B (d = 5 ms).",
        ],
    )?;
    let (pfq, pfq_long) = fig1(1.0, 0);
    let (weighted, weighted_long) = fig1(3.0, 0);
    let (fsc, fsc_long) = fig1(3.0, 1);
    // Audio: PFQ's bound l/phi = 5 ms needs phi = l / 5 ms; the curve's delay for one
    // packet is the time its curve takes to reach 160 B, S^-1(160 B).
    let reservation = 160.0 * 8.0 / 0.005;
    let curve = ServiceCurve {
        m1: Rate::from_kbit(256),
        d: Duration::from_millis(5),
        m2: Rate::from_kbit(64),
    };
    let delay = Duration(RuntimeCurve::new(&curve, 0, 0).y2x(160));
    let checks = vec![
        Check::relative("Fig. 1 PFQ: a short transfer", 0.4, pfq[0], 0.02, "s"),
        Check::relative("Fig. 1 PFQ: the long transfer", 8.0, pfq_long, 0.02, "s"),
        Check::relative(
            "Fig. 1 weights 3:1: a short transfer",
            0.27,
            weighted[0],
            0.02,
            "s",
        ),
        Check::relative(
            "Fig. 1 weights 3:1: the long transfer",
            8.0,
            weighted_long,
            0.02,
            "s",
        ),
        Check::relative(
            "Fig. 1 FSC: every short transfer after the first",
            0.27,
            fsc[1],
            0.02,
            "s",
        ),
        Check::relative("Fig. 1 FSC: the long transfer", 8.0, fsc_long, 0.02, "s"),
        Check::relative(
            "audio: PFQ's reservation for 5 ms",
            256.0,
            reservation / 1e3,
            0.0,
            "kbit/s",
        ),
        Check::claim(
            "audio: the curve's delay for a 160 B packet",
            "5 ms",
            format!("{} ns", delay.as_nanos()),
            &[delay.as_secs_f64()],
            "exactly 5 000 000 ns",
            delay == Duration::from_millis(5),
        ),
        Check::relative(
            "audio: the curve's long-term rate",
            64.0,
            curve.m2.bps() as f64 / 1e3,
            0.0,
            "kbit/s",
        ),
    ];
    verdict::print(out, "fsc-fig1-audio: paper against ours", &checks)?;
    Ok(checks)
}
