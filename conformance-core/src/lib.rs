//! # conformance-core
//!
//! The machinery that checks a LangGraph-style checkpointer against its contract:
//! registration, capability detection, the runner and the reports. The contract itself
//! (the types, [`CheckpointSaver`], [`CheckpointError`], [`Capability`], the JSON codec)
//! lives in the `checkpoint-contract` crate and is re-exported here under the same paths
//! (`conformance_core::CheckpointSaver`, `conformance_core::types::Checkpoint`,
//! `conformance_core::json::to_json`, ...). The tests themselves live in
//! `conformance-spec`; this crate knows no test and no backend, and depends on no native
//! crate (libc's bindings only, for `kill(pid, 0)` in [`leftovers`]).
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
//! same storage; the same reopen enables the two-instance case of `concurrency`. The crash
//! test of `durability` also needs to open the storage from another process: it
//! re-executes the test binary as a child that writes to the storage and is killed with
//! SIGKILL, handing it the case's location (a file path, a URL with a schema name). A
//! [`Storage`] impl registered with [`Registration::persistent`] gives all of it from one
//! declaration (create a location, open it, destroy it), and the front end (the
//! `checkpointer_test!` main, `cargo xtask conformance`, or a `main` that calls `validate`)
//! calls `conformance_spec::child_main_if_requested` first thing in `main`. A storage that
//! reaches less far says so with [`Storage::reach`] ([`Reach::ThisProcess`]: reopened in
//! this process only, whose crash case fails saying what is missing;
//! [`Reach::FirstInstance`]: no reopen). An in-memory saver registered with
//! [`Registration::new`] has no reopen and `durability` is reported as not implemented.
//!
//! Cases can report facts (the number of kills, the seed) with [`CaseEnv::fact`];
//! they appear in [`CaseResult::facts`] and [`Report::facts`] as `capability.key`.

#![warn(missing_docs)]

mod call;
mod case;
pub mod clusters;
mod detect;
mod isolation;
pub mod leftovers;
mod omitted;
pub mod output_file;
pub mod process_group;
mod reply;
mod saver_call;
pub use run::progress;
mod registration;
pub mod render;
pub mod report;
pub mod run;
pub mod session;
mod storage;
mod strength;
mod traced;
mod wire_args;

/// The contract, re-exported whole: the modules [`types`] and [`json`] and every item at
/// the crate root, so each `conformance_core::…` path of a contract item keeps working.
pub use checkpoint_contract::{
    error_chain, json, types, BoxError, Capability, CapabilityKind, CheckpointError, CheckpointSaver, CodecError,
    UnknownCapability,
};

pub use call::{Call, PutHead, WritesHead};
pub use case::{Budget, CaseEnv, CaseFn, CaseFuture, CaseInstance, Failure, SpecCase};
pub use isolation::{panic_message, Abort};
pub use omitted::Omitted;
pub use progress::Progress;
pub use registration::{CleanupFn, Fixture, Registration, ReopenFn, DEFAULT_TIMEOUT};
pub use reply::{ReadReply, Reply};
pub use report::{
    CapabilityResult, CapabilityStatus, CaseResult, FuzzDivergence, FuzzSection, Level, Outcome, Repeats, Report,
};
pub use run::{AfterCases, Detection, Planned, RunOptions};
pub use saver_call::{Forward, Invocation, Put, PutWrites, SaverCall, METHODS};
pub use session::{Knowledge, Session, Start};
pub use storage::{Reach, Storage};
pub use strength::{lack_reason, Feature, Strength, LACKS_PREFIX};
pub use traced::CallNote;
pub use types::*;
pub use wire_args::WireArgs;

/// Re-exported so savers can write `#[conformance_core::async_trait]`.
pub use checkpoint_contract::async_trait;
