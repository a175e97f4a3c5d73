//! # conformance-core
//!
//! The contract of a LangGraph-style checkpointer as Rust types and an async trait, and the
//! machinery that checks a saver against it: registration, capability detection, the
//! runner and the reports. The tests themselves live in `conformance-spec`; this crate
//! knows no test and no backend, and depends on no native crate.
//!
//! - [`types`]: `CheckpointConfig`, `Checkpoint`, `TypedValue`, `ChannelVersion`,
//!   `PendingWrite`, `CheckpointTuple`, `ListOptions`, ... (shared/CONTRACT.md §1).
//! - [`CheckpointSaver`]: every method of CONTRACT §2 and §3; each defaults to
//!   [`CheckpointError::Unsupported`].
//! - [`Registration`] and [`Fixture`]: a factory per case, cleanup, lifespan, skips, timeout.
//! - [`run`]: detect -> plan -> execute -> [`Report`]; [`render`]: the terminal report.

#![warn(missing_docs)]

mod capability;
mod case;
mod error;
pub mod progress;
mod registration;
pub mod render;
pub mod report;
pub mod run;
mod saver;
pub mod types;

pub use capability::{Capability, CapabilityKind, UnknownCapability};
pub use case::{CaseFn, CaseFuture, Failure, SpecCase, TestContext};
pub use error::{BoxError, CheckpointError};
pub use progress::Progress;
pub use registration::{CleanupFn, Fixture, Registration, ReopenFn, DEFAULT_TIMEOUT};
pub use report::{CapabilityResult, CapabilityStatus, CaseResult, Level, Outcome, Report};
pub use run::{Detection, Planned, RunOptions};
pub use saver::CheckpointSaver;
pub use types::*;

/// Re-exported so savers can write `#[conformance_core::async_trait]`.
pub use async_trait::async_trait;
