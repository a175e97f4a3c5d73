//! Capabilities: the units the kit detects, runs and scores (CONTRACT §5).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A capability, named as in the upstream Python kit (`put`, `put_writes`, ...).
///
/// The declaration order is the run order and the report order within each section.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Capability {
    /// Base: `put`.
    Put,
    /// Base: `put_writes`.
    PutWrites,
    /// Base: `get_tuple`.
    GetTuple,
    /// Base: `list`.
    List,
    /// Base: `delete_thread`.
    DeleteThread,
    /// Extended: `delete_for_runs`.
    DeleteForRuns,
    /// Extended: `copy_thread`.
    CopyThread,
    /// Extended: `prune`.
    Prune,
    /// Extended: `delta_channel_history`.
    DeltaChannelHistory,
    /// Extended property (CONTRACT §4): concurrent calls behave as if sequential.
    Concurrency,
    /// Extended property (CONTRACT §4): acknowledged data survives a crash.
    Durability,
    /// Extended: recorded LangGraph traffic (traces/) replays with the results the
    /// contract gives (CONTRACT §2 on real call sequences).
    Traces,
}

/// Whether a capability is required for a conformance level above BASE.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CapabilityKind {
    /// One of the five base capabilities.
    Base,
    /// An extended method or property.
    Extended,
}

impl Capability {
    /// Every capability, in run order.
    pub const ALL: [Capability; 12] = [
        Self::Put,
        Self::PutWrites,
        Self::GetTuple,
        Self::List,
        Self::DeleteThread,
        Self::DeleteForRuns,
        Self::CopyThread,
        Self::Prune,
        Self::DeltaChannelHistory,
        Self::Concurrency,
        Self::Durability,
        Self::Traces,
    ];

    /// The five base capabilities.
    pub const BASE: [Capability; 5] = [Self::Put, Self::PutWrites, Self::GetTuple, Self::List, Self::DeleteThread];

    /// The upstream name (`put_writes`, `delta_channel_history`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Self::Put => "put",
            Self::PutWrites => "put_writes",
            Self::GetTuple => "get_tuple",
            Self::List => "list",
            Self::DeleteThread => "delete_thread",
            Self::DeleteForRuns => "delete_for_runs",
            Self::CopyThread => "copy_thread",
            Self::Prune => "prune",
            Self::DeltaChannelHistory => "delta_channel_history",
            Self::Concurrency => "concurrency",
            Self::Durability => "durability",
            Self::Traces => "traces",
        }
    }

    /// Base or extended.
    pub fn kind(self) -> CapabilityKind {
        if Self::BASE.contains(&self) {
            CapabilityKind::Base
        } else {
            CapabilityKind::Extended
        }
    }

    /// True for the five base capabilities.
    pub fn is_base(self) -> bool {
        self.kind() == CapabilityKind::Base
    }

    /// The valid names, comma-separated, for error messages.
    pub fn valid_names() -> String {
        Self::ALL.iter().map(|c| c.name()).collect::<Vec<_>>().join(", ")
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown capability name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown capability `{name}`; valid capabilities are: {valid}", valid = Capability::valid_names())]
pub struct UnknownCapability {
    /// The name that was given.
    pub name: String,
}

impl FromStr for Capability {
    type Err = UnknownCapability;

    /// Parses an upstream name, trimming spaces.
    ///
    /// # Errors
    /// [`UnknownCapability`], whose message lists the valid names.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        Self::ALL.iter().copied().find(|c| c.name() == s).ok_or_else(|| UnknownCapability { name: s.to_owned() })
    }
}
