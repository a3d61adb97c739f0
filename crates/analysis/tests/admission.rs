//! Admission control on hand-computed cases: an admissible mix of concave and convex
//! curves, excesses that start after a convex curve's knee or only in the long run,
//! link-sharing children above their parent, upper limits below `rt` or above the link,
//! and the delay bounds of the H-FSC paper's audio and video classes.

use linkshare_analysis::admission::{BurstSource, Check, Options, check};
use linkshare_core::curve::ServiceCurve;
use linkshare_core::hierarchy::{ClassId, ClassSpec, ClassTree, LinkSpec};
use linkshare_core::units::{Bytes, Duration, Rate};

const MS: u64 = 1_000_000;

fn tree(specs: Vec<ClassSpec>) -> ClassTree {
    let link = LinkSpec {
        name: "link".into(),
        rate: Rate::from_mbit(10),
        origin: None,
    };
    ClassTree::build(link, specs).expect("valid tree")
}

fn rt(name: &str, c: ServiceCurve) -> ClassSpec {
    let mut s = ClassSpec::new(name, None);
    s.rt = Some(c);
    s
}

fn curve(m1_kbit: u64, d_us: u64, m2_kbit: u64) -> ServiceCurve {
    ServiceCurve {
        m1: Rate::from_kbit(m1_kbit),
        d: Duration::from_micros(d_us),
        m2: Rate::from_kbit(m2_kbit),
    }
}

fn umax(bytes: u64, dmax_us: u64, rate_kbit: u64) -> ServiceCurve {
    ServiceCurve::from_umax_dmax_rate(
        Bytes(bytes),
        Duration::from_micros(dmax_us),
        Rate::from_kbit(rate_kbit),
    )
    .unwrap()
}

fn ids(t: &ClassTree, names: &[&str]) -> Vec<ClassId> {
    names.iter().map(|n| t.id_of(n).unwrap()).collect()
}

/// The H-FSC paper's audio (160 B, 5 ms, 64 kbit/s: concave, 256 kbit/s for 5 ms),
/// video (8 KB = 8192 B, 10 ms, 2 Mbit/s: concave, 6.5536 Mbit/s for 10 ms) and FTP
/// (4000 B, 16.25 ms, 5 Mbit/s: 4000 B take 6.4 ms at 5 Mbit/s, so convex, flat for
/// 9.85 ms) on 10 Mbit/s. The sum rises at 6.8096 Mbit/s up to 5 ms, at 6.6176 up to
/// 9.85 ms, at 11.6176 until 10 ms, where it is 1600 + 65 536 + 750 = 67 886 bit
/// against 100 000, then at 7.064: always below the line.
///
/// Delay bounds with `t_max` = 1500 B / 10 Mbit/s = 1.2 ms: audio 5 ms + t_max, video
/// 10 ms + t_max (their declared bursts); FTP, declared 4000 B: 9.85 ms + 6.4 ms.
#[test]
fn hfsc_paper_classes_are_admissible_with_their_delay_bounds() {
    let (audio, video, ftp) = (
        umax(160, 5_000, 64),
        umax(8192, 10_000, 2_000),
        umax(4000, 16_250, 5_000),
    );
    assert_eq!(audio, curve(256, 5_000, 64));
    assert_eq!(video.m1, Rate(6_553_600));
    assert_eq!(ftp, curve(0, 9_850, 5_000));
    let t = tree(vec![rt("audio", audio), rt("video", video), rt("ftp", ftp)]);
    let c = ids(&t, &["audio", "video", "ftp"]);
    let options = Options {
        declared_bursts: vec![(c[0], Bytes(160)), (c[1], Bytes(8192)), (c[2], Bytes(4000))],
        relative_link_sharing: false,
    };
    let a = check(&t, &options);
    assert_eq!(a.violations, vec![]);
    assert!(a.is_admissible());
    assert_eq!(a.t_max, Duration(1_200_000));
    let bounds: Vec<_> = a
        .delays
        .iter()
        .map(|d| (d.class, d.burst, d.curve_delay, d.bound))
        .collect();
    let ms = |x: u64| Some(Duration(x));
    assert_eq!(
        bounds,
        vec![
            (c[0], Bytes(160), ms(5 * MS), ms(5 * MS + 1_200_000)),
            (c[1], Bytes(8192), ms(10 * MS), ms(10 * MS + 1_200_000)),
            (
                c[2],
                Bytes(4000),
                ms(16_250_000),
                ms(16_250_000 + 1_200_000)
            ),
        ]
    );
    assert!(
        a.delays
            .iter()
            .all(|d| d.burst_from == BurstSource::Declared)
    );

    // Undeclared: a concave curve's burst is its first segment (audio: 160 B in 5 ms),
    // a convex one's a max_packet (1500 B: 9.85 ms + 2.4 ms at 5 Mbit/s).
    let a = check(&t, &Options::default());
    assert_eq!(a.delays[0].burst, Bytes(160));
    assert_eq!(a.delays[0].burst_from, BurstSource::FirstSegment);
    assert_eq!(a.delays[0].curve_delay, ms(5 * MS));
    assert_eq!(a.delays[2].burst, Bytes(1500));
    assert_eq!(a.delays[2].burst_from, BurstSource::MaxPacket);
    assert_eq!(a.delays[2].curve_delay, ms(12_250_000));
}

