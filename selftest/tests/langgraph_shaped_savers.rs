//! Savers that differ from the memory saver the way real savers do, and are judged on each
//! case's own rule (issue 35, false failures 6 and 7, and the cross-namespace order):
//!
//! - typed metadata: `put` refuses metadata without LangGraph's keys (`source` one of
//!   input|loop|update|fork, an integer `step`, an object `parents`) with `InvalidInput`,
//!   as the published Rust savers whose metadata is a struct do. Every checkpoint the kit
//!   puts carries them (CONTRACT §5), so no case fails;
//! - no namespaces: every call naming a namespace other than the root is refused with
//!   `InvalidInput`, and the saver declares it (`Feature::Namespaces`): no case fails, and
//!   the cases whose rule is about namespaces are not run with the declaration as reason;
//! - namespace by namespace: `list` without a namespace returns namespace after namespace
//!   (namespace ascending, ids descending within each, `limit` cutting that sequence, as
//!   LangGraph's `InMemorySaver` does): only SHOULD cases notice (not strict), and the level
//!   is FULL;
//! - carried values only: a saver that stores only what each put carries (LangGraph's
//!   `SqliteSaver`) fails only the SHOULD cases about kept channels (not strict): every other
//!   case carries the values its rule does not depend on, as LangGraph's runtime does.
//!
//! Durability is skipped in each: its crash test needs a front end that re-executes the
//! binary, and its cases are not about these rules (the durability module is another
//! change's).

use std::collections::BTreeSet;
use std::sync::Arc;

use async_trait::async_trait;
use conformance_core::{
    Capability, CheckpointError, Feature, Level, ListOptions, Outcome, Registration, Report, RunOptions, Strength,
};
use conformance_selftest::{registration_of, Base, Bug, Inner, Invocation, Reply};
use serde_json::Value;

/// `put` refuses metadata that is not LangGraph-shaped.
struct TypedMetadata;

#[async_trait]
impl Bug for TypedMetadata {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        if let Invocation::Put(put) = &call {
            let md = &put.metadata;
            let source = md.get("source").and_then(Value::as_str);
            if !matches!(source, Some("input" | "loop" | "update" | "fork")) {
                return Err(CheckpointError::InvalidInput(format!(
                    "metadata source {:?} is not a Source",
                    md.get("source")
                )));
            }
            if !md.get("step").is_some_and(|s| s.is_i64()) {
                return Err(CheckpointError::InvalidInput(format!(
                    "metadata step {:?} is not an integer",
                    md.get("step")
                )));
            }
            if !md.get("parents").is_some_and(Value::is_object) {
                return Err(CheckpointError::InvalidInput(format!(
                    "metadata parents {:?} is not an object",
                    md.get("parents")
                )));
            }
        }
        saver.forward(call).await
    }
}

/// Every call naming a namespace other than the root is refused.
struct RootNamespaceOnly;

#[async_trait]
impl Bug for RootNamespaceOnly {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        let ns = match &call {
            Invocation::Put(p) => Some(p.config.checkpoint_ns.as_str()),
            Invocation::PutWrites(w) => Some(w.config.checkpoint_ns.as_str()),
            Invocation::GetTuple { config } | Invocation::DeltaChannelHistory { config, .. } => {
                Some(config.checkpoint_ns.as_str())
            }
            Invocation::List { options, .. } => options.checkpoint_ns.as_deref(),
            _ => None,
        };
        match ns {
            Some(ns) if !ns.is_empty() => Err(CheckpointError::InvalidInput(format!(
                "namespace {ns:?}: this saver stores the root namespace only"
            ))),
            _ => saver.forward(call).await,
        }
    }
}

/// `list` without a namespace goes namespace by namespace (ascending), each namespace's
/// checkpoints newest first, `before` and the filter applied in each, and `limit` cutting
/// the concatenation: LangGraph's `InMemorySaver.list`.
struct NamespaceByNamespace;

#[async_trait]
impl Bug for NamespaceByNamespace {
    async fn call(&self, saver: &Inner<'_>, call: Invocation) -> Result<Reply, CheckpointError> {
        let Invocation::List { thread_id, options } = &call else { return saver.forward(call).await };
        if options.checkpoint_ns.is_some() {
            return saver.forward(call).await;
        }
        let every = saver.saver().list(thread_id, &ListOptions::all()).await?;
        let namespaces: BTreeSet<String> = every.into_iter().map(|t| t.config.checkpoint_ns).collect();
        let mut out = Vec::new();
        for ns in namespaces {
            let one = ListOptions { checkpoint_ns: Some(ns), limit: None, ..options.clone() };
            out.extend(saver.saver().list(thread_id, &one).await?);
        }
        out.truncate(options.limit.unwrap_or(usize::MAX));
        Ok(Reply::Tuples(out))
    }
}

