//! `checkpoint-conformance` / `cargo xtask conformance`: runs the conformance catalog against a reference backend
//! through the kit's one execution path (`conformance_spec::validate`, i.e.
//! `conformance_core::run::run`), prints the progress and the terminal report, and writes
//! the JSON / JUnit reports and the GitHub step summary when asked.
//!
//! Exit codes: 0 when the report is a success (`Report::is_success`: every base capability
//! passed and no detected capability failed; with `--capabilities`, no selected capability
//! failed and at least one passed), 1 otherwise or when a report could not be written, 2 on
//! a usage error (checked before anything runs).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use conformance_backends::Backend;
use conformance_core::render::render_terminal;
use conformance_core::{Capability, Progress, RunOptions};
use conformance_spec::harness::{check_writable, write_reports, ReportOutputs};

use crate::USAGE;

/// The saver under test: a reference backend of the kit's one list
/// (`conformance_backends::Backend`), or a saver of another language through the bridge
/// (docs/bridge-protocol.md).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Choice {
    /// A reference backend: memory, sqlite or postgres (postgres on `--postgres-url`,
    /// `CHECKPOINT_POSTGRES_URL` or a throwaway server started for the run).
    Kit(Backend),
    /// A Python saver through the bridge, as written: `python:sqlite`, `python:module:factory`
    /// or `python` with `--saver module:factory` (`conformance_backends::bridge::parse_python_saver`).
    Python(String),
    /// A JavaScript saver through the bridge, as written: `js:memory`, `js:./init.mjs` or
    /// `js` with `--saver ./init.mjs` (`conformance_backends::bridge::parse_js_saver`).
    Js(String),
}

impl Choice {
    const BRIDGED: &'static str = "python:NAME (NAME one of memory, sqlite, sqlite-async, postgres, postgres-async, or module:factory), js:NAME (NAME one of memory, sqlite, postgres, or ./initializer.mjs)";

    /// `--backend` as written: `memory`, `sqlite`, `postgres`, `python[:NAME]`, `js[:NAME]`
    /// (the bridged NAME is checked when the registration is built).
    ///
    /// # Errors
    /// One line naming the valid backends.
    pub fn parse(s: &str) -> Result<Choice, String> {
        match s {
            python if python == "python" || python.starts_with("python:") => Ok(Choice::Python(python.to_owned())),
            js if js == "js" || js.starts_with("js:") => Ok(Choice::Js(js.to_owned())),
            name => <Backend as clap::ValueEnum>::from_str(name, false).map(Choice::Kit).map_err(|_| {
                format!("unknown backend `{name}`; valid backends are: {}, {}", Backend::names(), Choice::BRIDGED)
            }),
        }
    }

    /// Whether the saver stores in PostgreSQL (and so needs a server URL); `saver` is
    /// `--saver`. The Python rule is the bridge's own (`conformance_backends::bridge::needs_postgres`).
    pub fn needs_postgres(&self, saver: Option<&str>) -> bool {
        match self {
            Self::Kit(b) => b.needs_postgres(),
            Self::Python(spec) => conformance_backends::bridge::parse_python_saver(spec, saver)
                .is_ok_and(|s| conformance_backends::bridge::needs_postgres(&s)),
            Self::Js(spec) => conformance_backends::bridge::parse_js_saver(spec, saver)
                .is_ok_and(|s| conformance_backends::bridge::js_needs_postgres(&s)),
        }
    }
}

