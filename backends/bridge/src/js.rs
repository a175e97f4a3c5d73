//! The JavaScript side: the bridge's node child (embedded in this crate, written out on
//! first use with its package-lock.json), its `node_modules` installed by `npm ci` on
//! first use, and the saver specs `js:memory` / `js` + `--saver ./initializer.mjs`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::managed::{parse_saver, postgres_url, run, Package, SpecError};
use crate::process::ChildCommand;
use crate::registration::{BridgeRegistration, BridgeSpec};

/// The pinned packages of the JS child (exact versions in `bridges/js/package.json`, every
/// dependency pinned by its `package-lock.json`).
pub const JS_PINNED: &[&str] = &[
    "@langchain/langgraph-checkpoint@1.2.2",
    "@langchain/langgraph-checkpoint-sqlite@1.0.4",
    "@langchain/langgraph-checkpoint-postgres@1.0.5",
    "@langchain/core@1.4.0",
    "better-sqlite3@12.11.1",
    "pg@8.23.1",
];

/// LangGraph JS's own savers by their short names (`js:memory`, ...).
pub const JS_SHORT_NAMES: &[&str] = &["memory", "sqlite", "postgres"];

/// The environment variable naming the node binary (default `node` on PATH).
pub const NODE_ENV_VAR: &str = "CHECKPOINT_BRIDGE_NODE";
/// The environment variable naming the npm binary (default `npm` on PATH).
pub const NPM_ENV_VAR: &str = "CHECKPOINT_BRIDGE_NPM";

/// The child's dependencies: `npm ci` installs them into `node_modules` beside these.
const DEPENDENCIES: Package = Package {
    kind: "js",
    pins: JS_PINNED,
    files: &[
        ("package.json", include_str!("../../../bridges/js/package.json")),
        ("package-lock.json", include_str!("../../../bridges/js/package-lock.json")),
    ],
};

/// The child's sources, written under the dependencies' directory (so node finds
/// `node_modules` there): a change of a source needs no new `npm ci`.
const SOURCES: Package = Package {
    kind: "js",
    pins: &[],
    files: &[
        ("src/main.mjs", include_str!("../../../bridges/js/src/main.mjs")),
        ("src/json.mjs", include_str!("../../../bridges/js/src/json.mjs")),
        ("src/values.mjs", include_str!("../../../bridges/js/src/values.mjs")),
        ("src/mapping.mjs", include_str!("../../../bridges/js/src/mapping.mjs")),
        ("src/storage.mjs", include_str!("../../../bridges/js/src/storage.mjs")),
        ("src/record.mjs", include_str!("../../../bridges/js/src/record.mjs")),
        ("src/record_app.mjs", include_str!("../../../bridges/js/src/record_app.mjs")),
    ],
};

/// Options of a JavaScript saver run.
#[derive(Clone, Debug, Default)]
pub struct JsOptions {
    /// Where the package, its `node_modules` and the run directories go (e.g.
    /// `target/checkpoint-bridge`).
    pub base_dir: PathBuf,
    /// The PostgreSQL URL for `js:postgres`; default $CHECKPOINT_POSTGRES_URL.
    pub postgres_url: Option<String>,
}

fn tool(var: &str, default: &str) -> OsString {
    std::env::var_os(var).filter(|v| !v.is_empty()).unwrap_or_else(|| OsString::from(default))
}

/// The JS child's dependencies under `<base>/js/src-<digest>` with their `node_modules`
/// installed (`npm ci` from the lockfile on first use; reused while the stamp matches),
/// and its sources in a directory below that. Concurrent callers wait on a lock file.
/// Returns the sources' directory (the entry point is `src/main.mjs` in it).
///
/// # Errors
/// A message with the failing step and the end of npm's output.
pub fn managed_node(base: &Path) -> Result<PathBuf, String> {
    let pkg = DEPENDENCIES.write(base)?;
    let modules = pkg.join("node_modules");
    DEPENDENCIES.ensure(base, &modules.join(".checkpoint-bridge-stamp"), || {
        if modules.exists() {
            std::fs::remove_dir_all(&modules).map_err(|e| format!("cannot remove {}: {e}", modules.display()))?;
        }
        eprintln!(
            "checkpoint-bridge: installing the JavaScript packages in {} (first use: npm ci of {})",
            pkg.display(),
            JS_PINNED.join(", ")
        );
        let mut npm = Command::new(tool(NPM_ENV_VAR, "npm"));
        npm.args(["ci", "--no-audit", "--no-fund", "--loglevel=error"]).current_dir(&pkg);
        run(&mut npm, "npm ci").map(|_| ())
    })?;
    SOURCES.write_in(&pkg)
}

/// The JS child's sources alone, under `<base>/js/modules/src-<digest>` (no `node_modules`
/// there or above it), for an initializer module: the child imports nothing itself for a
/// module (only the short names import LangGraph's packages), and the module imports its
/// saver and `@langchain/langgraph-checkpoint` from its own `node_modules` (node resolves a
/// bare import from the importing file's directory up). So judging a saver of one's own
/// needs no `npm ci` of the pinned packages, as an npm user installing the kit needs none.
/// Returns the sources' directory (the entry point is `src/main.mjs` in it).
///
/// # Errors
/// A message naming the directory that could not be written.
pub fn module_node(base: &Path) -> Result<PathBuf, String> {
    SOURCES.write_in(&base.join("js").join("modules"))
}

