//! The bridge's own cost per call, roughly: the in-memory saver called directly and through
//! the bridge (this binary re-executed as the Rust server), `put` then `get_tuple`, one call
//! at a time. `cargo run --release -p checkpoint-bridge --example overhead [CALLS]`. The bench
//! (`cargo xtask bench`) is where speed is judged; this only prints figures.

use std::sync::Arc;
use std::time::Instant;

use conformance_core::{Checkpoint, CheckpointConfig, CheckpointSaver, TypedValue};

fn main() -> std::process::ExitCode {
    let served = [checkpoint_memory::registration()];
    if let Some(code) = checkpoint_bridge::server::serve_if_requested(&served) {
        return code;
    }
    let calls: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(5000);
    let dir = std::env::temp_dir().join("checkpoint-bridge-overhead");
    let bridged = checkpoint_bridge::server::rust_registration("memory", dir).expect("this binary");
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    rt.block_on(async {
        let direct = served[0].fixture().await.expect("memory saver").into_parts().0;
        let through = bridged.registration().fixture().await.expect("bridged saver").into_parts().0;
        for (name, saver) in [("direct", direct), ("bridged", through)] {
            let per_call = measure(&saver, calls).await;
            println!("{name:8} {calls} puts and {calls} get_tuples: {per_call:.1} us per call");
        }
    });
    std::process::ExitCode::SUCCESS
}

async fn measure(saver: &Arc<dyn CheckpointSaver>, calls: usize) -> f64 {
    let start = Instant::now();
    let mut parent = CheckpointConfig::new("overhead");
    for i in 0..calls {
        let mut cp = Checkpoint { v: 4, id: format!("{i:012}"), ..Checkpoint::default() };
        cp.channel_values.insert("a".into(), TypedValue::json(&serde_json::json!({"i": i, "text": "some state"})));
        cp.channel_versions.insert("a".into(), (i as i64 + 1).into());
        let new_versions = cp.channel_versions.clone();
        parent = saver.put(&parent, cp, Default::default(), new_versions).await.expect("put");
        saver.get_tuple(&parent).await.expect("get_tuple").expect("the checkpoint");
    }
    start.elapsed().as_secs_f64() * 1e6 / (2 * calls) as f64
}
