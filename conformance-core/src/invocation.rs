//! [`Invocation`]: one call of a [`crate::CheckpointSaver`] method with all its arguments,
//! declared once for every part that holds calls as data: the trace format (its steps that
//! are saver calls, docs/trace-format.md), the fuzzer that generates and shrinks them, and
//! the self-test's mutants, whose bugs see and replace calls. [`Invocation::call`] gives
//! the short [`Call`] that failure messages print.

use serde::{Deserialize, Serialize};

use crate::call::{PutHead, WritesHead};
use crate::saver_call::SaverCall;
use crate::types::{ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata, TypedValue};
use crate::Call;

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

/// One call of a saver method with all its arguments (CONTRACT §2 and §3 name the
/// methods): a [`SaverCall`] whose `put` and `put_writes` carry [`Put`] and [`PutWrites`].
/// In JSON it is an object whose `call` names the method (snake_case) and whose other keys
/// are the arguments by name, as a trace step writes it:
///
/// ```
/// use conformance_core::{CheckpointConfig, Invocation};
/// let get = Invocation::GetTuple { config: CheckpointConfig::new("t1") };
/// let json = serde_json::to_value(&get).unwrap();
/// assert_eq!(json["call"], "get_tuple");
/// assert_eq!(json["config"]["thread_id"], "t1");
/// assert_eq!(get.call().to_string(), r#"get_tuple(thread=t1, ns="", id=none)"#);
/// ```
pub type Invocation = SaverCall<Put, PutWrites>;

impl Invocation {
    /// The call as failure messages name it: the arguments that say which data it touched,
    /// without values or metadata.
    pub fn call(&self) -> Call {
        self.view(
            |p| PutHead { config: p.config.clone(), checkpoint_id: p.checkpoint.id.clone() },
            |w| WritesHead {
                config: w.config.clone(),
                channels: w.writes.iter().map(|(c, _)| c.clone()).collect(),
                task_id: w.task_id.clone(),
                task_path: w.task_path.clone(),
            },
        )
    }
}
