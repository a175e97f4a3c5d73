//! # conformance-selftest
//!
//! The kit proves it can fail. A conformance test that cannot fail certifies bugs, so this
//! crate holds a catalog of mutant savers ([`MUTANTS`]): each wraps a reference saver (the
//! [`checkpoint_memory::MemorySaver`], or the SQLite saver for a mutant the durability crash
//! test must kill) in a [`MutantSaver`] through the public
//! [`CheckpointSaver`](conformance_core::CheckpointSaver) trait and breaks exactly one rule
//! of docs/contract.md, with a name, a one-line description of its bug, the capabilities it
//! breaks and what it covers: a CONTRACT rule ([`RULES`]), a bug scenario S01-S20
//! ([`SCENARIOS`]) or a gap of the upstream suite ([`GAPS`]).
//!
//! A mutant is a small struct implementing [`Bug`] (hooks on the input and output of each
//! call, plus one hook that replaces a call), in the module of the capability it breaks
//! (`src/mutants/`), and one line of that module's list.
//!
//! [`analyze`] runs the spec against the memory saver and every mutant through the same
//! path as every front end (`conformance_core::run::run`), and returns the mutation table:
//! which cases caught which mutant, the kill rate, and the spec cases no mutant ever makes
//! fail (each must be explained in [`NEVER_FAILING_EXPLAINED`]); `cargo xtask mutants`
//! prints it ([`Analysis::render`]). `cargo test -p conformance-selftest` asserts that the
//! reference savers pass every case, that every mutant is caught by a case of the
//! capability it declares, and that no never-failing case is unexplained.
//!
//! The durability crash test re-executes the running binary as a child process, so a front
//! end that runs the analysis calls [`child_main_if_requested`] first thing in `main`:
//!
//! ```no_run
//! fn main() -> std::process::ExitCode {
//!     if let Some(code) = conformance_selftest::child_main_if_requested() {
//!         return code;
//!     }
//!     let analysis = conformance_selftest::analyze(&Default::default());
//!     println!("{}", analysis.render());
//!     assert!(analysis.survivors().is_empty());
//!     std::process::ExitCode::SUCCESS
//! }
//! ```

#![warn(missing_docs)]

pub mod analysis;
mod bug;
pub mod catalog;
mod mutants;
mod registration;
pub mod rules_doc;
mod wrapper;

#[cfg(test)]
mod fuzz_tests;

pub use analysis::{analyze, analyze_cases, Analysis, AnalysisOptions, MutantResult, NeverFailing};
pub use bug::{Bug, Invocation, NoBug, Put, PutWrites, Reply};
pub use catalog::{
    make, mutant, untraced_mutants, Base, Cover, Mutant, Rule, CASES_NEEDING_A_LOCATION, GAPS, MUTANTS,
    NEVER_FAILING_EXPLAINED, RULES, SCENARIOS, SCENARIOS_WITHOUT_MUTANT, UNCHECKABLE,
};
pub use registration::{child_main_if_requested, crash_child_registrations, reference, registration, registration_of};
pub use wrapper::{Inner, MutantSaver};
