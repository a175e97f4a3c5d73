//! The value index (crate docs): built only when a put needs it, and "newest" is the
//! holder put last, also once a deletion made the index be built again.

use std::future::Future;
use std::task::{Context, Poll, Waker};

use super::*;

/// The saver's futures never wait: one poll finishes them.
fn now<F: Future>(f: F) -> F::Output {
    match std::pin::pin!(f).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(out) => out,
        Poll::Pending => panic!("a memory saver call waited"),
    }
}

/// Puts checkpoint `id` (parent `parent`, run `run`) with channel `a` at version 1, carrying
/// `value` as new when given, else carrying nothing for it.
fn put(saver: &MemorySaver, id: &str, parent: Option<&str>, run: &str, value: Option<&str>) {
    let version = [("a".to_owned(), ChannelVersion::Int(1))].into_iter().collect::<ChannelVersions>();
    let checkpoint = Checkpoint {
        v: 1,
        id: id.to_owned(),
        channel_values: value.map(|v| ("a".to_owned(), TypedValue::json(&v.into()))).into_iter().collect(),
        channel_versions: version.clone(),
        ..Checkpoint::default()
    };
    let config = CheckpointConfig { checkpoint_id: parent.map(str::to_owned), ..CheckpointConfig::new("t") };
    let metadata = [("run_id".to_owned(), run.into())].into_iter().collect();
    let new_versions = if value.is_some() { version } else { ChannelVersions::new() };
    now(saver.put(&config, checkpoint, metadata, new_versions)).expect("put");
}

fn read(saver: &MemorySaver, id: &str) -> Option<TypedValue> {
    let config = CheckpointConfig { checkpoint_id: Some(id.to_owned()), ..CheckpointConfig::new("t") };
    now(saver.get_tuple(&config)).expect("get_tuple").expect("stored").checkpoint.channel_values.get("a").cloned()
}

fn indexed(saver: &MemorySaver) -> bool {
    saver.read()["t"][""].blobs.is_some()
}

#[test]
fn the_index_is_built_on_the_first_miss_and_names_the_holder_put_last() {
    let saver = MemorySaver::new();
    let value = |v: &str| Some(TypedValue::json(&v.into()));
    put(&saver, "c5", None, "r1", Some("first"));
    put(&saver, "c6", Some("c5"), "r1", None);
    assert_eq!(read(&saver, "c6"), value("first"));
    assert!(!indexed(&saver), "a put that found its value in its parent built the index");
    // Two more holders of (a, 1); the one put last has the smallest id.
    put(&saver, "c7", None, "r1", Some("second"));
    put(&saver, "c1", None, "r2", Some("third"));
    // No parent: looked up in the index, built now.
    put(&saver, "c8", None, "r1", None);
    assert!(indexed(&saver));
    assert_eq!(read(&saver, "c8"), value("third"), "the holder put last, not the newest id");
    // Kept up to date by later puts.
    put(&saver, "c0", None, "r1", Some("fourth"));
    put(&saver, "c2", None, "r2", Some("fifth"));
    // A deletion leaves an entry naming a deleted holder; read, it is repaired to the holder
    // put last of those left.
    now(saver.delete_for_runs(&["r2".to_owned()])).expect("delete_for_runs");
    put(&saver, "c9", None, "r1", None);
    assert_eq!(read(&saver, "c9"), value("fourth"), "c0 was put last of the holders left");
    let repaired = saver.read()["t"][""].blobs.as_ref().map(|b| b["a"][&ChannelVersion::Int(1)].to_string());
    assert_eq!(repaired.as_deref(), Some("c9"), "the entry names c9, put since and holding the value");
}

/// CONTRACT §2 put.emptied: a channel the parent reads absent at a version stays absent in a
/// child that keeps that version, even where a sibling stored a value at it; and no scan of
/// the namespace is needed to say so.
#[test]
fn a_kept_channel_emptied_in_the_parent_stays_empty() {
    let saver = MemorySaver::new();
    put(&saver, "c1", None, "r", Some("base"));
    let version = |v: i64| [("a".to_owned(), ChannelVersion::Int(v))].into_iter().collect::<ChannelVersions>();
    let c2 = |id: &str, parent: &str, value: Option<&str>, new: bool| {
        let checkpoint = Checkpoint {
            v: 1,
            id: id.to_owned(),
            channel_values: value.map(|v| ("a".to_owned(), TypedValue::json(&v.into()))).into_iter().collect(),
            channel_versions: version(2),
            ..Checkpoint::default()
        };
        let config = CheckpointConfig { checkpoint_id: Some(parent.to_owned()), ..CheckpointConfig::new("t") };
        let new_versions = if new { version(2) } else { ChannelVersions::new() };
        now(saver.put(&config, checkpoint, CheckpointMetadata::new(), new_versions)).expect("put");
    };
    c2("c2", "c1", None, true);
    c2("c3", "c1", Some("sibling"), true);
    c2("c4", "c2", None, false);
    assert_eq!(read(&saver, "c2"), None);
    assert_eq!(read(&saver, "c4"), None, "c4 keeps c2's emptied version");
    assert!(!indexed(&saver), "the parent answered; nothing was looked up");
}

/// After `prune(keep_latest)`, a value the kept checkpoint holds is still found for a put
/// that keeps its version without a parent, even when the index named another holder.
#[test]
fn a_value_the_pruned_thread_kept_is_still_found() {
    let saver = MemorySaver::new();
    put(&saver, "c9", None, "r", Some("v"));
    // No parent: looked up, and then the index names c2, put last, as the holder.
    put(&saver, "c2", None, "r", None);
    assert!(indexed(&saver));
    // Keeps c9, the greatest id, which holds the value too.
    now(saver.prune(&["t".to_owned()], PruneStrategy::KeepLatest)).expect("prune");
    put(&saver, "c4", None, "r", None);
    assert_eq!(read(&saver, "c4"), Some(TypedValue::json(&"v".into())), "c9, kept, holds it");
}
