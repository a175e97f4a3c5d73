//! The report of a run: per-case results, per-capability totals and the conformance level
//! (CONTRACT §5), serialisable to the JSON schema documented in `docs/report-schema.md`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::Capability;
use crate::CapabilityKind;
use crate::Strength;

/// The version of the JSON report's schema; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 2;

/// The kit's version, as in its Cargo.toml.
pub const KIT_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The conformance level (CONTRACT §5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Level {
    /// Every base capability passed and every detected extended capability passed.
    #[serde(rename = "FULL")]
    Full,
    /// Every base capability passed; some detected extended capability failed.
    #[serde(rename = "BASE+PARTIAL")]
    BasePartial,
    /// Some base capability passed, not all.
    #[serde(rename = "BASE")]
    Base,
    /// No base capability passed.
    #[serde(rename = "NONE")]
    None,
}

impl Level {
    /// `FULL`, `BASE+PARTIAL`, `BASE` or `NONE`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Full => "FULL",
            Self::BasePartial => "BASE+PARTIAL",
            Self::Base => "BASE",
            Self::None => "NONE",
        }
    }
}

impl std::fmt::Display for Level {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How one case ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// It ran and passed.
    Passed,
    /// It ran, and the `SHOULD` rule it checks failed (CONTRACT §5 "Strength of a rule"):
    /// "passed, not strict". Counted apart ([`CapabilityResult::tests_not_strict`]); it
    /// never lowers [`Report::conformance_level`] unless the run is `--strict`, and it lowers
    /// [`Report::strict_level`]. A `SHOULD` case whose saver panicked or hung is
    /// [`Outcome::Failed`] all the same (CONTRACT §4: errors, not panics).
    NotStrict,
    /// It ran and failed (assertion, error, panic, timeout, factory failure).
    Failed,
    /// Not run: the capability was skipped by the user or not selected.
    Skipped,
    /// Not run: the capability's method answered `Unsupported` to the probe (an extended
    /// capability; the cases of a base capability that is not implemented are
    /// [`Outcome::Failed`], CONTRACT §5).
    NotImplemented,
    /// Not run: the case's setup needs another capability
    /// ([`crate::SpecCase::needs`]) that is not implemented; the message says which
    /// (`not run: needs put_writes, not implemented`). Neither passed nor failed; its
    /// capability is [`CapabilityStatus::Incomplete`].
    NotRun,
}

/// The state of a capability in a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CapabilityStatus {
    /// Detected and every case passed.
    Passed,
    /// Detected and some case failed.
    Failed,
    /// Detected, no case failed, but some were not run because their setup needs a
    /// capability that is not implemented ([`Outcome::NotRun`]): not passed (`passed:
    /// false`), not failed (CONTRACT §5).
    Incomplete,
    /// The probe answered `Unsupported`.
    NotImplemented,
    /// Skipped by the registration, with a reason, or not run at all because `--fail-fast`
    /// stopped the run first.
    Skipped,
    /// Left out of the run by a capability selection (`--capabilities`).
    NotSelected,
    /// Detected, but the catalog run has no case for it (e.g. a custom catalog); it does not
    /// count towards the level.
    NoCases,
}

/// The result of one case.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CaseResult {
    /// `capability::name`.
    pub id: String,
    /// The capability.
    pub capability: Capability,
    /// The rule name.
    pub name: String,
    /// How it ended.
    pub outcome: Outcome,
    /// The strength of the rule it checks (`MUST` or `SHOULD`, CONTRACT §5). Absent in
    /// reports older than the field, read as `MUST`.
    #[serde(default)]
    pub strength: Strength,
    /// The ids of the docs/contract.md rules the case checks (`put.reput`; docs/rules.md
    /// lists each with its cases and mutants), so a failure points at the rule it broke.
    /// Empty (and absent in JSON) for a result that is no catalog case (the fuzz trial's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<String>,
    /// The failure message (also of a [`Outcome::NotStrict`] case), or the skip reason;
    /// `None` on a pass.
    pub message: Option<String>,
    /// Wall time in milliseconds (factory and cleanup included); 0 when not run.
    pub duration_ms: f64,
    /// Facts the case recorded with [`crate::CaseEnv::fact`], keyed
    /// `{capability}.{key}` (`durability.kills`); merged into [`Report::facts`].
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub facts: BTreeMap<String, serde_json::Value>,
    /// With `--repeat N` (N > 1): how many times the case ran and how many of those runs
    /// failed. `0 < failed < runs` is a nondeterministic case, reported as failed with
    /// "nondeterministic: failed in F of N runs".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<Repeats>,
    /// How the case ended when its code gave no verdict of its own (a panic, a timeout, a
    /// dead thread): what the runner decides on (a timeout ends `--repeat` early and prints
    /// [`crate::run::timeout_hint`]). Not part of the JSON report; `None` in a report read
    /// back from JSON.
    #[serde(skip)]
    pub abort: Option<crate::Abort>,
    /// Set when the case failed and one of its calls failed because of a call of another
    /// case ([`crate::CallNote::disturbed`]: a bridged child stopped as stuck while calls of
    /// several cases were in flight): the failure may not be the case's own, and the
    /// runner runs the case again alone ([`crate::run::run`]). Not part of the JSON report.
    #[serde(skip)]
    pub disturbed: Option<String>,
    /// Set when the case was run again alone because its first run's failure was disturbed
    /// by another case's call ([`CaseResult::disturbed`]): why, and the first run's failure.
    /// The outcome, message and duration are the second run's. Absent in JSON otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rerun_alone: Option<String>,
}

