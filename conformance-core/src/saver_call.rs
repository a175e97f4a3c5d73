//! [`SaverCall`]: the one list of the [`crate::CheckpointSaver`] methods as data. Its two
//! uses differ only in what `put` and `put_writes` carry: an [`Invocation`] holds
//! every argument (a trace step, a fuzzer's call, a bridge request, a mutant's view), a
//! [`crate::Call`] only what names the data touched (failure messages). Adding a saver
//! method adds one variant here, its arms in [`SaverCall::view`], [`SaverCall::capability`],
//! [`SaverCall::method`] ([`METHODS`]), [`SaverCall::reply_reader`], [`Invocation::probe`],
//! [`Invocation::thread_ids`] (from which [`Invocation::breaks_config`] follows),
//! [`Invocation::send`], `Display` and the method of [`crate::forward_saver!`]: all in
//! this file. Every saver of the kit that passes calls on
//! (the traced saver every case runs on, the self-test's mutants, the bridge's client) is a
//! [`Forward`] and gets its methods from that macro, so none lists the methods again.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::reply::{ReadReply, Reply};
use crate::types::{check_thread_id, shown_id, ChannelVersion, CheckpointConfig, ListOptions, PruneStrategy};
use crate::types::{ChannelVersions, Checkpoint, CheckpointMetadata, TypedValue};
use crate::{Capability, CheckpointError, CheckpointSaver};

/// The arguments of `put` (CONTRACT §2 put).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Put {
    /// Thread, namespace and parent checkpoint id.
    pub config: CheckpointConfig,
    /// The checkpoint to store.
    pub checkpoint: Checkpoint,
    /// Its metadata.
    pub metadata: CheckpointMetadata,
    /// The channels whose values this put carries new versions of.
    pub new_versions: ChannelVersions,
}

/// The arguments of `put_writes` (CONTRACT §2 put_writes).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PutWrites {
    /// Thread, namespace and the checkpoint the writes belong to.
    pub config: CheckpointConfig,
    /// `(channel, value)` in call order (`[channel, value]` pairs in JSON).
    pub writes: Vec<(String, TypedValue)>,
    /// The writing task.
    pub task_id: String,
    /// The writing task's path.
    pub task_path: String,
}

/// One call of a saver method with all its arguments (CONTRACT §2 and §3 name the
/// methods): a [`SaverCall`] whose `put` and `put_writes` carry [`Put`] and [`PutWrites`];
/// [`Invocation::call`] (in `call.rs`) is its short form for messages.
/// In JSON it is an object whose `call` names the method (snake_case) and whose other keys
/// are the arguments by name, as a trace step writes it:
///
/// ```
/// use conformance_core::{CheckpointConfig, Invocation};
/// let get = Invocation::GetTuple { config: CheckpointConfig::new("t1") };
/// let json = serde_json::to_value(&get).unwrap();
/// assert_eq!(json["call"], "get_tuple");
/// assert_eq!(json["config"]["thread_id"], "t1");
/// assert_eq!(get.call().to_string(), r#"get_tuple(thread=t1, ns="", id=none)"#);
/// ```
pub type Invocation = SaverCall<Put, PutWrites>;

/// One call of a saver method with its arguments (CONTRACT §2 and §3 name the methods),
/// `put`'s arguments being `P` and `put_writes`'s `W`. In JSON it is an object whose `call`
/// names the method (snake_case) and whose other keys are the arguments by name, as a
/// trace step writes it (docs/trace-format.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "call", rename_all = "snake_case")]
pub enum SaverCall<P, W> {
    /// `put(config, checkpoint, metadata, new_versions)`.
    Put(P),
    /// `put_writes(config, writes, task_id, task_path)`.
    PutWrites(W),
    /// `get_tuple(config)`.
    GetTuple {
        /// The config: thread, namespace and, when set, the exact checkpoint.
        config: CheckpointConfig,
    },
    /// `list(thread_id, options)`.
    List {
        /// The thread listed.
        thread_id: String,
        /// Namespace, id, filter, before, limit.
        options: ListOptions,
    },
    /// `delete_thread(thread_id)`.
    DeleteThread {
        /// The thread deleted.
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
        /// The threads pruned.
        thread_ids: Vec<String>,
        /// `keep_latest` or `delete`.
        strategy: PruneStrategy,
    },
    /// `delta_channel_history(config, channels)`.
    DeltaChannelHistory {
        /// The config of the target checkpoint.
        config: CheckpointConfig,
        /// The channels asked for.
        channels: Vec<String>,
    },
    /// `get_next_version(current)`: the one synchronous method.
    GetNextVersion {
        /// The current version, if any.
        current: Option<ChannelVersion>,
    },
}

