//! `langgraph-rs-memory`: `langgraph_checkpoint_rs::checkpoint::memory::InMemorySaver`.

use std::collections::HashMap;

use async_trait::async_trait;
use conformance_core::Registration;
use langgraph_checkpoint_rs::checkpoint::base::BaseCheckpointSaver;
use langgraph_checkpoint_rs::checkpoint::memory::InMemorySaver;
use langgraph_checkpoint_rs::checkpoint::types as lg;
use langgraph_checkpoint_rs::config::RunnableConfig;
use langgraph_checkpoint_rs::error::CheckpointError as LgError;
use serde_json::Value;

use crate::{Calls, LgAdapter, ListApi};

#[async_trait]
impl ListApi for InMemorySaver {
    /// The trait's sync `list` (the saver has no async one).
    async fn list_tuples(
        &self,
        config: Option<&RunnableConfig>,
        filter: Option<&HashMap<String, Value>>,
        before: Option<&RunnableConfig>,
        limit: Option<usize>,
    ) -> Result<Vec<lg::CheckpointTuple>, LgError> {
        BaseCheckpointSaver::list(self, config, filter, before, limit)
    }
}

/// The registration: a fresh `InMemorySaver` per case (no reopen: it keeps nothing). The
/// trait's default async mirrors run the sync methods in `tokio::task::block_in_place`, which
/// panics on a current-thread runtime, so every case runs on a multi-thread one.
pub fn registration() -> Registration {
    Registration::new("langgraph-rs-memory", || async { Ok(crate::fixture(LgAdapter::new(InMemorySaver::new()))) })
        .multi_thread()
}

/// The same saver through its sync methods (`put`, `get_tuple`, ...), the ones the family's
/// graph runner calls; they need no multi-thread runtime.
pub fn registration_sync() -> Registration {
    Registration::new("langgraph-rs-memory-sync", || async {
        Ok(crate::fixture(LgAdapter::with_calls(InMemorySaver::new(), Calls::Sync)))
    })
}
