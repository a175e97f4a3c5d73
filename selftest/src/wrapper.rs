//! [`MutantSaver`]: any saver behind the public [`CheckpointSaver`] trait, with exactly one
//! [`Bug`] switched on.
//!
//! Every bug is built from the outside: it changes a call's input or output, or replaces
//! the call with calls of the inner saver (a snapshot through `list`, then `delete_thread`,
//! `put` and `put_writes` again). Nothing here reaches into a saver's internals, so the
//! same bug wraps the memory saver, the SQLite saver or any other.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use conformance_core::{
    ChannelVersion, ChannelVersions, CheckpointConfig, CheckpointError, CheckpointSaver, CheckpointTuple, Forward,
    ListOptions, PendingWrite, TypedValue,
};

use crate::bug::{Bug, Invocation, Put, PutWrites, Reply};

/// What the instances opened on one storage share besides the inner saver's storage and
/// the bug.
#[derive(Default)]
struct Shared {
    /// Every thread a put, put_writes, replay or copy of any instance named (the trait
    /// cannot list threads; bugs that act on "every thread" use this).
    threads: Mutex<BTreeSet<String>>,
    /// The number of the last instance opened.
    instances: AtomicU64,
}

/// A saver with one [`Bug`].
///
/// Instances made by [`MutantSaver::reopen`] share the bug (and with it whatever the bug
/// remembers), as two instances of a persistent saver opened on one file share the file. A
/// clone is the same instance (the same inner saver and instance number).
#[derive(Clone)]
pub struct MutantSaver {
    inner: Arc<dyn CheckpointSaver>,
    bug: Arc<dyn Bug>,
    shared: Arc<Shared>,
    instance: u64,
}

impl MutantSaver {
    /// `inner` with `bug` switched on: the first instance on `inner`'s storage.
    pub fn new(inner: Arc<dyn CheckpointSaver>, bug: Arc<dyn Bug>) -> Self {
        Self { inner, bug, shared: Arc::default(), instance: 0 }
    }

    /// Another instance on the same storage with the same bug; `inner` is a saver on that
    /// storage (the same one again for an in-memory saver, a newly opened one for a file).
    pub fn reopen(&self, inner: Arc<dyn CheckpointSaver>) -> Self {
        let instance = self.shared.instances.fetch_add(1, Ordering::Relaxed) + 1;
        Self { inner, bug: self.bug.clone(), shared: self.shared.clone(), instance }
    }

    fn handle(&self) -> Inner<'_> {
        Inner { saver: &*self.inner, shared: &self.shared, instance: self.instance }
    }
}

/// The inner saver as a [`Bug`] sees it, with the helpers stateful bugs build on.
pub struct Inner<'a> {
    saver: &'a dyn CheckpointSaver,
    shared: &'a Shared,
    instance: u64,
}

