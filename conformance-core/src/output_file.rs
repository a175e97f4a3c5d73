//! Writing a report (`--json`, `--junit`, a bench's JSON, a fuzz repro) so that an
//! interrupted or failed write never leaves it empty or half-written: the new content goes
//! to a temporary file beside the report, which then replaces the report by `rename`, so a
//! reader sees either the old report or the whole new one (issue 13: reports were written
//! in place, and a signal during the write emptied them).

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::leftovers::{on_interrupt, remove_file};

/// How many symbolic links [`write_replacing`] follows before it calls the chain a loop
/// (Linux's own limit, `MAXSYMLINKS`).
const MAX_LINKS: usize = 40;

/// Writes `bytes` to `path`, replacing what was there in one step.
///
/// - A regular file (or a path that does not exist yet) is replaced by `rename` from a
///   temporary file `.<name>.<pid>-<n>.tmp` in the same directory, written and flushed to
///   disk first. An existing file's permissions are kept. The temporary file is removed on
///   an error, and by [`crate::leftovers::run_interrupt_cleanups`] when the process is
///   interrupted while it exists.
/// - A symbolic link is followed (a chain too, up to 40 links): the file it points to is
///   replaced and the link stays a link.
/// - Anything else that exists (a character device such as `/dev/stdout` or `/dev/null`, a
///   pipe) cannot be renamed over: it is written in place, as `std::fs::write` would.
///
/// # Errors
/// What the file system answered: the directory does not take a new file, the disk is
/// full, a loop of links, ... The report at `path` is then as it was.
pub fn write_replacing(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let target = resolve_links(path)?;
    match std::fs::metadata(&target) {
        Ok(m) if !m.is_file() => return write_in_place(&target, bytes),
        _ => {}
    }
    let tmp = temporary_beside(&target)?;
    let guard = {
        let tmp = tmp.clone();
        on_interrupt(move || {
            let _ = remove_file(&tmp);
        })
    };
    let written = fill(&tmp, &target, bytes).and_then(|()| std::fs::rename(&tmp, &target));
    if written.is_err() {
        let _ = remove_file(&tmp);
    }
    drop(guard);
    written
}

/// The file `path` names once every symbolic link in the chain is followed (the last link's
/// target, existing or not).
fn resolve_links(path: &Path) -> io::Result<PathBuf> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&current) {
            Ok(m) if m.file_type().is_symlink() => {
                let next = std::fs::read_link(&current)?;
                current = match current.parent() {
                    Some(dir) if next.is_relative() => dir.join(next),
                    _ => next,
                };
            }
            _ => return Ok(current),
        }
    }
    Err(io::Error::other(format!("{} is a loop of symbolic links", path.display())))
}

/// Creates a new, empty temporary file in `target`'s directory.
fn temporary_beside(target: &Path) -> io::Result<PathBuf> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    loop {
        let n = SEQ.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{name}.{}-{n}.tmp", std::process::id()));
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(_) => return Ok(tmp),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Writes `bytes` into the temporary file `tmp`, gives it `target`'s permissions when
/// `target` exists, and flushes it to disk.
fn fill(tmp: &Path, target: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = std::fs::OpenOptions::new().write(true).truncate(true).open(tmp)?;
    file.write_all(bytes)?;
    if let Ok(m) = std::fs::metadata(target) {
        file.set_permissions(m.permissions())?;
    }
    file.sync_all()
}

/// Writes `bytes` into an existing file that is not a regular file (a device, a pipe).
fn write_in_place(target: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = std::fs::OpenOptions::new().write(true).truncate(true).open(target)?;
    file.write_all(bytes)?;
    file.flush()
}

#[cfg(test)]
mod tests {
    use super::write_replacing;
    use std::io::Read;

    fn dir() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    fn names(dir: &std::path::Path) -> Vec<String> {
        let mut v: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    }

    #[test]
    fn the_old_report_is_never_truncated_in_place() {
        let d = dir();
        let p = d.path().join("report.json");
        std::fs::write(&p, b"old report").unwrap();
        // A reader that opened the old report still reads it whole: the new one replaced the
        // directory entry instead of rewriting the file (written in place, this reads "new").
        let mut reader = std::fs::File::open(&p).unwrap();
        write_replacing(&p, b"new").unwrap();
        let mut seen = String::new();
        reader.read_to_string(&mut seen).unwrap();
        assert_eq!(seen, "old report");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
        assert_eq!(names(d.path()), ["report.json"], "no temporary file is left");
    }

    #[test]
    fn a_failed_write_leaves_the_report_and_no_temporary_file() {
        let d = dir();
        let p = d.path().join("report.json");
        std::fs::write(&p, b"old").unwrap();
        // A directory where the report's name is: rename cannot replace it.
        let blocked = d.path().join("sub");
        std::fs::create_dir(&blocked).unwrap();
        std::fs::create_dir(blocked.join("report.json")).unwrap();
        assert!(write_replacing(&blocked.join("report.json"), b"x").is_err());
        assert_eq!(names(&blocked), ["report.json"]);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "old");
    }

    #[cfg(unix)]
    #[test]
    fn a_link_stays_a_link_and_its_file_is_replaced_with_its_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let d = dir();
        let real = d.path().join("real.json");
        std::fs::write(&real, b"old").unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
        let link = d.path().join("link.json");
        std::os::unix::fs::symlink("real.json", &link).unwrap();
        write_replacing(&link, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
        assert_eq!(std::fs::metadata(&real).unwrap().permissions().mode() & 0o777, 0o640);
        assert_eq!(names(d.path()), ["link.json", "real.json"]);
    }

    #[cfg(unix)]
    #[test]
    fn a_dangling_link_gets_its_file_and_a_loop_is_an_error() {
        let d = dir();
        let link = d.path().join("link.json");
        std::os::unix::fs::symlink("made.json", &link).unwrap();
        write_replacing(&link, b"x").unwrap();
        assert_eq!(std::fs::read_to_string(d.path().join("made.json")).unwrap(), "x");
        let a = d.path().join("a");
        let b = d.path().join("b");
        std::os::unix::fs::symlink(&b, &a).unwrap();
        std::os::unix::fs::symlink(&a, &b).unwrap();
        assert!(write_replacing(&a, b"x").unwrap_err().to_string().contains("loop"));
    }

    #[cfg(unix)]
    #[test]
    fn a_device_is_written_in_place_and_a_full_one_is_an_error() {
        use std::os::unix::fs::FileTypeExt;
        write_replacing(std::path::Path::new("/dev/null"), b"x").unwrap();
        assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device(), "still the device");
        if std::path::Path::new("/dev/full").exists() {
            assert!(write_replacing(std::path::Path::new("/dev/full"), b"x").is_err());
        }
    }
}