/// The options of `checkpoint-conformance` and `cargo xtask conformance` (declared once here;
/// both front ends flatten this struct).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The backend to check: memory, sqlite, postgres, or one of LangGraph's Python savers
    /// through the bridge: python:memory, python:sqlite, python:sqlite-async,
    /// python:postgres, python:postgres-async, python:module:factory, or one of LangGraph
    /// JS's: js:memory, js:sqlite, js:postgres, js:./initializer.mjs (docs/langgraph-savers.md).
    #[arg(long, value_name = "BACKEND", default_value = "sqlite", value_parser = Choice::parse)]
    backend: Choice,

    /// With --backend python: the saver's factory as module:factory (a callable that
    /// returns a saver, or a context manager yielding one). With --backend js: the path of
    /// an initializer module (docs/bridge-protocol.md, "A saver of your own").
    #[arg(long, value_name = "MODULE:FACTORY")]
    saver: Option<String>,

    /// With --backend python:*: a Python environment of yours (a virtualenv directory or an
    /// interpreter) instead of the managed one in the bridge's work directory
    /// (target/checkpoint-bridge under cargo xtask, $XDG_CACHE_HOME/checkpoint-conformance
    /// for the installed binary) (default: $CHECKPOINT_BRIDGE_PYTHON). It must import
    /// langgraph-checkpoint within 20 s; one that does not is a usage error.
    #[arg(long, value_name = "PATH")]
    python: Option<PathBuf>,

    /// Run the sqlite cases on this filesystem: each case uses its own database file next
    /// to FILE (FILE.case-<pid>-<n>, removed after the case, with the run's marker
    /// FILE.case-<pid>.kit while it runs); FILE itself is never written.
    /// Its directory must exist, and FILE, if it exists, must be a regular file: empty or an
    /// SQLite database that no other process holds locked. No report may be written over it.
    /// Default: a fresh temporary file per case.
    // `<pid>` and `<n>` are placeholders of the --help text, not HTML.
    #[allow(rustdoc::invalid_html_tags)]
    #[arg(long, value_name = "FILE")]
    sqlite_path: Option<PathBuf>,

    /// The PostgreSQL server for --backend postgres (each case uses its own schema, dropped
    /// after it). Default: $CHECKPOINT_POSTGRES_URL, else a throwaway server started for
    /// this run on 127.0.0.1 (Debian's binaries, scripts/pg-test-server.sh) and removed after.
    /// A given server is connected to once before the run: one that cannot be reached is a
    /// usage error naming the URL (password hidden) and the connection error.
    #[arg(long, value_name = "URL")]
    postgres_url: Option<String>,

    /// Run only these capabilities (comma-separated names such as put,list,prune).
    #[arg(long, value_name = "CAP,...", value_delimiter = ',', value_parser = parse_capability)]
    capabilities: Option<Vec<Capability>>,

    /// Skip a capability, with a reason (repeatable): --skip 'prune=needs a server'. A
    /// skipped capability is reported as skipped with its reason.
    #[arg(long, value_name = "CAP=REASON", value_parser = parse_skip)]
    skip: Vec<(Capability, String)>,

    /// Write the JSON report (docs/report-schema.md) to PATH, also when the run fails.
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,

    /// Write a JUnit XML report (one test case per spec case) to PATH, also when the run fails.
    #[arg(long, value_name = "PATH")]
    junit: Option<PathBuf>,

    /// Progress while running: dots, verbose or quiet.
    #[arg(long, value_name = "STYLE", default_value = "dots", value_parser = parse_progress)]
    progress: Progress,

    /// Per-case time limit in seconds (factory and cleanup included); default 30.
    #[arg(long, value_name = "SECONDS", value_parser = parse_timeout, allow_negative_numbers = true)]
    timeout: Option<Duration>,

    /// Run every case N times (1 to 1000): a case whose runs disagree is reported as failed,
    /// "nondeterministic: failed in F of N runs" (the macro reads $CHECKPOINT_CONFORMANCE_REPEAT).
    #[arg(long, value_name = "N", value_parser = conformance_spec::harness::parse_repeat, allow_negative_numbers = true)]
    repeat: Option<u32>,

    /// Cases run at once, 1 to 1024 (default: the number of CPUs).
    #[arg(long, value_name = "N", value_parser = parse_jobs, allow_negative_numbers = true)]
    jobs: Option<usize>,

    /// Judge the SHOULD rules too (docs/contract.md §5): a case whose SHOULD rule failed
    /// ("passed, not strict") then counts as failed for the level and the exit code (the
    /// macro reads $CHECKPOINT_CONFORMANCE_STRICT).
    #[arg(long)]
    strict: bool,

    /// Stop at the first failed case; the cases not run are reported as skipped.
    #[arg(long)]
    fail_fast: bool,

    /// Run only these cases (comma-separated ids as --list-cases prints them, e.g.
    /// put::returns_config_of_stored_checkpoint); the report holds only them, and the exit
    /// code is judged as with --capabilities (no selected capability failed, one passed).
    #[arg(long, value_name = "ID,...", value_delimiter = ',')]
    cases: Option<Vec<String>>,

    /// Seconds of generated call sequences after the cases, compared with the contract's
    /// model (the fuzz trial, docs/using-the-kit.md "Model-based fuzzing"); a divergence is
    /// shrunk and reported "passed, not strict" in the capability of the call that diverged
    /// (--strict counts it). 0 turns it off; not run
    /// with --capabilities or --cases. Default: $CHECKPOINT_CONFORMANCE_FUZZ_BUDGET, else 3.
    #[arg(long, value_name = "SECONDS", value_parser = conformance_spec::fuzz::trial::parse_budget, allow_negative_numbers = true)]
    fuzz_budget: Option<Duration>,

    /// The fuzz trial's seed (the same seed gives the same sequences). Default:
    /// $CHECKPOINT_CONFORMANCE_FUZZ_SEED, else drawn and printed.
    #[arg(long, value_name = "N")]
    fuzz_seed: Option<u64>,

    /// Your own recorded traces (`checkpoint-conformance record`, docs/traces.md): each
    /// `*.json` file of DIR is one more case of the traces capability,
    /// `traces::user_<file stem>`, replayed on the saver. Default:
    /// $CHECKPOINT_CONFORMANCE_TRACES.
    #[arg(long, value_name = "DIR")]
    traces: Option<PathBuf>,

    /// Print the run's cases, one a line: the id and the rule's strength
    /// (`put::returns_config_of_stored_checkpoint MUST`), and exit. With --traces, the
    /// user's trace cases too.
    #[arg(long)]
    list_cases: bool,
}

