//! The registrations of the mutants: each case gets a fresh base saver ([`Base`]) wrapped
//! in a [`MutantSaver`] with a fresh bug, a way to open more instances on that storage
//! (for the two-instance and durability cases) and, for a base with a location, the
//! location and `open_at` the durability crash test needs.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use checkpoint_memory::MemorySaver;
use conformance_core::leftovers::{self, ScratchDir};
use conformance_core::{BoxError, CheckpointSaver, Fixture, Registration};

use crate::bug::{Bug, NoBug};
use crate::catalog::{make, Base, Mutant, MUTANTS};
use crate::wrapper::MutantSaver;

/// The per-case timeout of a mutant's run.
const TIMEOUT: Duration = Duration::from_secs(20);

/// A registration of `mutant`, named after it.
pub fn registration(mutant: &'static Mutant) -> Registration {
    registration_of(mutant.name, mutant.base, mutant.make)
}

/// The bug-free wrapper on `base`, named `<base>-shared`: the baseline every mutant of
/// that base is measured against (it must pass every case the mutants run).
pub fn reference(base: Base) -> Registration {
    registration_of(&format!("{}-shared", base.name()), base, make::<NoBug>)
}

/// The registration `name` of a [`MutantSaver`] on `base` with the bug `make` gives.
pub fn registration_of(name: &str, base: Base, make: fn() -> Arc<dyn Bug>) -> Registration {
    match base {
        Base::Memory => Registration::new(name, move || async move {
            let inner: Arc<dyn CheckpointSaver> = Arc::new(MemorySaver::new());
            let saver = Arc::new(MutantSaver::new(inner.clone(), make()));
            let first = saver.clone();
            Ok(Fixture::from_arc(saver).with_reopen(move || {
                let other = first.reopen(inner.clone());
                async move { Ok(other) }
            }))
        }),
        Base::Sqlite => Registration::new(name, move || async move {
            let dir = case_dir()?;
            let path = dir.path().join("checkpoints.sqlite");
            let location = path.to_str().ok_or_else(|| format!("{} is not valid UTF-8", path.display()))?.to_owned();
            let saver = Arc::new(MutantSaver::new(open_sqlite(&location).await?, make()));
            let (first, at) = (saver.clone(), location.clone());
            Ok(Fixture::from_arc(saver)
                .with_location(location)
                .with_reopen(move || {
                    let (first, at) = (first.clone(), at.clone());
                    async move { Ok(first.reopen(open_sqlite(&at).await?)) }
                })
                .with_cleanup(move || async move { dir.close().map_err(BoxError::from) }))
        })
        .open_at(move |location| async move {
            Ok(Fixture::new(MutantSaver::new(open_sqlite(&location).await?, make())))
        }),
    }
    .timeout(TIMEOUT)
}

/// The prefix of a SQLite mutant's per-case directory in the temporary directory.
const DIR_PREFIX: &str = "checkpoint-mutant-";

/// A fresh per-case directory `<temp dir>/checkpoint-mutant-<pid>-<n>`: removed by the case's
/// cleanup, and by the interrupt cleanup when `cargo xtask mutants` is stopped by a signal.
/// The first call of a process removes the directories of runs whose process is gone (a
/// SIGKILL), naming each on stderr (`conformance_core::leftovers`, the kit's one sweep).
fn case_dir() -> std::io::Result<ScratchDir> {
    leftovers::temp_scratch_dir(DIR_PREFIX)
}

/// The SQLite saver on the database file `location`, opened the way the backend's own
/// registration opens a location (in this process or a crash child).
async fn open_sqlite(location: &str) -> Result<Arc<dyn CheckpointSaver>, BoxError> {
    Ok(checkpoint_sqlite::registration().open_location(location).await?.saver().clone())
}

/// The registrations the durability crash test may ask a child process to open: every
/// mutant on a base with a location, and the reference on each such base.
pub fn crash_child_registrations() -> Vec<Registration> {
    let mutants = MUTANTS.iter().filter(|m| m.base.has_location()).map(registration);
    let references = [Base::Sqlite].into_iter().map(reference);
    mutants.chain(references).collect()
}

/// Runs the durability crash test's child when this process was started as one, for the
/// mutant registrations ([`crash_child_registrations`]); `None` in a normal run. Every
/// front end that runs the analysis ([`crate::analyze`]) calls it first thing in `main`,
/// and returns the exit code it gives:
///
/// ```no_run
/// fn main() -> std::process::ExitCode {
///     if let Some(code) = conformance_selftest::child_main_if_requested() {
///         return code;
///     }
///     let analysis = conformance_selftest::analyze(&Default::default());
///     print!("{}", analysis.render());
///     std::process::ExitCode::SUCCESS
/// }
/// ```
pub fn child_main_if_requested() -> Option<ExitCode> {
    conformance_spec::child_main_if_requested_among(&crash_child_registrations())
}
