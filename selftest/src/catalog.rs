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
    /// A rule of docs/contract.md, by its id in [`CONTRACT_RULES`].
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

/// One rule of docs/contract.md: `(id, section, the rule in short)`.
pub type Rule = (&'static str, &'static str, &'static str);

/// Every rule of docs/contract.md that a saver can break, one line each.
///
/// CONTRACT §5 (conformance levels) is the runner's rule, not a saver's; it is tested by
/// conformance-core's own tests, not by mutants.
pub const CONTRACT_RULES: &[Rule] = &[
    ("config.thread_id", "§1 Config", "an empty thread_id is InvalidConfig, never a panic or a default"),
    ("config.missing_thread", "§1 Config", "a config without thread_id reads no thread (never \"undefined\")"),
    ("config.missing_namespace", "§1 Config", "a config without checkpoint_ns is the root namespace"),
    ("value.bytes", "§1 Typed value", "tag and bytes round-trip byte for byte (empty, NUL, non-UTF-8, 16 MiB)"),
    ("version.kind", "§1 Channel version", "a version round-trips with its kind"),
    ("checkpoint.fields", "§1 Checkpoint", "every field round-trips; updated_channels None and [] stay distinct"),
    ("metadata.json", "§1 Metadata", "any key and JSON value round-trips exactly, or the whole put is refused"),
    (
        "ids.opaque",
        "§1 Identifiers",
        "identifiers compared byte for byte: never trimmed, case-folded, normalised, split or matched as patterns",
    ),
    ("tuple.parent_config", "§1 Checkpoint tuple", "parent_config is (thread, namespace, parent id) or none"),
    ("put.stored", "§2 put", "stored under (thread, namespace, checkpoint.id); the parent is config.checkpoint_id"),
    ("put.returns", "§2 put", "returns the same thread and namespace and checkpoint_id = checkpoint.id"),
    ("put.values", "§2 put", "each channel of channel_versions reads the value stored at that version"),
    ("put.emptied", "§2 put", "a channel in new_versions without a value is absent on read"),
    ("put.outside_versions", "§2 put", "a channel not in channel_versions is absent on read"),
    ("put.siblings", "§2 put", "sibling checkpoints read back their own values"),
    ("put.reput", "§2 put", "re-putting an id replaces checkpoint, metadata and parent, keeps its writes"),
    ("put.owns", "§2 put", "nothing the caller does after put returns changes what is read back"),
    ("put_writes.id_required", "§2 put_writes", "checkpoint_id is required (InvalidConfig)"),
    ("put_writes.early", "§2 put_writes", "writes may arrive before their checkpoint and show up once it is put"),
    (
        "put_writes.index",
        "§2 put_writes",
        "special channels get their fixed index; others their position, specials counted",
    ),
    ("put_writes.key", "§2 put_writes", "the key is (thread, namespace, checkpoint id, task id, index)"),
    ("put_writes.regular_first", "§2 put_writes", "regular writes: the first write for a key wins"),
    ("put_writes.special_last", "§2 put_writes", "special writes: the last write wins"),
    ("put_writes.per_write", "§2 put_writes", "the rule is decided per write, never per call"),
    ("put_writes.empty", "§2 put_writes", "an empty list is a no-op"),
    ("put_writes.belongs", "§2 put_writes", "writes appear with their checkpoint only, in its namespace only"),
    ("get_tuple.by_id", "§2 get_tuple", "with checkpoint_id: exactly that checkpoint in (thread, namespace), or none"),
    ("get_tuple.latest", "§2 get_tuple", "without it: the greatest id in (thread, namespace), or none"),
    ("get_tuple.writes_order", "§2 get_tuple", "pending_writes by (task_path, task_id, index), index signed"),
    ("list.scope", "§2 list", "the config's thread; its namespace if given, else all; only checkpoint_id if given"),
    ("list.filter", "§2 list", "every key equal by JSON equality (numbers by value, null matches missing)"),
    ("list.before", "§2 list", "only ids strictly less than before; an unknown id still cuts"),
    ("list.limit", "§2 list", "at most limit, applied after scope, filter and before; 0 gives nothing"),
    ("list.order", "§2 list", "id descending across the whole result; equal ids namespace ascending"),
    ("list.tuples", "§2 list", "each tuple carries get_tuple's parent_config and pending_writes"),
    ("delete_thread.everything", "§2 delete_thread", "removes every checkpoint, value and write in every namespace"),
    ("delete_thread.unknown", "§2 delete_thread", "an unknown thread is a no-op"),
    ("delete_thread.others", "§2 delete_thread", "other threads are untouched"),
    ("delete_thread.nothing_back", "§2 delete_thread", "a re-put shows no old writes and no old values"),
    ("next_version.greater", "§2 get_next_version", "strictly greater than current (1 for none)"),
    ("extended.noop_inputs", "§3", "supported extended methods accept empty and unknown inputs as no-ops"),
    (
        "delete_for_runs.deletes",
        "§3 delete_for_runs",
        "deletes each listed run's checkpoints, in every thread and namespace, with writes",
    ),
    ("delete_for_runs.others", "§3 delete_for_runs", "other checkpoints stay"),
    (
        "copy_thread.copies",
        "§3 copy_thread",
        "every checkpoint of every namespace with ids, metadata, values, versions, writes",
    ),
    ("copy_thread.target_configs", "§3 copy_thread", "configs and parent configs in the copy name the target"),
    ("copy_thread.source_unchanged", "§3 copy_thread", "the source is unchanged"),
    ("copy_thread.twice", "§3 copy_thread", "copying twice leaves the target as after one copy"),
    ("copy_thread.missing_source", "§3 copy_thread", "a missing source leaves the target untouched"),
    ("prune.keep_latest", "§3 prune", "keeps the newest checkpoint of each (thread, namespace), its writes and values"),
    ("prune.delete", "§3 prune", "delete removes the threads entirely"),
    ("prune.others", "§3 prune", "other threads are untouched"),
    ("delta.target", "§3 delta_channel_history", "the target is resolved as get_tuple does"),
    ("delta.walk", "§3 delta_channel_history", "walk parent_config links from the target's parent"),
    (
        "delta.seed",
        "§3 delta_channel_history",
        "an ancestor's writes first, then its value is the seed and the walk stops",
    ),
    ("delta.exclude_target", "§3 delta_channel_history", "the target's own writes are excluded"),
    ("delta.order", "§3 delta_channel_history", "writes oldest first, in get_tuple order within a checkpoint"),
    ("delta.channels", "§3 delta_channel_history", "one entry per requested channel; none requested gives empty"),
    ("errors.no_panic", "§4 Errors", "every input gets Ok or a typed error, never a panic"),
    ("errors.atomic", "§4 Errors", "a failed call leaves nothing half-written"),
    ("concurrency.serial", "§4 Concurrency", "concurrent calls behave as if made one after another"),
    ("durability.acknowledged", "§4 Durability", "acknowledged data survives a crash and a reopen"),
];

/// Rules no mutant in this catalog stands for, each with the reason.
pub const RULES_WITHOUT_MUTANT: &[(&str, &str)] = &[(
    "put.owns",
    "put takes the checkpoint by value and tuples share an Arc; the only way for a caller to change a returned \
         tuple is Arc::make_mut, which copies, so no safe Rust saver can alias what the caller holds",
)];

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
