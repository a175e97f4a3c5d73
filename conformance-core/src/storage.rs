//! One declaration of a saver's persistent storage: [`Storage`] says how to create a fresh
//! location, open a saver on a location and destroy it, and
//! [`Registration::persistent`](crate::Registration::persistent) derives everything else a
//! registration needs from it (the per-case factory, the reopen of a second instance, the
//! location the durability crash test hands to its child process, the child's opening and
//! the cleanup; CONTRACT §4 Durability). A registration built this way cannot be half
//! configured (a reopen without a location, a location nobody can open). A storage that
//! reaches less far (one in memory, reopened in this process only) says so with
//! [`Storage::reach`], and one served by another process (the bridge's) adds how its
//! instance is closed ([`Storage::release`]) and what it lacks ([`Storage::lacks`]).

use std::collections::BTreeSet;
use std::sync::Arc;

use async_trait::async_trait;

use crate::registration::Registration;
use crate::{BoxError, CheckpointSaver, Feature, Fixture};

/// Who can open a saver on a location of a [`Storage`] besides the case's first instance
/// ([`Storage::reach`]); the variants are ordered, each reaching farther than the one
/// before (CONTRACT §4 Durability).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Reach {
    /// Nobody: the case's saver is the only instance on its storage. The `durability`
    /// capability is "not implemented" and the two-instance cases are not run.
    FirstInstance,
    /// Another instance in this process ([`Storage::open`] again on the location): the
    /// `durability` capability and the two-instance cases run; the crash test fails
    /// saying the storage names no location another process can open.
    ThisProcess,
    /// Also another process, from the location alone (the durability crash test's
    /// child): the whole `durability` capability runs. The default.
    OtherProcesses,
}

/// A kind of persistent storage a saver lives on: a file per case, a schema per case on
/// one server, ...
///
/// A location is an opaque string (a file path, a schema name) that [`Storage::open`] can
/// open again, in this process or in another one (the crash test's child, which has not
/// run the registration's lifespan setup, so `open` must work from the location and the
/// storage value alone).
///
/// ```
/// # use conformance_core::{async_trait, BoxError, CheckpointSaver, Registration, Storage};
/// struct FileSaver;
/// impl CheckpointSaver for FileSaver {}
/// struct Files;
/// #[async_trait]
/// impl Storage for Files {
///     type Saver = FileSaver;
///     async fn create(&self) -> Result<String, BoxError> { Ok("/tmp/case.db".into()) }
///     async fn open(&self, _location: &str) -> Result<FileSaver, BoxError> { Ok(FileSaver) }
///     async fn destroy(&self, _location: &str) -> Result<(), BoxError> { Ok(()) }
/// }
/// let reg = Registration::persistent("files", Files);
/// assert!(reg.can_open_at());
/// ```
#[async_trait]
pub trait Storage: Send + Sync + 'static {
    /// The saver opened on a location.
    type Saver: CheckpointSaver + 'static;

    /// Creates a fresh, empty location for one case and returns its name. Whatever it
    /// leaves behind is removed by [`Storage::destroy`] with that name.
    ///
    /// # Errors
    /// The storage's error (no space, no server, ...); the case then fails with it.
    async fn create(&self) -> Result<String, BoxError>;

    /// Opens a saver on `location` (one [`Storage::create`] gave). Called once for the
    /// case's saver, again for every second instance and in the crash child; every call
    /// must see the same data.
    ///
    /// # Errors
    /// The saver's open error.
    async fn open(&self, location: &str) -> Result<Self::Saver, BoxError>;

    /// Removes `location` and everything in it; run once after the case whatever its
    /// outcome, and when opening the case's saver failed.
    ///
    /// # Errors
    /// The storage's error; it is reported with the case.
    async fn destroy(&self, location: &str) -> Result<(), BoxError>;

    /// The run's lifespan setup: once before any case (a server that answers, a sweep of
    /// what killed runs left); never in the crash test's child process, which only opens a
    /// location. Nothing by default.
    ///
    /// # Errors
    /// The storage's error: the run ends before any case, every capability "not judged".
    async fn setup(&self) -> Result<(), BoxError> {
        Ok(())
    }

    /// The run's lifespan teardown: once after every case, also after failures and when
    /// [`Storage::setup`] failed (what a timed-out case's cleanup left). Nothing by default.
    ///
    /// # Errors
    /// The storage's error, reported as the run's.
    async fn teardown(&self) -> Result<(), BoxError> {
        Ok(())
    }

    /// How far the storage's locations reach ([`Reach`]): the most any location does. Below
    /// [`Reach::OtherProcesses`] the registration opens no location in another process
    /// ([`Registration::can_open_at`](crate::Registration::can_open_at) is false). By
    /// default [`Reach::OtherProcesses`]: every location can be opened again anywhere.
    fn reach(&self) -> Reach {
        Reach::OtherProcesses
    }

    /// How far `location` (one [`Storage::create`] gave) reaches, for a storage whose
    /// locations differ (the bridge's: its child answers for each); at most
    /// [`Storage::reach`], which a farther answer is cut down to. By default
    /// [`Storage::reach`].
    fn reach_of(&self, location: &str) -> Reach {
        let _ = location;
        self.reach()
    }

    /// The features the case's instance on `location` declares it lacks (CONTRACT §5
    /// "Declared limits"): the cases that use one are not run, with the declaration as the
    /// reason, and the report names it. Asked once per case, after the first
    /// [`Storage::open`] on the location. By default none.
    fn lacks(&self, location: &str) -> BTreeSet<Feature> {
        let _ = location;
        BTreeSet::new()
    }

    /// Closes the case's first instance on `location` and keeps the storage, for a saver
    /// that dropping does not close (one served by another process: the bridge's). The
    /// runner drops its handle on the saver, then awaits this before a case that starts
    /// without an open instance ([`crate::CaseInstance::Closed`]: the durability crash
    /// test, whose child process opens the storage); [`Storage::destroy`] still runs after
    /// the case. By default nothing: dropping the saver closed it.
    ///
    /// # Errors
    /// The storage's error: the case fails with it, unrun.
    async fn release(&self, location: &str) -> Result<(), BoxError> {
        let _ = location;
        Ok(())
    }
}

