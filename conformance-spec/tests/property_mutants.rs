//! Self-test of the `concurrency` and `durability` cases: a tiny saver defined here (in
//! memory, or persisted to one JSON file replaced atomically on every call) passes them,
//! and mutants of it that break one property each fail the case meant to catch them:
//!
//! - `lost-update`: `put_writes` reads the checkpoint's writes, yields, and writes the list
//!   back (a non-atomic read-modify-write): concurrent `put_writes` lose writes (S18).
//! - `torn-read`: `put` makes the checkpoint visible, yields, then stores its values: a
//!   reader sees a checkpoint without its values (S18).
//! - `ack-before-commit`: `put`/`put_writes` return `Ok` at once (reads in the same
//!   process see the call) but write it to the file only with the next call: a kill, or a
//!   new instance opened on the file, misses the last acknowledged item (S20).
//! - `busy`: calls of one instance wait for each other, but a call that finds the file
//!   held by another instance fails with "database is locked" (S19).
//!
//! The binary has its own `main` (harness = false) because the durability crash test
//! re-executes it as a child process: `child_main_if_requested_among` comes first.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex, OnceLock};

use conformance_core::{
    async_trait, metadata_matches, write_index, Capability, CapabilityStatus, ChannelVersion, ChannelVersions,
    Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata, CheckpointSaver, CheckpointTuple, Fixture,
    ListOptions, PendingWrite, Registration, Report, RunOptions, TypedValue,
};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Stored {
    thread: String,
    ns: String,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    parent: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct StoredWrite {
    task_id: String,
    task_path: String,
    idx: i64,
    channel: String,
    value: TypedValue,
}

/// Everything the tiny saver stores, keyed by strings so that it serialises as JSON.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct State {
    /// `thread \0 ns \0 id` -> checkpoint without values.
    checkpoints: BTreeMap<String, Stored>,
    /// `thread \0 ns \0 channel \0 version` -> value.
    blobs: BTreeMap<String, TypedValue>,
    /// `thread \0 ns \0 id` -> writes.
    writes: BTreeMap<String, Vec<StoredWrite>>,
}

fn cp_key(thread: &str, ns: &str, id: &str) -> String {
    format!("{thread}\0{ns}\0{id}")
}

fn blob_key(thread: &str, ns: &str, channel: &str, version: &ChannelVersion) -> String {
    format!("{thread}\0{ns}\0{channel}\0{}", serde_json::to_string(version).unwrap_or_default())
}

fn storage(e: impl std::fmt::Display) -> CheckpointError {
    CheckpointError::storage_msg(e.to_string())
}

impl State {
    fn tuple(&self, s: &Stored) -> CheckpointTuple {
        let mut checkpoint = s.checkpoint.clone();
        for (ch, v) in &s.checkpoint.channel_versions {
            if let Some(value) = self.blobs.get(&blob_key(&s.thread, &s.ns, ch, v)) {
                checkpoint.channel_values.insert(ch.clone(), value.clone());
            }
        }
        let mut writes = self.writes.get(&cp_key(&s.thread, &s.ns, &s.checkpoint.id)).cloned().unwrap_or_default();
        writes.sort_by(|a, b| (&a.task_path, &a.task_id, a.idx).cmp(&(&b.task_path, &b.task_id, b.idx)));
        let config = CheckpointConfig::new(s.thread.clone()).with_ns(s.ns.clone());
        CheckpointTuple {
            config: config.clone().with_id(s.checkpoint.id.clone()),
            checkpoint: Arc::new(checkpoint),
            metadata: s.metadata.clone(),
            parent_config: s.parent.clone().map(|p| config.with_id(p)),
            pending_writes: writes
                .into_iter()
                .map(|w| PendingWrite {
                    task_id: w.task_id,
                    task_path: w.task_path,
                    channel: w.channel,
                    value: w.value,
                })
                .collect(),
        }
    }

    fn put_checkpoint(&mut self, config: &CheckpointConfig, mut checkpoint: Checkpoint, metadata: CheckpointMetadata) {
        checkpoint.channel_values.clear();
        let key = cp_key(&config.thread_id, &config.checkpoint_ns, &checkpoint.id);
        let stored = Stored {
            thread: config.thread_id.clone(),
            ns: config.checkpoint_ns.clone(),
            checkpoint,
            metadata,
            parent: config.checkpoint_id.clone(),
        };
        self.checkpoints.insert(key, stored);
    }

