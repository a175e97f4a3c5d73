//! A spec case as the runner sees it: a capability, a name, and an async function over a
//! [`CaseEnv`]. The catalog of cases lives in `conformance-spec`; core knows none.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::registration::ReopenFn;
use crate::{BoxError, Capability, CheckpointSaver, Feature, Strength};

/// The future a case returns.
pub type CaseFuture = Pin<Box<dyn Future<Output = Result<(), Failure>> + Send + 'static>>;

/// The function behind a case: gets a fresh context, returns `Ok(())` or a [`Failure`].
pub type CaseFn = fn(CaseEnv) -> CaseFuture;

/// One spec test.
#[derive(Clone, Copy)]
pub struct SpecCase {
    /// The capability this case checks; it counts towards that capability's result.
    pub capability: Capability,
    /// The rule it checks, in snake_case (`regular_write_first_wins`). Unique within its
    /// capability; the trial name is `{registration}::{capability}::{name}`.
    pub name: &'static str,
    /// The upstream Python test names (`test_put_roundtrip`, ...) this case is the
    /// counterpart of; empty for the kit's own cases.
    pub upstream: &'static [&'static str],
    /// Run on a multi-thread runtime (for cases that need real parallelism) instead of
    /// the default current-thread runtime.
    pub multi_thread: bool,
    /// How long the case may take: the registration's case timeout, or a budget of its
    /// own ([`Budget`]).
    pub budget: Budget,
    /// Whether the case starts with the factory's instance open ([`CaseInstance`]).
    pub instance: CaseInstance,
    /// The capabilities the case's setup (or its check) calls besides its own, e.g.
    /// `[PutWrites, List]` for a `delete_thread` case that puts writes and lists. When one
    /// of them is not implemented the case is not run ([`crate::Outcome::NotRun`], "needs
    /// put_writes, not implemented") instead of failing on a rule it never checked; its
    /// own capability is then incomplete, not passed (CONTRACT §5). Declared in the
    /// module's case list (a default per module plus additions per case).
    pub needs: &'static [Capability],
    /// The strength of the rule the case checks (CONTRACT §5 "Strength of a rule"): a
    /// failed `SHOULD` case is [`crate::Outcome::NotStrict`], which never costs a level.
    pub strength: Strength,
    /// What the case assumes of the saver beyond its capabilities (CONTRACT §5 "Declared
    /// limits"): when the saver declares it lacks one of them ([`crate::Fixture::lacking`]),
    /// the case is not run, with the declaration as the reason.
    pub uses: &'static [Feature],
    /// The ids of the docs/contract.md rules it checks (`"put.reput"`), from the
    /// `#[rules(...)]` attribute of its `spec_cases!` entry; conformance-spec's `rules`
    /// module holds the table and checks every case names at least one.
    pub rules: &'static [&'static str],
    /// What the case works on beyond its function, given to it as
    /// [`CaseEnv::case_data`]: for a case made at run time from a user's file (a recorded
    /// trace under `--traces DIR`, docs/traces.md), that file's text; empty for the
    /// compiled cases, whose data is in their code.
    pub data: &'static str,
    /// The test itself.
    pub run: CaseFn,
}

/// How long a case may take, factory and cleanup included ([`SpecCase::budget`]).
#[derive(Clone, Copy, Debug)]
pub enum Budget {
    /// The registration's case timeout ([`crate::Registration::timeout`], `--timeout`,
    /// default [`crate::DEFAULT_TIMEOUT`]).
    CaseTimeout,
    /// A budget of the case's own, computed by this function when the case starts, for a
    /// case whose work is counted (the durability crash test: an allowance per kill), so
    /// that its verdict depends neither on a timeout chosen for single calls nor on the
    /// machine's load. The registration's case timeout still applies when it is longer
    /// (`--timeout` can only give such a case more time).
    Own(fn() -> Duration),
}

/// The saver instance a case starts with ([`SpecCase::instance`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaseInstance {
    /// The factory's instance, open: [`CaseEnv::saver`].
    Open,
    /// None open: the runner closes the factory's instance before the case starts (drops
    /// its handle and awaits the storage's [`crate::Storage::release`]), keeping its
    /// storage, and the case opens the instances it needs with [`CaseEnv::reopen`], each
    /// closed when dropped. For a case whose other process opens the storage (the
    /// durability crash test's child), which a saver that allows one process per file
    /// refuses while an instance is open (DuckDB: "Conflicting lock is held").
    /// [`CaseEnv::saver`] is then a stand-in whose every base call fails saying so.
    Closed,
}

