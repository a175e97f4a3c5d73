//! The report files a run writes, checked before it starts: two outputs must not be one file
//! (the second would overwrite the first), whatever the spelling (`./x`, `x`, an absolute
//! path, a symbolic link, a hard link).

use std::path::{Path, PathBuf};

/// The environment variable naming the file the JSON report of a `checkpointer_test!`
/// run is written to.
pub const REPORT_ENV: &str = "CHECKPOINT_CONFORMANCE_REPORT";

/// The same file, or the same name once the directory is resolved (for a file that does
/// not exist yet): `a` and `b` are one file when both exist with the same device and inode
/// (symbolic and hard links included), or when their canonical directories and file names
/// are equal.
///
/// A symbolic link whose chain ends nowhere is every name on its chain ([`link_chain`]): a
/// write through it creates the last one, so it is the same file as any of them.
pub fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(ma), Ok(mb)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return ma.dev() == mb.dev() && ma.ino() == mb.ino();
        }
    }
    let names = |p: &Path| link_chain(p).iter().filter_map(|n| resolved_name(n)).collect::<Vec<_>>();
    let (na, nb) = (names(a), names(b));
    na.iter().any(|x| nb.contains(x))
}

/// `path`, then, when it is a symbolic link whose target does not exist (a dangling link
/// or chain of links), each link target on the way, relative targets joined to their
/// link's directory; at most 40 links are followed (the kernel's limit). A write through
/// `path` creates the last name. For a path that exists or is no link, just `path`.
pub fn link_chain(path: &Path) -> Vec<PathBuf> {
    let mut chain = vec![path.to_path_buf()];
    if std::fs::metadata(path).is_ok() {
        return chain;
    }
    let mut at = path.to_path_buf();
    for _ in 0..40 {
        let Ok(target) = std::fs::read_link(&at) else { break };
        at = match at.parent() {
            Some(dir) if target.is_relative() => dir.join(target),
            _ => target,
        };
        chain.push(at.clone());
    }
    chain
}

/// `path` with its directory made canonical (symbolic links, `.` and `..` resolved) and the
/// file name kept; `None` when the directory cannot be resolved.
pub fn resolved_name(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    Some(std::fs::canonicalize(parent).ok()?.join(name))
}

/// Fails when two of the `(what, path)` outputs are the same file ([`same_file`]).
///
/// # Errors
/// One line naming both outputs.
pub fn check_distinct(outputs: &[(&str, &Path)]) -> Result<(), String> {
    for (i, (wa, a)) in outputs.iter().enumerate() {
        for (wb, b) in &outputs[i + 1..] {
            if same_file(a, b) {
                return Err(format!(
                    "{wa} {} and {wb} {} are the same file; give each report its own path",
                    a.display(),
                    b.display()
                ));
            }
        }
    }
    Ok(())
}

/// The checks the `checkpointer_test!` main makes before a run, each a usage error (one
/// line, exit 2): `$CHECKPOINT_CONFORMANCE_REPORT` can be written, the crash test's
/// settings parse ([`crate::crash::check_env_settings`]), the step summary can be
/// appended ([`check_step_summary`]), and no two outputs (that report,
/// `--junit`, `$GITHUB_STEP_SUMMARY`) are one file.
///
/// # Errors
/// The first problem, as one line.
pub fn check_before_run(junit: Option<&Path>) -> Result<(), String> {
    let report = std::env::var_os(REPORT_ENV).filter(|p| !p.is_empty()).map(PathBuf::from);
    if let Some(p) = &report {
        check_writable(p).map_err(|e| format!("{}: {e}", REPORT_ENV))?;
    }
    crate::crash::check_env_settings()?;
    check_step_summary()?;
    let summary = step_summary_path();
    let report_label = format!("${}", REPORT_ENV);
    let summary_label = format!("${}", conformance_core::render::STEP_SUMMARY_ENV);
    let mut outputs: Vec<(&str, &Path)> = Vec::new();
    if let Some(p) = &report {
        outputs.push((&report_label, p));
    }
    if let Some(p) = junit {
        outputs.push(("--junit", p));
    }
    if let Some(p) = &summary {
        outputs.push((&summary_label, p));
    }
    check_distinct(&outputs)
}

