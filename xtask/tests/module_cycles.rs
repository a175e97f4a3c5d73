//! No two-file import circle in `conformance-core` or `conformance-spec` (issue 39): no
//! module file names a second file's module (`crate::a::…`, `super::a::…`, or an item the
//! crate root re-exports from it) while that file names the first's. A module and its own
//! submodules may name each other (a parent declares its children, a child uses its
//! parent's items); every other pair must point one way. Comments are ignored.
//!
//! A planted circle of two files fails the check (the test below), so it can fail.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

type ModPath = Vec<String>;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask sits in the workspace root").to_path_buf()
}

/// Every `.rs` file under `src`, by its module path (`fuzz/mod.rs` and `fuzz.rs` are `fuzz`;
/// `lib.rs` is the root, `[]`).
fn module_files(src: &Path) -> BTreeMap<ModPath, String> {
    let mut files = BTreeMap::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("a readable source directory") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(src).expect("under src").with_extension("");
                let mut parts: ModPath = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
                if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
                    parts.pop();
                }
                let text = std::fs::read_to_string(&path).expect("a readable file");
                files.insert(parts, without_comments(&text));
            }
        }
    }
    files
}

/// `text` without `//` comments (doc comments included).
fn without_comments(text: &str) -> String {
    text.lines().map(|l| l.find("//").map_or(l, |i| &l[..i])).collect::<Vec<_>>().join("\n")
}

/// The items of a `{a, b::{c, d}, e as f}` list (its inside), split at top-level commas.
fn split_items(inside: &str) -> Vec<String> {
    let (mut items, mut depth, mut cur) = (Vec::new(), 0i32, String::new());
    for c in inside.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        if c == ',' && depth == 0 {
            items.push(std::mem::take(&mut cur));
        } else {
            cur.push(c);
        }
    }
    items.push(cur);
    items.into_iter().map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()).collect()
}

/// Every path `text` names through `crate::` or `super::` (from module `at`), made absolute:
/// `crate::a::{b, c::d}` gives `a::b` and `a::c::d` (the first segment of each is enough).
fn named_paths(text: &str, at: &[String]) -> Vec<ModPath> {
    let mut out = Vec::new();
    for (start, base) in [("crate::", Vec::new()), ("super::", at[..at.len().saturating_sub(1)].to_vec())] {
        let mut rest = text;
        while let Some(i) = rest.find(start) {
            let before = rest[..i].chars().next_back();
            rest = &rest[i + start.len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let ident = |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
            let mut path = base.clone();
            let mut tail = rest;
            loop {
                if let Some(inside) = tail.strip_prefix('{') {
                    let end = inside.find(';').unwrap_or(inside.len());
                    let list = inside[..end].trim_end().trim_end_matches('}');
                    for item in split_items(list) {
                        let mut p = path.clone();
                        p.extend(item.split("::").map(ident).filter(|s| !s.is_empty()));
                        out.push(p);
                    }
                    break;
                }
                let name = ident(tail);
                if name.is_empty() {
                    out.push(path);
                    break;
                }
                tail = &tail[name.len()..];
                path.push(name);
                match tail.strip_prefix("::") {
                    Some(t) => tail = t,
                    None => {
                        out.push(path);
                        break;
                    }
                }
            }
        }
    }
    out
}

/// The items the crate root re-exports (`pub use a::b::{X, Y as Z};`, `pub use a::X;`),
/// by the name they have at the root: the module they come from.
fn root_reexports(lib: &str) -> BTreeMap<String, ModPath> {
    let mut map = BTreeMap::new();
    for stmt in lib.split(';') {
        let Some(body) = stmt.trim().strip_prefix("pub use ") else { continue };
        let body = body.trim();
        let (module, items) = match body.find("::{") {
            Some(i) => (&body[..i], split_items(body[i + 3..].trim_end_matches('}'))),
            None => match body.rsplit_once("::") {
                Some((m, item)) => (m, vec![item.to_owned()]),
                None => continue,
            },
        };
        let module: ModPath = module.trim_start_matches("crate::").split("::").map(str::to_owned).collect();
        for item in items {
            let name = item.rsplit(" as ").next().unwrap_or(&item).rsplit("::").next().unwrap_or("").trim();
            map.insert(name.to_owned(), module.clone());
        }
    }
    map
}

/// The two-file circles among `files`: pairs `(a, b)` where `a` names `b` and `b` names
/// `a`, neither a module of the other, each with the path that names the other.
fn circles(files: &BTreeMap<ModPath, String>) -> Vec<String> {
    let reexports = files.get(&Vec::new()).map(|lib| root_reexports(lib)).unwrap_or_default();
    let mut edges: BTreeMap<(ModPath, ModPath), String> = BTreeMap::new();
    for (at, text) in files {
        if at.is_empty() {
            continue;
        }
        for mut path in named_paths(text, at) {
            if let Some(from) = path.first().and_then(|first| reexports.get(first)) {
                path.splice(0..0, from.clone());
            }
            let Some(target) = (1..=path.len()).rev().map(|k| path[..k].to_vec()).find(|p| files.contains_key(p))
            else {
                continue;
            };
            if target.starts_with(at) || at.starts_with(&target) {
                continue;
            }
            edges.entry((at.clone(), target)).or_insert_with(|| path.join("::"));
        }
    }
    let mut found = Vec::new();
    for ((a, b), why) in &edges {
        if a < b {
            if let Some(back) = edges.get(&(b.clone(), a.clone())) {
                found.push(format!("{} -> {} ({why}) and back ({back})", a.join("::"), b.join("::")));
            }
        }
    }
    found
}

#[test]
fn no_two_file_import_circle_in_the_kit() {
    let mut problems = Vec::new();
    for krate in ["conformance-core", "conformance-spec"] {
        let files = module_files(&workspace_root().join(krate).join("src"));
        assert!(files.len() > 10, "{krate}: only {} files found", files.len());
        problems.extend(circles(&files).into_iter().map(|c| format!("{krate}: {c}")));
    }
    assert!(problems.is_empty(), "two-file import circles:\n  {}", problems.join("\n  "));
}

#[test]
fn a_planted_circle_is_found() {
    let files: BTreeMap<ModPath, String> = [
        (vec![], "pub use report::{Report, Outcome};".to_owned()),
        (vec!["harness".into()], "use crate::outputs::check;\nfn f() {}".to_owned()),
        (vec!["outputs".into()], "// crate::harness in a comment\nfn g() { crate::harness::X; }".to_owned()),
        (vec!["run".into()], "use crate::Report;\nmod progress;".to_owned()),
        (vec!["run".into(), "progress".into()], "use super::Planned; use crate::report::Outcome;".to_owned()),
        (vec!["report".into()], "use crate::{clusters::Cluster, Capability};".to_owned()),
        (vec!["clusters".into()], "use crate::Outcome;".to_owned()),
    ]
    .into_iter()
    .collect();
    let found = circles(&files);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].starts_with("clusters -> report (report::Outcome)"), "{found:?}");
    assert!(found[1].starts_with("harness -> outputs"), "{found:?}");
}
