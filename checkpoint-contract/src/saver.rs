//! The async `CheckpointSaver` trait: every method of CONTRACT §2 and §3.

use std::collections::BTreeMap;

use async_trait::async_trait;

use crate::types::{
    next_version, ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointTuple,
    DeltaChannelHistory, ListOptions, PruneStrategy, TypedValue,
};
use crate::{Capability, CheckpointError};

/// A checkpointer: stores checkpoints and pending writes per thread and namespace.
///
/// Every method has a default body that returns [`CheckpointError::Unsupported`]; the kit
/// detects a capability by calling its method on a fresh instance and treating
/// `Unsupported` as "not implemented" (CONTRACT §5). Implement the base methods (`put`,
/// `put_writes`, `get_tuple`, `list`, `delete_thread`) and any extended ones you support.
///
/// A saver is `Send + Sync`: calls made at the same time from many tasks must behave as if
/// made one after another (CONTRACT §4).
#[async_trait]
pub trait CheckpointSaver: Send + Sync {
    /// Stores `checkpoint` under (`config.thread_id`, `config.checkpoint_ns`,
    /// `checkpoint.id`) with `config.checkpoint_id` as its parent, and returns the config of
    /// the stored checkpoint (CONTRACT §2 put).
    ///
    /// `new_versions` names the channels whose value changed in this step. Re-putting an
    /// existing id replaces checkpoint, metadata and parent and keeps its pending writes.
    ///
    /// # Errors
    /// `InvalidConfig` for an empty thread id; `InvalidInput` for a value the saver cannot
    /// store as given (nothing is stored); `Storage` on a storage failure.
    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Result<CheckpointConfig, CheckpointError> {
        let _ = (config, checkpoint, metadata, new_versions);
        Err(CheckpointError::Unsupported(Capability::Put))
    }

    /// Stores `writes` (channel, value) of task `task_id` at `task_path` for the checkpoint
    /// named by `config` (CONTRACT §2 put_writes).
    ///
    /// Indexes: a special channel gets its fixed negative index, any other its 0-based
    /// position in `writes`. Regular writes: first wins per (thread, ns, id, task, index);
    /// special writes: last wins. Decided per write. An empty list is a no-op.
    ///
    /// # Errors
    /// `InvalidConfig` without `checkpoint_id` or with an empty thread id.
    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(String, TypedValue)>,
        task_id: &str,
        task_path: &str,
    ) -> Result<(), CheckpointError> {
        let _ = (config, writes, task_id, task_path);
        Err(CheckpointError::Unsupported(Capability::PutWrites))
    }

    /// The checkpoint named by `config` (the latest by id when it names none), with its
    /// parent config and pending writes, or `None` (CONTRACT §2 get_tuple).
    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
        let _ = config;
        Err(CheckpointError::Unsupported(Capability::GetTuple))
    }

    /// The checkpoints of `thread_id` in scope of `options`, newest id first, filtered,
    /// cut by `before` and limited (CONTRACT §2 list).
    async fn list(&self, thread_id: &str, options: &ListOptions) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        let _ = (thread_id, options);
        Err(CheckpointError::Unsupported(Capability::List))
    }

    /// Removes every checkpoint, value and write of the thread in every namespace; an
    /// unknown thread is a no-op (CONTRACT §2 delete_thread).
    async fn delete_thread(&self, thread_id: &str) -> Result<(), CheckpointError> {
        let _ = thread_id;
        Err(CheckpointError::Unsupported(Capability::DeleteThread))
    }

    /// The next channel version, strictly greater than `current` (1 when there is none)
    /// (CONTRACT §2 get_next_version). The default is [`next_version`].
    fn get_next_version(&self, current: Option<&ChannelVersion>) -> ChannelVersion {
        next_version(current)
    }

    /// Deletes, in every thread and namespace, each checkpoint whose metadata `run_id` is
    /// listed, with its writes (CONTRACT §3).
    async fn delete_for_runs(&self, run_ids: &[String]) -> Result<(), CheckpointError> {
        let _ = run_ids;
        Err(CheckpointError::Unsupported(Capability::DeleteForRuns))
    }

    /// Copies every checkpoint of every namespace of `source` to `target`, with the same
    /// ids, metadata, values, versions and writes; configs in the copy name `target`
    /// (CONTRACT §3).
    async fn copy_thread(&self, source: &str, target: &str) -> Result<(), CheckpointError> {
        let _ = (source, target);
        Err(CheckpointError::Unsupported(Capability::CopyThread))
    }

    /// Prunes `thread_ids` by `strategy` (CONTRACT §3).
    async fn prune(&self, thread_ids: &[String], strategy: PruneStrategy) -> Result<(), CheckpointError> {
        let _ = (thread_ids, strategy);
        Err(CheckpointError::Unsupported(Capability::Prune))
    }

    /// For each channel in `channels`, the writes (oldest first) and the seed found walking
    /// `parent_config` links from the target's parent (CONTRACT §3 delta_channel_history).
    async fn delta_channel_history(
        &self,
        config: &CheckpointConfig,
        channels: &[String],
    ) -> Result<BTreeMap<String, DeltaChannelHistory>, CheckpointError> {
        let _ = (config, channels);
        Err(CheckpointError::Unsupported(Capability::DeltaChannelHistory))
    }
}
