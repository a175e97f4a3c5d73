//! A field a saver never stores is "not stored", never "torn", "incomplete" or "returned
//! part of it" (issue 19): those words are kept for a read that raced a writer in flight
//! and that a later read shows whole. A saver that drops `versions_seen` from every tuple
//! fails the concurrency readers' cases with `checkpoint.versions_seen["node"]: expected ..,
//! got nothing (not stored)`, and the failure says the put had returned.

use std::sync::Arc;

use conformance_core::run::execute_case;
use conformance_core::{Capability, CheckpointTuple, Outcome};
use conformance_selftest::{registration_of, Base, Bug};

/// Every tuple read comes back without `versions_seen`.
struct NoVersionsSeen;

impl Bug for NoVersionsSeen {
    fn tuple_output(&self, tuple: &mut CheckpointTuple) {
        Arc::make_mut(&mut tuple.checkpoint).versions_seen.clear();
    }
}

fn message_of(name: &str) -> String {
    let registration = registration_of("no-versions-seen", Base::Memory, || Arc::new(NoVersionsSeen));
    let case = conformance_spec::catalog()
        .into_iter()
        .find(|c| c.capability == Capability::Concurrency && c.name == name)
        .unwrap_or_else(|| panic!("concurrency::{name} is in the catalog"));
    let r = execute_case(&registration, &case);
    assert_eq!(r.outcome, Outcome::Failed, "{name}: {:?}", r.message);
    r.message.unwrap_or_default()
}

fn assert_not_stored(m: &str) {
    assert!(
        m.contains("checkpoint.versions_seen[\"node\"]: expected ") && m.contains("got nothing (not stored)"),
        "{m}"
    );
    for word in ["torn", "incomplete", "part of it"] {
        assert!(!m.contains(word), "says {word:?}: {m}");
    }
}

#[test]
fn get_tuple_during_puts_says_not_stored() {
    let m = message_of("reader_sees_none_or_all_of_a_checkpoint");
    assert_not_stored(&m);
    assert!(m.contains("put had returned") || m.contains("after the put of checkpoint"), "{m}");
}

#[test]
fn list_during_writes_says_not_stored() {
    let m = message_of("list_during_writes_returns_complete_tuples");
    assert_not_stored(&m);
    assert!(m.contains("had returned before this list"), "{m}");
}
