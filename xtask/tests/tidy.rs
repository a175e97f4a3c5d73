//! Tidy: conventions of the workspace checked from `cargo metadata` and the file tree, so a
//! wrong arrow fails `cargo test` instead of waiting for a review.
//!
//! Arrows that must never exist (the crate layout of CONTRIBUTING.md):
//! - `conformance-core` or `conformance-spec` depending on a backend (`backends/*`,
//!   `examples/*`), directly or through anything, with any kind of dependency;
//! - `checkpoint-contract` depending on anything of the workspace (the kit, a backend);
//! - a `-sys` crate (one whose name ends in `-sys`, as `linux-raw-sys` or `libsqlite3-sys`,
//!   or whose manifest has `links`) under `checkpoint-contract`, `conformance-core` or
//!   `conformance-spec` (normal and build dependencies, transitively, for the host platform);
//! - `sqlx` anywhere in the workspace's resolved graph;
//! - a saver crate under `backends/` taking `conformance-core` as a non-optional normal
//!   dependency: the kit's wiring (`registration()`) sits behind the saver's `kit` feature, so
//!   the kit is not in the saver's normal build (CONTRIBUTING.md). Every `backends/*` member
//!   is a saver except those of [`KIT_WIRING`].
//!
//! And: the PostgreSQL URL variable's name is written in a crate's `src/` only where a
//! `const` declares it (`checkpoint_postgres::URL_ENV`); everything else uses the constant.
//!
//! And: no `.rs` file of the workspace over 600 lines (every crate, `target/` and `compat/`
//! excepted), and at least one file found.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

/// The crates whose dependency tree a saver or a kit user takes on.
const KIT: [&str; 3] = ["checkpoint-contract", "conformance-core", "conformance-spec"];
/// The `backends/*` members that are kit wiring rather than savers, so they may take the kit
/// in their normal build: `conformance-backends` is the kit's list of backends, and
/// `checkpoint-bridge` drives a child process with the kit's leftovers and crash machinery.
const KIT_WIRING: [&str; 2] = ["conformance-backends", "checkpoint-bridge"];
/// The most lines a `.rs` file of the workspace may have.
const MAX_LINES: usize = 600;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask sits in the workspace root").to_path_buf()
}

/// The host triple, so platform-gated dependencies of other targets (`windows-sys`,
/// `js-sys` of wasm) do not count: only what builds here does.
fn host() -> String {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let out = Command::new(rustc).arg("-vV").output().expect("rustc -vV runs");
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines().find_map(|l| l.strip_prefix("host: ")).expect("rustc -vV names the host").trim().to_owned()
}

fn metadata() -> Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--filter-platform", &host(), "--manifest-path"])
        .arg(workspace_root().join("Cargo.toml"))
        .output()
        .expect("cargo metadata runs");
    assert!(out.status.success(), "cargo metadata failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON")
}

/// The graph of `cargo metadata`: package id -> name, workspace members, and for each
/// package its dependencies with the kinds they are used as (`normal`, `build`, `dev`).
struct Graph {
    names: BTreeMap<String, String>,
    /// Workspace member name -> its manifest directory relative to the workspace root.
    members: BTreeMap<String, String>,
    deps: BTreeMap<String, Vec<(String, BTreeSet<String>)>>,
    /// Names of the `-sys` packages: a name ending in `-sys` (`linux-raw-sys` too, which
    /// has no `links`) or a `links` key in the manifest (a native library under any name).
    native: BTreeSet<String>,
}

