//! CONTRACT §5 "Strength of a rule": a saver that differs from the contract only in SHOULD
//! rules (as LangGraph's own `InMemorySaver` does) is FULL, with its not-strict cases
//! counted beside the level; `--strict` lowers it. The saver is the memory saver with every
//! SHOULD mutant of the catalog stacked on it, plus reads without `task_path` (declared) and
//! integer versions only (declared), as LangGraph's savers behind the bridge.

use std::sync::Arc;

use conformance_core::{
    Capability, CheckpointSaver, CheckpointTuple, Feature, Fixture, Level, Outcome, Registration, RunOptions, Strength,
};
use conformance_selftest::{Bug, MutantSaver, MUTANTS};

/// Reads return every pending write with an empty `task_path` (LangGraph's `PendingWrite`).
struct PathsDropped;

impl Bug for PathsDropped {
    fn tuple_output(&self, tuple: &mut CheckpointTuple) {
        for w in &mut tuple.pending_writes {
            w.task_path.clear();
        }
    }
}

/// The memory saver under every SHOULD mutant of the catalog and [`PathsDropped`].
fn should_only_saver() -> Arc<dyn CheckpointSaver> {
    let mut saver: Arc<dyn CheckpointSaver> = Arc::new(checkpoint_memory::MemorySaver::new());
    for m in MUTANTS.iter().filter(|m| m.strength == Strength::Should) {
        saver = Arc::new(MutantSaver::new(saver, (m.make)()));
    }
    Arc::new(MutantSaver::new(saver, Arc::new(PathsDropped)))
}

fn registration() -> Registration {
    Registration::new("should-only", || async {
        Ok(Fixture::from_arc(should_only_saver()).lacking(Feature::TaskPathOnReads).lacking(Feature::StringVersions))
    })
    .skip(Capability::Durability, "the crash test needs a re-executing front end")
}

#[test]
fn a_saver_that_breaks_only_should_rules_is_full_and_not_strict() {
    let should: Vec<_> = MUTANTS.iter().filter(|m| m.strength == Strength::Should).map(|m| m.name).collect();
    assert!(should.len() >= 8, "the catalog's SHOULD mutants: {should:?}");
    let report = conformance_spec::validate(&registration(), &RunOptions::default());
    assert_eq!(report.failed_cases(), Vec::<String>::new(), "only SHOULD rules are broken");
    assert_eq!(report.conformance_level, Level::Full, "{:#?}", report.results);
    let not_strict = report.not_strict_count();
    // Stacked, several mutants show in one case (and the string-version one is not run).
    assert!(not_strict >= 5, "the SHOULD mutants make cases not strict: {not_strict}");
    assert!(report.tests.iter().filter(|t| t.outcome == Outcome::NotStrict).all(|t| t.strength == Strength::Should));
    assert_ne!(report.strict_level(), Level::Full, "--strict counts them");
    let terminal = conformance_core::render::render_terminal(&report);
    assert!(terminal.contains(&format!("{not_strict} passed not strict")), "{terminal}");
    assert!(terminal.contains("Result: FULL"), "{terminal}");
    let strict = report.with_strict(true);
    assert_eq!(strict.conformance_level, strict.strict_level());
    assert!(!strict.is_success(), "--strict fails the run");
}
