//! Class trees of a given shape for cost studies: every class without parameters, so
//! that each discipline gives it its defaults (equal weights; for HTB, tc's rates).

use crate::hierarchy::{ClassSpec, ClassTree, LinkSpec};
use crate::units::Rate;

/// A tree of `n` leaves under a link of `rate`: the root's children split the leaves in
/// halves, recursively, so that the tree is binary and `ceil(log2 n)` levels deep —
/// except that at depth `max_depth` a class takes all the leaves of its part as its
/// children (HTB allows 8 levels, the link included: `max_depth` 6 puts the leaves at
/// depth 7). Leaves are named `c<k>` like the interior classes; [`ClassTree::leaves`]
/// lists them.
pub fn binary_tree(rate: Rate, n: usize, max_depth: u32) -> ClassTree {
    /// The classes of `n` leaves under `parent`, at `depth`.
    fn split(specs: &mut Vec<ClassSpec>, parent: Option<&str>, n: usize, depth: u32, max: u32) {
        if depth == max {
            for _ in 0..n {
                let name = format!("c{}", specs.len());
                specs.push(ClassSpec::new(&name, parent));
            }
            return;
        }
        for part in [n.div_ceil(2), n / 2] {
            let name = format!("c{}", specs.len());
            specs.push(ClassSpec::new(&name, parent));
            // A part of one leaf is that leaf, not an interior class above it.
            if part > 1 {
                split(specs, Some(&name), part, depth + 1, max);
            }
        }
    }
    let mut specs = Vec::new();
    if n == 1 {
        specs.push(ClassSpec::new("c0", None));
    } else {
        split(&mut specs, None, n, 0, max_depth);
    }
    let link = LinkSpec {
        name: "link".into(),
        rate,
        origin: None,
    };
    ClassTree::build(link, specs).expect("binary trees are valid")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A perfect binary tree of N leaves has 2N - 1 classes with the root (the HLS
    /// paper's count), N - 1 of them interior.
    #[test]
    fn a_perfect_binary_tree_has_2n_minus_1_classes() {
        for n in [2, 8, 128] {
            let t = binary_tree(Rate::from_gbit(10), n, 32);
            assert_eq!(t.leaves().len(), n);
            assert_eq!(t.len(), 2 * n - 1, "classes with the root");
        }
        // Capped: depth 6, the leaves under the last binary level.
        assert_eq!(
            binary_tree(Rate::from_gbit(10), 1000, 6).leaves().len(),
            1000
        );
        // 128 leaves fit HTB's eight levels (the link and seven below) exactly.
        let t = binary_tree(Rate::from_gbit(10), 128, 6);
        assert_eq!(t.len(), 255);
        assert_eq!(binary_tree(Rate::from_gbit(10), 1, 6).leaves().len(), 1);
    }
}
