//! [`MutantSaver`]: the reference [`MemorySaver`] behind the public [`CheckpointSaver`]
//! trait, with exactly one [`Bug`] switched on.
//!
//! Every bug is built from the outside: the wrapper changes a call's input, its output, or
//! replays what the inner saver stored (snapshot through `list`, `delete_thread`, `put` and
//! `put_writes` again). Where a bug needs to remember something the trait cannot ask for
//! (the `new_versions` of a put, the index a write got), the wrapper keeps it in a small side
//! table. Nothing here reaches into the memory saver's internals.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use checkpoint_memory::MemorySaver;
use conformance_core::{
    json_equal, metadata_matches, special_write_index, write_index, ChannelVersion, ChannelVersions, Checkpoint,
    CheckpointConfig, CheckpointError, CheckpointMetadata, CheckpointSaver, CheckpointTuple, DeltaChannelHistory,
    ListOptions, PendingWrite, PruneStrategy, TypedValue,
};
use serde_json::Value;

/// The one rule a [`MutantSaver`] breaks. Each variant's doc says what the saver does
/// instead of the rule; the catalog ([`crate::MUTANTS`]) gives each a name and what it covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Bug {
    // ---- CONTRACT §1 types -------------------------------------------------------------
    /// An empty `thread_id` is silently replaced by `"default"` in every base method.
    EmptyThreadIdDefaulted,
    /// An empty `thread_id` panics in every base method.
    EmptyThreadIdPanics,
    /// Channel values are stored with an empty type tag.
    TypeTagDropped,
    /// A channel value with empty bytes is not stored (reads as absent).
    EmptyBytesDropped,
    /// NUL bytes are stripped from channel values.
    NulBytesStripped,
    /// Channel value bytes go through lossy UTF-8 decoding.
    NonUtf8Replaced,
    /// Channel values are truncated to 1 MiB.
    LargeValueTruncated,
    /// Integer channel versions come back as strings.
    IntVersionReadAsString,
    /// `versions_seen` is not stored.
    VersionsSeenDropped,
    /// `updated_channels: Some([])` comes back as `None`.
    UpdatedChannelsEmptyAsNone,
    /// `ts` is overwritten with the saver's own clock.
    TsOverwritten,
    /// `v` is always stored as 1.
    FormatVersionForced,
    /// Float metadata values are truncated to integers (at any depth).
    MetadataFloatTruncated,
    /// Top-level metadata keys whose value is null are dropped.
    MetadataNullDropped,
    /// Nested metadata objects and arrays are stored as JSON text.
    MetadataNestedStringified,
    /// NUL characters are stripped from metadata strings (upstream's behaviour).
    MetadataNulStripped,
    /// Non-ASCII characters are dropped from metadata strings (an encoder with
    /// `errors="ignore"`).
    MetadataNonAsciiDropped,
    /// The `parents` metadata key is not stored.
    MetadataParentsDropped,
    /// Boolean metadata values are stored as 0/1.
    MetadataBoolAsInteger,
    /// `put` panics on a NUL character in a metadata string.
    MetadataNulPanics,
    /// `put` refuses a NUL character in metadata with `InvalidInput`, after it stored the
    /// checkpoint.
    MetadataNulRefusedAfterStoring,

    // ---- CONTRACT §2 put -----------------------------------------------------------------
    /// `put` returns the parent's id instead of the stored checkpoint's.
    PutReturnsParentId,
    /// `put` returns the root namespace whatever the config's.
    PutReturnsRootNamespace,
    /// `put` stores every checkpoint in the root namespace.
    PutIgnoresNamespace,
    /// `put` does not record the parent.
    ParentNotStored,
    /// `parent_config` names the checkpoint itself (S09).
    ParentIsSelf,
    /// `parent_config` names the root namespace.
    ParentConfigRootNamespace,
    /// `parent_config` has an empty thread id.
    ParentConfigBlankThread,
    /// Only the values of `new_versions` channels are stored (S06).
    OnlyNewVersionsValuesStored,
    /// A channel whose value was not carried by the put is absent on read.
    UncarriedChannelsVanish,
    /// Channels missing from `channel_versions` keep the parent's (or the carried) value.
    ChannelOutsideVersionsKept,
    /// A channel in `new_versions` without a value keeps the parent's value.
    EmptiedChannelKeepsOldValue,
    /// Values are keyed by (channel, version) only, so siblings overwrite each other.
    SiblingValuesCollide,
    /// Re-putting an existing id is ignored.
    ReputIgnored,
    /// Re-putting an existing id keeps its old parent.
    ReputKeepsOldParent,
    /// Re-putting an existing id drops its pending writes (S05).
    ReputDropsWrites,
    /// Re-putting an existing id merges the old metadata into the new.
    ReputMergesMetadata,
    /// `get_next_version` returns the current version.
    NextVersionRepeats,
    /// `get_next_version` of a string version restarts at integer 1.
    NextVersionStringRestarts,

    // ---- CONTRACT §2 put_writes ----------------------------------------------------------
    /// `put_writes` without `checkpoint_id` returns `Ok` and stores nothing.
    WritesWithoutCheckpointIdAccepted,
    /// `put_writes` with an empty list fails with `InvalidInput` (S14).
    EmptyWritesRejected,
    /// `put_writes` stores writes in the root namespace whatever the config's.
    WritesIgnoreNamespace,
    /// Writes for a checkpoint that is not stored yet are dropped (S05).
    WritesBeforeCheckpointDropped,
    /// Writes go to the latest checkpoint of the namespace, not the one named.
    WritesAttachToLatest,
    /// A repeated regular write replaces the first (last wins).
    RegularWriteLastWins,
    /// A repeated special write is ignored (first wins).
    SpecialWriteFirstWins,
    /// Replace-or-ignore is decided per call: only all-special calls replace (S02).
    WriteRuleDecidedPerCall,
    /// Special channels get their position as index, colliding with regular writes (S03).
    SpecialIndexIsPosition,
    /// Special entries do not count towards the positions of regular writes.
    PositionsSkipSpecials,
    /// The write key ignores the task id: two tasks collide on the same index.
    WriteKeyIgnoresTask,
    /// Repeated regular writes are stored again (no dedup).
    RegularWritesDuplicated,
    /// The regular writes of one call get their indexes in channel order, not call order.
    WritesSortedByChannel,
    /// The write key leaves out the checkpoint id: every checkpoint of the namespace shows
    /// the same writes.
    WriteKeyIgnoresCheckpoint,
    /// Written values are stored without their type tag.
    WriteTypeTagDropped,
    /// Written values are truncated to 1 MiB.
    WriteValueTruncated,

    // ---- CONTRACT §2 get_tuple -----------------------------------------------------------
    /// "Latest" is the checkpoint put last, not the greatest id.
    LatestByInsertionOrder,
    /// With an id, the namespace is ignored.
    GetByIdIgnoresNamespace,
    /// Without an id in the root namespace, the latest of any namespace is returned (S10).
    RootLatestSpansNamespaces,
    /// An id that is not stored falls back to the latest checkpoint.
    MissingIdFallsBackToLatest,
    /// The thread is ignored: by id in any thread, latest over every thread.
    GetTupleIgnoresThread,
    /// A checkpoint that is not stored comes back as an empty tuple instead of none.
    GetTupleMissingGivesEmpty,
    /// The tuple's config is the caller's config as given (no id when the latest was asked
    /// for).
    GetTupleReturnsCallerConfig,
    /// `pending_writes` come back in reverse order.
    PendingWritesReversed,
    /// `pending_writes` are ordered by task id, ignoring `task_path`.
    PendingWritesIgnoreTaskPath,
    /// `pending_writes` indexes are compared unsigned (special writes last).
    PendingWritesIndexUnsigned,
    /// `pending_writes` indexes are compared as text (`-1 < -2`, `10 < 2`).
    PendingWritesIndexAsText,

    // ---- CONTRACT §2 list ----------------------------------------------------------------
    /// `list` returns the oldest first.
    ListOldestFirst,
    /// `list` orders by insertion (the checkpoint put last first), not by id.
    ListInsertionOrder,
    /// `limit` keeps the oldest matches (ORDER BY ASC LIMIT), newest first.
    ListLimitKeepsOldest,
    /// `limit = 0` is treated as no limit (S01).
    ListLimitZeroUnlimited,
    /// `limit` is applied per namespace when listing every namespace.
    ListLimitPerNamespace,
    /// `before` is ignored (S11).
    ListBeforeIgnored,
    /// `before` is inclusive (S11).
    ListBeforeInclusive,
    /// A `before` id that is not stored is ignored (S11).
    ListBeforeUnknownIgnored,
    /// `before` is applied after `limit` (S11).
    ListBeforeAfterLimit,
    /// `filter` is ignored (S07).
    ListFilterIgnored,
    /// `filter` is ignored when a `limit` is set (fast path, S07).
    ListFilterIgnoredWithLimit,
    /// Filter numbers are compared as text (`1 != 1.0`).
    ListFilterNumbersAsText,
    /// A null filter value does not match a missing key.
    ListFilterNullNeedsKey,
    /// A boolean filter value equals the numbers 0/1.
    ListFilterBoolEqualsNumber,
    /// Only the first filter key is applied.
    ListFilterFirstKeyOnly,
    /// Filter strings are compared case-insensitively.
    ListFilterCaseInsensitive,
    /// A nested filter object matches by containment, not equality.
    ListFilterNestedContainment,
    /// Results are grouped by namespace instead of globally ordered.
    ListGroupedByNamespace,
    /// Equal ids in different namespaces come namespace descending.
    ListEqualIdsNamespaceDescending,
    /// Without a namespace, only the root namespace is listed.
    ListWithoutNamespaceRootOnly,
    /// The root namespace lists every namespace (S10).
    ListRootNamespaceSpansAll,
    /// The `checkpoint_id` scope is ignored.
    ListIgnoresCheckpointId,
    /// Every known thread is listed, not only the config's.
    ListIgnoresThread,
    /// Listed tuples carry no pending writes (S08).
    ListDropsPendingWrites,
    /// Listed tuples carry no parent config.
    ListDropsParentConfig,

    // ---- CONTRACT §2 delete_thread -------------------------------------------------------
    /// `delete_thread` does nothing (S17).
    DeleteThreadNoop,
    /// `delete_thread` only deletes the root namespace.
    DeleteThreadRootOnly,
    /// `delete_thread` leaves the writes behind; a re-put shows them (S13).
    DeleteThreadLeavesWrites,
    /// `delete_thread` leaves the stored channel values behind; a re-put reads them (S13).
    DeleteThreadLeavesValues,
    /// `delete_thread` deletes every thread.
    DeleteThreadDeletesAll,
    /// `delete_thread` of an unknown thread fails (S14).
    DeleteUnknownThreadFails,

    // ---- CONTRACT §3 delete_for_runs ----------------------------------------------------
    /// `delete_for_runs` does nothing.
    DeleteForRunsNoop,
    /// `delete_for_runs([])` fails (S14).
    DeleteForRunsEmptyFails,
    /// Run ids that match no checkpoint fail the call.
    DeleteForRunsUnknownFails,
    /// Only the first run id is deleted.
    DeleteForRunsFirstOnly,
    /// Every thread that has a listed run is deleted whole.
    DeleteForRunsWholeThread,
    /// The deleted checkpoints' writes are left behind.
    DeleteForRunsLeavesWrites,
    /// Only the root namespace is searched.
    DeleteForRunsRootOnly,

    // ---- CONTRACT §3 copy_thread --------------------------------------------------------
    /// Copied tuples name the source thread in `config` and `parent_config`.
    CopyKeepsSourceThreadId,
    /// Copied tuples name the source thread in `parent_config`.
    CopyParentNamesSource,
    /// Only the latest checkpoint of each namespace is copied.
    CopyLatestOnly,
    /// A second copy duplicates the writes.
    CopyTwiceDuplicatesWrites,
    /// Only the root namespace is copied.
    CopyRootOnly,
    /// The source is deleted after the copy (a move).
    CopyMovesSource,
    /// Writes are not copied.
    CopyDropsWrites,
    /// The target is cleared before copying, even from a missing source.
    CopyClearsTarget,
    /// Copied writes lose their `task_path`.
    CopyDropsTaskPath,
    /// Channel values are not copied.
    CopyDropsValues,
    /// Copying a missing source fails.
    CopyMissingSourceFails,

    // ---- CONTRACT §3 prune ---------------------------------------------------------------
    /// `keep_latest` keeps the oldest checkpoint.
    PruneKeepsOldest,
    /// `keep_latest` drops the kept checkpoint's writes.
    PruneDropsWrites,
    /// `keep_latest` drops the values stored by older checkpoints (S15).
    PruneDropsInheritedValues,
    /// `keep_latest` also prunes threads that were not named.
    PruneOtherThreads,
    /// `keep_latest` only prunes the root namespace.
    PruneRootOnly,
    /// `keep_latest` keeps one checkpoint per thread, not per namespace.
    PruneLatestPerThread,
    /// `keep_latest` does nothing.
    PruneNoop,
    /// `delete` keeps the latest checkpoint.
    PruneDeleteKeepsLatest,
    /// `prune([])` fails (S14).
    PruneEmptyFails,

    // ---- CONTRACT §3 delta_channel_history ----------------------------------------------
    /// The target's own writes are included.
    DeltaIncludesTargetWrites,
    /// The seed ancestor's own writes are excluded (upstream #8384).
    DeltaExcludesSeedWrites,
    /// Writes come newest first.
    DeltaNewestFirst,
    /// The walk always uses the root namespace.
    DeltaIgnoresNamespace,
    /// The walk follows id order instead of parent links.
    DeltaWalksIdOrder,
    /// The target's own value is taken as the seed.
    DeltaSeedFromTarget,
    /// The walk stops after the first ancestor.
    DeltaStopsAfterParent,
    /// Without a checkpoint id, nothing is resolved (InMemory 4.2.0).
    DeltaLatestNotResolved,
    /// Channels with neither writes nor seed are left out of the result.
    DeltaOmitsEmptyChannels,
    /// Writes within one checkpoint come in reverse `get_tuple` order.
    DeltaReversesWithinCheckpoint,
    /// No channels requested means every channel with history on the target's ancestry.
    DeltaNoChannelsMeansAll,
    /// A target that is not stored fails the call.
    DeltaMissingTargetFails,

    // ---- CONTRACT §4 concurrency and durability -------------------------------------------
    /// `put_writes` reads the checkpoint's writes, yields, and writes the list back: a
    /// read-modify-write without a lock, which loses concurrent writes (S18).
    LostUpdate,
    /// `put` makes the checkpoint visible without its values, yields, then stores them: a
    /// reader sees part of a checkpoint (S18).
    TornRead,
    /// A call that finds the storage held by a call of another instance fails with
    /// "database is locked" (S19).
    BusyAcrossInstances,
    /// `put_writes` stores its writes one at a time, yielding in between: a concurrent
    /// reader sees part of a call's writes (S18).
    WritesNotAtomic,
    /// `put_writes` checks whether a write's key exists, yields, then inserts: racing
    /// writers of one key all insert (S18).
    CheckThenInsertRace,
    /// `put` updates the thread's index of checkpoints by a read-modify-write without a
    /// lock: `list` misses checkpoints put at the same time (S18).
    ThreadIndexLostUpdate,
    /// `put` and `put_writes` acknowledge before storing: another instance sees an
    /// instance's last such call only once that instance makes its next call (S20).
    AckBeforeCommit,
    /// `delete_thread` acknowledges before storing: another instance still sees the thread
    /// until the deleting instance makes its next call.
    DeleteBeforeCommit,

    /// No bug: the memory saver's behaviour, on storage other instances can open (the
    /// baseline of the concurrency and durability mutants; never in the catalog).
    NoBug,
}

