//! The one execution path behind every front end: detect -> plan -> execute each case
//! (fresh fixture, timeout, panic caught, cleanup always) -> report.
//!
//! `validate()` in `conformance-spec`, the `checkpointer_test!` trials and
//! `cargo xtask conformance` all go through a [`Session`](crate::Session) (setup, [`detect`], plan,
//! teardown, [`build_report`]) and run each case with [`execute_case_repeated`]; [`run`]
//! strings them together for the front ends that run every case themselves.

mod after;
mod parallel;
mod plan;
pub mod progress;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use crate::detect::{detect, Detection};
use crate::isolation::{catch_within, run_isolated, run_isolated_then};
pub use crate::isolation::{panic_message, runtime, Abort};
use crate::report::{
    conformance_level, strict_level, CapabilityResult, CapabilityStatus, CaseResult, Outcome, Repeats, Report,
    KIT_VERSION, SCHEMA_VERSION,
};
use crate::traced::{CallLog, Traced};
use crate::{Capability, CaseEnv, CaseInstance, CheckpointSaver, Registration, SpecCase, Strength};
pub use after::{AfterCases, AfterCasesFn};
pub use parallel::{run, timeout_hint};
pub(crate) use plan::plan_needs;
pub use plan::{not_implemented_reason, not_run, not_run_reason, plan_case, Planned, NEEDS_PREFIX};
use progress::Progress;

/// The options of a run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Only these capabilities (`None`: all).
    pub capabilities: Option<BTreeSet<Capability>>,
    /// Progress output while running.
    pub progress: Progress,
    /// Cases run at once (at least 1).
    pub jobs: usize,
    /// Times each case runs (at least 1; `--repeat N`): mixed outcomes are reported as
    /// nondeterministic ([`execute_case_repeated`]).
    pub repeat: u32,
    /// Stop at the first failed case: the cases not yet started are reported as skipped
    /// with the reason ([`FAIL_FAST_SKIP`] and the failed case's id).
    pub fail_fast: bool,
    /// A trial run after the cases, in the same session (its lifespan still set up): the
    /// default run's fuzz trial (issue 36; conformance-spec's `fuzz::trial`). It runs unless
    /// the run was stopped (`--fail-fast`, an interrupt). `None`: none.
    pub after_cases: Option<AfterCases>,
}

/// The start of the skip reason of a case that `--fail-fast` did not run.
pub const FAIL_FAST_SKIP: &str = "not run: --fail-fast stopped the run after";

/// The reason of a case not started because the process was interrupted (SIGINT, SIGTERM:
/// `leftovers::interrupted`).
pub const INTERRUPTED_SKIP: &str = "not run: the run was interrupted";

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            capabilities: None,
            progress: Progress::Quiet,
            jobs: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            repeat: 1,
            fail_fast: false,
            after_cases: None,
        }
    }
}

/// Runs one case: a fresh fixture from the factory, the case within its time limit (the
/// registration's timeout, or the case's own [`crate::Budget`] when longer), panics caught,
/// the cleanup always run (CONTRACT-independent harness rules).
pub fn execute_case(registration: &Registration, case: &SpecCase) -> CaseResult {
    execute_case_in(registration, None, case, false)
}

