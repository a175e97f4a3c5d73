//! The child side of the protocol in Rust: serves any `Registration` over stdin/stdout,
//! so that a Rust saver can be judged through the bridge and directly, case for case, and
//! the bridge's own cost per call can be measured.
//!
//! A test or bench binary serves by re-executing itself: its `main` calls
//! [`serve_if_requested`] first, and [`rust_registration`] starts the binary with
//! [`SERVE_ENV`] set.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{mpsc, Arc, Mutex};

use conformance_core::{CheckpointError, CheckpointSaver, CleanupFn, Invocation, Registration, ReopenFn};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

use crate::process::ChildCommand;
use crate::protocol::{Hello, HelloArgs, IncomingRequest, RemoteError, ServedSaver, PROTOCOL_VERSION};
use crate::registration::{BridgeRegistration, BridgeSpec};

/// The environment variable that makes a binary with [`serve_if_requested`] in its `main`
/// a bridge child.
pub const SERVE_ENV: &str = "CHECKPOINT_BRIDGE_SERVE";

/// Serves `registrations` and returns the exit code when this process was started as a
/// bridge child ([`SERVE_ENV`] set); `None` otherwise. Call it first thing in `main`.
pub fn serve_if_requested(registrations: &[Registration]) -> Option<ExitCode> {
    std::env::var_os(SERVE_ENV)?;
    Some(serve_stdio(registrations))
}

/// A registration named `bridged-<name>` that runs `registration` (one of those the
/// binary's [`serve_if_requested`] serves, by its name) in a child process: this same
/// binary, re-executed as a bridge child.
///
/// # Errors
/// A message when the path of this binary is unknown.
pub fn rust_registration(name: &str, work_dir: PathBuf) -> Result<BridgeRegistration, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this binary: {e}"))?;
    Ok(BridgeRegistration::new(BridgeSpec {
        name: format!("bridged-{name}"),
        command: ChildCommand {
            program: exe,
            args: Vec::new(),
            env: vec![(SERVE_ENV.into(), "1".into())],
            label: format!("rust:{name}"),
        },
        saver: name.to_owned(),
        work_dir,
    }))
}

struct Instance {
    /// `None` once `release` closed it (the handle and the case's storage are kept).
    saver: Option<Arc<dyn CheckpointSaver>>,
    /// The fixture's close ([`conformance_core::Fixture::take_close`]: its storage's
    /// `Storage::release`), run by `release`.
    close: Option<CleanupFn>,
    cleanup: Option<CleanupFn>,
    reopen: Option<ReopenFn>,
    /// The handle of the case (its `open`) this instance belongs to.
    case: Option<u64>,
    reopened: Vec<u64>,
}

#[derive(Default)]
struct State {
    registration: Option<Registration>,
    instances: HashMap<u64, Instance>,
    next: u64,
}

struct Server {
    registrations: Vec<Registration>,
    state: Mutex<State>,
    out: mpsc::Sender<Vec<u8>>,
}

#[derive(Serialize)]
struct OkAnswer<'a, T: Serialize> {
    id: u64,
    ok: &'a T,
}

#[derive(Serialize)]
struct ErrAnswer<'a> {
    id: Option<u64>,
    error: &'a RemoteError,
}

fn protocol(message: impl Into<String>) -> RemoteError {
    RemoteError { kind: "Protocol".into(), message: message.into() }
}

fn remote(e: &CheckpointError) -> RemoteError {
    RemoteError { kind: e.kind().into(), message: e.display_chain() }
}

type Answered = Result<Box<RawValue>, RemoteError>;

fn ok<T: Serialize>(value: &T) -> Answered {
    serde_json::value::to_raw_value(value).map_err(|e| protocol(format!("the answer cannot be written: {e}")))
}

fn args<T: for<'de> Deserialize<'de>>(op: &str, raw: Option<&RawValue>) -> Result<T, RemoteError> {
    serde_json::from_str(raw.map_or("{}", RawValue::get)).map_err(|e| protocol(format!("{op}: bad arguments: {e}")))
}

