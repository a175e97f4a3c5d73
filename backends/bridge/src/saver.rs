//! [`BridgeSaver`]: a `CheckpointSaver` whose calls travel to a saver instance in the
//! child process (docs/bridge-protocol.md, "Operations" and "Errors").

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use checkpoint_contract::{
    check_thread_id, Capability, ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError,
    CheckpointMetadata, CheckpointSaver, CheckpointTuple, DeltaChannelHistory, ListOptions, PendingWrite,
    PruneStrategy, TypedValue,
};
use serde::{Deserialize, Serialize};

use crate::process::{CallError, Connection};
use crate::protocol::NoArgs;

/// How long `get_next_version`, the trait's one sync method, waits for its answer.
pub const NEXT_VERSION_TIMEOUT: Duration = Duration::from_secs(30);

/// How long dropping a reopened instance waits for the child to close it.
const CLOSE_ON_DROP_TIMEOUT: Duration = Duration::from_secs(5);

/// A saver instance in a bridge child, named by its handle.
///
/// Calls are answered by the child; many may be in flight at once. Errors come back as
/// the child's kind (`Unsupported`, `InvalidInput`, ...); a child that died or broke the
/// protocol gives `Storage` errors naming its exit status and stderr, at once.
pub struct BridgeSaver {
    conn: Arc<Connection>,
    handle: u64,
    /// Reopened instances close themselves when dropped, and the drop waits for the child
    /// to have closed them (at most [`CLOSE_ON_DROP_TIMEOUT`]), so the storage is free once
    /// the instance is gone, as with a Rust saver (the durability crash test starts a child
    /// process on the storage next); a case's own instance is closed by the fixture's
    /// cleanup (which also removes the storage), or released by its close.
    close_on_drop: bool,
}

impl BridgeSaver {
    pub(crate) fn new(conn: Arc<Connection>, handle: u64, close_on_drop: bool) -> Self {
        Self { conn, handle, close_on_drop }
    }

    /// The instance's handle in the child.
    pub fn handle(&self) -> u64 {
        self.handle
    }

    async fn call<A: Serialize, T: serde::de::DeserializeOwned + Send + 'static>(
        &self,
        op: &'static str,
        args: &A,
        config_invalid: bool,
    ) -> Result<T, CheckpointError> {
        self.conn.call(op, Some(self.handle), args).await.map_err(|e| to_error(op, e, config_invalid))
    }
}

impl Drop for BridgeSaver {
    fn drop(&mut self) {
        if self.close_on_drop {
            // An error (a dead child) or no answer in time leaves nothing more to do.
            let _ = self.conn.call_blocking::<_, serde_json::Value>(
                "close",
                Some(self.handle),
                &NoArgs {},
                CLOSE_ON_DROP_TIMEOUT,
            );
        }
    }
}

/// A call's error as the kit's error. A child's `InvalidInput` for a call whose config
/// breaks CONTRACT §1 (empty thread id, `put_writes` without checkpoint id) is
/// `InvalidConfig`: Python's ValueError/TypeError/KeyError carry no finer kind. An
/// `Unsupported` answer names the capability whose method `op` is (`op` is its upstream
/// name, `Capability::from_str`); for an operation that is no capability (`open`,
/// `reopen`, ...) it is a protocol error, a `Storage` error naming the operation.
pub(crate) fn to_error(op: &str, e: CallError, config_invalid: bool) -> CheckpointError {
    match e {
        CallError::Remote(r) => match r.kind.as_str() {
            "Unsupported" => match op.parse::<Capability>() {
                Ok(capability) => CheckpointError::Unsupported(capability),
                Err(_) => CheckpointError::storage_msg(format!(
                    "{op}: bridge protocol error (Unsupported for an operation that is no capability): {}",
                    r.message
                )),
            },
            "InvalidConfig" => CheckpointError::InvalidConfig(r.message),
            "InvalidInput" if config_invalid => CheckpointError::InvalidConfig(r.message),
            "InvalidInput" => CheckpointError::InvalidInput(r.message),
            "Storage" => CheckpointError::storage_msg(format!("{op}: {}", r.message)),
            other => CheckpointError::storage_msg(format!("{op}: bridge protocol error ({other}): {}", r.message)),
        },
        other => CheckpointError::storage_msg(format!("{op} through the bridge: {other}")),
    }
}

/// A config as the call passes it: without the fields the running case omits
/// ([`conformance_core::Omitted`]), so a child's saver gets a config without a `thread_id` or
/// a `checkpoint_ns` as LangGraph's API can hand it one; `checkpoint_id` is `null` when none.
fn wire_config<S: serde::Serializer>(config: &&CheckpointConfig, s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let omitted = conformance_core::Omitted::current();
    let mut m = s.serialize_map(None)?;
    if !omitted.thread_id {
        m.serialize_entry("thread_id", &config.thread_id)?;
    }
    if !omitted.checkpoint_ns {
        m.serialize_entry("checkpoint_ns", &config.checkpoint_ns)?;
    }
    m.serialize_entry("checkpoint_id", &config.checkpoint_id)?;
    m.end()
}

