//! The bridge, end to end.
//!
//! `harness = false`: this binary is also its own bridge child (the Rust server, when
//! `CHECKPOINT_BRIDGE_SERVE` is set), its own durability crash child, and a host that a
//! test kills; `main` dispatches before it runs the trials.
//!
//! The Python trials (`python_*`) use the managed environment under
//! `target/checkpoint-bridge` (made on first use: pip reaches PyPI) and write their reports
//! to `target/checkpoint-bridge/reports/`. They run unless `CHECKPOINT_BRIDGE_PYTHON_TESTS=0`.
//! The chaos trials (`chaos_*`, chaos.rs) run unless `CHECKPOINT_BRIDGE_CHAOS=0` (.ci/run runs
//! them in a step of their own, bounded in time).
//! The JavaScript trials (`js_*`) likewise install the JS child's pinned packages under
//! `target/checkpoint-bridge/js` (npm ci on first use) unless `CHECKPOINT_BRIDGE_JS_TESTS=0`.

mod chaos;
mod handshake;
mod js_savers;
mod own_savers;
mod transport;
mod values;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use checkpoint_bridge::server::{rust_registration, serve_if_requested};
use checkpoint_bridge::{js_registration, python_registration, BridgeRegistration, JsOptions, PythonOptions};
use conformance_core::{Level, Outcome, Registration, Report, RunOptions};

/// Makes this process a host that starts a bridge child, prints its pid and waits to be
/// killed (the test `a_killed_host_leaves_no_child`).
const HOST_ENV: &str = "CHECKPOINT_BRIDGE_TEST_HOST";

fn base_dir() -> PathBuf {
    // target/tmp -> target/checkpoint-bridge, shared with the xtask front end.
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).parent().map(|t| t.join("checkpoint-bridge")).unwrap_or_default()
}

/// The registrations this binary serves as a Rust bridge child.
fn served() -> Vec<Registration> {
    vec![checkpoint_memory::registration(), checkpoint_sqlite::registration(), handshake::lacking_memory()]
}

fn bridged(name: &str) -> BridgeRegistration {
    rust_registration(name, base_dir().join("runs")).expect("this binary's path")
}

fn python(saver: &str) -> BridgeRegistration {
    let options = PythonOptions { base_dir: base_dir(), ..PythonOptions::default() };
    match python_registration(&format!("python:{saver}"), None, &options) {
        Ok(r) => r,
        Err(e) => panic!("python:{saver}: {e}"),
    }
}

fn js(backend: &str, saver: Option<&str>) -> BridgeRegistration {
    let options = JsOptions { base_dir: base_dir(), ..JsOptions::default() };
    match js_registration(backend, saver, &options) {
        Ok(r) => r,
        Err(e) => panic!("{backend} {saver:?}: {e}"),
    }
}

/// The JS saver that keeps exactly what it is given (tests/bridge/exact_saver.mjs).
fn js_exact() -> BridgeRegistration {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/bridge/exact_saver.mjs");
    js("js", Some(path))
}

fn js_tests() -> bool {
    std::env::var("CHECKPOINT_BRIDGE_JS_TESTS").map_or(true, |v| v != "0")
}

fn python_tests() -> bool {
    std::env::var("CHECKPOINT_BRIDGE_PYTHON_TESTS").map_or(true, |v| v != "0")
}

/// The Python saver of `locked_saver.py`, which allows one process per storage.
const LOCKED_SAVER: &str = "locked_saver:LockedSqlite";

/// `python --saver locked_saver:LockedSqlite` in the managed environment, which finds
/// the module on PYTHONPATH (set by `main`).
fn python_locked() -> BridgeRegistration {
    let options = PythonOptions { base_dir: base_dir(), ..PythonOptions::default() };
    python_registration("python", Some(LOCKED_SAVER), &options).unwrap_or_else(|e| panic!("{LOCKED_SAVER}: {e}"))
}

