//! Per-flow classes: the instances of a per-flow template handed to flows as they
//! appear, and taken back when they have been idle long enough.
//!
//! A class written with `per_flow` ([`crate::hierarchy::PerFlow`]) is a *template*: the
//! validated [`ClassTree`] holds a pool of `max_flows` leaf *instances* of it in its
//! place, each with the template's parameters (its curve, weight, limit). The tree stays
//! immutable and every discipline is built for it once, as for any tree; what changes at
//! run time is which flow each instance serves, and that is this module's job, as the
//! classifier in front of the qdisc: [`FlowTable::classify`] maps a packet's flow key to
//! the instance of its flow.
//!
//! # Life of an instance
//!
//! * A flow's first packet takes the instance that has been empty longest, provided it
//!   has been empty for at least the template's `idle` time (or never served a flow):
//!   [`Assigned::New`]. The caller must then call [`crate::Scheduler::reset_class`] on it
//!   before queueing the packet, so that the discipline serves it as a class that has
//!   never been active (FSC's and H-FSC's curves start afresh, the paper's "new flow").
//! * Later packets of the flow find its instance ([`Assigned::Existing`]) — unless the
//!   instance has been empty for `idle` or longer: the flow is then retired, and comes
//!   back as a new flow in the same instance ([`Assigned::New`] again).
//! * An instance whose flow has been idle for `idle` may be handed to a new flow at any
//!   time; its old flow is retired then (lazily: nothing happens while nobody needs the
//!   instance).
//!
//! The caller tells the table when an instance's queue empties ([`FlowTable::emptied`])
//! and fills ([`FlowTable::filled`]); "empty" means nothing queued (a packet on the wire
//! has left the scheduler).
//!
//! # Pool exhaustion
//!
//! When a new flow finds no instance empty for `idle`, the pool is exhausted. The
//! policy: the packet is queued in the instance its key hashes to
//! ([`Assigned::Shared`]), sharing that instance's queue and curve with its owner, as
//! SFQ's flows share a hash bucket, without reset and without taking ownership; the flow
//! tries again for an instance of its own with its next packet. Nothing is dropped for
//! want of an instance. Every such packet is counted ([`PoolStats::shared_packets`]), and
//! outputs report the count: a pool too small for its traffic shows there.
//!
//! # Cost
//!
//! O(1) per packet, allocation-free after construction: a hash map from keys to
//! instances, reserved at twice the pool's size so that it never grows (an owner is
//! removed before its instance gets a new one, so it never holds more entries than
//! instances), and a doubly linked list of the empty instances in the order they
//! emptied, threaded through the instances' records. `BENCHMARKS.md` gives the measured
//! cost of a create + retire pair (`benches/perflow.rs`).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::hierarchy::{ClassId, ClassTree, Template};
use crate::units::{Duration, Instant};

/// The end of a list.
const NIL: u32 = u32::MAX;

/// Where a packet of a flow goes: see the [module docs](self).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Assigned {
    /// The flow's own instance, as before.
    Existing(ClassId),
    /// An instance just given to the flow: reset it in the discipline first.
    New(ClassId),
    /// No instance was free: the packet shares this one (no reset).
    Shared(ClassId),
}

impl Assigned {
    /// The class the packet is to be queued in.
    #[inline]
    pub fn class(self) -> ClassId {
        match self {
            Assigned::Existing(c) | Assigned::New(c) | Assigned::Shared(c) => c,
        }
    }
}

/// What happened in one template's pool.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Instances given to a new flow (a flow retired and back counts again).
    pub created: u64,
    /// Flows retired after `idle` without packets, when their instance was needed again
    /// (by a new flow, or by themselves coming back).
    pub retired: u64,
    /// Packets that found no free instance and shared one ([`Assigned::Shared`]).
    pub shared_packets: u64,
    /// The most instances holding packets at the same time.
    pub peak_busy: u32,
}

