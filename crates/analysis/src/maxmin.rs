//! Weighted max-min fairness, flat and hierarchical.
//!
//! Follows §III of the HLS paper (`papers/001_…`):
//!
//! * [`max_min_fair`] is Algorithm 1: the fair share `f` of classes with requests `r_i`
//!   and weights `w_i` on a capacity `C`, by water filling. Each class gets
//!   `a_i = min(r_i, w_i f)`; `f` is infinite when all requests fit.
//! * [`hmm_fair`] is Algorithm 2 / Theorem 1: top-down, every interior class shares
//!   what it was allocated among its children with Algorithm 1, where the request of an
//!   interior class is the sum of its leaves' requests (Eq. 2) and the root is allocated
//!   `min(r_root, C)`.
//!
//! Rates are `f64` bit/s; an unbounded (greedy) request is `f64::INFINITY`.

use linkshare_core::hierarchy::{ClassId, ClassTree};

/// The result of Algorithm 1.
#[derive(Clone, Debug, PartialEq)]
pub struct FairShare {
    /// The fair share `f` (bit/s per unit of weight); `f64::INFINITY` when every request
    /// is satisfied.
    pub share: f64,
    /// `a_i = min(r_i, w_i f)` for every class, in input order (bit/s).
    pub allocation: Vec<f64>,
}

/// Algorithm 1: the weighted max-min fair share of `capacity` among classes with the
/// given `requests` and `weights` (same length; weights positive, requests non-negative,
/// possibly infinite).
pub fn max_min_fair(capacity: f64, requests: &[f64], weights: &[f64]) -> FairShare {
    assert_eq!(requests.len(), weights.len(), "one weight per request");
    let total: f64 = requests.iter().sum();
    if total <= capacity {
        return FairShare {
            share: f64::INFINITY,
            allocation: requests.to_vec(),
        };
    }
    // Water filling: the set of satisfied classes only grows, so this ends after at most
    // `n + 1` passes; the same set gives bit-identical `f`.
    let mut share = 0.0;
    for _ in 0..=requests.len() {
        let (mut satisfied_rate, mut open_weight) = (0.0, 0.0);
        for (&r, &w) in requests.iter().zip(weights) {
            if r <= w * share {
                satisfied_rate += r;
            } else {
                open_weight += w;
            }
        }
        let next = (capacity - satisfied_rate) / open_weight;
        if next == share {
            break;
        }
        share = next;
    }
    let allocation = requests
        .iter()
        .zip(weights)
        .map(|(&r, &w)| r.min(w * share))
        .collect();
    FairShare { share, allocation }
}

/// A hierarchical max-min fair allocation (Theorem 1).
#[derive(Clone, Debug, PartialEq)]
pub struct HmmAllocation {
    /// Request of every class by [`ClassId`] index (bit/s): leaves as given, interior
    /// classes the sum of their children (Eq. 2).
    pub request: Vec<f64>,
    /// Allocation of every class by [`ClassId`] index (bit/s); the root's is
    /// `min(r_root, C)`.
    pub rate: Vec<f64>,
    /// Fair share `f_k` of every class with children (bit/s per unit of weight);
    /// `f64::INFINITY` where all children are satisfied, `None` for leaves.
    pub share: Vec<Option<f64>>,
}

