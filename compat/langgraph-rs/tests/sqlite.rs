//! The conformance catalog against `langgraph-rs-sqlite` (see docs/compat.md).
conformance_spec::checkpointer_test!(compat_langgraph_rs::sqlite::registration());
