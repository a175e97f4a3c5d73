//! Issue 14: the case counts the docs show are the catalog's own. The README's sample
//! output (one row `(passed/total passed)` per capability, the progress dots, the `Tests:`
//! total and `Result: FULL (n/n)`) and the trial count of the sample line in
//! docs/using-the-kit.md are checked against `conformance_spec::catalog()`; the README's
//! mutant count and kill rate against the self-test's catalog
//! (`conformance_selftest::MUTANTS`, every one of which the self-test requires to be
//! killed). Dated measurements (the README's bench table, the verdicts in
//! docs/langgraph-savers.md) keep the catalog size of the run they were taken from.
//!
//! `UPDATE_COUNTS=1 cargo test -p xtask --test doc_counts` writes the catalog's counts into
//! those places instead of checking them, and the sample's row of a new capability (issue
//! 39: a new case, mutant or capability costs no hand edit of these docs; CONTRIBUTING.md).

use std::collections::BTreeMap;
use std::path::Path;

use conformance_core::Capability;

const UPDATE: &str = "UPDATE_COUNTS=1 cargo test -p xtask --test doc_counts";

fn read(rel: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel)).unwrap()
}

/// The catalog's cases per capability, in run order (`Capability`'s order).
fn counts() -> BTreeMap<Capability, usize> {
    let mut m = BTreeMap::new();
    for c in conformance_spec::catalog() {
        *m.entry(c.capability).or_default() += 1;
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

/// The capability a row of the sample report shows (`      ✅ put     (38/38 passed)`).
fn row_capability(line: &str) -> Option<&str> {
    line.trim_start().strip_prefix("✅ ").and_then(|r| r.split_whitespace().next())
}

/// `line`, a row of the sample report, showing `n` of `n` cases passed (its facts, like
/// durability's seed, kept).
fn row_with_count(line: &str, n: usize) -> String {
    let open = line.find('(').unwrap_or(0);
    let close = line[open..].find(" passed").map_or(line.len(), |i| open + i);
    format!("{}({n}/{n}{}", &line[..open], &line[close..])
}

/// The capability of a progress line of the sample (`  put: .....`), one dot a case.
fn progress_capability(line: &str) -> Option<&str> {
    let (name, dots) = line.strip_prefix("  ")?.trim_end().split_once(": ")?;
    let word = !name.is_empty() && name.chars().all(|c| c.is_ascii_lowercase() || c == '_');
    (word && !dots.is_empty() && dots.chars().all(|c| c == '.')).then_some(name)
}

/// `line` with the figure of `Result: FULL (n/n)` set to `n`, when it is that line.
fn result_line(line: &str, n: usize) -> Option<String> {
    let (lead, rest) = line.split_once("Result: FULL (")?;
    let (figure, tail) = rest.split_once(')')?;
    let numbers = figure.split('/').all(|d| !d.is_empty() && d.chars().all(|c| c.is_ascii_digit()));
    (lead.trim().is_empty() && tail.trim().is_empty() && numbers).then(|| format!("{lead}Result: FULL ({n}/{n}){tail}"))
}

/// `readme` with its sample report made the catalog's (`counts`): under `BASE CAPABILITIES`
/// and `EXTENDED CAPABILITIES`, one row per capability of the catalog in the order
/// `render_terminal` gives (each section in `Capability`'s order), an existing row with its
/// count set, a missing one written in the columns of the others, the row of a capability
/// the catalog lacks dropped; the progress lines (all of them, or the first and the last
/// around an abridging `  ...`) and `Result: FULL (n/n)` likewise.
fn sample(readme: &str, counts: &BTreeMap<Capability, usize>) -> String {
    let lines: Vec<&str> = readme.split_inclusive('\n').collect();
    // The indent before the mark and the name's width (the renderer's `{:<22}`), as the
    // rows have them.
    let (indent, width) = lines.iter().find(|l| row_capability(l).is_some()).map_or(("      ", 22), |l| {
        let mark = l.find('✅').unwrap_or(0);
        let name = mark + "✅ ".len();
        (&l[..mark], l.find('(').map_or(22, |open| open.saturating_sub(name + 1)))
    });
    let progress = |cap: Capability| format!("  {cap}: {}\n", ".".repeat(counts[&cap]));
    // The progress lines are those of the code block that holds the report, above it.
    let report = lines.iter().position(|l| l.trim() == "BASE CAPABILITIES").unwrap_or(0);
    let block = lines[..report].iter().rposition(|l| l.starts_with("```")).unwrap_or(report);
    let mut out = String::with_capacity(readme.len());
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        if (block..report).contains(&(i - 1)) && progress_capability(line).is_some() {
            let start = i - 1;
            while i < lines.len() && (progress_capability(lines[i]).is_some() || lines[i].trim_end() == "  ...") {
                i += 1;
            }
            let caps: Vec<Capability> = counts.keys().copied().collect();
            let abridged = lines[start..i].iter().any(|l| l.trim_end() == "  ...");
            match (caps.first(), caps.last()) {
                (Some(&first), Some(&last)) if abridged && caps.len() > 2 => {
                    out.push_str(&progress(first));
                    out.push_str("  ...\n");
                    out.push_str(&progress(last));
                }
                _ => caps.iter().for_each(|&c| out.push_str(&progress(c))),
            }
            continue;
        }
        if let Some(result) = result_line(line, counts.len()) {
            out.push_str(&result);
            continue;
        }
        let trimmed = line.trim();
        out.push_str(line);
        let base = match trimmed {
            "BASE CAPABILITIES" => true,
            "EXTENDED CAPABILITIES" => false,
            _ => continue,
        };
        let mut rows = BTreeMap::new();
        while let Some(cap) = lines.get(i).and_then(|l| row_capability(l)) {
            rows.insert(cap, lines[i]);
            i += 1;
        }
        for (cap, &n) in counts.iter().filter(|(c, _)| c.is_base() == base) {
            out.push_str(&match rows.get(cap.name()) {
                Some(row) => row_with_count(row, n),
                None => format!("{indent}✅ {:<width$} ({n}/{n} passed)\n", cap.name()),
            });
        }
    }
    out
}

/// README.md with the catalog's counts: its sample report ([`sample`]), the `Tests:` total,
/// the mutant count and the kill rate.
fn readme_with(readme: &str, counts: &BTreeMap<Capability, usize>, mutants: usize) -> String {
    let total = counts.values().sum();
    let readme = sample(readme, counts);
    let readme = set_number(&readme, "Tests: ", " passed, 0 failed, 0 not run", total);
    let readme = set_number(&readme, "a catalog of **", " mutants**", mutants);
    let readme = set_number(&readme, "**Kill rate: ", "/", mutants);
    let readme = set_number(&readme, &format!("Kill rate: {mutants}/"), " (100%)", mutants);
    set_number(&readme, &format!("Kill rate:\n{mutants}/"), " (100%)", mutants)
}

/// docs/using-the-kit.md with the catalog's count of `prune` trials.
fn guide_with(guide: &str, counts: &BTreeMap<Capability, usize>) -> String {
    set_number(guide, "my-saver::prune (", " trials)", counts[&Capability::Prune])
}

/// Writes the catalog's counts into README.md and docs/using-the-kit.md (UPDATE_COUNTS=1),
/// each file whole by a rename: the other tests read README.md meanwhile.
fn update(counts: &BTreeMap<Capability, usize>, mutants: usize) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let write = |rel: &str, text: String| {
        let new = root.join(format!("{rel}.doc_counts"));
        std::fs::write(&new, text).unwrap();
        std::fs::rename(new, root.join(rel)).unwrap();
    };
    write("README.md", readme_with(&read("README.md"), counts, mutants));
    write("docs/using-the-kit.md", guide_with(&read("docs/using-the-kit.md"), counts));
}

