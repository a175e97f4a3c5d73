//! # checkpoint-memory
//!
//! The reference in-memory checkpointer of the conformance kit: every method of
//! docs/contract.md §2 and §3, kept in ordered maps so that "latest" is the last key of a
//! namespace's map (O(log n), no scan of the thread) and `list` walks ids newest first and
//! stops at `limit`.
//!
//! Channel values are resolved when a checkpoint is put (CONTRACT §2 put): for each channel
//! of `channel_versions`, the value the checkpoint carries; else nothing when the channel is
//! in `new_versions`; else, when the parent has the same version, the parent's value, or
//! nothing when the parent reads the channel absent (an emptied channel stays empty); else
//! the newest value stored at that (channel, version) in the thread and namespace. The resolved
//! checkpoint is stored behind an `Arc` and shared with every reader, so sibling checkpoints
//! never collide and `prune` and `copy_thread` keep every value a kept checkpoint reads.
//! "Newest" is the most recently put: a namespace indexes its values by (channel, version)
//! only from the first put that needs a value it neither carried nor found in its parent
//! (LangGraph's runtime carries every value, so under it no namespace pays for the index:
//! it was 40% of a put's time and 15% of a stored checkpoint's bytes in `cargo xtask
//! bench`); from then on every put keeps the index.
//!
//! A put or put_writes allocates little beyond what it stores: the checkpoint's own maps are
//! kept (not rebuilt), an id is one shared `Arc<str>` for the checkpoint map and the value
//! index, and a task's id and path are shared by its writes.
//!
//! Nothing survives the process: `durability` is not detected (the fixture cannot reopen).
//!
//! The kit's wiring, `registration()`, is behind the `kit` feature (a normal build has none
//! of it).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Bound;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use async_trait::async_trait;
use checkpoint_contract::{
    check_thread_id as check_thread, metadata_matches, write_index, ChannelVersion, ChannelVersions, Checkpoint,
    CheckpointConfig, CheckpointError, CheckpointMetadata, CheckpointSaver, CheckpointTuple, DeltaChannelHistory,
    ListOptions, PendingWrite, PruneStrategy, TypedValue,
};
#[cfg(feature = "kit")]
use conformance_core::{Fixture, Registration};

/// One stored checkpoint.
#[derive(Clone, Debug)]
struct Stored {
    /// The checkpoint with its channel values resolved.
    checkpoint: Arc<Checkpoint>,
    metadata: CheckpointMetadata,
    parent: Option<String>,
    /// Its place in the namespace's put order ([`Namespace::puts`]).
    seq: u64,
}

/// One stored write, keyed by (task_id, idx) in its checkpoint's map.
#[derive(Clone, Debug)]
struct Write {
    task_path: Arc<str>,
    channel: String,
    value: TypedValue,
}

type WriteMap = BTreeMap<(Arc<str>, i64), Write>;

/// A hash map with foldhash's randomly seeded hasher: a put hashes about twenty keys
/// (thread, namespace, each channel and version), and SipHash was a fifth of its time.
type Map<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// Everything of one (thread, namespace).
#[derive(Clone, Debug, Default)]
struct Namespace {
    checkpoints: BTreeMap<Arc<str>, Stored>,
    /// Writes by checkpoint id; they may exist before their checkpoint is put.
    writes: Map<String, WriteMap>,
    /// For each channel and version, the id of the checkpoint most recently put whose
    /// resolved values hold it: where an uncarried channel finds its value without a second
    /// copy. `None` until a put needs it ([`build_index`]); dropped when a copy changes which
    /// checkpoint that is, and built again when next needed; an entry whose holder was
    /// deleted by run is repaired when a put reads it.
    blobs: Option<Blobs>,
    /// How many puts the namespace has had: the next put's [`Stored::seq`].
    puts: u64,
}

/// The value index: channel -> version -> the id of the checkpoint holding the value.
type Blobs = Map<String, Map<ChannelVersion, Arc<str>>>;

type Thread = BTreeMap<String, Namespace>;

/// The reference in-memory saver. Cheap to create; `Send + Sync`; calls are serialised by a
/// read-write lock that is never held across an `.await`.
#[derive(Debug, Default)]
pub struct MemorySaver {
    threads: RwLock<Map<String, Thread>>,
}

