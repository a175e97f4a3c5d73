//! The extended methods of CONTRACT §3 on the [`Model`]: delete_for_runs, copy_thread,
//! prune and delta_channel_history.

use std::collections::BTreeMap;

use conformance_core::{CheckpointConfig, CheckpointError, DeltaChannelHistory, PruneStrategy};

use super::{check_thread, Key, Model};

impl Model {
    /// `delete_for_runs` (CONTRACT §3): every checkpoint whose metadata `run_id` is one of
    /// `run_ids` goes, with its writes, in every thread and namespace.
    pub fn delete_for_runs(&mut self, run_ids: &[String]) -> Result<(), CheckpointError> {
        let doomed: Vec<Key> = self
            .checkpoints
            .iter()
            .filter(|(_, s)| {
                s.metadata.get("run_id").and_then(|v| v.as_str()).is_some_and(|r| run_ids.iter().any(|x| x == r))
            })
            .map(|(k, _)| k.clone())
            .collect();
        for k in doomed {
            self.checkpoints.remove(&k);
            self.writes.remove(&k);
        }
        Ok(())
    }

    /// `copy_thread` (CONTRACT §3): every checkpoint of every namespace of `source` is
    /// stored in `target` with the same id, metadata, values, versions and parent id; its
    /// writes replace the target checkpoint's writes; the target's other checkpoints stay.
    pub fn copy_thread(&mut self, source: &str, target: &str) -> Result<(), CheckpointError> {
        check_thread(source)?;
        check_thread(target)?;
        if source == target {
            return Ok(());
        }
        let copied: Vec<_> =
            self.checkpoints.iter().filter(|(k, _)| k.0 == source).map(|(k, s)| (k.clone(), s.clone())).collect();
        for ((_, ns, id), stored) in copied {
            let to = (target.to_owned(), ns.clone(), id.clone());
            match self.writes.get(&(source.to_owned(), ns, id)).cloned() {
                Some(w) => self.writes.insert(to.clone(), w),
                None => self.writes.remove(&to),
            };
            self.checkpoints.insert(to, stored);
        }
        let blobs: Vec<_> =
            self.blobs.iter().filter(|(k, _)| k.0 == source).map(|(k, v)| (k.clone(), v.clone())).collect();
        for ((_, ns, ch, ver), v) in blobs {
            self.blobs.insert((target.to_owned(), ns, ch, ver), v);
        }
        Ok(())
    }

    /// `prune` (CONTRACT §3): `keep_latest` keeps the greatest id of each (thread,
    /// namespace) with its writes (its values stay readable), and marks a kept checkpoint
    /// whose parent is not stored as one that may read with no parent; `delete` removes
    /// the threads.
    pub fn prune(&mut self, thread_ids: &[String], strategy: PruneStrategy) -> Result<(), CheckpointError> {
        for thread in thread_ids {
            match strategy {
                PruneStrategy::Delete => self.delete_thread(thread)?,
                PruneStrategy::KeepLatest => {
                    let mut latest: BTreeMap<String, String> = BTreeMap::new();
                    for (t, ns, id) in self.checkpoints.keys() {
                        if t == thread {
                            let e = latest.entry(ns.clone()).or_default();
                            if id.as_bytes() > e.as_bytes() || e.is_empty() {
                                e.clone_from(id);
                            }
                        }
                    }
                    let keep = |k: &Key| k.0 != *thread || latest.get(&k.1) == Some(&k.2);
                    self.checkpoints.retain(|k, _| keep(k));
                    self.writes.retain(|k, _| keep(k));
                    let kept: Vec<Key> = self.checkpoints.keys().filter(|k| k.0 == *thread).cloned().collect();
                    for k in kept {
                        let parent = self.checkpoints[&k].parent.clone();
                        let gone =
                            parent.is_some_and(|p| !self.checkpoints.contains_key(&(k.0.clone(), k.1.clone(), p)));
                        if let Some(s) = self.checkpoints.get_mut(&k) {
                            s.parent_may_be_unlinked |= gone;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// `delta_channel_history` (CONTRACT §3): resolve the target as `get_tuple` does; walk
    /// `parent_config` links from its parent; at each ancestor collect its writes on the
    /// channel (get_tuple order), then stop with the ancestor's value as seed if it reads
    /// one. Writes come back oldest ancestor first. A missing target gives empty entries.
    pub fn delta_channel_history(
        &self,
        config: &CheckpointConfig,
        channels: &[String],
    ) -> Result<BTreeMap<String, DeltaChannelHistory>, CheckpointError> {
        check_thread(&config.thread_id)?;
        let mut out = BTreeMap::new();
        let target = self.resolve(config);
        for channel in channels {
            let mut per_ancestor = Vec::new();
            let mut seed = None;
            let mut cursor = target.as_ref().and_then(|k| self.checkpoints.get(k)).and_then(|s| s.parent.clone());
            let mut steps = 0;
            while let Some(id) = cursor {
                let k = (config.thread_id.clone(), config.checkpoint_ns.clone(), id);
                let Some(tuple) = self.tuple(&k) else { break };
                per_ancestor
                    .push(tuple.pending_writes.iter().filter(|w| &w.channel == channel).cloned().collect::<Vec<_>>());
                if let Some(v) = tuple.checkpoint.channel_values.get(channel) {
                    seed = Some(v.clone());
                    break;
                }
                steps += 1;
                if steps > self.checkpoints.len() {
                    break; // a parent cycle: the generator never makes one
                }
                cursor = self.checkpoints.get(&k).and_then(|s| s.parent.clone());
            }
            let writes = per_ancestor.into_iter().rev().flatten().collect();
            out.insert(channel.clone(), DeltaChannelHistory { writes, seed });
        }
        Ok(out)
    }
}
