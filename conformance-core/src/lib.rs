//! # conformance-core
//!
//! The contract of a LangGraph-style checkpointer as Rust types and an async trait, and the
//! machinery that checks a saver against it: registration, capability detection, the
//! runner and the reports. The tests themselves live in `conformance-spec`; this crate
//! knows no test and no backend, and depends on no native crate.
//!
//! - [`types`]: `CheckpointConfig`, `Checkpoint`, `TypedValue`, `ChannelVersion`,
//!   `PendingWrite`, `CheckpointTuple`, `ListOptions`, ... (docs/contract.md §1).
//! - [`CheckpointSaver`]: every method of CONTRACT §2 and §3; each defaults to
//!   [`CheckpointError::Unsupported`].
//! - [`Registration`] and [`Fixture`]: a factory per case, cleanup, lifespan, skips, timeout.
//! - [`run`]: detect -> plan -> execute -> [`Report`]; [`render`]: the terminal report.
//!
//! ## Enabling the durability checks (CONTRACT §4)
//!
//! `durability` is detected when the factory's fixture can open a second instance on the
//! same storage ([`Fixture::with_reopen`]); the same function enables the two-instance
//! case of `concurrency`. The crash test of `durability` also needs to open the storage
//! from another process: it re-executes the test binary as a child that writes to the
//! storage and is killed with SIGKILL. For that the fixture names its storage with an
//! opaque locator ([`Fixture::with_location`]: a file path, a URL with a schema name) and
//! the registration says how to open a locator ([`Registration::open_at`]); the front end
//! (the `checkpointer_test!` main, `cargo xtask conformance`, or a `main` that calls
//! `validate`) calls `conformance_spec::child_main_if_requested` first thing in `main`.
//! A [`Storage`] impl registered with [`Registration::persistent`] gives all three from
//! one declaration (create a location, open it, destroy it).
//! A persistent saver that gives all three gets the full `durability` capability; one that
//! gives only `with_reopen` gets a failing crash case whose message says what is missing.
//! An in-memory saver gives none of them and `durability` is reported as not implemented.
//!
//! Cases can report facts (the number of kills, the seed) with [`TestContext::fact`];
//! they appear in [`CaseResult::facts`] and [`Report::facts`] as `capability.key`.

#![warn(missing_docs)]

mod call;
mod capability;
mod case;
pub mod clusters;
mod detect;
mod error;
mod isolation;
pub mod json;
pub mod progress;
mod registration;
pub mod render;
pub mod report;
pub mod run;
mod saver;
pub mod session;
mod storage;
mod traced;
pub mod types;

pub use call::Call;
pub use capability::{Capability, CapabilityKind, UnknownCapability};
pub use case::{CaseFn, CaseFuture, Failure, SpecCase, TestContext};
pub use error::{BoxError, CheckpointError};
pub use isolation::Abort;
pub use json::CodecError;
pub use progress::Progress;
pub use registration::{CleanupFn, Fixture, Registration, ReopenFn, DEFAULT_TIMEOUT};
pub use report::{CapabilityResult, CapabilityStatus, CaseResult, Level, Outcome, Repeats, Report};
pub use run::{Detection, Planned, RunOptions};
pub use saver::CheckpointSaver;
pub use session::{Knowledge, Session, Start};
pub use storage::Storage;
pub use types::*;

/// Re-exported so savers can write `#[conformance_core::async_trait]`.
pub use async_trait::async_trait;
