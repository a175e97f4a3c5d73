//! The conformance front end, declared once for its two callers: the installed binary
//! `checkpoint-conformance` (`cargo install --path cli`, this crate's `src/main.rs`) and
//! `cargo xtask conformance` (the `xtask` crate). Both parse the same [`Args`] and call the
//! same [`run`]; they differ only in the program name their usage errors point to
//! ([`usage_error`]) and in the bridge's work directory they pass ([`cache_work_dir`] for
//! the binary, `target/checkpoint-bridge` for xtask).
//!
//! Wiring only: argument parsing, choosing a registration, calling the kit, exit codes. No
//! test logic and no saver logic live here.
//!
//! Exit codes: 0 success, 1 the run failed, 2 a usage error (one line on stderr saying what
//! is valid), 128 + N after signal N.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::error::ErrorKind;

pub mod backend;
mod cases;
mod conformance;
mod fuzz_trial;
mod guard;
pub mod interrupt;
mod record;
pub mod replay;
mod settings;
mod stdout_report;
pub mod target;

pub use conformance::{run, Args, Choice};
pub use record::{run_record, RecordArgs};
pub use replay::{run_replay, ReplayArgs, SaverArgs};

/// What the front end does, one line: the `about` of `checkpoint-conformance --help` and of
/// `cargo xtask conformance --help`.
pub const ABOUT: &str =
    "Run the conformance suite against a reference backend and print (and optionally write) the report.";

/// Exit code for usage errors.
pub const USAGE: u8 = 2;

/// The bridge's work directory for the installed binary (managed Python and JS environments,
/// one directory per run): `$XDG_CACHE_HOME/checkpoint-conformance`, else
/// `$HOME/.cache/checkpoint-conformance`, else `checkpoint-conformance-cache` in the
/// temporary directory. Never relative to the current directory or to the source tree, so
/// the binary works from any directory.
pub fn cache_work_dir() -> PathBuf {
    let non_empty = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    let absolute = |p: PathBuf| p.is_absolute().then_some(p);
    if let Some(xdg) = non_empty("XDG_CACHE_HOME").and_then(absolute) {
        return xdg.join("checkpoint-conformance");
    }
    if let Some(home) = non_empty("HOME").and_then(absolute) {
        return home.join(".cache").join("checkpoint-conformance");
    }
    std::env::temp_dir().join("checkpoint-conformance-cache")
}

/// Prints clap's help or version as is, and any other error as one line: clap's first line
/// (which, with our value parsers, names the valid values) plus the possible values clap
/// lists on later lines, if any, then `(see <help>)`. `command` is the front end's
/// command, whose subcommands an unknown subcommand error lists as the valid tasks.
pub fn usage_error(e: &clap::Error, command: &clap::Command, help: &str) -> ExitCode {
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
            if e.kind() == ErrorKind::MissingRequiredArgument {
                // clap names the missing arguments on the lines after the first.
                let missing: Vec<&str> = text
                    .lines()
                    .skip(1)
                    .take_while(|l| !l.trim().is_empty())
                    .map(str::trim)
                    .filter(|l| !l.starts_with("Usage:"))
                    .collect();
                line = format!("{line} {}", missing.join(" "));
            }
            if e.kind() == ErrorKind::InvalidSubcommand {
                let tasks: Vec<String> =
                    command.get_subcommands().map(|c| c.get_name().to_owned()).filter(|n| n != "help").collect();
                line = format!("{line}; valid tasks are: {}", tasks.join(", "));
            }
            if !line.starts_with("error:") {
                line = format!("error: {line}");
            }
            eprintln!("{line} (see `{help}`)");
            ExitCode::from(USAGE)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_work_dir_is_absolute_and_never_under_the_sources() {
        let dir = cache_work_dir();
        assert!(dir.is_absolute(), "{}", dir.display());
        assert!(!dir.starts_with(env!("CARGO_MANIFEST_DIR")), "{}", dir.display());
        assert!(dir.ends_with("checkpoint-conformance") || dir.ends_with("checkpoint-conformance-cache"));
    }
}
