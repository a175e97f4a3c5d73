//! Conversions between the kit's contract types and juncture-core 0.4.0's checkpoint types.
//!
//! juncture keeps channel values as one `serde_json::Value` object, versions as `u64`,
//! namespaces as `node:invocation` segments, metadata in a struct with required `source`,
//! `step` and `run_id`, and pending writes without a task path. Values go through the
//! kit's lossless JSON form (`TypedValue::to_json_value`); anything juncture's types cannot
//! hold is refused with `InvalidInput` naming it (an API limit, docs/compat.md), never
//! altered.

use std::collections::HashMap;
use std::sync::Arc;

use conformance_core::{
    ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata,
    CheckpointTuple, PendingWrite, TypedValue,
};
use juncture_core::checkpoint::{self as jc, CheckpointNamespace, CheckpointSource};
use juncture_core::RunnableConfig;
use serde_json::{Map, Value};

/// juncture's namespace for a kit namespace: `""` is the root; anything else must be
/// `node:invocation` segments joined by `|`, the only strings juncture's
/// `CheckpointNamespace::parse` gives back unchanged.
///
/// # Errors
/// `InvalidInput` for any other string (juncture would silently drop or merge segments).
pub fn namespace(ns: &str) -> Result<Option<CheckpointNamespace>, CheckpointError> {
    if ns.is_empty() {
        return Ok(None);
    }
    let parsed = CheckpointNamespace::parse(ns);
    if parsed.as_str() != format!("|{ns}") {
        return Err(CheckpointError::InvalidInput(format!(
            "checkpoint_ns {ns:?}: juncture namespaces are `node:invocation` segments joined by `|`"
        )));
    }
    Ok(Some(parsed))
}

/// The kit string of a juncture namespace (the inverse of [`namespace`]).
pub fn namespace_str(ns: Option<&CheckpointNamespace>) -> String {
    ns.map(|n| n.as_str().trim_start_matches('|').to_owned()).unwrap_or_default()
}

/// juncture's config for a kit config: thread, namespace and checkpoint id.
///
/// # Errors
/// `InvalidInput` for a namespace juncture cannot hold.
pub fn runnable(config: &CheckpointConfig) -> Result<RunnableConfig, CheckpointError> {
    let mut rc = RunnableConfig::new().with_thread_id(config.thread_id.clone());
    if let Some(ns) = namespace(&config.checkpoint_ns)? {
        rc = rc.with_checkpoint_ns(ns);
    }
    if let Some(id) = &config.checkpoint_id {
        rc = rc.with_checkpoint_id(id.clone());
    }
    Ok(rc)
}

/// The kit config of a config juncture returned.
///
/// # Errors
/// `Storage` when it has no thread id.
pub fn from_runnable(config: &RunnableConfig, what: &str) -> Result<CheckpointConfig, CheckpointError> {
    let thread_id = config
        .thread_id
        .clone()
        .ok_or_else(|| CheckpointError::storage_msg(format!("the saver returned {what} without a thread_id")))?;
    Ok(CheckpointConfig {
        thread_id,
        checkpoint_ns: namespace_str(config.checkpoint_ns.as_ref()),
        checkpoint_id: config.checkpoint_id.clone(),
    })
}

fn version(channel: &str, v: &ChannelVersion) -> Result<u64, CheckpointError> {
    match v {
        ChannelVersion::Int(i) if *i >= 0 => Ok(*i as u64),
        other => Err(CheckpointError::InvalidInput(format!(
            "channel {channel:?} version {other}: juncture channel versions are u64"
        ))),
    }
}

fn versions(map: &ChannelVersions) -> Result<HashMap<String, u64>, CheckpointError> {
    map.iter().map(|(k, v)| Ok((k.clone(), version(k, v)?))).collect()
}

fn kit_versions(map: &HashMap<String, u64>) -> Result<ChannelVersions, CheckpointError> {
    map.iter()
        .map(|(k, v)| {
            let v = i64::try_from(*v)
                .map_err(|_| CheckpointError::storage_msg(format!("the saver returned version {v} of {k:?}")))?;
            Ok((k.clone(), ChannelVersion::Int(v)))
        })
        .collect()
}

