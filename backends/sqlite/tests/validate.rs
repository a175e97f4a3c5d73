//! Runs the whole conformance catalog against the SQLite saver through `validate()`.
//!
//! `harness = false`: the durability crash test re-executes this binary as a child process
//! that writes to the database and is killed, so `main` first hands over to
//! `conformance_spec::child_main_if_requested`, then runs the checks as libtest trials.

use std::process::ExitCode;

use conformance_core::{Level, RunOptions};

fn main() -> ExitCode {
    // Every registration below is named "sqlite" and opens a location the same way (the
    // crash child opens with the kit's options; the synchronous level does not matter to a
    // killed process).
    if let Some(code) = conformance_spec::child_main_if_requested(&checkpoint_sqlite::registration()) {
        return code;
    }
    let args = libtest_mimic::Arguments::from_args();
    let trials = vec![
        libtest_mimic::Trial::test("sqlite_saver_passes_every_case", || catch(sqlite_saver_passes_every_case)),
        libtest_mimic::Trial::test("sqlite_saver_passes_every_case_beside_a_chosen_path", || {
            catch(sqlite_saver_passes_every_case_beside_a_chosen_path)
        }),
        libtest_mimic::Trial::test("sqlite_saver_passes_every_case_with_full_synchronous", || {
            catch(sqlite_saver_passes_every_case_with_full_synchronous)
        }),
    ];
    libtest_mimic::run(&args, trials).exit_code()
}

/// Runs a check written with `assert!`, turning its panic into a trial failure.
fn catch(check: fn()) -> Result<(), libtest_mimic::Failed> {
    std::panic::catch_unwind(check).map_err(|p| libtest_mimic::Failed::from(conformance_core::run::panic_message(&*p)))
}

fn sqlite_saver_passes_every_case() {
    let report = conformance_spec::validate(&checkpoint_sqlite::registration(), &RunOptions::default());
    let failures = report.failed_cases();
    assert!(failures.is_empty(), "{} case(s) failed:\n{}", failures.len(), failures.join("\n"));
    assert!(report.warnings.is_empty(), "warnings: {:?}", report.warnings);
    assert_eq!(report.conformance_level, Level::Full, "{}", report.to_json());
}

/// The saver's own defaults (`synchronous = FULL`), not the kit's NORMAL.
fn sqlite_saver_passes_every_case_with_full_synchronous() {
    let registration = checkpoint_sqlite::registration_with(checkpoint_sqlite::SqliteOptions::default());
    let report = conformance_spec::validate(&registration, &RunOptions::default());
    let failures = report.failed_cases();
    assert!(
        failures.is_empty(),
        "{} case(s) failed:
{}",
        failures.len(),
        failures.join(
            "
"
        )
    );
    assert_eq!(report.conformance_level, Level::Full, "{}", report.to_json());
}

fn sqlite_saver_passes_every_case_beside_a_chosen_path() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let base = dir.path().join("kit.sqlite");
    let registration = checkpoint_sqlite::registration_at(&base).expect("a registration beside the path");
    let report = conformance_spec::validate(&registration, &RunOptions::default());
    let failures = report.failed_cases();
    assert!(failures.is_empty(), "{} case(s) failed:\n{}", failures.len(), failures.join("\n"));
    assert!(!base.exists(), "the base path itself must not be created");
    let left: Vec<_> =
        std::fs::read_dir(dir.path()).map(|d| d.flatten().map(|e| e.file_name()).collect()).unwrap_or_default();
    assert!(left.is_empty(), "case files left behind: {left:?}");
}
