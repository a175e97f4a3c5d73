//! The kit's one list of reference backends: [`Backend`], parsed by clap (`ValueEnum`) and
//! turned into its [`Registration`]. `cargo xtask conformance`, `fuzz`, `replay` and `bench`
//! (and the `conformance-bench` binary) all choose their backend from it.
//!
//! Adding a persistent backend costs its `Storage` impl (in its own crate, behind its `kit`
//! feature, `conformance_core::Storage`), its dependency line in this crate's `Cargo.toml`
//! and one line in the `backends!` list below (CONTRIBUTING.md, "What an addition costs").
//!
//! It is also the front ends' one way to a backend crate: the bridge ([`bridge`]) and what
//! they need of PostgreSQL beyond a registration ([`postgres`]). `cli` and `xtask` depend
//! on no backend crate but this one (`xtask/tests/tidy.rs`).

use std::path::Path;

use conformance_core::Registration;

/// The bridge to savers in other languages, the `python:*` and `js:*` backends
/// (docs/bridge-protocol.md): the `checkpoint-bridge` crate, as the front ends reach it.
pub use checkpoint_bridge as bridge;

/// What the front ends need of PostgreSQL beyond a backend's registration: the URL's
/// variable (`$CHECKPOINT_POSTGRES_URL`), the checks of a URL the user gave, the
/// throwaway server of a run without one, and the drop of a bridged saver's schemas on an
/// interrupt.
pub mod postgres {
    pub use checkpoint_postgres::{check_reachable, check_url, drop_schemas_now, test_server, URL_ENV};
}

/// What a backend's registration may need from the front end that runs it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Needs<'a> {
    /// The PostgreSQL server's URL (`postgres://…`), for a backend declared `postgres`;
    /// the front end resolves it (`--postgres-url`, `$CHECKPOINT_POSTGRES_URL` or a
    /// throwaway server) before asking for the registration.
    pub postgres_url: Option<&'a str>,
    /// `--sqlite-path`: the `sqlite` backend's cases run on database files beside this path
    /// instead of in the temporary directory (`checkpoint_sqlite::registration_at`); the
    /// other backends refuse it.
    pub sqlite_path: Option<&'a Path>,
}

/// The error of [`Backend::registration`]: the backend needs something the front end did
/// not give, or cannot use what it gave (the message names it, as the option it came
/// from: `--sqlite-path /x: …`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NeedError(pub String);

impl std::fmt::Display for NeedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NeedError {}

impl Needs<'_> {
    /// The PostgreSQL URL, or the error naming the backend that needs it.
    fn postgres(&self, backend: &str) -> Result<&str, NeedError> {
        self.postgres_url.ok_or_else(|| NeedError(format!("--backend {backend} needs a PostgreSQL server URL")))
    }

    /// The `sqlite` backend's registration: beside [`Needs::sqlite_path`] when given, else
    /// in the temporary directory.
    fn sqlite(&self) -> Result<Registration, NeedError> {
        match self.sqlite_path {
            None => Ok(checkpoint_sqlite::registration()),
            Some(path) => checkpoint_sqlite::registration_at(path)
                .map_err(|e| NeedError(format!("--sqlite-path {}: {}", path.display(), e.display_chain()))),
        }
    }
}

macro_rules! backends {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal, postgres: $pg:literal, |$needs:ident| $make:expr; )*) => {
        /// A reference backend of the kit. Parsed by clap from its name (`memory`, `sqlite`,
        /// `postgres`); [`Backend::registration`] builds its registration.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, clap::ValueEnum)]
        pub enum Backend {
            $( $(#[$doc])* #[value(name = $name)] $variant, )*
        }

        impl Backend {
            /// Every backend, in the list's order.
            pub const ALL: &'static [Backend] = &[$(Backend::$variant),*];

            /// The backend's name on the command line and in reports (`memory`, …).
            pub fn name(self) -> &'static str {
                match self { $(Backend::$variant => $name),* }
            }

            /// Whether its registration needs [`Needs::postgres_url`].
            pub fn needs_postgres(self) -> bool {
                match self { $(Backend::$variant => $pg),* }
            }

            /// The backend's registration (`Registration::persistent` over its `Storage`,
            /// or the memory saver's own).
            ///
            /// # Errors
            /// [`NeedError`] when it needs a PostgreSQL URL and `needs` has none.
            pub fn registration(self, needs: Needs<'_>) -> Result<Registration, NeedError> {
                match self { $(Backend::$variant => { let $needs = needs; let _ = &$needs; Ok($make) }),* }
            }
        }
    };
}

backends! {
    /// In-process, nothing persisted (`checkpoint_memory`).
    Memory = "memory", postgres: false, |n| checkpoint_memory::registration();
    /// A fresh database file per case, in the temporary directory or beside the path of
    /// `--sqlite-path` (`checkpoint_sqlite`).
    Sqlite = "sqlite", postgres: false, |n| n.sqlite()?;
    /// A schema per case on the PostgreSQL server of `--postgres-url` or
    /// `$CHECKPOINT_POSTGRES_URL` (`checkpoint_postgres`).
    Postgres = "postgres", postgres: true, |n| checkpoint_postgres::registration(n.postgres("postgres")?);
}

impl Backend {
    /// The names of [`Backend::ALL`], comma-separated (`memory, sqlite, postgres`).
    pub fn names() -> String {
        Self::ALL.iter().map(|b| b.name()).collect::<Vec<_>>().join(", ")
    }
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    #[test]
    fn every_backend_parses_from_its_name_and_builds_its_registration() {
        assert_eq!(Backend::names(), "memory, sqlite, postgres");
        for b in Backend::ALL {
            assert_eq!(Backend::from_str(b.name(), false), Ok(*b));
            let needs =
                Needs { postgres_url: b.needs_postgres().then_some("postgres://u@127.0.0.1:1/db"), ..Needs::default() };
            assert_eq!(b.registration(needs).map(|r| r.name().to_owned()).ok(), Some(b.name().to_owned()));
        }
        assert!(Backend::from_str("oracle", false).is_err());
        let missing = Backend::Postgres.registration(Needs::default()).err().map(|e| e.to_string());
        assert_eq!(missing.as_deref(), Some("--backend postgres needs a PostgreSQL server URL"));
    }
}
