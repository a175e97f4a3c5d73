//! A reference model of the contract (docs/contract.md §2 and §3): plain vectors and maps,
//! written from the contract text, not from any saver, so that a misreading shared by a
//! saver and the kit shows up as a disagreement between the model and that saver.
//!
//! The model answers every method of the nine capabilities; the fuzzer
//! ([`crate::fuzz`]) runs the same calls against a saver and the model and compares the
//! answers. It keeps:
//! - checkpoints by (thread, namespace, id): the checkpoint as put, its metadata and its
//!   parent id (CONTRACT §2 put);
//! - channel values by (thread, namespace, channel, version), `None` for a channel emptied
//!   by a put (CONTRACT §2 put: "a channel that is in new_versions but has no value is
//!   empty");
//! - pending writes by (thread, namespace, checkpoint id) then (task id, index)
//!   (CONTRACT §2 put_writes: the key of a write).
//!
//! Where the contract leaves a result open (which value wins when two puts store different
//! values at one channel version, what happens to writes without a checkpoint when a thread
//! is pruned or copied), the fuzzer's generator never makes the model decide: see
//! [`Model::settled_value`] and [`Model::has_orphan_writes`].

use std::collections::BTreeMap;
use std::sync::Arc;

use conformance_core::{
    special_write_index, ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError,
    CheckpointMetadata, CheckpointTuple, ListOptions, PendingWrite, TypedValue,
};

mod extended;
pub mod filter;
mod saver;

pub use filter::json_equal;
pub use saver::answer;

/// (thread, namespace, checkpoint id).
pub type Key = (String, String, String);
/// (thread, namespace, channel, version).
pub type BlobKey = (String, String, String, ChannelVersion);

/// A checkpoint as the model stores it.
#[derive(Clone, Debug, PartialEq)]
pub struct Stored {
    /// The checkpoint as put (its `channel_values` are what the put carried).
    pub checkpoint: Checkpoint,
    /// The metadata as put.
    pub metadata: CheckpointMetadata,
    /// The parent id: the put config's `checkpoint_id`.
    pub parent: Option<String>,
    /// Kept by `prune(keep_latest)` while its parent was not: it may read with no parent
    /// (CONTRACT §3 prune; LangGraph's `PostgresSaver` unlinks it).
    pub parent_may_be_unlinked: bool,
}

/// One stored write: its task path, channel and value (the key is (task id, index)).
#[derive(Clone, Debug, PartialEq)]
pub struct StoredWrite {
    /// The task path of the write that holds the key.
    pub task_path: String,
    /// The channel.
    pub channel: String,
    /// The value.
    pub value: TypedValue,
}

/// The writes of one checkpoint, by (task id, index).
pub type Writes = BTreeMap<(String, i64), StoredWrite>;

/// The state of a saver as the contract describes it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Model {
    /// Checkpoints by (thread, namespace, id).
    pub checkpoints: BTreeMap<Key, Stored>,
    /// Channel values by (thread, namespace, channel, version); `None` is an emptied channel.
    pub blobs: BTreeMap<BlobKey, Option<TypedValue>>,
    /// Pending writes by (thread, namespace, checkpoint id).
    pub writes: BTreeMap<Key, Writes>,
}

fn key(thread: &str, ns: &str, id: &str) -> Key {
    (thread.to_owned(), ns.to_owned(), id.to_owned())
}

impl Model {
    /// An empty saver.
    pub fn new() -> Self {
        Self::default()
    }