impl Bug {
    /// True for the bug-free reference.
    pub fn is_none(self) -> bool {
        self == Bug::NoBug
    }

    fn is_mirror(self) -> bool {
        matches!(
            self,
            Bug::RegularWriteLastWins
                | Bug::SpecialWriteFirstWins
                | Bug::WriteRuleDecidedPerCall
                | Bug::SpecialIndexIsPosition
                | Bug::PositionsSkipSpecials
                | Bug::WriteKeyIgnoresTask
                | Bug::RegularWritesDuplicated
        )
    }

    fn is_delta(self) -> bool {
        matches!(
            self,
            Bug::DeltaIncludesTargetWrites
                | Bug::DeltaExcludesSeedWrites
                | Bug::DeltaNewestFirst
                | Bug::DeltaIgnoresNamespace
                | Bug::DeltaWalksIdOrder
                | Bug::DeltaSeedFromTarget
                | Bug::DeltaStopsAfterParent
                | Bug::DeltaLatestNotResolved
                | Bug::DeltaOmitsEmptyChannels
                | Bug::DeltaReversesWithinCheckpoint
                | Bug::DeltaNoChannelsMeansAll
                | Bug::DeltaMissingTargetFails
        )
    }
}

/// (thread, namespace, checkpoint id).
type CpKey = (String, String, String);
/// (thread, namespace, channel, version).
type BlobKey = (String, String, String, ChannelVersion);

/// A write as a mirror-keeping mutant stores it.
#[derive(Clone, Debug)]
struct MirrorWrite {
    task_id: String,
    task_path: String,
    idx: i64,
    channel: String,
    value: TypedValue,
}

/// What a mutant remembers beside the inner saver.
#[derive(Default)]
struct Side {
    /// Every thread a checkpoint or write was stored in.
    threads: BTreeSet<String>,
    /// The `new_versions` channels of each put.
    new_versions: HashMap<CpKey, BTreeSet<String>>,
    /// The channels whose value each put carried.
    carried: HashMap<CpKey, BTreeSet<String>>,
    /// Values a read adds (channels outside `channel_versions`).
    extra_values: HashMap<CpKey, BTreeMap<String, TypedValue>>,
    /// The last value put at each (thread, ns, channel, version).
    blobs: HashMap<BlobKey, TypedValue>,
    /// Values of deleted threads, left behind.
    deleted_values: HashMap<BlobKey, TypedValue>,
    /// Writes a read hides.
    hidden_writes: HashMap<CpKey, Vec<PendingWrite>>,
    /// The writes as the mutant's own (wrong) key rule keeps them.
    mirror: HashMap<CpKey, Vec<MirrorWrite>>,
    /// The writes as the read-modify-write of [`Bug::LostUpdate`] (or the check-then-insert
    /// of [`Bug::CheckThenInsertRace`]) keeps them.
    rmw_writes: HashMap<CpKey, Vec<MirrorWrite>>,
    /// Each thread's index of checkpoints ([`Bug::ThreadIndexLostUpdate`]).
    thread_index: HashMap<String, Vec<CpKey>>,
    /// The writes of each (thread, ns), for the key that leaves out the checkpoint id.
    ns_writes: HashMap<(String, String), Vec<MirrorWrite>>,
    /// The index each (checkpoint, task, channel) write got.
    write_idx: HashMap<(CpKey, String, String), i64>,
    /// The order of every put (re-puts move a checkpoint to the end).
    put_seq: HashMap<CpKey, u64>,
    /// The id put last in each (thread, ns).
    last_put: HashMap<(String, String), String>,
    /// Copy target -> source.
    copied_from: HashMap<String, String>,
}

/// An operation a reader on another instance does not see yet ([`Bug::AckBeforeCommit`]).
#[derive(Clone, Debug)]
enum Uncommitted {
    /// A put of this checkpoint.
    Put(CpKey),
    /// A put_writes on this checkpoint: (task_id, channel, value) of each write.
    Writes(CpKey, Vec<(String, String, TypedValue)>),
    /// A delete_thread of this thread, with what it held.
    Delete(String, Vec<CheckpointTuple>),
}

/// What the instances opened on one storage share besides the saver and the side table.
#[derive(Default)]
struct Shared {
    /// The instance holding the storage lock and how many of its calls hold it
    /// ([`Bug::BusyAcrossInstances`]).
    lock: Mutex<Option<(u64, usize)>>,
    /// The last acknowledged, not yet stored, operation of each instance
    /// ([`Bug::AckBeforeCommit`]).
    uncommitted: Mutex<BTreeMap<u64, Uncommitted>>,
    /// The next instance number.
    instances: std::sync::atomic::AtomicU64,
}

/// The memory saver with one [`Bug`].
///
/// Instances made by [`MutantSaver::reopen`] share the storage (the inner saver, the side
/// table), as two instances of a persistent saver opened on one file do.
pub struct MutantSaver {
    inner: Arc<MemorySaver>,
    bug: Bug,
    side: Arc<Mutex<Side>>,
    shared: Arc<Shared>,
    instance: u64,
}

