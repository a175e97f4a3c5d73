//! A `reopen` step stands for a process that died, so the replay must not let the old
//! instance shut down cleanly first. A saver that acknowledges writes before they are
//! stored, and stores them when it is dropped (a flush in `Drop`), loses them on a crash
//! (CONTRACT §4: what a call acknowledged survives the process). `killed-resumed.json` must
//! fail it at the resumed run's first read; `interrupt.json`, which never reopens, must
//! pass. Both fail if the replay dropped the killed instance at the `reopen` step.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use checkpoint_memory::MemorySaver;
use conformance_core::{
    BoxError, ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata,
    CheckpointSaver, CheckpointTuple, ListOptions, Reach, Registration, Storage, TypedValue,
};
use conformance_spec::fuzz::replay;
use conformance_spec::fuzz::trace::Trace;

/// A write acknowledged but not yet stored.
enum Pending {
    Put(CheckpointConfig, Checkpoint, CheckpointMetadata, ChannelVersions),
    Writes(CheckpointConfig, Vec<(String, TypedValue)>, String, String),
}

/// Buffers puts and pending writes; stores them before its own reads and when dropped.
struct FlushOnDrop {
    storage: Arc<MemorySaver>,
    queue: Mutex<Vec<Pending>>,
}

impl FlushOnDrop {
    fn taken(&self) -> Vec<Pending> {
        std::mem::take(&mut *self.queue.lock().unwrap_or_else(|e| e.into_inner()))
    }

    async fn flush(storage: &MemorySaver, queue: Vec<Pending>) -> Result<(), CheckpointError> {
        for p in queue {
            match p {
                Pending::Put(c, cp, m, v) => storage.put(&c, cp, m, v).await.map(drop)?,
                Pending::Writes(c, w, task_id, task_path) => storage.put_writes(&c, w, &task_id, &task_path).await?,
            }
        }
        Ok(())
    }
}

impl Drop for FlushOnDrop {
    fn drop(&mut self) {
        let queue = self.taken();
        let _ = futures::executor::block_on(Self::flush(&self.storage, queue));
    }
}

#[async_trait]
impl CheckpointSaver for FlushOnDrop {
    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Result<CheckpointConfig, CheckpointError> {
        let stored = CheckpointConfig::new(config.thread_id.clone())
            .with_ns(config.checkpoint_ns.clone())
            .with_id(checkpoint.id.clone());
        self.queue.lock().unwrap_or_else(|e| e.into_inner()).push(Pending::Put(
            config.clone(),
            checkpoint,
            metadata,
            new_versions,
        ));
        Ok(stored)
    }

    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(String, TypedValue)>,
        task_id: &str,
        task_path: &str,
    ) -> Result<(), CheckpointError> {
        let p = Pending::Writes(config.clone(), writes, task_id.to_owned(), task_path.to_owned());
        self.queue.lock().unwrap_or_else(|e| e.into_inner()).push(p);
        Ok(())
    }

    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
        Self::flush(&self.storage, self.taken()).await?;
        self.storage.get_tuple(config).await
    }

    async fn list(&self, thread_id: &str, options: &ListOptions) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        Self::flush(&self.storage, self.taken()).await?;
        self.storage.list(thread_id, options).await
    }

    fn get_next_version(&self, current: Option<&ChannelVersion>) -> ChannelVersion {
        self.storage.get_next_version(current)
    }
}

/// The in-memory storage of the one fixture a replay makes: every instance is a new
/// [`FlushOnDrop`] on it; another process cannot open it.
#[derive(Default)]
struct Memory(Mutex<Arc<MemorySaver>>);

#[async_trait]
impl Storage for Memory {
    type Saver = FlushOnDrop;
    async fn create(&self) -> Result<String, BoxError> {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Arc::new(MemorySaver::new());
        Ok("memory".into())
    }
    async fn open(&self, _: &str) -> Result<FlushOnDrop, BoxError> {
        let storage = self.0.lock().unwrap_or_else(|e| e.into_inner()).clone();
        Ok(FlushOnDrop { storage, queue: Mutex::default() })
    }
    async fn destroy(&self, _: &str) -> Result<(), BoxError> {
        Ok(())
    }
    fn reach(&self) -> Reach {
        Reach::ThisProcess
    }
}

/// Every fixture gets its own storage; a reopen is a new instance on it.
fn registration() -> Registration {
    Registration::persistent("flush-on-drop", Memory::default())
}

fn trace(name: &str) -> Trace {
    let path = format!("{}/../traces/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {path}: {e}"));
    Trace::parse(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn writes_flushed_only_on_drop_are_lost_by_the_killed_process() {
    let err = replay(&registration(), &trace("killed-resumed.json")).expect_err("the resumed run must miss the writes");
    assert!(err.contains("step 9: get_tuple("), "{err}");
}

#[test]
fn writes_flushed_before_reads_pass_a_trace_without_a_reopen() {
    replay(&registration(), &trace("interrupt.json")).unwrap_or_else(|e| panic!("{e}"));
}
