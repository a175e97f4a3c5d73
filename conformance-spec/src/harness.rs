//! The libtest-mimic front end behind [`checkpointer_test!`](crate::checkpointer_test): one
//! trial per spec case, so the catalog runs under `cargo test` and `cargo nextest` like
//! ordinary tests, through the same plan and case execution as [`validate`](crate::validate)
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
//! builds the [`Report`] from the trials' results and
//! - writes the JSON report to `$CHECKPOINT_CONFORMANCE_REPORT` when set,
//! - writes JUnit XML to `--junit PATH` when given,
//! - appends the markdown summary to `$GITHUB_STEP_SUMMARY` when set,
//! - prints the terminal report after libtest's output.
//!
//! A partial run writes none of them and says so on stderr when one was asked for. Every
//! conformance binary reads the same variable, so `cargo test --workspace` with
//! `CHECKPOINT_CONFORMANCE_REPORT` set leaves the report of the last binary that ran; give
//! each binary its own path (`cargo test -p my-saver --test conformance`).

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use conformance_core::render::{append_step_summary, render_junit, render_terminal};
use conformance_core::run::{
    build_report, detect, execute_case_repeated, lifespan_setup, lifespan_teardown, not_run, plan_case, Detection,
    Planned,
};
use conformance_core::{Capability, CaseResult, Outcome, Registration, Report, SpecCase};
use libtest_mimic::{Arguments, Failed, FormatSetting, Trial};

/// The environment variable naming the file the JSON report is written to.
pub const REPORT_ENV: &str = "CHECKPOINT_CONFORMANCE_REPORT";

/// The environment variable that runs every case N times (N a whole number from 1 to
/// 1000; like `cargo xtask conformance --repeat N`): a case whose runs disagree is reported
/// as failed, "nondeterministic: failed in F of N runs". An invalid value is a setup error
/// that names the variable.
pub const REPEAT_ENV: &str = "CHECKPOINT_CONFORMANCE_REPEAT";

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
/// against `registration`, with the process's arguments.
pub fn run_main(registration: Registration) -> ExitCode {
    run_with_args(registration, crate::catalog(), std::env::args_os())
}

