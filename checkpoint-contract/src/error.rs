//! The typed error of every saver call (CONTRACT §4 "Errors, not panics").

use crate::Capability;

/// A boxed error cause, `Send + Sync` so it crosses tasks and threads.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// What a saver call can fail with.
///
/// Every input the types allow gets `Ok` or one of these; a failed call leaves nothing
/// half-written (CONTRACT §4).
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// The config is unusable: an empty `thread_id`, or no `checkpoint_id` where the
    /// method needs one (CONTRACT §1, §2 put_writes).
    #[error("invalid config: {0}")]
    InvalidConfig(String),
    /// A value the saver cannot store as given (e.g. a NUL character for a database that
    /// forbids it); the message names the key. Nothing was stored (CONTRACT §1 Metadata).
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// The saver does not implement this capability's method; this is how the kit
    /// detects capabilities (CONTRACT §3, §5).
    #[error("not supported: {0}")]
    Unsupported(Capability),
    /// The storage failed; `message` says what the saver was doing.
    #[error("storage error: {message}")]
    Storage {
        /// What the saver was doing.
        message: String,
        /// The underlying error.
        #[source]
        source: Option<BoxError>,
    },
}

impl CheckpointError {
    /// A storage error with a cause.
    pub fn storage(message: impl Into<String>, source: impl Into<BoxError>) -> Self {
        Self::Storage { message: message.into(), source: Some(source.into()) }
    }

    /// A storage error without a cause.
    pub fn storage_msg(message: impl Into<String>) -> Self {
        Self::Storage { message: message.into(), source: None }
    }

    /// The error and its chain of causes on one line, `a: b: c`.
    pub fn display_chain(&self) -> String {
        let mut out = self.to_string();
        let mut cur: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(self);
        while let Some(e) = cur {
            out.push_str(": ");
            out.push_str(&e.to_string());
            cur = e.source();
        }
        out
    }

    /// A short name of the variant, for messages (`InvalidConfig`, `Storage`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            Self::InvalidConfig(_) => "InvalidConfig",
            Self::InvalidInput(_) => "InvalidInput",
            Self::Unsupported(_) => "Unsupported",
            Self::Storage { .. } => "Storage",
        }
    }
}

/// `e` and its causes on one line, `a: b: c`, a cause left out when the text before already
/// holds it (tokio-postgres's "db error" says nothing without its cause, the server's
/// message).
pub fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let part = c.to_string();
        if !text.contains(&part) {
            text = format!("{text}: {part}");
        }
        cause = c.source();
    }
    text.replace('\n', " ")
}
