//! Comparisons: how a case checks what came back. [`Diffs`] gathers every difference between
//! what the contract requires and what a call returned, each naming the call (and the
//! checkpoint when the call does not), the field, what was expected and what came back;
//! [`Diffs::finish`] fails the case with all of them at once, so a second bug behind a
//! first mismatch still shows.
//!
//! ```
//! # use conformance_spec::compare::Diffs;
//! let mut d = Diffs::new();
//! d.of("get_tuple(thread=t, ns=\"\", id=c1)").eq("checkpoint.v", &1, &1).eq("metadata[\"step\"]", &2, &3);
//! d.eq("parent_config", &Some("c0"), &None);
//! let message = d.finish().unwrap_err().message;
//! assert_eq!(
//!     message,
//!     "get_tuple(thread=t, ns=\"\", id=c1): 2 differences:\n  \
//!      - metadata[\"step\"]: expected 2, got 3\n  \
//!      - parent_config: expected Some(\"c0\"), got None"
//! );
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::{self, Debug, Display};

use conformance_core::{
    Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata, CheckpointTuple, Failure, Feature, PendingWrite,
    TypedValue,
};

use crate::data::Step;

/// What a case returns, and what every check returns: `Ok(())` or the [`Failure`] that says
/// what differed (spec cases are `async fn(Cx) -> Checked`).
pub type Checked = Result<(), Failure>;

/// Fails with `message()` unless `cond`: for a rule that is not "this field equals that
/// value" (a count, a choice between allowed results).
///
/// # Errors
/// A [`Failure`] with the message when `cond` is false.
pub fn ensure(cond: bool, message: impl FnOnce() -> String) -> Checked {
    if cond {
        Ok(())
    } else {
        Err(Failure::new(message()))
    }
}

tokio::task_local! {
    /// What the saver under the running case declared it lacks ([`conformance_core::Fixture::lacking`]):
    /// the comparisons leave out the fields it cannot hold ([`judging`]).
    static LACKS: BTreeSet<Feature>;
}

/// Runs `f` judging reads as a saver that lacks `lacks` returns them: without
/// [`Feature::TaskPathOnReads`], a write's `task_path` is left out of every comparison of
/// pending writes ([`same_writes`], [`Diffs::writes`], [`Diffs::tuple`]) and their order
/// still counts (CONTRACT §2 put_writes, "A saver whose reads carry no task_path");
/// without [`Feature::UpdatedChannels`], a checkpoint's `updated_channels` is left out of
/// [`Diffs::checkpoint`] (CONTRACT §5 "Declared limits"). Outside it, every field is
/// compared.
pub async fn judging<F: std::future::Future>(lacks: BTreeSet<Feature>, f: F) -> F::Output {
    LACKS.scope(lacks, f).await
}

/// [`judging`] a saver that lacks only [`Feature::TaskPathOnReads`] (when `on_reads` is
/// false) or nothing.
pub async fn judging_task_path<F: std::future::Future>(on_reads: bool, f: F) -> F::Output {
    let lacks = if on_reads { BTreeSet::new() } else { BTreeSet::from([Feature::TaskPathOnReads]) };
    judging(lacks, f).await
}

/// `tokio::spawn` for a task of a case: the spawned task judges reads as the case does. A
/// task-local is not inherited by `tokio::spawn`, so a bare spawn inside a case on a saver
/// whose reads carry no `task_path` would compare the field after all. Every spawn in the
/// spec goes through here (xtask's tidy test checks it).
pub fn spawn<F>(f: F) -> tokio::task::JoinHandle<F::Output>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    let lacks = LACKS.try_with(Clone::clone).unwrap_or_default();
    tokio::spawn(judging(lacks, f))
}

/// Whether the case being run compares the field that `feature` stands for (see
/// [`judging`]); true outside one.
fn compared(feature: Feature) -> bool {
    LACKS.try_with(|lacks| !lacks.contains(&feature)).unwrap_or(true)
}

/// Whether the case being run compares a pending write's `task_path` (see [`judging`]);
/// true outside one.
pub fn task_path_compared() -> bool {
    compared(Feature::TaskPathOnReads)
}

