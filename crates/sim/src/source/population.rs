//! A population of identical sources whose number swings over time.
//!
//! The flow owns `swing.max` members, each an independent source built from the same
//! configuration with a stream of its own (member `k`'s seed is the `k`-th draw from
//! the flow's stream). At time `t` of the run the first `level(t)` members are on
//! ([`Swing`]: `round(mid + amp · sin(2π t / period))`, rounded half away from zero):
//! when the level falls, the highest-numbered members stop; when it rises, the
//! lowest-numbered stopped ones start — so a member stays on for whole stretches and
//! the population's make-up changes as little as the level does. Each member restarts
//! its pattern when it starts, as its own family documents in [`crate::source`].
//!
//! The level changes at the instants where the sine crosses a half-integer, rounded to
//! the nanosecond (computed once per period with `asin`); between two changes it is the
//! sine's rounded value there. It follows the run's clock, not the flow's ON intervals:
//! an ON interval starting at `t` starts `level(t)` members, and the end of the interval
//! stops them all.
//!
//! Members' packets interleave, so a population marks no bursts of its own (its
//! members' burst marks are dropped). Members must generate their traffic from their
//! timers alone: greedy sources and FTP (which react to departures), traces and
//! populations are refused ([`super::check`]).
//!
//! The JoBS paper's Experiment 1 superposes between 300 and 550 Pareto sources, their
//! number following a sinusoid: four populations (one per class) of Pareto renewal
//! sources.

use linkshare_core::units::{Duration, Instant};

use crate::agent::{Action, Agent, Ctx};
use crate::config::{SourceConfig, Swing};
use crate::rng::Rng;

impl Swing {
    /// The level over one period as steps `(offset, level)`: the level from `offset` (ns
    /// into the period) until the next step's offset, the first step at offset 0,
    /// consecutive steps of different levels (the last one may equal the first: the
    /// sine is continuous across periods).
    pub fn steps(&self) -> Vec<(u64, u32)> {
        let period = self.period.as_nanos();
        if self.min >= self.max || period == 0 {
            return vec![(0, self.min)];
        }
        let mid = (f64::from(self.min) + f64::from(self.max)) / 2.0;
        let amp = (f64::from(self.max) - f64::from(self.min)) / 2.0;
        let t = period as f64;
        let level = |ns: f64| {
            let x = mid + amp * (2.0 * std::f64::consts::PI * ns / t).sin();
            (x.round() as u32).clamp(self.min, self.max)
        };
        // The sine crosses the half-integer b at the phases asin(x) and π − asin(x).
        let mut cuts: Vec<u64> = Vec::new();
        for k in self.min..self.max {
            let x = (f64::from(k) + 0.5 - mid) / amp;
            let a = x.asin();
            for phase in [a, std::f64::consts::PI - a] {
                let turn = (phase / (2.0 * std::f64::consts::PI)).rem_euclid(1.0);
                let ns = (turn * t).round() as u64;
                if ns > 0 && ns < period {
                    cuts.push(ns);
                }
            }
        }
        cuts.sort_unstable();
        cuts.dedup();
        let mut steps: Vec<(u64, u32)> = Vec::with_capacity(cuts.len() + 1);
        let mut from = 0;
        for end in cuts.into_iter().chain([period]) {
            let l = level((from + end) as f64 / 2.0);
            if steps.last().is_none_or(|&(_, last)| last != l) {
                steps.push((from, l));
            }
            from = end;
        }
        steps
    }

    /// The number of members on at `t`.
    pub fn level(&self, t: Instant) -> u32 {
        level_in(&self.steps(), self.period.as_nanos(), t)
    }

    /// The mean number of members on over a period (exact over the steps).
    pub fn mean_level(&self) -> f64 {
        let steps = self.steps();
        let period = self.period.as_nanos();
        if steps.len() == 1 {
            return f64::from(steps[0].1);
        }
        let sum: f64 = steps
            .iter()
            .enumerate()
            .map(|(i, &(from, l))| {
                let to = steps.get(i + 1).map_or(period, |s| s.0);
                f64::from(l) * (to - from) as f64
            })
            .sum();
        sum / period as f64
    }
}

/// The level of `steps` (of a swing of `period` ns) at `t`.
fn level_in(steps: &[(u64, u32)], period: u64, t: Instant) -> u32 {
    let offset = t.as_nanos().checked_rem(period).unwrap_or(0);
    let i = steps.partition_point(|&(from, _)| from <= offset);
    steps[i.saturating_sub(1)].1
}

/// What a timer of the population is for.
#[derive(Clone, Copy, Debug)]
enum Slot {
    /// Not in use.
    Free,
    /// Member `member`'s timer with its own `token`.
    Member { member: u32, token: u64 },
    /// A change of level, set in ON interval `generation`.
    Level { generation: u64 },
}