impl Graph {
    fn from_metadata(m: &Value) -> Self {
        let root = m["workspace_root"].as_str().unwrap_or("");
        let mut names = BTreeMap::new();
        let mut dirs = BTreeMap::new();
        let mut native = BTreeSet::new();
        for p in m["packages"].as_array().into_iter().flatten() {
            let id = p["id"].as_str().unwrap_or("").to_owned();
            let name = p["name"].as_str().unwrap_or("");
            if p["links"].is_string() || name.ends_with("-sys") {
                native.insert(name.to_owned());
            }
            names.insert(id.clone(), p["name"].as_str().unwrap_or("").to_owned());
            let manifest = p["manifest_path"].as_str().unwrap_or("");
            let dir = manifest.strip_suffix("/Cargo.toml").unwrap_or(manifest);
            dirs.insert(id, dir.strip_prefix(root).unwrap_or(dir).trim_start_matches('/').to_owned());
        }
        let members = m["workspace_members"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(|id| (names[id].clone(), dirs[id].clone()))
            .collect();
        let mut deps = BTreeMap::new();
        for n in m["resolve"]["nodes"].as_array().into_iter().flatten() {
            let list = n["deps"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|d| {
                    let kinds = d["dep_kinds"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|k| k["kind"].as_str().unwrap_or("normal").to_owned())
                        .collect();
                    (names[d["pkg"].as_str().unwrap_or("")].clone(), kinds)
                })
                .collect();
            deps.insert(names[n["id"].as_str().unwrap_or("")].clone(), list);
        }
        Self { names, members, deps, native }
    }

    /// Every package reachable from `root` through dependencies of the given kinds, with
    /// the path that reaches it (`a -> b -> c`).
    fn reachable(&self, root: &str, kinds: &[&str]) -> BTreeMap<String, String> {
        let mut found = BTreeMap::new();
        let mut stack = vec![(root.to_owned(), root.to_owned())];
        while let Some((pkg, path)) = stack.pop() {
            for (dep, dep_kinds) in self.deps.get(&pkg).into_iter().flatten() {
                if dep_kinds.iter().any(|k| kinds.contains(&k.as_str())) && !found.contains_key(dep) {
                    let to = format!("{path} -> {dep}");
                    found.insert(dep.clone(), to.clone());
                    stack.push((dep.clone(), to));
                }
            }
        }
        found
    }
}

/// The front-end crates (`cli`'s `checkpoint-conformance`, `xtask`), which choose a backend
/// from the registry and never name a backend crate themselves.
const FRONT_ENDS: [&str; 2] = ["checkpoint-conformance", "xtask"];

/// The registry of backends (`conformance-backends`), the front ends' one way to them.
const REGISTRY_DIR: &str = "backends/registry";

/// Every forbidden arrow of the graph in `metadata` (the JSON of `cargo metadata`), one line each.
fn arrow_violations(metadata: &Value) -> Vec<String> {
    let g = Graph::from_metadata(metadata);
    let mut out = Vec::new();
    let is_backend = |name: &str| {
        g.members.get(name).is_some_and(|dir| dir.starts_with("backends/") || dir.starts_with("examples/"))
    };
    for kit in ["conformance-core", "conformance-spec"] {
        for (dep, path) in g.reachable(kit, &["normal", "build", "dev"]) {
            if is_backend(&dep) {
                out.push(format!("{kit} depends on the backend {dep}: {path}"));
            }
        }
    }
    // The front ends reach a backend through the registry only (issue 39: one list of
    // backends, one target builder): never a backend crate of their own.
    for front in FRONT_ENDS {
        for (dep, _) in g.deps.get(front).into_iter().flatten() {
            let dir = g.members.get(dep).map_or("", String::as_str);
            if dir.starts_with("backends/") && dir != REGISTRY_DIR {
                out.push(format!(
                    "{front} depends on the backend crate {dep} directly; front ends reach backends through \
                     {REGISTRY_DIR} (conformance_backends)"
                ));
            }
        }
    }
    for (dep, path) in g.reachable("checkpoint-contract", &["normal", "build", "dev"]) {
        if g.members.contains_key(&dep) {
            out.push(format!("checkpoint-contract depends on the workspace crate {dep}: {path}"));
        }
    }
    for kit in KIT {
        for (dep, path) in g.reachable(kit, &["normal", "build"]) {
            if g.native.contains(&dep) {
                out.push(format!("{kit} pulls in the -sys crate {dep}: {path}"));
            }
        }
    }
    for name in g.names.values().collect::<BTreeSet<_>>() {
        if name.as_str() == "sqlx" || name.starts_with("sqlx-") {
            out.push(format!("{name} is in the workspace's dependency graph (never sqlx)"));
        }
    }
    out
}

/// Every saver crate of `backends/` (in `metadata`, the JSON of `cargo metadata`) whose
/// manifest takes `conformance-core` as a normal dependency that is not optional, one line each.
fn eager_kit_in_savers(metadata: &Value) -> Vec<String> {
    let root = metadata["workspace_root"].as_str().unwrap_or("");
    let members: BTreeSet<&str> =
        metadata["workspace_members"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    let mut out = Vec::new();
    for p in metadata["packages"].as_array().into_iter().flatten() {
        let name = p["name"].as_str().unwrap_or("");
        let manifest = p["manifest_path"].as_str().unwrap_or("");
        let manifest = manifest.strip_suffix("/Cargo.toml").unwrap_or(manifest);
        let dir = manifest.strip_prefix(root).unwrap_or(manifest).trim_start_matches('/');
        if !members.contains(p["id"].as_str().unwrap_or(""))
            || !dir.starts_with("backends/")
            || KIT_WIRING.contains(&name)
        {
            continue;
        }
        let eager = p["dependencies"].as_array().into_iter().flatten().any(|d| {
            d["name"] == "conformance-core" && d["kind"].is_null() && !d["optional"].as_bool().unwrap_or(false)
        });
        if eager {
            out.push(format!(
                "{name} ({dir}) takes conformance-core as a non-optional normal dependency \
                 (make it `optional = true` behind the `kit` feature)"
            ));
        }
    }
    out
}

/// The `.rs` files under `root` (recursively), skipping hidden directories and, at the top,
/// `target/` (build output) and `compat/` (a workspace of its own, docs/compat.md), with more
/// than `max` lines, as `path: N lines`. An error when it finds no `.rs` file at all, so a
/// wrong root cannot pass.
fn long_files(root: &Path, max: usize) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut seen = 0;
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if path.is_dir() {
                let skipped = name.starts_with('.') || (d == root && (name == "target" || name == "compat"));
                if !skipped {
                    stack.push(path);
                }
            } else if path.extension().is_some_and(|e| e == "rs") {
                seen += 1;
                let lines = std::fs::read_to_string(&path).map(|s| s.lines().count()).unwrap_or(0);
                if lines > max {
                    out.push(format!("{}: {lines} lines (at most {max})", path.display()));
                }
            }
        }
    }
    if seen == 0 {
        return Err(format!("no .rs file under {}", root.display()));
    }
    out.sort();
    Ok(out)
}

