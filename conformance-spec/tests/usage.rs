//! Issue 13 item 7 under `cargo test`: the `checkpointer_test!` main (`run_with_args`)
//! refuses bad settings before anything runs, with one line and exit 2: an unwritable
//! `$CHECKPOINT_CONFORMANCE_REPORT`, a bad `CHECKPOINT_CONFORMANCE_KILLS` or `_SEED`, and a
//! report path shared by two outputs; and `run_main` (the macro's main) adds a trial per
//! trace file of `$CHECKPOINT_CONFORMANCE_TRACES`, or refuses a bad directory the same
//! way. The binary re-executes itself as such a main.

use std::process::{Command, ExitCode};

use conformance_core::{CheckpointSaver, Fixture, Registration};

struct Nothing;
impl CheckpointSaver for Nothing {}

const CHILD: &str = "USAGE_TEST_CHILD";
/// Set: the child is `run_main`, the whole catalog as `checkpointer_test!` runs it.
const MAIN: &str = "USAGE_TEST_MAIN";

fn main() -> ExitCode {
    if std::env::var_os(CHILD).is_some() {
        let reg = Registration::new("nothing", || async { Ok(Fixture::new(Nothing)) });
        if std::env::var_os(MAIN).is_some() {
            return conformance_spec::harness::run_main(vec![reg]);
        }
        let args: Vec<_> = std::env::args_os().collect();
        return conformance_spec::harness::run_with_args(vec![reg], Vec::new(), args);
    }
    conformance_spec::harness::one_trial("bad_settings_are_usage_errors", check)
}

/// The test itself (its lines say what failed).
fn check() -> ExitCode {
    let dir = std::env::temp_dir().join(format!("usage-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let report = dir.join("r.json");
    let report = report.to_str().unwrap();
    let missing = dir.join("no/such/dir/r.json");
    let missing = missing.to_str().unwrap();
    let cases: &[(&[(&str, &str)], &[&str], &str)] = &[
        (&[("CHECKPOINT_CONFORMANCE_REPORT", missing)], &[], "CHECKPOINT_CONFORMANCE_REPORT: cannot write"),
        (&[("CHECKPOINT_CONFORMANCE_KILLS", "lots")], &[], "CHECKPOINT_CONFORMANCE_KILLS=\"lots\""),
        (&[("CHECKPOINT_CONFORMANCE_SEED", "x1")], &[], "CHECKPOINT_CONFORMANCE_SEED=\"x1\""),
        (&[("CHECKPOINT_CONFORMANCE_REPORT", report)], &["--junit", report], "are the same file"),
        (&[("CHECKPOINT_CONFORMANCE_REPORT", report), ("GITHUB_STEP_SUMMARY", report)], &[], "are the same file"),
    ];
    let mut failed = 0;
    for (envs, args, needle) in cases {
        let mut c = Command::new(std::env::current_exe().unwrap());
        c.env(CHILD, "1").env_remove("GITHUB_STEP_SUMMARY").args(*args);
        for (k, v) in *envs {
            c.env(k, v);
        }
        let out = c.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let ok = out.status.code() == Some(2)
            && stderr.trim_end().lines().count() == 1
            && stderr.starts_with("error: ")
            && stderr.contains(needle);
        println!(
            "{} {envs:?} {args:?}: exit {:?}, stderr: {}",
            if ok { "ok  " } else { "FAIL" },
            out.status.code(),
            stderr.trim_end()
        );
        failed += usize::from(!ok);
    }
    // Good settings: the (empty) run goes on and exits 0.
    let out = Command::new(std::env::current_exe().unwrap())
        .env(CHILD, "1")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env("CHECKPOINT_CONFORMANCE_KILLS", "3")
        .env("CHECKPOINT_CONFORMANCE_REPORT", report)
        .output()
        .unwrap();
    let fine = out.status.code() == Some(0);
    println!("{} good settings: exit {:?}", if fine { "ok  " } else { "FAIL" }, out.status.code());
    failed += usize::from(!fine);
    failed += user_traces(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        println!("{failed} check(s) failed");
        ExitCode::FAILURE
    }
}

/// `$CHECKPOINT_CONFORMANCE_TRACES` under `run_main`: a directory with a trace file gives
/// one more trial, `nothing::traces::user_<stem>` (`--list` names the trials without
/// running them); a missing directory is one line and exit 2. Returns the checks failed.
fn user_traces(dir: &std::path::Path) -> usize {
    let traces = dir.join("traces");
    std::fs::create_dir_all(&traces).unwrap();
    let linear = concat!(env!("CARGO_MANIFEST_DIR"), "/../traces/linear.json");
    std::fs::copy(linear, traces.join("My-App.json")).unwrap();
    let run = |value: &std::path::Path| {
        Command::new(std::env::current_exe().unwrap())
            .env(CHILD, "1")
            .env(MAIN, "1")
            .env_remove("GITHUB_STEP_SUMMARY")
            .env("CHECKPOINT_CONFORMANCE_TRACES", value)
            .arg("--list")
            .output()
            .unwrap()
    };
    let out = run(&traces);
    let listed = String::from_utf8_lossy(&out.stdout);
    let ok = out.status.code() == Some(0) && listed.contains("nothing::traces::user_my_app: test");
    println!("{} a traces directory adds its trial: exit {:?}", if ok { "ok  " } else { "FAIL" }, out.status.code());
    let out = run(&dir.join("missing"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let refused = out.status.code() == Some(2)
        && stderr.trim_end().lines().count() == 1
        && stderr.starts_with("error: $CHECKPOINT_CONFORMANCE_TRACES: traces directory");
    println!(
        "{} a missing traces directory: exit {:?}, stderr: {}",
        if refused { "ok  " } else { "FAIL" },
        out.status.code(),
        stderr.trim_end()
    );
    usize::from(!ok) + usize::from(!refused)
}
