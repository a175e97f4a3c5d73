//! The Python side: the bridge package (embedded in this crate, written out on first
//! use), the managed virtualenv with pinned LangGraph packages, a user's own environment,
//! and the saver specs `python:sqlite` / `python` + `module:factory`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use conformance_core::leftovers;

use crate::managed::{parse_saver, postgres_url, run, Package, SpecError};
use crate::process::ChildCommand;
use crate::registration::{BridgeRegistration, BridgeSpec};

/// The pinned packages of the managed environment (their dependencies are pinned by
/// `bridges/python/constraints.txt`).
pub const PINNED: &[&str] = &[
    "langgraph-checkpoint==4.3.2",
    "langgraph-checkpoint-sqlite==3.1.2",
    "langgraph-checkpoint-postgres==3.2.0",
    "psycopg[binary]==3.3.9",
];

/// LangGraph's own savers by their short names (`python:memory`, ...).
pub const SHORT_NAMES: &[&str] = &["memory", "sqlite", "sqlite-async", "postgres", "postgres-async"];

/// The environment variable naming a Python environment of the user's (a virtualenv
/// directory or an interpreter) to use instead of the managed one.
pub const PYTHON_ENV_VAR: &str = "CHECKPOINT_BRIDGE_PYTHON";
/// The interpreter that creates the managed virtualenv (default `python3`).
pub const BASE_PYTHON_ENV_VAR: &str = "CHECKPOINT_BRIDGE_BASE_PYTHON";

/// The bridge package, embedded so that an installed binary needs no checkout.
const PACKAGE: Package = Package {
    kind: "python",
    pins: PINNED,
    files: &[
        ("pyproject.toml", include_str!("../../../bridges/python/pyproject.toml")),
        ("constraints.txt", include_str!("../../../bridges/python/constraints.txt")),
        ("checkpoint_bridge/__init__.py", include_str!("../../../bridges/python/checkpoint_bridge/__init__.py")),
        ("checkpoint_bridge/__main__.py", include_str!("../../../bridges/python/checkpoint_bridge/__main__.py")),
        ("checkpoint_bridge/mapping.py", include_str!("../../../bridges/python/checkpoint_bridge/mapping.py")),
        ("checkpoint_bridge/record.py", include_str!("../../../bridges/python/checkpoint_bridge/record.py")),
        ("checkpoint_bridge/record_app.py", include_str!("../../../bridges/python/checkpoint_bridge/record_app.py")),
        ("checkpoint_bridge/served.py", include_str!("../../../bridges/python/checkpoint_bridge/served.py")),
        ("checkpoint_bridge/server.py", include_str!("../../../bridges/python/checkpoint_bridge/server.py")),
        ("checkpoint_bridge/storage.py", include_str!("../../../bridges/python/checkpoint_bridge/storage.py")),
        ("checkpoint_bridge/values.py", include_str!("../../../bridges/python/checkpoint_bridge/values.py")),
    ],
};

/// Options of a Python saver run.
#[derive(Clone, Debug, Default)]
pub struct PythonOptions {
    /// Where the managed environment, the bridge package and the run directories go
    /// (e.g. `target/checkpoint-bridge`).
    pub base_dir: PathBuf,
    /// A Python environment of the user's (a virtualenv directory or an interpreter);
    /// default: $CHECKPOINT_BRIDGE_PYTHON, else the managed environment.
    pub python_env: Option<PathBuf>,
    /// The PostgreSQL URL for the postgres savers; default $CHECKPOINT_POSTGRES_URL.
    pub postgres_url: Option<String>,
}

fn venv_python(venv: &Path) -> PathBuf {
    if cfg!(windows) {
        venv.join("Scripts").join("python.exe")
    } else {
        venv.join("bin").join("python")
    }
}