fn parse_capability(s: &str) -> Result<Capability, String> {
    s.parse().map_err(|e: conformance_core::UnknownCapability| e.to_string())
}

fn parse_skip(s: &str) -> Result<(Capability, String), String> {
    let Some((cap, reason)) = s.split_once('=') else {
        return Err(format!("expected CAPABILITY=REASON (e.g. prune=needs a server), got `{s}`"));
    };
    let cap = parse_capability(cap)?;
    let reason = reason.trim();
    if reason.is_empty() {
        return Err(format!("--skip {cap}= needs a reason after `=`"));
    }
    Ok((cap, reason.to_owned()))
}

fn parse_progress(s: &str) -> Result<Progress, String> {
    s.parse()
}

fn parse_timeout(s: &str) -> Result<Duration, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && (0.01..=86_400.0).contains(&v) => Ok(Duration::from_secs_f64(v)),
        _ => Err(format!("expected a number of seconds from 0.01 to 86400, got `{s}`")),
    }
}

fn parse_jobs(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if (1..=1024).contains(&n) => Ok(n),
        _ => Err(format!("expected a whole number from 1 to 1024, got `{s}`")),
    }
}

/// The PostgreSQL URL the run would use without starting a server (`--postgres-url`, else a
/// non-empty `$CHECKPOINT_POSTGRES_URL`), checked for its form.
fn check_postgres_url(args: &Args) -> Result<(), String> {
    if !args.backend.needs_postgres(args.saver.as_deref()) {
        return Ok(());
    }
    if let Some(url) = &args.postgres_url {
        return conformance_backends::postgres::check_url(url).map_err(|e| format!("--postgres-url: {e}"));
    }
    match std::env::var(conformance_backends::postgres::URL_ENV) {
        Ok(url) if !url.is_empty() => conformance_backends::postgres::check_url(&url)
            .map_err(|e| format!("${}: {e}", conformance_backends::postgres::URL_ENV)),
        Err(std::env::VarError::NotUnicode(raw)) => Err(format!(
            "${}={raw:?} is not valid UTF-8; give a postgres:// URL",
            conformance_backends::postgres::URL_ENV
        )),
        _ => Ok(()),
    }
}

