//! `cargo xtask`: the project's tasks, run as `cargo xtask <TASK> [OPTIONS]` (the alias is in
//! `.cargo/config.toml`). `cargo xtask` alone or `cargo xtask --help` lists the tasks.
//!
//! Wiring only: argument parsing, choosing a registration, calling the kit, exit codes. No
//! test logic and no saver logic live here.
//!
//! Exit codes: 0 success, 1 the task ran and failed, 2 a usage error (one line on stderr
//! saying what is valid).
//!
//! `conformance` is the `checkpoint-conformance` crate (cli/): its `Args` and `run` are
//! shared with the installed `checkpoint-conformance` binary; only the bridge's work
//! directory ([`bridge_dir`]) and the usage hint are xtask's.
//!
//! To add a task: a module with a `clap::Args` struct and a `run(args) -> ExitCode`, and a
//! variant in [`Task`] that `main` dispatches to.

use std::process::ExitCode;

use std::path::{Path, PathBuf};

use clap::{CommandFactory, Parser, Subcommand};

mod bench;
mod bench_targets;
mod bench_whole;
mod fuzz;
mod mutants;
mod soak;
mod soak_check;

/// The command line: `cargo xtask <TASK>`.
#[derive(Debug, Parser)]
#[command(name = "cargo xtask", bin_name = "cargo xtask", about = "The project's tasks", version)]
struct Cli {
    #[command(subcommand)]
    task: Option<Task>,
}

/// The tasks.
#[derive(Debug, Subcommand)]
enum Task {
    /// The conformance front end, shared with the installed `checkpoint-conformance`
    /// binary (the `checkpoint-conformance` crate under cli/: one Args, one run).
    #[command(about = checkpoint_conformance::ABOUT)]
    Conformance(checkpoint_conformance::Args),
    /// Run the spec against every mutant of the self-test's catalog and print the mutation
    /// table, the spec cases no mutant makes fail, and the kill rate.
    Mutants(mutants::Args),
    /// Measure the reference savers (release build) against the speed targets and print
    /// (and optionally write) the figures.
    Bench(bench::Args),
    /// Model-based fuzzing: generated call sequences compared with the contract's model;
    /// a divergence is shrunk and written as a replayable trace.
    Fuzz(fuzz::Args),
    /// Replay a trace file, or every trace of a directory (docs/trace-format.md), against a
    /// backend or a mutant.
    Replay(fuzz::ReplayArgs),
    /// The interrupt soak (issue 40): runs of `conformance` interrupted at random moments,
    /// each checked for what it left (processes, temporary files, bridge run directories,
    /// files beside --sqlite-path, schemas on a given server).
    Soak(soak::Args),
}

/// Exit code for usage errors.
pub(crate) const USAGE: u8 = checkpoint_conformance::USAGE;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return checkpoint_conformance::usage_error(&e, &Cli::command(), "cargo xtask --help"),
    };
    let code = match cli.task {
        None => {
            let _ = Cli::command().print_help();
            ExitCode::SUCCESS
        }
        Some(Task::Conformance(args)) => checkpoint_conformance::run(args, &bridge_dir()),
        Some(Task::Mutants(args)) => mutants::run(args),
        Some(Task::Bench(args)) => bench::run(args),
        Some(Task::Fuzz(args)) => fuzz::run(args),
        Some(Task::Replay(args)) => fuzz::run_replay(args),
        Some(Task::Soak(args)) => soak::run(args),
    };
    // A task that ended because the interrupt's cleanup stopped its processes (a crash
    // child, an installer) leaves the exit to the handler: 128 + the signal, not its error.
    checkpoint_conformance::interrupt::stop_if_interrupted();
    code
}

/// Where the bridge keeps its managed Python and JS environments and run directories under
/// cargo xtask: `<target dir>/checkpoint-bridge` (shared with the bridge crate's tests).
pub(crate) fn bridge_dir() -> PathBuf {
    target_dir().join("checkpoint-bridge")
}

/// The workspace's cargo target directory: `$CARGO_TARGET_DIR`, else `target/` at the root.
pub(crate) fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("target"))
}