#[test]
fn no_forbidden_dependency_arrow() {
    let found = arrow_violations(&metadata());
    assert!(found.is_empty(), "forbidden dependency arrows:\n  {}", found.join("\n  "));
}

#[test]
fn savers_take_the_kit_only_behind_their_kit_feature() {
    let m = metadata();
    let found = eager_kit_in_savers(&m);
    assert!(found.is_empty(), "the kit in a saver's normal build:\n  {}", found.join("\n  "));
    // Not vacuous: the reference savers are among the crates judged.
    let names: BTreeSet<&str> =
        m["packages"].as_array().into_iter().flatten().filter_map(|p| p["name"].as_str()).collect();
    for saver in ["checkpoint-memory", "checkpoint-sqlite", "checkpoint-postgres"] {
        assert!(names.contains(saver), "{saver} is not in the workspace any more");
    }
}

#[test]
fn a_saver_with_the_kit_in_its_normal_build_is_named() {
    let saver = |name: &str, dir: &str, kind: Value, optional: bool| {
        json!({"id": format!("id#{name}"), "name": name, "manifest_path": format!("/ws/{dir}/Cargo.toml"),
               "dependencies": [{"name": "conformance-core", "kind": kind, "optional": optional}]})
    };
    let m = json!({
        "workspace_root": "/ws",
        "workspace_members": ["id#checkpoint-x", "id#checkpoint-y", "id#checkpoint-z", "id#conformance-backends", "id#xtask"],
        "packages": [
            saver("checkpoint-x", "backends/x", Value::Null, false),
            saver("checkpoint-y", "backends/y", Value::Null, true),
            saver("checkpoint-z", "backends/z", json!("dev"), false),
            saver("conformance-backends", "backends/registry", Value::Null, false),
            saver("xtask", "xtask", Value::Null, false),
            saver("outside", "backends/outside", Value::Null, false),
        ],
    });
    let found = eager_kit_in_savers(&m);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("checkpoint-x (backends/x) takes conformance-core as a non-optional normal dependency")
    );
}

/// Lines of `.rs` files under a `src/` directory of `root` that write `literal` (with its
/// quotes) outside a `const` declaration, as `path:line: text`.
fn literal_outside_const(root: &Path, literal: &str) -> Vec<String> {
    let quoted = format!("\"{literal}\"");
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                if !name.starts_with('.') && !(d == root && (name == "target" || name == "compat")) {
                    stack.push(path);
                }
            } else if name.ends_with(".rs") && path.components().any(|c| c.as_os_str() == "src") {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                for (i, line) in text.lines().enumerate() {
                    let code = line.trim_start();
                    let declares = code.starts_with("pub const ")
                        || code.starts_with("const ")
                        || code.starts_with("pub(crate) const ");
                    if line.contains(&quoted) && !declares && !code.starts_with("//") {
                        out.push(format!("{}:{}: {}", path.display(), i + 1, code));
                    }
                }
            }
        }
    }
    out.sort();
    out
}

