//! The trace format (docs/trace-format.md): a sequence of saver calls with their arguments
//! and expected results, plus `reopen` and `instance` markers. The fuzzer writes its repro
//! in it; `cargo xtask replay FILE` replays any trace, recorded or generated.

use std::collections::BTreeMap;

use conformance_core::{
    Call, ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata,
    CheckpointTuple, DeltaChannelHistory, ListOptions, PruneStrategy, TypedValue,
};
use serde::{Deserialize, Serialize};

/// The `format` of a trace file this kit writes and reads.
pub const FORMAT: &str = "checkpoint-trace/1";

/// One step of a trace: a saver call, or a marker (CONTRACT §4: a reopened instance and a
/// second instance see what was written).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "call", rename_all = "snake_case")]
pub enum Op {
    /// `put(config, checkpoint, metadata, new_versions)`.
    Put {
        /// Thread, namespace, parent id.
        config: CheckpointConfig,
        /// The checkpoint.
        checkpoint: Checkpoint,
        /// Its metadata.
        metadata: CheckpointMetadata,
        /// The channels whose value changed.
        new_versions: ChannelVersions,
    },
    /// `put_writes(config, writes, task_id, task_path)`.
    PutWrites {
        /// Thread, namespace, checkpoint id.
        config: CheckpointConfig,
        /// `[channel, value]` pairs in call order.
        writes: Vec<(String, TypedValue)>,
        /// The task id.
        task_id: String,
        /// The task path.
        task_path: String,
    },
    /// `get_tuple(config)`.
    GetTuple {
        /// The config.
        config: CheckpointConfig,
    },
    /// `list(thread_id, options)`.
    List {
        /// The thread.
        thread_id: String,
        /// Namespace, id, filter, before, limit.
        options: ListOptions,
    },
    /// `delete_thread(thread_id)`.
    DeleteThread {
        /// The thread.
        thread_id: String,
    },
    /// `delete_for_runs(run_ids)`.
    DeleteForRuns {
        /// The run ids.
        run_ids: Vec<String>,
    },
    /// `copy_thread(source, target)`.
    CopyThread {
        /// The source thread.
        source: String,
        /// The target thread.
        target: String,
    },
    /// `prune(thread_ids, strategy)`.
    Prune {
        /// The threads.
        thread_ids: Vec<String>,
        /// `keep_latest` or `delete`.
        strategy: PruneStrategy,
    },
    /// `delta_channel_history(config, channels)`.
    DeltaChannelHistory {
        /// The target's config.
        config: CheckpointConfig,
        /// The channels asked for.
        channels: Vec<String>,
    },
    /// `get_next_version(current)`: checked by its rule (strictly greater than `current`,
    /// 1 for none; CONTRACT §2 get_next_version), not against one value.
    GetNextVersion {
        /// The current version, if any.
        current: Option<ChannelVersion>,
    },
    /// Calls made at the same time (CONTRACT §4 Concurrency: they behave as if made one
    /// after another in some order). Its `expect` is [`Outcome::Orders`].
    Concurrent {
        /// The calls, each on the current instance or on the one it names.
        calls: Vec<Branch>,
    },
    /// Marker: the current instance is replaced by a new one opened on the same storage.
    Reopen,
    /// Marker: later calls go to instance `index` (0 is the first; a new index opens
    /// another instance on the same storage).
    Instance {
        /// The instance.
        index: usize,
    },
}

/// One call of a concurrent batch ([`Op::Concurrent`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Branch {
    /// The instance it goes to (as the `instance` marker numbers them); absent: the
    /// current one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<usize>,
    /// The call: a saver call, never a marker or another batch.
    #[serde(flatten)]
    pub op: Op,
}

/// What a call returned.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// `put`: the returned config.
    Config(CheckpointConfig),
    /// A call without a value.
    Done,
    /// `get_tuple`.
    Tuple(Option<CheckpointTuple>),
    /// `list`.
    Tuples(Vec<CheckpointTuple>),
    /// `delta_channel_history`.
    History(BTreeMap<String, DeltaChannelHistory>),
    /// `get_next_version`: the version returned (the model's is the least it may be).
    Version(ChannelVersion),
    /// An error, by kind (`InvalidConfig`, `InvalidInput`, `Unsupported`, `Storage`).
    Error(String),
    /// A concurrent batch: the results of its calls (in the batch's order), once for each
    /// serial order that gives different ones. What the batch returned is one list; it must
    /// equal one of those expected.
    Orders(Vec<Vec<Outcome>>),
}

