//! Cost of classifying one frame: parse + first-match over rules, with the flow cache
//! (1 000 rules on destination ports, frames of 1 000 flows) and without it (8 rules).

use linkshare_classify::build::udp4;
use linkshare_classify::{Classifier, Match, PortRange, Rule};
use linkshare_core::hierarchy::ClassId;

fn main() {
    divan::main();
}

fn classifier(rules: u16) -> Classifier {
    let rules = (0..rules)
        .map(|i| Rule {
            matches: Match {
                dport: Some(PortRange {
                    lo: 10_000 + i,
                    hi: 10_000 + i,
                }),
                ..Match::default()
            },
            class: ClassId(u32::from(i) + 1),
        })
        .collect();
    Classifier::new(rules, ClassId(1))
}

#[divan::bench(args = [8, 1000])]
fn classify_udp(bencher: divan::Bencher<'_, '_>, rules: u16) {
    let mut c = classifier(rules);
    let frames: Vec<Vec<u8>> = (0..rules)
        .map(|i| udp4([10, 0, 0, 1], [10, 0, 0, 2], 4000, 10_000 + i, 64))
        .collect();
    let mut i = 0;
    bencher.bench_local(|| {
        i = (i + 1) % frames.len();
        divan::black_box(c.classify(divan::black_box(&frames[i])))
    });
}
