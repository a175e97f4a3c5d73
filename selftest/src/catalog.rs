//! The mutant catalog: every mutant with its name, its bug in one line, the capabilities it
//! breaks and what it covers (a CONTRACT.md rule, a bug scenario, an upstream gap), and the
//! tables of rules, scenarios and gaps the catalog must cover.

use conformance_core::Capability;

use crate::saver::Bug;

/// What a mutant stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Cover {
    /// A rule of shared/CONTRACT.md, by its id in [`CONTRACT_RULES`].
    Rule(&'static str),
    /// A scenario of shared/reference/bug-scenarios.md (`"S01"`..`"S20"`).
    Scenario(&'static str),
    /// A gap of shared/reference/upstream-suite.md §7, by its id in [`GAPS`].
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

/// One rule of shared/CONTRACT.md: `(id, section, the rule in short)`.
pub type Rule = (&'static str, &'static str, &'static str);

/// Every rule of shared/CONTRACT.md that a saver can break, one line each.
///
/// CONTRACT §5 (conformance levels) is the runner's rule, not a saver's; it is tested by
/// conformance-core's own tests, not by mutants.
pub const CONTRACT_RULES: &[Rule] = &[
    ("config.thread_id", "§1 Config", "an empty thread_id is InvalidConfig, never a panic or a default"),
    ("value.bytes", "§1 Typed value", "tag and bytes round-trip byte for byte (empty, NUL, non-UTF-8, 16 MiB)"),
    ("version.kind", "§1 Channel version", "a version round-trips with its kind"),
    ("checkpoint.fields", "§1 Checkpoint", "every field round-trips; updated_channels None and [] stay distinct"),
    ("metadata.json", "§1 Metadata", "any key and JSON value round-trips exactly, or the whole put is refused"),
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

/// The bug scenarios of shared/reference/bug-scenarios.md and the capability that covers
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

/// The gaps of shared/reference/upstream-suite.md §7 that the spec covers and a saver can
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
    /// The bug the [`crate::MutantSaver`] is built with.
    pub bug: Bug,
}

use Capability::{
    Concurrency as CC, CopyThread as CT, DeleteForRuns as DR, DeleteThread as DT, DeltaChannelHistory as DH,
    Durability as DU, GetTuple as GT, List as LS, Prune as PR, Put as P, PutWrites as PW,
};
use Cover::{Gap as G, Rule as R, Scenario as S};

const BASE: &[Capability] = &[P, PW, GT, LS, DT];

macro_rules! mutant {
    ($name:literal, $bug:ident, $caps:expr, [$($cover:expr),* $(,)?], $desc:literal) => {
        Mutant { name: $name, description: $desc, breaks: $caps, covers: &[$($cover),*], bug: Bug::$bug }
    };
}

/// Every mutant, grouped by the capability it breaks.
pub const MUTANTS: &[Mutant] = &[
    // ---- §1 types, through put -----------------------------------------------------------
    mutant!(
        "empty_thread_id_defaulted",
        EmptyThreadIdDefaulted,
        BASE,
        [R("config.thread_id"), G("7.2-empty-thread")],
        "an empty thread_id silently becomes \"default\" in every base method"
    ),
    mutant!(
        "empty_thread_id_panics",
        EmptyThreadIdPanics,
        BASE,
        [R("config.thread_id"), R("errors.no_panic"), G("7.2-empty-thread")],
        "an empty thread_id panics in every base method"
    ),
    mutant!(
        "type_tag_dropped",
        TypeTagDropped,
        &[P, GT],
        [R("value.bytes"), G("7.2-value-fidelity")],
        "channel values are stored without their type tag"
    ),
    mutant!(
        "empty_bytes_dropped",
        EmptyBytesDropped,
        &[P],
        [R("value.bytes"), G("7.2-value-fidelity")],
        "a channel value with empty bytes is not stored (reads as absent)"
    ),
    mutant!(
        "nul_bytes_stripped",
        NulBytesStripped,
        &[P],
        [R("value.bytes"), G("7.2-value-fidelity")],
        "NUL bytes are stripped from channel values"
    ),
    mutant!(
        "non_utf8_replaced",
        NonUtf8Replaced,
        &[P],
        [R("value.bytes"), G("7.2-value-fidelity")],
        "channel value bytes that are not UTF-8 go through lossy decoding"
    ),
    mutant!(
        "large_value_truncated",
        LargeValueTruncated,
        &[P],
        [R("value.bytes"), G("7.2-value-fidelity")],
        "channel values are truncated to 1 MiB"
    ),
    mutant!(
        "int_version_read_as_string",
        IntVersionReadAsString,
        &[P, GT],
        [R("version.kind"), G("7.2-string-versions")],
        "integer channel versions come back as strings (1 -> \"1\")"
    ),
    mutant!(
        "versions_seen_dropped",
        VersionsSeenDropped,
        &[P, GT],
        [R("checkpoint.fields"), G("7.2-versions-seen")],
        "versions_seen is not stored"
    ),
    mutant!(
        "updated_channels_empty_as_none",
        UpdatedChannelsEmptyAsNone,
        &[P],
        [R("checkpoint.fields"), G("7.2-updated-channels")],
        "updated_channels Some([]) comes back as None"
    ),
    mutant!(
        "ts_overwritten",
        TsOverwritten,
        &[P, GT],
        [R("checkpoint.fields"), G("7.2-ts")],
        "ts is overwritten with the saver's own clock"
    ),
    mutant!(
        "format_version_forced",
        FormatVersionForced,
        &[P, GT],
        [R("checkpoint.fields"), G("7.2-v")],
        "v is always stored as 1"
    ),
    mutant!(
        "metadata_float_truncated",
        MetadataFloatTruncated,
        &[P],
        [R("metadata.json"), G("7.2-metadata-fidelity")],
        "float metadata values are truncated to integers"
    ),
    mutant!(
        "metadata_null_dropped",
        MetadataNullDropped,
        &[P],
        [R("metadata.json"), G("7.2-metadata-fidelity")],
        "metadata keys whose value is null are dropped"
    ),
    mutant!(
        "metadata_nested_stringified",
        MetadataNestedStringified,
        &[P, GT],
        [R("metadata.json"), G("7.2-metadata-fidelity")],
        "nested metadata objects and arrays are stored as JSON text"
    ),
    mutant!(
        "metadata_nul_stripped",
        MetadataNulStripped,
        &[P],
        [R("metadata.json"), G("7.2-metadata-fidelity")],
        "NUL characters are stripped from metadata strings (upstream's behaviour)"
    ),
    mutant!(
        "metadata_non_ascii_dropped",
        MetadataNonAsciiDropped,
        &[P],
        [R("metadata.json"), G("7.2-metadata-fidelity")],
        "non-ASCII characters are dropped from metadata strings (errors=\"ignore\")"
    ),
    mutant!(
        "metadata_parents_dropped",
        MetadataParentsDropped,
        &[P, GT],
        [R("metadata.json"), G("7.2-metadata-fidelity")],
        "the parents metadata key is not stored"
    ),
    mutant!(
        "metadata_bool_as_integer",
        MetadataBoolAsInteger,
        &[P],
        [R("metadata.json"), G("7.2-metadata-fidelity")],
        "boolean metadata values are stored as 0/1"
    ),
    mutant!(
        "metadata_nul_panics",
        MetadataNulPanics,
        &[P],
        [R("errors.no_panic"), R("metadata.json")],
        "put panics on a NUL character in a metadata string"
    ),
    mutant!(
        "metadata_nul_refused_after_storing",
        MetadataNulRefusedAfterStoring,
        &[P],
        [R("errors.atomic"), R("metadata.json")],
        "put refuses a NUL in metadata with InvalidInput, but only after storing the checkpoint"
    ),
    // ---- §2 put --------------------------------------------------------------------------
    mutant!(
        "put_returns_parent_id",
        PutReturnsParentId,
        &[P],
        [R("put.returns")],
        "put returns the parent's id instead of the stored checkpoint's"
    ),
    mutant!(
        "put_returns_root_namespace",
        PutReturnsRootNamespace,
        &[P],
        [R("put.returns")],
        "put returns the root namespace whatever the config's"
    ),
    mutant!(
        "put_ignores_namespace",
        PutIgnoresNamespace,
        &[P],
        [R("put.stored")],
        "put stores every checkpoint in the root namespace"
    ),
    mutant!(
        "parent_not_stored",
        ParentNotStored,
        &[P, GT],
        [R("put.stored"), R("tuple.parent_config")],
        "put does not record the parent: parent_config is always none"
    ),
    mutant!(
        "parent_is_self",
        ParentIsSelf,
        &[P, GT, LS],
        [R("tuple.parent_config"), S("S09")],
        "parent_config names the checkpoint itself"
    ),
    mutant!(
        "parent_config_root_namespace",
        ParentConfigRootNamespace,
        &[P, GT, LS],
        [R("tuple.parent_config"), G("7.2-parent-config")],
        "parent_config names the root namespace instead of the checkpoint's"
    ),
    mutant!(
        "parent_config_blank_thread",
        ParentConfigBlankThread,
        &[P, GT, LS],
        [R("tuple.parent_config"), G("7.2-parent-config")],
        "parent_config has an empty thread id"
    ),
    mutant!(
        "only_new_versions_values_stored",
        OnlyNewVersionsValuesStored,
        &[P],
        [R("put.values"), S("S06")],
        "only the values of new_versions channels are stored; unchanged channels vanish"
    ),
    mutant!(
        "uncarried_channels_vanish",
        UncarriedChannelsVanish,
        &[P],
        [R("put.values"), S("S06")],
        "a channel whose value the put did not carry reads as absent, though stored earlier"
    ),
    mutant!(
        "channel_outside_versions_kept",
        ChannelOutsideVersionsKept,
        &[P],
        [R("put.outside_versions")],
        "a channel missing from channel_versions keeps the parent's (or the carried) value"
    ),
    mutant!(
        "emptied_channel_keeps_old_value",
        EmptiedChannelKeepsOldValue,
        &[P],
        [R("put.emptied")],
        "a channel in new_versions without a value keeps the parent's value"
    ),
    mutant!(
        "sibling_values_collide",
        SiblingValuesCollide,
        &[P],
        [R("put.siblings")],
        "values are keyed by (channel, version) only, so siblings overwrite each other"
    ),
    mutant!(
        "reput_ignored",
        ReputIgnored,
        &[P],
        [R("put.reput"), G("7.2-reput")],
        "re-putting an existing id is silently ignored"
    ),
    mutant!(
        "reput_keeps_old_parent",
        ReputKeepsOldParent,
        &[P],
        [R("put.reput")],
        "re-putting an existing id keeps its old parent (upstream Postgres)"
    ),
    mutant!(
        "reput_drops_writes",
        ReputDropsWrites,
        &[P, PW],
        [R("put.reput"), S("S05")],
        "re-putting an existing id drops its pending writes"
    ),
    mutant!(
        "reput_merges_metadata",
        ReputMergesMetadata,
        &[P],
        [R("put.reput")],
        "re-putting an existing id merges the old metadata keys into the new"
    ),
    mutant!(
        "next_version_repeats",
        NextVersionRepeats,
        &[P],
        [R("next_version.greater"), G("7.2-next-version")],
        "get_next_version returns the current version"
    ),
    mutant!(
        "next_version_string_restarts",
        NextVersionStringRestarts,
        &[P],
        [R("next_version.greater"), G("7.2-string-versions")],
        "get_next_version of a string version restarts at integer 1"
    ),
    // ---- §2 put_writes -------------------------------------------------------------------
    mutant!(
        "writes_without_checkpoint_id_accepted",
        WritesWithoutCheckpointIdAccepted,
        &[PW],
        [R("put_writes.id_required")],
        "put_writes without checkpoint_id returns Ok and stores nothing"
    ),
    mutant!(
        "empty_writes_rejected",
        EmptyWritesRejected,
        &[PW],
        [R("put_writes.empty"), S("S14"), G("7.2-empty-writes")],
        "put_writes with an empty list fails with InvalidInput"
    ),
    mutant!(
        "writes_ignore_namespace",
        WritesIgnoreNamespace,
        &[PW],
        [R("put_writes.belongs"), R("put_writes.key"), G("7.2-ns-isolation")],
        "put_writes stores writes in the root namespace whatever the config's"
    ),
    mutant!(
        "writes_before_checkpoint_dropped",
        WritesBeforeCheckpointDropped,
        &[PW],
        [R("put_writes.early"), S("S05"), G("7.2-writes-missing-checkpoint")],
        "writes for a checkpoint not stored yet are dropped"
    ),
    mutant!(
        "writes_attach_to_latest",
        WritesAttachToLatest,
        &[PW],
        [R("put_writes.belongs")],
        "writes go to the latest checkpoint of the namespace, not the one named"
    ),
    mutant!(
        "regular_write_last_wins",
        RegularWriteLastWins,
        &[PW],
        [R("put_writes.regular_first"), S("S04"), G("7.2-regular-last-wins")],
        "a repeated regular write replaces the first"
    ),
    mutant!(
        "special_write_first_wins",
        SpecialWriteFirstWins,
        &[PW],
        [R("put_writes.special_last"), G("7.2-special-first-wins")],
        "a repeated special write is ignored"
    ),
    mutant!(
        "write_rule_decided_per_call",
        WriteRuleDecidedPerCall,
        &[PW],
        [R("put_writes.per_write"), S("S02"), G("7.2-mixed-batches")],
        "replace-or-ignore is decided per call: a special write in a mixed retry keeps the stale value"
    ),
    mutant!(
        "special_index_is_position",
        SpecialIndexIsPosition,
        &[PW],
        [R("put_writes.index"), S("S03"), G("7.2-mixed-batches")],
        "special channels get their position as index and collide with regular writes"
    ),
    mutant!(
        "positions_skip_specials",
        PositionsSkipSpecials,
        &[PW],
        [R("put_writes.index"), G("7.2-mixed-batches")],
        "special entries do not count towards the positions of regular writes"
    ),
    mutant!(
        "write_key_ignores_task",
        WriteKeyIgnoresTask,
        &[PW],
        [R("put_writes.key")],
        "the write key ignores the task id: two tasks collide on the same index"
    ),
    mutant!(
        "writes_sorted_by_channel",
        WritesSortedByChannel,
        &[PW],
        [R("put_writes.index")],
        "the regular writes of one call get their indexes in channel order, not call order"
    ),
    mutant!(
        "write_key_ignores_checkpoint",
        WriteKeyIgnoresCheckpoint,
        &[PW],
        [R("put_writes.key"), R("put_writes.belongs")],
        "the write key leaves out the checkpoint id: every checkpoint of the namespace shows the same writes"
    ),
    mutant!(
        "write_type_tag_dropped",
        WriteTypeTagDropped,
        &[PW, GT],
        [R("value.bytes"), G("7.2-value-fidelity")],
        "written values are stored without their type tag"
    ),
    mutant!(
        "write_value_truncated",
        WriteValueTruncated,
        &[PW],
        [R("value.bytes"), G("7.2-value-fidelity")],
        "written values are truncated to 1 MiB"
    ),
    mutant!(
        "regular_writes_duplicated",
        RegularWritesDuplicated,
        &[PW],
        [R("put_writes.regular_first"), S("S04")],
        "a repeated regular write is stored again"
    ),
    // ---- §2 get_tuple --------------------------------------------------------------------
    mutant!(
        "latest_by_insertion_order",
        LatestByInsertionOrder,
        &[GT],
        [R("get_tuple.latest"), S("S12"), G("7.2-latest-insertion-order"), G("7.2-out-of-order-ids")],
        "the latest checkpoint is the one put last, not the greatest id"
    ),
    mutant!(
        "get_by_id_ignores_namespace",
        GetByIdIgnoresNamespace,
        &[GT],
        [R("get_tuple.by_id"), G("7.2-ns-isolation")],
        "get_tuple with an id ignores the namespace"
    ),
    mutant!(
        "root_latest_spans_namespaces",
        RootLatestSpansNamespaces,
        &[GT],
        [R("get_tuple.latest"), S("S10")],
        "get_tuple without id in the root namespace returns the latest of any namespace"
    ),
    mutant!(
        "missing_id_falls_back_to_latest",
        MissingIdFallsBackToLatest,
        &[GT],
        [R("get_tuple.by_id")],
        "get_tuple of an id that is not stored returns the latest checkpoint"
    ),
    mutant!(
        "get_tuple_ignores_thread",
        GetTupleIgnoresThread,
        &[GT],
        [R("get_tuple.by_id"), R("get_tuple.latest")],
        "get_tuple ignores the thread: an id is found in any thread, the latest is over every thread"
    ),
    mutant!(
        "get_tuple_missing_gives_empty",
        GetTupleMissingGivesEmpty,
        &[GT],
        [R("get_tuple.by_id"), R("get_tuple.latest")],
        "get_tuple of a checkpoint that is not stored returns an empty tuple instead of none"
    ),
    mutant!(
        "get_tuple_returns_caller_config",
        GetTupleReturnsCallerConfig,
        &[GT],
        [R("get_tuple.latest")],
        "the tuple's config is the caller's as given, with no id when the latest was asked for (upstream quirk)"
    ),
    mutant!(
        "pending_writes_reversed",
        PendingWritesReversed,
        &[GT, LS],
        [R("get_tuple.writes_order"), G("7.2-writes-order")],
        "pending_writes come back in reverse order"
    ),
    mutant!(
        "pending_writes_ignore_task_path",
        PendingWritesIgnoreTaskPath,
        &[GT, LS],
        [R("get_tuple.writes_order"), G("7.2-writes-order")],
        "pending_writes are ordered by task id, ignoring task_path (upstream SQLite 3.1.1)"
    ),
    mutant!(
        "pending_writes_index_unsigned",
        PendingWritesIndexUnsigned,
        &[GT, LS],
        [R("get_tuple.writes_order")],
        "pending_writes indexes are compared unsigned: special writes sort last"
    ),
    mutant!(
        "pending_writes_index_as_text",
        PendingWritesIndexAsText,
        &[GT, LS],
        [R("get_tuple.writes_order")],
        "pending_writes indexes are compared as text (-1 < -2, 10 < 2)"
    ),
    // ---- §2 list -------------------------------------------------------------------------
    mutant!(
        "list_oldest_first",
        ListOldestFirst,
        &[LS],
        [R("list.order"), S("S12")],
        "list returns the oldest checkpoint first"
    ),
    mutant!(
        "list_insertion_order",
        ListInsertionOrder,
        &[LS],
        [R("list.order"), S("S12"), G("7.2-out-of-order-ids")],
        "list orders by insertion (the checkpoint put last first), not by id"
    ),
    mutant!(
        "list_limit_keeps_oldest",
        ListLimitKeepsOldest,
        &[LS],
        [R("list.limit"), S("S01")],
        "limit keeps the oldest matches (ORDER BY ASC LIMIT), shown newest first"
    ),
    mutant!(
        "list_limit_zero_unlimited",
        ListLimitZeroUnlimited,
        &[LS],
        [R("list.limit"), S("S01"), G("7.2-limit-before")],
        "limit 0 is treated as no limit"
    ),
    mutant!(
        "list_limit_per_namespace",
        ListLimitPerNamespace,
        &[LS],
        [R("list.limit")],
        "limit is applied per namespace when listing every namespace"
    ),
    mutant!("list_before_ignored", ListBeforeIgnored, &[LS], [R("list.before"), S("S11")], "before is ignored"),
    mutant!(
        "list_before_inclusive",
        ListBeforeInclusive,
        &[LS],
        [R("list.before"), S("S11")],
        "before keeps the id it names"
    ),
    mutant!(
        "list_before_unknown_ignored",
        ListBeforeUnknownIgnored,
        &[LS],
        [R("list.before"), S("S11"), G("7.2-limit-before")],
        "a before id that is not stored is ignored (everything comes back)"
    ),
    mutant!(
        "list_before_after_limit",
        ListBeforeAfterLimit,
        &[LS],
        [R("list.before"), R("list.limit"), S("S11")],
        "before is applied after limit"
    ),
    mutant!(
        "list_filter_ignored",
        ListFilterIgnored,
        &[LS],
        [R("list.filter"), S("S07")],
        "the metadata filter is ignored"
    ),
    mutant!(
        "list_filter_ignored_with_limit",
        ListFilterIgnoredWithLimit,
        &[LS],
        [R("list.filter"), S("S07")],
        "the metadata filter is ignored when a limit is set (fast path)"
    ),
    mutant!(
        "list_filter_numbers_as_text",
        ListFilterNumbersAsText,
        &[LS],
        [R("list.filter"), G("7.2-filters")],
        "filter numbers are compared as text, so 1 does not match 1.0"
    ),
    mutant!(
        "list_filter_null_needs_key",
        ListFilterNullNeedsKey,
        &[LS],
        [R("list.filter"), G("7.2-filters")],
        "a null filter value does not match a missing key (upstream Postgres)"
    ),
    mutant!(
        "list_filter_bool_equals_number",
        ListFilterBoolEqualsNumber,
        &[LS],
        [R("list.filter"), G("7.2-filters")],
        "a boolean filter value matches 0/1 (upstream SQLite)"
    ),
    mutant!(
        "list_filter_first_key_only",
        ListFilterFirstKeyOnly,
        &[LS],
        [R("list.filter")],
        "only the first filter key is applied"
    ),
    mutant!(
        "list_filter_case_insensitive",
        ListFilterCaseInsensitive,
        &[LS],
        [R("list.filter")],
        "filter strings are compared case-insensitively"
    ),
    mutant!(
        "list_filter_nested_containment",
        ListFilterNestedContainment,
        &[LS],
        [R("list.filter"), G("7.2-filters")],
        "a nested filter object matches by containment, not equality (upstream Postgres)"
    ),
    mutant!(
        "list_grouped_by_namespace",
        ListGroupedByNamespace,
        &[LS],
        [R("list.order"), S("S10")],
        "list is grouped by namespace instead of in global id order (upstream InMemory)"
    ),
    mutant!(
        "list_equal_ids_namespace_descending",
        ListEqualIdsNamespaceDescending,
        &[LS],
        [R("list.order")],
        "equal ids in different namespaces come namespace descending"
    ),
    mutant!(
        "list_without_namespace_root_only",
        ListWithoutNamespaceRootOnly,
        &[LS],
        [R("list.scope"), S("S10"), G("7.2-list-no-ns")],
        "list without a namespace returns the root namespace only"
    ),
    mutant!(
        "list_root_namespace_spans_all",
        ListRootNamespaceSpansAll,
        &[LS],
        [R("list.scope"), S("S10")],
        "list in the root namespace returns every namespace"
    ),
    mutant!(
        "list_ignores_checkpoint_id",
        ListIgnoresCheckpointId,
        &[LS],
        [R("list.scope"), G("7.2-list-id")],
        "list ignores the checkpoint_id scope"
    ),
    mutant!(
        "list_ignores_thread",
        ListIgnoresThread,
        &[LS],
        [R("list.scope")],
        "list returns the checkpoints of every thread"
    ),
    mutant!(
        "list_drops_pending_writes",
        ListDropsPendingWrites,
        &[LS],
        [R("list.tuples"), S("S08")],
        "listed tuples carry no pending writes"
    ),
    mutant!(
        "list_drops_parent_config",
        ListDropsParentConfig,
        &[LS],
        [R("list.tuples"), S("S09")],
        "listed tuples carry no parent_config"
    ),
    // ---- §2 delete_thread ----------------------------------------------------------------
    mutant!(
        "delete_thread_noop",
        DeleteThreadNoop,
        &[DT],
        [R("delete_thread.everything"), S("S17")],
        "delete_thread does nothing"
    ),
    mutant!(
        "delete_thread_root_only",
        DeleteThreadRootOnly,
        &[DT],
        [R("delete_thread.everything"), S("S13")],
        "delete_thread deletes the root namespace only"
    ),
    mutant!(
        "delete_thread_leaves_writes",
        DeleteThreadLeavesWrites,
        &[DT],
        [R("delete_thread.nothing_back"), S("S13"), G("7.3-delete-leaks")],
        "delete_thread leaves the writes behind; a re-put shows them"
    ),
    mutant!(
        "delete_thread_leaves_values",
        DeleteThreadLeavesValues,
        &[DT],
        [R("delete_thread.nothing_back"), S("S13"), G("7.3-delete-leaks")],
        "delete_thread leaves the stored channel values behind; a re-put reads them"
    ),
    mutant!(
        "delete_thread_deletes_all",
        DeleteThreadDeletesAll,
        &[DT],
        [R("delete_thread.others"), G("7.3-delete-leaks")],
        "delete_thread deletes every thread"
    ),
    mutant!(
        "delete_unknown_thread_fails",
        DeleteUnknownThreadFails,
        &[DT],
        [R("delete_thread.unknown"), S("S14")],
        "delete_thread of an unknown thread fails"
    ),
    // ---- §3 delete_for_runs --------------------------------------------------------------
    mutant!(
        "delete_for_runs_noop",
        DeleteForRunsNoop,
        &[DR],
        [R("delete_for_runs.deletes"), G("7.3-delete-for-runs")],
        "delete_for_runs does nothing"
    ),
    mutant!(
        "delete_for_runs_empty_fails",
        DeleteForRunsEmptyFails,
        &[DR],
        [R("extended.noop_inputs"), S("S14")],
        "delete_for_runs([]) fails"
    ),
    mutant!(
        "delete_for_runs_unknown_fails",
        DeleteForRunsUnknownFails,
        &[DR],
        [R("extended.noop_inputs")],
        "run ids that match no checkpoint fail the call"
    ),
    mutant!(
        "delete_for_runs_first_only",
        DeleteForRunsFirstOnly,
        &[DR],
        [R("delete_for_runs.deletes")],
        "only the first run id is deleted"
    ),
    mutant!(
        "delete_for_runs_whole_thread",
        DeleteForRunsWholeThread,
        &[DR],
        [R("delete_for_runs.others"), G("7.3-delete-for-runs")],
        "every thread that has a listed run is deleted whole"
    ),
    mutant!(
        "delete_for_runs_leaves_writes",
        DeleteForRunsLeavesWrites,
        &[DR],
        [R("delete_for_runs.deletes"), G("7.3-delete-for-runs")],
        "the deleted checkpoints' writes are left behind"
    ),
    mutant!(
        "delete_for_runs_root_only",
        DeleteForRunsRootOnly,
        &[DR],
        [R("delete_for_runs.deletes")],
        "only the root namespace is searched for the runs"
    ),
    // ---- §3 copy_thread ------------------------------------------------------------------
    mutant!(
        "copy_keeps_source_thread_id",
        CopyKeepsSourceThreadId,
        &[CT],
        [R("copy_thread.target_configs"), S("S16"), G("7.3-copy-configs")],
        "copied tuples name the source thread in config and parent_config"
    ),
    mutant!(
        "copy_parent_names_source",
        CopyParentNamesSource,
        &[CT],
        [R("copy_thread.target_configs"), S("S16"), G("7.3-copy-configs")],
        "copied tuples name the source thread in parent_config"
    ),
    mutant!(
        "copy_latest_only",
        CopyLatestOnly,
        &[CT],
        [R("copy_thread.copies"), S("S16")],
        "only the latest checkpoint of each namespace is copied"
    ),
    mutant!(
        "copy_twice_duplicates_writes",
        CopyTwiceDuplicatesWrites,
        &[CT],
        [R("copy_thread.twice"), S("S16")],
        "a second copy duplicates the writes"
    ),
    mutant!(
        "copy_root_only",
        CopyRootOnly,
        &[CT],
        [R("copy_thread.copies"), S("S16")],
        "only the root namespace is copied"
    ),
    mutant!(
        "copy_moves_source",
        CopyMovesSource,
        &[CT],
        [R("copy_thread.source_unchanged"), S("S16")],
        "the source is deleted after the copy (a move)"
    ),
    mutant!(
        "copy_drops_writes",
        CopyDropsWrites,
        &[CT],
        [R("copy_thread.copies"), S("S16"), G("7.3-copy-writes")],
        "writes are not copied"
    ),
    mutant!(
        "copy_clears_target",
        CopyClearsTarget,
        &[CT],
        [R("copy_thread.missing_source"), G("7.3-copy-target")],
        "the target is cleared before copying, even from a missing source"
    ),
    mutant!(
        "copy_drops_task_path",
        CopyDropsTaskPath,
        &[CT],
        [R("copy_thread.copies"), G("7.3-copy-writes")],
        "copied writes lose their task_path"
    ),
    mutant!("copy_drops_values", CopyDropsValues, &[CT], [R("copy_thread.copies")], "channel values are not copied"),
    mutant!(
        "copy_missing_source_fails",
        CopyMissingSourceFails,
        &[CT],
        [R("extended.noop_inputs"), R("copy_thread.missing_source")],
        "copying a missing source fails"
    ),
    // ---- §3 prune ------------------------------------------------------------------------
    mutant!(
        "prune_keeps_oldest",
        PruneKeepsOldest,
        &[PR],
        [R("prune.keep_latest"), S("S15")],
        "keep_latest keeps the oldest checkpoint of each namespace"
    ),
    mutant!(
        "prune_drops_writes",
        PruneDropsWrites,
        &[PR],
        [R("prune.keep_latest"), S("S15")],
        "keep_latest drops the kept checkpoint's writes"
    ),
    mutant!(
        "prune_drops_inherited_values",
        PruneDropsInheritedValues,
        &[PR],
        [R("prune.keep_latest"), S("S15"), G("7.3-prune")],
        "keep_latest drops the values stored by older checkpoints"
    ),
    mutant!(
        "prune_other_threads",
        PruneOtherThreads,
        &[PR],
        [R("prune.others"), S("S15")],
        "keep_latest also prunes threads that were not named"
    ),
    mutant!(
        "prune_root_only",
        PruneRootOnly,
        &[PR],
        [R("prune.keep_latest"), S("S15")],
        "keep_latest prunes the root namespace only"
    ),
    mutant!(
        "prune_latest_per_thread",
        PruneLatestPerThread,
        &[PR],
        [R("prune.keep_latest"), S("S15")],
        "keep_latest keeps one checkpoint per thread instead of per namespace"
    ),
    mutant!("prune_noop", PruneNoop, &[PR], [R("prune.keep_latest")], "keep_latest does nothing"),
    mutant!(
        "prune_delete_keeps_latest",
        PruneDeleteKeepsLatest,
        &[PR],
        [R("prune.delete")],
        "the delete strategy keeps the latest checkpoint"
    ),
    mutant!("prune_empty_fails", PruneEmptyFails, &[PR], [R("extended.noop_inputs"), S("S14")], "prune([]) fails"),
    // ---- §3 delta_channel_history --------------------------------------------------------
    mutant!(
        "delta_includes_target_writes",
        DeltaIncludesTargetWrites,
        &[DH],
        [R("delta.exclude_target")],
        "the target's own writes are included"
    ),
    mutant!(
        "delta_excludes_seed_writes",
        DeltaExcludesSeedWrites,
        &[DH],
        [R("delta.seed")],
        "the seed ancestor's own writes are excluded (upstream #8384)"
    ),
    mutant!("delta_newest_first", DeltaNewestFirst, &[DH], [R("delta.order")], "writes come newest checkpoint first"),
    mutant!(
        "delta_ignores_namespace",
        DeltaIgnoresNamespace,
        &[DH],
        [R("delta.target"), G("7.4-delta-ns")],
        "the walk always uses the root namespace"
    ),
    mutant!(
        "delta_walks_id_order",
        DeltaWalksIdOrder,
        &[DH],
        [R("delta.walk"), G("7.4-delta-forks")],
        "the walk follows id order instead of parent links"
    ),
    mutant!(
        "delta_seed_from_target",
        DeltaSeedFromTarget,
        &[DH],
        [R("delta.walk"), R("delta.seed")],
        "the target's own value is taken as the seed"
    ),
    mutant!(
        "delta_stops_after_parent",
        DeltaStopsAfterParent,
        &[DH],
        [R("delta.walk")],
        "the walk stops after the target's parent"
    ),
    mutant!(
        "delta_latest_not_resolved",
        DeltaLatestNotResolved,
        &[DH],
        [R("delta.target"), G("7.4-delta-no-id")],
        "without a checkpoint id nothing is resolved (upstream InMemory 4.2.0)"
    ),
    mutant!(
        "delta_omits_empty_channels",
        DeltaOmitsEmptyChannels,
        &[DH],
        [R("delta.channels")],
        "channels with neither writes nor seed are left out of the result"
    ),
    mutant!(
        "delta_reverses_within_checkpoint",
        DeltaReversesWithinCheckpoint,
        &[DH],
        [R("delta.order"), G("7.4-delta-order")],
        "writes within one checkpoint come in reverse get_tuple order"
    ),
    mutant!(
        "delta_no_channels_means_all",
        DeltaNoChannelsMeansAll,
        &[DH],
        [R("delta.channels")],
        "no channels requested gives the history of every channel on the target's ancestry"
    ),
    mutant!(
        "delta_missing_target_fails",
        DeltaMissingTargetFails,
        &[DH],
        [R("extended.noop_inputs"), R("delta.target")],
        "a target that is not stored fails the call instead of giving empty entries"
    ),
    // ---- §4 concurrency and durability (after the props branch's file-saver mutants) ------
    mutant!(
        "lost_update",
        LostUpdate,
        &[CC],
        [R("concurrency.serial"), S("S18")],
        "put_writes is a read-modify-write without a lock: concurrent writes are lost"
    ),
    mutant!(
        "torn_read",
        TornRead,
        &[CC],
        [R("concurrency.serial"), S("S18")],
        "put makes the checkpoint visible before its values: a concurrent reader sees part of it"
    ),
    mutant!(
        "busy_across_instances",
        BusyAcrossInstances,
        &[CC],
        [R("concurrency.serial"), S("S19")],
        "a call that finds the storage held by another instance fails with \"database is locked\""
    ),
    mutant!(
        "ack_before_commit",
        AckBeforeCommit,
        &[DU],
        [R("durability.acknowledged"), S("S20")],
        "put and put_writes acknowledge before storing: a new instance misses the last acknowledged call"
    ),
    mutant!(
        "writes_not_atomic",
        WritesNotAtomic,
        &[CC],
        [R("concurrency.serial"), S("S18")],
        "put_writes stores its writes one at a time: a concurrent reader sees part of a call"
    ),
    mutant!(
        "check_then_insert_race",
        CheckThenInsertRace,
        &[CC],
        [R("concurrency.serial"), S("S18")],
        "put_writes checks whether a key exists, then inserts: racing writers of one key all insert"
    ),
    mutant!(
        "thread_index_lost_update",
        ThreadIndexLostUpdate,
        &[CC],
        [R("concurrency.serial"), S("S18")],
        "put updates the thread's index by a read-modify-write without a lock: list misses concurrent puts"
    ),
    mutant!(
        "delete_before_commit",
        DeleteBeforeCommit,
        &[DU],
        [R("durability.acknowledged")],
        "delete_thread acknowledges before storing: a new instance still sees the deleted thread"
    ),
];

/// The mutant named `name`.
pub fn mutant(name: &str) -> Option<&'static Mutant> {
    MUTANTS.iter().find(|m| m.name == name)
}

/// Spec cases that no mutant makes fail, each with the reason it is there anyway:
/// `(case id, reason)`. A case no bug can fail is suspect; an entry here says why this one
/// is not. The self-test fails on a never-failing case missing from this table, and on an
/// entry whose case does fail on some mutant (a stale explanation).
pub const NEVER_FAILING_EXPLAINED: &[(&str, &str)] = &[];

/// Spec cases the analysis does not run against the mutants (nor the bug-free wrapper on
/// shared storage), each with the reason: `(case id, reason)`. They count as never failing,
/// explained by that reason.
pub const CASES_NOT_RUN_ON_MUTANTS: &[(&str, &str)] = &[(
    "durability::acknowledged_writes_survive_kill",
    "the crash test kills a child process that opens the storage by location; the mutants keep their storage in \
     this process's memory, so no child can open it. The props self-test (conformance-spec/tests/property_mutants.rs) \
     kills its file-backed ack-before-commit mutant with this case; here ack_before_commit is caught by the reopen \
     cases",
)];