/// How often a repeated case ran and failed ([`CaseResult::repeats`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Repeats {
    /// Times the case ran (the `--repeat` count).
    pub runs: u32,
    /// Of those, the runs that failed.
    pub failed: u32,
}

impl Repeats {
    /// Some runs failed and some passed: the verdict depends on chance (an order the saver
    /// takes from a `HashMap`, a race).
    pub fn nondeterministic(&self) -> bool {
        self.failed > 0 && self.failed < self.runs
    }
}

/// The totals of one capability. The first six fields are the upstream kit's
/// (`CapabilityResult.to_dict()`), the rest are ours.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CapabilityResult {
    /// The probe did not answer `Unsupported`.
    pub detected: bool,
    /// `true`/`false` when it ran; `null` when not detected, skipped or not selected.
    pub passed: Option<bool>,
    /// Cases that passed.
    pub tests_passed: usize,
    /// Cases that failed.
    pub tests_failed: usize,
    /// Cases not run (skipped, not selected, not implemented or not run).
    pub tests_skipped: usize,
    /// Cases whose `SHOULD` rule failed ([`Outcome::NotStrict`], "passed, not strict");
    /// not in `tests_passed` nor `tests_failed`. Absent in older reports, read as 0.
    #[serde(default)]
    pub tests_not_strict: usize,
    /// Like `passed`, counting the `SHOULD` rules too (CONTRACT §5, `--strict`): false
    /// when a case was not strict (a `SHOULD` case not run for a declared limit does not
    /// count against it). Absent in older reports.
    #[serde(default)]
    pub passed_strict: Option<bool>,
    /// `"name: message"` for each failed case ([`Outcome::Failed`] only).
    pub failures: Vec<String>,
    /// Base or extended.
    pub kind: CapabilityKind,
    /// What happened to the capability.
    pub status: CapabilityStatus,
    /// The skip reason, when skipped.
    pub skip_reason: Option<String>,
    /// Summed wall time of its cases in milliseconds.
    pub duration_ms: f64,
}

/// The whole report of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// [`KIT_VERSION`].
    pub kit_version: String,
    /// The registration's name.
    pub checkpointer_name: String,
    /// The level by CONTRACT §5: computed on the `MUST` cases, or on every case when the
    /// run is [`Report::strict`].
    pub conformance_level: Level,
    /// The level computed on the `MUST` and the `SHOULD` cases (what `--strict` gives).
    /// Absent in reports of schema 1, whose level counted every case: read as their
    /// `conformance_level`.
    #[serde(default)]
    pub strict_level: Option<Level>,
    /// The run was `--strict` (`CHECKPOINT_CONFORMANCE_STRICT=1`): `conformance_level` and
    /// the exit code count the `SHOULD` rules too.
    #[serde(default)]
    pub strict: bool,
    /// Capability name -> totals, in run order.
    pub results: BTreeMap<Capability, CapabilityResult>,
    /// Every case, in run order.
    pub tests: Vec<CaseResult>,
    /// Detected capabilities that passed.
    pub capabilities_passed: usize,
    /// Detected capabilities.
    pub capabilities_detected: usize,
    /// Wall time of the whole run in milliseconds.
    pub duration_ms: f64,
    /// Why the run could not start (lifespan setup failed), if it could not.
    pub setup_error: Option<String>,
    /// Problems outside any case: a failed lifespan teardown, a failed detection probe.
    pub warnings: Vec<String>,
    /// The limits the saver declared (CONTRACT §5 "Declared limits"; each also a warning),
    /// by name (`wide_numbers`); every instance of the run declared the same. Absent in
    /// older reports.
    #[serde(default)]
    pub declared_lacks: Vec<crate::Feature>,
    /// Extra facts a capability reports (e.g. `durability.kills`), keyed `capability.key`.
    #[serde(default)]
    pub facts: BTreeMap<String, serde_json::Value>,
    /// The failed cases grouped by capability and differing field, largest group first
    /// ([`crate::clusters::failure_clusters`]); empty when nothing failed. May be absent
    /// in older reports.
    #[serde(default)]
    pub failure_clusters: Vec<FailureCluster>,
    /// What the opt-in fuzz trial did (issue 15), when it ran; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fuzz: Option<FuzzSection>,
}

