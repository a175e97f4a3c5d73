//! Mutants of CONTRACT §3 delta_channel_history. Each is the walk of [`walk`] (the
//! contract's rule, through `get_tuple`) with one step changed by a [`WalkRule`].

use super::id_support::*;
use super::prelude::*;

/// The steps of the delta walk a mutant changes; the defaults are the contract's.
pub(crate) trait WalkRule: Default + Send + Sync + 'static {
    /// No channels requested means every channel with history on the target's ancestry.
    fn none_means_all(&self) -> bool {
        false
    }
    /// The walk uses the root namespace.
    fn root_namespace(&self) -> bool {
        false
    }
    /// Without a checkpoint id, nothing is resolved.
    fn latest_unresolved(&self) -> bool {
        false
    }
    /// A target that is not stored fails the call.
    fn missing_target_fails(&self) -> bool {
        false
    }
    /// The target's own writes are included.
    fn target_writes(&self) -> bool {
        false
    }
    /// The target's own value is the seed.
    fn seed_from_target(&self) -> bool {
        false
    }
    /// Writes within one checkpoint come reversed.
    fn reverse_within(&self) -> bool {
        false
    }
    /// The seed ancestor's own writes are excluded.
    fn exclude_seed_writes(&self) -> bool {
        false
    }
    /// The walk stops after the first ancestor.
    fn stop_after_parent(&self) -> bool {
        false
    }
    /// Writes come newest checkpoint first.
    fn newest_first(&self) -> bool {
        false
    }
    /// Channels with neither writes nor seed are left out.
    fn omit_empty(&self) -> bool {
        false
    }
    /// The walk follows id order instead of parent links.
    fn id_order(&self) -> bool {
        false
    }
    /// Without a checkpoint id, the target is the checkpoint with the greatest `ts`.
    fn latest_by_ts(&self) -> bool {
        false
    }
}

/// A mutant whose `delta_channel_history` walks under the wrong rule `R`.
#[derive(Default)]
pub struct Walked<R>(R);

#[async_trait]
impl<R: WalkRule> Bug for Walked<R> {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        match &call {
            Invocation::DeltaChannelHistory { config, channels } => {
                Ok(Reply::History(walk(&self.0, saver, config, channels).await?))
            }
            _ => saver.forward(call).await,
        }
    }
}

/// The writes of `writes` on channel `ch`, in order.
fn on_channel(writes: &[PendingWrite], ch: &str) -> Vec<PendingWrite> {
    writes.iter().filter(|w| w.channel == ch).cloned().collect()
}

/// Every channel with a version or a write on the ancestry of `config`.
async fn ancestry_channels(saver: &Inner<'_>, config: &CheckpointConfig) -> Result<Vec<String>, CheckpointError> {
    let (mut seen, mut visited) = (BTreeSet::new(), BTreeSet::new());
    let mut cursor = Some(config.clone());
    while let Some(c) = cursor {
        let Some(t) = saver.saver().get_tuple(&c).await? else { break };
        if !visited.insert(t.config.checkpoint_id.clone()) {
            break;
        }
        seen.extend(t.checkpoint.channel_versions.keys().cloned());
        seen.extend(t.pending_writes.iter().map(|w| w.channel.clone()));
        cursor = t.parent_config;
    }
    Ok(seen.into_iter().collect())
}

/// The next checkpoint of the walk: the parent, or (id order) the checkpoint with the next
/// smaller id.
async fn next(
    rule: &impl WalkRule,
    saver: &Inner<'_>,
    t: &CheckpointTuple,
) -> Result<Option<CheckpointConfig>, CheckpointError> {
    if !rule.id_order() {
        return Ok(t.parent_config.clone());
    }
    let Some(id) = &t.config.checkpoint_id else { return Ok(None) };
    let opts = ListOptions::all().ns(t.config.checkpoint_ns.clone()).before(id.clone()).limit(1);
    Ok(saver.saver().list(&t.config.thread_id, &opts).await?.into_iter().next().map(|p| p.config))
}