fn main() -> ExitCode {
    // Before any thread starts: the Python children (and the crash children's) import
    // tests/bridge/locked_saver.py from here.
    let here = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/bridge");
    let path = std::env::var("PYTHONPATH").ok().filter(|p| !p.is_empty() && !p.split(':').any(|d| d == here));
    std::env::set_var("PYTHONPATH", path.map_or_else(|| here.to_owned(), |p| format!("{here}:{p}")));
    if let Some(code) = serve_if_requested(&served()) {
        return code;
    }
    if std::env::var_os(HOST_ENV).is_some() {
        return host_main();
    }
    // Crash children: of the direct savers, and of the bridged ones, which open their
    // storage through a bridge child of their own.
    let mut crashable = served();
    crashable.push(bridged("sqlite").registration().clone());
    if let Ok(request) = std::env::var(conformance_spec::crash::CRASH_CHILD_ENV) {
        for saver in checkpoint_bridge::SHORT_NAMES {
            if request.contains(&format!("\"python:{saver}\"")) {
                crashable.push(python(saver).registration().clone());
            }
        }
        if request.contains(&format!("\"python:{LOCKED_SAVER}\"")) {
            crashable.push(python_locked().registration().clone());
        }
    }
    if let Some(code) = conformance_spec::child_main_if_requested_among(&crashable) {
        return code;
    }
    let args = libtest_mimic::Arguments::from_args();
    let mut trials = vec![
        trial("rust_memory_through_the_bridge_gives_the_same_outcomes", || same_outcomes("memory")),
        trial("rust_sqlite_through_the_bridge_gives_the_same_outcomes", || same_outcomes("sqlite")),
        trial("values_cross_the_bridge_exactly_rust", || {
            values::roundtrip(&bridged("memory"), values::Fidelity::Exact)
        }),
        trial("a_killed_host_leaves_no_child", a_killed_host_leaves_no_child),
        trial("a_dead_child_gives_typed_errors_and_is_replaced", a_dead_child_gives_typed_errors_and_is_replaced),
        trial("a_stuck_child_is_replaced_after_a_case_times_out", a_stuck_child_is_replaced_after_a_case_times_out),
        trial("garbage_from_the_child_gives_typed_errors", garbage_from_the_child_gives_typed_errors),
        trial("a_childs_declared_limits_reach_the_fixture", handshake::a_childs_declared_limits_reach_the_fixture),
        trial(
            "a_rust_fixtures_declared_limits_cross_the_bridge",
            handshake::a_rust_fixtures_declared_limits_cross_the_bridge,
        ),
    ];
    trials.push(
        trial(
            "chaos_a_handshake_with_an_unknown_protocol_is_refused",
            chaos::a_handshake_with_an_unknown_protocol_is_refused,
        )
        .with_ignored_flag(!chaos::wanted()),
    );
    if python_tests() {
        own_savers::on_python_path();
        trials.extend([
            trial(
                "a_saver_without_task_path_in_put_writes_has_its_writes_judged",
                own_savers::a_saver_without_task_path_in_put_writes_has_its_writes_judged,
            ),
            trial(
                "an_integer_only_saver_declares_string_versions_lacking",
                own_savers::an_integer_only_saver_declares_string_versions_lacking,
            ),
            trial(
                "the_report_names_the_savers_distribution_and_version",
                own_savers::the_report_names_the_savers_distribution_and_version,
            ),
            trial("values_cross_the_bridge_exactly_python_memory", || {
                values::roundtrip(&python("memory"), values::Fidelity::LangGraph)
            }),
            trial("python_memory_catalog_completes", || python_catalog("memory")),
            trial(
                "a_python_child_whose_host_stops_reading_still_ends",
                transport::a_python_child_whose_host_stops_reading_still_ends,
            ),
            trial("a_users_environment_serves_module_factory", a_users_environment_serves_module_factory),
            trial("python_sqlite_catalog_completes", || python_catalog("sqlite")),
            trial("python_one_process_storage_passes_the_crash_test", python_one_process_storage_passes_the_crash_test),
        ]);
        trials
            .extend(chaos::PYTHON.iter().map(|(name, check)| trial(name, *check).with_ignored_flag(!chaos::wanted())));
        // LangGraph's PostgresSaver on the shared server, when there is one.
        if std::env::var_os(checkpoint_bridge::POSTGRES_URL_ENV).is_some() {
            trials.push(trial("python_postgres_catalog_completes", || {
                python_catalog("postgres");
                // In the same trial: no other trial of this binary uses the server.
                a_stuck_childs_schema_is_dropped_at_teardown();
            }));
        }
        // More of LangGraph's savers on request: CHECKPOINT_BRIDGE_PYTHON_SAVERS=sqlite-async,...
        for saver in std::env::var("CHECKPOINT_BRIDGE_PYTHON_SAVERS").unwrap_or_default().split(',') {
            let saver = saver.trim().to_owned();
            if !saver.is_empty() {
                let name = format!("python_{}_catalog_completes", saver.replace('-', "_"));
                trials.push(libtest_mimic::Trial::test(name, move || {
                    std::panic::catch_unwind(|| python_catalog(&saver))
                        .map_err(|p| libtest_mimic::Failed::from(conformance_core::run::panic_message(&*p)))
                }));
            }
        }
    }
    if js_tests() {
        trials.extend([
            trial("values_cross_the_bridge_exactly_js", || {
                values::roundtrip(&js_exact(), values::Fidelity::JavaScript)
            }),
            trial("the_js_child_declares_its_savers_limits", handshake::the_js_child_declares_its_savers_limits),
            trial("the_js_childs_declarations_shape_the_cases", handshake::the_js_childs_declarations_shape_the_cases),
            trial(
                "the_js_child_keeps_a_missing_config_field_missing",
                handshake::the_js_child_keeps_a_missing_config_field_missing,
            ),
            trial(
                "js_memory_reads_the_kits_checkpoints_back_as_put",
                js_savers::js_memory_reads_the_kits_checkpoints_back_as_put,
            ),
            trial(
                "a_js_saver_refusing_a_config_through_its_schema_passes",
                js_savers::a_js_saver_refusing_a_config_through_its_schema_passes,
            ),
            trial(
                "a_js_saver_mishandling_a_missing_config_field_is_caught",
                js_savers::a_js_saver_mishandling_a_missing_config_field_is_caught,
            ),
            trial("a_replacement_child_is_set_up_again", js_savers::a_replacement_child_is_set_up_again),
            trial(
                "the_report_names_the_js_savers_package_and_version",
                js_savers::the_report_names_the_js_savers_package_and_version,
            ),
        ]);
        // The whole catalog on LangGraph JS's MemorySaver. About a minute on a quiet machine,
        // but its 16 MiB values keep node busy in MemorySaver's own serializer
        // (docs/langgraph-savers.md, J-B2): a loaded 2-core CI run of 2026-12-02 sat in it for
        // over 20 minutes. So it runs on request only (CHECKPOINT_BRIDGE_JS_CATALOG=1).
        let wanted = std::env::var_os("CHECKPOINT_BRIDGE_JS_CATALOG").is_some_and(|v| v == "1");
        trials.push(
            trial("js_memory_catalog_completes", || {
                catalog(&js("js:memory", None), "js-memory");
            })
            .with_ignored_flag(!wanted),
        );
    }
    libtest_mimic::run(&args, trials).exit_code()
}

