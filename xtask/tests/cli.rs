//! `cargo xtask` as a user meets it: the built binary, its exit codes and its messages.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The temporary directory (`TMPDIR`) of the runs these tests start: their own, under the
/// target directory. In the system's, the lock files of runs that other tests kill on
/// purpose (xtask/tests/interrupt.rs) are found by the next run, which says so on stderr
/// ("note: removed 1 lock file … left by earlier runs"): a second line that these tests,
/// which require a usage error to be one line, would take for the run's own.
fn own_tmp() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-tests");
        std::fs::create_dir_all(&dir).expect("the tests' temporary directory");
        dir
    })
}

fn xtask(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .env("TMPDIR", own_tmp())
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_STEP_SUMMARY")
        .output()
        .expect("the xtask binary runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Exit code 2, nothing on stdout, and exactly one line on stderr containing `needle`.
#[track_caller]
fn assert_usage_error(args: &[&str], needle: &str) {
    let out = xtask(args);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(2), "{args:?}: stderr: {stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: one line expected, got: {stderr}");
    assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
    assert!(stderr.contains(needle), "{args:?}: expected {needle:?} in: {stderr}");
    assert!(!stderr.contains("panicked") && !stderr.contains("backtrace"), "{stderr}");
    assert!(stdout.is_empty(), "{args:?}: nothing may run on a usage error, stdout: {stdout}");
}

#[test]
fn no_arguments_lists_the_tasks() {
    for args in [&[][..], &["--help"][..]] {
        let out = xtask(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        let stdout = text(&out.stdout);
        assert!(stdout.contains("conformance"), "{stdout}");
    }
}

#[test]
fn unknown_backend() {
    assert_usage_error(&["conformance", "--backend", "oracle"], "valid backends are: memory, sqlite, postgres");
}

#[test]
fn postgres_url_needs_the_postgres_backend() {
    assert_usage_error(
        &["conformance", "--backend", "memory", "--postgres-url", "postgresql://127.0.0.1:1/x"],
        "--postgres-url applies only to --backend postgres",
    );
}

#[test]
fn unknown_capability_in_capabilities_lists_valid_names() {
    assert_usage_error(
        &["conformance", "--backend", "memory", "--capabilities", "put,puts"],
        "valid capabilities are: put, put_writes, get_tuple, list, delete_thread, delete_for_runs",
    );
}

#[test]
fn unknown_capability_in_skip_lists_valid_names() {
    assert_usage_error(&["conformance", "--skip", "prunes=no server"], "unknown capability `prunes`");
    assert_usage_error(&["conformance", "--skip", "prune"], "CAPABILITY=REASON");
}

#[test]
fn bad_progress_timeout_jobs_and_flags() {
    assert_usage_error(&["conformance", "--progress", "loud"], "dots, verbose, quiet");
    assert_usage_error(&["conformance", "--timeout", "0"], "from 0.01 to 86400");
    assert_usage_error(&["conformance", "--jobs", "0"], "from 1 to 1024");
    // Attack finding on issue 13: a count no machine has was accepted.
    assert_usage_error(&["conformance", "--jobs", "4294967296"], "from 1 to 1024, got `4294967296`");
    assert_usage_error(&["mutants", "--jobs", "1025"], "1025");
    // Issue 13: a negative number is a bad value (one line naming the range), not clap's
    // "unexpected argument '-1' found".
    assert_usage_error(&["conformance", "--timeout", "-1"], "from 0.01 to 86400, got `-1`");
    assert_usage_error(&["conformance", "--jobs", "-2"], "from 1 to 1024, got `-2`");
    assert_usage_error(&["conformance", "--repeat", "-1"], "--repeat");
    assert_usage_error(&["conformance", "--frobnicate"], "--frobnicate");
    assert_usage_error(&["mutate"], "valid tasks are: conformance");
}

#[test]
fn report_paths_are_checked_before_running() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-dir").join("r.json");
    assert_usage_error(&["conformance", "--backend", "memory", "--json", missing.to_str().unwrap()], "does not exist");
    let as_dir = dir.path().to_str().unwrap();
    assert_usage_error(&["conformance", "--backend", "memory", "--junit", as_dir], "is a directory");
    // Issue 13: a dangling symbolic link is named with where it points and why that fails
    // (it was "File exists (os error 17)").
    let link = dir.path().join("dangling.json");
    std::os::unix::fs::symlink(dir.path().join("gone").join("r.json"), &link).unwrap();
    let link_s = link.to_str().unwrap();
    assert_usage_error(
        &["conformance", "--backend", "memory", "--json", link_s],
        &format!(
            "--json: cannot write {link_s}: it is a symbolic link to {}",
            dir.path().join("gone/r.json").display()
        ),
    );
    assert_usage_error(&["conformance", "--backend", "memory", "--junit", link_s], "directory");
    let out = xtask(&["conformance", "--backend", "memory", "--junit", link_s]);
    assert!(!text(&out.stderr).contains("os error 17"), "{}", text(&out.stderr));
    // A link in a loop: named as such.
    let a = dir.path().join("loop-a.json");
    std::os::unix::fs::symlink("loop-b.json", &a).unwrap();
    std::os::unix::fs::symlink("loop-a.json", dir.path().join("loop-b.json")).unwrap();
    assert_usage_error(&["conformance", "--backend", "memory", "--json", a.to_str().unwrap()], "symbolic links");
}

#[test]
fn sqlite_path_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope").join("db.sqlite");
    assert_usage_error(&["conformance", "--sqlite-path", missing.to_str().unwrap()], "does not exist");
    let not_db = dir.path().join("notes.txt");
    std::fs::write(&not_db, "hello, this is not a database").unwrap();
    assert_usage_error(&["conformance", "--sqlite-path", not_db.to_str().unwrap()], "is not an SQLite database");
    assert_usage_error(
        &["conformance", "--backend", "memory", "--sqlite-path", not_db.to_str().unwrap()],
        "only to --backend sqlite",
    );
}

