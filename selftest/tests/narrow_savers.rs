//! Savers with a narrow API are judged on each capability's own rule (issue 19):
//!
//! - a saver without `put_writes` scores `delete_thread`, `list` and `get_tuple` on the
//!   cases whose setup needs only what it has; their cases that need `put_writes` are "not
//!   run (needs put_writes)", the capabilities incomplete, never failed; a planted
//!   `delete_thread` bug in that saver is caught;
//! - every trial has one outcome, the same in the pre-run banner, in libtest, in the
//!   terminal report, in JSON and in JUnit (the conformance binary runs as a child);
//! - a saver that reads by id but has no "latest" form is detected as having `get_tuple`;
//! - a saver whose `list` returns a wrong `config` is told "config names X, checkpoint is
//!   Y", not that checkpoints were lost.
//!
//! `harness = false`: the child conformance run re-executes this binary.

use std::collections::BTreeMap;
use std::process::{Command, ExitCode};
use std::sync::Arc;

use async_trait::async_trait;
use conformance_core::run::{detect, NEEDS_PREFIX};
use conformance_core::{
    Capability, CapabilityStatus, CheckpointError, CheckpointTuple, Level, ListOptions, Outcome, Registration, Report,
    RunOptions,
};
use conformance_selftest::{mutant, registration_of, Base, Bug, Inner, Invocation, NoBug, Reply};

/// Set in the child process that runs the conformance binary on the saver without put_writes.
const CHILD: &str = "NARROW_SAVERS_CHILD";

/// `put_writes` answers `Unsupported`; every other call goes to `inner` (a catalog mutant or
/// no bug).
struct WithoutPutWrites(Arc<dyn Bug>);

#[async_trait]
impl Bug for WithoutPutWrites {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        match call {
            Invocation::PutWrites(_) => Err(CheckpointError::Unsupported(Capability::PutWrites)),
            call => self.0.call(saver, call).await,
        }
    }
}

fn without_put_writes() -> Arc<dyn Bug> {
    Arc::new(WithoutPutWrites(Arc::new(NoBug)))
}

/// The saver without put_writes, with the catalog's delete_thread bug planted.
fn without_put_writes_deleting_by_id() -> Arc<dyn Bug> {
    let planted = mutant("delete_thread_hides_same_ids_elsewhere").expect("the mutant is in the catalog");
    Arc::new(WithoutPutWrites((planted.make)()))
}

fn no_put_writes() -> Registration {
    registration_of("no-put-writes", Base::Memory, without_put_writes)
}

fn validate(registration: &Registration) -> Report {
    conformance_spec::validate(registration, &RunOptions::default())
}

fn saver_without_put_writes_is_judged_on_its_own_rules() {
    let report = validate(&no_put_writes());
    let needs = format!("{NEEDS_PREFIX} put_writes, not implemented");
    for cap in [Capability::DeleteThread, Capability::List, Capability::GetTuple] {
        let cases: Vec<_> = report.tests.iter().filter(|t| t.capability == cap).collect();
        let catalog: BTreeMap<String, bool> = conformance_spec::catalog()
            .iter()
            .filter(|c| c.capability == cap)
            .map(|c| (c.name.to_owned(), c.needs.contains(&Capability::PutWrites)))
            .collect();
        for t in &cases {
            let needs_writes = catalog[&t.name];
            let want = if needs_writes { Outcome::NotRun } else { Outcome::Passed };
            assert_eq!(t.outcome, want, "{}: {:?}", t.id, t.message);
            if needs_writes {
                assert_eq!(t.message.as_deref(), Some(needs.as_str()), "{}", t.id);
            }
        }
        assert!(cases.iter().any(|t| t.outcome == Outcome::Passed), "{cap}: no case judged its own rule");
        assert!(cases.iter().any(|t| t.outcome == Outcome::NotRun), "{cap}: no case needs put_writes");
        let r = &report.results[&cap];
        assert_eq!(r.status, CapabilityStatus::Incomplete, "{cap}");
        assert_eq!((r.passed, r.tests_failed), (Some(false), 0), "{cap}: incomplete is not passed, not failed");
    }
    let pw = &report.results[&Capability::PutWrites];
    assert_eq!(pw.status, CapabilityStatus::NotImplemented);
    // put keeps one case that re-puts a checkpoint with writes: incomplete too.
    assert_eq!(report.results[&Capability::Put].status, CapabilityStatus::Incomplete);
    // No base capability passed: put_writes is not implemented, the others incomplete.
    assert_eq!(report.conformance_level, Level::None);
    let terminal = conformance_core::render::render_terminal(&report);
    assert!(terminal.contains("incomplete") && terminal.contains("needs put_writes"), "{terminal}");
}

