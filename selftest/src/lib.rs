//! # conformance-selftest
//!
//! The kit proves it can fail. A conformance test that cannot fail certifies bugs, so this
//! crate holds a catalog of mutant savers ([`MUTANTS`]): each wraps the reference
//! [`checkpoint_memory::MemorySaver`] through the public
//! [`CheckpointSaver`](conformance_core::CheckpointSaver) trait and breaks exactly one rule
//! of shared/CONTRACT.md, with a name, a one-line description of its bug, the capabilities
//! it breaks and what it covers: a CONTRACT rule ([`CONTRACT_RULES`]), a bug scenario
//! S01-S20 ([`SCENARIOS`]) or a gap of the upstream suite ([`GAPS`]).
//!
//! [`analyze`] runs the spec against the memory saver and every mutant through the same
//! path as every front end (`conformance_core::run::run`), and returns the mutation table:
//! which cases caught which mutant, the kill rate, and the spec cases no mutant ever makes
//! fail (each must be explained in [`NEVER_FAILING_EXPLAINED`]); `cargo xtask mutants`
//! prints it ([`Analysis::render`]). `cargo test -p
//! conformance-selftest` asserts that the memory saver passes every case, that every
//! mutant is caught by a case of the capability it declares, and that no never-failing
//! case is unexplained.
//!
//! ```no_run
//! let analysis = conformance_selftest::analyze(&Default::default());
//! println!("{}", analysis.render());
//! assert!(analysis.survivors().is_empty());
//! ```

#![warn(missing_docs)]

pub mod analysis;
pub mod catalog;
mod saver;

pub use analysis::{
    analyze, analyze_cases, registration, registration_of, Analysis, AnalysisOptions, MutantResult, NeverFailing,
};
pub use catalog::{
    mutant, Cover, Mutant, Rule, CASES_NOT_RUN_ON_MUTANTS, CONTRACT_RULES, GAPS, MUTANTS, NEVER_FAILING_EXPLAINED,
    RULES_WITHOUT_MUTANT, SCENARIOS, SCENARIOS_WITHOUT_MUTANT,
};
pub use saver::{Bug, MutantSaver};
