//! The fuzz trial of a default run (issue 36): after the catalog's cases, in the same
//! session, generated sequences for a time budget ([`DEFAULT_BUDGET`], `--fuzz-budget`,
//! `$CHECKPOINT_CONFORMANCE_FUZZ_BUDGET`), from a printed seed. A divergence is shrunk
//! and counted as a "passed, not strict" result, `{capability}::fuzz_model_sequences`, in
//! the capability of the call that diverged (the model holds SHOULD rules too, so a
//! divergence costs the strict level, not the level); the report's `fuzz` section holds what ran and the
//! shrunk trace (replayable with `cargo xtask replay`).

use std::sync::Arc;
use std::time::Duration;

use conformance_core::run::AfterCases;
use conformance_core::{Capability, CaseResult, Feature, FuzzSection, Outcome, Registration, Strength};

use super::trace::{Op, Trace};
use super::{fuzz_in_lifespan, FuzzOptions};

/// The default budget of the fuzz trial: 3 seconds of generated sequences.
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(3);
/// The environment variable of the budget, in seconds (`0` turns the trial off).
pub const BUDGET_ENV: &str = "CHECKPOINT_CONFORMANCE_FUZZ_BUDGET";
/// The name of the failed result a divergence adds (`put::fuzz_model_sequences`).
pub const TRIAL_NAME: &str = "fuzz_model_sequences";

/// The declared limits the generator cannot yet keep out of its domain: it draws string
/// versions, numbers beyond 2^53 and namespaces, and puts writes with a task_path.
const OUT_OF_DOMAIN: [Feature; 4] =
    [Feature::StringVersions, Feature::WideNumbers, Feature::Namespaces, Feature::TaskPathOnWrites];

/// Parses a budget in seconds: `0` is off, else at most one hour (fractions allowed).
///
/// # Errors
/// One line naming the valid values.
pub fn parse_budget(s: &str) -> Result<Duration, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && (0.0..=3600.0).contains(&x) => Ok(Duration::from_secs_f64(x)),
        _ => Err(format!("{s:?}: a fuzz budget in seconds from 0 (off) to 3600 is expected")),
    }
}

/// The budget from [`BUDGET_ENV`], or [`DEFAULT_BUDGET`] when it is unset or empty.
///
/// # Errors
/// A set value that [`parse_budget`] refuses, naming the variable.
pub fn budget_from_env() -> Result<Duration, String> {
    match std::env::var(BUDGET_ENV) {
        Ok(v) if !v.trim().is_empty() => parse_budget(&v).map_err(|e| format!("{BUDGET_ENV}={e}")),
        Ok(_) | Err(std::env::VarError::NotPresent) => Ok(DEFAULT_BUDGET),
        Err(_) => Err(format!("{BUDGET_ENV} is not valid UTF-8: a number of seconds is expected")),
    }
}

/// The capability a step of a trace is judged in: its call's, a concurrent batch's
/// `concurrency`, `get_next_version`'s `put`; a marker's `durability`.
pub fn capability_of(op: &Op) -> Capability {
    match op {
        Op::Call(inv) => inv.capability(),
        Op::Concurrent { .. } => Capability::Concurrency,
        Op::GetNextVersion { .. } => Capability::Put,
        Op::Reopen | Op::Instance { .. } => Capability::Durability,
    }
}

/// The trial for [`conformance_core::RunOptions::after_cases`]: `budget` of sequences from
/// `seed`; `rerun` is the command line that reproduces it (printed with the seed).
pub fn after_cases(budget: Duration, seed: u64, rerun: String) -> AfterCases {
    AfterCases(Arc::new(move |reg: &Registration| trial(reg, budget, seed, &rerun)))
}

fn trial(reg: &Registration, budget: Duration, seed: u64, rerun: &str) -> (FuzzSection, Option<CaseResult>) {
    let empty = |error: Option<String>| FuzzSection {
        seed: seed.to_string(),
        sequences: 0,
        ops: 0,
        duration_ms: 0.0,
        divergences: Vec::new(),
        error,
    };
    let lacks: Vec<&Feature> =
        reg.declared_lacks().into_iter().flatten().filter(|f| OUT_OF_DOMAIN.contains(f)).collect();
    if !lacks.is_empty() {
        let names: Vec<String> = lacks.iter().map(|f| f.to_string()).collect();
        let why = format!(
            "not run: the saver declares it lacks {}, which the fuzzer's domain does not yet leave out",
            names.join(", ")
        );
        eprintln!("fuzz: {why}");
        return (empty(Some(why)), None);
    }
    eprintln!("fuzz: {:.1} s of generated sequences, seed {seed} ({rerun} reproduces)", budget.as_secs_f64());
    // Shrinking a bridged saver's divergence can take minutes: the default run spends 20 s.
    let options =
        FuzzOptions { seed, cases: u32::MAX, time: Some(budget), shrink_ms: 20_000, ..FuzzOptions::default() };
    let outcome = match fuzz_in_lifespan(reg, &options) {
        Ok(o) => o,
        Err(e) => return (empty(Some(e)), None),
    };
    eprintln!(
        "fuzz: {} sequences, {} calls, {}",
        outcome.sequences,
        outcome.ops,
        if outcome.divergence.is_some() { "a divergence from the model (below)" } else { "no divergence" }
    );
    let section = outcome.section();
    let failed = outcome.divergence.as_ref().map(|d| {
        let capability = d.trace.steps.last().map_or(Capability::Put, |s| capability_of(&s.op));
        CaseResult {
            id: format!("{capability}::{TRIAL_NAME}"),
            capability,
            name: TRIAL_NAME.to_owned(),
            // The model holds the SHOULD rules too (NUL kept in metadata, booleans apart from
            // numbers, ...), and a divergence does not say which rule it broke: it is judged
            // as a SHOULD, "passed, not strict", which `--strict` counts. Replaying its trace
            // names the call and the field; a MUST breach there is a bug to fix first.
            outcome: Outcome::NotStrict,
            strength: Strength::Should,
            message: Some(message(seed, outcome.sequences, &d.trace, &d.message, rerun)),
            duration_ms: outcome.elapsed.as_secs_f64() * 1e3,
            facts: Default::default(),
            repeats: None,
            abort: None,
        }
    });
    (section, failed)
}

fn message(seed: u64, sequences: u64, trace: &Trace, diffs: &str, rerun: &str) -> String {
    format!(
        "seed {seed}: a generated sequence diverged from the contract's model after {sequences} sequences; \
         shrunk to {} steps (the last diverged):\n{}{diffs}\n(the trace is the JSON report's fuzz section; \
         `cargo xtask replay FILE` replays it; {rerun} runs it again)",
        trace.steps.len(),
        trace.readable(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_are_seconds_from_zero_to_an_hour() {
        assert_eq!(parse_budget("0"), Ok(Duration::ZERO));
        assert_eq!(parse_budget("2.5"), Ok(Duration::from_millis(2500)));
        for bad in ["-1", "abc", "3601", "inf", "NaN", ""] {
            assert!(parse_budget(bad).unwrap_err().contains("from 0 (off) to 3600"), "{bad}");
        }
    }

    #[test]
    fn a_marker_is_judged_in_durability_and_a_batch_in_concurrency() {
        assert_eq!(capability_of(&Op::Reopen), Capability::Durability);
        assert_eq!(capability_of(&Op::Concurrent { calls: Vec::new() }), Capability::Concurrency);
        assert_eq!(capability_of(&Op::GetNextVersion { current: None }), Capability::Put);
    }
}
