//! An example checkpointer written outside the kit: [`LogSaver`] keeps one append-only log
//! of entries behind a mutex and answers every read by replaying it. It implements the
//! five base methods of the contract (put, put_writes, get_tuple, list, delete_thread) and
//! leaves the extended ones to the trait's defaults, which answer `Unsupported`: the kit
//! then reports them as "not implemented" and the saver can still reach `FULL`.
//!
//! It is small on purpose; what it shows is how a saver of your own is checked: see
//! `tests/conformance.rs` and docs/using-the-kit.md.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use checkpoint_contract::{
    async_trait, check_thread_id as check_thread, metadata_matches, special_write_index, write_index, ChannelVersions,
    Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata, CheckpointSaver, CheckpointTuple, ListOptions,
    PendingWrite, TypedValue,
};

/// One change, in the order the saver accepted it.
#[derive(Debug)]
enum Entry {
    /// A checkpoint, with `channel_values` already resolved to what it reads.
    Put {
        thread: String,
        ns: String,
        parent: Option<String>,
        checkpoint: Arc<Checkpoint>,
        metadata: CheckpointMetadata,
    },
    /// One pending write, with its index (CONTRACT §2 put_writes).
    Write { thread: String, ns: String, checkpoint_id: String, write: PendingWrite, index: i64 },
    /// Everything of the thread before this entry is gone.
    DeleteThread { thread: String },
}

/// An append-log checkpointer: `Send + Sync`, every call takes the one lock and never holds
/// it across an `.await`, so concurrent calls behave as if made one after another.
#[derive(Debug, Default)]
pub struct LogSaver {
    log: Mutex<Vec<Entry>>,
}

impl LogSaver {
    /// An empty saver.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Entry>> {
        // A panic elsewhere cannot leave an entry half-appended, so the log stays usable.
        self.log.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The part of the log that is still alive for `thread`: after its last delete.
fn live<'a>(log: &'a [Entry], thread: &str) -> &'a [Entry] {
    let start =
        log.iter().rposition(|e| matches!(e, Entry::DeleteThread { thread: t } if t == thread)).map_or(0, |i| i + 1);
    &log[start..]
}

/// A stored checkpoint as the latest put of its id left it.
struct Stored<'a> {
    ns: &'a str,
    parent: Option<&'a String>,
    checkpoint: &'a Arc<Checkpoint>,
    metadata: &'a CheckpointMetadata,
}

/// Every checkpoint of `thread` (in `ns` when given), the latest put of each id winning
/// (re-putting an id replaces checkpoint, metadata and parent).
fn checkpoints<'a>(log: &'a [Entry], thread: &str, ns: Option<&str>) -> BTreeMap<(&'a str, &'a str), Stored<'a>> {
    let mut out = BTreeMap::new();
    for e in live(log, thread) {
        if let Entry::Put { thread: t, ns: n, parent, checkpoint, metadata } = e {
            if t == thread && ns.is_none_or(|want| want == n) {
                out.insert(
                    (n.as_str(), checkpoint.id.as_str()),
                    Stored { ns: n, parent: parent.as_ref(), checkpoint, metadata },
                );
            }
        }
    }
    out
}

/// The pending writes of one checkpoint: per (task, index) the first regular write and the
/// last special write, ordered by (task_path, task_id, index).
fn writes_of(log: &[Entry], thread: &str, ns: &str, id: &str) -> Vec<PendingWrite> {
    let mut by_key: BTreeMap<(&str, i64), &PendingWrite> = BTreeMap::new();
    for e in live(log, thread) {
        if let Entry::Write { thread: t, ns: n, checkpoint_id, write, index } = e {
            if t == thread && n == ns && checkpoint_id == id {
                let key = (write.task_id.as_str(), *index);
                if special_write_index(&write.channel).is_some() || !by_key.contains_key(&key) {
                    by_key.insert(key, write);
                }
            }
        }
    }
    let mut out: Vec<(&str, &str, i64, &PendingWrite)> =
        by_key.into_iter().map(|((task, index), w)| (w.task_path.as_str(), task, index, w)).collect();
    out.sort_by(|a, b| (a.0, a.1, a.2).cmp(&(b.0, b.1, b.2)));
    out.into_iter().map(|(_, _, _, w)| w.clone()).collect()
}

fn tuple(log: &[Entry], thread: &str, s: &Stored<'_>) -> CheckpointTuple {
    let config = CheckpointConfig::new(thread).with_ns(s.ns).with_id(s.checkpoint.id.clone());
    CheckpointTuple {
        parent_config: s.parent.map(|p| CheckpointConfig::new(thread).with_ns(s.ns).with_id(p.clone())),
        pending_writes: writes_of(log, thread, s.ns, &s.checkpoint.id),
        checkpoint: s.checkpoint.clone(),
        metadata: s.metadata.clone(),
        config,
    }
}

