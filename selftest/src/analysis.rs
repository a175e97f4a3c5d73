//! The mutation analysis: run the spec against every mutant through the same path as any
//! saver (`conformance_core::run::run`), and tabulate which cases caught which mutant,
//! the kill rate, and the spec cases no mutant ever makes fail.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use conformance_core::{Capability, Outcome, Report, RunOptions, SpecCase};

use crate::catalog::{Base, Mutant, CASES_NEEDING_A_LOCATION, MUTANTS, NEVER_FAILING_EXPLAINED};
use crate::registration::{reference, registration};

/// How to run the analysis.
#[derive(Clone, Debug)]
pub struct AnalysisOptions {
    /// Run only the capabilities each mutant declares it breaks, and `traces` (`false`, the default: a
    /// mutant must be caught by a case of its own capability, and a spec case counts as
    /// failing only when a mutant of its capability fails it), or every capability against
    /// every mutant (`true`: slower, shows the collateral failures of each bug).
    pub all_capabilities: bool,
    /// Mutants run at once (each runs its cases one at a time).
    pub jobs: usize,
    /// Only the mutants whose name contains this text (`None`: all).
    pub only: Option<String>,
}

impl Default for AnalysisOptions {
    fn default() -> Self {
        Self {
            all_capabilities: false,
            jobs: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            only: None,
        }
    }
}

/// What the spec did to one mutant.
#[derive(Clone, Debug)]
pub struct MutantResult {
    /// The mutant.
    pub mutant: &'static Mutant,
    /// The ids (`capability::case`) of the cases that failed on it, in run order.
    pub caught_by: Vec<String>,
    /// The failure message of each case in `caught_by`.
    pub messages: BTreeMap<String, String>,
    /// For a `MUST` mutant: the cases that were only "passed, not strict" on it (they do not
    /// kill it: a MUST bug must cost the level).
    pub not_strict: Vec<String>,
    /// How many cases ran against it.
    pub cases_run: usize,
    /// How long its run took.
    pub duration: Duration,
}

impl MutantResult {
    /// True when at least one case failed.
    pub fn killed(&self) -> bool {
        !self.caught_by.is_empty()
    }

    /// The capabilities run against the mutant: those it declares, and `traces` (recorded
    /// LangGraph traffic crosses capabilities, so the traces run against every mutant and
    /// a trace that fails is never "outside" the mutant's capabilities).
    pub fn runs(&self, capability: Capability) -> bool {
        self.mutant.breaks.contains(&capability) || capability == Capability::Traces
    }

    /// The trace cases that caught it.
    pub fn caught_by_traces(&self) -> Vec<&str> {
        self.caught_by.iter().filter(|id| capability_of(id) == Some(Capability::Traces)).map(String::as_str).collect()
    }

    /// The failing cases of a capability the mutant declares it breaks (or `traces`).
    pub fn caught_in_declared(&self) -> Vec<&str> {
        self.caught_by.iter().filter(|id| capability_of(id).is_some_and(|c| self.runs(c))).map(String::as_str).collect()
    }

    /// The capabilities whose cases caught it, each with how many of its cases failed, in
    /// capability order.
    pub fn caught_in(&self) -> BTreeMap<Capability, usize> {
        let mut caps = BTreeMap::new();
        for cap in self.caught_by.iter().filter_map(|id| capability_of(id)) {
            *caps.entry(cap).or_insert(0) += 1;
        }
        caps
    }

    /// True when the mutant was caught, but by no case of its home capability (the first
    /// it declares: the module of `selftest/src/mutants/` it lives in), so the rule it
    /// breaks is caught only by cases of another capability.
    pub fn caught_only_outside_home(&self) -> bool {
        self.killed() && self.mutant.breaks.first().is_some_and(|home| !self.caught_in().contains_key(home))
    }

    /// The failing cases of a capability the mutant does not declare.
    pub fn caught_outside(&self) -> Vec<&str> {
        self.caught_by
            .iter()
            .filter(|id| !capability_of(id).is_some_and(|c| self.runs(c)))
            .map(String::as_str)
            .collect()
    }
}

