//! `checkpoint-conformance`: the conformance front end as one installed binary
//! (`cargo install --path cli`). The same flags, run, messages and exit codes as
//! `cargo xtask conformance` (both are this crate's library); the bridge's managed
//! environments live in [`checkpoint_conformance::cache_work_dir`], so it runs from any
//! directory.

use std::process::ExitCode;

use clap::{CommandFactory, Parser};

/// The command line: `checkpoint-conformance [OPTIONS]`.
#[derive(Debug, Parser)]
#[command(name = "checkpoint-conformance", bin_name = "checkpoint-conformance", about = checkpoint_conformance::ABOUT, version)]
#[command(args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    task: Option<Task>,
    #[command(flatten)]
    args: checkpoint_conformance::Args,
}

/// The tasks besides the conformance run (which takes no subcommand).
#[derive(Debug, clap::Subcommand)]
enum Task {
    /// Record a LangGraph application's saver traffic as a trace (docs/traces.md).
    Record(checkpoint_conformance::RecordArgs),
    /// Replay a recorded trace file, or every trace of a directory, on a saver
    /// (docs/traces.md): exit 0 when the saver gave what each trace says, 1 when one differs.
    Replay(checkpoint_conformance::ReplayArgs),
}

fn main() -> ExitCode {
    let code = match Cli::try_parse() {
        Ok(Cli { task: Some(Task::Record(args)), .. }) => {
            checkpoint_conformance::run_record(args, &checkpoint_conformance::cache_work_dir())
        }
        Ok(Cli { task: Some(Task::Replay(args)), .. }) => {
            checkpoint_conformance::run_replay(args, &checkpoint_conformance::cache_work_dir())
        }
        Ok(cli) => checkpoint_conformance::run(cli.args, &checkpoint_conformance::cache_work_dir()),
        Err(e) => checkpoint_conformance::usage_error(&e, &Cli::command(), "checkpoint-conformance --help"),
    };
    // A run that ended because the interrupt's cleanup stopped its processes leaves the
    // exit to the handler (128 + the signal).
    checkpoint_conformance::interrupt::stop_if_interrupted();
    code
}