/// `a` is concave, 6 Mbit/s for 20 ms then 3; `b` convex, flat for 4 ms then 6 Mbit/s.
/// At `b`'s knee (4 ms) the sum is 24 kbit against the line's 40; then it rises at 12
/// against 10 and closes the 16 kbit gap in 8 ms: above the line from 12 ms. At 20 ms it
/// is 120 + 96 = 216 kbit against 200; then it rises at 9 and is back 16 ms later, at
/// 36 ms.
#[test]
fn excess_after_a_convex_knee_reports_its_interval() {
    let t = tree(vec![
        rt("a", curve(6_000, 20_000, 3_000)),
        rt("b", curve(0, 4_000, 6_000)),
        ClassSpec::new("ls_only", None),
    ]);
    let a = check(&t, &Options::default());
    assert!(!a.is_admissible());
    assert_eq!(a.violations.len(), 1, "{:?}", a.violations);
    let v = &a.violations[0];
    assert_eq!(v.check, Check::RealTime);
    assert_eq!(v.limit, ClassId::ROOT);
    assert_eq!(v.classes, ids(&t, &["a", "b"]));
    assert_eq!(v.rising, ids(&t, &["a", "b"]));
    assert_eq!(v.starts, Duration(12 * MS));
    assert_eq!(v.until, Some(Duration(36 * MS)));
}

/// Every knee fits, but the long-term rates add up to 6 + 5 = 11 Mbit/s: `b` is flat for
/// 20 ms (the sum is 120 kbit against 200 there), then the sum gains 1 Mbit/s on the
/// line and crosses it 80 ms later, at 100 ms, for ever.
#[test]
fn excess_only_in_the_long_run() {
    let t = tree(vec![
        rt("a", ServiceCurve::linear(Rate::from_mbit(6))),
        rt("b", curve(0, 20_000, 5_000)),
    ]);
    let v = &check(&t, &Options::default()).violations;
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!(v[0].starts, Duration(100 * MS));
    assert_eq!(v[0].until, None);
}

/// `p` has `ls` = 4 Mbit/s and children with 3 and 2: above it from the start, for ever.
/// The link's children fit it: `p` (4 Mbit/s) and `q` (default: its share by weight,
/// 10 Mbit/s · 1/2 = 5) add up to 9. In best-effort mode the `ls` curves are only
/// relative and the check is not made.
#[test]
fn link_sharing_children_above_their_parent() {
    let ls = |name: &str, parent: Option<&str>, mbit: u64| {
        let mut s = ClassSpec::new(name, parent);
        s.ls = Some(ServiceCurve::linear(Rate::from_mbit(mbit)));
        s
    };
    let t = tree(vec![
        ls("p", None, 4),
        ls("x", Some("p"), 3),
        ls("y", Some("p"), 2),
        ClassSpec::new("q", None),
    ]);
    let a = check(&t, &Options::default());
    assert_eq!(a.violations.len(), 1, "{:?}", a.violations);
    let v = &a.violations[0];
    assert_eq!(v.check, Check::LinkSharing);
    assert_eq!(v.limit, t.id_of("p").unwrap());
    assert_eq!(v.classes, ids(&t, &["x", "y"]));
    assert_eq!((v.starts, v.until), (Duration::ZERO, None));
    let relative = Options {
        relative_link_sharing: true,
        ..Options::default()
    };
    assert!(check(&t, &relative).is_admissible());
}

/// Three upper limits on 10 Mbit/s:
///
/// * `x` has `rt` 2 Mbit/s and `ul` 1 Mbit/s: below its `rt` from the start, for ever.
/// * `g` has `ul` 4 Mbit/s for 2 ms then 1 Mbit/s, above its leaves' `rt` curves of 0.5
///   and 0.25 Mbit/s everywhere, and below the link: no violation.
/// * `h` has `ul` 20 Mbit/s for 1 ms then 1 Mbit/s: above the line from the start; at
///   1 ms it is at 20 kbit against 10, then gains 9 Mbit/s less than the line, which
///   catches up 10/9 ms later: 1 111 111.1 ns, so the `ul` is within the line again
///   from 2 111 112 ns on.
#[test]
fn upper_limits_below_rt_or_above_the_link() {
    let mut x = rt("x", ServiceCurve::linear(Rate::from_mbit(2)));
    x.ul = Some(ServiceCurve::linear(Rate::from_mbit(1)));
    let mut g = ClassSpec::new("g", None);
    g.ul = Some(curve(4_000, 2_000, 1_000));
    let under_g = |name: &str, kbit: u64| {
        let mut s = rt(name, ServiceCurve::linear(Rate::from_kbit(kbit)));
        s.parent = Some("g".into());
        s
    };
    let mut h = ClassSpec::new("h", None);
    h.ul = Some(curve(20_000, 1_000, 1_000));
    let t = tree(vec![x, g, under_g("g1", 500), under_g("g2", 250), h]);
    let got: Vec<_> = check(&t, &Options::default())
        .violations
        .into_iter()
        .map(|v| (v.check, v.limit, v.classes, v.starts, v.until))
        .collect();
    let (x, h) = (t.id_of("x").unwrap(), t.id_of("h").unwrap());
    assert_eq!(
        got,
        vec![
            (
                Check::UpperLimitBelowRealTime,
                x,
                vec![x],
                Duration::ZERO,
                None
            ),
            (
                Check::UpperLimitAboveLink,
                ClassId::ROOT,
                vec![h],
                Duration::ZERO,
                Some(Duration(2_111_112))
            ),
        ]
    );
}
