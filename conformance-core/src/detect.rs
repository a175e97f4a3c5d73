//! Detection: which capabilities a saver implements, by calling each method once with
//! harmless input on a fresh saver (CONTRACT §5: an `Unsupported` answer means "not
//! implemented").

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use crate::isolation::{await_isolated, catch, run_isolated, Abort};
use crate::saver_call::PROBE_CHECKPOINT_ID;
use crate::{Capability, CheckpointConfig, CheckpointError, CheckpointSaver, Invocation, Registration};

/// How long a probe call may take before the capability is counted as detected (and its
/// cases left to fail with their own timeouts).
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// Which capabilities the saver implements.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Detection {
    /// Capability -> detected.
    pub detected: BTreeMap<Capability, bool>,
    /// Problems met while probing (factory failure, probe panic); the capabilities
    /// concerned count as detected so that their cases run and report the cause.
    pub warnings: Vec<String>,
    /// `get_tuple` was detected by its by-id form only: the latest form (a config without
    /// checkpoint_id) answered `Unsupported`. A case of another capability whose latest
    /// read answers `Unsupported` is then not run, "needs get_tuple's latest form"
    /// (CONTRACT §5), instead of failing on a rule it never checked.
    pub no_latest_read: bool,
    /// The features the probe's fixture declared it lacks ([`crate::Fixture::lacking`],
    /// CONTRACT §5 "Declared limits"); each is also a warning of the report.
    pub lacks: std::collections::BTreeSet<crate::Feature>,
}

impl Detection {
    /// True when `capability` was detected.
    pub fn is_detected(&self, capability: Capability) -> bool {
        self.detected.get(&capability).copied().unwrap_or(false)
    }
}

/// The report's warning for a feature the fixture declared it lacks
/// ([`crate::Fixture::lacking`], CONTRACT §5 "Declared limits").
pub fn lack_warning(feature: crate::Feature) -> String {
    format!(
        "the saver declares that {} (feature `{feature}`): the cases that need it are not run (CONTRACT §5 Declared limits)",
        feature.lack()
    )
}

/// The report's warning for a saver that reads by id only ([`Detection::no_latest_read`]).
pub(crate) const NO_LATEST_READ: &str = "get_tuple without a checkpoint_id answered Unsupported: the saver reads by id only. get_tuple's cases that read the latest checkpoint fail; the cases of other capabilities that do are not run (CONTRACT §5)";

