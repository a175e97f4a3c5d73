//! `put_writes` (CONTRACT §2 put_writes).

use conformance_core::Capability;

/// The cases of this module.
pub fn cases() -> Vec<crate::SpecCase> {
    crate::spec_cases!(Capability::PutWrites => [])
}
