//! What the Python and JavaScript sides share: a package embedded in this crate written
//! out once per digest, commands whose failure shows the end of their output, the
//! environment lock and stamp, and the errors of a saver spec.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Why a saver spec gave no registration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpecError {
    /// The spec or options are wrong (a front end exits with 2).
    Usage(String),
    /// The environment could not be prepared (pip or npm failed, no interpreter, no
    /// server URL ...).
    Environment(String),
}

impl std::fmt::Display for SpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Usage(m) | Self::Environment(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for SpecError {}

/// The environment variable with the PostgreSQL URL for `python:postgres*` and
/// `js:postgres`.
pub const POSTGRES_URL_ENV: &str = "CHECKPOINT_POSTGRES_URL";

/// A 64-bit FNV-1a digest (stable across builds, for stamps and directory names).
pub(crate) fn fnv(parts: &[&str]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in p.bytes().chain([0u8]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

/// An embedded package: its files (path, text) and the pins that go into its digest.
pub(crate) struct Package {
    /// The directory under the base directory (`python`, `js`).
    pub kind: &'static str,
    pub files: &'static [(&'static str, &'static str)],
    pub pins: &'static [&'static str],
}

impl Package {
    /// The digest of the pins and files.
    pub fn digest(&self) -> String {
        let mut parts: Vec<&str> = self.pins.to_vec();
        for (name, text) in self.files {
            parts.push(name);
            parts.push(text);
        }
        fnv(&parts)
    }

    /// Writes the files to `<base>/<kind>/src-<digest>` (once; concurrent writers are
    /// fine) and returns that directory.
    pub fn write(&self, base: &Path) -> Result<PathBuf, String> {
        self.write_in(&base.join(self.kind))
    }

    /// Writes the files to `<root>/src-<digest>` (once) and returns that directory.
    pub fn write_in(&self, root: &Path) -> Result<PathBuf, String> {
        std::fs::create_dir_all(&root).map_err(|e| format!("cannot create {}: {e}", root.display()))?;
        let dir = root.join(format!("src-{}", self.digest()));
        if dir.join(".complete").exists() {
            return Ok(dir);
        }
        let tmp = tempfile::Builder::new()
            .prefix("src-tmp-")
            .tempdir_in(&root)
            .map_err(|e| format!("cannot create a directory in {}: {e}", root.display()))?;
        for (name, text) in self.files {
            let path = tmp.path().join(name);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
            }
            std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
        std::fs::write(tmp.path().join(".complete"), "").map_err(|e| format!("cannot write the package: {e}"))?;
        let tmp = tmp.keep();
        if let Err(e) = std::fs::rename(&tmp, &dir) {
            // Another process wrote it first.
            let _ = std::fs::remove_dir_all(&tmp);
            if !dir.join(".complete").exists() {
                return Err(format!("cannot move the bridge package to {}: {e}", dir.display()));
            }
        }
        Ok(dir)
    }

    /// Runs `make` under the lock `<base>/<kind>/.lock` unless `stamp` holds this
    /// package's digest; `make` builds the environment, then the stamp is written. A
    /// half-made environment has no stamp and is made again.
    pub fn ensure(&self, base: &Path, stamp: &Path, make: impl FnOnce() -> Result<(), String>) -> Result<(), String> {
        let root = base.join(self.kind);
        std::fs::create_dir_all(&root).map_err(|e| format!("cannot create {}: {e}", root.display()))?;
        let lock = File::create(root.join(".lock")).map_err(|e| format!("cannot create the lock file: {e}"))?;
        lock.lock().map_err(|e| format!("cannot lock {}: {e}", root.join(".lock").display()))?;
        let digest = self.digest();
        if std::fs::read_to_string(stamp).ok().as_deref() == Some(digest.as_str()) {
            return Ok(());
        }
        make()?;
        std::fs::write(stamp, &digest).map_err(|e| format!("cannot write {}: {e}", stamp.display()))
    }
}

/// Runs a command (`python -m venv`, `pip install`, `npm ci`); its stdout on success, else a
/// message with the last 15 lines of its output.
///
/// The command leads a process group of its own, which an interrupt of the run SIGKILLs
/// before the process exits, waiting (at most 5 s) until no process of it is left (issue
/// 40 row 9: pip kept writing into the virtualenv for seconds after a SIGTERM of the front
/// end); on Linux it also dies with this process. The environment it was making has no
/// stamp, so the next run makes it again.
///
/// Its temporary files go to a directory of its own (`$TMPDIR` and `$TMP`), removed when it
/// ends and by the interrupt, after its group is stopped: a killed pip cannot remove its
/// `pip-build-env-*` and downloads itself (the interrupt soak found them left in `$TMPDIR`).
pub(crate) fn run(cmd: &mut Command, what: &str) -> Result<String, String> {
    cmd.stdin(std::process::Stdio::null()).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
    own_group(cmd);
    let scratch = tempfile::Builder::new()
        .prefix("checkpoint-bridge-install-")
        .tempdir()
        .map_err(|e| format!("{what}: cannot make its temporary directory: {e}"))?;
    cmd.env("TMPDIR", scratch.path()).env("TMP", scratch.path()).env("TEMP", scratch.path());
    let scratch_path = scratch.path().to_path_buf();
    let child = cmd.spawn().map_err(|e| format!("{what}: cannot run {:?}: {e}", cmd.get_program()))?;
    let pid = child.id();
    let _stopped_on_interrupt = conformance_core::leftovers::on_interrupt(move || {
        stop_group(pid);
        let _ = std::fs::remove_dir_all(&scratch_path);
    });
    let out = child.wait_with_output().map_err(|e| format!("{what}: cannot wait for {:?}: {e}", cmd.get_program()))?;
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let tail: Vec<&str> = text.lines().rev().take(15).collect::<Vec<_>>().into_iter().rev().collect();
    Err(format!("{what} failed ({}):\n{}", out.status, tail.join("\n")))
}

/// Makes the command lead a new process group, and (Linux) get SIGKILL when this process dies.
#[cfg(unix)]
fn own_group(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    cmd.process_group(0);
    #[cfg(target_os = "linux")]
    // SAFETY: only prctl, an async-signal-safe call, runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0);
            Ok(())
        });
    }
}

