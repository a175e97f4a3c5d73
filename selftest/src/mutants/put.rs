//! Mutants of CONTRACT §2 put (and get_next_version): what is stored under which key,
//! what comes back, parents, the values of unchanged channels, re-puts.

use super::id_support::*;
use super::prelude::*;
use super::put_values::*;

/// `put` returns the parent's id instead of the stored checkpoint's.
#[derive(Default)]
pub struct PutReturnsParentId;

impl Bug for PutReturnsParentId {
    fn put_output(&self, caller: &CheckpointConfig, out: &mut CheckpointConfig) {
        out.checkpoint_id = caller.checkpoint_id.clone();
    }
}

/// `put` returns the root namespace whatever the config's.
#[derive(Default)]
pub struct PutReturnsRootNamespace;

impl Bug for PutReturnsRootNamespace {
    fn put_output(&self, _caller: &CheckpointConfig, out: &mut CheckpointConfig) {
        out.checkpoint_ns.clear();
    }
}

/// `put` stores every checkpoint in the root namespace (and returns the caller's).
#[derive(Default)]
pub struct PutIgnoresNamespace;

impl Bug for PutIgnoresNamespace {
    fn put_input(&self, put: &mut Put) {
        put.config.checkpoint_ns.clear();
    }
    fn put_output(&self, caller: &CheckpointConfig, out: &mut CheckpointConfig) {
        out.checkpoint_ns = caller.checkpoint_ns.clone();
    }
}

/// `put` does not record the parent.
#[derive(Default)]
pub struct ParentNotStored;

impl Bug for ParentNotStored {
    fn put_input(&self, put: &mut Put) {
        put.config.checkpoint_id = None;
    }
}

/// `parent_config` names the checkpoint itself (S09).
#[derive(Default)]
pub struct ParentIsSelf;

impl Bug for ParentIsSelf {
    fn tuple_output(&self, t: &mut CheckpointTuple) {
        t.parent_config = Some(t.config.clone());
    }
}

/// `parent_config` names the root namespace.
#[derive(Default)]
pub struct ParentConfigRootNamespace;

impl Bug for ParentConfigRootNamespace {
    fn tuple_output(&self, t: &mut CheckpointTuple) {
        if let Some(p) = &mut t.parent_config {
            p.checkpoint_ns.clear();
        }
    }
}

/// `parent_config` has an empty thread id.
#[derive(Default)]
pub struct ParentConfigBlankThread;

impl Bug for ParentConfigBlankThread {
    fn tuple_output(&self, t: &mut CheckpointTuple) {
        if let Some(p) = &mut t.parent_config {
            p.thread_id.clear();
        }
    }
}

/// Only the values of `new_versions` channels are stored (S06).
#[derive(Default)]
pub struct OnlyNewVersionsValuesStored(ChannelSets);

impl Bug for OnlyNewVersionsValuesStored {
    fn put_input(&self, put: &mut Put) {
        self.0.record(put, put.new_versions.keys());
    }
    fn tuple_output(&self, t: &mut CheckpointTuple) {
        self.0.retain(t);
    }
}

/// A channel whose value was not carried by the put is absent on read.
#[derive(Default)]
pub struct UncarriedChannelsVanish(ChannelSets);

#[async_trait]
impl Bug for UncarriedChannelsVanish {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        self.0.follow(&call);
        saver.forward(call).await
    }
    fn put_input(&self, put: &mut Put) {
        self.0.record(put, put.checkpoint.channel_values.keys());
    }
    fn tuple_output(&self, t: &mut CheckpointTuple) {
        self.0.retain(t);
    }
}

/// Channels missing from `channel_versions` keep the parent's (or the carried) value.
#[derive(Default)]
pub struct ChannelOutsideVersionsKept(Mutex<HashMap<CpKey, BTreeMap<String, TypedValue>>>);