/// The `fuzz` section of a report: what the model-based fuzzer (`conformance_spec::fuzz`)
/// did in this run (docs/report-schema.md `fuzz`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FuzzSection {
    /// The seed, as a decimal string (a `u64` does not fit every JSON reader's numbers);
    /// the same seed gives the same sequences.
    pub seed: String,
    /// Sequences run (the shrinking runs not counted).
    pub sequences: u64,
    /// Calls made in those sequences.
    pub ops: u64,
    /// Wall time of the fuzzing in milliseconds.
    pub duration_ms: f64,
    /// The divergences from the model: the fuzzer stops at the first and shrinks it, so at
    /// most one; empty when every sequence agreed.
    pub divergences: Vec<FuzzDivergence>,
    /// Why the fuzzer could not run (the runtime did not start), if it could not.
    pub error: Option<String>,
}

/// One divergence of a [`FuzzSection`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FuzzDivergence {
    /// Every difference at the diverging call.
    pub message: String,
    /// `MUST` when a difference remains once the SHOULD rules are set aside (the trial
    /// fails), `SHOULD` when every difference is one a SHOULD rule allows ("passed, not
    /// strict"). Absent in reports older than this field: read as `MUST`.
    #[serde(default)]
    pub strength: crate::Strength,
    /// Steps in the shrunk trace.
    pub steps: usize,
    /// The shrunk trace (docs/trace-format.md), replayable with `cargo xtask replay`.
    pub trace: serde_json::Value,
}

/// The conformance level of a set of capability results (CONTRACT §5), on their `MUST`
/// cases (`passed`).
///
/// `FULL` needs every base capability passed (a missing base result is not a pass, so a
/// saver that implements nothing is `NONE`, never the upstream kit's vacuous `FULL (0/0)`)
/// and every detected extended capability passed.
pub fn conformance_level(results: &BTreeMap<Capability, CapabilityResult>) -> Level {
    level_by(results, |r| r.passed)
}

/// The level counting the `SHOULD` cases too (`passed_strict`): what `--strict` reports.
pub fn strict_level(results: &BTreeMap<Capability, CapabilityResult>) -> Level {
    level_by(results, |r| r.passed_strict)
}

/// The level rules of CONTRACT §5 over `passed` of each capability result.
fn level_by(
    results: &BTreeMap<Capability, CapabilityResult>,
    passed: impl Fn(&CapabilityResult) -> Option<bool>,
) -> Level {
    let base_passed =
        Capability::BASE.iter().filter(|c| results.get(c).is_some_and(|r| passed(r) == Some(true))).count();
    // An incomplete extended capability has `passed: false`: not passed, so not FULL.
    let extended_ok = results.iter().filter(|(c, r)| !c.is_base() && r.detected).all(|(_, r)| passed(r) != Some(false));
    match base_passed {
        5 if extended_ok => Level::Full,
        5 => Level::BasePartial,
        0 => Level::None,
        _ => Level::Base,
    }
}

impl Report {
    /// True when every base capability passed and no detected capability failed (on the
    /// `MUST` cases, or on every case when [`Report::strict`]): the condition for exit code
    /// 0 in `cargo xtask conformance`.
    pub fn is_success(&self) -> bool {
        self.setup_error.is_none() && self.conformance_level == Level::Full
    }

    /// The success of a run of selected capabilities only (`cargo xtask conformance
    /// --capabilities`): the run started, no capability failed and at least one passed.
    /// The level, which needs every base capability (CONTRACT §5), is not consulted: it is
    /// still reported as it is.
    pub fn is_selection_success(&self) -> bool {
        let passed = |r: &CapabilityResult| if self.strict { r.passed_strict } else { r.passed };
        self.setup_error.is_none()
            && self.results.values().all(|r| passed(r) != Some(false))
            && self.results.values().any(|r| passed(r) == Some(true))
    }

