//! The H-PFQ engine with WF2Q+ servers (Bennett and Zhang's hierarchical packet fair
//! queueing), shared by [`Wf2q`](super::Wf2q) (one level: every leaf under the root) and
//! [`Wf2q::hierarchical`](super::Wf2q::hierarchical) (the class tree, H-WF2Q+).
//!
//! Every class with children runs a [`Server`] among them. Every backlogged class other
//! than the root holds a *logical queue* of one packet, its *head*: for a leaf the first
//! packet of its queue, for an interior class the head of the child its server chose.
//! The head's tags `(S, F)`, in the parent's virtual time, are what the parent orders
//! the class by. Tags come from a [`Line`] of slope `r_i` anchored in the parent's
//! virtual time: `S = line(w_i)`, `F = line(w_i + L)` with `w_i` the bytes the class has
//! served and `L` the head's length. While the class stays backlogged, the next head
//! starts where the last finished (`S = F_prev`); when it turns backlogged again, the line
//! is re-anchored at the parent's virtual time if that is later (`S = max(F_prev, V_p)`).
//!
//! A class whose packet is *in service* (dequeued, and its transmission not known to
//! have ended) still holds it in its logical queue, as in Bennett and Zhang: its start
//! tag keeps counting in its parent's `min S`, an arrival to it does not make it
//! backlogged anew (its next head continues with `S = F_prev`), and its parent does not
//! choose again before the transmission ends.
//!
//! * **Arrival** to an idle leaf: the leaf's head is the packet; it is offered to its
//!   parent's server. Every ancestor that was idle gets the head too (its server has
//!   only that child to choose) and is offered to its own parent, up to the first
//!   ancestor that was already backlogged or in service: that one keeps its head until
//!   it leaves.
//! * **Dequeue**: the root's server chooses among its children; the head of the chosen
//!   child leaves. Every class on its path is withdrawn from its parent's server, its
//!   `w_i` grows by `L`, and it is in service. A server's `W` counts the bytes of the
//!   packet in service as the link sends them at its rate (see `Engine::work`), so the
//!   parent's `V` advances by `L / r_p` over the transmission, not at once.
//! * **Idle**: a server whose class has no child offered and none in service starts its
//!   next busy period afresh when a child turns backlogged ([`Server::restart`]).
//! * **End of service and re-selection** (Bennett and Zhang's RESET-PATH and
//!   RESTART-NODE): the path in service is refilled bottom-up, leaf first, each class's
//!   server choosing a new head among its children. It runs at the next dequeue, or at
//!   the first arrival at least `L / C` after the dequeue (the transmission time at the
//!   link rate; the engine does not know a port's per-packet overhead), whichever comes
//!   first, so every choice sees the arrivals up to the end of the transmission before.
//!
//! Cost per packet: O(depth · log k), `k` the largest number of children of one class.

use std::collections::VecDeque;

use super::line::Line;
use super::server::Server;
use crate::hierarchy::{ClassId, ClassTree};
use crate::sched::{Dequeued, Enqueue, Packet, PollAt};
use crate::units::{Bytes, Instant, Rate};

/// No class.
const NONE: u32 = u32::MAX;
/// The root's index.
const ROOT: usize = 0;

/// Above this virtual time (ns) a server moves its time origin (see the module docs of
/// [`super`]): 2^62 ns, 146 years of virtual time.
const REBASE_AT: u64 = 1 << 62;

/// The shape the engine schedules over: each class's parent and rate.
#[derive(Clone, Debug)]
pub(crate) struct Topology {
    /// Parent of every class, `None` for the root and for classes left out (interior
    /// classes of a flat topology).
    pub(crate) parent: Vec<Option<ClassId>>,
    /// Rate of every class, by [`ClassId::index`]; the root's is the link rate.
    pub(crate) rate: Vec<Rate>,
}

/// One class's state: everything a packet's path touches per class, together.
#[derive(Debug)]
struct Node<P> {
    /// The class's queue (leaves only).
    queue: VecDeque<P>,
    /// Tag line in the parent's virtual time (x: virtual ns, y: bytes).
    tag: Line,
    /// `w_i`: bytes served in all.
    served: u64,
    /// Packets queued in the subtree (the packet in service excluded).
    backlog: u64,
    /// Parent, `NONE` for the root and for classes left out of the topology.
    parent: u32,
    /// Position among the parent's children.
    slot: u32,
    /// The leaf whose first packet is the class's head, or `NONE`.
    head: u32,
    /// Whether the class is on the path of the packet in service.
    in_service: bool,
    is_leaf: bool,
}

