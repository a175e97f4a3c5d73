//! The parent's side of one kill (see the parent module): start the child, read its
//! acknowledgements, kill it with SIGKILL at the planned moment.

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::{CRASH_CHILD_ENV, PREFIX, READY_TIMEOUT, STALL_TIMEOUT};

/// How long the processes the child started may take to die after the kill.
const GROUP_GONE_TIMEOUT: Duration = Duration::from_secs(10);

/// One acknowledged call of the child.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Ack {
    /// `put` of step `i` as checkpoint `id`.
    Put { i: usize, id: String },
    /// `put_writes` of task `task` for step `i` (checkpoint `id`).
    Writes { i: usize, id: String, task: String },
}

fn parse_ack(rest: &str) -> Option<Ack> {
    let parts: Vec<&str> = rest.split(' ').collect();
    match parts.as_slice() {
        ["put", i, id] => Some(Ack::Put { i: i.parse().ok()?, id: (*id).to_owned() }),
        ["writes", i, id, task] => {
            Some(Ack::Writes { i: i.parse().ok()?, id: (*id).to_owned(), task: (*task).to_owned() })
        }
        _ => None,
    }
}

/// What one child run gave.
#[derive(Default)]
pub(super) struct ChildLog {
    ready: bool,
    /// What the child acknowledged before the kill.
    pub(super) acks: Vec<Ack>,
    /// The child's `error` line, if a call failed.
    pub(super) error: Option<String>,
    /// When the kill came, for messages.
    pub(super) moment: String,
}

/// When to kill: after `after_acks` acknowledgements, `fraction` of a call later.
#[derive(Clone, Copy, Debug)]
pub(super) struct KillPlan {
    pub(super) after_acks: usize,
    pub(super) fraction: f64,
}