#[async_trait]
impl Bug for ChannelOutsideVersionsKept {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        if let Invocation::Put(put) = &call {
            let mut extra = parent_values(saver, put).await?;
            let cp = &put.checkpoint;
            extra.extend(cp.channel_values.iter().map(|(k, v)| (k.clone(), v.clone())));
            extra.retain(|ch, _| !cp.channel_versions.contains_key(ch));
            let key = (put.config.thread_id.clone(), put.config.checkpoint_ns.clone(), cp.id.clone());
            lock(&self.0).insert(key, extra);
        }
        saver.forward(call).await
    }
    fn tuple_output(&self, t: &mut CheckpointTuple) {
        if let Some(extra) = lock(&self.0).get(&key_of(t)) {
            let cp = Arc::make_mut(&mut t.checkpoint);
            for (ch, v) in extra {
                cp.channel_values.entry(ch.clone()).or_insert_with(|| v.clone());
            }
        }
    }
}

/// A channel in `new_versions` without a value keeps the parent's value.
#[derive(Default)]
pub struct EmptiedChannelKeepsOldValue;

#[async_trait]
impl Bug for EmptiedChannelKeepsOldValue {
    async fn call(&self, saver: &Inner<'_>, mut call: Invocation) -> Result<Reply, CheckpointError> {
        if let Invocation::Put(put) = &mut call {
            let parent = parent_values(saver, put).await?;
            let cp = &mut put.checkpoint;
            for ch in put.new_versions.keys() {
                if cp.channel_versions.contains_key(ch) && !cp.channel_values.contains_key(ch) {
                    if let Some(v) = parent.get(ch) {
                        cp.channel_values.insert(ch.clone(), v.clone());
                    }
                }
            }
        }
        saver.forward(call).await
    }
}

/// (thread, namespace, channel, version).
type BlobKey = (String, String, String, ChannelVersion);

/// Values are keyed by (channel, version) only, so siblings overwrite each other.
#[derive(Default)]
pub struct SiblingValuesCollide(Mutex<HashMap<BlobKey, TypedValue>>);

impl Bug for SiblingValuesCollide {
    fn put_input(&self, put: &mut Put) {
        let (cfg, cp) = (&put.config, &put.checkpoint);
        for (ch, v) in &cp.channel_values {
            if let Some(version) = cp.channel_versions.get(ch) {
                let key = (cfg.thread_id.clone(), cfg.checkpoint_ns.clone(), ch.clone(), version.clone());
                lock(&self.0).insert(key, v.clone());
            }
        }
    }
    fn tuple_output(&self, t: &mut CheckpointTuple) {
        let (thread, ns) = (t.config.thread_id.clone(), t.config.checkpoint_ns.clone());
        let cp = Arc::make_mut(&mut t.checkpoint);
        for (ch, version) in cp.channel_versions.clone() {
            if let Some(v) = lock(&self.0).get(&(thread.clone(), ns.clone(), ch.clone(), version)) {
                cp.channel_values.insert(ch, v.clone());
            }
        }
    }
}

/// The channels `put` keeps unchanged: in `channel_versions`, without a value, not in
/// `new_versions`.
fn kept_channels(put: &Put) -> Vec<String> {
    let cp = &put.checkpoint;
    let kept = cp.channel_versions.keys().filter(|ch| !cp.channel_values.contains_key(*ch));
    kept.filter(|ch| !put.new_versions.contains_key(*ch)).cloned().collect()
}

/// An unchanged channel gets the newest value stored for that channel in the thread and
/// namespace, whatever its version and the parent: a fork of an older checkpoint reads a
/// later branch's value.
#[derive(Default)]
pub struct KeptChannelReadsNewestValue(Mutex<HashMap<(String, String, String), TypedValue>>);

impl Bug for KeptChannelReadsNewestValue {
    fn put_input(&self, put: &mut Put) {
        let mut newest = lock(&self.0);
        let (thread, ns) = (put.config.thread_id.clone(), put.config.checkpoint_ns.clone());
        for ch in kept_channels(put) {
            if let Some(v) = newest.get(&(thread.clone(), ns.clone(), ch.clone())) {
                put.checkpoint.channel_values.insert(ch, v.clone());
            }
        }
        for (ch, v) in &put.checkpoint.channel_values {
            newest.insert((thread.clone(), ns.clone(), ch.clone()), v.clone());
        }
    }
    fn delete_thread_input(&self, thread_id: &mut String) {
        lock(&self.0).retain(|k, _| k.0 != *thread_id);
    }
}

