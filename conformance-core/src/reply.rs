//! [`Reply`]: what a saver call returns, one variant per return type of the
//! [`crate::CheckpointSaver`] trait, as [`crate::Invocation::send`] (in `saver_call.rs`, beside the
//! list of methods) gives it; the one place a call held as data ([`crate::Invocation`]) is made on
//! a saver: the self-test's mutant wrapper and the fuzzer's
//! executor, the traced saver every case runs on and the Rust bridge child all go through it.

use std::collections::BTreeMap;

use crate::types::{ChannelVersion, CheckpointConfig, CheckpointTuple, DeltaChannelHistory};
use crate::CheckpointError;

/// What an [`crate::Invocation`] returns: one variant per return type of the saver trait.
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