fn trial(name: &'static str, check: fn()) -> libtest_mimic::Trial {
    libtest_mimic::Trial::test(name, move || {
        std::panic::catch_unwind(check)
            .map_err(|p| libtest_mimic::Failed::from(conformance_core::run::panic_message(&*p)))
    })
}

fn run(reg: &BridgeRegistration) -> Report {
    let mut report = conformance_spec::validate(reg.registration(), &RunOptions::default());
    reg.annotate(&mut report);
    report
}

/// The per-case limit of the same-outcomes comparison.
const SAME_OUTCOMES_TIMEOUT: Duration = Duration::from_secs(180);

/// A Rust saver through the bridge gets the same level as directly, and every case the
/// same outcome.
///
/// Both runs get a per-case limit of [`SAME_OUTCOMES_TIMEOUT`]: this compares outcomes, not
/// speed (that is the bench's), and a 16 MiB value through a debug build on a loaded
/// machine can take longer than the default 30 s.
fn same_outcomes(name: &str) {
    let direct_reg = served().into_iter().find(|r| r.name() == name).expect("served registration");
    let direct = conformance_spec::validate(&direct_reg.timeout(SAME_OUTCOMES_TIMEOUT), &RunOptions::default());
    let bridged_reg = bridged(name);
    let mut through = conformance_spec::validate(
        &bridged_reg.registration().clone().timeout(SAME_OUTCOMES_TIMEOUT),
        &RunOptions::default(),
    );
    bridged_reg.annotate(&mut through);
    assert_eq!(direct.tests.len(), through.tests.len());
    let mut differences = Vec::new();
    for (d, b) in direct.tests.iter().zip(&through.tests) {
        assert_eq!(d.id, b.id);
        if d.outcome != b.outcome {
            differences.push(format!(
                "{}: directly {:?}, through the bridge {:?}: {:?}",
                d.id, d.outcome, b.outcome, b.message
            ));
        }
    }
    assert!(differences.is_empty(), "{} case(s) differ:\n{}", differences.len(), differences.join("\n"));
    assert_eq!(direct.conformance_level, through.conformance_level);
    assert!(through.tests.iter().any(|t| t.outcome == Outcome::Passed));
    assert_eq!(through.facts.get("bridge.side"), Some(&serde_json::json!("async")), "{:?}", through.facts);
    assert_eq!(through.facts.get("bridge.children"), Some(&serde_json::json!(1)), "{:?}", through.warnings);
}