/// [`execute_case`] after `detection`, what the session found before any case (`None`
/// when detection did not run); `alone` when it runs with no other case beside it, run
/// again after a disturbed failure ([`crate::CallNote::alone`]).
fn execute_case_in(
    registration: &Registration,
    detection: Option<&Detection>,
    case: &SpecCase,
    alone: bool,
) -> CaseResult {
    let start = Instant::now();
    let reg = registration.clone();
    // Detection's facts the case needs: a saver without the latest read, and the limits
    // the probed instance declared, which every case's instance must declare alike.
    let no_latest_read = detection.is_some_and(|d| d.no_latest_read);
    let declared_lacks = detection.map(|d| d.lacks.clone());
    let run = case.run;
    let limit = case.time_limit(registration.timeout);
    let facts = crate::case::Facts::default();
    let case_facts = facts.clone();
    let calls = Arc::new(CallLog::new(&case.id(), alone));
    let case_calls = calls.clone();
    let lacked = *case;
    let (data, instance) = (case.data, case.instance);
    // A case whose thread reached its cleanup yielded in time: it gets the cleanup's limit
    // on top before it is abandoned as "did not yield", and the cleanup's own limit names it
    // (issue 40 row 13: a case cancelled in time was reported as a blocking call because its
    // cleanup waited behind a 100 MB answer).
    let cleaning = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reached = cleaning.clone();
    let multi_thread = case.multi_thread || registration.multi_thread;
    let outcome = run_isolated_then(multi_thread, limit, Some((cleaning, CLEANUP_LIMIT)), move || async move {
        // The factory's calls are the case's too (a bridged saver's `open`): a failure of
        // them disturbed by another case's call is known as such.
        let factory_note = case_calls.note();
        let made = catch_within(limit, factory_note.scope(reg.make_fixture())).await;
        case_calls.keep(&factory_note);
        let mut fixture = match made {
            Ok(Ok(f)) => f,
            Ok(Err(e)) => return Err((format!("the factory failed: {e}"), None, false)),
            Err(a @ Abort::TimedOut { .. }) => {
                return Err((
                    format!("the factory did not finish within {}", crate::isolation::limit_text(limit)),
                    Some(a),
                    false,
                ))
            }
            Err(a) => return Err((format!("the factory {a}"), Some(a), false)),
        };
        // A declaration holds for the whole run (CONTRACT §5 "Declared limits"): an instance
        // that declares other limits than the one detection probed (and the report names)
        // fails the case, so no limit is declared where no report shows it.
        if let Some(declared) = declared_lacks.as_ref().filter(|d| **d != fixture.lacks) {
            let names = |s: &std::collections::BTreeSet<crate::Feature>| {
                let v: Vec<_> = s.iter().map(|f| f.name()).collect();
                if v.is_empty() {
                    "none".to_owned()
                } else {
                    v.join(", ")
                }
            };
            let message = format!(
                "the factory's instance declares the limits [{}], the instance detection probed declared [{}]: a \
                 saver's declared limits hold for the whole run (CONTRACT §5 Declared limits)",
                names(&fixture.lacks),
                names(declared)
            );
            drop(fixture.saver);
            if let Some(c) = fixture.cleanup {
                let _ = catch_within(CLEANUP_LIMIT, c()).await;
            }
            return Err((message, None, false));
        }
        let closed = close_before(&mut fixture, instance, limit.saturating_sub(start.elapsed())).await;
        let traced: Arc<dyn CheckpointSaver> =
            Arc::new(Traced { inner: fixture.saver.clone(), log: case_calls.clone() });
        let lacked = lacked.lacked_feature(&fixture.lacks);
        let reopen = fixture.reopen.clone().map(|f| traced_reopen(f, case_calls.clone()));
        let ctx = CaseEnv::new(traced, reopen)
            .for_registration(reg.name.clone(), fixture.location.clone())
            .with_lacks(fixture.lacks.clone())
            .with_no_latest_read(no_latest_read)
            .with_data(data)
            .with_facts(case_facts);
        let remaining = limit.saturating_sub(start.elapsed());
        // A case that uses a feature the saver declared it lacks is not run (CONTRACT §5
        // Declared limits); its fixture is still cleaned up below.
        let result = match (lacked, closed) {
            (Some(feature), _) => Ok(Some(crate::lack_reason(feature))),
            // No verdict of the case: its instance could not be closed before it.
            (None, Err(m)) => Err((m, None, false)),
            (None, Ok(())) => match catch_within(remaining, run(ctx)).await {
                // Ok(Some(reason)): the case could not check its rule (Failure::not_run).
                Ok(Ok(())) => Ok(None),
                Ok(Err(f)) if f.is_not_run() => Ok(Some(f.message)),
                // The case's own verdict on its rule: the one failure a SHOULD case turns
                // into "passed, not strict" (a factory, cleanup, panic or timeout never is).
                // A MUST rule broken inside a SHOULD case fails whatever the strength.
                Ok(Err(f)) => {
                    let should_verdict = !f.is_must();
                    Err((f.message, None, should_verdict))
                }
                // The case's limit, not what was left of it after the factory.
                Err(Abort::TimedOut { abandoned, .. }) => {
                    let a = Abort::TimedOut { limit, in_flight: case_calls.describe(), abandoned };
                    Err((a.to_string(), Some(a), false))
                }
                Err(a) => Err((format!("the saver {a}{}", case_calls.describe()), Some(a), false)),
            },
        };
        drop(fixture.saver);
        reached.store(true, std::sync::atomic::Ordering::SeqCst);
        let cleanup = match fixture.cleanup {
            None => Ok(()),
            Some(c) => match catch_within(CLEANUP_LIMIT, c()).await {
                Ok(Ok(())) => Ok(()),
                Ok(Err(e)) => Err(format!("the cleanup failed: {e}")),
                Err(Abort::TimedOut { .. }) => {
                    Err(format!("the cleanup did not finish within {:.0} s", CLEANUP_LIMIT.as_secs_f64()))
                }
                Err(a) => Err(format!("the cleanup {a}")),
            },
        };
        match (result, cleanup) {
            (Ok(not_run), Ok(())) => Ok(not_run),
            (Err(m), Ok(())) => Err(m),
            (Ok(_), Err(c)) => Err((c, None, false)),
            (Err((m, a, _)), Err(c)) => Err((format!("{m}; and {c}"), a, false)),
        }
    });
    let (outcome, message, abort) = match outcome {
        Ok(Ok(None)) => (Outcome::Passed, None, None),
        Ok(Ok(Some(reason))) => (Outcome::NotRun, Some(reason), None),
        // The case's own verdict on a SHOULD rule: passed, not strict (CONTRACT §5). A
        // failed factory or cleanup, a panic or a timeout fails whatever the strength.
        Ok(Err((m, None, true))) if case.strength == Strength::Should => (Outcome::NotStrict, Some(m), None),
        Ok(Err((m, a, _))) => (Outcome::Failed, Some(m), a),
        Err(a @ Abort::TimedOut { .. }) => {
            let a = a.with_in_flight(calls.describe());
            (Outcome::Failed, Some(format!("the case {a}")), Some(a))
        }
        Err(a) => (Outcome::Failed, Some(format!("the case {a}{}", calls.describe())), Some(a)),
    };
    let facts = facts
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .map(|(k, v)| (format!("{}.{k}", case.capability), v.clone()))
        .collect();
    // A call the kit did not send to the saver: the case's outcome says nothing of the
    // saver (a refused put read as the saver's refusal passed a case that must fail).
    let (outcome, message, abort) = match calls.refused() {
        Some(why) if outcome != Outcome::NotRun => {
            (Outcome::NotRun, Some(format!("not judged: a call of it was not sent to the saver: {why}")), None)
        }
        _ => (outcome, message, abort),
    };
    // A failure with a call that another case's call made fail is not the case's own.
    let disturbed = matches!(outcome, Outcome::Failed | Outcome::NotStrict).then(|| calls.disturbed()).flatten();
    CaseResult {
        facts,
        abort,
        disturbed,
        ..plan::result_of(case, outcome, message, start.elapsed().as_secs_f64() * 1e3)
    }
}

