//! A case whose setup fails names the setup call, not its rule (issue 19): a saver whose
//! `put_writes` returns a storage error (it has the method, so its cases run) fails the
//! `delete_thread` cases that prepare writes with `setup: put_writes(..) failed: ..`, and the
//! failure says the case's own rule was not checked; the case that needs only `put` and
//! `get_tuple` still passes. A `put_writes` case, whose rule that call is, fails as before.

use std::sync::Arc;

use async_trait::async_trait;
use conformance_core::run::execute_case;
use conformance_core::{Capability, CheckpointError, Outcome, SpecCase};
use conformance_selftest::{registration_of, Base, Bug, Inner, Invocation, Reply};

/// `put_writes` fails with a storage error; every other call is forwarded.
struct WritesFail;

#[async_trait]
impl Bug for WritesFail {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        match call {
            Invocation::PutWrites(_) => Err(CheckpointError::Storage { message: "disk full".into(), source: None }),
            call => saver.forward(call).await,
        }
    }
}

fn make() -> Arc<dyn Bug> {
    Arc::new(WritesFail)
}

fn case(capability: Capability, name: &str) -> SpecCase {
    conformance_spec::catalog()
        .into_iter()
        .find(|c| c.capability == capability && c.name == name)
        .unwrap_or_else(|| panic!("{capability}::{name} is in the catalog"))
}

#[test]
fn a_failing_setup_call_is_named_as_setup() {
    let registration = registration_of("writes-fail", Base::Memory, make);
    let r = execute_case(&registration, &case(Capability::DeleteThread, "removes_pending_writes"));
    assert_eq!(r.outcome, Outcome::Failed, "{:?}", r.message);
    let m = r.message.unwrap_or_default();
    assert!(m.starts_with("setup: put_writes(thread="), "{m}");
    assert!(m.contains("task_id=\"task-1\"") && m.contains(" failed: Storage: storage error: disk full"), "{m}");
    assert!(m.contains("the case's own rule was not checked"), "{m}");
}

#[test]
fn a_case_needing_no_writes_still_passes() {
    let registration = registration_of("writes-fail", Base::Memory, make);
    let r = execute_case(&registration, &case(Capability::DeleteThread, "other_thread_with_the_same_ids_untouched"));
    assert_eq!(r.outcome, Outcome::Passed, "{:?}", r.message);
}

#[test]
fn a_call_that_is_the_rule_is_not_setup() {
    let registration = registration_of("writes-fail", Base::Memory, make);
    let put_writes = conformance_spec::catalog()
        .into_iter()
        .find(|c| c.capability == Capability::PutWrites)
        .expect("put_writes has cases");
    let r = execute_case(&registration, &put_writes);
    assert_eq!(r.outcome, Outcome::Failed, "{:?}", r.message);
    let m = r.message.unwrap_or_default();
    assert!(!m.starts_with("setup:") && m.contains("put_writes("), "{m}");
}