/// The catalog against one of LangGraph's savers completes and writes a report with a
/// level; the level itself is a finding about the saver (docs/langgraph-savers.md).
fn python_catalog(saver: &str) {
    let report = catalog(&python(saver), &format!("python-{saver}"));
    assert_ne!(report.conformance_level, Level::None, "python:{saver}: level NONE");
}

/// Runs the catalog through `reg`, writes the report to
/// `target/checkpoint-bridge/reports/<file>.json` and checks the run is a verdict on the
/// saver, not on the bridge: no setup error, every case of a detected capability ran,
/// more passed than failed, the side is reported and no child died.
fn catalog(reg: &BridgeRegistration, file: &str) -> Report {
    let report = run(reg);
    let dir = base_dir().join("reports");
    std::fs::create_dir_all(&dir).expect("reports directory");
    let path = dir.join(format!("{file}.json"));
    std::fs::write(&path, report.to_json()).expect("report written");
    assert!(report.setup_error.is_none(), "setup failed: {:?}", report.setup_error);
    // Every case of a detected capability ran (passed, failed, or passed not strict), or
    // was not run for a limit the child declared; the others are not implemented, none is
    // skipped.
    for t in &report.tests {
        let detected = report.results.get(&t.capability).is_some_and(|r| r.detected);
        let declared = |m: &str| m.starts_with(conformance_core::LACKS_PREFIX);
        let ran = matches!(t.outcome, Outcome::Passed | Outcome::Failed | Outcome::NotStrict)
            || (t.outcome == Outcome::NotRun && t.message.as_deref().is_some_and(declared));
        assert!(ran == detected && t.outcome != Outcome::Skipped, "{}: {:?} ({:?})", t.id, t.outcome, t.message);
    }
    let (passed, failed, _) = report.case_counts();
    assert!(passed > failed, "{passed} passed, {failed} failed: the bridge is broken, not the saver");
    assert!(report.facts.contains_key("bridge.side"), "{:?}", report.facts);
    let child_died = report.tests.iter().filter_map(|t| t.message.as_deref()).find(|m| m.contains("the bridge child"));
    assert!(child_died.is_none(), "the bridge child died or broke the protocol: {child_died:?} ({})", path.display());
    report
}

