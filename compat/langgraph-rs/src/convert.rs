//! Conversions between the kit's contract types and the types of `langgraph-checkpoint-rs`
//! 0.2.5, which keeps configs as `HashMap<String, Value>` (`{"configurable": {...}}`),
//! checkpoints, values and versions as `serde_json::Value` and metadata in a struct.
//!
//! Every value goes through the kit's lossless JSON forms (`conformance_core::json`):
//! `Checkpoint::to_json_value` has exactly the field names of the saver's `Checkpoint`, a
//! `TypedValue` becomes its JSON (or a `$type`/`$base64` envelope) and a `ChannelVersion`
//! keeps its int/string kind. What the saver's types cannot carry is documented where it is
//! dropped (docs/compat.md, "API limits").

use std::collections::HashMap;
use std::sync::Arc;

use conformance_core::{
    Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata, CheckpointTuple, ListOptions, PendingWrite,
    TypedValue,
};
use langgraph_checkpoint_rs::checkpoint::types as lg;
use langgraph_checkpoint_rs::config::RunnableConfig;
use langgraph_checkpoint_rs::error::CheckpointError as LgError;
use serde_json::{json, Map, Value};

/// The saver's config for a kit config: `{"configurable": {thread_id, checkpoint_ns,
/// checkpoint_id?}}`, the shape LangGraph passes.
pub fn runnable(config: &CheckpointConfig) -> RunnableConfig {
    let mut configurable = Map::new();
    configurable.insert("thread_id".into(), Value::String(config.thread_id.clone()));
    configurable.insert("checkpoint_ns".into(), Value::String(config.checkpoint_ns.clone()));
    if let Some(id) = &config.checkpoint_id {
        configurable.insert("checkpoint_id".into(), Value::String(id.clone()));
    }
    RunnableConfig::from([("configurable".to_owned(), Value::Object(configurable))])
}

/// The kit config of a config the saver returned; `what` names it in the error.
///
/// # Errors
/// `Storage` when the saver's config has no string `thread_id`.
pub fn from_runnable(config: &RunnableConfig, what: &str) -> Result<CheckpointConfig, CheckpointError> {
    let configurable = config.get("configurable");
    let field = |key: &str| configurable.and_then(|c| c.get(key)).and_then(Value::as_str).map(str::to_owned);
    let thread_id = field("thread_id").ok_or_else(|| {
        CheckpointError::storage_msg(format!("the saver returned {what} without a string thread_id: {config:?}"))
    })?;
    Ok(CheckpointConfig {
        thread_id,
        checkpoint_ns: field("checkpoint_ns").unwrap_or_default(),
        checkpoint_id: field("checkpoint_id"),
    })
}

/// The saver's checkpoint for a kit checkpoint, through `Checkpoint::to_json_value`.
///
/// # Errors
/// `InvalidInput` when the JSON form does not fit the saver's struct.
pub fn to_lg_checkpoint(checkpoint: &Checkpoint) -> Result<lg::Checkpoint, CheckpointError> {
    serde_json::from_value(checkpoint.to_json_value())
        .map_err(|e| CheckpointError::InvalidInput(format!("the saver's Checkpoint cannot hold this checkpoint: {e}")))
}

/// The kit checkpoint of a checkpoint the saver returned.
///
/// # Errors
/// `Storage` when the saver returned something that is not the JSON form of a checkpoint
/// (a value or version of another shape).
pub fn from_lg_checkpoint(checkpoint: &lg::Checkpoint) -> Result<Checkpoint, CheckpointError> {
    let value = serde_json::to_value(checkpoint).map_err(|e| CheckpointError::storage("encoding the checkpoint", e))?;
    Checkpoint::from_json_value(value)
        .map_err(|e| CheckpointError::storage(format!("the saver returned checkpoint {}", checkpoint.id), e))
}

/// The saver's typed metadata for kit metadata.
///
/// The saver's `CheckpointMetadata` has the fields `source` (`input|loop|update|fork`),
/// `step`, `parents` and `run_id` and ignores every other key: those keys are dropped
/// here, by the saver's own deserializer (an API limit, docs/compat.md).
///
/// # Errors
/// `InvalidInput` when a well-known key has a value the struct cannot hold (e.g. `source:
/// "other"`, `step: 1.5`): the saver cannot store it as given.
pub fn to_lg_metadata(metadata: &CheckpointMetadata) -> Result<lg::CheckpointMetadata, CheckpointError> {
    serde_json::from_value(Value::Object(metadata.clone())).map_err(|e| {
        CheckpointError::InvalidInput(format!("the saver's typed CheckpointMetadata cannot hold this metadata: {e}"))
    })
}

