//! FSC, the Fair Service Curve scheduler of Stoica, Zhang and Ng (H-FSC paper §III-C on a
//! one-level hierarchy; paper 002, "FSC for best effort"): every session has a service
//! curve, and the link goes to the backlogged session with the smallest virtual time
//! `v_i = V_i^{-1}(w_i)`, where the virtual curve `V_i` is the session's curve anchored,
//! when the session turns backlogged, at the system virtual time
//! `vs = (v_min + v_max) / 2` of the backlogged sessions (Eq. 12).
//!
//! # Built on H-FSC
//!
//! FSC is exactly H-FSC's link-sharing criterion on a flat tree, without real-time
//! criterion and without upper limits, so [`Fsc`] is a thin wrapper around
//! [`Hfsc`] built for a flattened copy of the tree (see [`Fsc::new`]). Everything about
//! the virtual curves, `vs`, tie-breaking and cost is documented in [`super::hfsc`].
//!
//! # Parameters
//!
//! FSC is flat: **interior classes are ignored** (they are kept in the flattened tree as
//! idle placeholders so that class ids stay the same, and never hold packets). The curve
//! of each leaf is, in this order:
//!
//! 1. its `ls` curve;
//! 2. else its `rt` curve (FSC has one curve per session, so a scenario written for SCED
//!    runs unchanged);
//! 3. else `linear(rate)`;
//! 4. else `linear(share)`, its share by weight of the link rate among all leaves
//!    ([`crate::share::weight_share`]): `link rate · weight / (sum of the weights of all
//!    leaves)`, rounded down, at least 1 bit/s (H-FSC's default on the flattened tree).
//!
//! `ul`, `ceil` and every other field are ignored. Only the ratios of the curves matter:
//! multiplying every curve by the same factor changes nothing (paper 002 §2.2), which is
//! what makes FSC usable for best-effort traffic without admission control.
//!
//! # Non-punishment
//!
//! Selection is by virtual time, not by total service against real time as in SCED
//! ([`super::sced`]): a session that had the link alone and received far more than its
//! curve is not held back when another one arrives. The newcomer anchors its virtual
//! curve at `vs`, which is the first session's current virtual time, and from then on the
//! two share in the ratio of their curves.
//!
//! FSC is work-conserving: it never idles while it holds a packet.

use super::hfsc::Hfsc;
use super::{Dequeued, Dropped, Enqueue, Packet, PollAt, Scheduler};
use crate::curve::ServiceCurve;
use crate::hierarchy::{ClassId, ClassSpec, ClassTree, LinkSpec};
use crate::share::weight_share;
use crate::units::Instant;

/// The FSC scheduler. See the [module docs](self).
#[derive(Debug)]
pub struct Fsc<P> {
    inner: Hfsc<P>,
    /// The curve of each class by index; `None` for the root and interior classes.
    curves: Vec<Option<ServiceCurve>>,
}

impl<P: Packet> Fsc<P> {
    /// FSC for the leaves of `tree`, each with the curve chosen as the
    /// [module docs](self) say. Never fails: every leaf gets a nonzero curve.
    pub fn new(tree: &ClassTree) -> Fsc<P> {
        let curves = leaf_curves(tree);
        let specs = tree.classes()[1..]
            .iter()
            .map(|c| ClassSpec {
                name: c.spec.name.clone(),
                ls: curves[c.id.index()],
                origin: c.spec.origin.clone(),
                ..ClassSpec::default()
            })
            .collect();
        let root = tree.root();
        let link = LinkSpec {
            name: root.spec.name.clone(),
            rate: tree.link_rate(),
            origin: root.spec.origin.clone(),
        };
        let flat = ClassTree::build(link, specs)
            .expect("the classes of a valid tree, flattened and without rates, form a valid tree");
        let inner = Hfsc::new(&flat).expect("H-FSC accepts any tree without rt curves");
        Fsc { inner, curves }
    }

    /// The service curve of `class`, or `None` if it is not a leaf of the tree.
    pub fn curve(&self, class: ClassId) -> Option<ServiceCurve> {
        self.curves.get(class.index()).copied().flatten()
    }

    /// The virtual time `v_i` of a backlogged leaf (ns of virtual time, Eq. 12).
    pub fn virtual_time(&self, leaf: ClassId) -> Option<u64> {
        self.inner.virtual_time(leaf)
    }
}

/// The curve of every leaf by class index (`None` for the root and interior classes).
fn leaf_curves(tree: &ClassTree) -> Vec<Option<ServiceCurve>> {
    let weights: u64 = tree
        .leaves()
        .iter()
        .map(|&l| u64::from(tree.get(l).weight()))
        .sum();
    let link = tree.link_rate();
    tree.classes()
        .iter()
        .map(|c| {
            if !c.is_leaf() {
                return None;
            }
            let s = &c.spec;
            Some(s.ls.or(s.rt).unwrap_or_else(|| {
                ServiceCurve::linear(
                    s.rate
                        .unwrap_or_else(|| weight_share(link, c.weight(), weights)),
                )
            }))
        })
        .collect()
}

impl<P: Packet> Scheduler<P> for Fsc<P> {
    fn name(&self) -> &'static str {
        "fsc"
    }

    fn is_work_conserving(&self) -> bool {
        true
    }

    #[inline]
    fn enqueue(
        &mut self,
        now: Instant,
        class: ClassId,
        pkt: P,
        evicted: &mut Vec<Dropped<P>>,
    ) -> Enqueue<P> {
        self.inner.enqueue(now, class, pkt, evicted)
    }

    #[inline]
    fn dequeue(&mut self, now: Instant) -> Option<Dequeued<P>> {
        self.inner.dequeue(now)
    }

    #[inline]
    fn poll_at(&self, now: Instant) -> PollAt {
        self.inner.poll_at(now)
    }

    #[inline]
    fn remove_newest(&mut self, class: ClassId) -> Option<P> {
        self.inner.remove_newest(class)
    }

    fn resets_classes(&self) -> bool {
        true
    }

    #[inline]
    fn reset_class(&mut self, now: Instant, class: ClassId) {
        self.inner.reset_class(now, class);
    }

    #[inline]
    fn remove_behind_head(&mut self, class: ClassId) -> Option<P> {
        self.inner.remove_behind_head(class)
    }
}
