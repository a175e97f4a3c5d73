//! [`Reply`]: what a saver call returns, one variant per return type of the
//! [`CheckpointSaver`] trait, and [`Invocation::send`], the one place a call held as data
//! ([`Invocation`]) is made on a saver: the self-test's mutant wrapper and the fuzzer's
//! executor, the traced saver every case runs on and the Rust bridge child all go through it.

use std::collections::BTreeMap;

use crate::types::{ChannelVersion, CheckpointConfig, CheckpointTuple, DeltaChannelHistory};
use crate::{CheckpointError, CheckpointSaver, Invocation};

/// What an [`Invocation`] returns: one variant per return type of the saver trait.
#[derive(Clone, Debug)]
pub enum Reply {
    /// `put`: the stored checkpoint's config.
    Config(CheckpointConfig),
    /// `put_writes`, `delete_thread`, `delete_for_runs`, `copy_thread`, `prune`.
    Done,
    /// `get_tuple`.
    Tuple(Option<CheckpointTuple>),
    /// `list`.
    Tuples(Vec<CheckpointTuple>),
    /// `delta_channel_history`.
    History(BTreeMap<String, DeltaChannelHistory>),
    /// `get_next_version`.
    Version(ChannelVersion),
}

impl Reply {
    fn wrong(self, want: &str) -> CheckpointError {
        CheckpointError::storage_msg(format!("a {want} call was answered with {self:?}"))
    }

    /// The config of a `put` reply.
    ///
    /// # Errors
    /// `Storage` when the answer was another kind of reply.
    pub fn config(self) -> Result<CheckpointConfig, CheckpointError> {
        match self {
            Reply::Config(c) => Ok(c),
            other => Err(other.wrong("put")),
        }
    }

    /// The `()` of a reply without a value.
    ///
    /// # Errors
    /// `Storage` when the answer carried a value.
    pub fn done(self) -> Result<(), CheckpointError> {
        match self {
            Reply::Done => Ok(()),
            other => Err(other.wrong("unit")),
        }
    }

    /// The tuple of a `get_tuple` reply.
    ///
    /// # Errors
    /// `Storage` when the answer was another kind of reply.
    pub fn tuple(self) -> Result<Option<CheckpointTuple>, CheckpointError> {
        match self {
            Reply::Tuple(t) => Ok(t),
            other => Err(other.wrong("get_tuple")),
        }
    }

    /// The tuples of a `list` reply.
    ///
    /// # Errors
    /// `Storage` when the answer was another kind of reply.
    pub fn tuples(self) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        match self {
            Reply::Tuples(t) => Ok(t),
            other => Err(other.wrong("list")),
        }
    }

    /// The histories of a `delta_channel_history` reply.
    ///
    /// # Errors
    /// `Storage` when the answer was another kind of reply.
    pub fn history(self) -> Result<BTreeMap<String, DeltaChannelHistory>, CheckpointError> {
        match self {
            Reply::History(h) => Ok(h),
            other => Err(other.wrong("delta_channel_history")),
        }
    }

    /// The version of a `get_next_version` reply.
    ///
    /// # Errors
    /// `Storage` when the answer was another kind of reply.
    pub fn version(self) -> Result<ChannelVersion, CheckpointError> {
        match self {
            Reply::Version(v) => Ok(v),
            other => Err(other.wrong("get_next_version")),
        }
    }
}

impl Invocation {
    /// Makes this call on `saver` and gives back what it returned, as a [`Reply`] of the
    /// method's return type (CONTRACT §2 and §3 name the methods).
    ///
    /// # Errors
    /// The saver's own error, unchanged.
    pub async fn send(self, saver: &dyn CheckpointSaver) -> Result<Reply, CheckpointError> {
        let s = saver;
        Ok(match self {
            Invocation::Put(p) => Reply::Config(s.put(&p.config, p.checkpoint, p.metadata, p.new_versions).await?),
            Invocation::PutWrites(w) => {
                s.put_writes(&w.config, w.writes, &w.task_id, &w.task_path).await?;
                Reply::Done
            }
            Invocation::GetTuple { config } => Reply::Tuple(s.get_tuple(&config).await?),
            Invocation::List { thread_id, options } => Reply::Tuples(s.list(&thread_id, &options).await?),
            Invocation::DeleteThread { thread_id } => {
                s.delete_thread(&thread_id).await?;
                Reply::Done
            }
            Invocation::DeleteForRuns { run_ids } => {
                s.delete_for_runs(&run_ids).await?;
                Reply::Done
            }
            Invocation::CopyThread { source, target } => {
                s.copy_thread(&source, &target).await?;
                Reply::Done
            }
            Invocation::Prune { thread_ids, strategy } => {
                s.prune(&thread_ids, strategy).await?;
                Reply::Done
            }
            Invocation::DeltaChannelHistory { config, channels } => {
                Reply::History(s.delta_channel_history(&config, &channels).await?)
            }
            Invocation::GetNextVersion { current } => Reply::Version(s.get_next_version(current.as_ref())),
        })
    }
}
