//! [`Call`]: one call of a [`crate::CheckpointSaver`] method with the arguments that say
//! which data it touched, written the way failure messages name it. The runner's traced
//! saver logs the calls in flight as `Call`s (a timeout names the call it was stuck in),
//! and the spec's case context describes every call it makes with one.

use std::fmt;

use crate::saver_call::{Invocation, SaverCall};
use crate::types::{shown_id, CheckpointConfig};

/// One saver call as failure messages name it: a [`SaverCall`] whose `put` and
/// `put_writes` carry only what identifies the data ([`PutHead`], [`WritesHead`]); values
/// and metadata are left out, so a description stays one short line.
/// [`crate::Invocation::call`] gives it for a call held with all its arguments.
///
/// Its [`Display`](fmt::Display) is the form failure messages use:
///
/// ```
/// use conformance_core::{Call, CheckpointConfig, ListOptions, PutHead};
/// let config = CheckpointConfig::new("t1").with_id("c1");
/// assert_eq!(Call::GetTuple { config: config.clone() }.to_string(), r#"get_tuple(thread=t1, ns="", id=c1)"#);
/// let put = Call::Put(PutHead { config: CheckpointConfig::new("t1"), checkpoint_id: "c2".into() });
/// assert_eq!(put.to_string(), r#"put(thread=t1, ns="", id=none) of checkpoint c2"#);
/// let list = Call::List { thread_id: "t1".into(), options: ListOptions::all().limit(2) };
/// assert_eq!(list.to_string(), "list(thread=t1, ns=<all>, limit=2)");
/// ```
pub type Call = SaverCall<PutHead, WritesHead>;

/// What names a `put` in a [`Call`]: `put(config) of checkpoint {checkpoint_id}`.
#[derive(Clone, Debug, PartialEq)]
pub struct PutHead {
    /// The config passed (thread, namespace, parent id).
    pub config: CheckpointConfig,
    /// The id of the checkpoint put.
    pub checkpoint_id: String,
}

/// What names a `put_writes` in a [`Call`]: `put_writes(config, channels=[..],
/// task_id="..", task_path="..")`.
#[derive(Clone, Debug, PartialEq)]
pub struct WritesHead {
    /// The config passed (thread, namespace, checkpoint id).
    pub config: CheckpointConfig,
    /// The channel of each write, in call order.
    pub channels: Vec<String>,
    /// The task id.
    pub task_id: String,
    /// The task path.
    pub task_path: String,
}

impl fmt::Display for PutHead {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "put({}) of checkpoint {}", self.config, shown_id(&self.checkpoint_id))
    }
}

impl fmt::Display for WritesHead {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Self { config, channels, task_id, task_path } = self;
        write!(f, "put_writes({config}, channels={channels:?}, task_id={task_id:?}, task_path={task_path:?})")
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{ChannelVersion, ListOptions, PruneStrategy};
    use serde_json::json;

    #[test]
    fn every_call_names_its_method_and_arguments() {
        let cfg = CheckpointConfig::new("t").with_ns("child:1").with_id("c1");
        let filter = match json!({"source": "loop"}) {
            serde_json::Value::Object(m) => m,
            _ => unreachable!(),
        };
        let cases = [
            (
                Call::PutWrites(WritesHead {
                    config: cfg.clone(),
                    channels: vec!["a".into(), "__error__".into()],
                    task_id: "task-1".into(),
                    task_path: "~0".into(),
                }),
                r#"put_writes(thread=t, ns="child:1", id=c1, channels=["a", "__error__"], task_id="task-1", task_path="~0")"#,
            ),
            (
                Call::List {
                    thread_id: "t".into(),
                    options: ListOptions { filter, ..ListOptions::all().ns("").id("c1").before("c9").limit(0) },
                },
                r#"list(thread=t, ns="", id=c1, filter={"source":"loop"}, before=c9, limit=0)"#,
            ),
            (Call::DeleteThread { thread_id: "t".into() }, "delete_thread(t)"),
            (Call::DeleteForRuns { run_ids: vec!["r1".into(), "r2".into()] }, r#"delete_for_runs(["r1", "r2"])"#),
            (Call::CopyThread { source: "s".into(), target: "d".into() }, "copy_thread(source=s, target=d)"),
            (
                Call::Prune { thread_ids: vec!["t".into()], strategy: PruneStrategy::KeepLatest },
                r#"prune(["t"], keep_latest)"#,
            ),
            (
                Call::DeltaChannelHistory { config: cfg, channels: vec!["ch".into()] },
                r#"delta_channel_history(thread=t, ns="child:1", id=c1, channels=["ch"])"#,
            ),
            (Call::GetNextVersion { current: Some(ChannelVersion::Int(1)) }, "get_next_version(Some(Int(1)))"),
            (Call::GetNextVersion { current: None }, "get_next_version(None)"),
        ];
        for (call, want) in cases {
            assert_eq!(call.to_string(), want);
        }
    }
}
