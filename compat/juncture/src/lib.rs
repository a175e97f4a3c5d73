//! The conformance adapter for `juncture-checkpoint` 0.4.0's `SqliteSaver` (crates.io), whose
//! trait is `juncture_core::checkpoint::CheckpointSaver` 0.4.0: `get_tuple(config)`,
//! `list(config, Option<CheckpointFilter>)`, `put(config, checkpoint, metadata)` and
//! `put_writes(config, writes, task_id)`.
//!
//! [`JunctureAdapter`] maps the kit's calls onto those four and fixes nothing. What the API
//! cannot express is refused or answered `Unsupported` (docs/compat.md, "API limits"):
//! - no `delete_thread` and no extended method: `Unsupported`;
//! - `put` takes no `new_versions` argument: they travel in the checkpoint's own
//!   `new_versions` field; versions are `u64` (a string version is `InvalidInput`);
//! - `list` lists one namespace of one thread: a kit `list` over every namespace lists the
//!   root namespace; it filters only `source` and `step` (another filter key, or a
//!   `checkpoint_id` scope, is `InvalidInput`); `before` and `limit` go into its filter;
//! - pending writes have no task path (they read back with `task_path: ""`).

pub mod convert;

use async_trait::async_trait;
use conformance_core::{
    BoxError, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata, CheckpointSaver,
    CheckpointTuple, Feature, Fixture, ListOptions, Registration, Storage, TypedValue,
};
use juncture_checkpoint::SqliteSaver;
use juncture_core::checkpoint::{CheckpointFilter, CheckpointSaver as JunctureSaver, PendingWrite};

use crate::convert::{error, from_runnable, from_tuple, runnable, source, to_checkpoint, to_metadata};

/// The kit's `CheckpointSaver` over a juncture saver (see the crate docs).
pub struct JunctureAdapter<S> {
    saver: S,
}

impl<S> JunctureAdapter<S> {
    /// An adapter around `saver`.
    pub fn new(saver: S) -> Self {
        Self { saver }
    }
}

/// juncture's filter for kit list options (`None` when the kit gives none of them, so the
/// saver's own defaults apply).
fn list_filter(options: &ListOptions) -> Result<Option<CheckpointFilter>, CheckpointError> {
    let mut f = CheckpointFilter::default();
    for (key, value) in &options.filter {
        match key.as_str() {
            "source" => f.source = Some(source(value)?),
            "step" => {
                let step = value.as_i64().ok_or_else(|| {
                    CheckpointError::InvalidInput(format!("filter step {value}: juncture filters steps as i64"))
                })?;
                f.step_gte = Some(step);
                f.step_lte = Some(step);
            }
            other => {
                return Err(CheckpointError::InvalidInput(format!(
                    "filter key {other:?}: juncture's CheckpointFilter filters only source and step"
                )))
            }
        }
    }
    if options.checkpoint_id.is_some() {
        return Err(CheckpointError::InvalidInput("juncture's list cannot scope by checkpoint_id".into()));
    }
    f.before = options.before.clone();
    f.limit = options.limit;
    let empty = options.filter.is_empty() && f.before.is_none() && f.limit.is_none();
    Ok((!empty).then_some(f))
}

#[async_trait]
impl<S: JunctureSaver> CheckpointSaver for JunctureAdapter<S> {
    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Result<CheckpointConfig, CheckpointError> {
        let rc = runnable(config)?;
        let checkpoint = to_checkpoint(&checkpoint, &new_versions)?;
        let metadata = to_metadata(&metadata)?;
        let returned = self.saver.put(&rc, checkpoint, metadata).await.map_err(|e| error("put", e))?;
        from_runnable(&returned, "the config of put")
    }

    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(String, TypedValue)>,
        task_id: &str,
        _task_path: &str,
    ) -> Result<(), CheckpointError> {
        let rc = runnable(config)?;
        let writes = writes
            .into_iter()
            .map(|(channel, value)| PendingWrite { task_id: task_id.to_owned(), channel, value: value.to_json_value() })
            .collect();
        self.saver.put_writes(&rc, writes, task_id).await.map_err(|e| error("put_writes", e))
    }

    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
        let rc = runnable(config)?;
        let tuple = self.saver.get_tuple(&rc).await.map_err(|e| error("get_tuple", e))?;
        tuple.map(from_tuple).transpose()
    }

    async fn list(&self, thread_id: &str, options: &ListOptions) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        let scope = CheckpointConfig::new(thread_id).with_ns(options.checkpoint_ns.clone().unwrap_or_default());
        let rc = runnable(&scope)?;
        let tuples = self.saver.list(&rc, list_filter(options)?).await.map_err(|e| error("list", e))?;
        tuples.into_iter().map(from_tuple).collect()
    }
}

/// The kit fixture of an adapter, with the limits juncture's API declares (CONTRACT §5
/// "Declared limits"): its `PendingWrite` is `(task_id, channel, value)` and its
/// `put_writes` takes no task path, so reads carry none and writes cannot be ordered by
/// one; its `Checkpoint` has no `updated_channels`.
pub fn fixture<S: JunctureSaver + 'static>(adapter: JunctureAdapter<S>) -> Fixture {
    Fixture::new(adapter)
        .lacking(Feature::TaskPathOnReads)
        .lacking(Feature::TaskPathOnWrites)
        .lacking(Feature::UpdatedChannels)
}

/// Opens juncture's `SqliteSaver` on the database file at `path` (`SqliteSaver::new`,
/// which creates the schema).
///
/// # Errors
/// The saver's error.
pub async fn open(path: &str) -> Result<JunctureAdapter<SqliteSaver>, BoxError> {
    std::fs::OpenOptions::new().create(true).append(true).open(path)?;
    Ok(JunctureAdapter::new(SqliteSaver::new(path).await?))
}

/// The storage of `juncture-sqlite`: a temporary directory per case holding one database
/// file, whose path is the location (reopenable, and openable from another process by its
/// path), with the limits of [`fixture`].
#[derive(Default)]
pub struct Files(std::sync::Mutex<std::collections::HashMap<String, tempfile::TempDir>>);

#[async_trait]
impl Storage for Files {
    type Saver = JunctureAdapter<SqliteSaver>;

    async fn create(&self) -> Result<String, BoxError> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("checkpoints.db").to_string_lossy().into_owned();
        self.0.lock().unwrap_or_else(|e| e.into_inner()).insert(path.clone(), dir);
        Ok(path)
    }

    async fn open(&self, location: &str) -> Result<JunctureAdapter<SqliteSaver>, BoxError> {
        open(location).await
    }

    async fn destroy(&self, location: &str) -> Result<(), BoxError> {
        let dir = self.0.lock().unwrap_or_else(|e| e.into_inner()).remove(location);
        Ok(dir.map(tempfile::TempDir::close).transpose().map(drop)?)
    }

    fn lacks(&self, _: &str) -> std::collections::BTreeSet<Feature> {
        [Feature::TaskPathOnReads, Feature::TaskPathOnWrites, Feature::UpdatedChannels].into()
    }
}

/// The registration `juncture-sqlite`: [`Files`].
pub fn registration() -> Registration {
    Registration::persistent("juncture-sqlite", Files::default())
}