/// The reports are written whatever the outcome, and the exit code follows the report.
#[test]
fn memory_run_writes_json_and_junit_and_exit_code_follows_the_level() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let junit = dir.path().join("r.xml");
    let summary = dir.path().join("summary.md");
    std::fs::write(&summary, "# earlier step\n").unwrap();
    // `put` skipped: a base capability did not pass, so this run fails (1) and must still
    // write both reports.
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .env("TMPDIR", own_tmp())
        .args(["conformance", "--backend", "memory", "--skip", "put=not today", "--progress", "quiet"])
        .args(["--json", json.to_str().unwrap(), "--junit", junit.to_str().unwrap()])
        .env("NO_COLOR", "1")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "stderr: {}", text(&out.stderr));
    assert!(text(&out.stdout).contains("Checkpointer Validation: memory"), "the terminal report is printed");
    let report = read_json(&json);
    assert_eq!(report["checkpointer_name"], "memory");
    assert_eq!(report["results"]["put"]["status"], "skipped");
    assert_eq!(report["results"]["put"]["skip_reason"], "not today");
    assert_ne!(report["conformance_level"], "FULL");
    assert_junit_matches(&junit, &report);
    let md = std::fs::read_to_string(&summary).unwrap();
    assert!(md.starts_with("# earlier step\n"), "the summary is appended, not overwritten");
    assert!(md.contains("## Checkpointer conformance: memory"), "{md}");
}

/// A capability selection succeeds when no selected capability failed, although the level
/// (which needs every base capability) stays below FULL.
#[test]
fn a_selection_that_passes_exits_zero_and_reports_the_honest_level() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .env("TMPDIR", own_tmp())
        .args(["conformance", "--backend", "memory", "--capabilities", "put,prune", "--progress", "quiet"])
        .args(["--json", json.to_str().unwrap()])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
    let report = read_json(&json);
    assert_eq!(report["results"]["list"]["status"], "not_selected");
    assert_eq!(report["conformance_level"], "BASE");
}