/// Algorithm 2: the HMM-fair allocation of the link among the leaves of `tree`, whose
/// requests are `leaf_request[class.index()]` (bit/s, `f64::INFINITY` for a greedy
/// class; entries of interior classes are ignored). Weights are the classes' weights
/// ([`linkshare_core::hierarchy::Class::weight`]).
pub fn hmm_fair(tree: &ClassTree, leaf_request: &[f64]) -> HmmAllocation {
    let n = tree.len();
    assert_eq!(leaf_request.len(), n, "one request per class id");
    let classes = tree.classes();
    let mut request = vec![0.0; n];
    // A child may be declared before its parent, so ids say nothing about depth: visit
    // classes deepest first to sum requests bottom-up (and in reverse to allocate).
    let mut by_depth: Vec<ClassId> = classes.iter().map(|c| c.id).collect();
    by_depth.sort_by_key(|&id| std::cmp::Reverse(classes[id.index()].depth));
    for &id in &by_depth {
        let c = &classes[id.index()];
        if c.children.is_empty() {
            request[id.index()] = if c.parent.is_some() {
                leaf_request[id.index()]
            } else {
                0.0
            };
        }
        if let Some(p) = c.parent {
            request[p.index()] += request[id.index()];
        }
    }
    let mut rate = vec![0.0; n];
    let mut share = vec![None; n];
    rate[0] = request[0].min(tree.link_rate().bps() as f64);
    for &id in by_depth.iter().rev() {
        let c = &classes[id.index()];
        if c.children.is_empty() {
            continue;
        }
        let reqs: Vec<f64> = c.children.iter().map(|k| request[k.index()]).collect();
        let weights: Vec<f64> = c
            .children
            .iter()
            .map(|k| f64::from(classes[k.index()].weight()))
            .collect();
        let fair = max_min_fair(rate[id.index()], &reqs, &weights);
        share[id.index()] = Some(fair.share);
        for (k, a) in c.children.iter().zip(fair.allocation) {
            rate[k.index()] = a;
        }
    }
    HmmAllocation {
        request,
        rate,
        share,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use linkshare_core::hierarchy::{ClassSpec, LinkSpec};
    use linkshare_core::testing::hls_fig1;
    use linkshare_core::units::Rate;
    use proptest::prelude::*;

    const INF: f64 = f64::INFINITY;

    fn alloc_mbit(tree: &ClassTree, greedy: &[&str]) -> Vec<(String, f64)> {
        let mut req = vec![0.0; tree.len()];
        for name in greedy {
            req[tree.id_of(name).unwrap().index()] = INF;
        }
        let a = hmm_fair(tree, &req);
        tree.classes()
            .iter()
            .map(|c| (c.name().to_owned(), a.rate[c.id.index()] / 1e6))
            .collect()
    }

    fn close(got: &[(String, f64)], want: &[(&str, f64)]) {
        for (name, w) in want {
            let g = got.iter().find(|(n, _)| n == name).unwrap().1;
            assert!((g - w).abs() < 1e-6, "{name}: got {g} Mbit/s, want {w}");
        }
    }

    #[test]
    fn flat_water_filling() {
        // C = 10, requests 2, 8, 8 with equal weights: 2 is satisfied, the others get 4.
        let f = max_min_fair(10.0, &[2.0, 8.0, 8.0], &[1.0, 1.0, 1.0]);
        assert_eq!(f.share, 4.0);
        assert_eq!(f.allocation, vec![2.0, 4.0, 4.0]);
        // Weights 1:3, both greedy: 2.5 and 7.5.
        let f = max_min_fair(10.0, &[INF, INF], &[1.0, 3.0]);
        assert_eq!(f.allocation, vec![2.5, 7.5]);
        // Everything fits: infinite share.
        let f = max_min_fair(10.0, &[1.0, 2.0], &[1.0, 1.0]);
        assert_eq!(f.share, INF);
    }

    #[test]
    fn hls_fig1_all_greedy_gets_guarantees() {
        let t = hls_fig1();
        close(
            &alloc_mbit(&t, &["A1", "A2", "B1", "B2", "C"]),
            &[
                ("A1", 100.0),
                ("A2", 200.0),
                ("B1", 100.0),
                ("B2", 200.0),
                ("C", 400.0),
            ],
        );
    }

    #[test]
    fn hls_exp2_c_idle_splits_between_a1_and_b2() {
        // §VIII-C: A1, B2 and C greedy share 3:3:4 (A and B each pass all of their
        // share to their only active leaf); with C idle, A1 = B2 = 500 Mbit/s.
        let t = hls_fig1();
        close(
            &alloc_mbit(&t, &["A1", "B2", "C"]),
            &[("A1", 300.0), ("B2", 300.0), ("C", 400.0)],
        );
        close(
            &alloc_mbit(&t, &["A1", "B2"]),
            &[("A1", 500.0), ("B2", 500.0)],
        );
    }

    #[test]
    fn satisfied_leaves_free_capacity_for_siblings_first() {
        // A1 asks for 50 of its 100; A2 (greedy) takes the rest of A's 300 first.
        let t = hls_fig1();
        let mut req = vec![0.0; t.len()];
        req[t.id_of("A1").unwrap().index()] = 50e6;
        for n in ["A2", "B1", "B2", "C"] {
            req[t.id_of(n).unwrap().index()] = INF;
        }
        let a = hmm_fair(&t, &req);
        let r = |n: &str| a.rate[t.id_of(n).unwrap().index()] / 1e6;
        assert!((r("A1") - 50.0).abs() < 1e-9);
        assert!((r("A2") - 250.0).abs() < 1e-9);
        assert!((r("B1") - 100.0).abs() < 1e-9);
    }

    proptest! {
        /// The defining rules of HMM fairness (§III-B) hold for random requests on a
        /// random two-level tree: allocations never exceed requests, a parent's allocation
        /// is the sum of its children's, (R2) the link carries min(sum r, C), and (R1) an
        /// unsatisfied class gets at least as much per weight as any sibling.
        #[test]
        fn rules_r1_r2_hold(
            shape in proptest::collection::vec(0usize..4, 1..6),
            weights in proptest::collection::vec(1u32..20, 30),
            reqs in proptest::collection::vec(prop_oneof![Just(INF), 0.0f64..400e6], 30),
        ) {
            let mut specs = Vec::new();
            let mut w = weights.iter().cycle();
            for (i, &kids) in shape.iter().enumerate() {
                let mut s = ClassSpec::new(&format!("p{i}"), None);
                s.weight = w.next().copied();
                specs.push(s);
                for k in 0..kids {
                    let mut s = ClassSpec::new(&format!("p{i}c{k}"), Some(&format!("p{i}")));
                    s.weight = w.next().copied();
                    specs.push(s);
                }
            }
            let t = ClassTree::build(LinkSpec { name: "root".into(), rate: Rate::from_gbit(1), origin: None }, specs).unwrap();
            let a = hmm_fair(&t, &reqs[..t.len()]);
            let cap = 1e9;
            let leaf_sum: f64 = t.leaves().iter().map(|l| a.rate[l.index()]).sum();
            let req_sum: f64 = t.leaves().iter().map(|l| reqs[l.index()]).sum();
            prop_assert!((leaf_sum - req_sum.min(cap)).abs() <= 1e-6 * cap);
            for c in t.classes() {
                let i = c.id.index();
                prop_assert!(a.rate[i] <= a.request[i] * (1.0 + 1e-12) + 1e-6);
                if !c.children.is_empty() && c.parent.is_some() {
                    let sum: f64 = c.children.iter().map(|k| a.rate[k.index()]).sum();
                    prop_assert!((sum - a.rate[i]).abs() <= 1e-6 * cap);
                }
                for &j in &c.children {
                    let (aj, wj) = (a.rate[j.index()], f64::from(t.get(j).weight()));
                    if aj < a.request[j.index()] * (1.0 - 1e-9) {
                        for &k in &c.children {
                            let (ak, wk) = (a.rate[k.index()], f64::from(t.get(k).weight()));
                            prop_assert!(aj / wj >= ak / wk - 1e-6, "R1: {aj}/{wj} < {ak}/{wk}");
                        }
                    }
                }
            }
        }
    }
}