fn planted_delete_thread_bug_is_caught_without_put_writes() {
    let report =
        validate(&registration_of("no-put-writes-delete-by-id", Base::Memory, without_put_writes_deleting_by_id));
    let failed: Vec<&str> = report
        .tests
        .iter()
        .filter(|t| t.capability == Capability::DeleteThread && t.outcome == Outcome::Failed)
        .map(|t| t.name.as_str())
        .collect();
    assert!(failed.contains(&"other_thread_with_the_same_ids_untouched"), "delete_thread failures: {failed:?}");
    assert_eq!(report.results[&Capability::DeleteThread].status, CapabilityStatus::Failed);
}

/// libtest's word for a trial of this outcome.
fn libtest_word(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Passed | Outcome::NotStrict => "ok",
        Outcome::Failed => "FAILED",
        Outcome::Skipped | Outcome::NotImplemented | Outcome::NotRun => "ignored",
    }
}

fn one_outcome_per_trial_everywhere() {
    outcomes_agree("no-put-writes");
}

/// The same for a saver whose cases of other capabilities find at run time that it has no
/// latest read: each such trial is ignored by libtest, not run in the report (with its
/// reason), skipped in JUnit.
fn runtime_not_run_agrees_everywhere() {
    outcomes_agree("by-id-only");
}

/// Runs this binary as a `checkpointer_test!` main over the registration `child` names
/// (see `main`) and checks that every trial has one outcome in libtest, JSON, JUnit, the
/// banner (for what the plan knows) and the terminal report.
fn outcomes_agree(child: &str) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (json, junit) = (dir.path().join("report.json"), dir.path().join("report.xml"));
    let out = Command::new(std::env::current_exe().expect("this test binary"))
        .env(CHILD, child)
        .env("CHECKPOINT_CONFORMANCE_REPORT", &json)
        .env_remove("GITHUB_STEP_SUMMARY")
        .env("NO_COLOR", "1")
        // The cases' outcomes are compared here; the fuzz trial has its own test
        // (conformance-spec/tests/fuzz_report.rs).
        .env("CHECKPOINT_CONFORMANCE_FUZZ_BUDGET", "0")
        .args(["--test-threads", "2", "--junit"])
        .arg(&junit)
        .output()
        .expect("the child conformance run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a saver without a base capability must fail cargo test");
    let report: Report = serde_json::from_str(&std::fs::read_to_string(&json).expect("the JSON report")).unwrap();
    let xml = std::fs::read_to_string(&junit).expect("the JUnit report");
    let doc = roxmltree::Document::parse(&xml).expect("JUnit XML");
    let reg = &report.checkpointer_name;
    // libtest: `test NAME ... WORD`.
    let libtest: BTreeMap<&str, &str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("test ")?.split_once(" ... "))
        .map(|(name, word)| (name.trim(), word.split_whitespace().next().unwrap_or("")))
        .collect();
    let mut wrong = Vec::new();
    for t in &report.tests {
        let trial = format!("{reg}::{}", t.id);
        let want = libtest_word(t.outcome);
        if libtest.get(trial.as_str()).copied() != Some(want) {
            wrong.push(format!("{trial}: JSON {:?}, libtest {:?}", t.outcome, libtest.get(trial.as_str())));
        }
        let case = doc.descendants().find(|n| n.has_tag_name("testcase") && n.attribute("name") == Some(&trial));
        let junit_word = case.map(|c| {
            if c.children().any(|n| n.has_tag_name("failure")) {
                "FAILED"
            } else if c.children().any(|n| n.has_tag_name("skipped")) {
                "ignored"
            } else {
                "ok"
            }
        });
        if junit_word != Some(want) {
            wrong.push(format!("{trial}: JSON {:?}, JUnit {junit_word:?}", t.outcome));
        }
    }
    assert!(wrong.is_empty(), "{} trials disagree:\n{}", wrong.len(), wrong.join("\n"));
    // The banner: one line per capability and reason, with the trials it counts.
    for (cap, r) in &report.results {
        let count = |o: Outcome| report.tests.iter().filter(|t| t.capability == *cap && t.outcome == o).count();
        let all = report.tests.iter().filter(|t| t.capability == *cap).count();
        if r.status == CapabilityStatus::NotImplemented && cap.is_base() {
            let line = format!("failing: {reg}::{cap} ({} trials):", count(Outcome::Failed));
            assert_eq!(count(Outcome::Failed), all, "{cap}");
            assert!(stderr.contains(&line), "no {line:?} in:\n{stderr}");
        }
        // The banner names the trials the plan knows are not run (a missing need); those
        // found at run time are not in it.
        if count(Outcome::NotRun) > 0 && child == "no-put-writes" {
            let n = count(Outcome::NotRun);
            let of = if n == all { String::new() } else { format!(" of {all}") };
            let line = format!("ignored: {reg}::{cap} ({n}{of} trials): {NEEDS_PREFIX} put_writes");
            assert!(stderr.contains(&line), "no {line:?} in:\n{stderr}");
        }
    }
    let (p, f, k) = report.case_counts();
    let summary = format!("{p} passed; {f} failed; {k} ignored");
    assert!(stdout.contains(&summary), "libtest summary is not {summary:?}:\n{stdout}");
    let terminal = format!("Tests: {p} passed, {f} failed, {k} not run");
    assert!(stdout.contains(&terminal), "terminal report is not {terminal:?}:\n{stdout}");
    assert!(f > 0 && k > 0 && p > 0);
}

