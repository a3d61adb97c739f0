//! HDRR: hierarchical deficit round robin, as the HLS paper describes it (§VII, its
//! reference \[13\], Lemmas 8–9) — the baseline of its fairness and transmission-gap
//! bounds (Theorems 4 and 6).
//!
//! # The algorithm
//!
//! Every leaf keeps a deficit counter `d_i`, initially 0. The scheduler makes a sequence
//! of *visits* to leaves. A visit adds the fixed quantum `Q` to `d_i` and sends head
//! packets while `L <= d_i` (`d_i -= L`); it ends when the head does not fit or the leaf
//! is empty, and an emptied leaf's deficit is reset to 0 (Lemma 8's proof lists exactly
//! these updates).
//!
//! Which leaf is visited comes from the hierarchy flattened by interleaving classes by
//! weight: every class with children owns a cyclic sequence of child slots in which each
//! child appears `w_k` times, interleaved (smooth weighted round robin: at each slot the
//! child with the largest running credit is chosen, credits grow by the weights and the
//! chosen child's shrinks by their sum). A visit starts at the root, takes the next slot
//! of each class on the way down whose child has a backlogged leaf below it, and ends
//! at a leaf; slots of idle children are passed over. So a backlogged leaf is visited at
//! least once every `beta_i = prod_{j in anc(i)} sum_{k in child(j)} w_k` visits
//! (Lemma 9).
//!
//! # Parameters and implementation choices
//!
//! * Quantum `Q`: one value for all leaves (the paper's HDRR), the largest
//!   [`crate::hierarchy::Class::max_packet`] over the leaves (1500 B by default), so
//!   every visit can send at least one packet of a freshly visited leaf.
//! * Weights: [`crate::hierarchy::Class::weight`]. Each class's children's weights are
//!   divided by their greatest common divisor before the slot sequence is built; smooth
//!   weighted round robin is scale-invariant, so the visiting order is identical to the
//!   one with the weights as given (the paper's Fig. 1 weights 300:300:400 give the same
//!   order as 3:3:4), only the memory is smaller. A hierarchy whose reduced weights still
//!   need more than [`MAX_SLOTS`] slots is refused with a [`BuildError`].
//!
//! # Cost
//!
//! O(depth) per visit plus the idle slots passed over (at most one cycle of each class's
//! sequence). Enqueue is O(depth) when a leaf turns backlogged (subtree backlog counts),
//! O(1) otherwise. No allocation after warm-up.

use super::{BuildError, Dequeued, Dropped, Enqueue, Packet, PollAt, Scheduler, SchedulerKind};
use crate::ds::{ClassQueues, DequeQueues};
use crate::hierarchy::{ClassId, ClassTree};
use crate::units::Instant;

/// Largest total number of child slots over all classes.
pub const MAX_SLOTS: usize = 1 << 22;

/// The HDRR scheduler. See the [module docs](self).
#[derive(Debug)]
pub struct Hdrr<P> {
    parent: Vec<u32>,
    /// Slot sequence of class `k`: `slots[start[k]..start[k + 1]]` (empty for leaves).
    start: Vec<u32>,
    slots: Vec<u32>,
    cursor: Vec<u32>,
    /// Backlogged leaves in the subtree of each class (a leaf counts itself).
    backlogged: Vec<u32>,
    deficit: Vec<u64>,
    queues: DequeQueues<P>,
    quantum: u64,
    /// The leaf whose visit is under way.
    visiting: Option<u32>,
}

impl<P: Packet> Hdrr<P> {
    /// HDRR for `tree`, or why the hierarchy's slot sequences would be too long (see
    /// [`validate`]).
    pub fn new(tree: &ClassTree) -> Result<Hdrr<P>, BuildError> {
        let classes = tree.classes();
        let mut start = Vec::with_capacity(classes.len() + 1);
        let mut slots = Vec::new();
        for (c, reduced) in classes.iter().zip(reduced_weights(tree)?) {
            start.push(slots.len() as u32);
            interleave(&c.children, &reduced, &mut slots);
        }
        start.push(slots.len() as u32);
        let quantum = tree
            .leaves()
            .iter()
            .map(|l| tree.get(*l).max_packet().0)
            .max()
            .unwrap_or(1);
        let n = classes.len();
        Ok(Hdrr {
            parent: classes
                .iter()
                .map(|c| c.parent.map_or(u32::MAX, |p| p.0))
                .collect(),
            start,
            slots,
            cursor: vec![0; n],
            backlogged: vec![0; n],
            deficit: vec![0; n],
            queues: DequeQueues::new(n),
            quantum,
            visiting: None,
        })
    }

    /// The quantum `Q` in bytes.
    pub fn quantum(&self) -> u64 {
        self.quantum
    }

    /// Walks from the root to the next leaf to visit, consuming one slot of every class
    /// on the way (and the slots of idle children passed over).
    fn next_leaf(&mut self) -> usize {
        let mut node = 0;
        loop {
            let (lo, hi) = (self.start[node] as usize, self.start[node + 1] as usize);
            if lo == hi {
                return node;
            }
            loop {
                let at = self.cursor[node] as usize;
                let child = self.slots[lo + at] as usize;
                self.cursor[node] = ((at + 1) % (hi - lo)) as u32;
                if self.backlogged[child] > 0 {
                    node = child;
                    break;
                }
            }
        }
    }

