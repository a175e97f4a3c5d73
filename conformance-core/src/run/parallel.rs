//! Running a list of cases, up to `jobs` at once, in capability order ([`run`]): the front
//! ends that run every case themselves (`cargo xtask conformance`, `validate()`). Each case
//! goes through [`execute_case_repeated`]; `--fail-fast` and an interrupt stop new cases from
//! starting (the rest are reported as skipped, with the reason).

use std::sync::{Arc, Mutex};

use super::{execute_case_repeated, not_run, Planned, RunOptions, FAIL_FAST_SKIP, INTERRUPTED_SKIP};
use crate::isolation::Abort;
use crate::report::{CaseResult, Outcome, Report};
use crate::session::{Session, Start};
use crate::{Capability, Registration, SpecCase};

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
        // The session's registration: it carries what detection found for the cases.
        let ran = run_parallel(session.registration(), &to_run, options, &stop);
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
            let (section, failed) = trial(session.registration());
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
                let r = execute_case_repeated(registration, case, repeat);
                progress.case_done(&r);
                stop.record(&r, options.fail_fast);
                results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
            });
        }
    });
    let mut results = results.lock().unwrap_or_else(|e| e.into_inner());
    std::mem::take(&mut *results)
}
