//! The kit's self-test: the reference savers pass every spec case, every mutant is caught
//! by a case of the capability it breaks, and every spec case that no mutant makes fail
//! is explained.
//!
//! `harness = false`: the durability crash test (of the SQLite saver and of the mutants that
//! wrap it) re-executes this binary as a child process, so `main` first hands over to
//! `conformance_spec::child_main_if_requested_among`, then runs the checks as libtest trials.

use std::collections::BTreeSet;
use std::process::ExitCode;
use std::sync::OnceLock;

use conformance_core::{Capability, Registration, RunOptions};
use conformance_selftest::{
    analyze, crash_child_registrations, untraced_mutants, Analysis, AnalysisOptions, Cover, GAPS, MUTANTS, RULES,
    SCENARIOS, SCENARIOS_WITHOUT_MUTANT,
};

fn main() -> ExitCode {
    let mut registrations = crash_child_registrations();
    registrations.push(checkpoint_sqlite::registration());
    if let Some(code) = conformance_spec::child_main_if_requested_among(&registrations) {
        return code;
    }
    let args = libtest_mimic::Arguments::from_args();
    let checks: [(&str, fn()); 12] = [
        ("sqlite_crash_test_kills_as_often_as_told", sqlite_crash_test_kills_as_often_as_told),
        ("catalog_is_well_formed", catalog_is_well_formed),
        ("every_rule_scenario_and_gap_has_a_mutant", every_rule_scenario_and_gap_has_a_mutant),
        ("memory_saver_is_the_baseline", memory_saver_is_the_baseline),
        ("every_mutant_is_caught_by_its_capability", every_mutant_is_caught_by_its_capability),
        (
            "concurrency_and_crash_mutants_are_caught_by_their_cases",
            concurrency_and_crash_mutants_are_caught_by_their_cases,
        ),
        ("every_never_failing_case_is_explained", every_never_failing_case_is_explained),
        ("kill_rate_is_total", kill_rate_is_total),
        ("every_mutant_is_caught_by_its_home_capability", every_mutant_is_caught_by_its_home_capability),
        ("rules_are_caught_where_the_contract_states_them", rules_are_caught_where_the_contract_states_them),
        (
            "fork_and_latest_bugs_are_caught_by_recorded_time_travel",
            fork_and_latest_bugs_are_caught_by_recorded_time_travel,
        ),
        (
            "only_concurrency_and_durability_open_a_second_instance",
            only_concurrency_and_durability_open_a_second_instance,
        ),
    ];
    let trials =
        checks.into_iter().map(|(name, check)| libtest_mimic::Trial::test(name, move || catch(check))).collect();
    libtest_mimic::run(&args, trials).exit_code()
}

/// Runs a check written with `assert!`, turning its panic into a trial failure.
fn catch(check: fn()) -> Result<(), libtest_mimic::Failed> {
    std::panic::catch_unwind(check).map_err(|p| libtest_mimic::Failed::from(conformance_core::run::panic_message(&*p)))
}

/// The analysis, run once and shared by the tests of this binary.
fn analysis() -> &'static Analysis {
    static ANALYSIS: OnceLock<Analysis> = OnceLock::new();
    ANALYSIS.get_or_init(|| analyze(&AnalysisOptions::default()))
}

/// Fails unless the saver of `registration` passes every case of the spec and reaches FULL;
/// returns the report.
/// The SQLite saver's crash test kills its child as often as it is told (the facts of its
/// report). The reference savers' whole catalogs are their own targets'
/// (`backends/*/tests/conformance.rs`, `checkpointer_test!`), and the memory saver's is this
/// binary's baseline ([`memory_saver_is_the_baseline`]): they are not run again here.
fn sqlite_crash_test_kills_as_often_as_told() {
    let only = RunOptions { capabilities: Some([Capability::Durability].into()), ..RunOptions::default() };
    let report = conformance_spec::validate(&checkpoint_sqlite::registration(), &only);
    let failures = report.failed_cases();
    assert!(failures.is_empty(), "{} durability case(s) failed on sqlite:\n{}", failures.len(), failures.join("\n"));
    let kills = report.facts.get("durability.kills").and_then(|v| v.as_u64());
    let want = std::env::var(conformance_spec::crash::KILLS_ENV)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(conformance_spec::crash::DEFAULT_KILLS as u64);
    assert_eq!(kills, Some(want), "facts: {:?}", report.facts);
}