impl SpecCase {
    /// A case of `capability` named `name` running `run`, with the defaults: no upstream
    /// names, a current-thread runtime, the factory's instance open, the registration's
    /// case timeout, no needs, a MUST rule, no features used.
    pub const fn new(capability: Capability, name: &'static str, run: CaseFn) -> Self {
        Self {
            capability,
            name,
            upstream: &[],
            multi_thread: false,
            budget: Budget::CaseTimeout,
            instance: CaseInstance::Open,
            needs: &[],
            strength: Strength::Must,
            uses: &[],
            rules: &[],
            data: "",
            run,
        }
    }

    /// The time limit of this case under a registration whose case timeout is
    /// `case_timeout` ([`SpecCase::budget`]).
    pub fn time_limit(&self, case_timeout: Duration) -> Duration {
        match self.budget {
            Budget::CaseTimeout => case_timeout,
            Budget::Own(budget) => budget().max(case_timeout),
        }
    }

    /// `capability::name`, the id used in reports.
    pub fn id(&self) -> String {
        format!("{}::{}", self.capability, self.name)
    }

    /// The first capability of [`SpecCase::needs`] (other than its own) for which
    /// `implemented` is false: the reason the case cannot run.
    pub fn missing_need(&self, implemented: impl Fn(Capability) -> bool) -> Option<Capability> {
        self.needs.iter().copied().find(|n| *n != self.capability && !implemented(*n))
    }

    /// The first feature of [`SpecCase::uses`] that `lacks` holds: the reason the case is
    /// not run on that saver.
    pub fn lacked_feature(&self, lacks: &BTreeSet<Feature>) -> Option<Feature> {
        self.uses.iter().copied().find(|f| lacks.contains(f))
    }
}

impl fmt::Debug for SpecCase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SpecCase")
            .field("capability", &self.capability)
            .field("name", &self.name)
            .field("strength", &self.strength)
            .finish()
    }
}

/// Why a case failed: one message that says which call, which checkpoint, what was expected
/// and what came back. Or, made by [`Failure::not_run`], why the case could not check its
/// rule at all: the case is then reported not run ([`crate::Outcome::NotRun`]), not failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The message.
    pub message: String,
    /// True for [`Failure::not_run`].
    not_run: bool,
    /// True for [`Failure::must`].
    must: bool,
}

impl Failure {
    /// A failure with this message.
    pub fn new(message: impl Into<String>) -> Self {
        Self { message: message.into(), not_run: false, must: false }
    }

    /// A failure of a MUST rule found by a SHOULD case (CONTRACT §5 "Strength of a rule"):
    /// the case's own rule is stricter than LangGraph, but what came back breaks a rule
    /// that is not, e.g. a kept channel read back with another thread's value where its
    /// SHOULD rule allows only the stored value or nothing. The runner reports it
    /// [`crate::Outcome::Failed`], never "passed, not strict". In a MUST case it is the
    /// same as [`Failure::new`].
    pub fn must(message: impl Into<String>) -> Self {
        Self { message: message.into(), not_run: false, must: true }
    }

    /// This failure as a [`Failure::must`] (a not-run stays not run).
    pub fn into_must(self) -> Self {
        Self { must: !self.not_run, ..self }
    }

    /// Whether this is a [`Failure::must`].
    pub fn is_must(&self) -> bool {
        self.must
    }

    /// The case could not check its rule: a call of another capability, made to prepare or
    /// read back its data, answered `Unsupported` (CONTRACT §5: a case fails only on its
    /// own rule). The runner reports the case [`crate::Outcome::NotRun`] with `message`
    /// ("not run: needs ..."), libtest and nextest show it ignored, and its capability
    /// is incomplete, not passed.
    pub fn not_run(message: impl Into<String>) -> Self {
        Self { message: message.into(), not_run: true, must: false }
    }