/// `reopen` as the case sees it: the opening runs under a note of the case (a bridged
/// `reopen` sent to a child another case's call stopped is disturbed, not the case's
/// doing), and the second instance's calls are traced in the case's log like the first's.
fn traced_reopen(reopen: crate::ReopenFn, log: Arc<CallLog>) -> crate::ReopenFn {
    Arc::new(move || {
        let (reopen, log) = (reopen.clone(), log.clone());
        Box::pin(async move {
            let note = log.note();
            let opened = note.scope(reopen()).await;
            log.keep(&note);
            opened.map(|inner| Arc::new(Traced { inner, log }) as Arc<dyn CheckpointSaver>)
        })
    })
}

/// Closes the fixture's instance, keeping its storage, before a case that starts without
/// one ([`CaseInstance::Closed`]); nothing for [`CaseInstance::Open`].
///
/// # Errors
/// The close's error, panic or timeout (within `limit`), as a message: the case fails
/// with it unrun, and its cleanup still runs.
async fn close_before(fixture: &mut crate::Fixture, instance: CaseInstance, limit: Duration) -> Result<(), String> {
    if instance == CaseInstance::Open {
        return Ok(());
    }
    match catch_within(limit, fixture.close_instance()).await {
        Ok(r) => r.map_err(|e| format!("closing the factory's instance before the case failed: {e}")),
        Err(a) => Err(format!("closing the factory's instance before the case {a}")),
    }
}

