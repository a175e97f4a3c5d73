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
    let seed =
        seed.or_else(|| conformance_spec::harness::fuzz_seed_env().ok().flatten()).unwrap_or_else(|| fastrand::u64(..));
    Some(trial::after_cases(budget, seed, format!("--fuzz-seed {seed}")))
}
