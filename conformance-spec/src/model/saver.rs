//! The model as a saver: [`answer`] makes a call held as data ([`Invocation`]) on a
//! [`Model`] through [`Invocation::send`], the one path every saver call of the kit takes.
//! So the fuzzer's expected answer to a call is that call made on the model, and no list of
//! the saver's methods is kept in the fuzzer: a new method's model rule is its method in
//! the `CheckpointSaver` impl below (or an inherent method of [`Model`] that it calls).

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use conformance_core::{
    async_trait, ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata,
    CheckpointSaver, CheckpointTuple, DeltaChannelHistory, Invocation, ListOptions, PruneStrategy, Reply, TypedValue,
};
use futures::FutureExt;

use super::Model;

/// What the model answers to `invocation` (CONTRACT §2, §3), and the model's state after
/// it: the reply as a saver's, or the error the contract requires (by kind; its message is
/// the model's own).
///
/// # Errors
/// The contract's error for the call (`InvalidConfig` for an empty thread id, ...); a
/// `Storage` error only if a model method ever waited, which none does.
pub fn answer(model: &mut Model, invocation: Invocation) -> Result<Reply, CheckpointError> {
    let saver = AsSaver(Mutex::new(model));
    invocation
        .send(&saver)
        .now_or_never()
        .unwrap_or_else(|| Err(CheckpointError::storage_msg("the model waited, which it never does")))
}

/// A [`Model`] lent the saver trait for one call ([`answer`]): every method runs at once,
/// under the lock, on the borrowed model.
struct AsSaver<'a>(Mutex<&'a mut Model>);

impl<'a> AsSaver<'a> {
    fn model(&self) -> MutexGuard<'_, &'a mut Model> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[async_trait]
impl CheckpointSaver for AsSaver<'_> {
    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Result<CheckpointConfig, CheckpointError> {
        self.model().put(config, &checkpoint, &metadata, &new_versions)
    }

    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(String, TypedValue)>,
        task_id: &str,
        task_path: &str,
    ) -> Result<(), CheckpointError> {
        self.model().put_writes(config, &writes, task_id, task_path)
    }

    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
        self.model().get_tuple(config)
    }

    async fn list(&self, thread_id: &str, options: &ListOptions) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        self.model().list(thread_id, options)
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<(), CheckpointError> {
        self.model().delete_thread(thread_id)
    }

    fn get_next_version(&self, current: Option<&ChannelVersion>) -> ChannelVersion {
        self.model().next_version(current)
    }

    async fn delete_for_runs(&self, run_ids: &[String]) -> Result<(), CheckpointError> {
        self.model().delete_for_runs(run_ids)
    }

    async fn copy_thread(&self, source: &str, target: &str) -> Result<(), CheckpointError> {
        self.model().copy_thread(source, target)
    }

    async fn prune(&self, thread_ids: &[String], strategy: PruneStrategy) -> Result<(), CheckpointError> {
        self.model().prune(thread_ids, strategy)
    }

    async fn delta_channel_history(
        &self,
        config: &CheckpointConfig,
        channels: &[String],
    ) -> Result<BTreeMap<String, DeltaChannelHistory>, CheckpointError> {
        self.model().delta_channel_history(config, channels)
    }
}