impl Outcome {
    /// The outcome of a call's result.
    pub fn of<T>(result: Result<T, CheckpointError>, ok: impl FnOnce(T) -> Outcome) -> Outcome {
        match result {
            Ok(v) => ok(v),
            Err(e) => Outcome::Error(e.kind().to_owned()),
        }
    }
}

/// One step: the call and what it must return (`expect` is absent for markers).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// The call or marker.
    #[serde(flatten)]
    pub op: Op,
    /// The expected result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<Outcome>,
}

/// A trace file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    /// [`FORMAT`].
    pub format: String,
    /// Where the trace comes from (`cargo xtask fuzz --backend sqlite --seed 7`, a recorder).
    #[serde(default)]
    pub source: String,
    /// The steps, in order.
    pub steps: Vec<Step>,
}

impl Trace {
    /// Parses a trace file's text.
    ///
    /// # Errors
    /// A message naming what is wrong (not JSON, another format, a bad step).
    /// A trace whose steps carry a field the format does not have (a typo such as
    /// `"expct"` would otherwise turn a check off), an error kind other than the four of
    /// [`CheckpointError::kind`], or no step at all is refused.
    pub fn parse(text: &str) -> Result<Trace, String> {
        let trace: Trace = serde_json::from_str(text).map_err(|e| format!("not a trace file: {e}"))?;
        if trace.format != FORMAT {
            return Err(format!("trace format {:?} is not {FORMAT:?}", trace.format));
        }
        if trace.steps.is_empty() {
            return Err("the trace has no steps, so a replay would check nothing".into());
        }
        // `Step` flattens an internally tagged enum, which serde cannot check for unknown
        // fields: compare each step's keys with the keys of the step as read.
        let raw: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("not a trace file: {e}"))?;
        let raw_steps = raw.get("steps").and_then(|s| s.as_array()).map(Vec::as_slice).unwrap_or_default();
        for (i, (raw, step)) in raw_steps.iter().zip(&trace.steps).enumerate() {
            let known = serde_json::to_value(step).unwrap_or_default();
            let (Some(raw), Some(known)) = (raw.as_object(), known.as_object()) else { continue };
            if let Some(key) = raw.keys().find(|k| !known.contains_key(*k) && *k != "expect") {
                return Err(format!(
                    "step {}: unknown field `{key}` (docs/trace-format.md lists a step's fields)",
                    i + 1
                ));
            }
            if let Op::Concurrent { calls } = &step.op {
                if calls.len() < 2 || calls.iter().any(|c| call_of(&c.op).is_none()) {
                    return Err(format!(
                        "step {}: a concurrent step holds two or more saver calls, never a marker or a batch",
                        i + 1
                    ));
                }
                let orders = match &step.expect {
                    Some(Outcome::Orders(orders)) => orders,
                    _ => return Err(format!("step {}: a concurrent step expects {{\"orders\": [...]}}", i + 1)),
                };
                if orders.is_empty() || orders.iter().any(|o| o.len() != calls.len()) {
                    return Err(format!("step {}: each of `orders` needs one result per call", i + 1));
                }
            }
            if let Some(Outcome::Error(kind)) = &step.expect {
                const KINDS: [&str; 4] = ["InvalidConfig", "InvalidInput", "Unsupported", "Storage"];
                if !KINDS.contains(&kind.as_str()) {
                    return Err(format!("step {}: unknown error kind `{kind}` (one of {})", i + 1, KINDS.join(", ")));
                }
            }
        }
        Ok(trace)
    }

    /// The trace as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// The readable form: one numbered line per step, `put(thread=a|b, ...) of checkpoint 1`.
    pub fn readable(&self) -> String {
        let mut out = String::new();
        for (i, s) in self.steps.iter().enumerate() {
            out.push_str(&format!("  {:>3}. {}\n", i + 1, describe(&s.op)));
        }
        out
    }

    /// A Rust regression case to paste into a spec module (it replays the trace through
    /// [`crate::fuzz::replay_in`]).
    pub fn rust_snippet(&self, name: &str) -> String {
        let json = serde_json::to_string(self).unwrap_or_default();
        let mut hashes = "#".to_owned();
        while json.contains(&format!("\"{hashes}")) {
            hashes.push('#');
        }
        format!(
            "/// Found by the fuzzer ({}).\nasync fn {name}(cx: Cx) -> Checked {{\n    crate::fuzz::replay_in(&cx, r{hashes}\"{json}\"{hashes}).await\n}}\n",
            self.source
        )
    }
}