/// A selection none of whose capabilities passed (here: all skipped) exits 1, as README.md
/// and docs/report-schema.md say ("no selected capability failed and at least one passed").
#[test]
fn a_selection_where_nothing_passed_exits_one() {
    let out = xtask(&[
        "conformance",
        "--backend",
        "memory",
        "--capabilities",
        "prune",
        "--skip",
        "prune=x",
        "--progress",
        "quiet",
    ]);
    assert_eq!(out.status.code(), Some(1), "stdout: {}", text(&out.stdout));
    for doc in ["README.md", "docs/report-schema.md"] {
        let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(doc)).unwrap();
        let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains("at least one passed") || flat.contains("at least one has `passed: true`"), "{doc}");
    }
}

/// The whole catalog on the memory saver: exit 0 exactly when the report is a success.
#[test]
fn memory_full_run_exit_code_is_the_report_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let out = xtask(&["conformance", "--backend", "memory", "--progress", "quiet", "--json", json.to_str().unwrap()]);
    let report = read_json(&json);
    let success = report["conformance_level"] == "FULL" && report["setup_error"].is_null();
    assert_eq!(out.status.code(), Some(if success { 0 } else { 1 }), "{}", text(&out.stdout));
}

fn read_json(p: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).expect("the JSON report was written")).expect("valid JSON")
}

fn assert_junit_matches(p: &Path, report: &serde_json::Value) {
    let xml = std::fs::read_to_string(p).expect("the JUnit report was written");
    let doc = roxmltree::Document::parse(&xml).expect("the JUnit report is XML");
    let cases = doc.descendants().filter(|n| n.has_tag_name("testcase")).count();
    assert_eq!(cases, report["tests"].as_array().unwrap().len(), "one testcase per spec case");
}

