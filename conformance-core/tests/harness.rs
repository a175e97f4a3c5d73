//! The harness survives bad savers: panics, hangs (async and blocking), errors, failing
//! factories, cleanups and lifespans are each reported per case, and the run goes on.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use conformance_core::run::{run, RunOptions};
use conformance_core::{
    async_trait, BoxError, Capability, CapabilityStatus, CaseEnv, ChannelVersions, Checkpoint, CheckpointConfig,
    CheckpointError, CheckpointMetadata, CheckpointSaver, CheckpointTuple, Failure, Fixture, Level, ListOptions,
    Outcome, Registration, SpecCase,
};

/// How a [`Misbehaving`] saver breaks.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Fine,
    PanicInPut,
    AsyncHangInList,
    BlockingHangInGet,
    StorageErrorEverywhere,
}

struct Misbehaving(Mode);

#[async_trait]
impl CheckpointSaver for Misbehaving {
    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: Checkpoint,
        _metadata: CheckpointMetadata,
        _new_versions: ChannelVersions,
    ) -> Result<CheckpointConfig, CheckpointError> {
        match self.0 {
            Mode::PanicInPut => panic!("put exploded on purpose"),
            Mode::StorageErrorEverywhere => Err(CheckpointError::storage_msg("disk on fire")),
            _ => Ok(config.clone().with_id(checkpoint.id)),
        }
    }

    async fn get_tuple(&self, _config: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
        if self.0 == Mode::BlockingHangInGet {
            std::thread::sleep(Duration::from_secs(3600));
        }
        Ok(None)
    }

    async fn list(&self, _thread_id: &str, _options: &ListOptions) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        if self.0 == Mode::AsyncHangInList {
            std::future::pending::<()>().await;
        }
        Ok(vec![])
    }
}

fn case(capability: Capability, name: &'static str, run: conformance_core::CaseFn) -> SpecCase {
    SpecCase::new(capability, name, run)
}

fn put_case(ctx: CaseEnv) -> conformance_core::CaseFuture {
    Box::pin(async move {
        let cfg = CheckpointConfig::new(ctx.thread("t"));
        let cp = Checkpoint { id: "c1".into(), ..Checkpoint::default() };
        ctx.saver
            .put(&cfg, cp, Default::default(), Default::default())
            .await
            .map_err(|e| Failure::new(format!("put: {e}")))?;
        Ok(())
    })
}

fn get_case(ctx: CaseEnv) -> conformance_core::CaseFuture {
    Box::pin(async move {
        ctx.saver.get_tuple(&CheckpointConfig::new(ctx.thread("t"))).await.map_err(|e| Failure::new(e.to_string()))?;
        Ok(())
    })
}

fn list_case(ctx: CaseEnv) -> conformance_core::CaseFuture {
    Box::pin(async move {
        ctx.saver.list(&ctx.thread("t"), &ListOptions::all()).await.map_err(|e| Failure::new(e.to_string()))?;
        Ok(())
    })
}

fn catalog() -> Vec<SpecCase> {
    vec![
        case(Capability::Put, "put_works", put_case),
        case(Capability::GetTuple, "get_works", get_case),
        case(Capability::List, "list_works", list_case),
    ]
}

fn quick(reg: Registration) -> Registration {
    reg.timeout(Duration::from_millis(500))
}

fn outcome(report: &conformance_core::Report, id: &str) -> (Outcome, String) {
    let t = report.tests.iter().find(|t| t.id == id).unwrap_or_else(|| panic!("no result for {id}"));
    (t.outcome, t.message.clone().unwrap_or_default())
}

#[test]
fn a_well_behaved_saver_passes() {
    let reg = Registration::new("fine", || async { Ok(Fixture::new(Misbehaving(Mode::Fine))) });
    let report = run(&reg, &catalog(), &RunOptions::default());
    assert_eq!(report.case_counts(), (3, 0, 0), "{}", report.to_json());
}

