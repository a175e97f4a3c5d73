//! `get_tuple` (CONTRACT §2 get_tuple).

use conformance_core::Capability;

/// The cases of this module.
pub fn cases() -> Vec<crate::SpecCase> {
    crate::spec_cases!(Capability::GetTuple => [])
}