#[test]
fn every_count_in_the_docs_is_the_catalogs() {
    let counts = counts();
    let total: usize = counts.values().sum();
    let mutants = conformance_selftest::MUTANTS.len();
    if std::env::var_os("UPDATE_COUNTS").is_some() {
        update(&counts, mutants);
    }
    let mut wrong = Vec::new();
    let readme = read("README.md");
    let mut shown = Vec::new();
    for line in readme.lines() {
        let Some(cap) = row_capability(line) else { continue };
        shown.push(cap);
        let want = Capability::ALL.iter().find(|c| c.name() == cap).and_then(|c| counts.get(c)).copied().unwrap_or(0);
        if !line.contains(&format!("({want}/{want} passed")) {
            wrong.push(format!("README.md: {cap} shows `{}`, the catalog has {want} cases", line.trim()));
        }
    }
    let catalog: Vec<&str> = counts.keys().map(|c| c.name()).collect();
    let missing: Vec<&str> = catalog.iter().copied().filter(|c| !shown.contains(c)).collect();
    let extra: Vec<&str> = shown.iter().copied().filter(|c| !catalog.contains(c)).collect();
    if !missing.is_empty() {
        wrong.push(format!("README.md's sample output has no row for {missing:?} of the catalog"));
    }
    if !extra.is_empty() {
        wrong.push(format!("README.md's sample output has rows for {extra:?}, which the catalog does not have"));
    }
    if missing.is_empty() && extra.is_empty() && shown != catalog {
        wrong.push(format!(
            "README.md's sample output shows its rows in the order {shown:?}, the report's is {catalog:?}"
        ));
    }
    for (file, needle) in [
        ("README.md", format!("Tests: {total} passed")),
        ("README.md", format!("Result: FULL ({0}/{0})", counts.len())),
        ("README.md", format!("a catalog of **{mutants} mutants**")),
        ("README.md", format!("**Kill rate: {mutants}/{mutants} (100%).**")),
        ("docs/using-the-kit.md", format!("my-saver::prune ({} trials)", counts[&Capability::Prune])),
    ] {
        // Words as the reader sees them: a sentence may wrap anywhere.
        let text = read(file).split_whitespace().collect::<Vec<_>>().join(" ");
        if !text.contains(&needle) {
            wrong.push(format!("{file}: expected `{needle}`"));
        }
    }
    // Anything else the update would change (the progress dots, a row's place).
    let want = readme_with(&readme, &counts, mutants);
    if want != readme {
        let same = readme.lines().zip(want.lines()).take_while(|(a, b)| a == b).count();
        let line = |text: &str| text.lines().nth(same).unwrap_or("").to_owned();
        wrong.push(format!("README.md line {}: `{}`, the catalog gives `{}`", same + 1, line(&readme), line(&want)));
    }
    assert!(wrong.is_empty(), "stale counts (`{UPDATE}` writes them):\n{}", wrong.join("\n"));
}