/// The host side of `a_killed_host_leaves_no_child`: starts the bridge child, prints its
/// pid, and waits to be killed.
fn host_main() -> ExitCode {
    let reg = match std::env::var(HOST_ENV).as_deref() {
        Ok("python") => python("sqlite"),
        _ => bridged("sqlite"),
    };
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    rt.block_on(async {
        let fixture = reg.registration().fixture().await.expect("a saver");
        let cfg = conformance_core::CheckpointConfig::new("host");
        let _ = fixture.saver().get_tuple(&cfg).await;
        println!("child-pid {}", reg.child_pid().expect("a child"));
        tokio::time::sleep(Duration::from_secs(120)).await;
    });
    ExitCode::FAILURE
}

fn alive(pid: u32) -> bool {
    // Not a zombie waiting for its (dead) parent: the state field of /proc/<pid>/stat.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat.rsplit(')').next().and_then(|s| s.split_whitespace().next()) != Some("Z"),
        Err(_) => false,
    }
}

/// SIGKILL of the process that holds the bridge kills the bridge child too (the crash
/// test's guarantee: a kill of the host is a kill of the saver).
fn a_killed_host_leaves_no_child() {
    use std::io::BufRead;
    let kinds: &[&str] = if python_tests() { &["rust", "python"] } else { &["rust"] };
    for kind in kinds {
        let mut host = std::process::Command::new(std::env::current_exe().unwrap())
            .env(HOST_ENV, kind)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::inherit())
            .spawn()
            .expect("host started");
        let mut line = String::new();
        std::io::BufReader::new(host.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let pid: u32 = line.trim().strip_prefix("child-pid ").and_then(|p| p.parse().ok()).unwrap_or_else(|| {
            let _ = host.kill();
            panic!("{kind} host printed {line:?}")
        });
        assert!(alive(pid), "{kind}: the bridge child {pid} is not running while its host is");
        host.kill().unwrap();
        host.wait().unwrap();
        let start = Instant::now();
        while alive(pid) && start.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(!alive(pid), "{kind}: the bridge child {pid} still runs 5 s after its host was killed");
    }
}

/// A child killed during a run: calls in flight and later calls of that child fail at
/// once with a Storage error naming its end; the next case gets a new child.
fn a_dead_child_gives_typed_errors_and_is_replaced() {
    let reg = bridged("memory");
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let fixture = reg.registration().fixture().await.expect("a saver");
        let saver = fixture.saver().clone();
        let cfg = conformance_core::CheckpointConfig::new("t");
        assert!(saver.get_tuple(&cfg).await.unwrap().is_none());
        let pid = reg.child_pid().expect("a child");
        // SAFETY: kill(2) of the bridge child this test started.
        unsafe {
            libc::kill(pid as libc::pid_t, libc::SIGKILL);
        }
        let start = Instant::now();
        let err = loop {
            match saver.get_tuple(&cfg).await {
                Err(e) => break e,
                Ok(_) if start.elapsed() < Duration::from_secs(5) => {
                    tokio::time::sleep(Duration::from_millis(10)).await
                }
                Ok(_) => panic!("calls still succeed 5 s after the child was killed"),
            }
        };
        assert!(start.elapsed() < Duration::from_secs(5));
        assert_eq!(err.kind(), "Storage", "{err}");
        let msg = err.to_string();
        // "exited", or "stopped reading requests" when a write found the pipe closed first.
        assert!(msg.contains("the bridge child rust:memory") && msg.contains("signal: 9"), "{msg}");
        let again = reg.registration().fixture().await.expect("a new child");
        assert!(again.saver().get_tuple(&cfg).await.unwrap().is_none());
        assert_eq!(reg.facts().children, 2);
    });
}

