//! Issue 14: the case counts the docs show are the catalog's own. The README's sample
//! output (one `(passed/total passed)` per capability and the `Tests:` total) and the trial
//! count of the sample line in docs/using-the-kit.md are checked against
//! `conformance_spec::catalog()`; the README's mutant count and kill rate against the
//! self-test's catalog (`conformance_selftest::MUTANTS`, every one of which the self-test
//! requires to be killed). Dated measurements (the README's bench table, the verdicts
//! in docs/langgraph-savers.md) keep the catalog size of the run they were taken from.

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

#[test]
fn every_count_in_the_docs_is_the_catalogs() {
    let counts = counts();
    let total: usize = counts.values().sum();
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