#[cfg(not(unix))]
fn own_group(_cmd: &mut Command) {}

/// SIGKILLs the process group that `pid` leads, reaps `pid` and waits (at most 5 s) until
/// no process of the group is left (its other processes are reaped by init).
#[cfg(unix)]
fn stop_group(pid: u32) {
    let Ok(pgid) = i32::try_from(pid) else { return };
    // SAFETY: kill(2) of the group our own child leads, then waitpid on that child (another
    // thread reaping it first makes this answer ECHILD).
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
        libc::waitpid(pgid, std::ptr::null_mut(), 0);
    }
    let start = std::time::Instant::now();
    // SAFETY: kill(2) with signal 0 only asks whether a process of the group exists.
    while unsafe { libc::kill(-pgid, 0) } == 0 && start.elapsed() < std::time::Duration::from_secs(5) {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

#[cfg(not(unix))]
fn stop_group(_pid: u32) {}

/// The saver a `--backend` (and `--saver`) names for language `lang`: `LANG:NAME`, or
/// `LANG` with `saver`, or `LANG:CUSTOM`. `custom` says whether a spec that is not a
/// short name is a valid custom saver, and `custom_hint` how to write one.
///
/// # Errors
/// [`SpecError::Usage`] for anything else, with the valid names.
pub(crate) fn parse_saver(
    lang: &str,
    backend: &str,
    saver: Option<&str>,
    short_names: &[&str],
    custom: impl Fn(&str) -> bool,
    custom_hint: &str,
) -> Result<String, SpecError> {
    let rest =
        backend.strip_prefix(lang).ok_or_else(|| SpecError::Usage(format!("{backend} is not a {lang} backend")))?;
    let named = match rest.strip_prefix(':') {
        Some(n) if !n.is_empty() => Some(n),
        Some(_) => return Err(SpecError::Usage(format!("{lang}: needs a saver name after the colon"))),
        None if rest.is_empty() => None,
        None => return Err(SpecError::Usage(format!("unknown backend `{backend}`"))),
    };
    let spec = match (named, saver) {
        (Some(_), Some(_)) => {
            return Err(SpecError::Usage(format!("--saver goes with --backend {lang}, not with {backend}")))
        }
        (Some(n), None) | (None, Some(n)) => n.trim(),
        (None, None) => {
            return Err(SpecError::Usage(format!(
                "--backend {lang} needs --saver {custom_hint} (or use {lang}:NAME with NAME one of {})",
                short_names.join(", ")
            )))
        }
    };
    if short_names.contains(&spec) || custom(spec) {
        Ok(spec.to_owned())
    } else {
        Err(SpecError::Usage(format!(
            "unknown {lang} saver `{spec}`: give one of {} or {custom_hint}",
            short_names.join(", ")
        )))
    }
}

/// The PostgreSQL URL for a saver that needs one: `given`, else $CHECKPOINT_POSTGRES_URL.
pub(crate) fn postgres_url(name: &str, given: Option<&str>) -> Result<String, SpecError> {
    given.map(str::to_owned).or_else(|| std::env::var(POSTGRES_URL_ENV).ok()).filter(|u| !u.is_empty()).ok_or_else(
        || {
            SpecError::Environment(format!(
                "{name} needs a PostgreSQL server: set {POSTGRES_URL_ENV} or --postgres-url"
            ))
        },
    )
}