#[test]
fn the_postgres_url_variable_is_named_once() {
    let found = literal_outside_const(&workspace_root(), "CHECKPOINT_POSTGRES_URL");
    assert!(found.is_empty(), "write checkpoint_postgres::URL_ENV instead of the literal:\n  {}", found.join("\n  "));
}

/// Lines under `conformance-spec/src` that call `tokio::spawn` directly, outside
/// `compare.rs` (whose `spawn` carries the case's task_path rule into the task) and its tests.
fn bare_spawns_in_spec(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.join("conformance-spec").join("src")];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs")
                && !path.ends_with("compare.rs")
                && !path.ends_with("compare_tests.rs")
            {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                for (i, line) in text.lines().enumerate() {
                    if line.contains("tokio::spawn(") && !line.trim_start().starts_with("//") {
                        out.push(format!("{}:{}: {}", path.display(), i + 1, line.trim()));
                    }
                }
            }
        }
    }
    out.sort();
    out
}

#[test]
fn spec_tasks_are_spawned_with_the_case_rules() {
    let found = bare_spawns_in_spec(&workspace_root());
    assert!(
        found.is_empty(),
        "spawn a case's task with crate::compare::spawn (a bare tokio::spawn drops the case's task_path rule):\n  {}",
        found.join("\n  ")
    );
}

#[test]
fn rust_files_stay_under_600_lines() {
    let found = long_files(&workspace_root(), MAX_LINES).unwrap_or_else(|e| panic!("{e}"));
    assert!(found.is_empty(), "files over {MAX_LINES} lines:\n  {}", found.join("\n  "));
}

/// A doctored `cargo metadata`: `packages` are (name, directory under /ws or a registry
/// crate), `arrows` are (from, to, kind).
fn doctored(packages: &[(&str, Option<&str>)], arrows: &[(&str, &str, &str)]) -> Value {
    let id = |name: &str| format!("id#{name}");
    let pkgs: Vec<Value> = packages
        .iter()
        .map(|(name, dir)| {
            let manifest = match dir {
                Some(d) => format!("/ws/{d}/Cargo.toml"),
                None => format!("/registry/{name}/Cargo.toml"),
            };
            // `libsqlite3-sys` and `native-lib` link a native library; `linux-raw-sys` does not.
            let links = match *name {
                "libsqlite3-sys" => json!("sqlite3"),
                "native-lib" => json!("native"),
                _ => Value::Null,
            };
            json!({"id": id(name), "name": name, "manifest_path": manifest, "links": links})
        })
        .collect();
    let members: Vec<Value> = packages.iter().filter(|(_, d)| d.is_some()).map(|(n, _)| json!(id(n))).collect();
    let nodes: Vec<Value> = packages
        .iter()
        .map(|(name, _)| {
            let deps: Vec<Value> = arrows
                .iter()
                .filter(|(from, _, _)| from == name)
                .map(|(_, to, kind)| {
                    let kind = if *kind == "normal" { Value::Null } else { json!(kind) };
                    json!({"name": to, "pkg": id(to), "dep_kinds": [{"kind": kind, "target": null}]})
                })
                .collect();
            json!({"id": id(name), "deps": deps})
        })
        .collect();
    json!({"packages": pkgs, "workspace_members": members, "workspace_root": "/ws", "resolve": {"nodes": nodes}})
}

const WORKSPACE: [(&str, Option<&str>); 11] = [
    ("checkpoint-contract", Some("checkpoint-contract")),
    ("xtask", Some("xtask")),
    ("conformance-backends", Some("backends/registry")),
    ("conformance-core", Some("conformance-core")),
    ("conformance-spec", Some("conformance-spec")),
    ("checkpoint-sqlite", Some("backends/sqlite")),
    ("serde", None),
    ("helper", None),
    ("libsqlite3-sys", None),
    ("linux-raw-sys", None),
    ("native-lib", None),
];