/// CONTRACT §3 delta_channel_history, walked through `get_tuple` under `rule`.
async fn walk(
    rule: &impl WalkRule,
    saver: &Inner<'_>,
    config: &CheckpointConfig,
    channels: &[String],
) -> Result<BTreeMap<String, DeltaChannelHistory>, CheckpointError> {
    let channels = if rule.none_means_all() && channels.is_empty() {
        ancestry_channels(saver, config).await?
    } else {
        channels.to_vec()
    };
    let mut out: BTreeMap<String, DeltaChannelHistory> =
        channels.iter().map(|c| (c.clone(), DeltaChannelHistory::default())).collect();
    let mut cfg = config.clone();
    if rule.root_namespace() {
        cfg.checkpoint_ns.clear();
    }
    if channels.is_empty() || (rule.latest_unresolved() && cfg.checkpoint_id.is_none()) {
        return Ok(out);
    }
    if rule.latest_by_ts() && cfg.checkpoint_id.is_none() {
        if let Some(t) = latest_by(saver, &cfg, |t| t.checkpoint.ts.clone()).await?.tuple()? {
            cfg.checkpoint_id = Some(t.checkpoint.id.clone());
        }
    }
    let Some(target) = saver.saver().get_tuple(&cfg).await? else {
        if rule.missing_target_fails() {
            return Err(CheckpointError::storage_msg(format!("delta_channel_history: no checkpoint at {cfg}")));
        }
        return Ok(out);
    };
    // Per channel: the writes of each visited checkpoint, newest checkpoint first.
    let mut groups: BTreeMap<String, Vec<Vec<PendingWrite>>> = BTreeMap::new();
    let mut in_play: BTreeSet<String> = channels.iter().cloned().collect();
    if rule.target_writes() {
        for ch in &in_play {
            groups.entry(ch.clone()).or_default().push(on_channel(&target.pending_writes, ch));
        }
    }
    if rule.seed_from_target() {
        for ch in &channels {
            if let (Some(v), Some(e)) = (target.checkpoint.channel_values.get(ch), out.get_mut(ch)) {
                e.seed = Some(v.clone());
                in_play.remove(ch);
            }
        }
    }
    let mut cursor = next(rule, saver, &target).await?;
    let mut seen = BTreeSet::new();
    while let Some(pc) = cursor {
        if in_play.is_empty() || !seen.insert(pc.checkpoint_id.clone()) {
            break;
        }
        let Some(anc) = saver.saver().get_tuple(&pc).await? else { break };
        for ch in in_play.clone() {
            let mut ws = on_channel(&anc.pending_writes, &ch);
            if rule.reverse_within() {
                ws.reverse();
            }
            let seed = anc.checkpoint.channel_values.get(&ch);
            if !(rule.exclude_seed_writes() && seed.is_some()) {
                groups.entry(ch.clone()).or_default().push(ws);
            }
            if let (Some(v), Some(e)) = (seed, out.get_mut(&ch)) {
                e.seed = Some(v.clone());
                in_play.remove(&ch);
            }
        }
        if rule.stop_after_parent() {
            break;
        }
        cursor = next(rule, saver, &anc).await?;
    }
    for (ch, g) in groups {
        if let Some(e) = out.get_mut(&ch) {
            e.writes = if rule.newest_first() {
                g.into_iter().flatten().collect()
            } else {
                g.into_iter().rev().flatten().collect()
            };
        }
    }
    if rule.omit_empty() {
        out.retain(|_, h| h.seed.is_some() || !h.writes.is_empty());
    }
    Ok(out)
}

/// Declares a [`WalkRule`] that changes one step: `walk_rule!(Name, step, "doc")`.
macro_rules! walk_rule {
    ($name:ident, $step:ident, $doc:literal) => {
        #[doc = $doc]
        #[derive(Default)]
        pub struct $name;

        impl WalkRule for $name {
            fn $step(&self) -> bool {
                true
            }
        }
    };
}

walk_rule!(DeltaIncludesTargetWrites, target_writes, "The target's own writes are included.");
walk_rule!(
    DeltaExcludesSeedWrites,
    exclude_seed_writes,
    "The seed ancestor's own writes are excluded (upstream #8384)."
);
walk_rule!(DeltaNewestFirst, newest_first, "Writes come newest first.");
walk_rule!(DeltaIgnoresNamespace, root_namespace, "The walk always uses the root namespace.");
walk_rule!(DeltaWalksIdOrder, id_order, "The walk follows id order instead of parent links.");
walk_rule!(DeltaSeedFromTarget, seed_from_target, "The target's own value is taken as the seed.");
walk_rule!(DeltaStopsAfterParent, stop_after_parent, "The walk stops after the first ancestor.");
walk_rule!(DeltaLatestNotResolved, latest_unresolved, "Without a checkpoint id, nothing is resolved (InMemory 4.2.0).");
walk_rule!(DeltaOmitsEmptyChannels, omit_empty, "Channels with neither writes nor seed are left out of the result.");
walk_rule!(
    DeltaReversesWithinCheckpoint,
    reverse_within,
    "Writes within one checkpoint come in reverse `get_tuple` order."
);
walk_rule!(
    DeltaNoChannelsMeansAll,
    none_means_all,
    "No channels requested means every channel with history on the target's ancestry."
);
walk_rule!(DeltaMissingTargetFails, missing_target_fails, "A target that is not stored fails the call.");
walk_rule!(
    DeltaLatestByTs,
    latest_by_ts,
    "Without a checkpoint id, the target is the checkpoint with the greatest `ts` (`ORDER BY ts DESC LIMIT 1`)."
);

/// Each requested channel is looked up with `WHERE channel LIKE ?`: a channel name with
/// `%` or `_` gets, after its own writes, the writes of every other channel of the thread
/// the pattern matches (`"a%"` gets those of `"ab"`), and their seed when it has none.
#[derive(Default)]
pub struct DeltaChannelsLike;