impl MutantSaver {
    /// A fresh, empty memory saver with `bug` switched on.
    pub fn new(bug: Bug) -> Self {
        Self { inner: Arc::new(MemorySaver::new()), bug, side: Arc::default(), shared: Arc::default(), instance: 0 }
    }

    /// Another instance on the same storage, with the same bug.
    pub fn reopen(&self) -> Self {
        let instance = self.shared.instances.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        Self {
            inner: self.inner.clone(),
            bug: self.bug,
            side: self.side.clone(),
            shared: self.shared.clone(),
            instance,
        }
    }

    /// Takes the storage lock for one call ([`Bug::BusyAcrossInstances`]); other bugs take
    /// nothing.
    ///
    /// # Errors
    /// `Storage` ("database is locked") when a call of another instance holds it.
    fn busy_enter(&self) -> Result<Option<BusyGuard>, CheckpointError> {
        if self.bug != Bug::BusyAcrossInstances {
            return Ok(None);
        }
        let mut lock = self.shared.lock.lock().unwrap_or_else(|e| e.into_inner());
        match &mut *lock {
            Some((owner, _)) if *owner != self.instance => {
                return Err(CheckpointError::storage_msg("database is locked"));
            }
            Some((_, calls)) => *calls += 1,
            None => *lock = Some((self.instance, 1)),
        }
        Ok(Some(BusyGuard(self.shared.clone())))
    }

    /// Records `op` as this instance's acknowledged, not yet stored operation, which stores
    /// the one before ([`Bug::AckBeforeCommit`]); `None` stores it without a new one.
    fn set_uncommitted(&self, op: Option<Uncommitted>) {
        let op = match (self.bug, op) {
            (Bug::AckBeforeCommit, Some(op @ (Uncommitted::Put(_) | Uncommitted::Writes(..))))
            | (Bug::DeleteBeforeCommit, Some(op @ Uncommitted::Delete(..))) => Some(op),
            (Bug::AckBeforeCommit | Bug::DeleteBeforeCommit, _) => None,
            _ => return,
        };
        let mut u = self.shared.uncommitted.lock().unwrap_or_else(|e| e.into_inner());
        match op {
            Some(op) => u.insert(self.instance, op),
            None => u.remove(&self.instance),
        };
    }

    /// What another instance's uncommitted `delete_thread(thread)` still shows this
    /// instance ([`Bug::DeleteBeforeCommit`]).
    fn deleted_but_visible(&self, thread: &str) -> Option<Vec<CheckpointTuple>> {
        if self.bug != Bug::DeleteBeforeCommit {
            return None;
        }
        let u = self.shared.uncommitted.lock().unwrap_or_else(|e| e.into_inner());
        u.iter().find_map(|(instance, op)| match op {
            Uncommitted::Delete(t, snapshot) if *instance != self.instance && t == thread => Some(snapshot.clone()),
            _ => None,
        })
    }

    /// `t` as this instance sees it under [`Bug::AckBeforeCommit`]: none when it is another
    /// instance's uncommitted put, without the writes of another instance's uncommitted
    /// put_writes.
    fn committed(&self, mut t: CheckpointTuple) -> Option<CheckpointTuple> {
        if self.bug != Bug::AckBeforeCommit {
            return Some(t);
        }
        let key: CpKey = (
            t.config.thread_id.clone(),
            t.config.checkpoint_ns.clone(),
            t.config.checkpoint_id.clone().unwrap_or_default(),
        );
        let u = self.shared.uncommitted.lock().unwrap_or_else(|e| e.into_inner());
        for (instance, op) in u.iter() {
            if *instance == self.instance {
                continue;
            }
            match op {
                Uncommitted::Put(k) if *k == key => return None,
                Uncommitted::Writes(k, ws) if *k == key => {
                    t.pending_writes.retain(|w| {
                        !ws.iter().any(|(task, ch, v)| *task == w.task_id && *ch == w.channel && *v == w.value)
                    });
                }
                _ => {}
            }
        }
        Some(t)
    }

    /// The bug.
    pub fn bug(&self) -> Bug {
        self.bug
    }

    fn side(&self) -> MutexGuard<'_, Side> {
        self.side.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The thread id the base methods use, after the empty-thread bugs.
    fn thread(&self, thread_id: &str) -> String {
        if thread_id.is_empty() {
            match self.bug {
                Bug::EmptyThreadIdDefaulted => return "default".to_owned(),
                Bug::EmptyThreadIdPanics => panic!("thread_id is empty"),
                _ => {}
            }
        }
        thread_id.to_owned()
    }

    fn config(&self, config: &CheckpointConfig) -> CheckpointConfig {
        let mut c = config.clone();
        c.thread_id = self.thread(&config.thread_id);
        c
    }

