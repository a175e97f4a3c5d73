//! Calls: [`Cx`], a case's handle on the saver under test. Every call is described by a
//! [`Call`]; an error fails the case with that description, and a read returns a
//! [`Reply`] that carries it, so a failure message names the call without the case
//! spelling it out (`get_tuple(thread=…, ns="", id=…): metadata["step"]: expected 2, got 1`).
//!
//! The `expect_*` methods make a read and compare it in one step ([`crate::compare`]).
//!
//! The calls of the base methods are here; an extended method's call is in its
//! capability's module, beside its cases (`impl Cx` in `crate::copy_thread`, ...), through
//! the same `Cx::call`.

use std::fmt::Display;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use conformance_core::{
    Call, Capability, CaseEnv, ChannelVersion, CheckpointConfig, CheckpointError, CheckpointSaver, CheckpointTuple,
    Failure, Feature, ListOptions, PendingWrite, PutHead, TypedValue, WritesHead,
};
use serde_json::json;

use crate::compare::{Checked, Entry, Order};
use crate::data::adversarial::Class;
use crate::data::{new_id, Ids, Step};
pub use crate::reply::Reply;

/// A case's handle on the saver under test: a fresh saver from the registration (through
/// core's [`CaseEnv`], which stays behind this type), the case's unique thread ids, and
/// every saver call described by a [`Call`].
///
/// A `Cx` can carry a note that goes in front of every call it describes: [`Cx::after`]
/// (`"after copy_thread(S, D)"`) or [`Cx::through`] (`"through a new instance on the same
/// storage"`).
///
/// A `Cx` made for a case of a capability with a method of its own ([`Cx::for_case`])
/// tells setup from the rule: until the case first calls that method, every call of another
/// method prepares data (a `put`, a `put_writes`, a read that the data is there), and an
/// error from it fails the case as `"setup: {call} failed: .."` ([`Reply::or_fail`]), not as
/// a failure of the case's rule. Clones ([`Cx::after`], [`Cx::through`], a task's copy)
/// share that state.
#[derive(Clone)]
pub struct Cx {
    ctx: CaseEnv,
    saver: Arc<dyn CheckpointSaver>,
    note: Option<Arc<str>>,
    /// The case's own method's capability; `None` for a property capability (concurrency,
    /// durability, traces), whose every call is part of its rule.
    own: Option<Capability>,
    /// Set at the first call of `own`'s method: from then on no call is setup.
    rule_started: Arc<AtomicBool>,
    /// How the `expect_*` listing comparisons judge order ([`Cx::in_global_order`]).
    order: Order,
}

impl Cx {
    /// Wraps a core context, without telling setup from the rule.
    pub fn new(ctx: CaseEnv) -> Self {
        let saver = ctx.saver.clone();
        Self { ctx, saver, note: None, own: None, rule_started: Arc::default(), order: Order::WithinNamespace }
    }

    /// Wraps a core context for a case of `capability` (what [`crate::spec_cases!`] does for
    /// each case): calls of other capabilities before its first own call are setup.
    pub fn for_case(ctx: CaseEnv, capability: Capability) -> Self {
        let property = matches!(capability, Capability::Concurrency | Capability::Durability | Capability::Traces);
        let own = (!property).then_some(capability);
        Self { own, ..Self::new(ctx) }
    }

    /// Whether `call`, made now, is setup (and, when it is the case's own method, marks the
    /// rule as started).
    fn setup(&self, call: &Call) -> bool {
        let Some(own) = self.own else { return false };
        if call.capability() == own {
            self.rule_started.store(true, Ordering::Release);
            return false;
        }
        !self.rule_started.load(Ordering::Acquire)
    }

    /// Whether `call` is of a form detection found missing, in a case of another
    /// capability's method: a `get_tuple` without a checkpoint_id, on a saver that reads
    /// by id only ([`conformance_core::Detection::no_latest_read`]). An `Unsupported`
    /// answer then means the case cannot check its rule ([`Reply::or_fail`] gives a
    /// [`Failure::not_run`]). Only that: an `Unsupported` from a form detection found
    /// (a saver refusing what it did before, in the same case or elsewhere) fails the case,
    /// so it cannot dodge a rule; so does any call of a property capability's case
    /// (concurrency, durability, traces), whose every call is its rule.
    fn form_missing(&self, call: &Call) -> bool {
        let latest_read = matches!(call, Call::GetTuple { config } if config.checkpoint_id.is_none());
        latest_read && self.ctx.no_latest_read() && self.own.is_some_and(|own| own != Capability::GetTuple)
    }

