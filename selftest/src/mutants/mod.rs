//! The mutants, one module per capability. Each mutant is a small struct implementing
//! [`Bug`](crate::Bug), and each module ends with its list (`MUTANTS`): name, bug,
//! capabilities broken, what it covers, and the bug in one line. Adding a mutant costs
//! one struct and one list line in the module of the capability it breaks; the catalog
//! ([`crate::MUTANTS`]) gathers the lists in the order of [`LISTS`].
//!
//! Helpers more than one module uses live here.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use conformance_core::{
    special_write_index, write_index, Capability, CheckpointError, CheckpointTuple, Invocation, PendingWrite,
    PruneStrategy, TypedValue,
};

use crate::bug::Put;
use crate::catalog::Mutant;
use crate::wrapper::{lock, Inner};

/// One catalog entry: `mutant!(BugType, capabilities, [covers], "the bug in one line")`
/// for a mutant of the memory saver, named after its type in snake_case
/// (`PutReturnsParentId` is `put_returns_parent_id`, [`snake_name`]);
/// `mutant!(Sqlite: BugType, ...)` for one of another base saver ([`crate::Base`]). A bug
/// type that is generic (`ThreadIds<CaseFold>`) gives its name first:
/// `mutant!("thread_ids_case_folded", ThreadIds<CaseFold>, ...)`.
macro_rules! mutant {
    // A mutant of a SHOULD rule (CONTRACT §5): `mutant!(should "name", ...)`.
    (should $($rest:tt)*) => {
        $crate::mutants::mutant!($($rest)*).should()
    };
    ($base:ident: $name:literal, $bug:ty, $caps:expr, [$($cover:expr),* $(,)?], $desc:literal $(,)?) => {
        $crate::mutants::mutant!(@ $base: $name, $bug, $caps, [$($cover),*], $desc)
    };
    (@ $base:ident: $name:expr, $bug:ty, $caps:expr, [$($cover:expr),* $(,)?], $desc:literal $(,)?) => {
        $crate::catalog::Mutant {
            name: $name,
            description: $desc,
            breaks: $caps,
            covers: &[$($cover),*],
            bug: stringify!($bug),
            make: $crate::catalog::make::<$bug>,
            base: $crate::catalog::Base::$base,
            strength: conformance_core::Strength::Must,
        }
    };
    ($name:literal, $bug:ty, $caps:expr, [$($cover:expr),* $(,)?], $desc:literal $(,)?) => {
        $crate::mutants::mutant!(Memory: $name, $bug, $caps, [$($cover),*], $desc)
    };
    // Named after the type.
    ($base:ident: $bug:ident, $caps:expr, [$($cover:expr),* $(,)?], $desc:literal $(,)?) => {
        $crate::mutants::mutant!(@ $base: {
            const NAME: &str = stringify!($bug);
            const BYTES: [u8; $crate::mutants::snake_len(NAME)] = $crate::mutants::snake_name(NAME);
            match std::str::from_utf8(&BYTES) {
                Ok(name) => name,
                Err(_) => panic!("a type name is ASCII"),
            }
        }, $bug, $caps, [$($cover),*], $desc)
    };
    ($bug:ident, $caps:expr, [$($cover:expr),* $(,)?], $desc:literal $(,)?) => {
        $crate::mutants::mutant!(Memory: $bug, $caps, [$($cover),*], $desc)
    };
}

/// The length of [`snake_name`]`(name)`: one more byte before each capital but the first.
pub(crate) const fn snake_len(name: &str) -> usize {
    let b = name.as_bytes();
    let (mut n, mut i) = (b.len(), 1);
    while i < b.len() {
        if b[i].is_ascii_uppercase() {
            n += 1;
        }
        i += 1;
    }
    n
}

/// A CamelCase type name in snake_case, at compile time (`PutReturnsParentId` ->
/// `put_returns_parent_id`): a mutant's name from its type ([`mutant!`]). `N` is
/// [`snake_len`]`(name)`.
pub(crate) const fn snake_name<const N: usize>(name: &str) -> [u8; N] {
    let b = name.as_bytes();
    let mut out = [0u8; N];
    let (mut i, mut j) = (0, 0);
    while i < b.len() {
        if b[i].is_ascii_uppercase() {
            if i > 0 {
                out[j] = b'_';
                j += 1;
            }
            out[j] = b[i].to_ascii_lowercase();
        } else {
            out[j] = b[i];
        }
        i += 1;
        j += 1;
    }
    out
}
pub(crate) use mutant;

pub mod concurrency;
pub mod copy_thread;
pub mod delete_for_runs;
pub mod delete_thread;
pub mod delta_channel_history;
pub mod durability;
pub mod get_tuple;
mod id_support;
pub mod list;
mod list_filter;
mod list_support;
pub mod prune;
pub mod put;
mod put_values;
pub mod put_writes;
pub mod traces;
pub mod types;

