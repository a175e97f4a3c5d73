//! `forward_saver!` as a user crate calls it: the saver it writes passes every async call
//! to `Forward::send` as its `Invocation`, and its paths hold where the crate has its own
//! `Result`, `Option`, `Vec` and `String` in scope (the macro names std's in full).

use std::sync::Mutex;

use conformance_core::{async_trait, ChannelVersion, CheckpointConfig, CheckpointSaver, Forward, Invocation, Reply};

#[allow(dead_code)]
type Result<T> = std::result::Result<T, ()>;
#[allow(dead_code)]
type Option = ();
#[allow(dead_code)]
struct Vec;
#[allow(dead_code)]
struct String;

/// Records every call's method and answers it with nothing (or no tuple).
#[derive(Default)]
struct Recording(Mutex<std::vec::Vec<&'static str>>);

#[async_trait]
impl Forward for Recording {
    async fn send(&self, call: Invocation) -> std::result::Result<Reply, conformance_core::CheckpointError> {
        self.0.lock().unwrap().push(call.method());
        Ok(match call {
            Invocation::GetTuple { .. } => Reply::Tuple(None),
            _ => Reply::Done,
        })
    }

    fn next_version(&self, _: std::option::Option<&ChannelVersion>) -> ChannelVersion {
        ChannelVersion::Int(7)
    }
}

conformance_core::forward_saver!(Recording);

#[tokio::test]
async fn every_call_goes_through_send_as_its_invocation() {
    let saver = Recording::default();
    assert!(saver.get_tuple(&CheckpointConfig::new("t")).await.unwrap().is_none());
    saver.delete_thread("t").await.unwrap();
    saver.copy_thread("a", "b").await.unwrap();
    assert_eq!(saver.get_next_version(None), ChannelVersion::Int(7));
    // A reply of another kind than the method's is an error, not a wrong value.
    let wrong = saver.list("t", &Default::default()).await.unwrap_err();
    assert_eq!(wrong.kind(), "Storage", "{wrong}");
    assert!(wrong.to_string().contains("a call returning a list of tuples was answered with no value"), "{wrong}");
    assert_eq!(*saver.0.lock().unwrap(), ["get_tuple", "delete_thread", "copy_thread", "list"]);
}
