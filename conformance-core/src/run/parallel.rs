//! Running a list of cases, up to `jobs` at once, in capability order ([`run`]): the front
//! ends that run every case themselves (`cargo xtask conformance`, `validate()`). Each case
//! goes through [`execute_case_repeated`]; `--fail-fast` and an interrupt stop new cases from
//! starting (the rest are reported as skipped, with the reason).

use std::sync::{Arc, Mutex};

use super::{execute_case_repeated, not_run, Planned, RunOptions, FAIL_FAST_SKIP, INTERRUPTED_SKIP};
use crate::isolation::Abort;
use crate::report::{CaseResult, Outcome, Report};
use crate::session::{Session, Start};
use crate::{Capability, Detection, Registration, SpecCase};

/// Runs `cases` against `registration` through a [`Session`]: lifespan setup, detection,
/// every planned case (capability by capability, `options.jobs` at once), lifespan
/// teardown, report. After a failed setup no case runs.
pub fn run(registration: &Registration, cases: &[SpecCase], options: &RunOptions) -> Report {
    let selection = options.capabilities.as_ref();
    let session = Session::start(registration, Start::Detect);
    if session.setup_error().is_some() {
        return session.report(cases, selection, Vec::new());
    }
    let mut tests = Vec::with_capacity(cases.len());
    let stop = Stop::default();
    for cap in Capability::ALL {
        let caps: Vec<&SpecCase> = cases.iter().filter(|c| c.capability == cap).collect();
        if caps.is_empty() {
            continue;
        }
        let planned: Vec<Planned> = caps.iter().map(|c| session.plan(c, selection)).collect();
        let to_run: Vec<&SpecCase> =
            caps.iter().zip(&planned).filter(|(_, p)| **p == Planned::Run).map(|(c, _)| *c).collect();
        let head = planned.iter().find(|p| **p == Planned::Run).unwrap_or(&planned[0]);
        options.progress.capability_start(cap, head);
        let ran = run_parallel(session.registration(), session.detection(), &to_run, options, &stop);
        let mut ran = ran.into_iter();
        for (case, p) in caps.iter().zip(&planned) {
            if *p == Planned::Run {
                match ran.next().flatten() {
                    Some(r) => tests.push(Some(r)),
                    None => tests.push(Some(not_run(case, &Planned::Skipped(stop.reason())))),
                }
            } else {
                tests.push(Some(not_run(case, p)));
            }
        }
        if planned.contains(&Planned::Run) {
            options.progress.capability_end(cap);
        }
    }
    // The report lists the cases in run order (capability order), as they ran.
    let ordered: Vec<SpecCase> =
        Capability::ALL.iter().flat_map(|cap| cases.iter().filter(move |c| c.capability == *cap).copied()).collect();
    let mut after = Vec::new();
    let mut fuzz = None;
    if let Some(super::AfterCases(trial)) = &options.after_cases {
        if !stop.stopped() {
            let (section, failed) = trial(session.registration(), session.detection());
            fuzz = Some(section);
            after.extend(failed);
        }
    }
    let mut report = session.report_with(&ordered, selection, tests, after);
    report.fuzz = fuzz;
    report
}

/// What the cases of a run share: whether `--fail-fast` stopped it (and after which
/// case), and whether the timeout hint was printed.
#[derive(Default)]
struct Stop {
    failed: Mutex<Option<String>>,
    hinted: std::sync::atomic::AtomicBool,
}

impl Stop {
    /// Whether no further case may start: `--fail-fast` stopped the run, or the process is
    /// being interrupted (`leftovers::interrupted`).
    fn stopped(&self) -> bool {
        crate::leftovers::interrupted() || self.failed.lock().unwrap_or_else(|e| e.into_inner()).is_some()
    }

    fn reason(&self) -> String {
        if crate::leftovers::interrupted() {
            return INTERRUPTED_SKIP.to_owned();
        }
        let failed = self.failed.lock().unwrap_or_else(|e| e.into_inner());
        format!("{FAIL_FAST_SKIP} {} failed", failed.as_deref().unwrap_or("a case"))
    }

    /// Records a finished case: stops the run on a failure under `fail_fast`, and prints
    /// the timeout hint on stderr after the first timeout.
    fn record(&self, r: &CaseResult, fail_fast: bool) {
        if r.outcome != Outcome::Failed {
            return;
        }
        if fail_fast {
            self.failed.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert_with(|| r.id.clone());
        }
        if let Some(hint) = timeout_hint(r) {
            if !self.hinted.swap(true, std::sync::atomic::Ordering::SeqCst) {
                eprintln!("{hint}");
            }
        }
    }
}

/// The one line printed after the first case that timed out: how to give cases more time
/// (`--timeout` of `cargo xtask conformance`, `Registration::timeout`) and to stop early
/// (`--fail-fast`), with the limit the case had. `None` unless `r` ended on
/// [`Abort::TimedOut`] ([`CaseResult::abort`]).
pub fn timeout_hint(r: &CaseResult) -> Option<String> {
    let Some(Abort::TimedOut { limit, .. }) = &r.abort else { return None };
    (r.outcome == Outcome::Failed).then(|| {
        format!(
            "hint: {} timed out after {}; a slow saver needs a longer limit (--timeout SECONDS of cargo xtask \
             conformance, or Registration::timeout), a blocking one --fail-fast to stop at the first failure",
            r.id,
            crate::isolation::limit_text(*limit)
        )
    })
}

