//! The conformance catalog against `langgraph-rs-memory-sync` (see docs/compat.md).
conformance_spec::checkpointer_test!(compat_langgraph_rs::memory::registration_sync());