fn catalog_is_well_formed() {
    assert!(MUTANTS.len() >= 60, "only {} mutants", MUTANTS.len());
    let mut names = BTreeSet::new();
    let mut bugs = BTreeSet::new();
    for m in MUTANTS {
        assert!(names.insert(m.name), "duplicate mutant name {}", m.name);
        assert!(bugs.insert(m.bug), "bug {} used by two mutants", m.bug);
        assert!(
            m.name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
            "mutant name {} is not snake_case",
            m.name
        );
        assert!(!m.breaks.is_empty(), "{} declares no capability", m.name);
        assert!(!m.covers.is_empty(), "{} covers nothing", m.name);
        assert!(!m.description.is_empty() && !m.description.contains('\n'), "{}: one-line description", m.name);
        for c in m.covers {
            match c {
                // Known rules, and at least one per mutant: `every_rule_scenario_and_gap_has_a_mutant`.
                Cover::Rule(_) => {}
                Cover::Scenario(s) => {
                    assert!(SCENARIOS.iter().any(|(id, _)| id == s), "{}: unknown scenario {s}", m.name)
                }
                Cover::Gap(g) => assert!(GAPS.iter().any(|(id, _)| id == g), "{}: unknown gap {g}", m.name),
            }
        }
    }
}

fn every_rule_scenario_and_gap_has_a_mutant() {
    let covered: BTreeSet<Cover> = MUTANTS.iter().flat_map(|m| m.covers.iter().copied()).collect();
    let mut missing = untraced_mutants(RULES, MUTANTS);
    for (id, _) in SCENARIOS {
        let explained = SCENARIOS_WITHOUT_MUTANT.iter().any(|(s, _)| s == id);
        if covered.contains(&Cover::Scenario(id)) == explained {
            missing.push(format!("scenario {id} (explained: {explained})"));
        }
    }
    for (id, _) in GAPS {
        if !covered.contains(&Cover::Gap(id)) {
            missing.push(format!("gap {id}"));
        }
    }
    assert!(
        missing.is_empty(),
        "covered by no mutant and not explained, or explained but covered:\n{}",
        missing.join("\n")
    );
}

fn memory_saver_is_the_baseline() {
    let a = analysis();
    assert!(a.baseline_failures.is_empty(), "the memory saver fails: {:?}", a.baseline_failures);
}

fn every_mutant_is_caught_by_its_capability() {
    let a = analysis();
    let mut problems = Vec::new();
    for r in &a.results {
        let declared = r.caught_in_declared();
        let outside = r.caught_outside();
        if declared.is_empty() {
            problems.push(format!(
                "{} ({}) survived in its capabilities {:?}{}",
                r.mutant.name,
                r.mutant.description,
                r.mutant.breaks.iter().map(|c| c.name()).collect::<Vec<_>>(),
                if outside.is_empty() { String::new() } else { format!("; caught only by {}", outside.join(", ")) }
            ));
        } else if !outside.is_empty() {
            problems.push(format!(
                "{} breaks more than it declares {:?}: caught by {}",
                r.mutant.name,
                r.mutant.breaks.iter().map(|c| c.name()).collect::<Vec<_>>(),
                outside.join(", ")
            ));
        }
    }
    assert!(problems.is_empty(), "{}\n\n{}", problems.join("\n"), a.render());
}

fn every_never_failing_case_is_explained() {
    let a = analysis();
    let unexplained = a.unexplained();
    assert!(unexplained.is_empty(), "spec cases no mutant makes fail, unexplained:\n{}", unexplained.join("\n"));
    assert!(a.stale_explanations.is_empty(), "stale NEVER_FAILING_EXPLAINED entries: {:?}", a.stale_explanations);
}

fn kill_rate_is_total() {
    let a = analysis();
    assert_eq!(a.kill_rate(), 100.0, "survivors: {:?}", a.survivors());
    assert!(!a.results.iter().any(|r| r.mutant.bug == "NoBug"), "the bug-free reference is not a mutant");
}

/// The concurrency and durability cases each catch the bug they were written for: a lost
/// update, a torn read, "database is locked" across instances (S18, S19), and an
/// acknowledged call a kill loses (S20, through the crash test's child process).
fn concurrency_and_crash_mutants_are_caught_by_their_cases() {
    let expected = [
        ("lost_update", "concurrency::put_writes_of_many_tasks_all_kept"),
        ("torn_read", "concurrency::reader_sees_none_or_all_of_a_checkpoint"),
        ("busy_across_instances", "concurrency::two_instances_write_at_once"),
        ("ack_deferred_to_next_call", "durability::acknowledged_writes_survive_kill"),
    ];
    assert_caught_by(&expected);
}

