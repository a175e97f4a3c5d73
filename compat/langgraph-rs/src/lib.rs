//! Conformance adapters for the `langgraph-checkpoint-rs` family 0.2.5 (crates.io), one
//! per published saver:
//!
//! | registration | saver |
//! |---|---|
//! | `langgraph-rs-memory` | `langgraph_checkpoint_rs::checkpoint::memory::InMemorySaver` |
//! | `langgraph-rs-sqlite` | `langgraph_checkpoint_sqlite_rs::SqliteSaver` (sqlx, a file per case) |
//! | `langgraph-rs-postgres` | `langgraph_checkpoint_postgres_rs::PostgresSaver` (sqlx, a schema per case) |
//!
//! | `langgraph-rs-memory-sync` | the same `InMemorySaver` through its sync methods |
//!
//! [`LgAdapter`] implements the kit's `CheckpointSaver` over the saver's own trait,
//! `BaseCheckpointSaver`, and nothing else: `put` is `aput` (or `put`, see [`Calls`]),
//! `put_writes` is `aput_writes`, `get_tuple` is `aget_tuple`, `delete_thread` is
//! `adelete_thread`, `get_next_version` is `get_next_version`, and `list` is the saver's
//! list (the trait has no async `list`: the in-memory saver's sync `list`, the SQL savers'
//! inherent `alist`). The adapter fixes
//! nothing: it validates no thread id, orders no writes, filters nothing. The extended
//! capabilities have no counterpart in the saver's API and answer `Unsupported`.
//!
//! The saver's async methods that the in-memory saver does not override call
//! `tokio::task::block_in_place`, which panics on a current-thread runtime.

pub mod convert;
pub mod memory;
pub mod postgres;
pub mod sqlite;

use std::collections::HashMap;

use async_trait::async_trait;
use conformance_core::{
    ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata,
    CheckpointSaver, CheckpointTuple, Feature, Fixture, ListOptions, TypedValue,
};
use langgraph_checkpoint_rs::checkpoint::base::BaseCheckpointSaver;
use langgraph_checkpoint_rs::checkpoint::types as lg;
use langgraph_checkpoint_rs::config::RunnableConfig;
use langgraph_checkpoint_rs::error::CheckpointError as LgError;
use serde_json::Value;

use crate::convert::{
    from_lg_tuple, from_runnable, lg_error, runnable, to_lg_checkpoint, to_lg_metadata, to_lg_writes, ListArgs,
};

/// The `list` of a saver of the family: `BaseCheckpointSaver::list` is sync and the SQL
/// savers add an inherent async `alist` with the same arguments.
#[async_trait]
pub trait ListApi: BaseCheckpointSaver {
    /// The saver's own list: `list(config, filter, before, limit)`.
    async fn list_tuples(
        &self,
        config: Option<&RunnableConfig>,
        filter: Option<&HashMap<String, Value>>,
        before: Option<&RunnableConfig>,
        limit: Option<usize>,
    ) -> Result<Vec<lg::CheckpointTuple>, LgError>;
}

/// Implements [`ListApi`] for SQL savers of the family through their inherent async
/// `alist(config, filter, before, limit)`.
#[macro_export]
#[doc(hidden)]
macro_rules! list_via_alist {
    ($saver:ty) => {
        #[async_trait::async_trait]
        impl $crate::ListApi for $saver {
            async fn list_tuples(
                &self,
                config: Option<&langgraph_checkpoint_rs::config::RunnableConfig>,
                filter: Option<&std::collections::HashMap<String, serde_json::Value>>,
                before: Option<&langgraph_checkpoint_rs::config::RunnableConfig>,
                limit: Option<usize>,
            ) -> Result<
                Vec<langgraph_checkpoint_rs::checkpoint::types::CheckpointTuple>,
                langgraph_checkpoint_rs::error::CheckpointError,
            > {
                self.alist(config, filter, before, limit).await
            }
        }
    };
}

/// Which of the saver's two method sets the adapter calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Calls {
    /// The async mirrors `aput`, `aput_writes`, `aget_tuple`, `adelete_thread` (what an
    /// async caller uses; the trait's defaults run the sync method in `block_in_place`).
    Async,
    /// The sync methods `put`, `put_writes`, `get_tuple`, `delete_thread`: what the
    /// family's own graph runner (`langgraph-core-rs` 0.2.5) calls. Only the in-memory
    /// saver can take them inside a runtime (the SQL savers' sync methods block on the
    /// runtime and panic there).
    Sync,
}

