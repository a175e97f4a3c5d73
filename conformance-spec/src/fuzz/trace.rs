//! The trace format (docs/trace-format.md): a sequence of saver calls with their arguments
//! and expected results, plus `reopen` and `instance` markers. The fuzzer writes its repro
//! in it; `cargo xtask replay FILE` replays any trace, recorded or generated.

use std::collections::BTreeMap;

use conformance_core::{
    Call, ChannelVersion, CheckpointConfig, CheckpointError, CheckpointTuple, DeltaChannelHistory, Invocation, Put,
    PutWrites, METHODS,
};
use serde::{Deserialize, Serialize};

/// The `format` of a trace file this kit writes and reads.
pub const FORMAT: &str = "checkpoint-trace/1";

/// One step of a trace: a saver call, or a marker (CONTRACT §4: a reopened instance and a
/// second instance see what was written).
// A put (a whole checkpoint) is the common step, so boxing it would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "call", rename_all = "snake_case")]
pub enum Op {
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
    /// A saver call, written as [`Invocation`] writes it (its own `call` names the
    /// method). A `get_next_version` is checked by its rule (strictly greater than
    /// `current`, 1 for none; CONTRACT §2 get_next_version), not against one value.
    #[serde(untagged)]
    Call(Invocation),
}

/// How the variants of [`Op`] other than [`Op::Call`] are read: `Op` is read by its `call`,
/// as an [`Invocation`] or as one of these, so that a bad step gets the error of the variant
/// it names ("missing field `index`") rather than serde's "did not match any variant" of an
/// untagged variant. Each mirrors the `Op` variant of the same name.
#[derive(Deserialize)]
#[serde(tag = "call", rename_all = "snake_case")]
enum Own {
    Concurrent { calls: Vec<Branch> },
    Reopen,
    Instance { index: usize },
}

impl<'de> Deserialize<'de> for Op {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let value = serde_json::Value::deserialize(deserializer)?;
        let call = value.get("call").and_then(serde_json::Value::as_str).unwrap_or_default();
        if METHODS.contains(&call) {
            return Invocation::deserialize(value).map(Op::Call).map_err(D::Error::custom);
        }
        Ok(match Own::deserialize(value).map_err(D::Error::custom)? {
            Own::Concurrent { calls } => Op::Concurrent { calls },
            Own::Reopen => Op::Reopen,
            Own::Instance { index } => Op::Instance { index },
        })
    }
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
    /// The outcome of a saver call's reply ([`conformance_core::Invocation::send`]).
    pub fn of_reply(reply: conformance_core::Reply) -> Outcome {
        use conformance_core::Reply;
        match reply {
            Reply::Config(c) => Outcome::Config(c),
            Reply::Done => Outcome::Done,
            Reply::Tuple(t) => Outcome::Tuple(t),
            Reply::Tuples(t) => Outcome::Tuples(t),
            Reply::History(h) => Outcome::History(h),
            Reply::Version(v) => Outcome::Version(v),
        }
    }

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
    /// What recorded the trace, for a trace recorded from a LangGraph application
    /// (`checkpoint-conformance record`, docs/traces.md); absent in generated traces and in
    /// traces written before it existed. Informational: a replay never reads it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_with: Option<RecordedWith>,
    /// The steps, in order.
    pub steps: Vec<Step>,
}

/// The `recorded_with` header of a recorded trace: the package versions the application
/// ran with and the id its user gave. Every field is optional; an unknown one is refused,
/// as everywhere in the format.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedWith {
    /// The `langgraph` version (Python) or `@langchain/langgraph` version (JS).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub langgraph: Option<String>,
    /// The `langgraph-checkpoint` version (Python) or `@langchain/langgraph-checkpoint` (JS).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub langgraph_checkpoint: Option<String>,
    /// The id the user gave with `--app-id` (default: the graph's `module:build`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_id: Option<String>,
}