/// How long a fixture's cleanup may take after its case.
const CLEANUP_LIMIT: Duration = Duration::from_secs(10);

/// Runs one case `runs` times (at least once) with [`execute_case`] and gives one result:
/// the same outcome every time gives that outcome (the first failure's message); mixed
/// outcomes give a failure "nondeterministic: failed in F of N runs" followed by a failing
/// run's message, so a verdict that depends on chance is named as such. With `runs > 1`
/// the result carries [`CaseResult::repeats`] (the runs made: a run that timed out ends the
/// repeats early); the duration is the sum of the runs. `detection` is what the session
/// found before any case ([`crate::Session::detection`]; `None` when it did not detect).
pub fn execute_case_repeated(
    registration: &Registration,
    detection: Option<&Detection>,
    case: &SpecCase,
    runs: u32,
) -> CaseResult {
    repeated(registration, detection, case, runs, false)
}

/// [`execute_case_repeated`], each run `alone` or not ([`execute_case_in`]).
pub(crate) fn repeated(
    registration: &Registration,
    detection: Option<&Detection>,
    case: &SpecCase,
    runs: u32,
    alone: bool,
) -> CaseResult {
    let runs = runs.max(1);
    let mut first = execute_case_in(registration, detection, case, alone);
    if runs == 1 {
        return first;
    }
    // A not-strict run is a failed run of a SHOULD case: mixed with passes, it is as
    // nondeterministic as a MUST case's failures.
    let failing = |r: &CaseResult| matches!(r.outcome, Outcome::Failed | Outcome::NotStrict);
    let mut failed = u32::from(failing(&first));
    // Runs not run (a need found missing at run time): mixed with passed runs, the saver
    // answered the same case differently, which is nondeterministic too.
    let mut not_run = u32::from(first.outcome == Outcome::NotRun);
    let mut done = 1;
    // A run that timed out stops the repeats: a hanging saver must not cost N timeouts
    // (and N abandoned threads) per case.
    let timed_out = |r: &CaseResult| r.abort.as_ref().is_some_and(Abort::is_timeout);
    let mut stop = first.outcome == Outcome::Failed && timed_out(&first);
    while done < runs && !stop {
        let next = execute_case_in(registration, detection, case, alone);
        done += 1;
        stop = next.outcome == Outcome::Failed && timed_out(&next);
        first.duration_ms += next.duration_ms;
        not_run += u32::from(next.outcome == Outcome::NotRun);
        if failing(&next) {
            failed += 1;
            if first.disturbed.is_none() {
                first.disturbed.clone_from(&next.disturbed);
            }
            // The first failing run's message, unless a later run failed outright (a panic,
            // a hang) where the first was only not strict.
            let outranks = first.outcome == Outcome::NotStrict && next.outcome == Outcome::Failed;
            if outranks {
                first.outcome = Outcome::Failed;
            }
            if !failing(&first) || outranks {
                first.message = next.message;
                first.facts = next.facts;
                first.abort = next.abort;
            }
        }
    }
    let repeats = Repeats { runs: done, failed };
    if failed == 0 && not_run > 0 && not_run < done {
        first.outcome = Outcome::Failed;
        first.message = Some(format!(
            "nondeterministic: not run in {not_run} of {done} runs (a need missing only sometimes), passed in the others"
        ));
    } else if repeats.nondeterministic() {
        // A SHOULD case stays not strict unless some run failed outright (a panic, a hang).
        let hard = first.outcome == Outcome::Failed || case.strength == Strength::Must;
        first.outcome = if hard { Outcome::Failed } else { Outcome::NotStrict };
        let said = first.message.take().unwrap_or_default();
        first.message = Some(format!("nondeterministic: failed in {failed} of {done} runs; a failing run: {said}"));
    }
    first.repeats = Some(repeats);
    first
}

