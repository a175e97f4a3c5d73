//! The markdown summary (GitHub-flavoured): a headline with the level, an overview table of
//! the capabilities, then a table of cases per capability, folded with `<details>` (open
//! when the capability failed). Written for `$GITHUB_STEP_SUMMARY`.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;

use crate::report::{CapabilityResult, CapabilityStatus, Outcome, Report};

/// The environment variable GitHub Actions sets to the step summary file.
pub const STEP_SUMMARY_ENV: &str = "GITHUB_STEP_SUMMARY";

/// Renders `report` as a markdown summary: `## Checkpointer conformance: {name}`, the
/// level line, an overview table (capability, kind, status, passed, failed, not run, time)
/// and, for each capability with cases, a table `case | outcome | message`. Cell text is
/// escaped (`|`, `<`, `>`, `&`; newlines become `<br>`), so failure messages cannot break
/// the table.
pub fn render_markdown(report: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "## Checkpointer conformance: {}\n", cell(&report.checkpointer_name));
    let (p, f, k) = report.case_counts();
    let n = report.not_strict_count();
    // CONTRACT §5: the level is on MUST rules; the strict level counts SHOULD rules too.
    let on = if report.strict {
        " (--strict: MUST and SHOULD rules)".to_owned()
    } else {
        format!(" on MUST rules; {} counting SHOULD rules (--strict)", report.strict_level())
    };
    let _ = writeln!(
        s,
        "**Result: {} ({}/{})**{on} · {p} passed, {n} passed not strict, {f} failed, {k} not run · {:.0} ms\n",
        report.conformance_level, report.capabilities_passed, report.capabilities_detected, report.duration_ms
    );
    if let Some(e) = &report.setup_error {
        let _ = writeln!(s, "> **Run not started:** {}\n", cell(e));
    }
    for w in &report.warnings {
        let _ = writeln!(s, "> **Warning:** {}\n", cell(w));
    }
    let _ = writeln!(s, "| capability | kind | status | passed | not strict | failed | not run | time |");
    let _ = writeln!(s, "|---|---|---|---:|---:|---:|---:|---:|");
    for (cap, r) in &report.results {
        let kind = if cap.is_base() { "base" } else { "extended" };
        let _ = writeln!(
            s,
            "| `{cap}` | {kind} | {} | {} | {} | {} | {} | {:.0} ms |",
            status_cell(r),
            r.tests_passed,
            r.tests_not_strict,
            r.tests_failed,
            r.tests_skipped,
            r.duration_ms
        );
    }
    let _ = writeln!(s);
    for (cap, r) in &report.results {
        let cases: Vec<_> = report.tests.iter().filter(|t| t.capability == *cap).collect();
        if cases.is_empty() {
            continue;
        }
        let open = if r.status == CapabilityStatus::Failed { " open" } else { "" };
        let counts = match r.status {
            CapabilityStatus::Passed | CapabilityStatus::Failed | CapabilityStatus::Incomplete => {
                let mut c =
                    format!("{}/{} passed", r.tests_passed, r.tests_passed + r.tests_failed + r.tests_not_strict);
                if r.tests_not_strict > 0 {
                    c.push_str(&format!(", {} not strict", r.tests_not_strict));
                }
                c
            }
            _ => format!("{} not run", r.tests_skipped),
        };
        let _ = writeln!(s, "<details{open}><summary><code>{cap}</code>: {} ({counts})</summary>\n", status_cell(r));
        let _ = writeln!(s, "| case | outcome | message |");
        let _ = writeln!(s, "|---|---|---|");
        for t in cases {
            let outcome = match t.outcome {
                Outcome::Passed => "✅ passed",
                Outcome::NotStrict => "☑️ passed, not strict (SHOULD)",
                Outcome::Failed => "❌ failed",
                Outcome::Skipped => "⏭ skipped",
                Outcome::NotImplemented => "⊘ not implemented",
                Outcome::NotRun => "◌ not run",
            };
            let _ = writeln!(s, "| `{}` | {outcome} | {} |", t.name, cell(t.message.as_deref().unwrap_or("")));
        }
        let _ = writeln!(s, "\n</details>\n");
    }
    s
}

/// Appends [`render_markdown`] to the file named by `$GITHUB_STEP_SUMMARY`, if set and
/// non-empty.
///
/// # Errors
/// The I/O error of opening or writing the file; `Ok(None)` when the variable is unset,
/// `Ok(Some(path))` when the summary was written.
pub fn append_step_summary(report: &Report) -> std::io::Result<Option<PathBuf>> {
    let Some(path) = std::env::var_os(STEP_SUMMARY_ENV).filter(|p| !p.is_empty()) else { return Ok(None) };
    let path = PathBuf::from(path);
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(&path)?;
    f.write_all(render_markdown(report).as_bytes())?;
    Ok(Some(path))
}

fn status_cell(r: &CapabilityResult) -> String {
    match r.status {
        CapabilityStatus::NoCases => "no cases".into(),
        CapabilityStatus::Passed => "✅ passed".into(),
        CapabilityStatus::Failed => "❌ failed".into(),
        CapabilityStatus::Incomplete => "◐ incomplete".into(),
        CapabilityStatus::NotImplemented => "⊘ not implemented".into(),
        CapabilityStatus::Skipped => {
            format!("⏭ skipped: {}", cell(r.skip_reason.as_deref().unwrap_or("no reason given")))
        }
        CapabilityStatus::NotSelected => "not selected".into(),
    }
}

/// Escapes text for a table cell.
fn cell(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.trim_end().chars() {
        match ch {
            '|' => out.push_str("\\|"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\n' => out.push_str("<br>"),
            '\r' => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::test_support::sample_report;

    #[test]
    fn cells_cannot_break_the_table() {
        assert_eq!(cell("a | b\n<c> & d\n"), "a \\| b<br>&lt;c&gt; &amp; d");
    }

    #[test]
    fn one_row_per_case_and_per_capability() {
        let report = sample_report();
        let md = render_markdown(&report);
        for t in &report.tests {
            assert_eq!(md.matches(&format!("| `{}` |", t.name)).count(), 1, "{}", t.id);
        }
        for cap in report.results.keys() {
            assert!(md.contains(&format!("| `{cap}` |")), "{cap}");
        }
        assert!(md.contains("<details open><summary><code>put_writes</code>"), "a failed capability is unfolded");
    }

    #[test]
    fn snapshot() {
        insta::assert_snapshot!(render_markdown(&sample_report()));
    }
}