/// The managed environment `<base>/python/venv`: created with pinned packages and the
/// bridge package on first use, reused while its stamp matches (pins and package
/// unchanged). Concurrent callers wait on a lock file; a half-made environment (no stamp)
/// is removed and made again. Returns its interpreter.
///
/// # Errors
/// A message with the failing step and the end of pip's output.
pub fn managed_python(base: &Path) -> Result<PathBuf, String> {
    let venv = base.join("python").join("venv");
    let python = venv_python(&venv);
    // One stamp path for every caller, checked under the lock: a caller that found the
    // interpreter missing while another was still making the environment must not remake
    // (and so remove) it afterwards. An interpreter gone with its stamp left makes it anew.
    let stamp = venv.join(".checkpoint-bridge-stamp");
    if !python.exists() {
        let _ = std::fs::remove_file(&stamp);
    }
    PACKAGE.ensure(base, &stamp, || {
        let pkg = PACKAGE.write(base)?;
        if venv.exists() {
            std::fs::remove_dir_all(&venv).map_err(|e| format!("cannot remove the old {}: {e}", venv.display()))?;
        }
        let base_python = std::env::var_os(BASE_PYTHON_ENV_VAR).unwrap_or_else(|| OsString::from("python3"));
        eprintln!(
            "checkpoint-bridge: creating the Python environment {} (first use: pip installs {})",
            venv.display(),
            PINNED.join(", ")
        );
        // `python -m venv` bootstraps pip with ensurepip, which has failed with only "exit
        // status 1" where the base interpreter's own pip worked: then a virtualenv without
        // pip, and the base interpreter's pip installs into it (pip's --python, pip 22.3+).
        let mut pip = Command::new(&python);
        if let Err(first) = run(Command::new(&base_python).arg("-m").arg("venv").arg(&venv), "creating the virtualenv")
        {
            let _ = std::fs::remove_dir_all(&venv);
            let mut bare = Command::new(&base_python);
            run(bare.args(["-m", "venv", "--without-pip"]).arg(&venv), "creating the virtualenv without pip")
                .map_err(|e| format!("{first}; then {e}"))?;
            eprintln!("checkpoint-bridge: {first}; installing with the base interpreter's pip instead");
            pip = Command::new(&base_python);
            pip.args(["-m", "pip", "--python"]).arg(&python);
        } else {
            pip.args(["-m", "pip"]);
        }
        pip.args(["install", "--disable-pip-version-check", "--no-input", "-q", "-c"])
            .arg(pkg.join("constraints.txt"))
            .args(PINNED)
            .arg(&pkg);
        run(&mut pip, "pip install").map(|_| ())
    })?;
    Ok(python)
}

/// How long the check that a user's interpreter imports langgraph-checkpoint may take
/// ([`user_python`]); an interpreter that has not answered by then is given up on.
pub const CHECK_TIMEOUT: Duration = Duration::from_secs(20);

/// The interpreter of a user's environment: `path` is a virtualenv directory or an
/// interpreter. Checks, within `CHECK_TIMEOUT`, that it runs and imports
/// langgraph-checkpoint.
///
/// # Errors
/// One line saying what is wrong (no interpreter, cannot run it, no answer in time, the
/// import's error), without the path given (the caller names it and where it came from).
pub fn user_python(path: &Path) -> Result<PathBuf, String> {
    let python = if path.is_dir() { venv_python(path) } else { path.to_path_buf() };
    if !python.is_file() {
        return Err(format!(
            "no interpreter at {} (give a virtualenv directory or a Python interpreter)",
            python.display()
        ));
    }
    check_import(&python)?;
    Ok(python)
}

/// Finds `langgraph.checkpoint.base` without running it ([`FIND_BASE`]): the child imports
/// it again moments later, and an import of LangGraph costs about 0.25 s, as much as the
/// rest of a one-case bridged run (`cargo xtask bench --python`, `bridge_one_case_ms`).
const FIND_BASE: &str = "import importlib.util as u\n\
    if u.find_spec('langgraph.checkpoint.base') is None:\n\
    \x20   raise ModuleNotFoundError(\"No module named 'langgraph.checkpoint.base'\")";

