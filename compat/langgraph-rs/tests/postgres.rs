//! The conformance catalog against `langgraph-rs-postgres` (see docs/compat.md).
conformance_spec::checkpointer_test!(compat_langgraph_rs::postgres::registration());