/// `get_tuple` without a checkpoint_id answers `Unsupported`: a saver that reads by id only.
struct ReadsByIdOnly;

#[async_trait]
impl Bug for ReadsByIdOnly {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        match call {
            Invocation::GetTuple { config: c } if c.checkpoint_id.is_none() => {
                Err(CheckpointError::Unsupported(Capability::GetTuple))
            }
            call => saver.forward(call).await,
        }
    }
}

fn by_id_only() -> Registration {
    registration_of("reads-by-id-only", Base::Memory, || Arc::new(ReadsByIdOnly))
}

/// Detected as having get_tuple and judged on its cases; the cases of other capabilities
/// that read the latest checkpoint are not run, with that reason, instead of failing on a
/// rule they never checked (issue 19).
fn saver_reading_by_id_only_has_get_tuple() {
    let registration = by_id_only();
    assert!(detect(&registration).is_detected(Capability::GetTuple), "get_tuple by id was not detected");
    let report = validate(&registration);
    let r = &report.results[&Capability::GetTuple];
    assert_ne!(r.status, CapabilityStatus::NotImplemented);
    assert!(r.tests_passed > 0 && r.tests_failed > 0, "judged on its cases: {r:?}");
    let latest = "not run: needs get_tuple's latest form (a config without checkpoint_id), not implemented";
    let mut not_run = 0;
    for t in &report.tests {
        let m = t.message.as_deref().unwrap_or("");
        // Its own capability fails on the missing form; a property capability's every call
        // is its rule (concurrency, durability), and traces compare each answer of the
        // recorded traffic: an Unsupported there fails too.
        let property = matches!(t.capability, Capability::Concurrency | Capability::Durability | Capability::Traces);
        if t.capability == Capability::GetTuple || property {
            assert!(t.outcome != Outcome::NotRun, "{}: {m}", t.id);
            continue;
        }
        assert!(!m.contains("Unsupported") || t.outcome == Outcome::NotRun, "{}: {:?} {m}", t.id, t.outcome);
        if t.outcome == Outcome::NotRun {
            assert!(m.starts_with(latest), "{}: {m}", t.id);
            not_run += 1;
        }
    }
    assert!(not_run >= 10, "only {not_run} cases found the latest read missing");
    assert!(
        report.warnings.iter().any(|w| w.contains("reads by id only")),
        "no warning says so: {:?}",
        report.warnings
    );
    for cap in [Capability::DeleteThread, Capability::Put, Capability::Prune] {
        let r = &report.results[&cap];
        assert_eq!(r.status, CapabilityStatus::Incomplete, "{cap}: {r:?}");
    }
}

/// A saver with a latest read that answers `Unsupported` to it on a thread it was asked to
/// delete (and deletes nothing): it cannot dodge delete_thread's rule that way, the cases
/// fail (a form detection found, refused later, is a failure, not a missing need).
struct DodgesAfterDelete(std::sync::Mutex<std::collections::BTreeSet<String>>);

#[async_trait]
impl Bug for DodgesAfterDelete {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        let deleted = |t: &str| self.0.lock().unwrap().contains(t);
        match call {
            Invocation::DeleteThread { thread_id } => {
                self.0.lock().unwrap().insert(thread_id);
                Ok(Reply::Done)
            }
            Invocation::GetTuple { config: c } if c.checkpoint_id.is_none() && deleted(&c.thread_id) => {
                Err(CheckpointError::Unsupported(Capability::GetTuple))
            }
            call => saver.forward(call).await,
        }
    }
}

