//! JoBS's settings ([`JobsConfig`]), their validation against a class tree, and the
//! resolved form the controller reads ([`Setup`]).

use std::collections::BTreeMap;
use std::num::NonZeroU32;

use super::groups::{self, Groups};
use crate::hierarchy::{ClassId, ClassTree, ConfigError};
use crate::sched::{BuildError, SchedulerKind, class_problem};
use crate::units::{Bytes, Duration, Fraction, Rate, Ratio};

/// Most classes (leaves) one JoBS link serves: the set of backlogged classes is a
/// 64-bit mask. (ALTQ's JoBS serves 16, ns-2's exactly 4.)
pub const MAX_CLASSES: usize = 64;

/// Largest integer weight a group of ratios may need (the product of its ratios'
/// numerators and denominators, see module `groups`): keeps the weighted delays and
/// loss rates far inside `i128`.
pub const MAX_GROUP_WEIGHT: u64 = 1 << 48;

/// JoBS's settings: the constraints of each class, the controller's mode, the buffer
/// and how often the proportional loop runs.
///
/// Classes are the **leaves** of the link's tree in declaration order (`ClassId`
/// order): the first leaf is the paper's class 1, the best served. Constraints are
/// keyed by class **name**; a class without an entry has none.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobsConfig {
    /// Which controller: the paper's equations (default) or the reference code's.
    pub mode: Mode,
    /// The buffer JoBS keeps and drops from (its own: the qdisc's limits do not apply).
    pub buffer: Buffer,
    /// The proportional loop runs every `sampling` arrivals (paper §7.3; ns-2
    /// `sampling-period`); the minimum rates of the bounds are checked at every arrival.
    pub sampling: NonZeroU32,
    /// The constraints of each class, by class name.
    pub classes: BTreeMap<String, Constraints>,
}

impl Default for JobsConfig {
    /// The paper's controller ([`Mode::PAPER`]), ALTQ's shared buffer of 200 packets,
    /// the proportional loop at every arrival, no constraints.
    fn default() -> Self {
        JobsConfig {
            mode: Mode::default(),
            buffer: Buffer::Shared { packets: 200 },
            sampling: NonZeroU32::MIN,
            classes: BTreeMap::new(),
        }
    }
}

/// The constraints of one class, each optional (paper Eqs. 4–8).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Constraints {
    /// Absolute delay bound `d_i` (Eq. 4): the longest a packet should wait in the
    /// queue (arrival to the start of its transmission).
    pub delay_bound: Option<Duration>,
    /// Loss-rate bound `L_i` (Eq. 5): the most of the class's bytes of a busy period
    /// that may be dropped. Needs the shared buffer.
    pub loss_bound: Option<Fraction>,
    /// Throughput lower bound `μ_i` (Eq. 6): the least service rate the class is
    /// allocated while backlogged.
    pub min_rate: Option<Rate>,
    /// Proportional delay `k_i` (Eq. 7): the **next** class's delay over this class's,
    /// above 1. Consecutive classes linked by ratios form one group.
    pub delay_ratio: Option<Ratio>,
    /// Proportional loss `k'_i` (Eq. 8): the next class's loss rate over this class's,
    /// above 1. Needs the shared buffer.
    pub loss_ratio: Option<Ratio>,
}

/// The controller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The decisions of the ALTQ implementation (the code of the paper's Experiment 2):
    /// its gain, its clipping of the proportional step and its victim rule on overflow,
    /// with its bugs fixed unless [`ReferenceBugs`] asks for them.
    Reference(ReferenceBugs),
    /// The paper's equations: the gain `K(n)` inside the stability interval of Eq. 32,
    /// the minimum rates of Eq. 33 kept class by class, and the drop order of Eq. 37
    /// (module docs, *Modes* and *Deviations*).
    Paper {
        /// `γ` in `K = γ · K_lo`, where `K_lo` is Eq. 32's lower end: in (0, 1]; ½
        /// places the linearised loop's pole of the binding class at 0 (dead-beat).
        gain: Fraction,
    },
}