/// juncture's checkpoint for a kit checkpoint and its `new_versions`. `ts` becomes
/// `created_at`; `updated_channels` has no field and is dropped (API limit).
///
/// # Errors
/// `InvalidInput` for a string or negative version or a `v` outside `u32`.
pub fn to_checkpoint(
    checkpoint: &Checkpoint,
    new_versions: &ChannelVersions,
) -> Result<jc::Checkpoint, CheckpointError> {
    let channel_values: Map<String, Value> =
        checkpoint.channel_values.iter().map(|(k, v)| (k.clone(), v.to_json_value())).collect();
    let versions_seen = checkpoint
        .versions_seen
        .iter()
        .map(|(node, seen)| Ok((node.clone(), versions(seen)?)))
        .collect::<Result<HashMap<_, _>, CheckpointError>>()?;
    let v = u32::try_from(checkpoint.v)
        .map_err(|_| CheckpointError::InvalidInput(format!("checkpoint.v {}: juncture's v is a u32", checkpoint.v)))?;
    Ok(jc::Checkpoint {
        id: checkpoint.id.clone(),
        channel_values: Value::Object(channel_values),
        channel_versions: versions(&checkpoint.channel_versions)?,
        versions_seen,
        pending_tasks: Vec::new(),
        pending_sends: Vec::new(),
        pending_interrupts: Vec::new(),
        schema_version: 1,
        created_at: checkpoint.ts.clone(),
        v,
        new_versions: versions(new_versions)?,
        counters_since_delta_snapshot: HashMap::new(),
    })
}

/// The kit checkpoint of a checkpoint juncture returned.
///
/// # Errors
/// `Storage` when `channel_values` is not an object or a value is not a typed value's form.
pub fn from_checkpoint(checkpoint: &jc::Checkpoint) -> Result<Checkpoint, CheckpointError> {
    let values = match &checkpoint.channel_values {
        Value::Object(m) => m
            .iter()
            .map(|(k, v)| {
                let tv = TypedValue::from_json_value(v.clone())
                    .map_err(|e| CheckpointError::storage(format!("the saver returned channel {k:?}"), e))?;
                Ok((k.clone(), tv))
            })
            .collect::<Result<_, CheckpointError>>()?,
        Value::Null => Default::default(),
        other => return Err(CheckpointError::storage_msg(format!("the saver returned channel_values {other}"))),
    };
    Ok(Checkpoint {
        v: i64::from(checkpoint.v),
        id: checkpoint.id.clone(),
        ts: checkpoint.created_at.clone(),
        channel_values: values,
        channel_versions: kit_versions(&checkpoint.channel_versions)?,
        versions_seen: checkpoint
            .versions_seen
            .iter()
            .map(|(node, seen)| Ok((node.clone(), kit_versions(seen)?)))
            .collect::<Result<_, CheckpointError>>()?,
        updated_channels: None,
    })
}

/// juncture's source for a kit `source` value.
///
/// # Errors
/// `InvalidInput` for anything but `input|loop|update|fork`.
pub fn source(value: &Value) -> Result<CheckpointSource, CheckpointError> {
    match value.as_str() {
        Some("input") => Ok(CheckpointSource::Input),
        Some("loop") => Ok(CheckpointSource::Loop),
        Some("update") => Ok(CheckpointSource::Update),
        Some("fork") => Ok(CheckpointSource::Fork),
        _ => Err(CheckpointError::InvalidInput(format!(
            "metadata source {value}: juncture's CheckpointSource is Input, Loop, Update, Fork or Interrupt"
        ))),
    }
}

fn source_str(source: &CheckpointSource) -> Value {
    Value::String(
        match source {
            CheckpointSource::Input => "input",
            CheckpointSource::Loop => "loop",
            CheckpointSource::Update => "update",
            CheckpointSource::Fork => "fork",
            _ => "interrupt",
        }
        .to_owned(),
    )
}

