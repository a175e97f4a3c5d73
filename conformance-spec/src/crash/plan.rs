//! Where the kills land (see the parent module): seeded, spread over the workload's
//! phases. The child's calls come in steps of three, `put` then the two `put_writes` (task
//! `a`, task `b`), so a kill is planned as a step, the call in flight ([`Phase`]) and when
//! in that call ([`Moment`]: between calls, or inside one). Each run of six kills covers the three calls at both moments
//! once, in a seeded order; most kills wait for many steps, so that each child (whose
//! start-up is most of a kill's cost) acknowledges many calls, and every third kill lands
//! in the first steps of its thread, where a saver may create what a thread or namespace
//! needs (the first `put` of the thread, of the subgraph namespace).

use std::fmt;

/// The call the kill lands in (the one after the `i`-th acknowledgement of a step).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Phase {
    /// `put` of the step.
    Put,
    /// The first `put_writes` (task `crash-a-*`: regular, special and bytes writes).
    WritesA,
    /// The second `put_writes` (task `crash-b-*`).
    WritesB,
}

impl Phase {
    const ALL: [Phase; 3] = [Phase::Put, Phase::WritesA, Phase::WritesB];

    /// The phase of the call that follows `acks` acknowledgements.
    pub(super) fn after(acks: usize) -> Phase {
        Self::ALL[acks % 3]
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Phase::Put => "put",
            Phase::WritesA => "put_writes of task a",
            Phase::WritesB => "put_writes of task b",
        })
    }
}

/// When the kill lands, counted from the acknowledgement before the planned call.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Moment {
    /// Between calls: the child holds after that acknowledgement (its request says after
    /// which one) and is killed there, before the call starts. A saver that acknowledged a
    /// call before storing it (and stores it with the next call, or later) loses it here.
    Between,
    /// This fraction (0.2 to 1) of the child's average time for the phase's call: inside
    /// it, up to its commit.
    Inside(f64),
}

/// One kill: in `phase` of step `step`, at `moment`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct KillPlan {
    pub(super) step: usize,
    pub(super) phase: Phase,
    pub(super) moment: Moment,
}

impl KillPlan {
    /// The acknowledgements the parent waits for before the kill's moment starts.
    pub(super) fn after_acks(&self) -> usize {
        3 * self.step + Phase::ALL.iter().position(|p| *p == self.phase).unwrap_or(0)
    }

    /// The acknowledgement after which the child holds until it is killed (for a
    /// [`Moment::Between`] kill).
    pub(super) fn hold_after(&self) -> Option<usize> {
        (self.moment == Moment::Between).then(|| self.after_acks())
    }
}

/// The steps a late kill waits for: at least 36 acknowledged calls a child, so that the
/// default six kills check more than 200 (a late kill of each of four children, two early).
pub(super) const LATE_STEPS: std::ops::RangeInclusive<usize> = 17..=22;
/// The steps an early kill waits for: its thread's first put (step 0) to the subgraph
/// namespace's first put (step 3).
pub(super) const EARLY_STEPS: std::ops::RangeInclusive<usize> = 0..=3;

/// The plans of `kills` kills, drawn from `rng`. Each run of six covers every
/// [`Phase`] × [`Moment`] kind once, in a seeded order; kills 3, 6, 9, ... (every third,
/// never the first, which must acknowledge something) are early ([`EARLY_STEPS`]), the
/// others late ([`LATE_STEPS`]).
pub(super) fn plans(rng: &mut fastrand::Rng, kills: usize) -> Vec<KillPlan> {
    let mut kinds = Vec::new();
    let mut out = Vec::with_capacity(kills);
    for k in 0..kills {
        if kinds.is_empty() {
            kinds = Phase::ALL.iter().flat_map(|p| [(*p, false), (*p, true)]).collect();
            rng.shuffle(&mut kinds);
        }
        let (phase, inside) = kinds.pop().unwrap_or((Phase::Put, false));
        let steps = if k % 3 == 2 { EARLY_STEPS } else { LATE_STEPS };
        let moment = if inside { Moment::Inside(0.2 + 0.8 * rng.f64()) } else { Moment::Between };
        out.push(KillPlan { step: rng.usize(steps), phase, moment });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn six_kills_cover_every_call_at_both_moments_and_check_over_200_calls() {
        for seed in 0..200 {
            let plans = plans(&mut fastrand::Rng::with_seed(seed), 6);
            let mut kinds: Vec<(Phase, bool)> =
                plans.iter().map(|p| (p.phase, matches!(p.moment, Moment::Inside(_)))).collect();
            kinds.sort_by_key(|(p, i)| (p.to_string(), *i));
            kinds.dedup();
            assert_eq!(kinds.len(), 6, "seed {seed}: {plans:?}");
            let acks: usize = plans.iter().map(KillPlan::after_acks).sum();
            assert!(acks >= 200, "seed {seed}: {acks} acknowledgements before the kills");
            assert!(plans[0].after_acks() > 0, "seed {seed}: the first kill must acknowledge something");
            assert_eq!(plans.iter().filter(|p| EARLY_STEPS.contains(&p.step)).count(), 2, "seed {seed}");
        }
    }

    #[test]
    fn the_plans_are_the_seeds() {
        let a = plans(&mut fastrand::Rng::with_seed(7), 13);
        assert_eq!(a, plans(&mut fastrand::Rng::with_seed(7), 13));
        assert_ne!(a, plans(&mut fastrand::Rng::with_seed(8), 13));
    }

    #[test]
    fn after_acks_counts_the_calls_before_the_phase() {
        let plan = |phase| KillPlan { step: 5, phase, moment: Moment::Between };
        assert_eq!(plan(Phase::Put).after_acks(), 15);
        assert_eq!(plan(Phase::WritesB).after_acks(), 17);
        assert_eq!(Phase::after(17), Phase::WritesB);
    }
}
