//! Unit tests of the harness (`harness.rs`), in a file of their own to keep it readable.

use super::*;

fn os(v: &[&str]) -> Vec<OsString> {
    v.iter().map(OsString::from).collect()
}

use std::sync::atomic::{AtomicUsize, Ordering};

use conformance_core::{async_trait, CheckpointError, CheckpointSaver, Failure, Fixture};

/// Implements `put` only (answers with its config); every other method is Unsupported.
struct PutOnly;

#[async_trait]
impl CheckpointSaver for PutOnly {
    async fn put(
        &self,
        config: &conformance_core::CheckpointConfig,
        _checkpoint: conformance_core::Checkpoint,
        _metadata: conformance_core::CheckpointMetadata,
        _new_versions: conformance_core::ChannelVersions,
    ) -> Result<conformance_core::CheckpointConfig, CheckpointError> {
        Ok(config.clone())
    }
}

fn case(capability: Capability, name: &'static str, run: conformance_core::CaseFn) -> SpecCase {
    SpecCase::new(capability, name, run)
}

fn cases() -> Vec<SpecCase> {
    vec![
        case(Capability::Prune, "c_prune", |_| Box::pin(async { Ok(()) })),
        case(Capability::Put, "b_fails", |_| Box::pin(async { Err(Failure::new("put(t): expected 1, got 2")) })),
        case(Capability::Put, "a_passes", |_| Box::pin(async { Ok(()) })),
        case(Capability::CopyThread, "d_copy", |_| Box::pin(async { Ok(()) })),
    ]
}

/// A registration counting its factory calls (each probe and each case makes one).
fn registration(calls: &Arc<AtomicUsize>) -> Registration {
    let calls = calls.clone();
    Registration::new("t", move || {
        calls.fetch_add(1, Ordering::SeqCst);
        async { Ok(Fixture::new(PutOnly)) }
    })
    .skip(Capability::CopyThread, "no copy here")
}

/// JSON output, so the inner runs print no `test result:` line that a reader of this
/// crate's test output could take for its own.
fn json_args(args: &[&str]) -> Arguments {
    let mut v = os(args);
    v.extend(os(&["--format", "json"]));
    Arguments::from_iter(v)
}

fn harness(calls: &Arc<AtomicUsize>, args: &[&str], under_nextest: bool) -> Harness {
    let mut h = Harness::new(vec![registration(calls)], cases(), json_args(args), None);
    h.under_nextest = under_nextest;
    h
}

/// (name, ignored) of every trial, in order.
fn flags(p: &Prepared) -> Vec<(String, bool)> {
    p.trials.iter().map(|t| (t.name().to_owned(), t.has_ignored_flag())).collect()
}

#[test]
fn trials_are_sorted_named_and_statically_ignored() {
    let calls = Arc::new(AtomicUsize::new(0));
    let h = harness(&calls, &["bin", "--test-threads", "1"], false);
    let p = h.prepare();
    assert_eq!(calls.load(Ordering::SeqCst), 1, "one probe for the whole process");
    assert_eq!(
        flags(&p),
        vec![
            ("t::copy_thread::d_copy".into(), true),
            ("t::prune::c_prune".into(), true),
            ("t::put::a_passes".into(), false),
            ("t::put::b_fails".into(), false),
        ]
    );
    let c = libtest_mimic::run(&h.args, p.trials);
    assert_eq!((c.num_passed, c.num_failed, c.num_ignored), (1, 1, 2));
    assert_eq!(calls.load(Ordering::SeqCst), 3, "one fresh saver per case that ran");
    let results = p.parts[0].results.lock().unwrap();
    assert_eq!(results.len(), 2);
    assert!(results.values().any(|r| r.message.as_deref() == Some("put(t): expected 1, got 2")));
}

#[test]
fn a_missing_base_capability_fails_its_trials_instead_of_hiding_them() {
    let calls = Arc::new(AtomicUsize::new(0));
    let mut with_list = cases();
    with_list.push(case(Capability::List, "e_list", |_| Box::pin(async { Ok(()) })));
    let mut h = Harness::new(vec![registration(&calls)], with_list, json_args(&["bin", "--test-threads", "1"]), None);
    h.under_nextest = false;
    let p = h.prepare();
    assert!(flags(&p).contains(&("t::list::e_list".into(), false)), "list is base: not ignored");
    assert!(flags(&p).contains(&("t::prune::c_prune".into(), true)), "prune is extended: ignored");
    let c = libtest_mimic::run(&h.args, p.trials);
    assert_eq!((c.num_passed, c.num_failed, c.num_ignored), (1, 2, 2));
}

#[test]
fn plain_list_does_not_probe_but_list_ignored_does() {
    let calls = Arc::new(AtomicUsize::new(0));
    let p = harness(&calls, &["bin", "--list"], false).prepare();
    assert_eq!(calls.load(Ordering::SeqCst), 0, "a plain --list shows no ignored flags: no probe");
    assert_eq!(p.trials.len(), 4);
    let p = harness(&calls, &["bin", "--list", "--ignored"], false).prepare();
    assert_eq!(calls.load(Ordering::SeqCst), 1, "--list --ignored needs the flags: one probe");
    assert!(flags(&p).contains(&("t::prune::c_prune".into(), true)));
}