/// `writes` as they are compared: unchanged, or without their `task_path` when the case's
/// saver reads none ([`judging`]).
fn as_compared(writes: &[PendingWrite]) -> std::borrow::Cow<'_, [PendingWrite]> {
    if task_path_compared() {
        std::borrow::Cow::Borrowed(writes)
    } else {
        std::borrow::Cow::Owned(writes.iter().map(|w| PendingWrite { task_path: String::new(), ..w.clone() }).collect())
    }
}

/// Whether two lists of pending writes are the same, order included, under the case's
/// rule for `task_path` ([`judging`]).
pub fn same_writes(expected: &[PendingWrite], got: &[PendingWrite]) -> bool {
    as_compared(expected) == as_compared(got)
}

/// `[(task, channel, value), ...]` for messages; a write with a task path shows it as
/// `task@path`.
pub fn describe_writes(writes: &[PendingWrite]) -> String {
    format!("[{}]", write_items(writes).join(", "))
}

/// Each write as `describe_writes` shows it.
fn write_items(writes: &[PendingWrite]) -> Vec<String> {
    writes
        .iter()
        .map(|w| {
            if w.task_path.is_empty() {
                format!("({}, {}, {:?})", w.task_id, w.channel, w.value)
            } else {
                format!("({}@{}, {}, {:?})", w.task_id, w.task_path, w.channel, w.value)
            }
        })
        .collect()
}

/// The length from which a list of writes that differs also names what it lacks and what
/// it holds beyond the expected ([`missing_and_extra`]).
const LONG_LIST: usize = 3;

/// What a list `got` lacks of `expected` and holds beyond it, each as often as it differs
/// (`missing [(t, a, json:1)]; unexpected [(t, a, json:2)]`), so that a long list need not
/// be diffed by eye; `None` when both hold the same elements.
fn missing_and_extra(expected: &[String], got: &[String]) -> Option<String> {
    let mut extra: Vec<&String> = got.iter().collect();
    let mut missing = Vec::new();
    for e in expected {
        match extra.iter().position(|g| *g == e) {
            Some(i) => {
                extra.remove(i);
            }
            None => missing.push(e.as_str()),
        }
    }
    let list = |items: Vec<&str>| format!("[{}]", items.join(", "));
    match (missing.is_empty(), extra.is_empty()) {
        (true, true) => None,
        (false, true) => Some(format!("missing {}", list(missing))),
        (true, false) => Some(format!("unexpected {}", list(extra.into_iter().map(String::as_str).collect()))),
        (false, false) => Some(format!(
            "missing {}; unexpected {}",
            list(missing),
            list(extra.into_iter().map(String::as_str).collect())
        )),
    }
}

/// The field of a difference between two ordered lists: `field`, or, when `got` holds
/// exactly the elements of `expected` (each as often) in another order,
/// `"{field}: same {n} elements, wrong order"`, so a wrong order is never read as a loss
/// (`ids: same 3 elements, wrong order: expected [c3, c2, c1], got [c1, c2, c3]`).
pub fn order_field<A: Ord + PartialEq<B>, B: Ord>(field: impl Display, expected: &[A], got: &[B]) -> String {
    let (mut w, mut g): (Vec<&A>, Vec<&B>) = (expected.iter().collect(), got.iter().collect());
    w.sort_unstable();
    g.sort_unstable();
    let same = w.len() == g.len() && w.iter().zip(&g).all(|(a, b)| **a == **b);
    if same {
        format!("{field}: same {} elements, wrong order", w.len())
    } else {
        field.to_string()
    }
}

/// Fails unless `result` is a [`CheckpointError::InvalidConfig`] error (CONTRACT §1 Config,
/// §4), with `"{call}: expected an InvalidConfig error, got .."`.
///
/// # Errors
/// A [`Failure`] naming what came back instead.
pub fn expect_invalid_config<T: Debug>(call: impl Display, result: &Result<T, CheckpointError>) -> Checked {
    match result {
        Err(CheckpointError::InvalidConfig(_)) => Ok(()),
        Err(e) => Err(Failure::new(format!(
            "{call}: expected an InvalidConfig error, got error {}: {}",
            e.kind(),
            e.display_chain()
        ))),
        Ok(v) => Err(Failure::new(format!("{call}: expected an InvalidConfig error, got Ok({v:?})"))),
    }
}

