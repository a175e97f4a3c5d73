//! A capability the registration skips carries over to the cases that need it (issue 19):
//! with `.skip(Capability::PutWrites, "known broken")`, a case of another capability whose
//! setup calls `put_writes` is not run, "needs put_writes, skipped: known broken", rather
//! than failed through the broken method; the cases that do not need it still run.

use std::collections::BTreeSet;

use conformance_core::run::NEEDS_PREFIX;
use conformance_core::{Capability, Outcome, RunOptions};
use conformance_selftest::{registration_of, Base, Bug, PutWrites};

/// `put_writes` stores its writes under another channel: the method is broken.
struct BrokenPutWrites;

impl Bug for BrokenPutWrites {
    fn put_writes_input(&self, call: &mut PutWrites) {
        for (channel, _) in &mut call.writes {
            channel.push_str("-broken");
        }
    }
}

#[test]
fn a_skipped_need_makes_the_case_not_run_with_the_skip_reason() {
    let registration =
        registration_of("put-writes-known-broken", Base::Memory, || std::sync::Arc::new(BrokenPutWrites))
            .skip(Capability::PutWrites, "known broken");
    let caps: BTreeSet<Capability> =
        [Capability::PutWrites, Capability::GetTuple, Capability::List, Capability::DeleteThread].into();
    let options = RunOptions { capabilities: Some(caps.clone()), ..RunOptions::default() };
    let report = conformance_spec::validate(&registration, &options);
    let catalog = conformance_spec::catalog();
    let reason = format!("{NEEDS_PREFIX} put_writes, skipped: known broken");
    let (mut not_run, mut passed) = (0, 0);
    for t in report.tests.iter().filter(|t| caps.contains(&t.capability)) {
        let case = catalog.iter().find(|c| c.id() == t.id).expect("every result is a catalog case");
        if t.capability == Capability::PutWrites {
            assert_eq!(t.outcome, Outcome::Skipped, "{}: {:?}", t.id, t.message);
        } else if case.needs.contains(&Capability::PutWrites) {
            assert_eq!((t.outcome, t.message.as_deref()), (Outcome::NotRun, Some(reason.as_str())), "{}", t.id);
            not_run += 1;
        } else {
            assert_eq!(t.outcome, Outcome::Passed, "{}: {:?}", t.id, t.message);
            passed += 1;
        }
    }
    assert!(not_run > 0 && passed > 0, "{not_run} not run, {passed} passed");
}
