//! The chaos trials (issue 40): savers that break one way each (tests/bridge/savers/
//! chaos.py) and a handshake the kit must refuse. Each trial gets its verdict within a
//! stated bound ([`within`]: the trial fails when the bound passes) and checks that the
//! message names the cause. The trials run in parallel, so the longest bound, 180 s
//! (BlocksInPut), bounds them all; on a loaded 2-core machine they took 105 s together
//! (`cargo test -p checkpoint-bridge --test bridge -- chaos_`), and without the fixes of
//! issue 40 rows 3, 5 and 13 four of them fail.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use checkpoint_bridge::{python_registration, BridgeRegistration, PythonOptions};
use conformance_core::{Capability, Outcome, Report, RunOptions};

/// Whether the chaos trials run: unless `CHECKPOINT_BRIDGE_CHAOS=0` (.ci/run sets it for
/// the workspace's tests and runs them in a step of their own, bounded in time).
pub fn wanted() -> bool {
    std::env::var("CHECKPOINT_BRIDGE_CHAOS").map_or(true, |v| v != "0")
}

/// The trials that need the Python child, by name (registered by `main`).
pub const PYTHON: &[(&str, fn())] = &[
    (
        "chaos_a_saver_blocking_the_event_loop_is_stopped_naming_the_call",
        a_saver_blocking_the_event_loop_is_stopped_naming_the_call,
    ),
    (
        "chaos_the_cases_beside_a_blocking_call_get_their_own_verdict",
        the_cases_beside_a_blocking_call_get_their_own_verdict,
    ),
    ("chaos_a_setup_that_never_answers_is_named", a_setup_that_never_answers_is_named),
    ("chaos_a_huge_answer_names_its_size_and_call", a_huge_answer_names_its_size_and_call),
    ("chaos_a_call_that_never_answers_times_out_naming_it", a_call_that_never_answers_times_out_naming_it),
    ("chaos_a_late_answer_is_not_taken_for_a_stuck_child", a_late_answer_is_not_taken_for_a_stuck_child),
    ("chaos_a_child_exiting_mid_call_is_named", a_child_exiting_mid_call_is_named),
    ("chaos_a_saver_printing_to_stdout_is_harmless", a_saver_printing_to_stdout_is_harmless),
    ("chaos_an_interpreter_that_hangs_is_refused", an_interpreter_that_hangs_is_refused),
];

/// `--backend python --saver chaos:<class>` with a per-case limit.
fn chaos(class: &str, timeout: Duration) -> (BridgeRegistration, conformance_core::Registration) {
    let options = PythonOptions { base_dir: crate::base_dir(), ..PythonOptions::default() };
    let reg = python_registration("python", Some(&format!("chaos:{class}")), &options)
        .unwrap_or_else(|e| panic!("chaos:{class}: {e}"));
    let run = reg.registration().clone().timeout(timeout);
    (reg, run)
}

/// Runs `f` on a thread of its own and waits at most `bound` for it: no verdict by then
/// fails the trial (the thread is left behind; the process ends with the run).
fn within<T: Send + 'static>(bound: Duration, what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)));
    });
    match rx.recv_timeout(bound) {
        Ok(Ok(out)) => out,
        Ok(Err(p)) => std::panic::resume_unwind(p),
        Err(_) => panic!("{what}: no verdict within {} s", bound.as_secs()),
    }
}

/// The named cases of `capability` on `run`, annotated with the bridge's facts.
fn cases(
    reg: &BridgeRegistration,
    run: &conformance_core::Registration,
    capability: Capability,
    names: &[&str],
) -> Report {
    let all = conformance_spec::catalog();
    let chosen: Vec<_> = all
        .into_iter()
        .filter(|c| c.capability == capability && (names.is_empty() || names.contains(&c.name)))
        .collect();
    assert!(!chosen.is_empty(), "no cases {names:?} of {capability}");
    let mut report = conformance_core::run::run(run, &chosen, &RunOptions::default());
    reg.annotate(&mut report);
    report
}

/// The named cases of `capability` on `chaos:<class>` with a per-case `timeout`, within
/// `bound`: the report, the failed cases' messages and how many children served them.
fn judge(
    class: &'static str,
    timeout: Duration,
    bound: Duration,
    capability: Capability,
    names: &'static [&'static str],
) -> (Report, Vec<String>, usize) {
    let (reg, run) = chaos(class, timeout);
    let (report, children) = within(bound, class, move || {
        let r = cases(&reg, &run, capability, names);
        (r, reg.facts().children)
    });
    let failed = messages(&report);
    (report, failed, children)
}

fn messages(report: &Report) -> Vec<String> {
    report.tests.iter().filter(|t| t.outcome == Outcome::Failed).filter_map(|t| t.message.clone()).collect()
}

