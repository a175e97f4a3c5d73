//! A persistent test saver on plain files, for the crash test's own tests: a directory per
//! storage, per thread a directory with one JSON file per checkpoint (exactly what its
//! `put` carried: a channel kept from an earlier put without its value is absent on read,
//! as in LangGraph's SqliteSaver) and one per checkpoint's pending writes. Every change is
//! written to a temporary file and renamed over the old one, so a call killed halfway
//! leaves its file all there or not there, and an acknowledged call is in the file system
//! (which a killed process does not lose).
//!
//! Options: [`FileStorage::exclusive`] takes an exclusive lock on the storage while an
//! instance is open (a second open, in this process or another, fails, as DuckDB's
//! "Conflicting lock is held"), and [`FileStorage::delay`] makes every call sleep first.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use conformance_core::{
    check_thread_id, metadata_matches, special_write_index, write_index, BoxError, ChannelVersions, Checkpoint,
    CheckpointConfig, CheckpointError, CheckpointMetadata, CheckpointSaver, CheckpointTuple, ListOptions, PendingWrite,
    Storage, TypedValue,
};
use serde::{Deserialize, Serialize};

/// Storage on files in a fresh temporary directory per location.
#[derive(Clone, Copy, Debug, Default)]
pub struct FileStorage {
    /// Hold an exclusive lock on the storage while an instance is open.
    pub exclusive: bool,
    /// Sleep this long at the start of every call.
    pub delay: Duration,
}

#[async_trait]
impl Storage for FileStorage {
    type Saver = FileSaver;

    async fn create(&self) -> Result<String, BoxError> {
        let dir = tempfile::Builder::new().prefix("crash-file-saver-").tempdir()?.keep();
        Ok(dir.to_string_lossy().into_owned())
    }

    async fn open(&self, location: &str) -> Result<FileSaver, BoxError> {
        let dir = PathBuf::from(location);
        let lock = if self.exclusive {
            let file = File::options().create(true).truncate(false).write(true).open(dir.join("lock"))?;
            file.try_lock().map_err(|e| format!("{location} is locked by another instance: {e}"))?;
            Some(file)
        } else {
            None
        };
        Ok(FileSaver { dir, delay: self.delay, writes: Mutex::new(()), _lock: lock })
    }

    async fn destroy(&self, location: &str) -> Result<(), BoxError> {
        std::fs::remove_dir_all(location).or_else(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                Ok(())
            } else {
                Err(e)
            }
        })?;
        Ok(())
    }
}

/// An instance on one storage directory (see the module docs).
pub struct FileSaver {
    dir: PathBuf,
    delay: Duration,
    /// Serialises this instance's read-modify-write of a writes file.
    writes: Mutex<()>,
    /// The exclusive lock, released when the instance is dropped.
    _lock: Option<File>,
}

/// A checkpoint file.
#[derive(Serialize, Deserialize)]
struct Stored {
    parent: Option<String>,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
}

/// One pending write in a writes file, with its index.
#[derive(Clone, Serialize, Deserialize)]
struct Kept {
    idx: i64,
    write: PendingWrite,
}

fn hex(s: &str) -> String {
    s.bytes().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<String> {
    let bytes: Option<Vec<u8>> =
        (0..s.len()).step_by(2).map(|i| s.get(i..i + 2).and_then(|b| u8::from_str_radix(b, 16).ok())).collect();
    String::from_utf8(bytes?).ok()
}

fn io(what: &str, e: impl Into<BoxError>) -> CheckpointError {
    CheckpointError::storage(what.to_owned(), e)
}

static TEMP: AtomicU64 = AtomicU64::new(0);

impl FileSaver {
    async fn pause(&self) {
        if !self.delay.is_zero() {
            tokio::time::sleep(self.delay).await;
        }
    }

    fn thread_dir(&self, thread: &str) -> PathBuf {
        self.dir.join(format!("t{}", hex(thread)))
    }

    fn file(&self, kind: char, thread: &str, ns: &str, id: &str) -> PathBuf {
        self.thread_dir(thread).join(format!("{kind}.{}.{}.json", hex(ns), hex(id)))
    }

    /// Writes `value` to `path` in one step (a temporary file renamed over it).
    fn replace(&self, path: &Path, value: &impl Serialize) -> Result<(), CheckpointError> {
        let parent = path.parent().unwrap_or(&self.dir);
        std::fs::create_dir_all(parent).map_err(|e| io("creating the thread directory", e))?;
        let n = TEMP.fetch_add(1, Ordering::Relaxed);
        let temp = self.dir.join(format!("tmp-{}-{n}", std::process::id()));
        let text = serde_json::to_vec(value).map_err(|e| io("encoding", e))?;
        std::fs::write(&temp, text).map_err(|e| io("writing", e))?;
        std::fs::rename(&temp, path).map_err(|e| io("renaming", e))
    }

    fn load<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<Option<T>, CheckpointError> {
        match std::fs::read(path) {
            Ok(text) => serde_json::from_slice(&text).map(Some).map_err(|e| io("decoding", e)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io("reading", e)),
        }
    }

    /// The (namespace, id) of every checkpoint of `thread`.
    fn checkpoints(&self, thread: &str) -> Result<Vec<(String, String)>, CheckpointError> {
        let entries = match std::fs::read_dir(self.thread_dir(thread)) {
            Ok(d) => d,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io("listing", e)),
        };
        let mut out = Vec::new();
        for entry in entries {
            let name = entry.map_err(|e| io("listing", e))?.file_name().to_string_lossy().into_owned();
            if let ["c", ns, id, "json"] = name.split('.').collect::<Vec<_>>().as_slice() {
                if let (Some(ns), Some(id)) = (unhex(ns), unhex(id)) {
                    out.push((ns, id));
                }
            }
        }
        Ok(out)
    }

    fn tuple(&self, thread: &str, ns: &str, id: &str) -> Result<Option<CheckpointTuple>, CheckpointError> {
        let Some(stored) = Self::load::<Stored>(&self.file('c', thread, ns, id))? else { return Ok(None) };
        let mut writes = Self::load::<Vec<Kept>>(&self.file('w', thread, ns, id))?.unwrap_or_default();
        writes.sort_by(|a, b| {
            (&a.write.task_path, &a.write.task_id, a.idx).cmp(&(&b.write.task_path, &b.write.task_id, b.idx))
        });
        let at = |id: &str| CheckpointConfig::new(thread.to_owned()).with_ns(ns.to_owned()).with_id(id.to_owned());
        Ok(Some(CheckpointTuple {
            config: at(id),
            checkpoint: stored.checkpoint.into(),
            metadata: stored.metadata,
            parent_config: stored.parent.as_deref().map(at),
            pending_writes: writes.into_iter().map(|k| k.write).collect(),
        }))
    }
}

