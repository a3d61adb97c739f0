//! The loss feedback loop's first pass (paper §5, Eqs. 34–37; spec §3): admission to
//! the buffer, and when the shared buffer is full, which class loses a packet.
//!
//! Loss rates are those of the current busy period (Eq. 3), the arrival included. The
//! loss ratios are met through the weighted loss rates `p*_i ∝ W'_i · p_i` of each
//! loss group (module `groups`), normalised by the group's first weight so that
//! groups can be compared: `p̃_i = p_i · W'_i / W'_first = p_i / m'_i`, the loss rate
//! of the group's first class to which class `i`'s corresponds under the ratios. The
//! error of Eq. 37 is `e'_i = mean_group(p̃) − p̃_i`: the class with the largest error
//! is the furthest below its share of the drops.
//!
//! The victim is always the **tail** packet of its class (the arrival, if the victim is
//! the arriving class), so drops never change the delays of what stays queued (§5).
//!
//! * **Reference mode** (ALTQ `jobs_addq` and `pick_dropped_rlc`, spec §3.4): an
//!   arrival to a class without loss ratio is dropped if the class has no loss bound,
//!   or if its bound allows it; otherwise, and for classes with a loss ratio, the loss
//!   ratios pick the class with the largest `e'` among the backlogged classes with a
//!   ratio (ties to the higher index), unless its bound forbids it; then the class
//!   with the most slack below its bound (`L_i − p_i`, or `1 − p_i` without a bound;
//!   ties to the higher index) loses a packet, even if that exceeds its bound.
//! * **Paper mode** (Eq. 37): every backlogged class, the arrival's included, is a
//!   candidate, in the order: classes outside the loss groups by decreasing slack (so
//!   a class with a loss bound pays first up to its bound, as in the paper's Experiment
//!   2), then the loss groups' classes by decreasing `e'`; the first whose bound allows
//!   the drop loses a packet; if none does, the one with the most slack.

use core::cmp::Reverse;

use super::config::{Buffer, Mode};
use super::curves::LOSS_ONE;
use super::groups::NO_GROUP;
use super::{Jobs, bits};
use crate::sched::{DropReason, Dropped, Enqueue, Packet};
use crate::units::{Fraction, Instant};

impl<P: Packet> Jobs<P> {
    /// Admits an arrival of class `i` (already counted in its arrival curve) or drops a
    /// packet to make room: the arrival (the return value) or another class's newest
    /// packet (into `evicted`).
    pub(super) fn admit(
        &mut self,
        now: Instant,
        i: usize,
        pkt: P,
        evicted: &mut Vec<Dropped<P>>,
    ) -> Enqueue<P> {
        let class = self.setup.classes[i].id;
        let len = u64::from(pkt.wire_len());
        let refuse = |jobs: &mut Jobs<P>, pkt: P, reason| {
            jobs.classes[i].curves.drop(len);
            jobs.count_loss_bound(i);
            Enqueue::Dropped(Dropped { pkt, class, reason })
        };
        match self.setup.buffer {
            Buffer::Separate { packets } => {
                if self.classes[i].queue.len() >= packets as usize {
                    return refuse(self, pkt, DropReason::ClassLimit);
                }
            }
            Buffer::Shared { packets } => {
                if self.queued >= packets {
                    let victim = match self.setup.mode {
                        Mode::Reference(_) => self.reference_victim(i, len),
                        Mode::Paper { .. } => self.paper_victim(i, len),
                    };
                    if victim == i {
                        return refuse(self, pkt, DropReason::SharedLimit);
                    }
                    self.evict_tail(victim, DropReason::SharedLimit, evicted);
                }
            }
        }
        self.push(i, pkt, now);
        Enqueue::Queued
    }

    /// ALTQ's choice on a full buffer for an arrival of `len` bytes to class `i`.
    pub(super) fn reference_victim(&mut self, i: usize, len: u64) -> usize {
        if self.setup.loss.group[i] == NO_GROUP {
            match self.setup.classes[i].loss_bound {
                None => return i,
                Some(bound) if self.classes[i].curves.may_drop(len, bound) => return i,
                Some(_) => {}
            }
        }
        let candidates = self.backlogged | 1 << i;
        let mut s = core::mem::take(&mut self.scratch);
        self.loss_errors(candidates, &mut s.errors);
        let choice = bits(candidates & self.setup.loss.all).reduce(|best, k| {
            if s.errors[best] > s.errors[k] {
                best
            } else {
                k
            }
        });
        self.scratch = s;
        if let Some(k) = choice {
            if self.may_drop_tail(k, i, len) {
                return k;
            }
            self.classes[k].relaxed.loss_ratio += 1;
        }
        self.most_slack(candidates)
    }