/// One instance.
#[derive(Clone, Copy, Debug)]
struct Instance {
    /// The key of the flow it serves, if any.
    owner: Option<u64>,
    /// When its queue last became empty; `None` while it holds packets or if it never
    /// served a flow.
    empty_since: Option<Instant>,
    /// Whether it holds packets.
    busy: bool,
    /// Neighbours in its template's list of empty instances (while empty).
    prev: u32,
    next: u32,
}

/// One template's pool.
#[derive(Clone, Debug)]
struct Pool {
    first: u32,
    count: u32,
    idle: Duration,
    /// Empty instances, longest empty first (by index relative to `first`).
    head: u32,
    tail: u32,
    busy: u32,
    stats: PoolStats,
}

/// A hasher for the 64-bit keys of the map: one multiplication by the golden ratio
/// (Fibonacci hashing), deterministic, so a run never depends on a random seed. The map
/// is only looked up, never iterated.
#[derive(Clone, Copy, Debug, Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }

    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }
}

/// The flows of every per-flow template of one tree. See the [module docs](self).
#[derive(Clone, Debug)]
pub struct FlowTable {
    pools: Vec<Pool>,
    /// By class index; only instances of templates are used.
    instances: Vec<Instance>,
    /// `(template, key)` to the instance serving it.
    owners: HashMap<(u32, u64), u32, BuildHasherDefault<KeyHasher>>,
}

impl FlowTable {
    /// The table for the templates of `tree` (empty if it has none), every instance free.
    pub fn new(tree: &ClassTree) -> FlowTable {
        let free = Instance {
            owner: None,
            empty_since: None,
            busy: false,
            prev: NIL,
            next: NIL,
        };
        let mut instances = vec![free; tree.len()];
        let mut pools = Vec::with_capacity(tree.templates().len());
        let mut total = 0usize;
        for t in tree.templates() {
            pools.push(pool(t, &mut instances));
            total += t.count as usize;
        }
        FlowTable {
            pools,
            instances,
            owners: HashMap::with_capacity_and_hasher(2 * total, Default::default()),
        }
    }

    /// Whether the tree has no per-flow template.
    pub fn is_empty(&self) -> bool {
        self.pools.is_empty()
    }

    /// The instance for a packet of the flow with `key` arriving at `now` for template
    /// `template` (an index in [`ClassTree::templates`]). See the [module docs](self).
    pub fn classify(&mut self, now: Instant, template: u32, key: u64) -> Assigned {
        let t = template as usize;
        if let Some(&c) = self.owners.get(&(template, key)) {
            let idle = self.pools[t].idle;
            let inst = &self.instances[c as usize];
            if !expired(inst, now, idle) {
                return Assigned::Existing(ClassId(c));
            }
            // Idle for the timeout: the flow is retired and comes back as a new one.
            self.pools[t].stats.retired += 1;
            self.restart(t, c, now);
            return Assigned::New(ClassId(c));
        }
        let pool = &self.pools[t];
        let oldest = pool.head;
        let free = oldest != NIL
            && expired(
                &self.instances[(pool.first + oldest) as usize],
                now,
                pool.idle,
            );
        if !free {
            let pool = &mut self.pools[t];
            pool.stats.shared_packets += 1;
            let mut h = KeyHasher::default();
            h.write_u64(key);
            let pick = ((h.finish() >> 32) * u64::from(pool.count)) >> 32;
            return Assigned::Shared(ClassId(pool.first + pick as u32));
        }
        let c = self.pools[t].first + oldest;
        if let Some(old) = self.instances[c as usize].owner.replace(key) {
            self.owners.remove(&(template, old));
            self.pools[t].stats.retired += 1;
        }
        self.owners.insert((template, key), c);
        self.restart(t, c, now);
        Assigned::New(ClassId(c))
    }