#[async_trait]
impl CheckpointSaver for FileSaver {
    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        _new_versions: ChannelVersions,
    ) -> Result<CheckpointConfig, CheckpointError> {
        self.pause().await;
        check_thread_id(&config.thread_id)?;
        let (thread, ns, id) = (&config.thread_id, &config.checkpoint_ns, checkpoint.id.clone());
        let stored = Stored { parent: config.checkpoint_id.clone(), checkpoint, metadata };
        self.replace(&self.file('c', thread, ns, &id), &stored)?;
        Ok(CheckpointConfig::new(thread.clone()).with_ns(ns.clone()).with_id(id))
    }

    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(String, TypedValue)>,
        task_id: &str,
        task_path: &str,
    ) -> Result<(), CheckpointError> {
        self.pause().await;
        check_thread_id(&config.thread_id)?;
        let Some(id) = &config.checkpoint_id else {
            return Err(CheckpointError::InvalidConfig("put_writes needs a checkpoint_id".into()));
        };
        let _one_at_a_time = self.writes.lock().unwrap_or_else(|e| e.into_inner());
        let path = self.file('w', &config.thread_id, &config.checkpoint_ns, id);
        let mut kept: BTreeMap<(String, i64), Kept> = Self::load::<Vec<Kept>>(&path)?
            .unwrap_or_default()
            .into_iter()
            .map(|k| ((k.write.task_id.clone(), k.idx), k))
            .collect();
        for (pos, (channel, value)) in writes.into_iter().enumerate() {
            let idx = write_index(&channel, pos);
            let key = (task_id.to_owned(), idx);
            if special_write_index(&channel).is_none() && kept.contains_key(&key) {
                continue;
            }
            let write = PendingWrite { task_id: task_id.to_owned(), task_path: task_path.to_owned(), channel, value };
            kept.insert(key, Kept { idx, write });
        }
        self.replace(&path, &kept.into_values().collect::<Vec<_>>())
    }

    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
        self.pause().await;
        check_thread_id(&config.thread_id)?;
        let (thread, ns) = (&config.thread_id, &config.checkpoint_ns);
        let id = match &config.checkpoint_id {
            Some(id) => id.clone(),
            None => match self.checkpoints(thread)?.into_iter().filter(|(n, _)| n == ns).map(|(_, id)| id).max() {
                Some(id) => id,
                None => return Ok(None),
            },
        };
        self.tuple(thread, ns, &id)
    }

    async fn list(&self, thread_id: &str, options: &ListOptions) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        self.pause().await;
        check_thread_id(thread_id)?;
        let mut found = Vec::new();
        for (ns, id) in self.checkpoints(thread_id)? {
            let scoped = options.checkpoint_ns.as_ref().is_none_or(|want| *want == ns)
                && options.checkpoint_id.as_ref().is_none_or(|want| *want == id)
                && options.before.as_ref().is_none_or(|before| id < *before);
            if let Some(t) = scoped.then(|| self.tuple(thread_id, &ns, &id)).transpose()?.flatten() {
                if metadata_matches(&t.metadata, &options.filter) {
                    found.push((id, ns, t));
                }
            }
        }
        found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        found.truncate(options.limit.unwrap_or(usize::MAX));
        Ok(found.into_iter().map(|(_, _, t)| t).collect())
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<(), CheckpointError> {
        self.pause().await;
        check_thread_id(thread_id)?;
        match std::fs::remove_dir_all(self.thread_dir(thread_id)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io("deleting the thread", e)),
            _ => Ok(()),
        }
    }
}