impl Trace {
    /// Parses a trace file's text.
    ///
    /// # Errors
    /// One line naming what is wrong and, for a step, its 1-based number. Refused, so that
    /// no check is turned off unseen: text that is not JSON or of another format, no step
    /// or no `expect` at all, a field the format does not have at any depth (a typo such
    /// as `"expct"` or `"checkpoint_idd"`), an `expect` of another call's shape, an error
    /// kind other than the four of [`CheckpointError::kind`], an `expect` inside a
    /// concurrent step's calls, and an `instance` index more than one past those opened.
    pub fn parse(text: &str) -> Result<Trace, String> {
        // Held raw, each step parsed and checked on its own: a long recording's peak memory
        // is its text twice and one step's JSON tree, not the whole file's tree.
        use serde_json::value::RawValue;
        let file: std::collections::BTreeMap<String, Box<RawValue>> = serde_json::from_str(text).map_err(|e| {
            if e.is_data() {
                "not a trace file: not a JSON object".to_owned()
            } else {
                format!("not a trace file: {e}")
            }
        })?;
        if let Some(key) = file.keys().find(|k| !["format", "source", "recorded_with", "steps"].contains(&k.as_str())) {
            return Err(format!("unknown field `{key}` (a trace has format, source, recorded_with and steps)"));
        }
        let value = |key: &str| file.get(key).and_then(|raw| serde_json::from_str::<serde_json::Value>(raw.get()).ok());
        let format = value("format");
        if format.as_ref().and_then(|f| f.as_str()) != Some(FORMAT) {
            let given = format.map_or_else(|| "none".to_owned(), |f| f.to_string());
            return Err(format!("trace format {given} is not {FORMAT:?}"));
        }
        let source = match value("source") {
            None => String::new(),
            Some(serde_json::Value::String(s)) => s,
            Some(_) => return Err("`source` is a string".into()),
        };
        let recorded_with = match file.get("recorded_with") {
            None => None,
            Some(v) => Some(
                serde_json::from_str::<RecordedWith>(v.get())
                    .map_err(|e| format!("`recorded_with` is {{langgraph, langgraph_checkpoint, app_id}}: {e}"))?,
            ),
        };
        let raw_steps: Vec<Box<RawValue>> = file
            .get("steps")
            .and_then(|s| serde_json::from_str(s.get()).ok())
            .ok_or_else(|| "`steps` is a list of steps".to_owned())?;
        if raw_steps.is_empty() {
            return Err("the trace has no steps, so a replay would check nothing".into());
        }
        let mut opened = 1;
        let mut steps = Vec::with_capacity(raw_steps.len());
        for (i, raw) in raw_steps.iter().enumerate() {
            let step: serde_json::Value =
                serde_json::from_str(raw.get()).map_err(|e| format!("step {}: {e}", i + 1))?;
            steps.push(check_step(&step, &mut opened).map_err(|e| format!("step {}: {e}", i + 1))?);
        }
        if steps.iter().all(|s| s.expect.is_none()) {
            return Err("no step has an `expect`, so a replay would check nothing".into());
        }
        Ok(Trace { format: FORMAT.to_owned(), source, recorded_with, steps })
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

    /// A Rust regression case (it replays the trace through [`crate::fuzz::replay_in`]),
    /// with every path written out: paste it into a spec module of this kit and add its
    /// name to that module's `spec_cases!` list (docs/trace-format.md "In Rust").
    pub fn rust_snippet(&self, name: &str) -> String {
        let json = serde_json::to_string(self).unwrap_or_default();
        let mut hashes = "#".to_owned();
        while json.contains(&format!("\"{hashes}")) {
            hashes.push('#');
        }
        format!(
            "/// Found by the fuzzer ({}).\nasync fn {name}(cx: conformance_spec::Cx) -> conformance_spec::Checked {{\n    conformance_spec::fuzz::replay_in(&cx, r{hashes}\"{json}\"{hashes}).await\n}}\n",
            self.source
        )
    }
}

/// The `call` names of the format's markers and batches ([`Own`]); a saver call's are
/// [`conformance_core::METHODS`].
const MARKERS: [&str; 3] = ["concurrent", "reopen", "instance"];

/// Every `call` name of the format, for messages: the methods, then the markers.
fn call_names() -> String {
    METHODS.iter().chain(&MARKERS).copied().collect::<Vec<_>>().join(", ")
}

/// One step read and checked (see [`Trace::parse`]); `opened` counts the instances that
/// the steps before it opened.
fn check_step(raw: &serde_json::Value, opened: &mut usize) -> Result<Step, String> {
    let call = match raw.get("call") {
        Some(serde_json::Value::String(c)) if METHODS.contains(&c.as_str()) || MARKERS.contains(&c.as_str()) => {
            c.as_str()
        }
        Some(serde_json::Value::String(c)) => return Err(format!("unknown call `{c}` (one of {})", call_names())),
        _ => return Err(format!("a step is an object with `call`, one of {}", call_names())),
    };
    let step: Step = serde_json::from_value(raw.clone()).map_err(|e| format!("{call}: {e}"))?;
    let inner = raw.get("calls").and_then(|c| c.as_array()).map(Vec::as_slice).unwrap_or_default();
    if inner.iter().any(|c| c.get("expect").is_some()) {
        return Err("a call of a concurrent step has no `expect`: the step's `orders` hold the results".into());
    }
    // `Step` flattens an internally tagged enum, which serde cannot check for unknown
    // fields: compare the keys of the step as written with those of the step as read.
    let known = serde_json::to_value(&step).unwrap_or_default();
    if let Some(path) = unknown_field(raw, &known, "") {
        return Err(format!("unknown field `{path}` (docs/trace-format.md lists a step's fields)"));
    }
    match (&step.op, &step.expect) {
        (Op::Concurrent { calls }, Some(Outcome::Orders(orders))) => {
            if calls.len() < 2 || calls.iter().any(|c| call_of(&c.op).is_none()) {
                return Err("a concurrent step holds two or more saver calls, never a marker or a batch".into());
            }
            if orders.is_empty() || orders.iter().any(|o| o.len() != calls.len()) {
                return Err("each of `orders` needs one result per call".into());
            }
            for (c, o) in orders.iter().flat_map(|order| calls.iter().zip(order)) {
                check_expect(&c.op, o)?;
            }
        }
        (Op::Concurrent { .. }, _) => return Err("a concurrent step expects {\"orders\": [...]}".into()),
        (op, Some(o)) => check_expect(op, o)?,
        (_, None) => {}
    }
    let indexes = match &step.op {
        Op::Instance { index } => vec![*index],
        Op::Concurrent { calls } => calls.iter().filter_map(|c| c.instance).collect(),
        _ => Vec::new(),
    };
    for index in indexes {
        if index > *opened {
            return Err(format!("instance {index} is not open and is not the next one ({opened})"));
        }
        *opened = (*opened).max(index + 1);
    }
    Ok(step)
}

/// An `expect` of the shape `op` returns, or an error of one of the four kinds.
fn check_expect(op: &Op, o: &Outcome) -> Result<(), String> {
    const KINDS: [&str; 4] = ["InvalidConfig", "InvalidInput", "Unsupported", "Storage"];
    let fits = match o {
        Outcome::Error(kind) if !KINDS.contains(&kind.as_str()) => {
            return Err(format!("unknown error kind `{kind}` (one of {})", KINDS.join(", ")))
        }
        Outcome::Error(_) => call_of(op).is_some(),
        Outcome::Config(_) => matches!(op, Op::Call(Invocation::Put(Put { .. }))),
        Outcome::Done => matches!(
            op,
            Op::Call(Invocation::PutWrites(PutWrites { .. }))
                | Op::Call(Invocation::DeleteThread { .. })
                | Op::Call(Invocation::DeleteForRuns { .. })
                | Op::Call(Invocation::CopyThread { .. })
                | Op::Call(Invocation::Prune { .. })
        ),
        Outcome::Tuple(_) => matches!(op, Op::Call(Invocation::GetTuple { .. })),
        Outcome::Tuples(_) => matches!(op, Op::Call(Invocation::List { .. })),
        Outcome::History(_) => matches!(op, Op::Call(Invocation::DeltaChannelHistory { .. })),
        Outcome::Version(_) => matches!(op, Op::Call(Invocation::GetNextVersion { .. })),
        Outcome::Orders(_) => false,
    };
    if fits {
        return Ok(());
    }
    let shape = match serde_json::to_value(o).unwrap_or_default() {
        serde_json::Value::Object(m) => m.keys().next().cloned().unwrap_or_default(),
        other => other.as_str().unwrap_or_default().to_owned(),
    };
    let name = serde_json::to_value(op).ok().and_then(|v| v.get("call").and_then(|c| c.as_str()).map(str::to_owned));
    match call_of(op) {
        Some(_) => Err(format!(
            "`{}` cannot expect `{shape}` (docs/trace-format.md gives each call's expect)",
            name.unwrap_or_default()
        )),
        None => Err(format!("a `{}` marker has no expect", name.unwrap_or_default())),
    }
}

/// The path of the first key of `raw` that `known` (the same value read and written back)
/// does not have. Only the two fields written back only when set (`expect`, a batch
/// call's `instance`) may be `null` without being there, and an encoded typed value
/// (`$type`) is not looked into, since it is written back in its shortest form.
fn unknown_field(raw: &serde_json::Value, known: &serde_json::Value, path: &str) -> Option<String> {
    use serde_json::Value;
    match (raw, known) {
        (Value::Object(r), Value::Object(k)) if !r.contains_key("$type") => r.iter().find_map(|(key, v)| {
            let p = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
            match k.get(key) {
                None if v.is_null() && (key == "expect" || key == "instance") => None,
                None => Some(p),
                Some(kv) => unknown_field(v, kv, &p),
            }
        }),
        (Value::Array(r), Value::Array(k)) => {
            r.iter().zip(k).enumerate().find_map(|(i, (r, k))| unknown_field(r, k, &format!("{path}[{i}]")))
        }
        _ => None,
    }
}

/// The call of an op as failure messages name it ([`Call`]'s form), or the marker.
pub fn describe(op: &Op) -> String {
    match call_of(op) {
        Some(call) => match op {
            Op::Call(Invocation::Put(Put { checkpoint, metadata, .. })) => {
                let channels = format!("channels {:?}", checkpoint.channel_versions.keys().collect::<Vec<_>>());
                if metadata.is_empty() {
                    format!("{call} ({channels})")
                } else {
                    format!("{call} ({channels}, metadata {})", serde_json::Value::Object(metadata.clone()))
                }
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
    match op {
        Op::Call(invocation) => Some(invocation.call()),
        Op::Concurrent { .. } | Op::Reopen | Op::Instance { .. } => None,
    }
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
        let inner = format!(
            r#"{{"call": "concurrent", "calls": [{GET}, {{"call": "get_tuple", "config": {{"thread_id": "t"}}, "expect": {{"tuple": null}}}}], "expect": {{"orders": [[{{"tuple": null}}, {{"tuple": null}}]]}}}}"#
        );
        assert!(parse_err(&inner).contains("has no `expect`"), "{}", parse_err(&inner));
        let misfit = format!(
            r#"{{"call": "concurrent", "calls": [{GET}, {GET}], "expect": {{"orders": [[{{"tuple": null}}, "done"]]}}}}"#
        );
        assert!(parse_err(&misfit).contains("`get_tuple` cannot expect `done`"), "{}", parse_err(&misfit));
    }

    #[test]
    fn a_misspelt_field_at_any_depth_is_refused() {
        let config =
            r#"{"call": "get_tuple", "config": {"thread_id": "t", "checkpoint_idd": "1"}, "expect": {"tuple": null}}"#;
        assert!(parse_err(config).contains("step 1: unknown field `config.checkpoint_idd`"), "{}", parse_err(config));
        let options = r#"{"call": "list", "thread_id": "t", "options": {"limt": 1}, "expect": {"tuples": []}}"#;
        assert!(parse_err(options).contains("`options.limt`"), "{}", parse_err(options));
        let null =
            r#"{"call": "get_tuple", "config": {"thread_id": "t", "checkpoint_idd": null}, "expect": {"tuple": null}}"#;
        assert!(parse_err(null).contains("`config.checkpoint_idd`"), "{}", parse_err(null));
        let expect = r#"{"call": "get_tuple", "config": {"thread_id": "t"}, "expect": {"tuple": {"config": {"thread_id": "t", "checkpoint_id": "1"}, "checkpoint": {"v": 1, "id": "1", "ts": "", "channel_values": {}, "channel_versions": {}, "versions_seen": {}, "updated_channels": null}, "metadata": {}, "parent_config": null, "pending_writes": [], "pendng": 1}}}"#;
        assert!(parse_err(expect).contains("`expect.tuple.pendng`"), "{}", parse_err(expect));
        // Absent list options are no restriction, and user data keeps its own keys.
        let fine = r#"{"call": "list", "thread_id": "t", "options": {"filter": {"any_key": {"deep": 1}}}, "expect": {"tuples": []}}"#;
        Trace::parse(&format!(r#"{{"format": "checkpoint-trace/1", "steps": [{fine}]}}"#)).unwrap();
    }

    #[test]
    fn an_expect_of_another_shape_a_bad_call_and_a_far_instance_are_refused() {
        let shape = r#"{"call": "put_writes", "config": {"thread_id": "t", "checkpoint_id": "1"}, "writes": [], "task_id": "a", "task_path": "", "expect": {"tuple": null}}"#;
        assert!(parse_err(shape).contains("`put_writes` cannot expect `tuple`"), "{}", parse_err(shape));
        let marker = r#"{"call": "reopen", "expect": "done"}"#;
        assert!(parse_err(marker).contains("marker has no expect"), "{}", parse_err(marker));
        let number = r#"{"call": 5}"#;
        assert!(
            parse_err(number).contains("step 1: a step is an object with `call`, one of put"),
            "{}",
            parse_err(number)
        );
        let unknown = r#"{"call": "gett_tuple"}"#;
        assert!(parse_err(unknown).contains("unknown call `gett_tuple`"), "{}", parse_err(unknown));
        let far = format!(r#"{{"call": "instance", "index": 1}}, {{"call": "instance", "index": 3}}, {GET}"#);
        assert!(parse_err(&far).contains("step 2: instance 3 is not open"), "{}", parse_err(&far));
        let unchecked = r#"{"call": "get_tuple", "config": {"thread_id": "t"}}"#;
        assert!(parse_err(unchecked).contains("no step has an `expect`"), "{}", parse_err(unchecked));
        let ok = format!(
            r#"{{"call": "instance", "index": 1}}, {{"call": "instance", "index": 0}}, {{"call": "get_tuple", "config": {{"thread_id": "t"}}, "expect": {{"error": "InvalidConfig"}}}}"#
        );
        Trace::parse(&format!(r#"{{"format": "checkpoint-trace/1", "steps": [{ok}]}}"#)).unwrap();
    }
}

#[cfg(test)]
mod call_names {
    use super::{Invocation, Own, MARKERS, METHODS};

    /// The names serde gives an enum's variants, from its "unknown variant" message.
    fn serde_names<T: serde::de::DeserializeOwned>() -> Vec<String> {
        let err = match serde_json::from_value::<T>(serde_json::json!({"call": "no such call"})) {
            Ok(_) => return Vec::new(),
            Err(e) => e.to_string(),
        };
        let list = err.split("expected one of ").nth(1).unwrap_or_default();
        list.split(", ").map(|n| n.trim().trim_matches('`').to_owned()).filter(|n| !n.is_empty()).collect()
    }

    #[test]
    fn calls_lists_exactly_the_names_of_op() {
        let (invocations, own) = (serde_names::<Invocation>(), serde_names::<Own>());
        assert!(invocations.len() > 5 && own.len() > 2, "could not read the variant names from serde");
        assert_eq!(METHODS.to_vec(), invocations, "METHODS and Invocation's serde names differ");
        assert_eq!(MARKERS.to_vec(), own, "MARKERS and Op's own serde names differ");
    }

    #[test]
    fn a_bad_step_gets_the_error_of_the_call_it_names() {
        for (step, error) in [
            (r#"{"call": "instance"}"#, "missing field `index`"),
            (r#"{"call": "get_tuple"}"#, "missing field `config`"),
            (r#"{"call": "put", "config": {"thread_id": "t"}}"#, "missing field `checkpoint`"),
        ] {
            let got = serde_json::from_str::<super::Op>(step).map(|_| ()).unwrap_err().to_string();
            assert!(got.contains(error), "{step}: {got}");
        }
    }
}