#[async_trait]
impl CheckpointSaver for LogSaver {
    /// Appends the checkpoint with the values it reads resolved now: its own values, then
    /// for a channel it does not carry (and did not change) the parent's value, or none, when
    /// the parent has that version, else the newest value stored at that version in this
    /// thread and namespace.
    async fn put(
        &self,
        config: &CheckpointConfig,
        mut checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Result<CheckpointConfig, CheckpointError> {
        check_thread(&config.thread_id)?;
        let (thread, ns) = (config.thread_id.as_str(), config.checkpoint_ns.as_str());
        let mut log = self.lock();
        let mut values = BTreeMap::new();
        {
            let stored = checkpoints(&log, thread, Some(ns));
            let parent = config.checkpoint_id.as_deref().and_then(|p| stored.get(&(ns, p)));
            // Newest first, so a re-stored version is found before an older one.
            let mut others: Vec<&Stored<'_>> = stored.values().collect();
            others.sort_by(|a, b| b.checkpoint.id.cmp(&a.checkpoint.id));
            for (channel, version) in &checkpoint.channel_versions {
                if let Some(v) = checkpoint.channel_values.remove(channel) {
                    values.insert(channel.clone(), v);
                    continue;
                }
                if new_versions.contains_key(channel) {
                    continue; // changed in this step with no value: the channel is empty
                }
                let has_version = |s: &&Stored<'_>| s.checkpoint.channel_versions.get(channel) == Some(version);
                let holds = |s: &&Stored<'_>| has_version(s) && s.checkpoint.channel_values.contains_key(channel);
                // When the parent has the channel at this version, it answers, with its value
                // or with none: a channel emptied there stays empty, even where a sibling
                // stored a value at the same version (CONTRACT §2 put.emptied).
                let from = match parent.filter(has_version) {
                    Some(p) => Some(p).filter(holds),
                    None => others.iter().copied().find(holds),
                };
                if let Some(s) = from {
                    values.insert(channel.clone(), s.checkpoint.channel_values[channel].clone());
                }
            }
        }
        checkpoint.channel_values = values;
        let id = checkpoint.id.clone();
        log.push(Entry::Put {
            thread: thread.to_owned(),
            ns: ns.to_owned(),
            parent: config.checkpoint_id.clone(),
            checkpoint: Arc::new(checkpoint),
            metadata,
        });
        Ok(CheckpointConfig::new(thread).with_ns(ns).with_id(id))
    }

    /// Appends one entry per write with its index; first/last-wins is applied on read.
    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(String, TypedValue)>,
        task_id: &str,
        task_path: &str,
    ) -> Result<(), CheckpointError> {
        let checkpoint_id = config.write_checkpoint_id()?;
        let mut log = self.lock();
        for (position, (channel, value)) in writes.into_iter().enumerate() {
            log.push(Entry::Write {
                thread: config.thread_id.clone(),
                ns: config.checkpoint_ns.clone(),
                checkpoint_id: checkpoint_id.to_owned(),
                index: write_index(&channel, position),
                write: PendingWrite { task_id: task_id.to_owned(), task_path: task_path.to_owned(), channel, value },
            });
        }
        Ok(())
    }

    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
        check_thread(&config.thread_id)?;
        let (thread, ns) = (config.thread_id.as_str(), config.checkpoint_ns.as_str());
        let log = self.lock();
        let stored = checkpoints(&log, thread, Some(ns));
        let found = match &config.checkpoint_id {
            Some(id) => stored.get(&(ns, id.as_str())),
            // Keys are (ns, id) with one ns here: the last is the greatest id.
            None => stored.values().next_back(),
        };
        Ok(found.map(|s| tuple(&log, thread, s)))
    }

    async fn list(&self, thread_id: &str, options: &ListOptions) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        check_thread(thread_id)?;
        let log = self.lock();
        let stored = checkpoints(&log, thread_id, options.checkpoint_ns.as_deref());
        let mut hits: Vec<&Stored<'_>> = stored
            .values()
            .filter(|s| options.checkpoint_id.as_ref().is_none_or(|id| *id == s.checkpoint.id))
            .filter(|s| options.before.as_ref().is_none_or(|b| s.checkpoint.id < *b))
            .filter(|s| metadata_matches(s.metadata, &options.filter))
            .collect();
        // Id descending across namespaces; equal ids by namespace ascending.
        hits.sort_by(|a, b| b.checkpoint.id.cmp(&a.checkpoint.id).then_with(|| a.ns.cmp(b.ns)));
        let limit = options.limit.unwrap_or(usize::MAX);
        Ok(hits.into_iter().take(limit).map(|s| tuple(&log, thread_id, s)).collect())
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<(), CheckpointError> {
        check_thread(thread_id)?;
        self.lock().push(Entry::DeleteThread { thread: thread_id.to_owned() });
        Ok(())
    }
}