/// [`run_main`] with explicit cases and arguments (the first argument is the program
/// name, as in `std::env::args_os`).
///
/// Returns [`libtest_mimic::Conclusion::exit_code`] (101 when a trial failed), 2 for a bad
/// `--junit` flag, and 1 when the run passed but a requested report could not be written.
///
/// In a durability crash child (the binary re-executed by the crash test, see
/// [`crate::crash`]) it runs the child's workload instead and returns its exit code.
pub fn run_with_args(
    registration: Registration,
    cases: Vec<SpecCase>,
    args: impl IntoIterator<Item = OsString>,
) -> ExitCode {
    if let Some(code) = crate::child_main_if_requested(&registration) {
        return code;
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
    let args = Arguments::from_iter(rest);
    Harness::new(registration, cases, args, junit).run()
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

/// Checks, without changing any file, that a report can be written at `path`: it is not a
/// directory, its directory exists, and an existing file is writable (a new file is
/// created and removed again to check the directory's permissions).
///
/// # Errors
/// A one-line message naming the path and the problem.
pub fn check_writable(path: &Path) -> Result<(), String> {
    if path.is_dir() {
        return Err(format!("{} is a directory, not a file", path.display()));
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !parent.is_dir() {
        return Err(format!("cannot write {}: directory {} does not exist", path.display(), parent.display()));
    }
    if path.exists() {
        std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map(drop)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    } else {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .and_then(|f| {
                drop(f);
                std::fs::remove_file(path)
            })
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }
}

/// Where the outputs of a whole-suite run go.
#[derive(Clone, Debug, Default)]
pub struct ReportOutputs {
    /// JSON report path.
    pub json: Option<PathBuf>,
    /// JUnit XML path.
    pub junit: Option<PathBuf>,
    /// Append the markdown summary to `$GITHUB_STEP_SUMMARY` when set.
    pub step_summary: bool,
}

/// Writes the requested reports of `report`; every failure is a line in the result.
///
/// # Errors
/// One message per report that could not be written.
pub fn write_reports(report: &Report, outputs: &ReportOutputs) -> Result<(), Vec<String>> {
    let mut errors = Vec::new();
    if let Some(p) = &outputs.json {
        if let Err(e) = std::fs::write(p, report.to_json()) {
            errors.push(format!("could not write the JSON report to {}: {e}", p.display()));
        }
    }
    if let Some(p) = &outputs.junit {
        match render_junit(report) {
            Ok(xml) => {
                if let Err(e) = std::fs::write(p, xml) {
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

/// What [`Harness::prepare`] gives.
struct Prepared {
    start: Instant,
    knowledge: Knowledge,
    plans: Vec<Planned>,
    trials: Vec<Trial>,
    results: Arc<Mutex<BTreeMap<usize, CaseResult>>>,
    lifespan_ran: bool,
}

struct Harness {
    registration: Registration,
    cases: Vec<SpecCase>,
    args: Arguments,
    junit: Option<PathBuf>,
    /// `NEXTEST_EXECUTION_MODE=process-per-test` was set.
    under_nextest: bool,
}

/// What the harness knows about the capabilities before building the trials.
enum Knowledge {
    /// Detection ran.
    Detected(Detection),
    /// The lifespan setup failed: every trial that would run fails with this message.
    SetupFailed(String),
    /// Detection was not needed (see the module docs): trials not skipped by the
    /// registration get the ignored flag `--ignored` asks for.
    Unprobed,
}

impl Harness {
    fn new(registration: Registration, mut cases: Vec<SpecCase>, args: Arguments, junit: Option<PathBuf>) -> Self {
        // Catalog order (capability, then module order) is the report's order; trials are
        // sorted by name separately.
        cases.sort_by_key(|c| c.capability);
        let under_nextest = std::env::var("NEXTEST_EXECUTION_MODE").is_ok_and(|m| m == "process-per-test");
        Self { registration, cases, args, junit, under_nextest }
    }

    fn trial_name(&self, case: &SpecCase) -> String {
        format!("{}::{}::{}", self.registration.name(), case.capability, case.name)
    }

    /// True when the filters (ignoring `--ignored`) leave `case`'s trial in.
    fn selected(&self, case: &SpecCase) -> bool {
        let mut a = self.args.clone();
        a.ignored = false;
        !a.is_filtered_out(&Trial::test(self.trial_name(case), || Ok(())))
    }

    fn nextest_process_per_test(&self) -> bool {
        self.under_nextest && self.args.exact && !self.args.list
    }

    fn needs_detection(&self) -> bool {
        let any = self.cases.iter().any(|c| !self.registration.skips().contains_key(&c.capability) && self.selected(c));
        if !any || self.args.include_ignored || self.nextest_process_per_test() {
            return false;
        }
        !self.args.list || self.args.ignored
    }

    fn whole_suite(&self, filtered_out: u64) -> bool {
        !self.args.list
            && !self.args.ignored
            && !self.args.include_ignored
            && !self.args.bench
            && filtered_out == 0
            && !self.nextest_process_per_test()
    }

    /// Lifespan setup and detection when needed, the plan, and the trials (sorted by name).
    fn prepare(&self) -> Prepared {
        let start = Instant::now();
        let needs_detection = self.needs_detection();
        let mut lifespan_ran = false;
        let knowledge = if needs_detection {
            lifespan_ran = true;
            match lifespan_setup(&self.registration) {
                Ok(()) => Knowledge::Detected(detect(&self.registration)),
                Err(e) => Knowledge::SetupFailed(e),
            }
        } else if !self.args.list
            && self.cases.iter().any(|c| !self.registration.skips().contains_key(&c.capability) && self.selected(c))
        {
            // Trials will run without detection: the lifespan still wraps them.
            lifespan_ran = true;
            match lifespan_setup(&self.registration) {
                Ok(()) => Knowledge::Unprobed,
                Err(e) => Knowledge::SetupFailed(e),
            }
        } else {
            Knowledge::Unprobed
        };

        let plans: Vec<Planned> = self
            .cases
            .iter()
            .map(|c| match &knowledge {
                Knowledge::Detected(d) => plan_case(c, &self.registration, d, None),
                Knowledge::SetupFailed(_) | Knowledge::Unprobed => match self.registration.skips().get(&c.capability) {
                    Some(r) => Planned::Skipped(r.clone()),
                    None => Planned::Run,
                },
            })
            .collect();

        if !self.args.list {
            self.print_preamble(&knowledge, &plans);
        }

        let results: Arc<Mutex<BTreeMap<usize, CaseResult>>> = Arc::default();
        let repeat = match std::env::var(REPEAT_ENV) {
            Ok(v) if !v.is_empty() => parse_repeat(&v),
            _ => Ok(1),
        };
        let mut trials: Vec<Trial> = self
            .cases
            .iter()
            .zip(&plans)
            .enumerate()
            .map(|(i, (case, planned))| {
                // A base capability that is not implemented is a conformance failure
                // (CONTRACT §5: the level drops), so its trials fail rather than hide among
                // the ignored ones; a missing extended capability is optional and ignored.
                let missing_base = *planned == Planned::NotImplemented && case.capability.is_base();
                let ignored = match (planned, &knowledge) {
                    (Planned::Run, Knowledge::Unprobed) => self.args.ignored,
                    (Planned::Run, _) => false,
                    _ => !missing_base,
                };
                let reg = self.registration.clone();
                let case = *case;
                let results = results.clone();
                let repeat = repeat.clone();
                let setup_error = match &knowledge {
                    Knowledge::SetupFailed(e) => Some(e.clone()),
                    _ => None,
                };
                Trial::test(self.trial_name(&case), move || {
                    if let Some(e) = setup_error {
                        return Err(Failed::from(format!("not run: {e}")));
                    }
                    if missing_base {
                        return Err(Failed::from(format!(
                            "{}; every base capability is required for a conformance level above NONE/BASE \
                             (CONTRACT §5)",
                            conformance_core::run::not_implemented_reason(case.capability)
                        )));
                    }
                    let runs = match &repeat {
                        Ok(n) => *n,
                        Err(e) => return Err(Failed::from(format!("not run: {REPEAT_ENV}: {e}"))),
                    };
                    let r = execute_case_repeated(&reg, &case, runs);
                    let outcome = match (r.outcome, &r.message) {
                        (Outcome::Failed, m) => Err(Failed::from(m.as_deref().unwrap_or("failed"))),
                        _ => Ok(()),
                    };
                    results.lock().unwrap_or_else(|e| e.into_inner()).insert(i, r);
                    outcome
                })
                .with_ignored_flag(ignored)
            })
            .collect();
        if let Some(trial) = fuzz_trial(&self.registration) {
            trials.push(trial);
        }
        trials.sort_by(|a, b| a.name().cmp(b.name()));
        Prepared { start, knowledge, plans, trials, results, lifespan_ran }
    }

    fn run(self) -> ExitCode {
        // A bad repeat count is a usage error of the run, not a verdict on the saver.
        if let Ok(v) = std::env::var(REPEAT_ENV) {
            if let (false, Err(e)) = (v.is_empty(), parse_repeat(&v)) {
                eprintln!("error: {REPEAT_ENV}: {e}");
                return ExitCode::from(2);
            }
        }
        let Prepared { start, knowledge, plans, trials, results, lifespan_ran } = self.prepare();
        let conclusion = libtest_mimic::run(&self.args, trials);

        let teardown = if lifespan_ran { lifespan_teardown(&self.registration).err() } else { None };
        if let Some(e) = &teardown {
            eprintln!("warning: {e}");
        }

        let outputs = ReportOutputs {
            json: std::env::var_os(REPORT_ENV).filter(|p| !p.is_empty()).map(PathBuf::from),
            junit: self.junit.clone(),
            step_summary: true,
        };
        if !self.whole_suite(conclusion.num_filtered_out) {
            if !self.args.list && (outputs.json.is_some() || outputs.junit.is_some()) {
                eprintln!(
                    "note: no conformance report written: this run did not run the whole suite \
                     (a filter, --skip, --ignored, --include-ignored or one nextest process per test)"
                );
            }
            return conclusion.exit_code();
        }

        let results = std::mem::take(&mut *results.lock().unwrap_or_else(|e| e.into_inner()));
        let (detection, tests) = match &knowledge {
            Knowledge::SetupFailed(e) => (
                Detection::default(),
                self.cases.iter().map(|c| not_run(c, &Planned::Skipped(format!("not run: {e}")))).collect(),
            ),
            Knowledge::Detected(d) => (d.clone(), self.collect_results(&plans, results)),
            // A whole-suite run always detects; this arm is only reached if it did not.
            Knowledge::Unprobed => (Detection::default(), self.collect_results(&plans, results)),
        };
        let mut report = build_report(&self.registration, &detection, None, tests, start.elapsed());
        if let Knowledge::SetupFailed(e) = &knowledge {
            report.setup_error = Some(e.clone());
        }
        report.warnings.extend(teardown);

        let terminal = render_terminal(&report);
        if self.args.format == Some(FormatSetting::Json) {
            eprint!("{terminal}");
        } else {
            print!("{terminal}");
        }
        match write_reports(&report, &outputs) {
            Ok(()) => conclusion.exit_code(),
            Err(errors) => {
                for e in errors {
                    eprintln!("error: {e}");
                }
                if conclusion.has_failed() {
                    conclusion.exit_code()
                } else {
                    ExitCode::FAILURE
                }
            }
        }
    }

    fn collect_results(&self, plans: &[Planned], mut results: BTreeMap<usize, CaseResult>) -> Vec<CaseResult> {
        self.cases
            .iter()
            .zip(plans)
            .enumerate()
            .map(|(i, (case, planned))| match results.remove(&i) {
                Some(r) => r,
                None => not_run(case, planned),
            })
            .collect()
    }

    /// One stderr line per capability whose selected trials are ignored, with the reason;
    /// detection warnings; the setup error.
    fn print_preamble(&self, knowledge: &Knowledge, plans: &[Planned]) {
        let reg = self.registration.name();
        if let Knowledge::Detected(d) = knowledge {
            for w in &d.warnings {
                eprintln!("warning: {reg}: {w}");
            }
        }
        if let Knowledge::SetupFailed(e) = knowledge {
            eprintln!("error: {reg}: {e}; every trial fails");
        }
        let mut seen = BTreeSet::<Capability>::new();
        for (case, planned) in self.cases.iter().zip(plans) {
            if !self.selected(case) || !seen.insert(case.capability) {
                continue;
            }
            let why = match planned {
                Planned::Skipped(r) => format!("skipped by the registration: {r}"),
                Planned::NotImplemented => conformance_core::run::not_implemented_reason(case.capability),
                Planned::Run | Planned::NotSelected => continue,
            };
            let n = self.cases.iter().filter(|c| c.capability == case.capability && self.selected(c)).count();
            eprintln!("ignored: {reg}::{} ({n} trial{}): {why}", case.capability, if n == 1 { "" } else { "s" });
        }
    }
}

#[cfg(test)]
#[path = "harness_tests.rs"]
mod tests;

/// The environment variable that switches on the fuzz trial of `checkpointer_test!`: the
/// number of generated sequences (`CHECKPOINT_CONFORMANCE_FUZZ=500`).
pub const FUZZ_ENV: &str = "CHECKPOINT_CONFORMANCE_FUZZ";
/// The seed of the fuzz trial; without it a seed is drawn and printed.
pub const FUZZ_SEED_ENV: &str = "CHECKPOINT_CONFORMANCE_FUZZ_SEED";

/// The opt-in trial `fuzz::model_sequences` (issue 15): [`crate::fuzz`] with the number of
/// sequences in [`FUZZ_ENV`], the seed printed so a failure can be reproduced with
/// [`FUZZ_SEED_ENV`] or `cargo xtask fuzz --seed`.
fn fuzz_trial(registration: &Registration) -> Option<Trial> {
    let cases: u32 = std::env::var(FUZZ_ENV).ok()?.trim().parse().ok().filter(|n| *n > 0)?;
    let seed =
        std::env::var(FUZZ_SEED_ENV).ok().and_then(|s| s.trim().parse().ok()).unwrap_or_else(|| fastrand::u64(..));
    let reg = registration.clone();
    Some(Trial::test("fuzz::model_sequences", move || {
        eprintln!("fuzz: {cases} sequences, seed {seed} ({FUZZ_SEED_ENV}={seed} reproduces)");
        let options = crate::fuzz::FuzzOptions { seed, cases, ..Default::default() };
        match crate::fuzz::fuzz_in_lifespan(&reg, &options) {
            Err(e) => Err(Failed::from(e)),
            Ok(o) => match o.divergence {
                None => Ok(()),
                Some(d) => Err(Failed::from(format!(
                    "seed {seed}: divergence from the model after {} sequences, shrunk to:\n{}{}\n\ntrace file:\n{}",
                    o.sequences,
                    d.trace.readable(),
                    d.message,
                    d.trace.to_json()
                ))),
            },
        }
    }))
}
