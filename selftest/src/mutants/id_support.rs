//! The bugs of the identifier mutants (CONTRACT §1 "Identifiers are opaque", order by
//! bytes in §2 get_tuple and list), shared by the capability modules that list them: each
//! breaks one class of the spec's adversarial identifiers
//! (`conformance_spec::data::adversarial::Class`) in one position: case folding, Unicode
//! normalisation, trimming, separators, `LIKE` patterns, prefixes, UTF-16 order,
//! case-insensitive order, a length limit.

use std::marker::PhantomData;

use super::prelude::*;

/// How a mutant rewrites an identifier before the saver sees it.
pub trait IdMap: Default + Send + Sync + 'static {
    /// The identifier as the buggy saver stores and looks it up.
    fn map(id: &str) -> String;
}

/// Case folding (a case-insensitive collation, a `lower()` on the key).
#[derive(Default)]
pub struct CaseFold;

impl IdMap for CaseFold {
    fn map(id: &str) -> String {
        id.to_lowercase()
    }
}

/// NFC composition of a letter and a combining acute accent (the pairs the spec puts).
#[derive(Default)]
pub struct Nfc;

impl IdMap for Nfc {
    fn map(id: &str) -> String {
        [("e\u{301}", "\u{e9}"), ("a\u{301}", "\u{e1}"), ("E\u{301}", "\u{c9}")]
            .iter()
            .fold(id.to_owned(), |s, (nfd, nfc)| s.replace(nfd, nfc))
    }
}

/// Leading and trailing whitespace trimmed.
#[derive(Default)]
pub struct Trim;

impl IdMap for Trim {
    fn map(id: &str) -> String {
        id.trim().to_owned()
    }
}

/// The separators `:`, `|`, `/`, `.` stripped (a key-safe name).
#[derive(Default)]
pub struct StripSeparators;

impl IdMap for StripSeparators {
    fn map(id: &str) -> String {
        id.chars().filter(|c| !matches!(c, ':' | '|' | '/' | '.')).collect()
    }
}

/// Cut to 255 bytes (a `VARCHAR(255)` column that truncates).
#[derive(Default)]
pub struct Truncate255;

impl IdMap for Truncate255 {
    fn map(id: &str) -> String {
        let mut end = id.len().min(255);
        while !id.is_char_boundary(end) {
            end -= 1;
        }
        id[..end].to_owned()
    }
}

/// The thread id of every base call rewritten by `M`.
#[derive(Default)]
pub struct ThreadIds<M>(PhantomData<M>);

impl<M: IdMap> Bug for ThreadIds<M> {
    fn thread_input(&self, thread_id: &mut String) {
        *thread_id = M::map(thread_id);
    }
}

/// The namespace of `put`, `put_writes`, `get_tuple` and `list` rewritten by `M`.
#[derive(Default)]
pub struct Namespaces<M>(PhantomData<M>);

impl<M: IdMap> Bug for Namespaces<M> {
    fn put_input(&self, put: &mut Put) {
        put.config.checkpoint_ns = M::map(&put.config.checkpoint_ns);
    }
    fn put_writes_input(&self, call: &mut PutWrites) {
        call.config.checkpoint_ns = M::map(&call.config.checkpoint_ns);
    }
    fn get_tuple_input(&self, config: &mut CheckpointConfig) {
        config.checkpoint_ns = M::map(&config.checkpoint_ns);
    }
    fn list_input(&self, _thread_id: &str, options: &mut ListOptions) {
        if let Some(ns) = &mut options.checkpoint_ns {
            *ns = M::map(ns);
        }
    }
}

/// Checkpoint ids rewritten by `M` wherever they go in: the stored id and the parent of
/// `put`, the config of `put_writes` and `get_tuple`, `list`'s `checkpoint_id` and `before`.
#[derive(Default)]
pub struct CheckpointIds<M>(PhantomData<M>);