impl<P, W> SaverCall<P, W> {
    /// The same call with `put`'s and `put_writes`'s arguments seen through `put` and
    /// `writes`; every other variant's arguments are cloned (ids and options, no values).
    pub fn view<P2, W2>(&self, put: impl FnOnce(&P) -> P2, writes: impl FnOnce(&W) -> W2) -> SaverCall<P2, W2> {
        match self {
            Self::Put(p) => SaverCall::Put(put(p)),
            Self::PutWrites(w) => SaverCall::PutWrites(writes(w)),
            Self::GetTuple { config } => SaverCall::GetTuple { config: config.clone() },
            Self::List { thread_id, options } => {
                SaverCall::List { thread_id: thread_id.clone(), options: options.clone() }
            }
            Self::DeleteThread { thread_id } => SaverCall::DeleteThread { thread_id: thread_id.clone() },
            Self::DeleteForRuns { run_ids } => SaverCall::DeleteForRuns { run_ids: run_ids.clone() },
            Self::CopyThread { source, target } => {
                SaverCall::CopyThread { source: source.clone(), target: target.clone() }
            }
            Self::Prune { thread_ids, strategy } => {
                SaverCall::Prune { thread_ids: thread_ids.clone(), strategy: *strategy }
            }
            Self::DeltaChannelHistory { config, channels } => {
                SaverCall::DeltaChannelHistory { config: config.clone(), channels: channels.clone() }
            }
            Self::GetNextVersion { current } => SaverCall::GetNextVersion { current: current.clone() },
        }
    }

    /// The capability whose method this is (`get_next_version` belongs to `put`, which
    /// uses it to number channel versions; CONTRACT §2).
    pub fn capability(&self) -> Capability {
        match self {
            Self::Put(_) | Self::GetNextVersion { .. } => Capability::Put,
            Self::PutWrites(_) => Capability::PutWrites,
            Self::GetTuple { .. } => Capability::GetTuple,
            Self::List { .. } => Capability::List,
            Self::DeleteThread { .. } => Capability::DeleteThread,
            Self::DeleteForRuns { .. } => Capability::DeleteForRuns,
            Self::CopyThread { .. } => Capability::CopyThread,
            Self::Prune { .. } => Capability::Prune,
            Self::DeltaChannelHistory { .. } => Capability::DeltaChannelHistory,
        }
    }

    /// The method's name as the contract, traces and the bridge protocol spell it
    /// (`put_writes`): its entry of [`METHODS`].
    pub fn method(&self) -> &'static str {
        METHODS[match self {
            Self::Put(_) => 0,
            Self::PutWrites(_) => 1,
            Self::GetTuple { .. } => 2,
            Self::List { .. } => 3,
            Self::DeleteThread { .. } => 4,
            Self::DeleteForRuns { .. } => 5,
            Self::CopyThread { .. } => 6,
            Self::Prune { .. } => 7,
            Self::DeltaChannelHistory { .. } => 8,
            Self::GetNextVersion { .. } => 9,
        }]
    }

    /// How the method's return value is read from its JSON form (a bridge child's answer,
    /// [`Reply`]'s wire form): the reader of its [`Reply`] variant.
    pub fn reply_reader(&self) -> ReadReply {
        match self {
            Self::Put(_) => Reply::read_config,
            Self::PutWrites(_)
            | Self::DeleteThread { .. }
            | Self::DeleteForRuns { .. }
            | Self::CopyThread { .. }
            | Self::Prune { .. } => Reply::read_done,
            Self::GetTuple { .. } => Reply::read_tuple,
            Self::List { .. } => Reply::read_tuples,
            Self::DeltaChannelHistory { .. } => Reply::read_history,
            Self::GetNextVersion { .. } => Reply::read_version,
        }
    }
}

/// The saver methods' names in [`SaverCall`]'s order, as its serde `call` tag writes them
/// (a trace step's `call`, a bridge request's `op`).
pub const METHODS: [&str; 10] = [
    "put",
    "put_writes",
    "get_tuple",
    "list",
    "delete_thread",
    "delete_for_runs",
    "copy_thread",
    "prune",
    "delta_channel_history",
    "get_next_version",
];

