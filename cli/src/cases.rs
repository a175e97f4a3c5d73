//! The cases of a front-end run: the catalog, plus one `traces` case per trace file of the
//! user's `--traces DIR` (else `$CHECKPOINT_CONFORMANCE_TRACES`; docs/traces.md §4), cut
//! to `--cases` when given.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use conformance_core::SpecCase;
use conformance_spec::traces::{user_cases, TRACES_ENV};

/// The user's traces directory: `--traces`, else `$CHECKPOINT_CONFORMANCE_TRACES` when set
/// and not empty.
pub(crate) fn traces_dir(flag: Option<&Path>) -> Option<PathBuf> {
    flag.map(Path::to_path_buf).or_else(|| std::env::var_os(TRACES_ENV).filter(|v| !v.is_empty()).map(PathBuf::from))
}

/// The catalog and the user's trace cases (`traces`: [`traces_dir`]'s answer), cut to the
/// ids `--cases` names (all without it).
///
/// # Errors
/// One line: the traces directory or one of its files is bad (naming the flag or the
/// variable it came from), or an id of `--cases` is no case of the run.
pub(crate) fn selected_cases(
    cases: Option<&[String]>,
    traces: Option<&Path>,
    from_flag: bool,
) -> Result<Vec<SpecCase>, String> {
    let mut all = conformance_spec::catalog();
    if let Some(dir) = traces {
        let source = if from_flag { "--traces".to_owned() } else { format!("${TRACES_ENV}") };
        all.extend(user_cases(dir).map_err(|e| format!("{source}: {e}"))?);
    }
    let Some(ids) = cases else { return Ok(all) };
    let known: BTreeSet<String> = all.iter().map(|c| c.id()).collect();
    if let Some(unknown) = ids.iter().find(|id| !known.contains(id.as_str())) {
        let user = format!("traces::{}", conformance_spec::traces::USER_PREFIX);
        let hint = if unknown.starts_with(&user) && traces.is_none() {
            " (a user trace's case: give its directory with --traces DIR)"
        } else {
            ""
        };
        return Err(format!("--cases: unknown case `{unknown}`{hint}; --list-cases prints the valid ids"));
    }
    if ids.is_empty() {
        return Err("--cases needs at least one case id (--list-cases prints them)".into());
    }
    Ok(all.into_iter().filter(|c| ids.contains(&c.id())).collect())
}
