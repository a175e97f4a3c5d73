//! The Python child's transport, driven line by line: a host that stops reading the
//! child's answers must not keep the child alive once its stdin closes.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use conformance_core::TypedValue;
use serde_json::json;

/// The child answers a 2 MiB `get_tuple` that the host never reads (its writer thread
/// blocks on the full pipe) and 45 pings, then stdin closes: the child still sees the end
/// of stdin and exits within its shutdown grace (10 s), as when every answer went through
/// the writer thread. With the event loop waiting on the writer's lock to write a small
/// answer, it ran on, stuck, until killed.
pub fn a_python_child_whose_host_stops_reading_still_ends() {
    let python = checkpoint_bridge::managed_python(&crate::base_dir()).expect("the managed environment");
    let workdir = tempfile::tempdir().expect("a work directory");
    let mut child = Command::new(python)
        .args(["-m", "checkpoint_bridge"])
        .env_remove("CHECKPOINT_BRIDGE_PARENT_PID")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the Python child");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut ask = |request: serde_json::Value, answer: bool| {
        stdin.write_all(format!("{request}\n").as_bytes()).expect("a request");
        stdin.flush().expect("flushed");
        let mut line = String::new();
        if answer {
            stdout.read_line(&mut line).expect("an answer");
            assert!(line.contains("\"ok\""), "{request}: {line}");
        }
    };
    let workdir = workdir.path().to_string_lossy().into_owned();
    ask(json!({"id": 0, "op": "hello", "args": {"protocol": [1], "saver": "memory", "workdir": workdir}}), true);
    ask(json!({"id": 1, "op": "open", "args": {}}), true);
    let big = TypedValue::new("bytes", vec![7u8; 2 << 20]).to_json_value();
    let id = "00000000-0000-7000-8000-000000000001";
    let checkpoint = json!({"v": 1, "id": id, "ts": "", "channel_values": {"big": big},
        "channel_versions": {"big": 1}, "versions_seen": {}, "updated_channels": null});
    let config = json!({"thread_id": "t", "checkpoint_ns": ""});
    let args = json!({"config": config, "checkpoint": checkpoint, "metadata": {}, "new_versions": {"big": 1}});
    ask(json!({"id": 2, "op": "put", "handle": 1, "args": args}), true);
    let read = json!({"config": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": id}});
    ask(json!({"id": 3, "op": "get_tuple", "handle": 1, "args": read}), false);
    for id in 10..55 {
        ask(json!({"id": id, "op": "ping", "args": {}}), false);
    }
    drop(ask);
    drop(stdin);
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("the child's status") {
            assert!(start.elapsed() < Duration::from_secs(20), "ended after {:?} ({status})", start.elapsed());
            return;
        }
        if start.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the child still ran 30 s after its stdin closed, its host not reading its answers");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