impl Inner<'_> {
    /// The wrapped saver.
    pub fn saver(&self) -> &dyn CheckpointSaver {
        self.saver
    }

    /// Which instance on the storage makes the call (0 for the first, then 1, 2, ...).
    pub fn instance(&self) -> u64 {
        self.instance
    }

    /// Makes `call` on the inner saver unchanged.
    ///
    /// # Errors
    /// The inner saver's error.
    pub async fn forward(&self, call: Invocation) -> Result<Reply, CheckpointError> {
        call.send(self.saver).await
    }

    /// Every thread a call of any instance named so far.
    pub fn threads(&self) -> Vec<String> {
        lock(&self.shared.threads).iter().cloned().collect()
    }

    fn note_thread(&self, thread: &str) {
        lock(&self.shared.threads).insert(thread.to_owned());
    }

    /// Every tuple of `thread` (all namespaces), newest first.
    ///
    /// # Errors
    /// The inner saver's error.
    pub async fn snapshot(&self, thread: &str) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        self.saver.list(thread, &ListOptions::all()).await
    }

    /// The tuples of `thread` after deleting it, for bugs that keep part of it.
    ///
    /// # Errors
    /// The inner saver's error.
    pub async fn take_thread(&self, thread: &str) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        let snap = self.snapshot(thread).await?;
        self.saver.delete_thread(thread).await?;
        Ok(snap)
    }

    /// Puts `tuples` again (oldest first), each under its own config's thread and
    /// namespace with its parent, carried values and pending writes.
    ///
    /// # Errors
    /// The inner saver's error.
    pub async fn replay(&self, mut tuples: Vec<CheckpointTuple>) -> Result<(), CheckpointError> {
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
            let stored = self.saver.put(&cfg, checkpoint, t.metadata.clone(), new_versions).await?;
            self.note_thread(&stored.thread_id);
            self.replay_writes(&stored, &t.pending_writes).await?;
        }
        Ok(())
    }

    /// Puts `writes` again for `config`, one call per (task_path, task_id), in order.
    ///
    /// # Errors
    /// The inner saver's error.
    pub async fn replay_writes(
        &self,
        config: &CheckpointConfig,
        writes: &[PendingWrite],
    ) -> Result<(), CheckpointError> {
        let mut groups: BTreeMap<(String, String), Vec<(String, TypedValue)>> = BTreeMap::new();
        for w in writes {
            groups
                .entry((w.task_path.clone(), w.task_id.clone()))
                .or_default()
                .push((w.channel.clone(), w.value.clone()));
        }
        for ((path, task), ws) in groups {
            self.saver.put_writes(config, ws, &task, &path).await?;
        }
        Ok(())
    }
}

/// Locks `m`, ignoring poisoning (a mutant that panics on purpose must not wedge the rest).
pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The thread id of a base method's call (`put`, `put_writes`, `get_tuple`, `list`,
/// `delete_thread`), which [`Bug::thread_input`] sees.
fn base_thread(call: &mut Invocation) -> Option<&mut String> {
    match call {
        Invocation::Put(Put { config, .. })
        | Invocation::PutWrites(PutWrites { config, .. })
        | Invocation::GetTuple { config } => Some(&mut config.thread_id),
        Invocation::List { thread_id, .. } | Invocation::DeleteThread { thread_id } => Some(thread_id),
        _ => None,
    }
}

/// The thread a call stores into, which [`Inner::threads`] then lists: a put's, a
/// put_writes' with a checkpoint id, a copy's target when both threads are named.
fn stored_thread(call: &Invocation) -> Option<&str> {
    match call {
        Invocation::Put(put) => Some(&put.config.thread_id),
        Invocation::PutWrites(w) if w.config.checkpoint_id.is_some() => Some(&w.config.thread_id),
        Invocation::CopyThread { source, target } if !source.is_empty() && !target.is_empty() => Some(target),
        _ => None,
    }
}

/// Every call through the bug's hooks, in the order `crate::bug`'s module docs give.
#[async_trait]
impl Forward for MutantSaver {
    async fn send(&self, mut call: Invocation) -> Result<Reply, CheckpointError> {
        let caller = call.view(|put| put.config.clone(), |_| ());
        let unchanged = match base_thread(&mut call) {
            Some(thread) => {
                self.bug.thread_input(thread);
                thread.is_empty()
            }
            None => matches!(&call, Invocation::DeltaChannelHistory { config, .. } if config.thread_id.is_empty()),
        };
        if unchanged {
            return call.send(&*self.inner).await;
        }
        self.bug.input(&mut call);
        if let Some(thread) = stored_thread(&call) {
            self.handle().note_thread(thread);
        }
        let mut out = self.bug.call(&self.handle(), call).await?;
        self.bug.output(&caller, &mut out);
        Ok(out)
    }

    fn next_version(&self, current: Option<&ChannelVersion>) -> ChannelVersion {
        let mut input = current.cloned();
        self.bug.next_version_input(&mut input);
        let mut out = self.inner.get_next_version(input.as_ref());
        self.bug.next_version_output(current, &mut out);
        out
    }
}

conformance_core::forward_saver!(MutantSaver);
