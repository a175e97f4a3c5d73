//! The fuzz trial of a run (issue 36): after the catalog's cases, in the same session
//! (a whole run's, [`after_cases`]) or as the test `fuzz::model_sequences` of
//! `checkpointer_test!` ([`trial`]), generated sequences for a time budget
//! ([`DEFAULT_BUDGET`], `--fuzz-budget`, `$CHECKPOINT_CONFORMANCE_FUZZ_BUDGET`) from a
//! printed seed. A divergence is shrunk and judged by the rules it breaks
//! ([`super::strength`]): `{capability}::fuzz_model_sequences`, in the capability of the
//! call that diverged, is failed for a MUST divergence and "passed, not strict" for a
//! SHOULD one; the report's `fuzz` section holds what ran and the shrunk trace (replayable
//! with `cargo xtask replay`).

use std::sync::Arc;
use std::time::Duration;

use conformance_core::run::AfterCases;
use conformance_core::{Capability, CaseResult, Detection, Feature, FuzzSection, Outcome, Registration, Strength};

use super::trace::Op;
use super::{fuzz_in_lifespan, FuzzOptions};

/// The default budget of the fuzz trial: 3 seconds of generated sequences.
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(3);
/// The environment variable of the budget, in seconds (`0` turns the trial off).
pub const BUDGET_ENV: &str = "CHECKPOINT_CONFORMANCE_FUZZ_BUDGET";
/// The name of the failed result a divergence adds (`put::fuzz_model_sequences`).
pub const TRIAL_NAME: &str = "fuzz_model_sequences";

/// The declared limits the generator cannot yet keep out of its domain: it draws
/// namespaces and puts writes with a task_path. (String versions and numbers beyond 2^53
/// it leaves out for a saver that lacks them: `World::without`.)
const OUT_OF_DOMAIN: [Feature; 2] = [Feature::Namespaces, Feature::TaskPathOnWrites];

/// How a front end's user replays a divergence of the trial (the message's hint): the
/// front ends replay a report's fuzz section themselves.
pub const REPLAY_BY_REPORT: &str =
    "`checkpoint-conformance replay REPORT.json`, or `cargo xtask replay REPORT.json` in the kit's checkout, replays it";

/// How a `checkpointer_test!` user replays a divergence on their own saver, which no front
/// end can name: as a user trace of the run ([`crate::harness`], `traces` cases).
pub const REPLAY_AS_USER_TRACE: &str = "its `trace`, saved as a .json file in a directory, replays on this saver \
     as a `traces` case with CHECKPOINT_CONFORMANCE_TRACES=that directory";

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
/// `concurrency` (`get_next_version`'s is `put`); a marker's `durability`.
pub fn capability_of(op: &Op) -> Capability {
    match op {
        Op::Call(inv) => inv.capability(),
        Op::Concurrent { .. } => Capability::Concurrency,
        Op::Reopen | Op::Instance { .. } => Capability::Durability,
    }
}

/// The trial for [`conformance_core::RunOptions::after_cases`]: `budget` of sequences from
/// `seed`; `rerun` is the command line that reproduces it (printed with the seed).
pub fn after_cases(budget: Duration, seed: u64, rerun: String) -> AfterCases {
    AfterCases(Arc::new(move |reg: &Registration, detection: Option<&Detection>| {
        trial(reg, detection, Some(budget), u32::MAX, seed, &rerun, REPLAY_BY_REPORT)
    }))
}