/// Runs the lifespan's setup hook, if any.
///
/// # Errors
/// The hook's error, panic or timeout, as a message.
pub fn lifespan_setup(registration: &Registration) -> Result<(), String> {
    if crate::leftovers::interrupted() {
        // The process is exiting: no new work (issue 40 row 1).
        return Err("the lifespan setup did not run: the run is being interrupted".into());
    }
    run_hook(registration, "setup", registration.setup.clone())
}

/// Runs the lifespan's teardown hook, if any.
///
/// # Errors
/// The hook's error, panic or timeout, as a message.
pub fn lifespan_teardown(registration: &Registration) -> Result<(), String> {
    run_hook(registration, "teardown", registration.teardown.clone())
}

/// Runs a lifespan hook isolated, with four times the case timeout. A hook that yields is
/// cancelled at the limit ("timed out after 120.0 s", with what the hook noted on its
/// [`crate::CallNote`], such as a bridge child's unanswered `setup`); only one that blocks
/// its thread is abandoned as "did not yield" (issue 40 row 5: a child that never answered
/// `setup` was blamed on a blocking call).
fn run_hook(registration: &Registration, which: &str, hook: Option<crate::registration::HookFn>) -> Result<(), String> {
    let Some(hook) = hook else { return Ok(()) };
    let limit = registration.timeout * 4;
    let note = crate::CallNote::default();
    let noted = note.clone();
    let outcome = run_isolated(registration.multi_thread, limit, move || async move {
        catch_within(limit, noted.scope(hook())).await
    });
    let noted = || note.text().map(|n| format!(" ({n})")).unwrap_or_default();
    match outcome.and_then(|r| r) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(format!("the lifespan {which} failed: {}", crate::error_chain(&*e))),
        Err(a) => Err(format!("the lifespan {which} {a}{}", noted())),
    }
}

/// Whether every case is one that `--fail-fast` did not start ([`FAIL_FAST_SKIP`]).
fn fail_fast_skipped(cases: &[&CaseResult]) -> bool {
    !cases.is_empty()
        && cases.iter().all(|t| {
            t.outcome == Outcome::Skipped && t.message.as_deref().is_some_and(|m| m.starts_with(FAIL_FAST_SKIP))
        })
}

/// The skip reason of every selected capability when the lifespan setup failed: nothing was
/// probed, so a capability is not "not implemented" but not judged.
const SETUP_FAILED_SKIP: &str = "not judged: the lifespan setup failed";

