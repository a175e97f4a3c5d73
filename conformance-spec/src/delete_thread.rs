//! `delete_thread` (CONTRACT §2 delete_thread).

use conformance_core::Capability;

/// The cases of this module.
pub fn cases() -> Vec<crate::SpecCase> {
    crate::spec_cases!(Capability::DeleteThread => [])
}
