//! How a user describes a saver to the kit: a name, a factory that gives a fresh saver for
//! every case (with a cleanup that always runs), an optional lifespan, skips and a timeout.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;

use crate::UnknownCapability;
use crate::{
    BoxError, Capability, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata,
    CheckpointSaver, CheckpointTuple, Feature, ListOptions, TypedValue,
};

/// Opens another saver instance on the same storage as the fixture's saver.
pub type ReopenFn = Arc<dyn Fn() -> BoxFuture<'static, Result<Arc<dyn CheckpointSaver>, BoxError>> + Send + Sync>;

/// A cleanup, run once after the case whatever its outcome.
pub type CleanupFn = Box<dyn FnOnce() -> BoxFuture<'static, Result<(), BoxError>> + Send>;

type FactoryFn = Arc<dyn Fn() -> BoxFuture<'static, Result<Fixture, BoxError>> + Send + Sync>;
type OpenAtFn = Arc<dyn Fn(String) -> BoxFuture<'static, Result<Fixture, BoxError>> + Send + Sync>;
pub(crate) type HookFn = Arc<dyn Fn() -> BoxFuture<'static, Result<(), BoxError>> + Send + Sync>;

/// What the factory gives for one case: the saver, and optionally a cleanup and a way to
/// open a second instance on the same storage.
pub struct Fixture {
    pub(crate) saver: Arc<dyn CheckpointSaver>,
    pub(crate) close: Option<CleanupFn>,
    pub(crate) cleanup: Option<CleanupFn>,
    pub(crate) reopen: Option<ReopenFn>,
    pub(crate) location: Option<String>,
    pub(crate) lacks: BTreeSet<Feature>,
}

impl Fixture {
    /// A fixture around `saver`.
    pub fn new(saver: impl CheckpointSaver + 'static) -> Self {
        Self::from_arc(Arc::new(saver))
    }

    /// A fixture around a shared saver.
    pub fn from_arc(saver: Arc<dyn CheckpointSaver>) -> Self {
        Self { saver, close: None, cleanup: None, reopen: None, location: None, lacks: BTreeSet::new() }
    }

    /// Runs `cleanup` after the case, whether it passed, failed, panicked or timed out
    /// (after a timeout only if the runtime still answers). A cleanup error is reported
    /// with the case.
    pub fn with_cleanup<F, Fut>(mut self, cleanup: F) -> Self
    where
        F: FnOnce() -> Fut + Send + 'static,
        Fut: Future<Output = Result<(), BoxError>> + Send + 'static,
    {
        self.cleanup = Some(Box::new(move || Box::pin(cleanup())));
        self
    }

    /// How to close the fixture's instance while keeping its storage (a
    /// [`Registration::persistent`]'s [`Storage::release`](crate::Storage::release)). The
    /// runner drops its handle on the saver and awaits `close` before a case that starts
    /// without an open instance ([`crate::CaseInstance::Closed`]: the durability crash
    /// test, whose child process opens the storage). The cleanup still runs after the case.
    pub(crate) fn with_close<F, Fut>(mut self, close: F) -> Self
    where
        F: FnOnce() -> Fut + Send + 'static,
        Fut: Future<Output = Result<(), BoxError>> + Send + 'static,
    {
        self.close = Some(Box::new(move || Box::pin(close())));
        self
    }

    /// Takes the fixture's close (a [`Registration::persistent`]'s
    /// [`Storage::release`](crate::Storage::release)), for a front end that serves the
    /// fixture elsewhere than in a case (the bridge's Rust server, whose `release` runs
    /// it). `None` once taken, and for a fixture of [`Registration::new`].
    pub fn take_close(&mut self) -> Option<CleanupFn> {
        self.close.take()
    }