    /// Instance `c` of pool `t` starts serving a (new) flow at `now`: counted, and moved
    /// to the back of the empty list as empty since `now`, so that it is not taken
    /// again before its packet arrives (or, if the packet is refused, before `idle`).
    fn restart(&mut self, t: usize, c: u32, now: Instant) {
        self.pools[t].stats.created += 1;
        if !self.instances[c as usize].busy {
            self.unlink(t, c);
            self.instances[c as usize].empty_since = Some(now);
            self.push_back(t, c);
        }
    }

    /// The queue of `class` became empty at `now` (no effect for a class that is not an
    /// instance, or is already empty).
    pub fn emptied(&mut self, now: Instant, class: ClassId) {
        let Some(t) = self.template_of(class) else {
            return;
        };
        let c = class.0;
        let inst = &mut self.instances[c as usize];
        if !inst.busy {
            return;
        }
        inst.busy = false;
        inst.empty_since = Some(now);
        self.pools[t].busy -= 1;
        self.push_back(t, c);
    }

    /// The queue of `class` holds packets again (no effect for a class that is not an
    /// instance, or is already busy).
    pub fn filled(&mut self, class: ClassId) {
        let Some(t) = self.template_of(class) else {
            return;
        };
        let c = class.0;
        if self.instances[c as usize].busy {
            return;
        }
        self.unlink(t, c);
        let inst = &mut self.instances[c as usize];
        inst.busy = true;
        inst.empty_since = None;
        let pool = &mut self.pools[t];
        pool.busy += 1;
        pool.stats.peak_busy = pool.stats.peak_busy.max(pool.busy);
    }

    /// What happened in the pool of template `template` so far.
    pub fn stats(&self, template: u32) -> PoolStats {
        self.pools[template as usize].stats
    }

    /// The pool `class` is an instance of.
    #[inline]
    fn template_of(&self, class: ClassId) -> Option<usize> {
        self.pools
            .iter()
            .position(|p| class.0.wrapping_sub(p.first) < p.count)
    }

    /// Appends instance `c` to the empty list of pool `t`.
    fn push_back(&mut self, t: usize, c: u32) {
        let pool = &mut self.pools[t];
        let i = c - pool.first;
        let tail = pool.tail;
        self.instances[c as usize].prev = tail;
        self.instances[c as usize].next = NIL;
        if tail == NIL {
            pool.head = i;
        } else {
            self.instances[(pool.first + tail) as usize].next = i;
        }
        pool.tail = i;
    }

    /// Removes instance `c` from the empty list of pool `t` (where it must be).
    fn unlink(&mut self, t: usize, c: u32) {
        let pool = &mut self.pools[t];
        let Instance { prev, next, .. } = self.instances[c as usize];
        if prev == NIL {
            pool.head = next;
        } else {
            self.instances[(pool.first + prev) as usize].next = next;
        }
        if next == NIL {
            pool.tail = prev;
        } else {
            self.instances[(pool.first + next) as usize].prev = prev;
        }
    }
}

/// Whether an instance may be taken for a new flow at `now`: empty, and either never
/// used or empty for at least `idle`.
#[inline]
fn expired(inst: &Instance, now: Instant, idle: Duration) -> bool {
    !inst.busy && inst.empty_since.is_none_or(|t| now.since(t) >= idle)
}