/// The engine. See the [module docs](self).
#[derive(Debug)]
pub(crate) struct Engine<P> {
    nodes: Vec<Node<P>>,
    /// Children of class `n`: `kids[first_kid[n]..first_kid[n + 1]]`, by slot.
    first_kid: Vec<u32>,
    kids: Vec<u32>,
    rate: Vec<Rate>,
    servers: Vec<Server>,
    /// The leaf of the packet in service, or `NONE`.
    pending: u32,
    /// When the packet in service was dequeued, and its length in bytes.
    pending_at: Instant,
    pending_len: u64,
    /// When the packet in service ends at the link rate.
    pending_until: Instant,
    /// The latest instant seen.
    now: Instant,
    /// Virtual-time rebases performed so far.
    rebases: u64,
}

impl<P: Packet> Engine<P> {
    /// An engine for `tree` scheduled over `topo`.
    pub(crate) fn new(tree: &ClassTree, topo: Topology) -> Engine<P> {
        let n = tree.len();
        let mut slot = vec![0u32; n];
        let mut children = vec![0u32; n];
        for (c, p) in topo.parent.iter().enumerate() {
            if let Some(p) = p {
                slot[c] = children[p.index()];
                children[p.index()] += 1;
            }
        }
        let mut first_kid = Vec::with_capacity(n + 1);
        first_kid.push(0u32);
        for k in &children {
            first_kid.push(first_kid[first_kid.len() - 1] + k);
        }
        let mut kids = vec![NONE; first_kid[n] as usize];
        for (c, p) in topo.parent.iter().enumerate() {
            if let Some(p) = p {
                kids[(first_kid[p.index()] + slot[c]) as usize] = c as u32;
            }
        }
        let servers = (0..n)
            .map(|c| Server::new(topo.rate[c], children[c] as usize))
            .collect();
        let nodes = (0..n)
            .map(|c| Node {
                queue: VecDeque::new(),
                tag: Line::new(topo.rate[c], 0, 0),
                served: 0,
                backlog: 0,
                parent: topo.parent[c].map_or(NONE, |p| p.0),
                slot: slot[c],
                head: NONE,
                in_service: false,
                is_leaf: tree.is_leaf(ClassId(c as u32)),
            })
            .collect();
        Engine {
            nodes,
            first_kid,
            kids,
            rate: topo.rate,
            servers,
            pending: NONE,
            pending_at: Instant::ZERO,
            pending_len: 0,
            pending_until: Instant::ZERO,
            now: Instant::ZERO,
            rebases: 0,
        }
    }

    /// The rate the engine guarantees `class`, if it takes part in the scheduling.
    pub(crate) fn rate_of(&self, class: ClassId) -> Option<Rate> {
        let c = class.index();
        let node = self.nodes.get(c)?;
        (c == ROOT || node.parent != NONE).then(|| self.rate[c])
    }

    /// Bytes `class` has served in all.
    pub(crate) fn served(&self, class: ClassId) -> Option<u64> {
        self.nodes.get(class.index()).map(|n| n.served)
    }

    /// Virtual-time rebases performed so far.
    pub(crate) fn rebases(&self) -> u64 {
        self.rebases
    }

    /// Checks the engine's bookkeeping: subtree backlogs add up; a class holds a head
    /// exactly when it is offered to its parent's server; a head is a backlogged leaf of
    /// the class's subtree, and an interior class's head is the head of one of its
    /// children; every backlogged class without a head is on the path of the packet in
    /// service, and only those classes are marked in service.
    pub(crate) fn check_invariants(&self) -> Result<(), String> {
        let on_pending_path = |c: usize| {
            let mut m = self.pending;
            while m != NONE {
                if m as usize == c {
                    return true;
                }
                m = self.nodes[m as usize].parent;
            }
            false
        };
        for (c, node) in self.nodes.iter().enumerate() {
            if c != ROOT && node.parent == NONE {
                continue;
            }
            let kids = &self.kids[self.first_kid[c] as usize..self.first_kid[c + 1] as usize];
            let below: u64 = if node.is_leaf {
                node.queue.len() as u64
            } else {
                kids.iter().map(|&k| self.nodes[k as usize].backlog).sum()
            };
            if below != node.backlog {
                return Err(format!(
                    "class {c}: backlog {} but {below} below",
                    node.backlog
                ));
            }
            if c == ROOT {
                continue;
            }
            let offered = self.servers[node.parent as usize].holds(node.slot);
            let h = node.head;
            if offered != (h != NONE) {
                return Err(format!(
                    "class {c}: head {h}, offered to its parent: {offered}"
                ));
            }
            if node.in_service != on_pending_path(c) {
                return Err(format!("class {c}: in-service flag {}", node.in_service));
            }
            if h == NONE {
                if node.backlog > 0 && !node.in_service {
                    return Err(format!("class {c} is backlogged without a head"));
                }
                continue;
            }
            if node.in_service {
                return Err(format!("class {c} is in service and has a head"));
            }
            if self.nodes[h as usize].queue.is_empty() {
                return Err(format!("class {c}: head leaf {h} is empty"));
            }
            let mut m = h;
            while m != NONE && m as usize != c {
                m = self.nodes[m as usize].parent;
            }
            if m == NONE {
                return Err(format!("class {c}: head leaf {h} is not below it"));
            }
            if !node.is_leaf && !kids.iter().any(|&k| self.nodes[k as usize].head == h) {
                return Err(format!("class {c}: no child holds its head {h}"));
            }
        }
        Ok(())
    }