    /// `put` (CONTRACT §2 put): stores the checkpoint under (thread, namespace,
    /// `checkpoint.id`) with `config.checkpoint_id` as parent, replacing an existing one
    /// but keeping its writes; stores every value the checkpoint carries at its channel's
    /// version, and an empty marker for a channel of `new_versions` without a value.
    ///
    /// # Errors
    /// `InvalidConfig` for an empty thread id.
    pub fn put(
        &mut self,
        config: &CheckpointConfig,
        checkpoint: &Checkpoint,
        metadata: &CheckpointMetadata,
        new_versions: &ChannelVersions,
    ) -> Result<CheckpointConfig, CheckpointError> {
        check_thread(&config.thread_id)?;
        let (t, ns) = (&config.thread_id, &config.checkpoint_ns);
        for (channel, version) in &checkpoint.channel_versions {
            let blob = (t.clone(), ns.clone(), channel.clone(), version.clone());
            if let Some(value) = checkpoint.channel_values.get(channel) {
                self.blobs.insert(blob, Some(value.clone()));
            } else if new_versions.contains_key(channel) {
                self.blobs.insert(blob, None);
            }
        }
        let stored = Stored {
            checkpoint: checkpoint.clone(),
            metadata: metadata.clone(),
            parent: config.checkpoint_id.clone(),
            parent_may_be_unlinked: false,
        };
        self.checkpoints.insert(key(t, ns, &checkpoint.id), stored);
        Ok(CheckpointConfig::new(t.clone()).with_ns(ns.clone()).with_id(checkpoint.id.clone()))
    }

    /// `put_writes` (CONTRACT §2 put_writes): index = the special channel's fixed index or
    /// the position in the call; regular writes first wins per (task id, index), special
    /// writes last wins, decided per write.
    ///
    /// # Errors
    /// `InvalidConfig` for an empty thread id or no `checkpoint_id`.
    pub fn put_writes(
        &mut self,
        config: &CheckpointConfig,
        writes: &[(String, TypedValue)],
        task_id: &str,
        task_path: &str,
    ) -> Result<(), CheckpointError> {
        check_thread(&config.thread_id)?;
        let Some(id) = &config.checkpoint_id else {
            return Err(CheckpointError::InvalidConfig("put_writes needs config.checkpoint_id".into()));
        };
        if writes.is_empty() {
            return Ok(());
        }
        let stored = self.writes.entry(key(&config.thread_id, &config.checkpoint_ns, id)).or_default();
        for (position, (channel, value)) in writes.iter().enumerate() {
            let special = special_write_index(channel);
            let index = special.unwrap_or(position as i64);
            let write = StoredWrite { task_path: task_path.to_owned(), channel: channel.clone(), value: value.clone() };
            let slot = (task_id.to_owned(), index);
            if special.is_some() || !stored.contains_key(&slot) {
                stored.insert(slot, write);
            }
        }
        Ok(())
    }

    /// The pending writes of a checkpoint in `get_tuple` order: (task path, task id, index),
    /// paths and ids by bytes, index signed (CONTRACT §2 get_tuple).
    pub fn pending_writes(&self, k: &Key) -> Vec<PendingWrite> {
        let mut out: Vec<(String, String, i64, PendingWrite)> = self
            .writes
            .get(k)
            .into_iter()
            .flatten()
            .map(|((task_id, index), w)| {
                let pw = PendingWrite {
                    task_id: task_id.clone(),
                    task_path: w.task_path.clone(),
                    channel: w.channel.clone(),
                    value: w.value.clone(),
                };
                (w.task_path.clone(), task_id.clone(), *index, pw)
            })
            .collect();
        out.sort_by(|a, b| (a.0.as_bytes(), a.1.as_bytes(), a.2).cmp(&(b.0.as_bytes(), b.1.as_bytes(), b.2)));
        out.into_iter().map(|(_, _, _, w)| w).collect()
    }

