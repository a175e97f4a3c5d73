//! Cases judge their own rule: a saver that keeps only LangGraph's well-known metadata keys
//! (`source`, `step`, `parents`, `run_id`) and drops the rest fails metadata cases only
//! (the `put`/`copy_thread` metadata cases and the `list` filter cases). The cases of
//! `concurrency`, `durability` and of every rule that is not about metadata set no custom
//! metadata key, so they pass on it (issue 14).
//!
//! `harness = false`: the durability crash test re-executes this binary as a child process.

use std::process::ExitCode;
use std::sync::Arc;

use conformance_core::{CapabilityStatus, Outcome, Progress, Registration, RunOptions};
use conformance_selftest::{registration_of, Base, Bug, Put};

/// LangGraph's runtime writes these metadata keys itself.
const WELL_KNOWN: &[&str] = &["source", "step", "parents", "run_id"];

/// Drops every metadata key but the well-known ones.
struct KeepsWellKnownMetadataOnly;

impl Bug for KeepsWellKnownMetadataOnly {
    fn put_input(&self, put: &mut Put) {
        put.metadata.retain(|k, _| WELL_KNOWN.contains(&k.as_str()));
    }
}

fn make() -> Arc<dyn Bug> {
    Arc::new(KeepsWellKnownMetadataOnly)
}

fn registration() -> Registration {
    registration_of("well-known-metadata-only", Base::Sqlite, make)
}

fn main() -> ExitCode {
    if let Some(code) = conformance_spec::child_main_if_requested(&registration()) {
        return code;
    }
    conformance_spec::harness::one_trial("only_the_metadata_cases_catch_well_known_keys_only", check)
}

/// The test itself (its lines say what failed).
fn check() -> ExitCode {
    let registration = registration();
    let report =
        conformance_spec::validate(&registration, &RunOptions { progress: Progress::Quiet, ..RunOptions::default() });
    let failed: Vec<(String, String)> = report
        .tests
        .iter()
        .filter(|t| t.outcome == Outcome::Failed)
        .map(|t| (t.capability.to_string(), t.name.clone()))
        .collect();
    let mut problems = Vec::new();
    if failed.is_empty() {
        problems.push("the bug failed no case: the metadata cases must catch it".to_owned());
    }
    for (cap, name) in &failed {
        let metadata_case = name.contains("metadata") || (cap == "list" && name.starts_with("filter_"));
        if !metadata_case {
            problems.push(format!("{cap}::{name} failed on a saver whose only flaw is dropping custom metadata keys"));
        }
    }
    for cap in
        ["concurrency", "durability", "get_tuple", "put_writes", "delete_thread", "prune", "delta_channel_history"]
    {
        let status = report.results.iter().find(|(c, _)| c.to_string() == cap).map(|(_, r)| r.status);
        if status != Some(CapabilityStatus::Passed) {
            problems.push(format!("{cap}: expected passed, got {status:?}"));
        }
    }
    if problems.is_empty() {
        println!("ok: {} metadata cases failed, every other case passed", failed.len());
        ExitCode::SUCCESS
    } else {
        for p in &problems {
            eprintln!("FAILED: {p}");
        }
        ExitCode::FAILURE
    }
}