    fn put_blobs(&mut self, config: &CheckpointConfig, checkpoint: &Checkpoint) {
        for (ch, value) in &checkpoint.channel_values {
            if let Some(v) = checkpoint.channel_versions.get(ch) {
                self.blobs.insert(blob_key(&config.thread_id, &config.checkpoint_ns, ch, v), value.clone());
            }
        }
    }

    fn merge_writes(existing: &mut Vec<StoredWrite>, writes: &[(String, TypedValue)], task_id: &str, task_path: &str) {
        for (pos, (channel, value)) in writes.iter().enumerate() {
            let idx = write_index(channel, pos);
            let w = StoredWrite {
                task_id: task_id.to_owned(),
                task_path: task_path.to_owned(),
                idx,
                channel: channel.clone(),
                value: value.clone(),
            };
            match existing.iter_mut().find(|e| e.task_id == task_id && e.idx == idx) {
                Some(e) if idx < 0 => *e = w,
                Some(_) => {}
                None => existing.push(w),
            }
        }
    }
}

/// A tiny saver's storage: a mutex-guarded state, or a JSON file replaced by write +
/// rename on every call. The instances of one process on one file share its state (loaded
/// from the file when an instance is opened) and its lock.
enum Store {
    Memory(Mutex<State>),
    File(PathBuf, Arc<Mutex<State>>),
}

/// Opens `path`: loads the file into the state this process shares for it.
fn open_file(path: &Path) -> Result<Arc<Mutex<State>>, CheckpointError> {
    static OPEN: OnceLock<Mutex<BTreeMap<PathBuf, Arc<Mutex<State>>>>> = OnceLock::new();
    let shared = OPEN
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(path.to_owned())
        .or_default()
        .clone();
    let mut state = shared.lock().unwrap_or_else(|e| e.into_inner());
    *state = load(path)?;
    drop(state);
    Ok(shared)
}

fn load(path: &Path) -> Result<State, CheckpointError> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(storage),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(State::default()),
        Err(e) => Err(storage(e)),
    }
}

fn save(path: &Path, state: &State) -> Result<(), CheckpointError> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, serde_json::to_vec(state).map_err(storage)?).map_err(storage)?;
    std::fs::rename(&tmp, path).map_err(storage)
}

