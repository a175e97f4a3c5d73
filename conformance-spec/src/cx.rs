//! [`Cx`]: what a case works with. It wraps the saver's calls so that an error names the
//! call and its arguments, and offers the assertion helpers whose messages say what was
//! expected and what came back.

use std::collections::BTreeMap;
use std::fmt::{Debug, Display};
use std::sync::Arc;

use conformance_core::{
    Checkpoint, CheckpointConfig, CheckpointError, CheckpointSaver, CheckpointTuple, DeltaChannelHistory, Failure,
    ListOptions, PendingWrite, PruneStrategy, TestContext, TypedValue,
};

use crate::fixtures::{new_id, Ids, Step};

/// The result type of a case.
pub type CaseResult = Result<(), Failure>;

/// A case's handle on the saver under test.
#[derive(Clone)]
pub struct Cx {
    /// The core context (fresh saver, reopen).
    pub ctx: TestContext,
    /// The saver under test.
    pub saver: Arc<dyn CheckpointSaver>,
}

fn call_failed(call: String, e: CheckpointError) -> Failure {
    Failure::new(format!("{call}: returned error {}: {}", e.kind(), e.display_chain()))
}

/// `[(task, channel, value), ...]` for messages.
pub fn describe_writes(writes: &[PendingWrite]) -> String {
    let items: Vec<String> = writes
        .iter()
        .map(|w| {
            if w.task_path.is_empty() {
                format!("({}, {}, {:?})", w.task_id, w.channel, w.value)
            } else {
                format!("({}@{}, {}, {:?})", w.task_id, w.task_path, w.channel, w.value)
            }
        })
        .collect();
    format!("[{}]", items.join(", "))
}

/// The ids of `tuples`, in order.
pub fn ids_of(tuples: &[CheckpointTuple]) -> Vec<String> {
    tuples.iter().map(|t| t.config.checkpoint_id.clone().unwrap_or_default()).collect()
}

/// Fails with `message()` unless `cond`.
pub fn ensure(cond: bool, message: impl FnOnce() -> String) -> CaseResult {
    if cond {
        Ok(())
    } else {
        Err(Failure::new(message()))
    }
}

/// Fails unless `actual == expected`, with `"{what}: expected {expected:?}, got {actual:?}"`.
pub fn ensure_eq<T: PartialEq + Debug + ?Sized>(what: impl Display, expected: &T, actual: &T) -> CaseResult {
    if actual == expected {
        Ok(())
    } else {
        Err(Failure::new(format!("{what}: expected {expected:?}, got {actual:?}")))
    }
}

/// Fails unless `actual` equals `expected` write for write (task id, task path, channel,
/// value, and order), with `"{what}: expected [(task, channel, value), ...], got [...]"`.
pub fn ensure_writes(what: impl Display, expected: &[PendingWrite], actual: &[PendingWrite]) -> CaseResult {
    ensure(actual == expected, || {
        format!("{what}: expected {}, got {}", describe_writes(expected), describe_writes(actual))
    })
}

/// Fails unless the two maps are equal, naming the first missing key, unexpected key or
/// differing value: `"{what}[\"k\"]: expected .., got .."`, `"{what}: unexpected key .."`.
pub fn ensure_map_eq<K: Ord + Debug, V: PartialEq + Debug>(
    what: impl Display,
    expected: &BTreeMap<K, V>,
    actual: &BTreeMap<K, V>,
) -> CaseResult {
    for (k, want) in expected {
        match actual.get(k) {
            None => return Err(Failure::new(format!("{what}[{k:?}]: expected {want:?}, got nothing (key missing)"))),
            Some(have) if have != want => {
                return Err(Failure::new(format!("{what}[{k:?}]: expected {want:?}, got {have:?}")))
            }
            Some(_) => {}
        }
    }
    if let Some((k, v)) = actual.iter().find(|(k, _)| !expected.contains_key(*k)) {
        return Err(Failure::new(format!("{what}: unexpected key {k:?} with value {v:?}")));
    }
    Ok(())
}