impl Default for Mode {
    /// [`Mode::PAPER`]: it follows the paper's equations, converges where the reference
    /// gain swings from one extreme to the other, and keeps the other ratios of a group
    /// when one class is held at its bound (module docs). [`Mode::REFERENCE`] gives
    /// ALTQ's decisions, those of the paper's Experiment 2.
    fn default() -> Self {
        Mode::PAPER
    }
}

impl Mode {
    /// The paper's controller with `γ = ½`.
    pub const PAPER: Mode = Mode::Paper {
        gain: Fraction(Fraction::PPB / 2),
    };
    /// The reference controller with every reference bug fixed.
    pub const REFERENCE: Mode = Mode::Reference(ReferenceBugs {
        global_drop_stop: false,
        first_class_without_donor: false,
    });
}

/// Bugs of the ALTQ implementation that [`Mode::Reference`] can reproduce; each is fixed
/// (`false`) by default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReferenceBugs {
    /// Delay-driven drops: once one class stops dropping because its loss bound would be
    /// exceeded, no later class drops either (ALTQ's flag is global). Fixed: each class
    /// stops at its own loss bound.
    pub global_drop_stop: bool,
    /// Greedy reallocation: when the first class needs rate and no other class can give
    /// any, its need is forgotten and it gets no delay-driven drops (ALTQ's scan for a
    /// donor stops at class 0). Fixed: the first class drops like any other.
    pub first_class_without_donor: bool,
}

/// The buffer JoBS keeps, counted in packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Buffer {
    /// One buffer of `packets` shared by all classes (ALTQ `qlimit`): an arrival to a
    /// full buffer costs one packet, chosen by the loss loop.
    Shared {
        /// Packets in all classes together, at least 1.
        packets: u32,
    },
    /// A buffer of `packets` per class (ALTQ `separate`): an arrival to a full class is
    /// dropped; loss bounds and ratios cannot be given.
    Separate {
        /// Packets per class, at least 1.
        packets: u32,
    },
}

/// What the controller reads about one class: its constraints, resolved.
#[derive(Clone, Copy, Debug)]
pub(super) struct ClassSetup {
    /// The leaf.
    pub id: ClassId,
    /// `d_i` in ns.
    pub delay_bound: Option<u64>,
    /// `L_i`.
    pub loss_bound: Option<Fraction>,
    /// `μ_i` in bit/s, 0 without a bound.
    pub min_rate: u64,
}

/// The settings resolved for one tree.
#[derive(Clone, Debug)]
pub(super) struct Setup {
    /// The link rate `C`, bit/s.
    pub link: u64,
    pub mode: Mode,
    pub buffer: Buffer,
    pub sampling: u32,
    /// By JoBS index (position among the leaves).
    pub classes: Vec<ClassSetup>,
    /// JoBS index of each class of the tree by `ClassId` index; [`NOT_SERVED`] for the
    /// link and interior classes.
    pub index: Vec<u8>,
    /// Classes with a delay or throughput bound.
    pub bounded: u64,
    /// The delay groups (Eq. 14) and each class's weight in its group.
    pub delay: Groups,
    /// The loss groups and weights.
    pub loss: Groups,
}

/// [`Setup::index`] of a class JoBS does not serve.
pub(super) const NOT_SERVED: u8 = u8::MAX;

impl Setup {
    /// The JoBS index of `class`, if it is one of JoBS's classes.
    #[inline]
    pub fn index_of(&self, class: ClassId) -> Option<usize> {
        match self.index.get(class.index()) {
            Some(&i) if i != NOT_SERVED => Some(usize::from(i)),
            _ => None,
        }
    }
}

