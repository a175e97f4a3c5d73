//! The plan of each case (run it, or why not) and the result of a case not run: one place
//! builds "not run" results for every front end (issue 39).

use std::collections::{BTreeMap, BTreeSet};

use crate::report::{CaseResult, Outcome};
use crate::{Capability, Detection, Registration, SpecCase};

/// What the plan says about a case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Planned {
    /// Run it.
    Run,
    /// Its capability answered `Unsupported`.
    NotImplemented,
    /// Its capability was skipped by the registration, with this reason.
    Skipped(String),
    /// Its capability is not in the selection.
    NotSelected,
    /// Its setup needs this capability ([`SpecCase::needs`]), which is not implemented: the
    /// case is not run ([`Outcome::NotRun`]), not failed on a rule it never checked.
    Needs(Capability),
    /// Its setup needs this capability, which the registration skipped with this reason
    /// (`.skip(Capability::PutWrites, "known broken")`): the case is not run
    /// ([`Outcome::NotRun`], "needs put_writes, skipped: known broken") rather than failed
    /// through a capability the registration declared broken.
    NeedsSkipped(Capability, String),
}

impl Planned {
    /// The outcome of a case planned so when it is not run (everything but
    /// [`Planned::Run`]), the same in every front end: the libtest trial fails for
    /// [`Outcome::Failed`], is ignored for the others.
    ///
    /// A case of a *base* capability that is not implemented is failed (CONTRACT §5: the
    /// level cannot be above BASE without it, and a green `cargo test` must not hide it);
    /// of an extended one, not implemented; a case whose setup needs a missing capability,
    /// not run; a skipped or unselected one, skipped.
    pub fn outcome(&self, capability: Capability) -> Outcome {
        match self {
            Self::NotImplemented if capability.is_base() => Outcome::Failed,
            Self::NotImplemented => Outcome::NotImplemented,
            Self::Needs(_) | Self::NeedsSkipped(..) => Outcome::NotRun,
            Self::Skipped(_) | Self::NotSelected | Self::Run => Outcome::Skipped,
        }
    }
}

/// The plan for one case given the detection, the registration's skips and the selection.
pub fn plan_case(
    case: &SpecCase,
    registration: &Registration,
    detection: &Detection,
    selection: Option<&BTreeSet<Capability>>,
) -> Planned {
    if selection.is_some_and(|s| !s.contains(&case.capability)) {
        return Planned::NotSelected;
    }
    if let Some(reason) = registration.skips.get(&case.capability) {
        return Planned::Skipped(reason.clone());
    }
    if !detection.is_detected(case.capability) {
        return Planned::NotImplemented;
    }
    plan_needs(case, registration, |c| detection.is_detected(c))
}

/// The plan of a case whose own capability runs, by its needs ([`SpecCase::needs`]): the
/// first need skipped by the registration ([`Planned::NeedsSkipped`]) or not `implemented`
/// ([`Planned::Needs`]), else [`Planned::Run`].
pub(crate) fn plan_needs(
    case: &SpecCase,
    registration: &Registration,
    implemented: impl Fn(Capability) -> bool,
) -> Planned {
    let skipped = |c: Capability| registration.skips.get(&c);
    match case.missing_need(|c| implemented(c) && skipped(c).is_none()) {
        Some(need) => match skipped(need) {
            Some(reason) => Planned::NeedsSkipped(need, reason.clone()),
            None => Planned::Needs(need),
        },
        None => Planned::Run,
    }
}

/// Why `capability` counts as not implemented: `durability` when the fixture cannot open a
/// second instance on its storage (it has no probe), `concurrency` and `traces` when `put`
/// is not implemented,
/// any other capability when its probe answered `Unsupported` (CONTRACT §5).
pub fn not_implemented_reason(capability: Capability) -> String {
    match capability {
        Capability::Durability => {
            "durability is not implemented: no second instance can be opened on the case's storage (in Rust, a \
             Registration::persistent on a Storage whose reach is at least Reach::ThisProcess opens one; through \
             the bridge, a child whose open answers reopen: true, docs/bridge-protocol.md)"
                .to_owned()
        }
        Capability::Concurrency | Capability::Traces => {
            format!("{capability} is not implemented: put is not implemented")
        }
        cap => format!("{cap} is not implemented: its probe answered Unsupported"),
    }
}

/// Why a case planned `planned` is not run, as its result's message: the not-implemented
/// reason (for a base capability followed by "every base capability is required ...
/// (CONTRACT §5)"), "not run: needs put_writes, not implemented", "not run: needs
/// put_writes, skipped: {reason}", the skip reason or "not selected".
pub fn not_run_reason(case: &SpecCase, planned: &Planned) -> String {
    match planned {
        Planned::NotImplemented if case.capability.is_base() => format!(
            "{}; every base capability is required for a conformance level above BASE (CONTRACT §5)",
            not_implemented_reason(case.capability)
        ),
        Planned::NotImplemented => not_implemented_reason(case.capability),
        Planned::Needs(need) => format!("{NEEDS_PREFIX} {need}, not implemented"),
        Planned::NeedsSkipped(need, reason) => format!("{NEEDS_PREFIX} {need}, skipped: {reason}"),
        Planned::Skipped(r) => r.clone(),
        Planned::NotSelected | Planned::Run => "not selected".to_owned(),
    }
}

/// The start of the message of a case not run because its setup needs a capability that
/// is not implemented or skipped (`not run: needs put_writes, not implemented`, `not run:
/// needs put_writes, skipped: known broken`).
pub const NEEDS_PREFIX: &str = "not run: needs";

/// A result for a case that was not run, with [`Planned::outcome`] and
/// [`not_run_reason`].
pub fn not_run(case: &SpecCase, planned: &Planned) -> CaseResult {
    let message = Some(not_run_reason(case, planned));
    result_of(case, planned.outcome(case.capability), message, 0.0)
}

/// The result of `case` with its outcome, message and wall time in milliseconds; no facts,
/// repeats or abort (the runner adds those it has). The one place a catalog case's result
/// is built, so each carries the case's id, strength and rule ids.
pub(crate) fn result_of(case: &SpecCase, outcome: Outcome, message: Option<String>, duration_ms: f64) -> CaseResult {
    CaseResult {
        id: case.id(),
        capability: case.capability,
        name: case.name.to_owned(),
        outcome,
        strength: case.strength,
        rules: case.rules.iter().map(|r| (*r).to_owned()).collect(),
        message,
        duration_ms,
        facts: BTreeMap::new(),
        repeats: None,
        abort: None,
        disturbed: None,
        rerun_alone: None,
    }
}
