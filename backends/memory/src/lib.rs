//! The reference in-memory checkpointer (placeholder; see issue 2).