impl<M: IdMap> Bug for CheckpointIds<M> {
    fn put_input(&self, put: &mut Put) {
        put.checkpoint.id = M::map(&put.checkpoint.id);
        if let Some(parent) = &mut put.config.checkpoint_id {
            *parent = M::map(parent);
        }
    }
    fn put_writes_input(&self, call: &mut PutWrites) {
        if let Some(id) = &mut call.config.checkpoint_id {
            *id = M::map(id);
        }
    }
    fn get_tuple_input(&self, config: &mut CheckpointConfig) {
        if let Some(id) = &mut config.checkpoint_id {
            *id = M::map(id);
        }
    }
    fn list_input(&self, _thread_id: &str, options: &mut ListOptions) {
        for id in [&mut options.checkpoint_id, &mut options.before].into_iter().flatten() {
            *id = M::map(id);
        }
    }
}

/// The channel names `delta_channel_history` is asked for rewritten by `M`.
#[derive(Default)]
pub struct DeltaChannels<M>(PhantomData<M>);

impl<M: IdMap> Bug for DeltaChannels<M> {
    fn delta_input(&self, _config: &mut CheckpointConfig, channels: &mut Vec<String>) {
        for ch in channels.iter_mut() {
            *ch = M::map(ch);
        }
    }
}

/// `delete_for_runs` deletes every run whose id equals a listed one once both are
/// rewritten by `M` (a normalising comparison of the stored `run_id`).
#[derive(Default)]
pub struct RunIds<M>(PhantomData<M>);

#[async_trait]
impl<M: IdMap> Bug for RunIds<M> {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        let Invocation::DeleteForRuns { run_ids } = &call else { return saver.forward(call).await };
        let wanted: BTreeSet<String> = run_ids.iter().map(|r| M::map(r)).collect();
        let mut all = run_ids.clone();
        for thread in saver.threads() {
            for t in saver.snapshot(&thread).await? {
                if let Some(run) = t.metadata.get("run_id").and_then(Value::as_str) {
                    if wanted.contains(&M::map(run)) && !all.iter().any(|r| r == run) {
                        all.push(run.to_owned());
                    }
                }
            }
        }
        saver.forward(Invocation::DeleteForRuns { run_ids: all }).await
    }
}

/// The task id of `put_writes` rewritten by `M`.
#[derive(Default)]
pub struct TaskIds<M>(PhantomData<M>);

impl<M: IdMap> Bug for TaskIds<M> {
    fn put_writes_input(&self, call: &mut PutWrites) {
        call.task_id = M::map(&call.task_id);
    }
}

/// The channel names of `put_writes` rewritten by `M`.
#[derive(Default)]
pub struct WriteChannels<M>(PhantomData<M>);

impl<M: IdMap> Bug for WriteChannels<M> {
    fn put_writes_input(&self, call: &mut PutWrites) {
        for (channel, _) in &mut call.writes {
            *channel = M::map(channel);
        }
    }
}

/// The metadata keys of `put` rewritten by `M` (a later key replaces an earlier one that
/// maps to the same).
#[derive(Default)]
pub struct MetadataKeys<M>(PhantomData<M>);

impl<M: IdMap> Bug for MetadataKeys<M> {
    fn put_input(&self, put: &mut Put) {
        put.metadata = std::mem::take(&mut put.metadata).into_iter().map(|(k, v)| (M::map(&k), v)).collect();
    }
}

/// Whether `s` matches the SQL `LIKE` pattern `pattern` (`%` any run of characters, `_`
/// one character, no escape): how a saver that passes an identifier to `LIKE` compares.
pub(crate) fn like_str(pattern: &str, s: &str) -> bool {
    like(&pattern.chars().collect::<Vec<_>>(), &s.chars().collect::<Vec<_>>())
}

/// Whether `s` matches the SQL `LIKE` pattern `pattern` (`%` any run, `_` one character).
fn like(pattern: &[char], s: &[char]) -> bool {
    match pattern.split_first() {
        None => s.is_empty(),
        Some(('%', rest)) => (0..=s.len()).any(|i| like(rest, &s[i..])),
        Some((p, rest)) => s.split_first().is_some_and(|(c, tail)| (*p == '_' || p == c) && like(rest, tail)),
    }
}

