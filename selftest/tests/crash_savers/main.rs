//! The durability crash test judges durability alone, on savers unlike the reference ones
//! (`file_saver`: a persistent saver on plain files, one JSON file per put):
//!
//! - `carried-only`: a saver that stores only what each put carries (a kept channel's
//!   value that a put does not carry is absent on read, as in LangGraph's SqliteSaver) but
//!   is otherwise durable passes the whole `durability` capability: the crash workload
//!   carries every channel's value, as LangGraph's runtime does.
//! - `exclusive`: a saver that holds an exclusive lock on its storage while an instance is
//!   open (a second open fails, as DuckDB's) passes the crash test: the case starts without
//!   an open instance, and its checking instance is closed before each child starts.
//! - `slow`: a saver whose every call sleeps a few milliseconds, registered with a case
//!   timeout far below what the crash test takes on it, still gets the crash test to its
//!   verdict (passed): the case's budget grows with its kills, not with the case timeout.
//!
//! `harness = false`: the crash test re-executes this binary as a child process, which
//! picks its registration by name.

mod file_saver;

use std::process::ExitCode;
use std::time::Duration;

use conformance_core::{Capability, CapabilityStatus, CaseResult, Outcome, Progress, Registration, Report, RunOptions};
use file_saver::FileStorage;

/// The case timeout of the `slow` registration: far less than its crash test takes.
const SLOW_TIMEOUT: Duration = Duration::from_millis(500);

fn carried_only() -> Registration {
    Registration::persistent("carried-only", FileStorage::default())
}

fn exclusive() -> Registration {
    Registration::persistent("exclusive", FileStorage { exclusive: true, ..FileStorage::default() })
}

fn slow() -> Registration {
    Registration::persistent("slow", FileStorage { delay: Duration::from_millis(3), ..FileStorage::default() })
        .timeout(SLOW_TIMEOUT)
}

/// Runs the crash case alone against `registration` (detection included).
fn crash_case(registration: &Registration) -> CaseResult {
    let cases: Vec<_> = conformance_spec::durability::cases()
        .into_iter()
        .filter(|c| c.name == "acknowledged_writes_survive_kill")
        .collect();
    let options = RunOptions { progress: Progress::Quiet, ..RunOptions::default() };
    let report = conformance_core::run::run(registration, &cases, &options);
    report.tests.into_iter().find(|t| t.name == "acknowledged_writes_survive_kill").expect("the crash case ran")
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
    let registrations = [carried_only(), exclusive(), slow()];
    if let Some(code) = conformance_spec::child_main_if_requested_among(&registrations) {
        return code;
    }
    conformance_spec::harness::one_trial("the_crash_test_judges_durability_alone", check)
}

/// The test itself (its lines say what failed).
fn check() -> ExitCode {
    let registrations = [carried_only(), exclusive(), slow()];
    let mut problems = Vec::new();
    let report = durability(&registrations[0]);
    let status = report.results.get(&Capability::Durability).map(|r| r.status);
    if status != Some(CapabilityStatus::Passed) {
        problems.push(format!("carried-only: durability {status:?}, expected passed:\n{}", failures(&report)));
    }
    let r = crash_case(&registrations[1]);
    if r.outcome != Outcome::Passed {
        problems.push(format!("exclusive: the crash case {:?}: {}", r.outcome, r.message.unwrap_or_default()));
    }
    let r = crash_case(&registrations[2]);
    println!("slow: the crash case {:?} in {:.0} ms (case timeout {SLOW_TIMEOUT:?})", r.outcome, r.duration_ms);
    if r.outcome != Outcome::Passed {
        problems.push(format!("slow: the crash case {:?}: {}", r.outcome, r.message.unwrap_or_default()));
    } else if r.duration_ms < SLOW_TIMEOUT.as_secs_f64() * 1e3 {
        problems.push(format!("slow: the crash case took {:.0} ms, within the case timeout: no test", r.duration_ms));
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