/// One difference: where (the call, and the checkpoint when the call does not name it),
/// which field, what was expected and what came back, each already written out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    /// The call and the checkpoint, e.g. `get_tuple(thread=t, ns="", id=c1)` or
    /// `list(thread=t, ns=<all>): tuple (thread=t, ns="", id=c1)`.
    pub place: String,
    /// The field, e.g. `metadata["step"]`, `checkpoint.channel_values["a"]`,
    /// `pending_writes`; empty when the place is the whole value.
    pub field: String,
    /// What the contract requires.
    pub expected: String,
    /// What came back.
    pub got: String,
}

impl Difference {
    /// `field: expected .., got ..` (without the place).
    fn line(&self) -> String {
        if self.field.is_empty() {
            format!("expected {}, got {}", self.expected, self.got)
        } else {
            format!("{}: expected {}, got {}", self.field, self.expected, self.got)
        }
    }
}

impl Display for Difference {
    /// `place: field: expected .., got ..`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.place.is_empty() {
            f.write_str(&self.line())
        } else {
            write!(f, "{}: {}", self.place, self.line())
        }
    }
}

/// An accumulator of [`Difference`]s: set the place ([`Diffs::of`], usually a
/// [`crate::Reply`]), compare fields (each comparison records what differs and goes on),
/// then [`Diffs::finish`] once.
///
/// The comparators cover every field: [`Diffs::tuple`] (config, parent config, every
/// checkpoint field, metadata, pending writes), [`Diffs::checkpoint`], [`Diffs::step`] (what a
/// `put` stored), [`Diffs::tuples`] (a listing), [`Diffs::writes`]; maps are compared key by
/// key ([`Diffs::map`], [`Diffs::metadata`]), so each missing, unexpected or changed key is
/// its own difference.
#[derive(Clone, Debug, Default)]
pub struct Diffs {
    place: String,
    found: Vec<Difference>,
    /// Set while [`Diffs::step`] compares what a put stored: a key or field that came back
    /// absent is then "not stored", not merely missing.
    stored: bool,
}

impl Diffs {
    /// No differences yet, no place.
    pub fn new() -> Self {
        Self::default()
    }

    /// Where the next comparisons happen: a [`crate::Reply`] (its call), or any description.
    pub fn of(&mut self, place: impl Display) -> &mut Self {
        self.place = place.to_string();
        self
    }

    /// Records a difference in `field` (already written out); the same difference recorded
    /// twice (a field checked on its own and again as part of the whole) counts once.
    pub fn push(&mut self, field: impl Display, expected: impl Display, got: impl Display) -> &mut Self {
        let d = Difference {
            place: self.place.clone(),
            field: field.to_string(),
            expected: expected.to_string(),
            got: got.to_string(),
        };
        if !self.found.contains(&d) {
            self.found.push(d);
        }
        self
    }

