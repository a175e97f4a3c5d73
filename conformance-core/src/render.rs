//! The terminal report, in the spirit of the upstream kit's `print_report()`: a base section,
//! an extended section, failures, and `Result: LEVEL (passed/detected)`.

use std::fmt::Write;

use owo_colors::{OwoColorize, Stream};

use crate::report::{CapabilityResult, CapabilityStatus, Level, Outcome, Report};
use crate::Capability;

const BORDER: &str = "====================================================";

/// Renders `report` for a terminal. Colour is used only when stdout supports it and
/// `NO_COLOR` is unset (owo-colors' `supports-colors`).
pub fn render_terminal(report: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "\n  {BORDER}");
    let _ = writeln!(s, "    Checkpointer Validation: {}", report.checkpointer_name);
    let _ = writeln!(s, "  {BORDER}");
    if let Some(e) = &report.setup_error {
        let _ = writeln!(s, "    {}", format!("Run not started: {e}").if_supports_color(Stream::Stdout, |t| t.red()));
    }
    for (title, base) in [("BASE CAPABILITIES", true), ("EXTENDED CAPABILITIES", false)] {
        let _ = writeln!(s, "    {title}");
        for (cap, r) in report.results.iter().filter(|(c, _)| c.is_base() == base) {
            let _ = writeln!(s, "      {}", row(*cap, r, report));
        }
        let _ = writeln!(s);
    }
    let failed: Vec<_> = report.tests.iter().filter(|t| t.outcome == Outcome::Failed).collect();
    if !failed.is_empty() {
        let _ = writeln!(s, "    FAILURES");
        for t in failed {
            let _ = writeln!(s, "      {} {}", "✗".if_supports_color(Stream::Stdout, |x| x.red()), t.id);
            for line in t.message.as_deref().unwrap_or("").lines() {
                let _ = writeln!(s, "          {line}");
            }
        }
        let _ = writeln!(s);
    }
    for w in &report.warnings {
        let _ = writeln!(s, "    {} {w}", "warning:".if_supports_color(Stream::Stdout, |x| x.yellow()));
    }
    let (p, f, k) = report.case_counts();
    let _ = writeln!(s, "    Tests: {p} passed, {f} failed, {k} not run  ({:.0} ms)", report.duration_ms);
    let level =
        format!("{} ({}/{})", report.conformance_level, report.capabilities_passed, report.capabilities_detected);
    let level = match report.conformance_level {
        Level::Full => level.if_supports_color(Stream::Stdout, |t| t.green()).to_string(),
        Level::BasePartial | Level::Base => level.if_supports_color(Stream::Stdout, |t| t.yellow()).to_string(),
        Level::None => level.if_supports_color(Stream::Stdout, |t| t.red()).to_string(),
    };
    let _ = writeln!(s, "    Result: {level}");
    let _ = writeln!(s, "  {BORDER}");
    s
}

fn row(cap: Capability, r: &CapabilityResult, report: &Report) -> String {
    let name = format!("{:<22}", cap.name());
    let total = r.tests_passed + r.tests_failed;
    let facts: Vec<String> = report
        .facts
        .iter()
        .filter_map(|(k, v)| k.strip_prefix(&format!("{}.", cap.name())).map(|k| format!("{k}: {v}")))
        .collect();
    let facts = if facts.is_empty() { String::new() } else { format!(", {}", facts.join(", ")) };
    match r.status {
        CapabilityStatus::Passed => format!(
            "{} {name} {}",
            "✅".if_supports_color(Stream::Stdout, |t| t.green()),
            format!("({}/{} passed{facts})", r.tests_passed, total)
        ),
        CapabilityStatus::Failed => format!(
            "{} {name} {}",
            "❌".if_supports_color(Stream::Stdout, |t| t.red()),
            format!("({} failed, {}/{} passed)", r.tests_failed, r.tests_passed, total)
                .if_supports_color(Stream::Stdout, |t| t.red())
        ),
        CapabilityStatus::NotImplemented => format!("⊘  {name} (not implemented)"),
        CapabilityStatus::Skipped => {
            format!("⏭  {name} (skipped: {})", r.skip_reason.as_deref().unwrap_or("no reason given"))
        }
        CapabilityStatus::NotSelected => format!("   {name} (not selected)"),
    }
}