#[test]
fn nextest_process_per_test_trusts_the_listing() {
    let calls = Arc::new(AtomicUsize::new(0));
    let h = harness(&calls, &["bin", "--exact", "t::put::a_passes", "--nocapture"], true);
    let p = h.prepare();
    assert_eq!(calls.load(Ordering::SeqCst), 0, "no probe in a nextest process");
    assert!(flags(&p).contains(&("t::put::a_passes".into(), false)));
    let c = libtest_mimic::run(&h.args, p.trials);
    assert_eq!((c.num_passed, c.num_filtered_out), (1, 3));
    assert!(!h.whole_suite(c.num_filtered_out));
    assert_eq!(calls.swap(0, Ordering::SeqCst), 1, "the case itself made one saver");
    // nextest runs an ignored test (--run-ignored) with --ignored: the flag follows it.
    let p = harness(&calls, &["bin", "--exact", "t::prune::c_prune", "--ignored"], true).prepare();
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    assert!(flags(&p).contains(&("t::prune::c_prune".into(), true)));
    // The same arguments outside nextest probe.
    harness(&calls, &["bin", "--exact", "t::put::a_passes"], false).prepare();
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn no_probe_when_only_skipped_capabilities_are_selected_or_all_run() {
    let calls = Arc::new(AtomicUsize::new(0));
    let p = harness(&calls, &["bin", "copy_thread"], false).prepare();
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    assert!(flags(&p).contains(&("t::copy_thread::d_copy".into(), true)));
    harness(&calls, &["bin", "--include-ignored", "--list"], false).prepare();
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[test]
fn only_an_unfiltered_plain_run_is_the_whole_suite() {
    let calls = Arc::new(AtomicUsize::new(0));
    assert!(harness(&calls, &["bin"], false).whole_suite(0));
    assert!(!harness(&calls, &["bin", "put"], false).whole_suite(2));
    assert!(!harness(&calls, &["bin", "--ignored"], false).whole_suite(0));
    assert!(!harness(&calls, &["bin", "--include-ignored"], false).whole_suite(0));
    assert!(!harness(&calls, &["bin", "--list"], false).whole_suite(0));
}

#[test]
fn a_failed_setup_of_the_lifespan_fails_every_trial_that_would_run() {
    let calls = Arc::new(AtomicUsize::new(0));
    let reg = registration(&calls).lifespan(|| async { Err("no server on :5432".into()) }, || async { Ok(()) });
    let h = Harness::new(vec![reg], cases(), json_args(&["bin", "--test-threads", "1"]), None);
    let p = h.prepare();
    assert!(matches!(p.parts[0].session.knowledge(), Knowledge::SetupFailed(e) if e.contains("no server")));
    let c = libtest_mimic::run(&h.args, p.trials);
    assert_eq!((c.num_passed, c.num_failed, c.num_ignored), (0, 3, 1), "only the registration's skip stays ignored");
    assert_eq!(calls.load(Ordering::SeqCst), 0, "no saver is made when the setup failed");
}

#[test]
fn junit_flag_is_taken_out_in_both_forms() {
    let (j, rest) = take_junit_flag(os(&["bin", "--junit", "a.xml", "--exact", "x"])).unwrap();
    assert_eq!(j, Some(PathBuf::from("a.xml")));
    assert_eq!(rest, os(&["bin", "--exact", "x"]));
    let (j, rest) = take_junit_flag(os(&["bin", "--junit=b.xml"])).unwrap();
    assert_eq!(j, Some(PathBuf::from("b.xml")));
    assert_eq!(rest, os(&["bin"]));
    let (j, _) = take_junit_flag(os(&["bin", "filter"])).unwrap();
    assert_eq!(j, None);
}

#[test]
fn junit_flag_errors() {
    assert!(take_junit_flag(os(&["bin", "--junit"])).unwrap_err().contains("--junit PATH"));
    assert!(take_junit_flag(os(&["bin", "--junit="])).is_err());
    assert!(take_junit_flag(os(&["bin", "--junit", "a", "--junit", "b"])).unwrap_err().contains("twice"));
}

#[test]
fn check_writable_rejects_missing_dirs_and_directories() {
    let dir = std::env::temp_dir();
    assert!(check_writable(&dir).unwrap_err().contains("is a directory"));
    let missing = dir.join("conformance-no-such-dir-5f1c").join("r.xml");
    assert!(check_writable(&missing).unwrap_err().contains("does not exist"));
    let fresh = dir.join(format!("conformance-check-{}.xml", std::process::id()));
    check_writable(&fresh).unwrap();
    assert!(!fresh.exists(), "the check leaves no file behind");
}

#[test]
fn several_registrations_get_their_own_trials_sessions_and_report_files() {
    let calls = Arc::new(AtomicUsize::new(0));
    let regs = vec![registration(&calls), registration(&calls).named("u")];
    let h = Harness::new(regs, cases(), json_args(&["bin", "--test-threads", "1"]), None);
    let p = h.prepare();
    assert_eq!(calls.load(Ordering::SeqCst), 2, "one probe per registration");
    let names: Vec<String> = flags(&p).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names.len(), 8);
    assert!(names.contains(&"t::put::a_passes".into()) && names.contains(&"u::put::a_passes".into()));
    let c = libtest_mimic::run(&h.args, p.trials);
    assert_eq!((c.num_passed, c.num_failed, c.num_ignored), (2, 2, 4));
    assert!(p.parts.iter().all(|part| part.results.lock().unwrap().len() == 2), "each part keeps its results");
    let path = std::path::Path::new("/tmp/report.json");
    assert_eq!(report_path(path, None), path);
    assert_eq!(report_path(path, Some("u")), std::path::Path::new("/tmp/report.u.json"));
}

#[test]
fn two_registrations_with_one_name_are_a_usage_error() {
    let calls = Arc::new(AtomicUsize::new(0));
    let code = run_with_args(vec![registration(&calls), registration(&calls)], cases(), os(&["bin"]));
    assert_eq!(code, ExitCode::from(2));
    assert_eq!(calls.load(Ordering::SeqCst), 0, "nothing ran");
}