fn sorted_writes(writes: Option<&WriteMap>) -> Vec<PendingWrite> {
    let Some(writes) = writes else { return Vec::new() };
    let mut out: Vec<(&str, &str, i64, &Write)> =
        writes.iter().map(|((task_id, idx), w)| (&*w.task_path, &**task_id, *idx, w)).collect();
    out.sort_by(|a, b| (a.0, a.1, a.2).cmp(&(b.0, b.1, b.2)));
    out.into_iter()
        .map(|(path, task, _, w)| PendingWrite {
            task_id: task.to_owned(),
            task_path: path.to_owned(),
            channel: w.channel.clone(),
            value: w.value.clone(),
        })
        .collect()
}

fn tuple(thread_id: &str, ns_name: &str, ns: &Namespace, stored: &Stored) -> CheckpointTuple {
    let id = &stored.checkpoint.id;
    CheckpointTuple {
        config: CheckpointConfig {
            thread_id: thread_id.to_owned(),
            checkpoint_ns: ns_name.to_owned(),
            checkpoint_id: Some(id.clone()),
        },
        checkpoint: stored.checkpoint.clone(),
        metadata: stored.metadata.clone(),
        parent_config: stored.parent.as_ref().map(|p| CheckpointConfig {
            thread_id: thread_id.to_owned(),
            checkpoint_ns: ns_name.to_owned(),
            checkpoint_id: Some(p.clone()),
        }),
        pending_writes: sorted_writes(ns.writes.get(id)),
    }
}

impl MemorySaver {
    /// An empty saver.
    pub fn new() -> Self {
        Self::default()
    }

    fn read(&self) -> RwLockReadGuard<'_, Map<String, Thread>> {
        // A panic while holding the lock cannot leave a map half-updated (every update is a
        // single insert/remove after all fallible work), so a poisoned lock is still usable.
        self.threads.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, Map<String, Thread>> {
        self.threads.write().unwrap_or_else(|e| e.into_inner())
    }

    /// The stored checkpoint `config` names (latest when it names no id).
    fn find<'a>(threads: &'a Map<String, Thread>, config: &CheckpointConfig) -> Option<(&'a Namespace, &'a Stored)> {
        let ns = threads.get(&config.thread_id)?.get(&config.checkpoint_ns)?;
        let stored = match &config.checkpoint_id {
            Some(id) => ns.checkpoints.get(id.as_str())?,
            None => ns.checkpoints.last_key_value()?.1,
        };
        Some((ns, stored))
    }
}

/// The namespace `ns` of `thread`, made empty when missing (keys are copied only then).
fn namespace_mut<'a>(
    threads: &'a mut Map<String, Thread>,
    thread: &str,
    ns: &str,
) -> Result<&'a mut Namespace, CheckpointError> {
    if !threads.contains_key(thread) {
        threads.insert(thread.to_owned(), Thread::new());
    }
    let t = threads.get_mut(thread).ok_or_else(|| CheckpointError::storage_msg("thread vanished"))?;
    if !t.contains_key(ns) {
        t.insert(ns.to_owned(), Namespace::default());
    }
    t.get_mut(ns).ok_or_else(|| CheckpointError::storage_msg("namespace vanished"))
}

/// The value `stored` holds for `ch` at `version`, if it holds one.
fn holds<'a>(stored: &'a Stored, ch: &str, version: &ChannelVersion) -> Option<&'a TypedValue> {
    let c = &stored.checkpoint;
    (c.channel_versions.get(ch) == Some(version)).then(|| c.channel_values.get(ch)).flatten()
}

/// Builds the value index of `ns` from its checkpoints when it has none: for each (channel,
/// version), the holder put last.
fn build_index(ns: &mut Namespace) {
    let checkpoints = &ns.checkpoints;
    ns.blobs.get_or_insert_with(|| {
        let mut newest: Map<String, Map<ChannelVersion, (u64, Arc<str>)>> = Map::default();
        for (id, stored) in checkpoints {
            for (ch, version) in &stored.checkpoint.channel_versions {
                if holds(stored, ch, version).is_none() {
                    continue;
                }
                let slot = newest.entry(ch.clone()).or_default().entry(version.clone()).or_insert((0, id.clone()));
                if stored.seq >= slot.0 {
                    *slot = (stored.seq, id.clone());
                }
            }
        }
        newest.into_iter().map(|(ch, m)| (ch, m.into_iter().map(|(v, (_, id))| (v, id)).collect())).collect()
    });
}

