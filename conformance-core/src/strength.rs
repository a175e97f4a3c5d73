//! How strongly the contract asks for a case's rule ([`Strength`]), and what a saver may
//! declare it cannot do ([`Feature`]): the two facts that decide whether a case that did not
//! pass costs a conformance level (CONTRACT §5 "Strength of a rule" and "Declared limits").

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The strength of the rule a case checks (CONTRACT §5 "Strength of a rule").
///
/// - `MUST`: LangGraph's runtime relies on it (resume, time travel, forks, interrupts,
///   subgraphs), or breaking it loses or mixes up state. A failed MUST case fails its
///   capability and so can cost the conformance level.
/// - `SHOULD`: stricter than LangGraph's own savers, recommended for the reason the
///   contract gives. A failed SHOULD case is [`crate::Outcome::NotStrict`] ("passed, not
///   strict"): counted apart, never a lower level, except under `--strict`, where the
///   level is computed on both ([`crate::Report::strict_level`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Strength {
    /// Required: the level is computed on these.
    #[default]
    #[serde(rename = "MUST")]
    Must,
    /// Recommended: a failure is "passed, not strict".
    #[serde(rename = "SHOULD")]
    Should,
}

impl Strength {
    /// `MUST` or `SHOULD`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Must => "MUST",
            Self::Should => "SHOULD",
        }
    }
}

impl fmt::Display for Strength {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Something a case assumes of the saver beyond its capabilities, which a saver may declare
/// it lacks (CONTRACT §5 "Declared limits"): through [`crate::Fixture::lacking`] for a Rust
/// saver, through the bridge handshake for a Python or JS one. A case that uses a feature
/// the saver declared it lacks is not run, with the declaration as the reason
/// ([`crate::Outcome::NotRun`]); a case that only compares data leaves the field out
/// instead (a pending write's `task_path`).
///
/// A declared limit is never a way out of a MUST rule: the cases that use one are SHOULD
/// cases, or MUST cases whose capability is then incomplete (not passed), so the report
/// says what was not checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Feature {
    /// Reads return each pending write's `task_path` (LangGraph's `PendingWrite` is
    /// `(task_id, channel, value)`, so no saver behind its API can).
    TaskPathOnReads,
    /// `get_next_version` takes LangGraph's padded string versions
    /// (`"{n:032}.{fraction}"`), not only the integers the saver itself produces.
    StringVersions,
    /// Checkpoints in namespaces other than the root (`child:1`), as subgraphs use.
    Namespaces,
    /// Numbers a JavaScript number cannot hold: integers beyond ±2^53 and floats with an
    /// integral value kept apart from integers (`1.0` is not `1`).
    WideNumbers,
    /// A checkpoint's `updated_channels` field (LangGraph JS's checkpoint format has none).
    UpdatedChannels,
    /// `put_writes` takes a `task_path` (a saver written for langgraph-checkpoint 2.x has
    /// four parameters, and LangGraph's runtime then passes none), so pending writes can be
    /// ordered by it.
    TaskPathOnWrites,
}

impl Feature {
    /// Every feature, in declaration order.
    pub const ALL: [Feature; 6] = [
        Self::TaskPathOnReads,
        Self::StringVersions,
        Self::Namespaces,
        Self::WideNumbers,
        Self::UpdatedChannels,
        Self::TaskPathOnWrites,
    ];

    /// The snake_case name (`task_path_on_reads`), as in the bridge handshake's `lacks` list.
    pub fn name(self) -> &'static str {
        match self {
            Self::TaskPathOnReads => "task_path_on_reads",
            Self::StringVersions => "string_versions",
            Self::Namespaces => "namespaces",
            Self::WideNumbers => "wide_numbers",
            Self::UpdatedChannels => "updated_channels",
            Self::TaskPathOnWrites => "task_path_on_writes",
        }
    }

    /// What a saver lacking the feature declared, as a report warning and the reason of the
    /// cases not run for it.
    pub fn lack(self) -> &'static str {
        match self {
            Self::TaskPathOnReads => {
                "its reads carry no task_path (as LangGraph's API, whose PendingWrite is (task_id, channel, \
                 value)): pending writes are compared without the field, their order still is"
            }
            Self::StringVersions => {
                "its get_next_version takes only the integer versions it produces, not LangGraph's padded \
                 string versions"
            }
            Self::Namespaces => "it stores the root namespace only (no subgraph namespaces such as child:1)",
            Self::WideNumbers => {
                "it holds numbers as JavaScript numbers: integers beyond 2^53 and floats with an integral value \
                 (1.0) are not given to it"
            }
            Self::UpdatedChannels => {
                "its checkpoint format has no updated_channels: checkpoints are compared without the field"
            }
            Self::TaskPathOnWrites => {
                "its put_writes takes no task_path (langgraph-checkpoint 2.x), so it cannot order pending writes by \
                 one"
            }
        }
    }
}

impl fmt::Display for Feature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Feature {
    type Err = String;

    /// A [`Feature::name`].
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL.into_iter().find(|f| f.name() == s).ok_or_else(|| {
            let valid: Vec<_> = Self::ALL.iter().map(|f| f.name()).collect();
            format!("unknown feature `{s}`; valid features are: {}", valid.join(", "))
        })
    }
}

/// The start of the message of a case not run because the saver declared it lacks a
/// feature the case uses: `not run: the saver declares that it stores the root namespace
/// only (...)`.
pub const LACKS_PREFIX: &str = "not run: the saver declares that";

/// The message of a case not run because the saver lacks `feature`.
pub fn lack_reason(feature: Feature) -> String {
    format!("{LACKS_PREFIX} {} (feature `{feature}`, CONTRACT §5 Declared limits)", feature.lack())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn features_parse_by_name_and_say_what_is_valid() {
        for f in Feature::ALL {
            assert_eq!(f.name().parse::<Feature>(), Ok(f));
            assert_eq!(serde_json::to_value(f).unwrap(), f.name());
        }
        let e = "paths".parse::<Feature>().unwrap_err();
        assert!(e.contains("task_path_on_reads") && e.contains("paths"), "{e}");
    }

    #[test]
    fn strength_serialises_as_the_contract_writes_it() {
        assert_eq!(serde_json::to_value(Strength::Must).unwrap(), "MUST");
        assert_eq!(serde_json::to_value(Strength::Should).unwrap(), "SHOULD");
        assert_eq!(Strength::default(), Strength::Must);
    }
}