    /// The same report judged `--strict` when `strict` (CONTRACT §5): the level, and so
    /// the exit code, count the `SHOULD` cases too ([`Report::strict_level`]).
    ///
    /// Under `--strict` every total says the same: a capability passed only when it passed
    /// strictly (`passed` = `passed_strict`, status `failed`), `capabilities_passed` counts
    /// those, and its `failures` list its not-strict cases too. Judging a report that
    /// already is strict again changes nothing.
    pub fn with_strict(mut self, strict: bool) -> Self {
        if !strict || self.strict {
            return self;
        }
        self.strict = true;
        for (cap, r) in self.results.iter_mut() {
            if r.passed == Some(true) && r.passed_strict == Some(false) {
                r.passed = Some(false);
                r.status = CapabilityStatus::Failed;
            }
            let not_strict = self.tests.iter().filter(|t| t.capability == *cap && t.outcome == Outcome::NotStrict);
            r.failures.extend(not_strict.map(|t| format!("{}: {}", t.name, t.message.as_deref().unwrap_or(""))));
        }
        self.capabilities_passed = self.results.values().filter(|r| r.passed == Some(true)).count();
        self.conformance_level = strict_level(&self.results);
        self
    }

    /// The level counting the `SHOULD` cases too ([`strict_level`]); for a report of
    /// schema 1, whose level counted every case, its `conformance_level`.
    pub fn strict_level(&self) -> Level {
        self.strict_level.unwrap_or(self.conformance_level)
    }

    /// The report as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }

    /// `"capability::case: message"` for every failed case, in run order (for assertion
    /// messages: `assert!(f.is_empty(), "{}", f.join("\n"))`).
    pub fn failed_cases(&self) -> Vec<String> {
        self.tests
            .iter()
            .filter(|t| t.outcome == Outcome::Failed)
            .map(|t| format!("{}: {}", t.id, t.message.as_deref().unwrap_or("")))
            .collect()
    }

    /// Counts of cases by outcome: (passed, failed, not run: skipped, not implemented or
    /// not run for a missing need or a declared limit). Not-strict cases are in none of
    /// them ([`Report::not_strict_count`]).
    pub fn case_counts(&self) -> (usize, usize, usize) {
        let passed = self.tests.iter().filter(|t| t.outcome == Outcome::Passed).count();
        let failed = self.tests.iter().filter(|t| t.outcome == Outcome::Failed).count();
        let not_strict = self.not_strict_count();
        (passed, failed, self.tests.len() - passed - failed - not_strict)
    }

    /// Cases whose `SHOULD` rule failed ([`Outcome::NotStrict`]).
    pub fn not_strict_count(&self) -> usize {
        self.tests.iter().filter(|t| t.outcome == Outcome::NotStrict).count()
    }