/// An unchanged channel gets the parent's value for that channel, whatever its version (no
/// lookup of the value stored at that version): keeping an older version than the
/// parent's reads the parent's value.
#[derive(Default)]
pub struct KeptChannelFromParentOnly;

#[async_trait]
impl Bug for KeptChannelFromParentOnly {
    async fn call(&self, saver: &Inner<'_>, mut call: Invocation) -> Result<Reply, CheckpointError> {
        if let Invocation::Put(put) = &mut call {
            let parent = parent_values(saver, put).await?;
            for ch in kept_channels(put) {
                if let Some(v) = parent.get(&ch) {
                    put.checkpoint.channel_values.insert(ch, v.clone());
                }
            }
        }
        saver.forward(call).await
    }
}

/// A kept channel reads the value last stored for its (channel, version) in any thread or
/// namespace: a lookup that forgets the scope, so one thread reads another's state.
#[derive(Default)]
pub struct KeptValueFromAnyThread(Mutex<HashMap<(String, ChannelVersion), TypedValue>>);

#[async_trait]
impl Bug for KeptValueFromAnyThread {
    async fn call(&self, saver: &Inner<'_>, mut call: Invocation) -> Result<Reply, CheckpointError> {
        if let Invocation::Put(put) = &mut call {
            let mut stored = lock(&self.0);
            for ch in kept_channels(put) {
                let version = put.checkpoint.channel_versions[&ch].clone();
                if let Some(v) = stored.get(&(ch.clone(), version)) {
                    put.checkpoint.channel_values.insert(ch, v.clone());
                }
            }
            let cp = &put.checkpoint;
            for (ch, v) in &cp.channel_values {
                if let Some(version) = cp.channel_versions.get(ch) {
                    stored.insert((ch.clone(), version.clone()), v.clone());
                }
            }
        }
        saver.forward(call).await
    }
}

/// The checkpoint a put replaces: the stored tuple with the put's id, if any.
async fn replaced(saver: &Inner<'_>, put: &Put) -> Result<Option<CheckpointTuple>, CheckpointError> {
    saver.saver().get_tuple(&put.config.clone().with_id(put.checkpoint.id.clone())).await
}

/// Re-putting an existing id is ignored.
#[derive(Default)]
pub struct ReputIgnored;

#[async_trait]
impl Bug for ReputIgnored {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        if let Invocation::Put(put) = &call {
            if replaced(saver, put).await?.is_some() {
                return Ok(Reply::Config(put.config.clone().with_id(put.checkpoint.id.clone())));
            }
        }
        saver.forward(call).await
    }
}

/// Re-putting an existing id keeps its old parent.
#[derive(Default)]
pub struct ReputKeepsOldParent;

#[async_trait]
impl Bug for ReputKeepsOldParent {
    async fn call(&self, saver: &Inner<'_>, mut call: Invocation) -> Result<Reply, CheckpointError> {
        if let Invocation::Put(put) = &mut call {
            if let Some(old) = replaced(saver, put).await? {
                put.config.checkpoint_id = old.parent_config.and_then(|p| p.checkpoint_id);
            }
        }
        saver.forward(call).await
    }
}

/// Re-putting an existing id drops its pending writes (S05).
#[derive(Default)]
pub struct ReputDropsWrites(Mutex<HashMap<CpKey, Vec<PendingWrite>>>);

#[async_trait]
impl Bug for ReputDropsWrites {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        if let Invocation::Put(put) = &call {
            if let Some(old) = replaced(saver, put).await? {
                lock(&self.0).entry(key_of(&old)).or_default().extend(old.pending_writes);
            }
        }
        saver.forward(call).await
    }
    fn tuple_output(&self, t: &mut CheckpointTuple) {
        if let Some(hidden) = lock(&self.0).get(&key_of(t)) {
            t.pending_writes.retain(|w| !hidden.contains(w));
        }
    }
    fn delete_thread_input(&self, thread_id: &mut String) {
        lock(&self.0).retain(|k, _| k.0 != *thread_id);
    }
}

