//! Mutants of CONTRACT §2 list: order, limit, before, filter, scope, and what each listed
//! tuple carries.

use super::id_support::like_str;
use super::list_filter::*;
use super::list_support::{namespaces, newest_first, Filtered, PutOrder};
use super::prelude::*;

/// `list` returns the oldest first.
#[derive(Default)]
pub struct ListOldestFirst;

impl Bug for ListOldestFirst {
    fn list_input(&self, _thread: &str, options: &mut ListOptions) {
        options.limit = None;
    }
    fn list_output(&self, caller: &ListOptions, out: &mut Vec<CheckpointTuple>) {
        out.reverse();
        out.truncate(caller.limit.unwrap_or(usize::MAX));
    }
}

/// `list` orders by insertion (the checkpoint put last first), not by id.
#[derive(Default)]
pub struct ListInsertionOrder(PutOrder);

impl Bug for ListInsertionOrder {
    fn put_input(&self, put: &mut Put) {
        self.0.record(put);
    }
    fn list_input(&self, _thread: &str, options: &mut ListOptions) {
        options.limit = None;
    }
    fn list_output(&self, caller: &ListOptions, out: &mut Vec<CheckpointTuple>) {
        out.sort_by_key(|t| std::cmp::Reverse(self.0.of(&key_of(t)).unwrap_or(0)));
        out.truncate(caller.limit.unwrap_or(usize::MAX));
    }
}

/// `limit` keeps the oldest matches (ORDER BY ASC LIMIT), newest first.
#[derive(Default)]
pub struct ListLimitKeepsOldest;

impl Bug for ListLimitKeepsOldest {
    fn list_input(&self, _thread: &str, options: &mut ListOptions) {
        options.limit = None;
    }
    fn list_output(&self, caller: &ListOptions, out: &mut Vec<CheckpointTuple>) {
        if let Some(l) = caller.limit {
            *out = out.split_off(out.len().saturating_sub(l));
        }
    }
}

/// `limit = 0` is treated as no limit (S01).
#[derive(Default)]
pub struct ListLimitZeroUnlimited;

impl Bug for ListLimitZeroUnlimited {
    fn list_input(&self, _thread: &str, options: &mut ListOptions) {
        if options.limit == Some(0) {
            options.limit = None;
        }
    }
}

/// `limit` is applied per namespace when listing every namespace.
#[derive(Default)]
pub struct ListLimitPerNamespace;

#[async_trait]
impl Bug for ListLimitPerNamespace {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        let Invocation::List { thread_id: thread, options: o } = &call else { return saver.forward(call).await };
        if o.checkpoint_ns.is_some() || o.limit.is_none() {
            return saver.forward(call).await;
        }
        let mut r = Vec::new();
        for ns in namespaces(saver, thread).await? {
            r.extend(saver.saver().list(thread, &ListOptions { checkpoint_ns: Some(ns), ..o.clone() }).await?);
        }
        newest_first(&mut r);
        Ok(Reply::Tuples(r))
    }
}

/// `before` is ignored (S11).
#[derive(Default)]
pub struct ListBeforeIgnored;

impl Bug for ListBeforeIgnored {
    fn list_input(&self, _thread: &str, options: &mut ListOptions) {
        options.before = None;
    }
}

/// `before` is inclusive (S11).
#[derive(Default)]
pub struct ListBeforeInclusive;

impl Bug for ListBeforeInclusive {
    fn list_input(&self, _thread: &str, options: &mut ListOptions) {
        (options.limit, options.before) = (None, None);
    }
    fn list_output(&self, caller: &ListOptions, out: &mut Vec<CheckpointTuple>) {
        if let Some(b) = &caller.before {
            out.retain(|t| t.config.checkpoint_id.as_deref().is_some_and(|id| id <= b.as_str()));
        }
        out.truncate(caller.limit.unwrap_or(usize::MAX));
    }
}

/// A `before` id that is not stored is ignored (S11).
#[derive(Default)]
pub struct ListBeforeUnknownIgnored;