/// The report outputs (flag, path): `--json`, `--junit`, `$GITHUB_STEP_SUMMARY`.
fn outputs(args: &Args) -> Vec<(&'static str, PathBuf)> {
    [
        ("--json", args.json.clone()),
        ("--junit", args.junit.clone()),
        ("$GITHUB_STEP_SUMMARY", conformance_spec::outputs::step_summary_path()),
    ]
    .into_iter()
    .filter_map(|(flag, p)| p.map(|p| (flag, p)))
    .collect()
}

/// The run's cases: the catalog and the user's traces, cut to `--cases` ([`crate::cases`]).
fn selected_cases(args: &Args) -> Result<Vec<conformance_core::SpecCase>, String> {
    let traces = crate::cases::traces_dir(args.traces.as_deref());
    crate::cases::selected_cases(args.cases.as_deref(), traces.as_deref(), args.traces.is_some())
}

/// Everything checked before the run; a message is a usage error.
fn prepare(args: &Args) -> Result<(), String> {
    if args.sqlite_path.is_some() && args.backend != Choice::Kit(Backend::Sqlite) {
        return Err("--sqlite-path applies only to --backend sqlite".into());
    }
    if args.postgres_url.is_some() && !args.backend.needs_postgres(args.saver.as_deref()) {
        return Err("--postgres-url applies only to --backend postgres (or python:postgres*, js:postgres)".into());
    }
    match &args.backend {
        Choice::Python(spec) => {
            conformance_backends::bridge::parse_python_saver(spec, args.saver.as_deref()).map_err(|e| e.to_string())?;
        }
        Choice::Js(spec) => {
            conformance_backends::bridge::parse_js_saver(spec, args.saver.as_deref()).map_err(|e| e.to_string())?;
        }
        _ if args.saver.is_some() => return Err("--saver applies only to --backend python or js".into()),
        _ => {}
    }
    if args.python.is_some() && !matches!(args.backend, Choice::Python(_)) {
        return Err("--python applies only to --backend python:*".into());
    }
    // Before anything opens an output: none is the database or another output.
    let outputs = outputs(args);
    let outputs: Vec<(&str, &Path)> = outputs.iter().map(|(f, p)| (*f, p.as_path())).collect();
    crate::guard::check_outputs(args.sqlite_path.as_deref(), &outputs)?;
    if let Some(p) = &args.json {
        check_writable(p).map_err(|e| format!("--json: {e}"))?;
    }
    if let Some(p) = &args.junit {
        check_writable(p).map_err(|e| format!("--junit: {e}"))?;
    }
    conformance_spec::outputs::check_step_summary()?;
    if args.fuzz_budget.is_none() {
        conformance_spec::fuzz::trial::budget_from_env()?;
    }
    if args.fuzz_seed.is_none() {
        conformance_spec::harness::fuzz_seed_env().map_err(|e| format!("${e}"))?;
    }
    check_postgres_url(args)?;
    conformance_spec::crash::check_env_settings()?;
    // Last, so that a usage error above stays one line.
    for warning in crate::settings::unread_variables()? {
        eprintln!("{warning}");
    }
    Ok(())
}

