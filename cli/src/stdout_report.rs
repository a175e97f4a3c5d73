//! A report written to standard output (`--json /dev/stdout`, `--junit /dev/fd/1`, or a
//! link to either): the stream then carries that report alone, so that `| jq` or a CI log
//! parser reads it whole. Everything else the run prints to standard output (the progress
//! and the terminal report) goes to standard error instead.

use std::io;
use std::path::PathBuf;

/// When a report path in `paths` names this process's standard output, keeps the stream
/// for the reports and sends the rest of standard output to standard error: the stream is
/// duplicated to a new descriptor `N` (closed on exec, so no child inherits it), each such
/// path becomes `/dev/fd/N` (written through that descriptor by
/// `conformance_core::output_file::write_replacing`, appended as before), and descriptor 1
/// becomes a copy of descriptor 2. Paths that name anything else are left as they are.
///
/// # Errors
/// The `dup` calls' error (out of descriptors); nothing was changed then.
pub(crate) fn reserve_for_reports(paths: &mut [&mut Option<PathBuf>]) -> io::Result<()> {
    let names_stdout =
        |p: &Option<PathBuf>| p.as_deref().and_then(conformance_core::output_file::own_descriptor_of) == Some(1);
    if !paths.iter().any(|p| names_stdout(p)) {
        return Ok(());
    }
    // SAFETY: plain descriptor calls on descriptors this process owns; no memory is shared.
    let kept = unsafe { libc::fcntl(1, libc::F_DUPFD_CLOEXEC, 3) };
    if kept < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above; descriptor 1 becomes a copy of 2, `kept` still holds the stream.
    if unsafe { libc::dup2(2, 1) } < 0 {
        let e = io::Error::last_os_error();
        // SAFETY: `kept` was opened above and is closed once.
        unsafe { libc::close(kept) };
        return Err(e);
    }
    for p in paths.iter_mut().filter(|p| names_stdout(p)) {
        **p = Some(PathBuf::from(format!("/dev/fd/{kept}")));
    }
    Ok(())
}
