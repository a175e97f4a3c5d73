//! The report files a run writes, checked before it starts: two outputs must not be one file
//! (the second would overwrite the first), whatever the spelling (`./x`, `x`, an absolute
//! path, a symbolic link, a hard link).

use std::path::{Path, PathBuf};

/// The same file, or the same name once the directory is resolved (for a file that does
/// not exist yet): `a` and `b` are one file when both exist with the same device and inode
/// (symbolic and hard links included), or when their canonical directories and file names
/// are equal.
pub fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(ma), Ok(mb)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return ma.dev() == mb.dev() && ma.ino() == mb.ino();
        }
    }
    match (resolved_name(a), resolved_name(b)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
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
/// settings parse ([`crate::crash::check_env_settings`]), and no two outputs (that report,
/// `--junit`, `$GITHUB_STEP_SUMMARY`) are one file.
///
/// # Errors
/// The first problem, as one line.
pub fn check_before_run(junit: Option<&Path>) -> Result<(), String> {
    let report = std::env::var_os(crate::harness::REPORT_ENV).filter(|p| !p.is_empty()).map(PathBuf::from);
    if let Some(p) = &report {
        crate::harness::check_writable(p).map_err(|e| format!("{}: {e}", crate::harness::REPORT_ENV))?;
    }
    crate::crash::check_env_settings()?;
    let summary =
        std::env::var_os(conformance_core::render::STEP_SUMMARY_ENV).filter(|p| !p.is_empty()).map(PathBuf::from);
    let report_label = format!("${}", crate::harness::REPORT_ENV);
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
