//! `--target bridge`: where a bridged run's time goes (issue 38), on `python:memory`
//! (LangGraph's InMemorySaver in a child of the bridge's managed environment, under
//! `--bridge-dir`). Every figure is the median of `--reps` repetitions:
//!
//! - `child_start_ms`: a fresh registration's first fixture, in ms: the child's start, its
//!   imports, `hello` and the first `open` (what every bridged run pays once);
//! - `case_setup_ms`: a case's own fixture on a running child, in ms: `open`, then `close`
//!   and the storage's removal, as the harness does around every case;
//! - `round_trip_us`: one call and its answer, in µs: `get_tuple` of a thread never
//!   stored, one call at a time;
//! - `in_flight_per_s`: the same calls from 8 tasks at once, calls per second (the
//!   protocol lets a child answer many calls in flight);
//! - `put_10_channels_per_s`: the put workload of the other backends, through the bridge;
//! - `large_value_ms`: a put and a `get_tuple` of one 16 MiB bytes value, in ms, as
//!   `put::large_channel_value_roundtrips` does.

use std::path::Path;
use std::time::{Duration, Instant};

use conformance_backends::bridge::{python_registration, BridgeRegistration, PythonOptions};
use conformance_core::CheckpointConfig;
use conformance_spec::data::{large_value, Step, LARGE_VALUE_LEN};
use serde_json::{json, Value};

use crate::{figure, workload, Saver};

/// The bridged registration measured: `python:memory` in the managed environment under
/// `dir` (made on first use; `cargo xtask bench` has made it already).
fn registration(dir: &Path) -> BridgeRegistration {
    let options = PythonOptions { base_dir: dir.to_path_buf(), python_env: None, postgres_url: None };
    match python_registration("python:memory", None, &options) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("cannot start the bridge: {e}");
            std::process::exit(2)
        }
    }
}

/// `get_tuple` of a never-stored thread from `tasks` tasks at once for at least `min`:
/// calls per second of wall time.
async fn get_missing_rate(saver: &Saver, tasks: usize, min: Duration) -> f64 {
    let start = Instant::now();
    let handles: Vec<_> = (0..tasks)
        .map(|task| {
            let saver = saver.clone();
            tokio::spawn(async move {
                let cfg = CheckpointConfig::new(format!("never-stored-{task}"));
                let mut n = 0u64;
                while n % 16 != 0 || start.elapsed() < min {
                    assert!(saver.get_tuple(&cfg).await.expect("get_tuple").is_none());
                    n += 1;
                }
                n
            })
        })
        .collect();
    let mut calls = 0;
    for h in handles {
        calls += h.await.expect("get_tuple task");
    }
    calls as f64 / start.elapsed().as_secs_f64()
}

/// A put and a `get_tuple` of one [`LARGE_VALUE_LEN`] bytes value, in ms.
async fn large_value_ms(saver: &Saver, rep: usize) -> f64 {
    let big = large_value(LARGE_VALUE_LEN);
    let step = Step::fresh().typed("big", big.clone(), 1);
    let start = Instant::now();
    let cfg = CheckpointConfig::new(format!("large-{rep}"));
    let stored = saver.put(&cfg, step.checkpoint, step.metadata, step.new_versions).await.expect("put");
    let got = saver.get_tuple(&stored).await.expect("get_tuple").expect("the large checkpoint");
    let ms = start.elapsed().as_secs_f64() * 1e3;
    assert!(got.checkpoint.channel_values.get("big") == Some(&big), "the 16 MiB value came back changed");
    saver.delete_thread(&format!("large-{rep}")).await.expect("delete_thread");
    ms
}

/// The bridge's figures (module docs).
pub async fn measure(dir: &Path, reps: usize, min: Duration) -> Value {
    let (mut start, mut setup, mut trip, mut flight, mut put, mut large) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    for rep in 0..reps {
        // A fresh registration: its first fixture starts a child, stopped by its teardown
        // (which also removes the child's run directory).
        let bridged = registration(dir);
        let reg = bridged.registration().clone();
        let began = Instant::now();
        let (saver, close) = crate::open_with_close(&reg).await;
        start.push(began.elapsed().as_secs_f64() * 1e3);

        setup.push(workload::case_setup_ms(&reg, min).await);
        trip.push(1e6 / get_missing_rate(&saver, 1, min).await);
        flight.push(get_missing_rate(&saver, 8, min).await);
        put.push(workload::put_rate(&saver, &format!("put-{rep}"), min).await);
        saver.delete_thread(&format!("put-{rep}")).await.expect("delete_thread");
        large.push(large_value_ms(&saver, rep).await);
        drop(saver);
        crate::close(close.0).await;
        crate::close(close.1).await;
        if let Err(e) = bridged.teardown().await {
            eprintln!("warning: the bridge child's teardown: {e}");
        }
    }
    json!({
        "child_start_ms": figure("ms", start),
        "case_setup_ms": figure("ms", setup),
        "round_trip_us": figure("µs", trip),
        "in_flight_per_s": figure("calls/s", flight),
        "put_10_channels_per_s": figure("ops/s", put),
        "large_value_ms": figure("ms", large),
    })
}
