//! Output paths of a conformance run (either front end), checked before the run: a report must never be
//! written over the `--sqlite-path` database, one of its side files (`-wal`, `-shm`,
//! `-journal`) or its case files, nor over another report, whatever the spelling of the path
//! (`./x`, relative or absolute, a symbolic or hard link: `conformance_spec::outputs`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use conformance_spec::outputs::{check_distinct, link_chain, resolved_name, same_file};

/// The files SQLite may write for the database `base`: itself and its side files, for the
/// path as given and for the file it resolves to (SQLite names the side files after the
/// resolved path), and for a dangling link every name on its chain
/// ([`link_chain`]: SQLite would create the last one).
fn database_files(base: &Path) -> Vec<PathBuf> {
    let mut bases = link_chain(base);
    if let Ok(real) = std::fs::canonicalize(base) {
        bases.push(real);
    }
    let mut files = Vec::new();
    for b in bases {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let mut name = OsString::from(b.as_os_str());
            name.push(suffix);
            files.push(PathBuf::from(name));
        }
    }
    files
}

/// Whether `output` would be one of the case files `<base>.case-…` beside `base`.
fn is_case_file(output: &Path, base: &Path) -> bool {
    let (Some(out), Some(b)) = (resolved_name(output), resolved_name(base)) else { return false };
    let (Some(on), Some(bn)) = (out.file_name().and_then(|n| n.to_str()), b.file_name().and_then(|n| n.to_str()))
    else {
        return false;
    };
    out.parent() == b.parent() && on.starts_with(&format!("{bn}.case-"))
}

/// Fails when an output (`(flag, path)`) is the database at `sqlite_path`, one of its side
/// or case files, or the same file as another output.
///
/// # Errors
/// One line naming the flags and paths.
pub fn check_outputs(sqlite_path: Option<&Path>, outputs: &[(&str, &Path)]) -> Result<(), String> {
    if let Some(base) = sqlite_path {
        let files = database_files(base);
        for (flag, out) in outputs {
            if let Some(f) = files.iter().find(|f| same_file(out, f)) {
                return Err(format!(
                    "{flag} {} is the --sqlite-path database or one of its files ({}); the database is never written: \
                     give the report another path",
                    out.display(),
                    f.display()
                ));
            }
            if is_case_file(out, base) {
                return Err(format!(
                    "{flag} {} is named like a case file of --sqlite-path {} (removed by the run); give the report another path",
                    out.display(),
                    base.display()
                ));
            }
        }
    }
    check_distinct(outputs)
}