/// Every case outside `concurrency`, `durability` and `traces` (whose killed-and-resumed
/// trace reopens the storage, issue 17) uses one instance: a multi-instance bug must fail
/// those capabilities, never a base one (issue 13). The memory saver's
/// fixture here counts the second instances opened and must pass every case.
fn only_concurrency_and_durability_open_a_second_instance() {
    use conformance_core::{async_trait, BoxError, CheckpointSaver, Reach, Storage};
    use conformance_selftest::{MutantSaver, NoBug};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    static REOPENED: AtomicUsize = AtomicUsize::new(0);
    /// Per location (cases may run at once): the case's in-memory saver and its first
    /// instance.
    #[derive(Default)]
    struct Counting(std::sync::Mutex<Vec<(Arc<dyn CheckpointSaver>, Option<MutantSaver>)>>);
    #[async_trait]
    impl Storage for Counting {
        type Saver = MutantSaver;
        async fn create(&self) -> Result<String, BoxError> {
            let mut cases = self.0.lock().unwrap();
            cases.push((Arc::new(checkpoint_memory::MemorySaver::new()), None));
            Ok((cases.len() - 1).to_string())
        }
        async fn open(&self, location: &str) -> Result<MutantSaver, BoxError> {
            let mut cases = self.0.lock().unwrap();
            let (inner, first) = cases.get_mut(location.parse::<usize>()?).ok_or("no storage")?;
            Ok(match first {
                Some(first) => {
                    REOPENED.fetch_add(1, Ordering::SeqCst);
                    first.reopen(inner.clone())
                }
                None => first.insert(MutantSaver::new(inner.clone(), Arc::new(NoBug))).clone(),
            })
        }
        async fn destroy(&self, _: &str) -> Result<(), BoxError> {
            Ok(())
        }
        fn reach(&self) -> Reach {
            Reach::ThisProcess
        }
    }
    let registration = Registration::persistent("memory-counting-reopens", Counting::default());
    let single: BTreeSet<conformance_core::Capability> = conformance_core::Capability::ALL
        .into_iter()
        .filter(|c| {
            !matches!(
                c,
                conformance_core::Capability::Concurrency
                    | conformance_core::Capability::Durability
                    | conformance_core::Capability::Traces
            )
        })
        .collect();
    let options = RunOptions { capabilities: Some(single), ..RunOptions::default() };
    let report = conformance_spec::validate(&registration, &options);
    assert!(report.failed_cases().is_empty(), "{:?}", report.failed_cases());
    assert_eq!(
        REOPENED.load(Ordering::SeqCst),
        0,
        "a case outside concurrency and durability opened a second instance"
    );
}

/// A mutant's home capability (the first it declares, the module it lives in) has a case
/// that catches it: a rule is never caught only by cases of another capability (issue 13).
/// The table of `cargo xtask mutants` names the capabilities that catch each mutant.
fn every_mutant_is_caught_by_its_home_capability() {
    let a = analysis();
    let outside = a.caught_only_outside_home();
    assert!(outside.is_empty(), "caught only outside their home capability: {outside:?}\n\n{}", a.render());
    let table = a.render();
    assert!(table.contains("| caught in |") && table.contains("home capability catches (0)"), "{table}");
}

/// CONTRACT §2 put keeps a re-put checkpoint's pending writes, and get_tuple with an id
/// returns that checkpoint's writes: each rule is caught by a case of its own section's
/// capability.
fn rules_are_caught_where_the_contract_states_them() {
    let expected = [
        ("reput_drops_writes", "put::reput_keeps_pending_writes"),
        ("by_id_gives_latest_writes", "get_tuple::with_id_returns_that_checkpoints_writes"),
        ("format_version_forced", "put::format_version_roundtrips"),
    ];
    assert_caught_by(&expected);
}

/// Issue 41: two bugs of published savers, a fork whose parent is the latest checkpoint
/// instead of the one it forked from, and "latest" decided by the metadata step instead of
/// the id, are caught by real LangGraph traffic: the recorded time travel
/// (traces/time-travel.json), not only by the hand-written cases of put and get_tuple.
fn fork_and_latest_bugs_are_caught_by_recorded_time_travel() {
    let case = "traces::replays_time_travel_forks_of_older_checkpoints";
    assert_caught_by(&[("fork_parent_is_latest", case), ("latest_by_metadata_step", case)]);
}

/// Fails unless each `(mutant, case)` of `expected` names a mutant that `case` caught.
fn assert_caught_by(expected: &[(&str, &str)]) {
    let a = analysis();
    for (mutant, case) in expected.iter().copied() {
        let r = a.results.iter().find(|r| r.mutant.name == mutant);
        let r = r.unwrap_or_else(|| panic!("no mutant {mutant} in the catalog"));
        assert!(r.caught_by.iter().any(|c| c == case), "{mutant} not caught by {case}; caught by {:?}", r.caught_by);
    }
}
