//! The kit's registration of a bridged saver: one child per run (started by the lifespan
//! setup, or by the first case, and again after a child died), a fresh saver instance per
//! case, reopen and open-by-location for durability (docs/bridge-protocol.md,
//! "Lifetime").

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use conformance_core::{async_trait, BoxError, Feature, Reach, Registration, Report, Storage};

use crate::process::{ChildCommand, Connection, StuckOps};
use crate::protocol::{parse_lacks, Hello, HelloArgs, NoArgs, Opened, Reopened, ServedSaver, PROTOCOL_VERSION};
use crate::saver::{to_error, BridgeSaver};

/// How long the child gets to close its savers after the run before it is killed.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(15);

/// Everything needed to start and address a bridged saver.
#[derive(Clone, Debug)]
pub struct BridgeSpec {
    /// The registration's name in reports (`python:sqlite`).
    pub name: String,
    /// How to start a child.
    pub command: ChildCommand,
    /// The saver the child serves, sent in `hello` (`sqlite`, `my_module:factory`).
    pub saver: String,
    /// A directory for the run directories handed to children (created if missing).
    pub work_dir: PathBuf,
}

/// What the children said about the saver, for the report.
#[derive(Clone, Debug, Default)]
pub struct BridgeFacts {
    /// The handshake of the last child.
    pub hello: Option<Hello>,
    /// How the first opened instance is served.
    pub served: Option<ServedSaver>,
    /// Children started in this process (more than one: a child died and was replaced).
    pub children: usize,
    /// The child's reason when it refused the handshake because the saver it was asked to
    /// serve names nothing it can serve (the error kind `InvalidConfig` answering `hello`:
    /// an unknown name, a module or attribute that does not exist): a usage error of the
    /// front end, not a verdict.
    pub bad_saver: Option<String>,
}

/// How long a child with a timed-out call has to answer a `ping` before it is replaced.
const STUCK_PROBE: Duration = Duration::from_secs(5);

struct Supervisor {
    spec: BridgeSpec,
    current: tokio::sync::Mutex<Option<Arc<Connection>>>,
    facts: Mutex<BridgeFacts>,
    /// The lifespan setup ran: a child started to replace one that died gets `setup` too
    /// (an initializer's `beforeAll` may prepare what its `createCheckpointer` needs).
    set_up: std::sync::atomic::AtomicBool,
    /// The operations that got this registration's children stopped as stuck.
    stuck_ops: StuckOps,
    /// From the lifespan's setup to its teardown: an interrupt removes the run directories
    /// of the processes that are gone, as the teardown does (see [`Supervisor::setup`]).
    sweep_on_interrupt: Mutex<Option<conformance_core::leftovers::InterruptGuard>>,
    /// The cases' storages by location ([`BridgeStorage`]).
    cases: Mutex<HashMap<String, Case>>,
    /// The number of locations made here for storages the child gave none for.
    made: std::sync::atomic::AtomicU64,
}

/// Tells the running call's or hook's note (`conformance_core::CallNote`) `text`, which a
/// timeout then names.
fn note(text: impl FnOnce() -> String) {
    if let Some(n) = conformance_core::CallNote::current() {
        n.set(text());
    }
}

