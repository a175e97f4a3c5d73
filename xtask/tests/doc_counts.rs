//! Issue 14: the case counts the docs show are the catalog's own. The README's sample
//! output (one `(passed/total passed)` per capability and the `Tests:` total) and the trial
//! count of the sample line in docs/using-the-kit.md are checked against
//! `conformance_spec::catalog()`; the README's mutant count and kill rate against the
//! self-test's catalog (`conformance_selftest::MUTANTS`, every one of which the self-test
//! requires to be killed). Dated measurements (the README's bench table, the verdicts
//! in docs/langgraph-savers.md) keep the catalog size of the run they were taken from.
//!
//! `UPDATE_COUNTS=1 cargo test -p xtask --test doc_counts` writes the catalog's counts into
//! those places instead of checking them (a new case or mutant costs no hand edit of the
//! docs; CONTRIBUTING.md).

use std::collections::BTreeMap;
use std::path::Path;

fn read(rel: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel)).unwrap()
}

fn counts() -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for c in conformance_spec::catalog() {
        *m.entry(c.capability.to_string()).or_default() += 1;
    }
    m
}

/// `text` with the number that follows each `before` (and precedes `after`) set to `n`; a
/// space at the end of `before` stands for any run of whitespace (a sentence may wrap).
fn set_number(text: &str, before: &str, after: &str, n: usize) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let key = before.trim_end();
    while let Some(i) = rest.find(key) {
        let mut at = i + key.len();
        if key.len() < before.len() {
            at += rest[at..].len() - rest[at..].trim_start().len();
        }
        let (head, tail) = rest.split_at(at);
        out.push_str(head);
        let digits = tail.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 && tail[digits..].starts_with(after) {
            out.push_str(&n.to_string());
            rest = &tail[digits..];
        } else {
            rest = tail;
        }
    }
    out.push_str(rest);
    out
}

/// Writes the catalog's counts into README.md and docs/using-the-kit.md (UPDATE_COUNTS=1).
fn update(counts: &BTreeMap<String, usize>, total: usize, mutants: usize) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut readme = String::new();
    for line in read("README.md").split_inclusive('\n') {
        let cap = line.trim_start().strip_prefix("✅ ").and_then(|r| r.split_whitespace().next());
        match cap.and_then(|c| counts.get(c)) {
            Some(&n) if line.contains(" passed)") => {
                let open = line.find('(').unwrap_or(0);
                let close = line[open..].find(" passed").map_or(line.len(), |i| open + i);
                readme.push_str(&format!("{}({n}/{n}{}", &line[..open], &line[close..]));
            }
            _ => readme.push_str(line),
        }
    }
    let readme = set_number(&readme, "Tests: ", " passed, 0 failed, 0 not run", total);
    let readme = set_number(&readme, "a catalog of **", " mutants**", mutants);
    let readme = set_number(&readme, "**Kill rate: ", "/", mutants);
    let readme = set_number(&readme, &format!("Kill rate: {mutants}/"), " (100%)", mutants);
    let readme = set_number(&readme, &format!("Kill rate:\n{mutants}/"), " (100%)", mutants);
    std::fs::write(root.join("README.md"), readme).unwrap();
    let guide = set_number(&read("docs/using-the-kit.md"), "my-saver::prune (", " trials)", counts["prune"]);
    std::fs::write(root.join("docs/using-the-kit.md"), guide).unwrap();
}

#[test]
fn every_count_in_the_docs_is_the_catalogs() {
    let counts = counts();
    let total: usize = counts.values().sum();
    if std::env::var_os("UPDATE_COUNTS").is_some() {
        update(&counts, total, conformance_selftest::MUTANTS.len());
    }
    let mut wrong = Vec::new();
    let readme = read("README.md");
    let mut seen = 0;
    for line in readme.lines() {
        // `      ✅ put                    (28/28 passed)`
        let Some(rest) = line.trim_start().strip_prefix("✅ ") else { continue };
        let mut words = rest.split_whitespace();
        let (Some(cap), Some(figure)) = (words.next(), words.next()) else { continue };
        let Some(n) = figure.strip_prefix('(').and_then(|f| f.split('/').next()).and_then(|n| n.parse::<usize>().ok())
        else {
            continue;
        };
        seen += 1;
        let want = counts.get(cap).copied().unwrap_or(0);
        if n != want || !rest.contains(&format!("({want}/{want} passed")) {
            wrong.push(format!("README.md: {cap} shows {figure}, the catalog has {want}"));
        }
    }
    assert_eq!(seen, counts.len(), "README.md's sample output should list every capability");
    let mutants = conformance_selftest::MUTANTS.len();
    for (file, needle) in [
        ("README.md", format!("Tests: {total} passed")),
        ("README.md", format!("a catalog of **{mutants} mutants**")),
        ("README.md", format!("**Kill rate: {mutants}/{mutants} (100%).**")),
        ("docs/using-the-kit.md", format!("my-saver::prune ({} trials)", counts["prune"])),
    ] {
        // Words as the reader sees them: a sentence may wrap anywhere.
        let text = read(file).split_whitespace().collect::<Vec<_>>().join(" ");
        if !text.contains(&needle) {
            wrong.push(format!("{file}: expected `{needle}`"));
        }
    }
    assert!(wrong.is_empty(), "stale counts:\n{}", wrong.join("\n"));
}