/// Runs the front end: checks the arguments (a usage error is one line, exit 2), runs the
/// catalog, prints and writes the reports. `work_dir` is where the bridge keeps its managed
/// Python and JS environments and its run directories (created on first use); it must not
/// depend on the current directory.
pub fn run(mut args: Args, work_dir: &Path) -> ExitCode {
    if args.list_cases {
        let cases = match selected_cases(&Args { cases: None, ..args }) {
            Ok(cases) => cases,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(USAGE);
            }
        };
        let lines: String = cases.iter().map(|c| format!("{} {}\n", c.id(), c.strength)).collect();
        let _ = std::io::Write::write_all(&mut std::io::stdout().lock(), lines.as_bytes());
        return ExitCode::SUCCESS;
    }
    if let Err(e) = prepare(&args) {
        eprintln!("error: {e}");
        return ExitCode::from(USAGE);
    }
    // The cases, the user's traces read and parsed once; not in a durability crash child,
    // which runs its workload only (a large --traces directory would slow its first write).
    let cases = if conformance_spec::crash::is_crash_child() {
        Vec::new()
    } else {
        match selected_cases(&args) {
            Ok(cases) => cases,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(USAGE);
            }
        }
    };
    // `--json /dev/stdout | jq`: the stream carries the report alone.
    if let Err(e) = crate::stdout_report::reserve_for_reports(&mut [&mut args.json, &mut args.junit]) {
        eprintln!("error: could not keep standard output for the reports: {e}");
        return ExitCode::from(USAGE);
    }
    // Orphans of what the run starts become this process's, so that none outlives it.
    conformance_core::process_group::adopt_orphans();
    let code = run_checked(args, &cases, work_dir);
    // Everything the run made is gone (dropped with `run_checked`'s locals, on every path
    // out of it): its lock file goes too (conformance_core::leftovers), so the next run does
    // not take this one for a killed run.
    conformance_core::leftovers::release();
    // Nothing the run started outlives it (issue 40 row 15): a process a saver started, a
    // bridge child still closing.
    conformance_core::process_group::end_descendants(END_LIMIT);
    code
}

/// How long a front end waits, when it exits, for the processes it started to be gone.
pub(crate) const END_LIMIT: std::time::Duration = std::time::Duration::from_secs(5);