/// Runs `cases` with up to `options.jobs` at once and returns their results in input order;
/// `None` for a case not started because `--fail-fast` stopped the run or the process is
/// being interrupted.
fn run_parallel(
    registration: &Registration,
    detection: Option<&Detection>,
    cases: &[&SpecCase],
    options: &RunOptions,
    stop: &Stop,
) -> Vec<Option<CaseResult>> {
    let jobs = options.jobs.max(1).min(cases.len().max(1));
    let next = Arc::new(Mutex::new(0usize));
    let results: Arc<Mutex<Vec<Option<CaseResult>>>> = Arc::new(Mutex::new(vec![None; cases.len()]));
    let owned: Arc<Vec<SpecCase>> = Arc::new(cases.iter().map(|c| **c).collect());
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            let next = next.clone();
            let results = results.clone();
            let owned = owned.clone();
            let progress = &options.progress;
            let repeat = options.repeat;
            scope.spawn(move || loop {
                if stop.stopped() {
                    break;
                }
                let i = {
                    let mut n = next.lock().unwrap_or_else(|e| e.into_inner());
                    let i = *n;
                    *n += 1;
                    i
                };
                let Some(case) = owned.get(i) else { break };
                let r = execute_case_repeated(registration, detection, case, repeat);
                // Reported once run again alone, below.
                if r.disturbed.is_none() {
                    progress.case_done(&r);
                    stop.record(&r, options.fail_fast);
                }
                results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
            });
        }
    });
    let mut results = std::mem::take(&mut *results.lock().unwrap_or_else(|e| e.into_inner()));
    rerun_disturbed(registration, detection, cases, &mut results, options, stop);
    results
}

/// Runs again, one at a time with nothing else running, each case whose failure was
/// disturbed by another case's call ([`CaseResult::disturbed`]: a bridged child stopped or
/// died while calls of several cases were in flight, so the call to blame is not known).
/// The case that blocked the child fails again alone; the others get their own verdict.
/// The second run's result stands, with why and the first run's failure in
/// [`CaseResult::rerun_alone`]. Once `--fail-fast` or an interrupt stopped the run, such a
/// case is not judged: it is skipped with the stop's reason (its first failure said), as
/// the cases not started are, and not printed.
fn rerun_disturbed(
    registration: &Registration,
    detection: Option<&Detection>,
    cases: &[&SpecCase],
    results: &mut [Option<CaseResult>],
    options: &RunOptions,
    stop: &Stop,
) {
    for (case, slot) in cases.iter().zip(results.iter_mut()) {
        let Some(first) = slot.as_mut().filter(|r| r.disturbed.is_some()) else { continue };
        let why = first.disturbed.take().unwrap_or_default();
        let first_failure = first.message.clone().unwrap_or_default();
        if stop.stopped() {
            let reason = format!(
                "{}; its one run failed, disturbed by another case's call ({why}): {first_failure}",
                stop.reason()
            );
            *first = not_run(case, &Planned::Skipped(reason));
            continue;
        }
        let mut again = super::repeated(registration, detection, case, options.repeat, true);
        again.disturbed = None;
        again.rerun_alone = Some(format!("because {why}; its first run failed: {first_failure}"));
        options.progress.case_done(&again);
        stop.record(&again, options.fail_fast);
        *first = again;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    use async_trait::async_trait;

    use super::*;
    use crate::types::{CheckpointConfig, CheckpointTuple};
    use crate::{CallNote, CaseEnv, CaseFuture, CheckpointError, CheckpointSaver, Fixture};

    /// Fails every `get_tuple` that overlaps another one, each call marked disturbed, as the
    /// bridge marks the calls in flight of a child stopped as stuck; one alone answers.
    #[derive(Default)]
    struct Crowded(AtomicUsize);

    #[async_trait]
    impl CheckpointSaver for Crowded {
        async fn get_tuple(&self, _: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
            let company = self.0.fetch_add(1, Ordering::SeqCst) > 0 || {
                let until = Instant::now() + Duration::from_millis(500);
                while self.0.load(Ordering::SeqCst) < 2 && Instant::now() < until {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                self.0.load(Ordering::SeqCst) > 1
            };
            // Both overlapping calls see each other before either leaves.
            tokio::time::sleep(Duration::from_millis(50)).await;
            self.0.fetch_sub(1, Ordering::SeqCst);
            if !company {
                return Ok(None);
            }
            if let Some(note) = CallNote::current() {
                note.disturbed("another call was in flight");
            }
            Err(CheckpointError::storage_msg("stopped with another call in flight"))
        }
    }

    fn reads(ctx: CaseEnv) -> CaseFuture {
        Box::pin(async move {
            let config = CheckpointConfig::new("t");
            ctx.saver.get_tuple(&config).await.map_err(|e| crate::Failure::new(e.to_string()))?;
            Ok(())
        })
    }

    #[test]
    fn a_failure_disturbed_by_another_case_is_run_again_alone() {
        let saver = Arc::new(Crowded::default());
        let reg = Registration::new("crowded", move || {
            let saver = saver.clone();
            async move { Ok(Fixture::from_arc(saver)) }
        });
        let cases =
            [SpecCase::new(Capability::GetTuple, "first", reads), SpecCase::new(Capability::GetTuple, "second", reads)];
        let refs: Vec<&SpecCase> = cases.iter().collect();
        let options = RunOptions { jobs: 2, ..RunOptions::default() };
        let results = run_parallel(&reg, None, &refs, &options, &Stop::default());
        for r in results.iter().flatten() {
            assert_eq!(r.outcome, Outcome::Passed, "{}: {:?}", r.id, r.message);
            let why = r.rerun_alone.as_deref().unwrap_or_default();
            assert!(why.contains("another call was in flight"), "{why}");
            assert!(r.disturbed.is_none());
        }
        assert_eq!(results.iter().flatten().count(), 2);
    }
}