/// Runs `python -c` [`FIND_BASE`] (is langgraph-checkpoint installed there?), killed after
/// [`CHECK_TIMEOUT`] (and when the run is interrupted meanwhile). A package that is there
/// but fails to import is the child's error, said when its handshake fails.
fn check_import(python: &Path) -> Result<(), String> {
    let mut child = Command::new(python)
        .args(["-c", FIND_BASE])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
    let pid = child.id();
    let _on_interrupt = leftovers::on_interrupt(move || leftovers::kill_child(pid));
    // Read on a thread of its own: a full pipe must not block the child, nor a child
    // that never ends this thread.
    let (tx, rx) = std::sync::mpsc::channel();
    let stderr = child.stderr.take();
    std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(mut e) = stderr {
            let _ = std::io::Read::read_to_string(&mut e, &mut text);
        }
        let _ = tx.send(text);
    });
    let start = Instant::now();
    // Polled every millisecond for its first 100 ms, then every 20: a poll every 20 ms
    // cost up to 20 ms of every bridged run given --python, where the check takes 15 ms.
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() < CHECK_TIMEOUT => {
                let fast = start.elapsed() < Duration::from_millis(100);
                std::thread::sleep(Duration::from_millis(if fast { 1 } else { 20 }));
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{} did not answer within {} s (checking that it imports langgraph-checkpoint); \
                     give a working Python interpreter",
                    python.display(),
                    CHECK_TIMEOUT.as_secs()
                ));
            }
            Err(e) => return Err(format!("cannot wait for {}: {e}", python.display())),
        }
    };
    if status.success() {
        return Ok(());
    }
    let text = rx.recv_timeout(Duration::from_secs(2)).unwrap_or_default();
    let last = text.lines().map(str::trim).rfind(|l| !l.is_empty()).unwrap_or("no output");
    Err(format!(
        "{} cannot import langgraph-checkpoint ({status}: {last}); pip install langgraph-checkpoint there",
        python.display()
    ))
}

/// The command that starts the bridge child with `python`. With a user's environment the
/// bridge package is not installed there: it is put on PYTHONPATH.
///
/// # Errors
/// A message when the package cannot be written.
pub fn child_command(python: &Path, base: &Path, managed: bool, label: &str) -> Result<ChildCommand, String> {
    let mut env = vec![(OsString::from("PYTHONUNBUFFERED"), OsString::from("1"))];
    if !managed {
        let pkg = PACKAGE.write(base)?;
        let mut path = pkg.into_os_string();
        if let Some(old) = std::env::var_os("PYTHONPATH").filter(|p| !p.is_empty()) {
            path.push(":");
            path.push(old);
        }
        env.push((OsString::from("PYTHONPATH"), path));
    }
    Ok(ChildCommand {
        program: python.to_path_buf(),
        args: vec!["-m".into(), "checkpoint_bridge".into()],
        env,
        label: label.to_owned(),
    })
}

/// The saver a `--backend` (and `--saver`) names: `python:sqlite`, `python` + `--saver
/// module:factory`, or `python:module:factory`.
///
/// # Errors
/// [`SpecError::Usage`] for anything else, with the valid names.
pub fn parse_python_saver(backend: &str, saver: Option<&str>) -> Result<String, SpecError> {
    let factory = |spec: &str| spec.split_once(':').is_some_and(|(m, f)| !m.is_empty() && !f.is_empty());
    parse_saver("python", backend, saver, SHORT_NAMES, factory, "module:factory")
}

/// Whether the saver spec (as [`parse_python_saver`] gives it) names one of LangGraph's
/// PostgreSQL savers, which need a server URL.
pub fn needs_postgres(spec: &str) -> bool {
    spec.starts_with("postgres")
}

/// The interpreter to run: the user's (`options.python_env`, else $CHECKPOINT_BRIDGE_PYTHON)
/// or the managed one (made on first use); `true` for the managed one.
///
/// # Errors
/// [`SpecError::Usage`] for a user's environment that does not work (one line naming it and
/// where it came from); [`SpecError::Environment`] when the managed one cannot be made.
fn choose_python(options: &PythonOptions) -> Result<(PathBuf, bool), SpecError> {
    let user = match &options.python_env {
        Some(p) => Some(("--python".to_owned(), p.clone())),
        None => std::env::var_os(PYTHON_ENV_VAR)
            .filter(|p| !p.is_empty())
            .map(|p| (format!("${PYTHON_ENV_VAR}"), PathBuf::from(p))),
    };
    Ok(match user {
        // A user's environment that does not work is a bad option (exit 2), one line.
        Some((source, p)) => {
            (user_python(&p).map_err(|e| SpecError::Usage(format!("{source} {}: {e}", p.display())))?, false)
        }
        None => (managed_python(&options.base_dir).map_err(SpecError::Environment)?, true),
    })
}

/// The LangGraph the recorder adds to the managed environment when a recording runs there
/// (the version the shipped traces were recorded with, traces/README.md).
pub const RECORD_PINNED: &[&str] = &["langgraph==1.2.22"];