/// Every module's list, in catalog order.
pub(crate) const LISTS: &[&[Mutant]] = &[
    types::MUTANTS,
    put::MUTANTS,
    put_writes::MUTANTS,
    get_tuple::MUTANTS,
    list::MUTANTS,
    delete_thread::MUTANTS,
    delete_for_runs::MUTANTS,
    copy_thread::MUTANTS,
    prune::MUTANTS,
    delta_channel_history::MUTANTS,
    concurrency::MUTANTS,
    durability::MUTANTS,
    traces::MUTANTS,
];

/// What every mutant module imports.
pub(crate) mod prelude {
    pub(crate) use std::collections::{BTreeMap, BTreeSet, HashMap};
    pub(crate) use std::sync::{Arc, Mutex};

    pub(crate) use async_trait::async_trait;
    pub(crate) use conformance_core::{
        special_write_index, write_index, ChannelVersion, Checkpoint, CheckpointConfig, CheckpointError,
        CheckpointMetadata, CheckpointTuple, DeltaChannelHistory, ListOptions, PendingWrite, PruneStrategy, TypedValue,
    };
    pub(crate) use serde_json::Value;

    pub(crate) use super::{
        apply_writes, key_of, latest_by, latest_per_namespace, parent_values, race_window, sorted_writes, truncate,
        ChannelSets, ContractRule, CpKey, KeptWrite, WriteRule, BASE,
    };
    pub(crate) use crate::bug::{Bug, Invocation, Put, PutWrites, Reply};
    pub(crate) use crate::catalog::{Cover, Mutant};
    pub(crate) use crate::wrapper::{lock, Inner};
    pub(crate) use conformance_core::Capability::{
        Concurrency as CC, CopyThread as CT, DeleteForRuns as DR, DeleteThread as DT, DeltaChannelHistory as DH,
        Durability as DU, GetTuple as GT, List as LS, Prune as PR, Put as P, PutWrites as PW, Traces as TR,
    };
    pub(crate) use Cover::{Gap as G, Rule as R, Scenario as S};
}

/// The base methods (CONTRACT §2): what a bug in every base method breaks
/// ([`Capability::BASE`], the contract's one list).
pub(crate) const BASE: &[Capability] = &Capability::BASE;

/// (thread, namespace, checkpoint id).
pub(crate) type CpKey = (String, String, String);

/// The key of a stored tuple.
pub(crate) fn key_of(t: &CheckpointTuple) -> CpKey {
    (t.config.thread_id.clone(), t.config.checkpoint_ns.clone(), t.config.checkpoint_id.clone().unwrap_or_default())
}

/// `r` cut to `limit`.
pub(crate) fn truncate(mut r: Vec<CheckpointTuple>, limit: Option<usize>) -> Vec<CheckpointTuple> {
    if let Some(l) = limit {
        r.truncate(l);
    }
    r
}

/// The newest tuple of each namespace of `tuples` (newest first).
pub(crate) fn latest_per_namespace(tuples: Vec<CheckpointTuple>) -> Vec<CheckpointTuple> {
    let mut seen = BTreeSet::new();
    tuples.into_iter().filter(|t| seen.insert(t.config.checkpoint_ns.clone())).collect()
}

/// The "latest" checkpoint of `cfg`'s thread and namespace picked by `key` (ties by id)
/// instead of by id: what a bug in how a saver finds the latest answers `get_tuple` with.
pub(crate) async fn latest_by<K: Ord>(
    saver: &Inner<'_>,
    cfg: &conformance_core::CheckpointConfig,
    key: impl Fn(&CheckpointTuple) -> K,
) -> Result<crate::bug::Reply, CheckpointError> {
    let all =
        saver.saver().list(&cfg.thread_id, &conformance_core::ListOptions::all().ns(cfg.checkpoint_ns.clone())).await?;
    let best = all.into_iter().max_by(|a, b| (key(a), &a.checkpoint.id).cmp(&(key(b), &b.checkpoint.id)));
    Ok(crate::bug::Reply::Tuple(best))
}

/// The window in which the concurrency bugs show: 5 ms on the runtime's timer, long enough
/// that calls made at the same time from other tasks (or instances) land in it.
pub(crate) async fn race_window() {
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
}

/// A write as a mutant that keeps its own copy of the writes stores it.
#[derive(Clone, Debug)]
pub(crate) struct KeptWrite {
    pub task_id: String,
    pub task_path: String,
    pub idx: i64,
    pub channel: String,
    pub value: TypedValue,
}

/// Kept writes as `get_tuple` returns them: by (task_path, task_id, index).
pub(crate) fn sorted_writes(mut ws: Vec<KeptWrite>) -> Vec<PendingWrite> {
    ws.sort_by(|a, b| (&a.task_path, &a.task_id, a.idx).cmp(&(&b.task_path, &b.task_id, b.idx)));
    ws.into_iter()
        .map(|w| PendingWrite { task_id: w.task_id, task_path: w.task_path, channel: w.channel, value: w.value })
        .collect()
}

