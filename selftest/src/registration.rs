//! The registrations of the mutants: each case gets a fresh base saver ([`Base`]) wrapped
//! in a [`MutantSaver`] with a fresh bug, on a [`Storage`] that opens more instances on
//! that storage (for the two-instance and durability cases) and, for a base with a
//! location, opens the location in the durability crash test's child process.

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use checkpoint_memory::MemorySaver;
use conformance_core::leftovers::{self, ScratchDir};
use conformance_core::{async_trait, BoxError, CheckpointSaver, Reach, Registration, Storage};

use crate::bug::{Bug, NoBug};
use crate::catalog::{make, Base, Mutant, MUTANTS};
use crate::wrapper::{lock, MutantSaver};

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
    Registration::persistent(name, MutantStorage { base, make, cases: Mutex::default(), made: AtomicU64::new(0) })
        .timeout(TIMEOUT)
}

/// One case's storage: what the base keeps it in, and the case's first saver.
struct Case {
    /// The in-memory base's one saver, shared by every instance; a SQLite case's
    /// directory, holding its database file.
    kept: Kept,
    first: Option<MutantSaver>,
}

enum Kept {
    Memory(Arc<dyn CheckpointSaver>),
    Sqlite(ScratchDir),
}

/// The mutants' storage ([`Storage`]) on `base`. The first saver opened on a location is
/// the case's [`MutantSaver`] with a fresh bug; every later one in this process (a reopen)
/// is another instance of it, sharing the bug ([`MutantSaver::reopen`]).
///
/// The in-memory base's location is a name made here: a reopen shares its one in-memory
/// saver, and no other process can open it ([`Reach::ThisProcess`]). The SQLite base's is
/// the path of the database file in a per-case directory; the crash test's child process,
/// which opens the location without creating it, gets a fresh bug.
struct MutantStorage {
    base: Base,
    make: fn() -> Arc<dyn Bug>,
    /// Per location, the case.
    cases: Mutex<HashMap<String, Case>>,
    /// The number of in-memory locations made.
    made: AtomicU64,
}

#[async_trait]
impl Storage for MutantStorage {
    type Saver = MutantSaver;

    async fn create(&self) -> Result<String, BoxError> {
        let (location, kept) = match self.base {
            Base::Memory => {
                let n = self.made.fetch_add(1, Ordering::Relaxed);
                (format!("memory-{n}"), Kept::Memory(Arc::new(MemorySaver::new())))
            }
            Base::Sqlite => {
                let dir = case_dir()?;
                let path = dir.path().join("checkpoints.sqlite");
                let location = path.to_str().ok_or_else(|| format!("{} is not valid UTF-8", path.display()))?;
                (location.to_owned(), Kept::Sqlite(dir))
            }
        };
        lock(&self.cases).insert(location.clone(), Case { kept, first: None });
        Ok(location)
    }

    async fn open(&self, location: &str) -> Result<MutantSaver, BoxError> {
        let inner = match self.base {
            Base::Sqlite => open_sqlite(location).await?,
            Base::Memory => match lock(&self.cases).get(location).map(|c| &c.kept) {
                Some(Kept::Memory(saver)) => saver.clone(),
                _ => return Err(format!("no in-memory storage {location:?} in this process").into()),
            },
        };
        let mut cases = lock(&self.cases);
        Ok(match cases.get_mut(location) {
            Some(Case { first: Some(first), .. }) => first.reopen(inner),
            Some(Case { first, .. }) => first.insert(MutantSaver::new(inner, (self.make)())).clone(),
            None => MutantSaver::new(inner, (self.make)()),
        })
    }

    async fn destroy(&self, location: &str) -> Result<(), BoxError> {
        let case = lock(&self.cases).remove(location);
        match case.map(|c| c.kept) {
            Some(Kept::Sqlite(dir)) => dir.close().map_err(BoxError::from),
            Some(Kept::Memory(_)) | None => Ok(()),
        }
    }

    fn reach(&self) -> Reach {
        match self.base {
            Base::Memory => Reach::ThisProcess,
            Base::Sqlite => Reach::OtherProcesses,
        }
    }
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
