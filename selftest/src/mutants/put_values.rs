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
        if !emptied.is_empty() {
            let scope = ListOptions::all().ns(put.config.checkpoint_ns.clone());
            let stored = saver.saver().list(&put.config.thread_id, &scope).await?;
            for (ch, version) in emptied {
                let found = stored.iter().find(|t| t.checkpoint.channel_versions.get(&ch) == Some(&version));
                if let Some(value) = found.and_then(|t| t.checkpoint.channel_values.get(&ch)) {
                    put.checkpoint.channel_values.insert(ch, value.clone());
                }
            }
        }
        saver.forward(Invocation::Put(put)).await
    }
}