/// The saver a `--backend` (and `--saver`) names: `js:memory`, or `js` + `--saver PATH`
/// (an initializer module: a file ending in `.mjs`, `.js` or `.cjs`), or `js:PATH`.
///
/// # Errors
/// [`SpecError::Usage`] for anything else, with the valid names.
pub fn parse_js_saver(backend: &str, saver: Option<&str>) -> Result<String, SpecError> {
    let module = |spec: &str| [".mjs", ".js", ".cjs"].iter().any(|ext| spec.ends_with(ext));
    parse_saver("js", backend, saver, JS_SHORT_NAMES, module, "./initializer.mjs")
}

/// Whether the JS saver spec names LangGraph JS's PostgreSQL saver.
pub fn js_needs_postgres(spec: &str) -> bool {
    spec == "postgres"
}

/// The registration of a JavaScript saver: parses the spec ([`parse_js_saver`]; an
/// initializer module must exist and is passed to the child by its absolute path),
/// installs the child's packages on first use for a short name ([`managed_node`]; an
/// initializer module's child needs none, `module_node`) and returns the bridged
/// registration, named `js:<saver>`.
///
/// # Errors
/// [`SpecError::Usage`] for a bad spec or a missing module; [`SpecError::Environment`]
/// when node or npm fails, or the PostgreSQL URL is missing.
pub fn js_registration(
    backend: &str,
    saver: Option<&str>,
    options: &JsOptions,
) -> Result<BridgeRegistration, SpecError> {
    let mut spec = parse_js_saver(backend, saver)?;
    let name = format!("js:{spec}");
    if !JS_SHORT_NAMES.contains(&spec.as_str()) {
        let path = std::fs::canonicalize(&spec)
            .map_err(|e| SpecError::Usage(format!("--saver {spec}: cannot read the initializer module: {e}")))?;
        spec = path.to_string_lossy().into_owned();
    }
    let pkg = if JS_SHORT_NAMES.contains(&spec.as_str()) {
        managed_node(&options.base_dir)
    } else {
        module_node(&options.base_dir)
    }
    .map_err(SpecError::Environment)?;
    let mut command = ChildCommand {
        program: PathBuf::from(tool(NODE_ENV_VAR, "node")),
        args: vec![pkg.join("src").join("main.mjs").into_os_string()],
        env: Vec::new(),
        label: name.clone(),
    };
    if js_needs_postgres(&spec) {
        let url = postgres_url(&name, options.postgres_url.as_deref())?;
        command.env.push((crate::POSTGRES_URL_ENV.into(), url.into()));
    }
    Ok(BridgeRegistration::new(BridgeSpec { name, command, saver: spec, work_dir: options.base_dir.join("runs") }))
}

/// Whether a recorder's `--graph FILE:EXPORT` names a JavaScript module (its file ends in
/// `.mjs`, `.js` or `.cjs`): recorded by [`js_recorder_command`], not the Python recorder.
pub fn is_js_graph(graph: &str) -> bool {
    let file = graph.rsplit_once(':').map_or(graph, |(file, _)| file);
    [".mjs", ".js", ".cjs"].iter().any(|ext| file.ends_with(ext))
}

/// The command that records a LangGraph JS app (`checkpoint-conformance record --graph
/// ./app.mjs:build ...`, docs/traces.md): node ($CHECKPOINT_BRIDGE_NODE, else `node`) on the
/// child's `src/record_app.mjs`, written with the sources alone under `base` (no npm: the
/// graph's module brings its own LangGraph JS, which the recorder imports from where the
/// module finds it), with `args` after it.
///
/// # Errors
/// [`SpecError::Environment`] when the sources cannot be written.
pub fn js_recorder_command(base: &Path, args: Vec<OsString>) -> Result<ChildCommand, SpecError> {
    let dir = module_node(base).map_err(SpecError::Environment)?;
    Ok(ChildCommand {
        program: PathBuf::from(tool(NODE_ENV_VAR, "node")),
        args: std::iter::once(dir.join("src").join("record_app.mjs").into_os_string()).chain(args).collect(),
        env: Vec::new(),
        label: "record".to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn js_saver_specs_parse_or_say_what_is_valid() {
        assert_eq!(parse_js_saver("js:memory", None).unwrap(), "memory");
        assert_eq!(parse_js_saver("js", Some("./init.mjs")).unwrap(), "./init.mjs");
        assert_eq!(parse_js_saver("js:./init.js", None).unwrap(), "./init.js");
        for (b, s) in [("js", None), ("js:memory", Some("a.mjs")), ("js:nope", None), ("js:", None), ("jsx", None)] {
            let e = parse_js_saver(b, s).unwrap_err();
            assert!(matches!(e, SpecError::Usage(_)), "{b} {s:?}: {e}");
        }
        let e = parse_js_saver("js:nope", None).unwrap_err().to_string();
        assert!(e.contains("memory, sqlite, postgres") && e.contains("./initializer.mjs"), "{e}");
        assert!(js_needs_postgres("postgres") && !js_needs_postgres("memory"));
    }

    /// An initializer module's child is the sources alone: no npm, no `node_modules` on
    /// the way up from it (the module's own imports resolve from the module's directory).
    #[test]
    fn an_initializer_modules_child_needs_no_npm() {
        let base = tempfile::tempdir().unwrap();
        let dir = module_node(base.path()).unwrap();
        assert!(dir.join("src/main.mjs").is_file() && dir.join("src/storage.mjs").is_file());
        assert!(dir.ancestors().take_while(|d| *d != base.path()).all(|d| !d.join("node_modules").exists()));
        assert_eq!(module_node(base.path()).unwrap(), dir, "written once, then reused");
    }
}
