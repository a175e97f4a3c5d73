//! The parent's side of one kill (see the parent module): start the child, read its
//! acknowledgements, kill it with SIGKILL at the planned moment.

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::plan::{KillPlan, Moment, Phase};
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
    /// When the child reported `ready`.
    ready_at: Option<Instant>,
    /// What the child acknowledged before the kill.
    pub(super) acks: Vec<Ack>,
    /// When each of [`ChildLog::acks`] arrived.
    at: Vec<Instant>,
    /// The child's `error` line, if a call failed.
    pub(super) error: Option<String>,
    /// When the kill came, for messages.
    pub(super) moment: String,
}

impl ChildLog {
    /// The child's average time for a call of `phase`: between the acknowledgement before
    /// such a call and its own (the time after `ready` for the first call), over the calls
    /// of that phase acknowledged so far; of any call when none was, 1 ms when no call was.
    fn pace(&self, phase: Phase) -> Duration {
        let ready_at = self.ready_at.unwrap_or_else(Instant::now);
        let gaps: Vec<(Phase, Duration)> = (0..self.at.len())
            .map(|j| {
                let before = if j == 0 { ready_at } else { self.at[j - 1] };
                (Phase::after(j), self.at[j].saturating_duration_since(before))
            })
            .collect();
        let mean = |gaps: Vec<Duration>| (!gaps.is_empty()).then(|| gaps.iter().sum::<Duration>() / gaps.len() as u32);
        mean(gaps.iter().filter(|(p, _)| *p == phase).map(|(_, d)| *d).collect())
            .or_else(|| mean(gaps.iter().map(|(_, d)| *d).collect()))
            .unwrap_or(Duration::from_millis(1))
    }
}

/// The SIGKILL of the child's process group, fired by whoever comes first: the thread
/// reading the child's lines at the planned moment, or the parent when the child stalled
/// or ended. Never after the child was reaped (its group id could then name another
/// group).
struct Trigger {
    pgid: u32,
    reaped: Mutex<bool>,
}

impl Trigger {
    fn fire(&self) {
        let reaped = self.reaped.lock().unwrap_or_else(|e| e.into_inner());
        if !*reaped {
            conformance_core::process_group::kill(self.pgid);
        }
    }

    /// From now on [`Trigger::fire`] does nothing: the caller reaps the child next.
    fn disarm(&self) {
        *self.reaped.lock().unwrap_or_else(|e| e.into_inner()) = true;
    }
}

/// What the thread reading the child's stdout tells the parent task: the acknowledgements
/// so far, and whether it fired the kill.
type Progress = (usize, bool);

/// Reads the child's protocol lines into `log` until the child's stdout ends, and fires
/// the kill at `plan`'s moment: at once after the acknowledgement before the planned call
/// (a [`Moment::Between`] child is paused there), or that acknowledgement plus the
/// planned fraction of the child's average time for the call ([`Moment::Inside`]). It runs
/// on this thread, not on the parent's runtime, so the kill lands where planned even when
/// the saver's calls take a fraction of a millisecond. Only whole lines count: a line cut
/// by the kill is not an acknowledgement the parent received.
fn read_lines(
    stdout: impl Read,
    log: &Mutex<ChildLog>,
    plan: KillPlan,
    trigger: &Trigger,
    ready: tokio::sync::oneshot::Sender<()>,
    progress: &tokio::sync::watch::Sender<Progress>,
) {
    let mut ready = Some(ready);
    let mut fired = false;
    let mut reader = BufReader::new(stdout);
    let mut line = String::new();
    while matches!(reader.read_line(&mut line), Ok(n) if n > 0) {
        let Some(rest) = line.strip_suffix('\n').and_then(|l| l.strip_prefix(PREFIX)).map(str::trim) else {
            line.clear();
            continue;
        };
        let mut l = log.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        if rest == "ready" {
            l.ready_at = Some(now);
            if let Some(tx) = ready.take() {
                let _ = tx.send(());
            }
        } else if let Some(ack) = rest.strip_prefix("ack ").and_then(parse_ack) {
            l.acks.push(ack);
            l.at.push(now);
        } else if let Some(e) = rest.strip_prefix("error ") {
            l.error = Some(e.to_owned());
        }
        let n = l.acks.len();
        let due = !fired && l.ready_at.is_some() && n == plan.after_acks();
        let delay = match plan.moment {
            Moment::Between => Duration::ZERO,
            Moment::Inside(fraction) => l.pace(plan.phase).mul_f64(fraction),
        };
        drop(l);
        if due {
            std::thread::sleep(delay.saturating_sub(now.elapsed()));
            trigger.fire();
            fired = true;
            let mut l = log.lock().unwrap_or_else(|e| e.into_inner());
            l.moment = killed_at(plan, now.elapsed(), delay, l.acks.len());
        }
        progress.send_replace((n, fired));
        line.clear();
    }
}

