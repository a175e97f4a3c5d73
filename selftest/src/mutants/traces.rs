//! Mutants the recorded LangGraph traffic (the `traces` capability) is there to catch:
//! bugs in what real graphs store that hand-written cases, which pick their own metadata
//! and channels, need not touch.

use super::prelude::*;

/// Metadata entries whose value is an empty object are dropped (a store that leaves out
/// empty maps): LangGraph's root checkpoints carry `"parents": {}`.
#[derive(Default)]
pub struct EmptyMetadataObjectDropped;

impl Bug for EmptyMetadataObjectDropped {
    fn put_input(&self, put: &mut Put) {
        put.metadata.retain(|_, v| !matches!(v, Value::Object(o) if o.is_empty()));
    }
}

/// Writes to LangGraph's routing channels (`branch:to:NODE`) are not stored (a saver
/// that takes them for transient).
#[derive(Default)]
pub struct BranchWritesDropped;

impl Bug for BranchWritesDropped {
    fn put_writes_input(&self, call: &mut PutWrites) {
        call.writes.retain(|(channel, _)| !channel.starts_with("branch:"));
    }
}

/// The traces' mutants.
pub const MUTANTS: &[Mutant] = &[
    mutant!(
        EmptyMetadataObjectDropped,
        &[TR],
        [R("metadata.json")],
        "metadata entries whose value is an empty object ({}) are dropped on put"
    ),
    mutant!(
        BranchWritesDropped,
        &[TR],
        [R("put_writes.key")],
        "writes to routing channels (branch:to:NODE) are not stored"
    ),
];