    /// Runs the case `f` of `capability` on `ctx` (what [`crate::spec_cases!`] does for
    /// each case, through [`Cx::for_case`]), judging reads as the saver returns them: without
    /// the fields it declared it lacks ([`crate::compare::judging`]).
    pub async fn run<F, Fut>(ctx: CaseEnv, capability: Capability, f: F) -> Checked
    where
        F: FnOnce(Self) -> Fut,
        Fut: std::future::Future<Output = Checked>,
    {
        let lacks = ctx.lacks().clone();
        crate::compare::judging(lacks, f(Self::for_case(ctx, capability))).await
    }

    /// True unless the saver declared that it lacks `feature` ([`CaseEnv::has`]): for a case
    /// that checks its rule with other data on such a saver.
    pub fn has(&self, feature: Feature) -> bool {
        self.ctx.has(feature)
    }

    /// False when the saver declared that its reads carry no `task_path`
    /// ([`conformance_core::Fixture::without_task_path_on_reads`]).
    pub fn task_path_on_reads(&self) -> bool {
        self.ctx.task_path_on_reads()
    }

    fn noted(&self, note: String) -> Self {
        let note = match &self.note {
            Some(old) => format!("{old}, {note}"),
            None => note,
        };
        Self { note: Some(note.into()), ..self.clone() }
    }

    /// The same saver, with every call described as happening `when`
    /// (`cx.after("after prune([t], keep_latest)")`).
    pub fn after(&self, when: impl Display) -> Self {
        self.noted(when.to_string())
    }

    /// The same saver, its `expect_*` listing comparisons judging the order across
    /// namespaces too ([`Order::Global`]): the SHOULD rule of one id order across namespaces,
    /// equal ids namespace ascending (CONTRACT §2 list "Order"), for the SHOULD cases about
    /// it. Otherwise only the order within each namespace counts (MUST).
    pub fn in_global_order(&self) -> Self {
        Self { order: Order::Global, ..self.clone() }
    }

    /// Another instance of the saver (a second one on the same storage), its calls
    /// described as made `"through {instance}"`.
    pub fn through(&self, saver: Arc<dyn CheckpointSaver>, instance: impl Display) -> Self {
        Self { saver, ..self.noted(format!("through {instance}")) }
    }

    /// [`Cx::through`] a second instance opened on the same storage ([`Cx::reopen`]).
    ///
    /// # Errors
    /// When the registration cannot reopen its storage or opening failed.
    pub async fn reopened(&self, instance: impl Display) -> Result<Cx, Failure> {
        Ok(self.through(self.reopen().await?, instance))
    }

    /// The saver the calls go to (the case's, or the instance of [`Cx::through`]).
    pub fn saver(&self) -> Arc<dyn CheckpointSaver> {
        self.saver.clone()
    }

    /// A thread id unique to this case (see [`CaseEnv::thread`]).
    pub fn thread(&self, label: &str) -> String {
        self.ctx.thread(label)
    }

    /// A root-namespace config on a fresh thread.
    pub fn config(&self, label: &str) -> CheckpointConfig {
        CheckpointConfig::new(self.thread(label))
    }