fn refusing_a_detected_form_does_not_dodge_a_rule() {
    let reg = registration_of("dodges-after-delete", Base::Memory, || Arc::new(DodgesAfterDelete(Default::default())));
    let report = validate(&reg);
    let r = &report.results[&Capability::DeleteThread];
    assert_eq!(r.status, CapabilityStatus::Failed, "{r:?}");
    assert!(report.tests.iter().all(|t| t.outcome != Outcome::NotRun), "nothing is not run: every form was detected");
}

/// `list` returns each tuple with the config of the tuple listed after it (the last keeps
/// its own): the checkpoints are all there, their configs are wrong.
struct ListShiftsConfigs;

impl Bug for ListShiftsConfigs {
    fn list_output(&self, _caller: &ListOptions, out: &mut Vec<CheckpointTuple>) {
        for i in 1..out.len() {
            out[i - 1].config = out[i].config.clone();
        }
    }
}

fn wrong_config_in_list_is_named_not_a_loss() {
    let report = validate(&registration_of("list-shifts-configs", Base::Memory, || Arc::new(ListShiftsConfigs)));
    let failed: Vec<_> = report.tests.iter().filter(|t| t.outcome == Outcome::Failed).collect();
    assert!(!failed.is_empty());
    let named: Vec<_> =
        failed.iter().filter(|t| t.message.as_deref().is_some_and(|m| m.contains("config names"))).collect();
    assert!(named.len() > 1, "no failure names the config/id mismatch");
    let lost: Vec<String> = failed
        .iter()
        .filter(|t| t.message.as_deref().is_some_and(|m| m.contains("(missing ") || m.contains("lost")))
        .map(|t| format!("{}: {}", t.id, t.message.as_deref().unwrap_or("")))
        .collect();
    assert!(lost.is_empty(), "reported as a loss:\n{}", lost.join("\n"));
}

/// `list` returns the right tuples oldest first.
struct ListReversed;

impl Bug for ListReversed {
    fn list_output(&self, _caller: &ListOptions, out: &mut Vec<CheckpointTuple>) {
        out.reverse();
    }
}

fn exact_order_check_says_every_element_is_there() {
    let report = validate(&registration_of("list-reversed", Base::Memory, || Arc::new(ListReversed)));
    let t = report.tests.iter().find(|t| t.id == "list::newest_id_first").expect("the case");
    assert_eq!(t.outcome, Outcome::Failed);
    let m = t.message.as_deref().unwrap_or("");
    assert!(m.contains("ids: same 4 elements, wrong order: expected ["), "{m}");
}

fn main() -> ExitCode {
    match std::env::var(CHILD).as_deref() {
        Ok("by-id-only") => return conformance_spec::harness::run_main(vec![by_id_only()]),
        Ok(_) => return conformance_spec::harness::run_main(vec![no_put_writes()]),
        Err(_) => {}
    }
    let args = libtest_mimic::Arguments::from_args();
    let checks: [(&str, fn()); 8] = [
        ("exact_order_check_says_every_element_is_there", exact_order_check_says_every_element_is_there),
        ("saver_without_put_writes_is_judged_on_its_own_rules", saver_without_put_writes_is_judged_on_its_own_rules),
        (
            "planted_delete_thread_bug_is_caught_without_put_writes",
            planted_delete_thread_bug_is_caught_without_put_writes,
        ),
        ("one_outcome_per_trial_everywhere", one_outcome_per_trial_everywhere),
        ("runtime_not_run_agrees_everywhere", runtime_not_run_agrees_everywhere),
        ("refusing_a_detected_form_does_not_dodge_a_rule", refusing_a_detected_form_does_not_dodge_a_rule),
        ("saver_reading_by_id_only_has_get_tuple", saver_reading_by_id_only_has_get_tuple),
        ("wrong_config_in_list_is_named_not_a_loss", wrong_config_in_list_is_named_not_a_loss),
    ];
    let trials = checks
        .into_iter()
        .map(|(name, check)| {
            libtest_mimic::Trial::test(name, move || {
                std::panic::catch_unwind(check)
                    .map_err(|p| libtest_mimic::Failed::from(conformance_core::run::panic_message(&*p)))
            })
        })
        .collect();
    libtest_mimic::run(&args, trials).exit_code()
}