    /// Whether this is a [`Failure::not_run`].
    pub fn is_not_run(&self) -> bool {
        self.not_run
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Failure {}

static UNIQUE: AtomicU64 = AtomicU64::new(0);

/// Facts a case reports, shared between its [`CaseEnv`] clones and the runner.
pub(crate) type Facts = Arc<Mutex<BTreeMap<String, serde_json::Value>>>;

/// The environment the runner gives a case: a fresh saver from the registration's
/// factory, the reopen function and storage location of its fixture, the facts it records
/// and its unique thread ids.
///
/// Spec cases do not use it directly: `conformance_spec::Cx` (the case's context, with
/// the calls and comparisons) wraps it. Named apart from `Cx` so that "context" means one
/// thing.
#[derive(Clone)]
pub struct CaseEnv {
    /// The saver under test, fresh for this case.
    pub saver: Arc<dyn CheckpointSaver>,
    reopen: Option<ReopenFn>,
    prefix: String,
    location: Option<String>,
    registration: String,
    facts: Facts,
    lacks: BTreeSet<Feature>,
    no_latest_read: bool,
    data: &'static str,
}

impl CaseEnv {
    /// A context over `saver`. `reopen`, when given, opens another instance on the same
    /// storage (used by the durability and two-instance cases).
    pub fn new(saver: Arc<dyn CheckpointSaver>, reopen: Option<ReopenFn>) -> Self {
        let prefix = uuid::Uuid::new_v4().simple().to_string()[..12].to_owned();
        Self {
            saver,
            reopen,
            prefix,
            location: None,
            registration: String::new(),
            facts: Facts::default(),
            lacks: BTreeSet::new(),
            no_latest_read: false,
            data: "",
        }
    }

    /// The same context with the storage location of the fixture
    /// ([`crate::Fixture::location`]) and the registration's name, which the
    /// durability crash test hands to its child process.
    pub fn for_registration(mut self, registration: impl Into<String>, location: Option<String>) -> Self {
        self.registration = registration.into();
        self.location = location;
        self
    }

    /// The fixture's storage location ([`crate::Fixture::location`]), if it has one.
    pub fn location(&self) -> Option<&str> {
        self.location.as_deref()
    }

    /// The name of the registration the case runs under (empty when the context was built
    /// by hand).
    pub fn registration_name(&self) -> &str {
        &self.registration
    }

    /// Records a fact about the run, e.g. `fact("kills", 20)` in a durability case. The
    /// runner copies a case's facts into its [`crate::CaseResult::facts`] under
    /// `{capability}.{key}` (`durability.kills`), and the report gathers them in
    /// [`crate::Report::facts`]. Recording a key again replaces its value.
    pub fn fact(&self, key: impl Into<String>, value: impl Into<serde_json::Value>) {
        self.facts.lock().unwrap_or_else(|e| e.into_inner()).insert(key.into(), value.into());
    }

    /// The facts recorded so far, by their unqualified key.
    pub fn facts(&self) -> BTreeMap<String, serde_json::Value> {
        self.facts.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The same context for a saver that declared it lacks `lacks`
    /// ([`crate::Fixture::lacking`]).
    pub fn with_lacks(mut self, lacks: BTreeSet<Feature>) -> Self {
        self.lacks = lacks;
        self
    }

    /// The features the saver declared it lacks ([`crate::Fixture::lacking`]).
    pub fn lacks(&self) -> &BTreeSet<Feature> {
        &self.lacks
    }

    /// True unless the saver declared that it lacks `feature`.
    pub fn has(&self, feature: Feature) -> bool {
        !self.lacks.contains(&feature)
    }

    /// False when the fixture declared that the saver's reads carry no `task_path`
    /// ([`Feature::TaskPathOnReads`]).
    pub fn task_path_on_reads(&self) -> bool {
        self.has(Feature::TaskPathOnReads)
    }

    /// The same context with the case's [`SpecCase::data`].
    pub(crate) fn with_data(mut self, data: &'static str) -> Self {
        self.data = data;
        self
    }

    /// The case's [`SpecCase::data`]: a user's trace file for a case made from one
    /// (`--traces DIR`), empty for a compiled case.
    pub fn case_data(&self) -> &'static str {
        self.data
    }

    /// The same context for a saver that detection found without a latest `get_tuple`
    /// ([`crate::Detection::no_latest_read`]).
    pub(crate) fn with_no_latest_read(mut self, no_latest_read: bool) -> Self {
        self.no_latest_read = no_latest_read;
        self
    }

    /// True when detection found that the saver reads by id but has no latest `get_tuple`
    /// (a config without checkpoint_id answered `Unsupported`).
    pub fn no_latest_read(&self) -> bool {
        self.no_latest_read
    }

    /// The same context recording its facts into `facts` (the runner's map).
    pub(crate) fn with_facts(mut self, facts: Facts) -> Self {
        self.facts = facts;
        self
    }

    /// A thread id unique to this case and `label`, e.g. `t-3f2a9c1b0d4e-main-7`. Cases
    /// use fresh thread ids so a saver shared between cases (a lifespan-owned server)
    /// cannot leak state from one case into another.
    pub fn thread(&self, label: &str) -> String {
        format!("t-{}-{}-{}", self.prefix, label, UNIQUE.fetch_add(1, Ordering::Relaxed))
    }

    /// True when the registration can open a second instance on the same storage.
    pub fn can_reopen(&self) -> bool {
        self.reopen.is_some()
    }

    /// Opens another instance on the same storage as [`CaseEnv::saver`].
    ///
    /// # Errors
    /// A [`Failure`] when the registration has no reopen function or it failed.
    pub async fn reopen(&self) -> Result<Arc<dyn CheckpointSaver>, Failure> {
        let Some(reopen) = &self.reopen else {
            return Err(Failure::new("this registration cannot open a second instance on the same storage"));
        };
        reopen().await.map_err(|e: BoxError| Failure::new(format!("opening a second instance failed: {e}")))
    }
}
