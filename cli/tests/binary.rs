//! The installed binary as a user outside the repository meets it: `checkpoint-conformance`
//! run from a temporary directory, never the source tree, with its work directory under a
//! temporary `$XDG_CACHE_HOME`.

use std::path::Path;
use std::process::{Command, Output};

use clap::Args as _;

/// Runs the binary in `cwd` with `$XDG_CACHE_HOME` at `cache`.
fn binary(cwd: &Path, cache: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_checkpoint-conformance"))
        .args(args)
        .current_dir(cwd)
        .env("XDG_CACHE_HOME", cache)
        // Not the system's temporary directory, where runs other tests kill on purpose
        // leave lock files that the next run reports on stderr.
        .env("TMPDIR", cache)
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .expect("the checkpoint-conformance binary runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The options part of a `--help` text (from `Options:` on).
fn options(help: &str) -> &str {
    help.find("Options:").map_or("", |i| &help[i..])
}

/// A temporary directory outside the source tree (the kit's tests may run with TMPDIR
/// anywhere; this checks the assumption the tests rest on).
fn outside_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("cli sits in the workspace root");
    assert!(!dir.path().starts_with(repo), "TMPDIR {} is inside the repository", dir.path().display());
    dir
}

#[test]
fn memory_from_a_directory_outside_the_repository_writes_the_report() {
    let (cwd, cache) = (outside_dir(), outside_dir());
    let out = binary(cwd.path(), cache.path(), &["--backend", "memory", "--json", "r.json", "--progress", "quiet"]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "stdout: {stdout}\nstderr: {stderr}");
    assert!(stdout.contains("Checkpointer Validation: memory") && stdout.contains("Result: FULL"), "{stdout}");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(cwd.path().join("r.json")).expect("r.json written in the cwd"))
            .expect("r.json is JSON");
    assert_eq!(report["checkpointer_name"], "memory", "{report:#}");
    assert_eq!(report["conformance_level"], "FULL", "{report:#}");
    let tests = report["tests"].as_array().expect("tests is an array");
    assert!(tests.len() > 100, "{} cases", tests.len());
    let failed: Vec<_> = tests.iter().filter(|t| t["outcome"] == "failed").collect();
    assert!(failed.is_empty(), "{failed:#?}");
    // Nothing but the report is left in the cwd.
    let left: Vec<_> = std::fs::read_dir(cwd.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, ["r.json"], "{left:?}");
}

/// The durability crash test re-executes the running binary (`current_exe`) with its own
/// arguments: that must work for the binary, not only for `cargo xtask` and test binaries.
#[test]
fn the_durability_crash_test_re_executes_the_binary() {
    let (cwd, cache) = (outside_dir(), outside_dir());
    let args = ["--backend", "sqlite", "--capabilities", "durability", "--json", "r.json", "--progress", "quiet"];
    let out = binary(cwd.path(), cache.path(), &args);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "stdout: {stdout}\nstderr: {stderr}");
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(cwd.path().join("r.json")).unwrap()).unwrap();
    let durability = &report["results"]["durability"];
    assert_eq!(durability["status"], "passed", "{durability:#}");
    assert!(durability["tests_passed"].as_u64().unwrap_or(0) > 0, "{durability:#}");
}

#[test]
fn help_lists_the_options_of_the_one_args_struct() {
    let (cwd, cache) = (outside_dir(), outside_dir());
    let out = binary(cwd.path(), cache.path(), &["--help"]);
    assert_eq!(out.status.code(), Some(0));
    let help = text(&out.stdout);
    assert!(help.starts_with(checkpoint_conformance::ABOUT), "{help}");
    assert!(help.contains("Usage: checkpoint-conformance [OPTIONS]"), "{help}");
    // The one Args struct, rendered in process: `cargo xtask conformance --help` is checked
    // against the same text (xtask/tests/cli.rs), so both front ends list the same flags.
    let declared = checkpoint_conformance::Args::augment_args(clap::Command::new("x")).render_help().to_string();
    assert!(options(&help).contains("--backend <BACKEND>") && options(&help).contains("--fail-fast"), "{help}");
    // The binary adds `-V, --version` (the version of the kit it is).
    let without_version = |h: &str| -> String { h.lines().filter(|l| !l.contains("--version")).collect() };
    assert!(options(&help).contains("-V, --version"), "{help}");
    assert_eq!(without_version(options(&help)), without_version(options(&declared)));
    let out = binary(cwd.path(), cache.path(), &["--version"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out.stdout).trim(), format!("checkpoint-conformance {}", env!("CARGO_PKG_VERSION")));
}

