//! H-WF2Q+: hierarchical WF2Q+ (Bennett and Zhang, "Hierarchical packet fair queueing
//! algorithms", SIGCOMM 1996 / ToN 1997, H-PFQ with WF2Q+ servers), the baseline of the
//! H-FSC paper's Fig. 11.
//!
//! # The algorithm
//!
//! Every class with children runs a WF2Q+ server ([`super::wf2q`]) among them, with its
//! own system virtual time `V_n`, which advances by `W_n / r_n` with the bytes `W_n` the
//! class sends (`r_n` its rate; the link rate `C` at the root) and jumps to the smallest
//! start tag of its backlogged children. Every backlogged class other than the root holds
//! a *logical queue* of one packet, its head: a leaf's first packet, or the head of the
//! child its server chose. The class is tagged in its parent's virtual time with its
//! head's length, exactly as a WF2Q+ leaf: `S = F_prev` while it stays backlogged,
//! `S = max(F_prev, V_parent)` when it turns backlogged, `F = S + L / r`.
//!
//! * An arrival to an idle leaf makes it, and every ancestor that was idle, hold the new
//!   packet as head; the first ancestor that was already backlogged keeps the head it
//!   has (a class's choice is not revised before its head leaves).
//! * When the link asks for a packet, the root's server picks the eligible child
//!   (`S <= V_root`) with the smallest finish tag and sends its head. The logical queues
//!   on that packet's path empty; when the next packet is asked for, they are refilled
//!   bottom-up, each class's server choosing a new head among its children (Bennett and
//!   Zhang's RESET-PATH and RESTART-NODE).
//!
//! # Parameters
//!
//! * Rates: a class's [`rate`](crate::hierarchy::ClassSpec::rate) if given; otherwise its
//!   share by [`weight`](crate::hierarchy::Class::weight) of what its siblings with a rate
//!   leave free of their parent's rate: `floor((r_p − Σ explicit) · w_i / Σ w_j)` over the
//!   siblings without a rate; the root's rate is the link rate. A class whose share is
//!   zero is refused at construction. With rates that add up to their parent's, each
//!   class is guaranteed its rate and excess bandwidth is shared among backlogged
//!   siblings in proportion to their rates (the hierarchical weighted allocation).
//! * Curves, priorities, quanta and ceilings are ignored.
//!
//! Every server follows the timing rules of [`super::wf2q`]: a class whose packet is in
//! service keeps it as its head until the link has sent it (its parent's `V` advancing
//! as the bytes leave), and a class that goes idle starts its next busy period afresh.
//! Virtual times use the same integer representation (ns at each server's reference
//! rate, anchored curves, no drift, rebased past 2^62 ns); its precision and overflow
//! analysis applies to every server of the hierarchy, and so do its deviations.
//!
//! # Cost
//!
//! O(depth · log k) per packet, `k` the largest number of children of one class: an
//! arrival tags at most one class per level; a departure withdraws and re-selects one
//! class per level. No allocation after warm-up.
//!
//! It is built by [`Wf2q::hierarchical`](super::wf2q::Wf2q::hierarchical): the same engine
//! as flat WF2Q+, given the class tree instead of the leaves under the root.