#[derive(Serialize)]
struct ConfigArgs<'a> {
    #[serde(serialize_with = "wire_config")]
    config: &'a CheckpointConfig,
}

#[derive(Serialize)]
struct PutArgs<'a> {
    #[serde(serialize_with = "wire_config")]
    config: &'a CheckpointConfig,
    checkpoint: &'a Checkpoint,
    metadata: &'a CheckpointMetadata,
    new_versions: &'a ChannelVersions,
}

#[derive(Serialize)]
struct PutWritesArgs<'a> {
    #[serde(serialize_with = "wire_config")]
    config: &'a CheckpointConfig,
    writes: &'a [(String, TypedValue)],
    task_id: &'a str,
    task_path: &'a str,
}

#[derive(Serialize)]
struct ListArgs<'a> {
    thread_id: &'a str,
    options: &'a ListOptions,
}

#[derive(Serialize)]
struct ThreadArgs<'a> {
    thread_id: &'a str,
}

#[derive(Serialize)]
struct RunsArgs<'a> {
    run_ids: &'a [String],
}

#[derive(Serialize)]
struct CopyArgs<'a> {
    source: &'a str,
    target: &'a str,
}

#[derive(Serialize)]
struct PruneArgs<'a> {
    thread_ids: &'a [String],
    strategy: PruneStrategy,
}

#[derive(Serialize)]
struct HistoryArgs<'a> {
    #[serde(serialize_with = "wire_config")]
    config: &'a CheckpointConfig,
    channels: &'a [String],
}

#[derive(Serialize)]
struct VersionArgs<'a> {
    current: Option<&'a ChannelVersion>,
}

/// One channel's delta history on the wire: `seed` absent means no seed, so a seed whose
/// value is JSON `null` survives (`Option<TypedValue>` alone would read it as no seed).
#[derive(Serialize, Deserialize)]
pub(crate) struct WireHistory {
    pub writes: Vec<PendingWrite>,
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "some_value")]
    pub seed: Option<TypedValue>,
}

fn some_value<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<TypedValue>, D::Error> {
    TypedValue::deserialize(d).map(Some)
}

impl From<DeltaChannelHistory> for WireHistory {
    fn from(h: DeltaChannelHistory) -> Self {
        Self { writes: h.writes, seed: h.seed }
    }
}