/// The arrows of today's workspace, which break no rule.
const GOOD: [(&str, &str, &str); 7] = [
    ("conformance-core", "checkpoint-contract", "normal"),
    ("xtask", "conformance-backends", "normal"),
    ("conformance-backends", "checkpoint-sqlite", "normal"),
    ("conformance-spec", "conformance-core", "normal"),
    ("checkpoint-contract", "serde", "normal"),
    ("checkpoint-sqlite", "checkpoint-contract", "normal"),
    ("checkpoint-sqlite", "libsqlite3-sys", "normal"),
];

fn with(extra: &[(&'static str, &'static str, &'static str)]) -> Vec<String> {
    let arrows: Vec<_> = GOOD.iter().chain(extra).copied().collect();
    arrow_violations(&doctored(&WORKSPACE, &arrows))
}

#[test]
fn the_good_graph_passes() {
    assert_eq!(with(&[]), Vec::<String>::new());
}

#[test]
fn a_planted_bad_arrow_fails() {
    // Core on a backend, through a registry crate, as a dev-dependency.
    let found = with(&[("conformance-core", "helper", "dev"), ("helper", "checkpoint-sqlite", "normal")]);
    assert!(
        found.contains(
            &"conformance-core depends on the backend checkpoint-sqlite: conformance-core -> helper -> checkpoint-sqlite"
                .to_owned()
        ),
        "{found:?}"
    );
    // A front end on a backend crate directly, even as a dev-dependency.
    let found = with(&[("xtask", "checkpoint-sqlite", "dev")]);
    assert!(
        found.iter().any(|f| f.starts_with("xtask depends on the backend crate checkpoint-sqlite directly")),
        "{found:?}"
    );
    // The contract on the kit.
    let found = with(&[("checkpoint-contract", "conformance-core", "normal")]);
    assert!(found.iter().any(|f| f.starts_with("checkpoint-contract depends on the workspace crate conformance-core")));
    // A -sys crate under spec, transitively; a dev-dependency one does not count.
    let found = with(&[("conformance-spec", "helper", "normal"), ("helper", "libsqlite3-sys", "build")]);
    assert!(
        found.contains(
            &"conformance-spec pulls in the -sys crate libsqlite3-sys: conformance-spec -> helper -> libsqlite3-sys"
                .to_owned()
        ),
        "{found:?}"
    );
    // A `-sys` name without `links` (pure Rust, as linux-raw-sys) counts, and so does a
    // crate with `links` under another name; under each of the three kit crates.
    for kit in KIT {
        let found = with(&[(kit, "helper", "normal"), ("helper", "linux-raw-sys", "normal")]);
        assert!(
            found.contains(&format!("{kit} pulls in the -sys crate linux-raw-sys: {kit} -> helper -> linux-raw-sys")),
            "{found:?}"
        );
        let found = with(&[(kit, "native-lib", "build")]);
        assert!(found.contains(&format!("{kit} pulls in the -sys crate native-lib: {kit} -> native-lib")), "{found:?}");
    }
    assert!(with(&[("conformance-spec", "libsqlite3-sys", "dev")]).is_empty());
    // sqlx anywhere.
    let mut packages = WORKSPACE.to_vec();
    packages.push(("sqlx", None));
    let found = arrow_violations(&doctored(&packages, &GOOD));
    assert_eq!(found, vec!["sqlx is in the workspace's dependency graph (never sqlx)".to_owned()]);
}

#[test]
fn a_long_file_is_named() {
    let dir = std::env::temp_dir().join(format!("tidy-long-{}", std::process::id()));
    for sub in ["crate/src/deep", "target/debug", "compat/x", ".hidden", "empty"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    std::fs::write(dir.join("crate/src/deep/long.rs"), "x\n".repeat(601)).unwrap();
    std::fs::write(dir.join("crate/src/short.rs"), "x\n".repeat(600)).unwrap();
    // Build output, the compat workspace and hidden directories are not the workspace's code.
    for skipped in ["target/debug/gen.rs", "compat/x/big.rs", ".hidden/big.rs"] {
        std::fs::write(dir.join(skipped), "x\n".repeat(700)).unwrap();
    }
    let found = long_files(&dir, MAX_LINES);
    let empty = long_files(&dir.join("empty"), MAX_LINES);
    let missing = long_files(&dir.join("missing"), MAX_LINES);
    std::fs::remove_dir_all(&dir).unwrap();
    let found = found.unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].ends_with("long.rs: 601 lines (at most 600)"), "{found:?}");
    // No file found is a failure, not a pass.
    assert!(empty.unwrap_err().starts_with("no .rs file under"));
    assert!(missing.unwrap_err().starts_with("no .rs file under"));
}