/// Builds the report from case results (in run order) and what happened to each
/// capability. A capability whose every case `--fail-fast` left unstarted is `skipped`
/// with that reason (not `failed` with no failure). With `setup_error` (the lifespan setup
/// failed, so nothing was probed or run) every selected capability is `skipped`, "not
/// judged", rather than "not implemented", and the report carries the error.
pub fn build_report(
    registration: &Registration,
    detection: &Detection,
    selection: Option<&BTreeSet<Capability>>,
    tests: Vec<CaseResult>,
    duration: Duration,
    setup_error: Option<&str>,
) -> Report {
    let mut results = BTreeMap::new();
    for cap in Capability::ALL {
        let cases: Vec<&CaseResult> = tests.iter().filter(|t| t.capability == cap).collect();
        let passed = cases.iter().filter(|t| t.outcome == Outcome::Passed).count();
        let failed = cases.iter().filter(|t| t.outcome == Outcome::Failed).count();
        let not_strict = cases.iter().filter(|t| t.outcome == Outcome::NotStrict).count();
        // A SHOULD case not run (a declared limit) leaves the capability complete on its
        // MUST rules; under --strict it does not.
        let needs_missing = cases.iter().any(|t| t.outcome == Outcome::NotRun && t.strength == Strength::Must);
        let should_not_run = cases.iter().any(|t| t.outcome == Outcome::NotRun && t.strength == Strength::Should);
        let not_selected = selection.is_some_and(|s| !s.contains(&cap));
        let skip_reason = match setup_error {
            Some(_) if !not_selected => Some(SETUP_FAILED_SKIP.to_owned()),
            _ => registration.skips.get(&cap).cloned().or_else(|| {
                fail_fast_skipped(&cases).then(|| cases[0].message.clone().unwrap_or_else(|| FAIL_FAST_SKIP.to_owned()))
            }),
        };
        let status = if not_selected {
            CapabilityStatus::NotSelected
        } else if skip_reason.is_some() {
            CapabilityStatus::Skipped
        } else if !detection.is_detected(cap) {
            CapabilityStatus::NotImplemented
        } else if cases.is_empty() {
            CapabilityStatus::NoCases
        } else if fail_fast_skipped(&cases) {
            // --fail-fast stopped the run before any of its cases: not run, not failed.
            CapabilityStatus::Skipped
        } else if failed > 0 {
            CapabilityStatus::Failed
        } else if needs_missing {
            // Not passed, not failed: some of its cases could not run (CONTRACT §5).
            CapabilityStatus::Incomplete
        } else if passed == 0 && not_strict == 0 && !should_not_run {
            // Nothing ran at all; SHOULD cases not run for a declared limit leave it passed
            // on its MUST rules (none), not strictly.
            CapabilityStatus::Failed
        } else {
            CapabilityStatus::Passed
        };
        let ran = matches!(status, CapabilityStatus::Passed | CapabilityStatus::Failed | CapabilityStatus::Incomplete);
        // A detected capability with no case in the catalog yet is reported as passed only
        // if it has cases; with none it is left out of the level (passed: null).
        let passed_flag = if ran && !cases.is_empty() { Some(status == CapabilityStatus::Passed) } else { None };
        // A SHOULD case not run for a declared limit does not count against it either: the
        // strict level judges the SHOULD rules the saver can be asked (task_path on reads
        // is beyond every saver behind LangGraph's API).
        let passed_strict = passed_flag.map(|p| p && not_strict == 0);
        results.insert(
            cap,
            CapabilityResult {
                detected: detection.is_detected(cap) && !matches!(status, CapabilityStatus::NotSelected),
                passed: passed_flag,
                tests_passed: passed,
                tests_failed: failed,
                tests_skipped: cases.len() - passed - failed - not_strict,
                tests_not_strict: not_strict,
                passed_strict,
                failures: cases
                    .iter()
                    .filter(|t| t.outcome == Outcome::Failed)
                    .map(|t| format!("{}: {}", t.name, t.message.as_deref().unwrap_or("")))
                    .collect(),
                kind: cap.kind(),
                status,
                skip_reason,
                // A fold from +0.0: `Sum for f64` starts at -0.0, which the JSON would show
                // as `-0.0` for a capability without cases.
                duration_ms: cases.iter().fold(0.0, |acc, t| acc + t.duration_ms),
            },
        );
    }
    // Facts of every case, in run order (a later case's value for the same key wins).
    let facts = tests.iter().flat_map(|t| t.facts.iter().map(|(k, v)| (k.clone(), v.clone()))).collect();
    let capabilities_detected = results.values().filter(|r| r.passed.is_some()).count();
    let capabilities_passed = results.values().filter(|r| r.passed == Some(true)).count();
    let failure_clusters = crate::clusters::failure_clusters(&tests);
    Report {
        schema_version: SCHEMA_VERSION,
        kit_version: KIT_VERSION.to_owned(),
        checkpointer_name: registration.name.clone(),
        conformance_level: conformance_level(&results),
        strict_level: Some(strict_level(&results)),
        strict: false,
        results,
        tests,
        failure_clusters,
        fuzz: None,
        capabilities_passed,
        capabilities_detected,
        duration_ms: duration.as_secs_f64() * 1e3,
        setup_error: setup_error.map(str::to_owned),
        warnings: detection.warnings.clone(),
        declared_lacks: detection.lacks.iter().copied().collect(),
        facts,
    }
}

#[cfg(test)]
mod tests;