/// A population source. See the [module docs](self).
#[derive(Debug)]
pub struct Population {
    members: Vec<Box<dyn Agent>>,
    /// [`Swing::steps`].
    steps: Vec<(u64, u32)>,
    /// The swing's period, ns (0 for a constant level).
    period: u64,
    /// Members `0 .. active` are on.
    active: u32,
    /// Whether the flow is in an ON interval.
    on: bool,
    /// ON intervals begun: level timers of earlier ones are stale.
    generation: u64,
    /// Pending timers, by the token given to the engine.
    slots: Vec<Slot>,
    /// Free entries of `slots`.
    free: Vec<u32>,
    /// A member's actions, reused.
    scratch: Vec<Action>,
}

impl Population {
    /// `swing.max` members built from `each` (valid), seeded from `rng`.
    pub fn new(each: &SourceConfig, swing: Swing, mut rng: Rng) -> Population {
        let members = (0..swing.max)
            .map(|k| super::build(each, Rng::stream(rng.next_u64(), u64::from(k))))
            .collect();
        Population {
            members,
            steps: swing.steps(),
            period: swing.period.as_nanos(),
            active: 0,
            on: false,
            generation: 0,
            slots: Vec::new(),
            free: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// A token for `slot`.
    fn hold(&mut self, slot: Slot) -> u64 {
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = slot;
                u64::from(i)
            }
            None => {
                self.slots.push(slot);
                (self.slots.len() - 1) as u64
            }
        }
    }

    /// Runs `f` on member `k` and passes on what it did: its packets, its timers (under
    /// tokens of the population's own).
    fn with_member(
        &mut self,
        ctx: &mut Ctx<'_>,
        k: u32,
        f: impl FnOnce(&mut dyn Agent, &mut Ctx<'_>),
    ) {
        let mut actions = core::mem::take(&mut self.scratch);
        {
            let mut sub = Ctx::new(ctx.now(), ctx.flow(), &mut actions);
            f(self.members[k as usize].as_mut(), &mut sub);
        }
        for a in actions.drain(..) {
            match a {
                Action::Emit { len, .. } => ctx.emit(len),
                Action::Timer { at, token, .. } => {
                    let t = self.hold(Slot::Member { member: k, token });
                    ctx.set_timer(at, t);
                }
                Action::Send { segment, .. } => ctx.send(segment),
                Action::BeginBurst { .. } => {}
            }
        }
        self.scratch = actions;
    }

    /// Turns members on or off so that `level` are on.
    fn set_level(&mut self, ctx: &mut Ctx<'_>, level: u32) {
        while self.active < level {
            let k = self.active;
            self.active += 1;
            self.with_member(ctx, k, |m, c| m.on_start(c));
        }
        while self.active > level {
            self.active -= 1;
            let k = self.active;
            self.with_member(ctx, k, |m, c| m.on_stop(c));
        }
    }

    /// Sets a timer for the next change of level after now, if the level ever changes.
    fn arm_level(&mut self, ctx: &mut Ctx<'_>) {
        if self.steps.len() < 2 {
            return;
        }
        let now = ctx.now().as_nanos();
        let offset = now % self.period;
        let base = now - offset;
        let i = self.steps.partition_point(|&(from, _)| from <= offset);
        // The steps from `i` on, then the next period's; the first of another level.
        let next = (i..self.steps.len())
            .map(|j| (base, self.steps[j]))
            .chain(
                self.steps
                    .iter()
                    .map(|&s| (base.saturating_add(self.period), s)),
            )
            .find(|&(_, (_, l))| l != self.active);
        if let Some((start, (from, _))) = next {
            let t = self.hold(Slot::Level {
                generation: self.generation,
            });
            ctx.set_timer(Instant(start.saturating_add(from)), t);
        }
    }
}

impl Agent for Population {
    fn on_start(&mut self, ctx: &mut Ctx<'_>) {
        self.on = true;
        self.generation += 1;
        let level = level_in(&self.steps, self.period, ctx.now());
        self.set_level(ctx, level);
        self.arm_level(ctx);
    }

    fn on_stop(&mut self, ctx: &mut Ctx<'_>) {
        self.on = false;
        self.generation += 1;
        self.set_level(ctx, 0);
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_>, token: u64) {
        let Some(slot) = self.slots.get_mut(token as usize) else {
            return;
        };
        let fired = core::mem::replace(slot, Slot::Free);
        self.free.push(token as u32);
        match fired {
            Slot::Member { member, token } => {
                self.with_member(ctx, member, |m, c| m.on_timer(c, token));
            }
            Slot::Level { generation } if self.on && generation == self.generation => {
                let level = level_in(&self.steps, self.period, ctx.now());
                self.set_level(ctx, level);
                self.arm_level(ctx);
            }
            Slot::Level { .. } | Slot::Free => {}
        }
    }
}

/// The longest a population's period may be for its steps to be computed exactly in
/// `f64` (2⁵³ ns, about 104 days).
pub const MAX_PERIOD: Duration = Duration(1 << 53);