/// Resolves the channel values of a checkpoint being put (see the crate docs), in place: the
/// carried values stay where they are, carried values of channels without a version are
/// dropped, and only uncarried channels are looked up: in the parent `parent_id`, then in
/// the value index (built now if the namespace has none).
fn resolve(ns: &mut Namespace, parent_id: Option<&str>, checkpoint: &mut Checkpoint, new_versions: &ChannelVersions) {
    let Checkpoint { channel_values, channel_versions, .. } = checkpoint;
    if !keys_within(channel_values, channel_versions) {
        channel_values.retain(|ch, _| channel_versions.contains_key(ch));
    }
    if channel_values.len() == channel_versions.len() {
        return;
    }
    let parent = parent_id.and_then(|p| ns.checkpoints.get(p));
    let mut missing = Vec::new();
    for (ch, version) in channel_versions.iter() {
        if channel_values.contains_key(ch) || new_versions.contains_key(ch) {
            continue;
        }
        match parent.filter(|p| p.checkpoint.channel_versions.get(ch) == Some(version)) {
            // The parent's value at that version, or none: a channel the parent reads absent
            // at that version stays absent (CONTRACT §2 put.emptied), even where a sibling
            // stored a value at the same version.
            Some(p) => {
                if let Some(v) = p.checkpoint.channel_values.get(ch) {
                    channel_values.insert(ch.clone(), v.clone());
                }
            }
            None => missing.push((ch, version)),
        }
    }
    if missing.is_empty() {
        return;
    }
    build_index(ns);
    let (Some(blobs), checkpoints) = (&mut ns.blobs, &ns.checkpoints) else { return };
    for (ch, version) in missing {
        // The index names every (channel, version) some checkpoint holds (no entry: none
        // does). An entry can be stale: its holder deleted by run, or put again without that
        // value; then the holder put last is found by a scan, and the entry repaired.
        let Some(entry) = blobs.get_mut(ch.as_str()).and_then(|m| m.get_mut(version)) else { continue };
        let value = match checkpoints.get(&*entry).and_then(|s| holds(s, ch, version)) {
            Some(v) => Some(v),
            None => {
                let newest = checkpoints
                    .iter()
                    .filter_map(|(id, s)| Some((s.seq, id, holds(s, ch, version)?)))
                    .max_by_key(|h| h.0);
                match newest {
                    Some((_, id, v)) => {
                        *entry = id.clone();
                        Some(v)
                    }
                    None => {
                        if let Some(m) = blobs.get_mut(ch.as_str()) {
                            m.remove(version);
                        }
                        None
                    }
                }
            }
        };
        if let Some(v) = value {
            channel_values.insert(ch.clone(), v.clone());
        }
    }
}

/// True when every key of `values` is a key of `versions`: one walk over both sorted maps,
/// so the usual put (every carried value has a version) costs no lookups.
fn keys_within<V, W>(values: &BTreeMap<String, V>, versions: &BTreeMap<String, W>) -> bool {
    let mut versions = versions.keys();
    values.keys().all(|ch| versions.by_ref().any(|v| v == ch))
}

/// Records that checkpoint `id` holds the values of `checkpoint` in the value index.
fn index_values(blobs: &mut Blobs, id: &Arc<str>, checkpoint: &Checkpoint) {
    for ch in checkpoint.channel_values.keys() {
        let Some(version) = checkpoint.channel_versions.get(ch) else { continue };
        match blobs.get_mut(ch.as_str()) {
            Some(m) => {
                m.insert(version.clone(), id.clone());
            }
            None => {
                let mut m = Map::default();
                m.insert(version.clone(), id.clone());
                blobs.insert(ch.clone(), m);
            }
        }
    }
}