/// Starts the child, waits for `ready` and the acknowledgements of the plan, then for the
/// plan's fraction of a call, kills it with SIGKILL and returns what it acknowledged.
pub(super) async fn run_and_kill(exe: &std::path::Path, request: &str, plan: KillPlan) -> Result<ChildLog, String> {
    let mut command = Command::new(exe);
    command
        .args(std::env::args_os().skip(1))
        .env(CRASH_CHILD_ENV, request)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // The child leads a process group of its own, with whatever it starts (a bridged
    // saver's child process): the kill ends them all, and the storage is opened again only
    // once none is alive.
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command.spawn().map_err(|e| format!("could not start the child {}: {e}", exe.display()))?;
    // An interrupted front end kills the child before it exits (it would go on writing),
    // and removes the child's lock file.
    let child_pid = child.id();
    let _killed_on_interrupt = conformance_core::leftovers::on_interrupt(move || {
        conformance_core::process_group::kill(child_pid);
        conformance_core::leftovers::kill_and_release_child(child_pid);
    });
    let log = Arc::new(Mutex::new(ChildLog::default()));
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel::<Instant>();
    let (acks_tx, mut acks_rx) = tokio::sync::watch::channel((0usize, None::<Instant>));
    let stdout = child.stdout.take();
    let out_log = log.clone();
    let out_reader = std::thread::spawn(move || {
        let mut ready_tx = Some(ready_tx);
        let Some(stdout) = stdout else { return };
        // Only whole lines count: a line cut by the kill is not an acknowledgement the
        // parent received.
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        while matches!(reader.read_line(&mut line), Ok(n) if n > 0) {
            if let Some(rest) = line.strip_suffix('\n').and_then(|l| l.strip_prefix(PREFIX)).map(str::trim) {
                let mut log = out_log.lock().unwrap_or_else(|e| e.into_inner());
                if rest == "ready" {
                    log.ready = true;
                    if let Some(tx) = ready_tx.take() {
                        let _ = tx.send(Instant::now());
                    }
                } else if let Some(ack) = rest.strip_prefix("ack ").and_then(parse_ack) {
                    log.acks.push(ack);
                    let n = log.acks.len();
                    acks_tx.send_replace((n, Some(Instant::now())));
                } else if let Some(e) = rest.strip_prefix("error ") {
                    log.error = Some(e.to_owned());
                }
            }
            line.clear();
        }
    });
    let stderr = child.stderr.take();
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut s) = stderr {
            let _ = s.read_to_end(&mut buf);
        }
        // The panic message if there is one (a backtrace may follow it), else the end.
        let text = String::from_utf8_lossy(&buf).into_owned();
        match text.find("panicked at") {
            Some(at) => text[at..].chars().take(1000).collect(),
            None => text.chars().rev().take(2000).collect::<Vec<_>>().into_iter().rev().collect::<String>(),
        }
    });
    let started = Instant::now();
    let mut moment = "before the child was ready".to_owned();
    let mut stalled = None;
    if let Ok(Ok(ready_at)) = tokio::time::timeout(READY_TIMEOUT, ready_rx).await {
        // Wait for the planned acknowledgements (or the child's end), then a fraction of
        // the average call.
        let timed_out = loop {
            if acks_rx.borrow_and_update().0 >= plan.after_acks {
                break false;
            }
            match tokio::time::timeout(STALL_TIMEOUT, acks_rx.changed()).await {
                Ok(Ok(())) => {}
                // The child's stdout ended: it exited (its status says how).
                Ok(Err(_)) => break false,
                Err(_) => break true,
            }
        };
        let (n, last) = *acks_rx.borrow();
        if timed_out {
            stalled = Some(format!(
                "the child acknowledged {n} calls, then none for {} s while the parent waited for {}: its writes \
                 stall (another instance has the storage open)",
                STALL_TIMEOUT.as_secs(),
                plan.after_acks
            ));
        }
        let pace = match last {
            Some(last) if n > 0 => last.duration_since(ready_at) / n as u32,
            _ => Duration::from_millis(1),
        };
        let delay = pace.mul_f64(plan.fraction);
        tokio::time::sleep(delay).await;
        let n_now = acks_rx.borrow().0;
        moment = format!(
            "killed after {n_now} acknowledged calls, {:.2} ms after the wanted {}{} (calls took {:.2} ms on average)",
            delay.as_secs_f64() * 1e3,
            plan.after_acks,
            if timed_out { " (not reached in time)" } else { "" },
            pace.as_secs_f64() * 1e3
        );
    }
    // A child that ended before the kill ended by itself: fine after the whole workload
    // (exit 0), a failure otherwise (its error line or its panic on stderr says why).
    let ended_early = child.try_wait().ok().flatten();
    conformance_core::process_group::kill(child_pid);
    let _ = child.kill();
    let (status, stderr_tail, group_gone) = tokio::task::spawn_blocking(move || {
        let status = child.wait();
        // Reaped: its lock file is this process's to remove (the child could not).
        conformance_core::leftovers::release_child(child.id());
        let group_gone = conformance_core::process_group::wait_gone(child_pid, GROUP_GONE_TIMEOUT);
        let _ = out_reader.join();
        let tail = err_reader.join().unwrap_or_default();
        (status, tail, group_gone)
    })
    .await
    .map_err(|e| format!("waiting for the child failed: {e}"))?;
    if !group_gone {
        return Err(format!(
            "a process the child started (process group {child_pid}) was still alive {} s after the kill, so the \
             storage cannot be checked as the kill left it",
            GROUP_GONE_TIMEOUT.as_secs()
        ));
    }
    let mut log = std::mem::take(&mut *log.lock().unwrap_or_else(|e| e.into_inner()));
    log.moment = moment;
    if !log.ready {
        let why = match &log.error {
            Some(e) => e.clone(),
            None => format!(
                "it did not report ready within {:.1} s (exit: {status:?}); is child_main_if_requested the first \
                 call in main? stderr: {stderr_tail}",
                started.elapsed().as_secs_f64()
            ),
        };
        return Err(format!("the child could not open the storage: {why}"));
    }
    if let Some(status) = ended_early.filter(|s| !s.success()) {
        let why = log.error.clone().unwrap_or_else(|| format!("stderr: {stderr_tail}"));
        return Err(format!("the child exited with {status} before the kill: {why}"));
    }
    if let (Some(s), None) = (stalled, &log.error) {
        return Err(s);
    }
    Ok(log)
}