/// The kit fixture of an adapter, with the limit the family's API declares (CONTRACT §5
/// "Declared limits"): its pending write is `(task_id, channel, value)`, so reads carry no
/// `task_path` (`put_writes` takes one, and the SQL savers order writes by it).
pub fn fixture<S: ListApi + 'static>(adapter: LgAdapter<S>) -> Fixture {
    Fixture::new(adapter).without_task_path_on_reads()
}

/// The same limit as [`fixture`]'s, for a `Storage`'s `lacks` (the SQL savers' storages).
pub fn lacks() -> std::collections::BTreeSet<Feature> {
    [Feature::TaskPathOnReads].into()
}

/// The kit's `CheckpointSaver` over a saver of the family (see the crate docs).
pub struct LgAdapter<S> {
    saver: S,
    calls: Calls,
}

impl<S> LgAdapter<S> {
    /// An adapter around `saver` calling its async methods.
    pub fn new(saver: S) -> Self {
        Self { saver, calls: Calls::Async }
    }

    /// An adapter around `saver` calling the given method set.
    pub fn with_calls(saver: S, calls: Calls) -> Self {
        Self { saver, calls }
    }

    /// The saver.
    pub fn saver(&self) -> &S {
        &self.saver
    }
}

#[async_trait]
impl<S: ListApi + 'static> CheckpointSaver for LgAdapter<S> {
    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Result<CheckpointConfig, CheckpointError> {
        let checkpoint = to_lg_checkpoint(&checkpoint)?;
        let metadata = to_lg_metadata(&metadata)?;
        let new_versions: lg::ChannelVersions =
            new_versions.iter().map(|(k, v)| (k.clone(), v.to_json_value())).collect();
        let config = runnable(config);
        let returned = match self.calls {
            Calls::Async => self.saver.aput(&config, &checkpoint, &metadata, &new_versions).await,
            Calls::Sync => self.saver.put(&config, &checkpoint, &metadata, &new_versions),
        }
        .map_err(|e| lg_error("put", e))?;
        from_runnable(&returned, "the config of put")
    }

    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(String, TypedValue)>,
        task_id: &str,
        task_path: &str,
    ) -> Result<(), CheckpointError> {
        let config = runnable(config);
        let writes = to_lg_writes(&writes, task_id);
        match self.calls {
            Calls::Async => self.saver.aput_writes(&config, writes, task_id.to_owned(), task_path.to_owned()).await,
            Calls::Sync => self.saver.put_writes(&config, &writes, task_id, task_path),
        }
        .map_err(|e| lg_error("put_writes", e))
    }

    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
        let config = runnable(config);
        let tuple = match self.calls {
            Calls::Async => self.saver.aget_tuple(&config).await,
            Calls::Sync => self.saver.get_tuple(&config),
        }
        .map_err(|e| lg_error("get_tuple", e))?;
        tuple.map(from_lg_tuple).transpose()
    }

    async fn list(&self, thread_id: &str, options: &ListOptions) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        let args = ListArgs::new(thread_id, options);
        let tuples = self
            .saver
            .list_tuples(Some(&args.config), args.filter.as_ref(), args.before.as_ref(), args.limit)
            .await
            .map_err(|e| lg_error("list", e))?;
        tuples.into_iter().map(from_lg_tuple).collect()
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<(), CheckpointError> {
        match self.calls {
            Calls::Async => self.saver.adelete_thread(thread_id.to_owned()).await,
            Calls::Sync => self.saver.delete_thread(thread_id),
        }
        .map_err(|e| lg_error("delete_thread", e))
    }

    /// The saver's `get_next_version` through the JSON form of versions. The saver returns
    /// a JSON number or string; anything else (never seen) is passed on as its JSON text.
    fn get_next_version(&self, current: Option<&ChannelVersion>) -> ChannelVersion {
        let current = current.map(ChannelVersion::to_json_value);
        let next = self.saver.get_next_version(current.as_ref());
        ChannelVersion::from_json_value(next.clone()).unwrap_or_else(|_| ChannelVersion::Str(next.to_string()))
    }
}
