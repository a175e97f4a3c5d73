//! The reference SQLite checkpointer (placeholder; see issue 2).