impl Supervisor {
    /// The run's child: the current one if it still works, else a new one after `hello`.
    /// A child left with a call whose case timed out must answer a `ping` within
    /// [`STUCK_PROBE`]; one that does not is stopped and replaced, so that one stuck call
    /// does not time out every later case (the replacement shows in [`BridgeFacts`]).
    async fn connection(&self) -> Result<Arc<Connection>, BoxError> {
        let mut current = self.current.lock().await;
        if let Some(c) = current.as_ref().filter(|c| c.is_alive()) {
            if !c.has_abandoned_calls() || c.answers_within(STUCK_PROBE).await {
                return Ok(c.clone());
            }
            let stuck = c.clone();
            *current = None;
            let _ = tokio::task::spawn_blocking(move || stuck.shutdown(Duration::ZERO)).await;
        }
        std::fs::create_dir_all(&self.spec.work_dir)
            .map_err(|e| format!("cannot create {}: {e}", self.spec.work_dir.display()))?;
        sweep_stale_runs(&self.spec.work_dir);
        // Made, and its removal on an interrupt registered, under the interrupt's fence: a
        // case that replaces a child killed by a Ctrl-C (the signal goes to the whole
        // group) made a new run directory while the interrupt's cleanups ran, and the
        // process exited before the connection registered its removal (the interrupt soak
        // of issue 40). Once the interrupt began, no child is started.
        let (workdir, _removed_on_interrupt) = conformance_core::leftovers::unless_interrupted(|| {
            let dir = tempfile::Builder::new()
                .prefix(&format!("run-{}-", std::process::id()))
                // Six letters or digits: the shape the sweep matches (`Tail::Random(6)`).
                .rand_bytes(6)
                .tempdir_in(&self.spec.work_dir)?;
            let path = dir.path().to_path_buf();
            let guard = conformance_core::leftovers::on_interrupt(move || {
                let _ = conformance_core::leftovers::remove_dir(&path);
            });
            Ok::<_, std::io::Error>((dir, guard))
        })
        .ok_or("the run is being interrupted: no bridge child is started")?
        .map_err(|e| format!("cannot create a run directory in {}: {e}", self.spec.work_dir.display()))?;
        let args = HelloArgs {
            protocol: vec![PROTOCOL_VERSION],
            saver: self.spec.saver.clone(),
            workdir: Some(workdir.path().to_string_lossy().into_owned()),
        };
        let conn = Connection::spawn_sharing(&self.spec.command, Some(workdir), self.stuck_ops.clone())?;
        let label = &self.spec.command.label;
        note(|| format!("the bridge child {label} (pid {}) has not answered the handshake (hello)", conn.pid()));
        let hello: Hello = conn.call("hello", None, &args).await.map_err(|e| {
            if let crate::process::CallError::Remote(r) = &e {
                if r.kind == "InvalidConfig" {
                    self.facts.lock().unwrap_or_else(|p| p.into_inner()).bad_saver = Some(r.message.clone());
                }
            }
            format!("the bridge child {} refused the handshake: {e}", self.spec.command.label)
        })?;
        if hello.protocol != PROTOCOL_VERSION {
            // Issue 40 row 5: an answer naming a version the host never offered was taken.
            conn.shutdown(Duration::ZERO);
            return Err(format!(
                "the bridge child {label} answered the handshake with protocol {}, which this kit does not speak \
                 (it offered protocol {PROTOCOL_VERSION} only)",
                hello.protocol
            )
            .into());
        }
        if let Err(e) = hello.lacked() {
            return Err(format!("the bridge child {} {e}", self.spec.command.label).into());
        }
        if self.set_up.load(std::sync::atomic::Ordering::SeqCst) {
            conn.call::<_, serde_json::Value>("setup", None, &NoArgs {})
                .await
                .map_err(|e| format!("the saver's setup failed in the child started to replace a dead one: {e}"))?;
        }
        {
            let mut facts = self.facts.lock().unwrap_or_else(|e| e.into_inner());
            facts.hello = Some(hello);
            facts.children += 1;
        }
        *current = Some(conn.clone());
        Ok(conn)
    }