/// A fresh fixture on a fresh location of `storage`: the saver, its declared limits, its
/// release, a reopen on the same location and the location (as far as the location
/// reaches, [`Storage::reach_of`]), and a cleanup that destroys it. A failed open destroys
/// the location before the error is returned.
pub(crate) async fn fixture<S: Storage>(storage: Arc<S>) -> Result<Fixture, BoxError> {
    let location = storage.create().await?;
    let saver = match storage.open(&location).await {
        Ok(s) => s,
        Err(e) => {
            // The open error is the one to report; a failing destroy adds nothing to it.
            let _ = storage.destroy(&location).await;
            return Err(e);
        }
    };
    let reach = storage.reach_of(&location).min(storage.reach());
    let mut fixture = Fixture::new(saver);
    fixture.lacks = storage.lacks(&location);
    let (release, at) = (storage.clone(), location.clone());
    fixture = fixture.with_close(move || async move { release.release(&at).await });
    if reach >= Reach::ThisProcess {
        let (reopen, at) = (storage.clone(), location.clone());
        fixture = fixture.with_reopen(move || {
            let (storage, at) = (reopen.clone(), at.clone());
            async move { storage.open(&at).await }
        });
    }
    if reach >= Reach::OtherProcesses {
        fixture = fixture.with_location(location.clone());
    }
    Ok(fixture.with_cleanup(move || async move { storage.destroy(&location).await }))
}

/// A fixture on the existing `location` of `storage` (the crash child's opening): the
/// saver only, no cleanup.
pub(crate) async fn open_fixture<S: Storage>(storage: Arc<S>, location: String) -> Result<Fixture, BoxError> {
    Ok(Fixture::new(storage.open(&location).await?))
}

