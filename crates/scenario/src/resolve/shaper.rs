//! `[shaper]` and `[[filter]]` against the link's class tree: filter and default
//! classes must be leaves.

use linkshare_classify::Rule;
use linkshare_core::hierarchy::{ClassId, ClassTree};

use crate::format::{FilterDef, ShaperDef};
use crate::problem::did_you_mean;
use crate::reader::{Ctx, Sp};
use crate::shaper::{Interfaces, ShaperSettings};

/// The leaf named `name`, reporting a missing class or an interior one.
fn leaf(ctx: &mut Ctx<'_>, tree: &ClassTree, path: &str, name: &Sp<String>) -> Option<ClassId> {
    let leaves = || tree.leaves().iter().map(|&l| tree.get(l).name());
    match tree.id_of(&name.value) {
        Some(id) if tree.is_leaf(id) => Some(id),
        Some(_) => {
            ctx.report(
                &name.span,
                path,
                format!(
                    "class `{}` has children: only leaves hold packets",
                    name.value
                ),
                format!(
                    "name one of its leaves; the leaves are: {}",
                    leaves().collect::<Vec<_>>().join(", ")
                ),
            );
            None
        }
        None => {
            let hint = did_you_mean(&name.value, leaves());
            ctx.report(
                &name.span,
                path,
                format!("no class is named `{}`", name.value),
                format!(
                    "{hint}name a leaf of [[class]]: {}",
                    leaves().collect::<Vec<_>>().join(", ")
                ),
            );
            None
        }
    }
}

/// The `[[filter]]` rules and `[shaper] default`, resolved against a class tree.
#[derive(Debug)]
pub(crate) struct Filters {
    /// The rules, in file order.
    pub(crate) rules: Vec<Rule>,
    /// The default leaf: `[shaper] default`, or the only leaf; `None` without
    /// `[shaper]`.
    pub(crate) default: Option<ClassId>,
}

/// Resolves the filters and, when `[shaper]` is written, its default class against
/// `tree`; `None` when problems were reported.
pub(crate) fn resolve(
    ctx: &mut Ctx<'_>,
    def: Option<&ShaperDef>,
    filters: &[FilterDef],
    tree: &ClassTree,
) -> Option<Filters> {
    let rules: Vec<Option<Rule>> = filters
        .iter()
        .map(|f| {
            let class = leaf(ctx, tree, &format!("{}.class", f.path), f.class.as_ref()?)?;
            Some(Rule {
                matches: f.matches.clone(),
                class,
            })
        })
        .collect();
    let rules = rules.into_iter().collect::<Option<Vec<_>>>();
    let Some(def) = def else {
        return Some(Filters {
            rules: rules?,
            default: None,
        });
    };
    let default = match (&def.default, tree.leaves()) {
        (Some(name), _) => leaf(ctx, tree, "shaper.default", name),
        (None, [only]) => Some(*only),
        (None, leaves) => {
            ctx.report(
                &def.span,
                "shaper.default",
                "`[shaper]` has no `default` class for frames no filter matches",
                format!(
                    "add `default = \"{}\"` (or another leaf)",
                    leaves.last().map_or("bulk", |&l| tree.get(l).name())
                ),
            );
            None
        }
    };
    Some(Filters {
        rules: rules?,
        default: Some(default?),
    })
}

/// The shaper's settings: `[shaper]` with its interfaces, which `linkshare shape`
/// requires, and the resolved filters; `None` when problems were reported.
pub(crate) fn settings(
    ctx: &mut Ctx<'_>,
    def: &ShaperDef,
    filters: Filters,
) -> Option<ShaperSettings> {
    let mut interface = |iface: &Option<Sp<String>>, key: &str, example: &str, what: &str| {
        if iface.is_none() {
            ctx.report(
                &def.span,
                &format!("shaper.{key}"),
                format!("`[shaper]` has no `{key}`: the interface {what}"),
                format!("add `{key} = \"{example}\"`"),
            );
        }
        iface.as_ref().map(|i| i.value.clone())
    };
    let input = interface(&def.input, "in", "eth0", "traffic to shape arrives on");
    let output = interface(&def.output, "out", "eth1", "shaped traffic leaves by");
    Some(ShaperSettings {
        interfaces: Interfaces {
            input: input?,
            output: output?,
        },
        pool: def.pool,
        pacing: def.pacing,
        spin: def.spin,
        catch_up: def.catch_up,
        metrics: def.metrics,
        realtime: def.realtime,
        rules: filters.rules,
        default: filters.default?,
        reverse_file: None,
    })
}