#[test]
fn a_panic_in_put_fails_that_case_with_the_panic_message() {
    let reg = quick(Registration::new("panics", || async { Ok(Fixture::new(Misbehaving(Mode::PanicInPut))) }));
    let report = run(&reg, &catalog(), &RunOptions::default());
    let (o, m) = outcome(&report, "put::put_works");
    assert_eq!(o, Outcome::Failed);
    assert!(m.contains("panicked") && m.contains("put exploded on purpose"), "message: {m}");
    assert!(m.contains("while in put(thread="), "the message names the call: {m}");
    assert_eq!(outcome(&report, "list::list_works").0, Outcome::Passed, "the run went on");
}

#[test]
fn an_async_hang_in_list_times_out_and_the_run_goes_on() {
    let reg = quick(Registration::new("hangs", || async { Ok(Fixture::new(Misbehaving(Mode::AsyncHangInList))) }));
    let start = Instant::now();
    let report = run(&reg, &catalog(), &RunOptions::default());
    let (o, m) = outcome(&report, "list::list_works");
    assert_eq!(o, Outcome::Failed);
    assert!(m.contains("timed out after 500 ms") && m.contains("while in list(thread="), "message: {m}");
    assert_eq!(outcome(&report, "put::put_works").0, Outcome::Passed);
    assert!(start.elapsed() < Duration::from_secs(10), "took {:?}", start.elapsed());
    assert!(report.warnings.iter().any(|w| w.contains("probing list")), "warnings: {:?}", report.warnings);
}

#[test]
fn a_blocking_hang_is_abandoned_and_reported() {
    let reg = quick(Registration::new("blocks", || async { Ok(Fixture::new(Misbehaving(Mode::BlockingHangInGet))) }));
    let start = Instant::now();
    let report = run(&reg, &[case(Capability::GetTuple, "get_works", get_case)], &RunOptions::default());
    let (o, m) = outcome(&report, "get_tuple::get_works");
    assert_eq!(o, Outcome::Failed);
    assert!(m.contains("timed out") && m.contains("while in get_tuple(thread="), "message: {m}");
    assert!(start.elapsed() < Duration::from_secs(15), "took {:?}", start.elapsed());
    // Only the blocked probe is abandoned: the other capabilities are still detected or not.
    assert!(report.warnings.iter().any(|w| w.contains("probing get_tuple")), "{:?}", report.warnings);
    assert_eq!(report.results[&Capability::Prune].status, CapabilityStatus::NotImplemented);
    assert!(report.results[&Capability::Put].detected);
}

#[test]
fn storage_errors_fail_the_cases_with_the_error() {
    let reg = Registration::new("errs", || async { Ok(Fixture::new(Misbehaving(Mode::StorageErrorEverywhere))) });
    let report = run(&reg, &catalog(), &RunOptions::default());
    let (o, m) = outcome(&report, "put::put_works");
    assert_eq!(o, Outcome::Failed);
    assert!(m.contains("disk on fire"), "message: {m}");
}

#[test]
fn a_factory_that_fails_every_other_time_fails_the_cases_that_needed_it() {
    let calls = Arc::new(AtomicUsize::new(0));
    let c = calls.clone();
    let reg = Registration::new("flaky", move || {
        let n = c.fetch_add(1, Ordering::SeqCst);
        async move {
            if n % 2 == 1 {
                Err::<Fixture, BoxError>("no connection today".into())
            } else {
                Ok(Fixture::new(Misbehaving(Mode::Fine)))
            }
        }
    });
    let opts = RunOptions { jobs: 1, ..RunOptions::default() };
    let report = run(&reg, &catalog(), &opts);
    let failed: Vec<_> = report.tests.iter().filter(|t| t.outcome == Outcome::Failed).collect();
    assert!(!failed.is_empty(), "{}", report.to_json());
    for t in failed {
        let m = t.message.as_deref().unwrap_or("");
        assert!(m.contains("the factory failed: no connection today"), "message: {m}");
    }
}