#[async_trait]
impl CheckpointSaver for MemorySaver {
    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Result<CheckpointConfig, CheckpointError> {
        check_thread(&config.thread_id)?;
        let mut checkpoint = checkpoint;
        let mut threads = self.write();
        let ns = namespace_mut(&mut threads, &config.thread_id, &config.checkpoint_ns)?;
        resolve(ns, config.checkpoint_id.as_deref(), &mut checkpoint, &new_versions);
        let id: Arc<str> = Arc::from(checkpoint.id.as_str());
        let returned = checkpoint.id.clone();
        if let Some(blobs) = &mut ns.blobs {
            index_values(blobs, &id, &checkpoint);
        }
        let seq = ns.puts;
        ns.puts += 1;
        let stored = Stored { checkpoint: Arc::new(checkpoint), metadata, parent: config.checkpoint_id.clone(), seq };
        ns.checkpoints.insert(id, stored);
        drop(threads);
        Ok(CheckpointConfig {
            thread_id: config.thread_id.clone(),
            checkpoint_ns: config.checkpoint_ns.clone(),
            checkpoint_id: Some(returned),
        })
    }

    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(String, TypedValue)>,
        task_id: &str,
        task_path: &str,
    ) -> Result<(), CheckpointError> {
        let checkpoint_id = config.write_checkpoint_id()?;
        if writes.is_empty() {
            return Ok(());
        }
        let (task_id, task_path): (Arc<str>, Arc<str>) = (Arc::from(task_id), Arc::from(task_path));
        let mut threads = self.write();
        let ns = namespace_mut(&mut threads, &config.thread_id, &config.checkpoint_ns)?;
        if !ns.writes.contains_key(checkpoint_id) {
            ns.writes.insert(checkpoint_id.to_owned(), WriteMap::new());
        }
        let map = ns.writes.get_mut(checkpoint_id).ok_or_else(|| CheckpointError::storage_msg("writes vanished"))?;
        for (position, (channel, value)) in writes.into_iter().enumerate() {
            let idx = write_index(&channel, position);
            let write = Write { task_path: task_path.clone(), channel, value };
            let key = (task_id.clone(), idx);
            if idx < 0 {
                map.insert(key, write);
            } else {
                map.entry(key).or_insert(write);
            }
        }
        Ok(())
    }

    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
        check_thread(&config.thread_id)?;
        let threads = self.read();
        Ok(Self::find(&threads, config).map(|(ns, stored)| tuple(&config.thread_id, &config.checkpoint_ns, ns, stored)))
    }

    async fn list(&self, thread_id: &str, options: &ListOptions) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        check_thread(thread_id)?;
        let limit = options.limit.unwrap_or(usize::MAX);
        if limit == 0 {
            return Ok(Vec::new());
        }
        let threads = self.read();
        let Some(thread) = threads.get(thread_id) else { return Ok(Vec::new()) };
        let namespaces: Vec<(&String, &Namespace)> = match &options.checkpoint_ns {
            Some(ns) => thread.get_key_value(ns).into_iter().collect(),
            None => thread.iter().collect(),
        };
        // Candidates newest id first, namespace ascending for equal ids.
        let mut candidates: Vec<(&Arc<str>, &String, &Namespace, &Stored)> = Vec::new();
        for (ns_name, ns) in namespaces {
            let upper = match &options.before {
                Some(b) => Bound::Excluded(b.as_str()),
                None => Bound::Unbounded,
            };
            let range = ns.checkpoints.range::<str, _>((Bound::Unbounded, upper)).rev();
            let mut taken = 0;
            for (id, stored) in range {
                if options.checkpoint_id.as_deref().is_some_and(|want| want != &**id) {
                    continue;
                }
                if !metadata_matches(&stored.metadata, &options.filter) {
                    continue;
                }
                candidates.push((id, ns_name, ns, stored));
                taken += 1;
                if taken >= limit {
                    break;
                }
            }
        }
        candidates.sort_by(|a, b| b.0.cmp(a.0).then_with(|| a.1.cmp(b.1)));
        candidates.truncate(limit);
        Ok(candidates.into_iter().map(|(_, ns_name, ns, stored)| tuple(thread_id, ns_name, ns, stored)).collect())
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<(), CheckpointError> {
        check_thread(thread_id)?;
        self.write().remove(thread_id);
        Ok(())
    }

    async fn delete_for_runs(&self, run_ids: &[String]) -> Result<(), CheckpointError> {
        if run_ids.is_empty() {
            return Ok(());
        }
        let runs: BTreeSet<&str> = run_ids.iter().map(String::as_str).collect();
        let mut threads = self.write();
        for thread in threads.values_mut() {
            for ns in thread.values_mut() {
                let doomed: Vec<Arc<str>> = ns
                    .checkpoints
                    .iter()
                    .filter(|(_, s)| {
                        s.metadata.get("run_id").and_then(|v| v.as_str()).is_some_and(|r| runs.contains(r))
                    })
                    .map(|(id, _)| id.clone())
                    .collect();
                // The index may now name a deleted holder: repaired when a put reads it.
                for id in doomed {
                    ns.checkpoints.remove(&id);
                    ns.writes.remove(&*id);
                }
            }
        }
        Ok(())
    }

    async fn copy_thread(&self, source: &str, target: &str) -> Result<(), CheckpointError> {
        check_thread(source)?;
        check_thread(target)?;
        if source == target {
            return Ok(());
        }
        let mut threads = self.write();
        let Some(src) = threads.get(source).cloned() else { return Ok(()) };
        let dst = threads.entry(target.to_owned()).or_default();
        for (ns_name, ns) in src {
            let d = dst.entry(ns_name).or_default();
            // CONTRACT §3 copy_thread: a copied checkpoint's writes replace the target
            // checkpoint's writes (none in the source leaves none), found by the fuzzer.
            for id in ns.checkpoints.keys() {
                d.writes.remove(&**id);
            }
            // The copies come after the target's own puts, in the source's put order; the
            // target's index is built again when next needed.
            let first = d.puts;
            d.checkpoints.extend(ns.checkpoints.into_iter().map(|(id, s)| (id, Stored { seq: first + s.seq, ..s })));
            d.puts = first + ns.puts;
            d.blobs = None;
            for (id, writes) in ns.writes {
                d.writes.entry(id).or_default().extend(writes);
            }
        }
        Ok(())
    }

    async fn prune(&self, thread_ids: &[String], strategy: PruneStrategy) -> Result<(), CheckpointError> {
        let mut threads = self.write();
        for thread_id in thread_ids {
            match strategy {
                PruneStrategy::Delete => {
                    threads.remove(thread_id);
                }
                PruneStrategy::KeepLatest => {
                    let Some(thread) = threads.get_mut(thread_id) else { continue };
                    for ns in thread.values_mut() {
                        let Some((id, stored)) = ns.checkpoints.pop_last() else {
                            ns.writes.clear();
                            ns.blobs = None;
                            continue;
                        };
                        let writes = ns.writes.remove(&*id);
                        ns.checkpoints.clear();
                        ns.writes.clear();
                        // The index is built again, from the one checkpoint left, when next
                        // needed: an entry naming another holder of a value the kept one
                        // holds too must not go with that holder.
                        ns.blobs = None;
                        if let Some(w) = writes {
                            ns.writes.insert(id.to_string(), w);
                        }
                        ns.checkpoints.insert(id, stored);
                    }
                }
            }
        }
        Ok(())
    }

    async fn delta_channel_history(
        &self,
        config: &CheckpointConfig,
        channels: &[String],
    ) -> Result<BTreeMap<String, DeltaChannelHistory>, CheckpointError> {
        check_thread(&config.thread_id)?;
        let mut out: BTreeMap<String, DeltaChannelHistory> =
            channels.iter().map(|c| (c.clone(), DeltaChannelHistory::default())).collect();
        if channels.is_empty() {
            return Ok(out);
        }
        let threads = self.read();
        let Some((ns, target)) = Self::find(&threads, config) else { return Ok(out) };
        // Per channel still in play: writes of each ancestor, newest ancestor first.
        let mut collected: BTreeMap<&String, Vec<Vec<PendingWrite>>> =
            channels.iter().map(|c| (c, Vec::new())).collect();
        let mut seen = BTreeSet::new();
        let mut cursor = target.parent.clone();
        while let Some(id) = cursor {
            if collected.is_empty() || !seen.insert(id.clone()) {
                break;
            }
            let Some(stored) = ns.checkpoints.get(id.as_str()) else { break };
            let writes = sorted_writes(ns.writes.get(&id));
            let mut done = Vec::new();
            for (ch, acc) in collected.iter_mut() {
                acc.push(writes.iter().filter(|w| &w.channel == *ch).cloned().collect());
                if let Some(seed) = stored.checkpoint.channel_values.get(*ch) {
                    if let Some(entry) = out.get_mut(*ch) {
                        entry.seed = Some(seed.clone());
                    }
                    done.push(*ch);
                }
            }
            for ch in done {
                if let (Some(acc), Some(entry)) = (collected.remove(ch), out.get_mut(ch)) {
                    entry.writes = acc.into_iter().rev().flatten().collect();
                }
            }
            cursor = stored.parent.clone();
        }
        for (ch, acc) in collected {
            if let Some(entry) = out.get_mut(ch) {
                entry.writes = acc.into_iter().rev().flatten().collect();
            }
        }
        Ok(out)
    }
}

/// The kit's registration of this saver, named `memory`: a fresh [`MemorySaver`] per case,
/// nothing to clean up, no reopen (so `durability` is not detected). Behind the `kit` feature.
#[cfg(feature = "kit")]
pub fn registration() -> Registration {
    Registration::new("memory", || async { Ok(Fixture::new(MemorySaver::new())) })
}

#[cfg(test)]
mod tests;