#[async_trait]
impl CheckpointSaver for BridgeSaver {
    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Result<CheckpointConfig, CheckpointError> {
        let args = PutArgs { config, checkpoint: &checkpoint, metadata: &metadata, new_versions: &new_versions };
        self.call("put", &args, config.validate().is_err()).await
    }

    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(String, TypedValue)>,
        task_id: &str,
        task_path: &str,
    ) -> Result<(), CheckpointError> {
        let args = PutWritesArgs { config, writes: &writes, task_id, task_path };
        self.call("put_writes", &args, config.write_checkpoint_id().is_err()).await
    }

    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
        self.call("get_tuple", &ConfigArgs { config }, config.validate().is_err()).await
    }

    async fn list(&self, thread_id: &str, options: &ListOptions) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        self.call("list", &ListArgs { thread_id, options }, check_thread_id(thread_id).is_err()).await
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<(), CheckpointError> {
        self.call("delete_thread", &ThreadArgs { thread_id }, check_thread_id(thread_id).is_err()).await
    }

    /// Asks the child and waits on this thread (at most [`NEXT_VERSION_TIMEOUT`]).
    ///
    /// # Panics
    /// The trait's `get_next_version` cannot return an error; when the saver raised or the
    /// child is gone this unwinds with the reason as a `String` payload, which the runner
    /// reports as the case's failure ("the saver panicked: get_next_version(...) through
    /// the bridge: ..."). It unwinds with `resume_unwind`, which skips the panic hook: the
    /// saver's error is the case's message, not a "thread panicked" line and (with
    /// `RUST_BACKTRACE=1`) a backtrace of the kit on stderr for every such error.
    fn get_next_version(&self, current: Option<&ChannelVersion>) -> ChannelVersion {
        match self.conn.call_blocking(
            "get_next_version",
            Some(self.handle),
            &VersionArgs { current },
            NEXT_VERSION_TIMEOUT,
        ) {
            Ok(v) => v,
            Err(e) => {
                std::panic::resume_unwind(Box::new(format!("get_next_version({current:?}) through the bridge: {e}")))
            }
        }
    }

    async fn delete_for_runs(&self, run_ids: &[String]) -> Result<(), CheckpointError> {
        self.call("delete_for_runs", &RunsArgs { run_ids }, false).await
    }

    async fn copy_thread(&self, source: &str, target: &str) -> Result<(), CheckpointError> {
        let invalid = check_thread_id(source).is_err() || check_thread_id(target).is_err();
        self.call("copy_thread", &CopyArgs { source, target }, invalid).await
    }

    async fn prune(&self, thread_ids: &[String], strategy: PruneStrategy) -> Result<(), CheckpointError> {
        let invalid = thread_ids.iter().any(|t| check_thread_id(t).is_err());
        self.call("prune", &PruneArgs { thread_ids, strategy }, invalid).await
    }

    async fn delta_channel_history(
        &self,
        config: &CheckpointConfig,
        channels: &[String],
    ) -> Result<BTreeMap<String, DeltaChannelHistory>, CheckpointError> {
        let wire: BTreeMap<String, WireHistory> =
            self.call("delta_channel_history", &HistoryArgs { config, channels }, config.validate().is_err()).await?;
        Ok(wire.into_iter().map(|(ch, h)| (ch, DeltaChannelHistory { writes: h.writes, seed: h.seed })).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::RemoteError;

    fn remote(kind: &str) -> CallError {
        CallError::Remote(RemoteError { kind: kind.into(), message: "ValueError: bad".into() })
    }

    #[test]
    fn errors_map_to_the_kits_kinds() {
        assert!(matches!(
            to_error("prune", remote("Unsupported"), false),
            CheckpointError::Unsupported(Capability::Prune)
        ));
        assert!(matches!(
            to_error("delta_channel_history", remote("Unsupported"), false),
            CheckpointError::Unsupported(Capability::DeltaChannelHistory)
        ));
        // Not silently `put`: an operation that is no capability cannot be unsupported.
        let e = to_error("open", remote("Unsupported"), false);
        assert_eq!(e.kind(), "Storage", "{e}");
        assert!(
            e.to_string().contains("open: bridge protocol error (Unsupported for an operation that is no capability)"),
            "{e}"
        );
        assert!(matches!(to_error("put", remote("InvalidInput"), false), CheckpointError::InvalidInput(_)));
        assert!(matches!(to_error("put", remote("InvalidInput"), true), CheckpointError::InvalidConfig(_)));
        let e = to_error("list", remote("Protocol"), false);
        assert!(e.to_string().contains("bridge protocol error (Protocol)"), "{e}");
        let e = to_error("get_tuple", CallError::Dead("the bridge child x exited".into()), false);
        assert_eq!(e.kind(), "Storage");
        assert!(e.to_string().contains("exited"), "{e}");
    }

    /// A saver error in `get_next_version` is the case's message, not a panic report: the
    /// panic hook (which prints "thread panicked" and, with RUST_BACKTRACE=1, a backtrace)
    /// is not called, and the payload carries the saver's error.
    #[test]
    fn a_failed_get_next_version_unwinds_without_the_panic_hook() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let answer = r#"{"id":0,"error":{"kind":"Unsupported","message":"NotImplementedError: integers only"}}"#;
        let command = crate::ChildCommand {
            program: "sh".into(),
            args: vec!["-c".into(), format!("read l; echo '{answer}'; cat >/dev/null").into()],
            env: vec![],
            label: "sh".into(),
        };
        let saver = BridgeSaver::new(Connection::spawn(&command, None).expect("sh"), 1, false);
        let me = std::thread::current().id();
        let hooked = Arc::new(AtomicUsize::new(0));
        let previous = Arc::new(std::panic::take_hook());
        let (count, others) = (hooked.clone(), previous.clone());
        std::panic::set_hook(Box::new(move |info| {
            if std::thread::current().id() == me {
                count.fetch_add(1, Ordering::SeqCst);
            } else {
                others(info);
            }
        }));
        let padded = ChannelVersion::Str("00000000000000000000000000000002.0.5".into());
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| saver.get_next_version(Some(&padded))));
        std::panic::set_hook(Box::new(move |info| previous(info)));
        let payload = unwound.expect_err("an error cannot be a version");
        assert_eq!(hooked.load(Ordering::SeqCst), 0, "the panic hook ran");
        let message = conformance_core::panic_message(&*payload);
        assert!(
            message.contains("get_next_version(Some(Str(") && message.contains("NotImplementedError: integers only")
        );
    }

    #[test]
    fn a_null_seed_is_not_lost() {
        let h: WireHistory = serde_json::from_str(r#"{"writes":[],"seed":null}"#).unwrap();
        assert_eq!(h.seed, Some(TypedValue::json(&serde_json::Value::Null)));
        let h: WireHistory = serde_json::from_str(r#"{"writes":[]}"#).unwrap();
        assert_eq!(h.seed, None);
        let text = serde_json::to_string(&WireHistory {
            writes: vec![],
            seed: Some(TypedValue::json(&serde_json::Value::Null)),
        })
        .unwrap();
        // Written as a json envelope (docs/bridge-protocol.md "Values"), so no reader can
        // take it for "no seed".
        assert_eq!(text, r#"{"writes":[],"seed":{"$base64":"bnVsbA==","$type":"json"}}"#);
    }
}
