//! `cargo xtask soak`: the interrupt soak of issue 40. Runs the conformance front end
//! (`cargo xtask conformance`, this very binary) again and again on a backend, sends each
//! run SIGINT (to its process group, as a terminal's Ctrl-C does) or SIGTERM (to the front
//! end alone, as a harness does) at a random moment, and checks what the run left:
//!
//! - its exit: 128 + the signal (or its normal verdict, 0 or 1, when it ended first), and no
//!   panic on stderr;
//! - processes: none that carries the run's environment mark (every process the run starts
//!   inherits it: bridge children, pip, a throwaway server), none left in its process group;
//! - files: nothing in the run's own `$TMPDIR`, nothing in the bridge's run directories,
//!   nothing beside `--sqlite-path` but the user's files, byte for byte, and no report half
//!   written (a report, if any, is whole JSON);
//! - a given PostgreSQL server (`postgres-url`): no schema named like the kit's but the
//!   look-alikes the soak planted there (unmarked, so never the kit's), which survive.
//!
//! Moments are drawn over the whole run, measured first by one run that is not interrupted:
//! a quarter in its first tenth (startup, a first-use `pip install`, the server's start and
//! setup), half anywhere, a quarter in its last sixth (the crash test and the reports). For
//! `python:sqlite` every fifth run starts without the bridge's managed environment, so the
//! signal can land in the first-use install. The seed is printed; `CHECKPOINT_SOAK_N` and
//! `CHECKPOINT_SOAK_SEED` (or `--n`, `--seed`) set the count and the seed.
//!
//! What a run left is named, then removed, so the next run starts clean; the exit is 1 when
//! anything was left.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use crate::soak_check;

/// The backends the soak knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// `--backend sqlite`: half the runs with `--sqlite-path` beside the user's files.
    Sqlite,
    /// `--backend postgres` without a URL: the run starts its own throwaway server.
    Postgres,
    /// `--backend postgres --postgres-url`: a server the soak starts, with look-alike
    /// schemas planted on it.
    PostgresUrl,
    /// `--backend python:sqlite`: LangGraph's SqliteSaver through the bridge.
    PythonSqlite,
}

impl Target {
    const ALL: [Target; 4] = [Self::Sqlite, Self::Postgres, Self::PostgresUrl, Self::PythonSqlite];

    fn name(self) -> &'static str {
        match self {
            Self::Sqlite => "sqlite",
            Self::Postgres => "postgres",
            Self::PostgresUrl => "postgres-url",
            Self::PythonSqlite => "python:sqlite",
        }
    }
}

fn parse_target(s: &str) -> Result<Target, String> {
    Target::ALL.into_iter().find(|t| t.name() == s).ok_or_else(|| {
        let names: Vec<&str> = Target::ALL.iter().map(|t| t.name()).collect();
        format!("unknown soak backend `{s}`; valid: {}", names.join(", "))
    })
}

/// `cargo xtask soak [--backends a,b] [--n N] [--seed S]`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The backends, comma-separated: sqlite, postgres (the run's own throwaway server),
    /// postgres-url (a server given with --postgres-url), python:sqlite.
    #[arg(long, value_delimiter = ',', default_value = "sqlite,postgres,postgres-url,python:sqlite", value_parser = parse_target)]
    backends: Vec<Target>,
    /// Interrupts per backend, 1 to 10000 (default: $CHECKPOINT_SOAK_N, else 5).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    n: Option<u32>,
    /// The seed (default: $CHECKPOINT_SOAK_SEED, else drawn and printed).
    #[arg(long)]
    seed: Option<u64>,
}

/// The environment variable of the number of interrupts per backend.
const N_ENV: &str = "CHECKPOINT_SOAK_N";
/// The environment variable of the seed.
const SEED_ENV: &str = "CHECKPOINT_SOAK_SEED";
/// The variable every process of a soaked run inherits, with the run's mark as its value.
pub(crate) const MARK_ENV: &str = "CHECKPOINT_SOAK_MARK";
/// How long an interrupted run may take to exit.
const EXIT_LIMIT: Duration = Duration::from_secs(120);