    /// What an absent key or field is shown as: `nothing (not stored)` when the comparison
    /// is of what a put stored ([`Diffs::step`]), else `nothing (key missing)`.
    fn absent(&self) -> &'static str {
        if self.stored {
            "nothing (not stored)"
        } else {
            "nothing (key missing)"
        }
    }

    /// Records a difference unless `got == expected` (both shown with `{:?}`).
    pub fn eq<T: PartialEq + Debug + ?Sized>(&mut self, field: impl Display, expected: &T, got: &T) -> &mut Self {
        if got != expected {
            self.push(field, format_args!("{expected:?}"), format_args!("{got:?}"));
        }
        self
    }

    /// Compares two maps key by key: `field[key]` for each key missing (`nothing (key
    /// missing)`, or `nothing (not stored)` under [`Diffs::step`]), unexpected or with
    /// another value.
    pub fn map<K: Ord + Debug, V: PartialEq + Debug>(
        &mut self,
        field: impl Display,
        expected: &BTreeMap<K, V>,
        got: &BTreeMap<K, V>,
    ) -> &mut Self {
        for (k, want) in expected {
            match got.get(k) {
                None => {
                    let absent = self.absent();
                    self.push(format_args!("{field}[{k:?}]"), format_args!("{want:?}"), absent);
                }
                Some(have) if have != want => {
                    self.push(format_args!("{field}[{k:?}]"), format_args!("{want:?}"), format_args!("{have:?}"));
                }
                Some(_) => {}
            }
        }
        for (k, have) in got.iter().filter(|(k, _)| !expected.contains_key(*k)) {
            self.push(format_args!("{field}[{k:?}]"), "nothing (no such key)", format_args!("{have:?}"));
        }
        self
    }

    /// Compares metadata key by key (values shown as JSON): `metadata["step"]`.
    pub fn metadata(&mut self, expected: &CheckpointMetadata, got: &CheckpointMetadata) -> &mut Self {
        fn json(m: &CheckpointMetadata) -> BTreeMap<&str, Json<'_>> {
            m.iter().map(|(k, v)| (k.as_str(), Json(v))).collect()
        }
        self.map("metadata", &json(expected), &json(got))
    }

    /// Compares a tuple's `config`, shown as `(thread=…, ns="…", id=…)`.
    pub fn config(&mut self, expected: &CheckpointConfig, got: &CheckpointConfig) -> &mut Self {
        if got != expected {
            self.push("config", format_args!("({expected})"), format_args!("({got})"));
        }
        self
    }

    /// Compares a tuple's `parent_config`, shown as `(thread=…, ns="…", id=…)` or `none`.
    pub fn parent_config(&mut self, expected: Option<&CheckpointConfig>, got: Option<&CheckpointConfig>) -> &mut Self {
        if got != expected {
            let show = |c: Option<&CheckpointConfig>| c.map_or_else(|| "none".to_owned(), |c| format!("({c})"));
            self.push("parent_config", show(expected), show(got));
        }
        self
    }

    /// Compares one metadata key, `metadata["key"]`, shown as JSON (`nothing (key missing)`
    /// when the key is absent).
    pub fn metadata_key(&mut self, key: &str, expected: &serde_json::Value, got: &CheckpointMetadata) -> &mut Self {
        match got.get(key) {
            Some(have) if have == expected => self,
            Some(have) => self.push(format_args!("metadata[{key:?}]"), expected, have),
            None => self.push(format_args!("metadata[{key:?}]"), expected, "nothing (key missing)"),
        }
    }

    /// Compares one channel value, `checkpoint.channel_values["channel"]` (`nothing (key
    /// missing)` when the channel is absent).
    pub fn channel_value(&mut self, channel: &str, expected: &TypedValue, got: &Checkpoint) -> &mut Self {
        match got.channel_values.get(channel) {
            Some(have) if have == expected => self,
            Some(have) => self.push(
                format_args!("checkpoint.channel_values[{channel:?}]"),
                format_args!("{expected:?}"),
                format_args!("{have:?}"),
            ),
            None => self.push(
                format_args!("checkpoint.channel_values[{channel:?}]"),
                format_args!("{expected:?}"),
                "nothing (key missing)",
            ),
        }
    }

    /// Compares two lists of pending writes as a whole (order included): one difference
    /// showing both lists, its field saying "same N elements, wrong order" when only the
    /// order differs ([`order_field`]). Without `task_path` on a saver whose reads carry
    /// none ([`judging`]).
    pub fn writes(&mut self, field: impl Display, expected: &[PendingWrite], got: &[PendingWrite]) -> &mut Self {
        let (expected, got) = (as_compared(expected), as_compared(got));
        if got != expected {
            let (want, have) = (write_items(&expected), write_items(&got));
            let field = order_field(field, &want, &have);
            // Short lists read at a glance; a longer one says what differs.
            let long = !want.is_empty() && !have.is_empty() && want.len().max(have.len()) >= LONG_LIST;
            let got = match missing_and_extra(&want, &have).filter(|_| long) {
                Some(which) => format!("{} ({which})", describe_writes(&got)),
                None => describe_writes(&got),
            };
            self.push(field, describe_writes(&expected), got);
        }
        self
    }

    /// Compares every field of a checkpoint (`checkpoint.v`, `.id`, `.ts`, `.channel_values`,
    /// `.channel_versions`, `.versions_seen` key by key, `.updated_channels`; not the last on a
    /// saver that declared it lacks [`Feature::UpdatedChannels`], see [`judging`]).
    pub fn checkpoint(&mut self, expected: &Checkpoint, got: &Checkpoint) -> &mut Self {
        // Destructured, so that a field added to `Checkpoint` does not compile until it is
        // compared here.
        let Checkpoint { v, id, ts, channel_values, channel_versions, versions_seen, updated_channels } = expected;
        self.eq("checkpoint.v", v, &got.v)
            .eq("checkpoint.id", id, &got.id)
            .eq("checkpoint.ts", ts, &got.ts)
            .map("checkpoint.channel_values", channel_values, &got.channel_values)
            .map("checkpoint.channel_versions", channel_versions, &got.channel_versions)
            .map("checkpoint.versions_seen", versions_seen, &got.versions_seen);
        match (updated_channels, &got.updated_channels) {
            _ if !compared(Feature::UpdatedChannels) => self,
            (Some(want), None) => {
                let absent = self.absent();
                self.push("checkpoint.updated_channels", format_args!("{want:?}"), absent)
            }
            _ => self.eq("checkpoint.updated_channels", updated_channels, &got.updated_channels),
        }
    }

    /// Compares what a `put` of `expected` stored with what a read returned: every
    /// checkpoint field and the metadata (not the config, parent or writes, which the step
    /// does not decide). A key or field put but absent from the read is `nothing (not
    /// stored)`.
    pub fn step(&mut self, expected: &Step, got: &CheckpointTuple) -> &mut Self {
        let outer = std::mem::replace(&mut self.stored, true);
        self.checkpoint(&expected.checkpoint, &got.checkpoint).metadata(&expected.metadata, &got.metadata);
        self.stored = outer;
        self
    }

    /// Compares every field of a tuple: `config`, `parent_config`, the checkpoint
    /// ([`Diffs::checkpoint`]), `metadata` and `pending_writes`.
    pub fn tuple(&mut self, expected: &CheckpointTuple, got: &CheckpointTuple) -> &mut Self {
        self.tuple_fields(expected, got, true)
    }

    /// [`Diffs::tuple`] without `parent_config`, for rules that leave the parent open (the
    /// kept checkpoint of `prune`).
    pub fn tuple_except_parent(&mut self, expected: &CheckpointTuple, got: &CheckpointTuple) -> &mut Self {
        self.tuple_fields(expected, got, false)
    }

    fn tuple_fields(&mut self, expected: &CheckpointTuple, got: &CheckpointTuple, parent: bool) -> &mut Self {
        // Destructured, so that a field added to `CheckpointTuple` does not compile until it
        // is compared here.
        let CheckpointTuple { config, checkpoint, metadata, parent_config, pending_writes } = expected;
        self.config(config, &got.config);
        if parent {
            self.parent_config(parent_config.as_ref(), got.parent_config.as_ref());
        }
        self.checkpoint(checkpoint, &got.checkpoint).metadata(metadata, &got.metadata).writes(
            "pending_writes",
            pending_writes,
            &got.pending_writes,
        )
    }

    /// Names each listed tuple whose `config.checkpoint_id` is not its checkpoint's id
    /// (CONTRACT §1 Checkpoint tuple), by position and both ids: `tuples[3].config: config
    /// names 1ef…, checkpoint is 1f0…`, so a wrong config does not read as a lost checkpoint.
    pub fn configs_match(&mut self, got: &[CheckpointTuple]) -> &mut Self {
        for (i, t) in got.iter().enumerate() {
            if t.config.checkpoint_id.as_deref() != Some(t.checkpoint.id.as_str()) {
                let named = t.config.checkpoint_id.as_deref().unwrap_or("no checkpoint_id");
                self.push(
                    format_args!("tuples[{i}].config"),
                    format_args!("the checkpoint's id {}", t.checkpoint.id),
                    format_args!("config names {named}, checkpoint is {}", t.checkpoint.id),
                );
            }
        }
        self
    }

    /// True when nothing differed so far.
    pub fn is_empty(&self) -> bool {
        self.found.is_empty()
    }

    /// The differences found so far, in the order they were found.
    pub fn differences(&self) -> &[Difference] {
        &self.found
    }

    /// [`Diffs::finish`], first giving the place `place()` to the differences recorded
    /// without one: for checks in a hot loop (a reader racing a writer), where the place is
    /// only written out when something differed.
    ///
    /// # Errors
    /// The failure, when something differed.
    pub fn finish_at<P: Display>(&mut self, place: impl FnOnce() -> P) -> Checked {
        if self.found.iter().any(|d| d.place.is_empty()) {
            let place = place().to_string();
            for d in self.found.iter_mut().filter(|d| d.place.is_empty()) {
                d.place.clone_from(&place);
            }
        }
        self.finish()
    }

    /// `Ok(())` when nothing differed; otherwise a [`Failure`] listing every difference (one
    /// line for one difference, else a count and one line each, grouped by place). The text
    /// is capped: the first [`MAX_PLACES`] places with at most [`MAX_LINES`] differences
    /// each, then a count of the rest ("and K more"), so a listing of hundreds of differing
    /// tuples still names the first ones in full and the count of the others. Takes the
    /// differences, so the accumulator can be used again.
    ///
    /// # Errors
    /// The failure, when something differed.
    pub fn finish(&mut self) -> Checked {
        let found = std::mem::take(&mut self.found);
        match found.as_slice() {
            [] => Ok(()),
            [one] => Err(Failure::new(one.to_string())),
            many => {
                // Grouped by place, in the order the places were first seen.
                let mut places: Vec<(&str, Vec<String>)> = Vec::new();
                for d in many {
                    match places.iter_mut().find(|(p, _)| *p == d.place) {
                        Some((_, lines)) => lines.push(d.line()),
                        None => places.push((&d.place, vec![d.line()])),
                    }
                }
                let mut message = match places.as_slice() {
                    [(place, _)] if !place.is_empty() => format!("{place}: {} differences:", many.len()),
                    _ => format!("{} differences:", many.len()),
                };
                let single = places.len() == 1;
                for (place, lines) in places.iter().take(MAX_PLACES) {
                    let indent = if single || place.is_empty() {
                        "  "
                    } else {
                        message.push_str(&format!("\n  {place}:"));
                        "    "
                    };
                    for line in lines.iter().take(MAX_LINES) {
                        message.push_str(&format!("\n{indent}- {line}"));
                    }
                    if lines.len() > MAX_LINES {
                        message.push_str(&format!("\n{indent}- and {} more", lines.len() - MAX_LINES));
                    }
                }
                if places.len() > MAX_PLACES {
                    let rest = &places[MAX_PLACES..];
                    let n: usize = rest.iter().map(|(_, lines)| lines.len()).sum();
                    // Named after the call they share (a listing's tuples: by their configs).
                    let first = rest[0].0;
                    let shared = first
                        .match_indices(": ")
                        .map(|(i, _)| &first[..i + 2])
                        .filter(|pre| rest.iter().all(|(p, _)| p.starts_with(pre)))
                        .last()
                        .unwrap_or("");
                    let names: Vec<&str> = rest.iter().map(|(p, _)| &p[shared.len()..]).collect();
                    message.push_str(&format!(
                        "\n  and {} more places with {n} differences: {shared}{}",
                        rest.len(),
                        shorten(&names.join("; "), 600)
                    ));
                }
                Err(Failure::new(message))
            }
        }
    }
}

/// How many places (calls, or tuples of a listing) [`Diffs::finish`] writes out with their
/// differences; the rest are named on one line, "and K more places with M differences".
pub const MAX_PLACES: usize = 12;

/// How many differences of one place [`Diffs::finish`] writes out; the rest are counted,
/// "and K more".
pub const MAX_LINES: usize = 20;

/// `s` cut to its first `max` characters, with "…" when cut.
pub(crate) fn shorten(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s.to_owned(),
    }
}

/// A JSON value compared as a value and shown as JSON (`"loop"`, not `String("loop")`).
#[derive(PartialEq)]
struct Json<'a>(&'a serde_json::Value);

impl Debug for Json<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Display::fmt(self.0, f)
    }
}

#[path = "compare_listing.rs"]
mod listing;
pub use listing::{entry_of, Entry, Order};

#[cfg(test)]
#[path = "compare_tests.rs"]
mod tests;