/// A spec case no mutant made fail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NeverFailing {
    /// `capability::case`.
    pub case: String,
    /// The reason from [`NEVER_FAILING_EXPLAINED`], or `None` when unexplained.
    pub reason: Option<&'static str>,
}

/// The result of the mutation analysis.
#[derive(Clone, Debug)]
pub struct Analysis {
    /// Every spec case id, in run order.
    pub cases: Vec<String>,
    /// Cases that fail on the unmodified memory saver, or on the bug-free wrapper of a base
    /// saver (`(memory-shared)`, `(sqlite-shared)` after the id): `(id, message)`. Must be
    /// empty.
    pub baseline_failures: Vec<(String, String)>,
    /// One row per mutant, in catalog order.
    pub results: Vec<MutantResult>,
    /// Every spec case that no mutant made fail, with its explanation if any (empty when
    /// the analysis ran only some mutants).
    pub never_failing: Vec<NeverFailing>,
    /// Entries of [`NEVER_FAILING_EXPLAINED`] whose case did fail on some mutant, or does
    /// not exist: stale explanations.
    pub stale_explanations: Vec<&'static str>,
    /// Whether every capability ran against every mutant.
    pub all_capabilities: bool,
    /// The name filter, when only some mutants ran.
    pub only: Option<String>,
    /// Wall time of the whole analysis.
    pub duration: Duration,
}

impl Analysis {
    /// `(killed, total)` mutants.
    pub fn kill_count(&self) -> (usize, usize) {
        (self.results.iter().filter(|r| r.killed()).count(), self.results.len())
    }

    /// Killed mutants over all mutants, in percent.
    pub fn kill_rate(&self) -> f64 {
        let (k, n) = self.kill_count();
        if n == 0 {
            0.0
        } else {
            100.0 * k as f64 / n as f64
        }
    }

