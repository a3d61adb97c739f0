// Scratch driver for callgrind (not committed): the boxed bench's workload.
use linkshare_core::ds::bids::Structure;
use linkshare_core::hierarchy::{ClassId, ClassTree, Limit};
use linkshare_core::sched::keshav::KeshavConfig;
use linkshare_core::sched::{SchedulerConfig, SchedulerKind};
use linkshare_core::testing::TestPacket;
use linkshare_core::units::{Instant, Rate};

struct Seq(u64);
impl Seq {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0
    }
    fn arrival(&mut self, n: usize) -> (ClassId, u32) {
        let x = self.next();
        let leaf = ((u128::from(x) * n as u128) >> 64) as u32;
        (ClassId(leaf + 1), 64 + ((x >> 20) & 1023) as u32)
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let kind = args[1].as_str();
    let n: usize = args[2].parse().unwrap();
    let pairs: usize = args[3].parse().unwrap();
    let tree = ClassTree::flat(Rate::from_gbit(10), n);
    let config = match kind {
        "keshav" => SchedulerConfig::Keshav(KeshavConfig {
            limit: Limit::Packets(n as u64 * 4 + 1),
            structure: Structure::Perc,
            ..KeshavConfig::default()
        }),
        "drr" => SchedulerKind::Drr.into(),
        "wfq" => SchedulerKind::Wfq.into(),
        "scfq" => SchedulerKind::Scfq.into(),
        "stfq" => SchedulerKind::Stfq.into(),
        _ => panic!(),
    };
    let mut s = config.build::<TestPacket>(&tree).unwrap();
    let now = Instant::ZERO;
    let mut ev = Vec::new();
    let mut seq = Seq(42);
    let mut id = 0;
    for c in 0..n as u32 {
        for _ in 0..4 {
            let (_, len) = seq.arrival(n);
            id += 1;
            let _ = s.enqueue(now, ClassId(c + 1), TestPacket { id, len }, &mut ev);
        }
    }
    let mut seq = Seq(7);
    let mut sum = 0u64;
    for _ in 0..(n * 8).max(100_000) + pairs {
        let (class, len) = seq.arrival(n);
        let _ = s.enqueue(now, class, TestPacket { id: 0, len }, &mut ev);
        sum += s.dequeue(now).map_or(0, |d| u64::from(d.pkt.len));
    }
    println!("{sum}");
}