/// Fails unless `actual` equals `expected` field by field (`v`, `id`, `ts`,
/// `channel_values`, `channel_versions`, `versions_seen`, `updated_channels`), naming the
/// first field that differs: `"{what}.channel_versions[\"a\"]: expected Int(1), got Str(\"1\")"`.
pub fn ensure_checkpoint_eq(what: impl Display, expected: &Checkpoint, actual: &Checkpoint) -> CaseResult {
    ensure_eq(format_args!("{what}.v"), &expected.v, &actual.v)?;
    ensure_eq(format_args!("{what}.id"), &expected.id, &actual.id)?;
    ensure_eq(format_args!("{what}.ts"), &expected.ts, &actual.ts)?;
    ensure_map_eq(format_args!("{what}.channel_values"), &expected.channel_values, &actual.channel_values)?;
    ensure_map_eq(format_args!("{what}.channel_versions"), &expected.channel_versions, &actual.channel_versions)?;
    ensure_map_eq(format_args!("{what}.versions_seen"), &expected.versions_seen, &actual.versions_seen)?;
    ensure_eq(format_args!("{what}.updated_channels"), &expected.updated_channels, &actual.updated_channels)
}

/// Fails unless `result` is a [`CheckpointError::InvalidConfig`] error, with
/// `"{call}: expected an InvalidConfig error, got .."` (CONTRACT §1 Config, §4).
pub fn ensure_invalid_config<T: Debug>(call: impl Display, result: Result<T, CheckpointError>) -> CaseResult {
    match result {
        Err(CheckpointError::InvalidConfig(_)) => Ok(()),
        Err(e) => Err(Failure::new(format!(
            "{call}: expected an InvalidConfig error, got error {}: {}",
            e.kind(),
            e.display_chain()
        ))),
        Ok(v) => Err(Failure::new(format!("{call}: expected an InvalidConfig error, got Ok({v:?})"))),
    }
}

impl Cx {
    /// Wraps a core context.
    pub fn new(ctx: TestContext) -> Self {
        let saver = ctx.saver.clone();
        Self { ctx, saver }
    }

    /// A thread id unique to this case (see [`TestContext::thread`]).
    pub fn thread(&self, label: &str) -> String {
        self.ctx.thread(label)
    }

    /// A root-namespace config on a fresh thread.
    pub fn config(&self, label: &str) -> CheckpointConfig {
        CheckpointConfig::new(self.thread(label))
    }

    /// `put(config, step)`, failing the case on an error.
    pub async fn put(&self, config: &CheckpointConfig, step: Step) -> Result<CheckpointConfig, Failure> {
        let call = format!("put({config}) of checkpoint {}", step.checkpoint.id);
        self.saver
            .put(config, step.checkpoint, step.metadata, step.new_versions)
            .await
            .map_err(|e| call_failed(call, e))
    }

    /// `put` returning the raw result, for cases about errors.
    pub async fn try_put(&self, config: &CheckpointConfig, step: Step) -> Result<CheckpointConfig, CheckpointError> {
        self.saver.put(config, step.checkpoint, step.metadata, step.new_versions).await
    }

