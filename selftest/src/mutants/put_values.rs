//! The `put` mutants that resolve a checkpoint's channel values by another rule than
//! CONTRACT §2 put: their catalog lines are in [`super::put`].

use super::prelude::*;

/// A channel in `new_versions` that the put carries no value for (an emptied channel) is
/// filled with a value stored earlier in the thread and namespace for that channel at
/// that version: the value store keyed by (channel, version) answers before the put's own
/// "empty" is considered. Only a sibling that stored a value at the same version shows it.
#[derive(Default)]
pub struct EmptiedFilledFromStore;

#[async_trait]
impl Bug for EmptiedFilledFromStore {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        let Invocation::Put(mut put) = call else { return saver.forward(call).await };
        let emptied: Vec<(String, ChannelVersion)> = put
            .new_versions
            .iter()
            .filter(|(ch, _)| !put.checkpoint.channel_values.contains_key(*ch))
            .map(|(ch, v)| (ch.clone(), v.clone()))
            .collect();
        fill_from_store(saver, &mut put, emptied).await?;
        saver.forward(Invocation::Put(put)).await
    }
}

/// A channel the put keeps (at a version, no value carried, not in `new_versions`) whose
/// parent has it at that version without a value (emptied there) is filled with a value
/// stored for that channel at that version elsewhere in the thread and namespace: the value
/// store answers before the parent's emptiness is considered. Only a sibling of the parent
/// that stored a value at the same version shows it (the reference savers' own bug, found
/// by a breaker).
#[derive(Default)]
pub struct KeptEmptiedFilledFromStore;

#[async_trait]
impl Bug for KeptEmptiedFilledFromStore {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        let Invocation::Put(mut put) = call else { return saver.forward(call).await };
        let parent = match put.config.checkpoint_id {
            Some(_) => saver.saver().get_tuple(&put.config).await?,
            None => None,
        };
        let emptied_in_parent = |ch: &String, v: &ChannelVersion| {
            parent.as_ref().is_some_and(|p| {
                p.checkpoint.channel_versions.get(ch) == Some(v) && !p.checkpoint.channel_values.contains_key(ch)
            })
        };
        let kept: Vec<(String, ChannelVersion)> = put
            .checkpoint
            .channel_versions
            .iter()
            .filter(|(ch, _)| !put.checkpoint.channel_values.contains_key(*ch) && !put.new_versions.contains_key(*ch))
            .filter(|(ch, v)| emptied_in_parent(ch, v))
            .map(|(ch, v)| (ch.clone(), v.clone()))
            .collect();
        fill_from_store(saver, &mut put, kept).await?;
        saver.forward(Invocation::Put(put)).await
    }
}

/// Gives each of `channels` (channel, version) of `put` a value some stored checkpoint of
/// its thread and namespace reads at that version, if one does (the newest listed first).
async fn fill_from_store(
    saver: &Inner<'_>,
    put: &mut Put,
    channels: Vec<(String, ChannelVersion)>,
) -> Result<(), CheckpointError> {
    if channels.is_empty() {
        return Ok(());
    }
    let scope = ListOptions::all().ns(put.config.checkpoint_ns.clone());
    let stored = saver.saver().list(&put.config.thread_id, &scope).await?;
    for (ch, version) in channels {
        let at = |t: &&CheckpointTuple| t.checkpoint.channel_versions.get(&ch) == Some(&version);
        if let Some(value) = stored.iter().filter(at).find_map(|t| t.checkpoint.channel_values.get(&ch)) {
            put.checkpoint.channel_values.insert(ch, value.clone());
        }
    }
    Ok(())
}
