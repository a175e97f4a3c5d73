//! Runs the whole conformance catalog against the SQLite saver through `validate()`.

use conformance_core::{Level, Outcome, RunOptions};

#[test]
fn sqlite_saver_passes_every_case() {
    let report = conformance_spec::validate(&checkpoint_sqlite::registration(), &RunOptions::default());
    let failures: Vec<String> = report
        .tests
        .iter()
        .filter(|t| t.outcome == Outcome::Failed)
        .map(|t| format!("{}: {}", t.id, t.message.as_deref().unwrap_or("")))
        .collect();
    assert!(failures.is_empty(), "{} case(s) failed:\n{}", failures.len(), failures.join("\n"));
    assert!(report.warnings.is_empty(), "warnings: {:?}", report.warnings);
    assert_eq!(report.conformance_level, Level::Full, "{}", report.to_json());
}

#[test]
fn sqlite_saver_passes_every_case_beside_a_chosen_path() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let base = dir.path().join("kit.sqlite");
    let registration = checkpoint_sqlite::registration_at(&base).expect("a registration beside the path");
    let report = conformance_spec::validate(&registration, &RunOptions::default());
    let failures: Vec<String> = report
        .tests
        .iter()
        .filter(|t| t.outcome == Outcome::Failed)
        .map(|t| format!("{}: {}", t.id, t.message.as_deref().unwrap_or("")))
        .collect();
    assert!(failures.is_empty(), "{} case(s) failed:\n{}", failures.len(), failures.join("\n"));
    assert!(!base.exists(), "the base path itself must not be created");
    let left: Vec<_> =
        std::fs::read_dir(dir.path()).map(|d| d.flatten().map(|e| e.file_name()).collect()).unwrap_or_default();
    assert!(left.is_empty(), "case files left behind: {left:?}");
}