/// The call of an op as failure messages name it ([`Call`]'s form), or the marker.
pub fn describe(op: &Op) -> String {
    match call_of(op) {
        Some(call) => match op {
            Op::Put { checkpoint, .. } => {
                format!("{call} (channels {:?})", checkpoint.channel_versions.keys().collect::<Vec<_>>())
            }
            _ => call.to_string(),
        },
        None => match op {
            Op::Instance { index } => format!("-- switch to instance {index}"),
            Op::Concurrent { calls } => {
                let each = |c: &Branch| match c.instance {
                    Some(i) => format!("{} on instance {i}", describe(&c.op)),
                    None => describe(&c.op),
                };
                format!("at the same time: {}", calls.iter().map(each).collect::<Vec<_>>().join(" ‖ "))
            }
            _ => "-- reopen the storage (new instance)".to_owned(),
        },
    }
}

/// The [`Call`] of an op; `None` for a marker.
pub fn call_of(op: &Op) -> Option<Call> {
    Some(match op.clone() {
        Op::Put { config, checkpoint, .. } => Call::Put { config, checkpoint_id: checkpoint.id },
        Op::PutWrites { config, writes, task_id, task_path } => {
            Call::PutWrites { config, channels: writes.into_iter().map(|(c, _)| c).collect(), task_id, task_path }
        }
        Op::GetTuple { config } => Call::GetTuple { config },
        Op::List { thread_id, options } => Call::List { thread_id, options },
        Op::DeleteThread { thread_id } => Call::DeleteThread { thread_id },
        Op::DeleteForRuns { run_ids } => Call::DeleteForRuns { run_ids },
        Op::CopyThread { source, target } => Call::CopyThread { source, target },
        Op::Prune { thread_ids, strategy } => Call::Prune { thread_ids, strategy },
        Op::DeltaChannelHistory { config, channels } => Call::DeltaChannelHistory { config, channels },
        Op::GetNextVersion { current } => Call::GetNextVersion { current },
        Op::Concurrent { .. } | Op::Reopen | Op::Instance { .. } => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::Trace;

    fn parse_err(steps: &str) -> String {
        Trace::parse(&format!(r#"{{"format": "checkpoint-trace/1", "steps": [{steps}]}}"#)).unwrap_err()
    }

    const GET: &str = r#"{"call": "get_tuple", "config": {"thread_id": "t"}}"#;

    #[test]
    fn a_concurrent_step_needs_two_calls_and_one_result_per_call() {
        let one =
            format!(r#"{{"call": "concurrent", "calls": [{GET}], "expect": {{"orders": [[{{"tuple": null}}]]}}}}"#);
        assert!(parse_err(&one).contains("two or more saver calls"), "{}", parse_err(&one));
        let marker = format!(
            r#"{{"call": "concurrent", "calls": [{GET}, {{"call": "reopen"}}], "expect": {{"orders": [[{{"tuple": null}}, "done"]]}}}}"#
        );
        assert!(parse_err(&marker).contains("never a marker"), "{}", parse_err(&marker));
        let short = format!(
            r#"{{"call": "concurrent", "calls": [{GET}, {GET}], "expect": {{"orders": [[{{"tuple": null}}]]}}}}"#
        );
        assert!(parse_err(&short).contains("one result per call"), "{}", parse_err(&short));
        let plain = format!(r#"{{"call": "concurrent", "calls": [{GET}, {GET}], "expect": {{"tuple": null}}}}"#);
        assert!(parse_err(&plain).contains("expects {\"orders\""), "{}", parse_err(&plain));
        let good = format!(
            r#"{{"call": "concurrent", "calls": [{GET}, {GET}], "expect": {{"orders": [[{{"tuple": null}}, {{"tuple": null}}]]}}}}"#
        );
        Trace::parse(&format!(r#"{{"format": "checkpoint-trace/1", "steps": [{good}]}}"#)).unwrap();
    }
}
