//! The libtest-mimic front end behind [`checkpointer_test!`](crate::checkpointer_test): one
//! trial per spec case and registration, each registration through its own
//! [`Session`] (setup -> detection -> plan -> teardown -> report), so the catalog runs
//! under `cargo test` and `cargo nextest` like ordinary tests, through the same plan and case execution as [`validate`](crate::validate)
//! and `cargo xtask conformance` (`conformance_core::run`).
//!
//! - Trials are named `{registration}::{capability}::{case}` and sorted by name; filters,
//!   `--exact`, `--skip`, `--list`, `--ignored`, `--include-ignored` and `--test-threads`
//!   behave as in libtest.
//! - The cases of a capability skipped by the registration or not detected are statically
//!   ignored trials: `cargo test` counts them as ignored and nextest shows them as SKIP.
//!   One line per such capability, with its reason, goes to stderr before the run.
//! - Our own flag `--junit PATH` is taken out of the arguments before libtest parses them.
//!
//! ## When detection runs (its cost)
//!
//! Detection probes one fresh saver from the factory (plus the lifespan setup and
//! teardown when the registration has one), once per process, and only when the ignored
//! flags matter:
//!
//! - a normal run, filtered or not, and `--ignored` runs;
//! - `--list --ignored` (nextest lists a binary with `--list --format terse` and again with
//!   `--list --format terse --ignored` to learn which tests are ignored).
//!
//! It does not run for a plain `--list` (which does not show the flags), for
//! `--include-ignored` (every trial runs anyway), when the filters leave no trial of a
//! capability that is not skipped, or under nextest's process-per-test mode
//! (`NEXTEST_EXECUTION_MODE=process-per-test` with `--exact NAME`): nextest already chose to
//! run that trial from its `--list --ignored` output, and passes `--ignored` when the trial
//! is an ignored one, so the process registers the trial's flag from that and spends no
//! probe. A `cargo nextest run` therefore costs two probes per test binary (the two
//! listings), not one per test.
//!
//! ## Reports
//!
//! When the binary runs the whole suite (no filter or `--skip` that leaves a trial out, no
//! `--list`, `--ignored`, `--include-ignored`, not one nextest process per test), it
//! builds the [`Report`] of each registration from its trials' results and
//! - writes the JSON report to `$CHECKPOINT_CONFORMANCE_REPORT` when set,
//! - writes JUnit XML to `--junit PATH` when given,
//! - appends the markdown summary to `$GITHUB_STEP_SUMMARY` when set,
//! - prints the terminal report after libtest's output.
//!
//! With several registrations each report goes to its own file, named by [`report_path`]
//! (`report.json` -> `report.sqlite-full.json`). A partial run writes none of them and says
//! so on stderr when one was asked for. Every
//! conformance binary reads the same variable, so `cargo test --workspace` with
//! `CHECKPOINT_CONFORMANCE_REPORT` set leaves the report of the last binary that ran; give
//! each binary its own path (`cargo test -p my-saver --test conformance`).

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

pub use crate::outputs::{check_writable, ReportOutputs, REPORT_ENV};
use conformance_core::render::{append_step_summary, render_junit, render_terminal};
use conformance_core::run::{execute_case_repeated, not_run, not_run_reason, Planned};
use conformance_core::{Capability, CaseResult, Knowledge, Outcome, Registration, Report, Session, SpecCase, Start};
use libtest_mimic::{Arguments, Completion, Failed, FormatSetting, Trial};

/// The environment variable that runs every case N times (N a whole number from 1 to
/// 1000; like `cargo xtask conformance --repeat N`): a case whose runs disagree is reported
/// as failed, "nondeterministic: failed in F of N runs". An invalid value is a setup error
/// that names the variable.
pub const REPEAT_ENV: &str = "CHECKPOINT_CONFORMANCE_REPEAT";

/// The environment variable that judges the run `--strict` (`1` or `true`; `0`, `false`
/// or empty for the default): a case whose `SHOULD` rule failed fails its trial, and the
/// report's level counts the `SHOULD` rules too (CONTRACT §5). Any other value is a usage
/// error that names the variable.
pub const STRICT_ENV: &str = "CHECKPOINT_CONFORMANCE_STRICT";