/// The id of the checkpoint detection's probes name (CONTRACT §5): a `put` probe stores it,
/// a `put_writes` probe writes to it, a by-id read asks for it.
pub(crate) const PROBE_CHECKPOINT_ID: &str = "00000000-0000-7000-8000-000000000001";

impl Invocation {
    /// Detection's probe of `capability` (CONTRACT §5: an `Unsupported` answer means "not
    /// implemented"): a harmless call of its method on the unused thread `thread`, or `None`
    /// for a capability that is no method (`concurrency`, `durability`, `traces`). A `put`
    /// or `put_writes` probe stores into `thread`, which detection deletes afterwards; the
    /// `get_tuple` probe is the latest form (detection tries the by-id form after an
    /// `Unsupported`).
    pub(crate) fn probe(capability: Capability, thread: &str) -> Option<Invocation> {
        let config = CheckpointConfig::new(thread);
        let with_id = config.clone().with_id(PROBE_CHECKPOINT_ID);
        let thread_id = thread.to_owned();
        Some(match capability {
            Capability::Put => {
                let checkpoint = Checkpoint { v: 1, id: PROBE_CHECKPOINT_ID.into(), ..Checkpoint::default() };
                Invocation::Put(Put {
                    config,
                    checkpoint,
                    metadata: Default::default(),
                    new_versions: Default::default(),
                })
            }
            Capability::PutWrites => Invocation::PutWrites(PutWrites {
                config: with_id,
                writes: vec![("probe".into(), TypedValue::json(&1.into()))],
                task_id: "probe-task".into(),
                task_path: String::new(),
            }),
            Capability::GetTuple => Invocation::GetTuple { config },
            Capability::List => Invocation::List { thread_id, options: ListOptions::all() },
            Capability::DeleteThread => Invocation::DeleteThread { thread_id },
            Capability::DeleteForRuns => Invocation::DeleteForRuns { run_ids: vec![format!("{thread}-run")] },
            Capability::CopyThread => Invocation::CopyThread { source: thread_id, target: format!("{thread}-copy") },
            Capability::Prune => Invocation::Prune { thread_ids: vec![thread_id], strategy: PruneStrategy::KeepLatest },
            Capability::DeltaChannelHistory => Invocation::DeltaChannelHistory { config: with_id, channels: vec![] },
            Capability::Concurrency | Capability::Durability | Capability::Traces => return None,
        })
    }

    /// The thread ids the call names: its config's, its thread argument, `copy_thread`'s
    /// source and target, `prune`'s list; none for `delete_for_runs` and
    /// `get_next_version`.
    pub fn thread_ids(&self) -> Vec<&str> {
        match self {
            Invocation::Put(Put { config, .. })
            | Invocation::PutWrites(PutWrites { config, .. })
            | Invocation::GetTuple { config }
            | Invocation::DeltaChannelHistory { config, .. } => vec![&config.thread_id],
            Invocation::List { thread_id, .. } | Invocation::DeleteThread { thread_id } => vec![thread_id],
            Invocation::CopyThread { source, target } => vec![source, target],
            Invocation::Prune { thread_ids, .. } => thread_ids.iter().map(String::as_str).collect(),
            Invocation::DeleteForRuns { .. } | Invocation::GetNextVersion { .. } => Vec::new(),
        }
    }

    /// True when the call's config or thread ids break CONTRACT §1 "Config" (an empty
    /// thread id; `put_writes` without a checkpoint id): the saver must refuse it with
    /// `InvalidConfig`, so a saver in a language whose errors carry no finer kind (a bridge
    /// child's `InvalidInput`) is read as refusing it so.
    pub fn breaks_config(&self) -> bool {
        let no_id = matches!(self, Invocation::PutWrites(w) if w.config.checkpoint_id.is_none());
        no_id || self.thread_ids().iter().any(|t| check_thread_id(t).is_err())
    }

