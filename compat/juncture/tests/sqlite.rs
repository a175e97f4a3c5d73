//! The conformance catalog against `juncture-sqlite` (see docs/compat.md).
conformance_spec::checkpointer_test!(compat_juncture::registration());
