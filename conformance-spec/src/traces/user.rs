//! A user's own recorded traces as cases of the `traces` capability (docs/traces.md §4,
//! issue 41): `--traces DIR` of the front end, `CHECKPOINT_CONFORMANCE_TRACES` of
//! `checkpointer_test!`. Each `*.json` file of the directory (a `checkpoint-trace/1` file,
//! docs/trace-format.md, as `checkpoint-conformance record` writes it) is one case named
//! `user_<file stem>`, replayed as the shipped traces are: a fresh saver gets every call
//! the recorded run made, in order, and each result must be the recorded one.
//!
//! A case's needs are the capabilities of the calls its trace makes, and it uses the
//! `namespaces` and `task_path_on_writes` features when the trace does (a saver that
//! declares it lacks one does not run the case: CONTRACT §5 "Declared limits"). The rules
//! it is counted under are those its calls check first ([`rules_of`]).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use conformance_core::{Capability, Feature, Invocation, SpecCase};

use crate::fuzz::trace::{Op, Trace};
use crate::rules::{ids, RULES};
use crate::{Checked, Cx};

/// The environment variable naming a directory of user traces for `checkpointer_test!`
/// and the front end (whose `--traces` flag wins over it).
pub const TRACES_ENV: &str = "CHECKPOINT_CONFORMANCE_TRACES";

/// The prefix of a user trace's case name: `user_` and the file stem.
pub const PREFIX: &str = "user_";

/// One case per `*.json` file (any case of `json`) directly under `dir`, in file name order.
/// An entry named `*.json` that is not a regular file (a directory, a FIFO, a symbolic link
/// to nothing) is an error naming it, never opened (a FIFO would wait for a writer).
///
/// The cases live for the rest of the process (their names and texts are leaked once,
/// as a front end reads its traces once).
///
/// # Errors
/// One line naming the directory or the file: `dir` is not a readable directory, holds
/// no `*.json` file, an entry named `*.json` is not a regular file, a file is not a valid
/// trace (with the parser's reason), or two file stems give the same case name.
pub fn user_cases(dir: &Path) -> Result<Vec<SpecCase>, String> {
    let shown = dir.display();
    let files = trace_files(dir)?;
    let mut names = BTreeSet::new();
    let mut cases = Vec::with_capacity(files.len());
    for path in files {
        let (text, trace) = read_trace(&path)?;
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let name = case_name(&stem);
        if !names.insert(name.clone()) {
            return Err(format!("trace {}: another file of {shown} gives the same case name {name}", path.display()));
        }
        // The file's path goes with its text, for the failure message ([`split_data`]).
        let shown = path.display().to_string();
        let data = format!("{}\n{shown}{text}", shown.len());
        cases.push(SpecCase {
            needs: leak_slice(needs_of(&trace)),
            uses: leak_slice(uses_of(&trace)),
            rules: leak_slice(rules_of(&trace)),
            data: Box::leak(data.into_boxed_str()),
            ..SpecCase::new(Capability::Traces, Box::leak(name.into_boxed_str()), |ctx| {
                Box::pin(Cx::run(ctx, Capability::Traces, replays_user_trace))
            })
        });
    }
    Ok(cases)
}

/// The entries named `*.json` (any case of `json`) directly under `dir`, in file name
/// order; [`read_trace`] refuses those that are not regular files.
///
/// # Errors
/// One line: `dir` is not a readable directory, or holds no `*.json` entry.
pub fn trace_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let shown = dir.display();
    let entries = std::fs::read_dir(dir).map_err(|e| format!("traces directory {shown}: {e}"))?;
    let mut files = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| format!("traces directory {shown}: {e}"))?.path();
        if path.extension().is_some_and(|x| x.eq_ignore_ascii_case("json")) {
            files.push(path);
        }
    }
    files.sort();
    if files.is_empty() {
        return Err(format!("traces directory {shown}: no *.json trace file in it"));
    }
    Ok(files)
}