/// Checks `config` against `tree` and resolves it; on failure, every problem found.
pub(super) fn resolve(tree: &ClassTree, config: &JobsConfig) -> Result<Setup, BuildError> {
    let mut problems = Vec::new();
    let leaves = tree.leaves();
    let root = tree.root().name().to_owned();
    if let Some(&extra) = leaves.get(MAX_CLASSES) {
        problems.push(class_problem(
            tree,
            extra,
            "name",
            format!(
                "jobs serves at most {MAX_CLASSES} classes and the link has {} leaves; this \
                 is leaf number {}",
                leaves.len(),
                MAX_CLASSES + 1
            ),
            "merge classes, or use another scheduler for this link".to_owned(),
        ));
    }
    let link = tree.link_rate();
    let (Buffer::Shared { packets } | Buffer::Separate { packets }) = config.buffer;
    if packets == 0 {
        problems.push(class_problem(
            tree,
            ClassId::ROOT,
            "buffer",
            "a buffer of 0 packets holds nothing".to_owned(),
            "give the jobs buffer at least 1 packet (ALTQ's default is 200)".to_owned(),
        ));
    }
    if let Mode::Paper { gain } = config.mode
        && (gain == Fraction::ZERO || gain > Fraction::ONE)
    {
        problems.push(class_problem(
            tree,
            ClassId::ROOT,
            "gain",
            format!("the gain factor is {gain}, outside (0, 1]"),
            "give a factor above 0 and at most 1 (0.5 is dead-beat for the binding class)"
                .to_owned(),
        ));
    }
    let separate = matches!(config.buffer, Buffer::Separate { .. });
    // The longest wait a lone packet can have: the largest packet of any class being
    // transmitted when it arrives.
    let blocking = leaves
        .iter()
        .map(|&l| tree.get(l).max_packet())
        .max()
        .unwrap_or(Bytes::ZERO);
    let blocking = link.tx_time(blocking);
    let mut by_leaf = vec![Constraints::default(); leaves.len()];
    let mut min_rates = Rate::ZERO;
    for (name, c) in &config.classes {
        let Some(id) = tree.id_of(name) else {
            problems.push(ConfigError {
                class: name.clone(),
                field: "class",
                origin: None,
                problem: format!(
                    "jobs has constraints for `{name}`, but link `{root}` has no class of \
                     that name"
                ),
                fix: format!("name one of its leaves: {}", leaf_names(tree)),
            });
            continue;
        };
        let Some(pos) = leaves.iter().position(|&l| l == id) else {
            problems.push(class_problem(
                tree,
                id,
                "class",
                format!("`{name}` has classes below it, and jobs serves only leaves"),
                "put the constraints on its leaves".to_owned(),
            ));
            continue;
        };
        by_leaf[pos] = *c;
        let mut problem = |field, problem: String, fix: String| {
            problems.push(class_problem(tree, id, field, problem, fix));
        };
        if let Some(d) = c.delay_bound {
            if d == Duration::ZERO {
                problem(
                    "delay_bound",
                    "a delay bound of 0 cannot be met".to_owned(),
                    "give a positive delay bound such as \"8ms\"".to_owned(),
                );
            } else if d < blocking {
                problem(
                    "delay_bound",
                    format!(
                        "the delay bound {d} is shorter than the transmission of the largest \
                         packet at the link rate ({blocking} at {link}): a packet that \
                         arrives while it is sent misses the bound whatever the schedule"
                    ),
                    format!("give at least {blocking}"),
                );
            }
        }
        if let Some(l) = c.loss_bound {
            if l > Fraction::ONE {
                problem(
                    "loss_bound",
                    format!("the loss bound {l} is more than 100%"),
                    "give a fraction from 0 to 1, such as \"1%\" or 0.01".to_owned(),
                );
            } else if separate {
                problem(
                    "loss_bound",
                    "a loss bound needs the shared buffer, and the jobs buffer is separate \
                     (a full class can only drop its own arrival)"
                        .to_owned(),
                    "use the shared buffer, or remove the loss bound".to_owned(),
                );
            }
        }
        if let Some(mu) = c.min_rate {
            if mu == Rate::ZERO {
                problem(
                    "min_rate",
                    "a throughput bound of 0 bit/s bounds nothing".to_owned(),
                    "give a positive rate, or remove the bound".to_owned(),
                );
            } else if mu > link {
                problem(
                    "min_rate",
                    format!("the throughput bound {mu} is above the link rate {link}"),
                    format!("give at most {link}"),
                );
            } else if min_rates <= link && Rate(min_rates.0.saturating_add(mu.0)) > link {
                problem(
                    "min_rate",
                    format!(
                        "with this class the throughput bounds add up to more than the link \
                         rate {link}: they cannot all hold while their classes are \
                         backlogged together"
                    ),
                    format!(
                        "lower the bounds so that they add up to at most {link} (the other \
                         classes' bounds add up to {min_rates})"
                    ),
                );
            }
            min_rates = Rate(min_rates.0.saturating_add(mu.0));
        }
        let last = pos + 1 == leaves.len();
        for (field, ratio, what) in [
            ("delay_ratio", c.delay_ratio, "delay"),
            ("loss_ratio", c.loss_ratio, "loss rate"),
        ] {
            let Some(k) = ratio else { continue };
            if k.num() <= k.den() {
                problem(
                    field,
                    format!(
                        "the {what} ratio {k} is not above 1: it is the next class's {what} \
                         over this class's, and lower classes are served better"
                    ),
                    "give a ratio above 1, such as 2".to_owned(),
                );
            } else if last {
                problem(
                    field,
                    format!(
                        "the {what} ratio relates this class to the next leaf, and `{name}` \
                         is the last leaf"
                    ),
                    "put the ratio on the class before; the last class of a group needs none"
                        .to_owned(),
                );
            } else if field == "loss_ratio" && separate {
                problem(
                    field,
                    "a loss ratio needs the shared buffer, and the jobs buffer is separate"
                        .to_owned(),
                    "use the shared buffer, or remove the loss ratio".to_owned(),
                );
            }
        }
    }
    let delay = groups::resolve(&by_leaf.iter().map(|c| c.delay_ratio).collect::<Vec<_>>());
    let loss = groups::resolve(&by_leaf.iter().map(|c| c.loss_ratio).collect::<Vec<_>>());
    for (result, field) in [(&delay, "delay_ratio"), (&loss, "loss_ratio")] {
        if let Err(first) = result {
            problems.push(class_problem(
                tree,
                leaves[*first],
                field,
                format!(
                    "the ratios of the group starting at this class multiply to more than \
                     {MAX_GROUP_WEIGHT} (numerators times denominators)"
                ),
                "use smaller ratios, simpler fractions, or fewer classes in the group".to_owned(),
            ));
        }
    }
    if !problems.is_empty() {
        return Err(BuildError {
            kind: SchedulerKind::Jobs,
            problems,
        });
    }
    let (delay, loss) = (delay.expect("checked above"), loss.expect("checked above"));
    let mut index = vec![NOT_SERVED; tree.len()];
    let classes: Vec<ClassSetup> = leaves
        .iter()
        .zip(&by_leaf)
        .enumerate()
        .map(|(i, (&id, c))| {
            index[id.index()] = i as u8;
            ClassSetup {
                id,
                delay_bound: c.delay_bound.map(Duration::as_nanos),
                loss_bound: c.loss_bound,
                min_rate: c.min_rate.map_or(0, Rate::bps),
            }
        })
        .collect();
    let bounded = classes
        .iter()
        .enumerate()
        .filter(|(_, c)| c.delay_bound.is_some() || c.min_rate > 0)
        .fold(0u64, |m, (i, _)| m | 1 << i);
    Ok(Setup {
        link: link.bps(),
        mode: config.mode,
        buffer: config.buffer,
        sampling: config.sampling.get(),
        classes,
        index,
        bounded,
        delay,
        loss,
    })
}

/// The leaves' names, comma-separated (or `(none)`).
fn leaf_names(tree: &ClassTree) -> String {
    let names: Vec<&str> = tree.leaves().iter().map(|&l| tree.get(l).name()).collect();
    if names.is_empty() {
        "(none)".to_owned()
    } else {
        names.join(", ")
    }
}