/// A set variable's value parsed, or one line naming it.
fn from_env<T: std::str::FromStr>(name: &str, what: &str) -> Result<Option<T>, String> {
    match std::env::var(name) {
        Ok(v) if v.trim().is_empty() => Ok(None),
        Ok(v) => v.trim().parse().map(Some).map_err(|_| format!("{name}={v:?}: {what} is expected")),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(_) => Err(format!("{name} is not valid UTF-8: {what} is expected")),
    }
}

/// Runs the soak; exit 0 when no run left anything, 1 when one did, 2 on a usage error.
pub fn run(args: Args) -> ExitCode {
    let settings = (|| {
        let n = match args.n {
            Some(n) => n,
            None => match from_env::<u32>(N_ENV, "a number of interrupts from 1 to 10000")? {
                Some(n) if (1..=10_000).contains(&n) => n,
                Some(n) => return Err(format!("{N_ENV}={n}: a number of interrupts from 1 to 10000 is expected")),
                None => 5,
            },
        };
        let seed = match args.seed {
            Some(s) => s,
            None => from_env::<u64>(SEED_ENV, "a seed from 0 to 2^64-1")?.unwrap_or_else(|| fastrand::u64(..)),
        };
        Ok::<_, String>((n, seed))
    })();
    let (n, seed) = match settings {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(crate::USAGE);
        }
    };
    // Every process a soaked run leaves behind becomes ours, so none escapes the count.
    conformance_core::process_group::adopt_orphans();
    let root = match soak_check::Root::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: could not make the soak's directory: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!("soak: {n} interrupts per backend, seed {seed} (again: {SEED_ENV}={seed} {N_ENV}={n})");
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut totals = Vec::new();
    let started = Instant::now();
    for target in &args.backends {
        match soak_target(*target, n, &mut rng, &root) {
            Ok(t) => totals.push(t),
            Err(e) => {
                eprintln!("error: soak of {}: {e}", target.name());
                return ExitCode::FAILURE;
            }
        }
    }
    let mut clean = true;
    println!("soak summary (seed {seed}, {:.0} s):", started.elapsed().as_secs_f64());
    for t in &totals {
        println!(
            "  {:<14} {} interrupts ({} SIGINT, {} SIGTERM), {} runs ended first, {} leftovers",
            t.target.name(),
            t.interrupts,
            t.sigint,
            t.interrupts - t.sigint,
            t.ended_first,
            t.leftovers
        );
        clean &= t.leftovers == 0;
    }
    if clean {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// What the soak of one backend counted.
struct Totals {
    target: Target,
    interrupts: u32,
    sigint: u32,
    ended_first: u32,
    leftovers: usize,
}

/// One run of the front end, as spawned.
struct Spawned {
    child: Child,
    stderr: std::thread::JoinHandle<String>,
    env: soak_check::RunEnv,
}

fn soak_target(target: Target, n: u32, rng: &mut fastrand::Rng, root: &soak_check::Root) -> Result<Totals, String> {
    let server = match target {
        Target::PostgresUrl => Some(soak_check::GivenServer::start()?),
        _ => None,
    };
    let user = soak_check::UserFiles::plant(&root.path().join(format!("user-{}", target.name().replace(':', "-"))))?;
    let bridge_home = root.path().join("bridge-home");
    let mut totals = Totals { target, interrupts: 0, sigint: 0, ended_first: 0, leftovers: 0 };
    // The run's length, from one run that is not interrupted (and checked like the others).
    let (mut full, install) = {
        // The first run installs the bridge's environment (python:sqlite), the second
        // measures a run without the install.
        let mut times = Vec::new();
        for _ in 0..if target == Target::PythonSqlite { 2 } else { 1 } {
            let t0 = Instant::now();
            let s = spawn(target, root, &bridge_home, server.as_ref(), &user, false, false)?;
            let out = finish(s, Duration::from_secs(1800));
            times.push(t0.elapsed());
            let left = soak_check::leftovers(&out.env, &user, server.as_ref());
            report_line(target, 0, "no signal", &out, &left);
            totals.leftovers += left.len();
            if !matches!(out.code, Some(0 | 1)) {
                return Err(format!("the uninterrupted run exited {:?}: {}", out.code, tail(&out.stderr)));
            }
        }
        let full = *times.last().unwrap_or(&Duration::ZERO);
        (full, (times.len() == 2).then(|| times[0].saturating_sub(full)))
    };
    println!(
        "soak {}: an uninterrupted run takes {:.1} s{}",
        target.name(),
        full.as_secs_f64(),
        install.map(|i| format!(" (+ {:.1} s for the first-use install)", i.as_secs_f64())).unwrap_or_default()
    );
    let mut attempt = 0u32;
    while totals.interrupts < n && attempt < n * 3 {
        attempt += 1;
        let fresh = install.is_some() && attempt % 5 == 1;
        let with_path = target == Target::Sqlite && attempt.is_multiple_of(2);
        let span = full + if fresh { install.unwrap_or_default() } else { Duration::ZERO };
        let at = moment(rng, span);
        let sigint = rng.bool();
        let s = spawn(target, root, &bridge_home, server.as_ref(), &user, with_path, fresh)?;
        let pid = s.child.id();
        let deadline = Instant::now() + at;
        let mut spawned = s;
        let t0 = Instant::now();
        let ended_first = loop {
            if let Ok(Some(_)) = spawned.child.try_wait() {
                // A run shorter than measured (the machine got quieter): later moments are
                // drawn over the shorter length.
                if !fresh {
                    full = full.min(t0.elapsed());
                }
                break true;
            }
            if Instant::now() >= deadline {
                break false;
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        if !ended_first {
            soak_check::signal(pid, sigint);
        }
        let out = finish(spawned, EXIT_LIMIT);
        let mut left = soak_check::leftovers(&out.env, &user, server.as_ref());
        let signo = if sigint { 2 } else { 15 };
        let what = format!(
            "{} at {:.2} s{}{}",
            if sigint { "SIGINT to the group" } else { "SIGTERM to the front end" },
            at.as_secs_f64(),
            if fresh { ", first-use install" } else { "" },
            if with_path { ", --sqlite-path" } else { "" }
        );
        if ended_first {
            totals.ended_first += 1;
            if !matches!(out.code, Some(0 | 1)) {
                left.push(format!("the run ended before the signal with exit {:?}", out.code));
            }
        } else {
            totals.interrupts += 1;
            totals.sigint += u32::from(sigint);
            // A run that was writing its reports finishes them first; one that had just
            // finished exits with its verdict.
            if !matches!(out.code, Some(c) if c == 128 + signo || c == 0 || c == 1) {
                left.push(format!("exit {:?}, not {} (128 + the signal)", out.code, 128 + signo));
            }
        }
        if out.stderr.contains("panicked") {
            left.push(format!("a panic on stderr: {}", tail(&out.stderr)));
        }
        report_line(target, attempt, &what, &out, &left);
        totals.leftovers += left.len();
    }
    if let Some(s) = server {
        s.stop();
    }
    Ok(totals)
}

/// A moment in a run of length `span`: a quarter in its first tenth, half anywhere, a
/// quarter in its last sixth.
fn moment(rng: &mut fastrand::Rng, span: Duration) -> Duration {
    let s = span.as_secs_f64();
    let (lo, hi) = match rng.u8(0..4) {
        0 => (0.0, 0.1 * s),
        3 => (s * 5.0 / 6.0, s),
        _ => (0.0, s),
    };
    Duration::from_secs_f64(lo + rng.f64() * (hi - lo))
}

/// Spawns one run of the front end on `target`, in a process group of its own, with a
/// `$TMPDIR` and a mark of its own.
fn spawn(
    target: Target,
    root: &soak_check::Root,
    bridge_home: &Path,
    server: Option<&soak_check::GivenServer>,
    user: &soak_check::UserFiles,
    with_path: bool,
    fresh_bridge: bool,
) -> Result<Spawned, String> {
    let env = root.run_env(fresh_bridge, bridge_home).map_err(|e| format!("a run's directories: {e}"))?;
    let exe = std::env::current_exe().map_err(|e| format!("this binary's path: {e}"))?;
    let mut cmd = Command::new(exe);
    let backend = match target {
        Target::PostgresUrl => "postgres",
        t => t.name(),
    };
    cmd.args(["conformance", "--backend", backend, "--progress", "quiet"]);
    cmd.arg("--json").arg(env.reports.join("report.json"));
    cmd.arg("--junit").arg(env.reports.join("report.xml"));
    if with_path {
        cmd.arg("--sqlite-path").arg(user.database());
    }
    match (target, server) {
        (Target::PostgresUrl, Some(s)) => {
            cmd.args(["--postgres-url", s.url()]);
        }
        // The run starts its own server: no URL from the environment.
        (Target::Postgres, _) => {
            cmd.env_remove(conformance_backends::postgres::URL_ENV);
        }
        _ => {}
    }
    cmd.env("TMPDIR", &env.tmp)
        .env(MARK_ENV, &env.mark)
        .env("CARGO_TARGET_DIR", &env.cargo_target)
        .env_remove("GITHUB_STEP_SUMMARY")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = cmd.spawn().map_err(|e| format!("could not start the front end: {e}"))?;
    let mut pipe = child.stderr.take().expect("stderr was piped");
    let stderr = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = pipe.read_to_string(&mut s);
        s
    });
    Ok(Spawned { child, stderr, env })
}

/// How a run ended.
pub(crate) struct Ended {
    code: Option<i32>,
    stderr: String,
    pub(crate) env: soak_check::RunEnv,
    elapsed_note: String,
}

/// Waits for the run within `limit`; past it, kills its group and says so on stderr.
fn finish(mut s: Spawned, limit: Duration) -> Ended {
    let t0 = Instant::now();
    let mut note = String::new();
    let status = loop {
        match s.child.try_wait() {
            Ok(Some(st)) => break Some(st),
            Ok(None) if t0.elapsed() < limit => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                note = format!("did not exit within {} s of the signal", limit.as_secs());
                conformance_core::process_group::kill(s.child.id());
                break s.child.wait().ok();
            }
        }
    };
    let code =
        status.and_then(|st| st.code().or_else(|| std::os::unix::process::ExitStatusExt::signal(&st).map(|n| 128 + n)));
    let stderr = s.stderr.join().unwrap_or_default();
    Ended { code, stderr, env: s.env, elapsed_note: note }
}

