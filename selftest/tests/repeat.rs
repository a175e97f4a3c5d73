//! `--repeat N` (`RunOptions::repeat`): a saver that returns pending writes in `HashMap`
//! order passes or fails the order cases by chance; run five times, those cases are
//! reported as nondeterministic, "failed in F of 5 runs", and the JSON says so (issue 14).

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use conformance_core::{Capability, CheckpointTuple, Outcome, Progress, RunOptions};
use conformance_selftest::{registration_of, Base, Bug};

/// Pending writes come back in the iteration order of a fresh `HashMap` (random per map).
struct HashMapOrderedWrites;

impl Bug for HashMapOrderedWrites {
    fn tuple_output(&self, tuple: &mut CheckpointTuple) {
        let by_key: HashMap<usize, _> = tuple.pending_writes.drain(..).enumerate().collect();
        tuple.pending_writes.extend(by_key.into_values());
    }
}

/// A quiet run of `capabilities` with every case run `repeat` times.
fn options(capabilities: &[Capability], repeat: u32) -> RunOptions {
    RunOptions {
        progress: Progress::Quiet,
        capabilities: Some(capabilities.iter().copied().collect::<BTreeSet<_>>()),
        repeat,
        ..RunOptions::default()
    }
}

fn make() -> Arc<dyn Bug> {
    Arc::new(HashMapOrderedWrites)
}

#[test]
fn hashmap_ordered_writes_are_reported_nondeterministic_over_five_runs() {
    let options = options(&[Capability::PutWrites, Capability::GetTuple], 5);
    let report = conformance_spec::validate(&registration_of("hashmap-order", Base::Memory, make), &options);
    let flaky: Vec<_> = report.tests.iter().filter(|t| t.repeats.is_some_and(|r| r.nondeterministic())).collect();
    assert!(!flaky.is_empty(), "no case was found nondeterministic");
    for t in &flaky {
        // A SHOULD case's nondeterminism is not strict; a MUST case's fails.
        let want = if t.strength == conformance_core::Strength::Should { Outcome::NotStrict } else { Outcome::Failed };
        assert_eq!(t.outcome, want, "{}", t.id);
        let m = t.message.as_deref().unwrap_or_default();
        assert!(m.starts_with("nondeterministic: failed in ") && m.contains(" of 5 runs"), "{m}");
    }
    // Cases whose rule is not about order pass every run.
    let steady = report.tests.iter().filter(|t| t.repeats.is_some_and(|r| r.failed == 0)).count();
    assert!(steady > 10, "{steady} cases passed all five runs");
    let json = serde_json::to_value(&report).unwrap();
    let first = json["tests"].as_array().unwrap().iter().find(|t| t["id"] == flaky[0].id.as_str()).unwrap();
    assert_eq!(first["repeats"]["runs"], 5);
    let rendered = conformance_core::render::render_terminal(&report);
    assert!(rendered.contains("Nondeterministic: "), "{rendered}");
}

#[test]
fn a_deterministic_saver_is_never_called_nondeterministic() {
    let options = options(&[Capability::PutWrites, Capability::GetTuple], 3);
    let report = conformance_spec::validate(&conformance_selftest::reference(Base::Memory), &options);
    assert!(report
        .tests
        .iter()
        .all(|t| t.repeats == Some(conformance_core::Repeats { runs: 3, failed: 0 }) || t.outcome != Outcome::Passed));
    assert!(report.failed_cases().is_empty(), "{:?}", report.failed_cases());
}

/// Every call that names a thread blocks its thread for 2 s.
struct Hangs;

impl Bug for Hangs {
    fn thread_input(&self, _thread_id: &mut String) {
        std::thread::sleep(std::time::Duration::from_secs(2));
    }
}

#[test]
fn a_run_that_times_out_ends_the_repeats() {
    let options = options(&[Capability::DeleteThread], 50);
    let make: fn() -> Arc<dyn Bug> = || Arc::new(Hangs);
    let registration = registration_of("hangs", Base::Memory, make).timeout(std::time::Duration::from_millis(200));
    let started = std::time::Instant::now();
    let report = conformance_spec::validate(&registration, &options);
    let timed_out: Vec<_> =
        report.tests.iter().filter(|t| t.message.as_deref().is_some_and(|m| m.contains("timed out"))).collect();
    assert!(!timed_out.is_empty(), "the hanging saver must time out");
    for t in timed_out {
        assert_eq!(t.repeats.map(|r| r.runs), Some(1), "{}", t.id);
    }
    // 50 repeats of 0.2 s timeouts per case would take minutes.
    assert!(started.elapsed() < std::time::Duration::from_secs(60), "{:?}", started.elapsed());
}
