//! The repository's documentation points only at files that are in the repository.
//!
//! Two checks, over README.md, CONTRIBUTING.md (when present), docs/**/*.md and every other
//! markdown file outside build output:
//! - every relative markdown link (`[text](path)`, `[text](path#anchor)`, `[id]: path`)
//!   names a file or directory that exists, resolved from the linking file's directory;
//! - no markdown file and no Rust source names the team's out-of-repository `shared/`
//!   directory (the team's contract and reference notes): its in-repository
//!   counterparts are docs/contract.md and docs/reference/.

use std::fs;
use std::path::{Path, PathBuf};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask sits in the workspace").to_path_buf()
}

/// Directories that hold no sources of ours: build output, VCS data, installed packages.
fn skipped_dir(name: &str) -> bool {
    name.starts_with('.') || matches!(name, "target" | "node_modules" | "__pycache__" | "venv")
}

/// Every file under `dir` (recursively, skipping [`skipped_dir`]) whose name ends in `ext`.
fn files_with_ext(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if !skipped_dir(&name) {
                files_with_ext(&path, ext, out);
            }
        } else if name.ends_with(ext) {
            out.push(path);
        }
    }
}

/// `text` without fenced code blocks and inline code spans (links there are examples).
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fenced = !fenced;
            out.push('\n');
            continue;
        }
        if fenced {
            out.push('\n');
            continue;
        }
        let mut in_code = false;
        for c in line.chars() {
            if c == '`' {
                in_code = !in_code;
            } else if !in_code {
                out.push(c);
            }
        }
        out.push('\n');
    }
    out
}

/// The targets of the inline links (`](target)`) and reference definitions (`[id]: target`)
/// in `text`, each with its 1-based line.
fn link_targets(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (i, line) in prose(text).lines().enumerate() {
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let end = after.find(')').unwrap_or(after.len());
            let target = after[..end].split_whitespace().next().unwrap_or("");
            found.push((i + 1, target.trim_matches(['<', '>']).to_string()));
            rest = &after[end..];
        }
        let t = line.trim_start();
        if t.starts_with('[') {
            if let Some(close) = t.find("]:") {
                let target = t[close + 2..].split_whitespace().next().unwrap_or("");
                found.push((i + 1, target.to_string()));
            }
        }
    }
    found
}

/// Whether `target` leaves the repository's files (a URL, a mail address) or stays in the
/// linking page (a bare `#anchor`).
fn external_or_same_page(target: &str) -> bool {
    target.is_empty() || target.starts_with('#') || target.contains("://") || target.starts_with("mailto:")
}

/// Every relative link of every markdown file that names no existing path, as
/// `file:line: target`.
fn broken_links(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    files_with_ext(root, ".md", &mut files);
    files.sort();
    assert!(files.iter().any(|f| f.ends_with("README.md")), "README.md found under {}", root.display());
    let mut broken = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).expect("a markdown file reads as UTF-8");
        let dir = file.parent().expect("a file has a directory");
        for (line, target) in link_targets(&text) {
            if external_or_same_page(&target) {
                continue;
            }
            let file_part = target.split('#').next().unwrap_or("");
            let resolved =
                if let Some(abs) = file_part.strip_prefix('/') { root.join(abs) } else { dir.join(file_part) };
            if !resolved.exists() {
                let shown = file.strip_prefix(root).unwrap_or(file);
                broken.push(format!("{}:{line}: {target}", shown.display()));
            }
        }
    }
    broken
}

#[test]
fn every_relative_markdown_link_resolves() {
    let broken = broken_links(&repo_root());
    assert!(broken.is_empty(), "{} link(s) name no file in the repository:\n{}", broken.len(), broken.join("\n"));
}

#[test]
fn nothing_names_the_out_of_repository_shared_directory() {
    let root = repo_root();
    let mut files = Vec::new();
    files_with_ext(&root, ".md", &mut files);
    files_with_ext(&root, ".rs", &mut files);
    files.sort();
    let mut found = Vec::new();
    for file in &files {
        let Ok(text) = fs::read_to_string(file) else { continue };
        for (i, line) in text.lines().enumerate() {
            // The needle is split so that this file does not name it itself.
            if line.contains(concat!("shared", "/CONTRACT")) || line.contains(concat!("shared", "/reference")) {
                let shown = file.strip_prefix(&root).unwrap_or(file);
                found.push(format!("{}:{}: {}", shown.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "{} place(s) name files outside the repository (use docs/contract.md, docs/reference/):\n{}",
        found.len(),
        found.join("\n")
    );
}

#[test]
fn the_link_scanner_sees_inline_reference_and_anchored_links_but_not_code() {
    let text = "see [a](x.md) and [b](y.md#sec \"title\")\n[c]: z.md\n`[d](code.md)`\n```\n[e](fenced.md)\n```\n";
    let got: Vec<String> = link_targets(text).into_iter().map(|(_, t)| t).collect();
    assert_eq!(got, ["x.md", "y.md#sec", "z.md"]);
    assert!(external_or_same_page("https://no-color.org/") && external_or_same_page("#top"));
    assert!(!external_or_same_page("../shared/x.md"));
}

#[test]
fn a_missing_link_target_is_reported() {
    let dir = tempfile::tempdir().expect("a temp dir");
    fs::write(dir.path().join("README.md"), "[ok](docs/a.md#x) [gone](../shared/b.md)\n").unwrap();
    fs::create_dir(dir.path().join("docs")).unwrap();
    fs::write(dir.path().join("docs/a.md"), "[up](../README.md)\n").unwrap();
    assert_eq!(broken_links(dir.path()), ["README.md:1: ../shared/b.md"]);
}
