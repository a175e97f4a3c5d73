//! [`SaverCall`]: the one list of the [`crate::CheckpointSaver`] methods as data. Its two
//! uses differ only in what `put` and `put_writes` carry: an [`crate::Invocation`] holds
//! every argument (a trace step, a fuzzer's call, a bridge request, a mutant's view), a
//! [`crate::Call`] only what names the data touched (failure messages). Adding a saver
//! method adds one variant here, its arm in [`SaverCall::view`], [`SaverCall::capability`],
//! [`crate::Invocation::send`] and the `Call`'s `Display`.

use serde::{Deserialize, Serialize};

use crate::types::{ChannelVersion, CheckpointConfig, ListOptions, PruneStrategy};
use crate::Capability;

/// One call of a saver method with its arguments (CONTRACT §2 and §3 name the methods),
/// `put`'s arguments being `P` and `put_writes`'s `W`. In JSON it is an object whose `call`
/// names the method (snake_case) and whose other keys are the arguments by name, as a
/// trace step writes it (docs/trace-format.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "call", rename_all = "snake_case")]
pub enum SaverCall<P, W> {
    /// `put(config, checkpoint, metadata, new_versions)`.
    Put(P),
    /// `put_writes(config, writes, task_id, task_path)`.
    PutWrites(W),
    /// `get_tuple(config)`.
    GetTuple {
        /// The config: thread, namespace and, when set, the exact checkpoint.
        config: CheckpointConfig,
    },
    /// `list(thread_id, options)`.
    List {
        /// The thread listed.
        thread_id: String,
        /// Namespace, id, filter, before, limit.
        options: ListOptions,
    },
    /// `delete_thread(thread_id)`.
    DeleteThread {
        /// The thread deleted.
        thread_id: String,
    },
    /// `delete_for_runs(run_ids)`.
    DeleteForRuns {
        /// The run ids.
        run_ids: Vec<String>,
    },
    /// `copy_thread(source, target)`.
    CopyThread {
        /// The source thread.
        source: String,
        /// The target thread.
        target: String,
    },
    /// `prune(thread_ids, strategy)`.
    Prune {
        /// The threads pruned.
        thread_ids: Vec<String>,
        /// `keep_latest` or `delete`.
        strategy: PruneStrategy,
    },
    /// `delta_channel_history(config, channels)`.
    DeltaChannelHistory {
        /// The config of the target checkpoint.
        config: CheckpointConfig,
        /// The channels asked for.
        channels: Vec<String>,
    },
    /// `get_next_version(current)`: the one synchronous method.
    GetNextVersion {
        /// The current version, if any.
        current: Option<ChannelVersion>,
    },
}

impl<P, W> SaverCall<P, W> {
    /// The same call with `put`'s and `put_writes`'s arguments seen through `put` and
    /// `writes`; every other variant's arguments are cloned (ids and options, no values).
    pub fn view<P2, W2>(&self, put: impl FnOnce(&P) -> P2, writes: impl FnOnce(&W) -> W2) -> SaverCall<P2, W2> {
        match self {
            Self::Put(p) => SaverCall::Put(put(p)),
            Self::PutWrites(w) => SaverCall::PutWrites(writes(w)),
            Self::GetTuple { config } => SaverCall::GetTuple { config: config.clone() },
            Self::List { thread_id, options } => {
                SaverCall::List { thread_id: thread_id.clone(), options: options.clone() }
            }
            Self::DeleteThread { thread_id } => SaverCall::DeleteThread { thread_id: thread_id.clone() },
            Self::DeleteForRuns { run_ids } => SaverCall::DeleteForRuns { run_ids: run_ids.clone() },
            Self::CopyThread { source, target } => {
                SaverCall::CopyThread { source: source.clone(), target: target.clone() }
            }
            Self::Prune { thread_ids, strategy } => {
                SaverCall::Prune { thread_ids: thread_ids.clone(), strategy: *strategy }
            }
            Self::DeltaChannelHistory { config, channels } => {
                SaverCall::DeltaChannelHistory { config: config.clone(), channels: channels.clone() }
            }
            Self::GetNextVersion { current } => SaverCall::GetNextVersion { current: current.clone() },
        }
    }

    /// The capability whose method this is (`get_next_version` belongs to `put`, which
    /// uses it to number channel versions; CONTRACT §2).
    pub fn capability(&self) -> Capability {
        match self {
            Self::Put(_) | Self::GetNextVersion { .. } => Capability::Put,
            Self::PutWrites(_) => Capability::PutWrites,
            Self::GetTuple { .. } => Capability::GetTuple,
            Self::List { .. } => Capability::List,
            Self::DeleteThread { .. } => Capability::DeleteThread,
            Self::DeleteForRuns { .. } => Capability::DeleteForRuns,
            Self::CopyThread { .. } => Capability::CopyThread,
            Self::Prune { .. } => Capability::Prune,
            Self::DeltaChannelHistory { .. } => Capability::DeltaChannelHistory,
        }
    }

    /// The method's name as the contract, traces and the bridge protocol spell it
    /// (`put_writes`).
    pub fn method(&self) -> &'static str {
        match self {
            Self::Put(_) => "put",
            Self::PutWrites(_) => "put_writes",
            Self::GetTuple { .. } => "get_tuple",
            Self::List { .. } => "list",
            Self::DeleteThread { .. } => "delete_thread",
            Self::DeleteForRuns { .. } => "delete_for_runs",
            Self::CopyThread { .. } => "copy_thread",
            Self::Prune { .. } => "prune",
            Self::DeltaChannelHistory { .. } => "delta_channel_history",
            Self::GetNextVersion { .. } => "get_next_version",
        }
    }
}