    /// Counts `leaf` as newly backlogged (`up`) or newly idle in the subtree backlog
    /// counts of itself and its ancestors.
    fn count_backlog(&mut self, leaf: usize, up: bool) {
        let mut k = leaf;
        while k != u32::MAX as usize {
            if up {
                self.backlogged[k] += 1;
            } else {
                self.backlogged[k] -= 1;
            }
            k = self.parent[k] as usize;
        }
    }

    /// A leaf left empty goes idle: deficit reset, backlog counts updated.
    fn went_idle(&mut self, leaf: usize) {
        self.deficit[leaf] = 0;
        self.count_backlog(leaf, false);
        if self.visiting == Some(leaf as u32) {
            self.visiting = None;
        }
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// Appends the smooth weighted round-robin sequence of `children` with `weights`.
/// Checks that HDRR can be built for `tree`: the slot sequences of all classes together
/// (each class's children's weights divided by their greatest common divisor) must not
/// exceed [`MAX_SLOTS`].
pub fn validate(tree: &ClassTree) -> Result<(), BuildError> {
    reduced_weights(tree).map(drop)
}

/// For every class in id order, its children's weights divided by their greatest
/// common divisor (the number of round-robin slots each child gets); fails when they
/// add up to more than [`MAX_SLOTS`].
fn reduced_weights(tree: &ClassTree) -> Result<Vec<Vec<u64>>, BuildError> {
    let mut used = 0u64;
    let mut all = Vec::with_capacity(tree.len());
    for c in tree.classes() {
        let weights: Vec<u64> = c
            .children
            .iter()
            .map(|k| u64::from(tree.get(*k).weight()))
            .collect();
        let g = weights.iter().copied().fold(0, gcd);
        let reduced: Vec<u64> = weights.iter().map(|w| w / g.max(1)).collect();
        let total: u64 = reduced.iter().sum();
        used += total;
        if used > MAX_SLOTS as u64 {
            return Err(BuildError::class(
                SchedulerKind::Hdrr,
                tree,
                c.id,
                "weight",
                format!(
                    "the weights of the children of `{}` need {total} round-robin slots even \
                     after dividing by their common divisor {g}, and HDRR supports {MAX_SLOTS} \
                     in all",
                    c.name()
                ),
                "use smaller weights with the same ratios".to_owned(),
            ));
        }
        all.push(reduced);
    }
    Ok(all)
}

fn interleave(children: &[ClassId], weights: &[u64], out: &mut Vec<u32>) {
    let total: i64 = weights.iter().sum::<u64>() as i64;
    let mut credit = vec![0i64; children.len()];
    for _ in 0..total {
        let mut best = 0;
        for k in 0..children.len() {
            credit[k] += weights[k] as i64;
            if credit[k] > credit[best] {
                best = k;
            }
        }
        credit[best] -= total;
        out.push(children[best].0);
    }
}

impl<P: Packet> Scheduler<P> for Hdrr<P> {
    fn name(&self) -> &'static str {
        "hdrr"
    }

    fn is_work_conserving(&self) -> bool {
        true
    }

    fn enqueue(
        &mut self,
        _now: Instant,
        class: ClassId,
        pkt: P,
        _evicted: &mut Vec<Dropped<P>>,
    ) -> Enqueue<P> {
        let c = class.index();
        if self.queues.push_back(c, pkt) {
            self.count_backlog(c, true);
        }
        Enqueue::Queued
    }

    fn dequeue(&mut self, _now: Instant) -> Option<Dequeued<P>> {
        if self.queues.queued() == 0 {
            return None;
        }
        loop {
            let leaf = match self.visiting {
                Some(l) => l as usize,
                None => {
                    let l = self.next_leaf();
                    self.deficit[l] += self.quantum;
                    self.visiting = Some(l as u32);
                    l
                }
            };
            let len = u64::from(
                self.queues
                    .front(leaf)
                    .expect("visited leaves are backlogged")
                    .wire_len(),
            );
            if len > self.deficit[leaf] {
                self.visiting = None;
                continue;
            }
            let pkt = self.queues.pop_front(leaf).expect("head exists");
            self.deficit[leaf] -= len;
            if self.queues.is_empty(leaf) {
                self.went_idle(leaf);
            }
            return Some(Dequeued {
                pkt,
                class: ClassId(leaf as u32),
            });
        }
    }

    fn poll_at(&self, _now: Instant) -> PollAt {
        PollAt::work_conserving(self.queues.queued() != 0)
    }

    fn remove_behind_head(&mut self, class: ClassId) -> Option<P> {
        let second = self.queues.remove_second(class.index());
        second.or_else(|| self.remove_newest(class))
    }

    fn remove_newest(&mut self, class: ClassId) -> Option<P> {
        let c = class.index();
        let pkt = self.queues.pop_back(c)?;
        if self.queues.is_empty(c) {
            self.went_idle(c);
        }
        Some(pkt)
    }
}
