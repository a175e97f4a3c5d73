//! Issue 13 (review): once an interrupt's cleanups start (`leftovers::run_interrupt_cleanups`,
//! called by a front end's SIGINT / SIGTERM handler), no new case starts; the cases not
//! started are reported as not run. Its own test binary: the interrupt is process-wide.

use std::sync::atomic::{AtomicUsize, Ordering};

use conformance_core::run::{run, RunOptions};
use conformance_core::{async_trait, CaseEnv, CheckpointSaver, Fixture, Outcome, Registration, SpecCase};
use conformance_core::{Capability, CheckpointConfig, CheckpointError, CheckpointTuple, ListOptions};

static STARTED: AtomicUsize = AtomicUsize::new(0);

struct Fine;

#[async_trait]
impl CheckpointSaver for Fine {
    async fn get_tuple(&self, _config: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
        Ok(None)
    }
    async fn list(&self, _thread_id: &str, _options: &ListOptions) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        Ok(vec![])
    }
}

/// The first case to start plays the signal handler: it runs the interrupt cleanups.
fn counted(_ctx: CaseEnv) -> conformance_core::CaseFuture {
    Box::pin(async move {
        if STARTED.fetch_add(1, Ordering::SeqCst) == 0 {
            conformance_core::leftovers::run_interrupt_cleanups();
        }
        Ok(())
    })
}

#[test]
fn no_case_starts_after_an_interrupt() {
    let names = ["a", "b", "c", "d", "e", "f"];
    let cases: Vec<SpecCase> = names
        .iter()
        .map(|n| SpecCase::new(Capability::GetTuple, n, counted))
        .chain(std::iter::once(SpecCase::new(Capability::List, "later", counted)))
        .collect();
    let reg = Registration::new("fine", || async { Ok(Fixture::new(Fine)) });
    let report = run(&reg, &cases, &RunOptions { jobs: 1, ..RunOptions::default() });
    assert!(conformance_core::leftovers::interrupted());
    assert_eq!(STARTED.load(Ordering::SeqCst), 1, "cases started after the interrupt");
    let not_run: Vec<_> = report.tests.iter().filter(|t| t.outcome == Outcome::Skipped).collect();
    assert_eq!(not_run.len(), cases.len() - 1, "{}", report.to_json());
    assert!(
        not_run.iter().all(|t| t.message.as_deref().is_some_and(|m| m.contains("interrupted"))),
        "{}",
        report.to_json()
    );
}