/// Issue 40 row 3: `aput` blocks the child's event loop. The child answers no ping, is
/// stopped after the ping deadline and replaced; the message names the call and the
/// blocking line; after two children stuck in put (in two cases), put's later calls are not
/// sent, and their cases are not judged (not run, with the reason). Bound:
/// 180 s for put's 32 cases (before: each timed out after 30 s, 16 minutes; after: 18 s alone,
/// 105 s beside the other chaos trials on a loaded 2-core machine).
pub fn a_saver_blocking_the_event_loop_is_stopped_naming_the_call() {
    let start = Instant::now();
    let (report_of_put, all, children) =
        judge("BlocksInPut", Duration::from_secs(30), Duration::from_secs(180), Capability::Put, &[]);
    let named = all.iter().find(|m| m.contains("answered no ping within 5 s while in put"));
    let named = named.unwrap_or_else(|| panic!("no message names the stuck put: {all:#?}"));
    assert!(named.contains("time.sleep(3600)") && named.contains("in aput"), "{named}");
    // The later puts were not sent: their cases are not judged (not run, with the reason).
    let not_judged: Vec<&str> = report_of_put
        .tests
        .iter()
        .filter(|t| t.outcome == Outcome::NotRun)
        .filter_map(|t| t.message.as_deref())
        .collect();
    assert!(not_judged.iter().any(|m| m.contains("not sent: put was the call in flight of 2")), "{not_judged:#?}");
    assert!(!all.iter().any(|m| m.contains("did not yield")), "{all:#?}");
    assert!(children <= 6, "{children} children for one blocked method");
    eprintln!("chaos: BlocksInPut judged in {:.1} s with {children} children", start.elapsed().as_secs_f64());
}

/// A put that blocks the child's event loop on one large value only (J-B2 of LangGraph
/// JS's MemorySaver): the child is stopped with the calls of the cases beside it in flight.
/// Those cases are run again alone and pass; the large value's case fails, alone, naming
/// the blocked put; put is still sent after it (its other calls answered). Bound: 150 s
/// (about 30 s alone: two ping deadlines and the reruns).
pub fn the_cases_beside_a_blocking_call_get_their_own_verdict() {
    const NAMES: &[&str] = &[
        "roundtrip_channel_values",
        "format_version_roundtrips",
        "channel_values_roundtrip_byte_for_byte",
        "large_channel_value_roundtrips",
        "channel_versions_roundtrip_with_their_kind",
        "versions_seen_roundtrips_exactly",
        "threads_are_isolated",
        "parent_is_the_config_checkpoint_id",
    ];
    let (report, failed, _) =
        judge("BlocksOnLargePut", Duration::from_secs(30), Duration::from_secs(150), Capability::Put, NAMES);
    let failed_ids: Vec<&str> =
        report.tests.iter().filter(|t| t.outcome == Outcome::Failed).map(|t| t.id.as_str()).collect();
    assert_eq!(failed_ids, ["put::large_channel_value_roundtrips"], "{failed:#?}");
    assert!(failed[0].contains("answered no ping within 5 s while in put"), "{failed:#?}");
    let rerun: Vec<&str> = report
        .tests
        .iter()
        .filter(|t| t.outcome == Outcome::Passed && t.rerun_alone.is_some())
        .map(|t| t.id.as_str())
        .collect();
    assert!(!rerun.is_empty(), "no case beside the blocked put was run again alone");
}

/// Issue 40 row 5: a lifespan setup that never answers (its event loop free) is named as
/// the setup the child has not answered, not as "did not yield (a blocking call ...)"; one
/// that blocks the event loop is stopped after the ping deadline, naming the blocking
/// line. Bound: 40 and 30 s.
pub fn a_setup_that_never_answers_is_named() {
    let (_reg, run) = chaos("SetupNeverAnswers", Duration::from_secs(4));
    let err = within(Duration::from_secs(40), "SetupNeverAnswers", move || conformance_core::run::lifespan_setup(&run))
        .expect_err("a setup that never answers");
    assert!(err.contains("the lifespan setup timed out after 16.0 s"), "{err}");
    assert!(err.contains("the saver's setup, sent to the bridge child python:chaos:SetupNeverAnswers"), "{err}");
    assert!(err.contains("has had no answer") && !err.contains("did not yield"), "{err}");
    let (_reg, run) = chaos("SetupBlocks", Duration::from_secs(5));
    let err = within(Duration::from_secs(30), "SetupBlocks", move || conformance_core::run::lifespan_setup(&run))
        .expect_err("a setup that blocks");
    assert!(err.contains("answered no ping within 5 s while in setup"), "{err}");
    assert!(err.contains("time.sleep(3600)") && !err.contains("did not yield"), "{err}");
}

