//! The mutant catalog: every mutant with its name, its bug in one line, the capabilities it
//! breaks and what it covers (a CONTRACT.md rule, a bug scenario, an upstream gap), and the
//! tables of rules, scenarios and gaps the catalog must cover.
//!
//! The mutants themselves live in one module per capability (`selftest/src/mutants/`),
//! each ending with its list; [`MUTANTS`] gathers those lists.

use std::sync::Arc;

use conformance_core::Capability;

use crate::bug::Bug;
use crate::mutants::LISTS;

/// What a mutant stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Cover {
    /// A rule of docs/contract.md, by its id in [`RULES`].
    Rule(&'static str),
    /// A scenario of docs/reference/bug-scenarios.md (`"S01"`..`"S20"`).
    Scenario(&'static str),
    /// A gap of docs/reference/upstream-suite.md §7, by its id in [`GAPS`].
    Gap(&'static str),
}

impl std::fmt::Display for Cover {
    /// `rule:list.limit`, `S07`, `gap:7.2-latest-insertion-order`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Rule(r) => write!(f, "rule:{r}"),
            Self::Scenario(s) => f.write_str(s),
            Self::Gap(g) => write!(f, "gap:{g}"),
        }
    }
}

pub use conformance_spec::rules::{Rule, RULES, UNCHECKABLE};

/// What breaks the trace from `rules` to `mutants`, one line each, empty when every mutant
/// names at least one rule, all of them in `rules`, and every rule has a mutant (or an
/// entry in [`UNCHECKABLE`] saying why none can break it, and then no mutant).
pub fn untraced_mutants(rules: &[Rule], mutants: &[Mutant]) -> Vec<String> {
    let mut out = Vec::new();
    for m in mutants {
        let named: Vec<&str> =
            m.covers.iter().filter_map(|c| if let Cover::Rule(r) = c { Some(*r) } else { None }).collect();
        if named.is_empty() {
            out.push(format!("mutant {} names no rule (add a Cover::Rule)", m.name));
        }
        for r in named {
            if !rules.iter().any(|rule| rule.id == r) {
                out.push(format!("mutant {} names an unknown rule {r}", m.name));
            }
        }
    }
    for rule in rules {
        let broken = mutants.iter().any(|m| m.covers.contains(&Cover::Rule(rule.id)));
        let explained = UNCHECKABLE.iter().any(|(id, _)| *id == rule.id);
        if !broken && !explained {
            out.push(format!("rule {} has no mutant", rule.id));
        }
        if broken && explained {
            out.push(format!("rule {} has a mutant but is listed in UNCHECKABLE", rule.id));
        }
    }
    out
}

/// The bug scenarios of docs/reference/bug-scenarios.md and the capability that covers
/// them; S18-S20 belong to the concurrency and durability capabilities.
pub const SCENARIOS: &[(&str, &str)] = &[
    ("S01", "list limit edges"),
    ("S02", "special write retried in a mixed batch"),
    ("S03", "special channel collides with a regular index"),
    ("S04", "regular write re-delivered with another value"),
    ("S05", "writes arrive before their checkpoint, or survive a re-put"),
    ("S06", "unchanged channels vanish"),
    ("S07", "metadata filter ignored, or ignored on a fast path"),
    ("S08", "list drops pending writes"),
    ("S09", "parent points at itself"),
    ("S10", "root namespace treated as any namespace"),
    ("S11", "before ignored or misapplied"),
    ("S12", "list order"),
    ("S13", "delete leaves rows behind"),
    ("S14", "empty input raises"),
    ("S15", "prune breaks what it keeps"),
    ("S16", "copy loses lineage, writes or namespaces"),
    ("S17", "delete is a silent no-op"),
    ("S18", "many writers at once"),
    ("S19", "two instances on one file"),
    ("S20", "acknowledged write lost on restart"),
];

/// Scenarios no mutant here stands for, with the reason.
pub const SCENARIOS_WITHOUT_MUTANT: &[(&str, &str)] = &[];

/// The gaps of docs/reference/upstream-suite.md §7 that the spec covers and a saver can
/// exhibit: `(id, the gap)`. Harness gaps (§7.1) are the runner's, tested in core.
pub const GAPS: &[(&str, &str)] = &[
    ("7.2-value-fidelity", "bytes, NUL bytes, empty and large values untested"),
    ("7.2-metadata-fidelity", "bool, null, float, nested, parents and NUL in metadata untested"),
    ("7.2-ts", "a saver that overwrites ts passes"),
    ("7.2-updated-channels", "updated_channels never checked"),
    ("7.2-versions-seen", "versions_seen checked by key only"),
    ("7.2-v", "v only checked as 1"),
    ("7.2-string-versions", "string versions and version kinds untested"),
    ("7.2-next-version", "get_next_version never exercised"),
    ("7.2-list-no-ns", "a list without checkpoint_ns returning root only passes"),
    ("7.2-list-id", "a list ignoring the config's checkpoint_id passes"),
    ("7.2-empty-thread", "empty thread ids untested"),
    ("7.2-parent-config", "a wrong thread or namespace inside parent_config passes"),
    ("7.2-ns-isolation", "get_tuple ignoring ns with an id, and put_writes ignoring ns, pass"),
    ("7.2-latest-insertion-order", "latest by insertion order instead of max id passes"),
    ("7.2-out-of-order-ids", "ids inserted out of order never tested"),
    ("7.2-regular-last-wins", "a last-wins saver for regular writes passes"),
    ("7.2-special-first-wins", "a first-wins saver for special writes passes"),
    ("7.2-mixed-batches", "mixed special/regular batches and stored idx unchecked"),
    ("7.2-writes-order", "pending_writes order (reversed, task_path) unchecked"),
    ("7.2-writes-missing-checkpoint", "writes to a checkpoint not yet stored unchecked"),
    ("7.2-empty-writes", "empty writes lists unchecked"),
    ("7.2-reput", "a saver that silently ignores re-puts passes"),
    ("7.2-limit-before", "limit 0 / larger than the count; before unknown id; before with filter"),
    ("7.2-filters", "filters on null, bool, nested values untested"),
    ("7.3-delete-leaks", "delete leaving writes and blobs behind passes; other threads' writes; reuse after delete"),
    ("7.3-delete-for-runs", "a no-op delete_for_runs passes 3 of 7; other runs' writes unchecked"),
    ("7.3-copy-configs", "the target thread id inside copied configs and parent_configs unchecked"),
    ("7.3-copy-writes", "copying writes on non-latest checkpoints, several tasks, special channels unchecked"),
    ("7.3-copy-target", "copying onto a non-empty target; copy then mutate"),
    ("7.3-prune", "prune's kept checkpoint's values (blobs of pruned checkpoints) unchecked"),
    ("7.4-delta-ns", "delta history in namespaces other than root"),
    ("7.4-delta-forks", "forked chains and parent pointers out of id order"),
    ("7.4-delta-no-id", "delta history of a config without checkpoint_id"),
    ("7.4-delta-order", "several tasks and within-checkpoint write order"),
];