    /// The mutants no case caught.
    pub fn survivors(&self) -> Vec<&'static str> {
        self.results.iter().filter(|r| !r.killed()).map(|r| r.mutant.name).collect()
    }

    /// The mutants caught, but by no case of their home capability
    /// ([`MutantResult::caught_only_outside_home`]).
    pub fn caught_only_outside_home(&self) -> Vec<&'static str> {
        self.results.iter().filter(|r| r.caught_only_outside_home()).map(|r| r.mutant.name).collect()
    }

    /// The never-failing cases without an explanation.
    pub fn unexplained(&self) -> Vec<&str> {
        self.never_failing.iter().filter(|n| n.reason.is_none()).map(|n| n.case.as_str()).collect()
    }

    /// The table, the never-failing cases and the kill rate, as plain text (markdown
    /// tables), for `cargo xtask mutants`.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let (k, n) = self.kill_count();
        let _ = writeln!(out, "# Mutation analysis\n");
        let mut bases: Vec<(Base, usize)> = Vec::new();
        for r in &self.results {
            match bases.iter_mut().find(|(b, _)| *b == r.mutant.base) {
                Some((_, k)) => *k += 1,
                None => bases.push((r.mutant.base, 1)),
            }
        }
        let of = match &bases[..] {
            [] | [(Base::Memory, _)] => "of the memory saver".to_owned(),
            _ => {
                let each: Vec<String> = bases.iter().map(|(b, k)| format!("{k} of the {} saver", b.name())).collect();
                format!("({})", each.join(", "))
            }
        };
        let _ = writeln!(
            out,
            "{n} mutants {of} against {} spec cases ({}), {:.1} s.\n",
            self.cases.len(),
            if self.all_capabilities { "every capability" } else { "declared capabilities only" },
            self.duration.as_secs_f64()
        );
        if !self.baseline_failures.is_empty() {
            let _ = writeln!(out, "**The unmodified memory saver fails {} case(s):**\n", self.baseline_failures.len());
            for (id, msg) in &self.baseline_failures {
                let _ = writeln!(out, "- `{id}`: {msg}");
            }
            out.push('\n');
        }
        let _ = writeln!(out, "| mutant | strength | breaks | covers | caught in | caught by | ms | description |");
        let _ = writeln!(out, "|---|---|---|---|---|---|---:|---|");
        for r in &self.results {
            let breaks: Vec<&str> = r.mutant.breaks.iter().map(|c| c.name()).collect();
            let covers: Vec<String> = r.mutant.covers.iter().map(ToString::to_string).collect();
            let caught = if r.killed() {
                let mut s = format!("{}/{}: ", r.caught_by.len(), r.cases_run);
                let shown: Vec<&str> = r.caught_by.iter().take(3).map(String::as_str).collect();
                s.push_str(&shown.join(", "));
                if r.caught_by.len() > 3 {
                    s.push_str(", …");
                }
                let outside = r.caught_outside();
                if !outside.is_empty() {
                    let _ = write!(s, " (outside its capabilities: {})", outside.join(", "));
                }
                s
            } else if !r.not_strict.is_empty() {
                // A MUST bug that only SHOULD cases notice would cost no level.
                format!("**SURVIVED** (0/{}; only not strict in: {})", r.cases_run, r.not_strict.join(", "))
            } else {
                format!("**SURVIVED** (0/{})", r.cases_run)
            };
            let mut caught_in: Vec<String> = r.caught_in().iter().map(|(c, n)| format!("{c} {n}")).collect();
            if r.caught_only_outside_home() {
                caught_in.push(format!("**NOT BY {}**", r.mutant.breaks[0]));
            }
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} |",
                r.mutant.name,
                r.mutant.strength,
                breaks.join(", "),
                covers.join(", "),
                caught_in.join(", "),
                caught,
                r.duration.as_millis(),
                r.mutant.description
            );
        }
        let _ = writeln!(out, "\n## Spec cases no mutant makes fail ({})\n", self.never_failing.len());
        if let Some(only) = &self.only {
            let _ = writeln!(out, "Not listed: only the mutants whose name contains {only:?} ran.");
        } else if self.never_failing.is_empty() {
            let _ = writeln!(out, "None.");
        }
        for nf in &self.never_failing {
            match nf.reason {
                Some(r) => {
                    let _ = writeln!(out, "- `{}`: {r}", nf.case);
                }
                None => {
                    let _ = writeln!(out, "- `{}`: **UNEXPLAINED** (add a mutant it catches, or explain it)", nf.case);
                }
            }
        }
        if !self.stale_explanations.is_empty() {
            let _ = writeln!(out, "\nStale entries of NEVER_FAILING_EXPLAINED: {}", self.stale_explanations.join(", "));
        }
        let outside_home = self.caught_only_outside_home();
        let _ = writeln!(out, "\n## Mutants no case of their home capability catches ({})\n", outside_home.len());
        if outside_home.is_empty() {
            let _ = writeln!(out, "None: every caught mutant fails a case of the capability whose module declares it.");
        } else {
            let _ = writeln!(out, "{}", outside_home.join(", "));
        }
        let by_traces: Vec<String> = self
            .results
            .iter()
            .filter(|r| !r.caught_by_traces().is_empty())
            .map(|r| format!("{} ({})", r.mutant.name, r.caught_by_traces().len()))
            .collect();
        let _ = writeln!(
            out,
            "\n## Mutants the recorded traces kill ({} of {n})\n\nThe traces (traces/, capability `traces`) run against \
             every mutant; in parentheses, how many of them failed.\n",
            by_traces.len()
        );
        let _ = writeln!(out, "{}", if by_traces.is_empty() { "None.".to_owned() } else { by_traces.join(", ") });
        let survivors = self.survivors();
        let _ = writeln!(out, "\n## Kill rate\n");
        let _ = writeln!(out, "{k}/{n} mutants killed: {:.1}%", self.kill_rate());
        if !survivors.is_empty() {
            let _ = writeln!(out, "Survivors (gaps in the spec): {}", survivors.join(", "));
        }
        out
    }
}

