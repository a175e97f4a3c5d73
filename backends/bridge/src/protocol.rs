//! The messages of the bridge protocol (docs/bridge-protocol.md): request lines, answer
//! lines, the handshake and the answers of `open`.

use std::collections::{BTreeMap, BTreeSet};

use conformance_core::Feature;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;

/// The protocol version this crate speaks.
pub const PROTOCOL_VERSION: u32 = 1;

/// The environment variable that tells a child the pid of the host that started it (the
/// child exits at once when its parent is someone else: the host died before `exec`).
pub const PARENT_PID_ENV: &str = "CHECKPOINT_BRIDGE_PARENT_PID";

/// The environment variable that gives every child of one host process the same run token
/// ([`run_token`]): storage a child creates is named with it, so the lifespan teardown of
/// the run's last child can remove what an earlier child, killed while stuck, left behind
/// (docs/bridge-protocol.md "Storage").
pub const RUN_TOKEN_ENV: &str = "CHECKPOINT_BRIDGE_RUN";

/// This host process's run token: 16 lowercase hex digits (its pid and start time), the
/// same for every child it starts.
pub fn run_token() -> &'static str {
    static TOKEN: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TOKEN.get_or_init(|| {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let mixed = (u64::from(std::process::id()) << 40) ^ (nanos as u64);
        format!("{mixed:016x}")
    })
}

/// The prefix of every PostgreSQL schema a bridge child of this host process creates:
/// `cp_bridge_<run token>_` (docs/bridge-protocol.md "Storage"; the Python and JavaScript
/// children's postgres storage add 16 random hex digits).
pub fn schema_prefix() -> String {
    format!("cp_bridge_{}_", run_token())
}

/// One request line: `{"id", "op", "handle"?, "args"}`, in that order: the Python child
/// looks for a ping in a line's first 64 bytes (an id of 20 digits ends by byte 27).
#[derive(Serialize)]
pub(crate) struct Request<'a, A: Serialize> {
    pub id: u64,
    pub op: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub handle: Option<u64>,
    pub args: &'a A,
}

/// A request as the Rust server reads it (`args` kept raw until the op is known).
#[derive(Deserialize)]
pub(crate) struct IncomingRequest {
    pub id: u64,
    pub op: String,
    #[serde(default)]
    pub handle: Option<u64>,
    #[serde(default)]
    pub args: Option<Box<RawValue>>,
}

/// The error of an answer: a `CheckpointError` kind or `Protocol`, and a one-line message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoteError {
    /// `Unsupported`, `InvalidConfig`, `InvalidInput`, `Storage` or `Protocol`.
    pub kind: String,
    /// What went wrong, e.g. `sqlite3.OperationalError: database is locked`.
    pub message: String,
}

fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Box<RawValue>>, D::Error> {
    Box::<RawValue>::deserialize(d).map(Some)
}

/// One answer line. `ok` is `Some` when the member is present, even when it is `null`.
#[derive(Deserialize)]
pub(crate) struct Answer {
    pub id: Option<u64>,
    #[serde(default, deserialize_with = "present")]
    pub ok: Option<Box<RawValue>>,
    #[serde(default)]
    pub error: Option<RemoteError>,
    /// A line before the answer (neither `ok` nor `error`): the child has the result and is
    /// encoding it; `bytes` is about how large it is (docs/bridge-protocol.md "progress").
    #[serde(default)]
    pub progress: Option<Progress>,
}

/// What a `progress` line says.
#[derive(Deserialize)]
pub(crate) struct Progress {
    #[serde(default)]
    pub bytes: Option<u64>,
}

/// The id of an answer line that is not valid JSON, read from its required `{"id":N`
/// prefix, so the request it answers can fail alone.
pub(crate) fn id_prefix(line: &[u8]) -> Option<u64> {
    let rest = line.strip_prefix(b"{\"id\":")?;
    let digits: &[u8] = &rest[..rest.iter().take_while(|b| b.is_ascii_digit()).count()];
    std::str::from_utf8(digits).ok()?.parse().ok()
}

/// `hello`'s arguments.
#[derive(Serialize, Deserialize)]
pub(crate) struct HelloArgs {
    pub protocol: Vec<u32>,
    pub saver: String,
    #[serde(default)]
    pub workdir: Option<String>,
}

fn yes() -> bool {
    true
}

/// What a child says about itself in the handshake. No `Default`: a derived one would say
/// `task_path: false`, while a child that omits the field means true.
///
/// What the child's savers lack is [`Hello::lacked`]: the `lacks` list, plus
/// `task_path_on_reads` when an older child answers `task_path: false`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Hello {
    /// The protocol version the child picked.
    pub protocol: u32,
    /// The child's name and version (`checkpoint-bridge-python 0.1.0`).
    pub server: String,
    /// The language runtime (`CPython 3.11.7`).
    #[serde(default)]
    pub runtime: String,
    /// Installed packages that matter and their versions (`langgraph-checkpoint` ...).
    #[serde(default)]
    pub packages: BTreeMap<String, String>,
    /// The saver it serves, as named in `hello`.
    pub saver: String,
    /// Whether a storage can be opened again (`reopen`, `open_at`).
    #[serde(default)]
    pub reopen: bool,
    /// Whether a read returns the `task_path` a `put_writes` stored (default true). The
    /// older form of `lacks: ["task_path_on_reads"]`, still read: false is the same
    /// declaration.
    #[serde(default = "yes")]
    pub task_path: bool,
    /// The [`Feature`]s every saver this child serves lacks, by [`Feature::name`]
    /// (`["task_path_on_reads"]` for every saver behind LangGraph's API, whose
    /// `PendingWrite` is `(task_id, channel, value)`); the kit maps each to
    /// `Fixture::lacking` (CONTRACT §5 "Declared limits"). Read with [`Hello::lacked`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lacks: Vec<String>,
}

