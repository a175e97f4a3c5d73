//! Runs the whole conformance catalog against the in-memory saver through `validate()`.

use conformance_core::{Level, RunOptions};

#[test]
fn memory_saver_passes_every_case() {
    let report = conformance_spec::validate(&checkpoint_memory::registration(), &RunOptions::default());
    let failures = report.failed_cases();
    assert!(failures.is_empty(), "{} case(s) failed:\n{}", failures.len(), failures.join("\n"));
    assert_eq!(report.conformance_level, Level::Full, "{}", report.to_json());
}
