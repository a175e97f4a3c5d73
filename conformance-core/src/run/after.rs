//! A trial run after the cases of a run, in its session ([`super::RunOptions::after_cases`]).

use std::sync::Arc;

use crate::report::CaseResult;
use crate::Registration;

/// What [`AfterCases`] runs: given the session's registration and what its detection found
/// ([`crate::Session::detection`]), the report's `fuzz` section
/// and, when the trial found a broken rule, the failed result it adds to the run, counted
/// against that result's capability (the capability of the call that diverged).
pub type AfterCasesFn =
    dyn Fn(&Registration, Option<&crate::Detection>) -> (crate::FuzzSection, Option<CaseResult>) + Send + Sync;

/// A trial run after the cases ([`super::RunOptions::after_cases`]).
#[derive(Clone)]
pub struct AfterCases(pub Arc<AfterCasesFn>);

impl std::fmt::Debug for AfterCases {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AfterCases(..)")
    }
}
