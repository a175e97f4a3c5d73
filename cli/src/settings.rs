//! The `CHECKPOINT_CONFORMANCE_*` environment variables a conformance front end does not
//! read (issue 40 row 11: they were ignored without a word). The front ends read the crash
//! test's `_KILLS` and `_SEED` (checked by `conformance_spec::crash::check_env_settings`),
//! the fuzz trial's `_FUZZ_BUDGET` and `_FUZZ_SEED`, and `_TRACES` (the user's traces);
//! `_REPEAT`, `_STRICT`, `_REPORT` and `_FUZZ` are the `checkpointer_test!`
//! harness's, and any other name is no variable of the kit. Each of those gets one warning
//! line that names the flag to use instead; a `_REPEAT` or `_STRICT` the harness itself
//! would refuse is a usage error.

use std::ffi::OsString;

use conformance_spec::crash::{CRASH_CHILD_ENV, KILLS_ENV, SEED_ENV};
use conformance_spec::harness::{
    parse_repeat, strict_env, FUZZ_ENV, FUZZ_SEED_ENV, REPEAT_ENV, REPORT_ENV, STRICT_ENV,
};

/// The prefix of the kit's environment variables.
const PREFIX: &str = "CHECKPOINT_CONFORMANCE_";

/// What to say about one variable set to `value` (not empty): `Ok(None)` for one the front
/// end reads, `Ok(Some(warning))` for one it ignores, `Err` for an invalid `_REPEAT` or
/// `_STRICT`.
fn judge(name: &str, value: &OsString) -> Result<Option<String>, String> {
    let shown = value.to_string_lossy();
    let ignored = |instead: &str| Some(format!("warning: ${name}={shown:?} is ignored here; {instead}"));
    Ok(match name {
        n if n == KILLS_ENV || n == SEED_ENV || n == CRASH_CHILD_ENV => None,
        n if n == REPEAT_ENV => {
            let text = value.to_str().ok_or_else(|| format!("${name}={shown:?} is not valid UTF-8"))?;
            let count = parse_repeat(text).map_err(|e| {
                format!("${name}: {e} (it is read by checkpointer_test! binaries; here give --repeat N)")
            })?;
            ignored(&format!("it is read by checkpointer_test! binaries only: give --repeat {count}"))
        }
        n if n == STRICT_ENV => {
            let strict = strict_env()
                .map_err(|e| format!("${e} (it is read by checkpointer_test! binaries; here give --strict)"))?;
            strict.then(|| ignored("it is read by checkpointer_test! binaries only: give --strict")).flatten()
        }
        n if n == REPORT_ENV => ignored("it is read by checkpointer_test! binaries only: give --json PATH"),
        // Read (and checked) by the front end's fuzz trial.
        n if n == FUZZ_SEED_ENV || n == conformance_spec::fuzz::trial::BUDGET_ENV => None,
        // The user's traces directory, read by the front end and the harness alike.
        n if n == conformance_spec::traces::TRACES_ENV => None,
        n if n == FUZZ_ENV => ignored(
            "it is read by checkpointer_test! binaries only: give --fuzz-budget SECONDS, or run cargo xtask fuzz",
        ),
        "CHECKPOINT_CONFORMANCE_TIMEOUT" => ignored("it is no variable of the kit: give --timeout SECONDS"),
        _ => ignored("it is no variable of the kit (see --help)"),
    })
}

/// Checks every set, non-empty `CHECKPOINT_CONFORMANCE_*` variable of the process: the
/// warnings to print (one line each, by name) for those the front end ignores. None in a
/// crash-test child (its parent said them).
///
/// # Errors
/// One line naming an invalid `CHECKPOINT_CONFORMANCE_REPEAT` or `_STRICT`.
pub(crate) fn unread_variables() -> Result<Vec<String>, String> {
    if std::env::var_os(CRASH_CHILD_ENV).is_some() {
        return Ok(Vec::new());
    }
    let mut set: Vec<(String, OsString)> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v)))
        .filter(|(k, v)| k.starts_with(PREFIX) && !v.is_empty())
        .collect();
    set.sort();
    let mut warnings = Vec::new();
    for (name, value) in &set {
        warnings.extend(judge(name, value)?);
    }
    Ok(warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_variable_is_read_ignored_with_a_flag_named_or_refused() {
        let v = |s: &str| OsString::from(s);
        assert_eq!(judge(KILLS_ENV, &v("3")), Ok(None));
        let repeat = judge(REPEAT_ENV, &v("abc")).unwrap_err();
        assert!(repeat.contains("$CHECKPOINT_CONFORMANCE_REPEAT") && repeat.contains("--repeat N"), "{repeat}");
        let repeat = judge(REPEAT_ENV, &v("5")).unwrap().unwrap();
        assert!(repeat.contains("--repeat 5"), "{repeat}");
        assert!(judge(REPORT_ENV, &v("abc")).unwrap().unwrap().contains("--json PATH"));
        assert!(judge("CHECKPOINT_CONFORMANCE_TIMEOUT", &v("abc")).unwrap().unwrap().contains("--timeout SECONDS"));
        assert!(judge("CHECKPOINT_CONFORMANCE_X", &v("1")).unwrap().unwrap().contains("no variable of the kit"));
    }
}
