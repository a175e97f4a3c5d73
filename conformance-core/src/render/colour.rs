//! When the terminal report and the progress are coloured. owo-colors decides
//! (`supports-colors`: a terminal on stdout, `FORCE_COLOR`, `NO_COLOR`, ...), except that an
//! empty `NO_COLOR=` does not turn colour off: <https://no-color.org> asks for "present and
//! not an empty string", and `supports-color` counts any value (but `0`, which here turns
//! colour off too).

use std::io::IsTerminal;
use std::sync::Once;

/// The choice for an empty `NO_COLOR`: colour when `FORCE_COLOR` asks for it (set and not
/// `0` / `false`), else when stdout is a terminal that is not `TERM=dumb`.
pub(crate) fn wanted_without_no_color(force_color: Option<&str>, stdout_is_terminal: bool, term: Option<&str>) -> bool {
    match force_color {
        Some(f) if !f.is_empty() => !matches!(f, "0" | "false"),
        _ => stdout_is_terminal && term != Some("dumb"),
    }
}

/// Applies the rule once per process (an owo-colors override only when `NO_COLOR` is set
/// and empty). Called by [`super::render_terminal`] and the progress printer.
pub(crate) fn init() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if std::env::var_os("NO_COLOR").is_some_and(|v| v.is_empty()) {
            let force = std::env::var("FORCE_COLOR").ok();
            let term = std::env::var("TERM").ok();
            owo_colors::set_override(wanted_without_no_color(
                force.as_deref(),
                std::io::stdout().is_terminal(),
                term.as_deref(),
            ));
        } else if std::env::var_os("NO_COLOR").is_some() {
            // Any other value turns colour off, `0` included (no-color.org: "regardless of
            // its value"; `supports-color` reads `NO_COLOR=0` as unset).
            owo_colors::set_override(false);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::wanted_without_no_color as wanted;

    #[test]
    fn an_empty_no_color_leaves_the_terminal_decision() {
        assert!(wanted(None, true, Some("xterm")));
        assert!(!wanted(None, false, Some("xterm")));
        assert!(!wanted(None, true, Some("dumb")));
        assert!(wanted(Some("1"), false, None));
        assert!(!wanted(Some("0"), true, None));
    }
}