impl Hello {
    /// The features the child declares its savers lack: `lacks`, and
    /// [`Feature::TaskPathOnReads`] when `task_path` is false.
    ///
    /// # Errors
    /// A name that is no [`Feature::name`], with the valid ones.
    pub fn lacked(&self) -> Result<BTreeSet<Feature>, String> {
        let mut lacks = parse_lacks(&self.lacks)?;
        if !self.task_path {
            lacks.insert(Feature::TaskPathOnReads);
        }
        Ok(lacks)
    }
}

/// The features named in a child's `lacks` list ([`Feature::name`]).
///
/// # Errors
/// The first name that is no feature: "declares that it lacks an unknown feature ...".
pub fn parse_lacks(names: &[String]) -> Result<BTreeSet<Feature>, String> {
    names.iter().map(|n| n.parse::<Feature>().map_err(|e| format!("declares that it lacks an {e}"))).collect()
}

/// How a child serves one saver instance (`open`'s `saver`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServedSaver {
    /// The saver's class or type (`langgraph.checkpoint.sqlite.SqliteSaver`).
    pub class: String,
    /// `async` or `sync`: which of the saver's methods are judged.
    pub side: String,
    /// Per operation, the side that answers it (`async`, `sync`, `base`, `none`).
    #[serde(default)]
    pub methods: BTreeMap<String, String>,
    /// The module that defines the saver's class (`langgraph.checkpoint.sqlite`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub module: Option<String>,
    /// The installed distribution that provides that module (`langgraph-checkpoint-sqlite`),
    /// when there is one (not for a module on the path of no installed package).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distribution: Option<String>,
    /// The distribution's version (`3.1.2`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// `Some(false)` when the saver's `put_writes` takes no `task_path` (the
    /// langgraph-checkpoint 2.x signature): the child calls it without one, as LangGraph's
    /// runtime does. Absent: it takes the path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writes_task_path: Option<bool>,
}

/// `open`'s answer.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Opened {
    pub handle: u64,
    #[serde(default)]
    pub location: Option<String>,
    #[serde(default)]
    pub reopen: bool,
    #[serde(default)]
    pub saver: ServedSaver,
    /// Features this instance's saver lacks beyond the handshake's (by [`Feature::name`]):
    /// what the child found by probing the saver, e.g. `string_versions` for a
    /// `get_next_version` that refuses LangGraph's padded string versions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lacks: Vec<String>,
}

/// The answer of `reopen` and `open_at`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Reopened {
    pub handle: u64,
    #[serde(default)]
    pub saver: ServedSaver,
}

/// Arguments of operations that take none.
#[derive(Serialize)]
pub(crate) struct NoArgs {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_tell_null_from_absent_and_errors() {
        let a: Answer = serde_json::from_str(r#"{"id":3,"ok":null}"#).unwrap();
        assert_eq!(a.ok.map(|r| r.get().to_owned()), Some("null".to_owned()));
        let a: Answer = serde_json::from_str(r#"{"id":3}"#).unwrap();
        assert!(a.ok.is_none() && a.error.is_none());
        let a: Answer = serde_json::from_str(r#"{"id":4,"error":{"kind":"Storage","message":"m"}}"#).unwrap();
        assert_eq!(a.error.unwrap().kind, "Storage");
    }

    #[test]
    fn lacks_are_read_by_feature_name_and_the_old_task_path_still_counts() {
        let hello = |json: &str| serde_json::from_str::<Hello>(json).unwrap();
        let new = hello(r#"{"protocol":1,"server":"s","saver":"x","lacks":["task_path_on_reads","string_versions"]}"#);
        assert_eq!(new.lacked(), Ok([Feature::TaskPathOnReads, Feature::StringVersions].into()));
        let old = hello(r#"{"protocol":1,"server":"s","saver":"x","task_path":false}"#);
        assert_eq!(old.lacked(), Ok([Feature::TaskPathOnReads].into()));
        assert_eq!(hello(r#"{"protocol":1,"server":"s","saver":"x"}"#).lacked(), Ok(BTreeSet::new()));
        let e = hello(r#"{"protocol":1,"server":"s","saver":"x","lacks":["paths"]}"#).lacked().unwrap_err();
        assert!(e.contains("unknown feature `paths`") && e.contains("string_versions"), "{e}");
    }

    #[test]
    fn id_prefix_reads_only_the_leading_id() {
        assert_eq!(id_prefix(b"{\"id\":42,\"ok\":\xff}"), Some(42));
        assert_eq!(id_prefix(b"{\"ok\":1,\"id\":42}"), None);
        assert_eq!(id_prefix(b"garbage"), None);
    }
}
