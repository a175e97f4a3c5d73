//! The one target builder of the front ends (issue 39): a backend choice (`--backend`,
//! `--saver`, `--python`, `--sqlite-path`, `--postgres-url`) made into a registration and
//! what it keeps alive, for `cargo xtask conformance` / `checkpoint-conformance`, `cargo
//! xtask fuzz` and `cargo xtask replay`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use conformance_backends::bridge;
use conformance_backends::postgres::test_server::TestServer;
use conformance_core::leftovers::InterruptGuard;
use conformance_core::Registration;

use crate::{Choice, USAGE};

/// What a target is made of: the flags of a front end that name it.
#[derive(Clone, Copy, Debug)]
pub struct TargetSpec<'a> {
    /// `--backend`.
    pub backend: &'a Choice,
    /// `--saver` (a bridged backend's module or factory).
    pub saver: Option<&'a str>,
    /// `--python` (a `python:*` backend's environment).
    pub python: Option<&'a Path>,
    /// `--sqlite-path` (the kit's sqlite backend only).
    pub sqlite_path: Option<&'a Path>,
    /// `--postgres-url`; else `$CHECKPOINT_POSTGRES_URL`, else a throwaway server.
    pub postgres_url: Option<&'a str>,
    /// Where the bridge keeps its managed environments and run directories.
    pub work_dir: &'a Path,
}

/// A run's target: its registration and what it keeps alive while the run goes. The
/// fields are dropped in their order: the registration, then the interrupt cleanup of a
/// bridged postgres saver's schemas, then the bridge (its child stopped), then the
/// throwaway PostgreSQL server, last, since everything before it may still talk to it.
pub struct Target {
    /// The registration to run.
    pub registration: Registration,
    /// While it lives, an interrupt drops the schemas a bridged postgres saver made.
    _schema_cleanup: Option<InterruptGuard>,
    /// A bridged saver: for the report's annotation (the side judged, its versions).
    pub bridged: Option<bridge::BridgeRegistration>,
    /// The throwaway PostgreSQL server this run started, stopped and removed when dropped.
    server: Option<TestServer>,
}

impl Target {
    /// A target that keeps nothing alive (a registration made elsewhere: a mutant).
    pub fn bare(registration: Registration) -> Self {
        Self { registration, _schema_cleanup: None, bridged: None, server: None }
    }

    /// When the bridge child refused the handshake because the saver names nothing it can
    /// serve (an unknown name, a module or attribute that does not exist:
    /// `python:no_such_module:f`): the child's reason, which every front end reports as bad
    /// input (one line, exit 2), not as a run that failed. `None` for the kit's own backends
    /// and for a bridged saver the child found.
    pub fn bad_saver(&self) -> Option<String> {
        self.bridged.as_ref().and_then(|b| b.bad_saver())
    }

    /// Stops the throwaway PostgreSQL server now, if this target started one; a failure to
    /// stop it is a warning on stderr (dropping the target would stop it silently).
    pub fn stop_server(&mut self) {
        if let Some(s) = self.server.take() {
            if let Err(e) = s.stop() {
                eprintln!("warning: {e}");
            }
        }
    }
}

/// The target `spec` names.
///
/// # Errors
/// The exit code, the reason printed (one line): 2 for a bad spec (an unknown saver, a
/// `--sqlite-path` that cannot be used, a server that cannot be reached), 1 when an
/// environment could not be made (pip, npm) or no server could be started; an install the
/// interrupt stopped exits as the interrupt says (128 + the signal).
pub fn build(spec: TargetSpec<'_>) -> Result<Target, ExitCode> {
    let mut server = None;
    let postgres_url = if spec.backend.needs_postgres(spec.saver) {
        Some(crate::backend::postgres_url(spec.postgres_url.map(str::to_owned), &mut server)?)
    } else {
        None
    };
    // Before a bridged saver's environment is made: from here on an interrupt drops the
    // schemas its children make on the server.
    let schema_cleanup = match spec.backend {
        Choice::Kit(_) => None,
        _ => postgres_url.as_deref().map(crate::backend::drop_bridge_schemas_on_interrupt),
    };
    let usage = |e: &dyn std::fmt::Display| {
        eprintln!("error: {e}");
        ExitCode::from(USAGE)
    };
    let made = match spec.backend {
        Choice::Kit(backend) => {
            let needs =
                conformance_backends::Needs { postgres_url: postgres_url.as_deref(), sqlite_path: spec.sqlite_path };
            let reg = backend.registration(needs).map_err(|e| usage(&e))?;
            return Ok(Target { server, ..Target::bare(reg) });
        }
        Choice::Python(name) => {
            let options = bridge::PythonOptions {
                base_dir: spec.work_dir.to_path_buf(),
                python_env: spec.python.map(PathBuf::from),
                postgres_url: postgres_url.clone(),
            };
            bridge::python_registration(name, spec.saver, &options)
        }
        Choice::Js(name) => {
            let options =
                bridge::JsOptions { base_dir: spec.work_dir.to_path_buf(), postgres_url: postgres_url.clone() };
            bridge::js_registration(name, spec.saver, &options)
        }
    };
    match made {
        Ok(b) => Ok(Target {
            registration: b.registration().clone(),
            _schema_cleanup: schema_cleanup,
            bridged: Some(b),
            server,
        }),
        Err(e @ bridge::SpecError::Usage(_)) => Err(usage(&e)),
        Err(e) => {
            // An install (pip, npm) the interrupt stopped: the handler's exit (128 + the
            // signal) and message, not the install's failure (issue 40 row 9).
            crate::interrupt::stop_if_interrupted();
            eprintln!("error: {e}");
            Err(ExitCode::FAILURE)
        }
    }
}
