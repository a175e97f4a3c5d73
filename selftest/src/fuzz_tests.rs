//! The fuzzer checked like the cases: the reference saver passes a few sequences, a planted
//! bug is found, shrunk, and its trace replays failing on the mutant and passing on the
//! reference (issue 15 must-show, kept small for CI).

use conformance_spec::fuzz::trace::Trace;
use conformance_spec::fuzz::{fuzz, replay, FuzzOptions};

use crate::catalog::{mutant, Base};
use crate::registration::{reference, registration};

#[test]
fn reference_passes_and_a_mutant_is_found_shrunk_and_replayed() {
    let options = FuzzOptions { seed: 1, cases: 40, ..Default::default() };
    let clean = fuzz(&reference(Base::Memory), &options).unwrap();
    assert!(clean.divergence.is_none(), "{:?}", clean.divergence.map(|d| d.message));
    assert_eq!(clean.sequences, 40);

    let bug = registration(mutant("reput_ignored").unwrap());
    let found = fuzz(&bug, &FuzzOptions { seed: 0, cases: 200, ..Default::default() }).unwrap();
    let d = found.divergence.expect("the fuzzer finds reput_ignored");
    assert_eq!(d.strength, conformance_core::Strength::Must, "{}", d.message);
    assert!(d.trace.steps.len() <= 6, "not shrunk: {}", d.trace.readable());
    let trace = Trace::parse(&d.trace.to_json()).unwrap();
    assert_eq!(trace, d.trace, "the trace file round-trips");
    let err = replay(&bug, &trace).unwrap_err();
    assert!(err.starts_with("step "), "{err}");
    replay(&reference(Base::Memory), &trace).unwrap();
}

/// Issue 36: a divergence is judged by the rules it breaks. Savers that break only a SHOULD
/// rule the model holds (values of channels a put did not carry, one id order across
/// namespaces, booleans equal to numbers in a filter) diverge as SHOULD, never MUST; at
/// least one of them is found at all, so the test can fail.
#[test]
fn should_only_mutants_diverge_as_should() {
    let mut found_any = false;
    for name in ["uncarried_channels_vanish", "list_grouped_by_namespace", "list_filter_bool_equals_number"] {
        let bug = registration(mutant(name).unwrap());
        let found = fuzz(&bug, &FuzzOptions { seed: 3, cases: 150, ..Default::default() }).unwrap();
        if let Some(d) = found.divergence {
            found_any = true;
            assert_eq!(d.strength, conformance_core::Strength::Should, "{name}: {}\n{}", d.message, d.trace.readable());
        }
    }
    assert!(found_any, "none of the SHOULD mutants was found: the test would pass vacuously");
}

/// Issue 15: a bug only a concurrent reader sees (`put` shows the checkpoint before its
/// values) is found through a batch of calls made at the same time, checked against every
/// serial order of the batch; the repro replays failing on the mutant, passing on the
/// reference. A batch is only made when every serial order leaves the same state, so the
/// steps after it have one expected result.
#[test]
fn a_race_is_found_through_a_concurrent_batch() {
    let bug = registration(mutant("torn_read").unwrap());
    let found = fuzz(&bug, &FuzzOptions { seed: 0, cases: 300, ..Default::default() }).unwrap();
    let d = found.divergence.expect("the fuzzer finds torn_read");
    let last = d.trace.steps.last().unwrap();
    assert!(
        matches!(last.op, conformance_spec::fuzz::trace::Op::Concurrent { .. }),
        "found without a batch: {}",
        d.trace.readable()
    );
    assert!(
        d.message.contains("results no serial order gives") && d.message.contains("serial order 1 of"),
        "{}",
        d.message
    );
    let trace = Trace::parse(&d.trace.to_json()).unwrap();
    assert!(replay(&bug, &trace).is_err(), "the repro passes on the mutant");
    replay(&reference(Base::Memory), &trace).unwrap();
    replay(&reference(Base::Sqlite), &trace).unwrap();
}

/// `list` never answers: a saver that hangs.
struct ListHangs;

#[async_trait::async_trait]
impl crate::bug::Bug for ListHangs {
    async fn call(
        &self,
        saver: &crate::wrapper::Inner<'_>,
        call: crate::bug::Invocation,
    ) -> Result<crate::bug::Reply, conformance_core::CheckpointError> {
        match call {
            crate::bug::Invocation::List { .. } => std::future::pending().await,
            call => saver.forward(call).await,
        }
    }
}

/// A step that hangs ends the run with the sequence that hung, after one step limit (the
/// registration's timeout), instead of shrinking it at the cost of that limit per try.
#[test]
fn a_hanging_saver_is_reported_without_shrinking_it() {
    let limit = std::time::Duration::from_millis(300);
    let reg = crate::registration::registration_of("list-hangs", Base::Memory, || std::sync::Arc::new(ListHangs))
        .timeout(limit);
    let start = std::time::Instant::now();
    let found = fuzz(&reg, &FuzzOptions { seed: 0, cases: 200, ..Default::default() }).unwrap();
    let d = found.divergence.expect("the fuzzer reports the hang");
    assert!(d.message.contains("list(") && d.message.contains("no answer within 300ms"), "{}", d.message);
    assert!(start.elapsed() < limit * 40, "took {:?}: shrunk at a step limit per try", start.elapsed());
}

/// The 25th `get_tuple` of the process fails, once: a divergence that comes and goes.
struct FailsOnce;

static GET_TUPLES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

#[async_trait::async_trait]
impl crate::bug::Bug for FailsOnce {
    async fn call(
        &self,
        saver: &crate::wrapper::Inner<'_>,
        call: crate::bug::Invocation,
    ) -> Result<crate::bug::Reply, conformance_core::CheckpointError> {
        if matches!(call, crate::bug::Invocation::GetTuple { .. })
            && GET_TUPLES.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 24
        {
            return Err(conformance_core::CheckpointError::storage_msg("the one failure of FailsOnce"));
        }
        saver.forward(call).await
    }
}

/// A divergence that does not come back when the sequence runs again is reported with
/// what the run that failed saw (the call, what was expected and what came back) and its
/// trace, saying it comes and goes, not as a bare "did not reproduce".
#[test]
fn a_divergence_that_comes_and_goes_keeps_what_it_saw() {
    let reg = crate::registration::registration_of("fails-once", Base::Memory, || std::sync::Arc::new(FailsOnce));
    let found = fuzz(&reg, &FuzzOptions { seed: 0, cases: 200, ..Default::default() }).unwrap();
    let d = found.divergence.expect("the fuzzer sees the one failure");
    assert!(d.message.contains("the one failure of FailsOnce"), "{}", d.message);
    assert!(d.message.contains("get_tuple(") && d.message.contains("comes and goes"), "{}", d.message);
    assert!(!d.trace.steps.is_empty(), "no trace of the failing run");
}
