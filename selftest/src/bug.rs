//! The [`Bug`] trait: the one rule a mutant breaks, as hooks on the calls of the
//! [`CheckpointSaver`](conformance_core::CheckpointSaver) trait.
//!
//! A [`MutantSaver`](crate::MutantSaver) runs every call through its bug in this order:
//!
//! 1. [`Bug::thread_input`] on the thread id of a base method (`put`, `put_writes`,
//!    `get_tuple`, `list`, `delete_thread`). A base call (or `delta_channel_history`) whose
//!    thread id is then empty goes to the inner saver unchanged, so the inner saver's
//!    `InvalidConfig` comes back (CONTRACT §1 Config).
//! 2. [`Bug::input`] on the call, which may change the arguments. By default it is the
//!    call's own input hook (`put_input`, `list_input`, ...); a bug of a method without
//!    one overrides `input` and matches its [`Invocation`] variant.
//! 3. [`Bug::call`], which forwards the call to the inner saver unless the bug replaces it
//!    (stateful bugs: a read-modify-write with a window, a replay of what was stored, ...).
//! 4. [`Bug::output`] on an `Ok` [`Reply`]. By default it is the call's own output hooks:
//!    [`Bug::tuple_output`] on every tuple a read returns, then `put_output`,
//!    `get_tuple_output`, `list_output`, ...
//!
//! `get_next_version`, the one synchronous method, has only its own two hooks.
//!
//! Every hook is a no-op by default; a bug overrides the few it needs. A bug that
//! remembers something (the `new_versions` of a put, the writes as its own key rule keeps
//! them) owns that state in its own fields. One bug value serves every instance opened on
//! one storage, as the storage itself does: [`Inner::instance`](crate::Inner::instance)
//! tells the instances apart.

use std::collections::BTreeMap;

use async_trait::async_trait;
use conformance_core::{
    ChannelVersion, CheckpointConfig, CheckpointError, CheckpointTuple, DeltaChannelHistory, ListOptions, PruneStrategy,
};

use crate::wrapper::Inner;

/// The calls a bug sees: [`Invocation`], the one declaration of a saver call with its
/// arguments (the fuzzer's traces use it too), and the arguments of `put` and `put_writes`.
pub use conformance_core::{Invocation, Put, PutWrites, Reply};

/// A call as the output hooks see the caller's: the arguments that name the data, with
/// `put`'s config as the caller passed it (before [`Bug::thread_input`] and [`Bug::input`])
/// and nothing of `put_writes`.
pub type Caller = conformance_core::SaverCall<CheckpointConfig, ()>;

/// The one rule a [`MutantSaver`](crate::MutantSaver) breaks. Every hook defaults to the
/// correct behaviour (no change, or forward to the inner saver); see the module docs for
/// the order in which the wrapper runs them.
#[async_trait]
pub trait Bug: Send + Sync + 'static {
    /// The thread id of a base method (`put`, `put_writes`, `get_tuple`, `list`,
    /// `delete_thread`), before anything else.
    fn thread_input(&self, _thread_id: &mut String) {}

    /// Every async call's arguments, after [`Bug::thread_input`]: by default the call's own
    /// input hook below (none for a method without one).
    fn input(&self, call: &mut Invocation) {
        match call {
            Invocation::Put(put) => self.put_input(put),
            Invocation::PutWrites(writes) => self.put_writes_input(writes),
            Invocation::GetTuple { config } => self.get_tuple_input(config),
            Invocation::List { thread_id, options } => self.list_input(thread_id, options),
            Invocation::DeleteThread { thread_id } => self.delete_thread_input(thread_id),
            Invocation::DeleteForRuns { run_ids } => self.delete_for_runs_input(run_ids),
            Invocation::CopyThread { source, target } => self.copy_thread_input(source, target),
            Invocation::Prune { thread_ids, strategy } => self.prune_input(thread_ids, strategy),
            Invocation::DeltaChannelHistory { config, channels } => self.delta_input(config, channels),
            _ => {}
        }
    }

    /// What an async call returned (`Ok`); `caller` is the call as its caller made it. By
    /// default the call's own output hooks below (none for a method without one).
    fn output(&self, caller: &Caller, out: &mut Reply) {
        match (caller, out) {
            (Caller::Put(config), Reply::Config(out)) => self.put_output(config, out),
            (Caller::GetTuple { config }, Reply::Tuple(out)) => {
                if let Some(t) = out {
                    self.tuple_output(t);
                }
                self.get_tuple_output(config, out);
            }
            (Caller::List { options, .. }, Reply::Tuples(out)) => {
                out.iter_mut().for_each(|t| self.tuple_output(t));
                self.list_output(options, out);
            }
            (Caller::DeltaChannelHistory { .. }, Reply::History(out)) => self.delta_output(out),
            _ => {}
        }
    }

    /// The arguments of `put`.
    fn put_input(&self, _put: &mut Put) {}
    /// What `put` returns; `caller` is the config the caller passed.
    fn put_output(&self, _caller: &CheckpointConfig, _out: &mut CheckpointConfig) {}

    /// The arguments of `put_writes`.
    fn put_writes_input(&self, _call: &mut PutWrites) {}

    /// The config of `get_tuple`.
    fn get_tuple_input(&self, _config: &mut CheckpointConfig) {}
    /// Every tuple `get_tuple` and `list` return, before [`Bug::get_tuple_output`] and
    /// [`Bug::list_output`].
    fn tuple_output(&self, _tuple: &mut CheckpointTuple) {}
    /// What `get_tuple` returns; `caller` is the config the caller passed.
    fn get_tuple_output(&self, _caller: &CheckpointConfig, _out: &mut Option<CheckpointTuple>) {}

    /// The options of `list` on `thread_id`.
    fn list_input(&self, _thread_id: &str, _options: &mut ListOptions) {}
    /// What `list` returns; `caller` is the options the caller passed.
    fn list_output(&self, _caller: &ListOptions, _out: &mut Vec<CheckpointTuple>) {}

    /// The thread id of `delete_thread`.
    fn delete_thread_input(&self, _thread_id: &mut String) {}

    /// The current version of `get_next_version`.
    fn next_version_input(&self, _current: &mut Option<ChannelVersion>) {}
    /// What `get_next_version` returns for `current`.
    fn next_version_output(&self, _current: Option<&ChannelVersion>, _out: &mut ChannelVersion) {}

    /// The run ids of `delete_for_runs`.
    fn delete_for_runs_input(&self, _run_ids: &mut Vec<String>) {}
    /// The source and target of `copy_thread`.
    fn copy_thread_input(&self, _source: &mut String, _target: &mut String) {}
    /// The thread ids and strategy of `prune`.
    fn prune_input(&self, _thread_ids: &mut Vec<String>, _strategy: &mut PruneStrategy) {}
    /// The config and channels of `delta_channel_history`.
    fn delta_input(&self, _config: &mut CheckpointConfig, _channels: &mut Vec<String>) {}
    /// What `delta_channel_history` returns.
    fn delta_output(&self, _out: &mut BTreeMap<String, DeltaChannelHistory>) {}

    /// Makes the call: by default forwards it to the inner saver. A stateful bug replaces
    /// the calls it changes and forwards the rest (`saver.forward(call)`).
    ///
    /// # Errors
    /// The inner saver's error, or the bug's own.
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        saver.forward(call).await
    }
}

/// No bug: the inner saver's behaviour through the wrapper (the baseline run of every
/// base saver; never in the catalog).
#[derive(Debug, Default)]
pub struct NoBug;

impl Bug for NoBug {}