    async fn setup(&self) -> Result<(), BoxError> {
        // The crash test's children (this binary again, each with a bridge child and a run
        // directory of its own) die by SIGKILL, and an interrupt kills the one running: only
        // the teardown removed their run directories, and an interrupted run never gets
        // there (the interrupt soak of issue 40: 2 of about 48 interrupted runs left one).
        // Registered before any child starts, this cleanup runs after theirs (the newest runs
        // first), once the crash child is killed and reaped.
        let dir = self.spec.work_dir.clone();
        *self.sweep_on_interrupt.lock().unwrap_or_else(|e| e.into_inner()) =
            Some(conformance_core::leftovers::on_interrupt(move || sweep_stale_runs_now(&dir)));
        let conn = self.connection().await?;
        let label = &self.spec.command.label;
        note(|| {
            format!(
                "the saver's setup, sent to the bridge child {label} (pid {}), has had no answer; the child's event \
                 loop is not blocked (a child that answers no ping within {} s is stopped)",
                conn.pid(),
                crate::process::PING_DEADLINE.as_secs()
            )
        });
        conn.call::<_, serde_json::Value>("setup", None, &NoArgs {})
            .await
            .map_err(|e| format!("the saver's setup failed: {e}"))?;
        self.set_up.store(true, std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }

    async fn teardown(&self) -> Result<(), BoxError> {
        // The crash test's children (this binary again, each with a child and a run
        // directory of its own) are killed with SIGKILL and leave theirs; they are gone by
        // now (issue 40 row 8: the last one's was left after every run).
        sweep_stale_runs(&self.spec.work_dir);
        self.sweep_on_interrupt.lock().unwrap_or_else(|e| e.into_inner()).take();
        let Some(conn) = self.current.lock().await.take() else { return Ok(()) };
        let result = conn.call::<_, serde_json::Value>("teardown", None, &NoArgs {}).await;
        let c = conn.clone();
        let _ = tokio::task::spawn_blocking(move || c.shutdown(SHUTDOWN_GRACE)).await;
        result.map(|_| ()).map_err(|e| format!("the saver's teardown failed: {e}").into())
    }

    fn note_served(&self, served: &ServedSaver) {
        let mut facts = self.facts.lock().unwrap_or_else(|e| e.into_inner());
        if facts.served.is_none() && !served.class.is_empty() {
            facts.served = Some(served.clone());
        }
    }

    /// What the child declares the instance `opened` lacks (CONTRACT §5 "Declared
    /// limits"): the handshake's declaration (checked when it was made) and what the child
    /// found by probing this instance.
    fn lacks(&self, opened: &Opened) -> Result<BTreeSet<Feature>, String> {
        let mut lacks = parse_lacks(&opened.lacks)
            .map_err(|e| format!("open: the bridge child {} {e}", self.spec.command.label))?;
        if let Some(hello) = &self.facts.lock().unwrap_or_else(|e| e.into_inner()).hello {
            lacks.extend(hello.lacked()?);
        }
        Ok(lacks)
    }
}

/// One case's storage in the child, by the location [`BridgeStorage::create`] gave: the
/// `open` answer's handle and what the child said of it.
struct Case {
    conn: Arc<Connection>,
    handle: u64,
    /// The case's first instance (the `open` handle) was given out by [`Storage::open`].
    opened: bool,
    reach: Reach,
    lacks: BTreeSet<Feature>,
}

/// The bridge's [`Storage`]: the child creates a storage and its first instance in one
/// `open`, so [`Storage::create`] sends it and keeps the handle, and the first
/// [`Storage::open`] of the location gives that instance; a later one in this process sends
/// `reopen` on it, and one of a location this process did not create (the crash test's
/// child process) sends `open_at`. The case's cleanup sends `close` and its release
/// `release` (docs/bridge-protocol.md, "Operations").
///
/// The location is the child's when it gave one and can reopen, otherwise one made here
/// that no other process is given. Cases may share one storage (the child gives the same
/// location again while a case holds it: every case uses threads of its own): the later
/// case's location is then the child's behind a prefix of its own ([`shared_location`]),
/// which the crash test's child process takes off before `open_at`.
struct BridgeStorage(Arc<Supervisor>);

/// The prefix of a location the child gave while a case held it already:
/// `bridge-shared-<n>:<the child's location>`.
const SHARED: &str = "bridge-shared-";

/// `location` as the `n`-th case sharing it gets it.
fn shared_location(n: u64, location: &str) -> String {
    format!("{SHARED}{n}:{location}")
}

/// The child's location of a location of this storage: without the prefix of
/// [`shared_location`].
fn childs_location(location: &str) -> &str {
    location
        .strip_prefix(SHARED)
        .and_then(|rest| rest.split_once(':'))
        .filter(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .map_or(location, |(_, l)| l)
}

impl BridgeStorage {
    /// The case of `location`.
    fn case<T>(&self, location: &str, f: impl FnOnce(&mut Case) -> T) -> Option<T> {
        self.0.cases.lock().unwrap_or_else(|e| e.into_inner()).get_mut(location).map(f)
    }
}

#[async_trait]
impl Storage for BridgeStorage {
    type Saver = BridgeSaver;

    async fn create(&self) -> Result<String, BoxError> {
        let sup = &self.0;
        let conn = sup.connection().await?;
        let opened: Opened = conn.call("open", None, &NoArgs {}).await.map_err(|e| to_error("open", e, false))?;
        sup.note_served(&opened.saver);
        let handle = opened.handle;
        let lacks = match sup.lacks(&opened) {
            Ok(l) => l,
            Err(e) => {
                // The declaration's error is the one to report; a child that does not
                // answer the close (it already broke the protocol) is not waited for.
                let _ = tokio::time::timeout(
                    std::time::Duration::from_secs(5),
                    handle_op(conn, "close", handle, "closing"),
                )
                .await;
                return Err(e.into());
            }
        };
        let mut cases = sup.cases.lock().unwrap_or_else(|e| e.into_inner());
        let given = opened.location.filter(|l| opened.reopen && !l.is_empty());
        let reach = match (opened.reopen, &given) {
            (false, _) => Reach::FirstInstance,
            (true, None) => Reach::ThisProcess,
            (true, Some(_)) => Reach::OtherProcesses,
        };
        let fresh = |name: &dyn Fn(u64) -> String| loop {
            let made = name(sup.made.fetch_add(1, std::sync::atomic::Ordering::SeqCst));
            if !cases.contains_key(&made) {
                break made;
            }
        };
        let location = match given {
            Some(l) if cases.contains_key(&l) => fresh(&|n| shared_location(n, &l)),
            Some(l) => l,
            None => fresh(&|n| format!("bridge-case-{n}")),
        };
        cases.insert(location.clone(), Case { conn, handle, opened: false, reach, lacks });
        Ok(location)
    }

    async fn open(&self, location: &str) -> Result<BridgeSaver, BoxError> {
        let case = self.case(location, |c| (c.conn.clone(), c.handle, std::mem::replace(&mut c.opened, true)));
        match case {
            Some((conn, handle, false)) => Ok(BridgeSaver::new(conn, handle, false)),
            Some((conn, handle, true)) => {
                let r: Reopened = conn
                    .call("reopen", Some(handle), &NoArgs {})
                    .await
                    .map_err(|e| BoxError::from(to_error("reopen", e, false)))?;
                self.0.note_served(&r.saver);
                Ok(BridgeSaver::new(conn, r.handle, true))
            }
            None => {
                // A storage of another process (the crash test's child).
                let conn = self.0.connection().await?;
                #[derive(serde::Serialize)]
                struct At<'a> {
                    location: &'a str,
                }
                let location = childs_location(location);
                let r: Reopened =
                    conn.call("open_at", None, &At { location }).await.map_err(|e| to_error("open_at", e, false))?;
                Ok(BridgeSaver::new(conn, r.handle, true))
            }
        }
    }

    async fn destroy(&self, location: &str) -> Result<(), BoxError> {
        let case = self.0.cases.lock().unwrap_or_else(|e| e.into_inner()).remove(location);
        match case {
            Some(c) => handle_op(c.conn, "close", c.handle, "closing").await,
            None => Ok(()),
        }
    }

    async fn setup(&self) -> Result<(), BoxError> {
        self.0.setup().await
    }

    async fn teardown(&self) -> Result<(), BoxError> {
        self.0.teardown().await
    }

    fn reach_of(&self, location: &str) -> Reach {
        self.case(location, |c| c.reach).unwrap_or(Reach::FirstInstance)
    }

    fn lacks(&self, location: &str) -> BTreeSet<Feature> {
        self.case(location, |c| c.lacks.clone()).unwrap_or_default()
    }

    /// The instance lives in the child: dropping the host's handle does not close it.
    async fn release(&self, location: &str) -> Result<(), BoxError> {
        match self.case(location, |c| (c.conn.clone(), c.handle)) {
            Some((conn, handle)) => handle_op(conn, "release", handle, "releasing").await,
            None => Ok(()),
        }
    }
}

/// Sends `op` (`close`, `release`) for the instance `handle` and waits for its answer; an
/// error says what the host was `doing` ("closing the saver (handle 3) failed: ...").
///
/// On a child that is gone (it died, or was stopped as stuck, and the case already failed
/// saying so) there is nothing left to close: its instances went with it, and the run's
/// work directory and the teardown remove their storage.
async fn handle_op(conn: Arc<Connection>, op: &'static str, handle: u64, doing: &str) -> Result<(), BoxError> {
    if !conn.is_alive() {
        return Ok(());
    }
    match conn.call::<_, serde_json::Value>(op, Some(handle), &NoArgs {}).await {
        Ok(_) | Err(crate::process::CallError::Dead(_)) => Ok(()),
        Err(e) => Err(BoxError::from(format!("{doing} the saver (handle {handle}) failed: {e}"))),
    }
}

/// Removes the run directories (`run-<pid>-*`) of processes that are gone: a host killed
/// with SIGKILL (the crash test's children, an interrupted run) cannot remove its own. The
/// kit's one sweep (`conformance_core::leftovers::sweep`).
fn sweep_stale_runs(dir: &std::path::Path) {
    for s in conformance_core::leftovers::sweep(
        dir,
        "run-",
        conformance_core::leftovers::Tail::Random(6),
        conformance_core::leftovers::remove_dir,
    ) {
        if s.result.is_err() {
            eprintln!("warning: {}", s.describe());
        }
    }
}

/// [`sweep_stale_runs`] from an interrupt's cleanup: a run directory that cannot be removed
/// yet (a dying child's process still writing in it) is tried again for up to 2 s.
fn sweep_stale_runs_now(dir: &std::path::Path) {
    let start = std::time::Instant::now();
    loop {
        let swept = conformance_core::leftovers::sweep(
            dir,
            "run-",
            conformance_core::leftovers::Tail::Random(6),
            conformance_core::leftovers::remove_dir,
        );
        let failed: Vec<_> = swept.iter().filter(|s| s.result.is_err()).collect();
        if failed.is_empty() {
            return;
        }
        if start.elapsed() >= Duration::from_secs(2) {
            for s in failed {
                eprintln!("warning: {}", s.describe());
            }
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A registration of a bridged saver and what its children reported.
#[derive(Clone)]
pub struct BridgeRegistration {
    registration: Registration,
    supervisor: Arc<Supervisor>,
}

impl BridgeRegistration {
    /// The registration for `spec`: the lifespan starts the child and sends `setup` /
    /// `teardown`; every case opens a fresh storage; reopen and the crash test's
    /// open-by-location are there when the child says its storage can be reopened.
    pub fn new(spec: BridgeSpec) -> Self {
        let name = spec.name.clone();
        let supervisor = Arc::new(Supervisor {
            spec,
            current: tokio::sync::Mutex::new(None),
            facts: Mutex::new(BridgeFacts::default()),
            set_up: std::sync::atomic::AtomicBool::new(false),
            stuck_ops: StuckOps::default(),
            sweep_on_interrupt: Mutex::new(None),
            cases: Mutex::default(),
            made: std::sync::atomic::AtomicU64::new(0),
        });
        let registration = Registration::persistent(name, BridgeStorage(supervisor.clone()));
        Self { registration, supervisor }
    }

    /// The registration to run (clone it, add skips or a timeout as with any other).
    pub fn registration(&self) -> &Registration {
        &self.registration
    }

    /// The lifespan's teardown, for a front end that makes this registration's fixtures
    /// outside a run (`conformance-bench --target bridge`): sends `teardown`, stops the
    /// child (within its grace time) and removes its run directory. A run's session does
    /// this itself.
    ///
    /// # Errors
    /// The child's answer to `teardown` was an error, or the child was gone.
    pub async fn teardown(&self) -> Result<(), BoxError> {
        self.supervisor.teardown().await
    }

    /// The pid of the run's child while one is running (for tests that kill it).
    pub fn child_pid(&self) -> Option<u32> {
        self.supervisor.current.try_lock().ok()?.as_ref().filter(|c| c.is_alive()).map(|c| c.pid())
    }

    /// The child's reason when the saver of this registration names nothing it can serve
    /// ([`BridgeFacts::bad_saver`]): the front end's usage error (one line, exit 2).
    pub fn bad_saver(&self) -> Option<String> {
        self.facts().bad_saver
    }

    /// What the children reported so far.
    pub fn facts(&self) -> BridgeFacts {
        self.supervisor.facts.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Adds what the bridge knows to a report of this registration's run: the facts
    /// `bridge.server`, `bridge.runtime`, `bridge.packages`, `bridge.class`, `bridge.side`,
    /// `bridge.methods` and `bridge.children`; the saver's origin when the child named it
    /// (`bridge.module`, and `bridge.distribution` and `bridge.version`: the installed
    /// distribution that provides that module); and a warning when its `put_writes` takes no
    /// `task_path` (with the fact `bridge.put_writes_task_path: false`), when the saver's
    /// sync methods were judged (its async ones are missing or raise NotImplementedError) or
    /// when a child died and was replaced during the run.
    pub fn annotate(&self, report: &mut Report) {
        let facts = self.facts();
        if let Some(h) = &facts.hello {
            report.facts.insert("bridge.server".into(), h.server.clone().into());
            report.facts.insert("bridge.runtime".into(), h.runtime.clone().into());
            report.facts.insert("bridge.packages".into(), serde_json::json!(h.packages));
        }
        if let Some(s) = &facts.served {
            report.facts.insert("bridge.class".into(), s.class.clone().into());
            report.facts.insert("bridge.side".into(), s.side.clone().into());
            report.facts.insert("bridge.methods".into(), serde_json::json!(s.methods));
            for (key, value) in
                [("bridge.module", &s.module), ("bridge.distribution", &s.distribution), ("bridge.version", &s.version)]
            {
                if let Some(v) = value {
                    report.facts.insert(key.into(), v.clone().into());
                }
            }
            if s.writes_task_path == Some(false) {
                report.facts.insert("bridge.put_writes_task_path".into(), false.into());
                report.warnings.push(format!(
                    "bridge: {}'s put_writes takes no task_path (the langgraph-checkpoint 2.x signature); it was \
                     called without one, as LangGraph's runtime calls it, so it cannot order pending writes by task_path",
                    s.class
                ));
            }
            if s.side == "sync" {
                report.warnings.push(format!(
                    "bridge: {} has no working async methods; its sync methods were judged, each call on a worker thread",
                    s.class
                ));
            }
        }
        report.facts.insert("bridge.children".into(), facts.children.into());
        if facts.children > 1 {
            report.warnings.push(format!(
                "bridge: the child process died during the run and was started {} times",
                facts.children
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A location two cases share reaches the crash test's child as the child's own, and
    /// any other location (one that merely looks like a shared one) is left as it is.
    #[test]
    fn a_shared_location_gives_the_childs_back() {
        for child in ["/tmp/dup.sqlite", "", "a:b", "bridge-shared-x:y"] {
            assert_eq!(childs_location(&shared_location(7, child)), child);
        }
        for own in ["/tmp/dup.sqlite", "bridge-shared-:x", "bridge-shared-1x:y", "bridge-case-3", "bridge-shared-12"] {
            assert_eq!(childs_location(own), own);
        }
    }
}