    /// `"capability::case: message"` for every not-strict case, in run order.
    pub fn not_strict_cases(&self) -> Vec<String> {
        self.tests
            .iter()
            .filter(|t| t.outcome == Outcome::NotStrict)
            .map(|t| format!("{}: {}", t.id, t.message.as_deref().unwrap_or("")))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(detected: bool, passed: Option<bool>) -> CapabilityResult {
        CapabilityResult {
            detected,
            passed,
            tests_passed: 0,
            tests_failed: 0,
            tests_skipped: 0,
            tests_not_strict: 0,
            passed_strict: passed,
            failures: vec![],
            kind: CapabilityKind::Base,
            status: CapabilityStatus::Passed,
            skip_reason: None,
            duration_ms: 0.0,
        }
    }

    fn all(base: Option<bool>, ext: &[(Capability, bool, Option<bool>)]) -> BTreeMap<Capability, CapabilityResult> {
        let mut m = BTreeMap::new();
        for c in Capability::BASE {
            m.insert(c, result(base.is_some(), base));
        }
        for (c, d, p) in ext {
            m.insert(*c, result(*d, *p));
        }
        m
    }

    #[test]
    fn nothing_implemented_is_none() {
        assert_eq!(conformance_level(&all(None, &[])), Level::None);
        assert_eq!(conformance_level(&BTreeMap::new()), Level::None);
    }

    #[test]
    fn all_base_and_no_extended_is_full() {
        assert_eq!(conformance_level(&all(Some(true), &[(Capability::Prune, false, None)])), Level::Full);
    }

    #[test]
    fn failed_extended_is_base_partial() {
        let r = all(Some(true), &[(Capability::Prune, true, Some(false)), (Capability::CopyThread, true, Some(true))]);
        assert_eq!(conformance_level(&r), Level::BasePartial);
    }

    #[test]
    fn skipped_extended_does_not_lower_full() {
        assert_eq!(conformance_level(&all(Some(true), &[(Capability::Prune, true, None)])), Level::Full);
    }

    #[test]
    fn some_base_is_base() {
        let mut r = all(Some(true), &[]);
        r.get_mut(&Capability::List).unwrap().passed = Some(false);
        assert_eq!(conformance_level(&r), Level::Base);
        r.get_mut(&Capability::Put).unwrap().passed = None;
        assert_eq!(conformance_level(&r), Level::Base);
    }

    #[test]
    fn the_strict_level_counts_should_cases_the_level_does_not() {
        let mut r = all(Some(true), &[(Capability::Prune, true, Some(true))]);
        r.get_mut(&Capability::List).unwrap().passed_strict = Some(false);
        assert_eq!(conformance_level(&r), Level::Full);
        assert_eq!(strict_level(&r), Level::Base);
        r.get_mut(&Capability::Prune).unwrap().passed_strict = Some(false);
        r.get_mut(&Capability::List).unwrap().passed_strict = Some(true);
        assert_eq!((conformance_level(&r), strict_level(&r)), (Level::Full, Level::BasePartial));
    }

    #[test]
    fn only_extended_selected_is_not_full() {
        let r: BTreeMap<_, _> = [(Capability::DeltaChannelHistory, result(true, Some(true)))].into();
        assert_eq!(conformance_level(&r), Level::None);
    }

    fn report(results: BTreeMap<Capability, CapabilityResult>) -> Report {
        Report {
            schema_version: SCHEMA_VERSION,
            kit_version: KIT_VERSION.into(),
            checkpointer_name: "x".into(),
            conformance_level: conformance_level(&results),
            strict_level: Some(strict_level(&results)),
            strict: false,
            results,
            tests: vec![],
            capabilities_passed: 0,
            capabilities_detected: 0,
            duration_ms: 1.0,
            setup_error: None,
            warnings: vec![],
            declared_lacks: vec![],
            facts: BTreeMap::new(),
            failure_clusters: vec![],
            fuzz: None,
        }
    }

    #[test]
    fn a_selection_succeeds_when_none_failed_and_one_passed() {
        let one: BTreeMap<_, _> = [(Capability::Prune, result(true, Some(true)))].into();
        let mut r = report(one);
        assert!(r.is_selection_success() && !r.is_success(), "one extended capability passed, level NONE");
        r.results.insert(Capability::CopyThread, result(true, None));
        assert!(r.is_selection_success(), "a skipped one does not fail the selection");
        r.results.insert(Capability::Put, result(true, Some(false)));
        assert!(!r.is_selection_success(), "a failed one does");
        let mut skipped = report([(Capability::Prune, result(true, None))].into());
        assert!(!skipped.is_selection_success(), "nothing passed");
        skipped.results.insert(Capability::Put, result(true, Some(true)));
        skipped.setup_error = Some("no server".into());
        assert!(!skipped.is_selection_success(), "the run did not start");
    }

    #[test]
    fn report_json_uses_upstream_keys() {
        let r = Report {
            schema_version: SCHEMA_VERSION,
            kit_version: KIT_VERSION.into(),
            checkpointer_name: "x".into(),
            conformance_level: Level::BasePartial,
            strict_level: Some(Level::Base),
            strict: false,
            results: all(Some(true), &[]),
            tests: vec![],
            capabilities_passed: 5,
            capabilities_detected: 5,
            duration_ms: 1.0,
            setup_error: None,
            warnings: vec![],
            declared_lacks: vec![],
            facts: BTreeMap::new(),
            failure_clusters: vec![],
            fuzz: None,
        };
        let v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
        assert_eq!(v["conformance_level"], "BASE+PARTIAL");
        assert_eq!(v["results"]["put_writes"]["tests_passed"], 0);
        for key in ["detected", "passed", "tests_passed", "tests_failed", "tests_skipped", "failures"] {
            assert!(v["results"]["put"].get(key).is_some(), "missing {key}");
        }
        let back: Report = serde_json::from_value(v).unwrap();
        assert_eq!(back, r);
    }
}

/// One group of failed cases: a capability and a field.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailureCluster {
    /// The capability of the cases.
    pub capability: Capability,
    /// The field that differed, with map keys elided (`metadata[…]`), or `(no field named)`
    /// when the messages name none.
    pub field: String,
    /// The cases (rule names), in catalog order.
    pub cases: Vec<String>,
}