    /// Every tuple of `thread` (all namespaces), newest first.
    async fn snapshot(&self, thread: &str) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        self.inner.list(thread, &ListOptions::all()).await
    }

    /// Puts `tuples` again (oldest first), each under its own config's thread and
    /// namespace with its parent, carried values and pending writes.
    async fn replay(&self, mut tuples: Vec<CheckpointTuple>) -> Result<(), CheckpointError> {
        tuples.sort_by(|a, b| a.config.checkpoint_id.cmp(&b.config.checkpoint_id));
        for t in tuples {
            let cfg = CheckpointConfig {
                thread_id: t.config.thread_id.clone(),
                checkpoint_ns: t.config.checkpoint_ns.clone(),
                checkpoint_id: t.parent_config.as_ref().and_then(|p| p.checkpoint_id.clone()),
            };
            let checkpoint = (*t.checkpoint).clone();
            let new_versions: ChannelVersions = checkpoint
                .channel_versions
                .iter()
                .filter(|(ch, _)| checkpoint.channel_values.contains_key(*ch))
                .map(|(ch, v)| (ch.clone(), v.clone()))
                .collect();
            let stored = self.inner.put(&cfg, checkpoint, t.metadata.clone(), new_versions).await?;
            self.side().threads.insert(stored.thread_id.clone());
            self.replay_writes(&stored, &t.pending_writes).await?;
        }
        Ok(())
    }

    /// Puts `writes` again for `config`, one call per (task_path, task_id), in order.
    async fn replay_writes(&self, config: &CheckpointConfig, writes: &[PendingWrite]) -> Result<(), CheckpointError> {
        let mut groups: BTreeMap<(String, String), Vec<(String, TypedValue)>> = BTreeMap::new();
        for w in writes {
            groups
                .entry((w.task_path.clone(), w.task_id.clone()))
                .or_default()
                .push((w.channel.clone(), w.value.clone()));
        }
        for ((path, task), ws) in groups {
            self.inner.put_writes(config, ws, &task, &path).await?;
        }
        Ok(())
    }

    /// The tuples of `thread` after deleting it, for bugs that keep part of it.
    async fn take_thread(&self, thread: &str) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        let snap = self.snapshot(thread).await?;
        self.inner.delete_thread(thread).await?;
        Ok(snap)
    }

    fn known_threads(&self) -> Vec<String> {
        self.side().threads.iter().cloned().collect()
    }

    /// What a read returns after the read-side bugs. `listed` is true for `list`.
    fn on_read(&self, mut t: CheckpointTuple, listed: bool) -> CheckpointTuple {
        let key: CpKey = (
            t.config.thread_id.clone(),
            t.config.checkpoint_ns.clone(),
            t.config.checkpoint_id.clone().unwrap_or_default(),
        );
        let side = self.side();
        match self.bug {
            Bug::IntVersionReadAsString => {
                let cp = Arc::make_mut(&mut t.checkpoint);
                for v in cp.channel_versions.values_mut() {
                    if let ChannelVersion::Int(i) = v {
                        *v = ChannelVersion::Str(i.to_string());
                    }
                }
            }
            Bug::ParentIsSelf => t.parent_config = Some(t.config.clone()),
            Bug::ParentConfigRootNamespace => {
                if let Some(p) = &mut t.parent_config {
                    p.checkpoint_ns.clear();
                }
            }
            Bug::ParentConfigBlankThread => {
                if let Some(p) = &mut t.parent_config {
                    p.thread_id.clear();
                }
            }
            Bug::OnlyNewVersionsValuesStored | Bug::UncarriedChannelsVanish => {
                let keep = if self.bug == Bug::OnlyNewVersionsValuesStored {
                    side.new_versions.get(&key)
                } else {
                    side.carried.get(&key)
                };
                if let Some(keep) = keep {
                    Arc::make_mut(&mut t.checkpoint).channel_values.retain(|ch, _| keep.contains(ch));
                }
            }
            Bug::ChannelOutsideVersionsKept => {
                if let Some(extra) = side.extra_values.get(&key) {
                    let cp = Arc::make_mut(&mut t.checkpoint);
                    for (ch, v) in extra {
                        cp.channel_values.entry(ch.clone()).or_insert_with(|| v.clone());
                    }
                }
            }
            Bug::SiblingValuesCollide => {
                let cp = Arc::make_mut(&mut t.checkpoint);
                let versions = cp.channel_versions.clone();
                for (ch, version) in versions {
                    let bk = (key.0.clone(), key.1.clone(), ch.clone(), version);
                    if let Some(v) = side.blobs.get(&bk) {
                        cp.channel_values.insert(ch, v.clone());
                    }
                }
            }
            Bug::ReputDropsWrites => {
                if let Some(hidden) = side.hidden_writes.get(&key) {
                    t.pending_writes.retain(|w| !hidden.contains(w));
                }
            }
            b if b.is_mirror() => {
                if let (false, Some(mirror)) = (t.pending_writes.is_empty(), side.mirror.get(&key)) {
                    t.pending_writes = sorted_mirror(mirror.clone());
                }
            }
            Bug::WriteKeyIgnoresCheckpoint => {
                if let Some(ws) = side.ns_writes.get(&(key.0.clone(), key.1.clone())) {
                    t.pending_writes = sorted_mirror(ws.clone());
                }
            }
            Bug::LostUpdate | Bug::CheckThenInsertRace => {
                if let Some(ws) = side.rmw_writes.get(&key) {
                    t.pending_writes = sorted_mirror(ws.clone());
                }
            }
            Bug::PendingWritesReversed => t.pending_writes.reverse(),
            Bug::PendingWritesIgnoreTaskPath => t.pending_writes.sort_by(|a, b| a.task_id.cmp(&b.task_id)),
            Bug::PendingWritesIndexUnsigned => {
                // Within one (task_path, task_id) the inner order is by signed index; unsigned,
                // the special (negative) indexes come after every regular one.
                t.pending_writes.sort_by_key(|w| {
                    (w.task_path.clone(), w.task_id.clone(), special_write_index(&w.channel).is_some())
                });
            }
            Bug::PendingWritesIndexAsText => {
                let idx = |w: &PendingWrite| {
                    side.write_idx
                        .get(&(key.clone(), w.task_id.clone(), w.channel.clone()))
                        .copied()
                        .or_else(|| special_write_index(&w.channel))
                        .unwrap_or(0)
                        .to_string()
                };
                t.pending_writes.sort_by_cached_key(|w| (w.task_path.clone(), w.task_id.clone(), idx(w)));
            }
            Bug::CopyKeepsSourceThreadId | Bug::CopyParentNamesSource => {
                if let Some(source) = side.copied_from.get(&t.config.thread_id) {
                    if self.bug == Bug::CopyKeepsSourceThreadId {
                        t.config.thread_id = source.clone();
                    }
                    if let Some(p) = &mut t.parent_config {
                        p.thread_id = source.clone();
                    }
                }
            }
            Bug::ListDropsPendingWrites if listed => t.pending_writes.clear(),
            Bug::ListDropsParentConfig if listed => t.parent_config = None,
            _ => {}
        }
        t
    }

    /// `list` after the bugs that change its options or its result.
    async fn list_mutated(&self, thread: &str, options: &ListOptions) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        let mut o = options.clone();
        let inner = &self.inner;
        match self.bug {
            Bug::ListLimitZeroUnlimited if o.limit == Some(0) => o.limit = None,
            Bug::ListBeforeIgnored => o.before = None,
            Bug::ListBeforeUnknownIgnored => {
                if let Some(before) = &o.before {
                    let found = inner.list(thread, &ListOptions::all().id(before.clone())).await?;
                    if found.is_empty() {
                        o.before = None;
                    }
                }
            }
            Bug::ListFilterIgnored => o.filter.clear(),
            Bug::ListFilterIgnoredWithLimit if o.limit.is_some() => o.filter.clear(),
            Bug::ListWithoutNamespaceRootOnly if o.checkpoint_ns.is_none() => o.checkpoint_ns = Some(String::new()),
            Bug::ListRootNamespaceSpansAll if o.checkpoint_ns.as_deref() == Some("") => o.checkpoint_ns = None,
            Bug::ListIgnoresCheckpointId => o.checkpoint_id = None,
            _ => {}
        }
        let out = match self.bug {
            Bug::ListOldestFirst => {
                let limit = o.limit.take();
                let mut r = inner.list(thread, &o).await?;
                r.reverse();
                truncate(r, limit)
            }
            Bug::ListInsertionOrder => {
                let limit = o.limit.take();
                let mut r = inner.list(thread, &o).await?;
                let side = self.side();
                let seq = |t: &CheckpointTuple| {
                    let key = (
                        t.config.thread_id.clone(),
                        t.config.checkpoint_ns.clone(),
                        t.config.checkpoint_id.clone().unwrap_or_default(),
                    );
                    side.put_seq.get(&key).copied().unwrap_or(0)
                };
                r.sort_by_key(|t| std::cmp::Reverse(seq(t)));
                drop(side);
                truncate(r, limit)
            }
            Bug::ListLimitKeepsOldest => {
                let limit = o.limit.take();
                let mut r = inner.list(thread, &o).await?;
                if let Some(l) = limit {
                    r = r.split_off(r.len().saturating_sub(l));
                }
                r
            }
            Bug::ListBeforeInclusive => {
                let (limit, before) = (o.limit.take(), o.before.take());
                let mut r = inner.list(thread, &o).await?;
                if let Some(b) = before {
                    r.retain(|t| t.config.checkpoint_id.as_deref().is_some_and(|id| id <= b.as_str()));
                }
                truncate(r, limit)
            }
            Bug::ListBeforeAfterLimit => {
                let before = o.before.take();
                let mut r = inner.list(thread, &o).await?;
                if let Some(b) = before {
                    r.retain(|t| t.config.checkpoint_id.as_deref().is_some_and(|id| id < b.as_str()));
                }
                r
            }
            Bug::ListFilterNumbersAsText
            | Bug::ListFilterNullNeedsKey
            | Bug::ListFilterBoolEqualsNumber
            | Bug::ListFilterFirstKeyOnly
            | Bug::ListFilterCaseInsensitive
            | Bug::ListFilterNestedContainment => {
                let (limit, filter) = (o.limit.take(), std::mem::take(&mut o.filter));
                let mut r = inner.list(thread, &o).await?;
                r.retain(|t| filter_matches(self.bug, &t.metadata, &filter));
                truncate(r, limit)
            }
            Bug::ListGroupedByNamespace => {
                let limit = o.limit.take();
                let mut r = inner.list(thread, &o).await?;
                r.sort_by(|a, b| a.config.checkpoint_ns.cmp(&b.config.checkpoint_ns));
                truncate(r, limit)
            }
            Bug::ListEqualIdsNamespaceDescending => {
                let limit = o.limit.take();
                let mut r = inner.list(thread, &o).await?;
                r.sort_by(|a, b| {
                    b.config
                        .checkpoint_id
                        .cmp(&a.config.checkpoint_id)
                        .then_with(|| b.config.checkpoint_ns.cmp(&a.config.checkpoint_ns))
                });
                truncate(r, limit)
            }
            Bug::ListLimitPerNamespace if o.checkpoint_ns.is_none() && o.limit.is_some() => {
                let namespaces: BTreeSet<String> =
                    self.snapshot(thread).await?.into_iter().map(|t| t.config.checkpoint_ns).collect();
                let mut r = Vec::new();
                for ns in namespaces {
                    let mut per = o.clone();
                    per.checkpoint_ns = Some(ns);
                    r.extend(inner.list(thread, &per).await?);
                }
                r.sort_by(|a, b| {
                    b.config
                        .checkpoint_id
                        .cmp(&a.config.checkpoint_id)
                        .then_with(|| a.config.checkpoint_ns.cmp(&b.config.checkpoint_ns))
                });
                r
            }
            Bug::ListIgnoresThread => {
                let limit = o.limit.take();
                let mut threads = self.known_threads();
                if !threads.iter().any(|t| t == thread) {
                    threads.push(thread.to_owned());
                }
                let mut r = Vec::new();
                for t in threads {
                    r.extend(inner.list(&t, &o).await?);
                }
                r.sort_by(|a, b| {
                    b.config
                        .checkpoint_id
                        .cmp(&a.config.checkpoint_id)
                        .then_with(|| a.config.checkpoint_ns.cmp(&b.config.checkpoint_ns))
                });
                truncate(r, limit)
            }
            _ => inner.list(thread, &o).await?,
        };
        Ok(out)
    }

    /// CONTRACT §3 delta_channel_history, walked through `get_tuple`, with a delta bug.
    async fn delta_mutated(
        &self,
        config: &CheckpointConfig,
        channels: &[String],
    ) -> Result<BTreeMap<String, DeltaChannelHistory>, CheckpointError> {
        let bug = self.bug;
        let all_channels: Vec<String>;
        let channels = if bug == Bug::DeltaNoChannelsMeansAll && channels.is_empty() {
            // Every channel with a version or a write on the target's ancestry.
            let (mut seen, mut visited) = (BTreeSet::new(), BTreeSet::new());
            let mut cursor = Some(config.clone());
            while let Some(c) = cursor {
                let Some(t) = self.inner.get_tuple(&c).await? else { break };
                if !visited.insert(t.config.checkpoint_id.clone()) {
                    break;
                }
                seen.extend(t.checkpoint.channel_versions.keys().cloned());
                seen.extend(t.pending_writes.iter().map(|w| w.channel.clone()));
                cursor = t.parent_config;
            }
            all_channels = seen.into_iter().collect();
            &all_channels[..]
        } else {
            channels
        };
        let mut out: BTreeMap<String, DeltaChannelHistory> =
            channels.iter().map(|c| (c.clone(), DeltaChannelHistory::default())).collect();
        if channels.is_empty() {
            return Ok(out);
        }
        let mut cfg = config.clone();
        if bug == Bug::DeltaIgnoresNamespace {
            cfg.checkpoint_ns.clear();
        }
        if bug == Bug::DeltaLatestNotResolved && cfg.checkpoint_id.is_none() {
            return Ok(out);
        }
        let Some(target) = self.inner.get_tuple(&cfg).await? else {
            if bug == Bug::DeltaMissingTargetFails {
                return Err(CheckpointError::storage_msg(format!("delta_channel_history: no checkpoint at {cfg}")));
            }
            return Ok(out);
        };
        // Per channel: the writes of each visited checkpoint, newest checkpoint first.
        let mut groups: BTreeMap<String, Vec<Vec<PendingWrite>>> = BTreeMap::new();
        let mut in_play: BTreeSet<String> = channels.iter().cloned().collect();
        if bug == Bug::DeltaIncludesTargetWrites {
            for ch in &in_play {
                groups.entry(ch.clone()).or_default().push(on_channel(&target.pending_writes, ch));
            }
        }
        if bug == Bug::DeltaSeedFromTarget {
            for ch in channels {
                if let Some(v) = target.checkpoint.channel_values.get(ch) {
                    if let Some(e) = out.get_mut(ch) {
                        e.seed = Some(v.clone());
                    }
                    in_play.remove(ch);
                }
            }
        }
        let mut cursor = self.delta_next(&target).await?;
        let mut seen = BTreeSet::new();
        while let Some(pc) = cursor {
            if in_play.is_empty() || !seen.insert(pc.checkpoint_id.clone()) {
                break;
            }
            let Some(anc) = self.inner.get_tuple(&pc).await? else { break };
            for ch in in_play.clone() {
                let mut ws = on_channel(&anc.pending_writes, &ch);
                if bug == Bug::DeltaReversesWithinCheckpoint {
                    ws.reverse();
                }
                let seed = anc.checkpoint.channel_values.get(&ch);
                if !(bug == Bug::DeltaExcludesSeedWrites && seed.is_some()) {
                    groups.entry(ch.clone()).or_default().push(ws);
                }
                if let Some(v) = seed {
                    if let Some(e) = out.get_mut(&ch) {
                        e.seed = Some(v.clone());
                    }
                    in_play.remove(&ch);
                }
            }
            if bug == Bug::DeltaStopsAfterParent {
                break;
            }
            cursor = self.delta_next(&anc).await?;
        }
        for (ch, g) in groups {
            if let Some(e) = out.get_mut(&ch) {
                e.writes = if bug == Bug::DeltaNewestFirst {
                    g.into_iter().flatten().collect()
                } else {
                    g.into_iter().rev().flatten().collect()
                };
            }
        }
        if bug == Bug::DeltaOmitsEmptyChannels {
            out.retain(|_, h| h.seed.is_some() || !h.writes.is_empty());
        }
        Ok(out)
    }

    /// The next checkpoint of the delta walk: the parent, or (for the id-order bug) the
    /// checkpoint with the next smaller id.
    async fn delta_next(&self, t: &CheckpointTuple) -> Result<Option<CheckpointConfig>, CheckpointError> {
        if self.bug != Bug::DeltaWalksIdOrder {
            return Ok(t.parent_config.clone());
        }
        let Some(id) = &t.config.checkpoint_id else { return Ok(None) };
        let opts = ListOptions::all().ns(t.config.checkpoint_ns.clone()).before(id.clone()).limit(1);
        Ok(self.inner.list(&t.config.thread_id, &opts).await?.into_iter().next().map(|p| p.config))
    }

    /// Copies `source` to `target` by replaying `source`'s tuples chosen and changed by `f`.
    async fn copy_by_replay(
        &self,
        source: &str,
        target: &str,
        f: impl Fn(Vec<CheckpointTuple>) -> Vec<CheckpointTuple>,
    ) -> Result<(), CheckpointError> {
        let tuples = f(self.snapshot(source).await?);
        let moved = tuples
            .into_iter()
            .map(|mut t| {
                t.config.thread_id = target.to_owned();
                if let Some(p) = &mut t.parent_config {
                    p.thread_id = target.to_owned();
                }
                t
            })
            .collect();
        self.replay(moved).await
    }
}

