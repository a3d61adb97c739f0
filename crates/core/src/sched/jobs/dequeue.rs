//! The rate-based dequeue (paper §6.2): rates become packets by serving the backlogged
//! class furthest behind the service its rates promised, `argmax_k R_k^out − Xmit_k`.
//!
//! The promised curves are advanced at arrivals only (Eq. 1 sums over events), so
//! between two arrivals every class is compared at the promise of the last one, as in
//! both reference implementations. Ties go to the lower index (the better class).

use super::Jobs;
use crate::sched::Packet;

impl<P: Packet> Jobs<P> {
    /// The class to serve next, if any is backlogged.
    pub(super) fn select(&self) -> Option<usize> {
        let mut best: Option<(usize, i128)> = None;
        let mut set = self.backlogged;
        while set != 0 {
            let i = set.trailing_zeros() as usize;
            set &= set - 1;
            let behind = self.classes[i].curves.behind();
            if best.is_none_or(|(_, b)| behind > b) {
                best = Some((i, behind));
            }
        }
        best.map(|(i, _)| i)
    }
}

#[cfg(test)]
mod tests {
    use crate::hierarchy::ClassId;
    use crate::sched::Scheduler;
    use crate::sched::jobs::{Jobs, JobsConfig};
    use crate::testing::{TestPacket, put};
    use crate::units::{Instant, Rate};

    /// Spec §7.1 test 10: with `R^out − X` = (10, 30, 30, −5) bytes class 2 is served
    /// (the tie with class 3 goes to the lower index); with class 2 empty, class 3.
    #[test]
    fn furthest_behind_first_ties_to_the_lower_index() {
        let tree = crate::hierarchy::ClassTree::flat(Rate::from_mbit(100), 4);
        let mut s: Jobs<TestPacket> = Jobs::new(&tree, &JobsConfig::default()).unwrap();
        for c in 1..=4 {
            put(&mut s, Instant::ZERO, ClassId(c), u64::from(c), 100);
        }
        for (c, behind) in s.classes.iter_mut().zip([10u128, 30, 30, 0]) {
            c.curves.promised = behind * super::super::curves::NANOBITS_PER_BYTE;
            c.curves.sent = 0;
        }
        s.classes[3].curves.sent = 5;
        assert_eq!(s.select(), Some(1));
        assert_eq!(s.dequeue(Instant::ZERO).map(|d| d.class), Some(ClassId(2)));
        assert_eq!(s.select(), Some(2));
    }
}