/// While alive, panics on the runner's case threads (named `conformance-case`) print
/// nothing: some mutants panic on purpose and the runner reports it as a failure. Panics on
/// any other thread go to the previous hook, which is put back on drop.
struct QuietCasePanics {
    previous: Arc<PanicHook>,
}

type PanicHook = Box<dyn Fn(&std::panic::PanicHookInfo<'_>) + Send + Sync + 'static>;

impl QuietCasePanics {
    fn install() -> Self {
        let previous: Arc<PanicHook> = Arc::new(std::panic::take_hook());
        let chained = previous.clone();
        std::panic::set_hook(Box::new(move |info| {
            if std::thread::current().name() != Some("conformance-case") {
                chained(info);
            }
        }));
        Self { previous }
    }
}

impl Drop for QuietCasePanics {
    fn drop(&mut self) {
        let previous = self.previous.clone();
        std::panic::set_hook(Box::new(move |info| previous(info)));
    }
}

/// The capability of a case id `capability::name`.
fn capability_of(id: &str) -> Option<Capability> {
    id.split("::").next().and_then(|c| c.parse().ok())
}

/// The failed cases of `report`, and the not-strict ones too when `not_strict` (for a
/// `SHOULD` mutant, and for the unmodified savers, which must be strict). A `MUST` mutant
/// must fail the level, not only show as not strict.
fn failures(report: &Report, not_strict: bool) -> Vec<(String, String)> {
    let should = not_strict;
    report
        .tests
        .iter()
        .filter(|t| t.outcome == Outcome::Failed || (should && t.outcome == Outcome::NotStrict))
        .map(|t| (t.id.clone(), t.message.clone().unwrap_or_default()))
        .collect()
}

/// The not-strict cases of a `MUST` mutant's run: what it would be caught by if it broke
/// a `SHOULD` rule (named in the table, not counted as caught).
fn not_strict_only(report: &Report, mutant: &Mutant) -> Vec<String> {
    if mutant.strength == conformance_core::Strength::Should {
        return Vec::new();
    }
    report.tests.iter().filter(|t| t.outcome == Outcome::NotStrict).map(|t| t.id.clone()).collect()
}

/// The capabilities a mutant runs by default: those it declares and `traces`.
fn declared_and_traces(mutant: &Mutant) -> BTreeSet<Capability> {
    mutant.breaks.iter().copied().chain([Capability::Traces]).collect()
}

/// Whether `case` runs against the mutants of `base`.
fn runs_on(base: Base, case: &SpecCase) -> bool {
    base.has_location() || !CASES_NEEDING_A_LOCATION.iter().any(|(id, _)| *id == case.id())
}

/// Runs `cases` against one mutant (those it can run, see [`CASES_NEEDING_A_LOCATION`]).
fn run_mutant(mutant: &'static Mutant, cases: &[SpecCase], options: &AnalysisOptions) -> MutantResult {
    let t0 = Instant::now();
    let opts = RunOptions {
        capabilities: if options.all_capabilities { None } else { Some(declared_and_traces(mutant)) },
        jobs: 1,
        ..RunOptions::default()
    };
    let cases: Vec<SpecCase> = cases.iter().filter(|c| runs_on(mutant.base, c)).copied().collect();
    let report = conformance_core::run::run(&registration(mutant), &cases, &opts);
    let cases_run = report
        .tests
        .iter()
        .filter(|t| matches!(t.outcome, Outcome::Passed | Outcome::Failed | Outcome::NotStrict))
        .count();
    let failed = failures(&report, mutant.strength == conformance_core::Strength::Should);
    MutantResult {
        mutant,
        not_strict: not_strict_only(&report, mutant),
        caught_by: failed.iter().map(|(id, _)| id.clone()).collect(),
        messages: failed.into_iter().collect(),
        cases_run,
        duration: t0.elapsed(),
    }
}

/// Runs the spec `cases` against the unmodified memory saver and every mutant.
pub fn analyze_cases(all_cases: &[SpecCase], options: &AnalysisOptions) -> Analysis {
    let cases = all_cases;
    let start = Instant::now();
    let _quiet = QuietCasePanics::install();
    let base_opts = RunOptions { jobs: options.jobs, ..RunOptions::default() };
    let baseline = conformance_core::run::run(&checkpoint_memory::registration(), cases, &base_opts);
    let mut baseline_failures = failures(&baseline, true);
    // The mutants run on a base saver wrapped in the bug-free wrapper; on each base, the
    // wrapper without a bug must pass every case the mutants of that base run.
    let mut bases: Vec<Base> = Vec::new();
    for m in MUTANTS {
        if !bases.contains(&m.base) {
            bases.push(m.base);
        }
    }
    for base in bases {
        let capabilities: BTreeSet<Capability> =
            MUTANTS.iter().filter(|m| m.base == base).flat_map(declared_and_traces).collect();
        let opts = RunOptions { capabilities: Some(capabilities), ..base_opts.clone() };
        let base_cases: Vec<SpecCase> = cases.iter().filter(|c| runs_on(base, c)).copied().collect();
        let shared = conformance_core::run::run(&reference(base), &base_cases, &opts);
        let tag = format!("{}-shared", base.name());
        baseline_failures.extend(failures(&shared, true).into_iter().map(|(id, m)| (format!("{id} ({tag})"), m)));
    }
    let selected: Vec<&'static Mutant> =
        MUTANTS.iter().filter(|m| options.only.as_deref().is_none_or(|o| m.name.contains(o))).collect();
    // Mutants run `jobs` at once, each with one case at a time: one mutant's run has
    // sequential stretches (detection, capability by capability), several fill the cores.
    let next = AtomicUsize::new(0);
    let slots: Mutex<Vec<Option<MutantResult>>> = Mutex::new(vec![None; selected.len()]);
    std::thread::scope(|scope| {
        for _ in 0..options.jobs.max(1).min(selected.len().max(1)) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(mutant) = selected.get(i).copied() else { break };
                let r = run_mutant(mutant, cases, options);
                slots.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
            });
        }
    });
    let results: Vec<MutantResult> =
        slots.into_inner().unwrap_or_else(|e| e.into_inner()).into_iter().flatten().collect();
    let ids: Vec<String> = all_cases.iter().map(SpecCase::id).collect();
    // A SHOULD case shows it can fail when a mutant makes it not strict, whatever the
    // mutant's own strength.
    let ever_failed: BTreeSet<&str> =
        results.iter().flat_map(|r| r.caught_by.iter().chain(&r.not_strict).map(String::as_str)).collect();
    let explained: BTreeMap<&str, &'static str> = NEVER_FAILING_EXPLAINED.iter().copied().collect();
    // With a name filter, most cases would look never-failing: list none.
    let never_failing = ids
        .iter()
        .filter(|_| options.only.is_none())
        .filter(|id| !ever_failed.contains(id.as_str()))
        .map(|id| NeverFailing { case: id.clone(), reason: explained.get(id.as_str()).copied() })
        .collect();
    let stale_explanations = if options.only.is_none() {
        NEVER_FAILING_EXPLAINED
            .iter()
            .filter(|(id, _)| ever_failed.contains(id) || !ids.iter().any(|c| c == id))
            .map(|(id, _)| *id)
            .collect()
    } else {
        Vec::new()
    };
    Analysis {
        cases: ids,
        baseline_failures,
        results,
        never_failing,
        stale_explanations,
        all_capabilities: options.all_capabilities,
        only: options.only.clone(),
        duration: start.elapsed(),
    }
}

/// Runs the whole spec catalog (`conformance_spec::catalog()`) against the unmodified
/// memory saver and every mutant; see [`analyze_cases`].
pub fn analyze(options: &AnalysisOptions) -> Analysis {
    analyze_cases(&conformance_spec::catalog(), options)
}