/// Mirror writes as `get_tuple` returns them: by (task_path, task_id, index).
fn sorted_mirror(mut ws: Vec<MirrorWrite>) -> Vec<PendingWrite> {
    ws.sort_by(|a, b| (&a.task_path, &a.task_id, a.idx).cmp(&(&b.task_path, &b.task_id, b.idx)));
    ws.into_iter()
        .map(|w| PendingWrite { task_id: w.task_id, task_path: w.task_path, channel: w.channel, value: w.value })
        .collect()
}

/// Holds the storage lock of [`Bug::BusyAcrossInstances`] for one call.
struct BusyGuard(Arc<Shared>);

impl Drop for BusyGuard {
    fn drop(&mut self) {
        let mut lock = self.0.lock.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, calls)) = &mut *lock {
            *calls -= 1;
            if *calls == 0 {
                *lock = None;
            }
        }
    }
}

/// The window in which the concurrency bugs show: 5 ms on the runtime's timer,
/// long enough that calls made at the same time from other tasks (or instances) land in it.
async fn race_window() {
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
}

/// `r` cut to `limit`.
fn truncate(mut r: Vec<CheckpointTuple>, limit: Option<usize>) -> Vec<CheckpointTuple> {
    if let Some(l) = limit {
        r.truncate(l);
    }
    r
}

/// The writes of `writes` on channel `ch`, in order.
fn on_channel(writes: &[PendingWrite], ch: &str) -> Vec<PendingWrite> {
    writes.iter().filter(|w| w.channel == ch).cloned().collect()
}

/// The newest tuple of each namespace of `tuples` (newest first).
fn latest_per_namespace(tuples: Vec<CheckpointTuple>) -> Vec<CheckpointTuple> {
    let mut seen = BTreeSet::new();
    tuples.into_iter().filter(|t| seen.insert(t.config.checkpoint_ns.clone())).collect()
}

/// The oldest tuple of each namespace of `tuples` (newest first).
fn oldest_per_namespace(mut tuples: Vec<CheckpointTuple>) -> Vec<CheckpointTuple> {
    tuples.reverse();
    latest_per_namespace(tuples)
}

/// The metadata filter of a filter bug.
fn filter_matches(bug: Bug, metadata: &CheckpointMetadata, filter: &CheckpointMetadata) -> bool {
    if bug == Bug::ListFilterFirstKeyOnly {
        let first: CheckpointMetadata = filter.iter().take(1).map(|(k, v)| (k.clone(), v.clone())).collect();
        return metadata_matches(metadata, &first);
    }
    filter.iter().all(|(key, want)| match (metadata.get(key), bug) {
        (None, Bug::ListFilterNullNeedsKey) => false,
        (None, _) => want.is_null(),
        (Some(have), _) => value_matches(bug, have, want),
    })
}

fn value_matches(bug: Bug, have: &Value, want: &Value) -> bool {
    match (bug, have, want) {
        (Bug::ListFilterNumbersAsText, Value::Number(a), Value::Number(b)) => a.to_string() == b.to_string(),
        (Bug::ListFilterBoolEqualsNumber, Value::Bool(b), Value::Number(n))
        | (Bug::ListFilterBoolEqualsNumber, Value::Number(n), Value::Bool(b)) => {
            n.as_f64() == Some(if *b { 1.0 } else { 0.0 })
        }
        (Bug::ListFilterCaseInsensitive, Value::String(a), Value::String(b)) => a.to_lowercase() == b.to_lowercase(),
        (Bug::ListFilterNestedContainment, Value::Object(a), Value::Object(b)) => {
            b.iter().all(|(k, w)| a.get(k).is_some_and(|h| value_matches(bug, h, w)))
        }
        _ => json_equal(have, want),
    }
}

/// Applies `f` to every string of `v`, at any depth.
fn map_strings(v: &mut Value, f: &impl Fn(&str) -> String) {
    match v {
        Value::String(s) => *s = f(s),
        Value::Array(a) => a.iter_mut().for_each(|x| map_strings(x, f)),
        Value::Object(o) => o.values_mut().for_each(|x| map_strings(x, f)),
        _ => {}
    }
}

fn has_nul(v: &Value) -> bool {
    match v {
        Value::String(s) => s.contains('\0'),
        Value::Array(a) => a.iter().any(has_nul),
        Value::Object(o) => o.iter().any(|(k, x)| k.contains('\0') || has_nul(x)),
        _ => false,
    }
}

