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

/// The fuzz trial's settings from the environment: `None` when [`FUZZ_ENV`] is unset or
/// empty, else its number of sequences and the seed of [`FUZZ_SEED_ENV`] (`None`: draw one).
///
/// # Errors
/// A set, non-empty [`FUZZ_ENV`] that is not a count of 1 or more, or a [`FUZZ_SEED_ENV`]
/// that is not a u64: a typo would otherwise run no fuzz trial, or another seed, without a
/// word. The run checks this before any trial (exit 2).
pub(super) fn fuzz_env() -> Result<Option<(u32, Option<u64>)>, String> {
    let seed = fuzz_seed_env()?;
    let Some(v) = std::env::var(FUZZ_ENV).ok().map(|v| v.trim().to_owned()).filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    match v.parse::<u32>() {
        Ok(n) if n > 0 => Ok(Some((n, seed))),
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

/// The opt-in trial `fuzz::model_sequences` (issue 15): [`crate::fuzz`] with the number of
/// sequences in [`FUZZ_ENV`], the seed printed so a failure can be reproduced with
/// [`FUZZ_SEED_ENV`] or `cargo xtask fuzz --seed`. What it did goes to `section`, which
/// becomes the report's `fuzz` section.
pub(super) fn fuzz_trial(
    registration: &Registration,
    name: String,
    section: &Arc<Mutex<Option<conformance_core::FuzzSection>>>,
) -> Option<Trial> {
    // Checked by the run before any trial (`fuzz_env`'s errors are exit 2).
    let (cases, seed) = fuzz_env().ok()??;
    let seed = seed.unwrap_or_else(|| fastrand::u64(..));
    let reg = registration.clone();
    let section = section.clone();
    Some(Trial::test(name, move || {
        eprintln!("fuzz: {cases} sequences, seed {seed} ({FUZZ_SEED_ENV}={seed} reproduces)");
        let options = crate::fuzz::FuzzOptions { seed, cases, ..Default::default() };
        let outcome = crate::fuzz::fuzz_in_lifespan(&reg, &options);
        *section.lock().unwrap_or_else(|e| e.into_inner()) = Some(match &outcome {
            Ok(o) => o.section(),
            Err(e) => conformance_core::FuzzSection {
                seed: seed.to_string(),
                sequences: 0,
                ops: 0,
                duration_ms: 0.0,
                divergences: Vec::new(),
                error: Some(e.clone()),
            },
        });
        match outcome {
            Err(e) => Err(Failed::from(e)),
            Ok(o) => match o.divergence {
                None => Ok(()),
                Some(d) => Err(Failed::from(format!(
                    "seed {seed}: divergence from the model after {} sequences, shrunk to:\n{}{}\n\ntrace file:\n{}",
                    o.sequences,
                    d.trace.readable(),
                    d.message,
                    d.trace.to_json()
                ))),
            },
        }
    }))
}
