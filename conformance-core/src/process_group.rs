//! A child process and everything it started, as one process group: the durability crash
//! test starts its child as the leader of a group of its own, kills the whole group, and
//! waits until none of it is alive before it opens the storage again. A saver served by
//! another process (a bridge child of the crash child) holds the storage in that process:
//! reaping the crash child alone does not mean its locks and files are let go.
//!
//! Unix only; elsewhere [`kill`] sends nothing and [`wait_gone`] answers at once.

use std::time::{Duration, Instant};

/// Sends SIGKILL to every process of process group `pgid` (a child started as the leader
/// of a group of its own, `CommandExt::process_group(0)`, with whatever it started).
pub fn kill(pgid: u32) {
    #[cfg(unix)]
    if let Ok(pgid) = i32::try_from(pgid) {
        if pgid > 1 {
            // SAFETY: kill(2) on a negative pid signals that process group; no pointers.
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
    }
    #[cfg(not(unix))]
    let _ = pgid;
}

/// Waits until no process of group `pgid` is alive, at most `limit`; true when none is.
/// A zombie (dead, not yet reaped by its new parent) does not count: it holds no file,
/// lock or connection any more.
pub fn wait_gone(pgid: u32, limit: Duration) -> bool {
    let start = Instant::now();
    loop {
        if !any_alive(pgid) {
            return true;
        }
        if start.elapsed() >= limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Whether a process of group `pgid` is alive (not a zombie).
#[cfg(unix)]
fn any_alive(pgid: u32) -> bool {
    let Ok(raw) = i32::try_from(pgid) else { return false };
    // SAFETY: kill(2) with signal 0 sends nothing; it only checks whether the group has
    // a member.
    let member = unsafe { libc::kill(-raw, 0) == 0 };
    member && !only_zombies(pgid)
}

#[cfg(not(unix))]
fn any_alive(_pgid: u32) -> bool {
    false
}

/// True when every process of group `pgid` listed in /proc is a zombie (Linux); false
/// where there is no /proc to tell. A process is a zombie once every one of its threads is:
/// its main thread may be one while others are still exiting, and its files and locks go
/// only with the last.
#[cfg(unix)]
fn only_zombies(pgid: u32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else { return false };
    let mut seen = false;
    for entry in entries.flatten() {
        if !entry.file_name().to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        match stat_fields(&entry.path().join("stat")) {
            Some((_, _, group)) if group == pgid => seen = true,
            _ => continue,
        }
        let Ok(tasks) = std::fs::read_dir(entry.path().join("task")) else { continue };
        for task in tasks.flatten() {
            if stat_fields(&task.path().join("stat")).is_some_and(|(state, _, _)| state != 'Z' && state != 'X') {
                return false;
            }
        }
    }
    seen
}

/// The state, parent pid and process group of a `/proc/.../stat` file: `pid (comm) state
/// ppid pgrp ...`, `comm` possibly holding spaces and parentheses.
#[cfg(unix)]
fn stat_fields(path: &std::path::Path) -> Option<(char, u32, u32)> {
    let stat = std::fs::read_to_string(path).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    Some((fields.first()?.chars().next()?, fields.get(1)?.parse().ok()?, fields.get(2)?.parse().ok()?))
}

/// Makes this process the reaper of the processes it starts and their own (Linux's
/// `PR_SET_CHILD_SUBREAPER`): a process whose parent exits (a `sleep` a saver started, an
/// installer's helper) becomes this process's child instead of init's, so
/// [`end_descendants`] still finds it. A front end calls it before it starts anything
/// (issue 40 row 15). Elsewhere nothing.
pub fn adopt_orphans() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl(PR_SET_CHILD_SUBREAPER) takes no pointers.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0);
    }
}

/// Ends every process this one started, directly or not, before it exits: SIGKILLs each
/// descendant still there, reaps its own children, and waits until none is left (at most
/// `limit`). With [`adopt_orphans`] this includes processes whose parent already exited, so
/// nothing of the run outlives it (issue 40 row 15). Only for the moment a front end exits:
/// it reaps every child, whatever thread was waiting for it. Linux only; elsewhere nothing.
pub fn end_descendants(limit: Duration) {
    #[cfg(target_os = "linux")]
    {
        let start = Instant::now();
        loop {
            // SAFETY: waitpid(2) without a status pointer, not blocking: reaps this
            // process's dead children.
            while unsafe { libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) } > 0 {}
            let live = descendants(std::process::id());
            if live.is_empty() || start.elapsed() >= limit {
                return;
            }
            for pid in live {
                if let Ok(pid) = i32::try_from(pid) {
                    // SAFETY: kill(2) of a descendant of this process.
                    unsafe {
                        libc::kill(pid, libc::SIGKILL);
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = limit;
}

/// The processes below `root` in the process tree (children, their children, ...) that are
/// not zombies of `root` itself (those are reaped, not killed).
#[cfg(target_os = "linux")]
fn descendants(root: u32) -> Vec<u32> {
    let mut parent_of = Vec::new();
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for entry in entries.flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
            if let Some((state, ppid, _)) = stat_fields(&entry.path().join("stat")) {
                parent_of.push((pid, ppid, state));
            }
        }
    }
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(parent_of.iter().filter(|(_, ppid, _)| *ppid == parent).map(|(pid, _, _)| *pid));
        i += 1;
    }
    found.retain(|pid| *pid != root);
    // A zombie child of the root is reaped by its caller's waitpid; a zombie deeper down is
    // its parent's to reap, and goes when that parent goes.
    found.retain(|pid| !parent_of.iter().any(|(p, ppid, state)| p == pid && *ppid == root && *state == 'Z'));
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A group of a shell and its own child: killing the group ends both, and waiting
    /// says so.
    #[cfg(unix)]
    #[test]
    fn killing_a_group_ends_its_grandchildren() {
        use std::os::unix::process::CommandExt;
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 30 & wait"])
            .process_group(0)
            .spawn()
            .expect("sh starts");
        let pgid = child.id();
        std::thread::sleep(Duration::from_millis(100));
        assert!(any_alive(pgid));
        kill(pgid);
        let _ = child.wait();
        assert!(wait_gone(pgid, Duration::from_secs(5)), "the group's sleep outlived the kill");
    }
}