    /// Makes this call on `saver` and gives back what it returned, as a [`Reply`] of the
    /// method's return type (CONTRACT §2 and §3 name the methods).
    ///
    /// # Errors
    /// The saver's own error, unchanged.
    pub async fn send(self, saver: &dyn CheckpointSaver) -> Result<Reply, CheckpointError> {
        let s = saver;
        Ok(match self {
            Invocation::Put(p) => Reply::Config(s.put(&p.config, p.checkpoint, p.metadata, p.new_versions).await?),
            Invocation::PutWrites(w) => {
                s.put_writes(&w.config, w.writes, &w.task_id, &w.task_path).await?;
                Reply::Done
            }
            Invocation::GetTuple { config } => Reply::Tuple(s.get_tuple(&config).await?),
            Invocation::List { thread_id, options } => Reply::Tuples(s.list(&thread_id, &options).await?),
            Invocation::DeleteThread { thread_id } => {
                s.delete_thread(&thread_id).await?;
                Reply::Done
            }
            Invocation::DeleteForRuns { run_ids } => {
                s.delete_for_runs(&run_ids).await?;
                Reply::Done
            }
            Invocation::CopyThread { source, target } => {
                s.copy_thread(&source, &target).await?;
                Reply::Done
            }
            Invocation::Prune { thread_ids, strategy } => {
                s.prune(&thread_ids, strategy).await?;
                Reply::Done
            }
            Invocation::DeltaChannelHistory { config, channels } => {
                Reply::History(s.delta_channel_history(&config, &channels).await?)
            }
            Invocation::GetNextVersion { current } => Reply::Version(s.get_next_version(current.as_ref())),
        })
    }
}

/// The form failure messages use: `get_tuple(thread=t1, ns="", id=c1)`; `put` and
/// `put_writes` as their arguments `P` and `W` display themselves ([`crate::PutHead`],
/// [`crate::WritesHead`]).
impl<P: fmt::Display, W: fmt::Display> fmt::Display for SaverCall<P, W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Put(p) => p.fmt(f),
            Self::PutWrites(w) => w.fmt(f),
            Self::GetTuple { config } => write!(f, "get_tuple({config})"),
            Self::List { thread_id, options } => {
                write!(f, "list(thread={}, {})", shown_id(thread_id), list_options(options))
            }
            Self::DeleteThread { thread_id } => write!(f, "delete_thread({})", shown_id(thread_id)),
            Self::DeleteForRuns { run_ids } => write!(f, "delete_for_runs({run_ids:?})"),
            Self::CopyThread { source, target } => {
                write!(f, "copy_thread(source={}, target={})", shown_id(source), shown_id(target))
            }
            Self::Prune { thread_ids, strategy } => write!(f, "prune({thread_ids:?}, {strategy})"),
            Self::DeltaChannelHistory { config, channels } => {
                write!(f, "delta_channel_history({config}, channels={channels:?})")
            }
            Self::GetNextVersion { current } => write!(f, "get_next_version({current:?})"),
        }
    }
}

/// `ns=.., id=.., filter=.., before=.., limit=..`: the namespace always (`ns=<all>` when
/// none is given), the other options only when they are set.
fn list_options(o: &ListOptions) -> String {
    let mut parts = Vec::new();
    match &o.checkpoint_ns {
        Some(ns) => parts.push(format!("ns={ns:?}")),
        None => parts.push("ns=<all>".to_owned()),
    }
    if let Some(id) = &o.checkpoint_id {
        parts.push(format!("id={}", shown_id(id)));
    }
    if !o.filter.is_empty() {
        parts.push(format!("filter={}", serde_json::Value::Object(o.filter.clone())));
    }
    if let Some(b) = &o.before {
        parts.push(format!("before={}", shown_id(b)));
    }
    if let Some(l) = o.limit {
        parts.push(format!("limit={l}"));
    }
    parts.join(", ")
}

/// A saver that passes every call on as data: the traced saver every case runs on, the
/// self-test's mutants, the bridge's client. [`crate::forward_saver!`] writes its
/// [`CheckpointSaver`] methods, each of which builds its [`Invocation`], gives it to
/// [`Forward::send`] and returns the [`Reply`] as the method's return type (a reply of
/// another kind is a `Storage` error naming both).
#[async_trait::async_trait]
pub trait Forward: Send + Sync {
    /// Makes `call`, as the saver does it (on an inner saver, in a child process, ...).
    ///
    /// # Errors
    /// The saver's error for the call.
    async fn send(&self, call: Invocation) -> Result<Reply, CheckpointError>;

    /// `get_next_version(current)`, the trait's one synchronous method (CONTRACT §2).
    fn next_version(&self, current: Option<&ChannelVersion>) -> ChannelVersion;
}