fn saver(name: &'static str, bug: fn() -> Arc<dyn Bug>, lacks: Option<Feature>) -> Registration {
    let inner = registration_of(name, Base::Memory, bug);
    Registration::new(name, move || {
        let inner = inner.clone();
        async move {
            let f = inner.fixture().await?;
            Ok(match lacks {
                Some(feature) => f.lacking(feature),
                None => f,
            })
        }
    })
    .skip(Capability::Durability, "the crash test needs a re-executing front end")
}

fn validate(reg: &Registration) -> Report {
    conformance_spec::validate(reg, &RunOptions::default())
}

#[test]
fn typed_metadata_fails_no_case() {
    let report = validate(&saver("typed-metadata", || Arc::new(TypedMetadata), None));
    assert_eq!(report.failed_cases(), Vec::<String>::new());
    assert_eq!(report.not_strict_cases(), Vec::<String>::new());
    assert_eq!(report.conformance_level, Level::Full, "{:#?}", report.results);
}

#[test]
fn no_namespaces_declared_fails_no_case_and_runs_no_namespace_case() {
    let report = validate(&saver("root-namespace-only", || Arc::new(RootNamespaceOnly), Some(Feature::Namespaces)));
    assert_eq!(report.failed_cases(), Vec::<String>::new());
    let reason = conformance_core::lack_reason(Feature::Namespaces);
    let uses: BTreeSet<String> = conformance_spec::catalog()
        .iter()
        .filter(|c| c.uses.contains(&Feature::Namespaces) && c.capability != Capability::Durability)
        .map(|c| c.id())
        .collect();
    assert!(uses.len() >= 20, "the cases about namespaces: {uses:?}");
    for t in &report.tests {
        if uses.contains(&t.id) {
            assert_eq!(t.outcome, Outcome::NotRun, "{}: {:?}", t.id, t.message);
            assert_eq!(t.message.as_deref(), Some(reason.as_str()), "{}", t.id);
        } else {
            assert_ne!(t.outcome, Outcome::NotRun, "{} is not about namespaces: {:?}", t.id, t.message);
        }
    }
    assert!(report.warnings.iter().any(|w| w.contains("root namespace only")), "{:?}", report.warnings);
}

#[test]
fn namespace_by_namespace_list_is_full_and_only_not_strict() {
    let report = validate(&saver("namespace-by-namespace", || Arc::new(NamespaceByNamespace), None));
    assert_eq!(report.failed_cases(), Vec::<String>::new());
    let not_strict: BTreeSet<String> =
        report.tests.iter().filter(|t| t.outcome == Outcome::NotStrict).map(|t| t.id.clone()).collect();
    for id in [
        "list::all_namespaces_ordered_by_id_globally",
        "list::limit_is_global_across_namespaces",
        "list::before_applies_across_namespaces",
    ] {
        assert!(not_strict.contains(id), "{id} is the SHOULD rule it breaks: {not_strict:?}");
    }
    assert!(report.tests.iter().filter(|t| t.outcome == Outcome::NotStrict).all(|t| t.strength == Strength::Should));
    assert_eq!(report.conformance_level, Level::Full, "{:#?}", report.results);
    assert_ne!(report.strict_level(), Level::Full);
}

/// A saver that stores only what each put carries (LangGraph's `SqliteSaver`): a channel
/// kept at an unchanged version without its value reads as absent. LangGraph's runtime
/// carries every value, so only the SHOULD cases about kept channels notice (not strict);
/// every other case carries the values its rule does not depend on.
#[test]
fn a_saver_storing_only_carried_values_fails_only_kept_channel_cases() {
    let make = || (conformance_selftest::mutant("uncarried_channels_vanish").expect("in the catalog").make)();
    let report = validate(&saver("carried-values-only", make, None));
    assert_eq!(report.failed_cases(), Vec::<String>::new());
    assert!(report.not_strict_count() >= 8, "the kept-channel cases notice: {:?}", report.not_strict_cases());
    assert_eq!(report.conformance_level, Level::Full, "{:#?}", report.results);
}