/// Probes a fresh saver from the registration's factory: each capability's method is
/// called once with harmless input, and an `Unsupported` answer means "not implemented"
/// (CONTRACT §5). `get_tuple` is detected when either form (latest, or by
/// `checkpoint_id`) does not answer `Unsupported`. `concurrency` and `traces`
/// are detected with `put`;
/// `durability` when the fixture can reopen its storage.
pub fn detect(registration: &Registration) -> Detection {
    let reg = registration.clone();
    let probe_limit = PROBE_TIMEOUT.min(registration.timeout);
    let limit = registration.timeout + probe_limit * 2;
    let multi_thread = registration.multi_thread;
    let outcome = run_isolated(multi_thread, limit, move || async move {
        let fixture = match catch(reg.make_fixture()).await {
            Ok(Ok(f)) => f,
            Ok(Err(e)) => return Err(format!("the factory failed while probing capabilities: {e}")),
            Err(p) => return Err(format!("the factory {p} while probing capabilities")),
        };
        let saver = fixture.saver.clone();
        let mut detected = BTreeMap::new();
        let mut warnings = Vec::new();
        for cap in Capability::ALL {
            let d = match cap {
                Capability::Concurrency | Capability::Traces => continue,
                Capability::Durability => fixture.reopen.is_some(),
                _ => match tokio::time::timeout(probe_limit, probe_on_own_thread(saver.clone(), cap, multi_thread))
                    .await
                {
                    Ok(Ok(Err(CheckpointError::Unsupported(_)))) => false,
                    Ok(Ok(_)) => true,
                    Ok(Err(p)) => {
                        warnings.push(format!("probing {cap}: the saver {p}"));
                        true
                    }
                    Err(_) => {
                        warnings.push(format!(
                            "probing {cap}: no answer within {}",
                            crate::isolation::limit_text(probe_limit)
                        ));
                        true
                    }
                },
            };
            detected.insert(cap, d);
        }
        let put = detected.get(&Capability::Put).copied().unwrap_or(false);
        detected.insert(Capability::Concurrency, put);
        detected.insert(Capability::Traces, put);
        let no_latest_read = detected.get(&Capability::GetTuple).copied().unwrap_or(false)
            && matches!(
                tokio::time::timeout(probe_limit, latest_read_on_own_thread(saver.clone(), multi_thread)).await,
                Ok(Ok(Err(CheckpointError::Unsupported(_))))
            );
        drop(saver);
        if no_latest_read {
            warnings.push(NO_LATEST_READ.to_owned());
        }
        let lacks = fixture.lacks.clone();
        warnings.extend(lacks.iter().map(|f| lack_warning(*f)));
        if let Some(cleanup) = fixture.cleanup {
            let failed = match catch(cleanup()).await {
                Ok(Ok(())) => None,
                Ok(Err(e)) => Some(e.to_string()),
                Err(abort) => Some(abort.to_string()),
            };
            if let Some(e) = failed {
                warnings.push(format!("the cleanup after probing failed: {e}"));
            }
        }
        Ok(Detection { detected, warnings, no_latest_read, lacks })
    });
    match outcome.map_err(|abort| abort.to_string()) {
        Ok(Ok(d)) => d,
        Ok(Err(e)) | Err(e) => Detection {
            detected: Capability::ALL.iter().map(|c| (*c, true)).collect(),
            warnings: vec![format!("{e}; every capability is treated as detected so its cases report the cause")],
            no_latest_read: false,
            lacks: Default::default(),
        },
    }
}

/// Runs one probe on a thread (and runtime) of its own and awaits its answer without
/// blocking this runtime, so a probe that blocks its thread forever is abandoned alone: the
/// other capabilities are still probed, and this runtime keeps driving the saver's
/// background tasks (connection tasks of a pool made by the factory).
async fn probe_on_own_thread(
    saver: Arc<dyn CheckpointSaver>,
    cap: Capability,
    multi_thread: bool,
) -> Result<Result<(), CheckpointError>, Abort> {
    await_isolated(format!("conformance-probe-{cap}"), multi_thread, move || async move { probe(&*saver, cap).await })
        .await
}

/// `get_tuple` of a fresh thread without a checkpoint_id (the latest form alone), on a
/// thread of its own as [`probe_on_own_thread`].
async fn latest_read_on_own_thread(
    saver: Arc<dyn CheckpointSaver>,
    multi_thread: bool,
) -> Result<Result<(), CheckpointError>, Abort> {
    await_isolated("conformance-probe-latest".to_owned(), multi_thread, move || async move {
        let thread = format!("conformance-probe-{}", uuid::Uuid::new_v4().simple());
        saver.get_tuple(&CheckpointConfig::new(thread)).await.map(|_| ())
    })
    .await
}

/// Makes `cap`'s probe ([`Invocation::probe`]) on a fresh thread; the `get_tuple` probe
/// again by id when its latest form is `Unsupported`: a saver that reads by id but has no
/// "latest" form still implements get_tuple (and is judged on its cases).
async fn probe(saver: &dyn CheckpointSaver, cap: Capability) -> Result<(), CheckpointError> {
    let thread = format!("conformance-probe-{}", uuid::Uuid::new_v4().simple());
    let Some(call) = Invocation::probe(cap, &thread) else { return Ok(()) };
    let stores = matches!(call, Invocation::Put(_) | Invocation::PutWrites(_));
    let answer = match call.send(saver).await {
        Err(CheckpointError::Unsupported(_)) if cap == Capability::GetTuple => {
            let config = CheckpointConfig::new(thread.clone()).with_id(PROBE_CHECKPOINT_ID);
            Invocation::GetTuple { config }.send(saver).await
        }
        answer => answer,
    };
    if stores {
        let _ = saver.delete_thread(&thread).await;
    }
    answer.map(|_| ())
}