    /// The child of `n` at `slot`.
    #[inline]
    fn kid(&self, n: usize, slot: u32) -> usize {
        self.kids[self.first_kid[n] as usize + slot as usize] as usize
    }

    /// Length of the first packet of `leaf`.
    #[inline]
    fn head_len(&self, leaf: usize) -> u64 {
        let pkt = self.nodes[leaf]
            .queue
            .front()
            .expect("a head leaf is backlogged");
        u64::from(pkt.wire_len())
    }

    /// The bytes class `n` has sent by now, its server's `W`: [`Engine::served`], less
    /// the part of the packet in service that the link has not sent yet at its rate, if
    /// the packet is `n`'s.
    #[inline]
    fn work(&self, n: usize) -> u64 {
        let node = &self.nodes[n];
        if self.pending == NONE || !(n == ROOT || node.in_service) {
            return node.served;
        }
        let elapsed = self.now.since(self.pending_at);
        let sent = self.rate[ROOT].bytes_in(elapsed).0.min(self.pending_len);
        node.served - (self.pending_len - sent)
    }

    /// `n`'s server, brought up to date, chooses its eligible child with the smallest
    /// finish tag.
    fn choose(&mut self, n: usize) -> usize {
        let work = self.work(n);
        let v = self.servers[n].advance(work);
        if v >= REBASE_AT {
            self.rebase(n, v);
        }
        let slot = self.servers[n]
            .peek()
            .expect("a backlogged class has a child with a head");
        self.kid(n, slot)
    }

    /// Gives the backlogged, headless class `n` (not the root) a head and offers it to
    /// its parent. A class that turns backlogged (`activate`) is re-anchored at its
    /// parent's virtual time if that is past its last finish tag; otherwise its head
    /// starts where the last one finished.
    fn give_head(&mut self, n: usize, activate: bool) {
        let leaf = if self.nodes[n].is_leaf {
            n
        } else {
            let k = self.choose(n);
            self.nodes[k].head as usize
        };
        let len = self.head_len(leaf);
        let p = self.nodes[n].parent as usize;
        let work = self.work(p);
        let v = if activate {
            self.servers[p].restart(work);
            Some(self.servers[p].advance(work))
        } else {
            None
        };
        let node = &mut self.nodes[n];
        node.head = leaf as u32;
        if let Some(v) = v
            && v >= node.tag.at(node.served)
        {
            node.tag = node.tag.moved(v, node.served);
        }
        let s = node.tag.at(node.served);
        let f = node.tag.at(node.served + len);
        let slot = node.slot;
        self.servers[p].offer(slot, s, f, work);
    }

    /// Moves the time origin of `n`'s server back so that its virtual time `v` and its
    /// children's tags stay far from `u64::MAX`; see the module docs of [`super`].
    fn rebase(&mut self, n: usize, v: u64) {
        let work = self.work(n);
        let offset = self.servers[n].rebase(work, v);
        for s in 0..self.servers[n].slots() as u32 {
            let k = &mut self.nodes[self.kids[self.first_kid[n] as usize + s as usize] as usize];
            let at = k.tag.at(k.served).saturating_sub(offset);
            k.tag = k.tag.moved(at, k.served);
        }
        self.rebases += 1;
    }

    /// Ends the service of the packet in service: re-selects heads along its path,
    /// bottom-up. A class of the path left without packets is idle.
    fn refill(&mut self) {
        let mut m = core::mem::replace(&mut self.pending, NONE);
        while m != NONE && m as usize != ROOT {
            let c = m as usize;
            let node = &mut self.nodes[c];
            node.in_service = false;
            let (p, backlogged) = (node.parent, node.backlog > 0);
            self.servers[p as usize].set_busy(false);
            if backlogged {
                self.give_head(c, false);
            }
            m = p;
        }
    }