fn report_line(target: Target, i: u32, what: &str, out: &Ended, left: &[String]) {
    let verdict = if left.is_empty() && out.elapsed_note.is_empty() { "clean".to_owned() } else { "LEFT".to_owned() };
    println!("  {} #{i}: {what}: exit {:?}, {verdict}{}", target.name(), out.code, out.elapsed_note);
    for l in left {
        println!("      left: {l}");
    }
}

/// The last lines of a run's stderr, for a message.
fn tail(s: &str) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(5)..].join(" | ")
}

/// The directory a soak keeps its runs in: `<target>/soak-<pid>`.
pub(crate) fn soak_dir() -> PathBuf {
    crate::bridge_dir().parent().map(Path::to_path_buf).unwrap_or_default().join(format!("soak-{}", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moments_fall_within_the_run() {
        let mut rng = fastrand::Rng::with_seed(7);
        let span = Duration::from_secs(10);
        let ms: Vec<Duration> = (0..1000).map(|_| moment(&mut rng, span)).collect();
        assert!(ms.iter().all(|m| *m <= span));
        assert!(
            ms.iter().filter(|m| **m < Duration::from_secs(1)).count() > 250,
            "a quarter and more in the first tenth"
        );
        assert!(
            ms.iter().filter(|m| **m > Duration::from_secs(8)).count() > 250,
            "a quarter and more in the last sixth"
        );
    }

    #[test]
    fn a_bad_backend_is_named() {
        assert!(parse_target("mysql").unwrap_err().contains("valid: sqlite, postgres, postgres-url, python:sqlite"));
        assert_eq!(parse_target("python:sqlite"), Ok(Target::PythonSqlite));
    }
}