#[async_trait]
impl Bug for ListBeforeUnknownIgnored {
    async fn call(&self, saver: &Inner<'_>, mut call: Invocation) -> Result<Reply, CheckpointError> {
        if let Invocation::List { thread_id: thread, options: o } = &mut call {
            if let Some(before) = &o.before {
                if saver.saver().list(thread, &ListOptions::all().id(before.clone())).await?.is_empty() {
                    o.before = None;
                }
            }
        }
        saver.forward(call).await
    }
}

/// `before` is applied after `limit` (S11).
#[derive(Default)]
pub struct ListBeforeAfterLimit;

impl Bug for ListBeforeAfterLimit {
    fn list_input(&self, _thread: &str, options: &mut ListOptions) {
        options.before = None;
    }
    fn list_output(&self, caller: &ListOptions, out: &mut Vec<CheckpointTuple>) {
        if let Some(b) = &caller.before {
            out.retain(|t| t.config.checkpoint_id.as_deref().is_some_and(|id| id < b.as_str()));
        }
    }
}

/// `before` cuts by insertion order: only checkpoints put before the `before` checkpoint
/// was put (an id that is not stored still cuts by id).
#[derive(Default)]
pub struct ListBeforeByInsertionOrder(PutOrder);

#[async_trait]
impl Bug for ListBeforeByInsertionOrder {
    fn put_input(&self, put: &mut Put) {
        self.0.record(put);
    }
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        let Invocation::List { thread_id: thread, options: o } = &call else { return saver.forward(call).await };
        let Some(cut) = o.before.as_ref().and_then(|b| self.0.first_of(thread, b)) else {
            return saver.forward(call).await;
        };
        let all = ListOptions { limit: None, before: None, ..o.clone() };
        let r = saver.saver().list(thread, &all).await?;
        let r = r.into_iter().filter(|t| self.0.of(&key_of(t)).is_some_and(|n| n < cut)).collect();
        Ok(Reply::Tuples(truncate(r, o.limit)))
    }
}

/// Without a namespace, `limit` is split across the namespaces (each namespace gives its
/// newest `ceil(limit / namespaces)`), then the merge is cut at `limit`.
#[derive(Default)]
pub struct ListLimitSplitAcrossNamespaces;

#[async_trait]
impl Bug for ListLimitSplitAcrossNamespaces {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        let Invocation::List { thread_id: thread, options: o } = &call else { return saver.forward(call).await };
        let Some(limit) = o.limit.filter(|l| *l > 0 && o.checkpoint_ns.is_none()) else {
            return saver.forward(call).await;
        };
        let namespaces = namespaces(saver, thread).await?;
        let share = limit.div_ceil(namespaces.len().max(1));
        let mut r = Vec::new();
        for ns in namespaces {
            let per = ListOptions { checkpoint_ns: Some(ns), limit: Some(share), ..o.clone() };
            r.extend(saver.saver().list(thread, &per).await?);
        }
        newest_first(&mut r);
        Ok(Reply::Tuples(truncate(r, Some(limit))))
    }
}

/// `filter` is ignored (S07).
#[derive(Default)]
pub struct ListFilterIgnored;

impl Bug for ListFilterIgnored {
    fn list_input(&self, _thread: &str, options: &mut ListOptions) {
        options.filter.clear();
    }
}

/// `filter` is ignored when a `limit` is set (fast path, S07).
#[derive(Default)]
pub struct ListFilterIgnoredWithLimit;

impl Bug for ListFilterIgnoredWithLimit {
    fn list_input(&self, _thread: &str, options: &mut ListOptions) {
        if options.limit.is_some() {
            options.filter.clear();
        }
    }
}

/// Results are grouped by namespace instead of globally ordered.
#[derive(Default)]
pub struct ListGroupedByNamespace;

impl Bug for ListGroupedByNamespace {
    fn list_input(&self, _thread: &str, options: &mut ListOptions) {
        options.limit = None;
    }
    fn list_output(&self, caller: &ListOptions, out: &mut Vec<CheckpointTuple>) {
        out.sort_by(|a, b| a.config.checkpoint_ns.cmp(&b.config.checkpoint_ns));
        out.truncate(caller.limit.unwrap_or(usize::MAX));
    }
}