/// A child that stops answering (SIGSTOP: it reads and answers nothing) while a case's
/// call is in flight: the case times out, and the next case gets a new child instead of
/// queueing behind the stuck one; the stuck child is killed.
fn a_stuck_child_is_replaced_after_a_case_times_out() {
    let reg = bridged("memory");
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let fixture = reg.registration().fixture().await.expect("a saver");
        let cfg = conformance_core::CheckpointConfig::new("t");
        assert!(fixture.saver().get_tuple(&cfg).await.unwrap().is_none());
        let pid = reg.child_pid().expect("a child");
        // SAFETY: kill(2) of the bridge child this test started.
        unsafe {
            libc::kill(pid as libc::pid_t, libc::SIGSTOP);
        }
        let timed_out = tokio::time::timeout(Duration::from_millis(300), fixture.saver().get_tuple(&cfg)).await;
        assert!(timed_out.is_err(), "a stopped child cannot answer");
        let start = Instant::now();
        let again = tokio::time::timeout(Duration::from_secs(30), reg.registration().fixture())
            .await
            .expect("the next case does not wait for the stuck child")
            .expect("a new child");
        assert!(start.elapsed() < Duration::from_secs(20), "took {:?}", start.elapsed());
        assert!(again.saver().get_tuple(&cfg).await.unwrap().is_none());
        assert_eq!(reg.facts().children, 2);
        assert_ne!(reg.child_pid(), Some(pid));
        let gone = Instant::now();
        while alive(pid) && gone.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(!alive(pid), "the stuck child {pid} was killed");
    });
}

/// A Python child killed while stuck in a PostgreSQL case cannot drop that case's schema;
/// the lifespan teardown (run by the replacement child) drops every schema of the run.
fn a_stuck_childs_schema_is_dropped_at_teardown() {
    let reg = python("postgres");
    let url = std::env::var(checkpoint_bridge::POSTGRES_URL_ENV).expect("the server URL");
    let prefix = format!("cp_bridge_{}_", checkpoint_bridge::protocol::run_token());
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let schemas = |rt: &tokio::runtime::Runtime| {
        rt.block_on(async {
            let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await.expect("connect");
            tokio::spawn(conn);
            let rows = client
                .query(
                    "SELECT nspname FROM pg_namespace WHERE left(nspname, $1) = $2",
                    &[&(prefix.len() as i32), &prefix],
                )
                .await
                .expect("query");
            rows.iter().map(|r| r.get::<_, String>(0)).collect::<Vec<_>>()
        })
    };
    conformance_core::run::lifespan_setup(reg.registration()).expect("setup");
    rt.block_on(async {
        let fixture = reg.registration().fixture().await.expect("a saver");
        let pid = reg.child_pid().expect("a child");
        // SAFETY: kill(2) of the bridge child this test started.
        unsafe {
            libc::kill(pid as libc::pid_t, libc::SIGSTOP);
        }
        let cfg = conformance_core::CheckpointConfig::new("t");
        let timed_out = tokio::time::timeout(Duration::from_millis(300), fixture.saver().get_tuple(&cfg)).await;
        assert!(timed_out.is_err(), "a stopped child cannot answer");
        std::mem::forget(fixture); // its cleanup would wait for the stopped child
        let again = reg.registration().fixture().await.expect("a new child");
        assert_ne!(reg.child_pid(), Some(pid), "the stuck child was replaced");
        drop(again);
    });
    assert!(!schemas(&rt).is_empty(), "the stuck case's schema is there before the teardown");
    conformance_core::run::lifespan_teardown(reg.registration()).expect("teardown");
    let left = schemas(&rt);
    assert!(left.is_empty(), "schemas left after the teardown: {left:?}");
}