/// A catalog of the capabilities [`SAMPLE`] shows, with the counts it shows: read from its
/// rows, so that a capability added to the kit changes neither.
fn sample_counts() -> BTreeMap<Capability, usize> {
    SAMPLE
        .lines()
        .filter_map(|l| {
            let cap = Capability::ALL.iter().copied().find(|c| Some(c.name()) == row_capability(l))?;
            let n = l.split_once('(')?.1.split_once('/')?.0.parse().ok()?;
            Some((cap, n))
        })
        .collect()
}

const SAMPLE: &str = "\
```
  put: .
  ...
  traces: ............

  ====================================================
    Checkpointer Validation: sqlite
  ====================================================
    BASE CAPABILITIES
      ✅ put                    (1/1 passed)
      ✅ put_writes             (2/2 passed)
      ✅ get_tuple              (3/3 passed)
      ✅ list                   (4/4 passed)
      ✅ delete_thread          (5/5 passed)

    EXTENDED CAPABILITIES
      ✅ delete_for_runs        (6/6 passed)
      ✅ copy_thread            (7/7 passed)
      ✅ prune                  (8/8 passed)
      ✅ delta_channel_history  (9/9 passed)
      ✅ concurrency            (10/10 passed)
      ✅ durability             (11/11 passed, acknowledged: 244, kills: 6, seed: \"5\")
      ✅ traces                 (12/12 passed)

    Tests: 78 passed, 0 failed, 0 not run  (4916 ms)
    Result: FULL (12/12)
  ====================================================
```
";

/// `text` without the sample report's row of `cap`.
fn without_row(text: &str, cap: Capability) -> String {
    text.split_inclusive('\n').filter(|l| row_capability(l) != Some(cap.name())).collect()
}

#[test]
fn the_update_writes_the_row_of_a_capability_the_sample_lacks() {
    let counts = sample_counts();
    assert_eq!(counts.len(), 12, "every row of the sample is read");
    assert_eq!(readme_with(SAMPLE, &counts, 0), SAMPLE);
    // Durability's row has facts of the run that a written row cannot have.
    for &cap in counts.keys().filter(|&&c| c != Capability::Durability) {
        let lacking = without_row(SAMPLE, cap);
        assert_ne!(lacking, SAMPLE);
        assert_eq!(readme_with(&lacking, &counts, 0), SAMPLE, "{cap}'s row");
    }
    // The README's own sample, with its own layout and counts.
    let (counts, mutants) = (self::counts(), conformance_selftest::MUTANTS.len());
    let readme = readme_with(&read("README.md"), &counts, mutants);
    let lacking = without_row(&readme, Capability::CopyThread);
    assert_ne!(lacking, readme);
    assert_eq!(readme_with(&lacking, &counts, mutants), readme);
}

#[test]
fn the_update_drops_the_row_of_a_capability_the_catalog_lacks() {
    let mut counts = sample_counts();
    counts.remove(&Capability::Traces);
    counts.remove(&Capability::CopyThread);
    let want = SAMPLE
        .replace("  traces: ............\n", "  durability: ...........\n")
        .replace("      ✅ traces                 (12/12 passed)\n", "")
        .replace("      ✅ copy_thread            (7/7 passed)\n", "")
        .replace("Tests: 78", "Tests: 59")
        .replace("FULL (12/12)", "FULL (10/10)");
    assert_eq!(readme_with(SAMPLE, &counts, 0), want);
}
