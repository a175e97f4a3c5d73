//! Times opening a fresh database and a tiny case on it (development aid).
use std::time::Instant;

use checkpoint_sqlite::{kit_options, SqliteSaver};
use conformance_core::{Checkpoint, CheckpointConfig, CheckpointSaver};

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("rt");
    for i in 0..5 {
        let dir = tempfile::tempdir().expect("dir");
        let t0 = Instant::now();
        let s = SqliteSaver::open_with(dir.path().join("x.sqlite"), kit_options()).expect("open");
        let t1 = Instant::now();
        let cfg = CheckpointConfig::new("t");
        let cp = Checkpoint { v: 1, id: format!("c{i}"), ..Checkpoint::default() };
        let c = rt.block_on(s.put(&cfg, cp, Default::default(), Default::default())).expect("put");
        let t2 = Instant::now();
        rt.block_on(s.get_tuple(&c)).expect("get");
        let t3 = Instant::now();
        drop(s);
        let t4 = Instant::now();
        drop(dir);
        println!(
            "open {:.1} ms, put {:.1} ms, get {:.1} ms, drop {:.1} ms, rmdir {:.1} ms",
            (t1 - t0).as_secs_f64() * 1e3,
            (t2 - t1).as_secs_f64() * 1e3,
            (t3 - t2).as_secs_f64() * 1e3,
            (t4 - t3).as_secs_f64() * 1e3,
            t4.elapsed().as_secs_f64() * 1e3
        );
    }
}