    /// Puts a chain of `n` checkpoints on (`thread`, `ns`), each the parent of the next,
    /// with metadata `step = i`; returns the stored configs, oldest first.
    pub async fn chain(&self, thread: &str, ns: &str, n: usize) -> Result<Vec<CheckpointConfig>, Failure> {
        let mut parent = CheckpointConfig::new(thread).with_ns(ns);
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let step = Step::new(&new_id()).meta("step", (i as i64).into());
            parent = self.put(&parent, step).await?;
            out.push(parent.clone());
        }
        Ok(out)
    }

    /// `put_writes(config, writes, task_id, task_path)`, failing the case on an error.
    pub async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(&str, TypedValue)>,
        task_id: &str,
        task_path: &str,
    ) -> CaseResult {
        let names: Vec<&str> = writes.iter().map(|(c, _)| *c).collect();
        let call = format!("put_writes({config}, channels={names:?}, task_id={task_id:?}, task_path={task_path:?})");
        let writes = writes.into_iter().map(|(c, v)| (c.to_owned(), v)).collect();
        self.saver.put_writes(config, writes, task_id, task_path).await.map_err(|e| call_failed(call, e))
    }

    /// `put_writes` returning the raw result, for cases about errors.
    pub async fn try_put_writes(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(&str, TypedValue)>,
        task_id: &str,
        task_path: &str,
    ) -> Result<(), CheckpointError> {
        let writes = writes.into_iter().map(|(c, v)| (c.to_owned(), v)).collect();
        self.saver.put_writes(config, writes, task_id, task_path).await
    }

    /// `get_tuple` returning the raw result, for cases about errors.
    pub async fn try_get(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
        self.saver.get_tuple(config).await
    }

    /// `get_tuple(config)`, failing the case on an error.
    pub async fn get(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>, Failure> {
        self.saver.get_tuple(config).await.map_err(|e| call_failed(format!("get_tuple({config})"), e))
    }

    /// `get_tuple(config)`, failing the case when it returns none.
    pub async fn get_some(&self, config: &CheckpointConfig) -> Result<CheckpointTuple, Failure> {
        self.get(config)
            .await?
            .ok_or_else(|| Failure::new(format!("get_tuple({config}): expected a checkpoint, got none")))
    }

    /// Fails unless `get_tuple(config)` returns none.
    pub async fn get_none(&self, config: &CheckpointConfig) -> CaseResult {
        match self.get(config).await? {
            None => Ok(()),
            Some(t) => Err(Failure::new(format!(
                "get_tuple({config}): expected none, got checkpoint {} ({})",
                t.checkpoint.id, t.config
            ))),
        }
    }

    /// `list(thread_id, options)`, failing the case on an error.
    pub async fn list(&self, thread_id: &str, options: &ListOptions) -> Result<Vec<CheckpointTuple>, Failure> {
        self.saver
            .list(thread_id, options)
            .await
            .map_err(|e| call_failed(format!("list(thread={thread_id}, {})", describe_options(options)), e))
    }

    /// The ids `list` returns, in order.
    pub async fn list_ids(&self, thread_id: &str, options: &ListOptions) -> Result<Vec<String>, Failure> {
        Ok(ids_of(&self.list(thread_id, options).await?))
    }

    /// `delete_thread(thread_id)`, failing the case on an error.
    pub async fn delete_thread(&self, thread_id: &str) -> CaseResult {
        self.saver.delete_thread(thread_id).await.map_err(|e| call_failed(format!("delete_thread({thread_id})"), e))
    }

    /// `delete_for_runs(run_ids)`, failing the case on an error.
    pub async fn delete_for_runs(&self, run_ids: &[&str]) -> CaseResult {
        let ids: Vec<String> = run_ids.iter().map(|s| (*s).to_owned()).collect();
        self.saver.delete_for_runs(&ids).await.map_err(|e| call_failed(format!("delete_for_runs({run_ids:?})"), e))
    }

    /// `copy_thread(source, target)`, failing the case on an error.
    pub async fn copy_thread(&self, source: &str, target: &str) -> CaseResult {
        self.saver
            .copy_thread(source, target)
            .await
            .map_err(|e| call_failed(format!("copy_thread(source={source}, target={target})"), e))
    }

    /// `prune(thread_ids, strategy)`, failing the case on an error.
    pub async fn prune(&self, thread_ids: &[&str], strategy: PruneStrategy) -> CaseResult {
        let ids: Vec<String> = thread_ids.iter().map(|s| (*s).to_owned()).collect();
        self.saver.prune(&ids, strategy).await.map_err(|e| call_failed(format!("prune({thread_ids:?}, {strategy})"), e))
    }

    /// `delta_channel_history(config, channels)`, failing the case on an error.
    pub async fn delta_history(
        &self,
        config: &CheckpointConfig,
        channels: &[&str],
    ) -> Result<BTreeMap<String, DeltaChannelHistory>, Failure> {
        let chs: Vec<String> = channels.iter().map(|s| (*s).to_owned()).collect();
        self.saver
            .delta_channel_history(config, &chs)
            .await
            .map_err(|e| call_failed(format!("delta_channel_history({config}, channels={channels:?})"), e))
    }
}