impl Registration {
    /// A registration named `name` on persistent `storage`: each case gets a saver on a
    /// fresh location ([`Storage::create`], then [`Storage::open`]), a second instance on
    /// the same location when a case asks for one (which enables the `durability`
    /// capability and the two-instance cases, CONTRACT §4), the location for the crash
    /// test's child (opened there with [`Storage::open`]), and a cleanup that destroys the
    /// location ([`Storage::destroy`]); its lifespan is [`Storage::setup`] and
    /// [`Storage::teardown`]. A storage that reaches less far ([`Storage::reach`]) gets no
    /// location or no reopen; its instance declares [`Storage::lacks`] and is closed with
    /// [`Storage::release`]. Skips, timeout and runtime are added as on any registration.
    pub fn persistent(name: impl Into<String>, storage: impl Storage) -> Self {
        let storage = Arc::new(storage);
        let (opener, setup, teardown) = (storage.clone(), storage.clone(), storage.clone());
        let mut registration = Registration::new(name, move || fixture(storage.clone()));
        if opener.reach() >= Reach::OtherProcesses {
            registration = registration.open_at(move |location| open_fixture(opener.clone(), location));
        }
        registration.lifespan(
            move || {
                let storage = setup.clone();
                async move { storage.setup().await }
            },
            move || {
                let storage = teardown.clone();
                async move { storage.teardown().await }
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::sync::Mutex;

    use super::*;

    struct Nothing;
    impl CheckpointSaver for Nothing {}

    /// A storage that records its locations and can be told to fail opening.
    #[derive(Default)]
    struct Recorded {
        live: Mutex<BTreeSet<String>>,
        opened: Mutex<Vec<String>>,
        fail_open: bool,
    }

    #[async_trait]
    impl Storage for Arc<Recorded> {
        type Saver = Nothing;
        async fn create(&self) -> Result<String, BoxError> {
            let mut live = self.live.lock().unwrap();
            let name = format!("loc-{}", live.len());
            live.insert(name.clone());
            Ok(name)
        }
        async fn open(&self, location: &str) -> Result<Nothing, BoxError> {
            self.opened.lock().unwrap().push(location.to_owned());
            if self.fail_open {
                Err("cannot open".into())
            } else {
                Ok(Nothing)
            }
        }
        async fn destroy(&self, location: &str) -> Result<(), BoxError> {
            self.live.lock().unwrap().remove(location);
            Ok(())
        }
    }

    #[test]
    fn a_persistent_registration_reopens_locates_opens_and_destroys_its_location() {
        let storage = Arc::new(Recorded::default());
        let reg = Registration::persistent("rec", storage.clone());
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let fixture = rt.block_on(reg.fixture()).unwrap();
        let (_saver, cleanup, reopen, location) = fixture.into_parts();
        assert_eq!(location.as_deref(), Some("loc-0"));
        rt.block_on(reopen.expect("a reopen")()).unwrap();
        rt.block_on(reg.open_location("loc-0")).unwrap();
        assert_eq!(*storage.opened.lock().unwrap(), ["loc-0", "loc-0", "loc-0"]);
        rt.block_on(cleanup.expect("a cleanup")()).unwrap();
        assert!(storage.live.lock().unwrap().is_empty());
    }

    /// A storage whose lifespan counts its runs and whose setup fails.
    struct Lived(Arc<Mutex<Vec<&'static str>>>);

    #[async_trait]
    impl Storage for Lived {
        type Saver = Nothing;
        async fn create(&self) -> Result<String, BoxError> {
            Ok("l".into())
        }
        async fn open(&self, _: &str) -> Result<Nothing, BoxError> {
            Ok(Nothing)
        }
        async fn destroy(&self, _: &str) -> Result<(), BoxError> {
            Ok(())
        }
        async fn setup(&self) -> Result<(), BoxError> {
            self.0.lock().unwrap().push("setup");
            Err("no server".into())
        }
        async fn teardown(&self) -> Result<(), BoxError> {
            self.0.lock().unwrap().push("teardown");
            Ok(())
        }
    }

    #[test]
    fn the_storages_lifespan_is_the_registrations() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let reg = Registration::persistent("lived", Lived(seen.clone()));
        let setup = crate::run::lifespan_setup(&reg).unwrap_err();
        assert_eq!(setup, "the lifespan setup failed: no server");
        crate::run::lifespan_teardown(&reg).unwrap();
        assert_eq!(*seen.lock().unwrap(), ["setup", "teardown"]);
        // The default lifespan does nothing, and does not fail.
        let plain = Registration::persistent("rec", Arc::new(Recorded::default()));
        crate::run::lifespan_setup(&plain).unwrap();
        crate::run::lifespan_teardown(&plain).unwrap();
    }

    /// A storage that reaches `reach` at most, whose location `loc-1` reaches
    /// `OtherProcesses`, declares `lacks` and counts its releases.
    struct Reaching {
        reach: Reach,
        released: Mutex<Vec<String>>,
    }

    #[async_trait]
    impl Storage for Arc<Reaching> {
        type Saver = Nothing;
        async fn create(&self) -> Result<String, BoxError> {
            Ok("loc-1".into())
        }
        async fn open(&self, _: &str) -> Result<Nothing, BoxError> {
            Ok(Nothing)
        }
        async fn destroy(&self, _: &str) -> Result<(), BoxError> {
            Ok(())
        }
        fn reach(&self) -> Reach {
            self.reach
        }
        fn reach_of(&self, _: &str) -> Reach {
            Reach::OtherProcesses
        }
        fn lacks(&self, _: &str) -> BTreeSet<Feature> {
            [Feature::WideNumbers].into()
        }
        async fn release(&self, location: &str) -> Result<(), BoxError> {
            self.released.lock().unwrap().push(location.to_owned());
            Ok(())
        }
    }

    #[test]
    fn the_reach_decides_reopen_location_and_open_at_and_the_instance_declares_and_releases() {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        for (reach, reopens, located) in [
            (Reach::FirstInstance, false, false),
            (Reach::ThisProcess, true, false),
            (Reach::OtherProcesses, true, true),
        ] {
            let storage = Arc::new(Reaching { reach, released: Mutex::default() });
            let reg = Registration::persistent("reaching", storage.clone());
            assert_eq!(reg.can_open_at(), located, "{reach:?}");
            let mut fixture = rt.block_on(reg.fixture()).unwrap();
            assert_eq!(fixture.lacks(), &BTreeSet::from([Feature::WideNumbers]));
            rt.block_on(fixture.close_instance()).unwrap();
            assert_eq!(*storage.released.lock().unwrap(), ["loc-1"], "{reach:?}");
            let (_, _, reopen, location) = fixture.into_parts();
            assert_eq!((reopen.is_some(), location.is_some()), (reopens, located), "{reach:?}");
        }
    }

    #[test]
    fn a_failed_open_destroys_the_fresh_location() {
        let storage = Arc::new(Recorded { fail_open: true, ..Recorded::default() });
        let reg = Registration::persistent("rec", storage.clone());
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let err = rt.block_on(reg.fixture()).err().expect("the open error");
        assert_eq!(err.to_string(), "cannot open");
        assert!(storage.live.lock().unwrap().is_empty(), "left: {:?}", storage.live.lock().unwrap());
    }
}