/// A trace file's text and the trace parsed from it. A path that is not a regular file (a
/// directory, a FIFO, a symbolic link to nothing) is refused, never opened: a FIFO would
/// wait for a writer.
///
/// # Errors
/// One line naming the file: not a regular file, unreadable, or not a valid trace (with
/// the parser's reason).
pub fn read_trace(path: &Path) -> Result<(String, Trace), String> {
    let shown = path.display();
    let not_regular = || format!("trace {shown}: not a regular file (a trace is a JSON file)");
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => {}
        Ok(_) => return Err(not_regular()),
        Err(_) if path.is_symlink() => return Err(not_regular()),
        Err(e) => return Err(format!("trace {shown}: {e}")),
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("trace {shown}: {e}"))?;
    let trace = Trace::parse(&text).map_err(|e| format!("trace {shown}: {e}"))?;
    Ok((text, trace))
}

/// `user_` and the stem in snake_case: letters and digits kept (lower case), every other
/// run of characters one `_`, none at the end (`My App (v2).json` is `user_my_app_v2`).
fn case_name(stem: &str) -> String {
    let mut name = String::from(PREFIX);
    for c in stem.chars() {
        if c.is_alphanumeric() {
            name.extend(c.to_lowercase());
        } else if !name.ends_with('_') {
            name.push('_');
        }
    }
    let kept = name.trim_end_matches('_').len().max(PREFIX.len());
    name.truncate(kept);
    if name.len() == PREFIX.len() {
        name.push_str("trace");
    }
    name
}

fn leak_slice<T>(v: Vec<T>) -> &'static [T] {
    Box::leak(v.into_boxed_slice())
}