impl Store {
    /// Runs `f` on the state and (`write`) saves the file. `busy` makes a contended file
    /// an error instead of a wait; `lag` saves the state as it was before `f`, so the file
    /// is always one call behind what the instances of this process read.
    fn with<R>(
        &self,
        write: bool,
        busy: bool,
        lag: bool,
        f: impl FnOnce(&mut State) -> R,
    ) -> Result<R, CheckpointError> {
        match self {
            Store::Memory(m) => Ok(f(&mut m.lock().unwrap_or_else(|e| e.into_inner()))),
            Store::File(path, shared) => {
                let mut state = if busy {
                    shared.try_lock().map_err(|_| storage("database is locked"))?
                } else {
                    shared.lock().unwrap_or_else(|e| e.into_inner())
                };
                let before = (write && lag).then(|| state.clone());
                let r = f(&mut state);
                if write {
                    save(path, before.as_ref().unwrap_or(&state))?;
                }
                Ok(r)
            }
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mutation {
    None,
    LostUpdate,
    TornRead,
    AckBeforeCommit,
    Busy,
}

struct TinySaver {
    store: Store,
    mutation: Mutation,
    instance_lock: Mutex<()>,
}

impl TinySaver {
    fn memory(mutation: Mutation) -> Self {
        Self { store: Store::Memory(Mutex::default()), mutation, instance_lock: Mutex::default() }
    }

    fn file(path: impl Into<PathBuf>, mutation: Mutation) -> Result<Self, CheckpointError> {
        let path = path.into();
        let shared = open_file(&path)?;
        Ok(Self { store: Store::File(path, shared), mutation, instance_lock: Mutex::default() })
    }

    /// Runs `f` on the stored state. The `busy` mutant serialises the calls of one
    /// instance but fails with "database is locked" when another instance holds the file;
    /// the `ack-before-commit` mutant answers every call at once (reads in this process see
    /// it) but writes it to the file only with the next call.
    fn with<R>(&self, write: bool, f: impl FnOnce(&mut State) -> R) -> Result<R, CheckpointError> {
        let lag = self.mutation == Mutation::AckBeforeCommit;
        if self.mutation == Mutation::Busy {
            let _mine = self.instance_lock.lock().unwrap_or_else(|e| e.into_inner());
            return self.store.with(write, true, lag, f);
        }
        self.store.with(write, false, lag, f)
    }
}

#[async_trait]
impl CheckpointSaver for TinySaver {
    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        _new_versions: ChannelVersions,
    ) -> Result<CheckpointConfig, CheckpointError> {
        config.validate()?;
        let stored = config.clone().with_id(checkpoint.id.clone());
        if self.mutation == Mutation::TornRead {
            // The checkpoint row first, then one value at a time, each its own "statement".
            let bare = Checkpoint { channel_values: BTreeMap::new(), ..checkpoint.clone() };
            self.with(true, |s| s.put_checkpoint(config, bare, metadata))?;
            for (ch, value) in &checkpoint.channel_values {
                tokio::task::yield_now().await;
                let one =
                    Checkpoint { channel_values: BTreeMap::from([(ch.clone(), value.clone())]), ..checkpoint.clone() };
                self.with(true, |s| s.put_blobs(config, &one))?;
            }
            return Ok(stored);
        }
        self.with(true, |s| {
            s.put_blobs(config, &checkpoint);
            s.put_checkpoint(config, checkpoint, metadata);
        })?;
        Ok(stored)
    }

    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(String, TypedValue)>,
        task_id: &str,
        task_path: &str,
    ) -> Result<(), CheckpointError> {
        config.validate()?;
        let Some(id) = &config.checkpoint_id else {
            return Err(CheckpointError::InvalidConfig("put_writes needs checkpoint_id".into()));
        };
        if writes.is_empty() {
            return Ok(());
        }
        if self.mutation == Mutation::LostUpdate {
            let key = cp_key(&config.thread_id, &config.checkpoint_ns, id);
            let mut current = self.with(false, |s| s.writes.get(&key).cloned().unwrap_or_default())?;
            tokio::task::yield_now().await;
            State::merge_writes(&mut current, &writes, task_id, task_path);
            return self.with(true, |s| {
                s.writes.insert(key, current);
            });
        }
        let key = cp_key(&config.thread_id, &config.checkpoint_ns, id);
        self.with(true, |s| State::merge_writes(s.writes.entry(key).or_default(), &writes, task_id, task_path))
    }

    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
        config.validate()?;
        self.with(false, |s| {
            let found = match &config.checkpoint_id {
                Some(id) => s.checkpoints.get(&cp_key(&config.thread_id, &config.checkpoint_ns, id)),
                None => s
                    .checkpoints
                    .values()
                    .filter(|c| c.thread == config.thread_id && c.ns == config.checkpoint_ns)
                    .max_by(|a, b| a.checkpoint.id.cmp(&b.checkpoint.id)),
            };
            found.map(|c| s.tuple(c))
        })
    }

    async fn list(&self, thread_id: &str, options: &ListOptions) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        self.with(false, |s| {
            let mut found: Vec<&Stored> = s
                .checkpoints
                .values()
                .filter(|c| c.thread == thread_id)
                .filter(|c| options.checkpoint_ns.as_ref().is_none_or(|ns| &c.ns == ns))
                .filter(|c| options.checkpoint_id.as_ref().is_none_or(|id| &c.checkpoint.id == id))
                .filter(|c| options.before.as_ref().is_none_or(|b| &c.checkpoint.id < b))
                .filter(|c| metadata_matches(&c.metadata, &options.filter))
                .collect();
            found.sort_by(|a, b| b.checkpoint.id.cmp(&a.checkpoint.id).then_with(|| a.ns.cmp(&b.ns)));
            found.truncate(options.limit.unwrap_or(usize::MAX));
            found.into_iter().map(|c| s.tuple(c)).collect()
        })
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<(), CheckpointError> {
        let prefix = format!("{thread_id}\0");
        self.with(true, |s| {
            s.checkpoints.retain(|k, _| !k.starts_with(&prefix));
            s.blobs.retain(|k, _| !k.starts_with(&prefix));
            s.writes.retain(|k, _| !k.starts_with(&prefix));
        })
    }
}

fn memory_registration(name: &str, mutation: Mutation) -> Registration {
    Registration::new(name, move || async move { Ok(Fixture::new(TinySaver::memory(mutation))) })
}