/// [`STRICT_ENV`]: whether the run is strict.
///
/// # Errors
/// A one-line message naming the variable and its valid values.
pub fn strict_env() -> Result<bool, String> {
    match std::env::var(STRICT_ENV).as_deref().map(str::trim) {
        Err(_) | Ok("" | "0" | "false") => Ok(false),
        Ok("1" | "true") => Ok(true),
        Ok(other) => Err(format!("{STRICT_ENV}: expected 1, true, 0, false or nothing, got `{other}`")),
    }
}

/// Runs `check` as the one trial `name` of a `harness = false` test binary that is not a
/// `checkpointer_test!`, so that `cargo test`, its filters and nextest (which lists a
/// binary's trials with `--list` before running each with `--exact`) treat it as a test.
/// `check` passes when it returns [`ExitCode::SUCCESS`]; it prints its own findings.
pub fn one_trial(name: &'static str, check: fn() -> ExitCode) -> ExitCode {
    let trial = Trial::test(name, move || {
        if check() == ExitCode::SUCCESS {
            Ok(())
        } else {
            Err(Failed::from("failed: see the lines above"))
        }
    });
    libtest_mimic::run(&Arguments::from_args(), vec![trial]).exit_code()
}

/// Parses a repeat count (`--repeat`, [`REPEAT_ENV`]): a whole number from 1 to 1000.
///
/// # Errors
/// A one-line message with the valid range.
pub fn parse_repeat(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>().ok().filter(|_| !s.trim().starts_with('+')) {
        Some(n) if (1..=1000).contains(&n) => Ok(n),
        _ => Err(format!("expected a whole number of runs from 1 to 1000, got `{s}`")),
    }
}

/// Exit code for a usage error in our own flags (libtest's own parse errors exit 2 too).
const USAGE_ERROR: u8 = 2;

/// The `main` of a `checkpointer_test!` binary: the whole [`catalog`](crate::catalog)
/// against each of `registrations`, with the process's arguments; plus, when
/// `CHECKPOINT_CONFORMANCE_TRACES` names a directory, one `traces` case per trace file in
/// it ([`crate::traces::user_cases`], docs/traces.md §4). A bad directory or trace file is
/// one line and exit 2.
///
/// It is the binary's entry point, so it first hands over to the durability crash child
/// when the process is one ([`crate::child_main_if_requested_among`]: the child opens the
/// registration whose name the parent sent) and returns the child's exit code.
pub fn run_main(registrations: Vec<Registration>) -> ExitCode {
    if let Some(code) = crate::child_main_if_requested_among(&registrations) {
        return code;
    }
    let mut cases = crate::catalog();
    if let Some(dir) = std::env::var_os(crate::traces::TRACES_ENV).filter(|v| !v.is_empty()) {
        match crate::traces::user_cases(std::path::Path::new(&dir)) {
            Ok(user) => cases.extend(user),
            Err(e) => {
                eprintln!("error: ${}: {e}", crate::traces::TRACES_ENV);
                return ExitCode::from(USAGE_ERROR);
            }
        }
    }
    run_inner(registrations, cases, std::env::args_os(), true)
}

/// The harness with explicit registrations, cases and arguments (the first argument is
/// the program name, as in `std::env::args_os`): one trial per case and registration, all
/// in one libtest run. Does not call the crash-child hook ([`run_main`] does).
///
/// Returns [`libtest_mimic::Conclusion::exit_code`] (101 when a trial failed), 2 for a bad
/// `--junit` flag or two registrations with the same name (their trials and crash children
/// could not be told apart), and 1 when the run passed but a requested report could not be
/// written.
///
/// The fuzz trial runs here only when `CHECKPOINT_CONFORMANCE_FUZZ` or
/// `CHECKPOINT_CONFORMANCE_FUZZ_BUDGET` asks for it; [`run_main`] (the whole catalog, as
/// `checkpointer_test!` runs it) fuzzes by default.
pub fn run_with_args(
    registrations: Vec<Registration>,
    cases: Vec<SpecCase>,
    args: impl IntoIterator<Item = OsString>,
) -> ExitCode {
    run_inner(registrations, cases, args, false)
}