    /// The tuple of a stored checkpoint as every read returns it: `channel_values` holds,
    /// for each channel of `channel_versions`, the value stored at that version in this
    /// thread and namespace, absent when there is none or it was emptied (CONTRACT §2 put).
    pub fn tuple(&self, k: &Key) -> Option<CheckpointTuple> {
        let stored = self.checkpoints.get(k)?;
        let (t, ns, _) = k;
        let mut checkpoint = stored.checkpoint.clone();
        checkpoint.channel_values = checkpoint
            .channel_versions
            .iter()
            .filter_map(|(channel, version)| {
                let blob = self.blobs.get(&(t.clone(), ns.clone(), channel.clone(), version.clone()))?;
                blob.clone().map(|v| (channel.clone(), v))
            })
            .collect();
        let config = CheckpointConfig::new(t.clone()).with_ns(ns.clone()).with_id(k.2.clone());
        Some(CheckpointTuple {
            config,
            checkpoint: Arc::new(checkpoint),
            metadata: stored.metadata.clone(),
            parent_config: stored
                .parent
                .as_ref()
                .map(|p| CheckpointConfig::new(t.clone()).with_ns(ns.clone()).with_id(p.clone())),
            pending_writes: self.pending_writes(k),
        })
    }

    /// The id `get_tuple` resolves `config` to: its `checkpoint_id` if that is stored in
    /// (thread, namespace), else none; without one, the greatest id by bytes.
    pub fn resolve(&self, config: &CheckpointConfig) -> Option<Key> {
        let (t, ns) = (&config.thread_id, &config.checkpoint_ns);
        match &config.checkpoint_id {
            Some(id) => {
                let k = key(t, ns, id);
                self.checkpoints.contains_key(&k).then_some(k)
            }
            None => self
                .checkpoints
                .keys()
                .filter(|(kt, kns, _)| kt == t && kns == ns)
                .max_by(|a, b| a.2.as_bytes().cmp(b.2.as_bytes()))
                .cloned(),
        }
    }

    /// `get_tuple` (CONTRACT §2 get_tuple).
    ///
    /// # Errors
    /// `InvalidConfig` for an empty thread id.
    pub fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
        check_thread(&config.thread_id)?;
        Ok(self.resolve(config).and_then(|k| self.tuple(&k)))
    }

    /// `list` (CONTRACT §2 list): scope (thread, namespace if given, id if given), filter,
    /// `before`, then order (id descending, namespace ascending for equal ids), then limit.
    ///
    /// # Errors
    /// `InvalidConfig` for an empty thread id.
    pub fn list(&self, thread_id: &str, options: &ListOptions) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        self.list_with(thread_id, options, filter::Looser::default())
    }

    /// [`Model::list`] with the filter matched as `looser` says (the SHOULD rule
    /// `list.filter_strict` set aside).
    ///
    /// # Errors
    /// As [`Model::list`].
    pub fn list_with(
        &self,
        thread_id: &str,
        options: &ListOptions,
        looser: filter::Looser,
    ) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        check_thread(thread_id)?;
        let mut keys: Vec<&Key> = self
            .checkpoints
            .iter()
            .filter(|((t, ns, id), stored)| {
                t == thread_id
                    && options.checkpoint_ns.as_ref().is_none_or(|n| n == ns)
                    && options.checkpoint_id.as_ref().is_none_or(|i| i == id)
                    && options.before.as_ref().is_none_or(|b| id.as_bytes() < b.as_bytes())
                    && filter::matches_with(&stored.metadata, &options.filter, looser)
            })
            .map(|(k, _)| k)
            .collect();
        keys.sort_by(|a, b| b.2.as_bytes().cmp(a.2.as_bytes()).then_with(|| a.1.as_bytes().cmp(b.1.as_bytes())));
        let limit = options.limit.unwrap_or(usize::MAX);
        Ok(keys.into_iter().take(limit).filter_map(|k| self.tuple(k)).collect())
    }

    /// `delete_thread` (CONTRACT §2 delete_thread): every checkpoint, value and write of
    /// the thread goes, in every namespace.
    ///
    /// # Errors
    /// `InvalidConfig` for an empty thread id.
    pub fn delete_thread(&mut self, thread_id: &str) -> Result<(), CheckpointError> {
        check_thread(thread_id)?;
        self.checkpoints.retain(|(t, _, _), _| t != thread_id);
        self.blobs.retain(|(t, _, _, _), _| t != thread_id);
        self.writes.retain(|(t, _, _), _| t != thread_id);
        Ok(())
    }

    /// True when the thread holds writes for a checkpoint id that is not stored. The
    /// contract does not say whether `prune` and `copy_thread` keep or copy such writes, so
    /// the generator does not call them on such a thread.
    pub fn has_orphan_writes(&self, thread_id: &str) -> bool {
        self.writes.iter().any(|(k, w)| k.0 == thread_id && !w.is_empty() && !self.checkpoints.contains_key(k))
    }

    /// The value a put in (thread, namespace) must carry for `channel` at `version` so that
    /// the model never has to choose between two values stored at one version: `Some(v)`
    /// when `v` (or emptiness, `Some(None)`) is stored there already, `None` when the
    /// version is free (CONTRACT §2 put: the saver "may skip" a value already stored at
    /// that version, so a different one would make either answer right).
    pub fn settled_value(
        &self,
        thread: &str,
        ns: &str,
        channel: &str,
        version: &ChannelVersion,
    ) -> Option<Option<TypedValue>> {
        self.blobs.get(&(thread.to_owned(), ns.to_owned(), channel.to_owned(), version.clone())).cloned()
    }

    /// True when a stored checkpoint of (thread, namespace) carries `channel` at `version`
    /// while no value is stored there: it reads the channel as absent, and a value stored
    /// there later would make either answer right (the contract speaks of values that came
    /// "with this put or an earlier one"), so the generator stores none there.
    pub fn dangling(&self, thread: &str, ns: &str, channel: &str, version: &ChannelVersion) -> bool {
        self.settled_value(thread, ns, channel, version).is_none()
            && self.checkpoints.iter().any(|((t, n, _), s)| {
                t == thread && n == ns && s.checkpoint.channel_versions.get(channel) == Some(version)
            })
    }

    /// True when a stored checkpoint of (thread, namespace) reads `channel` at `version`:
    /// then every saver still holds what is stored there, and a put may carry the channel
    /// at that version without a value (CONTRACT §2 put: "whether it came with this put or
    /// an earlier one").
    pub fn version_in_use(&self, thread: &str, ns: &str, channel: &str, version: &ChannelVersion) -> bool {
        self.checkpoints
            .iter()
            .any(|((t, n, _), s)| t == thread && n == ns && s.checkpoint.channel_versions.get(channel) == Some(version))
            && self.settled_value(thread, ns, channel, version).is_some()
    }
}

