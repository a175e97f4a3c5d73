//! # checkpoint-contract
//!
//! The contract of a LangGraph-style checkpointer (docs/contract.md) as Rust types and an
//! async trait: what a saver implements and depends on, and nothing of the kit that checks
//! it. Its dependencies are serde, serde_json, async-trait, thiserror and base64 (the JSON
//! codec's envelope).
//!
//! - [`types`]: `CheckpointConfig`, `Checkpoint`, `TypedValue`, `ChannelVersion`,
//!   `PendingWrite`, `CheckpointTuple`, `ListOptions`, `PruneStrategy`,
//!   `DeltaChannelHistory`, the special channels and their write index, and the metadata
//!   filter rule (CONTRACT §1, §2 list).
//! - [`CheckpointSaver`]: every method of CONTRACT §2 and §3; each defaults to
//!   [`CheckpointError::Unsupported`].
//! - [`CheckpointError`]: the typed error of every call (CONTRACT §4).
//! - [`Capability`]: the units the kit detects and scores (CONTRACT §5).
//! - [`json`]: the lossless JSON form of the types.
//!
//! The kit (`conformance-core`, `conformance-spec`) re-exports all of it, so
//! `conformance_core::CheckpointSaver` and `checkpoint_contract::CheckpointSaver` are the
//! same trait. A saver depends on this crate and takes the kit as a dev-dependency:
//!
//! ```toml
//! [dependencies]
//! checkpoint-contract = "0.1"
//!
//! [dev-dependencies]
//! conformance-spec = "0.1"
//! ```

#![warn(missing_docs)]

mod capability;
mod error;
pub mod json;
mod saver;
pub mod types;

pub use capability::{Capability, CapabilityKind, UnknownCapability};
pub use error::{error_chain, BoxError, CheckpointError};
pub use json::CodecError;
pub use saver::CheckpointSaver;
pub use types::*;

/// Re-exported so savers can write `#[checkpoint_contract::async_trait]`.
pub use async_trait::async_trait;
