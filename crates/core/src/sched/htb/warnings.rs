//! The warnings tc users rely on: settings HTB accepts, as Linux does, that probably do
//! not do what their author meant. Each names the class and says how to fix it.
//!
//! * **quantum clamped**: a leaf without an explicit quantum whose `rate / r2q` falls
//!   outside [1000, 200000] bytes gets the nearer bound (Linux logs "quantum of class
//!   X is small/big. Consider r2q change.");
//! * **burst below one MTU**: an explicit `burst` (or `cburst`) smaller than `mtu` (the
//!   largest packet tc assumes, [`HtbParams::mtu`]): one full-size packet empties the
//!   bucket, so the class falls back to borrowing (or waits) and may not reach its rate
//!   (or ceil);
//! * **ceil below rate**: the class can never send faster than its ceil, so its rate is
//!   not assured;
//! * **children's rates above the parent's**: the assured rates of a class's children
//!   add up to more than its own rate (the link's rate for classes under the link), so
//!   HTB cannot assure them all at once.
//!
//! The last two are errors under every other discipline
//! ([`crate::hierarchy::guarantee_problems`]); HTB runs them as Linux does.

use super::config::{HtbParams, MAX_QUANTUM, MIN_QUANTUM, resolve};
use crate::hierarchy::{ClassId, ClassTree, ConfigError};
use crate::sched::class_problem;
use crate::units::{Bytes, Rate};

/// The warnings for `tree` under HTB with `params`, by class id; none when HTB cannot
/// be built for the tree (its errors say why).
pub fn warnings(tree: &ClassTree, params: &HtbParams) -> Vec<ConfigError> {
    let Ok((resolved, clamps)) = resolve(tree, params) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for c in tree.classes() {
        let id = c.id;
        let p = &resolved[id.index()];
        let name = c.name();
        if let Some(clamp) = clamps.iter().find(|q| q.class == id) {
            out.push(quantum_warning(tree, id, p.rate, clamp.computed, params));
        }
        if id == ClassId::ROOT {
            children_warning(tree, id, &resolved, &mut out);
            continue;
        }
        for (field, given, what) in [
            ("burst", c.spec.burst, "rate"),
            ("cburst", c.spec.cburst, "ceil"),
        ] {
            if let Some(b) = given.filter(|&b| b < params.mtu) {
                out.push(class_problem(
                    tree,
                    id,
                    field,
                    format!(
                        "the {field} of class `{name}` ({b}) is smaller than one MTU ({}, the \
                         largest packet tc assumes): one full-size packet empties the bucket, so \
                         the class may not reach its {what}",
                        params.mtu
                    ),
                    format!(
                        "raise `{field}` to at least {}, or leave it out for tc's default \
                         ({what} / hz + mtu)",
                        params.mtu
                    ),
                ));
            }
        }
        if let (Some(ceil), Some(rate)) = (c.spec.ceil, c.spec.rate)
            && ceil < rate
        {
            out.push(class_problem(
                tree,
                id,
                "ceil",
                format!(
                    "the ceil of class `{name}` ({ceil}) is below its rate ({rate}): the class \
                     can never send faster than {ceil}, so its rate is not assured"
                ),
                format!(
                    "raise `ceil` to at least {rate}, or leave it out (it defaults to the rate)"
                ),
            ));
        }
        children_warning(tree, id, &resolved, &mut out);
    }
    out
}

/// The warning for a leaf whose derived quantum `computed` was clamped.
fn quantum_warning(
    tree: &ClassTree,
    id: ClassId,
    rate: Rate,
    computed: Bytes,
    params: &HtbParams,
) -> ConfigError {
    let name = tree.get(id).name();
    let bytes_per_second = rate.bps() / 8;
    let small = computed < MIN_QUANTUM;
    let (size, used, r2q_fix) = if small {
        let most = bytes_per_second / MIN_QUANTUM.0;
        let fix = if most == 0 {
            "r2q cannot help at this rate".to_owned()
        } else {
            format!("set [link.htb] r2q to at most {most}")
        };
        ("small", MIN_QUANTUM, fix)
    } else {
        let least = bytes_per_second.div_ceil(MAX_QUANTUM.0);
        (
            "big",
            MAX_QUANTUM,
            format!("set [link.htb] r2q to at least {least}"),
        )
    };
    class_problem(
        tree,
        id,
        "quantum",
        format!(
            "the quantum of class `{name}` is {size}: rate / r2q = {rate} / {} = {computed}, so \
             HTB uses {used}, as Linux does (\"quantum of class {name} is {size}. Consider r2q \
             change.\")",
            params.r2q
        ),
        format!("give the class its own `quantum`, or {r2q_fix}"),
    )
}

/// The warning for `id` if its children's assured rates add up to more than its own.
fn children_warning(
    tree: &ClassTree,
    id: ClassId,
    resolved: &[super::ClassParams],
    out: &mut Vec<ConfigError>,
) {
    let class = tree.get(id);
    if class.children.is_empty() {
        return;
    }
    let sum = class
        .children
        .iter()
        .map(|k| resolved[k.index()].rate.bps())
        .fold(0u64, u64::saturating_add);
    let own = resolved[id.index()].rate;
    if sum <= own.bps() {
        return;
    }
    let name = class.name();
    let children: Vec<&str> = class.children.iter().map(|k| tree.get(*k).name()).collect();
    out.push(class_problem(
        tree,
        id,
        "rate",
        format!(
            "the rates of the children of `{name}` ({}) add up to {}, above its rate {own}: HTB \
             cannot assure them all at once",
            children.join(", "),
            Rate(sum)
        ),
        format!(
            "lower the children's rates to at most {own} in total, or raise the rate of `{name}`"
        ),
    ));
}