/// A child that answers garbage: the handshake fails with a message showing the line,
/// and nothing hangs.
fn garbage_from_the_child_gives_typed_errors() {
    let cases = [
        ("not json", "read l; echo 'this is not json'; sleep 5", "broke the protocol"),
        ("wrong shape", r#"read l; echo '{"id":0,"ok":{"protocol":"x"}}'; sleep 5"#, "does not fit"),
        ("exits", "read l; echo dying >&2; exit 3", "exit status: 3"),
    ];
    for (what, script, expected) in cases {
        let spec = checkpoint_bridge::BridgeSpec {
            name: format!("garbage-{what}"),
            command: checkpoint_bridge::ChildCommand {
                program: "sh".into(),
                args: vec!["-c".into(), script.into()],
                env: vec![],
                label: format!("sh ({what})"),
            },
            saver: "x".into(),
            work_dir: base_dir().join("runs"),
        };
        let reg = BridgeRegistration::new(spec);
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let start = Instant::now();
        let err = rt.block_on(reg.registration().fixture()).err().unwrap_or_else(|| panic!("{what}: a fixture"));
        assert!(start.elapsed() < Duration::from_secs(4), "{what}: took {:?}", start.elapsed());
        assert!(err.to_string().contains(expected), "{what}: {err}");
    }
}

/// `--backend python --saver module:factory` in an environment of the user's (here the
/// managed one, named as a user's: the bridge package goes on PYTHONPATH) serves a saver
/// class named by module path.
fn a_users_environment_serves_module_factory() {
    let managed = checkpoint_bridge::managed_python(&base_dir()).expect("the managed environment");
    let venv = managed.parent().and_then(|bin| bin.parent()).expect("venv directory").to_path_buf();
    let options = PythonOptions { base_dir: base_dir(), python_env: Some(venv), postgres_url: None };
    let reg = python_registration("python", Some("langgraph.checkpoint.memory:InMemorySaver"), &options)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(reg.registration().name(), "python:langgraph.checkpoint.memory:InMemorySaver");
    let selection = [conformance_core::Capability::Put].into_iter().collect();
    let options = RunOptions { capabilities: Some(selection), ..RunOptions::default() };
    let mut report = conformance_spec::validate(reg.registration(), &options);
    reg.annotate(&mut report);
    let (passed, _, _) = report.case_counts();
    assert!(passed > 10, "{}", report.to_json());
    assert_eq!(
        report.facts.get("bridge.class"),
        Some(&serde_json::json!("langgraph.checkpoint.memory.InMemorySaver")),
        "{:?}",
        report.facts
    );
    let bad = python_registration(
        "python",
        Some("no_such_module:factory"),
        &PythonOptions { base_dir: base_dir(), ..PythonOptions::default() },
    )
    .expect("the spec is well formed");
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let err = rt.block_on(reg_fixture(&bad)).expect_err("an unknown module");
    assert!(err.contains("no module no_such_module"), "{err}");
    // Named for the front end, which makes it a usage error (exit 2).
    assert!(bad.bad_saver().is_some_and(|r| r.contains("no module no_such_module")), "{:?}", bad.bad_saver());
}

/// A Python saver that allows one process per storage (`locked_saver.py`, as DuckDB)
/// passes the durability crash test: the host releases the case's instance in the child
/// (`release`) before the crash test's child opens the storage, and waits for each
/// checking instance to be closed before the next child starts.
fn python_one_process_storage_passes_the_crash_test() {
    let reg = python_locked();
    let cases: Vec<_> = conformance_spec::durability::cases()
        .into_iter()
        .filter(|c| c.name == "acknowledged_writes_survive_kill")
        .collect();
    let report = conformance_core::run::run(reg.registration(), &cases, &RunOptions::default());
    let t = report.tests.iter().find(|t| t.name == "acknowledged_writes_survive_kill").expect("the crash case");
    assert_eq!(t.outcome, Outcome::Passed, "{:?}", t.message);
}

async fn reg_fixture(reg: &BridgeRegistration) -> Result<(), String> {
    reg.registration().fixture().await.map(|_| ()).map_err(|e| e.to_string())
}
