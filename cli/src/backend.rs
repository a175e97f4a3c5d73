//! What the front ends that choose a reference backend (`conformance_backends::Backend`:
//! conformance, fuzz, replay, bench) share beyond the list itself: the PostgreSQL server a
//! postgres backend runs on.

use std::process::ExitCode;

use conformance_backends::postgres::{self, test_server::TestServer};

/// How long the check that a given server can be reached waits for it.
const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// The PostgreSQL server's URL: `given` (`--postgres-url`), else a non-empty
/// `$CHECKPOINT_POSTGRES_URL` (either connected to once first: a server that cannot be
/// reached is a usage error, exit 2, printed), else a throwaway server started for this run on 127.0.0.1
/// (kept in `server`; dropping it stops and removes it). A started server's URL is also put
/// in `$CHECKPOINT_POSTGRES_URL`, so that a child this binary re-executes (the durability
/// crash test) or starts (the bench) uses it rather than starting its own; call this while
/// the process is still single-threaded.
///
/// # Errors
/// The exit code to return when the given server cannot be reached or no server could be
/// started (the reason is printed).
pub fn postgres_url(given: Option<String>, server: &mut Option<TestServer>) -> Result<String, ExitCode> {
    let from_env = std::env::var(postgres::URL_ENV).ok().filter(|u| !u.is_empty());
    let source = if given.is_some() { "--postgres-url".to_owned() } else { format!("${}", postgres::URL_ENV) };
    if let Some(url) = given.or(from_env) {
        // Before any case runs: an unreachable server is one line, not every capability
        // "not implemented" (issue 13).
        if let Err(e) = postgres::check_reachable(&url, CONNECT_TIMEOUT) {
            eprintln!("error: {source}: {e}");
            return Err(ExitCode::from(crate::USAGE));
        }
        return Ok(url);
    }
    eprintln!("no --postgres-url and no {}: starting a throwaway PostgreSQL server", postgres::URL_ENV);
    match TestServer::start() {
        Ok(s) => {
            // A signal during the start: the handler stops this server; nothing more runs.
            crate::interrupt::stop_if_interrupted();
            std::env::set_var(postgres::URL_ENV, s.url());
            eprintln!("throwaway PostgreSQL server in {} ({})", s.dir().display(), s.url());
            let url = s.url().to_owned();
            *server = Some(s);
            Ok(url)
        }
        Err(e) => {
            // A start cut short by a signal is the interrupt's to report (exit 128 + signal).
            crate::interrupt::stop_if_interrupted();
            eprintln!("error: {e}");
            Err(ExitCode::FAILURE)
        }
    }
}

/// While the guard lives, a SIGINT/SIGTERM drops the PostgreSQL schemas that this run's
/// bridge children made on the server at `url` (`cp_bridge_<run token>_...`,
/// docs/bridge-protocol.md "Storage"): a child killed with the run never drops its case's
/// schema, and a schema of a given server outlives the run (issue 13). Holds for
/// `python:postgres*` and `js:postgres`, whose storage names its schemas with the token.
pub fn drop_bridge_schemas_on_interrupt(url: &str) -> conformance_core::leftovers::InterruptGuard {
    let (url, prefix) = (url.to_owned(), conformance_backends::bridge::protocol::schema_prefix());
    conformance_core::leftovers::on_interrupt(move || postgres::drop_schemas_now(&url, &prefix))
}
