//! Progress while a run goes: dots (the upstream default), verbose lines, or nothing.
//! Written to stdout, coloured only when stdout supports it and `NO_COLOR` is unset or empty.

use std::io::Write;

use owo_colors::{OwoColorize, Stream};

use super::Planned;
use crate::report::{CaseResult, Outcome};
use crate::Capability;

/// The progress style.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Progress {
    /// `  put: .....F..` one line per capability (`~` passed, not strict; `-` not run).
    Dots,
    /// One line per case, `✓ name` or `✗ name` with the message below.
    Verbose,
    /// Nothing.
    #[default]
    Quiet,
}

impl std::str::FromStr for Progress {
    type Err = String;

    /// `dots`, `verbose` or `quiet`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "dots" => Ok(Self::Dots),
            "verbose" => Ok(Self::Verbose),
            "quiet" => Ok(Self::Quiet),
            other => Err(format!("unknown progress style `{other}`; valid styles are: dots, verbose, quiet")),
        }
    }
}

impl Progress {
    pub(crate) fn capability_start(&self, cap: Capability, planned: &Planned) {
        if *self == Self::Quiet {
            return;
        }
        let mut out = std::io::stdout().lock();
        match planned {
            Planned::Run => {
                if *self == Self::Dots {
                    let _ = write!(out, "  {cap}: ");
                } else {
                    let _ = writeln!(out, "  {cap}:");
                }
            }
            Planned::NotImplemented if cap.is_base() => {
                let _ = writeln!(out, "  ⊘ {cap} (not implemented: a base capability, its cases fail)");
            }
            Planned::NotImplemented => {
                let _ = writeln!(out, "  ⊘ {cap} (not implemented)");
            }
            Planned::Skipped(reason) => {
                let _ = writeln!(out, "  ⏭ {cap} (skipped: {reason})");
            }
            Planned::Needs(need) => {
                let _ = writeln!(out, "  ◌ {cap} (not run: needs {need}, not implemented)");
            }
            Planned::NeedsSkipped(need, reason) => {
                let _ = writeln!(out, "  ◌ {cap} (not run: needs {need}, skipped: {reason})");
            }
            Planned::NotSelected => {}
        }
        let _ = out.flush();
    }

    pub(crate) fn case_done(&self, r: &CaseResult) {
        crate::render::colour::init();
        let mut out = std::io::stdout().lock();
        let ok = r.outcome == Outcome::Passed;
        match self {
            Self::Quiet => return,
            Self::Dots => {
                if ok {
                    let _ = write!(out, "{}", ".".if_supports_color(Stream::Stdout, |t| t.green()));
                } else if r.outcome == Outcome::NotRun {
                    // Not run (a need found missing at run time): neither passed nor failed.
                    let _ = write!(out, "{}", "-".if_supports_color(Stream::Stdout, |t| t.yellow()));
                } else if r.outcome == Outcome::NotStrict {
                    // Passed, not strict: a SHOULD rule failed.
                    let _ = write!(out, "{}", "~".if_supports_color(Stream::Stdout, |t| t.yellow()));
                } else {
                    let _ = write!(out, "{}", "F".if_supports_color(Stream::Stdout, |t| t.red()));
                }
            }
            Self::Verbose => {
                if ok {
                    let _ = writeln!(out, "    {} {}", "✓".if_supports_color(Stream::Stdout, |t| t.green()), r.name);
                } else if r.outcome == Outcome::NotStrict {
                    let why = r.message.as_deref().unwrap_or("").lines().next().unwrap_or_default();
                    let _ = writeln!(
                        out,
                        "    {} {} (passed, not strict: a SHOULD rule: {why})",
                        "~".if_supports_color(Stream::Stdout, |t| t.yellow()),
                        r.name
                    );
                } else if r.outcome == Outcome::NotRun {
                    let why = r.message.as_deref().unwrap_or("not run");
                    let _ = writeln!(
                        out,
                        "    {} {} ({why})",
                        "◌".if_supports_color(Stream::Stdout, |t| t.yellow()),
                        r.name
                    );
                } else {
                    let _ = writeln!(out, "    {} {}", "✗".if_supports_color(Stream::Stdout, |t| t.red()), r.name);
                    for line in r.message.as_deref().unwrap_or("").lines() {
                        let _ = writeln!(out, "      {line}");
                    }
                }
            }
        }
        let _ = out.flush();
    }

    pub(crate) fn capability_end(&self, _cap: Capability) {
        if *self == Self::Dots {
            // A closed stdout is not fatal (writes are ignored, as above).
            let _ = writeln!(std::io::stdout());
        }
    }
}