/// Equal ids in different namespaces come namespace descending.
#[derive(Default)]
pub struct ListEqualIdsNamespaceDescending;

impl Bug for ListEqualIdsNamespaceDescending {
    fn list_input(&self, _thread: &str, options: &mut ListOptions) {
        options.limit = None;
    }
    fn list_output(&self, caller: &ListOptions, out: &mut Vec<CheckpointTuple>) {
        out.sort_by(|a, b| {
            let by_id = b.config.checkpoint_id.cmp(&a.config.checkpoint_id);
            by_id.then_with(|| b.config.checkpoint_ns.cmp(&a.config.checkpoint_ns))
        });
        out.truncate(caller.limit.unwrap_or(usize::MAX));
    }
}

/// Without a namespace, only the root namespace is listed.
#[derive(Default)]
pub struct ListWithoutNamespaceRootOnly;

impl Bug for ListWithoutNamespaceRootOnly {
    fn list_input(&self, _thread: &str, options: &mut ListOptions) {
        options.checkpoint_ns.get_or_insert_with(String::new);
    }
}

/// The root namespace lists every namespace (S10).
#[derive(Default)]
pub struct ListRootNamespaceSpansAll;

impl Bug for ListRootNamespaceSpansAll {
    fn list_input(&self, _thread: &str, options: &mut ListOptions) {
        if options.checkpoint_ns.as_deref() == Some("") {
            options.checkpoint_ns = None;
        }
    }
}

/// The `checkpoint_id` scope is ignored.
#[derive(Default)]
pub struct ListIgnoresCheckpointId;

impl Bug for ListIgnoresCheckpointId {
    fn list_input(&self, _thread: &str, options: &mut ListOptions) {
        options.checkpoint_id = None;
    }
}

/// Every known thread is listed, not only the config's.
#[derive(Default)]
pub struct ListIgnoresThread;

#[async_trait]
impl Bug for ListIgnoresThread {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        let Invocation::List { thread_id: thread, options: o } = &call else { return saver.forward(call).await };
        let mut threads = saver.threads();
        if !threads.contains(thread) {
            threads.push(thread.clone());
        }
        let mut r = Vec::new();
        for t in threads {
            r.extend(saver.saver().list(&t, &ListOptions { limit: None, ..o.clone() }).await?);
        }
        newest_first(&mut r);
        Ok(Reply::Tuples(truncate(r, o.limit)))
    }
}

/// Listed tuples carry no pending writes (S08).
#[derive(Default)]
pub struct ListDropsPendingWrites;

impl Bug for ListDropsPendingWrites {
    fn list_output(&self, _caller: &ListOptions, out: &mut Vec<CheckpointTuple>) {
        out.iter_mut().for_each(|t| t.pending_writes.clear());
    }
}

/// Listed tuples carry no parent config.
#[derive(Default)]
pub struct ListDropsParentConfig;

impl Bug for ListDropsParentConfig {
    fn list_output(&self, _caller: &ListOptions, out: &mut Vec<CheckpointTuple>) {
        out.iter_mut().for_each(|t| t.parent_config = None);
    }
}

/// Each listed tuple that has a parent gets the next older checkpoint of its namespace as
/// its parent (a `LAG(checkpoint_id) OVER (ORDER BY checkpoint_id)` in the listing query)
/// instead of the parent its put named: right on a straight chain, wrong on a fork.
#[derive(Default)]
pub struct ListParentIsNextOlder;

impl Bug for ListParentIsNextOlder {
    fn list_output(&self, _caller: &ListOptions, out: &mut Vec<CheckpointTuple>) {
        let next_older: Vec<Option<CheckpointConfig>> = (0..out.len())
            .map(|i| {
                let ns = &out[i].config.checkpoint_ns;
                out[i + 1..].iter().find(|o| o.config.checkpoint_ns == *ns).map(|o| o.config.clone())
            })
            .collect();
        for (t, older) in out.iter_mut().zip(next_older) {
            if let (Some(p), Some(older)) = (&mut t.parent_config, older) {
                *p = older;
            }
        }
    }
}

