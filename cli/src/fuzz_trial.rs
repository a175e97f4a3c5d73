//! The fuzz trial of a whole front-end run (issue 36): its budget and seed from the flags
//! or the environment (conformance-spec's `fuzz::trial`).

/// The fuzz trial of a whole run (issue 36): none with --capabilities or --cases, or a
/// budget of 0. `budget` and `seed` are the flags'
/// (else the variables', checked before the run); `selected`: --capabilities or --cases.
pub(crate) fn fuzz_trial(
    budget: Option<std::time::Duration>,
    seed: Option<u64>,
    selected: bool,
) -> Option<conformance_core::AfterCases> {
    use conformance_spec::fuzz::trial;
    let budget = budget.or_else(|| trial::budget_from_env().ok()).unwrap_or(trial::DEFAULT_BUDGET);
    if budget.is_zero() || selected {
        return None;
    }
    let seed = seed.or_else(|| fuzz_seed_from_env().ok().flatten()).unwrap_or_else(|| fastrand::u64(..));
    Some(trial::after_cases(budget, seed, format!("--fuzz-seed {seed}")))
}

/// `$CHECKPOINT_CONFORMANCE_FUZZ_SEED`, when set.
///
/// # Errors
/// A set value that is not a u64, naming the variable.
pub(crate) fn fuzz_seed_from_env() -> Result<Option<u64>, String> {
    let name = conformance_spec::harness::FUZZ_SEED_ENV;
    match std::env::var(name) {
        Ok(v) if v.trim().is_empty() => Ok(None),
        Ok(v) => {
            v.trim().parse().map(Some).map_err(|_| format!("${name}={v:?}: a seed from 0 to {} is expected", u64::MAX))
        }
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(_) => Err(format!("${name} is not valid UTF-8: a seed is expected")),
    }
}
