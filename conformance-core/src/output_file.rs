//! Writing a report (`--json`, `--junit`, a bench's JSON, a fuzz repro) so that an
//! interrupted or failed write never leaves it empty or half-written: the new content goes
//! to a temporary file beside the report, which then replaces the report by `rename`, so a
//! reader sees either the old report or the whole new one (issue 13: reports were written
//! in place, and a signal during the write emptied them).

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::leftovers::{on_interrupt, remove_file, sweep, InterruptGuard, Tail};

/// How many symbolic links [`write_replacing`] follows before it calls the chain a loop
/// (Linux's own limit, `MAXSYMLINKS`).
const MAX_LINKS: usize = 40;

/// The prefix of the temporary file beside a report: `.checkpoint-report-<pid>-<n>`, short
/// whatever the report's name (a name near the 255-byte limit still gets one), and swept by
/// the next write in that directory when its process is gone (a SIGKILL during the write).
const TEMP_PREFIX: &str = ".checkpoint-report-";

/// Writes `bytes` to `path`, replacing what was there in one step where it can.
///
/// - A regular file (or a path that does not exist yet) is replaced by `rename` from a
///   temporary file `.checkpoint-report-<pid>-<n>` in the same directory, created with the
///   existing file's permissions, written and flushed to disk first. The temporary file is
///   removed on an error, by [`crate::leftovers::run_interrupt_cleanups`] when the process
///   is interrupted while it exists, and by a later write in that directory after a
///   SIGKILL.
/// - A symbolic link is followed (a chain too, up to 40 links): the file it points to is
///   replaced and the link stays a link.
/// - Written in place instead, as `std::fs::write` would, where a rename would change what
///   the path is: anything that is not a regular file (`/dev/null`, a terminal, a pipe);
///   a path through a file descriptor (`/dev/stdout`, `/proc/self/fd/N`), appended to,
///   so the shell's redirection target keeps what it holds and stays the file the shell
///   writes; a
///   file with other hard links or another owner (they stay one file with its owner); and
///   an existing file in a directory that takes no new file.
///
/// # Errors
/// What the file system answered: the directory does not take a new file and there is no
/// file to write in place, the disk is full, a loop of links, ... A regular report at
/// `path` is then as it was.
pub fn write_replacing(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let Resolved { target, through_descriptor, descriptor } = resolve_links(path)?;
    let existing = std::fs::metadata(&target).ok();
    if let Some(fd) = descriptor {
        return write_to_descriptor(fd, bytes);
    }
    if through_descriptor {
        return append_to_stream(path, bytes);
    }
    if existing.as_ref().is_some_and(|m| !m.is_file() || shared(m)) {
        return write_in_place(path, bytes);
    }
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    for s in sweep(&dir, TEMP_PREFIX, Tail::Counter, remove_file) {
        eprintln!("note: {}", s.describe());
    }
    let (tmp, guard) = match temporary_in(&dir, existing.as_ref()) {
        Ok(made) => made,
        // A read-only directory with a writable report in it: the report is still written.
        Err(_) if existing.is_some() => return write_in_place(&target, bytes),
        Err(e) => return Err(e),
    };
    let written = fill(&tmp, existing.as_ref(), bytes).and_then(|()| std::fs::rename(&tmp, &target));
    if written.is_err() {
        let _ = remove_file(&tmp);
    }
    drop(guard);
    written
}

/// This process's open file descriptor that `path` stands for (`/dev/stdout`,
/// `/dev/stderr`, `/dev/fd/N`, `/proc/self/fd/N`, or a link to one of them), if it stands
/// for one: [`write_replacing`] writes there through the descriptor itself, whatever it is
/// (a pipe included), never opening the path.
pub fn own_descriptor_of(path: &Path) -> Option<i32> {
    resolve_links(path).ok()?.descriptor
}

/// Where a report path leads.
struct Resolved {
    /// The file the last link of the chain names (existing or not).
    target: PathBuf,
    /// The chain passes through `/proc` or `/dev/fd` (`/dev/stdout` is a link to
    /// `/proc/self/fd/1`): the path stands for an open file descriptor.
    through_descriptor: bool,
    /// That descriptor, when it is one of this process's (`/dev/stdout`, `/dev/stderr`,
    /// `/dev/fd/N`, `/proc/self/fd/N`, `/proc/<this pid>/fd/N`).
    descriptor: Option<i32>,
}

/// The descriptor of this process that `p` names, if it names one.
fn own_descriptor(p: &Path) -> Option<i32> {
    match p.to_str()? {
        "/dev/stdout" => return Some(1),
        "/dev/stderr" => return Some(2),
        _ => {}
    }
    let pid = std::process::id().to_string();
    let rest = p
        .strip_prefix("/dev/fd")
        .or_else(|_| p.strip_prefix("/proc/self/fd"))
        .or_else(|_| p.strip_prefix(Path::new("/proc").join(pid).join("fd")))
        .ok()?;
    rest.to_str()?.parse().ok()
}

fn resolve_links(path: &Path) -> io::Result<Resolved> {
    let descriptor = |p: &Path| p.starts_with("/proc") || p.starts_with("/dev/fd");
    let mut current = path.to_path_buf();
    let mut through_descriptor = descriptor(&current);
    let mut fd = own_descriptor(&current);
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&current) {
            Ok(m) if m.file_type().is_symlink() => {
                let next = std::fs::read_link(&current)?;
                current = match current.parent() {
                    Some(dir) if next.is_relative() => dir.join(next),
                    _ => next,
                };
                through_descriptor |= descriptor(&current);
                fd = fd.or_else(|| own_descriptor(&current));
            }
            _ => return Ok(Resolved { target: current, through_descriptor, descriptor: fd }),
        }
    }
    Err(io::Error::other(format!("{} is a loop of symbolic links", path.display())))
}