/// The pool of template `t`, its instances linked in id order as never used.
fn pool(t: &Template, instances: &mut [Instance]) -> Pool {
    let first = t.first.0;
    for i in 0..t.count {
        let inst = &mut instances[(first + i) as usize];
        inst.prev = if i == 0 { NIL } else { i - 1 };
        inst.next = if i + 1 == t.count { NIL } else { i + 1 };
    }
    Pool {
        first,
        count: t.count,
        idle: t.idle,
        head: 0,
        tail: t.count - 1,
        busy: 0,
        stats: PoolStats::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hierarchy::{ClassSpec, LinkSpec, PerFlow};
    use crate::units::Rate;

    fn tree(max_flows: u32, idle_ms: u64) -> ClassTree {
        let mut web = ClassSpec::new("web", None);
        web.per_flow = Some(PerFlow {
            max_flows,
            idle: Duration::from_millis(idle_ms),
        });
        let link = LinkSpec {
            name: "link".into(),
            rate: Rate::from_mbit(10),
            origin: None,
        };
        ClassTree::build(link, vec![ClassSpec::new("bulk", None), web]).unwrap()
    }

    fn ms(n: u64) -> Instant {
        Instant::from_millis(n)
    }

    /// Two instances (classes 2 and 3), idle 10 ms, traced by hand.
    #[test]
    fn instances_are_handed_out_retired_and_shared() {
        let t = tree(2, 10);
        assert_eq!(t.templates()[0].first, ClassId(2));
        let mut f = FlowTable::new(&t);
        // Flow 7 takes the first instance; a second packet finds it.
        assert_eq!(f.classify(ms(0), 0, 7), Assigned::New(ClassId(2)));
        f.filled(ClassId(2));
        assert_eq!(f.classify(ms(1), 0, 7), Assigned::Existing(ClassId(2)));
        // Flow 8 takes the other; flow 9 finds none free and shares by its hash.
        assert_eq!(f.classify(ms(1), 0, 8), Assigned::New(ClassId(3)));
        f.filled(ClassId(3));
        let shared = f.classify(ms(2), 0, 9);
        assert!(matches!(shared, Assigned::Shared(c) if c == ClassId(2) || c == ClassId(3)));
        // Flow 7 empties at 5 ms: still its own at 14 ms (9 ms idle), not free for 9.
        f.emptied(ms(5), ClassId(2));
        assert!(matches!(f.classify(ms(14), 0, 9), Assigned::Shared(_)));
        assert_eq!(f.classify(ms(14), 0, 7), Assigned::Existing(ClassId(2)));
        // At 15 ms it has been empty 10 ms: flow 9 takes it, flow 7 is retired.
        assert_eq!(f.classify(ms(15), 0, 9), Assigned::New(ClassId(2)));
        f.filled(ClassId(2));
        // Flow 8 empties at 20 ms and comes back at 40 ms: retired, restarted in place.
        f.emptied(ms(20), ClassId(3));
        assert_eq!(f.classify(ms(40), 0, 8), Assigned::New(ClassId(3)));
        // Flow 7 comes back: no instance free (3 was just restarted).
        assert!(matches!(f.classify(ms(41), 0, 7), Assigned::Shared(_)));
        let s = f.stats(0);
        assert_eq!(
            (s.created, s.retired, s.shared_packets, s.peak_busy),
            (4, 2, 3, 2)
        );
    }

    /// A refused first packet leaves the instance empty since the assignment: it is
    /// taken again only after `idle`, oldest empty first.
    #[test]
    fn oldest_empty_instance_first() {
        let t = tree(3, 5);
        let mut f = FlowTable::new(&t);
        let (a, b, c) = (ClassId(2), ClassId(3), ClassId(4));
        for (key, class) in [(1, a), (2, b), (3, c)] {
            assert_eq!(f.classify(ms(0), 0, key), Assigned::New(class));
            f.filled(class);
        }
        f.emptied(ms(3), b);
        f.emptied(ms(1), c);
        f.emptied(ms(2), a);
        // Empty order b (3 ms), c (1 ms), a (2 ms): the list is by emptying, b first.
        assert_eq!(f.classify(ms(8), 0, 4), Assigned::New(b));
        assert_eq!(f.classify(ms(8), 0, 5), Assigned::New(c));
        assert_eq!(f.classify(ms(8), 0, 6), Assigned::New(a));
        // None filled: each is empty since 8 ms now.
        assert!(matches!(f.classify(ms(12), 0, 7), Assigned::Shared(_)));
        assert_eq!(f.classify(ms(13), 0, 7), Assigned::New(b));
    }

    #[test]
    fn a_tree_without_templates_has_an_empty_table() {
        let f = FlowTable::new(&ClassTree::flat(Rate::from_mbit(1), 3));
        assert!(f.is_empty());
    }
}