    /// Closes the fixture's instance and keeps its storage, reopen, location and cleanup:
    /// drops the saver (a stand-in whose every base call fails saying the instance is
    /// closed takes its place) and awaits the fixture's close, if any.
    ///
    /// # Errors
    /// The close's error.
    pub(crate) async fn close_instance(&mut self) -> Result<(), BoxError> {
        self.saver = Arc::new(ClosedInstance);
        match self.close.take() {
            Some(close) => close().await,
            None => Ok(()),
        }
    }

    /// Declares that another instance can be opened on the same storage, which enables
    /// the `durability` capability and the two-instance cases (CONTRACT §4); given by
    /// [`Registration::persistent`] when the location reaches [`crate::Reach::ThisProcess`].
    pub(crate) fn with_reopen<F, Fut, S>(mut self, reopen: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<S, BoxError>> + Send + 'static,
        S: CheckpointSaver + 'static,
    {
        let reopen = Arc::new(reopen);
        self.reopen = Some(Arc::new(move || {
            let fut = reopen();
            Box::pin(async move { fut.await.map(|s| Arc::new(s) as Arc<dyn CheckpointSaver>) })
        }));
        self
    }

    /// Names the fixture's storage with an opaque `location` (a file path, a database URL
    /// with a schema name, ...) that [`Registration::open_location`] can open again, in
    /// another process; given by [`Registration::persistent`] when the location reaches
    /// [`crate::Reach::OtherProcesses`]. The durability crash test passes it to a child
    /// process that writes to the storage and is killed (CONTRACT §4 Durability).
    pub(crate) fn with_location(mut self, location: impl Into<String>) -> Self {
        self.location = Some(location.into());
        self
    }

    /// Declares that the saver lacks `feature` (CONTRACT §5 "Declared limits"): the cases
    /// that use it are not run, with the declaration as the reason, the comparisons that
    /// can leave the field out do (a pending write's `task_path`, a checkpoint's
    /// `updated_channels`), and the report carries a warning naming the declaration. Call
    /// it once per feature.
    pub fn lacking(mut self, feature: Feature) -> Self {
        self.lacks.insert(feature);
        self
    }

    /// The features declared with [`Fixture::lacking`].
    pub fn lacks(&self) -> &BTreeSet<Feature> {
        &self.lacks
    }

    /// Declares that the saver's read API cannot return a pending write's `task_path`, as
    /// with every saver behind LangGraph's API, whose `PendingWrite` is `(task_id, channel,
    /// value)` (CONTRACT §2 put_writes): [`Fixture::lacking`] with
    /// [`Feature::TaskPathOnReads`].
    pub fn without_task_path_on_reads(self) -> Self {
        self.lacking(Feature::TaskPathOnReads)
    }

    /// False after [`Fixture::without_task_path_on_reads`].
    pub fn task_path_on_reads(&self) -> bool {
        !self.lacks.contains(&Feature::TaskPathOnReads)
    }

    /// The saver.
    pub fn saver(&self) -> &Arc<dyn CheckpointSaver> {
        &self.saver
    }

    /// The location of the fixture's storage that another process can open
    /// ([`Registration::open_location`]): a [`Registration::persistent`]'s
    /// [`Storage::create`](crate::Storage::create) gave it, and it reaches
    /// [`crate::Reach::OtherProcesses`]. `None` otherwise.
    pub fn location(&self) -> Option<&str> {
        self.location.as_deref()
    }

    /// The fixture's parts: the saver, its cleanup, its reopen function and its location
    /// ([`Fixture::location`]), for a front end that serves a registration somewhere else
    /// than in a case (the bridge's Rust server, `checkpoint_bridge::server`). Whoever
    /// takes them runs the cleanup. The reopen is `None` for a fixture of
    /// [`Registration::new`] and of a storage that reaches [`crate::Reach::FirstInstance`].
    pub fn into_parts(self) -> (Arc<dyn CheckpointSaver>, Option<CleanupFn>, Option<ReopenFn>, Option<String>) {
        (self.saver, self.cleanup, self.reopen, self.location)
    }
}

/// The default per-case timeout: 30 seconds.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// A saver registered with the kit.
///
/// ```
/// # use conformance_core::{Registration, Fixture, CheckpointSaver};
/// struct Nothing;
/// impl CheckpointSaver for Nothing {}
/// let reg = Registration::new("nothing", || async { Ok(Fixture::new(Nothing)) });
/// assert_eq!(reg.name(), "nothing");
/// ```
#[derive(Clone)]
pub struct Registration {
    pub(crate) name: String,
    pub(crate) factory: FactoryFn,
    pub(crate) open_at: Option<OpenAtFn>,
    pub(crate) setup: Option<HookFn>,
    pub(crate) teardown: Option<HookFn>,
    pub(crate) skips: BTreeMap<Capability, String>,
    pub(crate) timeout: Duration,
    pub(crate) multi_thread: bool,
}

impl Registration {
    /// A registration named `name` (used in reports and trial names) whose `factory` gives
    /// a fresh [`Fixture`] for every case. The factory runs inside the case's runtime, so
    /// runtime-bound clients (connection tasks, pools) may be created in it.
    pub fn new<F, Fut>(name: impl Into<String>, factory: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Fixture, BoxError>> + Send + 'static,
    {
        Self {
            name: name.into(),
            factory: Arc::new(move || Box::pin(factory())),
            open_at: None,
            setup: None,
            teardown: None,
            skips: BTreeMap::new(),
            timeout: DEFAULT_TIMEOUT,
            multi_thread: false,
        }
    }

    /// A lifespan: `setup` runs once before any case, `teardown` once after all of them,
    /// also after failures and when setup failed. A failing setup ends the run: no case
    /// runs and the report says why.
    pub fn lifespan<S, SFut, T, TFut>(mut self, setup: S, teardown: T) -> Self
    where
        S: Fn() -> SFut + Send + Sync + 'static,
        SFut: Future<Output = Result<(), BoxError>> + Send + 'static,
        T: Fn() -> TFut + Send + Sync + 'static,
        TFut: Future<Output = Result<(), BoxError>> + Send + 'static,
    {
        self.setup = Some(Arc::new(move || Box::pin(setup())));
        self.teardown = Some(Arc::new(move || Box::pin(teardown())));
        self
    }

    /// How to open the storage at a fixture's location again ([`Registration::persistent`]
    /// gives it, from [`Storage::open`](crate::Storage::open), when the storage reaches
    /// [`crate::Reach::OtherProcesses`]): `open` gets the location and gives a fixture on
    /// that storage (its cleanup, reopen and location are not used). The durability crash
    /// test calls it in a child process (the same binary, re-executed) that has not run the
    /// lifespan setup, so it must work from the location alone.
    pub(crate) fn open_at<F, Fut>(mut self, open: F) -> Self
    where
        F: Fn(String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Fixture, BoxError>> + Send + 'static,
    {
        self.open_at = Some(Arc::new(move |location| Box::pin(open(location))));
        self
    }

    /// True when the registration can open a location in another process: a
    /// [`Registration::persistent`] whose [`Storage::reach`](crate::Storage::reach) is
    /// [`crate::Reach::OtherProcesses`] (the default). The bridge's Rust server answers
    /// `hello` with it.
    pub fn can_open_at(&self) -> bool {
        self.open_at.is_some()
    }

    /// Opens the storage at `location` (a [`Fixture::location`]) with the storage's
    /// [`Storage::open`](crate::Storage::open), as the durability crash test's child process
    /// does. Must run inside a tokio runtime if the saver needs one.
    ///
    /// # Errors
    /// The storage's open error, or an error saying the registration opens no location
    /// ([`Registration::can_open_at`] is false).
    pub async fn open_location(&self, location: &str) -> Result<Fixture, BoxError> {
        match &self.open_at {
            Some(open) => open(location.to_owned()).await,
            None => Err(format!(
                "registration {:?} opens no location in another process (a Registration::persistent whose \
                 Storage reaches Reach::OtherProcesses does), so location {location:?} cannot be opened",
                self.name
            )
            .into()),
        }
    }

    /// Skips `capability` with `reason`; it is reported as skipped with the reason, never as
    /// "not implemented" (CONTRACT §5).
    pub fn skip(mut self, capability: Capability, reason: impl Into<String>) -> Self {
        self.skips.insert(capability, reason.into());
        self
    }

    /// Skips the capability named `name` (an upstream name such as `"prune"`).
    ///
    /// # Errors
    /// [`UnknownCapability`], whose message lists the valid names.
    pub fn skip_named(self, name: &str, reason: impl Into<String>) -> Result<Self, UnknownCapability> {
        let cap: Capability = name.parse()?;
        Ok(self.skip(cap, reason))
    }

    /// The time one case may take, factory and cleanup included (default 30 s). A case
    /// that takes longer fails with a timeout message and the run goes on.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Runs every case, probe, lifespan hook and crash child on a multi-thread tokio
    /// runtime (4 workers) instead of a current-thread one, for a saver whose async methods
    /// need one: `tokio::task::block_in_place`, or a driver that spawns blocking work and
    /// waits on it from the calling task. Without it such a saver panics ("can call
    /// blocking only when running on the multi-threaded runtime") and every case fails on
    /// the runtime, not on a rule. Cases marked `#[multi_thread]` (concurrency) always use
    /// one.
    pub fn multi_thread(mut self) -> Self {
        self.multi_thread = true;
        self
    }

    /// Whether [`Registration::multi_thread`] was asked for.
    pub fn is_multi_thread(&self) -> bool {
        self.multi_thread
    }

    /// The same registration under another name (a variant of a saver beside its main
    /// registration in one `checkpointer_test!` binary: `sqlite-full`). The name is used in
    /// reports and trial names, and the durability crash child finds its registration by it.
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The registration's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The skipped capabilities and their reasons.
    pub fn skips(&self) -> &BTreeMap<Capability, String> {
        &self.skips
    }

    /// The per-case timeout.
    pub fn case_timeout(&self) -> Duration {
        self.timeout
    }

    /// Makes a fixture (the factory's result).
    pub(crate) async fn make_fixture(&self) -> Result<Fixture, BoxError> {
        (self.factory)().await
    }

    /// A fresh fixture from the factory, as a case gets it, for a front end that serves
    /// the registration outside the runner (the bridge's Rust server). Must run inside a
    /// tokio runtime if the saver needs one.
    ///
    /// # Errors
    /// The factory's error.
    pub async fn fixture(&self) -> Result<Fixture, BoxError> {
        self.make_fixture().await
    }
}

/// The stand-in for the instance of a case that starts without one
/// ([`crate::CaseInstance::Closed`]): every base call fails with a storage error saying so.
pub(crate) struct ClosedInstance;

impl ClosedInstance {
    fn error<T>() -> Result<T, CheckpointError> {
        Err(CheckpointError::storage_msg(
            "this case starts without an open instance (CaseInstance::Closed): the runner closed the factory's \
             instance; open one with CaseEnv::reopen",
        ))
    }
}

#[async_trait::async_trait]
impl CheckpointSaver for ClosedInstance {
    async fn put(
        &self,
        _: &CheckpointConfig,
        _: Checkpoint,
        _: CheckpointMetadata,
        _: ChannelVersions,
    ) -> Result<CheckpointConfig, CheckpointError> {
        Self::error()
    }

    async fn put_writes(
        &self,
        _: &CheckpointConfig,
        _: Vec<(String, TypedValue)>,
        _: &str,
        _: &str,
    ) -> Result<(), CheckpointError> {
        Self::error()
    }

    async fn get_tuple(&self, _: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
        Self::error()
    }

    async fn list(&self, _: &str, _: &ListOptions) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        Self::error()
    }

    async fn delete_thread(&self, _: &str) -> Result<(), CheckpointError> {
        Self::error()
    }
}
