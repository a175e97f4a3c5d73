//! A pass-through saver that remembers which calls are in flight, so that a timeout or a
//! panic can be reported with the call that caused it ("timed out ... while in
//! `list(thread=…, ns=<all>)`"). The runner wraps every case's saver in it; cases see no
//! difference. Calls are logged as [`Call`]s and only written out when a failure names them.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use crate::call::Call;
use crate::types::{
    ChannelVersion, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointTuple,
    DeltaChannelHistory, ListOptions, PruneStrategy, TypedValue,
};
use crate::{CheckpointError, CheckpointSaver};

/// The calls in flight, by a sequence number.
#[derive(Debug, Default)]
pub(crate) struct CallLog {
    state: Mutex<(u64, BTreeMap<u64, Call>)>,
}

impl CallLog {
    fn enter(self: &Arc<Self>, call: Call) -> Guard {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.0 += 1;
        let n = s.0;
        s.1.insert(n, call);
        Guard { log: self.clone(), n }
    }

    /// `" while in put(…)"`, naming up to three calls in flight (oldest first), or `""`.
    pub(crate) fn describe(&self) -> String {
        let s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if s.1.is_empty() {
            return String::new();
        }
        let calls: Vec<String> = s.1.values().take(3).map(Call::to_string).collect();
        let more = s.1.len().saturating_sub(3);
        let more = if more > 0 { format!(" and {more} more") } else { String::new() };
        format!(" while in {}{more}", calls.join(", "))
    }
}

/// Removes its call from the log when the call returned ([`Guard::done`]); a call that
/// panicked or was cancelled (by the case's timeout) stays in the log, so the failure can be
/// reported with it.
struct Guard {
    log: Arc<CallLog>,
    n: u64,
}

impl Guard {
    fn done<T>(self, out: T) -> T {
        self.log.state.lock().unwrap_or_else(|e| e.into_inner()).1.remove(&self.n);
        out
    }
}

/// The pass-through saver.
pub(crate) struct Traced {
    pub(crate) inner: Arc<dyn CheckpointSaver>,
    pub(crate) log: Arc<CallLog>,
}

#[async_trait]
impl CheckpointSaver for Traced {
    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Result<CheckpointConfig, CheckpointError> {
        let g = self.log.enter(Call::Put { config: config.clone(), checkpoint_id: checkpoint.id.clone() });
        g.done(self.inner.put(config, checkpoint, metadata, new_versions).await)
    }

    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(String, TypedValue)>,
        task_id: &str,
        task_path: &str,
    ) -> Result<(), CheckpointError> {
        let g = self.log.enter(Call::PutWrites {
            config: config.clone(),
            channels: writes.iter().map(|(channel, _)| channel.clone()).collect(),
            task_id: task_id.to_owned(),
            task_path: task_path.to_owned(),
        });
        g.done(self.inner.put_writes(config, writes, task_id, task_path).await)
    }

    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
        let g = self.log.enter(Call::GetTuple { config: config.clone() });
        g.done(self.inner.get_tuple(config).await)
    }

    async fn list(&self, thread_id: &str, options: &ListOptions) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        let g = self.log.enter(Call::List { thread_id: thread_id.to_owned(), options: options.clone() });
        g.done(self.inner.list(thread_id, options).await)
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<(), CheckpointError> {
        let g = self.log.enter(Call::DeleteThread { thread_id: thread_id.to_owned() });
        g.done(self.inner.delete_thread(thread_id).await)
    }

    fn get_next_version(&self, current: Option<&ChannelVersion>) -> ChannelVersion {
        self.inner.get_next_version(current)
    }

    async fn delete_for_runs(&self, run_ids: &[String]) -> Result<(), CheckpointError> {
        let g = self.log.enter(Call::DeleteForRuns { run_ids: run_ids.to_vec() });
        g.done(self.inner.delete_for_runs(run_ids).await)
    }

    async fn copy_thread(&self, source: &str, target: &str) -> Result<(), CheckpointError> {
        let g = self.log.enter(Call::CopyThread { source: source.to_owned(), target: target.to_owned() });
        g.done(self.inner.copy_thread(source, target).await)
    }

    async fn prune(&self, thread_ids: &[String], strategy: PruneStrategy) -> Result<(), CheckpointError> {
        let g = self.log.enter(Call::Prune { thread_ids: thread_ids.to_vec(), strategy });
        g.done(self.inner.prune(thread_ids, strategy).await)
    }

    async fn delta_channel_history(
        &self,
        config: &CheckpointConfig,
        channels: &[String],
    ) -> Result<BTreeMap<String, DeltaChannelHistory>, CheckpointError> {
        let g = self.log.enter(Call::DeltaChannelHistory { config: config.clone(), channels: channels.to_vec() });
        g.done(self.inner.delta_channel_history(config, channels).await)
    }
}