/// The rule of `get_next_version` (CONTRACT §2 get_next_version): with no `current`, 1
/// (`Int(1)`, or a string whose integer part before the first `.` is 1, the upstream padded
/// format); otherwise strictly greater than `current` (integers numerically, strings by
/// bytes, every integer below every string).
pub fn is_next_version(current: Option<&ChannelVersion>, got: &ChannelVersion) -> bool {
    match current {
        Some(c) => got > c,
        None => match got {
            ChannelVersion::Int(i) => *i == 1,
            ChannelVersion::Str(s) => s.split('.').next().and_then(|p| p.parse::<u128>().ok()) == Some(1),
        },
    }
}

impl Model {
    /// The least version `get_next_version(current)` may return (the expectation a trace
    /// records; the comparison checks [`is_next_version`]): `Int(1)` for none, `Int(n + 1)`
    /// for an integer, the string with `.1` appended for a string.
    pub fn next_version(&self, current: Option<&ChannelVersion>) -> ChannelVersion {
        match current {
            None => ChannelVersion::Int(1),
            Some(ChannelVersion::Int(n)) => ChannelVersion::Int(n.saturating_add(1)),
            Some(ChannelVersion::Str(s)) => ChannelVersion::Str(format!("{s}.1")),
        }
    }
}

/// Every thread id is an ordinary opaque id in the model, `""` too: refusing `""` with
/// `InvalidConfig` is the SHOULD of CONTRACT §1 (`config.thread_id`), which the fuzzer
/// allows as a refusal that changes nothing and otherwise notes.
fn check_thread(_thread_id: &str) -> Result<(), CheckpointError> {
    Ok(())
}