/// How a mutant that keeps its own copy of the writes keys and replaces them; the defaults
/// are the contract's (CONTRACT §2 put_writes).
pub(crate) trait WriteRule: Default + Send + Sync + 'static {
    /// The index of the write on `channel` at `pos` in its call, after `regular_before`
    /// regular writes.
    fn index(&self, channel: &str, pos: usize, _regular_before: i64) -> i64 {
        write_index(channel, pos)
    }
    /// Whether a write replaces the stored write with its key (`None`: stored beside it).
    fn replaces(&self, special: bool, _all_special_call: bool) -> Option<bool> {
        Some(special)
    }
    /// Whether the key leaves out the task id.
    fn key_ignores_task(&self) -> bool {
        false
    }
}

/// The contract's write rule.
#[derive(Default)]
pub(crate) struct ContractRule;

impl WriteRule for ContractRule {}

/// Applies `rule` to one `put_writes` call on the kept writes `list`.
pub(crate) fn apply_writes(
    rule: &impl WriteRule,
    list: &mut Vec<KeptWrite>,
    writes: &[(String, TypedValue)],
    task_id: &str,
    task_path: &str,
) {
    let all_special = writes.iter().all(|(c, _)| special_write_index(c).is_some());
    let mut regular_before = 0i64;
    for (pos, (channel, value)) in writes.iter().enumerate() {
        let special = special_write_index(channel).is_some();
        let idx = rule.index(channel, pos, regular_before);
        if !special {
            regular_before += 1;
        }
        let new = KeptWrite {
            task_id: task_id.to_owned(),
            task_path: task_path.to_owned(),
            idx,
            channel: channel.clone(),
            value: value.clone(),
        };
        let Some(replace) = rule.replaces(special, all_special) else {
            list.push(new);
            continue;
        };
        match list.iter_mut().find(|w| w.idx == idx && (rule.key_ignores_task() || w.task_id == task_id)) {
            Some(w) if replace => *w = new,
            Some(_) => {}
            None => list.push(new),
        }
    }
}

/// Per checkpoint, a set of channels a mutant remembers from its put (the `new_versions`,
/// the carried values): a read keeps only those channels' values.
#[derive(Default)]
pub(crate) struct ChannelSets(Mutex<HashMap<CpKey, BTreeSet<String>>>);

impl ChannelSets {
    /// Remembers `channels` for the checkpoint `put` stores.
    pub fn record<'a>(&self, put: &Put, channels: impl Iterator<Item = &'a String>) {
        let key = (put.config.thread_id.clone(), put.config.checkpoint_ns.clone(), put.checkpoint.id.clone());
        lock(&self.0).insert(key, channels.cloned().collect());
    }

    /// Follows the calls that remove or copy a thread's checkpoints (`delete_thread`,
    /// `copy_thread`, `prune`), so that a checkpoint copied or put again after a delete is
    /// judged by what its own put carried, as a saver storing rows whole would.
    pub fn follow(&self, call: &Invocation) {
        let mut sets = lock(&self.0);
        match call {
            Invocation::DeleteThread { thread_id } => sets.retain(|k, _| k.0 != *thread_id),
            Invocation::Prune { thread_ids, strategy: PruneStrategy::Delete } => {
                sets.retain(|k, _| !thread_ids.contains(&k.0))
            }
            Invocation::CopyThread { source, target } => {
                let copied: Vec<(CpKey, BTreeSet<String>)> = sets
                    .iter()
                    .filter(|(k, _)| k.0 == *source)
                    .map(|(k, v)| ((target.clone(), k.1.clone(), k.2.clone()), v.clone()))
                    .collect();
                sets.extend(copied);
            }
            _ => {}
        }
    }

    /// Drops from `t` the values of channels not remembered for it (nothing when nothing
    /// was remembered).
    pub fn retain(&self, t: &mut CheckpointTuple) {
        if let Some(keep) = lock(&self.0).get(&key_of(t)) {
            Arc::make_mut(&mut t.checkpoint).channel_values.retain(|ch, _| keep.contains(ch));
        }
    }
}

/// The parent's channel values of the checkpoint `put` stores (none without a parent).
pub(crate) async fn parent_values(
    saver: &Inner<'_>,
    put: &Put,
) -> Result<BTreeMap<String, TypedValue>, CheckpointError> {
    let parent = match &put.config.checkpoint_id {
        Some(_) => saver.saver().get_tuple(&put.config).await?,
        None => None,
    };
    Ok(parent.map(|p| p.checkpoint.channel_values.clone()).unwrap_or_default())
}

#[cfg(test)]
mod name_tests {
    use super::{snake_len, snake_name};

    #[test]
    fn a_type_name_becomes_snake_case() {
        const NAME: &str = "PutReturnsParentId";
        const BYTES: [u8; snake_len(NAME)] = snake_name(NAME);
        assert_eq!(std::str::from_utf8(&BYTES), Ok("put_returns_parent_id"));
        assert_eq!(snake_name::<3>("Abc"), *b"abc");
        assert_eq!(snake_len("ListLimitPlusOne"), "list_limit_plus_one".len());
    }
}
