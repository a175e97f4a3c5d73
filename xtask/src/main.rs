//! `cargo xtask`: the project's tasks, run as `cargo xtask <TASK> [OPTIONS]` (the alias is in
//! `.cargo/config.toml`). `cargo xtask` alone or `cargo xtask --help` lists the tasks.
//!
//! Wiring only: argument parsing, choosing a registration, calling the kit, exit codes. No
//! test logic and no saver logic live here.
//!
//! Exit codes: 0 success, 1 the task ran and failed, 2 a usage error (one line on stderr
//! saying what is valid).
//!
//! To add a task: a module with a `clap::Args` struct and a `run(args) -> ExitCode`, and a
//! variant in [`Task`] that `main` dispatches to.

use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser, Subcommand};

mod backend;
mod bench;
mod bench_targets;
mod conformance;
mod fuzz;
mod guard;
mod interrupt;
mod mutants;

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
    /// Run the conformance suite against a reference backend and print (and optionally
    /// write) the report.
    Conformance(conformance::Args),
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
}

/// Exit code for usage errors.
pub(crate) const USAGE: u8 = 2;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return clap_error(&e),
    };
    match cli.task {
        None => {
            let _ = Cli::command().print_help();
            ExitCode::SUCCESS
        }
        Some(Task::Conformance(args)) => conformance::run(args),
        Some(Task::Mutants(args)) => mutants::run(args),
        Some(Task::Bench(args)) => bench::run(args),
        Some(Task::Fuzz(args)) => fuzz::run(args),
        Some(Task::Replay(args)) => fuzz::run_replay(args),
    }
}

/// Prints clap's help or version as is, and any other error as one line: clap's first line
/// (which, with our value parsers, names the valid values) plus the possible values clap
/// lists on later lines, if any.
fn clap_error(e: &clap::Error) -> ExitCode {
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            ExitCode::SUCCESS
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            ExitCode::from(USAGE)
        }
        _ => {
            let text = e.to_string();
            let mut line = text.lines().next().unwrap_or("invalid arguments").trim().to_owned();
            if let Some(values) = text.lines().map(str::trim).find(|l| l.starts_with("[possible values:")) {
                line = format!("{line} {values}");
            }
            if e.kind() == ErrorKind::InvalidSubcommand {
                let tasks: Vec<String> =
                    Cli::command().get_subcommands().map(|c| c.get_name().to_owned()).filter(|n| n != "help").collect();
                line = format!("{line}; valid tasks are: {}", tasks.join(", "));
            }
            if !line.starts_with("error:") {
                line = format!("error: {line}");
            }
            eprintln!("{line} (see `cargo xtask --help`)");
            ExitCode::from(USAGE)
        }
    }
}