fn file_registration(name: &str, mutation: Mutation) -> Registration {
    Registration::new(name, move || async move {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("state.json");
        let location = path.to_string_lossy().into_owned();
        let reopen_path = path.clone();
        Ok(Fixture::new(TinySaver::file(&path, mutation)?)
            .with_reopen(move || {
                let p = reopen_path.clone();
                async move { Ok(TinySaver::file(p, mutation)?) }
            })
            .with_location(location)
            .with_cleanup(move || async move {
                dir.close()?;
                Ok(())
            }))
    })
    .open_at(move |location| async move { Ok(Fixture::new(TinySaver::file(location, mutation)?)) })
}

fn registrations() -> Vec<Registration> {
    vec![
        memory_registration("tiny-memory", Mutation::None),
        file_registration("tiny-file", Mutation::None),
        memory_registration("mutant-lost-update", Mutation::LostUpdate),
        memory_registration("mutant-torn-read", Mutation::TornRead),
        file_registration("mutant-ack-before-commit", Mutation::AckBeforeCommit),
        file_registration("mutant-busy", Mutation::Busy),
    ]
}

/// Runs the catalog's cases of `capabilities` against `reg`.
fn run(reg: &Registration, capabilities: BTreeSet<Capability>) -> Report {
    let options = RunOptions { capabilities: Some(capabilities), jobs: 2, ..RunOptions::default() };
    conformance_spec::validate(reg, &options)
}

/// What a registration must give: each capability's status and, for a failed one, a
/// case that must be among the failures.
fn expectation(name: &str) -> Vec<(Capability, CapabilityStatus, Option<&'static str>)> {
    use CapabilityStatus::{Failed, NotImplemented, Passed};
    match name {
        "tiny-memory" => vec![(Capability::Concurrency, Passed, None), (Capability::Durability, NotImplemented, None)],
        "tiny-file" => vec![(Capability::Concurrency, Passed, None), (Capability::Durability, Passed, None)],
        "mutant-lost-update" => vec![(Capability::Concurrency, Failed, Some("put_writes_of_many_tasks_all_kept"))],
        "mutant-torn-read" => vec![(Capability::Concurrency, Failed, Some("reader_sees_none_or_all_of_a_checkpoint"))],
        "mutant-ack-before-commit" => {
            vec![(Capability::Durability, Failed, Some("acknowledged_writes_survive_kill"))]
        }
        "mutant-busy" => vec![(Capability::Concurrency, Failed, Some("two_instances_write_at_once"))],
        _ => vec![],
    }
}

fn check(reg: &Registration) -> Result<(), libtest_mimic::Failed> {
    let expected = expectation(reg.name());
    let report = run(reg, expected.iter().map(|(c, _, _)| *c).collect());
    for (cap, status, case) in expected {
        let r = &report.results[&cap];
        if r.status != status {
            return Err(format!("{cap}: expected {status:?}, got {:?}: {:#?}", r.status, r.failures).into());
        }
        if let Some(case) = case {
            let failed = report.tests.iter().any(|t| t.name == case && t.message.is_some() && t.capability == cap);
            if !failed || !r.failures.iter().any(|f| f.starts_with(case)) {
                return Err(format!("{cap}: expected case {case} to fail; failures: {:#?}", r.failures).into());
            }
            println!("{}: {cap} failed as expected: {:?}", reg.name(), r.failures);
        }
    }
    if reg.name() == "tiny-file" {
        let kills = report.facts.get("durability.kills").and_then(|v| v.as_u64());
        let want = std::env::var(conformance_spec::crash::KILLS_ENV)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(conformance_spec::crash::DEFAULT_KILLS as u64);
        if kills != Some(want) {
            return Err(format!("facts: expected durability.kills = {want}, got {:?}", report.facts).into());
        }
        println!("tiny-file facts: {:?}", report.facts);
    }
    Ok(())
}

fn main() -> ExitCode {
    let regs = registrations();
    if let Some(code) = conformance_spec::child_main_if_requested_among(&regs) {
        return code;
    }
    let args = libtest_mimic::Arguments::from_args();
    let trials =
        regs.into_iter().map(|reg| libtest_mimic::Trial::test(reg.name().to_owned(), move || check(&reg))).collect();
    libtest_mimic::run(&args, trials).exit_code()
}