    /// Adds one packet to (`add`) or takes one from the backlog of `leaf` and its
    /// ancestors.
    #[inline]
    fn count(&mut self, leaf: usize, add: bool) {
        let mut m = leaf as u32;
        while m != NONE {
            let node = &mut self.nodes[m as usize];
            if add {
                node.backlog += 1;
            } else {
                node.backlog -= 1;
            }
            m = node.parent;
        }
    }

    /// See [`crate::sched::Scheduler::enqueue`].
    pub(crate) fn enqueue(&mut self, now: Instant, class: ClassId, pkt: P) -> Enqueue<P> {
        let c = class.index();
        debug_assert!(
            self.nodes[c].is_leaf && self.nodes[c].parent != NONE,
            "the qdisc offers leaves only"
        );
        self.now = now;
        if self.pending != NONE && now >= self.pending_until {
            self.refill();
        }
        self.nodes[c].queue.push_back(pkt);
        self.count(c, true);
        if self.nodes[c].backlog > 1 || self.nodes[c].in_service {
            return Enqueue::Queued;
        }
        let mut m = c;
        loop {
            self.give_head(m, true);
            let p = self.nodes[m].parent as usize;
            let parent = &self.nodes[p];
            if p == ROOT || parent.backlog > 1 || parent.in_service {
                return Enqueue::Queued;
            }
            m = p;
        }
    }

    /// See [`crate::sched::Scheduler::dequeue`].
    pub(crate) fn dequeue(&mut self, now: Instant) -> Option<Dequeued<P>> {
        self.now = now;
        if self.pending != NONE {
            self.refill();
        }
        if self.nodes[ROOT].backlog == 0 {
            return None;
        }
        let top = self.choose(ROOT);
        let leaf = self.nodes[top].head as usize;
        let pkt = self.nodes[leaf]
            .queue
            .pop_front()
            .expect("a head leaf is backlogged");
        let len = u64::from(pkt.wire_len());
        let mut m = leaf;
        while m != ROOT {
            let node = &mut self.nodes[m];
            node.head = NONE;
            node.in_service = true;
            node.served += len;
            let (p, slot) = (node.parent as usize, node.slot);
            self.servers[p].withdraw(slot);
            self.servers[p].set_busy(true);
            m = p;
        }
        self.nodes[ROOT].served += len;
        self.count(leaf, false);
        self.pending = leaf as u32;
        self.pending_at = now;
        self.pending_len = len;
        self.pending_until = now.saturating_add(self.rate[ROOT].tx_time(Bytes(len)));
        Some(Dequeued {
            pkt,
            class: ClassId(leaf as u32),
        })
    }

    /// See [`crate::sched::Scheduler::poll_at`].
    pub(crate) fn poll_at(&self) -> PollAt {
        PollAt::work_conserving(self.nodes[ROOT].backlog > 0)
    }

    /// See [`crate::sched::Scheduler::remove_behind_head`]: the head and every tag stay
    /// while the leaf keeps a packet.
    pub(crate) fn remove_behind_head(&mut self, class: ClassId) -> Option<P> {
        let c = class.index();
        let node = self.nodes.get_mut(c).filter(|n| n.parent != NONE)?;
        if node.queue.len() < 2 {
            return self.remove_newest(class);
        }
        let pkt = node.queue.remove(1)?;
        self.count(c, false);
        Some(pkt)
    }

    /// See [`crate::sched::Scheduler::remove_newest`]. A head removed this way was never
    /// served: every class whose head it was is withdrawn and, if still backlogged, gets
    /// a new head with the same start tag.
    pub(crate) fn remove_newest(&mut self, class: ClassId) -> Option<P> {
        let c = class.index();
        let node = self.nodes.get_mut(c).filter(|n| n.parent != NONE)?;
        let pkt = node.queue.pop_back()?;
        let keeps_head = !node.queue.is_empty() || node.head == NONE;
        self.count(c, false);
        if keeps_head {
            return Some(pkt);
        }
        let mut top = c;
        while top != ROOT && self.nodes[top].head == c as u32 {
            let node = &mut self.nodes[top];
            node.head = NONE;
            let (p, slot) = (node.parent as usize, node.slot);
            self.servers[p].withdraw(slot);
            top = p;
        }
        let mut m = self.nodes[c].parent as usize;
        while m != top {
            if self.nodes[m].backlog > 0 {
                self.give_head(m, false);
            }
            m = self.nodes[m].parent as usize;
        }
        Some(pkt)
    }
}