/// `$GITHUB_STEP_SUMMARY` as a path, when it is set and not empty (the markdown summary is
/// appended there after the run: `conformance_core::render::append_step_summary`).
pub fn step_summary_path() -> Option<PathBuf> {
    std::env::var_os(conformance_core::render::STEP_SUMMARY_ENV).filter(|p| !p.is_empty()).map(PathBuf::from)
}

/// Fails when `$GITHUB_STEP_SUMMARY` is set but the summary could not be appended there
/// ([`check_writable`]: a directory, a missing directory, a FIFO, which
/// would block the run after its report, or a file that cannot be written). Checked before
/// any case runs, as `--json` is.
///
/// # Errors
/// One line naming the variable and the problem.
pub fn check_step_summary() -> Result<(), String> {
    match step_summary_path() {
        Some(p) => check_writable(&p).map_err(|e| format!("${}: {e}", conformance_core::render::STEP_SUMMARY_ENV)),
        None => Ok(()),
    }
}

/// Checks, without changing any file, that a report can be written at `path`: it is not a
/// directory, its directory exists, and an existing file is writable (a new file is
/// created and removed again to check the directory's permissions). A symbolic link that
/// points nowhere is checked as its target (the report would be written there) and named
/// with it; a loop of links is named as such.
///
/// # Errors
/// A one-line message naming the path and the problem.
pub fn check_writable(path: &Path) -> Result<(), String> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        match std::fs::metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return check_dangling_link(path),
            Err(e) => return Err(format!("cannot write {}: {e}", path.display())),
            Ok(_) => {}
        }
    }
    if path.is_dir() {
        return Err(format!("{} is a directory, not a file", path.display()));
    }
    // One of this process's open descriptors (`--json /dev/stdout` with stdout a pipe, as
    // under `| jq` or a CI log): written through the descriptor, never opened, so a pipe
    // does not block (issue 40 row 7).
    if conformance_core::output_file::own_descriptor_of(path).is_some() && std::fs::metadata(path).is_ok() {
        return Ok(());
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        // Opening a FIFO for writing blocks until a reader comes: refused unopened.
        if std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo()) {
            return Err(format!("{} is a FIFO, not a file", path.display()));
        }
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !parent.is_dir() {
        return Err(format!("cannot write {}: directory {} does not exist", path.display(), parent.display()));
    }
    if path.exists() {
        std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map(drop)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    } else {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .and_then(|f| {
                drop(f);
                std::fs::remove_file(path)
            })
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }
}

/// [`check_writable`] for a symbolic link whose target does not exist: the target's
/// directory must exist and take a new file.
fn check_dangling_link(link: &Path) -> Result<(), String> {
    let target = std::fs::read_link(link).map_err(|e| format!("cannot write {}: {e}", link.display()))?;
    let target = match link.parent() {
        Some(dir) if target.is_relative() => dir.join(target),
        _ => target,
    };
    let named =
        |why: String| format!("cannot write {}: it is a symbolic link to {}, {why}", link.display(), target.display());
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(named(format!("whose directory {} does not exist", dir.display())));
    }
    check_writable(&target).map_err(|e| named(format!("which cannot be created ({e})")))
}

/// Where the outputs of a whole-suite run go.
#[derive(Clone, Debug, Default)]
pub struct ReportOutputs {
    /// JSON report path.
    pub json: Option<PathBuf>,
    /// JUnit XML path.
    pub junit: Option<PathBuf>,
    /// Append the markdown summary to `$GITHUB_STEP_SUMMARY` when set.
    pub step_summary: bool,
}
