//! The `test-server` helper starts a real throwaway server that a saver can use, and stopping
//! it removes everything it made. Needs Debian's PostgreSQL binaries (the script installs
//! them when missing and running as root); run with `--features test-server`.

use checkpoint_postgres::test_server::TestServer;
use checkpoint_postgres::{PostgresOptions, PostgresSaver};
use conformance_core::{Checkpoint, CheckpointConfig, CheckpointSaver};

#[test]
fn throwaway_server_starts_serves_and_is_removed() {
    let server = TestServer::start().expect("start a throwaway server");
    assert!(server.url().starts_with("postgresql://postgres@127.0.0.1:"), "{}", server.url());
    let dir = server.dir().to_owned();
    assert!(dir.join("data").is_dir());
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let saver = PostgresSaver::connect_with(server.url(), PostgresOptions::new().schema("smoke")).await.unwrap();
        let cfg = CheckpointConfig::new("t");
        let cp = Checkpoint { v: 1, id: "c1".into(), ..Checkpoint::default() };
        saver.put(&cfg, cp, Default::default(), Default::default()).await.unwrap();
        assert!(saver.get_tuple(&cfg).await.unwrap().is_some());
    });
    drop(rt);
    server.stop().expect("stop");
    assert!(!dir.exists(), "{} was not removed", dir.display());
}