/// A regular file that a rename would split from its other names or give to this process's
/// user: more than one hard link, or another owner.
#[cfg(unix)]
fn shared(m: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid(2) takes nothing and cannot fail.
    m.nlink() > 1 || m.uid() != unsafe { libc::geteuid() }
}

#[cfg(not(unix))]
fn shared(_m: &std::fs::Metadata) -> bool {
    false
}

/// Creates a new, empty temporary file in `dir`, with `existing`'s permissions when given
/// (so the content is never readable by more users than the report's), and the interrupt
/// cleanup that removes it, registered before the file exists (a signal right after the
/// creation still finds it).
fn temporary_in(dir: &Path, existing: Option<&std::fs::Metadata>) -> io::Result<(PathBuf, InterruptGuard)> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    crate::leftovers::claim();
    loop {
        let n = SEQ.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!("{TEMP_PREFIX}{}-{n}", std::process::id()));
        let guard = {
            let tmp = tmp.clone();
            on_interrupt(move || {
                let _ = remove_file(&tmp);
            })
        };
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        if let Some(m) = existing {
            use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
            options.mode(m.permissions().mode() & 0o7777);
        }
        #[cfg(not(unix))]
        let _ = existing;
        match options.open(&tmp) {
            Ok(_) => return Ok((tmp, guard)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Writes `bytes` into the temporary file `tmp`, gives it `existing`'s exact permissions
/// (the umask may have taken some at creation), and flushes it to disk.
fn fill(tmp: &Path, existing: Option<&std::fs::Metadata>, bytes: &[u8]) -> io::Result<()> {
    let mut file = std::fs::OpenOptions::new().write(true).truncate(true).open(tmp)?;
    file.write_all(bytes)?;
    if let Some(m) = existing {
        file.set_permissions(m.permissions())?;
    }
    file.sync_all()
}

/// Writes `bytes` to this process's open descriptor `fd` itself (a duplicate of it, so the
/// shell's file offset moves with the report and what the shell writes next follows it):
/// `--json /dev/stdout` is the report printed to stdout, wherever stdout goes.
#[cfg(unix)]
fn write_to_descriptor(fd: i32, bytes: &[u8]) -> io::Result<()> {
    use std::os::unix::io::FromRawFd;
    // SAFETY: dup(2) of a descriptor number; a closed one answers EBADF.
    let copy = unsafe { libc::dup(fd) };
    if copy < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `copy` is a fresh descriptor this function owns; the File closes it.
    let mut file = unsafe { std::fs::File::from_raw_fd(copy) };
    file.write_all(bytes)?;
    file.flush()
}

#[cfg(not(unix))]
fn write_to_descriptor(_fd: i32, _bytes: &[u8]) -> io::Result<()> {
    Err(io::Error::other("file descriptors are a Unix notion"))
}

/// Writes `bytes` at the end of the open file `path` stands for (another process's
/// descriptor under `/proc`): neither
/// truncated nor created, so what the shell's redirection already holds stays, with `>`
/// as with `>>`.
fn append_to_stream(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = std::fs::OpenOptions::new().append(true).open(path)?;
    file.write_all(bytes)?;
    file.flush()
}

/// Writes `bytes` into `target` as it is: truncated, then written.
fn write_in_place(target: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = std::fs::OpenOptions::new().write(true).create(true).truncate(true).open(target)?;
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
    fn a_hard_linked_file_stays_one_file() {
        let d = dir();
        let a = d.path().join("a.json");
        std::fs::write(&a, b"old").unwrap();
        std::fs::hard_link(&a, d.path().join("b.json")).unwrap();
        write_replacing(&d.path().join("b.json"), b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "new", "the other name sees the new report");
    }

    #[test]
    fn a_name_near_the_limit_still_gets_its_report() {
        let d = dir();
        let p = d.path().join("r".repeat(250));
        write_replacing(&p, b"x").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "x");
    }

    #[test]
    fn a_killed_writers_temporary_file_goes_with_the_next_write() {
        let d = dir();
        // A pid that is gone: the lock file protocol says so when it has no lock file and
        // kill(pid, 0) answers ESRCH.
        let gone = (4_000_000..4_100_000u32).find(|p| crate::leftovers::process_gone(*p)).unwrap();
        let left = d.path().join(format!(".checkpoint-report-{gone}-0"));
        std::fs::write(&left, b"half").unwrap();
        write_replacing(&d.path().join("r.json"), b"x").unwrap();
        assert!(!left.exists(), "the killed writer's temporary file is still there");
        assert_eq!(names(d.path()), ["r.json"]);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_path_through_a_descriptor_writes_the_open_file_in_place() {
        use std::os::unix::io::AsRawFd;
        let d = dir();
        let p = d.path().join("log.txt");
        std::fs::write(&p, b"").unwrap();
        // Opened as a shell's `>` opens it (not in append mode): the report must move its offset.
        let mut log = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
        std::io::Write::write_all(&mut log, b"before\n").unwrap();
        let fd = std::path::PathBuf::from(format!("/proc/self/fd/{}", log.as_raw_fd()));
        write_replacing(&fd, b"report\n").unwrap();
        std::io::Write::write_all(&mut log, b"after\n").unwrap();
        // Renamed over, the file would hold only the report and "after" would go to a
        // deleted file: written in place, the shell's file keeps receiving output.
        let text = std::fs::read_to_string(&p).unwrap();
        assert_eq!(text, "before\nreport\nafter\n", "the stream keeps what it held, in order");
        assert_eq!(names(d.path()), ["log.txt"]);
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
