//! `list` (CONTRACT §2 list).

use conformance_core::Capability;

/// The cases of this module.
pub fn cases() -> Vec<crate::SpecCase> {
    crate::spec_cases!(Capability::List => [])
}