#[test]
fn a_factory_that_always_fails_is_reported_not_hidden() {
    let reg = Registration::new("broken", || async { Err::<Fixture, BoxError>("cannot connect".into()) });
    let report = run(&reg, &catalog(), &RunOptions::default());
    assert!(report.warnings.iter().any(|w| w.contains("cannot connect")), "{:?}", report.warnings);
    assert_eq!(report.case_counts().1, 3, "every case fails with the factory's error");
    assert_eq!(report.conformance_level, Level::None);
}

#[test]
fn a_failing_cleanup_is_reported_with_the_case() {
    let reg = Registration::new("dirty", || async {
        Ok(Fixture::new(Misbehaving(Mode::Fine)).with_cleanup(|| async { Err::<(), BoxError>("rm failed".into()) }))
    });
    let report = run(&reg, &catalog(), &RunOptions::default());
    let (o, m) = outcome(&report, "put::put_works");
    assert_eq!(o, Outcome::Failed);
    assert!(m.contains("the cleanup failed: rm failed"), "message: {m}");
}

#[test]
fn cleanup_runs_after_a_panic() {
    let cleaned = Arc::new(AtomicUsize::new(0));
    let c = cleaned.clone();
    let reg = Registration::new("panics", move || {
        let c = c.clone();
        async move {
            Ok(Fixture::new(Misbehaving(Mode::PanicInPut)).with_cleanup(move || async move {
                c.fetch_add(1, Ordering::SeqCst);
                Ok(())
            }))
        }
    });
    let report = run(&reg, &[case(Capability::Put, "put_works", put_case)], &RunOptions::default());
    assert_eq!(outcome(&report, "put::put_works").0, Outcome::Failed);
    // One fixture for detection, one for the case: both cleaned up.
    assert_eq!(cleaned.load(Ordering::SeqCst), 2);
}

#[test]
fn a_failing_lifespan_setup_ends_the_run_and_teardown_still_runs() {
    let torn = Arc::new(AtomicUsize::new(0));
    let t = torn.clone();
    let reg = Registration::new("nolife", || async { Ok(Fixture::new(Misbehaving(Mode::Fine))) }).lifespan(
        || async { Err::<(), BoxError>("server would not start".into()) },
        move || {
            let t = t.clone();
            async move {
                t.fetch_add(1, Ordering::SeqCst);
                Ok(())
            }
        },
    );
    let report = run(&reg, &catalog(), &RunOptions::default());
    let err = report.setup_error.clone().unwrap_or_default();
    assert!(err.contains("the lifespan setup failed: server would not start"), "setup_error: {err}");
    assert_eq!(report.case_counts(), (0, 0, 3));
    assert!(!report.is_success());
    assert_eq!(torn.load(Ordering::SeqCst), 1);
    // Nothing was probed, so no capability is "not implemented": each is not judged.
    for (cap, r) in &report.results {
        assert_eq!(r.status, CapabilityStatus::Skipped, "{cap}");
        assert_eq!(r.skip_reason.as_deref(), Some("not judged: the lifespan setup failed"), "{cap}");
    }
}

#[test]
fn a_failing_teardown_is_a_warning() {
    let reg = Registration::new("td", || async { Ok(Fixture::new(Misbehaving(Mode::Fine))) })
        .lifespan(|| async { Ok(()) }, || async { Err::<(), BoxError>("could not stop".into()) });
    let report = run(&reg, &catalog(), &RunOptions::default());
    assert!(report.warnings.iter().any(|w| w.contains("could not stop")), "{:?}", report.warnings);
}