/// Serves on stdin/stdout until stdin closes (see the module docs); 0 on a clean end.
pub fn serve_stdio(registrations: &[Registration]) -> ExitCode {
    let rt = match tokio::runtime::Builder::new_multi_thread().worker_threads(4).enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("checkpoint-bridge server: cannot build a runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let (tx, rx) = mpsc::channel::<Vec<u8>>();
    let writer = std::thread::spawn(move || {
        let stdout = std::io::stdout();
        let mut out = stdout.lock();
        for line in rx {
            if out.write_all(&line).and_then(|()| out.flush()).is_err() {
                return;
            }
        }
    });
    let server =
        Arc::new(Server { registrations: registrations.to_vec(), state: Mutex::new(State::default()), out: tx });
    let stdin = std::io::stdin();
    let mut lines = stdin.lock();
    let mut line = Vec::new();
    loop {
        line.clear();
        match lines.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<IncomingRequest>(&line) {
            Ok(req) => {
                let s = server.clone();
                rt.spawn(async move {
                    let answer = s.handle(&req).await;
                    s.send(req.id, answer);
                });
            }
            Err(e) => server.send_line(&ErrAnswer { id: None, error: &protocol(format!("not a request: {e}")) }),
        }
    }
    // stdin closed: close every instance (running the cases' cleanups), then end.
    let s = server.clone();
    rt.block_on(async move { s.close_all().await });
    drop(server);
    let _ = writer.join();
    rt.shutdown_timeout(std::time::Duration::from_secs(1));
    ExitCode::SUCCESS
}

impl Server {
    fn send_line<T: Serialize>(&self, message: &T) {
        if let Ok(mut line) = serde_json::to_vec(message) {
            line.push(b'\n');
            let _ = self.out.send(line);
        }
    }

    fn send(&self, id: u64, answer: Answered) {
        match answer {
            Ok(raw) => self.send_line(&OkAnswer { id, ok: &raw }),
            Err(e) => self.send_line(&ErrAnswer { id: Some(id), error: &e }),
        }
    }

    fn registration(&self) -> Result<Registration, RemoteError> {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.registration.clone().ok_or_else(|| protocol("no hello yet"))
    }

    fn insert(&self, saver: Arc<dyn CheckpointSaver>, reopen: Option<ReopenFn>, case: Option<u64>) -> u64 {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.next += 1;
        let h = state.next;
        let instance = Instance { saver: Some(saver), close: None, cleanup: None, reopen, case, reopened: Vec::new() };
        state.instances.insert(h, instance);
        h
    }

    fn served(reg: &Registration) -> ServedSaver {
        ServedSaver { class: format!("rust:{}", reg.name()), side: "async".into(), ..ServedSaver::default() }
    }

    async fn handle(&self, req: &IncomingRequest) -> Answered {
        let raw = req.args.as_deref();
        match req.op.as_str() {
            "hello" => {
                let a: HelloArgs = args("hello", raw)?;
                if !a.protocol.contains(&PROTOCOL_VERSION) {
                    return Err(protocol(format!(
                        "this child speaks protocol {PROTOCOL_VERSION}, not {:?}",
                        a.protocol
                    )));
                }
                let reg = self.registrations.iter().find(|r| r.name() == a.saver).cloned().ok_or_else(|| {
                    let names: Vec<&str> = self.registrations.iter().map(|r| r.name()).collect();
                    protocol(format!("no registration named {:?} here (there are {names:?})", a.saver))
                })?;
                let hello = Hello {
                    protocol: PROTOCOL_VERSION,
                    server: format!("checkpoint-bridge-rust {}", env!("CARGO_PKG_VERSION")),
                    runtime: "rust".into(),
                    packages: Default::default(),
                    saver: a.saver,
                    reopen: reg.can_open_at(),
                    task_path: true,
                    // A Rust fixture's own declarations travel with each `open`.
                    lacks: Vec::new(),
                };
                self.state.lock().unwrap_or_else(|e| e.into_inner()).registration = Some(reg);
                ok(&hello)
            }
            "ping" => ok(&()),
            "setup" | "teardown" => {
                let reg = self.registration()?;
                let setup = req.op == "setup";
                let r = tokio::task::spawn_blocking(move || {
                    if setup {
                        conformance_core::run::lifespan_setup(&reg)
                    } else {
                        conformance_core::run::lifespan_teardown(&reg)
                    }
                })
                .await
                .map_err(|e| protocol(format!("the lifespan hook's thread failed: {e}")))?;
                r.map_err(|m| RemoteError { kind: "Storage".into(), message: m })?;
                ok(&())
            }
            "open" => {
                let reg = self.registration()?;
                let mut fixture =
                    reg.fixture().await.map_err(|e| RemoteError { kind: "Storage".into(), message: e.to_string() })?;
                let lacks: Vec<&str> = fixture.lacks().iter().map(|f| f.name()).collect();
                let close = fixture.take_close();
                let (saver, cleanup, reopen, location) = fixture.into_parts();
                let can_reopen = reopen.is_some();
                let h = self.insert(saver, reopen, None);
                if let Some(i) = self.state.lock().unwrap_or_else(|e| e.into_inner()).instances.get_mut(&h) {
                    (i.case, i.close, i.cleanup) = (Some(h), close, cleanup);
                }
                ok(
                    &serde_json::json!({"handle": h, "location": location, "reopen": can_reopen, "saver": Self::served(&reg), "lacks": lacks}),
                )
            }
            "open_at" => {
                let reg = self.registration()?;
                #[derive(Deserialize)]
                struct At {
                    location: String,
                }
                let at: At = args("open_at", raw)?;
                let fixture = reg
                    .open_location(&at.location)
                    .await
                    .map_err(|e| RemoteError { kind: "Storage".into(), message: e.to_string() })?;
                let (saver, _, _, _) = fixture.into_parts();
                let h = self.insert(saver, None, None);
                ok(&serde_json::json!({"handle": h, "saver": Self::served(&reg)}))
            }
            op => {
                let handle = req.handle.ok_or_else(|| protocol(format!("{op} needs a handle")))?;
                let (saver, reopen, case) = {
                    let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
                    let i = state
                        .instances
                        .get(&handle)
                        .ok_or_else(|| protocol(format!("{op}: no open handle {handle}")))?;
                    (i.saver.clone(), i.reopen.clone(), i.case)
                };
                match op {
                    "reopen" => {
                        let reopen = reopen.ok_or_else(|| protocol("this storage cannot be reopened"))?;
                        let saver = reopen()
                            .await
                            .map_err(|e| RemoteError { kind: "Storage".into(), message: e.to_string() })?;
                        let h = self.insert(saver, Some(reopen), case);
                        if let Some(c) = case {
                            if let Some(i) = self.state.lock().unwrap_or_else(|e| e.into_inner()).instances.get_mut(&c)
                            {
                                i.reopened.push(h);
                            }
                        }
                        ok(&serde_json::json!({"handle": h, "saver": Self::served(&self.registration()?)}))
                    }
                    "close" => self.close(handle).await.and_then(|()| ok(&())),
                    "release" => self.release(handle).await.and_then(|()| ok(&())),
                    _ => match saver {
                        Some(saver) => call(&*saver, op, raw).await,
                        None => Err(protocol(format!("{op}: handle {handle} was released"))),
                    },
                }
            }
        }
    }

    /// Closes an instance's saver (drops it, then runs the fixture's close) and keeps its
    /// handle and storage: `reopen` from it and `close` of it still work.
    async fn release(&self, handle: u64) -> Result<(), RemoteError> {
        let (saver, close) = {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            let i = state.instances.get_mut(&handle).ok_or_else(|| protocol(format!("no open handle {handle}")))?;
            (i.saver.take(), i.close.take())
        };
        drop(saver);
        match close {
            Some(close) => {
                close().await.map_err(|e| RemoteError { kind: "Storage".into(), message: format!("close: {e}") })
            }
            None => Ok(()),
        }
    }

    /// Closes an instance; a case's own handle also closes its reopened instances and runs
    /// the fixture's cleanup.
    async fn close(&self, handle: u64) -> Result<(), RemoteError> {
        let removed: Vec<Instance> = {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            let Some(i) = state.instances.remove(&handle) else {
                return Err(protocol(format!("no open handle {handle}")));
            };
            let mut out: Vec<Instance> = i.reopened.iter().filter_map(|h| state.instances.remove(h)).collect();
            out.push(i);
            out
        };
        for i in removed {
            drop(i.saver);
            if let Some(cleanup) = i.cleanup {
                cleanup()
                    .await
                    .map_err(|e| RemoteError { kind: "Storage".into(), message: format!("cleanup: {e}") })?;
            }
        }
        Ok(())
    }

    async fn close_all(&self) {
        let handles: Vec<u64> = {
            let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            let mut hs: Vec<u64> = state.instances.keys().copied().collect();
            hs.sort_unstable();
            hs.reverse();
            hs
        };
        for h in handles {
            if let Err(e) = self.close(h).await {
                if e.kind != "Protocol" {
                    eprintln!("checkpoint-bridge server: closing handle {h} at exit: {}", e.message);
                }
            }
        }
    }
}

/// One saver operation: its arguments read as an [`Invocation`] (the operation is its
/// `call`), made through [`Invocation::send`], the reply written as the protocol answers
/// it (docs/bridge-protocol.md).
async fn call(saver: &dyn CheckpointSaver, op: &str, raw: Option<&RawValue>) -> Answered {
    ok(&invocation(op, raw)?.send(saver).await.map_err(|e| remote(&e))?)
}

/// The request's operation and arguments as an [`Invocation`]. A config without
/// `thread_id` is the empty thread, which the saver refuses (the host omits it for the
/// cases about a config without one, `conformance_core::Omitted`), as a missing
/// `checkpoint_ns` is the root.
///
/// # Errors
/// `Protocol`: an unknown operation, or arguments that are not the method's.
fn invocation(op: &str, raw: Option<&RawValue>) -> Result<Invocation, RemoteError> {
    if !conformance_core::METHODS.contains(&op) {
        return Err(protocol(format!("unknown operation {op:?}")));
    }
    let mut request: serde_json::Map<String, Value> = args(op, raw)?;
    if let Some(Value::Object(config)) = request.get_mut("config") {
        config.entry("thread_id").or_insert_with(|| Value::String(String::new()));
    }
    request.insert("call".to_owned(), Value::String(op.to_owned()));
    Invocation::deserialize(Value::Object(request)).map_err(|e| protocol(format!("{op}: bad arguments: {e}")))
}