/// The run once the arguments passed [`prepare`].
fn run_checked(args: Args, cases: &[conformance_core::SpecCase], work_dir: &Path) -> ExitCode {
    // From here on an interrupt removes what the run made (server, case files, temp dirs).
    crate::interrupt::install();
    // A throwaway PostgreSQL server a killed run left is stopped now, whatever the backend.
    conformance_backends::postgres::test_server::sweep_orphans();
    // Kept alive until the reports are written (crate::target: the drop order).
    let spec = crate::target::TargetSpec {
        backend: &args.backend,
        saver: args.saver.as_deref(),
        python: args.python.as_deref(),
        sqlite_path: args.sqlite_path.as_deref(),
        postgres_url: args.postgres_url.as_deref(),
        work_dir,
    };
    let mut target = match crate::target::build(spec) {
        Ok(t) => t,
        Err(code) => return code,
    };
    let mut registration = target.registration.clone();
    // The durability crash test re-executes this binary with the same arguments: in that
    // child, run its workload on the registration's storage instead of the suite.
    if let Some(code) = conformance_spec::child_main_if_requested(&registration) {
        return code;
    }
    for (cap, reason) in &args.skip {
        registration = registration.skip(*cap, reason.clone());
    }
    if let Some(t) = args.timeout {
        registration = registration.timeout(t);
    }
    let mut options = RunOptions { progress: args.progress, fail_fast: args.fail_fast, ..RunOptions::default() };
    if let Some(caps) = &args.capabilities {
        options.capabilities = Some(caps.iter().copied().collect::<BTreeSet<_>>());
    }
    if let Some(j) = args.jobs {
        options.jobs = j;
    }
    if let Some(n) = args.repeat {
        options.repeat = n;
    }
    options.after_cases = crate::fuzz_trial::fuzz_trial(
        args.fuzz_budget,
        args.fuzz_seed,
        args.capabilities.is_some() || args.cases.is_some(),
    );

    // A signal during the setup above: no case, no lifespan, no report.
    crate::interrupt::stop_if_interrupted();
    let mut report = conformance_core::run::run(&registration, cases, &options).with_strict(args.strict);
    crate::interrupt::stop_if_interrupted();
    // A saver the bridge child cannot find (`python:no_such_module:f`) is bad input, not a
    // run that failed: one line, exit 2, no report.
    if let Some(reason) = target.bad_saver() {
        eprintln!("error: {reason}");
        drop(registration);
        target.stop_server();
        return ExitCode::from(USAGE);
    }
    if let Some(b) = &target.bridged {
        b.annotate(&mut report);
    }
    // A closed stdout (`| head -1`) must not cost the reports: a failed print is not fatal.
    let _ = std::io::Write::write_all(&mut std::io::stdout().lock(), render_terminal(&report).as_bytes());

    let outputs = ReportOutputs { json: args.json.clone(), junit: args.junit.clone(), step_summary: true };
    // While the reports are written a signal waits for both; before, it ends the run with
    // none (a blocked print does not hold it off).
    crate::interrupt::stop_if_interrupted();
    let verdict = crate::interrupt::verdict();
    let written = write_reports(&report, &outputs);
    drop(verdict);
    // A signal that came during the writing: the handler's exit code (128 + n), not ours.
    crate::interrupt::stop_if_interrupted();
    if let Err(errors) = &written {
        for e in errors {
            eprintln!("error: {e}");
        }
    }
    drop(registration);
    target.stop_server();
    // With --capabilities or --cases, success is "no selected capability failed" (the level, which
    // needs every base capability, is still reported as it is).
    let success = if args.capabilities.is_none() && args.cases.is_none() {
        report.is_success()
    } else {
        report.is_selection_success()
    };
    if success && written.is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_parsers_name_the_valid_values() {
        assert!(Choice::parse("oracle").unwrap_err().contains("memory, sqlite, postgres"));
        assert_eq!(Choice::parse("postgres").unwrap(), Choice::Kit(Backend::Postgres));
        assert_eq!(Choice::parse("python:sqlite").unwrap(), Choice::Python("python:sqlite".into()));
        assert!(Choice::parse("pythonx").unwrap_err().contains("python:NAME"));
        assert!(Choice::Python("python:postgres-async".into()).needs_postgres(None));
        assert!(!Choice::Python("python:my.postgres:make".into()).needs_postgres(None));
        assert!(Choice::Python("python".into()).needs_postgres(Some("postgres_saver:make")));
        assert_eq!(Choice::parse("js:memory").unwrap(), Choice::Js("js:memory".into()));
        assert!(Choice::Js("js:postgres".into()).needs_postgres(None));
        assert!(!Choice::Js("js".into()).needs_postgres(Some("./postgres.mjs")));
        assert!(Choice::parse("jsx").unwrap_err().contains("js:NAME"));
        assert!(parse_capability("puts").unwrap_err().contains("put_writes"));
        assert_eq!(parse_skip("prune= no server ").unwrap(), (Capability::Prune, "no server".into()));
        assert!(parse_skip("prune").unwrap_err().contains("CAPABILITY=REASON"));
        assert!(parse_skip("prune=").unwrap_err().contains("needs a reason"));
        assert!(parse_skip("prunes=x").unwrap_err().contains("valid capabilities are"));
        assert!(parse_progress("loud").unwrap_err().contains("dots, verbose, quiet"));
        assert_eq!(parse_timeout("1.5").unwrap(), Duration::from_millis(1500));
        assert!(parse_timeout("0").is_err() && parse_timeout("nan").is_err() && parse_timeout("x").is_err());
        assert!(parse_timeout("1e-12").is_err() && parse_timeout("0.01").is_ok());
        assert!(parse_jobs("0").is_err() && parse_jobs("1025").is_err() && parse_jobs("4294967296").is_err());
        assert_eq!(parse_jobs("1024"), Ok(1024));
    }
}
