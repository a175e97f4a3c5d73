//! What the PostgreSQL test files share.

use std::io::Write;

/// The server of `CHECKPOINT_POSTGRES_URL`; `None` (saying so on stderr) when it is not
/// set, and a failure when `CHECKPOINT_POSTGRES_REQUIRED=1`.
pub fn url() -> Option<String> {
    match std::env::var("CHECKPOINT_POSTGRES_URL") {
        Ok(u) => Some(u),
        Err(_) => {
            assert!(
                std::env::var("CHECKPOINT_POSTGRES_REQUIRED").map_or(true, |v| v != "1"),
                "CHECKPOINT_POSTGRES_URL is not set and CHECKPOINT_POSTGRES_REQUIRED=1"
            );
            let _ = writeln!(std::io::stderr(), "SKIPPED: CHECKPOINT_POSTGRES_URL is not set");
            None
        }
    }
}