#[test]
fn a_saver_that_implements_nothing_is_none() {
    struct Nothing;
    impl CheckpointSaver for Nothing {}
    let reg = Registration::new("nothing", || async { Ok(Fixture::new(Nothing)) });
    let report = run(&reg, &catalog(), &RunOptions::default());
    assert_eq!(report.conformance_level, Level::None);
    assert!(report.results.values().all(|r| r.status == CapabilityStatus::NotImplemented || !r.detected));
    assert_eq!(report.results[&Capability::Put].status, CapabilityStatus::NotImplemented);
}

#[test]
fn skipped_capabilities_are_reported_as_skipped_with_the_reason() {
    let reg = Registration::new("skips", || async { Ok(Fixture::new(Misbehaving(Mode::Fine))) })
        .skip(Capability::List, "list is not ready");
    let report = run(&reg, &catalog(), &RunOptions::default());
    let r = &report.results[&Capability::List];
    assert_eq!(r.status, CapabilityStatus::Skipped);
    assert_eq!(r.skip_reason.as_deref(), Some("list is not ready"));
    assert_eq!(outcome(&report, "list::list_works"), (Outcome::Skipped, "list is not ready".to_owned()));
}

#[test]
fn unknown_capability_names_list_the_valid_ones() {
    let reg = Registration::new("x", || async { Ok(Fixture::new(Misbehaving(Mode::Fine))) });
    let err = reg.skip_named("prunne", "typo").err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err.contains("unknown capability `prunne`") && err.contains("delta_channel_history"), "{err}");
}

/// `--fail-fast`: after the first failed case nothing else runs; the cases left are
/// skipped with the reason, naming the case that failed.
#[test]
fn fail_fast_stops_at_the_first_failed_case() {
    let reg =
        quick(Registration::new("errors", || async { Ok(Fixture::new(Misbehaving(Mode::StorageErrorEverywhere))) }));
    let options = RunOptions { fail_fast: true, jobs: 1, ..RunOptions::default() };
    let report = run(&reg, &catalog(), &options);
    assert_eq!(outcome(&report, "put::put_works").0, Outcome::Failed);
    for id in ["get_tuple::get_works", "list::list_works"] {
        let (o, m) = outcome(&report, id);
        assert_eq!(o, Outcome::Skipped, "{id}: {m}");
        assert!(m.starts_with(conformance_core::run::FAIL_FAST_SKIP) && m.contains("put::put_works"), "{id}: {m}");
    }
    // A capability none of whose cases ran is skipped with the reason, not "failed" with
    // an empty failures list.
    let list = &report.results[&Capability::List];
    assert_eq!((list.status, list.passed, list.failures.len()), (CapabilityStatus::Skipped, None, 0), "{list:?}");
    assert!(list.skip_reason.as_deref().is_some_and(|r| r.starts_with(conformance_core::run::FAIL_FAST_SKIP)));
    assert_eq!(report.results[&Capability::Put].status, CapabilityStatus::Failed);
    let without = run(&reg, &catalog(), &RunOptions { jobs: 1, ..RunOptions::default() });
    assert_eq!(outcome(&without, "list::list_works").0, Outcome::Passed, "without --fail-fast the run goes on");
}

/// After a timeout, one line names `--timeout` and `Registration::timeout`; no line for
/// any other failure.
#[test]
fn a_timeout_gets_a_hint_naming_both_timeouts() {
    let reg = quick(Registration::new("hangs", || async { Ok(Fixture::new(Misbehaving(Mode::AsyncHangInList))) }));
    let report = run(&reg, &[case(Capability::List, "list_works", list_case)], &RunOptions::default());
    let list = report.tests.iter().find(|t| t.id == "list::list_works").expect("the list case");
    let hint = conformance_core::run::timeout_hint(list).expect("a hint");
    assert!(!hint.contains('\n') && hint.contains("--timeout") && hint.contains("Registration::timeout"), "{hint}");
    let reg =
        quick(Registration::new("errors", || async { Ok(Fixture::new(Misbehaving(Mode::StorageErrorEverywhere))) }));
    let report = run(&reg, &[case(Capability::Put, "put_works", put_case)], &RunOptions::default());
    assert_eq!(conformance_core::run::timeout_hint(&report.tests[0]), None);
}