#[test]
fn a_usage_error_is_one_line_naming_the_binary_and_exit_2() {
    let (cwd, cache) = (outside_dir(), outside_dir());
    for (args, needle) in [
        (&["--backend", "oracle"][..], "valid backends are: memory, sqlite, postgres"),
        (&["--frobnicate"][..], "unexpected argument '--frobnicate'"),
        (&["--backend", "memory", "--saver", "m:f"][..], "--saver applies only to --backend python or js"),
    ] {
        let out = binary(cwd.path(), cache.path(), args);
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("error: ") && stderr.contains(needle), "{args:?}: {stderr}");
        assert!(stdout.is_empty(), "{args:?}: {stdout}");
    }
    let out = binary(cwd.path(), cache.path(), &["--frobnicate"]);
    assert!(text(&out.stderr).trim_end().ends_with("(see `checkpoint-conformance --help`)"), "{}", text(&out.stderr));
}

/// `--list-cases` prints the catalog (id and strength, one a line) and `--cases` runs only
/// the ids given (the pytest plugin's collection and `-k`): the report holds those cases
/// alone, and an unknown id is a usage error.
#[test]
fn list_cases_prints_the_catalog_and_cases_runs_only_those_given() {
    let (cwd, cache) = (outside_dir(), outside_dir());
    let out = binary(cwd.path(), cache.path(), &["--list-cases"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let listed = text(&out.stdout);
    let lines: Vec<&str> = listed.lines().collect();
    assert!(lines.len() > 100, "{listed}");
    assert!(lines.iter().all(|l| l.ends_with(" MUST") || l.ends_with(" SHOULD")), "{listed}");
    let ids: Vec<&str> = lines.iter().map(|l| l.split(' ').next().unwrap()).collect();
    let lists: Vec<&str> = ids.iter().copied().filter(|id| id.starts_with("list::")).collect();
    let chosen = [ids[0], lists[lists.len() - 1]];
    let args = ["--backend", "memory", "--cases", &chosen.join(","), "--json", "r.json", "--progress", "quiet"];
    let out = binary(cwd.path(), cache.path(), &args);
    assert_eq!(out.status.code(), Some(0), "{}{}", text(&out.stdout), text(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(cwd.path().join("r.json")).unwrap()).unwrap();
    let ran: Vec<&str> = report["tests"].as_array().unwrap().iter().map(|t| t["id"].as_str().unwrap()).collect();
    assert_eq!(ran, chosen, "{report:#}");
    assert!(report["tests"].as_array().unwrap().iter().all(|t| t["outcome"] == "passed"), "{report:#}");
    let out = binary(cwd.path(), cache.path(), &["--backend", "memory", "--cases", "put::no_such_case"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("unknown case `put::no_such_case`") && stderr.contains("--list-cases"), "{stderr}");
}

/// `checkpoint-conformance replay`: a recorded trace replayed with the installed binary
/// alone (no checkout, no cargo): exit 0 naming the steps; a trace that is not one, exit 2
/// naming the file; a tampered answer, exit 1 naming the step.
#[test]
fn replay_is_a_task_of_the_installed_binary() {
    let (cwd, cache) = (outside_dir(), outside_dir());
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../traces/interrupt.json");
    let trace: serde_json::Value = serde_json::from_slice(&std::fs::read(&shipped).expect("a shipped trace")).unwrap();
    std::fs::write(cwd.path().join("my-app.json"), trace.to_string()).unwrap();
    let out = binary(cwd.path(), cache.path(), &["replay", "my-app.json", "--backend", "sqlite"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("replay sqlite my-app.json: ") && stdout.contains("the saver gave what the trace says"));

    // A JSON report's fuzz section: its shrunk traces replay from the report itself.
    let report = serde_json::json!({"conformance_level": "BASE", "fuzz": {"divergences": [{"trace": trace}]}});
    std::fs::write(cwd.path().join("report.json"), report.to_string()).unwrap();
    let out = binary(cwd.path(), cache.path(), &["replay", "report.json", "--backend", "memory"]);
    assert_eq!(out.status.code(), Some(0), "{}{}", text(&out.stdout), text(&out.stderr));
    assert!(text(&out.stdout).contains("report.json#fuzz[0]: "), "{}", text(&out.stdout));

    let out = binary(cwd.path(), cache.path(), &["replay"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("not provided: <FILE>") && stderr.lines().count() == 1, "names what is missing: {stderr}");

    std::fs::write(cwd.path().join("not-a-trace.json"), "{}").unwrap();
    let out = binary(cwd.path(), cache.path(), &["replay", "not-a-trace.json"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("not-a-trace.json"), "{}", text(&out.stderr));

    let mut tampered = trace.clone();
    let steps = tampered["steps"].as_array_mut().expect("steps");
    let put = steps.iter_mut().find(|s| s["call"] == "put").expect("a put step");
    put["expect"]["config"]["thread_id"] = serde_json::json!("another-thread");
    std::fs::write(cwd.path().join("tampered.json"), tampered.to_string()).unwrap();
    let out = binary(cwd.path(), cache.path(), &["replay", "tampered.json", "--backend", "memory"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("tampered.json") && stdout.contains("step "), "{stdout}");
}
