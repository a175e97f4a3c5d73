//! A case that checks exact order says so when every element is there (issue 19): a saver
//! returning the right pending writes sorted by channel instead of in call order fails
//! `put_writes::writes_of_one_call_keep_their_positions` with "same 3 elements, wrong
//! order" and both lists, not as lost or unexpected writes.

use std::sync::Arc;

use conformance_core::run::execute_case;
use conformance_core::{Capability, CheckpointTuple, Outcome};
use conformance_selftest::{registration_of, Base, Bug};

/// Every tuple read comes back with its pending writes sorted by channel.
struct WritesByChannel;

impl Bug for WritesByChannel {
    fn tuple_output(&self, tuple: &mut CheckpointTuple) {
        tuple.pending_writes.sort_by(|a, b| a.channel.cmp(&b.channel));
    }
}

#[test]
fn writes_in_another_order_are_named_a_wrong_order() {
    let registration = registration_of("writes-by-channel", Base::Memory, || Arc::new(WritesByChannel));
    let case = conformance_spec::catalog()
        .into_iter()
        .find(|c| c.capability == Capability::PutWrites && c.name == "writes_of_one_call_keep_their_positions")
        .expect("the case is in the catalog");
    let r = execute_case(&registration, &case);
    assert_eq!(r.outcome, Outcome::Failed, "{:?}", r.message);
    let m = r.message.unwrap_or_default();
    assert!(m.contains("pending_writes: same 3 elements, wrong order: expected [(task-1, ch3, "), "{m}");
    assert!(m.contains(", got [(task-1, ch1, "), "{m}");
}

/// Every tuple read comes back with its pending writes reversed.
struct WritesReversed;

impl Bug for WritesReversed {
    fn tuple_output(&self, tuple: &mut CheckpointTuple) {
        tuple.pending_writes.reverse();
    }
}

/// The concurrency cases compare pending writes with the one comparator: all writes there
/// in another order is "same N elements, wrong order", never lost or unexpected writes.
#[test]
fn concurrency_cases_name_a_wrong_order_of_writes() {
    let registration = registration_of("writes-reversed", Base::Memory, || Arc::new(WritesReversed));
    for (name, n) in [("put_writes_of_many_tasks_all_kept", 50), ("two_instances_write_at_once", 20)] {
        let case = conformance_spec::catalog()
            .into_iter()
            .find(|c| c.capability == Capability::Concurrency && c.name == name)
            .expect("the case is in the catalog");
        let r = execute_case(&registration, &case);
        assert_eq!(r.outcome, Outcome::Failed, "{name}: {:?}", r.message);
        let m = r.message.unwrap_or_default();
        assert!(m.contains(&format!("pending_writes: same {n} elements, wrong order: expected [")), "{name}: {m}");
        assert!(!m.contains("lost") && !m.contains("unexpected"), "{name}: {m}");
    }
}
