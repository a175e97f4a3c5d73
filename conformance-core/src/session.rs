//! The session of one registration, shared by every front end (`run::run` behind
//! `validate()` and `cargo xtask conformance`, and the libtest harness behind
//! `checkpointer_test!`): lifespan setup -> detection -> planning -> (the front end runs
//! the planned cases) -> lifespan teardown -> report. The report of a run whose setup
//! failed is built here and nowhere else.

use std::collections::BTreeSet;
use std::time::Instant;

use crate::run::{build_report, detect, not_run, plan_case, plan_needs, Detection, Planned};
use crate::{Capability, CaseResult, Registration, Report, SpecCase};

/// How much of the start a front end needs ([`Session::start`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// Neither the lifespan nor detection (a listing that shows no ignored flags).
    Nothing,
    /// The lifespan setup only: cases will run, but which capabilities are implemented is
    /// not needed (the harness under nextest's process per test).
    Lifespan,
    /// The lifespan setup, then detection (probing a fresh saver, CONTRACT §5).
    Detect,
}

/// What a session knows about the capabilities before any case runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Knowledge {
    /// Detection ran.
    Detected(Detection),
    /// The lifespan setup failed with this message: no case runs, every case is reported
    /// as not run with it, and the report carries it as `setup_error`.
    SetupFailed(String),
    /// Detection was not asked for ([`Start::Nothing`], [`Start::Lifespan`]): every case
    /// of a capability the registration does not skip is planned to run.
    Unprobed,
}

/// One registration's run from setup to report. Dropping a session whose setup ran
/// without calling [`Session::teardown`] or [`Session::report`] skips the teardown, so a
/// front end calls one of them.
pub struct Session {
    registration: Registration,
    started: Instant,
    knowledge: Knowledge,
    /// The lifespan setup ran and the teardown has not.
    needs_teardown: bool,
    /// The teardown's error, once it ran.
    teardown_error: Option<String>,
}

impl Session {
    /// Starts a session on `registration`: the lifespan setup unless `start` is
    /// [`Start::Nothing`], then detection when it is [`Start::Detect`] and the setup
    /// succeeded.
    pub fn start(registration: &Registration, start: Start) -> Self {
        let started = Instant::now();
        let (knowledge, needs_teardown) = match start {
            Start::Nothing => (Knowledge::Unprobed, false),
            Start::Lifespan | Start::Detect => match crate::run::lifespan_setup(registration) {
                Err(e) => (Knowledge::SetupFailed(e), true),
                Ok(()) if start == Start::Detect => (Knowledge::Detected(detect(registration)), true),
                Ok(()) => (Knowledge::Unprobed, true),
            },
        };
        let registration = registration.clone();
        Self { registration, started, knowledge, needs_teardown, teardown_error: None }
    }

    /// The registration.
    pub fn registration(&self) -> &Registration {
        &self.registration
    }

    /// What detection found, when it ran ([`Knowledge::Detected`]): the session's facts
    /// about the saver, which the cases get through
    /// [`crate::run::execute_case_repeated`], never through the registration.
    pub fn detection(&self) -> Option<&Detection> {
        match &self.knowledge {
            Knowledge::Detected(d) => Some(d),
            _ => None,
        }
    }

    /// What the session knows about the capabilities.
    pub fn knowledge(&self) -> &Knowledge {
        &self.knowledge
    }

    /// The lifespan setup's error, if it failed.
    pub fn setup_error(&self) -> Option<&str> {
        match &self.knowledge {
            Knowledge::SetupFailed(e) => Some(e),
            _ => None,
        }
    }

    /// The plan for `case` ([`plan_case`] after detection; without detection the
    /// registration's skips, and [`Planned::Run`] for the rest). After a failed setup the
    /// plan is that of the registration's skips too, and the front end reports the runs as
    /// not run ([`Session::setup_error`]).
    pub fn plan(&self, case: &SpecCase, selection: Option<&BTreeSet<Capability>>) -> Planned {
        match &self.knowledge {
            Knowledge::Detected(d) => plan_case(case, &self.registration, d, selection),
            Knowledge::SetupFailed(_) | Knowledge::Unprobed => {
                if selection.is_some_and(|s| !s.contains(&case.capability)) {
                    Planned::NotSelected
                } else {
                    match self.registration.skips().get(&case.capability) {
                        Some(r) => Planned::Skipped(r.clone()),
                        // Without detection every need counts as implemented; a skipped one
                        // still keeps the case from running.
                        None => plan_needs(case, &self.registration, |_| true),
                    }
                }
            }
        }
    }

    /// Runs the lifespan teardown if the setup ran and the teardown has not; returns its
    /// error (also on later calls).
    pub fn teardown(&mut self) -> Option<&str> {
        if std::mem::take(&mut self.needs_teardown) {
            self.teardown_error = crate::run::lifespan_teardown(&self.registration).err();
        }
        self.teardown_error.as_deref()
    }

    /// Ends the session: the teardown ([`Session::teardown`]) and the report of `cases`
    /// from `tests` (the results in catalog order; a case without a result is reported as
    /// not run, with its plan). After a failed setup every case is reported as not run with
    /// the setup's error, whatever `tests` holds, and the report's `setup_error` is set.
    pub fn report(
        self,
        cases: &[SpecCase],
        selection: Option<&BTreeSet<Capability>>,
        tests: Vec<Option<CaseResult>>,
    ) -> Report {
        self.report_with(cases, selection, tests, Vec::new())
    }

    /// [`Session::report`], with `after`: results of trials run after the cases (the fuzz
    /// trial's failure, [`crate::run::AfterCases`]), each counted in its capability. They
    /// are dropped after a failed setup, when no trial ran.
    pub fn report_with(
        mut self,
        cases: &[SpecCase],
        selection: Option<&BTreeSet<Capability>>,
        tests: Vec<Option<CaseResult>>,
        after: Vec<CaseResult>,
    ) -> Report {
        let teardown = self.teardown().map(str::to_owned);
        let (detection, tests) = match &self.knowledge {
            Knowledge::SetupFailed(e) => {
                let reason = Planned::Skipped(format!("not run: {e}"));
                (Detection::default(), cases.iter().map(|c| not_run(c, &reason)).collect())
            }
            Knowledge::Detected(d) => {
                (d.clone(), self.fill(cases, selection, tests).into_iter().chain(after).collect())
            }
            Knowledge::Unprobed => {
                (Detection::default(), self.fill(cases, selection, tests).into_iter().chain(after).collect())
            }
        };
        let mut report =
            build_report(&self.registration, &detection, selection, tests, self.started.elapsed(), self.setup_error());
        report.warnings.extend(teardown);
        report
    }

    /// The results of `cases`: each one's result, or a not-run result with its plan.
    fn fill(
        &self,
        cases: &[SpecCase],
        selection: Option<&BTreeSet<Capability>>,
        tests: Vec<Option<CaseResult>>,
    ) -> Vec<CaseResult> {
        let mut tests = tests.into_iter();
        cases
            .iter()
            .map(|case| match tests.next().flatten() {
                Some(r) => r,
                None => not_run(case, &self.plan(case, selection)),
            })
            .collect()
    }
}