fn run_inner(
    registrations: Vec<Registration>,
    cases: Vec<SpecCase>,
    args: impl IntoIterator<Item = OsString>,
    fuzz_by_default: bool,
) -> ExitCode {
    let mut names = BTreeSet::new();
    if let Some(twice) = registrations.iter().map(Registration::name).find(|n| !names.insert(*n)) {
        eprintln!("error: two registrations are named {twice:?}; give each its own name");
        return ExitCode::from(USAGE_ERROR);
    }
    let (junit, rest) = match take_junit_flag(args.into_iter().collect()) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(USAGE_ERROR);
        }
    };
    if let Some(path) = &junit {
        if let Err(e) = check_writable(path) {
            eprintln!("error: --junit: {e}");
            return ExitCode::from(USAGE_ERROR);
        }
    }
    if let Err(e) = crate::outputs::check_before_run(junit.as_deref()) {
        eprintln!("error: {e}");
        return ExitCode::from(USAGE_ERROR);
    }
    let args = Arguments::from_iter(rest);
    let mut harness = Harness::new(registrations, cases, args, junit);
    harness.fuzz_by_default = fuzz_by_default;
    harness.run()
}

/// Removes `--junit PATH` / `--junit=PATH` from `args`.
///
/// # Errors
/// A one-line message when `--junit` has no value or is given twice.
pub fn take_junit_flag(args: Vec<OsString>) -> Result<(Option<PathBuf>, Vec<OsString>), String> {
    let mut junit = None;
    let mut rest = Vec::with_capacity(args.len());
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        let value = if a == "--junit" {
            match it.next() {
                Some(v) if !v.is_empty() => v,
                _ => return Err("--junit needs a file path: --junit PATH".into()),
            }
        } else if let Some(v) = a.to_str().and_then(|s| s.strip_prefix("--junit=")) {
            if v.is_empty() {
                return Err("--junit needs a file path: --junit PATH".into());
            }
            OsString::from(v)
        } else {
            rest.push(a);
            continue;
        };
        if junit.replace(PathBuf::from(value)).is_some() {
            return Err("--junit was given twice; give one path".into());
        }
    }
    Ok((junit, rest))
}