/// Re-putting an existing id merges the old metadata into the new.
#[derive(Default)]
pub struct ReputMergesMetadata;

#[async_trait]
impl Bug for ReputMergesMetadata {
    async fn call(&self, saver: &Inner<'_>, mut call: Invocation) -> Result<Reply, CheckpointError> {
        if let Invocation::Put(put) = &mut call {
            if let Some(old) = replaced(saver, put).await? {
                for (k, v) in old.metadata {
                    put.metadata.entry(k).or_insert(v);
                }
            }
        }
        saver.forward(call).await
    }
}

/// `get_next_version` returns the current version.
#[derive(Default)]
pub struct NextVersionRepeats;

impl Bug for NextVersionRepeats {
    fn next_version_output(&self, current: Option<&ChannelVersion>, out: &mut ChannelVersion) {
        if let Some(c) = current {
            *out = c.clone();
        }
    }
}

/// `get_next_version` of a string version restarts at integer 1.
#[derive(Default)]
pub struct NextVersionStringRestarts;

impl Bug for NextVersionStringRestarts {
    fn next_version_output(&self, current: Option<&ChannelVersion>, out: &mut ChannelVersion) {
        if let Some(ChannelVersion::Str(_)) = current {
            *out = ChannelVersion::Int(1);
        }
    }
}

/// A put with a parent gets the latest checkpoint of its thread and namespace as parent,
/// not the one named (a fork from an older checkpoint hangs under the newest).
#[derive(Default)]
pub struct ForkParentIsLatest;

#[async_trait]
impl Bug for ForkParentIsLatest {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        let Invocation::Put(mut put) = call else { return saver.forward(call).await };
        if put.config.checkpoint_id.is_some() {
            if let Some(latest) = saver.saver().get_tuple(&put.config.clone().without_id()).await? {
                put.config.checkpoint_id = latest.config.checkpoint_id;
            }
        }
        saver.forward(Invocation::Put(put)).await
    }
}

/// `list` shows a checkpoint that was put again once per put.
#[derive(Default)]
pub struct ReputListedTwice(Mutex<HashMap<CpKey, usize>>);

impl Bug for ReputListedTwice {
    fn put_input(&self, put: &mut Put) {
        let key = (put.config.thread_id.clone(), put.config.checkpoint_ns.clone(), put.checkpoint.id.clone());
        *lock(&self.0).entry(key).or_default() += 1;
    }
    fn list_output(&self, _caller: &ListOptions, out: &mut Vec<CheckpointTuple>) {
        let puts = lock(&self.0);
        *out = std::mem::take(out)
            .into_iter()
            .flat_map(|t| {
                let n = puts.get(&key_of(&t)).copied().unwrap_or(1).max(1);
                std::iter::repeat_n(t, n)
            })
            .collect();
    }
}

