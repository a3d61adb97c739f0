//! JoBS's settings of a link, resolved: problems located at the `[link.jobs]` key or
//! class key that caused them, and the constraints as objectives to measure.

use linkshare_core::hierarchy::{ClassId, ClassTree, ConfigError};
use linkshare_core::sched::SchedulerKind;
use linkshare_core::sched::jobs::Constraints;

use super::class_problem;
use crate::format::{ClassDef, JOBS_CLASS_KEYS, LinkDef};
use crate::problem::Problem;
use crate::reader::Ctx;

/// A problem JoBS's validation found, at the key it is about: its link-wide settings
/// (`buffer`, `gain`) in `[link.jobs]`, a misplaced class's constraints at the first
/// of them; else as any class problem.
pub(super) fn locate(def: &LinkDef, link_name: &str, e: ConfigError) -> Problem {
    if e.class == link_name
        && let Some(origin) = def.settings.jobs.origin_of(e.field)
    {
        return Problem {
            origin: Some(origin.clone()),
            field: Some(format!("{}.jobs.{}", def.path, e.field)),
            problem: e.problem,
            fix: e.fix,
        };
    }
    if e.field == "class"
        && let Some((c, key)) = first_key(def, &e.class)
    {
        return Problem {
            origin: c.spec.origin_of(key).cloned(),
            field: Some(format!("{}.{key}", c.path)),
            problem: e.problem,
            fix: e.fix,
        };
    }
    class_problem(def, link_name, e)
}

/// The class named `name` of `def` and the first JoBS key it was written with.
fn first_key<'d>(def: &'d LinkDef, name: &str) -> Option<(&'d ClassDef, &'static str)> {
    let c = def.classes.iter().find(|c| c.spec.name == name)?;
    let key = JOBS_CLASS_KEYS
        .iter()
        .copied()
        .filter(|k| c.spec.field_origins.iter().any(|(f, _)| f == k))
        .min_by_key(|k| c.spec.origin_of(k).map(|o| (o.line, o.column)))?;
    Some((c, key))
}

/// The JoBS constraints of the link's classes as objectives to measure, by leaf. A
/// class with constraints that is not a leaf is a problem (reported here unless JoBS
/// runs the link: its own validation says so then).
pub(super) fn objectives(
    ctx: &mut Ctx<'_>,
    def: &LinkDef,
    tree: &ClassTree,
    scheduler: SchedulerKind,
) -> Vec<(ClassId, Constraints)> {
    let mut out = Vec::new();
    for (name, constraints) in &def.settings.jobs.config.classes {
        match tree.id_of(name) {
            Some(id) if tree.get(id).is_leaf() => out.push((id, *constraints)),
            _ if scheduler == SchedulerKind::Jobs => {}
            _ => {
                if let Some((c, key)) = first_key(def, name) {
                    ctx.problems.push(Problem {
                        origin: c.spec.origin_of(key).cloned(),
                        field: Some(format!("{}.{key}", c.path)),
                        problem: format!(
                            "`{name}` has classes below it (or is a per-flow template): \
                             delay, loss and throughput objectives are for leaves"
                        ),
                        fix: "put them on its leaves".to_owned(),
                    });
                }
            }
        }
    }
    out.sort_by_key(|(id, _)| *id);
    out
}