/// Writes the requested reports of `report`; every failure is a line in the result.
///
/// # Errors
/// One message per report that could not be written.
pub fn write_reports(report: &Report, outputs: &ReportOutputs) -> Result<(), Vec<String>> {
    let mut errors = Vec::new();
    if let Some(p) = &outputs.json {
        if let Err(e) = conformance_core::output_file::write_replacing(p, report.to_json().as_bytes()) {
            errors.push(format!("could not write the JSON report to {}: {e}", p.display()));
        }
    }
    if let Some(p) = &outputs.junit {
        match render_junit(report) {
            Ok(xml) => {
                if let Err(e) = conformance_core::output_file::write_replacing(p, xml.as_bytes()) {
                    errors.push(format!("could not write the JUnit report to {}: {e}", p.display()));
                }
            }
            Err(e) => errors.push(format!("could not render the JUnit report: {e}")),
        }
    }
    if outputs.step_summary {
        if let Err(e) = append_step_summary(report) {
            errors.push(format!("could not append the markdown summary to $GITHUB_STEP_SUMMARY: {e}"));
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// One registration's part of a harness run: its session, the plan of every case (in
/// catalog order) and the results of the trials that ran, by case index.
struct Part {
    session: Session,
    plans: Vec<Planned>,
    results: Arc<Mutex<BTreeMap<usize, CaseResult>>>,
    /// What the fuzz trial gave the report, once it ran.
    fuzz: Arc<Mutex<Option<Fuzzed>>>,
}

/// What [`Harness::prepare`] gives.
struct Prepared {
    parts: Vec<Part>,
    trials: Vec<Trial>,
}

struct Harness {
    registrations: Vec<Registration>,
    cases: Vec<SpecCase>,
    args: Arguments,
    junit: Option<PathBuf>,
    /// `NEXTEST_EXECUTION_MODE=process-per-test` was set.
    under_nextest: bool,
    /// The fuzz trial runs without being asked for ([`run_main`]).
    fuzz_by_default: bool,
}

impl Harness {
    fn new(
        registrations: Vec<Registration>,
        mut cases: Vec<SpecCase>,
        args: Arguments,
        junit: Option<PathBuf>,
    ) -> Self {
        // Catalog order (capability, then module order) is the report's order; trials are
        // sorted by name separately.
        cases.sort_by_key(|c| c.capability);
        let under_nextest = std::env::var("NEXTEST_EXECUTION_MODE").is_ok_and(|m| m == "process-per-test");
        Self { registrations, cases, args, junit, under_nextest, fuzz_by_default: false }
    }

    fn trial_name(reg: &Registration, case: &SpecCase) -> String {
        format!("{}::{}::{}", reg.name(), case.capability, case.name)
    }

    /// True when the filters (ignoring `--ignored`) leave `case`'s trial of `reg` in.
    fn selected(&self, reg: &Registration, case: &SpecCase) -> bool {
        let mut a = self.args.clone();
        a.ignored = false;
        !a.is_filtered_out(&Trial::test(Self::trial_name(reg, case), || Ok(())))
    }

    fn nextest_process_per_test(&self) -> bool {
        self.under_nextest && self.args.exact && !self.args.list
    }

    /// The name of `reg`'s fuzz trial.
    fn fuzz_name(&self, reg: &Registration) -> String {
        if self.registrations.len() > 1 {
            format!("fuzz::model_sequences[{}]", reg.name())
        } else {
            "fuzz::model_sequences".to_owned()
        }
    }

    /// Whether `reg`'s fuzz trial will run: it is on and the filters leave it in.
    fn fuzz_selected(&self, reg: &Registration) -> bool {
        let mut a = self.args.clone();
        a.ignored = false;
        matches!(fuzz_env(self.fuzz_by_default), Ok(Some(_)))
            && !a.is_filtered_out(&Trial::test(self.fuzz_name(reg), || Ok(())))
    }

    /// How much of a session `reg` needs (see the module docs: when detection runs). The
    /// fuzz trial alone (`-- fuzz::model_sequences`, nextest's process for it) needs the
    /// lifespan too: without it a saver's run lock is not taken (the postgres storage's
    /// schemas were dropped under the fuzzer by another run's sweep).
    fn start(&self, reg: &Registration) -> Start {
        let any = self.cases.iter().any(|c| !reg.skips().contains_key(&c.capability) && self.selected(reg, c));
        let detect = any && !self.args.include_ignored && !self.nextest_process_per_test();
        let any = any || self.fuzz_selected(reg);
        if detect && (!self.args.list || self.args.ignored) {
            Start::Detect
        } else if any && !self.args.list {
            // Trials will run without detection: the lifespan still wraps them.
            Start::Lifespan
        } else {
            Start::Nothing
        }
    }

    fn whole_suite(&self, filtered_out: u64) -> bool {
        !self.args.list
            && !self.args.ignored
            && !self.args.include_ignored
            && !self.args.bench
            && filtered_out == 0
            && !self.nextest_process_per_test()
    }

    /// A session per registration (lifespan setup and detection when needed), the plan,
    /// and the trials of every registration (sorted by name).
    fn prepare(&self) -> Prepared {
        let repeat = match std::env::var(REPEAT_ENV) {
            Ok(v) if !v.is_empty() => parse_repeat(&v),
            _ => Ok(1),
        };
        let mut parts = Vec::with_capacity(self.registrations.len());
        let mut trials = Vec::new();
        for reg in &self.registrations {
            let session = Session::start(reg, self.start(reg));
            let plans: Vec<Planned> = self.cases.iter().map(|c| session.plan(c, None)).collect();
            if !self.args.list {
                self.print_preamble(&session, &plans);
            }
            let results: Arc<Mutex<BTreeMap<usize, CaseResult>>> = Arc::default();
            for (i, (case, planned)) in self.cases.iter().zip(&plans).enumerate() {
                trials.push(self.trial(&session, i, case, planned, &results, &repeat));
            }
            let name = self.fuzz_name(reg);
            let fuzz = Arc::default();
            if let Some(trial) = fuzz_trial(reg, session.detection(), name, &fuzz, self.fuzz_by_default) {
                trials.push(trial);
            }
            parts.push(Part { session, plans, results, fuzz });
        }
        trials.sort_by(|a, b| a.name().cmp(b.name()));
        Prepared { parts, trials }
    }

    /// The trial of case `i` of the session's registration.
    fn trial(
        &self,
        session: &Session,
        i: usize,
        case: &SpecCase,
        planned: &Planned,
        results: &Arc<Mutex<BTreeMap<usize, CaseResult>>>,
        repeat: &Result<u32, String>,
    ) -> Trial {
        // One outcome per trial in every front end (Planned::outcome): a case not run whose
        // outcome is failed (a base capability not implemented, CONTRACT §5) fails its trial
        // with the report's message; the others are ignored.
        let unrun_failure = (*planned != Planned::Run && planned.outcome(case.capability) == Outcome::Failed)
            .then(|| not_run_reason(case, planned));
        let ignored = match (planned, session.knowledge()) {
            (Planned::Run, Knowledge::Unprobed) => self.args.ignored,
            (Planned::Run, _) => false,
            _ => unrun_failure.is_none(),
        };
        let reg = session.registration().clone();
        let detection = session.detection().cloned();
        let case = *case;
        let results = results.clone();
        let repeat = repeat.clone();
        let setup_error = session.setup_error().map(str::to_owned);
        // A case that ran but could not check its rule (Failure::not_run) is ignored at run
        // time, with its reason: the same outcome as in the report.
        Trial::ignorable_test(Self::trial_name(&reg, &case), move || {
            if let Some(e) = setup_error {
                return Err(Failed::from(format!("not run: {e}")));
            }
            if let Some(m) = unrun_failure {
                return Err(Failed::from(m));
            }
            let runs = match &repeat {
                Ok(n) => *n,
                Err(e) => return Err(Failed::from(format!("not run: {REPEAT_ENV}: {e}"))),
            };
            let r = execute_case_repeated(&reg, detection.as_ref(), &case, runs);
            let outcome = match (r.outcome, &r.message) {
                (Outcome::Failed, m) => Err(Failed::from(m.as_deref().unwrap_or("failed"))),
                // A SHOULD rule failed: passed, not strict, unless the run is strict.
                (Outcome::NotStrict, m) if strict_env().unwrap_or(false) => Err(Failed::from(format!(
                    "not strict (a SHOULD rule; {STRICT_ENV} is set): {}",
                    m.as_deref().unwrap_or("failed")
                ))),
                // Not run for a declared limit: a MUST rule left unchecked leaves its
                // capability incomplete (CONTRACT §5), so the trial fails, as one of a base
                // capability not implemented does; a SHOULD one only under strict.
                (Outcome::NotRun, Some(m))
                    if m.starts_with(conformance_core::LACKS_PREFIX)
                        && (case.strength == conformance_core::Strength::Must || strict_env().unwrap_or(false)) =>
                {
                    Err(Failed::from(format!(
                        "{m}; the rule is {}, so its capability is incomplete and the level below FULL",
                        case.strength
                    )))
                }
                (Outcome::NotRun, m) => Ok(Completion::ignored_with(m.as_deref().unwrap_or("not run"))),
                _ => Ok(Completion::Completed),
            };
            results.lock().unwrap_or_else(|e| e.into_inner()).insert(i, r);
            outcome
        })
        .with_ignored_flag(ignored)
    }

    fn run(self) -> ExitCode {
        // A bad repeat count is a usage error of the run, not a verdict on the saver.
        if let Ok(v) = std::env::var(REPEAT_ENV) {
            if let (false, Err(e)) = (v.is_empty(), parse_repeat(&v)) {
                eprintln!("error: {REPEAT_ENV}: {e}");
                return ExitCode::from(2);
            }
        }
        if let Err(e) = fuzz_env(self.fuzz_by_default) {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
        let strict = match strict_env() {
            Ok(s) => s,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        };
        let Prepared { mut parts, trials } = self.prepare();
        let conclusion = libtest_mimic::run(&self.args, trials);
        for part in &mut parts {
            if let Some(e) = part.session.teardown() {
                eprintln!("warning: {e}");
            }
        }

        let several = self.registrations.len() > 1;
        let json = std::env::var_os(REPORT_ENV).filter(|p| !p.is_empty()).map(PathBuf::from);
        if !self.whole_suite(conclusion.num_filtered_out) {
            if !self.args.list && (json.is_some() || self.junit.is_some()) {
                eprintln!(
                    "note: no conformance report written: this run did not run the whole suite \
                     (a filter, --skip, --ignored, --include-ignored or one nextest process per test)"
                );
            }
            return conclusion.exit_code();
        }

        let mut write_failed = false;
        for part in parts {
            let results = std::mem::take(&mut *part.results.lock().unwrap_or_else(|e| e.into_inner()));
            let tests = (0..self.cases.len())
                .map(|i| results.get(&i).cloned().or_else(|| Some(not_run(&self.cases[i], &part.plans[i]))))
                .collect();
            // The fuzz trial's divergence counts in its capability, as in a whole run of the
            // front ends (`conformance_core::run::AfterCases`): one verdict for one saver.
            let fuzzed = part.fuzz.lock().unwrap_or_else(|e| e.into_inner()).take();
            let (section, failed) = fuzzed.map_or((None, None), |f| (Some(f.section), f.failed));
            let mut report =
                part.session.report_with(&self.cases, None, tests, failed.into_iter().collect()).with_strict(strict);
            report.fuzz = section;
            let terminal = render_terminal(&report);
            if self.args.format == Some(FormatSetting::Json) {
                eprint!("{terminal}");
            } else {
                print!("{terminal}");
            }
            let name = report.checkpointer_name.clone();
            let outputs = ReportOutputs {
                json: json.as_deref().map(|p| report_path(p, several.then_some(name.as_str()))),
                junit: self.junit.as_deref().map(|p| report_path(p, several.then_some(name.as_str()))),
                step_summary: true,
            };
            if let Err(errors) = write_reports(&report, &outputs) {
                write_failed = true;
                for e in errors {
                    eprintln!("error: {e}");
                }
            }
        }
        if write_failed && !conclusion.has_failed() {
            ExitCode::FAILURE
        } else {
            conclusion.exit_code()
        }
    }

    /// One stderr line per capability whose selected trials are ignored, with the reason;
    /// detection warnings; the setup error.
    fn print_preamble(&self, session: &Session, plans: &[Planned]) {
        let reg = session.registration();
        let name = reg.name();
        if let Knowledge::Detected(d) = session.knowledge() {
            for w in &d.warnings {
                eprintln!("warning: {name}: {w}");
            }
        }
        if let Some(e) = session.setup_error() {
            eprintln!("error: {name}: {e}; every trial fails");
        }
        // (capability, failing?, reason) -> selected trials, in catalog order.
        let mut lines: Vec<((Capability, bool, String), usize)> = Vec::new();
        for (case, planned) in self.cases.iter().zip(plans) {
            if !self.selected(reg, case) || matches!(planned, Planned::Run | Planned::NotSelected) {
                continue;
            }
            let why = match planned {
                Planned::Skipped(r) => format!("skipped by the registration: {r}"),
                p => not_run_reason(case, p),
            };
            let key = (case.capability, planned.outcome(case.capability) == Outcome::Failed, why);
            match lines.iter_mut().find(|(k, _)| *k == key) {
                Some((_, n)) => *n += 1,
                None => lines.push((key, 1)),
            }
        }
        for ((cap, failing, why), n) in lines {
            let all = self.cases.iter().filter(|c| c.capability == cap && self.selected(reg, c)).count();
            let of = if n == all { String::new() } else { format!(" of {all}") };
            let word = if failing { "failing" } else { "ignored" };
            eprintln!("{word}: {name}::{cap} ({n}{of} trial{}): {why}", if all == 1 { "" } else { "s" });
        }
    }
}

/// The path a report of registration `name` is written to: `path` itself for the only
/// registration of a binary (`name` is `None`), else `path` with `.{name}` before its
/// extension (`report.json` -> `report.sqlite-full.json`), so several registrations'
/// reports do not overwrite each other.
pub fn report_path(path: &Path, name: Option<&str>) -> PathBuf {
    let Some(name) = name else { return path.to_path_buf() };
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let file = match path.extension() {
        Some(ext) => format!("{stem}.{name}.{}", ext.to_string_lossy()),
        None => format!("{stem}.{name}"),
    };
    path.with_file_name(file)
}

#[cfg(test)]
#[path = "harness_tests.rs"]
mod tests;

#[path = "harness_fuzz.rs"]
mod fuzz_trial;
use fuzz_trial::{fuzz_env, fuzz_trial, Fuzzed};
pub use fuzz_trial::{fuzz_seed_env, FUZZ_ENV, FUZZ_SEED_ENV};