/// The command that runs the recorder (`python -m checkpoint_bridge.record_app ARGS`,
/// docs/traces.md) in the user's environment (`options.python_env`, else
/// $CHECKPOINT_BRIDGE_PYTHON, which must have LangGraph and the user's graph) or in the
/// managed one, where [`RECORD_PINNED`] is installed on first use (pip, cached there).
///
/// # Errors
/// As `choose_python`; [`SpecError::Environment`] when pip cannot install LangGraph.
pub fn recorder_command(options: &PythonOptions, args: Vec<OsString>) -> Result<ChildCommand, SpecError> {
    let (python, managed) = choose_python(options)?;
    if managed {
        let has = Command::new(&python)
            .args(["-c", "import langgraph.graph"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !has {
            eprintln!(
                "checkpoint-bridge: first recording: pip installs {} into the managed environment",
                RECORD_PINNED.join(", ")
            );
            let pkg = PACKAGE.write(&options.base_dir).map_err(SpecError::Environment)?;
            let mut pip = Command::new(&python);
            pip.args(["-m", "pip", "install", "--disable-pip-version-check", "--no-input", "-q", "-c"])
                .arg(pkg.join("constraints.txt"))
                .args(RECORD_PINNED);
            run(&mut pip, "pip install").map_err(SpecError::Environment)?;
        }
    }
    let mut command = child_command(&python, &options.base_dir, managed, "record").map_err(SpecError::Environment)?;
    command.args =
        [OsString::from("-m"), OsString::from("checkpoint_bridge.record_app")].into_iter().chain(args).collect();
    Ok(command)
}

/// The registration of a Python saver: parses the spec ([`parse_python_saver`]), prepares
/// the environment (a user's from `options.python_env` or $CHECKPOINT_BRIDGE_PYTHON, else
/// the managed one, made on first use) and returns the bridged registration, named
/// `python:<saver>`. After the run, [`BridgeRegistration::annotate`] adds the side judged
/// and the package versions to the report.
///
/// # Errors
/// [`SpecError::Usage`] for a bad spec, and for a user's environment that does not work
/// ([`user_python`]: named with `--python` or `$CHECKPOINT_BRIDGE_PYTHON`, one line);
/// [`SpecError::Environment`] when Python, pip or
/// the PostgreSQL URL is missing.
pub fn python_registration(
    backend: &str,
    saver: Option<&str>,
    options: &PythonOptions,
) -> Result<BridgeRegistration, SpecError> {
    let spec = parse_python_saver(backend, saver)?;
    let name = format!("python:{spec}");
    let mut command = {
        let (python, managed) = choose_python(options)?;
        child_command(&python, &options.base_dir, managed, &name).map_err(SpecError::Environment)?
    };
    if needs_postgres(&spec) {
        let url = postgres_url(&name, options.postgres_url.as_deref())?;
        command.env.push((crate::POSTGRES_URL_ENV.into(), url.into()));
    }
    Ok(BridgeRegistration::new(BridgeSpec { name, command, saver: spec, work_dir: options.base_dir.join("runs") }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saver_specs_parse_or_say_what_is_valid() {
        assert_eq!(parse_python_saver("python:sqlite", None).unwrap(), "sqlite");
        assert_eq!(parse_python_saver("python", Some("my.mod:make")).unwrap(), "my.mod:make");
        assert_eq!(parse_python_saver("python:my.mod:make", None).unwrap(), "my.mod:make");
        for (b, s) in [("python", None), ("python:sqlite", Some("a:b")), ("python:nope", None), ("python:", None)] {
            let e = parse_python_saver(b, s).unwrap_err();
            assert!(matches!(e, SpecError::Usage(_)), "{b} {s:?}: {e}");
        }
        let e = parse_python_saver("python:nope", None).unwrap_err().to_string();
        assert!(e.contains("memory, sqlite, sqlite-async, postgres, postgres-async"), "{e}");
    }

    #[test]
    fn the_package_digest_changes_with_the_package() {
        assert_eq!(crate::managed::fnv(&["a", "b"]), crate::managed::fnv(&["a", "b"]));
        assert_ne!(crate::managed::fnv(&["a", "b"]), crate::managed::fnv(&["ab"]));
        assert_eq!(PACKAGE.digest().len(), 16);
    }
}
