//! `checkpoint-conformance replay` and `cargo xtask replay`: a recorded trace file, or
//! every trace of a directory, replayed on a saver, each on a fresh one
//! (docs/trace-format.md, docs/traces.md). The installed binary has it, so a user who
//! recorded their graph needs no checkout to replay it.
//!
//! Exit codes: 0 the saver gave what every trace says; 1 a trace differs (its first
//! differing step is named, with every difference at it); 2 a usage error or a bad trace
//! file (every bad file is named, and none is replayed while one is bad).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use conformance_spec::fuzz::replay;
use conformance_spec::fuzz::trace::{Op, Trace};
use conformance_spec::traces::{read_trace, trace_files};

use crate::target::{Target, TargetSpec};
use crate::{Choice, USAGE};

/// The saver a replay or a fuzz run goes to: a reference backend or a saver through the
/// bridge, named as the conformance run names it.
#[derive(Debug, clap::Args)]
pub struct SaverArgs {
    /// The backend: memory, sqlite, postgres (on $CHECKPOINT_POSTGRES_URL, else a throwaway
    /// server started for the run), or a saver through the bridge as the conformance run's
    /// --backend names it (python:memory, python:sqlite, python:postgres,
    /// python:module:factory, js:memory, js:./initializer.mjs, ...; docs/bridge-protocol.md).
    #[arg(long, value_name = "BACKEND", default_value = "memory", value_parser = Choice::parse)]
    pub backend: Choice,

    /// With --backend python: the saver's factory as module:factory; with --backend js: the
    /// path of an initializer module.
    #[arg(long, value_name = "MODULE:FACTORY")]
    pub saver: Option<String>,

    /// With --backend python:*: a Python environment of yours (a virtualenv directory or
    /// an interpreter) instead of the managed one (default: $CHECKPOINT_BRIDGE_PYTHON).
    #[arg(long, value_name = "PATH")]
    pub python: Option<PathBuf>,
}

impl SaverArgs {
    /// The target these flags name, the bridge working in `work_dir`.
    pub fn spec<'a>(&'a self, work_dir: &'a Path) -> TargetSpec<'a> {
        TargetSpec {
            backend: &self.backend,
            saver: self.saver.as_deref(),
            python: self.python.as_deref(),
            sqlite_path: None,
            postgres_url: None,
            work_dir,
        }
    }
}

/// The options of `replay`.
#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// The trace file, or a directory: every `*.json` in it, each on a fresh saver.
    pub file: PathBuf,
    #[command(flatten)]
    pub saver: SaverArgs,
}

/// `checkpoint-conformance replay FILE|DIR --backend B`: reads the traces, builds the
/// target, replays them ([`replay_traces`]).
pub fn run_replay(args: ReplayArgs, work_dir: &Path) -> ExitCode {
    crate::interrupt::install();
    let traces = match read_traces(&args.file) {
        Ok(t) => t,
        Err(code) => return code,
    };
    match crate::target::build(args.saver.spec(work_dir)) {
        Ok(target) => replay_traces(target, &traces),
        Err(code) => code,
    }
}

/// The traces `path` names: the file itself, or every `*.json` of a directory in name
/// order ([`trace_files`]). A conformance run's JSON report is read for the shrunk traces
/// of its fuzz section (`fuzz.divergences[].trace`), named `REPORT.json#fuzz[0]`, so a
/// divergence the run found replays from the report it wrote.
///
/// # Errors
/// Exit 2, every bad file named on stderr (one line each).
pub fn read_traces(path: &Path) -> Result<Vec<(PathBuf, Trace)>, ExitCode> {
    let files = if path.is_dir() { trace_files(path) } else { Ok(vec![path.to_path_buf()]) };
    let files = files.map_err(|e| {
        eprintln!("error: {e}");
        ExitCode::from(USAGE)
    })?;
    let mut traces = Vec::new();
    let mut bad = 0;
    for file in files {
        match read_trace(&file) {
            Ok((_, t)) => traces.push((file, t)),
            Err(e) => match report_traces(&file) {
                Some(found) => traces.extend(found),
                None => {
                    bad += 1;
                    eprintln!("error: {e}");
                }
            },
        }
    }
    if bad > 0 {
        return Err(ExitCode::from(USAGE));
    }
    Ok(traces)
}

/// The shrunk traces of the fuzz section of the JSON report `file` (`None` when it is no
/// report, or its fuzz section has no divergence), each named `file#fuzz[i]`.
fn report_traces(file: &Path) -> Option<Vec<(PathBuf, Trace)>> {
    // Never opens what is no regular file (a FIFO would wait for a writer).
    if !std::fs::metadata(file).ok()?.is_file() {
        return None;
    }
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(file).ok()?).ok()?;
    let divergences = report.get("fuzz")?.get("divergences")?.as_array()?;
    let traces: Vec<(PathBuf, Trace)> = divergences
        .iter()
        .enumerate()
        .filter_map(|(i, d)| {
            let trace = Trace::parse(&d.get("trace")?.to_string()).ok()?;
            Some((PathBuf::from(format!("{}#fuzz[{i}]", file.display())), trace))
        })
        .collect();
    (!traces.is_empty()).then_some(traces)
}

/// Replays each trace on a fresh saver of `target`, one line per trace; on a saver that
/// cannot reopen its storage a `reopen` step goes on with the same instance, and the line
/// says so. Exit 0 when every trace replayed without a difference, else 1.
pub fn replay_traces(target: Target, traces: &[(PathBuf, Trace)]) -> ExitCode {
    let reg = &target.registration;
    let can_reopen = conformance_core::run::detect(reg).is_detected(conformance_core::Capability::Durability);
    let reopens = |t: &Trace| t.steps.iter().any(|s| s.op == Op::Reopen);
    let mut failed = 0;
    for (file, trace) in traces {
        let note =
            if !can_reopen && reopens(trace) { " (its reopen steps went on with the same instance)" } else { "" };
        match replay(reg, trace) {
            Ok(()) => println!(
                "replay {} {}: {} step{}, the saver gave what the trace says{note}",
                reg.name(),
                file.display(),
                trace.steps.len(),
                if trace.steps.len() == 1 { "" } else { "s" }
            ),
            Err(e) => {
                // A saver the bridge child cannot find is bad input: one line, exit 2.
                if let Some(reason) = target.bad_saver() {
                    eprintln!("error: {reason}");
                    drop(target);
                    conformance_core::leftovers::release();
                    return ExitCode::from(USAGE);
                }
                failed += 1;
                println!("replay {} {}: {e}", reg.name(), file.display());
            }
        }
    }
    if !can_reopen && traces.iter().any(|(_, t)| reopens(t)) {
        println!("note: {} cannot reopen its storage; reopen steps went on with the same instance", reg.name());
    }
    if traces.len() > 1 {
        println!("{} of {} traces replayed without a difference", traces.len() - failed, traces.len());
    }
    // What the run made is gone (its fixtures' cleanups ran): its lock file goes too.
    drop(target);
    conformance_core::leftovers::release();
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