/// Issue 40 row 5: a child that answers the handshake with a protocol the host did not
/// offer is refused with one line. Bound: 10 s.
pub fn a_handshake_with_an_unknown_protocol_is_refused() {
    let answer = r#"{"id":0,"ok":{"protocol":99,"server":"s","saver":"x"}}"#;
    let spec = checkpoint_bridge::BridgeSpec {
        name: "protocol-99".into(),
        command: checkpoint_bridge::ChildCommand {
            program: "sh".into(),
            args: vec!["-c".into(), format!("read l; echo '{answer}'; cat >/dev/null").into()],
            env: vec![],
            label: "sh (protocol 99)".into(),
        },
        saver: "x".into(),
        work_dir: crate::base_dir().join("runs"),
    };
    let reg = BridgeRegistration::new(spec);
    let err = within(Duration::from_secs(10), "protocol 99", move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(reg.registration().fixture()).err().map(|e| e.to_string())
    })
    .expect("protocol 99 refused");
    assert_eq!(
        err,
        "the bridge child sh (protocol 99) answered the handshake with protocol 99, which this kit does not speak \
         (it offered protocol 1 only)"
    );
}

/// Issue 40 row 13: a saver whose reads carry a 100 MB value. The case either times out
/// (3 s) naming the call and the answer's size, or, on a machine fast enough to read and
/// decode the answer in time, fails on the value naming the call and its size; never "a
/// blocking call in an async method": the answer is read and decoded off the case's thread.
/// Bound: 60 s.
pub fn a_huge_answer_names_its_size_and_call() {
    let (_, all, _) = judge(
        "BigAnswers",
        Duration::from_secs(3),
        Duration::from_secs(60),
        Capability::GetTuple,
        &["checkpoint_fields_roundtrip_exactly"],
    );
    assert_eq!(all.len(), 1, "{all:#?}");
    let m = &all[0];
    if m.contains("timed out") {
        assert!(m.contains("timed out after 3.0 s while in get_tuple("), "{m}");
        assert!(m.contains(" MB") && m.contains("through the bridge: "), "{m}");
    } else {
        // Read in time (an idle machine: seen in CI): the difference names the call and size.
        assert!(m.contains("get_tuple(") && m.contains("<100000000 bytes"), "{m}");
    }
    assert!(!m.contains("did not yield"), "{m}");
}

/// A put that never answers while the event loop stays free: the case times out naming
/// put, the child answers its pings and is kept (one child). Bound: 60 s.
pub fn a_call_that_never_answers_times_out_naming_it() {
    let (_, all, children) = judge(
        "NeverAnswersPut",
        Duration::from_secs(2),
        Duration::from_secs(60),
        Capability::Put,
        &["returns_config_of_stored_checkpoint"],
    );
    assert_eq!(all.len(), 1, "{all:#?}");
    assert!(all[0].starts_with("timed out after 2.0 s while in put("), "{all:#?}");
    assert_eq!(children, 1, "a child whose event loop is free is not stopped");
}

/// A read answered after 8 s, longer than the ping deadline after the ping: not stuck (the
/// child answers its pings), so the case passes with one child. Bound: 90 s.
pub fn a_late_answer_is_not_taken_for_a_stuck_child() {
    let (report, _, children) = judge(
        "AnswersLate",
        Duration::from_secs(60),
        Duration::from_secs(90),
        Capability::GetTuple,
        &["unknown_thread_returns_none"],
    );
    let t = &report.tests[0];
    assert_eq!(t.outcome, Outcome::Passed, "{:?}", t.message);
    assert_eq!(children, 1);
}

/// The child exits in the middle of put: the case fails at once naming the exit status
/// and the child's last words. Bound: 30 s.
pub fn a_child_exiting_mid_call_is_named() {
    let (_, all, _) = judge(
        "ExitsInPut",
        Duration::from_secs(20),
        Duration::from_secs(30),
        Capability::Put,
        &["returns_config_of_stored_checkpoint"],
    );
    assert_eq!(all.len(), 1, "{all:#?}");
    assert!(all[0].contains("exit status: 7") && all[0].contains("chaos: exiting in aput"), "{all:#?}");
}

/// A saver printing to stdout (even a line shaped like an answer) does not break the
/// protocol: the cases pass. Bound: 30 s.
pub fn a_saver_printing_to_stdout_is_harmless() {
    let (report, _, _) = judge(
        "PrintsToStdout",
        Duration::from_secs(20),
        Duration::from_secs(30),
        Capability::GetTuple,
        &["unknown_thread_returns_none", "checkpoint_fields_roundtrip_exactly"],
    );
    for t in &report.tests {
        assert_eq!(t.outcome, Outcome::Passed, "{}: {:?}", t.id, t.message);
    }
}

/// `--python` naming an interpreter that hangs: refused within its 20 s check, naming it.
/// Bound: 30 s.
pub fn an_interpreter_that_hangs_is_refused() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let fake = dir.path().join("python");
    std::fs::write(&fake, "#!/bin/sh\nexec sleep 600\n").expect("script");
    let mut perms = std::fs::metadata(&fake).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&fake, perms).unwrap();
    let err = within(Duration::from_secs(30), "a hanging interpreter", move || checkpoint_bridge::user_python(&fake))
        .expect_err("a hanging interpreter");
    assert!(err.contains("did not answer within 20 s"), "{err}");
}
