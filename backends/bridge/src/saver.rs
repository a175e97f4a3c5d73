//! [`BridgeSaver`]: a `CheckpointSaver` whose calls travel to a saver instance in the
//! child process (docs/bridge-protocol.md, "Operations" and "Errors").

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use checkpoint_contract::{Capability, ChannelVersion, CheckpointError};
use conformance_core::{Forward, Invocation, Reply, WireArgs};

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

/// Every call as a request of its method ([`conformance_core::SaverCall::method`]) with
/// the call's arguments ([`WireArgs`]), its answer read as the method's return value.
#[async_trait]
impl Forward for BridgeSaver {
    async fn send(&self, call: Invocation) -> Result<Reply, CheckpointError> {
        let (op, read) = (call.method(), call.reply_reader());
        let answer = self.conn.call_read(op, Some(self.handle), &WireArgs(&call), read).await;
        answer.map_err(|e| to_error(op, e, call.breaks_config()))
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
    fn next_version(&self, current: Option<&ChannelVersion>) -> ChannelVersion {
        let call = Invocation::GetNextVersion { current: current.cloned() };
        match self.conn.call_blocking("get_next_version", Some(self.handle), &WireArgs(&call), NEXT_VERSION_TIMEOUT) {
            Ok(v) => v,
            Err(e) => {
                std::panic::resume_unwind(Box::new(format!("get_next_version({current:?}) through the bridge: {e}")))
            }
        }
    }
}

conformance_core::forward_saver!(BridgeSaver);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::RemoteError;
    use conformance_core::CheckpointSaver;

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
}
