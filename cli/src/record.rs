//! `checkpoint-conformance record`: records a user's LangGraph application as a trace
//! (docs/traces.md, issue 41). Wiring only: the recorder is the bridge's Python module
//! `checkpoint_bridge.record_app`, run in the user's environment (`--python`, else
//! $CHECKPOINT_BRIDGE_PYTHON) or in the bridge's managed one, as the `python:*` backends
//! are; for a graph module ending in `.mjs`, `.js` or `.cjs`, the JS child's
//! `src/record_app.mjs` under node, on the LangGraph JS the module imports. Its output,
//! messages and exit code (0 written, 1 the graph failed to build, 2 a bad argument or inputs
//! line) are passed through; any other end of the recorder is 1 with a line saying why.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};

use conformance_backends::bridge::{is_js_graph, js_recorder_command, recorder_command, PythonOptions, SpecError};

use crate::USAGE;

/// The options of `checkpoint-conformance record`.
#[derive(Debug, clap::Args)]
pub struct RecordArgs {
    /// The graph: `module:attr`, a compiled graph, a function returning one, or a function
    /// returning a builder (compiled with the recording checkpointer). Imported from the
    /// current directory. A LangGraph JS graph is `FILE:EXPORT` with a file ending in `.mjs`,
    /// `.js` or `.cjs` (`./app.mjs:build`), recorded under node ($CHECKPOINT_BRIDGE_NODE).
    #[arg(long, value_name = "MODULE:ATTR")]
    pub graph: String,
    /// The inputs: JSON lines, one action each (invoke, resume, update_state, invoke_from,
    /// get_state, get_state_history; docs/traces.md).
    #[arg(long, value_name = "FILE")]
    pub inputs: PathBuf,
    /// The trace file to write (`checkpoint-trace/1`).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// An id for the application, kept in the trace's `recorded_with` header (default: the
    /// `--graph`).
    #[arg(long, value_name = "ID")]
    pub app_id: Option<String>,
    /// The Python environment with LangGraph and the graph's own packages (a virtualenv
    /// directory or an interpreter); default $CHECKPOINT_BRIDGE_PYTHON, else the bridge's
    /// managed environment (LangGraph installed there on first use). Not for a JS graph.
    #[arg(long, value_name = "PY")]
    pub python: Option<PathBuf>,
}

/// Runs the recorder; `base_dir` is the bridge's work directory (as for `--backend python:*`).
pub fn run_record(args: RecordArgs, base_dir: &Path) -> ExitCode {
    if !args.inputs.is_file() {
        eprintln!("error: --inputs {}: no such file", args.inputs.display());
        return ExitCode::from(USAGE);
    }
    if args.out.is_dir() {
        eprintln!("error: --out {}: is a directory; give the trace file's path", args.out.display());
        return ExitCode::from(USAGE);
    }
    if let Some(dir) = args.out.parent().filter(|d| !d.as_os_str().is_empty() && !d.is_dir()) {
        eprintln!("error: --out {}: the directory {} does not exist", args.out.display(), dir.display());
        return ExitCode::from(USAGE);
    }
    let mut child_args: Vec<OsString> = vec![
        "--graph".into(),
        args.graph.clone().into(),
        "--inputs".into(),
        args.inputs.into(),
        "--out".into(),
        args.out.into(),
    ];
    if let Some(id) = args.app_id {
        child_args.extend(["--app-id".into(), id.into()]);
    }
    let js = is_js_graph(&args.graph);
    if js && args.python.is_some() {
        eprintln!("error: --python applies to a Python graph; {} is a JavaScript module", args.graph);
        return ExitCode::from(USAGE);
    }
    let options = PythonOptions { base_dir: base_dir.to_path_buf(), python_env: args.python, postgres_url: None };
    let command = if js { js_recorder_command(base_dir, child_args) } else { recorder_command(&options, child_args) };
    let command = match command {
        Ok(c) => c,
        Err(SpecError::Usage(e)) => {
            eprintln!("error: {e}");
            return ExitCode::from(USAGE);
        }
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    // SIGINT, SIGTERM or SIGHUP: the recorder (and what the graph started) is stopped, the
    // command exits 128 + the signal, and `--out` is untouched (the recorder writes it whole).
    crate::interrupt::install();
    conformance_core::process_group::adopt_orphans();
    let mut cmd = std::process::Command::new(&command.program);
    cmd.args(&command.args).envs(command.env.iter().map(|(k, v)| (k, v))).stdin(Stdio::null());
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: cannot run {}: {e}", command.program.display());
            return ExitCode::FAILURE;
        }
    };
    let pid = child.id();
    let _on_interrupt = conformance_core::leftovers::on_interrupt(move || conformance_core::leftovers::kill_child(pid));
    let waited = child.wait();
    // Killed by the interrupt handler: it says so and exits (128 + the signal).
    crate::interrupt::stop_if_interrupted();
    let code = match waited {
        Ok(status) => recorder_exit(status),
        Err(e) => {
            eprintln!("error: cannot wait for the recorder: {e}");
            ExitCode::FAILURE
        }
    };
    // Nothing the recorder started (a server the graph spawned) outlives the command.
    conformance_core::process_group::end_descendants(crate::conformance::END_LIMIT);
    code
}

/// The command's exit code for the recorder's `status`: its own 0, 1 or 2 passed through;
/// anything else (node's 13 for a top-level await that never settled, a signal) is 1, with
/// a line saying what happened, since no trace was written.
fn recorder_exit(status: std::process::ExitStatus) -> ExitCode {
    match status.code() {
        Some(c @ 0..=2) => ExitCode::from(c as u8),
        Some(13) => {
            eprintln!(
                "error: the recorder stopped with a promise that never settles (node exit 13): \
                 a node of the graph awaits something that never completes; no trace was written"
            );
            ExitCode::FAILURE
        }
        Some(c) => {
            eprintln!("error: the recorder exited with code {c}; no trace was written");
            ExitCode::FAILURE
        }
        None => {
            use std::os::unix::process::ExitStatusExt;
            let signal = status.signal().map_or_else(|| "a signal".to_owned(), |s| format!("signal {s}"));
            eprintln!("error: the recorder was killed by {signal}; no trace was written");
            ExitCode::FAILURE
        }
    }
}
