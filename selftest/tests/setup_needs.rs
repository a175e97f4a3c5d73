//! Every spec case declares the capabilities its setup and checks call besides its own
//! ([`SpecCase::needs`], in its module's case list): this test runs each case on the
//! bug-free memory wrapper, records the capabilities of the calls it makes, and fails
//! naming every case whose declaration differs from its calls (a need left out would make
//! the case fail on a saver without that capability instead of "not run"; a need too many
//! would leave a case unrun that could have run).

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use conformance_core::run::execute_case;
use conformance_core::{Capability, CheckpointError, Outcome, SpecCase};
use conformance_selftest::{registration_of, Base, Bug, Inner, Invocation, Reply, CASES_NEEDING_A_LOCATION};

/// The capabilities called since the last reset (cases run one at a time).
static CALLED: Mutex<BTreeSet<Capability>> = Mutex::new(BTreeSet::new());

/// Forwards every call and records its capability.
struct Records;

#[async_trait]
impl Bug for Records {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        let cap = call.capability();
        CALLED.lock().unwrap_or_else(|e| e.into_inner()).insert(cap);
        saver.forward(call).await
    }
}

fn make() -> Arc<dyn Bug> {
    Arc::new(Records)
}

fn names(caps: &BTreeSet<Capability>) -> String {
    caps.iter().map(|c| c.name()).collect::<Vec<_>>().join(", ")
}

#[test]
fn every_case_declares_the_capabilities_it_calls() {
    let registration = registration_of("records-calls", Base::Memory, make);
    let mut wrong = Vec::new();
    let mut checked = 0;
    for case in conformance_spec::catalog() {
        if CASES_NEEDING_A_LOCATION.iter().any(|(id, _)| *id == case.id()) {
            continue;
        }
        CALLED.lock().unwrap_or_else(|e| e.into_inner()).clear();
        let r = execute_case(&registration, &case);
        let mut called = std::mem::take(&mut *CALLED.lock().unwrap_or_else(|e| e.into_inner()));
        assert_eq!(r.outcome, Outcome::Passed, "{}: {:?}", r.id, r.message);
        called.remove(&case.capability);
        let declared: BTreeSet<Capability> = declared(&case);
        if declared != called {
            wrong.push(format!("{}: declares [{}], calls [{}]", case.id(), names(&declared), names(&called)));
        }
        checked += 1;
    }
    assert!(checked > 200, "only {checked} cases checked");
    assert!(wrong.is_empty(), "{} cases declare other needs than they call:\n{}", wrong.len(), wrong.join("\n"));
}

fn declared(case: &SpecCase) -> BTreeSet<Capability> {
    case.needs.iter().copied().filter(|c| *c != case.capability).collect()
}

/// A saver without put_writes, list or namespaces is still judged on every capability's
/// own rule: each capability keeps a case whose needs are at most put and get_tuple.
/// `traces` is the exception: its cases are recorded LangGraph runs, and every run writes
/// pending writes (it replays what the runtime did, not one rule).
#[test]
fn every_capability_keeps_a_case_needing_only_put_and_get_tuple() {
    let cases = conformance_spec::catalog();
    let lacking: Vec<&str> = Capability::ALL
        .iter()
        .filter(|cap| **cap != Capability::Traces)
        .filter(|cap| {
            !cases.iter().any(|c| {
                c.capability == **cap && declared(c).iter().all(|n| matches!(n, Capability::Put | Capability::GetTuple))
            })
        })
        .map(|c| c.name())
        .collect();
    assert!(lacking.is_empty(), "capabilities without a case needing only put and get_tuple: {lacking:?}");
}
