//! Config fields a call omits (CONTRACT §1 "Config"): how a case hands a saver a config
//! without a `thread_id` or without a `checkpoint_ns`, as LangGraph's API can.
//!
//! [`CheckpointConfig`](crate::CheckpointConfig) always has both, so a Rust saver sees an
//! omitted field as its empty value, which is what the contract makes of a missing one: no
//! namespace is the root `""`, no thread is the empty thread (refused). A saver behind the
//! bridge gets the config without the field (docs/bridge-protocol.md "Wire forms"), so a
//! JavaScript or Python saver is judged on what it does with a missing field: a saver that
//! spells a missing thread `"undefined"` and reads that thread, or files writes without a
//! namespace under a key no read looks up.
//!
//! The omission holds for the calls made inside [`Omitted::scope`], on that task.

use std::future::Future;

tokio::task_local! {
    static OMITTED: Omitted;
}

/// The config fields the calls inside [`Omitted::scope`] omit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Omitted {
    /// No `thread_id` (a Rust saver sees `""`).
    pub thread_id: bool,
    /// No `checkpoint_ns` (a Rust saver sees `""`, the root).
    pub checkpoint_ns: bool,
}

impl Omitted {
    /// Only the thread is omitted.
    pub const THREAD_ID: Self = Self { thread_id: true, checkpoint_ns: false };
    /// Only the namespace is omitted.
    pub const CHECKPOINT_NS: Self = Self { thread_id: false, checkpoint_ns: true };

    /// What the running call omits: nothing outside an [`Omitted::scope`].
    pub fn current() -> Self {
        OMITTED.try_with(|o| *o).unwrap_or_default()
    }

    /// Runs `f` with these fields omitted from every config its calls pass (the config's own
    /// value of an omitted field should be `""`, what a Rust saver gets).
    pub async fn scope<F: Future>(self, f: F) -> F::Output {
        OMITTED.scope(self, f).await
    }
}

#[cfg(test)]
mod tests {
    use super::Omitted;

    #[test]
    fn only_inside_the_scope() {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        assert_eq!(Omitted::current(), Omitted::default());
        let inside = rt.block_on(Omitted::THREAD_ID.scope(async { Omitted::current() }));
        assert_eq!(inside, Omitted::THREAD_ID);
        assert_eq!(Omitted::current(), Omitted::default());
    }
}