/// `get_tuple` looks its thread up with `LIKE`: a thread id with `%` or `_` finds the
/// greatest checkpoint of every thread the pattern matches.
#[derive(Default)]
pub struct GetTupleThreadLike;

/// `get_tuple` without an id looks its thread up by prefix: the greatest checkpoint of
/// every thread whose id starts with it.
#[derive(Default)]
pub struct GetTupleThreadPrefix;

/// The greatest checkpoint of `cfg` (by id, or the latest) over the known threads `matches`
/// accepts.
async fn greatest_over(
    saver: &Inner<'_>,
    cfg: &CheckpointConfig,
    matches: impl Fn(&str) -> bool,
) -> Result<Reply, CheckpointError> {
    let mut best: Option<CheckpointTuple> = None;
    for thread_id in saver.threads().into_iter().filter(|t| matches(t)) {
        if let Some(t) = saver.saver().get_tuple(&CheckpointConfig { thread_id, ..cfg.clone() }).await? {
            if best.as_ref().is_none_or(|b| t.checkpoint.id > b.checkpoint.id) {
                best = Some(t);
            }
        }
    }
    Ok(Reply::Tuple(best))
}

#[async_trait]
impl Bug for GetTupleThreadLike {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        match &call {
            Invocation::GetTuple { config: cfg } if cfg.thread_id.contains(['%', '_']) => {
                let pattern: Vec<char> = cfg.thread_id.chars().collect();
                greatest_over(saver, cfg, |t| like(&pattern, &t.chars().collect::<Vec<_>>())).await
            }
            _ => saver.forward(call).await,
        }
    }
}

#[async_trait]
impl Bug for GetTupleThreadPrefix {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        match &call {
            Invocation::GetTuple { config: cfg } if cfg.checkpoint_id.is_none() => {
                greatest_over(saver, cfg, |t| t.starts_with(cfg.thread_id.as_str())).await
            }
            _ => saver.forward(call).await,
        }
    }
}

/// How a mutant orders checkpoint ids (and task ids and paths) instead of by bytes.
pub trait IdOrder: Default + Send + Sync + 'static {
    /// The sort key of `id`.
    fn key(id: &str) -> Vec<u32>;
}

/// By UTF-16 code units (JavaScript's default sort).
#[derive(Default)]
pub struct Utf16;

impl IdOrder for Utf16 {
    fn key(id: &str) -> Vec<u32> {
        id.encode_utf16().map(u32::from).collect()
    }
}

/// Case-insensitively (a database collation).
#[derive(Default)]
pub struct NoCase;

impl IdOrder for NoCase {
    fn key(id: &str) -> Vec<u32> {
        id.to_lowercase().chars().map(u32::from).collect()
    }
}

/// Checkpoint ids ordered by `O`: `list` sorts by it (greatest first), and the latest of
/// `get_tuple` is the greatest by it.
#[derive(Default)]
pub struct CheckpointIdsOrdered<O>(PhantomData<O>);

#[async_trait]
impl<O: IdOrder> Bug for CheckpointIdsOrdered<O> {
    fn list_output(&self, _caller: &ListOptions, out: &mut Vec<CheckpointTuple>) {
        out.sort_by(|a, b| O::key(&b.checkpoint.id).cmp(&O::key(&a.checkpoint.id)));
    }
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        match &call {
            Invocation::GetTuple { config: cfg } if cfg.checkpoint_id.is_none() => {
                latest_by(saver, cfg, |t| O::key(&t.checkpoint.id)).await
            }
            _ => saver.forward(call).await,
        }
    }
}

/// `pending_writes` ordered by `O` on (task_path, task_id), index order kept within a task.
#[derive(Default)]
pub struct PendingWritesOrdered<O>(PhantomData<O>);

impl<O: IdOrder> Bug for PendingWritesOrdered<O> {
    fn tuple_output(&self, tuple: &mut CheckpointTuple) {
        tuple.pending_writes.sort_by_key(|w| (O::key(&w.task_path), O::key(&w.task_id)));
    }
}