/// Says where the planned kill landed.
fn killed_at(plan: KillPlan, after: Duration, delay: Duration, acks: usize) -> String {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    match plan.moment {
        Moment::Between => format!(
            "killed between calls, the child held after its acknowledgement {} and before {} of step {}",
            plan.after_acks(),
            plan.phase,
            plan.step
        ),
        Moment::Inside(fraction) => format!(
            "killed inside {} of step {}: {:.2} ms after the acknowledgement before it (planned {:.0}% of the \
             {:.2} ms the call took on average), {acks} calls acknowledged by then",
            plan.phase,
            plan.step,
            ms(after),
            fraction * 100.0,
            ms(delay) / fraction.max(f64::MIN_POSITIVE)
        ),
    }
}

/// The stderr of the child: its panic message if it has one (a backtrace may follow it),
/// else its end.
fn stderr_tail(stderr: Option<impl Read>) -> String {
    let mut buf = Vec::new();
    if let Some(mut s) = stderr {
        let _ = s.read_to_end(&mut buf);
    }
    let text = String::from_utf8_lossy(&buf).into_owned();
    match text.find("panicked at") {
        Some(at) => text[at..].chars().take(1000).collect(),
        None => text.chars().rev().take(2000).collect::<Vec<_>>().into_iter().rev().collect::<String>(),
    }
}

/// Starts the child (its `request` names the storage, the thread and, for a
/// [`Moment::Between`] kill, the acknowledgement after which it holds), kills it and every
/// process it started (SIGKILL to its process group) at the plan's moment, waits until
/// none is alive, and returns what the child acknowledged.
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
    // An interrupted front end kills the child before it exits (it would go on writing),
    // and removes the child's lock file. Started and registered under the interrupt's
    // fence: a child started as the interrupt began would outlive its cleanup and make the
    // case's database again after the cleanup removed it (the interrupt soak of issue 40
    // found such files beside --sqlite-path after a SIGTERM at 1.2 s).
    let started = conformance_core::leftovers::unless_interrupted(|| {
        let child = command.spawn().map_err(|e| format!("could not start the child {}: {e}", exe.display()))?;
        let child_pid = child.id();
        let guard = conformance_core::leftovers::on_interrupt(move || {
            conformance_core::process_group::kill(child_pid);
            conformance_core::leftovers::kill_and_release_child(child_pid);
        });
        Ok::<_, String>((child, guard))
    });
    let (mut child, _killed_on_interrupt) =
        started.ok_or_else(|| "the run is being interrupted: no child is started".to_owned())??;
    let child_pid = child.id();
    let log = Arc::new(Mutex::new(ChildLog::default()));
    let trigger = Arc::new(Trigger { pgid: child_pid, reaped: Mutex::new(false) });
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel::<()>();
    let (progress_tx, mut progress) = tokio::sync::watch::channel((0usize, false));
    let (out_log, out_trigger, stdout) = (log.clone(), trigger.clone(), child.stdout.take());
    let out_reader = std::thread::spawn(move || {
        if let Some(stdout) = stdout {
            read_lines(stdout, &out_log, plan, &out_trigger, ready_tx, &progress_tx);
        }
    });
    let stderr = child.stderr.take();
    let err_reader = std::thread::spawn(move || stderr_tail(stderr));
    let started = Instant::now();
    let mut stalled = None;
    if let Ok(Ok(())) = tokio::time::timeout(READY_TIMEOUT, ready_rx).await {
        // Until the planned kill (or the child's end), at most STALL_TIMEOUT without news.
        let timed_out = loop {
            if progress.borrow_and_update().1 {
                break false;
            }
            match tokio::time::timeout(STALL_TIMEOUT, progress.changed()).await {
                Ok(Ok(())) => {}
                // The child's stdout ended: it exited (its status says how).
                Ok(Err(_)) => break false,
                Err(_) => break true,
            }
        };
        if timed_out {
            stalled = Some(format!(
                "the child acknowledged {} calls, then none for {} s while the parent waited for {}: its writes \
                 stall (another instance has the storage open)",
                progress.borrow().0,
                STALL_TIMEOUT.as_secs(),
                plan.after_acks(),
            ));
        }
    }
    // A child that ended when the planned kill had not come ended by itself: fine after
    // the whole workload (exit 0), a failure otherwise (its error line or its panic on
    // stderr says why). Once the kill came, its end is the kill's.
    let killed = progress.borrow().1;
    let ended_early = child.try_wait().ok().flatten().filter(|_| !killed);
    trigger.fire();
    let _ = child.kill();
    trigger.disarm();
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
    if log.moment.is_empty() {
        log.moment = match log.ready_at {
            None => "before the child was ready".to_owned(),
            Some(_) => format!(
                "killed after {} acknowledged calls, before the planned {} of step {} (the child {})",
                log.acks.len(),
                plan.phase,
                plan.step,
                if stalled.is_some() { "stalled" } else { "ended" }
            ),
        };
    }
    if log.ready_at.is_none() {
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