/// A namespace scope is a `WHERE checkpoint_ns LIKE ?`: a namespace with `%` or `_` also
/// lists every namespace the pattern matches (`"sub%"` lists `"subab"`).
#[derive(Default)]
pub struct ListNamespaceLike;

#[async_trait]
impl Bug for ListNamespaceLike {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        let Invocation::List { thread_id, options } = &call else { return saver.forward(call).await };
        let Some(ns) = options.checkpoint_ns.as_ref().filter(|ns| ns.contains(['%', '_'])) else {
            return saver.forward(call).await;
        };
        let every = ListOptions { checkpoint_ns: None, limit: None, ..options.clone() };
        let found = saver.saver().list(thread_id, &every).await?;
        let matched = found.into_iter().filter(|t| like_str(ns, &t.config.checkpoint_ns)).collect();
        Ok(Reply::Tuples(truncate(matched, options.limit)))
    }
}

/// `list` orders by `ts` (`ORDER BY ts DESC`, ties by id) instead of by id, `limit`
/// applied after: the same as by id while `ts` follows the ids.
#[derive(Default)]
pub struct ListOrderedByTs;

#[async_trait]
impl Bug for ListOrderedByTs {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        let Invocation::List { thread_id, options } = &call else { return saver.forward(call).await };
        let mut r = saver.saver().list(thread_id, &ListOptions { limit: None, ..options.clone() }).await?;
        r.sort_by(|a, b| (&b.checkpoint.ts, &b.checkpoint.id).cmp(&(&a.checkpoint.ts, &a.checkpoint.id)));
        Ok(Reply::Tuples(truncate(r, options.limit)))
    }
}