    /// The case's data ([`CaseEnv::case_data`]): a user's trace file's text for a case
    /// made from one (`--traces DIR`), empty for a compiled case.
    pub fn case_data(&self) -> &'static str {
        self.ctx.case_data()
    }

    /// True when the registration can open a second instance on the same storage.
    pub fn can_reopen(&self) -> bool {
        self.ctx.can_reopen()
    }

    /// Opens another instance on the same storage (see [`CaseEnv::reopen`]).
    ///
    /// # Errors
    /// When the registration cannot reopen its storage or opening failed.
    pub async fn reopen(&self) -> Result<Arc<dyn CheckpointSaver>, Failure> {
        self.ctx.reopen().await
    }

    /// The fixture's storage location, if it names one (see [`CaseEnv::location`]).
    pub fn location(&self) -> Option<&str> {
        self.ctx.location()
    }

    /// The name of the registration the case runs under.
    pub fn registration_name(&self) -> &str {
        self.ctx.registration_name()
    }

    /// Records a fact about the run (see [`CaseEnv::fact`]).
    pub fn fact(&self, key: impl Into<String>, value: impl Into<serde_json::Value>) {
        self.ctx.fact(key, value);
    }

    pub(crate) async fn call<T>(
        &self,
        call: Call,
        result: impl Future<Output = Result<T, CheckpointError>>,
    ) -> Reply<Result<T, CheckpointError>> {
        let (setup, form_missing) = (self.setup(&call), self.form_missing(&call));
        Reply { call, note: self.note.clone(), setup, form_missing, value: result.await }
    }

    /// `put(config, step)` returning the raw result, for cases about errors and about the
    /// returned config.
    pub async fn try_put(
        &self,
        config: &CheckpointConfig,
        step: Step,
    ) -> Reply<Result<CheckpointConfig, CheckpointError>> {
        let call = Call::Put(PutHead { config: config.clone(), checkpoint_id: step.checkpoint.id.clone() });
        self.call(call, self.saver.put(config, step.checkpoint, step.metadata, step.new_versions)).await
    }

    /// `put(config, step)`: the stored config, or a failure naming the call.
    ///
    /// # Errors
    /// When the saver returned an error.
    pub async fn put(&self, config: &CheckpointConfig, step: Step) -> Result<CheckpointConfig, Failure> {
        Ok(self.try_put(config, step).await.or_fail()?.into_value())
    }

    /// `put(config, step)` of an adversarial identifier of `class` (in the config or the
    /// step): the stored config, or `None` when the saver refused it with `InvalidInput` and
    /// the class may be refused ([`Class::may_be_refused`]), after checking that nothing
    /// was stored (no checkpoint with the step's id on the config's thread and namespace).
    ///
    /// # Errors
    /// Any other error, or a refused put that stored something.
    pub async fn put_or_refused(
        &self,
        class: Class,
        config: &CheckpointConfig,
        step: Step,
    ) -> Result<Option<CheckpointConfig>, Failure> {
        let stored = config.clone().with_id(step.id());
        let reply = self.try_put(config, step).await;
        if class.may_be_refused() && matches!(reply.value, Err(CheckpointError::InvalidInput(_))) {
            self.after(format!("after {} was refused", reply.call())).get_none(&stored).await?;
            return Ok(None);
        }
        Ok(Some(reply.or_fail()?.into_value()))
    }

    /// Puts a chain of `n` checkpoints on (`thread`, `ns`), each the parent of the next,
    /// with metadata `step = i`; returns the stored configs, oldest first.
    ///
    /// # Errors
    /// When a `put` failed.
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

    /// Puts a chain of `n` checkpoints on (`thread`, `ns`) where checkpoint i stores channel
    /// `step` = i at version i + 1 and metadata `step` = i (upstream's helper); returns the
    /// stored configs, oldest first.
    ///
    /// # Errors
    /// When a `put` failed.
    pub async fn value_chain(&self, thread: &str, ns: &str, n: i64) -> Result<Vec<CheckpointConfig>, Failure> {
        let mut parent = CheckpointConfig::new(thread).with_ns(ns);
        let mut out = Vec::new();
        for i in 0..n {
            parent = self.put(&parent, Step::fresh().value("step", json!(i), i + 1).meta("step", json!(i))).await?;
            out.push(parent.clone());
        }
        Ok(out)
    }

    /// `put_writes` returning the raw result, for cases about errors.
    pub async fn try_put_writes(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(&str, TypedValue)>,
        task_id: &str,
        task_path: &str,
    ) -> Reply<Result<(), CheckpointError>> {
        let call = Call::PutWrites(WritesHead {
            config: config.clone(),
            channels: writes.iter().map(|(c, _)| (*c).to_owned()).collect(),
            task_id: task_id.to_owned(),
            task_path: task_path.to_owned(),
        });
        let writes = writes.into_iter().map(|(c, v)| (c.to_owned(), v)).collect();
        self.call(call, self.saver.put_writes(config, writes, task_id, task_path)).await
    }

    /// `put_writes(config, writes, task_id, task_path)`.
    ///
    /// # Errors
    /// A failure naming the call when the saver returned an error.
    pub async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(&str, TypedValue)>,
        task_id: &str,
        task_path: &str,
    ) -> Checked {
        self.try_put_writes(config, writes, task_id, task_path).await.or_fail().map(|_| ())
    }

    /// `get_tuple` returning the raw result, for cases about errors.
    pub async fn try_get(&self, config: &CheckpointConfig) -> Reply<Result<Option<CheckpointTuple>, CheckpointError>> {
        self.call(Call::GetTuple { config: config.clone() }, self.saver.get_tuple(config)).await
    }

    /// `get_tuple(config)`.
    ///
    /// # Errors
    /// A failure naming the call when the saver returned an error.
    pub async fn get(&self, config: &CheckpointConfig) -> Result<Reply<Option<CheckpointTuple>>, Failure> {
        self.try_get(config).await.or_fail()
    }

    /// `get_tuple(config)`, which must return a checkpoint.
    ///
    /// # Errors
    /// On an error, or `"{call}: expected a checkpoint, got none"`.
    pub async fn get_some(&self, config: &CheckpointConfig) -> Result<Reply<CheckpointTuple>, Failure> {
        let reply = self.get(config).await?;
        match reply.value {
            Some(value) => Ok(Reply {
                call: reply.call,
                note: reply.note,
                setup: reply.setup,
                form_missing: reply.form_missing,
                value,
            }),
            None => {
                let call = Reply {
                    call: reply.call,
                    note: reply.note,
                    setup: reply.setup,
                    form_missing: reply.form_missing,
                    value: (),
                };
                Err(Failure::new(format!("{call}: expected a checkpoint, got none")))
            }
        }
    }

    /// Fails unless `get_tuple(config)` returns none.
    ///
    /// # Errors
    /// On an error, or `"{call}: expected none, got checkpoint .."`.
    pub async fn get_none(&self, config: &CheckpointConfig) -> Checked {
        let reply = self.get(config).await?;
        match &*reply {
            None => Ok(()),
            Some(t) => {
                Err(Failure::new(format!("{reply}: expected none, got checkpoint {} ({})", t.checkpoint.id, t.config)))
            }
        }
    }

    /// `list(thread_id, options)`. Nothing is judged here: the `expect_*` comparisons judge
    /// every listed tuple, a listed config naming another checkpoint included
    /// ([`crate::compare::Diffs::tuples`]), and a case reading the tuples itself compares
    /// them through [`Diffs`](crate::compare::Diffs).
    ///
    /// # Errors
    /// A failure naming the call when the saver returned an error.
    pub async fn list(&self, thread_id: &str, options: &ListOptions) -> Result<Reply<Vec<CheckpointTuple>>, Failure> {
        let call = Call::List { thread_id: thread_id.to_owned(), options: options.clone() };
        self.call(call, self.saver.list(thread_id, options)).await.or_fail()
    }

    /// Every checkpoint of `thread_id` in every namespace: `list(thread, ns=<all>)` (newest
    /// id first, then namespace ascending), a snapshot of the thread to compare.
    ///
    /// # Errors
    /// A failure naming the call when the saver returned an error.
    pub async fn list_all(&self, thread_id: &str) -> Result<Reply<Vec<CheckpointTuple>>, Failure> {
        self.list(thread_id, &ListOptions::all()).await
    }

    /// The ids `list` returns, in order.
    ///
    /// # Errors
    /// A failure naming the call when the saver returned an error.
    pub async fn list_ids(&self, thread_id: &str, options: &ListOptions) -> Result<Vec<String>, Failure> {
        Ok(self.list(thread_id, options).await?.ids())
    }

    /// `delete_thread(thread_id)`.
    ///
    /// # Errors
    /// A failure naming the call when the saver returned an error.
    pub async fn delete_thread(&self, thread_id: &str) -> Checked {
        let call = Call::DeleteThread { thread_id: thread_id.to_owned() };
        self.call(call, self.saver.delete_thread(thread_id)).await.or_fail().map(|_| ())
    }

    /// `get_next_version(current)` (it cannot fail).
    pub fn next_version(&self, current: Option<&ChannelVersion>) -> Reply<ChannelVersion> {
        let value = self.saver.get_next_version(current);
        let call = Call::GetNextVersion { current: current.cloned() };
        Reply { setup: self.setup(&call), form_missing: self.form_missing(&call), call, note: self.note.clone(), value }
    }

    /// Fails unless `get_tuple(config)` returns exactly `expected`, every field
    /// ([`crate::compare::Diffs::tuple`]).
    ///
    /// # Errors
    /// On an error, no checkpoint, or every differing field.
    pub async fn expect_tuple(&self, config: &CheckpointConfig, expected: &CheckpointTuple) -> Checked {
        let got = self.get_some(config).await?;
        got.diffs().tuple(expected, &got).finish()
    }

    /// [`Cx::expect_tuple`] without the parent config ([`crate::compare::Diffs::tuple_except_parent`]).
    ///
    /// # Errors
    /// On an error, no checkpoint, or every differing field.
    pub async fn expect_tuple_except_parent(&self, config: &CheckpointConfig, expected: &CheckpointTuple) -> Checked {
        let got = self.get_some(config).await?;
        got.diffs().tuple_except_parent(expected, &got).finish()
    }

    /// Fails unless `get_tuple(config)` returns a checkpoint whose `pending_writes` are
    /// exactly `expected`.
    ///
    /// # Errors
    /// On an error, no checkpoint, or other writes.
    pub async fn expect_writes(&self, config: &CheckpointConfig, expected: &[PendingWrite]) -> Checked {
        self.get_some(config).await?.expect_writes(expected)
    }

    /// Fails unless `list(thread, ns=<all>)` returns exactly `expected`, tuple for tuple
    /// ([`Diffs::tuples`](crate::compare::Diffs::tuples): matched by namespace and id, in
    /// id order within each namespace): "the thread reads as it did".
    ///
    /// # Errors
    /// On an error, or every difference.
    pub async fn expect_listed(&self, thread_id: &str, expected: &[CheckpointTuple]) -> Checked {
        let got = self.list_all(thread_id).await?;
        got.diffs().tuples(expected, &got).finish()
    }

    /// Fails unless `list(thread_id, options)` returns exactly the checkpoint ids
    /// `expected`, in that order within each namespace (each expected id is taken in the
    /// namespace it is listed in).
    ///
    /// # Errors
    /// On an error, or every difference.
    pub async fn expect_ids(&self, thread_id: &str, options: &ListOptions, expected: &[&str]) -> Checked {
        let got = self.list(thread_id, options).await?;
        let ns_of = |id: &str| got.iter().find(|t| t.checkpoint.id == id).map(|t| t.config.checkpoint_ns.clone());
        let want: Vec<Entry> =
            expected.iter().map(|id| Entry::new(ns_of(id).unwrap_or_default(), *id, format_args!("{id:?}"))).collect();
        let have: Vec<Entry> = got
            .iter()
            .map(|t| Entry::new(&t.config.checkpoint_ns, &t.checkpoint.id, format_args!("{:?}", t.checkpoint.id)))
            .collect();
        got.diffs().configs_match(&got).entries("ids", &want, &have, self.order, None).finish()
    }

    /// Fails unless `list(thread_id, options)` returns exactly the checkpoints labelled
    /// `want` in `ids`, in that order within each namespace; the message shows labels and a
    /// legend of the ids.
    ///
    /// # Errors
    /// On an error, or every difference.
    pub async fn expect_list(&self, ids: &Ids, thread_id: &str, options: &ListOptions, want: &[&str]) -> Checked {
        let got = self.list(thread_id, options).await?;
        let ns_of = |label: &str| {
            let id = ids.id(label);
            got.iter().find(|t| t.checkpoint.id == id).map(|t| t.config.checkpoint_ns.clone())
        };
        let want: Vec<Entry> =
            want.iter().map(|l| Entry::new(ns_of(l).unwrap_or_default(), ids.id(l), format_args!("{l:?}"))).collect();
        self.listed_as(ids, &got, "ids", &want, self.order)
    }

    /// Like [`Cx::expect_list`], for results that span namespaces: `want` is a list of
    /// (namespace, label) pairs, in id order within each namespace (the MUST order; how
    /// namespaces interleave is judged only through [`Cx::in_global_order`]).
    ///
    /// # Errors
    /// On an error, or every difference.
    pub async fn expect_list_ns(
        &self,
        ids: &Ids,
        thread_id: &str,
        options: &ListOptions,
        want: &[(&str, &str)],
    ) -> Checked {
        let got = self.list(thread_id, options).await?;
        self.listed_as(ids, &got, "(ns, id)", &pairs(ids, want), self.order)
    }

    /// Compares the listing `got` with `want` ([`crate::compare::Diffs::entries`]), every
    /// listed config naming another checkpoint included, the listed tuples shown by their
    /// labels in `ids` (pairs with their namespace when `field` is `(ns, id)`).
    fn listed_as(
        &self,
        ids: &Ids,
        got: &Reply<Vec<CheckpointTuple>>,
        field: &str,
        want: &[Entry],
        order: Order,
    ) -> Checked {
        let pairs = field == "(ns, id)";
        let have: Vec<Entry> = got
            .iter()
            .map(|t| {
                let label = ids.label(&t.checkpoint.id);
                let ns = &t.config.checkpoint_ns;
                if pairs {
                    Entry::new(ns, &t.checkpoint.id, format_args!("({ns:?}, {label:?})"))
                } else {
                    Entry::new(ns, &t.checkpoint.id, format_args!("{label:?}"))
                }
            })
            .collect();
        got.diffs().configs_match(got).entries(field, want, &have, order, Some(&ids.legend())).finish()
    }
}

/// `(namespace, label)` pairs as listing entries shown `("ns", "label")`.
fn pairs(ids: &Ids, want: &[(&str, &str)]) -> Vec<Entry> {
    want.iter().map(|(ns, l)| Entry::new(*ns, ids.id(l), format_args!("({ns:?}, {l:?})"))).collect()
}
