//! Issues 15 and 36: the report of a `checkpointer_test!` run has a `fuzz` section when the
//! fuzz trial ran (by default, for `CHECKPOINT_CONFORMANCE_FUZZ_BUDGET` seconds, or
//! `CHECKPOINT_CONFORMANCE_FUZZ=N` sequences), with the seed, the sequences run and the
//! divergence found (MUST), and none when it was turned off (a budget of 0). The binary re-executes itself as such a
//! main, over a saver that implements nothing (so the first put diverges from the model).

use std::process::{Command, ExitCode};

use conformance_core::{CheckpointSaver, Fixture, Registration, Report};

struct Nothing;
impl CheckpointSaver for Nothing {}

const CHILD: &str = "FUZZ_REPORT_TEST_CHILD";

/// Runs the child with `envs` and reads the report it wrote.
fn report(path: &std::path::Path, envs: &[(&str, &str)]) -> Report {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.env(CHILD, "1").env_remove("GITHUB_STEP_SUMMARY").env("CHECKPOINT_CONFORMANCE_REPORT", path);
    c.env_remove("CHECKPOINT_CONFORMANCE_FUZZ").env_remove("CHECKPOINT_CONFORMANCE_FUZZ_SEED");
    c.env_remove("CHECKPOINT_CONFORMANCE_FUZZ_BUDGET");
    for (k, v) in envs {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("no report ({e}); stderr: {}", String::from_utf8_lossy(&out.stderr)));
    serde_json::from_str(&text).unwrap()
}

fn main() -> ExitCode {
    if std::env::var_os(CHILD).is_some() {
        // Its lifespan says it ran (on stderr), for the check that the fuzz trial alone
        // runs inside it.
        let reg = Registration::new("nothing", || async { Ok(Fixture::new(Nothing)) }).lifespan(
            || async {
                eprintln!("lifespan setup ran");
                Ok(())
            },
            || async { Ok(()) },
        );
        let args: Vec<_> = std::env::args_os().collect();
        return conformance_spec::harness::run_with_args(vec![reg], Vec::new(), args);
    }
    conformance_spec::harness::one_trial("fuzz_section_only_when_the_trial_ran", check)
}

/// The test itself (its lines say what failed).
fn check() -> ExitCode {
    let dir = std::env::temp_dir().join(format!("fuzz-report-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("r.json");
    let with = report(&path, &[("CHECKPOINT_CONFORMANCE_FUZZ", "3"), ("CHECKPOINT_CONFORMANCE_FUZZ_SEED", "7")]);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    let by_default = report(&path, &[("CHECKPOINT_CONFORMANCE_FUZZ_BUDGET", "0.5")]);
    std::fs::remove_file(&path).unwrap();
    let without = report(&path, &[("CHECKPOINT_CONFORMANCE_FUZZ_BUDGET", "0")]);
    let without_text = std::fs::read_to_string(&path).unwrap();
    let _ = std::fs::remove_dir_all(&dir);

    let mut failed = Vec::new();
    match &with.fuzz {
        None => failed.push(format!("CHECKPOINT_CONFORMANCE_FUZZ=3: the report has no fuzz section:\n{text}")),
        Some(f) => {
            if f.seed != "7" {
                failed.push(format!("fuzz.seed: expected \"7\", got {:?}", f.seed));
            }
            if f.sequences == 0 || f.ops == 0 {
                failed.push(format!("fuzz.sequences/ops: expected > 0, got {} / {}", f.sequences, f.ops));
            }
            match f.divergences.as_slice() {
                [d] => {
                    let steps = d.trace.get("steps").and_then(|s| s.as_array()).map_or(0, Vec::len);
                    let must = d.strength == conformance_core::Strength::Must;
                    if !d.message.contains("Unsupported") || d.steps == 0 || steps != d.steps || !must {
                        failed.push(format!(
                            "fuzz.divergences[0]: expected an Unsupported put (MUST) with its trace, got {d:?}"
                        ));
                    }
                }
                other => {
                    failed.push(format!("fuzz.divergences: expected 1 (nothing is implemented), got {}", other.len()))
                }
            }
            if f.error.is_some() {
                failed.push(format!("fuzz.error: expected null, got {:?}", f.error));
            }
        }
    }
    // The divergence counts in the report as in a whole run of the front ends: a failed
    // result `{capability}::fuzz_model_sequences`, in the capability of the call that diverged.
    let counted: Vec<_> = with.tests.iter().filter(|t| t.name == "fuzz_model_sequences").collect();
    // Its message says how to replay it on this saver, which no front end can name.
    let replayable = |t: &conformance_core::CaseResult| {
        t.message.as_deref().is_some_and(|m| m.contains("CHECKPOINT_CONFORMANCE_TRACES=") && !m.contains("cargo xtask"))
    };
    if !matches!(counted.as_slice(), [t] if t.outcome == conformance_core::Outcome::Failed && t.id.ends_with("::fuzz_model_sequences") && replayable(t))
    {
        failed.push(format!("CHECKPOINT_CONFORMANCE_FUZZ=3: expected one failed result {{capability}}::fuzz_model_sequences in tests, got {counted:?}"));
    }
    // A typo in either variable is a usage error (exit 2, one line), before any trial.
    for (k, v) in [("CHECKPOINT_CONFORMANCE_FUZZ", "lots"), ("CHECKPOINT_CONFORMANCE_FUZZ", "0")]
        .into_iter()
        .chain([("CHECKPOINT_CONFORMANCE_FUZZ_SEED", "-1"), ("CHECKPOINT_CONFORMANCE_FUZZ_BUDGET", "soon")])
    {
        let mut c = Command::new(std::env::current_exe().unwrap());
        c.env(CHILD, "1").env_remove("GITHUB_STEP_SUMMARY").env_remove("CHECKPOINT_CONFORMANCE_REPORT");
        c.env_remove("CHECKPOINT_CONFORMANCE_FUZZ").env_remove("CHECKPOINT_CONFORMANCE_FUZZ_SEED").env(k, v);
        let out = c.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        if out.status.code() != Some(2) || !err.starts_with(&format!("error: {k}=\"{v}\"")) {
            failed.push(format!("{k}={v}: expected exit 2 and one line naming it, got {:?}: {err}", out.status));
        }
    }
    if by_default.fuzz.as_ref().is_none_or(|f| f.divergences.len() != 1) {
        failed.push(format!(
            "by default (a budget of 0.5 s): expected a fuzz section with 1 divergence, got {:?}",
            by_default.fuzz
        ));
    }
    // The fuzz trial alone (a filter, or nextest's process for it) runs inside the
    // lifespan, as the cases do: a saver's run lock (postgres) is taken in its setup.
    let alone = Command::new(std::env::current_exe().unwrap())
        .env(CHILD, "1")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("CHECKPOINT_CONFORMANCE_REPORT")
        .env("CHECKPOINT_CONFORMANCE_FUZZ", "1")
        .args(["fuzz::model_sequences", "--exact"])
        .output()
        .unwrap();
    if !String::from_utf8_lossy(&alone.stderr).contains("lifespan setup ran") {
        failed.push(format!(
            "the fuzz trial alone: expected it inside the lifespan, got stderr {}",
            String::from_utf8_lossy(&alone.stderr)
        ));
    }
    if without.fuzz.is_some() || without_text.contains("\"fuzz\"") {
        failed.push("CHECKPOINT_CONFORMANCE_FUZZ_BUDGET=0: expected no fuzz section, got one".to_owned());
    }
    for f in &failed {
        println!("FAIL {f}");
    }
    if failed.is_empty() {
        println!("ok: the fuzz section is written when the trial ran, and only then");
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
