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
    ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata,
    CheckpointSaver, CheckpointTuple, DeltaChannelHistory, ListOptions, PendingWrite, PruneStrategy, TypedValue,
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
/// remembers), as two instances of a persistent saver opened on one file share the file.
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

    async fn call(&self, call: Invocation) -> Result<Reply, CheckpointError> {
        self.bug.call(&self.handle(), call).await
    }

    fn thread(&self, thread_id: &str) -> String {
        let mut thread = thread_id.to_owned();
        self.bug.thread_input(&mut thread);
        thread
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

#[async_trait]
impl CheckpointSaver for MutantSaver {
    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Result<CheckpointConfig, CheckpointError> {
        let cfg = CheckpointConfig { thread_id: self.thread(&config.thread_id), ..config.clone() };
        if cfg.thread_id.is_empty() {
            return self.inner.put(&cfg, checkpoint, metadata, new_versions).await;
        }
        let mut put = Put { config: cfg, checkpoint, metadata, new_versions };
        self.bug.put_input(&mut put);
        self.handle().note_thread(&put.config.thread_id);
        let mut out = self.call(Invocation::Put(put)).await?.config()?;
        self.bug.put_output(config, &mut out);
        Ok(out)
    }

    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(String, TypedValue)>,
        task_id: &str,
        task_path: &str,
    ) -> Result<(), CheckpointError> {
        let cfg = CheckpointConfig { thread_id: self.thread(&config.thread_id), ..config.clone() };
        if cfg.thread_id.is_empty() {
            return self.inner.put_writes(&cfg, writes, task_id, task_path).await;
        }
        let mut call = PutWrites { config: cfg, writes, task_id: task_id.to_owned(), task_path: task_path.to_owned() };
        self.bug.put_writes_input(&mut call);
        if call.config.checkpoint_id.is_some() {
            self.handle().note_thread(&call.config.thread_id);
        }
        self.call(Invocation::PutWrites(call)).await?.done()
    }

    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
        let mut cfg = CheckpointConfig { thread_id: self.thread(&config.thread_id), ..config.clone() };
        if cfg.thread_id.is_empty() {
            return self.inner.get_tuple(&cfg).await;
        }
        self.bug.get_tuple_input(&mut cfg);
        let mut out = self.call(Invocation::GetTuple { config: cfg }).await?.tuple()?;
        if let Some(t) = &mut out {
            self.bug.tuple_output(t);
        }
        self.bug.get_tuple_output(config, &mut out);
        Ok(out)
    }

    async fn list(&self, thread_id: &str, options: &ListOptions) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        let thread = self.thread(thread_id);
        if thread.is_empty() {
            return self.inner.list(&thread, options).await;
        }
        let mut opts = options.clone();
        self.bug.list_input(&thread, &mut opts);
        let mut out = self.call(Invocation::List { thread_id: thread, options: opts }).await?.tuples()?;
        out.iter_mut().for_each(|t| self.bug.tuple_output(t));
        self.bug.list_output(options, &mut out);
        Ok(out)
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<(), CheckpointError> {
        let mut thread = self.thread(thread_id);
        if thread.is_empty() {
            return self.inner.delete_thread(&thread).await;
        }
        self.bug.delete_thread_input(&mut thread);
        self.call(Invocation::DeleteThread { thread_id: thread }).await?.done()
    }

    fn get_next_version(&self, current: Option<&ChannelVersion>) -> ChannelVersion {
        let mut input = current.cloned();
        self.bug.next_version_input(&mut input);
        let mut out = self.inner.get_next_version(input.as_ref());
        self.bug.next_version_output(current, &mut out);
        out
    }

    async fn delete_for_runs(&self, run_ids: &[String]) -> Result<(), CheckpointError> {
        let mut run_ids = run_ids.to_vec();
        self.bug.delete_for_runs_input(&mut run_ids);
        self.call(Invocation::DeleteForRuns { run_ids }).await?.done()
    }

    async fn copy_thread(&self, source: &str, target: &str) -> Result<(), CheckpointError> {
        let (mut source, mut target) = (source.to_owned(), target.to_owned());
        self.bug.copy_thread_input(&mut source, &mut target);
        if !source.is_empty() && !target.is_empty() {
            self.handle().note_thread(&target);
        }
        self.call(Invocation::CopyThread { source, target }).await?.done()
    }

    async fn prune(&self, thread_ids: &[String], strategy: PruneStrategy) -> Result<(), CheckpointError> {
        let (mut thread_ids, mut strategy) = (thread_ids.to_vec(), strategy);
        self.bug.prune_input(&mut thread_ids, &mut strategy);
        self.call(Invocation::Prune { thread_ids, strategy }).await?.done()
    }

    async fn delta_channel_history(
        &self,
        config: &CheckpointConfig,
        channels: &[String],
    ) -> Result<BTreeMap<String, DeltaChannelHistory>, CheckpointError> {
        if config.thread_id.is_empty() {
            return self.inner.delta_channel_history(config, channels).await;
        }
        let (mut cfg, mut channels) = (config.clone(), channels.to_vec());
        self.bug.delta_input(&mut cfg, &mut channels);
        let mut out = self.call(Invocation::DeltaChannelHistory { config: cfg, channels }).await?.history()?;
        self.bug.delta_output(&mut out);
        Ok(out)
    }
}
