//! The durability crash test judges durability alone, on savers unlike the reference ones
//! (`file_saver`: a persistent saver on plain files, one JSON file per put):
//!
//! - `carried-only`: a saver that stores only what each put carries (a kept channel's
//!   value that a put does not carry is absent on read, as in LangGraph's SqliteSaver) but
//!   is otherwise durable passes the whole `durability` capability: the crash workload
//!   carries every channel's value, as LangGraph's runtime does.
//!
//! `harness = false`: the crash test re-executes this binary as a child process, which
//! picks its registration by name.

mod file_saver;

use std::process::ExitCode;

use conformance_core::{Capability, CapabilityStatus, Progress, Registration, Report, RunOptions};
use file_saver::FileStorage;

fn carried_only() -> Registration {
    Registration::persistent("carried-only", FileStorage::default())
}

/// Runs the `durability` capability against `registration`.
fn durability(registration: &Registration) -> Report {
    let options = RunOptions {
        capabilities: Some([Capability::Durability].into()),
        progress: Progress::Quiet,
        ..RunOptions::default()
    };
    conformance_spec::validate(registration, &options)
}

/// The failures of `report`, one per line.
fn failures(report: &Report) -> String {
    report.results.values().flat_map(|r| r.failures.iter().cloned()).collect::<Vec<_>>().join("\n")
}

fn main() -> ExitCode {
    let registrations = [carried_only()];
    if let Some(code) = conformance_spec::child_main_if_requested_among(&registrations) {
        return code;
    }
    let mut problems = Vec::new();
    let report = durability(&registrations[0]);
    let status = report.results.get(&Capability::Durability).map(|r| r.status);
    if status != Some(CapabilityStatus::Passed) {
        problems.push(format!("carried-only: durability {status:?}, expected passed:\n{}", failures(&report)));
    }
    if problems.is_empty() {
        println!("ok: the crash test judged durability alone");
        ExitCode::SUCCESS
    } else {
        for p in &problems {
            eprintln!("FAILED: {p}");
        }
        ExitCode::FAILURE
    }
}