/// Fails unless `got` equals `expected` field by field (config, checkpoint, metadata,
/// parent_config, pending_writes); the message is `"{what}: {field}: expected .., got .."`
/// for the first field that differs.
pub fn ensure_same_tuple(what: impl Display, expected: &CheckpointTuple, got: &CheckpointTuple) -> CaseResult {
    ensure_eq(format!("{what}: config"), &expected.config, &got.config)?;
    ensure_eq(format!("{what}: parent_config"), &expected.parent_config, &got.parent_config)?;
    ensure_eq(format!("{what}: metadata"), &expected.metadata, &got.metadata)?;
    ensure(expected.pending_writes == got.pending_writes, || {
        format!(
            "{what}: pending_writes: expected {}, got {}",
            describe_writes(&expected.pending_writes),
            describe_writes(&got.pending_writes)
        )
    })?;
    ensure_eq(format!("{what}: checkpoint"), &*expected.checkpoint, &*got.checkpoint)
}

/// Fails unless the two tuple lists have the same length and are equal position by
/// position (see [`ensure_same_tuple`]).
pub fn ensure_same_tuples(what: impl Display, expected: &[CheckpointTuple], got: &[CheckpointTuple]) -> CaseResult {
    let configs = |ts: &[CheckpointTuple]| ts.iter().map(|t| t.config.to_string()).collect::<Vec<_>>();
    ensure(expected.len() == got.len(), || {
        format!(
            "{what}: expected {} tuples {:?}, got {} tuples {:?}",
            expected.len(),
            configs(expected),
            got.len(),
            configs(got)
        )
    })?;
    for (i, (e, g)) in expected.iter().zip(got).enumerate() {
        ensure_same_tuple(format!("{what}: [{i}]"), e, g)?;
    }
    Ok(())
}

impl Cx {
    /// Fails unless `list(thread_id, options)` returns exactly the checkpoints labelled
    /// `want` in `ids`, in that order; the message shows labels and a legend of the ids.
    pub async fn expect_list(&self, ids: &Ids, thread_id: &str, options: &ListOptions, want: &[&str]) -> CaseResult {
        let got = ids.labels(&self.list_ids(thread_id, options).await?);
        ensure(got == want, || {
            format!(
                "list(thread={thread_id}, {}): expected {want:?}, got {got:?} ({})",
                describe_options(options),
                ids.legend()
            )
        })
    }

    /// Like [`Cx::expect_list`], for results that span namespaces: `want` is a list of
    /// (namespace, label) pairs, compared in order.
    pub async fn expect_list_ns(
        &self,
        ids: &Ids,
        thread_id: &str,
        options: &ListOptions,
        want: &[(&str, &str)],
    ) -> CaseResult {
        let got: Vec<(String, String)> = self
            .list(thread_id, options)
            .await?
            .iter()
            .map(|t| (t.config.checkpoint_ns.clone(), ids.label(t.config.checkpoint_id.as_deref().unwrap_or(""))))
            .collect();
        let want_owned: Vec<(String, String)> = want.iter().map(|(n, l)| ((*n).to_owned(), (*l).to_owned())).collect();
        ensure(got == want_owned, || {
            format!(
                "list(thread={thread_id}, {}): expected (ns, id) {want:?}, got {got:?} ({})",
                describe_options(options),
                ids.legend()
            )
        })
    }
}

/// `ns=.., filter=.., before=.., limit=..` for messages (only the options that are set).
pub fn describe_options(o: &ListOptions) -> String {
    let mut parts = Vec::new();
    match &o.checkpoint_ns {
        Some(ns) => parts.push(format!("ns={ns:?}")),
        None => parts.push("ns=<all>".to_owned()),
    }
    if let Some(id) = &o.checkpoint_id {
        parts.push(format!("id={id}"));
    }
    if !o.filter.is_empty() {
        parts.push(format!("filter={}", serde_json::Value::Object(o.filter.clone())));
    }
    if let Some(b) = &o.before {
        parts.push(format!("before={b}"));
    }
    if let Some(l) = o.limit {
        parts.push(format!("limit={l}"));
    }
    parts.join(", ")
}
