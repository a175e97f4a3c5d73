//! [`Invocation`]: one call of a [`crate::CheckpointSaver`] method with all its arguments,
//! declared once for every part that holds calls as data: the trace format (its steps that
//! are saver calls, docs/trace-format.md), the fuzzer that generates and shrinks them, and
//! the self-test's mutants, whose bugs see and replace calls. [`Invocation::call`] gives
//! the short [`Call`] that failure messages print.

use serde::{Deserialize, Serialize};

use crate::types::{
    ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata, ListOptions, PruneStrategy, TypedValue,
};
use crate::{Call, Capability};

/// The arguments of `put` (CONTRACT §2 put).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Put {
    /// Thread, namespace and parent checkpoint id.
    pub config: CheckpointConfig,
    /// The checkpoint to store.
    pub checkpoint: Checkpoint,
    /// Its metadata.
    pub metadata: CheckpointMetadata,
    /// The channels whose values this put carries new versions of.
    pub new_versions: ChannelVersions,
}

/// The arguments of `put_writes` (CONTRACT §2 put_writes).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PutWrites {
    /// Thread, namespace and the checkpoint the writes belong to.
    pub config: CheckpointConfig,
    /// `(channel, value)` in call order (`[channel, value]` pairs in JSON).
    pub writes: Vec<(String, TypedValue)>,
    /// The writing task.
    pub task_id: String,
    /// The writing task's path.
    pub task_path: String,
}

/// One call of an async method of the saver trait, with its arguments (CONTRACT §2 and §3
/// name the methods). In JSON it is an object whose `call` names the method (snake_case)
/// and whose other keys are the arguments by name, as a trace step writes it:
///
/// ```
/// use conformance_core::{CheckpointConfig, Invocation};
/// let get = Invocation::GetTuple { config: CheckpointConfig::new("t1") };
/// let json = serde_json::to_value(&get).unwrap();
/// assert_eq!(json["call"], "get_tuple");
/// assert_eq!(json["config"]["thread_id"], "t1");
/// assert_eq!(get.call().to_string(), r#"get_tuple(thread=t1, ns="", id=none)"#);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "call", rename_all = "snake_case")]
pub enum Invocation {
    /// `put(config, checkpoint, metadata, new_versions)`.
    Put(Put),
    /// `put_writes(config, writes, task_id, task_path)`.
    PutWrites(PutWrites),
    /// `get_tuple(config)`.
    GetTuple {
        /// The config.
        config: CheckpointConfig,
    },
    /// `list(thread_id, options)`.
    List {
        /// The thread.
        thread_id: String,
        /// Namespace, id, filter, before, limit.
        options: ListOptions,
    },
    /// `delete_thread(thread_id)`.
    DeleteThread {
        /// The thread.
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
        /// The threads.
        thread_ids: Vec<String>,
        /// `keep_latest` or `delete`.
        strategy: PruneStrategy,
    },
    /// `delta_channel_history(config, channels)`.
    DeltaChannelHistory {
        /// The target's config.
        config: CheckpointConfig,
        /// The channels asked for.
        channels: Vec<String>,
    },
}

impl Invocation {
    /// The call as failure messages name it: the arguments that say which data it touched,
    /// without values or metadata.
    pub fn call(&self) -> Call {
        match self.clone() {
            Self::Put(p) => Call::Put { config: p.config, checkpoint_id: p.checkpoint.id },
            Self::PutWrites(w) => Call::PutWrites {
                config: w.config,
                channels: w.writes.into_iter().map(|(c, _)| c).collect(),
                task_id: w.task_id,
                task_path: w.task_path,
            },
            Self::GetTuple { config } => Call::GetTuple { config },
            Self::List { thread_id, options } => Call::List { thread_id, options },
            Self::DeleteThread { thread_id } => Call::DeleteThread { thread_id },
            Self::DeleteForRuns { run_ids } => Call::DeleteForRuns { run_ids },
            Self::CopyThread { source, target } => Call::CopyThread { source, target },
            Self::Prune { thread_ids, strategy } => Call::Prune { thread_ids, strategy },
            Self::DeltaChannelHistory { config, channels } => Call::DeltaChannelHistory { config, channels },
        }
    }

    /// The capability whose method this is.
    pub fn capability(&self) -> Capability {
        self.call().capability()
    }
}