/// The fuzz trial on `reg`: at most `cases` sequences within `budget` (none: no time
/// limit) from `seed`, inside a lifespan the caller set up. Returns the report's `fuzz`
/// section and, for a divergence, the result `{capability}::fuzz_model_sequences`
/// (failed for a MUST divergence, passed, not strict for a SHOULD one). A saver that
/// declares a limit outside the generator's domain is not fuzzed: the section's `error`
/// says why and there is no result. `rerun` is printed with the seed.
pub fn trial(
    reg: &Registration,
    detection: Option<&Detection>,
    budget: Option<Duration>,
    cases: u32,
    seed: u64,
    rerun: &str,
    replay: &str,
) -> (FuzzSection, Option<CaseResult>) {
    let empty = |error: Option<String>| FuzzSection {
        seed: seed.to_string(),
        sequences: 0,
        ops: 0,
        duration_ms: 0.0,
        divergences: Vec::new(),
        error,
    };
    if let Some(reason) = reg.skips().get(&Capability::Put) {
        return (empty(Some(format!("not run: put is skipped ({reason})"))), None);
    }
    // The session's detection, or the trial's own where the front end did not detect (a
    // `checkpointer_test!` trial in nextest's process of its own): the declared limits
    // decide whether it runs at all.
    let detection = detection.cloned().unwrap_or_else(|| conformance_core::run::detect(reg));
    let lacks: Vec<&Feature> = detection.lacks.iter().filter(|f| OUT_OF_DOMAIN.contains(f)).collect();
    if !lacks.is_empty() {
        let names: Vec<String> = lacks.iter().map(|f| f.to_string()).collect();
        let why = format!(
            "not run: the saver declares it lacks {}, which the fuzzer's domain does not yet leave out",
            names.join(", ")
        );
        eprintln!("fuzz: {why}");
        return (empty(Some(why)), None);
    }
    match budget {
        Some(b) => eprintln!("fuzz: {:.1} s of generated sequences, seed {seed} ({rerun} reproduces)", b.as_secs_f64()),
        None => eprintln!("fuzz: {cases} generated sequences, seed {seed} ({rerun} reproduces)"),
    }
    // Shrinking a bridged saver's divergence can take minutes: the default run spends 20 s.
    let options = FuzzOptions { seed, cases, time: budget, shrink_ms: 20_000, ..FuzzOptions::default() };
    let outcome = match fuzz_in_lifespan(reg, &detection, &options) {
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
            // The model holds the SHOULD rules too; `strength` sets them aside and judges
            // what remains (fuzz/strength.rs): a MUST divergence fails the capability of the
            // call that diverged, a SHOULD-only one is "passed, not strict".
            outcome: match d.strength {
                Strength::Must => Outcome::Failed,
                Strength::Should => Outcome::NotStrict,
            },
            strength: d.strength,
            rules: Vec::new(),
            message: Some(message(seed, outcome.sequences, d, rerun, replay)),
            duration_ms: outcome.elapsed.as_secs_f64() * 1e3,
            facts: Default::default(),
            repeats: None,
            abort: None,
            disturbed: None,
            rerun_alone: None,
        }
    });
    (section, failed)
}

/// The most characters of one line of a divergence's trace in its message.
const LINE_LIMIT: usize = 400;

fn message(seed: u64, sequences: u64, d: &crate::fuzz::Divergence, rerun: &str, replay: &str) -> String {
    let what = match d.strength {
        Strength::Must => {
            "broke a MUST rule of the contract's model (a difference remains with the SHOULD rules set aside)"
        }
        Strength::Should => {
            "differed from the contract's model only where a SHOULD rule is stricter (no MUST sequence found)"
        }
    };
    // Long ids and values would fill the screen: each line of the trace and of the
    // differences is cut, none dropped (the JSON report's fuzz section holds them whole).
    let cut = |text: &str| -> Vec<String> { text.lines().map(|l| crate::compare::shorten(l, LINE_LIMIT)).collect() };
    let readable: String = cut(&d.trace.readable()).into_iter().map(|l| l + "\n").collect();
    let differences = cut(&d.message).join("\n");
    format!(
        "seed {seed}: a generated sequence {what} after {sequences} sequences; shrunk to {} steps (the last \
         diverged):\n{readable}{}\n(the trace is in the JSON report's fuzz section: {replay}; {rerun} runs it again)",
        d.trace.steps.len(),
        differences,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use conformance_core::Invocation;

    #[test]
    fn budgets_are_seconds_from_zero_to_an_hour() {
        assert_eq!(parse_budget("0"), Ok(Duration::ZERO));
        assert_eq!(parse_budget("2.5"), Ok(Duration::from_millis(2500)));
        for bad in ["-1", "abc", "3601", "inf", "NaN", ""] {
            assert!(parse_budget(bad).unwrap_err().contains("from 0 (off) to 3600"), "{bad}");
        }
    }

    /// A saver that declares a limit the generator cannot leave out is not fuzzed, also
    /// where the front end did not detect (a `checkpointer_test!` trial in a process of its
    /// own): the trial detects for itself.
    #[test]
    fn a_declared_limit_out_of_the_domain_is_not_fuzzed_without_the_sessions_detection() {
        struct Nothing;
        impl conformance_core::CheckpointSaver for Nothing {}
        let reg = Registration::new("flat", || async {
            Ok(conformance_core::Fixture::new(Nothing).lacking(Feature::Namespaces))
        });
        let (section, failed) = trial(&reg, None, None, 10, 1, "--fuzz-seed 1", REPLAY_BY_REPORT);
        let error = section.error.unwrap_or_default();
        assert!(error.starts_with("not run: the saver declares it lacks namespaces"), "{error}");
        assert!(failed.is_none() && section.sequences == 0);
    }

    #[test]
    fn a_marker_is_judged_in_durability_and_a_batch_in_concurrency() {
        assert_eq!(capability_of(&Op::Reopen), Capability::Durability);
        assert_eq!(capability_of(&Op::Concurrent { calls: Vec::new() }), Capability::Concurrency);
        assert_eq!(capability_of(&Op::Call(Invocation::GetNextVersion { current: None })), Capability::Put);
    }
}
