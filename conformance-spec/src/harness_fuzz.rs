//! The opt-in fuzz trial of a `checkpointer_test!` binary (`fuzz::model_sequences`): its
//! environment and the trial itself, split from the harness along its own seam.

use std::sync::{Arc, Mutex};

use conformance_core::Registration;
use libtest_mimic::{Failed, Trial};

/// The environment variable that switches on the fuzz trial of `checkpointer_test!`: the
/// number of generated sequences (`CHECKPOINT_CONFORMANCE_FUZZ=500`).
pub const FUZZ_ENV: &str = "CHECKPOINT_CONFORMANCE_FUZZ";
/// The seed of the fuzz trial; without it a seed is drawn and printed.
pub const FUZZ_SEED_ENV: &str = "CHECKPOINT_CONFORMANCE_FUZZ_SEED";

/// How much the fuzz trial runs: `cases` sequences at most, within `budget` (none: no
/// time limit).
pub(super) struct FuzzSettings {
    budget: Option<std::time::Duration>,
    cases: u32,
    seed: Option<u64>,
}

/// The fuzz trial's settings from the environment, as a whole run's (`by_default`; else
/// only when one of the variables is set): by default
/// [`crate::fuzz::trial::DEFAULT_BUDGET`] of sequences, or the seconds in
/// [`BUDGET_ENV`](crate::fuzz::trial::BUDGET_ENV) (`0`: `None`, no trial); a count in
/// [`FUZZ_ENV`] runs that many sequences without a time limit instead. The seed is
/// [`FUZZ_SEED_ENV`]'s (`None`: draw one).
///
/// # Errors
/// A set, non-empty [`FUZZ_ENV`] that is not a count of 1 or more, a budget that is not a
/// number of seconds from 0 to 3600, or a [`FUZZ_SEED_ENV`] that is not a u64: a typo
/// would otherwise run another trial, or none, without a word. The run checks this before
/// any trial (exit 2).
pub(super) fn fuzz_env(by_default: bool) -> Result<Option<FuzzSettings>, String> {
    let seed = fuzz_seed_env()?;
    let budget = crate::fuzz::trial::budget_from_env()?;
    let asked = std::env::var_os(crate::fuzz::trial::BUDGET_ENV).is_some_and(|v| !v.is_empty());
    let Some(v) = std::env::var(FUZZ_ENV).ok().map(|v| v.trim().to_owned()).filter(|v| !v.is_empty()) else {
        let on = (by_default || asked) && !budget.is_zero();
        return Ok(on.then_some(FuzzSettings { budget: Some(budget), cases: u32::MAX, seed }));
    };
    match v.parse::<u32>() {
        Ok(n) if n > 0 => Ok(Some(FuzzSettings { budget: None, cases: n, seed })),
        _ => Err(format!("{FUZZ_ENV}={v:?}: a number of sequences from 1 to {} is expected", u32::MAX)),
    }
}

/// The seed in [`FUZZ_SEED_ENV`], when it is set and not empty: read by the
/// `checkpointer_test!` trial and by the front ends' default fuzz trial alike.
///
/// # Errors
/// A value that is not a u64, naming the variable.
pub fn fuzz_seed_env() -> Result<Option<u64>, String> {
    match std::env::var(FUZZ_SEED_ENV).ok().map(|v| v.trim().to_owned()).filter(|v| !v.is_empty()) {
        Some(v) => v
            .parse::<u64>()
            .map(Some)
            .map_err(|_| format!("{FUZZ_SEED_ENV}={v:?}: a seed from 0 to {} is expected", u64::MAX)),
        None => Ok(None),
    }
}

/// What the fuzz trial gives the report: its section, and the failed (or not strict)
/// result of a divergence, counted in the capability of the call that diverged.
pub(super) struct Fuzzed {
    /// The report's `fuzz` section.
    pub(super) section: conformance_core::FuzzSection,
    /// The divergence's result, when the trial found one.
    pub(super) failed: Option<conformance_core::CaseResult>,
}

/// The trial `fuzz::model_sequences` (issue 36: in every run, as in a whole run's): the
/// same trial as the front ends' ([`crate::fuzz::trial::trial`]) with the settings of
/// [`fuzz_env`], the seed printed so a divergence can be reproduced with [`FUZZ_SEED_ENV`]
/// or `cargo xtask fuzz --seed`. A MUST divergence fails the trial; a SHOULD one passes,
/// not strict (it fails under `CHECKPOINT_CONFORMANCE_STRICT`). What it did goes to
/// `section`: the report's `fuzz` section, and its divergence counted in the report as in
/// a whole run's.
pub(super) fn fuzz_trial(
    registration: &Registration,
    detection: Option<&conformance_core::Detection>,
    name: String,
    section: &Arc<Mutex<Option<Fuzzed>>>,
    by_default: bool,
) -> Option<Trial> {
    // Checked by the run before any trial (`fuzz_env`'s errors are exit 2).
    let FuzzSettings { budget, cases, seed } = fuzz_env(by_default).ok()??;
    let seed = seed.unwrap_or_else(|| fastrand::u64(..));
    // A registration that skips `put` (a server it needs is not there) has nothing to fuzz:
    // the trial is ignored, as its cases are.
    let skipped = registration.skips().contains_key(&conformance_core::Capability::Put);
    let reg = registration.clone();
    let detection = detection.cloned();
    let section = section.clone();
    Some(
        Trial::test(name, move || {
            let rerun = format!("{FUZZ_SEED_ENV}={seed}");
            let replay = crate::fuzz::trial::REPLAY_AS_USER_TRACE;
            let (fuzzed, result) =
                crate::fuzz::trial::trial(&reg, detection.as_ref(), budget, cases, seed, &rerun, replay);
            let error = fuzzed.error.clone();
            *section.lock().unwrap_or_else(|e| e.into_inner()) =
                Some(Fuzzed { section: fuzzed, failed: result.clone() });
            if let (Some(e), None) = (&error, &result) {
                // A saver outside the generator's domain is not fuzzed; a runtime that did not
                // start is a failure.
                return if e.starts_with("not run:") { Ok(()) } else { Err(Failed::from(e.as_str())) };
            }
            match result {
                None => Ok(()),
                Some(r) if r.outcome == conformance_core::Outcome::Failed => {
                    Err(Failed::from(r.message.unwrap_or_else(|| "a MUST divergence".into())))
                }
                Some(r) if super::strict_env().unwrap_or(false) => Err(Failed::from(format!(
                    "not strict (a SHOULD rule; {} is set): {}",
                    super::STRICT_ENV,
                    r.message.unwrap_or_default()
                ))),
                Some(r) => {
                    eprintln!("fuzz: passed, not strict: {}", r.message.unwrap_or_default());
                    Ok(())
                }
            }
        })
        .with_ignored_flag(skipped),
    )
}