/// The mutants of this module, in catalog order.
pub const MUTANTS: &[Mutant] = &[
    mutant!(
        PutReturnsParentId,
        &[P],
        [R("put.returns")],
        "put returns the parent's id instead of the stored checkpoint's"
    ),
    mutant!(PutReturnsRootNamespace, &[P], [R("put.returns")], "put returns the root namespace whatever the config's"),
    mutant!(PutIgnoresNamespace, &[P], [R("put.stored")], "put stores every checkpoint in the root namespace"),
    mutant!(
        ParentNotStored,
        &[P, GT],
        [R("put.stored"), R("tuple.parent_config")],
        "put does not record the parent: parent_config is always none"
    ),
    mutant!(
        ParentIsSelf,
        &[P, GT, LS],
        [R("tuple.parent_config"), S("S09")],
        "parent_config names the checkpoint itself"
    ),
    mutant!(
        ParentConfigRootNamespace,
        &[P, GT, LS],
        [R("tuple.parent_config"), G("7.2-parent-config")],
        "parent_config names the root namespace instead of the checkpoint's"
    ),
    mutant!(
        ParentConfigBlankThread,
        &[P, GT, LS],
        [R("tuple.parent_config"), G("7.2-parent-config")],
        "parent_config has an empty thread id"
    ),
    mutant!(
        OnlyNewVersionsValuesStored,
        &[P],
        [R("put.values"), S("S06")],
        "only the values of new_versions channels are stored; unchanged channels vanish"
    ),
    mutant!(should
        UncarriedChannelsVanish,
        &[P],
        [R("put.kept_values"), S("S06")],
        "a channel whose value the put did not carry reads as absent, though stored earlier"
    ),
    mutant!(
        ChannelOutsideVersionsKept,
        &[P],
        [R("put.outside_versions")],
        "a channel missing from channel_versions keeps the parent's (or the carried) value"
    ),
    mutant!(
        EmptiedChannelKeepsOldValue,
        &[P],
        [R("put.emptied")],
        "a channel in new_versions without a value keeps the parent's value"
    ),
    mutant!(
        SiblingValuesCollide,
        &[P],
        [R("put.siblings")],
        "values are keyed by (channel, version) only, so siblings overwrite each other"
    ),
    mutant!(
        KeptChannelReadsNewestValue,
        &[P],
        [R("put.values"), R("put.siblings")],
        "an unchanged channel reads the newest value stored for it, whatever its version and parent (forks read \
         a later branch)"
    ),
    mutant!(
        KeptChannelFromParentOnly,
        &[P],
        [R("put.values")],
        "an unchanged channel reads the parent's value, whatever its version (no lookup at that version)"
    ),
    mutant!(
        KeptValueFromAnyThread,
        &[P],
        [R("put.values")],
        "a kept channel reads the value last stored at its (channel, version) in any thread or namespace"
    ),
    mutant!(ReputIgnored, &[P], [R("put.reput"), G("7.2-reput")], "re-putting an existing id is silently ignored"),
    mutant!(
        ReputKeepsOldParent,
        &[P],
        [R("put.reput")],
        "re-putting an existing id keeps its old parent (upstream Postgres)"
    ),
    mutant!(
        ReputDropsWrites,
        &[P, PW],
        [R("put.reput"), S("S05")],
        "re-putting an existing id drops its pending writes"
    ),
    mutant!(
        ReputMergesMetadata,
        &[P],
        [R("put.reput")],
        "re-putting an existing id merges the old metadata keys into the new"
    ),
    mutant!(
        NextVersionRepeats,
        &[P],
        [R("next_version.greater"), G("7.2-next-version")],
        "get_next_version returns the current version"
    ),
    mutant!(should
        NextVersionStringRestarts,
        &[P],
        [R("next_version.strings"), G("7.2-string-versions")],
        "get_next_version of a string version restarts at integer 1"
    ),
    mutant!(
        ForkParentIsLatest,
        &[P],
        [R("put.stored")],
        "a put's parent is the latest checkpoint of its thread and namespace, not config.checkpoint_id"
    ),
    mutant!(
        ReputListedTwice,
        &[LS],
        [R("put.reput"), R("list.scope")],
        "list shows a checkpoint that was put again once per put"
    ),
    mutant!(
        "metadata_keys_case_folded",
        MetadataKeys<CaseFold>,
        &[P],
        [R("ids.opaque"), R("metadata.json")],
        "metadata keys are lower-cased: \"a\" and \"A\" are one key"
    ),
    mutant!(
        "emptied_channel_filled_from_store",
        EmptiedFilledFromStore,
        &[P],
        [R("put.emptied")],
        "a channel in new_versions without a value is filled from a sibling's value stored at the same version"
    ),
    mutant!(
        "kept_emptied_channel_filled_from_store",
        KeptEmptiedFilledFromStore,
        &[P],
        [R("put.emptied")],
        "a kept channel its parent emptied is filled from a sibling's value stored at the same version"
    ),
];