/// Every saver call of the trace, those of concurrent steps included.
fn calls(trace: &Trace) -> impl Iterator<Item = &Invocation> {
    trace.steps.iter().flat_map(|s| match &s.op {
        Op::Call(i) => vec![i],
        Op::Concurrent { calls } => calls
            .iter()
            .filter_map(|b| match &b.op {
                Op::Call(i) => Some(i),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    })
}

/// The capabilities of the trace's calls, in [`Capability::ALL`] order, and `durability`
/// when it switches to another instance (an `instance` marker: a registration that cannot
/// open a second instance does not run it; a `reopen` marker goes on with the same one).
fn needs_of(trace: &Trace) -> Vec<Capability> {
    let mut used: BTreeSet<Capability> = calls(trace).map(Invocation::capability).collect();
    let switches = trace.steps.iter().any(|s| match &s.op {
        Op::Instance { index } => *index > 0,
        Op::Concurrent { calls } => calls.iter().any(|b| b.instance.is_some_and(|i| i > 0)),
        _ => false,
    });
    if switches {
        used.insert(Capability::Durability);
    }
    Capability::ALL.into_iter().filter(|c| used.contains(c)).collect()
}

/// `namespaces` when a call names a namespace other than the root, `task_path_on_writes`
/// when a `put_writes` carries a task_path.
fn uses_of(trace: &Trace) -> Vec<Feature> {
    let mut uses = Vec::new();
    let config = |i: &Invocation| match i {
        Invocation::Put(p) => Some(p.config.checkpoint_ns.clone()),
        Invocation::PutWrites(w) => Some(w.config.checkpoint_ns.clone()),
        Invocation::GetTuple { config } | Invocation::DeltaChannelHistory { config, .. } => {
            Some(config.checkpoint_ns.clone())
        }
        Invocation::List { options, .. } => options.checkpoint_ns.clone(),
        _ => None,
    };
    if calls(trace).any(|i| config(i).is_some_and(|ns| !ns.is_empty())) {
        uses.push(Feature::Namespaces);
    }
    if calls(trace).any(|i| matches!(i, Invocation::PutWrites(w) if !w.task_path.is_empty())) {
        uses.push(Feature::TaskPathOnWrites);
    }
    uses
}

/// The rules a replay of the trace checks first, by the calls it makes: the rules marked
/// `first` in the section of each call ([`crate::rules::Rule::first`]: what a put stores
/// and reads back, the key of pending writes and their order on a read, which checkpoint
/// is the latest, the order of a listing, what a delete leaves), in contract order per
/// call; and, at a `reopen`, that acknowledged writes survive.
fn rules_of(trace: &Trace) -> Vec<&'static str> {
    let mut rules: Vec<&'static str> = Vec::new();
    let mut add = |r: &[&'static str]| {
        for id in r {
            if !rules.contains(id) {
                rules.push(id);
            }
        }
    };
    for call in calls(trace) {
        let method = call.method();
        let first = RULES.iter().filter(|r| r.first && r.section.split_once(' ').is_some_and(|(_, m)| m == method));
        add(&first.map(|r| r.id).collect::<Vec<_>>());
    }
    if trace.steps.iter().any(|s| matches!(s.op, Op::Reopen)) {
        add(&[ids::durability::acknowledged]);
    }
    rules
}

/// The path and the text of a user trace case's data: the path's length in bytes and a
/// newline, then the path, then the text (a path may hold a newline itself).
fn split_data(data: &str) -> (&str, &str) {
    data.split_once('\n')
        .and_then(|(len, rest)| rest.split_at_checked(len.parse().ok()?))
        .unwrap_or(("a user trace", data))
}

/// A user trace's case: the trace in [`Cx::case_data`] (with its path, [`split_data`]),
/// replayed on the case's saver.
async fn replays_user_trace(cx: Cx) -> Checked {
    let (path, text) = split_data(cx.case_data());
    let trace = Trace::parse(text).map_err(|e| conformance_core::Failure::new(format!("{path}: {e}")))?;
    crate::fuzz::replay_trace_in(&cx, &trace)
        .await
        .map_err(|f| conformance_core::Failure::new(format!("{path}, {}", f.message)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory of `files` under the temp dir, removed when dropped (no tempfile here:
    /// it would pull a -sys crate under conformance-spec, xtask/tests/tidy.rs).
    struct Dir(std::path::PathBuf);

    impl Dir {
        fn path(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn dir_with(files: &[(&str, &str)]) -> Dir {
        let dir = Dir(std::env::temp_dir().join(format!("user-traces-{}", uuid::Uuid::new_v4().simple())));
        std::fs::create_dir(dir.path()).unwrap();
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        dir
    }

    #[test]
    fn one_case_per_trace_file_with_the_needs_and_features_of_its_calls() {
        let (_, subgraph) = super::super::SHIPPED.iter().find(|(n, _)| *n == "subgraph").unwrap();
        let (_, linear) = super::super::SHIPPED.iter().find(|(n, _)| *n == "linear").unwrap();
        let files = [("My App.json", *subgraph), ("Upper.JSON", *linear), ("linear.json", *linear), ("notes.txt", "-")];
        let dir = dir_with(&files);
        let mut cases = user_cases(dir.path()).unwrap();
        let names: Vec<&str> = cases.iter().map(|c| c.name).collect();
        assert_eq!(names, ["user_my_app", "user_upper", "user_linear"]);
        cases.remove(1);
        assert_eq!(case_name("Ärger (v2)!"), "user_ärger_v2");
        assert_eq!(case_name("--"), "user_trace");
        assert!(cases.iter().all(|c| c.capability == Capability::Traces));
        assert!(cases[0].uses.contains(&Feature::Namespaces), "{:?}", cases[0].uses);
        assert!(!cases[1].uses.contains(&Feature::Namespaces), "{:?}", cases[1].uses);
        assert!(cases[1].needs.contains(&Capability::List), "{:?}", cases[1].needs);
        assert!(cases[1].rules.contains(&ids::put::stored) && cases[1].rules.contains(&ids::list::order));
        assert!(cases[1].data.ends_with(linear));
        assert!(!cases[1].needs.contains(&Capability::Durability), "{:?}", cases[1].needs);
    }

    #[test]
    fn a_path_with_a_newline_goes_whole_with_its_text() {
        let (_, linear) = super::super::SHIPPED.iter().find(|(n, _)| *n == "linear").unwrap();
        let dir = dir_with(&[("a\nb.json", *linear)]);
        let cases = user_cases(dir.path()).unwrap();
        let (path, text) = split_data(cases[0].data);
        assert!(path.ends_with("a\nb.json"), "{path:?}");
        assert_eq!(text, *linear);
        assert!(Trace::parse(text).is_ok());
    }

    #[test]
    fn switching_to_another_instance_needs_durability() {
        let put = r#"{"call": "put", "config": {"thread_id": "t", "checkpoint_ns": ""}, "checkpoint": {"v": 4, "id": "1", "ts": "", "channel_values": {}, "channel_versions": {}, "versions_seen": {}}, "metadata": {}, "new_versions": {}, "expect": {"config": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "1"}}}"#;
        let marker =
            format!(r#"{{"format": "checkpoint-trace/1", "steps": [{put}, {{"call": "instance", "index": 1}}]}}"#);
        let reopen = format!(r#"{{"format": "checkpoint-trace/1", "steps": [{put}, {{"call": "reopen"}}]}}"#);
        let dir = dir_with(&[("marker.json", &marker), ("reopen.json", &reopen)]);
        let cases = user_cases(dir.path()).unwrap();
        assert_eq!(cases[0].needs, [Capability::Put, Capability::Durability]);
        assert_eq!(cases[1].needs, [Capability::Put]);
    }

    #[test]
    fn an_entry_named_json_that_is_no_regular_file_is_an_error_never_opened() {
        let (_, linear) = super::super::SHIPPED[0];
        let dir = dir_with(&[("ok.json", linear)]);
        std::fs::create_dir(dir.path().join("a directory.json")).unwrap();
        let e = user_cases(dir.path()).unwrap_err();
        assert!(e.contains("a directory.json: not a regular file"), "{e}");
        std::fs::remove_dir(dir.path().join("a directory.json")).unwrap();
        // A FIFO is never opened (reading it would wait for a writer forever).
        let fifo = std::process::Command::new("mkfifo").arg(dir.path().join("pipe.json")).status();
        assert!(fifo.is_ok_and(|s| s.success()), "mkfifo");
        assert!(user_cases(dir.path()).unwrap_err().contains("pipe.json: not a regular file"));
        std::fs::remove_file(dir.path().join("pipe.json")).unwrap();
        std::os::unix::fs::symlink("/nonexistent/x.json", dir.path().join("dangling.json")).unwrap();
        assert!(user_cases(dir.path()).unwrap_err().contains("dangling.json: not a regular file"));
    }

    #[test]
    fn a_bad_directory_or_trace_is_one_line_naming_it() {
        let missing = user_cases(Path::new("/nonexistent/traces")).unwrap_err();
        assert!(missing.starts_with("traces directory /nonexistent/traces:"), "{missing}");
        let empty = dir_with(&[("a.txt", "")]);
        assert!(user_cases(empty.path()).unwrap_err().contains("no *.json trace file"));
        let bad = dir_with(&[("broken.json", r#"{"format": "checkpoint-trace/1", "steps": [{"call": "nope"}]}"#)]);
        let e = user_cases(bad.path()).unwrap_err();
        assert!(e.contains("broken.json") && !e.contains('\n'), "{e}");
        let (_, linear) = super::super::SHIPPED[0];
        let twice = dir_with(&[("a-b.json", linear), ("a b.json", linear)]);
        assert!(user_cases(twice.path()).unwrap_err().contains("same case name user_a_b"));
    }
}