#[test]
fn mutants_prints_the_table_and_the_kill_rate() {
    let out = xtask(&["mutants", "--only", "list_filter_ignored"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "stdout: {stdout}\nstderr: {}", text(&out.stderr));
    assert!(stdout.contains("| list_filter_ignored | MUST | list |"), "{stdout}");
    assert!(stdout.contains("list::filter_single_key"), "{stdout}");
    assert!(stdout.contains("mutants killed: 100.0%"), "{stdout}");
}

/// `--fail-fast` stops at the first failed case (here a timeout, from a 10 ms limit): one
/// case failed, every case after it is skipped with the reason, and the timeout got one
/// hint line naming `--timeout` and `Registration::timeout`. On SQLite, whose concurrency
/// cases take 5 to 40 ms each (a fresh database file per case): on the memory saver every
/// one could finish within 10 ms on an idle machine, and nothing timed out.
#[test]
fn fail_fast_stops_at_the_first_failure_and_a_timeout_names_both_limits() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let out = xtask(&[
        "conformance",
        "--backend",
        "sqlite",
        "--capabilities",
        "concurrency",
        "--timeout",
        "0.01",
        "--jobs",
        "1",
        "--fail-fast",
        "--progress",
        "quiet",
        "--json",
        json.to_str().unwrap(),
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    let report = read_json(&json);
    let tests: Vec<&serde_json::Value> =
        report["tests"].as_array().unwrap().iter().filter(|t| t["capability"] == "concurrency").collect();
    let failed: Vec<&&serde_json::Value> = tests.iter().filter(|t| t["outcome"] == "failed").collect();
    assert_eq!(failed.len(), 1, "one failure, then the run stopped: {tests:?}");
    let first = failed[0]["id"].as_str().unwrap();
    let after = tests.iter().skip_while(|t| t["id"] != first).skip(1);
    for t in after {
        assert_eq!(t["outcome"], "skipped", "{t}");
        assert!(t["message"].as_str().unwrap().contains(&format!("--fail-fast stopped the run after {first}")), "{t}");
    }
    let hints: Vec<&str> = stderr.lines().filter(|l| l.contains("--timeout")).collect();
    assert!(failed[0]["message"].as_str().unwrap().contains("timed out"), "{}", failed[0]);
    assert_eq!(hints.len(), 1, "stderr: {stderr}");
    assert!(hints[0].contains("Registration::timeout"), "{}", hints[0]);
    // Issue 13: a sub-second limit is shown in milliseconds, not as "0.0 s".
    assert!(hints[0].contains("timed out after 10 ms"), "{}", hints[0]);
    assert!(failed[0]["message"].as_str().unwrap().contains("10 ms"), "{}", failed[0]);
}

/// `cargo xtask conformance --help` lists exactly the options of the one `Args` struct it
/// shares with the installed `checkpoint-conformance` binary (cli/tests/binary.rs checks the
/// binary against the same text), under the same one-line description.
#[test]
fn conformance_help_is_the_installed_binarys() {
    use clap::Args as _;
    let out = xtask(&["conformance", "--help"]);
    assert_eq!(out.status.code(), Some(0));
    let help = text(&out.stdout);
    let declared = checkpoint_conformance::Args::augment_args(clap::Command::new("x")).render_help().to_string();
    let options = |h: &str| h.find("Options:").map(|i| h[i..].to_owned()).unwrap_or_default();
    assert!(help.starts_with(checkpoint_conformance::ABOUT), "{help}");
    assert!(options(&help).contains("--backend <BACKEND>"), "{help}");
    assert_eq!(options(&help), options(&declared));
}

#[test]
fn mutants_list_prints_the_catalog_and_runs_nothing() {
    let out = xtask(&["mutants", "--list"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert_eq!(stdout.lines().count(), conformance_selftest::MUTANTS.len(), "{stdout}");
    assert!(stdout.lines().any(|l| l.starts_with("torn_read ")), "{stdout}");
    let only = text(&xtask(&["mutants", "--list", "--only", "torn_read"]).stdout);
    assert_eq!(only.lines().count(), 1, "{only}");
    assert_usage_error(&["mutants", "--list", "--fuzz"], "cannot be used with");
}

#[test]
fn a_fuzz_run_that_would_run_nothing_is_refused() {
    assert_usage_error(&["fuzz", "--cases", "0"], "--cases");
    assert_usage_error(&["fuzz", "--time", "0"], "--time");
    assert_usage_error(&["fuzz", "--out", "/nonexistent-dir/x.json"], "--out");
    assert_usage_error(&["fuzz", "--seeds", "5..3"], "--seeds");
    assert_usage_error(&["fuzz", "--seeds", "3..3"], "--seeds");
    assert_usage_error(&["fuzz", "--seeds", "x"], "--seeds");
    assert_usage_error(&["fuzz", "--seed", "1", "--seeds", "0..2"], "cannot be used with");
}

#[test]
fn mutants_only_matching_nothing_is_refused() {
    assert_usage_error(&["mutants", "--only", "no-such-mutant-name"], "no-such-mutant-name");
    assert_usage_error(&["mutants", "--fuzz", "--only", "no-such-mutant-name"], "no mutant");
}

/// A closed stdout (`| head -1`) costs neither the verdict's exit code nor the reports: the
/// run used to panic at its first print after the reader went (exit 101, no report).
#[test]
fn a_closed_stdout_keeps_the_reports_and_the_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let mut run = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .env("TMPDIR", own_tmp())
        .args(["conformance", "--backend", "memory", "--json"])
        .arg(&json)
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_STEP_SUMMARY")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(run.stdout.take());
    let out = run.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(!text(&out.stderr).contains("panicked"), "{}", text(&out.stderr));
    assert!(std::fs::read_to_string(&json).unwrap().contains("\"checkpointer_name\""));
}

/// A fuzz run that finds a divergence and writes its repro leaves no lock file behind (the
/// repro's write claimed one after the run had given its own up, and the next run named it
/// as a run that did not finish).
#[test]
fn a_fuzz_run_with_a_divergence_leaves_no_lock_file() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("repro.json");
    let run = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["fuzz", "--mutant", "list_oldest_first", "--seed", "3", "--cases", "50", "--out"])
        .arg(&out)
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1), "{}", String::from_utf8_lossy(&run.stderr));
    assert!(out.is_file(), "no repro written");
    let locks = tmp.path().join("checkpoint-conformance");
    let left: Vec<_> =
        std::fs::read_dir(&locks).map(|d| d.flatten().map(|e| e.file_name()).collect()).unwrap_or_default();
    assert!(left.is_empty(), "left in {}: {left:?}", locks.display());
}