fn truncate_floats(v: &mut Value) {
    match v {
        Value::Number(n) if n.is_f64() => {
            if let Some(f) = n.as_f64() {
                *v = Value::from(f.trunc() as i64);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(truncate_floats),
        Value::Object(o) => o.values_mut().for_each(truncate_floats),
        _ => {}
    }
}

/// The metadata a metadata bug stores.
fn mutate_metadata(bug: Bug, metadata: &mut CheckpointMetadata) {
    match bug {
        Bug::MetadataFloatTruncated => metadata.values_mut().for_each(truncate_floats),
        Bug::MetadataNullDropped => metadata.retain(|_, v| !v.is_null()),
        Bug::MetadataNestedStringified => {
            for v in metadata.values_mut() {
                if v.is_object() || v.is_array() {
                    *v = Value::String(v.to_string());
                }
            }
        }
        Bug::MetadataNulStripped => metadata.values_mut().for_each(|v| map_strings(v, &|s| s.replace('\0', ""))),
        Bug::MetadataNonAsciiDropped => {
            metadata.values_mut().for_each(|v| map_strings(v, &|s| s.chars().filter(char::is_ascii).collect()))
        }
        Bug::MetadataParentsDropped => {
            metadata.remove("parents");
        }
        Bug::MetadataBoolAsInteger => {
            for v in metadata.values_mut() {
                if let Value::Bool(b) = v {
                    *v = Value::from(i64::from(*b));
                }
            }
        }
        _ => {}
    }
}

/// `data` without its NUL bytes. The NULs are found with `CStr::from_bytes_until_nul`,
/// which searches with the standard library's optimised `memchr`: a byte-by-byte filter
/// takes over a second on 16 MiB in an unoptimised build.
fn without_nul_bytes(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len());
    let mut rest = data;
    while let Ok(run) = std::ffi::CStr::from_bytes_until_nul(rest) {
        let n = run.to_bytes().len();
        out.extend_from_slice(&rest[..n]);
        rest = &rest[n + 1..];
    }
    out.extend_from_slice(rest);
    out
}

/// The channel values a value bug stores.
fn mutate_values(bug: Bug, checkpoint: &mut Checkpoint) {
    let values = &mut checkpoint.channel_values;
    match bug {
        Bug::TypeTagDropped => values.values_mut().for_each(|v| v.type_tag.clear()),
        Bug::EmptyBytesDropped => values.retain(|_, v| !v.data.is_empty()),
        Bug::NulBytesStripped => values.values_mut().for_each(|v| v.data = without_nul_bytes(&v.data)),
        Bug::NonUtf8Replaced => {
            for v in values.values_mut() {
                if std::str::from_utf8(&v.data).is_err() {
                    v.data = String::from_utf8_lossy(&v.data).into_owned().into_bytes();
                }
            }
        }
        Bug::LargeValueTruncated => values.values_mut().for_each(|v| v.data.truncate(1 << 20)),
        Bug::VersionsSeenDropped => checkpoint.versions_seen.clear(),
        Bug::UpdatedChannelsEmptyAsNone if checkpoint.updated_channels.as_ref().is_some_and(Vec::is_empty) => {
            checkpoint.updated_channels = None;
        }
        Bug::TsOverwritten => checkpoint.ts = "2000-01-01T00:00:00.000000+00:00".to_owned(),
        Bug::FormatVersionForced => checkpoint.v = 1,
        _ => {}
    }
}

/// Applies a mirror bug's key and replace rules to one `put_writes` call.
fn mirror_apply(
    bug: Bug,
    list: &mut Vec<MirrorWrite>,
    writes: &[(String, TypedValue)],
    task_id: &str,
    task_path: &str,
) {
    let all_special = writes.iter().all(|(c, _)| special_write_index(c).is_some());
    let mut regular_pos = 0i64;
    for (pos, (channel, value)) in writes.iter().enumerate() {
        let special = special_write_index(channel);
        let idx = match bug {
            Bug::SpecialIndexIsPosition => pos as i64,
            Bug::PositionsSkipSpecials => special.unwrap_or_else(|| {
                regular_pos += 1;
                regular_pos - 1
            }),
            _ => write_index(channel, pos),
        };
        let new = MirrorWrite {
            task_id: task_id.to_owned(),
            task_path: task_path.to_owned(),
            idx,
            channel: channel.clone(),
            value: value.clone(),
        };
        let replace = match bug {
            Bug::RegularWriteLastWins => true,
            Bug::SpecialWriteFirstWins => false,
            Bug::WriteRuleDecidedPerCall => all_special,
            Bug::RegularWritesDuplicated if special.is_none() => {
                list.push(new);
                continue;
            }
            _ => special.is_some(),
        };
        let existing =
            list.iter_mut().find(|w| w.idx == idx && (bug == Bug::WriteKeyIgnoresTask || w.task_id == task_id));
        match existing {
            Some(w) if replace => *w = new,
            Some(_) => {}
            None => list.push(new),
        }
    }
}

#[async_trait]
impl CheckpointSaver for MutantSaver {
    async fn put(
        &self,
        config: &CheckpointConfig,
        mut checkpoint: Checkpoint,
        mut metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Result<CheckpointConfig, CheckpointError> {
        let bug = self.bug;
        let mut cfg = self.config(config);
        if cfg.thread_id.is_empty() {
            return self.inner.put(&cfg, checkpoint, metadata, new_versions).await;
        }
        let busy = self.busy_enter()?;
        if busy.is_some() {
            race_window().await;
        }
        let nul = metadata.iter().any(|(k, v)| k.contains('\0') || has_nul(v));
        if bug == Bug::MetadataNulPanics && nul {
            panic!("metadata string contains a NUL character");
        }
        mutate_values(bug, &mut checkpoint);
        mutate_metadata(bug, &mut metadata);
        if bug == Bug::PutIgnoresNamespace {
            cfg.checkpoint_ns.clear();
        }
        if bug == Bug::ParentNotStored {
            cfg.checkpoint_id = None;
        }
        let own = cfg.clone().with_id(checkpoint.id.clone());
        let key: CpKey = (cfg.thread_id.clone(), cfg.checkpoint_ns.clone(), checkpoint.id.clone());
        match bug {
            Bug::EmptiedChannelKeepsOldValue | Bug::ChannelOutsideVersionsKept => {
                let parent = match &cfg.checkpoint_id {
                    Some(_) => self.inner.get_tuple(&cfg).await?,
                    None => None,
                };
                let parent_values = parent.map(|p| p.checkpoint.channel_values.clone()).unwrap_or_default();
                if bug == Bug::EmptiedChannelKeepsOldValue {
                    for ch in new_versions.keys() {
                        if checkpoint.channel_versions.contains_key(ch) && !checkpoint.channel_values.contains_key(ch) {
                            if let Some(v) = parent_values.get(ch) {
                                checkpoint.channel_values.insert(ch.clone(), v.clone());
                            }
                        }
                    }
                } else {
                    let mut extra: BTreeMap<String, TypedValue> = parent_values;
                    extra.extend(checkpoint.channel_values.iter().map(|(k, v)| (k.clone(), v.clone())));
                    extra.retain(|ch, _| !checkpoint.channel_versions.contains_key(ch));
                    self.side().extra_values.insert(key.clone(), extra);
                }
            }
            Bug::ReputIgnored | Bug::ReputKeepsOldParent | Bug::ReputDropsWrites | Bug::ReputMergesMetadata => {
                if let Some(old) = self.inner.get_tuple(&own).await? {
                    match bug {
                        Bug::ReputIgnored => return Ok(own),
                        Bug::ReputKeepsOldParent => {
                            cfg.checkpoint_id = old.parent_config.and_then(|p| p.checkpoint_id);
                        }
                        Bug::ReputDropsWrites => {
                            self.side().hidden_writes.entry(key.clone()).or_default().extend(old.pending_writes);
                        }
                        _ => {
                            for (k, v) in old.metadata {
                                metadata.entry(k).or_insert(v);
                            }
                        }
                    }
                }
            }
            Bug::DeleteThreadLeavesValues => {
                let side = self.side();
                for (ch, version) in &checkpoint.channel_versions {
                    if checkpoint.channel_values.contains_key(ch) || new_versions.contains_key(ch) {
                        continue;
                    }
                    let bk = (cfg.thread_id.clone(), cfg.checkpoint_ns.clone(), ch.clone(), version.clone());
                    if let Some(v) = side.deleted_values.get(&bk) {
                        checkpoint.channel_values.insert(ch.clone(), v.clone());
                    }
                }
            }
            _ => {}
        }
        {
            let mut side = self.side();
            side.threads.insert(cfg.thread_id.clone());
            match bug {
                Bug::OnlyNewVersionsValuesStored => {
                    side.new_versions.insert(key.clone(), new_versions.keys().cloned().collect());
                }
                Bug::UncarriedChannelsVanish | Bug::PruneDropsInheritedValues => {
                    side.carried.insert(key.clone(), checkpoint.channel_values.keys().cloned().collect());
                }
                Bug::SiblingValuesCollide => {
                    for (ch, v) in &checkpoint.channel_values {
                        if let Some(version) = checkpoint.channel_versions.get(ch) {
                            let bk = (key.0.clone(), key.1.clone(), ch.clone(), version.clone());
                            side.blobs.insert(bk, v.clone());
                        }
                    }
                }
                Bug::LatestByInsertionOrder => {
                    side.last_put.insert((key.0.clone(), key.1.clone()), key.2.clone());
                }
                Bug::ListInsertionOrder => {
                    let n = side.put_seq.len() as u64;
                    side.put_seq.insert(key.clone(), n);
                }
                _ => {}
            }
        }
        if bug == Bug::TornRead {
            let mut bare = checkpoint.clone();
            bare.channel_values.clear();
            self.inner.put(&cfg, bare, metadata.clone(), new_versions.clone()).await?;
            race_window().await;
        }
        if bug == Bug::ThreadIndexLostUpdate {
            let mut index = self.side().thread_index.get(&cfg.thread_id).cloned().unwrap_or_default();
            race_window().await;
            if !index.contains(&key) {
                index.push(key.clone());
            }
            self.side().thread_index.insert(cfg.thread_id.clone(), index);
        }
        let mut out = self.inner.put(&cfg, checkpoint, metadata, new_versions).await?;
        self.set_uncommitted(Some(Uncommitted::Put(key)));
        if bug == Bug::MetadataNulRefusedAfterStoring && nul {
            return Err(CheckpointError::InvalidInput("metadata: a string contains a NUL character".into()));
        }
        match bug {
            Bug::PutReturnsParentId => out.checkpoint_id = config.checkpoint_id.clone(),
            Bug::PutReturnsRootNamespace => out.checkpoint_ns.clear(),
            Bug::PutIgnoresNamespace => out.checkpoint_ns = config.checkpoint_ns.clone(),
            _ => {}
        }
        Ok(out)
    }

    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(String, TypedValue)>,
        task_id: &str,
        task_path: &str,
    ) -> Result<(), CheckpointError> {
        let bug = self.bug;
        let mut cfg = self.config(config);
        if cfg.thread_id.is_empty() {
            return self.inner.put_writes(&cfg, writes, task_id, task_path).await;
        }
        let busy = self.busy_enter()?;
        if busy.is_some() {
            race_window().await;
        }
        match bug {
            Bug::WritesWithoutCheckpointIdAccepted if cfg.checkpoint_id.is_none() => return Ok(()),
            Bug::EmptyWritesRejected if writes.is_empty() => {
                return Err(CheckpointError::InvalidInput("put_writes: no writes given".into()))
            }
            Bug::WritesIgnoreNamespace => cfg.checkpoint_ns.clear(),
            Bug::WritesBeforeCheckpointDropped
                if cfg.checkpoint_id.is_some() && self.inner.get_tuple(&cfg).await?.is_none() =>
            {
                return Ok(());
            }
            Bug::WritesAttachToLatest if cfg.checkpoint_id.is_some() => {
                if let Some(latest) = self.inner.get_tuple(&cfg.clone().without_id()).await? {
                    cfg.checkpoint_id = latest.config.checkpoint_id;
                }
            }
            _ => {}
        }
        let mut writes = writes;
        match bug {
            Bug::WriteTypeTagDropped => writes.iter_mut().for_each(|(_, v)| v.type_tag.clear()),
            Bug::WriteValueTruncated => writes.iter_mut().for_each(|(_, v)| v.data.truncate(1 << 20)),
            Bug::WritesSortedByChannel => {
                let mut regular: Vec<(String, TypedValue)> =
                    writes.iter().filter(|(c, _)| special_write_index(c).is_none()).cloned().collect();
                regular.sort_by(|a, b| a.0.cmp(&b.0));
                let mut sorted = regular.into_iter();
                writes = writes
                    .into_iter()
                    .map(|w| match special_write_index(&w.0) {
                        Some(_) => w,
                        None => sorted.next().unwrap_or(w),
                    })
                    .collect();
            }
            _ => {}
        }
        if let Some(id) = &cfg.checkpoint_id {
            let key: CpKey = (cfg.thread_id.clone(), cfg.checkpoint_ns.clone(), id.clone());
            let mut side = self.side();
            side.threads.insert(cfg.thread_id.clone());
            if bug.is_mirror() {
                mirror_apply(bug, side.mirror.entry(key).or_default(), &writes, task_id, task_path);
            } else if bug == Bug::WriteKeyIgnoresCheckpoint {
                let list = side.ns_writes.entry((key.0, key.1)).or_default();
                mirror_apply(bug, list, &writes, task_id, task_path);
            } else if bug == Bug::PendingWritesIndexAsText {
                for (pos, (ch, _)) in writes.iter().enumerate() {
                    let idx = write_index(ch, pos);
                    let wk = (key.clone(), task_id.to_owned(), ch.clone());
                    if idx < 0 {
                        side.write_idx.insert(wk, idx);
                    } else {
                        side.write_idx.entry(wk).or_insert(idx);
                    }
                }
            }
        }
        if bug == Bug::LostUpdate {
            if let Some(id) = &cfg.checkpoint_id {
                let key: CpKey = (cfg.thread_id.clone(), cfg.checkpoint_ns.clone(), id.clone());
                let mut list = self.side().rmw_writes.get(&key).cloned().unwrap_or_default();
                race_window().await;
                mirror_apply(bug, &mut list, &writes, task_id, task_path);
                self.side().rmw_writes.insert(key, list);
            }
        }
        if let (Bug::CheckThenInsertRace, Some(id)) = (bug, &cfg.checkpoint_id) {
            let key: CpKey = (cfg.thread_id.clone(), cfg.checkpoint_ns.clone(), id.clone());
            let idxs: Vec<i64> = writes.iter().enumerate().map(|(pos, (ch, _))| write_index(ch, pos)).collect();
            let present: Vec<bool> = {
                let side = self.side();
                let list = side.rmw_writes.get(&key);
                idxs.iter()
                    .map(|i| list.is_some_and(|l| l.iter().any(|w| w.task_id == task_id && w.idx == *i)))
                    .collect()
            };
            race_window().await;
            let mut side = self.side();
            let list = side.rmw_writes.entry(key).or_default();
            for ((idx, (channel, value)), present) in idxs.iter().zip(&writes).zip(present) {
                let new = MirrorWrite {
                    task_id: task_id.to_owned(),
                    task_path: task_path.to_owned(),
                    idx: *idx,
                    channel: channel.clone(),
                    value: value.clone(),
                };
                if *idx < 0 {
                    list.retain(|w| !(w.task_id == task_id && w.idx == *idx));
                    list.push(new);
                } else if !present {
                    list.push(new);
                }
            }
        }
        if bug == Bug::WritesNotAtomic && writes.len() > 1 {
            // One call per write, each repeating the ones before (no-ops: first wins) so
            // every write keeps its position; a reader between two sees part of the call.
            for n in 1..writes.len() {
                self.inner.put_writes(&cfg, writes[..n].to_vec(), task_id, task_path).await?;
                race_window().await;
            }
        }
        let uncommitted = match (&cfg.checkpoint_id, bug) {
            (Some(id), Bug::AckBeforeCommit) if !writes.is_empty() => Some(Uncommitted::Writes(
                (cfg.thread_id.clone(), cfg.checkpoint_ns.clone(), id.clone()),
                writes.iter().map(|(ch, v)| (task_id.to_owned(), ch.clone(), v.clone())).collect(),
            )),
            _ => None,
        };
        self.inner.put_writes(&cfg, writes, task_id, task_path).await?;
        if uncommitted.is_some() || bug == Bug::DeleteBeforeCommit {
            self.set_uncommitted(uncommitted);
        }
        Ok(())
    }

    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
        let cfg = self.config(config);
        if cfg.thread_id.is_empty() {
            return self.inner.get_tuple(&cfg).await;
        }
        let busy = self.busy_enter()?;
        if busy.is_some() {
            race_window().await;
        }
        let found = match (self.bug, &cfg.checkpoint_id) {
            (Bug::LatestByInsertionOrder, None) => {
                let last = self.side().last_put.get(&(cfg.thread_id.clone(), cfg.checkpoint_ns.clone())).cloned();
                match last {
                    Some(id) => match self.inner.get_tuple(&cfg.clone().with_id(id)).await? {
                        Some(t) => Some(t),
                        None => self.inner.get_tuple(&cfg).await?,
                    },
                    None => self.inner.get_tuple(&cfg).await?,
                }
            }
            (Bug::GetByIdIgnoresNamespace, Some(id)) => {
                self.inner.list(&cfg.thread_id, &ListOptions::all().id(id.clone())).await?.into_iter().next()
            }
            (Bug::RootLatestSpansNamespaces, None) if cfg.checkpoint_ns.is_empty() => {
                self.inner.list(&cfg.thread_id, &ListOptions::all().limit(1)).await?.into_iter().next()
            }
            (Bug::GetTupleIgnoresThread, _) => {
                let mut threads = self.known_threads();
                threads.push(cfg.thread_id.clone());
                let mut best: Option<CheckpointTuple> = None;
                for thread_id in threads {
                    let other = CheckpointConfig { thread_id, ..cfg.clone() };
                    if let Some(t) = self.inner.get_tuple(&other).await? {
                        if best.as_ref().is_none_or(|b| t.config.checkpoint_id > b.config.checkpoint_id) {
                            best = Some(t);
                        }
                    }
                }
                best
            }
            (Bug::MissingIdFallsBackToLatest, Some(_)) => match self.inner.get_tuple(&cfg).await? {
                Some(t) => Some(t),
                None => self.inner.get_tuple(&cfg.clone().without_id()).await?,
            },
            _ => self.inner.get_tuple(&cfg).await?,
        };
        let found = match self.deleted_but_visible(&cfg.thread_id) {
            Some(snapshot) => snapshot.into_iter().find(|t| {
                t.config.checkpoint_ns == cfg.checkpoint_ns
                    && (cfg.checkpoint_id.is_none() || t.config.checkpoint_id == cfg.checkpoint_id)
            }),
            None => found,
        };
        let found = match (self.bug, found) {
            (Bug::AckBeforeCommit, Some(t)) => match (self.committed(t), &cfg.checkpoint_id) {
                (Some(t), _) => Some(t),
                (None, Some(_)) => None,
                (None, None) => {
                    let ns = ListOptions::all().ns(cfg.checkpoint_ns.clone());
                    self.inner.list(&cfg.thread_id, &ns).await?.into_iter().find_map(|t| self.committed(t))
                }
            },
            (_, found) => found,
        };
        let found = found.map(|t| self.on_read(t, false));
        Ok(match self.bug {
            Bug::GetTupleReturnsCallerConfig => found.map(|t| CheckpointTuple { config: config.clone(), ..t }),
            Bug::GetTupleMissingGivesEmpty if found.is_none() => Some(CheckpointTuple {
                config: cfg.clone(),
                checkpoint: Arc::new(Checkpoint {
                    id: cfg.checkpoint_id.clone().unwrap_or_default(),
                    ..Checkpoint::default()
                }),
                metadata: CheckpointMetadata::new(),
                parent_config: None,
                pending_writes: Vec::new(),
            }),
            _ => found,
        })
    }

    async fn list(&self, thread_id: &str, options: &ListOptions) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        let thread = self.thread(thread_id);
        if thread.is_empty() {
            return self.inner.list(&thread, options).await;
        }
        let busy = self.busy_enter()?;
        if busy.is_some() {
            race_window().await;
        }
        if let Some(snapshot) = self.deleted_but_visible(&thread) {
            let scoped = snapshot.into_iter().filter(|t| {
                options.checkpoint_ns.as_ref().is_none_or(|ns| *ns == t.config.checkpoint_ns)
                    && options.checkpoint_id.as_ref().is_none_or(|id| Some(id) == t.config.checkpoint_id.as_ref())
            });
            return Ok(truncate(scoped.collect(), options.limit));
        }
        if self.bug == Bug::ThreadIndexLostUpdate {
            let unlimited = ListOptions { limit: None, ..options.clone() };
            let r = self.list_mutated(&thread, &unlimited).await?;
            let side = self.side();
            let Some(index) = side.thread_index.get(&thread) else { return Ok(truncate(r, options.limit)) };
            let listed: Vec<CheckpointTuple> = r
                .into_iter()
                .filter(|t| {
                    index.iter().any(|k| k.1 == t.config.checkpoint_ns && Some(&k.2) == t.config.checkpoint_id.as_ref())
                })
                .collect();
            return Ok(truncate(listed, options.limit));
        }
        let out = if self.bug == Bug::AckBeforeCommit {
            let unlimited = ListOptions { limit: None, ..options.clone() };
            let r = self.list_mutated(&thread, &unlimited).await?.into_iter().filter_map(|t| self.committed(t));
            truncate(r.collect(), options.limit)
        } else {
            self.list_mutated(&thread, options).await?
        };
        Ok(out.into_iter().map(|t| self.on_read(t, true)).collect())
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<(), CheckpointError> {
        let thread = self.thread(thread_id);
        if thread.is_empty() {
            return self.inner.delete_thread(&thread).await;
        }
        let busy = self.busy_enter()?;
        if busy.is_some() {
            race_window().await;
        }
        if self.bug == Bug::DeleteBeforeCommit {
            let snapshot = self.snapshot(&thread).await?;
            self.set_uncommitted(Some(Uncommitted::Delete(thread.clone(), snapshot)));
        } else {
            self.set_uncommitted(None);
        }
        {
            let mut side = self.side();
            side.mirror.retain(|k, _| k.0 != thread);
            side.hidden_writes.retain(|k, _| k.0 != thread);
            side.ns_writes.retain(|k, _| k.0 != thread);
            side.rmw_writes.retain(|k, _| k.0 != thread);
            side.thread_index.remove(&thread);
        }
        match self.bug {
            Bug::DeleteThreadNoop => Ok(()),
            Bug::DeleteUnknownThreadFails => {
                if self.inner.list(&thread, &ListOptions::all().limit(1)).await?.is_empty() {
                    return Err(CheckpointError::storage_msg(format!("delete_thread: no thread {thread}")));
                }
                self.inner.delete_thread(&thread).await
            }
            Bug::DeleteThreadRootOnly => {
                let kept = self.take_thread(&thread).await?.into_iter().filter(|t| !t.config.checkpoint_ns.is_empty());
                self.replay(kept.collect()).await
            }
            Bug::DeleteThreadLeavesWrites => {
                for t in self.take_thread(&thread).await? {
                    self.replay_writes(&t.config, &t.pending_writes).await?;
                }
                Ok(())
            }
            Bug::DeleteThreadLeavesValues => {
                let snap = self.take_thread(&thread).await?;
                let mut side = self.side();
                for t in snap {
                    for (ch, v) in &t.checkpoint.channel_values {
                        if let Some(version) = t.checkpoint.channel_versions.get(ch) {
                            let bk = (thread.clone(), t.config.checkpoint_ns.clone(), ch.clone(), version.clone());
                            side.deleted_values.insert(bk, v.clone());
                        }
                    }
                }
                Ok(())
            }
            Bug::DeleteThreadDeletesAll => {
                let mut threads = self.known_threads();
                threads.push(thread);
                for t in threads {
                    self.inner.delete_thread(&t).await?;
                }
                Ok(())
            }
            _ => self.inner.delete_thread(&thread).await,
        }
    }

    fn get_next_version(&self, current: Option<&ChannelVersion>) -> ChannelVersion {
        match (self.bug, current) {
            (Bug::NextVersionRepeats, Some(c)) => c.clone(),
            (Bug::NextVersionStringRestarts, Some(ChannelVersion::Str(_))) => ChannelVersion::Int(1),
            _ => self.inner.get_next_version(current),
        }
    }

    async fn delete_for_runs(&self, run_ids: &[String]) -> Result<(), CheckpointError> {
        let listed = |t: &CheckpointTuple| {
            t.metadata.get("run_id").and_then(Value::as_str).is_some_and(|r| run_ids.iter().any(|x| x == r))
        };
        match self.bug {
            Bug::DeleteForRunsNoop => Ok(()),
            Bug::DeleteForRunsEmptyFails if run_ids.is_empty() => {
                Err(CheckpointError::InvalidInput("delete_for_runs: no run ids given".into()))
            }
            Bug::DeleteForRunsUnknownFails => {
                let mut found = false;
                for t in self.known_threads() {
                    found |= self.snapshot(&t).await?.iter().any(listed);
                }
                if !found && !run_ids.is_empty() {
                    return Err(CheckpointError::storage_msg(format!(
                        "delete_for_runs: no checkpoint of runs {run_ids:?}"
                    )));
                }
                self.inner.delete_for_runs(run_ids).await
            }
            Bug::DeleteForRunsFirstOnly => self.inner.delete_for_runs(&run_ids[..run_ids.len().min(1)]).await,
            Bug::DeleteForRunsWholeThread => {
                for t in self.known_threads() {
                    if self.snapshot(&t).await?.iter().any(listed) {
                        self.inner.delete_thread(&t).await?;
                    }
                }
                Ok(())
            }
            Bug::DeleteForRunsLeavesWrites | Bug::DeleteForRunsRootOnly => {
                let mut keep = Vec::new();
                for t in self.known_threads() {
                    keep.extend(self.snapshot(&t).await?.into_iter().filter(|t| listed(t)));
                }
                self.inner.delete_for_runs(run_ids).await?;
                if self.bug == Bug::DeleteForRunsLeavesWrites {
                    for t in keep {
                        self.replay_writes(&t.config, &t.pending_writes).await?;
                    }
                    Ok(())
                } else {
                    self.replay(keep.into_iter().filter(|t| !t.config.checkpoint_ns.is_empty()).collect()).await
                }
            }
            _ => self.inner.delete_for_runs(run_ids).await,
        }
    }

    async fn copy_thread(&self, source: &str, target: &str) -> Result<(), CheckpointError> {
        if !source.is_empty() && !target.is_empty() {
            self.side().threads.insert(target.to_owned());
        }
        match self.bug {
            Bug::CopyKeepsSourceThreadId | Bug::CopyParentNamesSource => {
                self.inner.copy_thread(source, target).await?;
                if !self.snapshot(source).await?.is_empty() {
                    self.side().copied_from.insert(target.to_owned(), source.to_owned());
                }
                Ok(())
            }
            Bug::CopyLatestOnly => self.copy_by_replay(source, target, latest_per_namespace).await,
            Bug::CopyRootOnly => {
                self.copy_by_replay(source, target, |ts| {
                    ts.into_iter().filter(|t| t.config.checkpoint_ns.is_empty()).collect()
                })
                .await
            }
            Bug::CopyDropsWrites => {
                self.copy_by_replay(source, target, |ts| {
                    ts.into_iter()
                        .map(|mut t| {
                            t.pending_writes.clear();
                            t
                        })
                        .collect()
                })
                .await
            }
            Bug::CopyDropsTaskPath => {
                self.copy_by_replay(source, target, |ts| {
                    ts.into_iter()
                        .map(|mut t| {
                            t.pending_writes.iter_mut().for_each(|w| w.task_path.clear());
                            t
                        })
                        .collect()
                })
                .await
            }
            Bug::CopyDropsValues => {
                self.copy_by_replay(source, target, |ts| {
                    ts.into_iter()
                        .map(|mut t| {
                            Arc::make_mut(&mut t.checkpoint).channel_values.clear();
                            t
                        })
                        .collect()
                })
                .await
            }
            Bug::CopyTwiceDuplicatesWrites => {
                let before: BTreeSet<(String, Option<String>)> = self
                    .snapshot(target)
                    .await?
                    .into_iter()
                    .map(|t| (t.config.checkpoint_ns, t.config.checkpoint_id))
                    .collect();
                self.inner.copy_thread(source, target).await?;
                for t in self.snapshot(source).await? {
                    if !before.contains(&(t.config.checkpoint_ns.clone(), t.config.checkpoint_id.clone())) {
                        continue;
                    }
                    let cfg = CheckpointConfig { thread_id: target.to_owned(), ..t.config.clone() };
                    // The regular writes again, twice: the first copy of each is ignored
                    // (its key exists), the second lands at new indexes.
                    let regular: Vec<PendingWrite> =
                        t.pending_writes.into_iter().filter(|w| special_write_index(&w.channel).is_none()).collect();
                    let doubled: Vec<PendingWrite> = regular.iter().chain(regular.iter()).cloned().collect();
                    self.replay_writes(&cfg, &doubled).await?;
                }
                Ok(())
            }
            Bug::CopyMovesSource => {
                self.inner.copy_thread(source, target).await?;
                self.inner.delete_thread(source).await
            }
            Bug::CopyClearsTarget => {
                self.inner.delete_thread(target).await?;
                self.inner.copy_thread(source, target).await
            }
            Bug::CopyMissingSourceFails => {
                if self.snapshot(source).await?.is_empty() {
                    return Err(CheckpointError::storage_msg(format!("copy_thread: no thread {source}")));
                }
                self.inner.copy_thread(source, target).await
            }
            _ => self.inner.copy_thread(source, target).await,
        }
    }

    async fn prune(&self, thread_ids: &[String], strategy: PruneStrategy) -> Result<(), CheckpointError> {
        let bug = self.bug;
        if bug == Bug::PruneEmptyFails && thread_ids.is_empty() {
            return Err(CheckpointError::InvalidInput("prune: no thread ids given".into()));
        }
        if bug == Bug::PruneDeleteKeepsLatest && strategy == PruneStrategy::Delete {
            return self.inner.prune(thread_ids, PruneStrategy::KeepLatest).await;
        }
        if strategy != PruneStrategy::KeepLatest {
            return self.inner.prune(thread_ids, strategy).await;
        }
        match bug {
            Bug::PruneNoop => Ok(()),
            Bug::PruneOtherThreads => {
                let mut all = self.known_threads();
                all.extend(thread_ids.iter().cloned());
                self.inner.prune(&all, strategy).await
            }
            Bug::PruneKeepsOldest
            | Bug::PruneDropsWrites
            | Bug::PruneDropsInheritedValues
            | Bug::PruneRootOnly
            | Bug::PruneLatestPerThread => {
                for thread in thread_ids {
                    let snap = self.take_thread(thread).await?;
                    let kept: Vec<CheckpointTuple> = match bug {
                        Bug::PruneKeepsOldest => oldest_per_namespace(snap),
                        Bug::PruneLatestPerThread => snap.into_iter().take(1).collect(),
                        Bug::PruneRootOnly => {
                            let (root, children): (Vec<_>, Vec<_>) =
                                snap.into_iter().partition(|t| t.config.checkpoint_ns.is_empty());
                            latest_per_namespace(root).into_iter().chain(children).collect()
                        }
                        Bug::PruneDropsWrites => latest_per_namespace(snap)
                            .into_iter()
                            .map(|mut t| {
                                t.pending_writes.clear();
                                t
                            })
                            .collect(),
                        _ => {
                            let side = self.side();
                            latest_per_namespace(snap)
                                .into_iter()
                                .map(|mut t| {
                                    let key = (
                                        t.config.thread_id.clone(),
                                        t.config.checkpoint_ns.clone(),
                                        t.config.checkpoint_id.clone().unwrap_or_default(),
                                    );
                                    if let Some(carried) = side.carried.get(&key) {
                                        Arc::make_mut(&mut t.checkpoint)
                                            .channel_values
                                            .retain(|ch, _| carried.contains(ch));
                                    }
                                    t
                                })
                                .collect()
                        }
                    };
                    self.replay(kept).await?;
                }
                Ok(())
            }
            _ => self.inner.prune(thread_ids, strategy).await,
        }
    }

    async fn delta_channel_history(
        &self,
        config: &CheckpointConfig,
        channels: &[String],
    ) -> Result<BTreeMap<String, DeltaChannelHistory>, CheckpointError> {
        if self.bug.is_delta() && !config.thread_id.is_empty() {
            return self.delta_mutated(config, channels).await;
        }
        self.inner.delta_channel_history(config, channels).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_nul_bytes_drops_every_nul_and_nothing_else() {
        assert_eq!(without_nul_bytes(b"\0a\0\0bc\0"), b"abc");
        assert_eq!(without_nul_bytes(b""), b"");
        assert_eq!(without_nul_bytes(b"\0\0"), b"");
        assert_eq!(without_nul_bytes(&[0xff, 0, 0xfe]), vec![0xff, 0xfe]);
    }

    #[test]
    fn filter_bugs_differ_from_the_contract_rule_only_where_they_say() {
        let md = |v: Value| match v {
            Value::Object(m) => m,
            _ => CheckpointMetadata::new(),
        };
        let meta = md(serde_json::json!({"n": 1, "b": true, "s": "Acme", "o": {"x": 1, "y": 2}}));
        assert!(!filter_matches(Bug::ListFilterNumbersAsText, &meta, &md(serde_json::json!({"n": 1.0}))));
        assert!(filter_matches(Bug::ListFilterNumbersAsText, &meta, &md(serde_json::json!({"n": 1}))));
        assert!(!filter_matches(Bug::ListFilterNullNeedsKey, &meta, &md(serde_json::json!({"missing": null}))));
        assert!(filter_matches(Bug::ListFilterBoolEqualsNumber, &meta, &md(serde_json::json!({"b": 1}))));
        assert!(filter_matches(Bug::ListFilterCaseInsensitive, &meta, &md(serde_json::json!({"s": "acme"}))));
        assert!(filter_matches(Bug::ListFilterNestedContainment, &meta, &md(serde_json::json!({"o": {"x": 1}}))));
        assert!(filter_matches(Bug::ListFilterFirstKeyOnly, &meta, &md(serde_json::json!({"b": true, "n": 2}))));
    }
}