#[async_trait]
impl Bug for DeltaChannelsLike {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        let Invocation::DeltaChannelHistory { config, channels } = &call else { return saver.forward(call).await };
        let mut known = BTreeSet::new();
        let scope = ListOptions::all().ns(config.checkpoint_ns.clone());
        for t in saver.saver().list(&config.thread_id, &scope).await? {
            known.extend(t.checkpoint.channel_values.keys().cloned());
            known.extend(t.pending_writes.iter().map(|w| w.channel.clone()));
        }
        let matched = |ch: &String| -> Vec<String> {
            known.iter().filter(|k| *k != ch && ch.contains(['%', '_']) && like_str(ch, k)).cloned().collect()
        };
        let mut asked: Vec<String> = channels.clone();
        asked.extend(channels.iter().flat_map(matched));
        let all = saver.saver().delta_channel_history(config, &asked).await?;
        let mut out = BTreeMap::new();
        for ch in channels {
            let mut h = all.get(ch).cloned().unwrap_or_default();
            for other in matched(ch).iter().filter_map(|m| all.get(m)) {
                h.writes.extend(other.writes.iter().cloned());
                if h.seed.is_none() {
                    h.seed.clone_from(&other.seed);
                }
            }
            out.insert(ch.clone(), h);
        }
        Ok(Reply::History(out))
    }
}

/// The mutants of this module, in catalog order.
pub const MUTANTS: &[Mutant] = &[
    mutant!(
        "delta_includes_target_writes",
        Walked<DeltaIncludesTargetWrites>,
        &[DH],
        [R("delta.exclude_target")],
        "the target's own writes are included"
    ),
    mutant!(
        "delta_excludes_seed_writes",
        Walked<DeltaExcludesSeedWrites>,
        &[DH],
        [R("delta.seed")],
        "the seed ancestor's own writes are excluded (upstream #8384)"
    ),
    mutant!(
        "delta_newest_first",
        Walked<DeltaNewestFirst>,
        &[DH],
        [R("delta.order")],
        "writes come newest checkpoint first"
    ),
    mutant!(
        "delta_ignores_namespace",
        Walked<DeltaIgnoresNamespace>,
        &[DH],
        [R("delta.target"), G("7.4-delta-ns")],
        "the walk always uses the root namespace"
    ),
    mutant!(
        "delta_walks_id_order",
        Walked<DeltaWalksIdOrder>,
        &[DH],
        [R("delta.walk"), G("7.4-delta-forks")],
        "the walk follows id order instead of parent links"
    ),
    mutant!(
        "delta_seed_from_target",
        Walked<DeltaSeedFromTarget>,
        &[DH],
        [R("delta.walk"), R("delta.seed")],
        "the target's own value is taken as the seed"
    ),
    mutant!(
        "delta_stops_after_parent",
        Walked<DeltaStopsAfterParent>,
        &[DH],
        [R("delta.walk")],
        "the walk stops after the target's parent"
    ),
    mutant!(
        "delta_latest_not_resolved",
        Walked<DeltaLatestNotResolved>,
        &[DH],
        [R("delta.target"), G("7.4-delta-no-id")],
        "without a checkpoint id nothing is resolved (upstream InMemory 4.2.0)"
    ),
    mutant!(
        "delta_omits_empty_channels",
        Walked<DeltaOmitsEmptyChannels>,
        &[DH],
        [R("delta.channels")],
        "channels with neither writes nor seed are left out of the result"
    ),
    mutant!(
        "delta_reverses_within_checkpoint",
        Walked<DeltaReversesWithinCheckpoint>,
        &[DH],
        [R("delta.order"), G("7.4-delta-order")],
        "writes within one checkpoint come in reverse get_tuple order"
    ),
    mutant!(
        "delta_no_channels_means_all",
        Walked<DeltaNoChannelsMeansAll>,
        &[DH],
        [R("delta.channels")],
        "no channels requested gives the history of every channel on the target's ancestry"
    ),
    mutant!(
        "delta_missing_target_fails",
        Walked<DeltaMissingTargetFails>,
        &[DH],
        [R("extended.noop_inputs"), R("delta.target"), R("delta.missing_target")],
        "a target that is not stored fails the call instead of giving empty entries"
    ),
    mutant!(
        "delta_channels_case_folded",
        DeltaChannels<CaseFold>,
        &[DH],
        [R("ids.opaque"), R("delta.channels")],
        "delta_channel_history lower-cases the channels asked for: \"A\" gets the history of \"a\""
    ),
    mutant!(
        DeltaChannelsLike,
        &[DH],
        [R("ids.opaque"), R("delta.channels")],
        "delta_channel_history looks each channel up with LIKE: \"a%\" also gets the writes of \"ab\""
    ),
    mutant!(
        "delta_latest_by_ts",
        Walked<DeltaLatestByTs>,
        &[DH],
        [R("delta.target"), R("get_tuple.latest")],
        "without a checkpoint id, the target is the checkpoint with the greatest ts, not the greatest id"
    ),
];