/// The kit metadata of the saver's typed metadata (absent fields are absent keys).
pub fn from_lg_metadata(metadata: &lg::CheckpointMetadata) -> CheckpointMetadata {
    match serde_json::to_value(metadata) {
        Ok(Value::Object(m)) => m,
        _ => CheckpointMetadata::new(),
    }
}

/// The kit tuple of a tuple the saver returned.
///
/// The saver's pending write is `(task_id, channel, value)`: it has no `task_path`, so every
/// write reads back with `task_path: ""` (an API limit). `pending_writes: None` is an empty
/// list.
///
/// # Errors
/// `Storage` when a config, the checkpoint or a value is not of the expected shape.
pub fn from_lg_tuple(tuple: lg::CheckpointTuple) -> Result<CheckpointTuple, CheckpointError> {
    let config = from_runnable(&tuple.config, "a tuple config")?;
    let parent_config = tuple.parent_config.as_ref().map(|p| from_runnable(p, "a parent_config")).transpose()?;
    let checkpoint = from_lg_checkpoint(&tuple.checkpoint)?;
    let pending_writes = tuple
        .pending_writes
        .unwrap_or_default()
        .into_iter()
        .map(|(task_id, channel, value)| {
            let value = TypedValue::from_json_value(value)
                .map_err(|e| CheckpointError::storage(format!("the saver returned a write of {channel}"), e))?;
            Ok(PendingWrite { task_id, task_path: String::new(), channel, value })
        })
        .collect::<Result<Vec<_>, CheckpointError>>()?;
    Ok(CheckpointTuple {
        config,
        checkpoint: Arc::new(checkpoint),
        metadata: from_lg_metadata(&tuple.metadata),
        parent_config,
        pending_writes,
    })
}

/// The saver's `put_writes` list for the kit's: `(task_id, channel, value)` triples, the
/// order the saver's own graph runner (`langgraph-core-rs` 0.2.5) passes them in.
pub fn to_lg_writes(writes: &[(String, TypedValue)], task_id: &str) -> Vec<(String, String, Value)> {
    writes.iter().map(|(channel, value)| (task_id.to_owned(), channel.clone(), value.to_json_value())).collect()
}

/// The arguments of the saver's `list(config, filter, before, limit)` for a kit `list`.
///
/// `config` names the thread, the namespace only when `options.checkpoint_ns` is set (as
/// LangGraph does: no `checkpoint_ns` key means every namespace) and the id when set;
/// `before` is a config naming the id.
pub struct ListArgs {
    /// The scope.
    pub config: RunnableConfig,
    /// The metadata filter, `None` when empty.
    pub filter: Option<HashMap<String, Value>>,
    /// The `before` config.
    pub before: Option<RunnableConfig>,
    /// The limit.
    pub limit: Option<usize>,
}

impl ListArgs {
    /// The arguments for `list(thread_id, options)`.
    pub fn new(thread_id: &str, options: &ListOptions) -> Self {
        let mut configurable = Map::new();
        configurable.insert("thread_id".into(), Value::String(thread_id.to_owned()));
        if let Some(ns) = &options.checkpoint_ns {
            configurable.insert("checkpoint_ns".into(), Value::String(ns.clone()));
        }
        if let Some(id) = &options.checkpoint_id {
            configurable.insert("checkpoint_id".into(), Value::String(id.clone()));
        }
        let config = RunnableConfig::from([("configurable".to_owned(), Value::Object(configurable))]);
        let filter = (!options.filter.is_empty())
            .then(|| options.filter.iter().map(|(k, v)| (k.clone(), v.clone())).collect::<HashMap<_, _>>());
        let before = options.before.as_ref().map(|id| {
            RunnableConfig::from([("configurable".to_owned(), json!({"thread_id": thread_id, "checkpoint_id": id}))])
        });
        Self { config, filter, before, limit: options.limit }
    }
}

/// The kit error for an error of the saver's call `call`: `Config` is `InvalidConfig`,
/// anything else `Storage` with the saver's message.
pub fn lg_error(call: &str, error: LgError) -> CheckpointError {
    match error {
        LgError::Config(msg) => CheckpointError::InvalidConfig(format!("{call}: {msg}")),
        other => CheckpointError::storage(format!("{call} failed"), other),
    }
}