    /// Eq. 37's choice on a full buffer for an arrival of `len` bytes to class `i`.
    fn paper_victim(&mut self, i: usize, len: u64) -> usize {
        let candidates = self.backlogged | 1 << i;
        let mut s = core::mem::take(&mut self.scratch);
        s.order.clear();
        s.order
            .extend(bits(candidates & !self.setup.loss.all).map(|k| k as u8));
        s.order
            .sort_unstable_by_key(|&k| (Reverse(self.slack(usize::from(k))), Reverse(k)));
        let inside_from = s.order.len();
        self.loss_errors(candidates, &mut s.errors);
        s.order
            .extend(bits(candidates & self.setup.loss.all).map(|k| k as u8));
        let errors = &s.errors;
        s.order[inside_from..]
            .sort_unstable_by_key(|&k| (Reverse(errors[usize::from(k)]), Reverse(k)));
        let mut victim = None;
        for (pos, &k) in s.order.iter().enumerate() {
            let k = usize::from(k);
            if self.may_drop_tail(k, i, len) {
                victim = Some(k);
                break;
            }
            if pos == inside_from {
                self.classes[k].relaxed.loss_ratio += 1;
            }
        }
        self.scratch = s;
        victim.unwrap_or_else(|| self.most_slack(candidates))
    }

    /// Whether class `k`'s newest packet (the arrival of `len` bytes if `k` is the
    /// arriving class `i`) can be dropped within `k`'s loss bound.
    fn may_drop_tail(&self, k: usize, i: usize, len: u64) -> bool {
        let Some(bound) = self.setup.classes[k].loss_bound else {
            return true;
        };
        let tail = if k == i {
            len
        } else {
            self.classes[k]
                .queue
                .back()
                .map_or(0, |q| u64::from(q.pkt.wire_len()))
        };
        self.classes[k].curves.may_drop(tail, bound)
    }

    /// Writes `e'_k = mean(p̃) − p̃_k` (over the members of `k`'s loss group in
    /// `candidates`) into `errors[k]` for every candidate in a loss group, and 0 for
    /// every other class; units of 2⁻⁴⁰.
    fn loss_errors(&self, candidates: u64, errors: &mut [i128]) {
        errors.fill(0);
        let loss = &self.setup.loss;
        for (g, &members) in loss.members.iter().enumerate() {
            let members = members & candidates;
            if members == 0 {
                continue;
            }
            let mut sum = 0i128;
            for k in bits(members) {
                let p = u128::from(self.classes[k].curves.loss()) * u128::from(loss.weight[k])
                    / u128::from(loss.first[g]);
                errors[k] = p as i128;
                sum += p as i128;
            }
            let mean = sum / i128::from(members.count_ones());
            for k in bits(members) {
                errors[k] = mean - errors[k];
            }
        }
    }

    /// Class `k`'s slack below its loss bound, `L_k − p_k` (`1 − p_k` without a
    /// bound), in units of 2⁻⁴⁰; negative above the bound.
    fn slack(&self, k: usize) -> i64 {
        let bound = self.setup.classes[k]
            .loss_bound
            .map_or(LOSS_ONE, fraction_to_loss);
        bound as i64 - self.classes[k].curves.loss() as i64
    }

    /// The candidate with the most slack below its loss bound (ties to the higher
    /// index): the fallback victim when no drop keeps every bound.
    fn most_slack(&self, candidates: u64) -> usize {
        bits(candidates)
            .fold(None, |best: Option<(usize, i64)>, k| {
                let s = self.slack(k);
                match best {
                    Some((_, b)) if b > s => best,
                    _ => Some((k, s)),
                }
            })
            .map(|(k, _)| k)
            .expect("the arriving class is always a candidate")
    }
}

/// A loss bound in the fixed point of [`Curves::loss`](super::curves::Curves::loss).
fn fraction_to_loss(f: Fraction) -> u64 {
    (u128::from(f.ppb()) * u128::from(LOSS_ONE) / u128::from(Fraction::PPB)) as u64
}