/// The mutants of this module, in catalog order.
pub const MUTANTS: &[Mutant] = &[
    mutant!(ListOldestFirst, &[LS], [R("list.order"), S("S12")], "list returns the oldest checkpoint first"),
    mutant!(
        ListInsertionOrder,
        &[LS],
        [R("list.order"), S("S12"), G("7.2-out-of-order-ids")],
        "list orders by insertion (the checkpoint put last first), not by id"
    ),
    mutant!(
        ListLimitKeepsOldest,
        &[LS],
        [R("list.limit"), S("S01")],
        "limit keeps the oldest matches (ORDER BY ASC LIMIT), shown newest first"
    ),
    mutant!(
        ListLimitZeroUnlimited,
        &[LS],
        [R("list.limit"), S("S01"), G("7.2-limit-before")],
        "limit 0 is treated as no limit"
    ),
    mutant!(
        ListLimitPerNamespace,
        &[LS],
        [R("list.limit")],
        "limit is applied per namespace when listing every namespace"
    ),
    mutant!(ListBeforeIgnored, &[LS], [R("list.before"), S("S11")], "before is ignored"),
    mutant!(ListBeforeInclusive, &[LS], [R("list.before"), S("S11")], "before keeps the id it names"),
    mutant!(
        ListBeforeUnknownIgnored,
        &[LS],
        [R("list.before"), S("S11"), G("7.2-limit-before")],
        "a before id that is not stored is ignored (everything comes back)"
    ),
    mutant!(
        ListBeforeAfterLimit,
        &[LS],
        [R("list.before"), R("list.limit"), S("S11")],
        "before is applied after limit"
    ),
    mutant!(
        ListBeforeByInsertionOrder,
        &[LS],
        [R("list.before"), S("S11"), G("7.2-out-of-order-ids")],
        "before keeps the checkpoints put before the one it names, not the smaller ids"
    ),
    mutant!(should
        ListLimitSplitAcrossNamespaces,
        &[LS],
        [R("list.order_across")],
        "without a namespace, each namespace gives its newest ceil(limit / namespaces), then the merge is cut"
    ),
    mutant!(ListFilterIgnored, &[LS], [R("list.filter"), S("S07")], "the metadata filter is ignored"),
    mutant!(
        ListFilterIgnoredWithLimit,
        &[LS],
        [R("list.filter"), S("S07")],
        "the metadata filter is ignored when a limit is set (fast path)"
    ),
    mutant!(
        "list_filter_numbers_as_text",
        Filtered<ListFilterNumbersAsText>,
        &[LS],
        [R("list.filter"), G("7.2-filters")],
        "filter numbers are compared as text, so 1 does not match 1.0"
    ),
    mutant!(
        "list_filter_numbers_as_f64",
        Filtered<ListFilterNumbersAsF64>,
        &[LS],
        [R("list.filter"), G("7.2-filters")],
        "filter numbers are compared through f64, so 2^53 + 1 matches the float 2^53"
    ),
    mutant!(should
        "list_filter_null_needs_key",
        Filtered<ListFilterNullNeedsKey>,
        &[LS],
        [R("list.filter"), G("7.2-filters"), R("list.filter_strict")],
        "a null filter value does not match a missing key (upstream Postgres)"
    ),
    mutant!(should
        "list_filter_bool_equals_number",
        Filtered<ListFilterBoolEqualsNumber>,
        &[LS],
        [R("list.filter"), G("7.2-filters"), R("list.filter_strict")],
        "a boolean filter value matches 0/1 (upstream SQLite)"
    ),
    mutant!(
        "list_filter_first_key_only",
        Filtered<ListFilterFirstKeyOnly>,
        &[LS],
        [R("list.filter")],
        "only the first filter key is applied"
    ),
    mutant!(
        "list_filter_case_insensitive",
        Filtered<ListFilterCaseInsensitive>,
        &[LS],
        [R("list.filter")],
        "filter strings are compared case-insensitively"
    ),
    mutant!(should
        "list_filter_nested_containment",
        Filtered<ListFilterNestedContainment>,
        &[LS],
        [R("list.filter"), G("7.2-filters"), R("list.filter_strict")],
        "a nested filter object matches by containment, not equality (upstream Postgres)"
    ),
    mutant!(should
        ListGroupedByNamespace,
        &[LS],
        [R("list.order_across"), S("S10")],
        "list is grouped by namespace instead of in global id order (upstream InMemory)"
    ),
    mutant!(should
        ListEqualIdsNamespaceDescending,
        &[LS],
        [R("list.order_across")],
        "equal ids in different namespaces come namespace descending"
    ),
    mutant!(
        ListWithoutNamespaceRootOnly,
        &[LS],
        [R("list.scope"), S("S10"), G("7.2-list-no-ns")],
        "list without a namespace returns the root namespace only"
    ),
    mutant!(
        ListRootNamespaceSpansAll,
        &[LS],
        [R("list.scope"), S("S10")],
        "list in the root namespace returns every namespace"
    ),
    mutant!(
        ListIgnoresCheckpointId,
        &[LS],
        [R("list.scope"), G("7.2-list-id")],
        "list ignores the checkpoint_id scope"
    ),
    mutant!(ListIgnoresThread, &[LS], [R("list.scope")], "list returns the checkpoints of every thread"),
    mutant!(ListDropsPendingWrites, &[LS], [R("list.tuples"), S("S08")], "listed tuples carry no pending writes"),
    mutant!(ListDropsParentConfig, &[LS], [R("list.tuples"), S("S09")], "listed tuples carry no parent_config"),
    mutant!(
        ListParentIsNextOlder,
        &[LS],
        [R("list.tuples"), R("put.stored")],
        "list gives each tuple the next older checkpoint of its namespace as parent (a LAG over ids), wrong on forks"
    ),
    mutant!(
        ListNamespaceLike,
        &[LS],
        [R("ids.opaque"), R("list.scope")],
        "list scopes its namespace with LIKE: \"sub%\" also lists the namespace \"subab\""
    ),
    mutant!(ListOrderedByTs, &[LS], [R("list.order")], "list orders by ts (ORDER BY ts DESC), not by id"),
];
