//! `Registration::multi_thread`: a saver whose async methods call
//! `tokio::task::block_in_place` (as some published savers do around a blocking driver)
//! panics on a current-thread runtime; with a multi-thread registration it runs every case
//! and gets the verdict of the saver it wraps.

use std::sync::Arc;

use conformance_core::{Capability, Progress, Registration, Report, RunOptions};
use conformance_selftest::{registration_of, Base, Bug};

/// No bug: every call that names a thread blocks in place for nothing first.
struct BlocksInPlace;

impl Bug for BlocksInPlace {
    fn thread_input(&self, _thread_id: &mut String) {
        tokio::task::block_in_place(|| ());
    }
}

fn blocking() -> Arc<dyn Bug> {
    Arc::new(BlocksInPlace)
}

fn run(registration: &Registration) -> Report {
    conformance_spec::validate(registration, &RunOptions { progress: Progress::Quiet, ..RunOptions::default() })
}

fn panicked(report: &Report) -> Vec<String> {
    report
        .tests
        .iter()
        .filter(|t| t.message.as_deref().is_some_and(|m| m.contains("panicked")))
        .map(|t| format!("{}::{}: {}", t.capability, t.name, t.message.as_deref().unwrap_or("")))
        .collect()
}

#[test]
fn a_block_in_place_saver_runs_every_case_under_a_multi_thread_registration() {
    // The crash case re-executes the test binary, which this plain libtest binary does not
    // serve; the selftest binary covers durability on this wrapper.
    let registration = registration_of("blocks-in-place", Base::Memory, blocking)
        .multi_thread()
        .skip(Capability::Durability, "the crash child is served by the selftest binary, not this one");
    let report = run(&registration);
    assert_eq!(panicked(&report), Vec::<String>::new());
    assert_eq!(report.failed_cases(), Vec::<String>::new());
    assert!(report.tests.len() >= 190, "{} cases", report.tests.len());
}

#[test]
fn without_it_the_same_saver_panics_on_the_runtime() {
    // The case above can fail: on the default current-thread runtime the saver panics.
    let report = run(&registration_of("blocks-in-place", Base::Memory, blocking));
    let panics = panicked(&report);
    assert!(!panics.is_empty(), "expected block_in_place to panic on a current-thread runtime");
    assert!(panics.iter().any(|m| m.contains("block")), "{panics:?}");
    // The message names the fix.
    assert!(panics.iter().all(|m| m.contains("Registration::multi_thread()")), "{panics:?}");
}