/// Implements [`CheckpointSaver`] for a [`Forward`] type: every async method builds its
/// [`Invocation`] (arguments cloned as the variant holds them) and goes through
/// [`Forward::send`]; `get_next_version` calls [`Forward::next_version`]. The one place
/// besides [`Invocation::send`] that spells the trait's methods out.
///
/// ```ignore
/// conformance_core::forward_saver!(MySaver);
/// ```
#[macro_export]
macro_rules! forward_saver {
    ($saver:ty) => {
        #[$crate::async_trait]
        impl $crate::CheckpointSaver for $saver {
            async fn put(
                &self,
                config: &$crate::CheckpointConfig,
                checkpoint: $crate::Checkpoint,
                metadata: $crate::CheckpointMetadata,
                new_versions: $crate::ChannelVersions,
            ) -> ::std::result::Result<$crate::CheckpointConfig, $crate::CheckpointError> {
                let put = $crate::Put { config: config.clone(), checkpoint, metadata, new_versions };
                $crate::Forward::send(self, $crate::Invocation::Put(put)).await?.config()
            }

            async fn put_writes(
                &self,
                config: &$crate::CheckpointConfig,
                writes: ::std::vec::Vec<(::std::string::String, $crate::TypedValue)>,
                task_id: &str,
                task_path: &str,
            ) -> ::std::result::Result<(), $crate::CheckpointError> {
                let (config, task_id, task_path) = (config.clone(), task_id.to_owned(), task_path.to_owned());
                let call = $crate::Invocation::PutWrites($crate::PutWrites { config, writes, task_id, task_path });
                $crate::Forward::send(self, call).await?.done()
            }

            async fn get_tuple(
                &self,
                config: &$crate::CheckpointConfig,
            ) -> ::std::result::Result<::std::option::Option<$crate::CheckpointTuple>, $crate::CheckpointError> {
                let call = $crate::Invocation::GetTuple { config: config.clone() };
                $crate::Forward::send(self, call).await?.tuple()
            }

            async fn list(
                &self,
                thread_id: &str,
                options: &$crate::ListOptions,
            ) -> ::std::result::Result<::std::vec::Vec<$crate::CheckpointTuple>, $crate::CheckpointError> {
                let call = $crate::Invocation::List { thread_id: thread_id.to_owned(), options: options.clone() };
                $crate::Forward::send(self, call).await?.tuples()
            }

            async fn delete_thread(&self, thread_id: &str) -> ::std::result::Result<(), $crate::CheckpointError> {
                let call = $crate::Invocation::DeleteThread { thread_id: thread_id.to_owned() };
                $crate::Forward::send(self, call).await?.done()
            }

            fn get_next_version(
                &self,
                current: ::std::option::Option<&$crate::ChannelVersion>,
            ) -> $crate::ChannelVersion {
                $crate::Forward::next_version(self, current)
            }

            async fn delete_for_runs(
                &self,
                run_ids: &[::std::string::String],
            ) -> ::std::result::Result<(), $crate::CheckpointError> {
                let call = $crate::Invocation::DeleteForRuns { run_ids: run_ids.to_vec() };
                $crate::Forward::send(self, call).await?.done()
            }

            async fn copy_thread(
                &self,
                source: &str,
                target: &str,
            ) -> ::std::result::Result<(), $crate::CheckpointError> {
                let call = $crate::Invocation::CopyThread { source: source.to_owned(), target: target.to_owned() };
                $crate::Forward::send(self, call).await?.done()
            }

            async fn prune(
                &self,
                thread_ids: &[::std::string::String],
                strategy: $crate::PruneStrategy,
            ) -> ::std::result::Result<(), $crate::CheckpointError> {
                let call = $crate::Invocation::Prune { thread_ids: thread_ids.to_vec(), strategy };
                $crate::Forward::send(self, call).await?.done()
            }

            async fn delta_channel_history(
                &self,
                config: &$crate::CheckpointConfig,
                channels: &[::std::string::String],
            ) -> ::std::result::Result<
                ::std::collections::BTreeMap<::std::string::String, $crate::DeltaChannelHistory>,
                $crate::CheckpointError,
            > {
                let call =
                    $crate::Invocation::DeltaChannelHistory { config: config.clone(), channels: channels.to_vec() };
                $crate::Forward::send(self, call).await?.history()
            }
        }
    };
}