/// juncture's metadata struct for kit metadata.
///
/// `source` and `step` are required fields there (missing: `InvalidInput`); `run_id` is a
/// required `String`, and a missing one is juncture's own "no run" value `""`; `parents`
/// must map strings to strings. Every other key has no field and is dropped (API limit).
///
/// # Errors
/// `InvalidInput` naming the key that does not fit.
pub fn to_metadata(metadata: &CheckpointMetadata) -> Result<jc::CheckpointMetadata, CheckpointError> {
    let invalid = |key: &str, why: &str| CheckpointError::InvalidInput(format!("metadata {key:?}: {why}"));
    let source = source(metadata.get("source").ok_or_else(|| invalid("source", "juncture requires it"))?)?;
    let step = metadata
        .get("step")
        .ok_or_else(|| invalid("step", "juncture requires it"))?
        .as_i64()
        .ok_or_else(|| invalid("step", "juncture's step is an i64"))?;
    let parents = match metadata.get("parents") {
        None => HashMap::new(),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| {
                Ok((k.clone(), v.as_str().ok_or_else(|| invalid("parents", "values must be strings"))?.to_owned()))
            })
            .collect::<Result<_, CheckpointError>>()?,
        Some(_) => return Err(invalid("parents", "juncture's parents is a string map")),
    };
    let run_id = match metadata.get("run_id") {
        None => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err(invalid("run_id", "juncture's run_id is a string")),
    };
    let writes = match metadata.get("writes") {
        Some(Value::Object(m)) => m.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        _ => HashMap::new(),
    };
    Ok(jc::CheckpointMetadata { source, step, writes, parents, run_id, return_value: None })
}

/// The kit metadata of juncture's struct: `source`, `step`, `parents`, `run_id` when not
/// empty, `writes` when not empty.
pub fn from_metadata(metadata: &jc::CheckpointMetadata) -> CheckpointMetadata {
    let mut m = Map::new();
    m.insert("source".into(), source_str(&metadata.source));
    m.insert("step".into(), Value::from(metadata.step));
    m.insert(
        "parents".into(),
        Value::Object(metadata.parents.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect()),
    );
    if !metadata.run_id.is_empty() {
        m.insert("run_id".into(), Value::String(metadata.run_id.clone()));
    }
    if !metadata.writes.is_empty() {
        m.insert("writes".into(), Value::Object(metadata.writes.iter().map(|(k, v)| (k.clone(), v.clone())).collect()));
    }
    m
}

/// The kit tuple of a tuple juncture returned; writes read back with `task_path: ""`
/// (juncture's `PendingWrite` has no task path).
///
/// # Errors
/// `Storage` when a part is not of the expected shape.
pub fn from_tuple(tuple: jc::CheckpointTuple) -> Result<CheckpointTuple, CheckpointError> {
    let pending_writes = tuple
        .pending_writes
        .into_iter()
        .map(|w| {
            let value = TypedValue::from_json_value(w.value)
                .map_err(|e| CheckpointError::storage(format!("the saver returned a write of {}", w.channel), e))?;
            Ok(PendingWrite { task_id: w.task_id, task_path: String::new(), channel: w.channel, value })
        })
        .collect::<Result<_, CheckpointError>>()?;
    Ok(CheckpointTuple {
        config: from_runnable(&tuple.config, "a tuple config")?,
        checkpoint: Arc::new(from_checkpoint(&tuple.checkpoint)?),
        metadata: from_metadata(&tuple.metadata),
        parent_config: tuple.parent_config.as_ref().map(|p| from_runnable(p, "a parent_config")).transpose()?,
        pending_writes,
    })
}

/// The kit error of a juncture error of call `call` (all of them are storage errors:
/// juncture has no "invalid config" kind).
pub fn error(call: &str, e: jc::CheckpointError) -> CheckpointError {
    CheckpointError::storage(format!("{call} failed"), e)
}
