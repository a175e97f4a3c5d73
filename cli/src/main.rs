//! `checkpoint-conformance`: the conformance front end as one installed binary
//! (`cargo install --path cli`). The same flags, run, messages and exit codes as
//! `cargo xtask conformance` (both are this crate's library); the bridge's managed
//! environments live in [`checkpoint_conformance::cache_work_dir`], so it runs from any
//! directory.

use std::process::ExitCode;

use clap::{CommandFactory, Parser};

/// The command line: `checkpoint-conformance [OPTIONS]`.
#[derive(Debug, Parser)]
#[command(name = "checkpoint-conformance", bin_name = "checkpoint-conformance", about = checkpoint_conformance::ABOUT)]
struct Cli {
    #[command(flatten)]
    args: checkpoint_conformance::Args,
}

fn main() -> ExitCode {
    let code = match Cli::try_parse() {
        Ok(cli) => checkpoint_conformance::run(cli.args, &checkpoint_conformance::cache_work_dir()),
        Err(e) => checkpoint_conformance::usage_error(&e, &Cli::command(), "checkpoint-conformance --help"),
    };
    // A run that ended because the interrupt's cleanup stopped its processes leaves the
    // exit to the handler (128 + the signal).
    checkpoint_conformance::interrupt::stop_if_interrupted();
    code
}