fn sleeps_800_ms(_ctx: CaseEnv) -> conformance_core::CaseFuture {
    Box::pin(async move {
        tokio::time::sleep(Duration::from_millis(800)).await;
        Ok(())
    })
}

/// A case with a budget of its own ([`conformance_core::Budget::Own`]) runs past the
/// registration's case timeout; the same case without one times out.
#[test]
fn a_case_with_its_own_budget_outlives_the_case_timeout() {
    let reg = Registration::new("fine", || async { Ok(Fixture::new(Misbehaving(Mode::Fine))) })
        .timeout(Duration::from_millis(200));
    let plain = case(Capability::Durability, "plain", sleeps_800_ms);
    let budgeted = SpecCase { budget: conformance_core::Budget::Own(|| Duration::from_secs(5)), ..plain };
    let r = conformance_core::run::execute_case(&reg, &budgeted);
    assert_eq!(r.outcome, Outcome::Passed, "{:?}", r.message);
    let r = conformance_core::run::execute_case(&reg, &plain);
    assert!(r.outcome == Outcome::Failed && r.message.as_deref().unwrap_or("").contains("timed out"), "{r:?}");
}

/// What happened to the instance of [`a_case_without_an_open_instance_gets_it_closed_first`].
static DROPPED: AtomicUsize = AtomicUsize::new(0);
static CLOSED: AtomicUsize = AtomicUsize::new(0);
static CLEANED: AtomicUsize = AtomicUsize::new(0);

/// A saver that counts its drops.
struct Counted;
impl CheckpointSaver for Counted {}
impl Drop for Counted {
    fn drop(&mut self) {
        DROPPED.fetch_add(1, Ordering::SeqCst);
    }
}

fn finds_the_instance_closed(ctx: CaseEnv) -> conformance_core::CaseFuture {
    Box::pin(async move {
        let (dropped, closed) = (DROPPED.load(Ordering::SeqCst), CLOSED.load(Ordering::SeqCst));
        if (dropped, closed) != (1, 1) {
            return Err(Failure::new(format!("before the case: {dropped} drops, {closed} closes, expected 1 and 1")));
        }
        let err = ctx.saver.get_tuple(&CheckpointConfig::new("t")).await.err().map(|e| e.to_string());
        if !err.as_deref().is_some_and(|e| e.contains("CaseInstance::Closed")) {
            return Err(Failure::new(format!("the stand-in answered {err:?}")));
        }
        ctx.reopen().await.map(drop)
    })
}

/// A storage whose instances are [`Counted`], counting its releases and destroys.
struct CountedStorage;

#[async_trait]
impl conformance_core::Storage for CountedStorage {
    type Saver = Counted;
    async fn create(&self) -> Result<String, BoxError> {
        Ok("counted".into())
    }
    async fn open(&self, _: &str) -> Result<Counted, BoxError> {
        Ok(Counted)
    }
    async fn destroy(&self, _: &str) -> Result<(), BoxError> {
        CLEANED.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
    async fn release(&self, _: &str) -> Result<(), BoxError> {
        CLOSED.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

/// A case marked [`conformance_core::CaseInstance::Closed`] starts after the factory's
/// instance was dropped and the storage's release awaited; reopen still works, and the
/// cleanup runs after the case.
#[test]
fn a_case_without_an_open_instance_gets_it_closed_first() {
    let reg = Registration::persistent("counted", CountedStorage);
    let closed = SpecCase {
        instance: conformance_core::CaseInstance::Closed,
        ..case(Capability::Durability, "closed", finds_the_instance_closed)
    };
    let r = conformance_core::run::execute_case(&reg, &closed);
    assert_eq!(r.outcome, Outcome::Passed, "{:?}", r.message);
    assert_eq!(CLEANED.load(Ordering::SeqCst), 1);
}
