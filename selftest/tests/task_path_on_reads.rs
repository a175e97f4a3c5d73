//! A saver whose reads carry no `task_path` (CONTRACT §2 put_writes, "A saver whose reads
//! carry no task_path"), as every saver behind LangGraph's API: declared
//! (`Feature::TaskPathOnReads`), it is judged on the order of its writes, the SHOULD case
//! that checks the field is not run, and the report warns; undeclared, losing the path fails
//! every MUST case that compares it; and the declaration never hides a wrong order.

use std::collections::BTreeSet;
use std::sync::Arc;

use conformance_core::{Capability, CheckpointTuple, Outcome, Registration, Report, RunOptions};
use conformance_selftest::{registration_of, Base, Bug};

/// Reads return every pending write with an empty `task_path`.
struct PathsDropped;

impl Bug for PathsDropped {
    fn tuple_output(&self, tuple: &mut CheckpointTuple) {
        for w in &mut tuple.pending_writes {
            w.task_path.clear();
        }
    }
}

/// Reads drop the path and return the writes in reverse order.
struct PathsDroppedWritesReversed;

impl Bug for PathsDroppedWritesReversed {
    fn tuple_output(&self, tuple: &mut CheckpointTuple) {
        PathsDropped.tuple_output(tuple);
        tuple.pending_writes.reverse();
    }
}

/// The memory saver with `bug`, its fixtures declaring reads without `task_path` when
/// `declared`. Durability is skipped: its crash test needs a front end that re-executes
/// the binary, and no rule of it is about the path.
fn saver(name: &'static str, bug: fn() -> Arc<dyn Bug>, declared: bool) -> Registration {
    let inner = registration_of(name, Base::Memory, bug);
    Registration::new(name, move || {
        let inner = inner.clone();
        async move {
            let f = inner.fixture().await?;
            Ok(if declared { f.without_task_path_on_reads() } else { f })
        }
    })
    .skip(Capability::Durability, "the crash test needs a re-executing front end")
}

fn failed(report: &Report) -> BTreeSet<String> {
    report.tests.iter().filter(|t| t.outcome == Outcome::Failed).map(|t| t.id.clone()).collect()
}

fn validate(reg: &Registration) -> Report {
    conformance_spec::validate(reg, &RunOptions::default())
}

#[test]
fn a_declared_saver_fails_nothing_and_the_case_that_checks_the_field_is_not_run() {
    let report = validate(&saver("paths-dropped-declared", || Arc::new(PathsDropped), true));
    assert_eq!(failed(&report), BTreeSet::new(), "{report:#?}");
    let case = report.tests.iter().find(|t| t.id == "put_writes::task_path_roundtrips").expect("the case");
    assert_eq!(case.outcome, Outcome::NotRun, "{case:?}");
    let message = case.message.as_deref().unwrap_or("");
    assert!(message.contains("declares that its reads carry no task_path"), "{message}");
    assert!(
        report.warnings.iter().any(|w| w.contains("declares that its reads carry no task_path")),
        "the report names the declaration: {:?}",
        report.warnings
    );
    // A SHOULD case not run for a declared limit costs no level, not even the strict one
    // (every saver behind LangGraph's API lacks the field: CONTRACT §5 Declared limits).
    assert_eq!(report.conformance_level, conformance_core::Level::Full, "{:?}", report.results);
    assert_eq!(report.strict_level(), conformance_core::Level::Full);
    assert_eq!(report.declared_lacks, vec![conformance_core::Feature::TaskPathOnReads]);
}

#[test]
fn an_undeclared_saver_that_loses_the_path_fails_every_case_comparing_it() {
    let report = validate(&saver("paths-dropped", || Arc::new(PathsDropped), false));
    let failed = failed(&report);
    let roundtrip = report.tests.iter().find(|t| t.id == "put_writes::task_path_roundtrips").expect("the case");
    assert_eq!(roundtrip.outcome, Outcome::NotStrict, "the SHOULD rule itself: {roundtrip:?}");
    for id in ["get_tuple::pending_writes_ordered_by_task_path_then_task_id"] {
        assert!(failed.contains(id), "{id} passed on a saver that loses task_path: {failed:?}");
    }
    assert!(report.warnings.iter().all(|w| !w.contains("task_path")), "{:?}", report.warnings);
}

#[test]
fn the_declaration_still_judges_the_order_of_writes() {
    let report = validate(&saver("paths-dropped-reversed", || Arc::new(PathsDroppedWritesReversed), true));
    let failed = failed(&report);
    assert!(
        failed.contains("get_tuple::pending_writes_ordered_by_task_path_then_task_id"),
        "a wrong order passed under the declaration: {failed:?}"
    );
}