/// The saver a mutant wraps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Base {
    /// The reference [`checkpoint_memory::MemorySaver`]: one per case, shared by every
    /// instance the case opens; no location, so the crash test cannot open it in a child
    /// process ([`CASES_NEEDING_A_LOCATION`]).
    Memory,
    /// The reference SQLite saver (`checkpoint_sqlite`): a fresh database file per case,
    /// opened again by path for each instance and in the crash test's child process.
    Sqlite,
}

impl Base {
    /// The base's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Base::Memory => "memory",
            Base::Sqlite => "sqlite",
        }
    }

    /// Whether a fixture of this base names a location another process can open.
    pub fn has_location(self) -> bool {
        self == Base::Sqlite
    }
}

/// A saver that breaks exactly one rule.
#[derive(Clone, Copy, Debug)]
pub struct Mutant {
    /// A short snake_case name, unique in the catalog.
    pub name: &'static str,
    /// The bug in one line.
    pub description: &'static str,
    /// The capabilities whose cases must catch it; a case of another capability failing
    /// on it means the mutant breaks more than it says (or the spec tests out of place).
    pub breaks: &'static [Capability],
    /// The rules, scenarios and gaps it stands for.
    pub covers: &'static [Cover],
    /// The name of the [`Bug`] type, unique in the catalog.
    pub bug: &'static str,
    /// Makes the bug for one storage (called once per case, and once in a crash child).
    pub make: fn() -> Arc<dyn Bug>,
    /// The saver the bug wraps.
    pub base: Base,
    /// The strength of the rule it breaks (CONTRACT §5): a `MUST` mutant is killed only by a
    /// failed case, which costs the level; a `SHOULD` mutant ([`Mutant::should`]) also by a
    /// case that is "passed, not strict".
    pub strength: conformance_core::Strength,
}

impl Mutant {
    /// The same mutant, breaking a `SHOULD` rule: a not-strict case kills it.
    pub const fn should(mut self) -> Self {
        self.strength = conformance_core::Strength::Should;
        self
    }
}

/// A fresh `B` as a shared [`Bug`]: the `make` of a catalog entry.
pub fn make<B: Bug + Default>() -> Arc<dyn Bug> {
    Arc::new(B::default())
}

/// The number of mutants in `lists`.
const fn count(lists: &[&[Mutant]]) -> usize {
    let (mut n, mut i) = (0, 0);
    while i < lists.len() {
        n += lists[i].len();
        i += 1;
    }
    n
}

/// The mutants of `lists`, in order.
const fn gather<const N: usize>(lists: &[&[Mutant]]) -> [Mutant; N] {
    let mut out = [lists[0][0]; N];
    let (mut n, mut i) = (0, 0);
    while i < lists.len() {
        let mut j = 0;
        while j < lists[i].len() {
            out[n] = lists[i][j];
            n += 1;
            j += 1;
        }
        i += 1;
    }
    out
}

const ALL: [Mutant; count(LISTS)] = gather(LISTS);

/// Every mutant: the lists of the modules of `selftest/src/mutants/`, grouped by the
/// capability each breaks.
pub const MUTANTS: &[Mutant] = &ALL;

/// The mutant named `name`.
pub fn mutant(name: &str) -> Option<&'static Mutant> {
    MUTANTS.iter().find(|m| m.name == name)
}

/// Spec cases that no mutant makes fail, each with the reason it is there anyway:
/// `(case id, reason)`. A case no bug can fail is suspect; an entry here says why this one
/// is not. The self-test fails on a never-failing case missing from this table, and on an
/// entry whose case does fail on some mutant (a stale explanation).
pub const NEVER_FAILING_EXPLAINED: &[(&str, &str)] = &[];

/// Spec cases that need a storage location another process can open: they run only
/// against mutants whose [`Base`] has one, each with the reason: `(case id, reason)`.
pub const CASES_NEEDING_A_LOCATION: &[(&str, &str)] = &[(
    "durability::acknowledged_writes_survive_kill",
    "the crash test kills a child process that opens the storage by location; a mutant of the memory saver keeps \
     its storage in this process's memory, so only the mutants of the SQLite saver run it",
)];
